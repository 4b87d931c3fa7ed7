//! The run's network and IPC namespaces, made beforehand by a bare thread of mccbuild while
//! the run's process builds its view, and handed to it at its gate; and bringing a new network
//! namespace's loopback interface up.

use std::ffi::CStr;
use std::io;

/// A fresh network namespace (its loopback up) and a fresh IPC namespace, made by a thread of
/// mccbuild while a run is being prepared and its process builds its view, handed to the process
/// at its gate to enter (`setns`) instead of making them itself: a network namespace costs
/// ~0.5 ms of the kernel's time (every protocol's state for it), which then overlaps with the
/// rest.
pub struct Namespaces {
    net: std::os::fd::OwnedFd,
    ipc: std::os::fd::OwnedFd,
}

impl Namespaces {
    /// Starts making them on a thread of its own (which leaves them when it ends). A bare
    /// POSIX thread, not the standard library's: the start of one of those (its stack-overflow
    /// handler, its thread-local destructors, whose list makes it a malloc arena of its own: a
    /// 64 MB reservation, trimmed) took 0.1-0.2 ms before the first system call here, time
    /// the run's start may wait for.
    pub fn prepare() -> PendingNamespaces {
        let slot = Box::into_raw(Box::new(Made {
            net: -1,
            ipc: -1,
            errno: 0,
        }));
        // SAFETY: a thread attribute initialised and destroyed here; the thread gets `slot`,
        // which lives until it was joined (`PendingNamespaces`), and only makes system calls.
        let thread = unsafe {
            let mut attr: libc::pthread_attr_t = std::mem::zeroed();
            libc::pthread_attr_init(&mut attr);
            libc::pthread_attr_setstacksize(&mut attr, 64 * 1024);
            let mut thread: libc::pthread_t = 0;
            let created = libc::pthread_create(&mut thread, &attr, make_namespaces, slot.cast());
            libc::pthread_attr_destroy(&mut attr);
            if created != 0 {
                (*slot).errno = created;
            }
            (created == 0).then_some(thread)
        };
        PendingNamespaces { thread, slot }
    }
}

/// What the thread of [`Namespaces::prepare`] made: the namespaces' descriptors, or an errno.
struct Made {
    net: i32,
    ipc: i32,
    errno: i32,
}

/// The thread of [`Namespaces::prepare`]: system calls only, nothing allocated (an allocation
/// would make this thread a malloc arena, see there); `arg` is its [`Made`].
extern "C" fn make_namespaces(arg: *mut libc::c_void) -> *mut libc::c_void {
    let made = arg.cast::<Made>();
    // SAFETY: system calls on this thread only (namespaces are per thread); `made` is this
    // thread's until it is joined.
    unsafe {
        let fail = || *libc::__errno_location();
        let open = |path: &CStr| libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
        if libc::unshare(libc::CLONE_NEWNET | libc::CLONE_NEWIPC) != 0 {
            (*made).errno = fail();
        } else if let Err(e) = loopback_up() {
            (*made).errno = e.raw_os_error().unwrap_or(libc::EIO);
        } else {
            let net = open(c"/proc/thread-self/ns/net");
            let ipc = if net >= 0 {
                open(c"/proc/thread-self/ns/ipc")
            } else {
                -1
            };
            if ipc < 0 {
                (*made).errno = fail();
                if net >= 0 {
                    libc::close(net);
                }
            } else {
                (*made).net = net;
                (*made).ipc = ipc;
            }
        }
    }
    std::ptr::null_mut()
}

/// Network and IPC namespaces being made on a thread ([`Namespaces::prepare`]); dropped
/// without [`PendingNamespaces::join`], the thread is waited for and what it made closed.
pub struct PendingNamespaces {
    /// None once joined (or if it could not be started).
    thread: Option<libc::pthread_t>,
    slot: *mut Made,
}

// SAFETY: the slot is written by the thread only before it ends, read after it was joined.
unsafe impl Send for PendingNamespaces {}

impl PendingNamespaces {
    /// Waits for the thread: the namespaces, or why they could not be made.
    pub fn join(mut self) -> io::Result<Namespaces> {
        use std::os::fd::FromRawFd;
        self.wait();
        // SAFETY: the thread ended; the slot is ours, and its descriptors are taken once.
        unsafe {
            let made = &mut *self.slot;
            if made.errno != 0 {
                return Err(io::Error::from_raw_os_error(made.errno));
            }
            let namespaces = Namespaces {
                net: std::os::fd::OwnedFd::from_raw_fd(made.net),
                ipc: std::os::fd::OwnedFd::from_raw_fd(made.ipc),
            };
            (made.net, made.ipc) = (-1, -1);
            Ok(namespaces)
        }
    }

    fn wait(&mut self) {
        if let Some(thread) = self.thread.take() {
            // SAFETY: joining the thread we started, once.
            unsafe { libc::pthread_join(thread, std::ptr::null_mut()) };
        }
    }
}

impl Drop for PendingNamespaces {
    fn drop(&mut self) {
        self.wait();
        // SAFETY: the thread ended; the slot was made by `Box::into_raw` in `prepare`.
        unsafe {
            let made = Box::from_raw(self.slot);
            for fd in [made.net, made.ipc] {
                if fd >= 0 {
                    libc::close(fd);
                }
            }
        }
    }
}

impl Namespaces {
    /// The namespaces' file descriptors: network, IPC.
    pub(crate) fn fds(&self) -> [i32; 2] {
        use std::os::fd::AsRawFd;
        [self.net.as_raw_fd(), self.ipc.as_raw_fd()]
    }
}

/// `ip link set lo up`, with an ioctl.
///
/// # Safety
/// System calls only, on data on the stack: callable between clone and exec, and on the bare
/// thread of [`Namespaces::prepare`].
pub(super) unsafe fn loopback_up() -> io::Result<()> {
    let name = b"lo";
    // SAFETY: socket(2) takes integers only.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `ifreq` is plain C data, for which all zeroes is a valid value.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    for (i, b) in name.iter().enumerate() {
        req.ifr_name[i] = *b as libc::c_char;
    }
    // SAFETY: the two ioctls take an `ifreq` (on the stack, its name set); the flags are the
    // union's field SIOCGIFFLAGS filled; `fd` is the socket made above, closed once.
    unsafe {
        let mut ok = libc::ioctl(fd, libc::SIOCGIFFLAGS, &mut req) == 0;
        if ok {
            req.ifr_ifru.ifru_flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
            ok = libc::ioctl(fd, libc::SIOCSIFFLAGS, &req) == 0;
        }
        let err = io::Error::last_os_error();
        libc::close(fd);
        if ok { Ok(()) } else { Err(err) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The namespaces made on a bare thread are new ones (not this process's), and neither a
    /// joined nor a dropped `PendingNamespaces` leaves a descriptor open.
    #[test]
    fn namespaces_made_beforehand_are_new_and_leave_nothing_open() {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            mccbuild_testkit::skip("new network namespaces need root");
            return;
        }
        use std::os::unix::fs::MetadataExt;
        // Descriptors of namespaces this process holds (no other test of this crate makes any).
        let held = || {
            std::fs::read_dir("/proc/self/fd")
                .unwrap()
                .flatten()
                .filter_map(|e| std::fs::read_link(e.path()).ok())
                .filter(|l| l.to_string_lossy().starts_with("net:["))
                .count()
        };
        let own = std::fs::metadata("/proc/self/ns/net").unwrap().ino();
        let made = Namespaces::prepare().join().unwrap();
        let [net, _] = made.fds();
        let theirs = std::fs::metadata(format!("/proc/self/fd/{net}"))
            .unwrap()
            .ino();
        assert_ne!(own, theirs, "a network namespace of its own");
        assert_eq!(held(), 1);
        drop(made);
        drop(Namespaces::prepare());
        assert_eq!(held(), 0, "no descriptor left open");
    }
}
