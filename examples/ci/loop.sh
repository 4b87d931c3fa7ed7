#!/bin/sh
# The tool developer's loop, as CI runs it after every commit (mccbuild.yml calls this script;
# run it by hand the same way): execute what changed, compare the tool with its previous
# version in the store, keep the comparison as a report.
#
#   MCCBUILD  the mccbuild binary (default: mccbuild on the PATH)
#   CONTEST   the contest.toml (default: contest.toml); its store is what CI caches
#   TOOL      the tool entry to compare (required)
#   FAIL_ON   the regressions that fail the job (default: wrong,unsolved,slower)
#   SLOWER    the slowdown factor of a run (default: 2)
#   REPORT    where the report goes (default: mccbuild-report)
#
# Exit status: mccbuild run's (0; 6 for a regression FAIL_ON names; 1 when runs could not be
# carried out; 2 or 3 for a contest or store that cannot be used). The report is written
# whatever the status.
set -u
MCCBUILD=${MCCBUILD:-mccbuild}
CONTEST=${CONTEST:-contest.toml}
FAIL_ON=${FAIL_ON:-wrong,unsolved,slower}
SLOWER=${SLOWER:-2}
REPORT=${REPORT:-mccbuild-report}
: "${TOOL:?set TOOL to the tool entry to compare}"
mkdir -p "$REPORT" || exit 4

# 1. What changed is executed, then compared with the previous version (printed, and kept);
#    a regression FAIL_ON names fails the step (exit 6) once the comparison is printed.
"$MCCBUILD" run --manifest "$CONTEST" --tool "$TOOL" --progress plain \
    --slower "$SLOWER" --fail-on "$FAIL_ON" >"$REPORT/diff.txt"
status=$?
cat "$REPORT/diff.txt"

# 2. The same comparison as JSON and as a page, and the values the tool gets wrong now, each
#    with its run (nothing is executed: the store has every run). Without an earlier version
#    there is no comparison (the next commit is compared with this one).
"$MCCBUILD" diff --manifest "$CONTEST" --tool "$TOOL" --slower "$SLOWER" \
    --json --html "$REPORT/diff.html" >"$REPORT/diff.json" 2>"$REPORT/diff.log" ||
    cat "$REPORT/diff.log" >&2
"$MCCBUILD" scores --manifest "$CONTEST" --wrong "$TOOL" >"$REPORT/wrong.txt"
"$MCCBUILD" diff --manifest "$CONTEST" --tool "$TOOL" --list >"$REPORT/versions.txt"
exit "$status"
