#!/bin/sh
# Fault: answers without TECHNIQUES.
. "$(dirname "$0")/lib.sh"
echo "# a banner: noise is allowed"
answers ""
