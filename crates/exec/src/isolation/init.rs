//! The run's init: process 1 of the run's PID namespace, which starts the tool's process (as
//! `vfork` does), forwards signals to it, reaps every process and hands the tool's wait status
//! over to mccbuild. Between clone and exec: system calls only, nothing allocated.

/// How the run's init starts the tool's process: `start(arg)` runs in that process (a child of
/// the init sharing its memory until it executes the tool, as `vfork`; on its own small stack)
/// and never returns: it executes the tool, or reports why it could not and exits.
pub(crate) struct ToolStart {
    pub start: unsafe fn(*const libc::c_void) -> !,
    pub arg: *const libc::c_void,
}

/// The signals the run's init passes on to the tool (those a shell, a user or a scheduler
/// sends to end or to wake a program; the synchronous ones are the tool's own business).
const FORWARDED: [libc::c_int; 9] = [
    libc::SIGHUP,
    libc::SIGINT,
    libc::SIGQUIT,
    libc::SIGUSR1,
    libc::SIGUSR2,
    libc::SIGALRM,
    libc::SIGTERM,
    libc::SIGCONT,
    libc::SIGWINCH,
];

extern "C" fn ignore_signal(_: libc::c_int) {}

/// Starts the tool's process off process 1 of the run's PID namespace, which stays as the run's
/// minimal init ([`run_init`]); returns only on a failure (the step's number, errno as the
/// failing call left it). Before that the init asks to be killed when the thread of mccbuild
/// that started it ends (`PR_SET_PDEATHSIG`, again: every change of credentials clears it), and
/// checks by `spawner_alive`'s hang-up that it had not ended before.
///
/// The tool's process is cloned as `vfork` does (`CLONE_VM | CLONE_VFORK`, on a stack of its
/// own in this frame): it shares the init's memory, the init waits until it executed the tool,
/// and neither copies page tables nor takes the copy-on-write faults of a fork (the init is a
/// copy of mccbuild, with all its mappings, which the tool then throws away at once). The
/// clone is the C library's `clone` wrapper (a system call on a given stack), not its `fork`:
/// the init is a copy of a multi-threaded mccbuild made without the C library's knowledge,
/// whose locks (those `fork` takes) may be held by threads it does not have.
///
/// # Safety
/// Between fork and exec: system calls only, on data on the stack.
pub(super) unsafe fn become_init(slot: *mut i32, spawner_alive: i32, tool: &ToolStart) -> i32 {
    // SAFETY: prctl(2) with integer arguments only.
    if unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) } != 0 {
        return 11;
    }
    let mut pfd = libc::pollfd {
        fd: spawner_alive,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: poll(2) on one `pollfd` on the stack; `spawner_alive` is this process's read end
    // of the pipe, closed once, here; _exit(2) ends the process without running anything of
    // the parent's copy.
    unsafe {
        if libc::poll(&mut pfd, 1, 0) > 0 && pfd.revents & libc::POLLHUP != 0 {
            libc::_exit(128 + libc::SIGKILL);
        }
        libc::close(spawner_alive);
    }
    // SAFETY: `sigset_t` and `sigaction` are plain C data, for which all zeroes is a valid
    // value (and each is filled by the C library's functions before use).
    let (mut set, mut old): (libc::sigset_t, libc::sigset_t) =
        unsafe { (std::mem::zeroed(), std::mem::zeroed()) };
    // SAFETY: the C library's signal set functions on a set on the stack.
    unsafe { libc::sigemptyset(&mut set) };
    for signal in FORWARDED.into_iter().chain([libc::SIGCHLD]) {
        // A handler, not SIG_DFL: process 1 of a PID namespace never gets a signal it has no
        // handler for. The signal stays blocked and is taken by sigwaitinfo.
        // SAFETY: as above, on a set and an action on the stack; the handler does nothing, so
        // it is async-signal-safe.
        unsafe {
            libc::sigaddset(&mut set, signal);
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = ignore_signal as extern "C" fn(libc::c_int) as usize;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
    }
    // SAFETY: sigprocmask(2) on sets on the stack.
    if unsafe { libc::sigprocmask(libc::SIG_BLOCK, &set, &mut old) } != 0 {
        return 11;
    }
    // Named before the tool starts: this process waits until the tool executed, and whoever
    // looks at the tool's parent then must see the init (the tool's process has the name
    // until it executes the tool).
    // SAFETY: prctl(2) with a static C string.
    unsafe { libc::prctl(libc::PR_SET_NAME, c"mccbuild-init".as_ptr(), 0, 0, 0) };
    let start = ToolProcess { tool, old };
    let mut stack = std::mem::MaybeUninit::<[u8; TOOL_STACK]>::uninit();
    // The top, aligned as the ABI wants (the stack grows down).
    let top = (stack.as_mut_ptr() as usize + TOOL_STACK) & !15;
    // SAFETY: the child runs `tool_process` on `stack`, in this frame, which stays while it
    // runs: CLONE_VFORK suspends this process until the child executed or exited, and
    // `start`, which the child reads, lives in this frame too.
    let pid = unsafe {
        libc::clone(
            tool_process,
            top as *mut libc::c_void,
            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
            (&start as *const ToolProcess).cast_mut().cast(),
        )
    };
    if pid < 0 {
        return 11;
    }
    // SAFETY: `pid` is the tool's process, this process's child; `slot` is the shared page
    // (this function's contract).
    unsafe { run_init(pid, &set, slot) }
}

/// The stack of the tool's process until it executes the tool (a few frames of system calls;
/// each 4 KB of it is a page fault, the frame being probed page by page).
const TOOL_STACK: usize = 16 * 1024;

/// What the tool's process needs (on the init's stack, which it shares until it executes).
struct ToolProcess<'a> {
    tool: &'a ToolStart,
    /// The signal mask the tool gets (the init's before it blocked the forwarded signals).
    old: libc::sigset_t,
}

/// The tool's process, cloned by [`become_init`]: default dispositions (exec resets handled
/// signals, but not ignored ones), the mask it had, then the tool.
extern "C" fn tool_process(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the `ToolProcess` on the init's stack, which waits (CLONE_VFORK) until
    // this process executed or exited; system calls only.
    unsafe {
        let start = &*(arg as *const ToolProcess);
        for signal in FORWARDED {
            libc::signal(signal, libc::SIG_DFL);
        }
        libc::sigprocmask(libc::SIG_SETMASK, &start.old, std::ptr::null_mut());
        (start.tool.start)(start.tool.arg)
    }
}

/// The run's init, process 1 of its PID namespace: forwards the signals of [`FORWARDED`] to the
/// tool, reaps every process that ends (orphans are re-parented to it), and when the tool ends
/// hands its wait status to mccbuild (`slot`, a page shared with it) and exits, which makes the
/// kernel kill what is left in the namespace. It keeps no file open: neither the output pipes
/// nor the spawner's.
///
/// # Safety
/// Process 1 of the run's PID namespace, between clone and exec: `tool` is its child and
/// `slot` points to the page of two `i32` shared with mccbuild.
unsafe fn run_init(tool: libc::pid_t, set: &libc::sigset_t, slot: *mut i32) -> ! {
    // SAFETY: close_range(2) with integer arguments: this process uses no descriptor from here.
    unsafe { libc::syscall(libc::SYS_close_range, 0u32, u32::MAX, 0u32) };
    loop {
        // SAFETY: sigwaitinfo(2) on a set on the caller's stack, no info wanted; kill(2) with
        // integers.
        unsafe {
            let signal = libc::sigwaitinfo(set, std::ptr::null_mut());
            if signal > 0 && signal != libc::SIGCHLD {
                libc::kill(tool, signal);
            }
        }
        loop {
            let mut status: libc::c_int = 0;
            // SAFETY: waitpid(2) with a status on the stack.
            let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
            if pid <= 0 {
                break;
            }
            if pid == tool {
                // SAFETY: `slot` points to two `i32` of the shared page (this function's
                // contract); the status is written before the flag that says it is there.
                // _exit(2) then ends the process.
                unsafe {
                    std::ptr::write_volatile(slot.add(1), status);
                    std::ptr::write_volatile(slot, 1);
                    if libc::WIFSIGNALED(status) {
                        libc::_exit(128 + libc::WTERMSIG(status));
                    }
                    libc::_exit(libc::WEXITSTATUS(status));
                }
            }
        }
    }
}
