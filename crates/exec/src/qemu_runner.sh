#!/bin/sh
# mccbuild's in-guest runner (crates/exec/src/qemu.rs writes it next to job.env in the run's
# shared folder): one BenchKit run under the tool's time (MCC_TIME_LIMIT: cpu, wall or both) and
# memory limits, measured by a cgroup v2 of the guest, as docs/execution.md ("QEMU executor")
# describes. POSIX sh (busybox or dash). The wall clock is the host's, never the guest's (whose
# rate can be wrong under TCG): `started` tells the host the tool starts, `ended` that its main
# process ended; the host writes `stop` when the wall-clock limit is reached.
out="$(dirname "$0")"
. "$out/job.env"
fail() { echo "reason=infra" > "$out/status.tmp"; echo "message=$*" >> "$out/status.tmp"; mv "$out/status.tmp" "$out/status"; exit 1; }

# The instance: a read-only disk holding a tar archive of <instance>/; the working directory is
# its unpacked copy (BenchKit unpacks INPUTS/<instance>.tgz into the VM's own disk).
work="$MCC_WORK"
rm -rf "$work"
mkdir -p "$work/result" "$work/home" "$work/tmp" || fail "cannot create $work"
tar -x -f "$MCC_INPUT_DEV" -C "$work" && [ -d "$work/$BK_INPUT" ] \
    || fail "cannot unpack the instance from the input disk $MCC_INPUT_DEV into $work"
as_user=""
if [ -n "$MCC_USER" ]; then
    chown -R "$MCC_USER:" "$work" || fail "cannot give $work to $MCC_USER"
    # BenchKit's /home/mcc is the user's (the kernel guest's is a folder of its initramfs).
    chown "$MCC_USER:" /home/mcc 2>/dev/null
    # util-linux's setpriv (busybox's, first on the kernel guest's PATH, cannot change users).
    setpriv=setpriv
    [ -x /usr/bin/setpriv ] && setpriv=/usr/bin/setpriv
    as_user="$setpriv --reuid=$MCC_USER --regid=$MCC_USER --init-groups --"
fi
# BK_BIN_PATH writable and the run's own, as /home/mcc/BenchKit/bin/ on the MCC's VM (the tool's
# disk): where it is a read-only share (kernel guest, MCC_BIN_OVERLAY=1), an overlay whose upper
# layer is in the guest's memory is mounted over it (a copy where overlayfs refuses); both are
# thrown away with the VM. Its top belongs to the run's user, as the local executor's view.
if [ "$MCC_BIN_OVERLAY" = 1 ]; then
    bin="${BK_BIN_PATH%/}"
    mkdir -p "$work/bin-upper" "$work/bin-work" || fail "cannot create $work/bin-upper"
    [ -z "$MCC_USER" ] || chown "$MCC_USER:" "$work/bin-upper"
    if ! mount -t overlay overlay -o "lowerdir=$bin,upperdir=$work/bin-upper,workdir=$work/bin-work" "$bin" 2>/dev/null; then
        cp -a "$bin" "$work/bin-copy" && mount -o bind "$work/bin-copy" "$bin" \
            || fail "cannot make BK_BIN_PATH $bin writable (overlay and copy both failed)"
        [ -z "$MCC_USER" ] || chown "$MCC_USER:" "$bin"
    fi
fi

# A fresh cgroup for the tool's whole tree: memory limit, CPU time, peak memory, kill.
[ -f /sys/fs/cgroup/cgroup.controllers ] || mount -t cgroup2 none /sys/fs/cgroup || fail "no cgroup2"
echo "+memory" > /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
cg=/sys/fs/cgroup/mccbuild-run
rmdir "$cg" 2>/dev/null
mkdir "$cg" || fail "cannot create $cg"
echo $((BK_MEMORY_CONFINEMENT * 1048576)) > "$cg/memory.max" 2>/dev/null
echo 0 > "$cg/memory.swap.max" 2>/dev/null

cd "$work/$BK_INPUT" || fail "no working directory"
# ulimit -t, a per-process backstop, only where the CPU time is limited.
cpu_backstop=unlimited
[ "$MCC_TIME_LIMIT" = wall ] || cpu_backstop=$((BK_TIME_CONFINEMENT + 1))
: > "$out/started" || fail "cannot write $out/started"
sh -c 'echo $$ > "$0/cgroup.procs" || exit 125; ulimit -t "$1" 2>/dev/null; shift; exec "$@"' "$cg" "$cpu_backstop" \
    env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME="$work/home" \
    TMPDIR="$work/tmp" LANG=C.UTF-8 BK_INPUT="$BK_INPUT" BK_EXAMINATION="$BK_EXAMINATION" \
    BK_TOOL="$BK_TOOL" BK_TIME_CONFINEMENT="$BK_TIME_CONFINEMENT" \
    BK_MEMORY_CONFINEMENT="$BK_MEMORY_CONFINEMENT" BK_BIN_PATH="$BK_BIN_PATH" \
    BK_LOG_FILE="$work/BenchKit.log" BK_RESULT_DIR="$work/result" \
    $as_user "$MCC_ENTRY" < /dev/null > "$out/stdout" 2> "$out/stderr" &
pid=$!

# CPU time of the whole tree against the limit and/or the host's `stop` at the wall-clock limit
# (E-5.1, `[limits] time`), OOM kills, every 50 ms.
limit_us=$((BK_TIME_CONFINEMENT * 1000000))
reason=""
while :; do
    state=""
    # (stderr first: a process already reaped makes the redirection itself fail)
    read -r _ _ state _ 2>/dev/null < "/proc/$pid/stat"
    [ -z "$state" ] || [ "$state" = Z ] && break
    read -r _ usage _ < "$cg/cpu.stat"
    if [ "$MCC_TIME_LIMIT" != wall ] && [ "$usage" -ge "$limit_us" ]; then
        reason=cpu_limit
        echo 1 > "$cg/cgroup.kill"
        break
    fi
    if [ "$MCC_TIME_LIMIT" != cpu ] && [ -e "$out/stop" ]; then
        reason=wall_limit
        echo 1 > "$cg/cgroup.kill"
        break
    fi
    oom="$(sed -n 's/^oom_kill //p' "$cg/memory.events" 2>/dev/null)"
    if [ "${oom:-0}" -gt 0 ]; then
        reason=memory_limit
        echo 1 > "$cg/cgroup.kill"
        break
    fi
    sleep 0.05
done
wait "$pid"
code=$?
: > "$out/ended"
# Whatever the tool left running is killed; its CPU time and peak are read once the tree is empty.
echo 1 > "$cg/cgroup.kill"
while grep -q "populated 1" "$cg/cgroup.events"; do sleep 0.01; done
read -r _ usage _ < "$cg/cpu.stat"
peak="$(cat "$cg/memory.peak" 2>/dev/null || echo 0)"
oom="$(sed -n 's/^oom_kill //p' "$cg/memory.events" 2>/dev/null)"
if [ -z "$reason" ]; then
    if [ "${oom:-0}" -gt 0 ]; then reason=memory_limit
    elif [ "$MCC_TIME_LIMIT" != wall ] && [ "$usage" -ge "$limit_us" ]; then reason=cpu_limit
    elif [ "$code" -gt 128 ]; then reason=signal; code=$((code - 128))
    else reason=exit
    fi
fi
{
    echo "reason=$reason"
    echo "code=$code"
    echo "cpu_usec=$usage"
    echo "peak_bytes=$peak"
    echo "oom_kill=${oom:-0}"
} > "$out/status.tmp"
mv "$out/status.tmp" "$out/status"
sync
