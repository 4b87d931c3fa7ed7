#!/bin/sh
# Fault: the answers on stderr, CANNOT_COMPUTE on stdout.
. "$(dirname "$0")/lib.sh"
echo "# a banner: noise is allowed"
echo CANNOT_COMPUTE
answers >&2
