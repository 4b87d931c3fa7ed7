#!/bin/sh
# Fault: answers, then a loop until the CPU-time limit.
. "$(dirname "$0")/lib.sh"
echo "# a banner: noise is allowed"
answers
while :; do :; done
