//! One invocation's view of a contest: the plan, the store and its index, the executor.
//!
//! `open` reads the manifest and rules, plans every run and looks each up in the store; `execute`
//! runs what is missing and records it; `scoring` builds the salsa database from the records.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use serde::Serialize;

use crate::answers::{resolve, Expected};
use crate::db::{ContestShape, EiShape, Handles, ModelInfo, Perf, RunShape, ScoringDb, ToolInfo};
use crate::diag::Problems;
use crate::digest::DigestCache;
use crate::exec::local::{LocalExecutor, LocalSettings};
use crate::exec::pool::{available_cores, run_all, PoolEvent};
use crate::exec::qemu::QemuExecutor;
use crate::exec::setup::ensure_setup;
use crate::exec::{Execution, RunExecutor, RunSpec};
use crate::instance::ArchiveLimits;
use crate::manifest::{Contest, ExecutorKind, ToolKind};
use crate::plan::{Plan, Run};
use crate::store::index::LoadReport;
use crate::store::record::SlurmPlacement;
use crate::store::{CorruptRecord, Index, RunRecord, Store, Summary, RECORD_FORMAT};

pub struct Session {
    pub plan: Plan,
    pub store: Store,
    pub index: Index,
    pub executor: Box<dyn RunExecutor>,
    /// Records found damaged while loading (their runs are to be done again).
    pub corrupt: Vec<CorruptRecord>,
    /// Things the user should know that do not stop the command.
    pub warnings: Vec<String>,
    /// Digest of the running mccbuild binary (part of the results key).
    pub binary: crate::digest::Digest,
    /// Per planned run: whether its record is in the store.
    stored: Vec<bool>,
}

/// Whether a run executed by a Slurm step died of the signal Slurm sent the whole step (the
/// job was cancelled, hit its time limit or lost its node): Slurm signals every process of the
/// step, the tool's included, so the tool may die before this process notices its own signal.
/// Such a run is the infrastructure's doing, never recorded as the tool's crash: a tool killed
/// by SIGTERM, SIGKILL, SIGINT or SIGHUP while this process is told to stop (within a second).
/// (A run that ends otherwise once this process got its signal is not recorded either: a tool
/// whose child was killed may still exit 0 with fewer answers.)
fn signalled_with_its_step(execution: &Execution, cancel: &AtomicBool) -> bool {
    let crate::store::Termination::Signal { signal } = execution.termination else {
        return false;
    };
    if ![libc::SIGTERM, libc::SIGKILL, libc::SIGINT, libc::SIGHUP].contains(&signal) {
        return false;
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
    while std::time::Instant::now() < deadline {
        if cancel.load(std::sync::atomic::Ordering::SeqCst) {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    false
}

/// Where `execute` runs what is missing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum How {
    /// Here, in the local sandbox (`mccbuild run` with the local executor).
    Local,
    /// Here, in the local sandbox, as a Slurm step (`mccbuild exec-run`).
    Step,
    /// Through Slurm: one job per model.
    Slurm,
}

/// Follows a Slurm contest for [`crate::exec::slurm::follow_jobs`]: records appearing in the
/// store are indexed and shown as progress.
struct SlurmFollower<'a> {
    plan: &'a Plan,
    store: &'a Store,
    index: &'a mut Index,
    stored: &'a mut Vec<bool>,
    /// Runs shown as running (their job reached a node).
    started: BTreeMap<usize, ()>,
    /// Per model, the nodes its runs recorded now ran on (rule E-5.1: one).
    nodes: BTreeMap<usize, std::collections::BTreeSet<String>>,
    progress: &'a mut dyn Progress,
    outcome: &'a mut ExecSummary,
}

impl crate::exec::slurm::Follower for SlurmFollower<'_> {
    fn recorded(&mut self, i: usize) -> bool {
        if self.stored[i] {
            return true;
        }
        let run = &self.plan.runs[i];
        if !self.store.record_path(&run.key).exists() {
            return false;
        }
        match self.store.get(&run.key) {
            Ok(Some(record)) => {
                self.stored[i] = true;
                self.outcome.executed += 1;
                let name = label(self.plan, run);
                if self.started.remove(&i).is_none() {
                    self.progress.run_started(&name);
                }
                let where_ = record
                    .slurm
                    .as_ref()
                    .map(|p| format!(" (node {}, job {}.{})", p.node, p.job, p.step))
                    .unwrap_or_default();
                self.progress.run_finished(
                    &name,
                    &format!("{}{where_}", record.outcome_label()),
                    false,
                );
                self.nodes
                    .entry(self.plan.instance_of(run).model)
                    .or_default()
                    .insert(record.host.clone());
                self.index.insert(record.key, Summary::of(&record));
                true
            }
            // Written by a step, so whole (atomic rename); unreadable means it is to be redone.
            Ok(None) | Err(_) => false,
        }
    }

    fn event(&mut self, event: crate::exec::slurm::SlurmEvent) {
        use crate::exec::slurm::SlurmEvent;
        match event {
            SlurmEvent::Submitted {
                job,
                model,
                runs,
                attempt,
            } => {
                let again = if attempt > 1 {
                    format!(" (attempt {attempt})")
                } else {
                    String::new()
                };
                self.progress.message(&format!(
                    "submitted Slurm job {job}: model {model}, {runs} runs{again}"
                ));
            }
            SlurmEvent::Running { runs, .. } => {
                for i in runs {
                    if self.started.insert(i, ()).is_none() {
                        self.progress
                            .run_started(&label(self.plan, &self.plan.runs[i]));
                    }
                }
            }
            SlurmEvent::Requeued {
                job,
                state,
                node,
                runs,
                attempt,
            } => {
                for i in &runs {
                    if self.started.remove(i).is_some() {
                        self.progress
                            .run_requeued(&label(self.plan, &self.plan.runs[*i]));
                    }
                }
                self.progress.message(&format!(
                    "Slurm job {job} ended {state} on node {}: its {} unrecorded runs are to run again (attempt {attempt}); not a failure of the tools",
                    if node.is_empty() { "?" } else { &node },
                    runs.len()
                ));
            }
            SlurmEvent::Failed { runs, reason } => {
                for i in runs {
                    let name = label(self.plan, &self.plan.runs[i]);
                    if self.started.remove(&i).is_none() {
                        self.progress.run_started(&name);
                    }
                    self.progress.run_finished(
                        &name,
                        &format!("infrastructure failure (not recorded): {reason}"),
                        true,
                    );
                }
            }
            SlurmEvent::Message(text) => self.progress.message(&text),
        }
    }
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

/// What `execute` did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ExecSummary {
    pub executed: usize,
    pub cached: usize,
    pub failed: usize,
    /// Runs of results files not in the store yet: `mccbuild import` reads them.
    #[serde(skip_serializing_if = "is_zero")]
    pub to_import: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Why a contest cannot be opened.
#[derive(Debug)]
pub enum OpenError {
    /// The manifest, the rules or a tool folder are invalid.
    Input(Problems),
    /// The store cannot be used.
    Store(String),
}

impl From<Problems> for OpenError {
    fn from(p: Problems) -> Self {
        OpenError::Input(p)
    }
}

/// Progress reporting (the CLI draws it with indicatif).
pub trait Progress {
    fn setup_started(&mut self, _tool: &str) {}
    fn started(&mut self, _total: usize) {}
    fn run_started(&mut self, _label: &str) {}
    fn run_finished(&mut self, _label: &str, _outcome: &str, _failed: bool) {}
    /// A run shown as started goes back to "to run" (its Slurm job ended without it).
    fn run_requeued(&mut self, _label: &str) {}
    fn message(&mut self, _text: &str) {}
    fn finished(&mut self) {}
}

/// Progress that shows nothing.
pub struct Quiet;
impl Progress for Quiet {}

impl Session {
    /// Loads the contest, plans it, opens the store. Problems with the manifest or rules stop
    /// here; problems with single instances become warnings.
    pub fn open(manifest: &Path) -> Result<Session, OpenError> {
        let t = crate::timing::phase("manifest and rules");
        let contest = Contest::load(manifest)?;
        drop(t);
        let store = Store::open(&contest.store).map_err(OpenError::Store)?;
        let t = crate::timing::phase("digest cache load");
        let mut cache = DigestCache::load(&store.meta_dir().join("digests.bin"));
        drop(t);
        let executor: Box<dyn RunExecutor> = match contest.executor.kind {
            // A Slurm step runs each run in the local sandbox, so a run's key holds that
            // sandbox's ingredients: the scheduler does not change a result (docs/cache.md),
            // and a contest moved between local and Slurm reuses its records.
            ExecutorKind::Local | ExecutorKind::Slurm => {
                Box::new(LocalExecutor::new(LocalSettings {
                    // Runs see neither the project nor the store (only their tool is bound back).
                    hidden: vec![contest.root.clone(), contest.store.clone()],
                    ..LocalSettings::default()
                }))
            }
            ExecutorKind::Qemu => {
                Box::new(QemuExecutor::new(&contest, &mut cache).map_err(|e| {
                    OpenError::Input(
                        crate::diag::Problem::new(&contest.manifest_path, e)
                            .help("see docs/execution.md, \"QEMU executor\"")
                            .into(),
                    )
                })?)
            }
        };
        let t = crate::timing::phase("plan");
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
        let t = crate::timing::phase("index load");
        let (
            index,
            LoadReport {
                corrupt,
                index_problem,
                ..
            },
        ) = Index::load(&store);
        drop(t);
        warnings.extend(index_problem);
        for c in &corrupt {
            warnings.push(format!(
                "damaged run record {}: {}; its run will be done again",
                c.path.display(),
                c.reason
            ));
        }
        let stored = plan.runs.iter().map(|r| index.contains(&r.key)).collect();
        Ok(Session {
            plan,
            store,
            index,
            executor,
            corrupt,
            warnings,
            binary,
            stored,
        })
    }

    /// Whether planned run `i` is in the store.
    pub fn is_stored(&self, i: usize) -> bool {
        self.stored[i]
    }

    /// Indices of the plan's runs that pass `filter`.
    pub fn select(&self, filter: &Filter) -> Result<Vec<usize>, String> {
        let contest = &self.plan.contest;
        for t in &filter.tools {
            if contest.tool(t).is_none() {
                return Err(format!(
                    "no tool `{t}` in {}",
                    contest.manifest_path.display()
                ));
            }
        }
        for m in &filter.models {
            if !self.plan.models.iter().any(|pm| &pm.name == m) {
                return Err(format!(
                    "no model `{m}` in {}",
                    contest.manifest_path.display()
                ));
            }
        }
        for e in &filter.examinations {
            if contest.edition.examination(e).is_none() && contest.edition.category(e).is_none() {
                return Err(format!(
                    "no examination or category `{e}` in {}",
                    contest.edition.info.name
                ));
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

    /// Executes the selected runs that are not in the store, `jobs` at a time, with the
    /// manifest's executor.
    pub fn execute(
        &mut self,
        selection: &[usize],
        jobs: usize,
        progress: &mut dyn Progress,
        cancel: &Arc<AtomicBool>,
    ) -> ExecSummary {
        let how = match self.plan.contest.executor.kind {
            ExecutorKind::Local | ExecutorKind::Qemu => How::Local,
            ExecutorKind::Slurm => How::Slurm,
        };
        self.execute_with(selection, jobs, progress, cancel, how)
    }

    /// Executes the selected runs here, in the local sandbox, whatever the manifest's executor
    /// (`mccbuild exec-run`: a Slurm step). Records say which job and step ran them.
    pub fn execute_here(
        &mut self,
        selection: &[usize],
        jobs: usize,
        progress: &mut dyn Progress,
        cancel: &Arc<AtomicBool>,
    ) -> ExecSummary {
        self.execute_with(selection, jobs, progress, cancel, How::Step)
    }

    fn execute_with(
        &mut self,
        selection: &[usize],
        jobs: usize,
        progress: &mut dyn Progress,
        cancel: &Arc<AtomicBool>,
        how: How,
    ) -> ExecSummary {
        let mut outcome = ExecSummary::default();
        let mut todo: Vec<usize> = Vec::new();
        for &i in selection {
            if self.is_stored(i) {
                outcome.cached += 1;
            } else if self.plan.runs[i].origin != crate::plan::RunOrigin::Executed {
                outcome.to_import += 1;
            } else {
                todo.push(i);
            }
        }
        if outcome.to_import > 0 {
            progress.message(&format!(
                "{} runs come from results files and are not in the store: run `mccbuild import FILE` for each file of `results`",
                outcome.to_import
            ));
        }
        if todo.is_empty() {
            return outcome;
        }
        // Tool setups, once per identity; a failed setup fails that tool's runs.
        let mut bin_paths: BTreeMap<usize, std::path::PathBuf> = BTreeMap::new();
        let mut tools_needed: Vec<usize> = todo.iter().map(|&i| self.plan.runs[i].tool).collect();
        tools_needed.sort_unstable();
        tools_needed.dedup();
        for t in tools_needed {
            let tool = &self.plan.contest.tools[t];
            match ensure_setup(&self.store, tool, &self.plan.tools[t], &mut |name| {
                progress.setup_started(name)
            }) {
                Ok(path) => {
                    bin_paths.insert(t, path);
                }
                Err(e) => progress.message(&format!("error: {e}")),
            }
        }
        let (runnable, unsetup): (Vec<usize>, Vec<usize>) = todo
            .into_iter()
            .partition(|i| bin_paths.contains_key(&self.plan.runs[*i].tool));
        outcome.failed += unsetup.len();
        match how {
            How::Local | How::Step => self.run_here(
                &runnable,
                &bin_paths,
                jobs,
                how,
                progress,
                cancel,
                &mut outcome,
            ),
            How::Slurm => self.run_on_slurm(&runnable, jobs, progress, cancel, &mut outcome),
        }
        progress.finished();
        // Steps leave the index to the `mccbuild run` that follows them (one writer, not one
        // per step); it finds their records through the shard folders' times.
        if how != How::Step {
            if let Err(e) = self.index.save(&self.store) {
                progress.message(&format!(
                    "warning: could not save the store index: {e} (it will be rebuilt)"
                ));
            }
        }
        outcome
    }

    #[expect(clippy::too_many_arguments)]
    fn run_here(
        &mut self,
        runnable: &[usize],
        bin_paths: &BTreeMap<usize, std::path::PathBuf>,
        jobs: usize,
        how: How,
        progress: &mut dyn Progress,
        cancel: &Arc<AtomicBool>,
        outcome: &mut ExecSummary,
    ) {
        let specs: Vec<RunSpec> = runnable
            .iter()
            .map(|&i| self.spec(i, &bin_paths[&self.plan.runs[i].tool]))
            .collect();
        progress.started(specs.len());
        let jobs = jobs.max(1);
        let cores = available_cores();
        let placement = match how {
            How::Step => SlurmPlacement::from_env(),
            _ => None,
        };
        let executor = &*self.executor;
        let plan = &self.plan;
        let store = &self.store;
        let index = &mut self.index;
        let stored = &mut self.stored;
        run_all(
            executor,
            &specs,
            jobs,
            &cores,
            cancel,
            |event| match event {
                PoolEvent::Started { index: n } => {
                    progress.run_started(&label(plan, &plan.runs[runnable[n]]))
                }
                PoolEvent::Finished { index: n, result } => {
                    let run = &plan.runs[runnable[n]];
                    let name = label(plan, run);
                    match result {
                        Ok(Some(execution))
                            if how == How::Step
                                && (crate::exec::INTERRUPTED.load(Ordering::SeqCst)
                                    || cancel.load(Ordering::SeqCst)
                                    || signalled_with_its_step(&execution, cancel)) =>
                        {
                            progress.run_finished(
                                &name,
                                &format!(
                                    "cancelled: the step was told to stop as the run ended ({}); not recorded",
                                    execution.termination.label()
                                ),
                                true,
                            )
                        }
                        Ok(Some(execution)) => {
                            let ingredients = crate::key::executor_for_tool(
                                &executor.key_ingredients(),
                                &plan.contest.tools[run.tool].name,
                            );
                            let mut record = make_record(plan, run, ingredients, execution);
                            if let Some(placement) = &placement {
                                // On a simulated cluster every node has the host's name.
                                record.host = placement.node.clone();
                                record.slurm = Some(placement.clone());
                            }
                            match store.put(&record) {
                                Ok(()) => {
                                    outcome.executed += 1;
                                    stored[runnable[n]] = true;
                                    progress.run_finished(&name, &record.outcome_label(), false);
                                    index.insert(record.key, Summary::of(&record));
                                }
                                Err(e) => {
                                    outcome.failed += 1;
                                    progress.run_finished(
                                        &name,
                                        &format!(
                                            "not recorded: cannot write {}: {e}",
                                            store.record_path(&run.key).display()
                                        ),
                                        true,
                                    );
                                }
                            }
                        }
                        Ok(None) => progress.run_finished(&name, "cancelled", true),
                        Err(e) => {
                            outcome.failed += 1;
                            progress.run_finished(
                                &name,
                                &format!("infrastructure failure (not recorded): {e}"),
                                true,
                            );
                        }
                    }
                }
            },
        );
    }

    /// One Slurm job per model, each run a step (`mccbuild exec-run`) that records it into the
    /// shared store; follows the jobs and the store until every run is recorded or given up.
    fn run_on_slurm(
        &mut self,
        runnable: &[usize],
        jobs: usize,
        progress: &mut dyn Progress,
        cancel: &Arc<AtomicBool>,
        outcome: &mut ExecSummary,
    ) {
        use crate::exec::slurm::{follow_jobs, FollowSettings, Group, GroupRun, SlurmCli};
        let contest = &self.plan.contest;
        let config = contest.executor.slurm.clone();
        let mccbuild = match config
            .mccbuild
            .clone()
            .map(Ok)
            .unwrap_or_else(std::env::current_exe)
        {
            Ok(path) => path,
            Err(e) => {
                outcome.failed += runnable.len();
                progress.message(&format!(
                    "error: cannot find the mccbuild binary to run on the nodes: {e}; set `mccbuild` in [executor.slurm] of {}",
                    contest.manifest_path.display()
                ));
                return;
            }
        };
        let manifest = std::path::absolute(&contest.manifest_path)
            .unwrap_or_else(|_| contest.manifest_path.clone());
        // Runs grouped by model, in plan order: one job each (rule E-5.1).
        let mut groups: Vec<Group> = Vec::new();
        let mut group_of: BTreeMap<usize, usize> = BTreeMap::new();
        for &i in runnable {
            let run = &self.plan.runs[i];
            let model = self.plan.instance_of(run).model;
            let g = *group_of.entry(model).or_insert_with(|| {
                groups.push(Group {
                    model: self.plan.models[model].name.clone(),
                    runs: Vec::new(),
                    cpus: 0,
                });
                groups.len() - 1
            });
            groups[g].runs.push(GroupRun {
                id: i,
                key: run.key,
                cores: contest.tools[run.tool].cores,
            });
        }
        for g in &mut groups {
            let most = g.runs.iter().map(|r| r.cores).max().unwrap_or(1);
            g.cpus = config
                .cpus_per_job
                .unwrap_or_else(|| most.saturating_mul(jobs.max(1) as u32));
        }
        let tag =
            crate::digest::hex(blake3::hash(manifest.to_string_lossy().as_bytes()).as_bytes())[..8]
                .to_string();
        let mut scheduler = SlurmCli {
            config: config.clone(),
            mccbuild,
            manifest,
            chdir: contest.root.clone(),
            dir: self.store.root().join("slurm"),
            tag,
        };
        progress.started(runnable.len());
        let mut follower = SlurmFollower {
            plan: &self.plan,
            store: &self.store,
            index: &mut self.index,
            stored: &mut self.stored,
            started: BTreeMap::new(),
            nodes: BTreeMap::new(),
            progress,
            outcome,
        };
        let settings = FollowSettings {
            attempts: config.attempts,
            poll: std::time::Duration::from_millis(200),
            patience: std::time::Duration::from_secs(120),
        };
        let result = follow_jobs(&mut scheduler, groups, &mut follower, &settings, cancel);
        if !result.cancelled.is_empty() {
            follower.progress.message(&format!(
                "cancelled Slurm jobs {}",
                result.cancelled.join(", ")
            ));
        }
        follower.outcome.failed += result.failed;
        for (model, nodes) in &follower.nodes {
            if nodes.len() > 1 {
                follower.progress.message(&format!(
                    "warning: the runs of model {} ran on nodes {} (a job ended before all of them were recorded); rule E-5.1 wants one machine per model",
                    follower.plan.models[*model].name,
                    nodes.iter().cloned().collect::<Vec<_>>().join(", ")
                ));
            }
        }
    }
    fn spec(&self, i: usize, bin_path: &Path) -> RunSpec {
        let run = &self.plan.runs[i];
        let tool = &self.plan.contest.tools[run.tool];
        let instance = self.plan.instance_of(run);
        RunSpec {
            key: run.key,
            tool: tool.name.clone(),
            tool_dir: tool.dir.clone().unwrap_or_default(),
            entry: tool.entry.clone(),
            bin_path: bin_path.to_path_buf(),
            cores: tool.cores,
            instance: instance.name.clone(),
            source: instance.source.clone(),
            examination: self.plan.exam_name(run).to_string(),
            limits: run.limits,
            hidden: run.hidden.to_vec(),
        }
    }

    /// The podium report (no values), from the results cache when nothing it depends on changed.
    pub fn podium_report(&self) -> crate::results::ScoresReport {
        let _t = crate::timing::phase("results");
        let key = crate::results::results_key(&self.plan, &self.stored, &self.binary);
        if let Some(report) = crate::results::load_cached(&self.store, &key) {
            return report;
        }
        let (db, handles) = self.scoring();
        let report = crate::results::scores_report(&self.plan, &db, &handles, false);
        // A cache that cannot be written only costs time next time.
        let _ = crate::results::save_cached(&self.store, &key, &report);
        report
    }

    /// Builds the scoring database from the records of the plan's runs.
    pub fn scoring(&self) -> (ScoringDb, Handles) {
        let _t = crate::timing::phase("salsa inputs");
        build_scoring(ScoringDb::default(), &self.plan, |key| self.index.get(key))
    }

    /// As [`Session::scoring`], with a database that can log the queries it executes.
    pub fn scoring_logged(&self) -> (ScoringDb, Handles) {
        build_scoring(ScoringDb::with_log(), &self.plan, |key| self.index.get(key))
    }
}

/// What `import` did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ImportSummary {
    /// Rows of the file that are runs of the contest.
    pub runs: usize,
    pub imported: usize,
    pub cached: usize,
}

impl Session {
    /// Reads the runs of one results file of `[contest] results` into the store.
    pub fn import(&mut self, file: &Path) -> Result<ImportSummary, String> {
        let wanted = std::fs::canonicalize(file)
            .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
        let Some(f) = self
            .plan
            .contest
            .results
            .iter()
            .position(|r| std::fs::canonicalize(r).ok().as_ref() == Some(&wanted))
        else {
            return Err(format!(
                "{} is not a results file of {}: add it to `results` in [contest] (paths relative to the manifest)",
                file.display(),
                self.plan.contest.manifest_path.display()
            ));
        };
        let mut summary = ImportSummary::default();
        let mut records = Vec::new();
        let mut newly = Vec::new();
        for (i, run) in self.plan.runs.iter().enumerate() {
            let crate::plan::RunOrigin::Imported { file, row } = run.origin else {
                continue;
            };
            if file != f {
                continue;
            }
            summary.runs += 1;
            if self.stored[i] {
                summary.cached += 1;
                continue;
            }
            records.push(imported_record(
                &self.plan,
                run,
                &self.plan.imported[file][row],
            ));
            newly.push(i);
        }
        self.store.put_many(&records).map_err(|e| {
            format!(
                "cannot write into the store {}: {e}",
                self.store.root().display()
            )
        })?;
        for (record, i) in records.iter().zip(newly) {
            self.index.insert(record.key, Summary::of(record));
            self.stored[i] = true;
        }
        summary.imported = records.len();
        self.index
            .save(&self.store)
            .map_err(|e| format!("cannot save the store index: {e}"))?;
        Ok(summary)
    }
}

/// The record of a run read from a results file: its answers by position (the file's vectors
/// follow the examination's values), its time and memory, the row itself as its output.
pub fn imported_record(plan: &Plan, run: &Run, row: &crate::import::ResultRow) -> RunRecord {
    use crate::import::{parse_results, RowResults};
    let ei = &plan.exam_instances[run.exam_instance];
    let exam = &plan.contest.edition.examinations[ei.exam];
    let mut diagnostics = Vec::new();
    let mut answers = Vec::new();
    let techniques: Vec<String> = row
        .techniques
        .split_whitespace()
        .map(String::from)
        .collect();
    let (verdict, termination) = match parse_results(&row.results, exam.value) {
        Ok(RowResults::DoNotCompete) => (
            crate::answers::Verdict::DoNotCompete,
            crate::store::Termination::Exit { code: 0 },
        ),
        Ok(RowResults::DidNotFinish) => (
            crate::answers::Verdict::CannotCompute,
            crate::store::Termination::CpuLimit,
        ),
        Ok(RowResults::CannotCompute) => (
            crate::answers::Verdict::CannotCompute,
            crate::store::Termination::Exit { code: 0 },
        ),
        Ok(RowResults::Values(values)) => {
            for (position, value) in values.into_iter().enumerate() {
                let Some(value) = value else { continue };
                match ei.ids.get(position) {
                    Some(id) => answers.push(crate::answers::Answer {
                        id: id.clone(),
                        position: position as u16,
                        value,
                        techniques: techniques.clone(),
                    }),
                    None => diagnostics.push(format!(
                        "value {position} is beyond the {} values of {}",
                        ei.ids.len(),
                        exam.name
                    )),
                }
            }
            let verdict = if answers.is_empty() {
                crate::answers::Verdict::CannotCompute
            } else {
                crate::answers::Verdict::Answered
            };
            (verdict, crate::store::Termination::Exit { code: 0 })
        }
        Err(e) => {
            diagnostics.push(format!("unreadable results `{}`: {e}", row.results));
            (
                crate::answers::Verdict::CannotCompute,
                crate::store::Termination::Exit { code: 0 },
            )
        }
    };
    let source = match run.origin {
        crate::plan::RunOrigin::Imported { file, .. } => {
            plan.contest.results[file].display().to_string()
        }
        crate::plan::RunOrigin::Executed => String::new(),
    };
    RunRecord {
        format: RECORD_FORMAT,
        key: run.key,
        mccbuild_version: env!("CARGO_PKG_VERSION").to_string(),
        tool: row.tool.clone(),
        instance: row.instance.clone(),
        examination: row.examination.clone(),
        executor: [("kind".to_string(), "import".to_string())].into(),
        limits: run.limits,
        started_at: String::new(),
        finished_at: String::new(),
        termination,
        cpu_time_s: row.cpu_ms / 1000.0,
        wall_time_s: row.time_ms / 1000.0,
        peak_memory_bytes: (row.memory_mb * (1u64 << 20) as f64) as u64,
        measurement: "imported".to_string(),
        cores: Vec::new(),
        host: String::new(),
        verdict,
        answers,
        diagnostics,
        stdout: crate::store::CapturedOutput {
            text: format!(
                "imported from {source}, line {}: results `{}`, status `{}`\n",
                row.line, row.results, row.status
            ),
            bytes: 0,
            truncated: false,
        },
        stderr: crate::store::CapturedOutput::default(),
        vm: None,
        slurm: None,
    }
}

/// `tool/instance/examination`, for progress lines.
pub fn label(plan: &Plan, run: &Run) -> String {
    format!(
        "{} {} {}",
        plan.contest.tools[run.tool].name,
        plan.instance_of(run).name,
        plan.exam_name(run)
    )
}

/// Turns an execution into the run's record: the answers are matched to the instance's ids.
pub fn make_record(
    plan: &Plan,
    run: &Run,
    executor: Vec<(String, String)>,
    execution: Execution,
) -> RunRecord {
    let ei = &plan.exam_instances[run.exam_instance];
    let exam = &plan.contest.edition.examinations[ei.exam];
    let instance = &plan.instances[ei.instance];
    let resolved = resolve(
        &execution.parsed,
        Expected {
            examination: &exam.name,
            instance: &instance.name,
            form: exam.answers,
            kind: exam.value,
            ids: &ei.ids,
        },
    );
    RunRecord {
        format: RECORD_FORMAT,
        key: run.key,
        mccbuild_version: env!("CARGO_PKG_VERSION").to_string(),
        tool: plan.contest.tools[run.tool].name.clone(),
        instance: instance.name.clone(),
        examination: exam.name.clone(),
        executor: executor.into_iter().collect(),
        limits: run.limits,
        started_at: execution.started_at,
        finished_at: execution.finished_at,
        termination: execution.termination,
        cpu_time_s: execution.cpu_time_s,
        wall_time_s: execution.wall_time_s,
        peak_memory_bytes: execution.peak_memory_bytes,
        measurement: execution.measurement,
        cores: execution.cores,
        host: execution.host,
        verdict: resolved.verdict,
        answers: resolved.answers,
        diagnostics: resolved.diagnostics,
        stdout: execution.stdout,
        stderr: execution.stderr,
        vm: execution.vm,
        slurm: None,
    }
}

/// What the scoring database holds of a run: its answers, whether it takes part (stored, and not
/// DO_NOT_COMPETE: E-1.8), its time and memory. No summary: not run yet.
pub fn run_inputs(summary: Option<&Summary>) -> (crate::db::Answers, bool, Perf) {
    match summary {
        Some(s) => (
            s.answers.clone(),
            s.verdict != crate::answers::Verdict::DoNotCompete,
            Perf {
                cpu_s: s.cpu_time_s,
                peak_memory_mb: s.peak_memory_bytes as f64 / (1 << 20) as f64,
            },
        ),
        None => (Arc::from(Vec::new()), false, Perf::default()),
    }
}

/// Each planned run's place in the scoring database that [`build_scoring`] made of the plan (it
/// lists an examination instance's runs in plan order).
pub fn run_refs(plan: &Plan, handles: &crate::db::Handles) -> Vec<crate::db::RunRef> {
    let mut position = vec![0usize; plan.exam_instances.len()];
    plan.runs
        .iter()
        .map(|run| {
            let r = handles.run(run.exam_instance, position[run.exam_instance]);
            position[run.exam_instance] += 1;
            r
        })
        .collect()
}

/// Builds the scoring database of a plan from run summaries.
pub fn build_scoring<'a>(
    mut db: ScoringDb,
    plan: &Plan,
    summary: impl Fn(&crate::key::RunKey) -> Option<&'a Summary>,
) -> (ScoringDb, Handles) {
    let edition = plan.contest.edition.clone();
    let tools: Vec<ToolInfo> = plan
        .contest
        .tools
        .iter()
        .map(|t| ToolInfo {
            name: t.name.clone(),
            family: t.family.clone(),
            competing: t.kind == ToolKind::Competing,
        })
        .collect();
    let models: Vec<ModelInfo> = plan
        .models
        .iter()
        .map(|m| ModelInfo {
            name: m.name.clone(),
            kind: m.kind,
            instances: m.instances.len(),
        })
        .collect();
    let mut runs_by_ei: Vec<Vec<RunShape>> = vec![Vec::new(); plan.exam_instances.len()];
    for run in &plan.runs {
        let (answers, competes, perf) = run_inputs(summary(&run.key));
        let shape = RunShape {
            tool: run.tool as u32,
            competes,
            answers,
            perf,
        };
        runs_by_ei[run.exam_instance].push(shape);
    }
    let exam_instances = plan
        .exam_instances
        .iter()
        .zip(runs_by_ei)
        .map(|(ei, runs)| EiShape {
            instance: ei.instance as u32,
            model: plan.instances[ei.instance].model as u32,
            exam: ei.exam as u32,
            ids: ei.ids.clone(),
            scored: ei.scored as u32,
            runs,
            truth: ei.truth.clone(),
            _marker: std::marker::PhantomData,
        })
        .collect();
    let handles = db.build(ContestShape {
        edition,
        tools,
        models,
        exam_instances,
    });
    (db, handles)
}
