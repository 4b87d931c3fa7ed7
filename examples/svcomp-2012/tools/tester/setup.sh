#!/bin/sh
# One-time setup of the tester: compiles the harness once into the store ($BK_BIN_PATH), so
# that each run compiles only the task. Writes nothing inside the tool folder.
set -eu
: "${BK_BIN_PATH:?BK_BIN_PATH must name the (empty) folder for the compiled harness}"
TOOL_DIR="${MCC_TOOL_DIR:-$(cd "$(dirname "$0")" && pwd)}"
command -v gcc >/dev/null 2>&1 || { echo "tester: gcc is required (Debian package gcc)" >&2; exit 1; }
gcc -std=gnu99 -O1 -w -c "$TOOL_DIR/harness.c" -o "${BK_BIN_PATH%/}/harness.o"
gcc --version | head -n 1 >&2
echo "tester: harness compiled into ${BK_BIN_PATH%/}/harness.o" >&2
