//! Applying a prepared plan in the run's first process, between clone and exec: building the
//! run's view of the files, entering its network and IPC namespaces, mounting its /proc and
//! giving up every capability. Nothing here allocates, formats or takes a lock: only
//! async-signal-safe system calls on data prepared before the clone.

use std::ffi::CStr;
use std::io;

use super::host_mounts::{AT_RECURSIVE, MOUNT_ATTR_RDONLY, MountAttr};
use super::init::{ToolStart, become_init};
use super::namespaces::loopback_up;
use super::plan::Cover;
use super::prepared::{Prepared, Step};

/// The devices of the fresh /dev: (name, major, minor).
const DEVICES: [(&CStr, u32, u32); 6] = [
    (c"/dev/null", 1, 3),
    (c"/dev/zero", 1, 5),
    (c"/dev/full", 1, 7),
    (c"/dev/random", 1, 8),
    (c"/dev/urandom", 1, 9),
    (c"/dev/tty", 5, 0),
];

/// The links of the fresh /dev: (target, name).
const DEV_LINKS: [(&CStr, &CStr); 4] = [
    (c"/proc/self/fd", c"/dev/fd"),
    (c"/proc/self/fd/0", c"/dev/stdin"),
    (c"/proc/self/fd/1", c"/dev/stdout"),
    (c"/proc/self/fd/2", c"/dev/stderr"),
];

/// Data options of the covers.
const TMP_OPTIONS: &CStr = c"mode=1777";
const EMPTY_OPTIONS: &CStr = c"mode=0755,size=1m";

/// `SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
/// SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED` (linux/securebits.h): executing a
/// program as user 0 grants no capability, and this cannot be undone.
const SECUREBITS: libc::c_ulong = 0b10_1111;

impl Prepared {
    /// In the run's first process, cloned by [`crate::spawn`] into new PID and mount namespaces,
    /// whose process 1 it is: builds the run's view, waits at `gate` (until mccbuild set the
    /// run's limits and pinned it, see `spawn`), enters the network and IPC namespaces mccbuild
    /// handed over there (or makes its own, loopback up), then mounts the run's /proc, changes
    /// to the working directory, gives up every capability and starts the tool's process
    /// (`tool`, see [`ToolStart`]); the first process stays as the run's init (see the module's
    /// documentation) and never returns. The mounts are built before the gate, so that they
    /// overlap with what mccbuild does meanwhile and with the making of the namespaces; nothing
    /// is forked and nothing executed before it. `spawner_alive` is a pipe whose write end only
    /// the spawner holds until the tool executed (see [`become_init`]). Returns only on a
    /// failure, before the tool's process was started.
    ///
    /// # Safety
    /// Only async-signal-safe system calls on data prepared before the clone; no allocation.
    pub(crate) unsafe fn enter(
        &self,
        gate: i32,
        spawner_alive: i32,
        slot: *mut i32,
        tool: &ToolStart,
    ) -> io::Error {
        // SAFETY: this function's contract, which `enter_and_start` shares.
        match unsafe { self.enter_and_start(gate, spawner_alive, slot, tool) } {
            Err(e) => e,
        }
    }

    /// See [`Prepared::enter`].
    ///
    /// # Safety
    /// As [`Prepared::enter`].
    unsafe fn enter_and_start(
        &self,
        gate: i32,
        spawner_alive: i32,
        slot: *mut i32,
        tool: &ToolStart,
    ) -> io::Result<std::convert::Infallible> {
        let fail = |what: i32| -> io::Error {
            // Keep the errno; the step number goes in the high bits for the parent's message.
            // (An `io::Error` of a raw errno is a tagged integer: nothing is allocated.)
            let errno = io::Error::last_os_error().raw_os_error().unwrap_or(0);
            io::Error::from_raw_os_error(errno | (what << 16))
        };
        // SAFETY: mount(2) on static C strings, with null pointers where it takes none; this
        // process has a mount namespace of its own (CLONE_NEWNS).
        let private = unsafe {
            libc::mount(
                std::ptr::null(),
                c"/".as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            )
        };
        if private != 0 {
            return Err(fail(2));
        }
        for step in &self.steps {
            // SAFETY: in the run's first process, between clone and exec (this function's
            // contract); the step's C strings were made before the clone and live in `self`.
            if let Err(code) = unsafe { apply_step(step) } {
                return Err(fail(code));
            }
        }
        // SAFETY: between clone and exec, as `receive_gate` requires; `gate` is this process's
        // end of the socket pair, open until `receive_gate` closes it.
        let handed = unsafe { crate::spawn::receive_gate(gate) }.map_err(|e| {
            io::Error::from_raw_os_error(e.raw_os_error().unwrap_or(0) | (12 << 16))
        })?;
        match handed {
            Some([net, ipc]) => {
                // SAFETY: `net` and `ipc` are the namespace descriptors received with the gate's
                // byte (SCM_RIGHTS), this process's own; each is closed once, here.
                let entered = unsafe {
                    libc::setns(net, libc::CLONE_NEWNET) == 0
                        && libc::setns(ipc, libc::CLONE_NEWIPC) == 0
                };
                if !entered {
                    return Err(fail(1));
                }
                // SAFETY: as above.
                unsafe {
                    libc::close(net);
                    libc::close(ipc);
                }
            }
            None => {
                // SAFETY: unshare(2) takes no pointer; the process is single-threaded.
                if unsafe { libc::unshare(libc::CLONE_NEWNET | libc::CLONE_NEWIPC) } != 0 {
                    return Err(fail(1));
                }
                // SAFETY: system calls only, on the stack (see `loopback_up`).
                unsafe { loopback_up() }.map_err(|_| fail(3))?;
            }
        }
        // Process 1 of the run's PID namespace: the run's own processes only; read-only, so
        // /proc/sys cannot be written either.
        // SAFETY: mount(2) on static C strings, in the run's own mount namespace.
        let proc = unsafe {
            libc::mount(
                c"proc".as_ptr(),
                c"/proc".as_ptr(),
                c"proc".as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC | libc::MS_RDONLY,
                std::ptr::null(),
            )
        };
        if proc != 0 {
            return Err(fail(10));
        }
        // SAFETY: `cwd` is a C string made before the clone, alive in `self`.
        if unsafe { libc::chdir(self.cwd.as_ptr()) } != 0 {
            return Err(fail(8));
        }
        // SAFETY: between clone and exec, single-threaded, as `drop_capabilities` requires.
        unsafe { drop_capabilities(self.user) }.map_err(|_| fail(9))?;
        // SAFETY: between clone and exec (this function's contract): `slot` is the page shared
        // with mccbuild, `spawner_alive` the pipe's read end and `tool` lives on the spawner's
        // stack, which stays while this process runs (it never returns from there).
        Err(fail(unsafe { become_init(slot, spawner_alive, tool) }))
    }
}

/// One step of building a run's view of the files (see [`Prepared::enter`]); on failure, the
/// step's number (errno is left as the failing call set it).
///
/// # Safety
/// Only async-signal-safe system calls on data prepared before the fork; no allocation.
unsafe fn apply_step(step: &Step) -> Result<(), i32> {
    match step {
        Step::ReadOnlyTree => {
            let attr = MountAttr {
                attr_set: MOUNT_ATTR_RDONLY,
                attr_clr: 0,
                propagation: 0,
                userns_fd: 0,
            };
            // All or nothing: a failure fails the run (a mount left writable is not an option).
            // SAFETY: mount_setattr(2) on a static C string and a `struct mount_attr` on the
            // stack, whose size is passed with it.
            let set = unsafe {
                libc::syscall(
                    libc::SYS_mount_setattr,
                    libc::AT_FDCWD,
                    c"/".as_ptr(),
                    AT_RECURSIVE,
                    &attr as *const MountAttr,
                    std::mem::size_of::<MountAttr>(),
                )
            };
            if set != 0 {
                return Err(14);
            }
        }
        Step::ReadOnly { point, flags } => {
            // A mount the kernel refuses to change (rare) stays as it is: without
            // capabilities the run still cannot write what is not its own.
            // SAFETY: mount(2) on a C string of the step, null pointers where it takes none.
            unsafe {
                libc::mount(
                    std::ptr::null(),
                    point.as_ptr(),
                    std::ptr::null(),
                    libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | flags,
                    std::ptr::null(),
                )
            };
        }
        Step::Open { path, slot } => {
            // SAFETY: open(2) on a C string of the step; dup2 and close on the descriptor it
            // returned (and the step's slot, which nothing else uses).
            unsafe {
                let fd = libc::open(path.as_ptr(), libc::O_PATH | libc::O_DIRECTORY);
                if fd < 0 || libc::dup2(fd, *slot) < 0 {
                    return Err(4);
                }
                libc::close(fd);
            }
        }
        Step::Cover { path, kind } => {
            let options = match kind {
                Cover::PrivateTmp => TMP_OPTIONS,
                Cover::Empty | Cover::Dev => EMPTY_OPTIONS,
            };
            let nodev = if *kind == Cover::Dev {
                0
            } else {
                libc::MS_NODEV
            };
            // SAFETY: mount(2) on C strings of the step and static ones.
            let mounted = unsafe {
                libc::mount(
                    c"tmpfs".as_ptr(),
                    path.as_ptr(),
                    c"tmpfs".as_ptr(),
                    libc::MS_NOSUID | nodev,
                    options.as_ptr().cast(),
                )
            };
            if mounted != 0 {
                return Err(5);
            }
            if *kind == Cover::Dev {
                for (name, major, minor) in DEVICES {
                    // SAFETY: mknod(2) and chmod(2) on static C strings.
                    let made = unsafe {
                        libc::mknod(
                            name.as_ptr(),
                            libc::S_IFCHR | 0o666,
                            libc::makedev(major, minor),
                        ) == 0
                            && libc::chmod(name.as_ptr(), 0o666) == 0
                    };
                    if !made {
                        return Err(5);
                    }
                }
                for (target, name) in DEV_LINKS {
                    // SAFETY: symlink(2) on static C strings.
                    unsafe { libc::symlink(target.as_ptr(), name.as_ptr()) };
                }
            }
        }
        Step::Mkdir { path } => {
            // Exists already, or is made in a cover; a real failure shows at the mount.
            // SAFETY: mkdir(2) on a C string of the step.
            unsafe { libc::mkdir(path.as_ptr(), 0o755) };
        }
        Step::Bind {
            source,
            path,
            writable,
            writable_below,
            slot,
        } => {
            let ro = if *writable { 0 } else { libc::MS_RDONLY };
            let below = MountAttr {
                attr_set: 0,
                attr_clr: MOUNT_ATTR_RDONLY,
                propagation: 0,
                userns_fd: 0,
            };
            // SAFETY: mount(2) and mount_setattr(2) on C strings of the step, null pointers
            // where they take none, and a `struct mount_attr` on the stack with its size; then
            // close(2) of the step's own slot, opened by its `Open` step.
            unsafe {
                if libc::mount(
                    source.as_ptr(),
                    path.as_ptr(),
                    std::ptr::null(),
                    libc::MS_BIND | libc::MS_REC,
                    std::ptr::null(),
                ) != 0
                    || libc::mount(
                        std::ptr::null(),
                        path.as_ptr(),
                        std::ptr::null(),
                        libc::MS_REMOUNT | libc::MS_BIND | libc::MS_NOSUID | libc::MS_NODEV | ro,
                        std::ptr::null(),
                    ) != 0
                    || (*writable_below
                        && libc::syscall(
                            libc::SYS_mount_setattr,
                            libc::AT_FDCWD,
                            path.as_ptr(),
                            AT_RECURSIVE,
                            &below as *const MountAttr,
                            std::mem::size_of::<MountAttr>(),
                        ) != 0)
                {
                    return Err(6);
                }
                libc::close(*slot);
            }
        }
        Step::Seal { path } => {
            // SAFETY: mount(2) on a C string of the step, null pointers where it takes none.
            let sealed = unsafe {
                libc::mount(
                    std::ptr::null(),
                    path.as_ptr(),
                    std::ptr::null(),
                    libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | libc::MS_NOSUID,
                    std::ptr::null(),
                )
            };
            if sealed != 0 {
                return Err(7);
            }
        }
    }
    Ok(())
}

/// Empties the bounding set and the capabilities, locks `SECBIT_NOROOT`, becomes `user` (uid,
/// gid) if given, and sets `no_new_privs`: from here on, no program this process executes gets
/// a capability.
///
/// # Safety
/// Between clone and exec, in a process of one thread: system calls only.
unsafe fn drop_capabilities(user: Option<(u32, u32)>) -> io::Result<()> {
    for cap in 0..64 {
        // EINVAL past the kernel's last capability: all are dropped then.
        // SAFETY: prctl(2) with integer arguments only; errno is this thread's.
        let past_the_last = unsafe {
            libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) != 0
                && *libc::__errno_location() == libc::EINVAL
        };
        if past_the_last {
            break;
        }
    }
    // SAFETY: prctl(2) with integer arguments only.
    let secured = unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        );
        libc::prctl(libc::PR_SET_SECUREBITS, SECUREBITS, 0, 0, 0)
    };
    if secured != 0 {
        return Err(io::Error::last_os_error());
    }
    // CAP_SETUID and CAP_SETGID are still effective (only the bounding set was emptied).
    if let Some((uid, gid)) = user {
        // SAFETY: between clone and exec, one thread (this function's contract).
        unsafe { become_user(uid, gid) }?;
    }
    #[repr(C)]
    struct Header {
        version: u32,
        pid: i32,
    }
    #[repr(C)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    let header = Header {
        version: 0x2008_0522, // _LINUX_CAPABILITY_VERSION_3
        pid: 0,
    };
    let data = [
        Data {
            effective: 0,
            permitted: 0,
            inheritable: 0,
        },
        Data {
            effective: 0,
            permitted: 0,
            inheritable: 0,
        },
    ];
    // SAFETY: capset(2) with a header of version 3 and the two data structs that version
    // reads, both on the stack; prctl(2) with integer arguments.
    let dropped = unsafe {
        libc::syscall(libc::SYS_capset, &header, data.as_ptr()) == 0
            && libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0
    };
    if !dropped {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Becomes user `uid` with group `gid` as its only group (real, effective and saved ids).
///
/// Raw system calls, not the C library's wrappers: those change the ids of every thread the C
/// library believes the process has, by signalling each and waiting for it, and a run's first
/// process (`spawn`) is a copy of a multi-threaded mccbuild made without the C library's
/// knowledge, where they would wait forever. The process has one thread: the calls act on all of
/// it.
///
/// # Safety
/// Between fork and exec: system calls only.
pub unsafe fn become_user(uid: u32, gid: u32) -> io::Result<()> {
    let groups = [gid];
    // SAFETY: setgroups(2) with a list of one group on the stack, and its length; the other
    // calls take integers only.
    let became = unsafe {
        libc::syscall(libc::SYS_setgroups, 1usize, groups.as_ptr()) == 0
            && libc::syscall(libc::SYS_setresgid, gid, gid, gid) == 0
            && libc::syscall(libc::SYS_setresuid, uid, uid, uid) == 0
    };
    if !became {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
