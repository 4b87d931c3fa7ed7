#!/bin/sh
# Fault: an answer for an id that is not in the formula file.
. "$(dirname "$0")/lib.sh"
echo "# a banner: noise is allowed"
answers
echo "FORMULA NoSuchFormula-00 TRUE TECHNIQUES EXPLICIT"
