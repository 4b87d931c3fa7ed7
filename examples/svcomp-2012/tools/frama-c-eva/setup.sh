#!/bin/sh
# frama-c-eva needs Frama-C installed on the machine (Debian: apt-get install frama-c-base).
# The setup only checks it and records its version in the store; the runs use the frama-c of
# the PATH.
set -eu
: "${BK_BIN_PATH:?BK_BIN_PATH must name the (empty) folder of the setup products}"
if ! command -v frama-c >/dev/null 2>&1; then
    echo "frama-c-eva: frama-c is not installed (Debian: apt-get install frama-c-base)" >&2
    exit 1
fi
frama-c -version | tee "${BK_BIN_PATH%/}/frama-c.version" >&2
