#!/bin/sh
# tester: random testing of an SV-COMP verification task (README.md).
# Compiles program.c (the current directory) with gcc, its label ERROR instrumented to end the
# run, links it with the harness (harness.c, compiled by setup.sh into $BK_BIN_PATH) and runs it
# many times with pseudo-random nondeterministic values. Prints UNSAFE when a run reaches ERROR
# (the error path, the inputs of that run, goes to stderr) and UNKNOWN otherwise: testing never
# proves a program SAFE.
TOOL_DIR="$(cd "$(dirname "$0")" && pwd)"
RUNS="${TESTER_RUNS:-10000}"        # runs per task: with fixed seeds the answers are reproducible
work="${TMPDIR:-/tmp}/tester.$$"
mkdir -p "$work" || { echo UNKNOWN; exit 0; }
trap 'rm -rf "$work"' EXIT

unknown() {
    echo "tester: $1" >&2
    echo UNKNOWN
    exit 0
}
[ -f program.c ] || unknown "no program.c in $(pwd)"
command -v gcc >/dev/null 2>&1 || unknown "gcc is not installed"

harness="${BK_BIN_PATH%/}/harness.o"
if [ ! -f "$harness" ]; then              # run outside mccbuild, without the setup
    harness="$work/harness.o"
    gcc -std=gnu99 -O1 -w -c "$TOOL_DIR/harness.c" -o "$harness" >&2 || unknown "cannot compile the harness"
fi

# `ERROR:` becomes `ERROR: __tester_error();` (the statement that followed the label is kept);
# main becomes __task_main, called by the harness.
sed -e 's/\<ERROR[[:space:]]*:/&  __tester_error();/g' program.c > "$work/task.c"
printf 'void __tester_error(void);\n' > "$work/tester.h"
gcc -std=gnu99 -O0 -w -include "$work/tester.h" -Dmain=__task_main "$work/task.c" "$harness" -o "$work/run" >&2 ||
    unknown "the program does not compile"

# At most half of the CPU time limit for the runs; a single run may take 0.2 s of CPU.
budget=$(( ${BK_TIME_CONFINEMENT:-20} / 2 ))
"$work/run" "$RUNS" "$budget" 0.2 || unknown "the harness failed"
