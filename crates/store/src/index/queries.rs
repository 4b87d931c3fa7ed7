//! What the index answers: whether a run is stored, its record's digest and summary, where its
//! record lies, and the record itself.

use mccbuild_core::RunKey;
use mccbuild_core::digest::Digest;

use super::{Index, Meta, Place, Summary};
use crate::pack;
use crate::{CorruptRecord, RunRecord, Store};

impl Index {
    /// The position of a key in the index file.
    pub(super) fn file_position(&self, key: &RunKey) -> Option<usize> {
        self.file.position(key)
    }

    /// The positions of the file keys of one shard (a contiguous range: keys are sorted).
    pub(super) fn file_shard(&self, shard: usize) -> std::ops::Range<usize> {
        let buckets = &self.file.buckets;
        buckets[shard << 8] as usize..buckets[(shard + 1) << 8] as usize
    }

    pub(super) fn is_loose(&self, key: &RunKey) -> bool {
        matches!(self.meta_of(key).place, Place::Loose(_))
    }

    /// The digest and place known for a stored key.
    pub(super) fn meta_of(&self, key: &RunKey) -> Meta {
        if let Some(m) = self.meta.get(key) {
            return *m;
        }
        match self.file_position(key) {
            Some(p) if !self.added.contains_key(key) => Meta {
                digest: Some(self.file.digest(p)),
                place: self.file_places[p],
            },
            _ => Meta::default(),
        }
    }

    /// [`Index::meta_of`] the file key at position `i` (without looking it up).
    pub(super) fn meta_at(&self, i: usize) -> Meta {
        let in_file = Meta {
            digest: Some(self.file.digest(i)),
            place: self.file_places[i],
        };
        if self.meta.is_empty() && self.added.is_empty() {
            return in_file;
        }
        let key = self.file.key(i);
        if let Some(m) = self.meta.get(key) {
            return *m;
        }
        match self.added.contains_key(key) {
            true => Meta::default(),
            false => in_file,
        }
    }

    /// Whether the run is stored (`Some`) and its record's content digest: [`Index::contains`]
    /// and [`Index::digest`] in one lookup.
    pub fn lookup(&self, key: &RunKey) -> Option<Option<Digest>> {
        if self.meta.is_empty() && self.added.is_empty() && self.removed.is_empty() {
            return self.file_position(key).map(|p| Some(self.file.digest(p)));
        }
        self.contains(key).then(|| self.meta_of(key).digest)
    }

    /// [`Index::lookup`] of `count` keys (`key_at(0)`, `key_at(1)`...), each answer given to
    /// `found` in order: the same answers, faster for many keys than one lookup after the other
    /// (the memory of each lookup is fetched while the ones before it are answered).
    pub fn lookup_each<'k>(
        &self,
        count: usize,
        key_at: impl Fn(usize) -> &'k RunKey,
        mut found: impl FnMut(usize, Option<Option<Digest>>),
    ) {
        if self.meta.is_empty() && self.added.is_empty() && self.removed.is_empty() {
            self.file.positions(count, key_at, |i, p| {
                found(i, p.map(|p| Some(self.file.digest(p))))
            });
        } else {
            // What was learnt since the file was written (a delta) wins over the file.
            self.file.positions(count, &key_at, |i, p| {
                let key = key_at(i);
                let answer = if self.added.contains_key(key) {
                    Some(self.meta.get(key).and_then(|m| m.digest))
                } else {
                    match p {
                        Some(_) if self.removed.contains(key) => None,
                        Some(p) => Some(match self.meta.get(key) {
                            Some(m) => m.digest,
                            None => Some(self.file.digest(p)),
                        }),
                        None => None,
                    }
                };
                found(i, answer)
            });
        }
    }

    /// The content digest of a stored run's record (what cached views are keyed by).
    pub fn digest(&self, key: &RunKey) -> Option<Digest> {
        // A quiet store (nothing learnt since the file was written): one lookup.
        if self.meta.is_empty() && self.added.is_empty() && self.removed.is_empty() {
            return self.file_position(key).map(|p| self.file.digest(p));
        }
        if !self.contains(key) {
            return None;
        }
        self.meta_of(key).digest
    }

    /// Reads a stored run's whole record, loose or packed, and verifies it (`Ok(None)`: the
    /// run is not stored).
    pub fn read(
        &self,
        store: &Store,
        key: &RunKey,
    ) -> Result<Option<(RunRecord, Digest)>, CorruptRecord> {
        if !self.contains(key) {
            return Ok(None);
        }
        match self.meta_of(key).place {
            Place::Loose(_) => match store.get_verified(key)? {
                Some(found) => Ok(Some(found)),
                // Packed by a `mccbuild run` since this index was loaded (the pack is in place
                // before the loose file goes): the store's index as it is now says where.
                None => {
                    let now = self.reloaded.get_or_init(|| Box::new(Index::load(store).0));
                    match now.meta_of(key).place {
                        Place::Packed { .. } if now.contains(key) => now.read(store, key),
                        _ => Ok(None),
                    }
                }
            },
            Place::Packed { pack, offset, len } => {
                match pack::read_packed(store, pack, offset, len, key) {
                    // The pack written again without its damaged lines by a `mccbuild run`
                    // since this index was loaded: the store's index as it is now says where.
                    Err(_) if !pack::pack_path(store, pack).exists() => {
                        let now = self.reloaded.get_or_init(|| Box::new(Index::load(store).0));
                        match now.contains(key) && now.meta_of(key).place != self.meta_of(key).place
                        {
                            true => now.read(store, key),
                            false => Ok(None),
                        }
                    }
                    read => read.map(Some),
                }
            }
        }
    }

    /// The index file's record of where `key`'s record lies, for messages: its loose file, or
    /// its pack.
    pub fn record_location(&self, store: &Store, key: &RunKey) -> std::path::PathBuf {
        match self.meta_of(key).place {
            Place::Packed { pack, .. } if self.contains(key) => pack::pack_path(store, pack),
            _ => store.record_path(key),
        }
    }

    pub fn get(&self, key: &RunKey) -> Option<&Summary> {
        if let Some(s) = self.added.get(key) {
            return Some(s);
        }
        if self.removed.contains(key) {
            return None;
        }
        let position = self.file_position(key)?;
        self.summary_at(position)
    }

    /// Whether the run is stored (without decoding any summary).
    pub fn contains(&self, key: &RunKey) -> bool {
        self.added.contains_key(key)
            || (self.file_position(key).is_some() && !self.removed.contains(key))
    }

    pub fn len(&self) -> usize {
        self.file.len() - self.removed.len()
            + self
                .added
                .keys()
                .filter(|k| self.file_position(k).is_none())
                .count()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Up to `n` stored keys, those added since the index file was written first, for
    /// messages that read a few records (which ones is unspecified).
    pub fn some_keys(&self, n: usize) -> Vec<RunKey> {
        let added = self.added.keys();
        let in_file = self.file.keys().filter(|k| !self.removed.contains(*k));
        added.chain(in_file).take(n).copied().collect()
    }
}
