//! Starting an isolated run with one `clone3`.
//!
//! The run's first process is cloned straight into new PID and mount namespaces and, where the
//! host has the cgroup v2 hierarchy, into the run's v2 group (`CLONE_INTO_CGROUP`): from its
//! first instruction it is process 1 of the run's PID namespace, the run's init, and in that
//! group. No process sits between mccbuild and the init (`unshare(CLONE_NEWPID)` would apply
//! only to the children of the process that calls it, and need a waiter in between), so a run
//! is one fork and one exit shorter than with such a waiter, and the init hands the tool's wait
//! status to mccbuild itself, through a page they share ([`StatusSlot`]).
//!
//! It is born in the run's cgroup v1 groups too: for the clone, the cloning thread moves itself
//! (itself alone: a write of `0` to each group's `tasks`) into them, and back right after
//! ([`RunCgroup::enter_v1_as_thread`]). Moving the process instead, a write of its pid to
//! `cgroup.procs`, takes the kernel's global thread-group semaphore, whose first writer after a
//! quiet while waits for an RCU grace period (6-14 ms here). Once back, the thread pins the
//! process to the run's cores and sets the run's memory limit while the process builds its view
//! of the files, then opens the gate: one byte, which carries the run's network and IPC
//! namespaces (made by a thread meanwhile) as file descriptors, SCM_RIGHTS on a socket pair.
//! The process forks nothing and executes nothing before it read that byte, so nothing of the
//! tool runs before it is pinned and limited; it then enters those namespaces (`setns`), or
//! makes its own if they could not be made. If the pin, the limit or the thread's way back
//! fails the process is killed and reaped, and the run is an infrastructure failure. A failure
//! of the process before the tool executed comes back as an errno (with the step in its high
//! bits, see [`crate::isolation::describe_apply_error`]) through a close-on-exec pipe, as the
//! standard library's `Command` reports one.

//!
//! The files: this one clones the run's process and follows it to the tool's execution;
//! `c_strings` makes the tool's command line ready before the clone, `child` is the cloned
//! process, `gate` the byte it waits for, `status_slot` the page where its init leaves the
//! tool's status.

mod c_strings;
mod child;
mod gate;
mod status_slot;

use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::Path;

use crate::cgroup::RunCgroup;
use crate::isolation::Prepared;

use self::c_strings::CStrings;
pub(crate) use self::child::STEP_START;
use self::child::{ChildData, child_main};
pub(crate) use self::gate::receive_gate;
use self::gate::release;
pub(crate) use self::status_slot::StatusSlot;

/// What to start.
pub(crate) struct Launch<'a> {
    /// The tool's program: a path, or a name looked up on the PATH of `env` (in the run's view).
    pub program: &'a Path,
    pub args: &'a [String],
    pub env: &'a [(String, String)],
    /// Cores the run is pinned to (none: left as they are).
    pub cores: &'a [u32],
    pub isolation: &'a Prepared,
    /// The run's network and IPC namespaces, being made: handed to the process at its gate
    /// (None, or if making them failed: the process makes its own).
    pub namespaces: Option<crate::isolation::PendingNamespaces>,
    /// The run's groups (None: none, as for the probe).
    pub cgroup: Option<&'a RunCgroup>,
    /// The run's memory limit, set once the process is in its groups (see
    /// [`RunCgroup::enter_v1_as_thread`]) and before its gate opens.
    pub memory_limit_bytes: u64,
}

/// A started run: its init (mccbuild's child) and the tool's output streams.
pub(crate) struct Spawned {
    pub pid: libc::pid_t,
    pub stdout: File,
    pub stderr: File,
    pub status: StatusSlot,
}

/// `struct clone_args` of linux/sched.h (up to `cgroup`: CLONE_ARGS_SIZE_VER2).
#[repr(C)]
#[derive(Default)]
struct CloneArgs {
    flags: u64,
    pidfd: u64,
    child_tid: u64,
    parent_tid: u64,
    exit_signal: u64,
    stack: u64,
    stack_size: u64,
    tls: u64,
    set_tid: u64,
    set_tid_size: u64,
    cgroup: u64,
}

/// linux/sched.h (libc does not have it).
const CLONE_INTO_CGROUP: u64 = 0x2_0000_0000;

/// Starts the run (see the module's documentation); returns once the tool executed.
pub(crate) fn spawn(launch: Launch) -> io::Result<Spawned> {
    let strings = CStrings::of(&launch)?;
    let (candidates, argv, envp) = strings.pointers();
    let stdin = File::open("/dev/null")?;
    let (out_r, out_w) = pipe()?;
    let (err_r, err_w) = pipe()?;
    let (report_r, report_w) = pipe()?;
    let (gate_r, gate_w) = socketpair()?;
    let (alive_r, alive_w) = pipe()?;
    let v2 = match launch.cgroup.and_then(RunCgroup::v2_dir) {
        Some(dir) => Some(File::open(dir).map_err(|e| {
            io::Error::other(format!(
                "cannot open the run's cgroup {}: {e}",
                dir.display()
            ))
        })?),
        None => None,
    };
    let slot = StatusSlot::new()?;
    let child = ChildData {
        stdin: stdin.as_raw_fd(),
        stdout: out_w.as_raw_fd(),
        stderr: err_w.as_raw_fd(),
        report: report_w.as_raw_fd(),
        gate: gate_r.as_raw_fd(),
        alive: alive_r.as_raw_fd(),
        parent_ends: [
            out_r.as_raw_fd(),
            err_r.as_raw_fd(),
            report_r.as_raw_fd(),
            gate_w.as_raw_fd(),
            alive_w.as_raw_fd(),
        ],
        candidates: &candidates,
        argv: &argv,
        envp: &envp,
        isolation: launch.isolation,
        slot: slot.page,
    };
    let mut flags = (libc::CLONE_NEWPID | libc::CLONE_NEWNS) as u64;
    if v2.is_some() {
        flags |= CLONE_INTO_CGROUP;
    }
    let args = CloneArgs {
        flags,
        exit_signal: libc::SIGCHLD as u64,
        cgroup: v2.as_ref().map_or(0, |f| f.as_raw_fd() as u64),
        ..CloneArgs::default()
    };
    // This thread joins the run's cgroup v1 groups for the clone: the process is born in them
    // (and in its v2 group: CLONE_INTO_CGROUP), no move of it is needed.
    let in_groups = match launch.cgroup {
        Some(cgroup) => Some(cgroup.enter_v1_as_thread()?),
        None => None,
    };
    // SAFETY: clone3 without CLONE_VM or a stack is a fork: the child runs on a copy of this
    // thread's stack and only makes system calls on `child` (prepared above) until it executes
    // the tool or exits.
    let pid = unsafe {
        libc::syscall(
            libc::SYS_clone3,
            &args as *const CloneArgs,
            std::mem::size_of::<CloneArgs>(),
        )
    };
    if pid == 0 {
        // SAFETY: in the child, see above.
        unsafe { child_main(&child) }
    }
    let cloned = if pid < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(pid as libc::pid_t)
    };
    // Back at once: the thread leaves before anything else (nothing of mccbuild stays in the
    // run's groups, see `enter_v1_as_thread`).
    let left = in_groups.map_or(Ok(()), crate::cgroup::ThreadInGroup::leave);
    let pid = match (cloned, &left) {
        (Ok(pid), _) => pid,
        (Err(e), Ok(())) => return Err(e),
        (Err(e), Err(l)) => return Err(io::Error::other(format!("{e}; {l}"))),
    };
    drop((stdin, out_w, err_w, report_w, gate_r, alive_r, v2));
    // Pinned from here, not by itself: a process pinning itself waits until the core runs it
    // (milliseconds when another process holds the core); this thread does not wait for that.
    let started = left
        .and_then(|()| {
            crate::process::pin_process(pid, launch.cores).map_err(|e| {
                io::Error::other(format!(
                    "cannot pin the run to cores {:?}: {e}",
                    launch.cores
                ))
            })
        })
        .and_then(|()| match launch.cgroup {
            Some(cgroup) => cgroup
                .set_memory_limit(launch.memory_limit_bytes)
                .map_err(|e| {
                    // The kernel refuses a limit below what the group uses already.
                    let kind = if e.raw_os_error() == Some(libc::EBUSY) {
                        io::ErrorKind::OutOfMemory
                    } else {
                        io::ErrorKind::Other
                    };
                    io::Error::new(
                        kind,
                        format!(
                            "cannot set the run's memory limit of {} bytes: {e}",
                            launch.memory_limit_bytes
                        ),
                    )
                }),
            None => Ok(()),
        })
        .and_then(|()| release(gate_w, launch.namespaces))
        .and_then(|()| read_report(File::from(report_r)));
    // Held until the tool executed (see `isolation::become_init`).
    drop(alive_w);
    if let Err(e) = started {
        kill_and_reap(pid);
        return Err(e);
    }
    Ok(Spawned {
        pid,
        stdout: File::from(out_r),
        stderr: File::from(err_r),
        status: slot,
    })
}

/// What the run's process reported through its close-on-exec pipe: nothing (end of file) when
/// the tool executed; four bytes (an errno with its step) when the process gave up.
fn read_report(mut report: File) -> io::Result<()> {
    let mut code = [0u8; 4];
    let mut got = 0;
    while got < 4 {
        match report.read(&mut code[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    match got {
        0 => Ok(()),
        4 => Err(io::Error::from_raw_os_error(i32::from_ne_bytes(code))),
        _ => Err(io::Error::other(
            "a truncated report from the run's process",
        )),
    }
}

fn kill_and_reap(pid: libc::pid_t) {
    // SAFETY: our own child, not yet waited for.
    unsafe {
        libc::kill(pid, libc::SIGKILL);
        let mut status = 0;
        while libc::waitpid(pid, &mut status, 0) < 0 && *libc::__errno_location() == libc::EINTR {}
    }
}

fn socketpair() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [-1i32; 2];
    // SAFETY: socketpair fills two fds on success; each is then owned once.
    unsafe {
        if libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        ) != 0
        {
            return Err(io::Error::last_os_error());
        }
        Ok((OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])))
    }
}

fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [-1i32; 2];
    // SAFETY: pipe2 fills two fds on success; each is then owned once.
    unsafe {
        if libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok((OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])))
    }
}
