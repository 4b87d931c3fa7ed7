#!/bin/bash
# A test tool written the way real MCC submissions are. tests/it/submission.rs,
# tests/it/qemu.rs and tests/it/slurm.rs run this folder unchanged under the local, QEMU and Slurm
# executors and check its answers against tests/golden/demo-models.csv.
#
# Like the MCC entry points of TAPAAL or ITS-Tools, it
# - dispatches on BK_TOOL (one folder, several variants: `portfolio`, `sequential`);
# - keeps its temporary files under $BK_BIN_PATH/tmp (on the MCC's VM the tool's own disk,
#   writable);
# - runs its strategies side by side with GNU parallel; the first that answers every value
#   stops the others (`--halt now,success=1`);
# - budgets its time by the clock from BK_TIME_CONFINEMENT (the MCC's limit is the wall clock);
# - measures each strategy with /usr/bin/time and bounds it with timeout;
# - caps its memory with `ulimit -v` from BK_MEMORY_CONFINEMENT;
# - keeps a heartbeat process running in the background.
# The answers come from the repository's explorer (tools/explorer), which setup.sh puts into
# $BK_BIN_PATH: strategy `full` explores the whole state space, strategy `bounded` at most a few
# states (EXPLORER_MAX_STATES; it answers only what it proves, e.g. a deadlock found early, and
# says CANNOT_COMPUTE for the rest). stdout holds the answers only; stderr says what happened.
say() { echo "submission: $*" >&2; }

case "$BK_TOOL" in
    portfolio) strategies="full bounded" ;;
    sequential) strategies="full" ;;
    *)
        say "Unrecognized BK_TOOL $BK_TOOL"
        echo CANNOT_COMPUTE
        exit 0
        ;;
esac
here="$(cd "$(dirname "$0")" && pwd)"
say "variant $BK_TOOL, strategies: $strategies, user $(id -un) ($(id -u))"

start=$(date +%s)
# 90% of the confinement for the strategies, the rest to merge and print.
deadline=$((start + BK_TIME_CONFINEMENT * 9 / 10))
say "clock budget: $((deadline - start)) s of $BK_TIME_CONFINEMENT s"

if ! mkdir -p "${BK_BIN_PATH}tmp" || ! tmp="$(mktemp -d "${BK_BIN_PATH}tmp/$BK_EXAMINATION.XXXXXX")"; then
    say "Could not create temporary folder in ${BK_BIN_PATH}tmp"
    echo CANNOT_COMPUTE
    exit 0
fi
say "temporary files in $tmp"

if ulimit -v $((BK_MEMORY_CONFINEMENT * 1024)); then
    say "ulimit -v $(ulimit -v)"
else
    say "ulimit -v refused"
fi

# A heartbeat in the background, as tools' progress or memory monitors.
(
    while :; do
        # `date` first, then a builtin write: killed between the two, the file keeps its beat
        # (`date > file` truncates before date has run, slow under TCG).
        beat=$(date +%s)
        echo "$beat" > "$tmp/heartbeat"
        sleep 1
    done
) &
heartbeat=$!

export SUBMISSION_TMP="$tmp" SUBMISSION_DEADLINE="$deadline"
# shellcheck disable=SC2086
parallel --will-cite --halt now,success=1 -j 2 --joblog "$tmp/joblog" \
    --timeout $((deadline - start)) "$here/strategy.sh" {} ::: $strategies
say "parallel exited with $?"

kill "$heartbeat"
wait "$heartbeat" 2>/dev/null
[ -s "$tmp/heartbeat" ] && say "heartbeat ran (last beat at $(($(cat "$tmp/heartbeat") - start)) s)"
while read -r seq _ _ runtime _ _ exitval signal cmd; do
    [ "$seq" = Seq ] && continue
    say "strategy ${cmd##* }: ${runtime} s, exit $exitval, signal $signal"
done < "$tmp/joblog"
for s in $strategies; do
    [ -s "$tmp/$s.time" ] && say "$s (/usr/bin/time): $(tail -n 1 "$tmp/$s.time")"
done

# The first answer per id, strategies in order (each answers only what it proved).
answers="$(for s in $strategies; do cat "$tmp/$s.out" 2>/dev/null; done |
    awk '($1 == "FORMULA" || $1 == "STATE_SPACE") && NF >= 3 && $3 != "CANNOT_COMPUTE" && !seen[$1 " " $2]++')"
if [ -n "$answers" ]; then
    echo "$answers"
else
    echo CANNOT_COMPUTE
fi
