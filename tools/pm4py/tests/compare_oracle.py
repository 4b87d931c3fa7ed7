"""Compares this wrapper with the MCC 2025 consensus (test only; never used at run time).

  python3 compare_oracle.py --bin BK_BIN_PATH fixtures            # P/T fixtures of shared/data
  python3 compare_oracle.py --bin BK_BIN_PATH inputs --max-states 20000 [--limit N]
        # P/T archives of INPUTS whose consensus state count (instances.csv) is <= max-states,
        # each unpacked to a temporary folder

Each instance is analysed once for every supported examination (tests/analyse_all.py, i.e. the
wrapper's solve() with all examinations) under BK_TIME_CONFINEMENT=--time; with --head,
BenchKit_head.sh runs once per examination in a copy of the instance folder, as under BenchKit. Per examination it
counts: answered / agree / disagree / oracle unknown ('?' or missing) / no answer.
Details go to --csv (default: a file under /tmp)."""
import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.path.dirname(HERE)
DATA = os.path.normpath(os.path.join(TOOL, "..", "..", "..", "shared", "data", "mcc2025"))
SUFFIX = {"StateSpace": "SS", "ReachabilityDeadlock": "RD", "OneSafe": "OS", "QuasiLiveness": "QL",
          "StableMarking": "SM", "Liveness": "L", "UpperBounds": "UB",
          "ReachabilityCardinality": "RC", "ReachabilityFireability": "RF",
          "CTLCardinality": "CTLC", "CTLFireability": "CTLF",
          "LTLCardinality": "LTLC", "LTLFireability": "LTLF"}
MODULE = [f[:-3] for f in os.listdir(TOOL) if f.endswith("_mcc.py")][0]


def parse_answers(lines):
    d = {}
    for line in lines:
        w = line.split()
        if len(w) >= 3 and w[0] in ("STATE_SPACE", "FORMULA"):
            d[w[1]] = w[2]
    return d


def rekey(orc, inst_dir, exam):
    """The oracle files number a file's formulas -NN by the position of their id among the ids of
    the XML file sorted as strings (files mixing -2023- and -2025- ids put the older ones first):
    the same values keyed by the XML ids, as the tool prints them."""
    path = os.path.join(inst_dir, exam + ".xml")
    if exam in ("StateSpace", "UpperBounds") or not os.path.exists(path):
        return orc
    ids = sorted(t.split("</id>")[0].strip() for t in open(path).read().split("<id>")[1:])
    out = {}
    for key, val in orc.items():
        try:
            pos = int(key.rsplit("-", 1)[1])
        except (IndexError, ValueError):
            continue
        if pos < len(ids):
            out[ids[pos]] = val
    return out


def oracle_from_dir(inst_dir, inst):
    res = {}
    for exam, suf in SUFFIX.items():
        p = os.path.join(inst_dir, "oracle", "%s-%s.out" % (inst, suf))
        if os.path.exists(p):
            res[exam] = parse_answers(open(p).read().splitlines()[1:])
    return res


def oracle_from_tar(insts):
    want = {}
    for inst in insts:
        for exam, suf in SUFFIX.items():
            want["oracle/%s-%s.out" % (inst, suf)] = (inst, exam)
    res = dict((i, {}) for i in insts)
    with tarfile.open(os.path.join(DATA, "oracle.tar.gz")) as t:
        for m in t:
            if m.name in want:
                inst, exam = want[m.name]
                res[inst][exam] = parse_answers(t.extractfile(m).read().decode().splitlines()[1:])
    return res


def analyse(binpath, inst_dir, seconds):
    env = dict(os.environ)
    env["BK_TIME_CONFINEMENT"] = str(seconds)
    py = os.path.join(binpath, "venv", "bin", "python")
    try:
        p = subprocess.run([py, "-B", os.path.join(HERE, "analyse_all.py"), TOOL, inst_dir, MODULE],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
                           timeout=seconds + 60)
        return json.loads(p.stdout.decode().strip().splitlines()[-1])
    except subprocess.TimeoutExpired:
        return {"error": "killed after %d s" % (seconds + 60)}
    except Exception as e:  # noqa: BLE001
        return {"error": "no result: %s" % e}


def analyse_head(binpath, inst_dir, seconds):
    """One BenchKit_head.sh run per examination, as BenchKit does (witness shortcuts included)."""
    answers = {}
    errors = []
    total = 0.0
    for exam in SUFFIX:
        work = tempfile.mkdtemp(prefix="mcc-head-")
        try:
            for f in os.listdir(inst_dir):
                if os.path.isfile(os.path.join(inst_dir, f)):
                    shutil.copy(os.path.join(inst_dir, f), work)
            env = dict(os.environ)
            env.update({"BK_BIN_PATH": binpath, "BK_EXAMINATION": exam,
                        "BK_INPUT": os.path.basename(inst_dir), "BK_TOOL": MODULE,
                        "BK_TIME_CONFINEMENT": str(seconds), "BK_MEMORY_CONFINEMENT": "16384",
                        "BK_RESULT_DIR": work, "BK_LOG_FILE": os.path.join(work, "log")})
            t0 = time.time()
            try:
                p = subprocess.run([os.path.join(TOOL, "BenchKit_head.sh")], cwd=work, env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                   timeout=seconds + 60)
                lines = [l.strip() for l in p.stdout.decode().splitlines() if l.strip()]
            except subprocess.TimeoutExpired:
                lines = []
                errors.append("%s killed" % exam)
            total += time.time() - t0
            if lines and lines != ["CANNOT_COMPUTE"]:
                answers[exam] = lines
            else:
                errors.append("%s: %s" % (exam, " ".join(lines) or "no output"))
        finally:
            shutil.rmtree(work, ignore_errors=True)
    out = {"answers": answers, "seconds": round(total, 1)}
    if errors:
        out["error"] = "; ".join(errors)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["fixtures", "inputs"])
    ap.add_argument("--bin", required=True, help="BK_BIN_PATH holding venv/")
    ap.add_argument("--max-states", type=int, default=20000)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--time", type=int, default=75, help="BK_TIME_CONFINEMENT per instance")
    ap.add_argument("--csv", default=None)
    ap.add_argument("--head", action="store_true",
                    help="run BenchKit_head.sh once per examination instead of analyse_all.py")
    ap.add_argument("--only", default="", help="comma-separated instance names")
    a = ap.parse_args()
    csv_path = a.csv or os.path.join(tempfile.gettempdir(), "compare-%s-%s.csv" % (MODULE, a.what))

    rows = list(csv.DictReader(open(os.path.join(DATA, "instances.csv"))))
    states = dict((r["instance"], r["oracle_SS_states"]) for r in rows)
    if a.what == "fixtures":
        fx = os.path.join(DATA, "fixtures")
        insts = sorted(d for d in os.listdir(fx) if os.path.isdir(os.path.join(fx, d))
                       and open(os.path.join(fx, d, "iscolored")).read().strip() == "FALSE")
        if a.only:
            insts = [i for i in insts if i in a.only.split(",")]
        oracle = dict((i, oracle_from_dir(os.path.join(fx, i), i)) for i in insts)
    else:
        small = [r for r in rows if r["iscolored"] == "FALSE" and r["oracle_SS_states"].isdigit()
                 and int(r["oracle_SS_states"]) <= a.max_states]
        small.sort(key=lambda r: (int(r["oracle_SS_states"]), r["instance"]))
        insts = [r["instance"] for r in small]
        if a.limit:
            insts = insts[: a.limit]
        oracle = oracle_from_tar(insts)

    stats = dict((e, dict(answered=0, agree=0, disagree=0, unknown=0, none=0)) for e in SUFFIX)
    details = []
    out = open(csv_path, "w", newline="")
    w = csv.writer(out)
    w.writerow(["instance", "examination", "key", "tool", "oracle", "verdict", "seconds", "note"])
    for inst in insts:
        tmp = None
        if a.what == "fixtures":
            d = os.path.join(DATA, "fixtures", inst)
        else:
            tmp = tempfile.mkdtemp(prefix="mcc-cmp-")
            with tarfile.open(os.path.join(DATA, "INPUTS", inst + ".tgz")) as t:
                t.extractall(tmp)
            d = os.path.join(tmp, inst)
        t0 = time.time()
        r = (analyse_head if a.head else analyse)(a.bin, d, a.time)
        oracle[inst] = dict((e, rekey(o, d, e)) for e, o in oracle.get(inst, {}).items())
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
        ans = r.get("answers") or {}
        summary = []
        for exam in SUFFIX:
            lines = ans.get(exam)
            orc = oracle.get(inst, {}).get(exam, {})
            if not lines:
                stats[exam]["none"] += 1
                w.writerow([inst, exam, "", "", "", "no answer", r.get("seconds"), r.get("error", "")])
                continue
            got = parse_answers(lines)
            for key, val in sorted(got.items()):
                o = orc.get(key)
                st = stats[exam]
                st["answered"] += 1
                if o is None or o == "?":
                    verdict = "oracle unknown"
                    st["unknown"] += 1
                elif o == val:
                    verdict = "agree"
                    st["agree"] += 1
                else:
                    verdict = "DISAGREE"
                    st["disagree"] += 1
                    details.append((inst, exam, key, val, o))
                w.writerow([inst, exam, key, val, o, verdict, r.get("seconds"), ""])
            summary.append(exam[:6])
        out.flush()
        print("%-45s states=%-8s %6.1fs %s" % (inst, states.get(inst, "?"), time.time() - t0,
                                              r.get("error") or "ok"), flush=True)
    out.close()
    print("\n%-22s %9s %7s %9s %15s %10s" % ("examination", "answered", "agree", "disagree",
                                            "oracle unknown", "no answer"))
    for e, st in stats.items():
        print("%-22s %9d %7d %9d %15d %10d" % (e, st["answered"], st["agree"], st["disagree"],
                                               st["unknown"], st["none"]))
    print("instances: %d; values answered: %d; disagreements: %d; details in %s"
          % (len(insts), sum(s["answered"] for s in stats.values()), len(details), csv_path))
    for d in details:
        print("DISAGREE %s %s %s tool=%s oracle=%s" % d)
    return 1 if details else 0


if __name__ == "__main__":
    sys.exit(main())
