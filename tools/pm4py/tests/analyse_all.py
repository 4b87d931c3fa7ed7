"""Test helper (not used at run time): all supported examinations of one instance from ONE
exploration, as JSON on stdout. Run it with the tool's venv python:
    $BK_BIN_PATH/venv/bin/python -B analyse_all.py TOOL_DIR INSTANCE_DIR MODULE
It calls the wrapper's own solve() with every examination at once (no witness shortcut), so the
answers are those BenchKit_head.sh prints when the exploration completes."""
import json
import os
import sys
import time


def main():
    tool, inst, module = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3]
    sys.path.insert(0, tool)
    import mcc_common as mc
    wrapper = __import__(module)
    start = time.monotonic()
    real = sys.stdout
    sys.stdout = sys.stderr
    exams = []
    skipped = {}
    try:
        mc.prepare([], inst)  # a model the wrapper cannot read fails the whole instance
        for e in mc.SUPPORTED:  # the examinations whose files this instance has and we can read
            try:
                mc.prepare([e], inst)
                exams.append(e)
            except mc.CannotCompute as err:
                skipped[e] = str(err)
        model, scan, props = mc.prepare(exams, inst)
        res = wrapper.solve(exams, model, scan, props, mc.state_limit(), mc.deadline(start))
        out = {"answers": res, "skipped": skipped}
    except mc.CannotCompute as e:
        out = {"error": "%s: %s" % (type(e).__name__, e)}
    except Exception as e:  # noqa: BLE001
        out = {"error": "unexpected %s: %s" % (type(e).__name__, e)}
    out["seconds"] = round(time.monotonic() - start, 2)
    sys.stdout = real
    print(json.dumps(out))


if __name__ == "__main__":
    main()
