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
//! trusted (a second write in the same clock tick keeps it: the digest cache's rule), so no
//! snapshot is written while one is that fresh. The payload carries its own blake3 digest: a
//! damaged or cut snapshot is ignored (and replaced), never used. The reference answers and the
//! organisers' decisions are not in it: they are read by every command
//! ([`Plan::with_answers_given`]).

use std::collections::HashMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use mccbuild_core::diag::Problems;
use mccbuild_core::digest::Digest;
use mccbuild_core::timing::phase;
use mccbuild_core::{RunKey, Value};
use mccbuild_rules::edition::{ExamId, Limits, TimeLimit};
use serde::{Deserialize, Serialize};

use crate::archive::ArchiveLimits;
use crate::key::ToolIdentity;
use crate::manifest::{Contest, InstanceSource};
use crate::plan::{imported_tool, ExamInstance, LeftOut, PlannedInstance, PlannedModel};
use crate::plan::{Plan, Run, RunOrigin};

/// The first bytes of a snapshot file.
const MAGIC: &[u8; 8] = b"MCCBPLAN";
/// The snapshot's layout; a snapshot of another layout is made again. (1: the instances' facts
/// kept, one digest of the whole; 2: no facts, value ids front-coded, a digest per section.)
const FORMAT: u32 = 2;
/// The header: the magic, the format, the fingerprint, the digests of the payload and of the
/// runs section, the payload's length and the number of runs.
const HEADER: usize = 8 + 4 + 32 + 32 + 32 + 8 + 8;
/// Where dpkg keeps what is installed (rewritten by every install, upgrade and removal).
const DPKG_STATUS: &str = "/var/lib/dpkg/status";
/// Where dpkg keeps what an interrupted run of it changed, not yet in its status file.
const DPKG_UPDATES: &str = "/var/lib/dpkg/updates";

/// What a plan was made from, as one digest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fingerprint {
    pub digest: Digest,
    /// Some stamp is too fresh to be trusted: the plan made now must not be kept.
    pub racy: bool,
}

impl Fingerprint {
    /// The fingerprint of the plan `contest` would get with this executor, these archive limits
    /// and the binary at `exe`, from the files as they are now.
    pub fn of(
        contest: &Contest,
        executor: &[(String, String)],
        archive_limits: ArchiveLimits,
        exe: &Path,
    ) -> Fingerprint {
        Fingerprint::with_stamps(
            contest,
            executor,
            archive_limits,
            &Fingerprint::stamps(contest, exe),
        )
    }

    /// The stat calls of [`Fingerprint::of`]: the stamps of the binary at `exe` and of every
    /// file and folder the plan of `contest` reads, as one fingerprint (taken beside the
    /// making of the executor, whose key ingredients [`Fingerprint::with_stamps`] adds).
    pub fn stamps(contest: &Contest, exe: &Path) -> Fingerprint {
        let mut walk = Walk {
            hasher: blake3::Hasher::new(),
            racy: false,
        };
        walk.entry(exe, false);
        for (path, deep) in read_by_plan(contest) {
            walk.entry(&path, deep);
        }
        Fingerprint {
            digest: *walk.hasher.finalize().as_bytes(),
            racy: walk.racy,
        }
    }

    /// [`Fingerprint::of`] from the [`Fingerprint::stamps`] taken for `contest`.
    pub fn with_stamps(
        contest: &Contest,
        executor: &[(String, String)],
        archive_limits: ArchiveLimits,
        stamps: &Fingerprint,
    ) -> Fingerprint {
        let mut walk = Walk {
            hasher: blake3::Hasher::new(),
            racy: stamps.racy,
        };
        walk.text("schema", &format!("mccbuild plan snapshot {FORMAT}"));
        walk.text("contest", &format!("{contest:?}"));
        walk.text("executor", &format!("{executor:?}"));
        walk.text("archive limits", &format!("{archive_limits:?}"));
        walk.hasher.update(&stamps.digest);
        Fingerprint {
            digest: *walk.hasher.finalize().as_bytes(),
            racy: walk.racy,
        }
    }
}

/// The stamps of what [`Plan::with_answers_given`] reads besides the snapshot's plan: the
/// reference answers (a file, or a folder read whole) and the organisers' corrections. Not part
/// of the snapshot's fingerprint (every command reads them again); the remembered no-op, which
/// does not, is keyed by it (docs/cache.md, "The remembered no-op").
pub fn answers_fingerprint(contest: &Contest) -> Fingerprint {
    let mut walk = Walk {
        hasher: blake3::Hasher::new(),
        racy: false,
    };
    walk.text("schema", "mccbuild answers given 1");
    if let Some(reference) = &contest.reference {
        walk.entry(&reference.answers, true);
    }
    if let Some(corrections) = &contest.corrections {
        walk.entry(corrections, false);
    }
    Fingerprint {
        digest: *walk.hasher.finalize().as_bytes(),
        racy: walk.racy,
    }
}

/// What the plan reads beyond the contest itself, each with whether it is a folder read whole:
/// the results files, the tools' folders, dpkg's database when a tool names `host_packages`,
/// the instances' folders and archives.
fn read_by_plan(contest: &Contest) -> Vec<(PathBuf, bool)> {
    let mut paths: Vec<(PathBuf, bool)> = Vec::new();
    paths.extend(contest.results.iter().map(|p| (p.clone(), false)));
    paths.extend(
        contest
            .tools
            .iter()
            .filter_map(|t| Some((t.dir.clone()?, true))),
    );
    if contest.tools.iter().any(|t| !t.host_packages.is_empty()) {
        paths.push((PathBuf::from(DPKG_STATUS), false));
        paths.push((PathBuf::from(DPKG_UPDATES), true));
    }
    for model in &contest.models {
        for instance in &model.instances {
            match &instance.source {
                InstanceSource::Folder(dir) => paths.push((dir.clone(), true)),
                InstanceSource::Archive(file) => paths.push((file.clone(), false)),
                InstanceSource::Imported(_) => {}
            }
        }
    }
    paths
}

struct Walk {
    hasher: blake3::Hasher,
    racy: bool,
}

impl Walk {
    fn text(&mut self, what: &str, text: &str) {
        for part in [what.as_bytes(), text.as_bytes()] {
            self.hasher.update(&(part.len() as u64).to_le_bytes());
            self.hasher.update(part);
        }
    }

    /// `path`'s stamp (following a symbolic link; a path that cannot be read is hashed as such)
    /// and, for a folder when `deep`, every entry under it (symbolic links not followed into
    /// folders, as the plan's own readers do not follow them).
    fn entry(&mut self, path: &Path, deep: bool) {
        self.text("path", &path.to_string_lossy());
        match fs::metadata(path) {
            Ok(meta) => {
                self.stamp(&meta);
                if deep && meta.is_dir() {
                    self.folder(path);
                }
            }
            Err(e) => self.text("unreadable", &format!("{:?}", e.kind())),
        }
    }

    fn folder(&mut self, dir: &Path) {
        let mut names: Vec<PathBuf> = match fs::read_dir(dir) {
            Ok(entries) => entries.filter_map(|e| e.ok().map(|e| e.path())).collect(),
            Err(e) => return self.text("unlistable", &format!("{:?}", e.kind())),
        };
        names.sort();
        for path in names {
            self.text("path", &path.to_string_lossy());
            let Ok(meta) = fs::symlink_metadata(&path) else {
                self.text("unreadable", "");
                continue;
            };
            if meta.file_type().is_symlink() {
                let target = fs::read_link(&path).unwrap_or_default();
                self.text("symlink", &target.to_string_lossy());
                self.stamp(&meta);
                // What it points to may change without the link changing.
                match fs::metadata(&path) {
                    Ok(target) => self.stamp(&target),
                    Err(e) => self.text("dangling", &format!("{:?}", e.kind())),
                }
            } else {
                self.stamp(&meta);
                if meta.is_dir() {
                    self.folder(&path);
                }
            }
        }
    }

    fn stamp(&mut self, meta: &fs::Metadata) {
        let stamp = mccbuild_core::stamp::FileStamp::of(meta);
        self.racy |= stamp.is_racy();
        stamp.hash_into(&mut self.hasher);
    }
}

/// Bytes of one run in the snapshot's runs section: its key, then its tool, examination
/// instance, hidden files (an index into the table of the plan's distinct lists) and limits (an
/// index into the table of distinct limits), then its origin (0 executed, 1 imported) with the
/// file, row and line of an imported one; integers little-endian. Fixed-width records, read
/// through a small buffer straight into the plan's runs, beside the rest.
const RUN_BYTES: usize = 32 + 4 * 4 + 1 + 3 * 4;
/// Runs read at a time (their bytes stay in the cache while they are hashed and decoded).
const RUNS_PER_READ: usize = 4096;

/// The first part of the payload: what the runs section's records point into, decoded before
/// the rest so that the runs can be read beside it.
#[derive(Serialize, Deserialize)]
struct Tables {
    /// The distinct lists of hidden files.
    hidden: Vec<Vec<String>>,
    /// The distinct limits.
    limits: Vec<(u64, u64, TimeLimit)>,
    /// How many tools and examination instances the plan has (the runs' indices are below).
    tools: u64,
    exam_instances: u64,
}

/// What the snapshot stores besides its runs, after [`Tables`]: the plan of
/// [`Plan::build_runs`] without the contest (loaded fresh by every command, and part of the
/// fingerprint; the tools the results files add to it are kept by name and cores) and without
/// the results files' rows (their runs and keys are what counts; `import`, which needs the rows,
/// makes its plan from the files), with the digest of the binary that made it. Written from
/// borrows, read with the value ids borrowed (the same postcard layout).
#[derive(Serialize)]
struct PayloadOut<'a> {
    binary: Digest,
    imported_tools: Vec<(&'a str, u32)>,
    tools: &'a [ToolIdentity],
    models: &'a [PlannedModel],
    instances: &'a [PlannedInstance],
    exam_instances: Vec<ExamKept>,
    ids: Blob,
    problems: &'a Problems,
    left_out: &'a [LeftOut],
}

#[derive(Deserialize)]
struct PayloadIn<'a> {
    binary: Digest,
    imported_tools: Vec<(String, u32)>,
    tools: Vec<ToolIdentity>,
    models: Vec<PlannedModel>,
    instances: Vec<PlannedInstance>,
    exam_instances: Vec<ExamKept>,
    ids: &'a [u8],
    problems: Problems,
    left_out: Vec<LeftOut>,
}

/// Bytes written as one byte string.
struct Blob(Vec<u8>);

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
struct ExamKept {
    instance: usize,
    exam: ExamId,
    /// `None`: the examination's ids in the rules; otherwise `(count, at)`.
    ids: Option<(u32, u64)>,
    scored: usize,
    truth: Option<Vec<Option<Value>>>,
}

/// Where the snapshot of the contest at `manifest` lives in the store's `meta` folder: one per
/// manifest, so that two manifests sharing a store do not replace each other's.
pub fn snapshot_path(meta_dir: &Path, manifest: &Path) -> PathBuf {
    let manifest = fs::canonicalize(manifest).unwrap_or_else(|_| manifest.to_path_buf());
    let digest = blake3::hash(manifest.to_string_lossy().as_bytes());
    meta_dir.join(format!("plan-{}.bin", &digest.to_hex()[..16]))
}

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

/// The snapshot at `path` with the fingerprint it was made under, if it is one of this format
/// and whole: both sections' digests hold. The payload is read and checked first; then a second
/// thread reads the runs section through a small buffer (hashing it and decoding each run into
/// place) while this one decodes the payload, a third thread taking half of the value ids.
fn read(path: &Path, contest: &Contest) -> Option<(Digest, Kept)> {
    use std::io::Read;
    let t = phase("plan snapshot: read");
    let mut file = fs::File::open(path).ok()?;
    let size = file.metadata().ok()?.len();
    let mut header = [0u8; HEADER];
    file.read_exact(&mut header).ok()?;
    if header[..8] != MAGIC[..] || header[8..12] != FORMAT.to_le_bytes() {
        return None;
    }
    let made_under: Digest = header[12..44].try_into().ok()?;
    let word = |at: usize| u64::from_le_bytes(header[at..at + 8].try_into().unwrap_or([0; 8]));
    let (payload_len, runs) = (word(108), word(116));
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
    if blake3::hash(&payload).as_bytes()[..] != header[44..76] {
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
    let runs_digest: Digest = header[76..108].try_into().ok()?;
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
        made_under,
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

/// The examination instances as kept, their value ids decoded from `ids` (`None`: not of this
/// contest, or not whole).
fn exam_instances_of(
    kept: &[ExamKept],
    ids: &[u8],
    edition: &mccbuild_rules::edition::Edition,
) -> Option<Vec<ExamInstance>> {
    let mut id = String::new();
    kept.iter()
        .map(|ei| {
            let ids: Arc<[Arc<str>]> = match ei.ids {
                None => edition.examinations.get(ei.exam)?.answer_ids().into(),
                Some((count, at)) => {
                    let mut bytes = ids.get(usize::try_from(at).ok()?..)?;
                    let mut list = Vec::with_capacity(count as usize);
                    id.clear();
                    for _ in 0..count {
                        let shared = varint(&mut bytes)?;
                        let len = varint(&mut bytes)?;
                        if shared > id.len() || !id.is_char_boundary(shared) || len > bytes.len() {
                            return None;
                        }
                        let (rest, after) = bytes.split_at(len);
                        id.truncate(shared);
                        id.push_str(std::str::from_utf8(rest).ok()?);
                        bytes = after;
                        list.push(Arc::<str>::from(id.as_str()));
                    }
                    list.into()
                }
            };
            Some(ExamInstance {
                instance: ei.instance,
                exam: ei.exam,
                ids,
                scored: ei.scored,
                truth: ei.truth.clone().map(Arc::from),
                reference: None,
                corrections: None,
            })
        })
        .collect()
}

/// Reads a LEB128 number off the front of `bytes`.
fn varint(bytes: &mut &[u8]) -> Option<usize> {
    let mut n: u64 = 0;
    for shift in (0..64).step_by(7) {
        let (&b, rest) = bytes.split_first()?;
        *bytes = rest;
        n |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return usize::try_from(n).ok();
        }
    }
    None
}

/// Writes `n` as LEB128.
fn put_varint(out: &mut Vec<u8>, mut n: usize) {
    while n >= 0x80 {
        out.push((n as u8 & 0x7f) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
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

/// The value ids of an examination instance as [`ExamKept`] keeps them: `None` when they are
/// its examination's in the rules, otherwise their count and where in `out` they were written
/// (front-coded).
fn coded_ids(
    ei: &ExamInstance,
    edition: &mccbuild_rules::edition::Edition,
    out: &mut Vec<u8>,
) -> Option<(u32, u64)> {
    let exam = &edition.examinations[ei.exam];
    let from_rules = exam.formula_file.is_none()
        && ei.scored == exam.values.len()
        && ei.ids.iter().map(|id| &**id).eq(exam
            .values
            .iter()
            .chain(&exam.optional_values)
            .map(|id| &**id));
    if from_rules {
        return None;
    }
    let at = out.len() as u64;
    let mut before = "";
    for id in ei.ids.iter() {
        let mut shared = before
            .bytes()
            .zip(id.bytes())
            .take_while(|(a, b)| a == b)
            .count();
        while !id.is_char_boundary(shared) {
            shared -= 1;
        }
        put_varint(out, shared);
        put_varint(out, id.len() - shared);
        out.extend_from_slice(&id.as_bytes()[shared..]);
        before = id;
    }
    Some((ei.ids.len() as u32, at))
}

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
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&FORMAT.to_le_bytes());
    bytes.extend_from_slice(&fingerprint.digest);
    bytes.extend_from_slice(blake3::hash(&payload).as_bytes());
    bytes.extend_from_slice(blake3::hash(&runs).as_bytes());
    bytes.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    bytes.extend_from_slice(&(plan.runs.len() as u64).to_le_bytes());
    bytes.extend_from_slice(&payload);
    bytes.extend_from_slice(&runs);
    // Renamed into place without waiting for the disk: after a crash a snapshot whose bytes
    // did not reach it fails its digest and is made again, which costs less than a sync of
    // tens of MB on every plan made.
    mccbuild_core::fsio::write_atomically_in_batch(path, &bytes)
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;
    use crate::digest_cache::DigestCache;

    const RESULTS: &str = "tool,Input,Examination,results\n\
        lola,Other-PT-1,ReachabilityDeadlock,T\n\
        lola,Other-PT-1,StateSpace,6 8 1 4\n";

    /// A contest in a temporary folder: two instance folders copied from the demo, a tool, a
    /// results file whose rows are runs of a second tool, the repository's 2026 rules.
    fn contest_dir() -> tempfile::TempDir {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let dir = tempfile::tempdir().unwrap();
        for instance in ["Deadlock-PT-1", "TokenRing-PT-4"] {
            let to = dir.path().join("models").join(instance);
            fs::create_dir_all(&to).unwrap();
            for entry in fs::read_dir(repo.join("models").join(instance)).unwrap() {
                let entry = entry.unwrap();
                fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
            }
        }
        let tool = dir.path().join("tools/t");
        fs::create_dir_all(tool.join("lib")).unwrap();
        fs::write(tool.join("BenchKit_head.sh"), "#!/bin/sh\necho hi\n").unwrap();
        fs::set_permissions(
            tool.join("BenchKit_head.sh"),
            fs::Permissions::from_mode(0o755),
        )
        .unwrap();
        fs::write(tool.join("lib/a.txt"), "a").unwrap();
        fs::write(dir.path().join("results.csv"), RESULTS).unwrap();
        write_manifest(dir.path(), "time_s = 10");
        dir
    }

    fn write_manifest(dir: &Path, limits: &str) {
        let rules = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../rules/mcc-2026.toml");
        fs::write(
            dir.join("contest.toml"),
            format!(
                "[contest]\nname = \"s\"\nrules = \"{}\"\nresults = [\"results.csv\"]\n\n\
                 [limits]\n{limits}\n\n\
                 [[model]]\nname = \"Deadlock\"\ninstances = [\"models/Deadlock-PT-1\"]\n\n\
                 [[model]]\nname = \"TokenRing\"\ninstances = [\"models/TokenRing-PT-4\"]\n\n\
                 [[tool]]\nname = \"t\"\ndir = \"tools/t\"\nexaminations = [\"all\"]\n",
                rules.display()
            ),
        )
        .unwrap();
    }

    fn executor() -> Vec<(String, String)> {
        vec![("kind".to_string(), "test".to_string())]
    }

    fn load(dir: &Path) -> Contest {
        Contest::load(&dir.join("contest.toml")).expect("the test contest")
    }

    fn fingerprint(dir: &Path) -> Digest {
        let exe = dir.join("contest.toml");
        Fingerprint::of(&load(dir), &executor(), ArchiveLimits::default(), &exe).digest
    }

    /// Lets the change time of whatever is written next differ from the last one's (the
    /// file system's clock ticks coarser than its nanoseconds).
    fn tick() {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }

    #[test]
    fn every_input_of_the_plan_changes_the_fingerprint() {
        let dir = contest_dir();
        let d = dir.path();
        let mut seen = vec![fingerprint(d)];
        assert_eq!(
            fingerprint(d),
            seen[0],
            "the same inputs, the same fingerprint"
        );
        let mut changed = |what: &str, change: &dyn Fn()| {
            tick();
            change();
            let now = fingerprint(d);
            assert!(
                !seen.contains(&now),
                "{what} left the fingerprint as it was"
            );
            seen.push(now);
        };
        changed("the manifest", &|| write_manifest(d, "time_s = 11"));
        changed("a tool file's content", &|| {
            fs::write(d.join("tools/t/lib/a.txt"), "b").unwrap()
        });
        changed("a tool file's mode", &|| {
            fs::set_permissions(
                d.join("tools/t/lib/a.txt"),
                fs::Permissions::from_mode(0o755),
            )
            .unwrap()
        });
        changed("a file added to a tool", &|| {
            fs::write(d.join("tools/t/lib/b.txt"), "b").unwrap()
        });
        changed("a file renamed in a tool", &|| {
            fs::rename(d.join("tools/t/lib/b.txt"), d.join("tools/t/lib/c.txt")).unwrap()
        });
        changed("an instance's formula file", &|| {
            let f = d.join("models/Deadlock-PT-1/UpperBounds.xml");
            let text = fs::read_to_string(&f).unwrap();
            fs::write(&f, text.replace("UpperBounds-00", "UpperBounds-99")).unwrap();
        });
        changed("a file added to an instance", &|| {
            fs::write(d.join("models/TokenRing-PT-4/NewModel"), "").unwrap()
        });
        changed("a row of the results file", &|| {
            fs::write(d.join("results.csv"), RESULTS.replace("6 8 1 4", "6 8 1 5")).unwrap()
        });
        let contest = load(d);
        let exe = d.join("contest.toml");
        let base = Fingerprint::of(&contest, &executor(), ArchiveLimits::default(), &exe);
        let other_executor = vec![("kind".to_string(), "qemu".to_string())];
        let limits = ArchiveLimits {
            max_entries: 7,
            ..ArchiveLimits::default()
        };
        for (what, other) in [
            (
                "the executor",
                Fingerprint::of(&contest, &other_executor, ArchiveLimits::default(), &exe),
            ),
            (
                "the archive limits",
                Fingerprint::of(&contest, &executor(), limits, &exe),
            ),
            (
                "the binary",
                Fingerprint::of(
                    &contest,
                    &executor(),
                    ArchiveLimits::default(),
                    &d.join("results.csv"),
                ),
            ),
        ] {
            assert_ne!(
                other.digest, base.digest,
                "{what} left the fingerprint as it was"
            );
        }
    }

    /// The remembered no-op's key has the stamps of what every command reads besides the plan
    /// (src/noop.rs): the reference answers (a folder, every file of it) and the corrections.
    #[test]
    fn the_answers_fingerprint_sees_the_reference_and_the_corrections() {
        let dir = contest_dir();
        let d = dir.path();
        let manifest = d.join("contest.toml");
        let text = fs::read_to_string(&manifest).unwrap().replace(
            "[contest]\n",
            "[contest]\ncorrections = \"corrections.csv\"\n",
        );
        fs::write(
            &manifest,
            format!("{text}\n[reference]\nanswers = \"oracle\"\n"),
        )
        .unwrap();
        fs::create_dir_all(d.join("oracle")).unwrap();
        fs::write(d.join("oracle/StateSpace.out"), "a").unwrap();
        fs::write(d.join("corrections.csv"), "instance,examination,id,value\n").unwrap();
        let answers = || answers_fingerprint(&load(d)).digest;
        let mut seen = vec![answers()];
        assert_eq!(answers(), seen[0]);
        for (what, path, text) in [
            ("a reference file", "oracle/StateSpace.out", "b"),
            ("a file added to the reference", "oracle/Other.out", "c"),
            (
                "the corrections",
                "corrections.csv",
                "instance,examination,id,value\nx,y,z,1\n",
            ),
        ] {
            tick();
            fs::write(d.join(path), text).unwrap();
            let now = answers();
            assert!(!seen.contains(&now), "{what} left it as it was");
            seen.push(now);
        }
        assert!(
            answers_fingerprint(&load(d)).racy,
            "files written a moment ago"
        );
    }

    #[test]
    fn dpkg_is_read_only_for_tools_naming_host_packages() {
        let dir = contest_dir();
        let mut contest = load(dir.path());
        let dpkg = |contest: &Contest| {
            read_by_plan(contest)
                .iter()
                .any(|(p, _)| p == Path::new(DPKG_STATUS))
        };
        assert!(!dpkg(&contest));
        contest.tools[0].host_packages = vec!["coreutils".to_string()];
        assert!(dpkg(&contest));
    }

    fn build(dir: &Path) -> Plan {
        Plan::build_runs(
            load(dir),
            &executor(),
            &mut DigestCache::in_memory(),
            ArchiveLimits::default(),
        )
        .expect("the test contest plans")
    }

    fn trusted(dir: &Path) -> Fingerprint {
        Fingerprint {
            racy: false,
            ..Fingerprint::of(
                &load(dir),
                &executor(),
                ArchiveLimits::default(),
                &dir.join("contest.toml"),
            )
        }
    }

    /// What a plan says, for comparing a plan with its snapshot.
    fn said(plan: &Plan) -> String {
        format!(
            "{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{}",
            plan.runs,
            plan.exam_instances,
            plan.instances,
            plan.models,
            plan.tools,
            plan.problems,
            plan.left_out,
            plan.contest.tools.len()
        )
    }

    #[test]
    fn a_snapshot_gives_back_the_plan_it_kept() {
        let dir = contest_dir();
        let plan = build(dir.path());
        assert!(plan
            .runs
            .iter()
            .any(|r| matches!(r.origin, RunOrigin::Imported { .. })));
        assert!(plan.runs.iter().any(|r| r.origin == RunOrigin::Executed));
        let path = dir.path().join("plan.bin");
        let fp = trusted(dir.path());
        save(&path, &fp, &plan, 1, [7; 32]).unwrap();
        let (back, binary) = load_snapshot(&path, &fp, dir.path()).expect("a hit");
        assert_eq!(binary, [7; 32]);
        assert_eq!(said(&back), said(&plan));
        assert!(back.imported.is_none(), "the rows are not kept");
        let other = Fingerprint {
            digest: [1; 32],
            racy: false,
        };
        assert!(
            load_snapshot(&path, &other, dir.path()).is_none(),
            "another fingerprint"
        );
    }

    fn load_snapshot(path: &Path, fp: &Fingerprint, dir: &Path) -> Option<(Plan, Digest)> {
        super::load(path, load(dir), |_| Some(fp.clone())).1.ok()
    }

    #[test]
    fn a_damaged_or_cut_snapshot_is_not_used() {
        let dir = contest_dir();
        let plan = build(dir.path());
        let path = dir.path().join("plan.bin");
        let fp = trusted(dir.path());
        save(&path, &fp, &plan, 1, [7; 32]).unwrap();
        let whole = fs::read(&path).unwrap();
        let payload = u64::from_le_bytes(whole[108..116].try_into().unwrap()) as usize;
        let runs_at = HEADER + payload;
        assert_eq!(whole.len(), runs_at + plan.runs.len() * RUN_BYTES);
        // A byte flipped in the header (the format, the digests, the counts), in the payload
        // (its tables, the value ids at its end) and in the runs (a key, an index, an origin).
        for at in [
            9,
            50,
            80,
            110,
            118,
            HEADER + 1,
            runs_at - 3,
            runs_at + 5,
            runs_at + RUN_BYTES + 40,
            runs_at + 2 * RUN_BYTES + 48,
            whole.len() - 1,
        ] {
            let mut bytes = whole.clone();
            bytes[at] ^= 0x20;
            fs::write(&path, &bytes).unwrap();
            assert!(
                load_snapshot(&path, &fp, dir.path()).is_none(),
                "byte {at} flipped"
            );
        }
        for len in [0, 10, 76, HEADER, runs_at, runs_at + 7, whole.len() - 1] {
            fs::write(&path, &whole[..len]).unwrap();
            assert!(
                load_snapshot(&path, &fp, dir.path()).is_none(),
                "cut at {len}"
            );
        }
        let mut longer = whole.clone();
        longer.push(0);
        fs::write(&path, &longer).unwrap();
        assert!(
            load_snapshot(&path, &fp, dir.path()).is_none(),
            "a byte more"
        );
        // A snapshot of the first format (the same header's start) is made again.
        let mut first = whole.clone();
        first[8..12].copy_from_slice(&1u32.to_le_bytes());
        fs::write(&path, &first).unwrap();
        assert!(load_snapshot(&path, &fp, dir.path()).is_none(), "format 1");
        fs::write(&path, &whole).unwrap();
        assert!(load_snapshot(&path, &fp, dir.path()).is_some());
    }

    /// Value ids are kept front-coded: ids that share a start (or are the start of the one
    /// before, or empty, or share part of a character) come back as they were; the rules' ids
    /// are taken from the contest.
    #[test]
    fn value_ids_come_back_as_they_were() {
        let dir = contest_dir();
        let edition = load(dir.path()).edition;
        let formula = edition
            .examinations
            .iter()
            .position(|e| e.formula_file.is_some())
            .unwrap();
        let rules = edition
            .examinations
            .iter()
            .position(|e| e.formula_file.is_none())
            .unwrap();
        let exam_instance = |exam: usize, ids: &[&str], scored: usize| ExamInstance {
            instance: 0,
            exam,
            ids: ids.iter().map(|id| Arc::from(*id)).collect(),
            scored,
            truth: None,
            reference: None,
            corrections: None,
        };
        let rules_ids: Vec<String> = edition.examinations[rules]
            .answer_ids()
            .iter()
            .map(|id| id.to_string())
            .collect();
        let rules_ids: Vec<&str> = rules_ids.iter().map(String::as_str).collect();
        let cases = [
            exam_instance(
                formula,
                &[
                    "Net-PT-01-RC-00",
                    "Net-PT-01-RC-01",
                    "Net-PT-01-RC-10",
                    "Net-PT-01",
                ],
                4,
            ),
            exam_instance(formula, &["", "é", "éa", "èa", "e", "", "x"], 7),
            exam_instance(formula, &["日本-1", "日本-2", "日-3", "月"], 2),
            exam_instance(rules, &rules_ids, edition.examinations[rules].values.len()),
            // The rules' ids but fewer scored: kept as written.
            exam_instance(rules, &rules_ids, 0),
            exam_instance(rules, &["other"], 1),
        ];
        let mut bytes = Vec::new();
        let kept: Vec<ExamKept> = cases
            .iter()
            .map(|ei| ExamKept {
                instance: ei.instance,
                exam: ei.exam,
                ids: coded_ids(ei, &edition, &mut bytes),
                scored: ei.scored,
                truth: None,
            })
            .collect();
        assert!(kept[3].ids.is_none(), "the rules' ids are not written");
        assert!(kept[4].ids.is_some() && kept[5].ids.is_some());
        let back = exam_instances_of(&kept, &bytes, &edition).expect("whole");
        assert_eq!(format!("{back:?}"), format!("{cases:?}"));
        // Cut short, or pointing past the end: not used.
        assert!(exam_instances_of(&kept[..3], &bytes[..bytes.len() / 2], &edition).is_none());
        let odd = |exam: usize, ids: Option<(u32, u64)>| {
            let odd = ExamKept {
                instance: 0,
                exam,
                ids,
                scored: 0,
                truth: None,
            };
            exam_instances_of(&[odd], &bytes, &edition)
        };
        assert!(
            odd(formula, Some((1, bytes.len() as u64 + 1))).is_none(),
            "past the end"
        );
        assert!(odd(formula, Some((1, 0))).is_some());
        assert!(
            odd(edition.examinations.len(), None).is_none(),
            "an examination the rules do not have"
        );
    }

    #[test]
    fn no_snapshot_is_kept_while_an_input_is_too_fresh_to_trust() {
        let dir = contest_dir();
        let fp = Fingerprint::of(
            &load(dir.path()),
            &executor(),
            ArchiveLimits::default(),
            &dir.path().join("contest.toml"),
        );
        assert!(fp.racy, "files written a moment ago");
        let path = dir.path().join("plan.bin");
        save(&path, &fp, &build(dir.path()), 1, [7; 32]).unwrap();
        assert!(!path.exists());
    }
}
