"""Runs BenchKit_head.sh on the hand cases of tests/nets and compares with their expect.txt.

expect.txt: lines `<Examination>: <expected stdout line>`; all the lines of one examination are
the complete expected answer (any order). An optional `env` file holds VAR=value lines.
Usage: run_cases.py TOOL_DIR BK_BIN_PATH
"""
import os
import shutil
import subprocess
import sys
import tempfile


def main():
    tool, binpath = sys.argv[1], sys.argv[2]
    nets = os.path.join(tool, "tests", "nets")
    passed = failed = 0
    for case in sorted(os.listdir(nets)):
        cdir = os.path.join(nets, case)
        expected = {}
        for line in open(os.path.join(cdir, "expect.txt")):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            exam, _, answer = line.partition(":")
            expected.setdefault(exam.strip(), []).append(answer.strip())
        extra = {}
        if os.path.exists(os.path.join(cdir, "env")):
            for line in open(os.path.join(cdir, "env")):
                if "=" in line:
                    k, _, v = line.strip().partition("=")
                    extra[k] = v
        for exam in sorted(expected):
            work = tempfile.mkdtemp(prefix="mcc-case-")
            try:
                for f in os.listdir(cdir):
                    if f.endswith(".pnml") or f.endswith(".xml"):
                        shutil.copy(os.path.join(cdir, f), work)
                env = dict(os.environ)
                env.update({"BK_BIN_PATH": binpath, "BK_EXAMINATION": exam, "BK_INPUT": case,
                            "BK_TOOL": os.path.basename(tool), "BK_TIME_CONFINEMENT": "300",
                            "BK_MEMORY_CONFINEMENT": "16384", "BK_RESULT_DIR": work,
                            "BK_LOG_FILE": os.path.join(work, "log")})
                env.update(extra)
                p = subprocess.run([os.path.join(tool, "BenchKit_head.sh")], cwd=work, env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600)
                got = sorted(l.strip() for l in p.stdout.decode().splitlines() if l.strip())
                want = sorted(expected[exam])
                if got == want and p.returncode == 0:
                    passed += 1
                    print("PASS %s %s" % (case, exam))
                else:
                    failed += 1
                    print("FAIL %s %s (exit %d)\n  expected: %s\n  got:      %s\n  stderr tail:\n%s"
                          % (case, exam, p.returncode, want, got,
                             "\n".join("    " + l for l in p.stderr.decode().splitlines()[-15:])))
            finally:
                shutil.rmtree(work, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
