//! Saving a snapshot: the plan written in the snapshot's layout (its framed header, then the
//! body), atomically, unless its fingerprint is too fresh to trust.

use std::collections::HashMap;
use std::io;
use std::path::Path;

use mccbuild_core::digest::Digest;
use mccbuild_rules::edition::{Limits, TimeLimit};

use super::Fingerprint;
use super::layout::{Blob, ExamKept, HEADER, Header, PayloadOut, RUN_BYTES, Tables};
use super::value_ids::coded_ids;
use crate::plan::{Plan, RunOrigin};

/// Keeps `plan` (as [`Plan::build_runs`] made it from a contest of `declared_tools` tools: no
/// reference answers or decisions read yet) at `path` under `fingerprint`, with the digest of
/// the binary. Does nothing when the fingerprint is racy. Atomic: a reader sees the old
/// snapshot or the new one.
pub fn save(
    path: &Path,
    fingerprint: &Fingerprint,
    plan: &Plan,
    declared_tools: usize,
    binary: Digest,
) -> io::Result<()> {
    if fingerprint.racy {
        return Ok(());
    }
    let edition = &plan.contest.edition;
    // The distinct lists of hidden files (most examination instances hide the same ones).
    let mut hidden_index: HashMap<&[String], u32> = HashMap::new();
    let mut hidden: Vec<&[String]> = Vec::new();
    let mut limits_index: HashMap<Limits, u32> = HashMap::new();
    let mut limits: Vec<(u64, u64, TimeLimit)> = Vec::new();
    let mut runs: Vec<u8> = Vec::with_capacity(plan.runs.len() * RUN_BYTES);
    for run in &plan.runs {
        let h = *hidden_index.entry(&run.hidden).or_insert_with(|| {
            hidden.push(&run.hidden);
            hidden.len() as u32 - 1
        });
        let l = *limits_index.entry(run.limits).or_insert_with(|| {
            limits.push((run.limits.time_s, run.limits.memory_mb, run.limits.time));
            limits.len() as u32 - 1
        });
        runs.extend_from_slice(&run.key.0);
        for n in [run.tool as u32, run.exam_instance as u32, h, l] {
            runs.extend_from_slice(&n.to_le_bytes());
        }
        let (tag, file, row, line) = match run.origin {
            RunOrigin::Executed => (0u8, 0, 0, 0),
            RunOrigin::Imported { file, row, line } => (1, file, row, line),
        };
        runs.push(tag);
        for n in [file, row, line] {
            runs.extend_from_slice(&(n as u32).to_le_bytes());
        }
    }
    let mut ids = Vec::new();
    let exam_instances: Vec<ExamKept> = plan
        .exam_instances
        .iter()
        .map(|ei| ExamKept {
            instance: ei.instance,
            exam: ei.exam,
            ids: coded_ids(ei, edition, &mut ids),
            scored: ei.scored,
            truth: ei.truth.as_deref().map(<[_]>::to_vec),
        })
        .collect();
    let mut payload = postcard::to_allocvec(&Tables {
        hidden: hidden.iter().map(|h| h.to_vec()).collect(),
        limits,
        tools: plan.tools.len() as u64,
        exam_instances: plan.exam_instances.len() as u64,
    })
    .map_err(io::Error::other)?;
    let payload_rest = postcard::to_allocvec(&PayloadOut {
        binary,
        imported_tools: plan.contest.tools[declared_tools.min(plan.contest.tools.len())..]
            .iter()
            .map(|t| (t.name.as_str(), t.cores))
            .collect(),
        tools: &plan.tools,
        models: &plan.models,
        instances: &plan.instances,
        exam_instances,
        ids: Blob(ids),
        problems: &plan.problems,
        left_out: &plan.left_out,
    })
    .map_err(io::Error::other)?;
    payload.extend_from_slice(&payload_rest);
    let mut bytes = Vec::with_capacity(HEADER + payload.len() + runs.len());
    bytes.extend_from_slice(
        &Header {
            made_under: fingerprint.digest,
            payload_digest: *blake3::hash(&payload).as_bytes(),
            runs_digest: *blake3::hash(&runs).as_bytes(),
            payload_len: payload.len() as u64,
            runs: plan.runs.len() as u64,
        }
        .encode(),
    );
    bytes.extend_from_slice(&payload);
    bytes.extend_from_slice(&runs);
    // Renamed into place without waiting for the disk: after a crash a snapshot whose bytes
    // did not reach it fails its digest and is made again, which costs less than a sync of
    // tens of MB on every plan made.
    mccbuild_core::fsio::write_atomically_in_batch(path, &bytes)
}
