//! The store: one record per run key, under `cache/` by default.
//!
//! Layout (docs/cache.md):
//! - `STORE`: the store format version;
//! - `runs/<2 hex>/<key>.json`: run records, each written atomically (temporary file + rename),
//!   by whichever process ran the run (a local job, a Slurm step);
//! - `packs/<number>.jsonl`: records packed together once enough are loose ([`pack`]), so that
//!   checking that no record changed costs one stat per pack instead of one per record;
//! - `index.bin`: summaries of the records (what scoring needs), checksummed, so that a no-op
//!   `mccbuild run` over 300,000 runs reads one file instead of 300,000; it is reconciled with
//!   `runs/` through the modification times of the 256 shard folders, and rebuilt from the
//!   records when it is missing or damaged;
//! - `tools/<setup digest>/`: what tools' setup commands produced;
//! - `meta/`: caches (file digests).
//!
//! Here: the store's layout and why it cannot be used. Beside: opening it (`open.rs`), the
//! execution lock (`lock.rs`), whether records can be written (`room.rs`), a record's file
//! (`record_file.rs`), the record itself (`record.rs`), packs (`pack.rs`) and the index
//! (`index.rs`).
//!
//! No `unsafe` code but one processor hint (`index/file_keys.rs`, `prefetch`): system calls go
//! through `rustix` and `std`.

#![deny(unsafe_code)]

pub mod index;
pub mod pack;
pub mod record;

mod lock;
mod open;
#[cfg(test)]
mod properties;
mod record_file;
mod room;
#[cfg(test)]
pub(crate) mod tests;

use std::io;
use std::path::{Path, PathBuf};

pub use index::{Index, Summary};
pub use lock::{LockWait, StoreLock};
pub use record::{Machine, RECORD_FORMAT, RunRecord, SlurmPlacement, VmInfo};
pub use record_file::{
    CorruptRecord, encode_record, parse_record, parse_record_verified, verify_digest,
};
pub use room::MIN_FREE_BYTES;

use mccbuild_core::RunKey;
use mccbuild_core::fsio::temp_sibling;

/// The store's own format version (the layout of folders and files). 2: records carry a content
/// digest (format 1 stores are upgraded in place when opened, [`Store::open`]).
pub const STORE_FORMAT: u32 = 2;

/// Why the store cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot create the store {path}: {source}")]
    Create { path: PathBuf, source: io::Error },
    #[error(
        "{path} is a store of another format (`{found}`); this mccbuild reads format {STORE_FORMAT} (and upgrades format 1). Use the mccbuild that wrote it, or set another `store` in [contest]"
    )]
    OtherFormat { path: PathBuf, found: String },
    #[error(
        "the store marker {path} is damaged (it holds `{found}`, not `mccbuild store {STORE_FORMAT}`); the records beside it were not touched. If this folder is an mccbuild store, write the line `mccbuild store {STORE_FORMAT}` into {path}; otherwise set another `store` in [contest]"
    )]
    DamagedMarker { path: PathBuf, found: String },
    #[error(
        "cannot upgrade the store {path} from format 1 to {STORE_FORMAT} (adding a content digest to each record): {source}; the upgrade needs a writable store once (the records are kept as they are until then)"
    )]
    Upgrade { path: PathBuf, source: io::Error },
    #[error("cannot read {path}: {source}")]
    Read { path: PathBuf, source: io::Error },
    #[error("cannot write {path}: {source}")]
    Write { path: PathBuf, source: io::Error },
    #[error(
        "the store {path} cannot be written ({source}); a command that records runs needs a writable store: check its permissions and its file system (read-only? full?), or set `store` in [contest]"
    )]
    ReadOnly { path: PathBuf, source: io::Error },
    #[error("cannot read the run record {path}: {reason}")]
    Record { path: PathBuf, reason: String },
    #[error(
        "the store {path} has no room: {free} bytes free on its file system, a command that records runs needs at least {MIN_FREE_BYTES}; make room there (or set another `store` in [contest])"
    )]
    Full { path: PathBuf, free: u64 },
    #[error(
        "cannot write the run record {path}: {reason}; no more runs were started ({recorded} recorded by this command, runs in flight stopped and not recorded). Make room on the store's file system or make it writable; then `mccbuild run` does the missing runs"
    )]
    RecordNotWritten {
        path: PathBuf,
        reason: String,
        recorded: usize,
    },
    #[error(
        "the store {path} is busy: another mccbuild executes runs there ({holder}); without --no-wait this command waits for it to end"
    )]
    Busy { path: PathBuf, holder: String },
}

/// A store folder.
#[derive(Clone, Debug)]
pub struct Store {
    root: PathBuf,
    /// What opening the store did that the user should know (an upgrade of its format).
    pub notes: Vec<String>,
}

impl Store {
    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn record_path(&self, key: &RunKey) -> PathBuf {
        let hex = key.hex();
        self.root
            .join("runs")
            .join(&hex[..2])
            .join(format!("{hex}.json"))
    }

    pub fn index_path(&self) -> PathBuf {
        self.root.join("index.bin")
    }

    pub fn tools_dir(&self) -> PathBuf {
        self.root.join("tools")
    }

    pub fn meta_dir(&self) -> PathBuf {
        self.root.join("meta")
    }

    /// A fresh temporary path inside the store (same filesystem, so renames are atomic).
    pub fn temp_path(&self, hint: &str) -> PathBuf {
        temp_sibling(&self.root.join("tmp").join(hint))
    }
}
