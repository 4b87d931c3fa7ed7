//! Which mccbuild process owns a run's working folder or cgroup, so that a later mccbuild can
//! reclaim what a dead one left (after `kill -9`, a power cut of the supervisor, an OOM kill of
//! mccbuild itself) and never touch what a live one uses.
//!
//! The owner is written into the name as `<pid>.<start>`: its PID and its start time in clock
//! ticks since boot (field 22 of `/proc/<pid>/stat`), since PIDs are reused. The owner is alive
//! when a process with that PID exists and started at that time.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// This process's tag, `<pid>.<start>`.
pub fn tag() -> String {
    static TAG: OnceLock<String> = OnceLock::new();
    TAG.get_or_init(|| {
        let pid = std::process::id() as i32;
        format!("{pid}.{}", start_time(pid).unwrap_or(0))
    })
    .clone()
}

/// The start time of process `pid` (clock ticks since boot), None when there is none.
fn start_time(pid: i32) -> Option<u64> {
    let stat = crate::read_text(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses: fields start after the last ')'.
    let rest = &stat[stat.rfind(')')? + 2..];
    // rest[0] is field 3: the start time, field 22, is rest[19].
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// The owner written in `name` (one `-`-separated part `<pid>.<start>`), if any.
pub fn owner_of(name: &str) -> Option<(i32, u64)> {
    name.split('-').find_map(|part| {
        let (pid, start) = part.split_once('.')?;
        Some((pid.parse().ok()?, start.parse().ok()?))
    })
}

/// Whether `name` carries an owner tag and that owner is no longer running.
pub fn owner_is_dead(name: &str) -> bool {
    owner_of(name).is_some_and(|(pid, start)| start_time(pid) != Some(start))
}

/// Removes the working folders (`mccbuild-*` in `root`) of mccbuild processes that died;
/// returns how many. Call after their cgroups were reclaimed (their processes killed).
///
/// What is mounted in such a folder is detached first: a run's BK_BIN_PATH overlay
/// (`bin_view`) is mounted in the host's mount namespace and only its mccbuild unmounts it, so
/// a killed mccbuild leaves it mounted. Without this the folder could not be removed (EBUSY), and
/// removing would first walk into the overlay.
pub fn reclaim_folders(root: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(root) else {
        return 0;
    };
    // Read when a folder is to be removed (most of the time none is).
    let mut mounts: Option<Vec<PathBuf>> = None;
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if name.starts_with("mccbuild-")
            && owner_is_dead(name)
            && entry.file_type().is_ok_and(|t| t.is_dir())
        {
            let mounts = mounts.get_or_insert_with(|| {
                crate::read_text("/proc/self/mountinfo")
                    .map(|info| crate::isolation::host_mounts(&info))
                    .unwrap_or_default()
                    .into_iter()
                    .map(|m| m.point)
                    .collect()
            });
            detach_mounts_under(&entry.path(), mounts);
            if std::fs::remove_dir_all(entry.path()).is_ok() {
                removed += 1;
            }
        }
    }
    removed
}

/// Detaches (`MNT_DETACH`) every mount of `mounts` at or below `dir`, deepest first.
fn detach_mounts_under(dir: &Path, mounts: &[PathBuf]) {
    let mut points: Vec<&PathBuf> = mounts.iter().filter(|p| p.starts_with(dir)).collect();
    points.sort_by_key(|p| std::cmp::Reverse(p.components().count()));
    points.dedup();
    for point in points {
        if let Ok(path) = CString::new(point.as_os_str().as_bytes()) {
            // SAFETY: a valid C string; unmounting what a dead mccbuild mounted in its folder.
            unsafe { libc::umount2(path.as_ptr(), libc::MNT_DETACH) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_name_their_owner() {
        let tag = tag();
        let name = format!("mccbuild-0123456789ab-{tag}-7");
        assert_eq!(
            owner_of(&name).map(|o| o.0),
            Some(std::process::id() as i32)
        );
        assert!(!owner_is_dead(&name), "this process is alive");
    }

    #[test]
    fn a_reused_pid_or_a_gone_one_is_dead() {
        let (pid, start) = owner_of(&format!("x-{}-1", tag())).unwrap();
        assert!(owner_is_dead(&format!("x-{pid}.{}-1", start + 1)));
        assert!(owner_is_dead("x-999999999.5-1"));
        assert!(!owner_is_dead("mccbuild-main"), "no tag: never reclaimed");
        assert_eq!(owner_of("mccbuild-0123456789ab-12-3"), None);
    }

    /// A dead mccbuild's folder with its BK_BIN_PATH overlay still mounted (it was killed
    /// before unmounting) is unmounted and removed; the overlay's lower folder is untouched.
    #[test]
    fn a_dead_owners_folder_is_unmounted_and_removed() {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            mccbuild_testkit::skip("mounting an overlay needs root");
            return;
        }
        let root = tempfile::tempdir().unwrap();
        let lower = root.path().join("tool");
        std::fs::create_dir(&lower).unwrap();
        std::fs::write(lower.join("entry"), "#!/bin/sh\n").unwrap();
        let work = root.path().join("runs");
        std::fs::create_dir(&work).unwrap();
        let dead = work.join("mccbuild-0123456789ab-999999999.5-0");
        let live = work.join(format!("mccbuild-0123456789ab-{}-1", tag()));
        for dir in [&dead, &live] {
            std::fs::create_dir(dir).unwrap();
        }
        let view = crate::bin_view::BinView::new(&lower, &dead, None).unwrap();
        if view.kind() != "overlay" {
            mccbuild_testkit::skip("overlayfs cannot be mounted in the temporary folder");
            return;
        }
        std::fs::write(view.path().join("scratch"), "a run's write").unwrap();
        std::mem::forget(view); // as a killed mccbuild: never unmounted
        assert_eq!(reclaim_folders(&work), 1);
        assert!(!dead.exists());
        assert!(live.exists(), "a live owner's folder stays");
        let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
        assert!(!mounts.contains(dead.to_str().unwrap()), "unmounted");
        let left: Vec<_> = std::fs::read_dir(&lower).unwrap().flatten().collect();
        assert_eq!(left.len(), 1, "the lower folder is untouched");
    }
}
