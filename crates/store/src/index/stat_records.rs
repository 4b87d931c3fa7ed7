//! The stamps, now, of many loose record files: each stat'ed relative to its shard folder, on a
//! few threads, and only those whose stamp moved are returned.

use mccbuild_core::RunKey;

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
    use std::os::unix::ffi::OsStrExt;
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
                    let mut shard: Option<(u8, i32)> = None;
                    let mut name = [0u8; 64 + 5 + 1];
                    for i in start..(start + chunk).min(count) {
                        let Some(expected) = known(i) else {
                            continue;
                        };
                        let key = &key_at(i);
                        let mut now: Option<Stamp> = None;
                        let dirfd = match shard {
                            Some((s, fd)) if s == key.0[0] => fd,
                            _ => {
                                if let Some((_, fd)) = shard {
                                    // SAFETY: a descriptor this thread opened.
                                    unsafe { libc::close(fd) };
                                }
                                let dir = runs.join(format!("{:02x}", key.0[0]));
                                let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes())
                                else {
                                    moved.push((*key, None));
                                    continue;
                                };
                                // SAFETY: a NUL-terminated path; the descriptor is closed below.
                                let fd = unsafe {
                                    libc::open(
                                        c.as_ptr(),
                                        libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
                                    )
                                };
                                shard = Some((key.0[0], fd));
                                fd
                            }
                        };
                        if dirfd < 0 {
                            moved.push((*key, None));
                            continue;
                        }
                        name[..64].copy_from_slice(key.hex().as_bytes());
                        name[64..69].copy_from_slice(b".json");
                        name[69] = 0;
                        let mut st: libc::stat = unsafe { std::mem::zeroed() };
                        // SAFETY: a NUL-terminated name relative to an open folder; `st` is ours.
                        let r = unsafe {
                            libc::fstatat(
                                dirfd,
                                name.as_ptr() as *const libc::c_char,
                                &mut st,
                                libc::AT_SYMLINK_NOFOLLOW,
                            )
                        };
                        if r == 0 {
                            now = Some(Stamp {
                                size: st.st_size as u64,
                                ctime_ns: st.st_ctime * 1_000_000_000 + st.st_ctime_nsec,
                                ino: st.st_ino,
                            });
                        }
                        if now.is_none() || now != expected {
                            moved.push((*key, now));
                        }
                    }
                    if let Some((_, fd)) = shard {
                        if fd >= 0 {
                            // SAFETY: a descriptor this thread opened.
                            unsafe { libc::close(fd) };
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
