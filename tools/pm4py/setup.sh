#!/bin/sh
# One-time setup of the pm4py reference tool: a venv in "$BK_BIN_PATH/venv" with the pinned
# requirements. Writes nothing inside the tool folder.
set -eu
: "${BK_BIN_PATH:?BK_BIN_PATH must name the (empty) folder for the venv}"
TOOL_DIR="${MCC_TOOL_DIR:-$(cd "$(dirname "$0")" && pwd)}"
export PYTHONDONTWRITEBYTECODE=1
VENV="${BK_BIN_PATH%/}/venv"
python3 -m venv "$VENV"
"$VENV/bin/python" -m pip install --no-input --disable-pip-version-check --no-cache-dir \
    -r "$TOOL_DIR/requirements.txt" 1>&2
# smoke test: the library imports
"$VENV/bin/python" -B -c "import pm4py.objects.petri_net.utils.reachability_graph" 1>&2
echo "pm4py venv ready in $VENV" 1>&2
