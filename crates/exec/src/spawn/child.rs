//! The cloned process, between clone and exec: its standard streams and session, the run's view
//! (`isolation`'s `enter`, where it becomes the run's init) and, in the tool's process, the
//! tool's execution. It allocates nothing: it works on data prepared before the clone.

use std::ffi::c_char;
use std::io;

use crate::isolation::Prepared;

/// The step number of [`crate::isolation::describe_apply_error`] for the first steps of the
/// cloned process (its standard streams, session).
pub(crate) const STEP_START: i32 = 13;

/// What the cloned process uses: raw, prepared before the clone (it allocates nothing).
pub(super) struct ChildData<'a> {
    pub(super) stdin: i32,
    pub(super) stdout: i32,
    pub(super) stderr: i32,
    pub(super) report: i32,
    pub(super) gate: i32,
    pub(super) alive: i32,
    /// mccbuild's ends of the pipes, closed first.
    pub(super) parent_ends: [i32; 5],
    pub(super) candidates: &'a [*const c_char],
    pub(super) argv: &'a [*const c_char],
    pub(super) envp: &'a [*const c_char],
    pub(super) isolation: &'a Prepared,
    pub(super) slot: *mut i32,
}

/// The cloned process: sets itself up, enters the run's view (where it forks the tool and stays
/// as the init) and, in the tool's process, executes the tool. A failure is reported to the
/// spawner and ends the process.
///
/// # Safety
/// In the child of `clone3`: system calls only, on data prepared before the clone.
pub(super) unsafe fn child_main(c: &ChildData) -> ! {
    // SAFETY: this function's contract, which `start` shares.
    let code = unsafe { start(c) }.raw_os_error().unwrap_or(0);
    // SAFETY: write(2) of the four bytes of `code`, on the stack, to the report pipe's write
    // end; _exit(2) ends the process without running anything of mccbuild's copy.
    unsafe {
        libc::write(c.report, (&code as *const i32).cast(), 4);
        libc::_exit(127)
    }
}

/// The tool's process (see [`crate::isolation::ToolStart`]): executes the tool, or reports why
/// it could not and exits.
///
/// # Safety
/// `arg` is the run's `ChildData`; see [`child_main`].
unsafe fn tool_main(arg: *const libc::c_void) -> ! {
    // SAFETY: `arg` is the run's `ChildData` (this function's contract), which lives on the
    // spawner's stack copied into the cloned process, shared with this one (CLONE_VM).
    let c = unsafe { &*(arg as *const ChildData) };
    // SAFETY: in the tool's process, before it executes: see `child_main`.
    let code = unsafe { exec(c) };
    // SAFETY: as in `child_main`.
    unsafe {
        libc::write(c.report, (&code as *const i32).cast(), 4);
        libc::_exit(127)
    }
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
    // SAFETY: prctl(2) with integer arguments only.
    if unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) } != 0 {
        return fail();
    }
    for fd in c.parent_ends {
        // SAFETY: mccbuild's ends of the pipes, copies of this process's own, closed once.
        unsafe { libc::close(fd) };
    }
    // mccbuild's standard streams are open (the Rust runtime makes sure), so these pipes are
    // above 2 and dup2 never clobbers one of them.
    // SAFETY: dup2(2) of descriptors open in this process.
    let streams = unsafe {
        libc::dup2(c.stdin, 0) >= 0 && libc::dup2(c.stdout, 1) >= 0 && libc::dup2(c.stderr, 2) >= 0
    };
    if !streams {
        return fail();
    }
    // SAFETY: setsid(2) takes nothing.
    if unsafe { libc::setsid() } < 0 {
        return fail();
    }
    // As the standard library's `Command`: nothing blocked, SIGPIPE by default (mccbuild
    // ignores it).
    let no_core = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `sigset_t` is plain C data (all zeroes is valid, and sigemptyset fills it);
    // sigprocmask(2), signal(2) and setrlimit(2) on data on the stack.
    unsafe {
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut none);
        libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        libc::setrlimit(libc::RLIMIT_CORE, &no_core);
    }
    let tool = crate::isolation::ToolStart {
        start: tool_main,
        arg: (c as *const ChildData).cast(),
    };
    // SAFETY: between clone and exec (this function's contract); the gate, the pipe's end and
    // the status page are this process's, and `tool` points to `c`, which outlives the call.
    unsafe { c.isolation.enter(c.gate, c.alive, c.slot, &tool) }
}

/// Executes the tool (the first candidate that exists); returns the errno if none could be.
///
/// # Safety
/// See [`child_main`].
unsafe fn exec(c: &ChildData) -> i32 {
    let mut error = libc::ENOENT;
    for &path in c.candidates.iter().take_while(|p| !p.is_null()) {
        // SAFETY: execve(2) with a C string and two null-terminated lists of C strings, made
        // before the clone (`CStrings`) and alive while the spawner waits; errno is this
        // thread's.
        let errno = unsafe {
            libc::execve(path, c.argv.as_ptr(), c.envp.as_ptr());
            *libc::__errno_location()
        };
        match errno {
            // As execvp: look further, remembering a permission problem.
            libc::ENOENT | libc::ENOTDIR => {}
            libc::EACCES => error = libc::EACCES,
            _ => return errno,
        }
    }
    error
}
