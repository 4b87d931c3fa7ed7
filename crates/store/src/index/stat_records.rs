//! The stamps, now, of many loose record files: each stat'ed relative to its shard folder, on a
//! few threads, and only those whose stamp moved are returned.

use std::ffi::CStr;
use std::os::fd::OwnedFd;

use rustix::fs::{AtFlags, Mode, OFlags, Stat, open, statat};

use mccbuild_core::RunKey;
use mccbuild_core::stamp::FileStamp;

use super::Stamp;
use crate::Store;

/// The record files among `keys` (in key order, so one shard folder after the other) whose stamp
/// is not `known(position)`, with their stamp now (`None`: gone or cannot be stat'ed), in key
/// order; on a few threads. `known` returning `None` means "not a loose record": not stat'ed.
pub(super) fn stat_moved(
    store: &Store,
    count: usize,
    key_at: impl Fn(usize) -> RunKey + Sync,
    known: impl Fn(usize) -> Option<Option<Stamp>> + Sync,
) -> Vec<(RunKey, Option<Stamp>)> {
    let runs = store.root().join("runs");
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .clamp(1, 4);
    let chunk = count.div_ceil(threads).max(4096);
    let (known, key_at) = (&known, &key_at);
    let parts: Vec<Vec<(RunKey, Option<Stamp>)>> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..count)
            .step_by(chunk)
            .map(|start| {
                let runs = &runs;
                scope.spawn(move || {
                    let mut moved: Vec<(RunKey, Option<Stamp>)> = Vec::new();
                    // The shard folder open now (`None` inside: it cannot be opened); closed when
                    // the next one is opened, or at the end.
                    let mut shard: Option<(u8, Option<OwnedFd>)> = None;
                    let mut name = [0u8; 64 + 5 + 1];
                    for i in start..(start + chunk).min(count) {
                        let Some(expected) = known(i) else {
                            continue;
                        };
                        let key = &key_at(i);
                        if shard.as_ref().is_none_or(|(s, _)| *s != key.0[0]) {
                            let dir = runs.join(format!("{:02x}", key.0[0]));
                            let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
                            let fd = open(dir.as_path(), flags, Mode::empty()).ok();
                            shard = Some((key.0[0], fd));
                        }
                        let Some((_, Some(dirfd))) = &shard else {
                            moved.push((*key, None));
                            continue;
                        };
                        name[..64].copy_from_slice(key.hex().as_bytes());
                        name[64..69].copy_from_slice(b".json");
                        name[69] = 0;
                        let now = CStr::from_bytes_with_nul(&name)
                            .ok()
                            .and_then(|name| statat(dirfd, name, AtFlags::SYMLINK_NOFOLLOW).ok())
                            .map(|st| Stamp::from(file_stamp(&st)));
                        if now.is_none() || now != expected {
                            moved.push((*key, now));
                        }
                    }
                    moved
                })
            })
            .collect();
        workers
            .into_iter()
            // A thread that failed must not pass for "nothing moved": its panic goes on.
            .map(|w| w.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    parts.concat()
}

/// A file's whole stamp from what `fstatat` said of it (the fields `FileStamp::of` takes from
/// `std::fs::Metadata`, which is not had here).
fn file_stamp(st: &Stat) -> FileStamp {
    let ns = |s: i64, nsec: i64| s as i128 * 1_000_000_000 + nsec as i128;
    FileStamp {
        size: st.st_size as u64,
        mtime_ns: ns(st.st_mtime, st.st_mtime_nsec as i64),
        ctime_ns: ns(st.st_ctime, st.st_ctime_nsec as i64),
        ino: st.st_ino,
        dev: st.st_dev,
        mode: st.st_mode,
    }
}
