//! Content digests (blake3) cached by file identity, so that large inputs are hashed once.
//!
//! A file's digest is reused while its path and its stamp ([`FileStamp`]: size, modification and
//! change times, inode, device, mode) are unchanged. A file changed in the last two seconds is
//! not cached (the stamp's one racy rule, [`FileStamp::is_racy`]: a second write within the same
//! tick could keep the same stamp). What is derived from a set of files (an instance's facts) is
//! cached the same way, keyed by their stamps. The cache lives in the store (`meta/digests.bin`,
//! one framed file, `mccbuild_core::framed`); losing it, or a damaged one, only costs rehashing.

use std::collections::HashMap;
use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use mccbuild_core::digest::{Digest, hash_reader};
use mccbuild_core::framed::Format;
use mccbuild_core::stamp::FileStamp;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// The cache file's frame: a cache of another version, damaged or of another kind is not read
/// (it is rebuilt; nothing is said). (3: its own format number, no frame; 4: framed, core's
/// [`FileStamp`] with its mode; 5: an instance's facts refuse XML files that are not UTF-8.)
const FORMAT: Format = Format::new(b"MCCBDIGS", 5);

/// The cache file's payload (postcard).
#[derive(Default, Serialize, Deserialize)]
struct CacheFile {
    files: Vec<(String, FileStamp, Digest)>,
    /// (path, digest of the stamps of its files, postcard of what was derived from them).
    derived: Vec<(String, Digest, Vec<u8>)>,
}

/// The digest cache of one mccbuild process.
#[derive(Default)]
pub struct DigestCache {
    path: Option<PathBuf>,
    files: HashMap<PathBuf, (FileStamp, Digest)>,
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
        if let Ok(file) = FORMAT.read_value::<CacheFile>(path, b"") {
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
        FORMAT.write_value(path, b"", &file)?;
        self.dirty = false;
        Ok(())
    }

    /// The blake3 digest of a file's content.
    pub fn file_digest(&mut self, path: &Path) -> io::Result<Digest> {
        let meta = fs::metadata(path)?;
        let stamp = FileStamp::of(&meta);
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
        stamps: &[(String, FileStamp)],
        compute: impl FnOnce(&mut Self) -> Result<T, E>,
    ) -> Result<T, E> {
        let mut hasher = blake3::Hasher::new();
        for (name, stamp) in stamps {
            hasher.update(name.as_bytes());
            hasher.update(&[0]);
            stamp.hash_into(&mut hasher);
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
        // Let the file age so that its stamp is trusted.
        age();
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
        age();
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
        // So are a cache of the version before and a damaged one (a byte flipped).
        let saved = FORMAT.encode_value(b"", &CacheFile::default()).unwrap();
        let mut before = saved.clone();
        before[8..12].copy_from_slice(&(FORMAT.version - 1).to_le_bytes());
        let mut flipped = FORMAT
            .encode_value(
                b"",
                &CacheFile {
                    files: vec![(file.to_string_lossy().into_owned(), stamp_of(&file), d)],
                    derived: Vec::new(),
                },
            )
            .unwrap();
        let last = flipped.len() - 1;
        flipped[last] ^= 1;
        for bytes in [before, flipped] {
            fs::write(&store, &bytes).unwrap();
            let mut unused = DigestCache::load(&store);
            assert_eq!(unused.file_digest(&file).unwrap(), d);
            assert_eq!(unused.hashed, 1);
        }
    }

    fn stamp_of(path: &Path) -> FileStamp {
        FileStamp::of(&fs::metadata(path).unwrap())
    }

    /// Waits until what was written before is old enough to be trusted (a file's change time
    /// cannot be set back, so a test cannot age a file otherwise).
    fn age() {
        std::thread::sleep(
            mccbuild_core::stamp::RACY_WINDOW + std::time::Duration::from_millis(100),
        );
    }
}
