//! Isolation of a run from the host, the store, the project and the other runs.
//!
//! With root, each run's first process is cloned into fresh mount and PID namespaces (`spawn`): it
//! is process 1 of the new PID namespace. It builds the view below (the mount namespace is its
//! own) and, once it is in the run's cgroups, enters fresh network and IPC namespaces (made by a
//! thread meanwhile, see [`Namespaces`]), mounts the run's /proc, then forks the tool and stays as
//! the run's minimal init ([`run_init`]: forwards signals, reaps, hands over the tool's status),
//! so that the tool's signals to itself work as on a plain Linux. In the namespace:
//! - every mount of the host is read-only; `/tmp`, `/var/tmp` and `/dev/shm` are fresh private
//!   tmpfs; `/dev` is a fresh tmpfs with only null, zero, full, random, urandom and tty; `/proc`
//!   is a fresh read-only proc of the new PID namespace (other runs' processes, and mccbuild,
//!   are neither visible nor reachable by signals);
//! - the project, the store, the instance's source folder and the folder of the runs' working
//!   directories are covered by empty read-only tmpfs; only the run's own folder (writable), the
//!   tool's folder and its setup products (read-only) are bound back at their usual paths;
//! - the network namespace has only a loopback interface, which is up;
//! - the process then gives up every capability (bounding set emptied, `SECBIT_NOROOT` locked,
//!   `no_new_privs`): it stays user 0, so it reads what root's tools were installed with (a
//!   Python in /root, say), but it can undo none of the above, open no device of the host, and
//!   write nothing of the host's.
//!
//! The plan ([`IsolationPlan::new`]) is a pure function of paths and the mount table, made in
//! the parent. [`Prepared`] turns it into C strings so that [`Prepared::enter`] can run between
//! clone and exec, where nothing may allocate.

use std::ffi::{CStr, CString};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Folders every run gets fresh and private (tmpfs, world-writable with the sticky bit).
pub const PRIVATE_TMP: [&str; 3] = ["/tmp", "/var/tmp", "/dev/shm"];

/// A mount of the host: where, and the flags to keep when it is made read-only.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostMount {
    pub point: PathBuf,
    pub flags: u64,
}

/// Reads `/proc/self/mountinfo` into mount points and their per-mount flags.
pub fn host_mounts(mountinfo: &str) -> Vec<HostMount> {
    let mut mounts = Vec::new();
    for line in mountinfo.lines() {
        let fields: Vec<&str> = line.split(' ').collect();
        if fields.len() < 6 {
            continue;
        }
        let mut flags = 0u64;
        for option in fields[5].split(',') {
            flags |= match option {
                "nosuid" => libc::MS_NOSUID,
                "nodev" => libc::MS_NODEV,
                "noexec" => libc::MS_NOEXEC,
                "noatime" => libc::MS_NOATIME,
                "nodiratime" => libc::MS_NODIRATIME,
                "relatime" => libc::MS_RELATIME,
                _ => 0,
            };
        }
        mounts.push(HostMount {
            point: PathBuf::from(unescape_mountinfo(fields[4])),
            flags,
        });
    }
    mounts
}

/// How a run's view makes the host's mounts read-only.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HostMounts {
    /// All at once (`mount_setattr(2)` on `/` with `AT_RECURSIVE`, Linux 5.12 and later): every
    /// mount the run's mount namespace has, including one that appeared after the run was
    /// planned, in one system call; each keeps its other flags (nosuid, nodev, noexec...).
    Tree,
    /// One by one (a remount each, keeping its flags): the mounts of `/proc/self/mountinfo`
    /// read when the run was planned, where the kernel has no `mount_setattr`.
    Each(Vec<HostMount>),
}

impl HostMounts {
    /// How this kernel allows: [`HostMounts::Tree`] where it has `mount_setattr` (asked once
    /// per process), else the mount table read now.
    pub fn of_this_host() -> io::Result<HostMounts> {
        static TREE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        // SAFETY: a system call with invalid arguments on purpose: it fails with EBADF or
        // EINVAL where the kernel has it, ENOSYS where it does not.
        let tree = *TREE.get_or_init(|| unsafe {
            libc::syscall(
                libc::SYS_mount_setattr,
                -1,
                std::ptr::null::<libc::c_char>(),
                0,
                std::ptr::null::<MountAttr>(),
                0usize,
            ) == 0
                || *libc::__errno_location() != libc::ENOSYS
        });
        if tree {
            return Ok(HostMounts::Tree);
        }
        let mountinfo = crate::read_text("/proc/self/mountinfo")?;
        Ok(HostMounts::Each(host_mounts(&mountinfo)))
    }
}

/// `struct mount_attr` of linux/mount.h.
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

/// linux/mount.h and linux/fcntl.h.
const MOUNT_ATTR_RDONLY: u64 = 0x1;
const AT_RECURSIVE: libc::c_int = 0x8000;

/// mountinfo escapes space, tab, newline and backslash as octal (`\040`).
fn unescape_mountinfo(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' && i + 3 < bytes.len() {
            if let Ok(v) = u8::from_str_radix(&s[i + 1..i + 4], 8) {
                out.push(v);
                i += 4;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// How a folder is covered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cover {
    /// A fresh writable tmpfs for the run alone (mode 1777).
    PrivateTmp,
    /// An empty read-only folder: what was there is invisible.
    Empty,
    /// `/dev` with only null, zero, full, random, urandom and tty.
    Dev,
}

/// What one run sees of the file system.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IsolationPlan {
    /// How the host's mounts are made read-only (one by one: all but /proc and /dev and what is
    /// under them, which are replaced; the whole tree: those too, before they are replaced).
    pub read_only: HostMounts,
    /// Folders covered by a fresh tmpfs.
    pub cover: Vec<(PathBuf, Cover)>,
    /// Folders bound back at their own path over what is covered: (path, writable).
    pub expose: Vec<(PathBuf, bool)>,
    /// Folders made fresh and empty in the run's private /tmp (the request's `fresh`), parents
    /// first.
    pub fresh: Vec<PathBuf>,
}

/// What a run needs, for [`IsolationPlan::new`].
pub struct IsolationRequest<'a> {
    /// The run's own folder (working directory, HOME, TMPDIR, results): writable.
    pub run_dir: &'a Path,
    /// The tool's folder and its setup products: read-only.
    pub read_only: Vec<&'a Path>,
    /// Folders whose content the run must not see (project, store, instance sources, other runs).
    pub hidden: Vec<&'a Path>,
    /// Folders made fresh in the run's private /tmp instead of being bound from the host, for a
    /// run that needs nothing of its folder from the host and leaves nothing there (`mccbuild
    /// sandbox`): its folder and what is in it. Each must be inside a private /tmp
    /// ([`in_private_tmp`]). When the run's folder is one of them it is not bound.
    pub fresh: Vec<&'a Path>,
}

/// Whether `path` lies in a folder every isolated run gets fresh and private ([`PRIVATE_TMP`]),
/// so that a run can have it made there instead of on the host (`exists`: the host's folders).
pub fn in_private_tmp(path: &Path, exists: impl Fn(&Path) -> bool) -> bool {
    PRIVATE_TMP
        .iter()
        .map(Path::new)
        .any(|tmp| path != tmp && path.starts_with(tmp) && (tmp.starts_with("/dev") || exists(tmp)))
}

impl IsolationPlan {
    /// Plans a run's view (`exists` tells which folders there are to cover).
    pub fn new(
        request: &IsolationRequest,
        host: &HostMounts,
        exists: impl Fn(&Path) -> bool,
    ) -> IsolationPlan {
        let under = |p: &Path, top: &str| p.starts_with(top);
        let read_only = match host {
            HostMounts::Tree => HostMounts::Tree,
            HostMounts::Each(mounts) => HostMounts::Each(
                mounts
                    .iter()
                    .filter(|m| !under(&m.point, "/proc") && !under(&m.point, "/dev"))
                    .cloned()
                    .collect(),
            ),
        };

        let fresh: Vec<PathBuf> = request.fresh.iter().map(|p| p.to_path_buf()).collect();
        let mut expose: Vec<(PathBuf, bool)> = Vec::new();
        if !fresh.iter().any(|f| f == request.run_dir) {
            expose.push((request.run_dir.to_path_buf(), true));
        }
        for p in &request.read_only {
            if !expose.iter().any(|(e, _)| e == p) {
                expose.push((p.to_path_buf(), false));
            }
        }

        let mut cover: Vec<(PathBuf, Cover)> = vec![(PathBuf::from("/dev"), Cover::Dev)];
        for tmp in PRIVATE_TMP.iter().map(Path::new) {
            // /dev/shm is made in the fresh /dev; the others only where the host has them.
            if tmp.starts_with("/dev") || exists(tmp) {
                cover.push((tmp.to_path_buf(), Cover::PrivateTmp));
            }
        }
        for hidden in &request.hidden {
            let hidden = *hidden;
            if hidden != Path::new("/") && exists(hidden) && !cover.iter().any(|(c, _)| c == hidden)
            {
                cover.push((hidden.to_path_buf(), Cover::Empty));
            }
        }
        // Covering inside a cover is pointless unless an exposed folder lies in between.
        let inside = |p: &Path, q: &Path| p != q && p.starts_with(q);
        let covers = cover.clone();
        cover.retain(|(c, kind)| {
            *kind != Cover::Empty
                || !covers.iter().any(|(outer, _)| {
                    inside(c, outer)
                        && !expose
                            .iter()
                            .any(|(e, _)| (inside(e, outer) || e == outer) && c.starts_with(e))
                })
        });
        // An exposed folder inside another exposed folder of the same mode is already there.
        let exposed = expose.clone();
        expose.retain(|(e, w)| !exposed.iter().any(|(o, ow)| ow == w && inside(e, o)));
        IsolationPlan {
            read_only,
            cover,
            expose,
            fresh,
        }
    }
}

fn depth(p: &Path) -> usize {
    p.components().count()
}

fn cstring(p: &Path) -> io::Result<CString> {
    CString::new(p.as_os_str().as_bytes())
        .map_err(|_| io::Error::other(format!("path {} holds a NUL byte", p.display())))
}

/// One step of [`Prepared::enter`], in order.
enum Step {
    /// Make every mount of the run's namespace read-only, in one system call.
    ReadOnlyTree,
    /// Remount a host mount read-only, keeping its flags.
    ReadOnly { point: CString, flags: u64 },
    /// Open a folder to bind back later (before anything covers it) as fd `slot`.
    Open { path: CString, slot: i32 },
    /// Mount a fresh tmpfs.
    Cover { path: CString, kind: Cover },
    /// Create a mount point inside a cover (parents come first).
    Mkdir { path: CString },
    /// Bind fd `slot` (as `/proc/self/fd/<slot>`) at `path`, with what is mounted below it.
    Bind {
        source: CString,
        path: CString,
        writable: bool,
        /// Writable below too: the host was made read-only as a whole tree, the run's own
        /// mounts in its folder (its BK_BIN_PATH overlay) with it.
        writable_below: bool,
        slot: i32,
    },
    /// Make a cover read-only once its mount points are made.
    Seal { path: CString },
}

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

/// An [`IsolationPlan`] ready to apply between fork and exec.
pub struct Prepared {
    steps: Vec<Step>,
    cwd: CString,
    /// The user (uid, gid) the tool runs as; None: user 0 without capabilities.
    user: Option<(u32, u32)>,
    /// Network and IPC namespaces being made beforehand ([`Namespaces::prepare`]), handed to
    /// the run's first process at its gate (see `spawn`); None, or if making them failed: the
    /// process makes its own.
    namespaces: Option<PendingNamespaces>,
}

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

/// File descriptors used for the folders to bind back (high, so they clash with nothing).
const FIRST_SLOT: i32 = 900;

/// Data options of the covers.
const TMP_OPTIONS: &CStr = c"mode=1777";
const EMPTY_OPTIONS: &CStr = c"mode=0755,size=1m";

/// `SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
/// SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED` (linux/securebits.h): executing a
/// program as user 0 grants no capability, and this cannot be undone.
const SECUREBITS: libc::c_ulong = 0b10_1111;

impl Prepared {
    pub fn new(plan: &IsolationPlan, cwd: &Path) -> io::Result<Prepared> {
        let mut steps = Vec::new();
        match &plan.read_only {
            HostMounts::Tree => steps.push(Step::ReadOnlyTree),
            HostMounts::Each(mounts) => {
                for m in mounts {
                    steps.push(Step::ReadOnly {
                        point: cstring(&m.point)?,
                        flags: m.flags,
                    });
                }
            }
        }
        let mut expose = plan.expose.clone();
        expose.sort_by_key(|(p, _)| depth(p));
        for (i, (path, _)) in expose.iter().enumerate() {
            steps.push(Step::Open {
                path: cstring(path)?,
                slot: FIRST_SLOT + i as i32,
            });
        }
        // Shallower first: a cover hides what is below it, a bind is then made inside it.
        enum Op<'a> {
            Cover(&'a Path, Cover),
            Bind(&'a Path, bool, i32),
        }
        let mut ops: Vec<(usize, u8, Op)> = Vec::new();
        for (path, kind) in &plan.cover {
            ops.push((depth(path), 0, Op::Cover(path, *kind)));
        }
        for (i, (path, writable)) in expose.iter().enumerate() {
            ops.push((
                depth(path),
                1,
                Op::Bind(path, *writable, FIRST_SLOT + i as i32),
            ));
        }
        ops.sort_by_key(|(d, kind, _)| (*d, *kind));
        for (_, _, op) in &ops {
            let (Op::Cover(path, _) | Op::Bind(path, _, _)) = op;
            for folder in ancestors_top_down(path).iter().chain([&path.to_path_buf()]) {
                steps.push(Step::Mkdir {
                    path: cstring(folder)?,
                });
            }
            match op {
                Op::Cover(path, kind) => steps.push(Step::Cover {
                    path: cstring(path)?,
                    kind: *kind,
                }),
                Op::Bind(path, writable, slot) => steps.push(Step::Bind {
                    source: CString::new(format!("/proc/self/fd/{slot}"))
                        .expect("no NUL in a number"),
                    path: cstring(path)?,
                    writable: *writable,
                    writable_below: *writable && plan.read_only == HostMounts::Tree,
                    slot: *slot,
                }),
            }
        }
        // In a private /tmp, which is covered by then (and never sealed).
        for path in &plan.fresh {
            for folder in ancestors_top_down(path).iter().chain([path]) {
                steps.push(Step::Mkdir {
                    path: cstring(folder)?,
                });
            }
        }
        for (path, kind) in &plan.cover {
            if *kind != Cover::PrivateTmp {
                steps.push(Step::Seal {
                    path: cstring(path)?,
                });
            }
        }
        Ok(Prepared {
            steps,
            cwd: cstring(cwd)?,
            user: None,
            namespaces: None,
        })
    }

    /// The run enters these network and IPC namespaces (being made) instead of making its own.
    pub fn with_namespaces(mut self, namespaces: Option<PendingNamespaces>) -> Prepared {
        self.namespaces = namespaces;
        self
    }

    /// The tool runs as this user (uid, gid; its only group) instead of user 0.
    pub fn run_as(mut self, user: Option<(u32, u32)>) -> Prepared {
        self.user = user;
        self
    }

    /// The namespaces being made for the run, for the spawner (which hands them over at the
    /// gate).
    pub(crate) fn take_namespaces(&mut self) -> Option<PendingNamespaces> {
        self.namespaces.take()
    }

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
        match self.enter_and_start(gate, spawner_alive, slot, tool) {
            Err(e) => e,
        }
    }

    /// See [`Prepared::enter`].
    unsafe fn enter_and_start(
        &self,
        gate: i32,
        spawner_alive: i32,
        slot: *mut i32,
        tool: &ToolStart,
    ) -> io::Result<std::convert::Infallible> {
        let fail = |what: i32| -> io::Error {
            // Keep the errno; the step number goes in the high bits for the parent's message.
            let errno = io::Error::last_os_error().raw_os_error().unwrap_or(0);
            io::Error::from_raw_os_error(errno | (what << 16))
        };
        if libc::mount(
            std::ptr::null(),
            c"/".as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        ) != 0
        {
            return Err(fail(2));
        }
        for step in &self.steps {
            if let Err(code) = apply_step(step) {
                return Err(fail(code));
            }
        }
        let handed = crate::spawn::receive_gate(gate).map_err(|e| {
            io::Error::from_raw_os_error(e.raw_os_error().unwrap_or(0) | (12 << 16))
        })?;
        match handed {
            Some([net, ipc]) => {
                let entered = libc::setns(net, libc::CLONE_NEWNET) == 0
                    && libc::setns(ipc, libc::CLONE_NEWIPC) == 0;
                if !entered {
                    return Err(fail(1));
                }
                libc::close(net);
                libc::close(ipc);
            }
            None => {
                if libc::unshare(libc::CLONE_NEWNET | libc::CLONE_NEWIPC) != 0 {
                    return Err(fail(1));
                }
                loopback_up().map_err(|_| fail(3))?;
            }
        }
        // Process 1 of the run's PID namespace: the run's own processes only; read-only, so
        // /proc/sys cannot be written either.
        if libc::mount(
            c"proc".as_ptr(),
            c"/proc".as_ptr(),
            c"proc".as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC | libc::MS_RDONLY,
            std::ptr::null(),
        ) != 0
        {
            return Err(fail(10));
        }
        if libc::chdir(self.cwd.as_ptr()) != 0 {
            return Err(fail(8));
        }
        drop_capabilities(self.user).map_err(|_| fail(9))?;
        Err(fail(become_init(slot, spawner_alive, tool)))
    }
}

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
unsafe fn become_init(slot: *mut i32, spawner_alive: i32, tool: &ToolStart) -> i32 {
    if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
        return 11;
    }
    let mut pfd = libc::pollfd {
        fd: spawner_alive,
        events: libc::POLLIN,
        revents: 0,
    };
    if libc::poll(&mut pfd, 1, 0) > 0 && pfd.revents & libc::POLLHUP != 0 {
        libc::_exit(128 + libc::SIGKILL);
    }
    libc::close(spawner_alive);
    let mut set: libc::sigset_t = std::mem::zeroed();
    let mut old: libc::sigset_t = std::mem::zeroed();
    libc::sigemptyset(&mut set);
    for signal in FORWARDED.into_iter().chain([libc::SIGCHLD]) {
        libc::sigaddset(&mut set, signal);
        // A handler, not SIG_DFL: process 1 of a PID namespace never gets a signal it has no
        // handler for. The signal stays blocked and is taken by sigwaitinfo.
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = ignore_signal as extern "C" fn(libc::c_int) as usize;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(signal, &action, std::ptr::null_mut());
    }
    if libc::sigprocmask(libc::SIG_BLOCK, &set, &mut old) != 0 {
        return 11;
    }
    // Named before the tool starts: this process waits until the tool executed, and whoever
    // looks at the tool's parent then must see the init (the tool's process has the name
    // until it executes the tool).
    libc::prctl(libc::PR_SET_NAME, c"mccbuild-init".as_ptr(), 0, 0, 0);
    let start = ToolProcess { tool, old };
    let mut stack = std::mem::MaybeUninit::<[u8; TOOL_STACK]>::uninit();
    // The top, aligned as the ABI wants (the stack grows down).
    let top = (stack.as_mut_ptr() as usize + TOOL_STACK) & !15;
    let pid = libc::clone(
        tool_process,
        top as *mut libc::c_void,
        libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
        (&start as *const ToolProcess).cast_mut().cast(),
    );
    if pid < 0 {
        return 11;
    }
    run_init(pid, &set, slot)
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
unsafe fn run_init(tool: libc::pid_t, set: &libc::sigset_t, slot: *mut i32) -> ! {
    libc::syscall(libc::SYS_close_range, 0u32, u32::MAX, 0u32);
    loop {
        let signal = libc::sigwaitinfo(set, std::ptr::null_mut());
        if signal > 0 && signal != libc::SIGCHLD {
            libc::kill(tool, signal);
        }
        loop {
            let mut status: libc::c_int = 0;
            let pid = libc::waitpid(-1, &mut status, libc::WNOHANG);
            if pid <= 0 {
                break;
            }
            if pid == tool {
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
            if libc::syscall(
                libc::SYS_mount_setattr,
                libc::AT_FDCWD,
                c"/".as_ptr(),
                AT_RECURSIVE,
                &attr as *const MountAttr,
                std::mem::size_of::<MountAttr>(),
            ) != 0
            {
                return Err(14);
            }
        }
        Step::ReadOnly { point, flags } => {
            // A mount the kernel refuses to change (rare) stays as it is: without
            // capabilities the run still cannot write what is not its own.
            libc::mount(
                std::ptr::null(),
                point.as_ptr(),
                std::ptr::null(),
                libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | flags,
                std::ptr::null(),
            );
        }
        Step::Open { path, slot } => {
            let fd = libc::open(path.as_ptr(), libc::O_PATH | libc::O_DIRECTORY);
            if fd < 0 || libc::dup2(fd, *slot) < 0 {
                return Err(4);
            }
            libc::close(fd);
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
            if libc::mount(
                c"tmpfs".as_ptr(),
                path.as_ptr(),
                c"tmpfs".as_ptr(),
                libc::MS_NOSUID | nodev,
                options.as_ptr().cast(),
            ) != 0
            {
                return Err(5);
            }
            if *kind == Cover::Dev {
                for (name, major, minor) in DEVICES {
                    if libc::mknod(
                        name.as_ptr(),
                        libc::S_IFCHR | 0o666,
                        libc::makedev(major, minor),
                    ) != 0
                        || libc::chmod(name.as_ptr(), 0o666) != 0
                    {
                        return Err(5);
                    }
                }
                for (target, name) in DEV_LINKS {
                    libc::symlink(target.as_ptr(), name.as_ptr());
                }
            }
        }
        Step::Mkdir { path } => {
            // Exists already, or is made in a cover; a real failure shows at the mount.
            libc::mkdir(path.as_ptr(), 0o755);
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
        Step::Seal { path } => {
            if libc::mount(
                std::ptr::null(),
                path.as_ptr(),
                std::ptr::null(),
                libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | libc::MS_NOSUID,
                std::ptr::null(),
            ) != 0
            {
                return Err(7);
            }
        }
    }
    Ok(())
}

/// Empties the bounding set and the capabilities, locks `SECBIT_NOROOT`, becomes `user` (uid,
/// gid) if given, and sets `no_new_privs`: from here on, no program this process executes gets
/// a capability.
unsafe fn drop_capabilities(user: Option<(u32, u32)>) -> io::Result<()> {
    for cap in 0..64 {
        // EINVAL past the kernel's last capability: all are dropped then.
        if libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) != 0
            && *libc::__errno_location() == libc::EINVAL
        {
            break;
        }
    }
    libc::prctl(
        libc::PR_CAP_AMBIENT,
        libc::PR_CAP_AMBIENT_CLEAR_ALL,
        0,
        0,
        0,
    );
    if libc::prctl(libc::PR_SET_SECUREBITS, SECUREBITS, 0, 0, 0) != 0 {
        return Err(io::Error::last_os_error());
    }
    // CAP_SETUID and CAP_SETGID are still effective (only the bounding set was emptied).
    if let Some((uid, gid)) = user {
        become_user(uid, gid)?;
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
    if libc::syscall(libc::SYS_capset, &header, data.as_ptr()) != 0
        || libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
    {
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
    if libc::syscall(libc::SYS_setgroups, 1usize, groups.as_ptr()) != 0
        || libc::syscall(libc::SYS_setresgid, gid, gid, gid) != 0
        || libc::syscall(libc::SYS_setresuid, uid, uid, uid) != 0
    {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Explains an error returned by [`crate::spawn::spawn`] (the step is in the errno's high bits).
pub fn describe_apply_error(e: &io::Error) -> String {
    let Some(raw) = e.raw_os_error() else {
        return e.to_string();
    };
    let (step, errno) = (raw >> 16, raw & 0xffff);
    let what = match step {
        1 => "entering new mount, network and IPC namespaces",
        2 => "making the run's mounts private",
        3 => "bringing the loopback interface up",
        4 => "opening a folder the run needs (tool, setup products or its own folder)",
        5 => "covering a folder with a tmpfs",
        6 => "binding a folder the run needs into its view",
        7 => "making a covered folder read-only",
        8 => "entering the working directory",
        9 => "giving up capabilities and root (becoming the run's user)",
        10 => "mounting the run's own /proc",
        11 => "starting the run's init",
        12 => "waiting to be moved into the run's cgroups",
        14 => "making the host's mounts read-only",
        crate::spawn::STEP_START => "starting the run's process (standard streams, session)",
        _ => return e.to_string(),
    };
    format!("{what}: {}", io::Error::from_raw_os_error(errno))
}

/// The ancestors of `path` from `/` down, excluding `/` and `path` itself.
fn ancestors_top_down(path: &Path) -> Vec<PathBuf> {
    let mut list: Vec<PathBuf> = path
        .ancestors()
        .skip(1)
        .filter(|p| *p != Path::new("/") && !p.as_os_str().is_empty())
        .map(Path::to_path_buf)
        .collect();
    list.reverse();
    list
}

/// `ip link set lo up`, with an ioctl.
unsafe fn loopback_up() -> io::Result<()> {
    let name = b"lo";
    let fd = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut req: libc::ifreq = std::mem::zeroed();
    for (i, b) in name.iter().enumerate() {
        req.ifr_name[i] = *b as libc::c_char;
    }
    let mut ok = libc::ioctl(fd, libc::SIOCGIFFLAGS, &mut req) == 0;
    if ok {
        req.ifr_ifru.ifru_flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
        ok = libc::ioctl(fd, libc::SIOCSIFFLAGS, &req) == 0;
    }
    let err = io::Error::last_os_error();
    libc::close(fd);
    if ok {
        Ok(())
    } else {
        Err(err)
    }
}

/// Whether runs can be isolated here: root, and a real process can be given a view
/// ([`Prepared::enter`], all of it) and run `/bin/true` in it. Checked once per executor.
pub(crate) fn probe() -> Result<(), String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err("mccbuild does not run as root".into());
    }
    let dir = std::env::temp_dir().join(format!("mccbuild-probe-{}", crate::owner::tag()));
    std::fs::create_dir_all(&dir)
        .map_err(|e| format!("cannot make {} to probe in: {e}", dir.display()))?;
    let result = probe_in(&dir);
    let _ = std::fs::remove_dir_all(&dir);
    result
}

fn probe_in(dir: &Path) -> Result<(), String> {
    let host =
        HostMounts::of_this_host().map_err(|e| format!("cannot read /proc/self/mountinfo: {e}"))?;
    let plan = IsolationPlan::new(
        &IsolationRequest {
            run_dir: dir,
            read_only: Vec::new(),
            hidden: Vec::new(),
            fresh: Vec::new(),
        },
        &host,
        Path::exists,
    );
    let prepared = Prepared::new(&plan, dir).map_err(|e| e.to_string())?;
    let spawned = crate::spawn::spawn(crate::spawn::Launch {
        program: Path::new("/bin/true"),
        args: &[],
        env: &[],
        cores: &[],
        isolation: &prepared,
        cgroup: None,
        memory_limit_bytes: 0,
        namespaces: None,
    })
    .map_err(|e| describe_apply_error(&e))?;
    let mut status = 0;
    // SAFETY: waiting for our own child.
    while unsafe { libc::waitpid(spawned.pid, &mut status, 0) } < 0 {
        if io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return Err(format!(
                "waiting for the probe: {}",
                io::Error::last_os_error()
            ));
        }
    }
    let status = spawned.status.tool_status().unwrap_or(status);
    if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 {
        Ok(())
    } else {
        Err(format!(
            "/bin/true in a sandbox ended with wait status {status}"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTINFO: &str = "\
22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw
23 22 0:5 / /proc rw,nosuid,nodev,noexec,relatime shared:2 - proc proc rw
24 22 0:6 / /dev rw,nosuid shared:3 - devtmpfs udev rw
25 24 0:7 / /dev/shm rw,nosuid,nodev shared:4 - tmpfs tmpfs rw
26 22 0:8 / /sys rw,nosuid,nodev,noexec,relatime shared:5 - sysfs sysfs rw
27 22 0:9 / /mnt/with\\040space rw,noatime shared:6 - ext4 /dev/vdb rw
";

    fn request<'a>(
        run: &'a Path,
        ro: Vec<&'a Path>,
        hidden: Vec<&'a Path>,
    ) -> IsolationRequest<'a> {
        IsolationRequest {
            run_dir: run,
            read_only: ro,
            hidden,
            fresh: Vec::new(),
        }
    }

    fn covers(plan: &IsolationPlan) -> Vec<(&str, Cover)> {
        plan.cover
            .iter()
            .map(|(p, k)| (p.to_str().unwrap(), *k))
            .collect()
    }

    #[test]
    fn mountinfo_gives_points_and_flags() {
        let mounts = host_mounts(MOUNTINFO);
        assert_eq!(mounts.len(), 6);
        assert_eq!(mounts[0].point, Path::new("/"));
        assert_eq!(mounts[0].flags, libc::MS_RELATIME);
        assert_eq!(
            mounts[4].flags,
            libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC | libc::MS_RELATIME
        );
        assert_eq!(mounts[5].point, Path::new("/mnt/with space"));
    }

    #[test]
    fn host_mounts_are_read_only_except_proc_and_dev() {
        let run = Path::new("/tmp/mccbuild-x");
        let plan = IsolationPlan::new(
            &request(run, vec![], vec![]),
            &HostMounts::Each(host_mounts(MOUNTINFO)),
            |_| true,
        );
        let HostMounts::Each(mounts) = &plan.read_only else {
            panic!("one by one: {:?}", plan.read_only)
        };
        let points: Vec<&Path> = mounts.iter().map(|m| m.point.as_path()).collect();
        assert_eq!(
            points,
            vec![
                Path::new("/"),
                Path::new("/sys"),
                Path::new("/mnt/with space")
            ]
        );
    }

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

    /// Where the kernel has `mount_setattr`, the whole tree is made read-only in one step,
    /// first (before anything is covered or bound back), and no mount one by one.
    #[test]
    fn the_whole_tree_is_made_read_only_first_in_one_step() {
        let run = Path::new("/tmp/mccbuild-x");
        let tool = Path::new("/p/tools/t");
        let plan = IsolationPlan::new(
            &request(run, vec![tool], vec![Path::new("/p")]),
            &HostMounts::Tree,
            |_| true,
        );
        assert_eq!(plan.read_only, HostMounts::Tree);
        let prepared = Prepared::new(&plan, run).unwrap();
        assert!(matches!(prepared.steps[0], Step::ReadOnlyTree));
        let trees = prepared
            .steps
            .iter()
            .filter(|s| matches!(s, Step::ReadOnlyTree))
            .count();
        assert_eq!(trees, 1);
        assert!(!prepared
            .steps
            .iter()
            .any(|s| matches!(s, Step::ReadOnly { .. })));
        let writable_below = |p: &str| {
            prepared.steps.iter().any(|s| {
                matches!(s, Step::Bind { path, writable_below: true, .. }
                    if path.as_bytes() == p.as_bytes())
            })
        };
        assert!(
            writable_below("/tmp/mccbuild-x"),
            "the run's own mounts stay writable"
        );
        assert!(!writable_below("/p/tools/t"), "the tool's are read-only");
        // This machine's kernel (6.x) has it.
        assert_eq!(HostMounts::of_this_host().unwrap(), HostMounts::Tree);
    }

    #[test]
    fn project_and_store_are_covered_and_the_tool_bound_back() {
        let run = Path::new("/tmp/mccbuild-x");
        let tool = Path::new("/work/proj/tools/t");
        let bin = Path::new("/work/proj/cache/tools/abc/bin");
        let plan = IsolationPlan::new(
            &request(
                run,
                vec![tool, bin],
                vec![
                    Path::new("/work/proj"),
                    Path::new("/work/proj/cache"),
                    Path::new("/data/inputs"),
                    Path::new("/tmp"),
                ],
            ),
            &HostMounts::Each(Vec::new()),
            |_| true,
        );
        // The store's cover is inside the project's with nothing exposed in between: dropped;
        // /tmp is a private tmp already.
        assert_eq!(
            covers(&plan),
            vec![
                ("/dev", Cover::Dev),
                ("/tmp", Cover::PrivateTmp),
                ("/var/tmp", Cover::PrivateTmp),
                ("/dev/shm", Cover::PrivateTmp),
                ("/work/proj", Cover::Empty),
                ("/data/inputs", Cover::Empty),
            ]
        );
        assert_eq!(
            plan.expose,
            vec![
                (run.to_path_buf(), true),
                (tool.to_path_buf(), false),
                (bin.to_path_buf(), false)
            ]
        );
    }

    #[test]
    fn a_cover_below_an_exposed_folder_is_kept() {
        // The store inside the tool's folder: the tool is bound back, the store covered again.
        let run = Path::new("/tmp/mccbuild-x");
        let tool = Path::new("/p/tools/t");
        let plan = IsolationPlan::new(
            &request(
                run,
                vec![tool],
                vec![Path::new("/p"), Path::new("/p/tools/t/cache")],
            ),
            &HostMounts::Each(Vec::new()),
            |_| true,
        );
        assert!(covers(&plan).contains(&("/p/tools/t/cache", Cover::Empty)));
    }

    #[test]
    fn missing_folders_are_not_covered() {
        let run = Path::new("/tmp/mccbuild-x");
        let plan = IsolationPlan::new(
            &request(run, vec![], vec![Path::new("/nowhere")]),
            &HostMounts::Each(Vec::new()),
            |p| p != Path::new("/nowhere") && p != Path::new("/var/tmp"),
        );
        assert_eq!(
            covers(&plan),
            vec![
                ("/dev", Cover::Dev),
                ("/tmp", Cover::PrivateTmp),
                ("/dev/shm", Cover::PrivateTmp)
            ]
        );
    }

    #[test]
    fn a_fresh_run_folder_is_made_in_the_private_tmp_not_bound() {
        let run = Path::new("/tmp/mccbuild-sandbox-x");
        let home = run.join("home");
        let tool = Path::new("/opt/t");
        let mut req = request(run, vec![tool], vec![]);
        req.fresh = vec![run, &home];
        let plan = IsolationPlan::new(&req, &HostMounts::Each(Vec::new()), |_| true);
        assert_eq!(plan.expose, vec![(tool.to_path_buf(), false)]);
        assert_eq!(plan.fresh, vec![run.to_path_buf(), home.clone()]);
        let prepared = Prepared::new(&plan, run).unwrap();
        let at = |want: &dyn Fn(&Step) -> bool| prepared.steps.iter().position(want).unwrap();
        let is = |s: &CString, p: &str| s.as_bytes() == p.as_bytes();
        let cover_tmp = at(&|s| matches!(s, Step::Cover { path, .. } if is(path, "/tmp")));
        let make_home =
            at(&|s| matches!(s, Step::Mkdir { path } if is(path, "/tmp/mccbuild-sandbox-x/home")));
        assert!(cover_tmp < make_home);
        assert!(!prepared
            .steps
            .iter()
            .any(|s| matches!(s, Step::Bind { path, .. } if is(path, "/tmp/mccbuild-sandbox-x"))));
        assert!(in_private_tmp(run, |_| true));
        assert!(!in_private_tmp(Path::new("/tmp"), |_| true));
        assert!(!in_private_tmp(Path::new("/scratch/x"), |_| true));
        assert!(!in_private_tmp(Path::new("/var/tmp/x"), |p| p != Path::new("/var/tmp")));
    }

    #[test]
    fn steps_cover_before_binding_inside_and_seal_last() {
        let run = Path::new("/tmp/mccbuild-x");
        let tool = Path::new("/p/tools/t");
        let plan = IsolationPlan::new(
            &request(run, vec![tool], vec![Path::new("/p")]),
            &HostMounts::Each(Vec::new()),
            |_| true,
        );
        let prepared = Prepared::new(&plan, &run.join("inst")).unwrap();
        let at = |want: &dyn Fn(&Step) -> bool| prepared.steps.iter().position(want).unwrap();
        let is = |s: &CString, p: &str| s.as_bytes() == p.as_bytes();
        let open_run = at(&|s| matches!(s, Step::Open { path, .. } if is(path, "/tmp/mccbuild-x")));
        let cover_tmp = at(&|s| matches!(s, Step::Cover { path, .. } if is(path, "/tmp")));
        let bind_run = at(&|s| matches!(s, Step::Bind { path, .. } if is(path, "/tmp/mccbuild-x")));
        let cover_p = at(&|s| matches!(s, Step::Cover { path, .. } if is(path, "/p")));
        let mkdir_tools = at(&|s| matches!(s, Step::Mkdir { path } if is(path, "/p/tools")));
        let bind_tool = at(&|s| matches!(s, Step::Bind { path, .. } if is(path, "/p/tools/t")));
        let seal_p = at(&|s| matches!(s, Step::Seal { path } if is(path, "/p")));
        assert!(open_run < cover_tmp && cover_tmp < bind_run);
        assert!(cover_p < mkdir_tools && mkdir_tools < bind_tool && bind_tool < seal_p);
    }
}
