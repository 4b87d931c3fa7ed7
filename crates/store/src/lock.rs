//! The store's execution lock: one command executing runs per store.

use std::fs;
use std::io;

use rustix::fs::{FlockOperation, flock};

use crate::{Store, StoreError};

/// The right to execute runs into a store, held until dropped (or the process ends, however it
/// ends: the kernel releases an flock with its last descriptor).
#[derive(Debug)]
pub struct StoreLock {
    _file: fs::File,
}

/// Whether a command that would execute runs waits for another one on the same store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockWait {
    Wait,
    Refuse,
}

impl Store {
    /// Takes the store's execution lock (`lock`, an flock): one command executing runs per
    /// store, so that two `mccbuild run` never execute the same run twice nor pin runs onto the
    /// same cores. Readers (`scores`, `watch`, `export`...) never take it. When another process
    /// holds it, `waiting` is told who (and the call waits) or, with [`LockWait::Refuse`],
    /// [`StoreError::Busy`] is returned.
    pub fn lock_for_execution(
        &self,
        wait: LockWait,
        command: &str,
        waiting: impl FnOnce(&str),
    ) -> Result<StoreLock, StoreError> {
        use std::io::{Read, Seek, Write};
        let path = self.root.join("lock");
        let mut file = fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|source| StoreError::ReadOnly {
                path: self.root.clone(),
                source,
            })?;
        let lock = |file: &fs::File, how: FlockOperation| flock(file, how).map_err(io::Error::from);
        if let Err(e) = lock(&file, FlockOperation::NonBlockingLockExclusive) {
            if e.kind() != io::ErrorKind::WouldBlock {
                return Err(StoreError::Write { path, source: e });
            }
            let mut holder = String::new();
            let _ = file.read_to_string(&mut holder);
            let holder = holder_text(&holder);
            match wait {
                LockWait::Refuse => {
                    return Err(StoreError::Busy {
                        path: self.root.clone(),
                        holder,
                    });
                }
                LockWait::Wait => {
                    waiting(&holder);
                    lock(&file, FlockOperation::LockExclusive).map_err(|source| {
                        StoreError::Write {
                            path: path.clone(),
                            source,
                        }
                    })?;
                }
            }
        }
        // Who holds it, for the next one's message (the lock is the flock, not this text).
        let since = utc_date_time(std::time::SystemTime::now());
        let host = fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
        let _ = file.set_len(0).and_then(|()| file.rewind()).and_then(|()| {
            write!(
                file,
                "pid {} on {}\n`{command}`\nsince {since}\n",
                std::process::id(),
                host.trim()
            )
        });
        Ok(StoreLock { _file: file })
    }
}

/// A moment as people read it: `2026-12-07 23:40:12 UTC`.
fn utc_date_time(at: std::time::SystemTime) -> String {
    let text = humantime::format_rfc3339_seconds(at).to_string();
    format!("{} UTC", text.trim_end_matches('Z').replacen('T', " ", 1))
}

/// The lock file's text as one line of a message: its lines joined; a moment written by an
/// older mccbuild as seconds since 1970 (`since unix time N`) shown as a date-time.
fn holder_text(file: &str) -> String {
    let lines: Vec<String> = file
        .trim()
        .lines()
        .map(|line| {
            match line
                .strip_prefix("since unix time ")
                .and_then(|n| n.trim().parse::<u64>().ok())
            {
                Some(secs) => format!(
                    "since {}",
                    utc_date_time(std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs))
                ),
                None => line.to_string(),
            }
        })
        .collect();
    match lines.is_empty() {
        true => "a process that has not said who it is yet".to_string(),
        false => lines.join(", "),
    }
}

#[cfg(test)]
mod tests {
    use crate::{LockWait, Store, StoreError};

    /// Who holds the lock is said in words: the moment as a UTC date-time, also when an older
    /// mccbuild wrote it as seconds since 1970.
    #[test]
    fn the_holder_is_said_with_a_utc_date_time() {
        let at = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_796_667_976);
        assert_eq!(super::utc_date_time(at), "2026-12-07 18:26:16 UTC");
        assert_eq!(
            super::holder_text("pid 7 on h\n`mccbuild run`\nsince unix time 1796667976\n"),
            "pid 7 on h, `mccbuild run`, since 2026-12-07 18:26:16 UTC"
        );
        assert_eq!(
            super::holder_text(""),
            "a process that has not said who it is yet"
        );
    }

    /// The lock is an flock per open file: a second taker in this process is refused or waits
    /// as another process would.
    #[test]
    fn a_second_taker_is_refused_or_waits_and_is_told_who_holds_it() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let not_waiting = |holder: &str| panic!("waited for {holder}");
        let held = store
            .lock_for_execution(LockWait::Refuse, "mccbuild run", not_waiting)
            .unwrap();
        let me = format!("pid {} on ", std::process::id());
        match store.lock_for_execution(LockWait::Refuse, "mccbuild import", not_waiting) {
            Err(StoreError::Busy { holder, .. }) => {
                assert!(
                    holder.starts_with(&me) && holder.contains(", `mccbuild run`, since"),
                    "{holder}"
                );
            }
            other => panic!("not refused: {other:?}"),
        }
        let (told, heard) = std::sync::mpsc::channel();
        std::thread::scope(|scope| {
            let waiter = scope.spawn(|| {
                store.lock_for_execution(LockWait::Wait, "mccbuild import", move |holder| {
                    told.send(holder.to_string()).unwrap()
                })
            });
            let holder = heard.recv().unwrap();
            assert!(holder.contains("`mccbuild run`"), "{holder}");
            assert!(!waiter.is_finished());
            drop(held);
            waiter.join().unwrap().unwrap();
        });
        let text = std::fs::read_to_string(dir.path().join("lock")).unwrap();
        assert!(text.contains("`mccbuild import`"), "{text}");
    }
}
