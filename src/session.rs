//! One invocation's view of a contest: the plan, the store and its index, the executor.
//!
//! [`Session::open`] reads the manifest and rules, plans every run and looks each up in the
//! store; [`Session::execute`] (src/execute.rs) runs what is missing and records it;
//! [`Session::scoring`] builds the scoring database from the records.

use std::collections::BTreeMap;
use std::path::Path;

use mccbuild_core::diag::Problem;
use mccbuild_core::digest::Digest;
use mccbuild_core::timing::phase;
use mccbuild_exec::local::{LocalExecutor, LocalSettings};
use mccbuild_exec::qemu::QemuExecutor;
use mccbuild_exec::RunExecutor;
use mccbuild_plan::digest_cache::DigestCache;
use mccbuild_plan::instance::ArchiveLimits;
use mccbuild_plan::manifest::{Contest, ExecutorKind};
use mccbuild_plan::Plan;
use mccbuild_scoring::db::{Handles, ScoringDb};
use mccbuild_scoring::inputs::build_scoring;
use mccbuild_scoring::scores::{scores_report, ScoresReport};
use mccbuild_store::index::LoadReport;
use mccbuild_store::{CorruptRecord, Index, LockWait, Store, StoreLock};
use serde::Serialize;

use crate::error::Error;

pub struct Session {
    pub plan: Plan,
    pub store: Store,
    pub index: Index,
    pub executor: Box<dyn RunExecutor>,
    /// Records found damaged while loading (their runs are to be done again).
    pub corrupt: Vec<CorruptRecord>,
    /// The store's execution lock, for commands that execute runs (held until the session ends).
    pub lock: Option<StoreLock>,
    /// Things the user should know that do not stop the command.
    pub warnings: Vec<String>,
    /// Digest of the running mccbuild binary (part of the results key).
    pub binary: Digest,
    /// Per planned run: whether its record is in the store.
    pub(crate) stored: Vec<bool>,
}

/// Counts for `mccbuild plan`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub runs: usize,
    pub cached: usize,
    pub to_run: usize,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PlanSummary {
    pub runs: usize,
    pub cached: usize,
    pub to_run: usize,
    pub by_tool: BTreeMap<String, Counts>,
}

/// Which runs a command is about (`--tool`, `--model`, `--examination`).
#[derive(Clone, Debug, Default)]
pub struct Filter {
    pub tools: Vec<String>,
    pub models: Vec<String>,
    pub examinations: Vec<String>,
}

impl Session {
    /// Loads the contest, plans it, opens the store. Problems with the manifest or rules stop
    /// here ([`Error::Input`]), as does a store that cannot be used ([`Error::Store`]); problems
    /// with single instances are in `plan.problems`.
    pub fn open(manifest: &Path) -> Result<Session, Error> {
        Session::open_with(manifest, None)
    }

    /// [`Session::open`] for a command that executes runs: it takes the store's execution lock
    /// (waiting for, or refusing, another such command) before it reads which runs are stored.
    pub fn open_executing(
        manifest: &Path,
        wait: LockWait,
        command: &str,
    ) -> Result<Session, Error> {
        Session::open_with(manifest, Some((wait, command)))
    }

    fn open_with(manifest: &Path, lock: Option<(LockWait, &str)>) -> Result<Session, Error> {
        let t = phase("manifest and rules");
        let contest = Contest::load(manifest)?;
        drop(t);
        let store = Store::open(&contest.store)?;
        let lock = match lock {
            None => None,
            Some((wait, command)) => Some(store.lock_for_execution(wait, command, |holder| {
                eprintln!(
                    "waiting for the store {}: another mccbuild executes runs there ({holder}); this one starts when it ends (`--no-wait` refuses instead)",
                    store.root().display()
                )
            })?),
        };
        // The index (every record stat'ed, changed ones verified) loads beside the plan.
        let index_loading = {
            let store = store.clone();
            std::thread::spawn(move || Index::load(&store))
        };
        let t = phase("digest cache load");
        let mut cache = DigestCache::load(&store.meta_dir().join("digests.bin"));
        drop(t);
        let executor = executor_for(&contest, &mut cache)?;
        let t = phase("plan");
        let plan = Plan::build(
            contest,
            &executor.key_ingredients(),
            &mut cache,
            ArchiveLimits::default(),
        )?;
        drop(t);
        let mut warnings: Vec<String> = Vec::new();
        let binary = std::env::current_exe()
            .and_then(|exe| cache.file_digest(&exe))
            .unwrap_or([0; 32]);
        if let Err(e) = cache.save() {
            warnings.push(format!("could not save the digest cache: {e}"));
        }
        let t = phase("index load");
        let (mut index, loaded) = index_loading.join().unwrap_or_else(|_| {
            let mut index = Index::load(&store);
            index.1.index_problem = Some("the index could not be loaded in parallel".into());
            index
        });
        drop(t);
        warnings.extend(store.notes.iter().cloned());
        warnings.extend(loaded.index_problem.iter().cloned());
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
            let _ = index.save(&store);
        }
        let LoadReport { corrupt, .. } = loaded;
        let stored = plan.runs.iter().map(|r| index.contains(&r.key)).collect();
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
        })
    }

    /// [`Session::open`], then the warnings said on standard error.
    pub fn open_and_warn(manifest: &Path) -> Result<Session, Error> {
        Session::open_with(manifest, None).map(Session::warn)
    }

    /// [`Session::open_executing`], then the warnings said on standard error.
    pub fn open_executing_and_warn(
        manifest: &Path,
        wait: LockWait,
        command: &str,
    ) -> Result<Session, Error> {
        Session::open_with(manifest, Some((wait, command))).map(Session::warn)
    }

    fn warn(session: Session) -> Session {
        for w in &session.warnings {
            eprintln!("warning: {w}");
        }
        session
    }

    /// Problems with single instances, said as warnings (the commands that run, score or export
    /// go on without those instances' runs; `check` refuses them).
    pub fn warn_instance_problems(&self) {
        for p in &self.plan.problems.0 {
            eprintln!("warning: {p}");
        }
    }

    /// Whether planned run `i` is in the store.
    pub fn is_stored(&self, i: usize) -> bool {
        self.stored[i]
    }

    /// Indices of the plan's runs that pass `filter`.
    pub fn select(&self, filter: &Filter) -> Result<Vec<usize>, Error> {
        let contest = &self.plan.contest;
        for t in &filter.tools {
            if contest.tool(t).is_none() {
                return Err(Error::Usage(format!(
                    "no tool `{t}` in {}",
                    contest.manifest_path.display()
                )));
            }
        }
        for m in &filter.models {
            if !self.plan.models.iter().any(|pm| &pm.name == m) {
                return Err(Error::Usage(format!(
                    "no model `{m}` in {}",
                    contest.manifest_path.display()
                )));
            }
        }
        for e in &filter.examinations {
            if contest.edition.examination(e).is_none() && contest.edition.category(e).is_none() {
                return Err(Error::Usage(format!(
                    "no examination or category `{e}` in {}",
                    contest.edition.info.name
                )));
            }
        }
        let edition = &contest.edition;
        Ok(self
            .plan
            .runs
            .iter()
            .enumerate()
            .filter(|(_, run)| {
                let ei = &self.plan.exam_instances[run.exam_instance];
                let exam = &edition.examinations[ei.exam];
                let model = &self.plan.models[self.plan.instances[ei.instance].model].name;
                (filter.tools.is_empty() || filter.tools.contains(&contest.tools[run.tool].name))
                    && (filter.models.is_empty() || filter.models.contains(model))
                    && (filter.examinations.is_empty()
                        || filter.examinations.iter().any(|e| {
                            *e == exam.name || *e == edition.categories[exam.category].name
                        }))
            })
            .map(|(i, _)| i)
            .collect())
    }

    pub fn summary(&self, selection: &[usize]) -> PlanSummary {
        let mut summary = PlanSummary::default();
        for tool in &self.plan.contest.tools {
            summary.by_tool.insert(tool.name.clone(), Counts::default());
        }
        for &i in selection {
            let run = &self.plan.runs[i];
            let cached = self.is_stored(i);
            let counts = summary
                .by_tool
                .get_mut(&self.plan.contest.tools[run.tool].name)
                .expect("every tool is listed");
            for c in [&mut summary.runs, &mut counts.runs] {
                *c += 1;
            }
            if cached {
                summary.cached += 1;
                counts.cached += 1;
            } else {
                summary.to_run += 1;
                counts.to_run += 1;
            }
        }
        summary
    }

    /// The podium report (no values), from the results cache when nothing it depends on changed.
    pub fn podium_report(&self) -> ScoresReport {
        let _t = phase("results");
        let key = crate::results_cache::results_key(
            &self.plan,
            |i| {
                self.stored[i]
                    .then(|| self.index.digest(&self.plan.runs[i].key))
                    .flatten()
            },
            &self.binary,
        );
        if let Some(report) = crate::results_cache::load(&self.store, &key) {
            return report;
        }
        let (db, handles) = self.scoring();
        let report = scores_report(&self.plan, &db, &handles, false);
        // A cache that cannot be written only costs time next time.
        let _ = crate::results_cache::save(&self.store, &key, &report);
        report
    }

    /// Builds the scoring database from the records of the plan's runs.
    pub fn scoring(&self) -> (ScoringDb, Handles) {
        let _t = phase("salsa inputs");
        build_scoring(ScoringDb::default(), &self.plan, |key| self.index.get(key))
    }

    /// As [`Session::scoring`], with a database that can log the queries it executes.
    pub fn scoring_logged(&self) -> (ScoringDb, Handles) {
        build_scoring(ScoringDb::with_log(), &self.plan, |key| self.index.get(key))
    }
}

/// The executor of a contest's runs. A Slurm step runs each run in the local sandbox, so a run's
/// key holds that sandbox's ingredients: the scheduler does not change a result (docs/cache.md),
/// and a contest moved between local and Slurm reuses its records.
fn executor_for(contest: &Contest, cache: &mut DigestCache) -> Result<Box<dyn RunExecutor>, Error> {
    Ok(match contest.executor.kind {
        ExecutorKind::Local | ExecutorKind::Slurm => Box::new(LocalExecutor::new(LocalSettings {
            // Runs see neither the project nor the store (only their tool is bound back).
            hidden: vec![contest.root.clone(), contest.store.clone()],
            ..LocalSettings::default()
        })),
        ExecutorKind::Qemu => Box::new(QemuExecutor::new(contest, cache).map_err(|e| {
            Error::Input(
                Problem::new(&contest.manifest_path, e.to_string())
                    .help("see docs/execution.md, \"QEMU executor\"")
                    .into(),
            )
        })?),
    })
}
