//! The packs as the index knows them: the pack table (each pack's stamp, the damaged lines
//! found) and keeping it in step with `packs/` (`crate::pack` writes and reads the packs).

use std::collections::{BTreeMap, HashSet};
use std::fs;
use std::io;

use serde::{Deserialize, Serialize};

use mccbuild_core::RunKey;

use super::reconcile::{settled, stamp_of};
use super::{Index, LoadReport, Meta, Place, Stamp};
use crate::pack;
use crate::{CorruptRecord, Store};

/// A damaged line of a pack, found when the pack was last read: reported by every load while
/// its run has no other record (the pack is not read again until its file changes).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) struct PackDamage {
    pub(super) pack: u32,
    pub(super) key: Option<RunKey>,
    pub(super) path: String,
    pub(super) reason: String,
}

/// A stamp as the pack table holds it: size, change time (ns), inode.
type StampFields = (u64, i64, u64);

/// The packs as the index file holds them.
#[derive(Default, Serialize, Deserialize)]
pub(super) struct PackTable {
    /// The `packs/` folder's modification time when last listed (None: list it).
    pub(super) mtime: Option<i128>,
    /// Each pack's number and its file's stamp when it was verified.
    pub(super) packs: Vec<(u32, Option<StampFields>)>,
    pub(super) damage: Vec<PackDamage>,
}

impl PackTable {
    /// The packs as the index keeps them: each pack's number and stamp.
    pub(super) fn packs(&self) -> BTreeMap<u32, Option<Stamp>> {
        self.packs
            .iter()
            .map(|&(p, s)| {
                let stamp = s.map(|(size, ctime_ns, ino)| Stamp {
                    size,
                    ctime_ns,
                    ino,
                });
                (p, stamp)
            })
            .collect()
    }
}

impl Index {
    /// The pack table as the index and delta files hold it.
    pub(super) fn pack_table(&self) -> PackTable {
        PackTable {
            mtime: self.packs_mtime,
            packs: self
                .packs
                .iter()
                .map(|(p, s)| (*p, s.map(|s| (s.size, s.ctime_ns, s.ino))))
                .collect(),
            damage: self.damage.clone(),
        }
    }

    /// Lists `packs/` again when it changed (a pack added or removed), reads again each pack
    /// whose file changed since it was verified, and reports the damaged lines known.
    pub(super) fn reconcile_packs(&mut self, store: &Store, report: &mut LoadReport) {
        let mut read_now: HashSet<u32> = HashSet::new();
        let stamp = stamp_of(&pack::packs_dir(store));
        let mtime = stamp.map(|s| s.mtime_ns);
        if mtime.is_none() || self.packs_mtime != mtime {
            match pack::list_packs(store) {
                Ok(listed) => {
                    let gone: Vec<u32> = self
                        .packs
                        .keys()
                        .filter(|p| !listed.contains(p))
                        .copied()
                        .collect();
                    for p in gone {
                        self.drop_pack(p, report);
                    }
                    for p in listed {
                        if !self.packs.contains_key(&p) {
                            self.read_pack(store, p, report);
                            read_now.insert(p);
                        }
                    }
                    if self.packs_mtime != settled(stamp) {
                        self.packs_mtime = settled(stamp);
                        self.touch();
                    }
                }
                // Unreadable for now: what is known stays, and it is listed again next time.
                Err(_) => self.packs_mtime = None,
            }
        }
        let known: Vec<(u32, Option<Stamp>)> = self
            .packs
            .iter()
            .filter(|(p, _)| !read_now.contains(p))
            .map(|(p, s)| (*p, *s))
            .collect();
        for (p, stamp) in known {
            let now = fs::symlink_metadata(pack::pack_path(store, p))
                .ok()
                .map(|m| Stamp::of(&m));
            if now.is_none() || now != stamp {
                self.read_pack(store, p, report);
                read_now.insert(p);
            }
        }
    }

    /// The damaged lines of packs whose runs have no other record (a pack is read only when it
    /// changed: its damage is remembered, and said by every load).
    pub(super) fn report_pack_damage(&self, report: &mut LoadReport) {
        for d in &self.damage {
            if d.key.is_none_or(|k| !self.contains(&k)) {
                report.corrupt.push(CorruptRecord {
                    path: d.path.clone().into(),
                    reason: d.reason.clone(),
                });
            }
        }
    }

    /// The stored runs whose record lies in pack `p`.
    fn keys_in_pack(&self, p: u32) -> Vec<RunKey> {
        let in_p = |place: Place| matches!(place, Place::Packed { pack, .. } if pack == p);
        let mut keys: Vec<RunKey> = self
            .file
            .keys()
            .enumerate()
            .filter(|(i, k)| {
                in_p(self.file_places[*i])
                    && !self.meta.contains_key(k)
                    && !self.removed.contains(k)
                    && !self.added.contains_key(k)
            })
            .map(|(_, k)| *k)
            .collect();
        keys.extend(
            self.meta
                .iter()
                .filter(|(k, m)| in_p(m.place) && self.contains(k))
                .map(|(k, _)| *k),
        );
        keys
    }

    /// A pack that is gone: its records are no longer stored (as a removed loose record).
    fn drop_pack(&mut self, p: u32, report: &mut LoadReport) {
        for key in self.keys_in_pack(p) {
            self.remove(&key);
            report.changed.push(key);
        }
        self.packs.remove(&p);
        self.damage.retain(|d| d.pack != p);
        self.touch();
    }

    /// Reads pack `p` whole (new to the index, or its file changed) and verifies every line:
    /// its valid records are stored (unless a newer record of the run is), a record of it that
    /// the index held and that is no longer valid there is reported and leaves the index.
    fn read_pack(&mut self, store: &Store, p: u32, report: &mut LoadReport) {
        let path = pack::pack_path(store, p);
        let (bytes, meta) = match pack::read_all(&path) {
            Ok(read) => read,
            Err(e) => {
                if e.kind() != io::ErrorKind::NotFound {
                    report.corrupt.push(CorruptRecord {
                        path: path.clone(),
                        reason: format!("cannot read this pack of records: {e}"),
                    });
                }
                self.drop_pack(p, report);
                // Looked at again next time.
                self.packs_mtime = None;
                return;
            }
        };
        let (valid, damaged) = pack::scan_pack(&path, &bytes);
        let mut held: HashSet<RunKey> = self.keys_in_pack(p).into_iter().collect();
        for r in valid {
            held.remove(&r.key);
            let current = self.contains(&r.key).then(|| self.meta_of(&r.key));
            let take = match current {
                None => true,
                // A loose copy of the same record is a leftover of packing.
                Some(Meta {
                    place: Place::Loose(_),
                    digest,
                }) => digest == Some(r.digest),
                Some(Meta {
                    place: Place::Packed { pack, .. },
                    ..
                }) => pack <= p,
            };
            if !take {
                continue;
            }
            if current.and_then(|m| m.digest) != Some(r.digest) {
                report.records_read += 1;
                report.changed.push(r.key);
                self.removed.remove(&r.key);
                self.added.insert(r.key, r.summary);
            }
            self.meta.insert(
                r.key,
                Meta {
                    digest: Some(r.digest),
                    place: Place::Packed {
                        pack: p,
                        offset: r.offset,
                        len: r.len,
                    },
                },
            );
        }
        self.damage.retain(|d| d.pack != p);
        let named: HashSet<RunKey> = damaged.iter().filter_map(|(k, _)| *k).collect();
        for key in held {
            self.remove(&key);
            report.changed.push(key);
            if !named.contains(&key) {
                report.corrupt.push(CorruptRecord {
                    path: path.clone(),
                    reason: format!(
                        "the record of run {key} is no longer in it (the pack was changed or cut short after it was verified)"
                    ),
                });
            }
        }
        for (key, corrupt) in damaged {
            self.damage.push(PackDamage {
                pack: p,
                key,
                path: path.display().to_string(),
                reason: corrupt.reason,
            });
        }
        self.packs.insert(p, Some(Stamp::of(&meta)));
        self.touch();
    }
}
