//! Starting an isolated run with one `clone3`.
//!
//! The run's first process is cloned straight into new PID and mount namespaces and, where the
//! host has the cgroup v2 hierarchy,
//! into the run's v2 group (`CLONE_INTO_CGROUP`): from its first instruction it is process 1 of
//! the run's PID namespace, the run's init, and in that group. No process sits between mccbuild
//! and the init (before, a waiter did: `unshare(CLONE_NEWPID)` applies only to the children of
//! the process that calls it), so a run is one fork and one exit shorter, and the init hands the
//! tool's wait status to mccbuild itself, through a page they share ([`StatusSlot`]).
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

use std::ffi::{c_char, CString};
use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use crate::cgroup::RunCgroup;
use crate::isolation::Prepared;

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

/// A page shared with the run's init, where it leaves the tool's wait status before it exits.
pub(crate) struct StatusSlot {
    page: *mut i32,
}

// SAFETY: the page is owned by this value alone in mccbuild (the init has its own mapping).
unsafe impl Send for StatusSlot {}

const PAGE: usize = 4096;

impl StatusSlot {
    fn new() -> io::Result<StatusSlot> {
        // SAFETY: a fresh anonymous mapping, unmapped once (Drop).
        let page = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                PAGE,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if page == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(StatusSlot { page: page.cast() })
    }

    /// The tool's wait status, if the init handed it over; read once the init was waited for.
    /// None: the init was killed before (a limit, a cancellation) or the tool never started.
    pub fn tool_status(&self) -> Option<i32> {
        // SAFETY: the page is mapped while self lives; the init wrote it before it exited.
        unsafe {
            (std::ptr::read_volatile(self.page) == 1)
                .then(|| std::ptr::read_volatile(self.page.add(1)))
        }
    }
}

impl Drop for StatusSlot {
    fn drop(&mut self) {
        // SAFETY: unmapping the page mapped in `new`.
        unsafe { libc::munmap(self.page.cast(), PAGE) };
    }
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

/// The step number of [`crate::isolation::describe_apply_error`] for the first steps of the
/// cloned process (its standard streams, session).
pub(crate) const STEP_START: i32 = 13;

/// What the cloned process uses: raw, prepared before the clone (it allocates nothing).
struct ChildData<'a> {
    stdin: i32,
    stdout: i32,
    stderr: i32,
    report: i32,
    gate: i32,
    alive: i32,
    /// mccbuild's ends of the pipes, closed first.
    parent_ends: [i32; 5],
    candidates: &'a [*const c_char],
    argv: &'a [*const c_char],
    envp: &'a [*const c_char],
    isolation: &'a Prepared,
    slot: *mut i32,
}

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

/// The tool's candidate paths, arguments and environment as C strings, made before the clone
/// (the cloned process allocates nothing).
struct CStrings {
    candidates: Vec<CString>,
    argv: Vec<CString>,
    envp: Vec<CString>,
}

impl CStrings {
    fn of(launch: &Launch) -> io::Result<CStrings> {
        let mut argv = vec![cstring(launch.program.as_os_str().as_bytes())?];
        for arg in launch.args {
            argv.push(cstring(arg.as_bytes())?);
        }
        let envp = launch
            .env
            .iter()
            .map(|(k, v)| cstring(format!("{k}={v}").as_bytes()))
            .collect::<io::Result<Vec<_>>>()?;
        Ok(CStrings {
            candidates: candidates(launch.program, launch.env)?,
            argv,
            envp,
        })
    }

    /// The null-terminated pointer lists `execve` takes (valid while `self` lives).
    #[allow(clippy::type_complexity)]
    fn pointers(&self) -> (Vec<*const c_char>, Vec<*const c_char>, Vec<*const c_char>) {
        let pointers = |list: &[CString]| -> Vec<*const c_char> {
            list.iter()
                .map(|c| c.as_ptr())
                .chain([std::ptr::null()])
                .collect()
        };
        (
            pointers(&self.candidates),
            pointers(&self.argv),
            pointers(&self.envp),
        )
    }
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

/// Opens the gate, handing over the run's network and IPC namespaces with the byte when they
/// were made; closing the gate without the byte makes the process give up.
fn release(
    gate: OwnedFd,
    namespaces: Option<crate::isolation::PendingNamespaces>,
) -> io::Result<()> {
    // A failure to make them costs only the overlap: the process makes its own.
    let namespaces = namespaces.and_then(|pending| pending.join().ok());
    send_gate(&gate, namespaces.as_ref().map(|n| n.fds()))
}

/// Sends the gate's byte, with `fds` attached (SCM_RIGHTS) if given.
fn send_gate(gate: &OwnedFd, fds: Option<[i32; 2]>) -> io::Result<()> {
    let mut byte = 1u8;
    let mut iov = libc::iovec {
        iov_base: (&mut byte as *mut u8).cast(),
        iov_len: 1,
    };
    let mut control = [0u64; 8];
    // SAFETY: msghdr is plain data; the control buffer is large and aligned enough for one
    // SCM_RIGHTS message of two fds (CMSG_SPACE(8) = 24 bytes), filled through the CMSG macros.
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        if let Some(fds) = fds {
            let len = std::mem::size_of::<[i32; 2]>() as u32;
            msg.msg_control = control.as_mut_ptr().cast();
            msg.msg_controllen = libc::CMSG_SPACE(len) as usize;
            let header = libc::CMSG_FIRSTHDR(&msg);
            (*header).cmsg_level = libc::SOL_SOCKET;
            (*header).cmsg_type = libc::SCM_RIGHTS;
            (*header).cmsg_len = libc::CMSG_LEN(len) as usize;
            std::ptr::copy_nonoverlapping(fds.as_ptr(), libc::CMSG_DATA(header).cast(), 2);
        }
        loop {
            if libc::sendmsg(gate.as_raw_fd(), &msg, libc::MSG_NOSIGNAL) == 1 {
                return Ok(());
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }
}

/// In the run's process: waits at the gate until mccbuild moved it into its cgroups; returns
/// the network and IPC namespaces handed over with the byte, if any. An error (ECANCELED) if
/// the gate was closed without the byte (a move failed, or mccbuild died).
///
/// # Safety
/// Between clone and exec: system calls only, on the stack.
pub(crate) unsafe fn receive_gate(gate: i32) -> io::Result<Option<[i32; 2]>> {
    let mut byte = 0u8;
    let mut iov = libc::iovec {
        iov_base: (&mut byte as *mut u8).cast(),
        iov_len: 1,
    };
    let mut control = [0u64; 8];
    let mut msg: libc::msghdr = std::mem::zeroed();
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(&control);
    let n = loop {
        let n = libc::recvmsg(gate, &mut msg, libc::MSG_CMSG_CLOEXEC);
        if n >= 0 || *libc::__errno_location() != libc::EINTR {
            break n;
        }
    };
    libc::close(gate);
    if n != 1 || byte != 1 {
        return Err(io::Error::from_raw_os_error(libc::ECANCELED));
    }
    let header = libc::CMSG_FIRSTHDR(&msg);
    if header.is_null()
        || (*header).cmsg_level != libc::SOL_SOCKET
        || (*header).cmsg_type != libc::SCM_RIGHTS
        || (*header).cmsg_len < libc::CMSG_LEN(8) as usize
    {
        return Ok(None);
    }
    let mut fds = [-1i32; 2];
    std::ptr::copy_nonoverlapping(libc::CMSG_DATA(header).cast::<i32>(), fds.as_mut_ptr(), 2);
    Ok(Some(fds))
}

fn kill_and_reap(pid: libc::pid_t) {
    // SAFETY: our own child, not yet waited for.
    unsafe {
        libc::kill(pid, libc::SIGKILL);
        let mut status = 0;
        while libc::waitpid(pid, &mut status, 0) < 0 && *libc::__errno_location() == libc::EINTR {}
    }
}

/// The paths to execute, in order: the program itself if it holds a `/`, else the program in
/// each folder of the run's PATH (as `execvp` looks).
fn candidates(program: &Path, env: &[(String, String)]) -> io::Result<Vec<CString>> {
    let bytes = program.as_os_str().as_bytes();
    if bytes.contains(&b'/') {
        return Ok(vec![cstring(bytes)?]);
    }
    let path = env
        .iter()
        .find(|(k, _)| k == "PATH")
        .map_or("/usr/local/bin:/usr/bin:/bin", |(_, v)| v.as_str());
    path.split(':')
        .map(|dir| {
            let dir = if dir.is_empty() { "." } else { dir };
            let mut full = dir.as_bytes().to_vec();
            full.push(b'/');
            full.extend_from_slice(bytes);
            cstring(&full)
        })
        .collect()
}

fn cstring(bytes: &[u8]) -> io::Result<CString> {
    CString::new(bytes).map_err(|_| {
        io::Error::other(format!(
            "{} holds a NUL byte",
            String::from_utf8_lossy(bytes)
        ))
    })
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

/// The cloned process: sets itself up, enters the run's view (where it forks the tool and stays
/// as the init) and, in the tool's process, executes the tool. A failure is reported to the
/// spawner and ends the process.
///
/// # Safety
/// In the child of `clone3`: system calls only, on data prepared before the clone.
unsafe fn child_main(c: &ChildData) -> ! {
    let code = start(c).raw_os_error().unwrap_or(0);
    libc::write(c.report, (&code as *const i32).cast(), 4);
    libc::_exit(127)
}

/// The tool's process (see [`crate::isolation::ToolStart`]): executes the tool, or reports why
/// it could not and exits.
///
/// # Safety
/// `arg` is the run's `ChildData`; see [`child_main`].
unsafe fn tool_main(arg: *const libc::c_void) -> ! {
    let c = &*(arg as *const ChildData);
    let code = exec(c);
    libc::write(c.report, (&code as *const i32).cast(), 4);
    libc::_exit(127)
}

/// Returns only on a failure (see [`crate::isolation::Prepared::enter`]).
///
/// # Safety
/// See [`child_main`].
unsafe fn start(c: &ChildData) -> io::Error {
    let fail = || {
        let errno = io::Error::last_os_error().raw_os_error().unwrap_or(0);
        io::Error::from_raw_os_error(errno | (STEP_START << 16))
    };
    // Dies with the thread that started it (mccbuild's death included); if mccbuild died
    // already, the gate is closed without the byte and it gives up there.
    if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
        return fail();
    }
    for fd in c.parent_ends {
        libc::close(fd);
    }
    // mccbuild's standard streams are open (the Rust runtime makes sure), so these pipes are
    // above 2 and dup2 never clobbers one of them.
    if libc::dup2(c.stdin, 0) < 0 || libc::dup2(c.stdout, 1) < 0 || libc::dup2(c.stderr, 2) < 0 {
        return fail();
    }
    if libc::setsid() < 0 {
        return fail();
    }
    // As the standard library's `Command`: nothing blocked, SIGPIPE by default (mccbuild
    // ignores it).
    let mut none: libc::sigset_t = std::mem::zeroed();
    libc::sigemptyset(&mut none);
    libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
    libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    let no_core = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    libc::setrlimit(libc::RLIMIT_CORE, &no_core);
    let tool = crate::isolation::ToolStart {
        start: tool_main,
        arg: (c as *const ChildData).cast(),
    };
    c.isolation.enter(c.gate, c.alive, c.slot, &tool)
}

/// Executes the tool (the first candidate that exists); returns the errno if none could be.
///
/// # Safety
/// See [`child_main`].
unsafe fn exec(c: &ChildData) -> i32 {
    let mut error = libc::ENOENT;
    for &path in c.candidates.iter().take_while(|p| !p.is_null()) {
        libc::execve(path, c.argv.as_ptr(), c.envp.as_ptr());
        let errno = *libc::__errno_location();
        match errno {
            // As execvp: look further, remembering a permission problem.
            libc::ENOENT | libc::ENOTDIR => {}
            libc::EACCES => error = libc::EACCES,
            _ => return errno,
        }
    }
    error
}
