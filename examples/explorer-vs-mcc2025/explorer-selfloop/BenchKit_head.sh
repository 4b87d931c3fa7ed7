#!/bin/sh
# The explorer with one change: in CTL, a deadlock state loops on itself (the other reading of
# "a path" at a deadlock) instead of having no successor.
BIN_DIR="${BK_BIN_PATH%/}"
export EXPLORER_CTL_DEADLOCKS=selfloop
exec "$BIN_DIR/explorer"
