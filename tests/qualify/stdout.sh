#!/bin/sh
# Fault: a malformed answer line (TECHNIQUE for TECHNIQUES).
. "$(dirname "$0")/lib.sh"
echo "# a banner: noise is allowed"
answers
answers | head -n 1 | sed "s/TECHNIQUES/TECHNIQUE/"
