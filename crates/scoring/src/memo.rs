//! Remembered scores (docs/cache.md, "Remembered scores"): what scoring computed of each model
//! examination, kept between processes under a digest of everything it was computed from, so
//! that the first scoring after a change reads and scores only the model examinations whose runs
//! changed, or whose Confidence-dependent decisions moved.
//!
//! A model examination's scores are a function of its inputs (its examination instances, each
//! planned run's key and record, the reference answers and the organisers' decisions there, the
//! rules, the tools' order, the scoring code) and of the E-3.1 decisions its trusted values read
//! (each tool's verdict on its lone values, each contested shape's winner), which depend on the
//! Confidences of the whole contest. The first part is the entry's digest
//! ([`examination_digest`]); the decisions are kept beside the entry and compared with those
//! settled now ([`Remembered::holds`]): an entry whose decisions moved is computed again from its
//! runs. The podiums are then summed by the same salsa queries as always, from remembered and
//! computed model examinations alike ([`podium_report`]).
//!
//! The digests are in `digest`, the podium report in `report`, the memo's file in `file` and
//! the bytes of one entry in `encoding`.

mod digest;
mod encoding;
mod file;
mod report;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use mccbuild_core::digest::Digest;
use mccbuild_plan::Plan;
use mccbuild_rules::podium::Completed;

use crate::db::{Agreement, ContestedDecision, ExamTotal, ModelExamination};

pub use digest::{examination_digest, global_digest};
pub use report::podium_report;

/// Bump when what a remembered model examination holds, how it is computed, or the memo's file
/// changes (the binary's digest is an ingredient too: another build never reads these entries).
/// It is the version of the file's frame (2: the head framed by `mccbuild_core::framed`), so a
/// file of another schema is not read past its head.
const MEMO_SCHEMA: u32 = 2;

/// What the podiums read of one model examination's scores, and what they were computed under.
#[derive(Clone, Debug, PartialEq)]
pub struct Remembered {
    /// E-2.2's counts over its values, and the decisions its values need.
    pub agreement: Agreement,
    /// The verdict on lone values (E-3.1, fourth situation) of each tool of
    /// `agreement.needs.alone`, in that order, when the scores were computed.
    pub alone: Vec<bool>,
    /// Its contested shapes' decisions when the scores were computed.
    pub decided: Vec<ContestedDecision>,
    /// Its scores' sums per tool (E-4.2, E-4.3) and, per examination instance, the runs that
    /// completed it (E-4.5).
    pub totals: Arc<[ExamTotal]>,
    pub completed: Arc<[Vec<Completed>]>,
}

impl Remembered {
    /// Whether the decisions settled now are those the scores were computed under (it reads the
    /// inputs the scores would read: the same dependencies in salsa).
    pub(crate) fn holds(&self, db: &dyn salsa::Database, m: ModelExamination) -> bool {
        let tools = m.contest(db).tool_data(db);
        **m.decided(db) == self.decided[..]
            && self.agreement.needs.alone.len() == self.alone.len()
            && self
                .agreement
                .needs
                .alone
                .iter()
                .zip(&self.alone)
                .all(|(t, a)| {
                    tools
                        .get(*t as usize)
                        .is_some_and(|tool| tool.alone(db) == *a)
                })
    }
}

/// The remembered scores of one contest: entries by the digest of their model examination's
/// inputs.
#[derive(Clone, Debug, Default)]
pub struct Memo {
    /// The digest every entry's digest starts from ([`global_digest`]): a memo of another one is
    /// not read past its header.
    global: Digest,
    entries: HashMap<Digest, Arc<Remembered>>,
    /// What the file it was read from holds (None: no usable file): [`Memo::write`] appends to
    /// it or writes it anew.
    file: Option<FileShape>,
    /// Entries computed in this process: what an append adds.
    fresh: Vec<Digest>,
}

/// How many entries and blocks a memo file holds (entries of earlier states included).
#[derive(Clone, Copy, Debug, Default)]
struct FileShape {
    entries: usize,
    blocks: usize,
}

/// How a podium report was made from a memo.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemoUse {
    /// Model examinations answered from the memo.
    pub remembered: usize,
    /// Model examinations computed from their runs: new inputs.
    pub computed: usize,
    /// Remembered model examinations computed again from their runs: the decisions they read
    /// moved.
    pub revived: usize,
}

impl Memo {
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// Where the remembered scores of the contest at `manifest` live in the store's `meta` folder
/// (one per manifest, as the plan snapshot).
pub fn memo_path(meta_dir: &Path, manifest: &Path) -> PathBuf {
    let manifest = std::fs::canonicalize(manifest).unwrap_or_else(|_| manifest.to_path_buf());
    let digest = blake3::hash(manifest.to_string_lossy().as_bytes());
    meta_dir.join(format!("scores-{}.bin", &digest.to_hex()[..16]))
}

/// Whether a contest's podium report can be made from remembered scores: not with `[reference]`
/// answers, whose report reads every value's answers (its podiums are computed in full).
pub fn applies(plan: &Plan) -> bool {
    plan.reference.is_none()
}
