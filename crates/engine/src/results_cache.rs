//! The results of a plan, cached in the store under a key of everything they depend on: the
//! results key ([`key`]), the podium report of a key ([`report`], `results/<key>.bin`: a no-op
//! `mccbuild run` prints the podiums without scoring) and the `scores --json` output of a key
//! ([`json`], `scores-json/<key>.json`: a second `scores --json` copies it). Each file is
//! framed (`mccbuild_core::framed`); one that cannot be used is computed again, without a word.

mod json;
mod key;
mod report;

#[cfg(test)]
pub(crate) mod tests;

pub use self::json::{CachedJson, JsonTee, json_key, load_json};
pub use self::key::{PartHasher, RUNS_PER_PART, results_key, results_key_of_parts};
pub use self::report::{load, path, save};

use std::path::Path;

/// Keeps the `kept` most recent files of `dir` whose names `counts`, removing the others (by
/// modification time; a file that cannot be removed stays).
fn keep_most_recent(dir: &Path, kept: usize, counts: impl Fn(&str) -> bool) -> std::io::Result<()> {
    let mut files: Vec<(std::time::SystemTime, std::path::PathBuf)> = std::fs::read_dir(dir)?
        .flatten()
        .filter(|e| counts(&e.file_name().to_string_lossy()))
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    files.sort();
    let excess = files.len().saturating_sub(kept);
    for (_, path) in files.into_iter().take(excess) {
        let _ = std::fs::remove_file(path);
    }
    Ok(())
}
