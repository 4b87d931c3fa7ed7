//! A file's whole stamp: what identifies its version without reading it, and the one rule of
//! when it can be trusted (git's index does the same). Every cache that trusts a file by its
//! stamp uses this one: the digest cache, the plan snapshot's fingerprint, the store's index and
//! the remembered no-op.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

/// How long after its last change a file's stamp is not trusted (see [`FileStamp::is_racy`]).
pub const RACY_WINDOW: Duration = Duration::from_secs(2);

/// A file's or folder's whole stamp: size, modification and change times, inode, device and
/// mode. The change time moves with every write, truncation, rename over the file or attribute
/// change, and no user call can set it back.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct FileStamp {
    pub size: u64,
    pub mtime_ns: i128,
    pub ctime_ns: i128,
    pub ino: u64,
    pub dev: u64,
    pub mode: u32,
}

impl FileStamp {
    pub fn of(meta: &fs::Metadata) -> FileStamp {
        FileStamp {
            size: meta.size(),
            mtime_ns: meta.mtime() as i128 * 1_000_000_000 + meta.mtime_nsec() as i128,
            ctime_ns: meta.ctime() as i128 * 1_000_000_000 + meta.ctime_nsec() as i128,
            ino: meta.ino(),
            dev: meta.dev(),
            mode: meta.mode(),
        }
    }

    /// Whether the file changed less than [`RACY_WINDOW`] (two seconds) ago, by the later of its
    /// modification and change times: a second change within the same clock tick could leave
    /// this stamp as it is, so it cannot be trusted yet (the racy-git rule, the one rule of the
    /// digest cache, the index, the plan snapshot and the remembered no-op).
    pub fn is_racy(&self) -> bool {
        self.is_racy_at(SystemTime::now())
    }

    /// [`FileStamp::is_racy`] with the clock at `now` (for a caller, or a test, with its own
    /// clock).
    pub fn is_racy_at(&self, now: SystemTime) -> bool {
        let now = now
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as i128);
        now - self.mtime_ns.max(self.ctime_ns) < RACY_WINDOW.as_nanos() as i128
    }

    /// Feeds the stamp to `hasher`: size, modification time, change time, inode, device, mode,
    /// little-endian (a fingerprint's bytes: the order is part of its format).
    pub fn hash_into(&self, hasher: &mut blake3::Hasher) {
        hasher.update(&self.size.to_le_bytes());
        hasher.update(&self.mtime_ns.to_le_bytes());
        hasher.update(&self.ctime_ns.to_le_bytes());
        hasher.update(&self.ino.to_le_bytes());
        hasher.update(&self.dev.to_le_bytes());
        hasher.update(&self.mode.to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_moves_the_stamp_and_a_fresh_file_is_racy() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        fs::write(&path, b"a").unwrap();
        let before = FileStamp::of(&fs::metadata(&path).unwrap());
        assert!(before.is_racy(), "just written");
        fs::write(&path, b"ab").unwrap();
        let after = FileStamp::of(&fs::metadata(&path).unwrap());
        assert_ne!(before, after);
        let digest = |s: &FileStamp| {
            let mut h = blake3::Hasher::new();
            s.hash_into(&mut h);
            h.finalize()
        };
        assert_ne!(digest(&before), digest(&after));
    }

    #[test]
    fn the_later_of_the_two_times_decides_and_an_old_mtime_does_not_make_a_file_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        fs::write(&path, b"a").unwrap();
        fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(SystemTime::now() - Duration::from_secs(3600))
            .unwrap();
        let stamp = FileStamp::of(&fs::metadata(&path).unwrap());
        assert!(stamp.is_racy(), "its change time is now");
        let later = |secs: u64| SystemTime::now() + Duration::from_secs(secs);
        assert!(
            !stamp.is_racy_at(later(3)),
            "trusted once both times are old"
        );
        let ctime = UNIX_EPOCH + Duration::from_nanos(stamp.ctime_ns as u64);
        assert!(stamp.is_racy_at(ctime + RACY_WINDOW - Duration::from_millis(1)));
        assert!(!stamp.is_racy_at(ctime + RACY_WINDOW));
    }

    #[test]
    fn a_stamp_round_trips_through_postcard() {
        let dir = tempfile::tempdir().unwrap();
        let stamp = FileStamp::of(&fs::metadata(dir.path()).unwrap());
        let bytes = postcard::to_allocvec(&stamp).unwrap();
        assert_eq!(postcard::from_bytes::<FileStamp>(&bytes).unwrap(), stamp);
    }
}
