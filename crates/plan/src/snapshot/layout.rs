//! The snapshot file's layout: a framed header (`mccbuild_core::framed`: magic, version, and as
//! its payload the fingerprint, the digests of the body's two sections and their sizes), then the
//! body: a postcard payload ([`Tables`], then the rest of the plan) and a section of fixed-width
//! run records.
//!
//! The frame covers the header only, not the body: the body is read in two sections beside each
//! other (the runs through a small buffer on a second thread, hashed and decoded into place,
//! while the payload is decoded), each checked against its own digest in the framed header, which
//! a digest of the whole file would serialise (docs/BENCHMARKS.md, the plan snapshot). The frame
//! binds nothing: the fingerprint the snapshot was made under is computed while it is read, so it
//! is kept in the framed header and compared once both are known.

use mccbuild_core::Value;
use mccbuild_core::diag::Problems;
use mccbuild_core::digest::Digest;
use mccbuild_core::framed::Format;
use mccbuild_rules::edition::{ExamId, TimeLimit};
use serde::{Deserialize, Serialize};

use crate::key::ToolIdentity;
use crate::plan::{LeftOut, PlannedInstance, PlannedModel};

/// The snapshot's frame; a snapshot of another version is made again, silently. (1: the
/// instances' facts kept, one digest of the whole; 2: no facts, value ids front-coded, a digest
/// per section; 3: the header framed.)
pub(super) const SNAPSHOT: Format = Format::new(b"MCCBPLAN", 3);
/// The framed header's payload: the fingerprint, the digests of the payload and of the runs
/// section, the payload's length and the number of runs ([`Header`]).
pub(super) const FIELDS: usize = 32 + 32 + 32 + 8 + 8;
/// The framed header's length (the frame binds nothing): where the body starts.
pub(super) const HEADER: usize = Format::header_len(0) + FIELDS;

/// What the framed header holds.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Header {
    /// The fingerprint the plan was made under.
    pub(super) made_under: Digest,
    pub(super) payload_digest: Digest,
    pub(super) runs_digest: Digest,
    pub(super) payload_len: u64,
    pub(super) runs: u64,
}

impl Header {
    /// The framed header's bytes.
    pub(super) fn encode(&self) -> Vec<u8> {
        let mut fields = Vec::with_capacity(FIELDS);
        fields.extend_from_slice(&self.made_under);
        fields.extend_from_slice(&self.payload_digest);
        fields.extend_from_slice(&self.runs_digest);
        fields.extend_from_slice(&self.payload_len.to_le_bytes());
        fields.extend_from_slice(&self.runs.to_le_bytes());
        SNAPSHOT.encode(b"", &fields)
    }

    /// The header of a snapshot's first [`HEADER`] bytes, if they are a whole framed header of
    /// this version.
    pub(super) fn decode(bytes: &[u8]) -> Option<Header> {
        let fields = SNAPSHOT.decode(bytes, b"").ok()?;
        if fields.len() != FIELDS {
            return None;
        }
        let digest = |at: usize| -> Option<Digest> { fields[at..at + 32].try_into().ok() };
        let word = |at: usize| -> Option<u64> {
            Some(u64::from_le_bytes(fields[at..at + 8].try_into().ok()?))
        };
        Some(Header {
            made_under: digest(0)?,
            payload_digest: digest(32)?,
            runs_digest: digest(64)?,
            payload_len: word(96)?,
            runs: word(104)?,
        })
    }
}

/// Bytes of one run in the snapshot's runs section: its key, then its tool, examination
/// instance, hidden files (an index into the table of the plan's distinct lists) and limits (an
/// index into the table of distinct limits), then its origin (0 executed, 1 imported) with the
/// file, row and line of an imported one; integers little-endian. Fixed-width records, read
/// through a small buffer straight into the plan's runs, beside the rest.
pub(super) const RUN_BYTES: usize = 32 + 4 * 4 + 1 + 3 * 4;
/// Runs read at a time (their bytes stay in the cache while they are hashed and decoded).
pub(super) const RUNS_PER_READ: usize = 4096;

/// The first part of the payload: what the runs section's records point into, decoded before
/// the rest so that the runs can be read beside it.
#[derive(Serialize, Deserialize)]
pub(super) struct Tables {
    /// The distinct lists of hidden files.
    pub(super) hidden: Vec<Vec<String>>,
    /// The distinct limits.
    pub(super) limits: Vec<(u64, u64, TimeLimit)>,
    /// How many tools and examination instances the plan has (the runs' indices are below).
    pub(super) tools: u64,
    pub(super) exam_instances: u64,
}

/// What the snapshot stores besides its runs, after [`Tables`]: the plan of
/// [`Plan::build_runs`] without the contest (loaded fresh by every command, and part of the
/// fingerprint; the tools the results files add to it are kept by name and cores) and without
/// the results files' rows (their runs and keys are what counts; `import`, which needs the rows,
/// makes its plan from the files), with the digest of the binary that made it. Written from
/// borrows, read with the value ids borrowed (the same postcard layout).
///
/// [`Plan::build_runs`]: crate::Plan::build_runs
#[derive(Serialize)]
pub(super) struct PayloadOut<'a> {
    pub(super) binary: Digest,
    pub(super) imported_tools: Vec<(&'a str, u32)>,
    pub(super) tools: &'a [ToolIdentity],
    pub(super) models: &'a [PlannedModel],
    pub(super) instances: &'a [PlannedInstance],
    pub(super) exam_instances: Vec<ExamKept>,
    pub(super) ids: Blob,
    pub(super) problems: &'a Problems,
    pub(super) left_out: &'a [LeftOut],
}

#[derive(Deserialize)]
pub(super) struct PayloadIn<'a> {
    pub(super) binary: Digest,
    pub(super) imported_tools: Vec<(String, u32)>,
    pub(super) tools: Vec<ToolIdentity>,
    pub(super) models: Vec<PlannedModel>,
    pub(super) instances: Vec<PlannedInstance>,
    pub(super) exam_instances: Vec<ExamKept>,
    pub(super) ids: &'a [u8],
    pub(super) problems: Problems,
    pub(super) left_out: Vec<LeftOut>,
}

/// Bytes written as one byte string.
pub(super) struct Blob(pub(super) Vec<u8>);

impl Serialize for Blob {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bytes(&self.0)
    }
}

/// An examination instance as the snapshot keeps it (no reference answers or decisions: they
/// are read by every command). Its value ids are those of its examination in the rules (taken
/// from the contest, loaded fresh), or `count` ids front-coded in the payload's id bytes from
/// `at` on: each as the length of the start it shares with the id before it (a varint), the
/// length of the rest (a varint) and the rest (formula ids share their instance's and
/// examination's names, so the ids of an edition take a tenth of their text).
#[derive(Serialize, Deserialize)]
pub(super) struct ExamKept {
    pub(super) instance: usize,
    pub(super) exam: ExamId,
    /// `None`: the examination's ids in the rules; otherwise `(count, at)`.
    pub(super) ids: Option<(u32, u64)>,
    pub(super) scored: usize,
    pub(super) truth: Option<Vec<Option<Value>>>,
}
