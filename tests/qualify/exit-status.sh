#!/bin/sh
# Fault: a non-zero exit status after the answers.
. "$(dirname "$0")/lib.sh"
echo "# a banner: noise is allowed"
answers
exit 3
