//! A setup's processes: the command in a process group of its own, with a guard that kills the
//! whole group the moment the mccbuild that started it dies, and stopped at once when mccbuild
//! is interrupted.
//!
//! The group: the setup's shell leads it (`setpgid`), and what it starts stays in it unless it
//! leaves on purpose. Ctrl-C at a terminal therefore reaches mccbuild only (the terminal signals
//! its foreground group), which then stops the setup itself and says "interrupted".
//!
//! The guard: a `/bin/sh` in the setup's group, blocked reading a pipe whose only write end
//! mccbuild holds (close-on-exec: no child inherits it). When mccbuild dies, even by `kill -9`,
//! the kernel closes that end, the guard's read returns, and it sends SIGKILL to the group
//! (itself included). When the setup ends, mccbuild sends SIGKILL to the group: what the setup
//! left running (and the guard) never writes into its products after they are moved into place.
//! The group's number cannot be reused meanwhile: the guard is a member until that kill.
//!
//! What escapes both (a process that left the group and the guard killed first) is found at the
//! next setup of the same identity by the attempt it names in its environment
//! ([`ATTEMPT_VAR`], `attempt`), and killed there before anything else happens.

use std::os::fd::OwnedFd;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rustix::pipe::{PipeFlags, pipe_with};
use rustix::process::{Pid, Signal, kill_process_group};

/// The environment variable naming a setup's attempt folder in all its processes.
pub const ATTEMPT_VAR: &str = "MCCBUILD_SETUP_ATTEMPT";

/// How often a running setup is checked for its end and for an interruption.
const POLL: Duration = Duration::from_millis(20);

/// How a setup's command ended.
pub enum Ended {
    Exited(ExitStatus),
    /// Interrupted (SIGINT, SIGTERM...): the setup's processes were killed.
    Interrupted,
}

/// Runs `command` as the setup of a tool and waits for it, or for `cancel`. Its processes
/// are all killed when it returns, whatever happened (see the module's comment).
pub fn run_in_own_group(
    mut command: Command,
    attempt: &Path,
    cancel: &AtomicBool,
) -> std::io::Result<Ended> {
    command.env(ATTEMPT_VAR, attempt).process_group(0);
    let mut child = command.spawn()?;
    let group = Pid::from_raw(child.id() as i32).filter(|p| p.as_raw_nonzero().get() > 1);
    let guard = group.and_then(|g| start_guard(g.as_raw_nonzero().get()).ok());
    let ended = wait_or_cancel(&mut child, cancel);
    // The shell is reaped; its group lives on in the guard (and in what the setup left): its
    // number is not reused before this kill. (Without a guard, the group may be gone and its
    // number free: it is not signalled.)
    if let (Some(group), Some((mut guard, _write_end))) = (group, guard) {
        let _ = kill_process_group(group, Signal::KILL);
        let _ = guard.wait();
    }
    ended
}

/// Waits for `child`, killing its group when `cancel` is set.
fn wait_or_cancel(child: &mut Child, cancel: &AtomicBool) -> std::io::Result<Ended> {
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(if cancel.load(Ordering::SeqCst) {
                Ended::Interrupted
            } else {
                Ended::Exited(status)
            });
        }
        if cancel.load(Ordering::SeqCst) {
            if let Some(group) = Pid::from_raw(child.id() as i32) {
                let _ = kill_process_group(group, Signal::KILL);
            }
            let _ = child.wait();
            return Ok(Ended::Interrupted);
        }
        std::thread::sleep(POLL);
    }
}

/// The guard of group `group`: it kills the group when the returned pipe end is closed (by
/// mccbuild's death, or when it is dropped after the group was killed).
fn start_guard(group: i32) -> std::io::Result<(Child, OwnedFd)> {
    let (read_end, write_end) = pipe_with(PipeFlags::CLOEXEC)?;
    let guard = Command::new("/bin/sh")
        .arg("-c")
        .arg("read -r _; kill -KILL -- -\"$1\" 2>/dev/null")
        .arg("mccbuild-setup-guard")
        .arg(group.to_string())
        .stdin(Stdio::from(read_end))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(group)
        .spawn()?;
    Ok((guard, write_end))
}
