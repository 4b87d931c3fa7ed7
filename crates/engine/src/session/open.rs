//! Opening a session: the plan (from its snapshot when nothing it is made from changed, or
//! made and kept), the contest's executor, the index loaded beside it, and which planned runs
//! are stored.

use std::collections::BTreeMap;

use mccbuild_core::diag::Problem;
use mccbuild_core::digest::Digest;
use mccbuild_core::timing::phase;
use mccbuild_exec::RunExecutor;
use mccbuild_exec::local::{LocalExecutor, LocalSettings};
use mccbuild_exec::qemu::QemuExecutor;
use mccbuild_plan::Plan;
use mccbuild_plan::digest_cache::DigestCache;
use mccbuild_plan::instance::ArchiveLimits;
use mccbuild_plan::manifest::{Contest, ExecutorKind};
use mccbuild_plan::snapshot::{self, Fingerprint};
use mccbuild_store::index::LoadReport;
use mccbuild_store::{Index, Store, StoreLock};

use super::Session;
use super::other_keys::other_keys_warning;
use super::recall::remember_noop;
use super::records::stored_runs;
use crate::error::OpenError;
use crate::progress::count;

impl Session {
    pub(super) fn open_begun(
        contest: Contest,
        store: Store,
        lock: Option<StoreLock>,
        use_snapshot: bool,
        known: Option<Taken>,
    ) -> Result<Session, OpenError> {
        let had_index = store.index_path().exists();
        let mut warnings: Vec<String> = Vec::new();
        // The index (every record stat'ed, changed ones verified) loads beside the plan.
        let index_loading = {
            let store = store.clone();
            std::thread::spawn(move || Index::load(&store))
        };
        let (plan, executor, binary, fingerprints) =
            plan_of(contest, &store, use_snapshot, known, &mut warnings)?;
        let t = phase("index load");
        let (mut index, loaded) = index_loading.join().unwrap_or_else(|_| {
            let mut index = Index::load(&store);
            index.1.index_problem = Some("the index could not be loaded in parallel".into());
            index
        });
        drop(t);
        warnings.extend(store.notes.iter().cloned());
        warnings.extend(loaded.index_problem.iter().cloned());
        if !had_index && !index.is_empty() {
            // docs/cache.md: a missing index is rebuilt from the records, with a warning.
            warnings.push(format!(
                "{} is missing: rebuilt from the {} of the store",
                store.index_path().display(),
                count(index.len(), "record", "records")
            ));
        }
        for tool in &plan.contest.tools {
            if tool.dir.is_some() && tool.examinations.is_empty() {
                warnings.push(format!(
                    "tool `{}` enters no examination (`examinations = []` in {}): it has no runs; \
                     name examinations, categories or \"all\"",
                    tool.name,
                    plan.contest.manifest_path.display()
                ));
            }
        }
        warnings.extend(loaded.corrupt.iter().map(|c| {
            format!(
                "damaged run record {}: {}; it is not used, its run is to be done again (by `mccbuild run`, whose new record replaces it)",
                c.path.display(),
                c.reason
            )
        }));
        // What loading learnt (a rebuilt index, records verified again) is written back, so
        // that the next command does not redo it; a store that cannot be written only costs
        // that time again.
        if index.is_dirty() {
            let _t = phase("index save");
            let _ = index.save_learnt(&store);
        }
        let LoadReport { corrupt, .. } = loaded;
        let t = phase("stored runs");
        let (stored, mut records) = stored_runs(&plan, &index);
        drop(t);
        let t = phase("stored under other keys");
        warnings.extend(other_keys_warning(
            &plan,
            &store,
            &index,
            &stored,
            &executor.key_ingredients(),
            lock.is_some(),
        ));
        drop(t);
        if let Some(fingerprints) =
            fingerprints.filter(|_| warnings.is_empty() && corrupt.is_empty())
        {
            remember_noop(
                &plan,
                &store,
                &index,
                &stored,
                &mut records,
                &binary,
                &fingerprints,
            );
        }
        Ok(Session {
            plan,
            store,
            index,
            executor,
            lock,
            corrupt,
            warnings,
            binary,
            stored,
            records: std::sync::Mutex::new(records),
            redo: BTreeMap::new(),
        })
    }
}

/// The contest's plan, its executor and the digest of the running binary: from the plan
/// snapshot when nothing the plan is made from has changed (crates/plan/src/snapshot.rs),
/// otherwise made (with the digest cache) and kept for the next command.
pub(super) fn plan_of(
    contest: Contest,
    store: &Store,
    use_snapshot: bool,
    known: Option<Taken>,
    warnings: &mut Vec<String>,
) -> Result<Planned, OpenError> {
    let digests = store.meta_dir().join("digests.bin");
    // The guest's files are key ingredients of a QEMU contest, digested through the cache; the
    // other executors need it only when the plan is made.
    let qemu = contest.executor.kind == ExecutorKind::Qemu;
    let t = phase("digest cache load");
    let mut cache = qemu.then(|| DigestCache::load(&digests));
    drop(t);
    let snapshot_path = snapshot::snapshot_path(&store.meta_dir(), &contest.manifest_path);
    // The executor (its probes of the machine) and the fingerprints (stat calls) are made while
    // the snapshot is read (or were by `recall`), the fingerprints before the answers are read
    // (as the fingerprint before the plan's files).
    let taking = |contest: &Contest| match known {
        Some(known) => Ok(known),
        None => {
            let _t = phase("plan snapshot: executor and fingerprint");
            Taken::of(contest, cache.get_or_insert_with(DigestCache::in_memory))
        }
    };
    let t = phase("plan snapshot");
    let (taken, loaded) = match use_snapshot {
        true => {
            let mut taken = None;
            let (_, loaded) = snapshot::load(&snapshot_path, contest, |contest| {
                let now = taking(contest);
                let plan = now.as_ref().ok().map(|t| t.plan.clone());
                taken = Some(now);
                plan
            });
            (taken.expect("the fingerprints are taken"), loaded)
        }
        false => (taking(&contest), Err(Box::new(contest))),
    };
    drop(t);
    let Taken {
        plan: fingerprint,
        answers,
        executor,
    } = taken?;
    // What a remembered no-op of this plan would be keyed by (docs/cache.md, "The remembered
    // no-op"): nothing is remembered for a QEMU contest (its guest's digests are not in the
    // fingerprint's stamps) or while a stamp is too fresh.
    let fingerprints =
        (use_snapshot && !qemu && !fingerprint.racy && !answers.racy).then_some(Fingerprints {
            plan: fingerprint.digest,
            answers: answers.digest,
        });
    let (plan, binary) = match loaded {
        Ok(hit) => {
            if let Some(mut cache) = cache.filter(|_| qemu) {
                save_digests(&mut cache, warnings);
            }
            hit
        }
        Err(contest) => {
            let mut cache = match cache {
                Some(cache) if qemu => cache,
                _ => {
                    let _t = phase("digest cache load");
                    DigestCache::load(&digests)
                }
            };
            let t = phase("plan");
            let declared_tools = contest.tools.len();
            let ingredients = executor.key_ingredients();
            let limits = ArchiveLimits::default();
            let plan = Plan::build_runs(*contest, &ingredients, &mut cache, limits)?;
            drop(t);
            let exe = std::env::current_exe().unwrap_or_default();
            let binary = cache.file_digest(&exe).unwrap_or([0; 32]);
            save_digests(&mut cache, warnings);
            // A store that cannot be written only costs the making of the plan again.
            let _ = snapshot::save(&snapshot_path, &fingerprint, &plan, declared_tools, binary);
            (plan, binary)
        }
    };
    Ok((plan.with_answers_given()?, executor, binary, fingerprints))
}

/// What [`plan_of`] gives: the plan, its executor, the binary's digest, and what a remembered
/// no-op of it would be keyed by (`None`: not to be remembered).
type Planned = (Plan, Box<dyn RunExecutor>, Digest, Option<Fingerprints>);

/// A contest's executor, and the fingerprints of its plan and of the answers every command
/// reads besides it (crates/plan/src/snapshot.rs), from the files as they were when taken.
pub struct Taken {
    pub(super) plan: Fingerprint,
    pub(super) answers: Fingerprint,
    pub(super) executor: Box<dyn RunExecutor>,
}

impl Taken {
    /// The executor of `contest` (which probes the machine: its sandbox is a key ingredient)
    /// and the fingerprints now.
    pub(super) fn of(contest: &Contest, cache: &mut DigestCache) -> Result<Taken, OpenError> {
        let exe = std::env::current_exe().unwrap_or_default();
        // The stat calls beside the executor's probes.
        let (stamps, answers, executor) = std::thread::scope(|scope| {
            let stamping = scope.spawn(|| {
                (
                    Fingerprint::stamps(contest, &exe),
                    snapshot::answers_fingerprint(contest),
                )
            });
            let executor = executor_for(contest, cache);
            let (stamps, answers) = stamping
                .join()
                .unwrap_or_else(|e| std::panic::resume_unwind(e));
            (stamps, answers, executor)
        });
        let executor = executor?;
        Ok(Taken {
            plan: Fingerprint::with_stamps(
                contest,
                &executor.key_ingredients(),
                ArchiveLimits::default(),
                &stamps,
            ),
            answers,
            executor,
        })
    }
}

/// The digests a remembered no-op is keyed by besides the store's stamps.
pub(super) struct Fingerprints {
    pub(super) plan: Digest,
    pub(super) answers: Digest,
}

fn save_digests(cache: &mut DigestCache, warnings: &mut Vec<String>) {
    if let Err(e) = cache.save() {
        warnings.push(format!("could not save the digest cache: {e}"));
    }
}

/// The executor of a contest's runs. A Slurm step runs each run in the local sandbox, so a run's
/// key holds that sandbox's ingredients: the scheduler does not change a result (docs/cache.md),
/// and a contest moved between local and Slurm reuses its records.
fn executor_for(
    contest: &Contest,
    cache: &mut DigestCache,
) -> Result<Box<dyn RunExecutor>, OpenError> {
    Ok(match contest.executor.kind {
        ExecutorKind::Local | ExecutorKind::Slurm => Box::new(LocalExecutor::new(LocalSettings {
            // Runs see neither the project nor the store (only their tool is bound back).
            hidden: vec![contest.root.clone(), contest.store.clone()],
            ..LocalSettings::default()
        })),
        ExecutorKind::Qemu => Box::new(QemuExecutor::new(contest, cache).map_err(|e| {
            OpenError::Input(
                Problem::new(&contest.manifest_path, e.to_string())
                    .help("see docs/execution.md, \"QEMU executor\"")
                    .into(),
            )
        })?),
    })
}
