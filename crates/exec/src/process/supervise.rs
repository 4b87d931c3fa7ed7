//! Supervising the run's main process: waiting for it while its output is read, checking the
//! limits, killing the tree at one of them or when cancelled.

use std::io;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use mccbuild_core::Termination;

use super::ProcessSpec;
use super::output::Output;
use super::proc_sampler::{ProcSampler, in_session};
use crate::cgroup::RunCgroup;

/// How the process ended, as its supervision saw it.
pub(super) struct Ended {
    pub(super) status: libc::c_int,
    pub(super) usage: libc::rusage,
    pub(super) killed_for: Option<Termination>,
    pub(super) cancelled: bool,
}

impl Ended {
    /// How the run ended: the limit it was killed at, else the OOM killer, else how its main
    /// process ended (SIGXCPU under the fallback is its CPU limit).
    pub(super) fn termination(&self, oom: bool, fallback: bool) -> Termination {
        if let Some(reason) = self.killed_for {
            reason
        } else if oom {
            Termination::MemoryLimit
        } else if libc::WIFSIGNALED(self.status) {
            let signal = libc::WTERMSIG(self.status);
            if fallback && signal == libc::SIGXCPU {
                Termination::CpuLimit
            } else {
                Termination::Signal { signal }
            }
        } else {
            Termination::Exit {
                code: libc::WEXITSTATUS(self.status),
            }
        }
    }
}

/// Waits for the main process, reading its output meanwhile, and kills the tree at a limit
/// (CPU time, memory, wall clock, output) or when cancelled.
pub(super) fn supervise(
    spec: &ProcessSpec,
    pid: i32,
    start: Instant,
    sampler: &mut ProcSampler,
    output: &mut Output,
) -> io::Result<Ended> {
    let fallback = spec.cgroup.is_none();
    let pidfd = pidfd_open(pid);
    let mut ended = Ended {
        status: 0,
        // SAFETY: rusage is plain data.
        usage: unsafe { std::mem::zeroed() },
        killed_for: None,
        cancelled: false,
    };
    // The first check after 1 ms: nothing can have passed a limit before (and most short runs
    // have ended by then).
    let mut interval = Duration::from_millis(1);
    let mut next_check = Instant::now() + interval;
    let result = loop {
        // SAFETY: wait4 on our own child, with valid pointers.
        let r = unsafe { libc::wait4(pid, &mut ended.status, libc::WNOHANG, &mut ended.usage) };
        if r == pid {
            break Ok(());
        }
        if r < 0 {
            let err = io::Error::last_os_error();
            if err.raw_os_error() != Some(libc::EINTR) {
                break Err(err);
            }
        }
        if Instant::now() >= next_check {
            if ended.killed_for.is_none() && !ended.cancelled {
                let cpu = match &spec.cgroup {
                    Some(cg) => cg.cpu_time_s().unwrap_or(0.0),
                    None => sampler.sample().0,
                };
                let reason = if cpu >= spec.cpu_limit_s {
                    Some(Termination::CpuLimit)
                } else if spec.cgroup.as_ref().is_some_and(|cg| cg.oom_killed())
                    || (fallback && sampler.peak_rss >= spec.memory_limit_bytes)
                {
                    Some(Termination::MemoryLimit)
                } else if start.elapsed() >= spec.wall_limit {
                    Some(Termination::WallLimit)
                } else if output.total > spec.output_limit {
                    Some(Termination::OutputLimit)
                } else {
                    None
                };
                if spec.cancel.load(Ordering::Relaxed) {
                    ended.cancelled = true;
                    kill_tree(&spec.cgroup, pid, sampler);
                } else if let Some(reason) = reason {
                    ended.killed_for = Some(reason);
                    kill_tree(&spec.cgroup, pid, sampler);
                }
            }
            // Check often at first (short runs end fast), then settle at 20 ms.
            next_check = Instant::now() + interval;
            interval = (interval * 2).min(Duration::from_millis(20));
        }
        let before = output.total;
        output.wait_and_read(pidfd, Some(next_check));
        if before <= spec.output_limit && output.total > spec.output_limit {
            // Past the output limit: checked (and killed) at once.
            next_check = Instant::now();
        }
    };
    if pidfd >= 0 {
        // SAFETY: closing the fd we opened.
        unsafe { libc::close(pidfd) };
    }
    result.map(|()| ended)
}

pub(super) fn kill_tree(cgroup: &Option<RunCgroup>, pid: i32, sampler: &ProcSampler) {
    match cgroup {
        Some(cg) => {
            cg.kill_all(Duration::from_secs(10));
        }
        None => {
            // SAFETY: signals to our own child's process group and the pids we saw in its session.
            unsafe { libc::killpg(pid, libc::SIGKILL) };
            for &member in sampler.seen.keys() {
                if member != pid && in_session(member, pid) {
                    // SAFETY: kill(2) with integers: a process seen in the run's session.
                    unsafe { libc::kill(member, libc::SIGKILL) };
                }
            }
        }
    }
}

fn pidfd_open(pid: i32) -> i32 {
    // SAFETY: a plain system call; -1 when the kernel lacks it (the loop then just sleeps).
    unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) as i32 }
}
