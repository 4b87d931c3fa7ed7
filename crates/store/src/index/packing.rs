//! Packing: loose records gathered into packs (`crate::pack`), and new records put straight into
//! packs, with the index placing them there before any loose file goes.

use std::collections::HashSet;
use std::fs;
use std::io;

use mccbuild_core::RunKey;
use mccbuild_core::digest::Digest;
use mccbuild_core::fsio::write_atomically;
use mccbuild_core::timing::phase;

use super::{Index, Meta, PackOutcome, Place, SHARDS, Stamp, Summary};
use crate::pack;
use crate::{RunRecord, Store, verify_digest};

impl Index {
    /// Packs the loose records into segment files (`crate::pack`) when there are at least
    /// `min_loose` of them; the caller holds the store's execution lock. Each record is read
    /// and verified again; a pack is written whole and synced, then the index saved with the
    /// records' new places, and only then are the loose files removed: a process killed at any
    /// point leaves every record readable (at worst twice: the loose copy counts until the
    /// index knows the pack, and is removed by the next packing).
    pub fn pack(&mut self, store: &Store, min_loose: usize) -> io::Result<PackOutcome> {
        let mut outcome = PackOutcome::default();
        // Present while a packing is under way: a killed one may have left loose copies.
        let marker = pack::packs_dir(store).join("PACKING");
        let interrupted = marker.exists();
        if self.loose_count() < min_loose.max(1) && !interrupted {
            return Ok(outcome);
        }
        pack::remove_temporaries(store);
        fs::create_dir_all(pack::packs_dir(store))?;
        write_atomically(
            &marker,
            b"a packing of loose records is under way (mccbuild)\n",
        )?;
        let leftovers = if interrupted {
            self.packed_leftovers(store)
        } else {
            Vec::new()
        };
        let mut loose: Vec<RunKey> = Vec::new();
        if self.loose_count() >= min_loose.max(1) {
            loose = self
                .file
                .keys()
                .filter(|k| !self.removed.contains(k) && !self.added.contains_key(k))
                .chain(self.added.keys())
                .filter(|k| self.is_loose(k))
                .copied()
                .collect();
        }
        loose.sort_unstable();
        let mut next = self.next_pack_number(store)?;
        let mut packed: Vec<RunKey> = Vec::new();
        let mut start = 0;
        while start < loose.len() {
            let t = phase("pack: read and verify loose records");
            let (batch, end) = self.next_batch(store, &loose, start);
            drop(t);
            let _t = phase("pack: write packs");
            start = end;
            if batch.is_empty() {
                continue;
            }
            let lines: Vec<(RunKey, &[u8], Digest)> = batch
                .iter()
                .map(|(k, b, d)| (*k, b.as_slice(), *d))
                .collect();
            self.add_pack(store, next, &lines)?;
            packed.extend(batch.iter().map(|(k, _, _)| *k));
            outcome.records += batch.len();
            outcome.packs.push(pack::pack_path(store, next));
            next += 1;
        }
        // The index knows the packs before any loose file goes.
        self.packs_mtime = None;
        let t = phase("pack: save the index");
        self.write(store)?;
        drop(t);
        let _t = phase("pack: remove loose files");
        for key in packed.iter().chain(&leftovers) {
            fs::remove_file(store.record_path(key)).or_else(|e| match e.kind() {
                io::ErrorKind::NotFound => Ok(()),
                _ => Err(e),
            })?;
        }
        // The shard folders' times moved: the next load lists them again (and finds nothing
        // new), so the index need not be written again here.
        outcome.leftovers = leftovers.len();
        fs::remove_file(&marker)?;
        Ok(outcome)
    }

    /// Stores many new records straight into packs (an import, a generated store), without a
    /// loose file each: the packs are written and synced, then the index saved. A process killed
    /// in between leaves packs the next load finds and verifies. Returns the records' content
    /// digests, in order.
    pub fn put_packed(&mut self, store: &Store, records: &[RunRecord]) -> io::Result<Vec<Digest>> {
        let mut digests = Vec::with_capacity(records.len());
        let mut next = self.next_pack_number(store)?;
        let mut start = 0;
        while start < records.len() {
            let mut lines: Vec<Vec<u8>> = Vec::new();
            let mut bytes_in = 0u64;
            while start + lines.len() < records.len() && bytes_in < pack::PACK_MAX_BYTES {
                let (bytes, digest) = crate::encode_record(&records[start + lines.len()])?;
                bytes_in += bytes.len() as u64 + 1;
                digests.push(digest);
                lines.push(bytes);
            }
            let batch = &records[start..start + lines.len()];
            let entries: Vec<(RunKey, &[u8], Digest)> = batch
                .iter()
                .zip(&lines)
                .zip(&digests[start..])
                .map(|((r, bytes), d)| (r.key, bytes.as_slice(), *d))
                .collect();
            self.add_pack(store, next, &entries)?;
            for record in batch {
                self.removed.remove(&record.key);
                self.added.insert(record.key, Summary::of(record));
            }
            start += lines.len();
            next += 1;
        }
        self.packs_mtime = None;
        self.touch();
        self.write(store)?;
        Ok(digests)
    }

    /// The number of the next pack: after every pack the index knows and every pack in `packs/`.
    pub(super) fn next_pack_number(&self, store: &Store) -> io::Result<u32> {
        Ok(self
            .packs
            .keys()
            .copied()
            .chain(pack::list_packs(store)?)
            .max()
            .map_or(1, |p| p + 1))
    }

    /// Writes pack `number` of these records (each a record file's bytes with its key and
    /// digest) and places them there in the index.
    pub(super) fn add_pack(
        &mut self,
        store: &Store,
        number: u32,
        records: &[(RunKey, &[u8], Digest)],
    ) -> io::Result<()> {
        let lines: Vec<&[u8]> = records.iter().map(|(_, bytes, _)| *bytes).collect();
        let places = pack::write_pack(store, number, &lines)?;
        let stamp = fs::symlink_metadata(pack::pack_path(store, number))?;
        for ((key, _, digest), (offset, len)) in records.iter().zip(places) {
            let place = Place::Packed {
                pack: number,
                offset,
                len,
            };
            self.meta.insert(
                *key,
                Meta {
                    digest: Some(*digest),
                    place,
                },
            );
        }
        self.packs.insert(number, Some(Stamp::of(&stamp)));
        self.touch();
        Ok(())
    }

    /// How many stored runs have a loose record.
    pub(super) fn loose_count(&self) -> usize {
        let loose = |p: &Place| matches!(p, Place::Loose(_));
        if self.meta.is_empty() && self.added.is_empty() && self.removed.is_empty() {
            return self.file_places.iter().filter(|p| loose(p)).count();
        }
        // The file's count, then each key learnt since counted as it is now instead.
        let mut count = self.file_places.iter().filter(|p| loose(p)).count();
        let touched: HashSet<&RunKey> = self
            .meta
            .keys()
            .chain(self.added.keys())
            .chain(self.removed.iter())
            .collect();
        for key in touched {
            if self
                .file_position(key)
                .is_some_and(|p| loose(&self.file_places[p]))
            {
                count -= 1;
            }
            if self.contains(key) && self.is_loose(key) {
                count += 1;
            }
        }
        count
    }

    /// The next records to pack from `loose[start..]`, up to [`pack::PACK_MAX_BYTES`]: each
    /// read and verified again (one that changed since the index verified it stays loose: the
    /// next load looks at it). Returns them and where the next batch starts.
    #[allow(clippy::type_complexity)]
    fn next_batch(
        &self,
        store: &Store,
        loose: &[RunKey],
        start: usize,
    ) -> (Vec<(RunKey, Vec<u8>, Digest)>, usize) {
        let mut batch = Vec::new();
        let mut bytes_in = 0u64;
        let mut i = start;
        while i < loose.len() && bytes_in < pack::PACK_MAX_BYTES {
            let key = loose[i];
            i += 1;
            let known = self.meta_of(&key);
            let Ok((bytes, meta)) = pack::read_all(&store.record_path(&key)) else {
                continue;
            };
            let stamp_ok = match known.place {
                Place::Loose(Some(s)) => s == Stamp::of(&meta),
                _ => true,
            };
            match verify_digest(&bytes) {
                Ok(d) if stamp_ok && Some(d) == known.digest && !bytes.contains(&b'\n') => {
                    bytes_in += bytes.len() as u64 + 1;
                    batch.push((key, bytes, d));
                }
                _ => {}
            }
        }
        (batch, i)
    }

    /// Loose files that a killed packing left beside their packed copies (same content digest).
    fn packed_leftovers(&self, store: &Store) -> Vec<RunKey> {
        let mut leftovers = Vec::new();
        for shard in 0..SHARDS {
            let dir = store.root().join("runs").join(format!("{shard:02x}"));
            let Ok(listing) = fs::read_dir(&dir) else {
                continue;
            };
            for entry in listing.flatten() {
                let Some(key) = entry
                    .file_name()
                    .to_str()
                    .and_then(|n| n.strip_suffix(".json"))
                    .and_then(RunKey::from_hex)
                else {
                    continue;
                };
                let known = self.meta_of(&key);
                if !self.contains(&key) || matches!(known.place, Place::Loose(_)) {
                    continue;
                }
                let same = fs::read(entry.path())
                    .ok()
                    .and_then(|b| verify_digest(&b).ok());
                if same.is_some() && same == known.digest {
                    leftovers.push(key);
                }
            }
        }
        leftovers
    }
}
