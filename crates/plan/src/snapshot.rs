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
use mccbuild_core::RunKey;
use mccbuild_rules::edition::{Limits, TimeLimit};
use serde::{Deserialize, Serialize};

use crate::archive::ArchiveLimits;
use crate::key::ToolIdentity;
use crate::manifest::{Contest, InstanceSource};
use crate::plan::{imported_tool, ExamInstance, LeftOut, PlannedInstance, PlannedModel};
use crate::plan::{Plan, Run, RunOrigin};

/// The first bytes of a snapshot file.
const MAGIC: &[u8; 8] = b"MCCBPLAN";
/// The snapshot's layout; a snapshot of another layout is made again.
const FORMAT: u32 = 1;
/// The header: the magic, the format, the fingerprint, the digest of the rest.
const HEADER: usize = 8 + 4 + 32 + 32;
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
        let mut walk = Walk {
            hasher: blake3::Hasher::new(),
            racy: false,
        };
        walk.text("schema", &format!("mccbuild plan snapshot {FORMAT}"));
        walk.text("contest", &format!("{contest:?}"));
        walk.text("executor", &format!("{executor:?}"));
        walk.text("archive limits", &format!("{archive_limits:?}"));
        walk.entry(exe, false);
        for (path, deep) in read_by_plan(contest) {
            walk.entry(&path, deep);
        }
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
/// instance, hidden files (an index into the table of the plan's distinct lists, shared by every
/// tool's run of one examination instance) and limits (an index into the table of distinct
/// limits), then its origin (0 executed, 1 imported) with the file, row and line of an imported
/// one; integers little-endian. Fixed-width records read back without a parser, beside the
/// rest.
const RUN_BYTES: usize = 32 + 4 * 4 + 1 + 3 * 4;

/// What the snapshot stores besides its runs: the plan of [`Plan::build_runs`] without the
/// contest (loaded fresh by every command, and part of the fingerprint; the tools the results
/// files add to it are kept by name and cores) and without the results files' rows (their runs
/// and keys are what counts; `import`, which needs the rows, makes its plan from the files),
/// with the digest of the binary that made it. Written from borrows, read into owned values
/// (the same postcard layout).
#[derive(Serialize)]
struct PayloadOut<'a> {
    binary: Digest,
    imported_tools: Vec<(&'a str, u32)>,
    tools: &'a [ToolIdentity],
    models: &'a [PlannedModel],
    instances: &'a [PlannedInstance],
    exam_instances: &'a [ExamInstance],
    hidden: Vec<&'a [String]>,
    limits: Vec<(u64, u64, TimeLimit)>,
    problems: &'a Problems,
    left_out: &'a [LeftOut],
}

#[derive(Deserialize)]
struct PayloadIn {
    binary: Digest,
    imported_tools: Vec<(String, u32)>,
    tools: Vec<ToolIdentity>,
    models: Vec<PlannedModel>,
    instances: Vec<PlannedInstance>,
    exam_instances: Vec<ExamInstance>,
    hidden: Vec<Vec<String>>,
    limits: Vec<(u64, u64, TimeLimit)>,
    problems: Problems,
    left_out: Vec<LeftOut>,
}

/// Where the snapshot of the contest at `manifest` lives in the store's `meta` folder: one per
/// manifest, so that two manifests sharing a store do not replace each other's.
pub fn snapshot_path(meta_dir: &Path, manifest: &Path) -> PathBuf {
    let manifest = fs::canonicalize(manifest).unwrap_or_else(|_| manifest.to_path_buf());
    let digest = blake3::hash(manifest.to_string_lossy().as_bytes());
    meta_dir.join(format!("plan-{}.bin", &digest.to_hex()[..16]))
}

/// The plan kept at `path` for `contest` if its fingerprint is `fingerprint`, with the digest
/// of the binary that made it; otherwise the contest back (no snapshot, another fingerprint, or
/// a damaged one: the caller makes the plan).
pub fn load(
    path: &Path,
    fingerprint: &Fingerprint,
    contest: Contest,
) -> Result<(Plan, Digest), Box<Contest>> {
    let t = phase("plan snapshot: read");
    let bytes = read_if_made_under(path, fingerprint).unwrap_or_default();
    drop(t);
    let t = phase("plan snapshot: verify");
    let sections = sections_of(&bytes, fingerprint);
    drop(t);
    let Some((payload, runs)) = sections else {
        return Err(Box::new(contest));
    };
    let t = phase("plan snapshot: decode");
    // The runs' fixed-width records beside the rest's postcard.
    let (p, raw_runs) = std::thread::scope(|scope| {
        let raw = scope.spawn(|| read_runs(runs));
        let p = postcard::from_bytes::<PayloadIn>(payload).ok();
        (p, raw.join().ok().flatten())
    });
    drop(t);
    let (Some(p), Some(raw_runs)) = (p, raw_runs) else {
        return Err(Box::new(contest));
    };
    let hidden: Vec<Arc<[String]>> = p.hidden.into_iter().map(Arc::from).collect();
    let mut runs = Vec::with_capacity(raw_runs.len());
    for r in raw_runs {
        let (Some(hidden), Some(&(time_s, memory_mb, time)), true, true) = (
            hidden.get(r.hidden),
            p.limits.get(r.limits),
            r.tool < p.tools.len(),
            r.exam_instance < p.exam_instances.len(),
        ) else {
            return Err(Box::new(contest));
        };
        runs.push(Run {
            tool: r.tool,
            exam_instance: r.exam_instance,
            key: r.key,
            limits: Limits {
                time_s,
                memory_mb,
                time,
            },
            hidden: hidden.clone(),
            origin: r.origin,
        });
    }
    let mut contest = contest;
    for (name, cores) in &p.imported_tools {
        let tool = imported_tool(&contest, name, *cores);
        contest.tools.push(tool);
    }
    if contest.tools.len() != p.tools.len() {
        return Err(Box::new(contest));
    }
    let plan = Plan {
        contest,
        imported: None,
        tools: p.tools,
        models: p.models,
        instances: p.instances,
        exam_instances: p.exam_instances,
        runs,
        problems: p.problems,
        reference: None,
        corrections: None,
        left_out: p.left_out,
    };
    Ok((plan, p.binary))
}

/// The bytes of the snapshot at `path` if its header names this format and `fingerprint`: a
/// snapshot of another plan is not read past its header.
fn read_if_made_under(path: &Path, fingerprint: &Fingerprint) -> io::Result<Vec<u8>> {
    use std::io::Read;
    let mut file = fs::File::open(path)?;
    let mut bytes = vec![0u8; HEADER];
    file.read_exact(&mut bytes)?;
    if bytes[..MAGIC.len()] != MAGIC[..]
        || bytes[8..12] != FORMAT.to_le_bytes()
        || bytes[12..44] != fingerprint.digest
    {
        return Ok(Vec::new());
    }
    file.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// A run as its record in the runs section says (indices not yet checked).
struct RawRun {
    key: RunKey,
    tool: usize,
    exam_instance: usize,
    hidden: usize,
    limits: usize,
    origin: RunOrigin,
}

fn read_runs(section: &[u8]) -> Option<Vec<RawRun>> {
    if section.len() % RUN_BYTES != 0 {
        return None;
    }
    let u32_at =
        |r: &[u8], at: usize| u32::from_le_bytes(r[at..at + 4].try_into().unwrap()) as usize;
    section
        .chunks_exact(RUN_BYTES)
        .map(|r| {
            let origin = match r[48] {
                0 => RunOrigin::Executed,
                1 => RunOrigin::Imported {
                    file: u32_at(r, 49),
                    row: u32_at(r, 53),
                    line: u32_at(r, 57),
                },
                _ => return None,
            };
            Some(RawRun {
                key: RunKey(r[..32].try_into().unwrap()),
                tool: u32_at(r, 32),
                exam_instance: u32_at(r, 36),
                hidden: u32_at(r, 40),
                limits: u32_at(r, 44),
                origin,
            })
        })
        .collect()
}

/// The two sections of a snapshot file (its postcard part and its runs), if it is one of this
/// format, made under `fingerprint`, and whole (its digest matches).
fn sections_of<'a>(bytes: &'a [u8], fingerprint: &Fingerprint) -> Option<(&'a [u8], &'a [u8])> {
    let header = HEADER;
    if bytes.len() < header + 8 || &bytes[..MAGIC.len()] != MAGIC {
        return None;
    }
    let format = u32::from_le_bytes(bytes[8..12].try_into().ok()?);
    if format != FORMAT || bytes[12..44] != fingerprint.digest {
        return None;
    }
    let body = &bytes[header..];
    if blake3::hash(body).as_bytes()[..] != bytes[44..76] {
        return None;
    }
    let len = usize::try_from(u64::from_le_bytes(body[..8].try_into().ok()?)).ok()?;
    let rest = &body[8..];
    (len <= rest.len()).then(|| rest.split_at(len))
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
    let mut hidden_index: HashMap<*const [String], u32> = HashMap::new();
    let mut hidden: Vec<&[String]> = Vec::new();
    let mut limits_index: HashMap<Limits, u32> = HashMap::new();
    let mut limits: Vec<(u64, u64, TimeLimit)> = Vec::new();
    let mut runs: Vec<u8> = Vec::with_capacity(plan.runs.len() * RUN_BYTES);
    for run in &plan.runs {
        let h = *hidden_index
            .entry(Arc::as_ptr(&run.hidden))
            .or_insert_with(|| {
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
    let payload = postcard::to_allocvec(&PayloadOut {
        binary,
        imported_tools: plan.contest.tools[declared_tools.min(plan.contest.tools.len())..]
            .iter()
            .map(|t| (t.name.as_str(), t.cores))
            .collect(),
        tools: &plan.tools,
        models: &plan.models,
        instances: &plan.instances,
        exam_instances: &plan.exam_instances,
        hidden,
        limits,
        problems: &plan.problems,
        left_out: &plan.left_out,
    })
    .map_err(io::Error::other)?;
    let mut body = Vec::with_capacity(8 + payload.len() + runs.len());
    body.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    body.extend_from_slice(&payload);
    body.extend_from_slice(&runs);
    let mut bytes = Vec::with_capacity(HEADER + body.len());
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&FORMAT.to_le_bytes());
    bytes.extend_from_slice(&fingerprint.digest);
    bytes.extend_from_slice(blake3::hash(&body).as_bytes());
    bytes.extend_from_slice(&body);
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
        super::load(path, fp, load(dir)).ok()
    }

    #[test]
    fn a_damaged_or_cut_snapshot_is_not_used() {
        let dir = contest_dir();
        let plan = build(dir.path());
        let path = dir.path().join("plan.bin");
        let fp = trusted(dir.path());
        save(&path, &fp, &plan, 1, [7; 32]).unwrap();
        let whole = fs::read(&path).unwrap();
        for at in [whole.len() / 2, whole.len() - 1, 80] {
            let mut bytes = whole.clone();
            bytes[at] ^= 0x20;
            fs::write(&path, &bytes).unwrap();
            assert!(
                load_snapshot(&path, &fp, dir.path()).is_none(),
                "byte {at} flipped"
            );
        }
        for len in [0, 10, 76, whole.len() - 1] {
            fs::write(&path, &whole[..len]).unwrap();
            assert!(
                load_snapshot(&path, &fp, dir.path()).is_none(),
                "cut at {len}"
            );
        }
        fs::write(&path, &whole).unwrap();
        assert!(load_snapshot(&path, &fp, dir.path()).is_some());
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
