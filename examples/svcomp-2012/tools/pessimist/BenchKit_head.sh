#!/bin/sh
# pessimist: answers UNSAFE when a label ERROR is syntactically reachable from main (README.md).
exec python3 -B "$(dirname "$0")/pessimist.py"
