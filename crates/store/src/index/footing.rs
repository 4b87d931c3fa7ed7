//! What a loaded index's verdict rests on, as the stamps of the store's files: the ground of the
//! remembered no-op (docs/cache.md, "The remembered no-op").
//!
//! Loading the index decides which runs are stored from the index file and from the stamps of
//! the files it checks (every shard folder, the `packs/` folder, every pack, every loose record:
//! docs/cache.md, "Exactly what is checked"). When those stamps are, now, exactly the ones the
//! loaded index holds (so that loading it again would read the same file and change nothing),
//! and none is too fresh to be trusted, [`Index::footing`] lists those files with one digest of
//! their stamps. A later command that finds the same digest for the same files knows that the
//! index would load to the same content without decoding it: that is the same check the index
//! makes, done with the same stamps.

use std::fs;
use std::path::Path;

use mccbuild_core::digest::Digest;
pub use mccbuild_core::stamp::FileStamp;

use mccbuild_core::RunKey;

use super::{Index, Place, SHARDS, Stamp};
use crate::Store;
use crate::pack;

/// The files (relative to the store's root) a loaded index rests on, and one digest of their
/// stamps as they were when it was loaded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Footing {
    pub paths: Vec<String>,
    pub digest: Digest,
}

/// The stamps, now, of `paths` (relative to the store at `root`; a path that cannot be stat'ed
/// counts as such), as one digest, and whether one of them is too fresh to be trusted.
pub fn stamps_digest(root: &Path, paths: &[String]) -> (Digest, bool) {
    let mut hasher = blake3::Hasher::new();
    let mut racy = false;
    for path in paths {
        let meta = fs::symlink_metadata(root.join(path)).ok();
        racy |= put_entry(&mut hasher, path, meta.as_ref());
    }
    (*hasher.finalize().as_bytes(), racy)
}

/// One path and its stamp into `hasher`; whether the stamp is too fresh to be trusted.
fn put_entry(hasher: &mut blake3::Hasher, path: &str, meta: Option<&fs::Metadata>) -> bool {
    hasher.update(&(path.len() as u64).to_le_bytes());
    hasher.update(path.as_bytes());
    match meta {
        Some(meta) => {
            let stamp = FileStamp::of(meta);
            hasher.update(&[1]);
            stamp.hash_into(hasher);
            stamp.is_racy()
        }
        None => {
            hasher.update(&[0]);
            false
        }
    }
}

impl Index {
    /// What this index, as loaded, rests on (module documentation): `None` unless it is exactly
    /// its file (nothing learnt since the file was written, no damage it reports, no packing
    /// left unfinished) and every shard folder, the `packs/` folder, each pack, each loose record
    /// and the index file itself have, now, the stamps the index holds for them (the index
    /// file: the one it had when it was read), none of them too fresh to be trusted.
    pub fn footing(&self, store: &Store) -> Option<Footing> {
        // Damage still reported (a damaged line whose run has no other record) is said by every
        // load: not a no-op to remember.
        let damage = self
            .damage
            .iter()
            .any(|d| d.key.is_none_or(|k| !self.contains(&k)));
        if self.dirty || damage || self.reloaded.get().is_some() {
            return None;
        }
        let loaded_from = self.loaded_from?;
        let root = store.root();
        // Each file is stat'ed once: what is compared with the index is what is hashed.
        let mut hasher = blake3::Hasher::new();
        let mut racy = false;
        let mut paths: Vec<String> = Vec::with_capacity(SHARDS + 2 + self.packs.len());
        let mut take = |path: String, meta: Option<&fs::Metadata>| {
            racy |= put_entry(&mut hasher, &path, meta);
            paths.push(path);
        };
        let stat = |path: &str| fs::symlink_metadata(root.join(path)).ok();
        // The index file, as it was read.
        let index = store
            .index_path()
            .strip_prefix(root)
            .ok()?
            .to_string_lossy()
            .into_owned();
        let meta = stat(&index);
        if meta.as_ref().map(FileStamp::of) != Some(loaded_from) {
            return None;
        }
        take(index, meta.as_ref());
        // The delta that completed it, as it was read (or its absence).
        let path = "index-delta.bin".to_string();
        debug_assert_eq!(super::delta::delta_path(store), root.join(&path));
        let meta = stat(&path);
        if meta.as_ref().map(FileStamp::of) != self.delta_read {
            return None;
        }
        take(path, meta.as_ref());
        // The packs: the folder as last listed, each pack as verified, no packing unfinished.
        if pack::packs_dir(store).join("PACKING").exists() {
            return None;
        }
        let meta = stat("packs");
        match meta.as_ref().map(mtime_ns) {
            Some(mtime) if self.packs_mtime == Some(mtime) => {}
            None if self.packs.is_empty() => {}
            _ => return None,
        }
        take("packs".to_string(), meta.as_ref());
        for (&p, &stamp) in &self.packs {
            let path = format!("packs/{p:08}.jsonl");
            let meta = stat(&path);
            if stamp.is_none() || meta.as_ref().map(Stamp::of) != stamp {
                return None;
            }
            take(path, meta.as_ref());
        }
        // The shard folders, as last listed (a missing one holds no record, and is listed by
        // every load).
        for shard in 0..SHARDS {
            let path = format!("runs/{shard:02x}");
            let meta = stat(&path);
            match meta.as_ref().map(mtime_ns) {
                Some(mtime) if self.shard_mtimes[shard] == Some(mtime) => {}
                None => {}
                _ => return None,
            }
            take(path, meta.as_ref());
        }
        // Every loose record, as verified: the file's, then those learnt since.
        let mut learnt: Vec<RunKey> = self
            .added
            .keys()
            .filter(|k| self.file_position(k).is_none())
            .copied()
            .collect();
        learnt.sort_unstable();
        let file_keys = (0..self.file.len())
            .filter(|&i| self.removed.is_empty() || !self.removed.contains(self.file.key(i)))
            .map(|i| (*self.file.key(i), self.meta_at(i).place));
        let learnt_keys = learnt.into_iter().map(|k| (k, self.meta_of(&k).place));
        for (key, place) in file_keys.chain(learnt_keys) {
            if let Place::Loose(stamp) = place {
                let path = format!("runs/{:02x}/{}.json", key.0[0], key.hex());
                let meta = stat(&path);
                if stamp.is_none() || meta.as_ref().map(Stamp::of) != stamp {
                    return None;
                }
                take(path, meta.as_ref());
            }
        }
        let digest = *hasher.finalize().as_bytes();
        (!racy).then_some(Footing { paths, digest })
    }

    /// How many records are loose (not yet packed).
    pub fn loose_records(&self) -> usize {
        self.loose_count()
    }
}

/// A folder's modification time in nanoseconds, as the index keeps it.
fn mtime_ns(meta: &fs::Metadata) -> i128 {
    FileStamp::of(meta).mtime_ns
}
