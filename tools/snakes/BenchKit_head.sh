#!/bin/sh
# BenchKit entry point of the SNAKES reference tool (see README.md).
# The venv was made by setup.sh in $BK_BIN_PATH/venv; -B: never write __pycache__.
exec "${BK_BIN_PATH%/}/venv/bin/python" -B "$(dirname "$0")/snakes_mcc.py"
