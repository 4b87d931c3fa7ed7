//! The plan snapshot: a plan made once, kept in the store and used again while nothing it was
//! made from has changed (docs/cache.md, "The plan snapshot").
//!
//! Making the plan reads every results file row, every tool's and instance's files (their
//! digests come from the digest cache) and hashes one key per run: 0.3 to 0.5 s for an MCC
//! edition, on every command. The snapshot keeps what [`Plan::build_runs`] made, under a
//! [`Fingerprint`] of everything it was made from:
//! - the contest as loaded ([`Contest`]'s every field: the manifest, the rules, the models and
//!   instances it names, the tools' settings), written out whole by its `Debug` form;
//! - the executor's key ingredients and the archive limits;
//! - the stamp (size, modification and change times, inode, device, mode) of every file and
//!   folder the plan reads: each results file, every entry under each tool's folder and each
//!   instance's folder, each instance archive, and dpkg's status file when a tool names
//!   `host_packages`;
//! - the stamp of the running mccbuild binary (another build may plan differently).
//!
//! A snapshot whose fingerprint differs is not read further: the plan is made again and the
//! snapshot replaced. A stamp taken less than two seconds after its file changed cannot be
//! trusted (a second write in the same clock tick keeps it: the one racy rule of
//! `mccbuild_core::stamp::FileStamp`), so no snapshot is written while one is that fresh. Its
//! header is framed (`mccbuild_core::framed`) and holds a blake3 digest of each section of the
//! body: a damaged or cut snapshot, or one of another version, is ignored (and replaced), never
//! used. The reference answers and the organisers' decisions are not in it: they are read by
//! every command ([`Plan::with_answers_given`]).
//!
//! One file per job: the fingerprint (`fingerprint`), the file's layout (`layout`) with its
//! front-coded value ids (`value_ids`), loading (`load`) and saving (`save`).
//!
//! [`Contest`]: crate::manifest::Contest
//! [`Plan::build_runs`]: crate::Plan::build_runs
//! [`Plan::with_answers_given`]: crate::Plan::with_answers_given

mod fingerprint;
mod layout;
mod load;
mod save;
mod value_ids;

#[cfg(test)]
mod tests;

use std::fs;
use std::path::{Path, PathBuf};

pub use self::fingerprint::{Fingerprint, answers_fingerprint};
pub use self::load::{Loaded, load};
pub use self::save::save;

/// Where the snapshot of the contest at `manifest` lives in the store's `meta` folder: one per
/// manifest, so that two manifests sharing a store do not replace each other's.
pub fn snapshot_path(meta_dir: &Path, manifest: &Path) -> PathBuf {
    let manifest = fs::canonicalize(manifest).unwrap_or_else(|_| manifest.to_path_buf());
    let digest = blake3::hash(manifest.to_string_lossy().as_bytes());
    meta_dir.join(format!("plan-{}.bin", &digest.to_hex()[..16]))
}
