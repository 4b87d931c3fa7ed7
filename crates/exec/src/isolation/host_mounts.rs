//! The host's mounts: the mount table read from `/proc/self/mountinfo`, and whether this kernel
//! makes the whole tree read-only in one system call (`mount_setattr`).

use std::io;
use std::path::PathBuf;

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
pub(super) struct MountAttr {
    pub(super) attr_set: u64,
    pub(super) attr_clr: u64,
    pub(super) propagation: u64,
    pub(super) userns_fd: u64,
}

/// linux/mount.h and linux/fcntl.h.
pub(super) const MOUNT_ATTR_RDONLY: u64 = 0x1;
pub(super) const AT_RECURSIVE: libc::c_int = 0x8000;

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

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use std::path::Path;

    pub(crate) const MOUNTINFO: &str = "\
22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw
23 22 0:5 / /proc rw,nosuid,nodev,noexec,relatime shared:2 - proc proc rw
24 22 0:6 / /dev rw,nosuid shared:3 - devtmpfs udev rw
25 24 0:7 / /dev/shm rw,nosuid,nodev shared:4 - tmpfs tmpfs rw
26 22 0:8 / /sys rw,nosuid,nodev,noexec,relatime shared:5 - sysfs sysfs rw
27 22 0:9 / /mnt/with\\040space rw,noatime shared:6 - ext4 /dev/vdb rw
";

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
}
