//! The remembered no-op (docs/cache.md, "The remembered no-op"): what a contest's commands found
//! when every planned run was stored, kept in `cache/meta/noop-<digest of the manifest's
//! path>.bin` under a key of everything that finding rests on, so that a no-op `mccbuild run`,
//! `run --json` and `plan` answer without reading the plan snapshot's body or the index.
//!
//! The key is a digest of the plan snapshot's fingerprint (the contest as loaded, the executor's
//! key ingredients, the binary's stamp, the stamps of every results, tool and instance file),
//! the stamps of the reference answers and corrections, and the stamps of the store's files the
//! index's verdict rests on ([`mccbuild_store::index::Footing`]: the index file, the shard
//! folders, the packs and their folder, every loose record). Nothing is remembered, nor used,
//! while one of those stamps is too recent to be trusted ([`FileStamp::is_racy`], the one racy
//! rule: the footing and the fingerprints apply it).
//!
//! ```text
//! frame (`mccbuild_core::framed`: magic "MCCBNOOP", version 3), no binding,
//! payload: postcard of `Recalled` (its key, the store's files and the digest of their stamps,
//!   what it remembers)
//! ```
//!
//! The key is in the payload, not the binding: a reader learns it from the file and compares it
//! with the one it computes. A memo of another format or version, cut short or damaged (it fails
//! the frame's digest) is not used, without a word, and the next full no-op replaces it.
//!
//! [`FileStamp::is_racy`]: mccbuild_core::stamp::FileStamp::is_racy

use std::path::{Path, PathBuf};

use mccbuild_core::digest::Digest;
use mccbuild_core::framed::Format;
use serde::{Deserialize, Serialize};

/// The memo file's frame. (1: a text head, the store files' digest not apart; 2: a text head
/// with the key and a blake3 digest, a JSON body; 3: framed, postcard.)
const FORMAT: Format = Format::new(b"MCCBNOOP", 3);

/// What the key's digest starts from (the key is as it was before the frame: a memo's key does
/// not depend on its file's format).
const KEY_DOMAIN: &str = "mccbuild no-op 2";

/// What every planned run being stored comes to, for the commands that answer from it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Remembered {
    /// The planned runs, all stored.
    pub runs: usize,
    /// Per tool of the plan (its declared tools and those of results files), its runs.
    pub by_tool: Vec<(String, usize)>,
    /// The key of the cached podium report ([`crate::results_cache`]).
    pub results: Digest,
    /// How many of the store's records are loose (a `run` packs them past a count).
    pub loose: usize,
}

/// A memo as written and read (the file's payload): its key, the store's files it rests on with
/// the digest of their stamps then, what it remembers.
#[derive(Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Recalled {
    pub key: Digest,
    /// The store's files the finding rests on (relative to the store's root).
    pub store_files: Vec<String>,
    /// The digest of their stamps then (also in the key): a command that finds other stamps
    /// knows the memo does not hold before it takes the plan's fingerprint.
    pub store_digest: Digest,
    pub remembered: Remembered,
}

/// Where the remembered no-op of the contest at `manifest` lives in the store's `meta` folder
/// (one per manifest, as the plan snapshot).
pub fn path(meta_dir: &Path, manifest: &Path) -> PathBuf {
    let manifest = std::fs::canonicalize(manifest).unwrap_or_else(|_| manifest.to_path_buf());
    let digest = blake3::hash(manifest.to_string_lossy().as_bytes());
    meta_dir.join(format!("noop-{}.bin", &digest.to_hex()[..16]))
}

/// The key of a remembered no-op: the plan's fingerprint, the answers' stamps and the digest of
/// the store files' stamps.
pub fn key(plan: &Digest, answers: &Digest, store_files: &Digest) -> Digest {
    let mut hasher = blake3::Hasher::new();
    hasher.update(KEY_DOMAIN.as_bytes());
    for part in [plan, answers, store_files] {
        hasher.update(part);
    }
    *hasher.finalize().as_bytes()
}

/// The file at `path`, if it is whole and of this format.
pub fn read(path: &Path) -> Option<Recalled> {
    FORMAT.read_value(path, b"").ok()
}

/// The key of the no-op remembered at `path`, if there is a whole one.
pub fn key_at(path: &Path) -> Option<Digest> {
    read(path).map(|memo| memo.key)
}

/// Keeps `remembered` at `path` under `key`, with the store's files it rests on and the digest
/// of their stamps. Atomic: a reader sees the old file or the new.
pub fn write(
    path: &Path,
    key: &Digest,
    store_files: Vec<String>,
    store_digest: &Digest,
    remembered: Remembered,
) -> std::io::Result<()> {
    let memo = Recalled {
        key: *key,
        store_files,
        store_digest: *store_digest,
        remembered,
    };
    // As the plan snapshot: renamed into place without a sync (a torn file fails its digest).
    let bytes = FORMAT.encode_value(b"", &memo)?;
    mccbuild_core::fsio::write_atomically_in_batch(path, &bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mccbuild_core::digest::hex;

    fn sample() -> Remembered {
        Remembered {
            runs: 3,
            by_tool: vec![("a".into(), 2), ("b".into(), 1)],
            results: [9; 32],
            loose: 1,
        }
    }

    #[test]
    fn a_remembered_no_op_reads_back_and_a_damaged_one_does_not() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("noop.bin");
        write(
            &path,
            &[7; 32],
            vec!["index.bin".into()],
            &[6; 32],
            sample(),
        )
        .unwrap();
        let memo = read(&path).expect("whole");
        assert_eq!(memo.key, [7; 32]);
        assert_eq!(memo.store_files, vec!["index.bin".to_string()]);
        assert_eq!(memo.store_digest, [6; 32]);
        assert_eq!(memo.remembered, sample());
        assert_eq!(key_at(&path), Some([7; 32]));
        let whole = std::fs::read(&path).unwrap();
        for at in [0, 20, whole.len() / 2, whole.len() - 2] {
            let mut bytes = whole.clone();
            bytes[at] ^= 0x04;
            std::fs::write(&path, &bytes).unwrap();
            assert!(read(&path).is_none(), "byte {at} flipped");
        }
        for len in [0, 10, whole.len() - 1] {
            std::fs::write(&path, &whole[..len]).unwrap();
            assert!(read(&path).is_none(), "cut at {len}");
        }
        // A memo of the format before the frame (a text head, a JSON body) is not read.
        let head = format!("mccbuild no-op 2 {} {}\n", hex(&[7; 32]), hex(&[5; 32]));
        std::fs::write(&path, [head.as_bytes(), b"{}"].concat()).unwrap();
        assert!(read(&path).is_none(), "format 2");
        // Nor one of another version of the frame.
        let older = Format::new(b"MCCBNOOP", 2);
        let memo = Recalled {
            key: [7; 32],
            store_files: vec![],
            store_digest: [6; 32],
            remembered: sample(),
        };
        std::fs::write(&path, older.encode_value(b"", &memo).unwrap()).unwrap();
        assert!(read(&path).is_none(), "version 2 of the frame");
        std::fs::write(&path, &whole).unwrap();
        assert!(read(&path).is_some());
    }

    #[test]
    fn every_part_changes_the_key() {
        let base = key(&[1; 32], &[2; 32], &[3; 32]);
        assert_ne!(base, key(&[0; 32], &[2; 32], &[3; 32]));
        assert_ne!(base, key(&[1; 32], &[0; 32], &[3; 32]));
        assert_ne!(base, key(&[1; 32], &[2; 32], &[0; 32]));
    }
}
