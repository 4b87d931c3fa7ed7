//! A file's whole stamp: what identifies its version without reading it (git's index, the plan
//! snapshot's fingerprint and the remembered no-op trust it the same way).

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::time::{SystemTime, UNIX_EPOCH};

/// A file's or folder's whole stamp: size, modification and change times, inode, device and
/// mode. The change time moves with every write, truncation, rename over the file or attribute
/// change, and no user call can set it back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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

    /// Whether the file changed less than two seconds ago: a second change within the same
    /// clock tick could leave this stamp as it is, so it cannot be trusted yet (the racy-git
    /// rule of the digest cache, the index, the plan snapshot and the remembered no-op).
    pub fn is_racy(&self) -> bool {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as i128);
        now - self.mtime_ns.max(self.ctime_ns) < 2_000_000_000
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
}
