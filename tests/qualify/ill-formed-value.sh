#!/bin/sh
# Fault: a value that is no value for the examination (the first answer again, as `yes`).
. "$(dirname "$0")/lib.sh"
echo "# a banner: noise is allowed"
answers
answers | head -n 1 | sed "s/ \(TRUE\|1\) / yes /"
