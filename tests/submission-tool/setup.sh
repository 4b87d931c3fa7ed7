#!/bin/sh
# The submission's setup (run by mccbuild on the host, BK_BIN_PATH = its products folder): the
# repository's explorer, built by its own setup.sh (which reuses CARGO_TARGET_DIR when set).
set -eu
explorer="$(cd "$MCC_TOOL_DIR/../../tools/explorer" && pwd)"
MCC_TOOL_DIR="$explorer" sh "$explorer/setup.sh"
