//! Loading a snapshot: read and verified (its framed header, both sections' digests), decoded on several threads
//! while the fingerprint is computed, and used only under the fingerprint it was made under.

use std::fs;
use std::path::Path;
use std::sync::Arc;

use mccbuild_core::RunKey;
use mccbuild_core::diag::Problems;
use mccbuild_core::digest::Digest;
use mccbuild_core::timing::phase;
use mccbuild_rules::edition::Limits;

use super::Fingerprint;
use super::layout::{HEADER, Header, PayloadIn, RUN_BYTES, RUNS_PER_READ, Tables};
use super::value_ids::exam_instances_of;
use crate::key::ToolIdentity;
use crate::manifest::Contest;
use crate::plan::{ExamInstance, LeftOut, PlannedInstance, PlannedModel, imported_tool};
use crate::plan::{Plan, Run, RunOrigin};

/// A plan from its snapshot, with the digest of the binary that made it; or the contest back.
pub type Loaded = Result<(Plan, Digest), Box<Contest>>;

/// The plan kept at `path` for `contest` if it was made under the fingerprint that
/// `fingerprint` computes, with the digest of the binary that made it; otherwise the contest
/// back (no snapshot, another fingerprint, a damaged one, or no fingerprint: the caller makes
/// the plan). The fingerprint (stat calls) is computed on another thread while the snapshot is
/// read, and the two compared once both are done: a snapshot is only ever used under the
/// fingerprint it was made under, whichever was known first.
pub fn load(
    path: &Path,
    contest: Contest,
    fingerprint: impl FnOnce(&Contest) -> Option<Fingerprint> + Send,
) -> (Option<Fingerprint>, Loaded) {
    let (fingerprint, kept) = std::thread::scope(|scope| {
        let computing = scope.spawn(|| fingerprint(&contest));
        let kept = read(path, &contest);
        let fingerprint = computing
            .join()
            .unwrap_or_else(|e| std::panic::resume_unwind(e));
        (fingerprint, kept)
    });
    let plan = match (kept, &fingerprint) {
        (Some((made_under, kept)), Some(fingerprint)) if made_under == fingerprint.digest => {
            kept.into_plan(contest)
        }
        _ => Err(Box::new(contest)),
    };
    (fingerprint, plan)
}

/// What a snapshot holds, decoded and verified (but for the contest it belongs to).
struct Kept {
    binary: Digest,
    imported_tools: Vec<(String, u32)>,
    tools: Vec<ToolIdentity>,
    models: Vec<PlannedModel>,
    instances: Vec<PlannedInstance>,
    exam_instances: Vec<ExamInstance>,
    runs: Vec<Run>,
    problems: Problems,
    left_out: Vec<LeftOut>,
}

impl Kept {
    fn into_plan(self, mut contest: Contest) -> Result<(Plan, Digest), Box<Contest>> {
        for (name, cores) in &self.imported_tools {
            let tool = imported_tool(&contest, name, *cores);
            contest.tools.push(tool);
        }
        if contest.tools.len() != self.tools.len() {
            return Err(Box::new(contest));
        }
        let plan = Plan {
            contest,
            imported: None,
            tools: self.tools,
            models: self.models,
            instances: self.instances,
            exam_instances: self.exam_instances,
            runs: self.runs,
            problems: self.problems,
            reference: None,
            corrections: None,
            left_out: self.left_out,
        };
        Ok((plan, self.binary))
    }
}

/// The snapshot at `path` with the fingerprint it was made under, if it is one of this version
/// and whole: its framed header holds, and both sections' digests in it. The payload is read and checked first; then a second
/// thread reads the runs section through a small buffer (hashing it and decoding each run into
/// place) while this one decodes the payload, a third thread taking half of the value ids.
fn read(path: &Path, contest: &Contest) -> Option<(Digest, Kept)> {
    use std::io::Read;
    let t = phase("plan snapshot: read");
    let mut file = fs::File::open(path).ok()?;
    let size = file.metadata().ok()?.len();
    let mut header = [0u8; HEADER];
    file.read_exact(&mut header).ok()?;
    let header = Header::decode(&header)?;
    let (payload_len, runs) = (header.payload_len, header.runs);
    let whole = (HEADER as u64)
        .checked_add(payload_len)?
        .checked_add(runs.checked_mul(RUN_BYTES as u64)?)?;
    if whole != size {
        return None;
    }
    let (payload_len, runs) = (
        usize::try_from(payload_len).ok()?,
        usize::try_from(runs).ok()?,
    );
    let mut payload = vec![0u8; payload_len];
    file.read_exact(&mut payload).ok()?;
    drop(t);
    let t = phase("plan snapshot: verify");
    if blake3::hash(&payload).as_bytes() != &header.payload_digest {
        return None;
    }
    drop(t);
    let _t = phase("plan snapshot: decode");
    let (tables, rest) = postcard::take_from_bytes::<Tables>(&payload).ok()?;
    let tables = RunTables {
        hidden: tables.hidden.into_iter().map(Arc::from).collect(),
        limits: tables
            .limits
            .iter()
            .map(|&(time_s, memory_mb, time)| Limits {
                time_s,
                memory_mb,
                time,
            })
            .collect(),
        tools: usize::try_from(tables.tools).ok()?,
        exam_instances: usize::try_from(tables.exam_instances).ok()?,
    };
    let runs_digest = header.runs_digest;
    let runs_at = (HEADER + payload_len) as u64;
    let edition = &contest.edition;
    let (p, exam_instances, runs) = std::thread::scope(|scope| {
        let reading = scope.spawn(|| read_runs(&file, runs_at, runs, &runs_digest, &tables));
        let p = postcard::from_bytes::<PayloadIn>(rest).ok();
        let exam_instances = p.as_ref().and_then(|p| {
            // The value ids in two halves, on two threads (each id is an allocation).
            let (first, second) = p.exam_instances.split_at(p.exam_instances.len() / 2);
            std::thread::scope(|halves| {
                let other = halves.spawn(|| exam_instances_of(second, p.ids, edition));
                let mut all = exam_instances_of(first, p.ids, edition)?;
                all.extend(other.join().ok()??);
                Some(all)
            })
        });
        (p, exam_instances, reading.join().ok().flatten())
    });
    let p = p?;
    if p.tools.len() != tables.tools || p.exam_instances.len() != tables.exam_instances {
        return None;
    }
    Some((
        header.made_under,
        Kept {
            binary: p.binary,
            imported_tools: p.imported_tools,
            tools: p.tools,
            models: p.models,
            instances: p.instances,
            exam_instances: exam_instances?,
            runs: runs?,
            problems: p.problems,
            left_out: p.left_out,
        },
    ))
}

/// The tables the runs section's records point into, and the counts their indices must be
/// below.
struct RunTables {
    hidden: Vec<Arc<[String]>>,
    limits: Vec<Limits>,
    tools: usize,
    exam_instances: usize,
}

/// The `count` runs of the runs section at `offset`, if its digest is `digest` and every run
/// points into `tables`: read through a small buffer, each piece hashed and decoded into place.
fn read_runs(
    file: &fs::File,
    offset: u64,
    count: usize,
    digest: &Digest,
    tables: &RunTables,
) -> Option<Vec<Run>> {
    use std::os::unix::fs::FileExt;
    let u32_at = |r: &[u8], at: usize| {
        u32::from_le_bytes(r[at..at + 4].try_into().unwrap_or([0; 4])) as usize
    };
    let mut runs = Vec::with_capacity(count);
    let mut buf = vec![0u8; RUNS_PER_READ * RUN_BYTES];
    let mut hasher = blake3::Hasher::new();
    let mut done = 0;
    while done < count {
        let piece = &mut buf[..(count - done).min(RUNS_PER_READ) * RUN_BYTES];
        file.read_exact_at(piece, offset + (done * RUN_BYTES) as u64)
            .ok()?;
        hasher.update(piece);
        for r in piece.chunks_exact(RUN_BYTES) {
            let origin = match r[48] {
                0 => RunOrigin::Executed,
                1 => RunOrigin::Imported {
                    file: u32_at(r, 49),
                    row: u32_at(r, 53),
                    line: u32_at(r, 57),
                },
                _ => return None,
            };
            let (tool, exam_instance) = (u32_at(r, 32), u32_at(r, 36));
            if tool >= tables.tools || exam_instance >= tables.exam_instances {
                return None;
            }
            runs.push(Run {
                tool,
                exam_instance,
                key: RunKey(r[..32].try_into().ok()?),
                limits: *tables.limits.get(u32_at(r, 44))?,
                hidden: tables.hidden.get(u32_at(r, 40))?.clone(),
                origin,
            });
        }
        done += piece.len() / RUN_BYTES;
    }
    (hasher.finalize().as_bytes() == digest).then_some(runs)
}
