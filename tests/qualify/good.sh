#!/bin/sh
# A conforming tool.
. "$(dirname "$0")/lib.sh"
echo "# a banner: noise is allowed"
answers
