//! The store's index: a summary of every record (what scoring needs), in one checksummed file.
//!
//! Records stay the source of truth; the index is rebuilt from them when it is missing or
//! damaged. It is kept in step with `runs/` through the modification times of the 256 shard
//! folders: a record added or removed by any process (an executor, a Slurm step, a user) changes
//! its shard's time, and only changed shards are listed again.
//!
//! The file holds the sorted keys and the shard times in a first section, the summaries in a
//! second, each with its own checksum, both checksums in a head framed as every cache file is
//! (`mccbuild_core::framed`; `format.rs` says why the sections are not in the frame): knowing which runs are stored (a no-op `mccbuild run`)
//! does not decode the summaries; each is decoded when scoring first asks for it. What was learnt
//! since the file was written is saved, while it is small, in a delta file beside it
//! (`delta.rs`), not by writing the whole file again.
//!
//! Each key comes with its record's content digest (the one the record file ends with) and
//! where the record lies: a loose file, with the file's stamp when it was last verified (size,
//! change time, inode), or a pack (`crate::pack`: which, byte offset, length), whose own stamp
//! the index holds. Every load stats every indexed loose record (in parallel, relative to each
//! shard folder) and every pack, and compares the stamps: a record changed in any way since it
//! was verified (rewritten, truncated, edited in place) is read again and its digest checked; a
//! pack whose file moved is read again whole; a record that no longer matches its own digest is
//! reported and leaves the index (its run is to be done again). A record that was replaced by
//! another valid record of the same run (a rerun) gets its new summary and digest.
//!
//! Here: the index, loading and saving it. Beside: the file's layout (`format.rs`), the keys laid
//! out for lookups (`file_keys.rs`), what the index answers (`queries.rs`), what scoring needs of
//! a run (`summary.rs`), where a record lies (`place.rs`), keeping in step with `runs/`
//! (`reconcile.rs`, `stat_records.rs`) and with `packs/` (`packs.rs`), packing loose records
//! (`packing.rs`), damaged pack lines set aside (`set_aside.rs`), what was learnt saved beside
//! the file (`delta.rs`), and what a loaded index rests on (`footing.rs`).

use std::collections::{BTreeMap, HashSet};
use std::fs;
use std::io;
use std::sync::OnceLock;

use mccbuild_core::digest::Digest;
use mccbuild_core::fsio::write_atomically;
use mccbuild_core::timing::phase;
use mccbuild_core::{KeyMap, RunKey};

mod delta;
mod file_keys;
mod footing;
mod format;
mod packing;
mod packs;
mod place;
mod queries;
mod reconcile;
mod set_aside;
mod stat_records;
mod summary;
#[cfg(test)]
mod tests;

pub use footing::{FileStamp, Footing, stamps_digest};
pub use place::Stamp;
pub use set_aside::{SetAside, damaged_dir};
pub use summary::Summary;

use crate::{CorruptRecord, Store};
use file_keys::FileKeys;
use format::{Unusable, read_index};
use packs::PackDamage;
use place::{Meta, Place};
use summary::SummaryChunk;

/// The shard folders of `runs/`: one per value of a key's first byte.
const SHARDS: usize = 256;

/// The in-memory index of a store.
pub struct Index {
    /// The index file's keys, sorted, with their records' content digests.
    file: FileKeys,
    /// Per file key: where its record lies.
    file_places: Vec<Place>,
    /// Digests and places learnt since the file was written (they win over the file's).
    meta: KeyMap<Meta>,
    /// The file's summaries section: each entry's end (u32), then the entries.
    file_body: Vec<u8>,
    /// Each file key's summary, decoded when it is first asked for, in chunks of
    /// [`summary::SUMMARY_CHUNK`] slots made when one of theirs is first asked for.
    file_summaries: OnceLock<Vec<SummaryChunk>>,
    /// Runs found or recorded since the file was written.
    added: KeyMap<Summary>,
    /// File keys whose records are gone.
    removed: HashSet<RunKey>,
    shard_mtimes: Vec<Option<i128>>,
    /// The packs known, each with its file's stamp when it was verified.
    packs: BTreeMap<u32, Option<Stamp>>,
    /// The `packs/` folder's modification time when it was last listed.
    packs_mtime: Option<i128>,
    /// Damaged lines found in the packs (reported while their runs have no other record).
    damage: Vec<PackDamage>,
    dirty: bool,
    /// The store's index loaded again, when a loose record was found packed meanwhile.
    reloaded: OnceLock<Box<Index>>,
    /// The index file's stamp when it was read (`None`: not read from a file).
    loaded_from: Option<FileStamp>,
    /// The index file's two checksums, while the keys above are that file's (a delta names
    /// the file it completes by them: `delta.rs`); `None` once another file was written.
    file_id: Option<[u8; 64]>,
    /// The delta file's stamp when it was read (`None`: there was none).
    delta_read: Option<FileStamp>,
    /// Changes whenever what the index says may have changed ([`Index::version`]).
    version: u64,
}

/// A new value of [`Index::version`], never given before in this process.
fn next_version() -> u64 {
    static VERSIONS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    VERSIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1
}

/// What loading found.
#[derive(Debug, Default)]
pub struct LoadReport {
    /// Records read from `runs/` (or a pack) because the index did not have them yet.
    pub records_read: usize,
    /// Records that could not be used (they will be run again).
    pub corrupt: Vec<CorruptRecord>,
    /// Why the index file itself was not used, if it was not.
    pub index_problem: Option<String>,
    /// Keys whose records appeared, disappeared or changed (what `mccbuild watch` applies).
    pub changed: Vec<RunKey>,
    /// Records whose file changed since they were verified and were read again.
    pub records_reverified: usize,
}

/// What packing did ([`Index::pack`]).
#[derive(Debug, Default)]
pub struct PackOutcome {
    /// Loose records now in packs.
    pub records: usize,
    /// The packs written.
    pub packs: Vec<std::path::PathBuf>,
    /// Loose files removed that a killed packing had left beside their packed copies.
    pub leftovers: usize,
}

impl Index {
    /// Loads the index and brings it up to date with `runs/` and `packs/`.
    pub fn load(store: &Store) -> (Index, LoadReport) {
        let mut report = LoadReport::default();
        let t = phase("index: read and decode");
        let mut index = match read_index(&store.index_path()) {
            Ok(index) => index,
            Err(Unusable::Damaged(problem)) => {
                report.index_problem = Some(format!(
                    "{}: {problem}; rebuilding it from the records",
                    store.index_path().display()
                ));
                Index::empty()
            }
            Err(Unusable::Io(e)) if e.kind() == io::ErrorKind::NotFound => Index::empty(),
            Err(Unusable::Io(e)) => {
                report.index_problem = Some(format!(
                    "cannot read {}: {e}; rebuilding it from the records",
                    store.index_path().display()
                ));
                Index::empty()
            }
        };
        drop(t);
        if report.index_problem.is_some() {
            index.touch();
        } else {
            let _t = phase("index: delta");
            match index.read_delta(store) {
                delta::Read::Absent | delta::Read::Applied => {}
                // Written for an index file written again since: the next save replaces it.
                delta::Read::Other => index.touch(),
                delta::Read::Unusable(problem) => {
                    report.index_problem = Some(format!(
                        "{}: {problem}; what it held is learnt again from the records",
                        delta::delta_path(store).display()
                    ));
                    index.touch();
                }
            }
        }
        index.reconcile(store, &mut report);
        (index, report)
    }

    fn empty() -> Index {
        Index {
            file: FileKeys::empty(),
            file_places: Vec::new(),
            meta: KeyMap::default(),
            file_body: Vec::new(),
            file_summaries: OnceLock::new(),
            added: KeyMap::default(),
            removed: HashSet::new(),
            shard_mtimes: vec![None; SHARDS],
            packs: BTreeMap::new(),
            packs_mtime: None,
            damage: Vec::new(),
            dirty: false,
            reloaded: OnceLock::new(),
            loaded_from: None,
            file_id: None,
            delta_read: None,
            version: next_version(),
        }
    }

    /// Records a run just stored as a loose record, with its record's content digest (its
    /// file's stamp is taken when the index is next saved or loaded).
    pub fn insert(&mut self, key: RunKey, summary: Summary, digest: Digest) {
        self.removed.remove(&key);
        self.added.insert(key, summary);
        self.meta.insert(
            key,
            Meta {
                digest: Some(digest),
                place: Place::Loose(None),
            },
        );
        self.touch();
    }

    /// Forgets a run whose record was removed.
    pub fn remove(&mut self, key: &RunKey) {
        let had_meta = self.meta.remove(key).is_some();
        if self.added.remove(key).is_some() || self.file_position(key).is_some() {
            self.removed.insert(*key);
            self.touch();
        } else if had_meta {
            self.touch();
        }
    }

    /// Whether the index learnt something its file does not hold.
    pub fn is_dirty(&self) -> bool {
        self.dirty
    }

    /// The index learnt something its file does not hold: it is to be written, and what it
    /// says may have changed (a new [`Index::version`]).
    fn touch(&mut self) {
        self.dirty = true;
        self.version = next_version();
    }

    /// A number that changes whenever what the index says may have changed (a run stored,
    /// removed, read again, packed...), never the same for two indexes of one process: what was
    /// looked up in an index stays true while its version is the same.
    pub fn version(&self) -> u64 {
        self.version
    }

    /// Saves the index if it changed (after reconciling with records written meanwhile).
    pub fn save(&mut self, store: &Store) -> io::Result<()> {
        let mut report = LoadReport::default();
        self.reconcile(store, &mut report);
        self.save_learnt(store)
    }

    /// Saves what the index learnt, if anything, without looking at the store again: for an
    /// index just loaded (which reconciled it).
    pub fn save_learnt(&mut self, store: &Store) -> io::Result<()> {
        if !self.dirty {
            return Ok(());
        }
        match self.delta_suffices() {
            true => self.write_delta(store)?,
            false => self.write(store)?,
        }
        self.dirty = false;
        Ok(())
    }

    /// Writes the whole index file (then the delta, which completed the file before it, goes).
    fn write(&mut self, store: &Store) -> io::Result<()> {
        write_atomically(&store.index_path(), &self.encode()?)?;
        // The keys held are the former file's: a delta of this index would not apply to it.
        self.file_id = None;
        match fs::remove_file(delta::delta_path(store)) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        self.dirty = false;
        Ok(())
    }
}
