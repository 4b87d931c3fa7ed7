//! Content digests (blake3) cached by file identity, so that large inputs are hashed once.
//!
//! A file's digest is reused while its path, size, modification and change times and inode are
//! unchanged. A file modified in the last two seconds is not cached ("racy" timestamps: a second
//! write within the same tick could keep the same stamp). What is derived from a set of files
//! (an instance's facts) is cached the same way, keyed by their stamps. The cache lives in the
//! store (`meta/digests.bin`); losing it only costs rehashing.

use std::collections::HashMap;
use std::fs::{self, File};
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use mccbuild_core::digest::{hash_reader, Digest};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// What identifies a file's version without reading it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Stamp {
    pub size: u64,
    pub mtime_ns: i128,
    pub ctime_ns: i128,
    pub ino: u64,
    pub dev: u64,
}

impl Stamp {
    pub fn of(meta: &fs::Metadata) -> Stamp {
        Stamp {
            size: meta.len(),
            mtime_ns: meta.mtime() as i128 * 1_000_000_000 + meta.mtime_nsec() as i128,
            ctime_ns: meta.ctime() as i128 * 1_000_000_000 + meta.ctime_nsec() as i128,
            ino: meta.ino(),
            dev: meta.dev(),
        }
    }

    /// Whether the file was modified recently enough that its stamp cannot be trusted yet.
    pub fn is_racy(&self) -> bool {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos() as i128)
            .unwrap_or(0);
        now - self.mtime_ns < 2_000_000_000
    }
}

const CACHE_FORMAT: u32 = 3;

#[derive(Default, Serialize, Deserialize)]
struct CacheFile {
    format: u32,
    files: Vec<(String, Stamp, Digest)>,
    /// (path, digest of the stamps of its files, postcard of what was derived from them).
    derived: Vec<(String, Digest, Vec<u8>)>,
}

/// The digest cache of one mccbuild process.
#[derive(Default)]
pub struct DigestCache {
    path: Option<PathBuf>,
    files: HashMap<PathBuf, (Stamp, Digest)>,
    derived: HashMap<PathBuf, (Digest, Arc<[u8]>)>,
    dirty: bool,
    /// Files hashed by this process (for tests and statistics).
    pub hashed: usize,
}

impl DigestCache {
    /// An empty cache that is not saved.
    pub fn in_memory() -> DigestCache {
        DigestCache::default()
    }

    /// Loads the cache saved at `path` (an unreadable or old cache is ignored: it is rebuilt).
    pub fn load(path: &Path) -> DigestCache {
        let mut cache = DigestCache {
            path: Some(path.to_path_buf()),
            ..DigestCache::default()
        };
        if let Ok(bytes) = fs::read(path) {
            if let Ok(file) = postcard::from_bytes::<CacheFile>(&bytes) {
                if file.format == CACHE_FORMAT {
                    cache.files = file
                        .files
                        .into_iter()
                        .map(|(p, s, d)| (PathBuf::from(p), (s, d)))
                        .collect();
                    cache.derived = file
                        .derived
                        .into_iter()
                        .map(|(p, s, bytes)| (PathBuf::from(p), (s, Arc::from(bytes))))
                        .collect();
                }
            }
        }
        cache
    }

    /// Saves the cache if it changed (atomically: a crash leaves the old one or the new one).
    pub fn save(&mut self) -> io::Result<()> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        if !self.dirty {
            return Ok(());
        }
        let file = CacheFile {
            format: CACHE_FORMAT,
            files: self
                .files
                .iter()
                .map(|(p, (s, d))| (p.to_string_lossy().into_owned(), *s, *d))
                .collect(),
            derived: self
                .derived
                .iter()
                .map(|(p, (s, bytes))| (p.to_string_lossy().into_owned(), *s, bytes.to_vec()))
                .collect(),
        };
        let bytes = postcard::to_allocvec(&file).map_err(io::Error::other)?;
        mccbuild_core::fsio::write_atomically(path, &bytes)?;
        self.dirty = false;
        Ok(())
    }

    /// The blake3 digest of a file's content.
    pub fn file_digest(&mut self, path: &Path) -> io::Result<Digest> {
        let meta = fs::metadata(path)?;
        let stamp = Stamp::of(&meta);
        if let Some((cached, digest)) = self.files.get(path) {
            if *cached == stamp {
                return Ok(*digest);
            }
        }
        let digest = hash_reader(File::open(path)?)?;
        self.hashed += 1;
        if !stamp.is_racy() {
            self.files.insert(path.to_path_buf(), (stamp, digest));
            self.dirty = true;
        }
        Ok(digest)
    }

    /// What `compute` derives from a set of files (an instance's facts), cached while the stamps
    /// of those files are unchanged (one stamp for an archive, one per file for a folder).
    pub fn derived<T: Serialize + DeserializeOwned, E>(
        &mut self,
        path: &Path,
        stamps: &[(String, Stamp)],
        compute: impl FnOnce(&mut Self) -> Result<T, E>,
    ) -> Result<T, E> {
        let mut hasher = blake3::Hasher::new();
        for (name, stamp) in stamps {
            hasher.update(name.as_bytes());
            hasher.update(&[0]);
            hasher.update(&postcard::to_allocvec(stamp).unwrap_or_default());
        }
        let key = *hasher.finalize().as_bytes();
        if let Some((cached, bytes)) = self.derived.get(path) {
            if *cached == key {
                if let Ok(value) = postcard::from_bytes(bytes) {
                    return Ok(value);
                }
            }
        }
        let value = compute(self)?;
        self.hashed += 1;
        if !stamps.iter().any(|(_, s)| s.is_racy()) {
            if let Ok(bytes) = postcard::to_allocvec(&value) {
                self.derived
                    .insert(path.to_path_buf(), (key, Arc::from(bytes)));
                self.dirty = true;
            }
        }
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_are_cached_by_stamp_and_refreshed_on_change() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a");
        fs::write(&file, b"one").unwrap();
        // Age the file so that its stamp is trusted.
        filetime_ago(&file, 60);
        let mut cache = DigestCache::in_memory();
        let d1 = cache.file_digest(&file).unwrap();
        assert_eq!(cache.hashed, 1);
        assert_eq!(cache.file_digest(&file).unwrap(), d1);
        assert_eq!(cache.hashed, 1, "the second digest comes from the cache");
        fs::write(&file, b"two").unwrap();
        let d2 = cache.file_digest(&file).unwrap();
        assert_ne!(d1, d2);
        assert_eq!(cache.hashed, 2);
        // A racy (just written) file is hashed again each time.
        assert_eq!(cache.file_digest(&file).unwrap(), d2);
        assert_eq!(cache.hashed, 3);
    }

    #[test]
    fn cache_survives_a_save_and_load() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a");
        fs::write(&file, b"content").unwrap();
        filetime_ago(&file, 60);
        let store = dir.path().join("digests.bin");
        let mut cache = DigestCache::load(&store);
        let d = cache.file_digest(&file).unwrap();
        cache.save().unwrap();
        let mut again = DigestCache::load(&store);
        assert_eq!(again.file_digest(&file).unwrap(), d);
        assert_eq!(again.hashed, 0);
        // A corrupt cache is ignored.
        fs::write(&store, b"garbage").unwrap();
        let mut broken = DigestCache::load(&store);
        assert_eq!(broken.file_digest(&file).unwrap(), d);
        assert_eq!(broken.hashed, 1);
    }

    /// Sets a file's mtime `secs` seconds in the past.
    fn filetime_ago(path: &Path, secs: u64) {
        let t = SystemTime::now() - std::time::Duration::from_secs(secs);
        File::options()
            .write(true)
            .open(path)
            .unwrap()
            .set_modified(t)
            .unwrap();
    }
}
