#!/bin/bash
# One strategy of BenchKit_head.sh, started by GNU parallel: the explorer of $BK_BIN_PATH under
# the time left until SUBMISSION_DEADLINE, measured by /usr/bin/time, its output in
# SUBMISSION_TMP. Succeeds when it answered every value it was asked (no CANNOT_COMPUTE).
name="$1"
left=$((SUBMISSION_DEADLINE - $(date +%s)))
[ "$left" -gt 0 ] || exit 1
case "$name" in
    full) unset EXPLORER_MAX_STATES ;;
    bounded) export EXPLORER_MAX_STATES=4 ;;
    *) echo "unknown strategy $name" >&2; exit 2 ;;
esac
/usr/bin/time -f "%e s elapsed, %M KB max" -o "$SUBMISSION_TMP/$name.time" \
    timeout -s KILL "$left" "${BK_BIN_PATH}explorer" \
    > "$SUBMISSION_TMP/$name.out" 2> "$SUBMISSION_TMP/$name.err" || exit 1
grep -qE '^(FORMULA|STATE_SPACE) ' "$SUBMISSION_TMP/$name.out" \
    && ! grep -q CANNOT_COMPUTE "$SUBMISSION_TMP/$name.out"
