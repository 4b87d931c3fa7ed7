//! The podium report of a results key, cached in the store (`results/<key>.bin`): a no-op
//! `mccbuild run` and `scores` print it without scoring.
//!
//! ```text
//! frame (`mccbuild_core::framed`: magic "MCCBRSLT", version RESULTS_SCHEMA), no binding,
//! payload: the report's JSON
//! ```
//!
//! The payload is the report's JSON, not postcard: the report's serde shape leaves absent
//! fields out (for the JSON `scores --json` prints), which a codec that does not describe its
//! fields cannot read back. The key is the file's name, not its binding: what is found under a
//! key is that key's report (the file is written only there). A report of another format or
//! version, cut short or damaged is not used, without a word: it is computed again and replaces
//! the file.

use std::path::PathBuf;

use mccbuild_core::digest::{Digest, hex};
use mccbuild_core::framed::Format;
use mccbuild_scoring::scores::ScoresReport;
use mccbuild_store::Store;

use super::keep_most_recent;
use super::key::RESULTS_SCHEMA;

/// The report file's frame (before version 6: the bare JSON, `results/<key>.json`).
const REPORT: Format = Format::new(b"MCCBRSLT", RESULTS_SCHEMA);

/// How many reports are kept.
const KEPT: usize = 20;

/// The folder of the cached reports.
fn dir(store: &Store) -> PathBuf {
    store.root().join("results")
}

/// Where the results report of `key` is cached (`store/results/<key>.bin`).
pub fn path(store: &Store, key: &Digest) -> PathBuf {
    dir(store).join(format!("{}.bin", hex(key)))
}

/// Reads a cached results report (`store/results/<key>.bin`), if there is a whole one.
pub fn load(store: &Store, key: &Digest) -> Option<ScoresReport> {
    let framed = REPORT.read(&path(store, key), b"").ok()?;
    serde_json::from_slice(framed.payload()).ok()
}

/// Saves a results report under its key, keeping the [`KEPT`] most recent reports.
pub fn save(store: &Store, key: &Digest, report: &ScoresReport) -> std::io::Result<()> {
    let dir = dir(store);
    std::fs::create_dir_all(&dir)?;
    // Renamed into place, not synced (a cache: a file torn by a crash fails its digest, and the
    // report is computed again); the sync cost the first scoring after a change ~9 ms.
    REPORT.write_quickly(
        &path(store, key),
        b"",
        &serde_json::to_vec(report).map_err(std::io::Error::other)?,
    )?;
    keep_most_recent(&dir, KEPT, |_| true)
}
