//! What the index learnt since its file was written, kept in a small file of its own beside it
//! (docs/cache.md, "The index's delta").
//!
//! Writing the whole index again (tens of megabytes at MCC size, then synced) because one record
//! changed cost a command more than all its scoring. So a save writes, while what was learnt is
//! small beside the index file, only that: the runs stored, changed or removed since the index
//! file was written (each with its digest, place and summary), and the shard folders' times and
//! the pack table as they are now. The delta names the index file it completes by that file's
//! two checksums: a delta whose index file was written again since (by a save whose delta had
//! grown too large, a packing, another process) does not apply to it and is not used. Either
//! file alone is a state of the store the index once held, so a delta that is missing, damaged,
//! or of another index file costs only the look at the records it would have saved: the shard
//! folders changed since the index file are listed again, the records changed are read again.
//!
//! ```text
//! frame (`mccbuild_core::framed`: magic "MCCBDLT1", version 2), bound to the index file's
//!   blake3(keys section) | its blake3(summaries section) (the digests its head holds),
//! payload: postcard of `Delta`
//! ```
//!
//! The frame's binding is what names the index file: a delta bound to other checksums is of
//! another index file and is not used, without a word (the next save replaces it). A delta of
//! another format or version, cut short or damaged is not used either, with a word.

use std::fs;
use std::io;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use mccbuild_core::RunKey;
use mccbuild_core::framed::{Format, FrameError};
use mccbuild_core::fsio::write_atomically;
use mccbuild_core::stamp::FileStamp;

use super::packs::PackTable;
use super::place::{Meta, PLACE, Place};
use super::summary::Entry;
use super::{Index, SHARDS};
use crate::Store;

/// The delta file's frame: its magic, and its version (2: framed, bound to its index file).
const DELTA: Format = Format::new(b"MCCBDLT1", 2);

/// A delta is written instead of the whole index while what was learnt holds no more than this
/// many runs, or an eighth of the index file's, whichever is more.
const DELTA_MAX: usize = 4096;

/// A learnt digest and place as a delta holds it: key, digest, place (as the index file holds
/// places).
type LearntMeta = ([u8; 32], Option<[u8; 32]>, [u8; PLACE]);

/// The body of a delta file.
#[derive(Serialize, Deserialize)]
struct Delta {
    shard_mtimes: Vec<Option<i128>>,
    table: PackTable,
    /// Digests and places learnt.
    metas: Vec<LearntMeta>,
    /// Runs stored or changed since the index file was written, with their summaries.
    added: Vec<([u8; 32], Entry)>,
    /// Runs of the index file no longer stored.
    removed: Vec<[u8; 32]>,
}

/// The delta file of a store.
pub(super) fn delta_path(store: &Store) -> PathBuf {
    store.root().join("index-delta.bin")
}

/// What reading the delta file found.
pub(super) enum Read {
    /// No delta file.
    Absent,
    /// A delta of this index file, applied.
    Applied,
    /// A delta of another index file (written again since): not used.
    Other,
    /// Damaged, cut short or unreadable: not used.
    Unusable(String),
}

impl Index {
    /// Whether a save should write a delta rather than the whole index.
    pub(super) fn delta_suffices(&self) -> bool {
        let learnt = self.meta.len() + self.added.len() + self.removed.len();
        self.file_id.is_some() && learnt <= DELTA_MAX.max(self.file.len() / 8)
    }

    /// Reads the store's delta file and, if it completes this index's file, applies it. The
    /// delta file's stamp (as read) is kept for the footing.
    pub(super) fn read_delta(&mut self, store: &Store) -> Read {
        let path = delta_path(store);
        let (bytes, stamp) = match fs::File::open(&path).and_then(|mut f| {
            use std::io::Read as _;
            let meta = f.metadata()?;
            let mut bytes = Vec::with_capacity(meta.len() as usize);
            f.read_to_end(&mut bytes)?;
            Ok((bytes, FileStamp::of(&meta)))
        }) {
            Ok(read) => read,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                self.delta_read = None;
                return Read::Absent;
            }
            Err(e) => return Read::Unusable(format!("cannot be read: {e}")),
        };
        self.delta_read = Some(stamp);
        // An index not read from a file is completed by no delta: an empty binding matches none.
        let binding = self.file_id.as_ref().map_or(&[][..], |id| &id[..]);
        let delta = match DELTA.decode_value::<Delta>(&bytes, binding) {
            Ok(delta) => delta,
            Err(FrameError::OtherBinding) => return Read::Other,
            Err(FrameError::OtherFormat | FrameError::OtherVersion { .. }) => {
                return Read::Unusable("not a delta of this mccbuild version".into());
            }
            Err(FrameError::Damaged) => {
                return Read::Unusable("checksum mismatch (damaged)".into());
            }
            Err(FrameError::Missing | FrameError::Io(_) | FrameError::Malformed(_)) => {
                return Read::Unusable("malformed".into());
            }
        };
        match self.apply(delta) {
            Some(()) => Read::Applied,
            None => Read::Unusable("malformed".into()),
        }
    }

    /// Applies a delta read from its file (`None`: it is not well formed; nothing is changed).
    fn apply(&mut self, delta: Delta) -> Option<()> {
        if delta.shard_mtimes.len() != SHARDS {
            return None;
        }
        let mut metas = Vec::with_capacity(delta.metas.len());
        for (key, digest, place) in delta.metas {
            metas.push((RunKey(key), digest, Place::from_bytes(&place)?));
        }
        let mut added = Vec::with_capacity(delta.added.len());
        for (key, entry) in delta.added {
            added.push((RunKey(key), entry.summary()?));
        }
        self.shard_mtimes = delta.shard_mtimes;
        self.packs_mtime = delta.table.mtime;
        self.packs = delta.table.packs();
        self.damage = delta.table.damage;
        for (key, digest, place) in metas {
            self.meta.insert(key, Meta { digest, place });
        }
        self.added.extend(added);
        self.removed.extend(delta.removed.into_iter().map(RunKey));
        Some(())
    }

    /// Writes what was learnt since the index file was written as the store's delta file.
    pub(super) fn write_delta(&mut self, store: &Store) -> io::Result<()> {
        let Some(file_id) = self.file_id else {
            return Err(io::Error::other("no index file to complete"));
        };
        let mut metas: Vec<_> = self
            .meta
            .iter()
            .map(|(k, m)| (k.0, m.digest, m.place.to_bytes()))
            .collect();
        metas.sort_unstable_by_key(|m| m.0);
        let mut added: Vec<_> = self
            .added
            .iter()
            .map(|(k, s)| (k.0, Entry::of(s)))
            .collect();
        added.sort_unstable_by_key(|a| a.0);
        let mut removed: Vec<[u8; 32]> = self.removed.iter().map(|k| k.0).collect();
        removed.sort_unstable();
        let delta = Delta {
            shard_mtimes: self.shard_mtimes.clone(),
            table: self.pack_table(),
            metas,
            added,
            removed,
        };
        let bytes = DELTA
            .encode_value(&file_id, &delta)
            .map_err(|e| io::Error::other(format!("the index's delta: {e}")))?;
        write_atomically(&delta_path(store), &bytes)?;
        // The file is not the one read: this index no longer rests on the files it read (its
        // footing is taken by the next command that reads them).
        self.delta_read = None;
        Ok(())
    }
}
