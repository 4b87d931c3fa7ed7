//! The QEMU process of a run: started pinned to the run's cores and tied to mccbuild's life,
//! watched until it exits (killed at a limit, on cancellation, or when the guest does not power
//! off after its result), killed and reaped whatever happens. The tool's wall time is the
//! host's: from the runner's `started` to its `ended` on the output share, by the host's
//! monotonic clock, which also says when the wall-clock limit is reached (the guest's clock
//! can run at another rate: crates/exec/src/qemu/tsc.rs).

use std::fs;
use std::io;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use mccbuild_core::Termination;

use super::{QemuExecutor, RunFiles};
use crate::local::wall_limit;
use crate::{InfraError, RunSpec};

/// Seconds a guest may keep running after its result is complete before it is killed.
const POWEROFF_GRACE: Duration = Duration::from_secs(15);

/// How often the host looks at the VM and the output share: the resolution of the tool's
/// wall time and of the wall-clock limit.
const POLL: Duration = Duration::from_millis(10);

/// How a run's VM ended, as the host saw it.
pub(super) struct VmEnd {
    /// QEMU's wait status and resource usage.
    pub(super) exit: libc::c_int,
    pub(super) usage: libc::rusage,
    /// From starting QEMU to its exit.
    pub(super) wall: Duration,
    /// The tool's wall time by the host's clock: from the runner's `started` to its `ended`
    /// (None when the guest did not write both).
    pub(super) tool_wall: Option<Duration>,
    /// mccbuild killed the VM at a limit: how the run ended, and why in words.
    pub(super) killed: Option<(Termination, String)>,
    pub(super) cancelled: bool,
}

impl QemuExecutor {
    /// Starts QEMU on the run's cores, its output in `qemu.log`.
    pub(super) fn start_vm(
        &self,
        args: &[String],
        dir: &Path,
        cores: &[u32],
    ) -> Result<Vm, InfraError> {
        let qemu_log = fs::File::create(dir.join("qemu.log"))
            .map_err(|e| InfraError(format!("cannot create {}: {e}", dir.display())))?;
        let mut command = Command::new(&self.binary);
        command
            .args(args)
            .stdin(Stdio::null())
            .stdout(
                qemu_log
                    .try_clone()
                    .map_err(|e| InfraError(e.to_string()))?,
            )
            .stderr(qemu_log);
        pin_and_tie(&mut command, cores.to_vec());
        let child = command
            .spawn()
            .map_err(|e| InfraError(format!("cannot start {}: {e}", self.binary.display())))?;
        Ok(Vm::new(child))
    }

    /// Watches the VM until it exits, killing it at the wall-clock or output limit, when the
    /// guest never answered ssh, when cancelled, or when a complete result is not followed by
    /// the guest's power-off. Under a wall-clock time limit (`[limits] time = "wall"` or
    /// `"both"`), `time_s` after the tool started by the host's clock, it writes `stop` on the
    /// output share: the guest's runner then kills the tool and measures it (`wall_limit`).
    pub(super) fn supervise(
        &self,
        mut vm: Vm,
        spec: &RunSpec,
        files: &RunFiles,
        start: Instant,
        cancel: &AtomicBool,
        boot_failed: &AtomicBool,
    ) -> VmEnd {
        let deadline =
            wall_limit(spec.limits.time_s) + Duration::from_secs(self.config.boot_timeout_s);
        let status_path = files.out.join("status");
        let started_path = files.out.join("started");
        let ended_path = files.out.join("ended");
        let tool_limit = spec
            .limits
            .time
            .limits_wall()
            .then(|| Duration::from_secs(spec.limits.time_s));
        let mut tool_started: Option<Instant> = None;
        let mut tool_ended: Option<Instant> = None;
        let mut stop_written = false;
        let mut killed: Option<(Termination, String)> = None;
        let mut cancelled = false;
        let mut complete_since: Option<Instant> = None;
        let (exit, usage) = loop {
            if let Some(done) = vm.try_wait() {
                break done;
            }
            if killed.is_none() && !cancelled {
                let output =
                    file_len(&files.out.join("stdout")) + file_len(&files.out.join("stderr"));
                if cancel.load(Ordering::Relaxed) {
                    cancelled = true;
                    vm.kill();
                } else if start.elapsed() >= deadline {
                    killed = Some((
                        Termination::WallLimit,
                        format!(
                            "killed at the wall-clock limit ({} s: twice the CPU limit + 30 s + boot_timeout_s)",
                            deadline.as_secs()
                        ),
                    ));
                    vm.kill();
                } else if boot_failed.load(Ordering::Relaxed) {
                    killed = Some((
                        Termination::WallLimit,
                        format!(
                            "the guest did not answer ssh within boot_timeout_s = {} s",
                            self.config.boot_timeout_s
                        ),
                    ));
                    vm.kill();
                } else if output > self.output_limit {
                    killed = Some((
                        Termination::OutputLimit,
                        format!(
                            "killed: the tool printed more than {} bytes",
                            self.output_limit
                        ),
                    ));
                    vm.kill();
                } else {
                    if tool_started.is_none() && started_path.exists() {
                        tool_started = Some(Instant::now());
                    }
                    if tool_started.is_some() && tool_ended.is_none() && ended_path.exists() {
                        tool_ended = Some(Instant::now());
                    }
                    if status_path.exists() {
                        // The result is complete; a guest that does not power off is stopped.
                        let since = *complete_since.get_or_insert_with(Instant::now);
                        if since.elapsed() > POWEROFF_GRACE {
                            vm.kill();
                        }
                    } else if let (Some(limit), Some(t0), None) =
                        (tool_limit, tool_started, tool_ended)
                        && !stop_written
                        && t0.elapsed() >= limit
                    {
                        // A guest that cannot be told (the share failed) is stopped by the
                        // deadline above.
                        let _ = fs::write(files.out.join("stop"), b"");
                        stop_written = true;
                    }
                }
            }
            std::thread::sleep(POLL);
        };
        // The guest may have written its last files and powered off between two looks.
        let now = Instant::now();
        if tool_started.is_none() && started_path.exists() {
            tool_started = Some(now);
        }
        if tool_ended.is_none() && ended_path.exists() {
            tool_ended = Some(now);
        }
        VmEnd {
            exit,
            usage,
            wall: start.elapsed(),
            tool_wall: tool_started.zip(tool_ended).map(|(t0, t1)| t1 - t0),
            killed,
            cancelled,
        }
    }
}

/// The QEMU process: killed and reaped when dropped, whatever happened.
pub(super) struct Vm {
    child: Option<Child>,
}

impl Vm {
    pub(super) fn new(child: Child) -> Vm {
        Vm { child: Some(child) }
    }

    /// Its exit status and resource usage once it has ended (and is reaped).
    pub(super) fn try_wait(&mut self) -> Option<(libc::c_int, libc::rusage)> {
        let pid = self.child.as_ref()?.id() as i32;
        let mut status: libc::c_int = 0;
        // SAFETY: rusage is plain data, for which all zeroes is a valid value.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: wait4 on our own child, not yet reaped, with a status and a usage on the stack.
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if r == pid {
            // Reaped by wait4: forget the handle without waiting again.
            self.child = None;
            Some((status, usage))
        } else {
            None
        }
    }

    fn kill(&mut self) {
        if let Some(child) = &mut self.child {
            let _ = child.kill();
        }
    }
}

impl Drop for Vm {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Pins QEMU (and so its vCPU threads) to the run's cores, and ties its life to the thread that
/// started it: if mccbuild dies, the kernel kills the VM (no stray QEMU).
pub(super) fn pin_and_tie(command: &mut Command, cores: Vec<u32>) {
    // SAFETY: between fork and exec, only async-signal-safe calls on data prepared before.
    unsafe {
        command.pre_exec(move || {
            if libc::setsid() < 0 {
                return Err(io::Error::last_os_error());
            }
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            crate::process::pin_to_cores(&cores)
        });
    }
}

fn file_len(path: &Path) -> u64 {
    fs::metadata(path).map_or(0, |m| m.len())
}
