//! Executing the runs a command selected that are not in the store, and recording them: here
//! in the local sandbox or a QEMU VM (on the core pool), or through Slurm (one job per model).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use mccbuild_core::protocol::{resolve, Expected};
use mccbuild_core::{hex, Termination};
use mccbuild_exec::pool::{available_cores, run_all, PoolEvent};
use mccbuild_exec::setup::ensure_setup;
use mccbuild_exec::slurm::{follow_jobs, FollowSettings, JobRun, ModelJob, SlurmCli};
use mccbuild_exec::{Execution, InfraError, RunSpec};
use mccbuild_plan::key::executor_for_tool;
use mccbuild_plan::manifest::ExecutorKind;
use mccbuild_plan::{Plan, Run, RunOrigin};
use mccbuild_rules::execution::machine_groups;
use mccbuild_store::record::SlurmPlacement;
use mccbuild_store::{Index, RunRecord, Store, Summary, RECORD_FORMAT};
use serde::Serialize;

use crate::progress::Progress;
use crate::session::Session;

/// What `execute` did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ExecSummary {
    pub executed: usize,
    pub cached: usize,
    pub failed: usize,
    /// Runs of results files not in the store yet: `mccbuild import` reads them.
    #[serde(skip_serializing_if = "is_zero")]
    pub to_import: usize,
    /// A record could not be written (its path, why): no run was started after it.
    #[serde(skip)]
    pub record_not_written: Option<(PathBuf, String)>,
}

impl ExecSummary {
    /// The store error when a record could not be written (docs/cli.md: exit 3), after which
    /// no run was started: every command that executes runs ends with it.
    pub fn record_error(&self) -> Result<(), crate::error::Error> {
        match &self.record_not_written {
            Some((path, reason)) => Err(crate::error::Error::Store(
                mccbuild_store::StoreError::RecordNotWritten {
                    path: path.clone(),
                    reason: reason.clone(),
                    recorded: self.executed,
                },
            )),
            None => Ok(()),
        }
    }
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Whether a run executed by a Slurm step died of the signal Slurm sent the whole step (the
/// job was cancelled, hit its time limit or lost its node): Slurm signals every process of the
/// step, the tool's included, so the tool may die before this process notices its own signal.
/// Such a run is the infrastructure's doing, never recorded as the tool's crash: a tool killed
/// by SIGTERM, SIGKILL, SIGINT or SIGHUP while this process is told to stop (within a second).
/// (A run that ends otherwise once this process got its signal is not recorded either: a tool
/// whose child was killed may still exit 0 with fewer answers.)
fn signalled_with_its_step(execution: &Execution, cancel: &AtomicBool) -> bool {
    let Termination::Signal { signal } = execution.measurement.termination else {
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

/// Follows a Slurm contest for [`mccbuild_exec::slurm::follow_jobs`]: records appearing in the
/// store are indexed and shown as progress.
struct SlurmFollower<'a> {
    plan: &'a Plan,
    store: &'a Store,
    index: &'a mut Index,
    stored: &'a mut Vec<bool>,
    /// Runs redone (`run --rerun`) whose new record is not seen yet: the digest of the old one.
    redo: &'a mut BTreeMap<usize, mccbuild_core::Digest>,
    /// Runs shown as running (their job reached a node).
    started: BTreeMap<usize, ()>,
    /// Per model, the nodes its runs recorded now ran on (rule E-5.1: one).
    nodes: BTreeMap<usize, std::collections::BTreeSet<String>>,
    progress: &'a mut dyn Progress,
    outcome: &'a mut ExecSummary,
}

impl SlurmFollower<'_> {
    /// Rule E-5.1 wants the runs of a model on one machine: says where a job that ended early
    /// left its model's runs on several nodes.
    fn warn_models_on_several_nodes(&mut self) {
        for (model, nodes) in &self.nodes {
            if nodes.len() > 1 {
                self.progress.message(&format!(
                    "warning: the runs of model {} ran on nodes {} (a job ended before all of them were recorded); rule E-5.1 wants one machine per model",
                    self.plan.models[*model].name,
                    nodes.iter().cloned().collect::<Vec<_>>().join(", ")
                ));
            }
        }
    }
}

impl mccbuild_exec::slurm::Follower for SlurmFollower<'_> {
    fn recorded(&mut self, i: usize) -> bool {
        if self.stored[i] && !self.redo.contains_key(&i) {
            return true;
        }
        let run = &self.plan.runs[i];
        if !self.store.record_path(&run.key).exists() {
            return false;
        }
        match self.store.get_verified(&run.key) {
            // The record a rerun replaces: the new one is not written yet.
            Ok(Some((_, digest))) if self.redo.get(&i) == Some(&digest) => false,
            Ok(Some((record, digest))) => {
                self.stored[i] = true;
                self.redo.remove(&i);
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
                self.progress
                    .run_finished(&name, &format!("{}{where_}", record.describe()), false);
                self.nodes
                    .entry(self.plan.instance_of(run).model)
                    .or_default()
                    .insert(record.host.clone());
                self.index.insert(record.key, Summary::of(&record), digest);
                true
            }
            // Written by a step, so whole (atomic rename); unreadable means it is to be redone.
            Ok(None) | Err(_) => false,
        }
    }

    fn event(&mut self, event: mccbuild_exec::slurm::SlurmEvent) {
        use mccbuild_exec::slurm::SlurmEvent;
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

impl Session {
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
        let (mut outcome, todo) = self.to_execute(selection, progress);
        if todo.is_empty() {
            return outcome;
        }
        let bin_paths = self.set_up_tools(&todo, progress);
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

    /// The selected runs to execute (not stored, not imported), and the counts of the others.
    fn to_execute(
        &self,
        selection: &[usize],
        progress: &mut dyn Progress,
    ) -> (ExecSummary, Vec<usize>) {
        let mut outcome = ExecSummary::default();
        let mut todo: Vec<usize> = Vec::new();
        for &i in selection {
            if !self.is_to_execute(i) {
                outcome.cached += 1;
            } else if self.plan.runs[i].origin != RunOrigin::Executed {
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
        (outcome, todo)
    }

    /// What progress knows of the runs to execute: their labels, and the wall-clock times of
    /// the runs of the same tool and examination already in the store (the ETA's history).
    fn run_infos(&self, runs: &[usize]) -> Vec<crate::progress::RunInfo> {
        let group = |run: &Run| (run.tool, self.plan.exam_instances[run.exam_instance].exam);
        let mut history: BTreeMap<_, Vec<f64>> = BTreeMap::new();
        for &i in runs {
            history.entry(group(&self.plan.runs[i])).or_default();
        }
        for (i, run) in self.plan.runs.iter().enumerate() {
            if let (true, Some(times)) = (self.stored[i], history.get_mut(&group(run))) {
                if let Some(summary) = self.index.get(&run.key) {
                    times.push(summary.measurement.wall_time_s);
                }
            }
        }
        runs.iter()
            .map(|&i| {
                let run = &self.plan.runs[i];
                crate::progress::RunInfo {
                    label: label(&self.plan, run),
                    group: format!(
                        "{} {}",
                        self.plan.contest.tools[run.tool].name,
                        self.plan.exam_name(run)
                    ),
                    history: history[&group(run)].clone(),
                }
            })
            .collect()
    }

    /// Runs the setups of the tools of `runs`, once per identity; a tool whose setup failed is
    /// not in the map (its runs fail).
    fn set_up_tools(
        &self,
        runs: &[usize],
        progress: &mut dyn Progress,
    ) -> BTreeMap<usize, PathBuf> {
        let mut bin_paths = BTreeMap::new();
        let mut tools: Vec<usize> = runs.iter().map(|&i| self.plan.runs[i].tool).collect();
        tools.sort_unstable();
        tools.dedup();
        for t in tools {
            let tool = &self.plan.contest.tools[t];
            let log = self
                .store
                .tools_dir()
                .join(hex(&self.plan.tools[t].setup_digest()))
                .join("setup.log");
            let mut ran = false;
            let setup = ensure_setup(&self.store, tool, &self.plan.tools[t], &mut |name| {
                ran = true;
                progress.setup_started(name, &log)
            });
            if ran {
                progress.setup_finished(&tool.name, setup.is_ok());
            }
            match setup {
                Ok(path) => {
                    bin_paths.insert(t, path);
                }
                Err(e) => progress.message(&format!("error: {e}")),
            }
        }
        bin_paths
    }

    /// Runs on the core pool here (the manifest's local or QEMU executor, or a Slurm step's
    /// local sandbox), each recorded as it ends.
    #[expect(clippy::too_many_arguments)]
    fn run_here(
        &mut self,
        runnable: &[usize],
        bin_paths: &BTreeMap<usize, PathBuf>,
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
        progress.planned(&self.run_infos(runnable));
        progress.started(specs.len());
        let executor = &*self.executor;
        let mut recorder = Recorder {
            plan: &self.plan,
            store: &self.store,
            index: &mut self.index,
            stored: &mut self.stored,
            redo: &mut self.redo,
            ingredients: executor.key_ingredients(),
            placement: (how == How::Step).then(SlurmPlacement::from_env).flatten(),
            step: how == How::Step,
            cancel,
            progress,
            outcome,
        };
        run_all(
            executor,
            &specs,
            jobs.max(1),
            &available_cores(),
            cancel,
            |event| match event {
                PoolEvent::Started { index } => recorder.started(runnable[index]),
                PoolEvent::Finished { index, result } => recorder.finished(runnable[index], result),
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
        let mut scheduler = match self.slurm_cli() {
            Ok(scheduler) => scheduler,
            Err(e) => {
                outcome.failed += runnable.len();
                progress.message(&format!("error: {e}"));
                return;
            }
        };
        let jobs_of_models = self.model_jobs(runnable, jobs);
        progress.planned(&self.run_infos(runnable));
        progress.started(runnable.len());
        let settings = FollowSettings {
            attempts: self.plan.contest.executor.slurm.attempts,
            poll: Duration::from_millis(200),
            patience: Duration::from_secs(120),
        };
        let mut follower = SlurmFollower {
            plan: &self.plan,
            store: &self.store,
            index: &mut self.index,
            stored: &mut self.stored,
            redo: &mut self.redo,
            started: BTreeMap::new(),
            nodes: BTreeMap::new(),
            progress,
            outcome,
        };
        let result = follow_jobs(
            &mut scheduler,
            jobs_of_models,
            &mut follower,
            &settings,
            cancel,
        );
        if !result.cancelled.is_empty() {
            follower.progress.message(&format!(
                "cancelled Slurm jobs {}",
                result.cancelled.join(", ")
            ));
        }
        follower.outcome.failed += result.failed;
        follower.warn_models_on_several_nodes();
    }

    /// The Slurm commands of this contest.
    fn slurm_cli(&self) -> Result<SlurmCli, String> {
        let contest = &self.plan.contest;
        let config = contest.executor.slurm.clone();
        let mccbuild = match config.mccbuild.clone() {
            Some(path) => path,
            None => std::env::current_exe().map_err(|e| {
                format!(
                    "cannot find the mccbuild binary to run on the nodes: {e}; set `mccbuild` in [executor.slurm] of {}",
                    contest.manifest_path.display()
                )
            })?,
        };
        let manifest = std::path::absolute(&contest.manifest_path)
            .unwrap_or_else(|_| contest.manifest_path.clone());
        let tag =
            hex(blake3::hash(manifest.to_string_lossy().as_bytes()).as_bytes())[..8].to_string();
        Ok(SlurmCli {
            config,
            mccbuild,
            manifest,
            chdir: contest.root.clone(),
            dir: self.store.root().join("slurm"),
            tag,
        })
    }

    /// The runs of each model, for one job each, with the CPUs the job asks for (rule E-5.1:
    /// all runs of a model on one machine).
    fn model_jobs(&self, runnable: &[usize], jobs: usize) -> Vec<ModelJob> {
        let contest = &self.plan.contest;
        let by_model = machine_groups(
            runnable
                .iter()
                .map(|&i| (self.plan.instance_of(&self.plan.runs[i]).model, i)),
        );
        by_model
            .into_iter()
            .map(|(model, runs)| {
                let runs: Vec<JobRun> = runs
                    .into_iter()
                    .map(|i| {
                        let run = &self.plan.runs[i];
                        JobRun {
                            id: i,
                            key: run.key,
                            cores: contest.tools[run.tool].cores,
                            replaces: self.redo.get(&i).copied(),
                        }
                    })
                    .collect();
                let most = runs.iter().map(|r| r.cores).max().unwrap_or(1);
                ModelJob {
                    model: self.plan.models[model].name.clone(),
                    cpus: contest
                        .executor
                        .slurm
                        .cpus_per_job
                        .unwrap_or_else(|| most.saturating_mul(jobs.max(1) as u32)),
                    runs,
                }
            })
            .collect()
    }

    fn spec(&self, i: usize, bin_path: &Path) -> RunSpec {
        let run = &self.plan.runs[i];
        let tool = &self.plan.contest.tools[run.tool];
        let instance = self.plan.instance_of(run);
        RunSpec {
            key: run.key,
            tool: tool.name.clone(),
            bk_tool: tool.bk_tool.clone(),
            tool_dir: tool.dir.clone().unwrap_or_default(),
            entry: tool.entry.clone(),
            bin_path: bin_path.to_path_buf(),
            cores: tool.cores,
            instance: instance.name.clone(),
            source: instance.source.clone(),
            examination: self.plan.exam_name(run).to_string(),
            limits: run.limits,
            hidden: run.hidden.to_vec(),
            user: tool.user,
        }
    }
}

/// Records the runs the pool finishes (on the caller's thread: no locking).
struct Recorder<'a> {
    plan: &'a Plan,
    store: &'a Store,
    index: &'a mut Index,
    stored: &'a mut Vec<bool>,
    /// Runs redone (`run --rerun`) not recorded again yet.
    redo: &'a mut BTreeMap<usize, mccbuild_core::Digest>,
    /// The executor's key ingredients (each record keeps its tool's).
    ingredients: Vec<(String, String)>,
    /// Where the Slurm step runs (exec-run).
    placement: Option<SlurmPlacement>,
    step: bool,
    cancel: &'a AtomicBool,
    progress: &'a mut dyn Progress,
    outcome: &'a mut ExecSummary,
}

impl Recorder<'_> {
    fn started(&mut self, i: usize) {
        self.progress
            .run_started(&label(self.plan, &self.plan.runs[i]));
    }

    fn finished(&mut self, i: usize, result: Result<Option<Execution>, InfraError>) {
        let run = &self.plan.runs[i];
        let name = label(self.plan, run);
        match result {
            Ok(Some(execution)) if self.step && self.step_stopped(&execution) => {
                self.progress.run_finished(
                    &name,
                    &format!(
                        "cancelled: the step was told to stop as the run ended ({}); not recorded",
                        execution.measurement.termination.label()
                    ),
                    true,
                )
            }
            Ok(Some(execution)) => self.record(i, execution),
            Ok(None) => self.progress.run_finished(&name, "cancelled", true),
            Err(e) => {
                self.outcome.failed += 1;
                self.progress.run_finished(
                    &name,
                    &format!("infrastructure failure (not recorded): {e}"),
                    true,
                );
            }
        }
    }

    /// A Slurm step told to stop: what ended then is not the tool's doing.
    fn step_stopped(&self, execution: &Execution) -> bool {
        self.cancel.load(Ordering::SeqCst) || signalled_with_its_step(execution, self.cancel)
    }

    fn record(&mut self, i: usize, execution: Execution) {
        let run = &self.plan.runs[i];
        let name = label(self.plan, run);
        let ingredients =
            executor_for_tool(&self.ingredients, &self.plan.contest.tools[run.tool].name);
        let mut record = make_record(self.plan, run, ingredients, execution);
        if let Some(placement) = &self.placement {
            // On a simulated cluster every node has the host's name.
            record.host = placement.node.clone();
            record.slurm = Some(placement.clone());
        }
        match self.store.put(&record) {
            Ok(digest) => {
                self.outcome.executed += 1;
                self.stored[i] = true;
                self.redo.remove(&i);
                self.progress.run_finished(&name, &record.describe(), false);
                self.index.insert(record.key, Summary::of(&record), digest);
            }
            Err(e) => {
                self.outcome.failed += 1;
                let path = self.store.record_path(&run.key);
                self.progress.run_finished(
                    &name,
                    &format!("not recorded: cannot write {}: {e}", path.display()),
                    true,
                );
                // Fail fast: the next records would be lost too. No run starts after this one;
                // those in flight are stopped (and not recorded).
                if self.outcome.record_not_written.is_none() {
                    self.outcome.record_not_written = Some((path, e.to_string()));
                    self.progress.message(
                        "stopping: a record cannot be written, so no more runs are started",
                    );
                }
                self.cancel.store(true, Ordering::SeqCst);
            }
        }
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
        measurement: execution.measurement,
        method: execution.method,
        cores: execution.cores,
        host: execution.host,
        response: resolved.response,
        answers: resolved.answers,
        diagnostics: resolved.diagnostics,
        stdout: execution.stdout,
        stderr: execution.stderr,
        vm: execution.vm,
        slurm: None,
    }
}
