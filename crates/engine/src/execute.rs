//! Executing the runs a command selected that are not in the store, and recording them: here
//! in the local sandbox or a QEMU VM (on the core pool: [`recorder`]), or through Slurm (one job
//! per model: [`slurm`]).

mod record;
mod recorder;
mod slurm;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use mccbuild_core::hex;
use mccbuild_exec::RunSpec;
use mccbuild_exec::pool::{PoolEvent, available_cores, run_all};
use mccbuild_exec::setup::{SetupError, ensure_setup};
use mccbuild_plan::manifest::ExecutorKind;
use mccbuild_plan::{Plan, Run, RunOrigin};
use mccbuild_store::record::SlurmPlacement;
use mccbuild_store::{Store, StoreError};
use serde::Serialize;

use crate::progress::{Progress, RunInfo};
use crate::session::Session;

pub use record::{label, make_record};
use recorder::Recorder;

/// What `execute` did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ExecSummary {
    /// Runs this command executed and recorded (through Slurm: recorded by jobs it submitted).
    pub executed: usize,
    /// Through Slurm: runs recorded by jobs this command adopted (submitted by an earlier
    /// `mccbuild run`, still queued or running when this one started), or recorded by another
    /// command before this one submitted them.
    #[serde(skip_serializing_if = "is_zero")]
    pub adopted: usize,
    pub cached: usize,
    pub failed: usize,
    /// Runs of results files not in the store yet: `mccbuild import` reads them.
    #[serde(skip_serializing_if = "is_zero")]
    pub to_import: usize,
    /// `run --follow`: runs to execute that no followed job recorded (no live job covered them,
    /// or their job ended without them); `mccbuild run` submits them.
    #[serde(skip_serializing_if = "is_zero")]
    pub left: usize,
    /// A record could not be written (its path, why): no run was started after it.
    #[serde(skip)]
    pub record_not_written: Option<(PathBuf, String)>,
}

impl ExecSummary {
    /// The store error when a record could not be written (docs/cli.md: exit 3), after which
    /// no run was started: every command that executes runs ends with it.
    pub fn record_error(&self) -> Result<(), StoreError> {
        match &self.record_not_written {
            Some((path, reason)) => Err(StoreError::RecordNotWritten {
                path: path.clone(),
                reason: reason.clone(),
                recorded: self.executed,
            }),
            None => Ok(()),
        }
    }
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Where `execute` runs what is missing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum How {
    /// Here, in the local sandbox (`mccbuild run` with the local executor).
    Local,
    /// Here, in the local sandbox, as a Slurm step (`mccbuild exec-run`).
    Step,
    /// Through Slurm: one job per model.
    Slurm,
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
        let bin_paths = self.set_up_tools(&todo, progress, cancel);
        if cancel.load(Ordering::SeqCst) {
            // Interrupted during the setups: no run starts.
            self.executor.reclaim();
            progress.finished();
            return outcome;
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
            How::Slurm => self.run_on_slurm(&runnable, jobs, progress, cancel, &mut outcome, true),
        }
        // What dead mccbuild processes left, if no run started it (a no-op otherwise).
        self.executor.reclaim();
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

    /// Follows this Slurm contest's jobs still queued or running (submitted by another `mccbuild
    /// run`, from this or another terminal) until they end, showing the runs they record:
    /// submits, resubmits and cancels nothing, runs no setup. The runs no followed job records
    /// are counted as `left`.
    pub fn follow(
        &mut self,
        selection: &[usize],
        jobs: usize,
        progress: &mut dyn Progress,
        cancel: &Arc<AtomicBool>,
    ) -> ExecSummary {
        let (mut outcome, todo) = self.to_execute(selection, progress);
        if !todo.is_empty() {
            self.run_on_slurm(&todo, jobs, progress, cancel, &mut outcome, false);
        }
        progress.finished();
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
    fn run_infos(&self, runs: &[usize]) -> Vec<RunInfo> {
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
                RunInfo {
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

    /// Runs the setups of the tools of `runs`, once per identity, all at once (each on a
    /// thread of its own; their events are reported here, in the order they come); a tool whose
    /// setup failed or was interrupted is not in the map (its runs are not executed).
    fn set_up_tools(
        &self,
        runs: &[usize],
        progress: &mut dyn Progress,
        cancel: &AtomicBool,
    ) -> BTreeMap<usize, PathBuf> {
        enum Event {
            Started(usize),
            Ended(usize, Result<PathBuf, SetupError>),
        }
        let mut bin_paths = BTreeMap::new();
        let mut tools: Vec<usize> = runs.iter().map(|&i| self.plan.runs[i].tool).collect();
        tools.sort_unstable();
        tools.dedup();
        let (store, plan) = (&self.store, &self.plan);
        let (events, received) = std::sync::mpsc::channel();
        std::thread::scope(|scope| {
            for &t in &tools {
                let events = events.clone();
                scope.spawn(move || {
                    let mut on_start = |_: &str| {
                        let _ = events.send(Event::Started(t));
                    };
                    let setup = ensure_setup(
                        store,
                        &plan.contest.tools[t],
                        &plan.tools[t],
                        cancel,
                        &mut on_start,
                    );
                    let _ = events.send(Event::Ended(t, setup));
                });
            }
            drop(events);
            let mut started = BTreeSet::new();
            for event in received {
                match event {
                    Event::Started(t) => {
                        started.insert(t);
                        progress
                            .setup_started(&plan.contest.tools[t].name, &setup_log(plan, store, t));
                    }
                    Event::Ended(t, setup) => {
                        let name = &plan.contest.tools[t].name;
                        match (&setup, started.contains(&t)) {
                            (Err(SetupError::Interrupted(_)), true) => progress.setup_stopped(name),
                            (Err(SetupError::Interrupted(_)), false) => {}
                            (_, true) => progress.setup_finished(name, setup.is_ok()),
                            (_, false) => {}
                        }
                        match setup {
                            Ok(path) => {
                                bin_paths.insert(t, path);
                                // The version whose runs these are, for `diff --tool` (a store
                                // that cannot take it only loses that comparison).
                                let now = mccbuild_exec::now_rfc3339();
                                let tool = &plan.contest.tools[t];
                                let noted = crate::versions::note_version(
                                    store,
                                    &plan.tools[t],
                                    tool.dir.as_deref(),
                                    &now,
                                );
                                if let Err(e) = noted {
                                    progress.message(&format!(
                                        "warning: could not note the version of tool {} in the \
                                         store: {e}",
                                        tool.name
                                    ));
                                }
                            }
                            // The command says "interrupted" for all that stopped.
                            Err(SetupError::Interrupted(_)) => {}
                            Err(e) => progress.message(&format!("error: {e}")),
                        }
                    }
                }
            }
        });
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
            &self.plan.contest.root.to_string_lossy(),
            cancel,
            |event| match event {
                PoolEvent::Started { index } => recorder.started(runnable[index]),
                PoolEvent::Finished { index, result } => recorder.finished(runnable[index], result),
                PoolEvent::Waiting(wait) => recorder.progress.waiting(&wait),
            },
        );
    }
}

/// The log of tool `t`'s setup (`tools/<setup digest>/setup.log`).
fn setup_log(plan: &Plan, store: &Store, t: usize) -> PathBuf {
    store
        .tools_dir()
        .join(hex(&plan.tools[t].setup_digest()))
        .join("setup.log")
}
