//! Keeping the index in step with `runs/`: the shard folders whose modification time moved are
//! listed again, and every indexed loose record is stat'ed; a record that appeared, went, or
//! changed since it was verified is read again and its digest checked.

use std::collections::HashSet;
use std::fs;
use std::io;

use mccbuild_core::RunKey;
use mccbuild_core::digest::Digest;
use mccbuild_core::stamp::FileStamp;
use mccbuild_core::timing::phase;

use super::stat_records::stat_moved;
use super::{Index, LoadReport, Meta, Place, SHARDS, Stamp, Summary};
use crate::{CorruptRecord, RunRecord, Store, parse_record_verified, verify_digest};

/// Reads one record file, checks its digest and key; returns it with its digest and stamp.
fn read_verified(store: &Store, key: &RunKey) -> Result<(RunRecord, Digest, Stamp), CorruptRecord> {
    let path = store.record_path(key);
    let cannot = |e: io::Error| CorruptRecord {
        path: path.clone(),
        reason: format!("cannot read: {e}"),
    };
    let mut file = fs::File::open(&path).map_err(cannot)?;
    let stamp = Stamp::of(&file.metadata().map_err(cannot)?);
    let mut bytes = Vec::with_capacity(stamp.size as usize);
    io::Read::read_to_end(&mut file, &mut bytes).map_err(cannot)?;
    let (record, digest) = parse_record_verified(&path, &bytes, key)?;
    Ok((record, digest, stamp))
}

/// The file's stamp, if its content still has this digest (and verifies).
fn stamp_if_digest(path: &std::path::Path, digest: &Digest) -> Option<Stamp> {
    let mut file = fs::File::open(path).ok()?;
    let stamp = Stamp::of(&file.metadata().ok()?);
    let mut bytes = Vec::new();
    io::Read::read_to_end(&mut file, &mut bytes).ok()?;
    (verify_digest(&bytes).ok()? == *digest).then_some(stamp)
}

/// A folder's whole stamp (`None`: it cannot be stat'ed).
pub(super) fn stamp_of(path: &std::path::Path) -> Option<FileStamp> {
    fs::metadata(path).ok().map(|meta| FileStamp::of(&meta))
}

/// The folder's modification time if it can be trusted to move at the next change: not when
/// the folder changed within the same clock tick as now ([`FileStamp::is_racy`]), as a second
/// change could then leave it as it is.
pub(super) fn settled(stamp: Option<FileStamp>) -> Option<i128> {
    stamp.filter(|s| !s.is_racy()).map(|s| s.mtime_ns)
}

impl Index {
    /// Brings the index up to date: the packs first (listed again when `packs/` changed, each
    /// read again when its file changed), then the shard folders whose modification time
    /// changed, then the stamp of every loose record.
    pub fn reconcile(&mut self, store: &Store, report: &mut LoadReport) {
        let t = phase("index: packs");
        self.reconcile_packs(store, report);
        drop(t);
        let t = phase("index: shard folders");
        let runs = store.root().join("runs");
        // The runs learnt since the index file was written, by shard (once, not per shard).
        let mut added_by_shard: Option<Vec<Vec<RunKey>>> = None;
        for shard in 0..SHARDS {
            let dir = runs.join(format!("{shard:02x}"));
            let stamp = stamp_of(&dir);
            let mtime = stamp.map(|s| s.mtime_ns);
            if mtime.is_some() && self.shard_mtimes[shard] == mtime {
                continue;
            }
            let added = added_by_shard.get_or_insert_with(|| {
                let mut by_shard = vec![Vec::new(); SHARDS];
                for k in self.added.keys() {
                    by_shard[k.0[0] as usize].push(*k);
                }
                by_shard
            });
            let added = std::mem::take(&mut added[shard]);
            let corrupt_here = self.relist_shard(store, shard, &dir, &added, report);
            // Nor when a record there was damaged: it is looked at again next time.
            let trusted = settled(stamp).filter(|_| !corrupt_here);
            if self.shard_mtimes[shard] != trusted {
                self.shard_mtimes[shard] = trusted;
                self.touch();
            }
        }
        drop(t);
        self.verify(store, report);
        self.report_pack_damage(report);
    }

    /// Lists one shard folder again: loose records that appeared are read and verified, those
    /// that disappeared leave the index. Returns whether a record there is damaged.
    fn relist_shard(
        &mut self,
        store: &Store,
        shard: usize,
        dir: &std::path::Path,
        added: &[RunKey],
        report: &mut LoadReport,
    ) -> bool {
        let mut present: HashSet<RunKey> = HashSet::new();
        if let Ok(listing) = fs::read_dir(dir) {
            for entry in listing.flatten() {
                let name = entry.file_name();
                if let Some(key) = name
                    .to_str()
                    .and_then(|n| n.strip_suffix(".json"))
                    .and_then(RunKey::from_hex)
                {
                    present.insert(key);
                }
            }
        }
        // Loose records gone (a packed record is not in this folder).
        let gone: Vec<RunKey> =
            self.file_shard(shard)
                .filter(|&i| {
                    let k = self.file.key(i);
                    matches!(self.meta_at(i).place, Place::Loose(_))
                        && !present.contains(k)
                        && (self.removed.is_empty() || !self.removed.contains(k))
                })
                .map(|i| *self.file.key(i))
                .chain(added.iter().copied().filter(|k| {
                    !present.contains(k) && self.added.contains_key(k) && self.is_loose(k)
                }))
                .collect();
        let mut gone = gone;
        gone.sort_unstable();
        gone.dedup();
        for key in gone {
            self.remove(&key);
            report.changed.push(key);
        }
        let mut corrupt_here = false;
        for key in present {
            let packed = match self.contains(&key).then(|| self.meta_of(&key)) {
                Some(Meta {
                    place: Place::Loose(_),
                    ..
                }) => continue,
                Some(m) => m.digest,
                None => None,
            };
            match read_verified(store, &key) {
                // Beside its packed copy: a leftover of packing, not a newer record.
                Ok((_, digest, _)) if packed == Some(digest) => {}
                Ok((record, digest, stamp)) => {
                    report.records_read += 1;
                    report.changed.push(key);
                    self.put_loose(key, &record, digest, stamp);
                }
                Err(corrupt) => {
                    corrupt_here = true;
                    report.corrupt.push(corrupt);
                }
            }
        }
        corrupt_here
    }

    /// A loose record just read and verified: stored, with its summary, digest and stamp.
    fn put_loose(&mut self, key: RunKey, record: &RunRecord, digest: Digest, stamp: Stamp) {
        self.removed.remove(&key);
        self.added.insert(key, Summary::of(record));
        self.meta.insert(
            key,
            Meta {
                digest: Some(digest),
                place: Place::Loose(Some(stamp)),
            },
        );
        self.touch();
    }
    /// Stats every indexed loose record; reads again and checks those whose file changed since
    /// they were verified (docs/cache.md, "Self-verifying records").
    fn verify(&mut self, store: &Store, report: &mut LoadReport) {
        let t = phase("index: stat every loose record");
        let loose_stamp = |place: Place| match place {
            Place::Loose(stamp) => Some(stamp),
            Place::Packed { .. } => None,
        };
        // The file's keys in file order (one shard folder after the other), compared with the
        // stamps at the same positions: no lookup per key.
        let mut moved = stat_moved(
            store,
            self.file.len(),
            |i| *self.file.key(i),
            |i| {
                let stamp = loose_stamp(self.meta_at(i).place)?;
                match !self.removed.is_empty() && self.removed.contains(self.file.key(i)) {
                    true => None,
                    false => Some(stamp),
                }
            },
        );
        // Then the keys learnt since the file was written.
        let mut extra: Vec<RunKey> = self
            .added
            .keys()
            .filter(|k| self.file_position(k).is_none() || self.removed.contains(k))
            .copied()
            .collect();
        extra.sort_unstable();
        moved.extend(stat_moved(
            store,
            extra.len(),
            |i| extra[i],
            |i| loose_stamp(self.meta_of(&extra[i]).place),
        ));
        drop(t);
        let _t = phase("index: check moved records");
        for (key, now) in moved {
            self.check_moved(store, key, now, report);
        }
    }

    /// A loose record whose file's stamp is not the one it was verified with.
    fn check_moved(
        &mut self,
        store: &Store,
        key: RunKey,
        now: Option<Stamp>,
        report: &mut LoadReport,
    ) {
        let known = self.meta_of(&key);
        let path = store.record_path(&key);
        if now.is_none() && !path.exists() {
            // Gone (its shard was listed within the same clock tick): no longer stored.
            self.remove(&key);
            report.changed.push(key);
            return;
        }
        // Same bytes as verified before (a copy, a touch): only the stamp is new.
        let same = match known.digest {
            Some(digest) => stamp_if_digest(&path, &digest),
            None => None,
        };
        if let Some(stamp) = same {
            self.meta.insert(
                key,
                Meta {
                    digest: known.digest,
                    place: Place::Loose(Some(stamp)),
                },
            );
            self.touch();
            return;
        }
        report.records_reverified += 1;
        match read_verified(store, &key) {
            Ok((record, digest, stamp)) => {
                // Another valid record of the same run (a rerun): its summary replaces the old.
                self.put_loose(key, &record, digest, stamp);
                report.changed.push(key);
            }
            Err(corrupt) => {
                self.remove(&key);
                self.shard_mtimes[key.0[0] as usize] = None;
                report.changed.push(key);
                report.corrupt.push(corrupt);
            }
        }
    }
}
