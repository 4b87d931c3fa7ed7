#!/bin/sh
# Fault: two different answers for one id.
. "$(dirname "$0")/lib.sh"
echo "# a banner: noise is allowed"
answers
answers | head -n 1 | sed "s/ TRUE / FALSE /; s/ 1 TECHNIQUES/ 2 TECHNIQUES/"
