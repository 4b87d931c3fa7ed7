//! Starting the run's process tree: isolated through `spawn`, else through the standard
//! library's `Command`, set up between fork and exec (session, cores, limits, user) and moved
//! into its cgroups through the gate.

use std::io;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::Duration;

use super::ProcessSpec;
use super::cores::pin_to_cores;
use super::gate::{ChildFds, Gate, Mover, send_pid, wait_at_gate};
use crate::spawn::StatusSlot;

/// The run's started process tree: the pid mccbuild waits for, the tool's output streams and,
/// isolated, where the run's init leaves the tool's wait status.
pub(super) type Started = (i32, std::fs::File, std::fs::File, Option<StatusSlot>);

/// Starts the run's process tree: isolated, with one `clone3` (see `spawn`); else through the
/// standard library's `Command`, its process moved into the run's cgroups by a thread (`Gate`).
/// Returns once the tool executed.
pub(super) fn start_tree(spec: &mut ProcessSpec) -> io::Result<Started> {
    let _t = mccbuild_core::timing::phase("process: spawn (to exec)");
    if let Some(mut isolation) = spec.isolation.take() {
        let namespaces = isolation.take_namespaces();
        let spawned = crate::spawn::spawn(crate::spawn::Launch {
            namespaces,
            program: &spec.program,
            args: &spec.args,
            env: &spec.env,
            cores: &spec.cores,
            isolation: &isolation,
            cgroup: spec.cgroup.as_ref(),
            memory_limit_bytes: spec.memory_limit_bytes,
        })?;
        return Ok((
            spawned.pid,
            spawned.stdout,
            spawned.stderr,
            Some(spawned.status),
        ));
    }
    let gate = match &spec.cgroup {
        Some(cg) => Some(Gate::new(cg.procs_files())?),
        None => None,
    };
    let mut command = command(spec, gate.as_ref().map(Gate::child_fds))?;
    let mover = gate.map(Gate::start);
    let spawned = command.spawn();
    // The moves' outcome: the child executes nothing before they succeeded.
    let moved = mover.map(Mover::finish).unwrap_or(Ok(()));
    let mut child = match spawned {
        Ok(child) => child,
        Err(e) => {
            // The child gave up at the gate: the thread's error says why.
            let at_gate = e
                .raw_os_error()
                .is_some_and(|raw| raw & 0xffff == libc::ECANCELED);
            return Err(match moved {
                Err(why) if at_gate => why,
                _ => e,
            });
        }
    };
    let pid = child.id() as i32;
    let stdout = child
        .stdout
        .take()
        .ok_or_else(|| io::Error::other("no stdout pipe"))?;
    let stderr = child
        .stderr
        .take()
        .ok_or_else(|| io::Error::other("no stderr pipe"))?;
    let file = |fd: std::os::fd::OwnedFd| std::fs::File::from(fd);
    Ok((pid, file(stdout.into()), file(stderr.into()), None))
}

/// The fallback's per-process CPU-time backstop (`RLIMIT_CPU`, seconds): what a process of the
/// run can use at most, even when mccbuild is no longer there to kill it (an orphan after
/// `kill -9` of mccbuild). One second more than what the run may use: its CPU-time limit, or,
/// when only the wall clock is limited (`time = "wall"`), the wall-clock limit times the run's
/// cores (a process pinned to them cannot use more before the wall clock stops the run, so the
/// backstop never ends a run the limits would not).
pub(crate) fn cpu_backstop_s(cpu_limit_s: f64, wall_limit: Duration, cores: usize) -> u64 {
    let by_wall = wall_limit.as_secs_f64().ceil() * cores.max(1) as f64;
    cpu_limit_s.min(by_wall).ceil().max(0.0) as u64 + 1
}

/// The tool's command, not isolated (see `spawn` for isolated runs): its own session, in its
/// cgroups, pinned to its cores, without core dumps, as its user (when given) last.
fn command(spec: &mut ProcessSpec, gate: Option<ChildFds>) -> io::Result<Command> {
    let fallback = spec.cgroup.is_none();
    let cpu_rlimit = cpu_backstop_s(spec.cpu_limit_s, spec.wall_limit, spec.cores.len());
    let cores = spec.cores.clone();
    let user = spec.user;
    // SAFETY: getpid has no preconditions.
    let supervisor = unsafe { libc::getpid() };

    let mut command = Command::new(&spec.program);
    command
        .current_dir(&spec.cwd)
        .args(&spec.args)
        .env_clear()
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: the closure runs between fork and exec; it only makes async-signal-safe system
    // calls (setsid, open, write, close, sched_setaffinity, setrlimit, setgroups, setresgid,
    // setresuid, prctl) on data prepared before the fork, and allocates nothing.
    unsafe {
        command.pre_exec(move || {
            // Dies with the thread that started it (mccbuild's death included), and so does
            // the run (see `isolation`); unless mccbuild died already.
            die_with_parent(supervisor)?;
            if libc::setsid() < 0 {
                return Err(io::Error::last_os_error());
            }
            // mccbuild moves this process into the run's cgroups from now on.
            if let Some(fds) = gate {
                send_pid(fds)?;
            }
            let gate = gate.map_or(-1, |fds| fds.go_in);
            pin_to_cores(&cores)?;
            let no_core = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            libc::setrlimit(libc::RLIMIT_CORE, &no_core);
            if fallback {
                // Per process only: a backstop; the monitor enforces the limit on the tree.
                let cpu = libc::rlimit {
                    rlim_cur: cpu_rlimit,
                    rlim_max: cpu_rlimit + 5,
                };
                libc::setrlimit(libc::RLIMIT_CPU, &cpu);
            }
            wait_at_gate(gate)?;
            // Last: it drops root, which the steps above need.
            if let Some((uid, gid)) = user {
                crate::isolation::become_user(uid, gid)?;
            }
            // Again: a change of credentials (capabilities, user) clears it.
            die_with_parent(supervisor)
        });
    }
    Ok(command)
}

/// Asks the kernel to SIGKILL the calling process when the thread that forked it ends, and
/// fails if `parent` is gone already.
///
/// # Safety
/// Between fork and exec: system calls only.
unsafe fn die_with_parent(parent: libc::pid_t) -> io::Result<()> {
    // SAFETY: prctl(2) with integer arguments only.
    if unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: getppid(2) takes nothing.
    if unsafe { libc::getppid() } != parent {
        return Err(io::Error::from_raw_os_error(libc::ESRCH));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::cpu_backstop_s;
    use std::time::Duration;

    #[test]
    fn the_backstop_is_the_limit_plus_a_second_for_every_time_kind() {
        // time = "cpu": the CPU limit (the wall safety net is longer).
        assert_eq!(cpu_backstop_s(60.0, Duration::from_secs(150), 1), 61);
        // time = "wall": no CPU limit (u32::MAX s); the wall limit on each core.
        assert_eq!(
            cpu_backstop_s(u32::MAX as f64, Duration::from_secs(60), 1),
            61
        );
        assert_eq!(
            cpu_backstop_s(u32::MAX as f64, Duration::from_secs(60), 4),
            241
        );
        // time = "both": whichever comes first.
        assert_eq!(cpu_backstop_s(60.0, Duration::from_secs(60), 4), 61);
        assert_eq!(cpu_backstop_s(2.5, Duration::from_secs(60), 0), 4);
    }
}
