#!/bin/sh
# BenchKit entry point of the explorer (see README.md).
# The working directory is the unpacked instance; BK_EXAMINATION, BK_TIME_CONFINEMENT and
# BK_MEMORY_CONFINEMENT tell what to answer and with which resources.
BIN_DIR="${BK_BIN_PATH%/}"
if [ -z "$BIN_DIR" ] || [ ! -x "$BIN_DIR/explorer" ]; then
    echo "explorer: no executable at \$BK_BIN_PATH/explorer (BK_BIN_PATH='${BK_BIN_PATH}')" >&2
    echo "CANNOT_COMPUTE"
    exit 1
fi
exec "$BIN_DIR/explorer"
