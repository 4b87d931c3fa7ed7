//! The gate of a run that is not isolated: its process sends its pid, a thread of mccbuild moves
//! it into the run's cgroups meanwhile, then lets it go on with one byte.

use std::io::{self, Read};
use std::path::PathBuf;

/// The moves of a run's first process into its cgroups, made by a thread of mccbuild while the
/// process builds what does not depend on them (its namespaces, its view of the files): the
/// child sends its pid, the thread writes it into every `cgroup.procs` of the run, then opens
/// the gate (one byte); the child waits at the gate before it forks anything or executes the
/// tool. If a move fails the gate is closed without the byte and the child gives up.
pub(super) struct Gate {
    procs: Vec<PathBuf>,
    /// mccbuild's ends: the child's pid comes in, the go byte goes out.
    pid_in: std::os::fd::OwnedFd,
    go_out: std::os::fd::OwnedFd,
    /// The child's ends.
    pid_out: std::os::fd::OwnedFd,
    go_in: std::os::fd::OwnedFd,
}

/// The file descriptors of the gate, as the child uses them (raw: between fork and exec).
#[derive(Clone, Copy)]
pub(super) struct ChildFds {
    /// mccbuild's ends, closed in the child first (so that a thread's end of the gate is never
    /// held by the child itself).
    pub(super) pid_in: i32,
    pub(super) go_out: i32,
    pub(super) pid_out: i32,
    pub(super) go_in: i32,
}

/// The thread moving the child.
pub(super) struct Mover {
    thread: std::thread::JoinHandle<io::Result<()>>,
    /// Kept open until `spawn` returned: then dropped, so that the thread sees the end of the
    /// pipe if the child died before sending its pid.
    pid_out: std::os::fd::OwnedFd,
    go_in: std::os::fd::OwnedFd,
}

impl Gate {
    pub(super) fn new(procs: Vec<PathBuf>) -> io::Result<Gate> {
        let (pid_in, pid_out) = pipe()?;
        let (go_in, go_out) = pipe()?;
        Ok(Gate {
            procs,
            pid_in,
            go_out,
            pid_out,
            go_in,
        })
    }

    pub(super) fn child_fds(&self) -> ChildFds {
        use std::os::fd::AsRawFd;
        ChildFds {
            pid_in: self.pid_in.as_raw_fd(),
            go_out: self.go_out.as_raw_fd(),
            pid_out: self.pid_out.as_raw_fd(),
            go_in: self.go_in.as_raw_fd(),
        }
    }

    /// Starts the thread; call right before `spawn`.
    pub(super) fn start(self) -> Mover {
        let Gate {
            procs,
            pid_in,
            go_out,
            pid_out,
            go_in,
        } = self;
        let thread = std::thread::spawn(move || {
            use std::io::Write;
            let mut pid = [0u8; 4];
            std::fs::File::from(pid_in)
                .read_exact(&mut pid)
                .map_err(|e| io::Error::other(format!("the run's process did not start: {e}")))?;
            crate::cgroup::move_into(i32::from_ne_bytes(pid), &procs)?;
            std::fs::File::from(go_out).write_all(&[1])
        });
        Mover {
            thread,
            pid_out,
            go_in,
        }
    }
}

impl Mover {
    /// After `spawn` returned: whether the moves succeeded.
    pub(super) fn finish(self) -> io::Result<()> {
        drop(self.pid_out);
        drop(self.go_in);
        self.thread
            .join()
            .map_err(|_| io::Error::other("the thread moving the run into its cgroups panicked"))?
    }
}

fn pipe() -> io::Result<(std::os::fd::OwnedFd, std::os::fd::OwnedFd)> {
    use std::os::fd::FromRawFd;
    let mut fds = [-1i32; 2];
    // SAFETY: pipe2 fills two fds on success; each is then owned once.
    unsafe {
        if libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok((
            std::os::fd::OwnedFd::from_raw_fd(fds[0]),
            std::os::fd::OwnedFd::from_raw_fd(fds[1]),
        ))
    }
}

/// In the child: sends its pid through the gate (and closes mccbuild's ends).
///
/// # Safety
/// Between fork and exec: system calls only.
pub(super) unsafe fn send_pid(fds: ChildFds) -> io::Result<()> {
    // SAFETY: close(2) of the child's copies of mccbuild's ends, and of its own end once
    // written; write(2) of the pid's bytes, on the stack, with their length.
    let written = unsafe {
        libc::close(fds.pid_in);
        libc::close(fds.go_out);
        let pid = libc::getpid().to_ne_bytes();
        let written = libc::write(fds.pid_out, pid.as_ptr().cast(), pid.len());
        libc::close(fds.pid_out);
        written
    };
    if written != std::mem::size_of::<libc::pid_t>() as isize {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// In the child: waits until mccbuild moved it into its cgroups (`fd`: the gate; -1: no gate).
/// An error if the moves failed (mccbuild's thread closed the gate without the go byte).
///
/// # Safety
/// Between fork and exec: system calls only.
pub(super) unsafe fn wait_at_gate(fd: i32) -> io::Result<()> {
    if fd < 0 {
        return Ok(());
    }
    let mut byte = 0u8;
    // SAFETY: read(2) of one byte into `byte`, on the stack; errno is this thread's; the
    // gate's end is the child's own, closed once, here.
    let n = unsafe {
        let n = loop {
            let n = libc::read(fd, (&mut byte as *mut u8).cast(), 1);
            if n >= 0 || *libc::__errno_location() != libc::EINTR {
                break n;
            }
        };
        libc::close(fd);
        n
    };
    if n == 1 && byte == 1 {
        Ok(())
    } else {
        Err(io::Error::from_raw_os_error(libc::ECANCELED))
    }
}
