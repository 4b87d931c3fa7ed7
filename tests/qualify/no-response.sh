#!/bin/sh
# Fault: neither an answer nor CANNOT_COMPUTE nor DO_NOT_COMPETE.
. "$(dirname "$0")/lib.sh"
echo "# a banner: noise is allowed"
echo "computing..."
