//! Damaged pack lines set aside: a pack holding lines that no longer verify is written again
//! without them, their bytes kept in `damaged/` (never read as records), so that a damaged copy
//! stops being reported once the command that records (`mccbuild run`) has done its work
//! (docs/cache.md, "Packs").

use std::collections::{BTreeSet, HashMap};
use std::fs;
use std::io;
use std::path::PathBuf;

use mccbuild_core::RunKey;
use mccbuild_core::digest::Digest;
use mccbuild_core::fsio::{sync_dir, write_atomically};

use super::{Index, Place};
use crate::Store;
use crate::pack;

/// What setting aside did ([`Index::set_aside_damage`]).
#[derive(Debug, Default)]
pub struct SetAside {
    /// Damaged lines moved out of the packs.
    pub lines: usize,
    /// The packs they were in (now gone).
    pub from: Vec<PathBuf>,
    /// Where their bytes are kept.
    pub kept_in: Vec<PathBuf>,
    /// The packs written with the sound records of those packs.
    pub packs: Vec<PathBuf>,
}

/// The folder of the damaged lines set aside.
pub fn damaged_dir(store: &Store) -> PathBuf {
    store.root().join("damaged")
}

impl Index {
    /// Sets aside the damaged lines of every pack the index knows some in, for a command that
    /// holds the store's execution lock and has recorded its runs. Per such pack: its bytes that
    /// are no sound record are written to `damaged/<pack>.jsonl`; its records that count (the
    /// index places their run's record there) are written into a new pack; the index is saved
    /// without the old pack, then the old pack is removed. A process killed at any point loses
    /// no record: before the index is saved, the old pack still counts (and the new one, if
    /// written, holds the same records: the newer pack counts); after, only the old pack's file
    /// may remain, whose records the newer pack replaces and whose damage is set aside again.
    pub fn set_aside_damage(&mut self, store: &Store) -> io::Result<SetAside> {
        let mut outcome = SetAside::default();
        let damaged: BTreeSet<u32> = self.damage.iter().map(|d| d.pack).collect();
        for p in damaged {
            self.set_aside_in(store, p, &mut outcome)?;
        }
        Ok(outcome)
    }

    fn set_aside_in(&mut self, store: &Store, p: u32, outcome: &mut SetAside) -> io::Result<()> {
        let path = pack::pack_path(store, p);
        let bytes = match pack::read_all(&path) {
            Ok((bytes, _)) => bytes,
            // Gone: the next load drops it and its damage.
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e),
        };
        let (valid, _) = pack::scan_pack(&path, &bytes);
        let valid_at: HashMap<u64, (RunKey, Digest)> = valid
            .iter()
            .map(|r| (r.offset, (r.key, r.digest)))
            .collect();
        let mut kept: Vec<(RunKey, &[u8], Digest)> = Vec::new();
        let mut aside: Vec<u8> = Vec::new();
        let mut lines = 0;
        let mut offset = 0usize;
        for line in bytes.split(|&b| b == b'\n') {
            let start = offset;
            offset += line.len() + 1;
            if line.is_empty() {
                continue;
            }
            match valid_at.get(&(start as u64)) {
                // Kept where it counts; a sound line a newer record replaced goes with the pack.
                Some(&(key, digest)) => {
                    if self.counts_at(&key, p, start as u64) {
                        kept.push((key, line, digest));
                    }
                }
                None => {
                    aside.extend_from_slice(line);
                    aside.push(b'\n');
                    lines += 1;
                }
            }
        }
        if lines == 0 {
            // Damage no longer there (the pack changed since it was read): nothing to set aside;
            // the next load reads the pack again.
            self.damage.retain(|d| d.pack != p);
            self.packs.insert(p, None);
            self.touch();
            return Ok(());
        }
        let kept_in = self.aside_path(store, p);
        fs::create_dir_all(damaged_dir(store))?;
        write_atomically(&kept_in, &aside)?;
        if !kept.is_empty() {
            let next = self.next_pack_number(store)?;
            self.add_pack(store, next, &kept)?;
            outcome.packs.push(pack::pack_path(store, next));
        }
        self.packs.remove(&p);
        self.damage.retain(|d| d.pack != p);
        self.packs_mtime = None;
        self.touch();
        self.write(store)?;
        fs::remove_file(&path)?;
        sync_dir(&pack::packs_dir(store))?;
        outcome.lines += lines;
        outcome.from.push(path);
        outcome.kept_in.push(kept_in);
        Ok(())
    }

    /// Whether the record of `key` that counts is the one of pack `p` at `offset`.
    fn counts_at(&self, key: &RunKey, p: u32, at: u64) -> bool {
        self.contains(key)
            && matches!(self.meta_of(key).place,
                Place::Packed { pack, offset, .. } if pack == p && offset == at)
    }

    /// A new file in `damaged/` for the lines of pack `p`.
    fn aside_path(&self, store: &Store, p: u32) -> PathBuf {
        let dir = damaged_dir(store);
        let mut path = dir.join(format!("{p:08}.jsonl"));
        let mut n = 1;
        while path.exists() {
            n += 1;
            path = dir.join(format!("{p:08}-{n}.jsonl"));
        }
        path
    }
}
