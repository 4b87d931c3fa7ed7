#!/bin/sh
# Builds the repository's explorer (tools/explorer) into $BK_BIN_PATH with its own setup.
set -eu
MCC_TOOL_DIR="$(cd "$MCC_TOOL_DIR/../../../tools/explorer" && pwd)"
export MCC_TOOL_DIR
exec "$MCC_TOOL_DIR/setup.sh"
