#!/bin/sh
# Hand-case tests of this BenchKit wrapper (exit status 0 only if every answer is the expected one).
# 1. runs ../setup.sh into a fresh temporary BK_BIN_PATH (set MCC_TEST_BIN_PATH to an existing
#    folder holding venv/ to skip it), and reports how long it took;
# 2. runs the unit tests of the formula modules (test_formulas.py), then ../BenchKit_head.sh in a
#    copy of each tests/nets/<case>/ for every examination listed in its expect.txt and compares
#    the stdout answers (see run_cases.py);
# 3. checks that nothing was written inside the tool folder.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
TOOL=$(dirname "$HERE")
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT INT TERM
find "$TOOL" | sort > "$TMP/before.txt"
if [ -n "${MCC_TEST_BIN_PATH:-}" ] && [ -x "${MCC_TEST_BIN_PATH%/}/venv/bin/python" ]; then
    BIN=$MCC_TEST_BIN_PATH
    echo "reusing the venv of $BIN"
else
    BIN=$TMP/bin
    mkdir -p "$BIN"
    t0=$(date +%s)
    if ! (cd "$TOOL" && BK_BIN_PATH="$BIN" MCC_TOOL_DIR="$TOOL" ./setup.sh > "$TMP/setup.log" 2>&1); then
        cat "$TMP/setup.log"
        echo "setup.sh FAILED"
        echo "0 passed, 1 failed"
        exit 1
    fi
    echo "setup.sh took $(( $(date +%s) - t0 )) s"
fi
# the formula modules' unit tests (standard library only, no venv needed)
unit=0
python3 -B "$HERE/test_formulas.py" > "$TMP/unit.log" 2>&1 || unit=1
tail -3 "$TMP/unit.log"
python3 -B "$HERE/run_cases.py" "$TOOL" "$BIN/"
rc=$?
[ "$unit" -eq 0 ] || rc=1
find "$TOOL" | sort > "$TMP/after.txt"
if ! cmp -s "$TMP/before.txt" "$TMP/after.txt"; then
    echo "FAIL: the tool folder changed:"
    diff "$TMP/before.txt" "$TMP/after.txt"
    rc=1
fi
exit $rc
