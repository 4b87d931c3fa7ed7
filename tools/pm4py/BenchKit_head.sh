#!/bin/sh
# BenchKit entry point of the pm4py reference tool (see README.md).
# The venv was made by setup.sh in $BK_BIN_PATH/venv; -B: never write __pycache__.
exec "${BK_BIN_PATH%/}/venv/bin/python" -B "$(dirname "$0")/pm4py_mcc.py"
