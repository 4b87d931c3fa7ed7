//! Executing through Slurm: one job per model, each run a step (`mccbuild exec-run`) that
//! records it into the shared store; the jobs and the store followed until every run is
//! recorded or given up.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use mccbuild_core::hex;
use mccbuild_exec::slurm::{FollowSettings, JobRun, ModelJob, SlurmCli, follow_jobs};
use mccbuild_plan::Plan;
use mccbuild_rules::execution::machine_groups;
use mccbuild_store::{Index, Store, Summary};

use super::ExecSummary;
use super::record::label;
use crate::error::SlurmSetupError;
use crate::progress::{NotRecorded, Progress, RunEnd, RunEvent};
use crate::session::Session;

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
                    self.progress.run(&RunEvent::Started {
                        key: run.key,
                        label: &name,
                    });
                }
                self.progress.run(&RunEvent::Finished {
                    key: run.key,
                    label: &name,
                    end: RunEnd::Recorded {
                        outcome: record.outcome(),
                        measurement: record.measurement,
                        description: record.describe(),
                        slurm: record.slurm.clone(),
                    },
                });
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
                        let run = &self.plan.runs[i];
                        self.progress.run(&RunEvent::Started {
                            key: run.key,
                            label: &label(self.plan, run),
                        });
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
                        let run = &self.plan.runs[*i];
                        self.progress.run(&RunEvent::Requeued {
                            key: run.key,
                            label: &label(self.plan, run),
                        });
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
                    let run = &self.plan.runs[i];
                    let name = label(self.plan, run);
                    if self.started.remove(&i).is_none() {
                        self.progress.run(&RunEvent::Started {
                            key: run.key,
                            label: &name,
                        });
                    }
                    self.progress.run(&RunEvent::Finished {
                        key: run.key,
                        label: &name,
                        end: RunEnd::NotRecorded(NotRecorded::Infrastructure(reason.clone())),
                    });
                }
            }
            SlurmEvent::Message(text) => self.progress.message(&text),
        }
    }
}

impl Session {
    /// shared store; follows the jobs and the store until every run is recorded or given up.
    pub(super) fn run_on_slurm(
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
    fn slurm_cli(&self) -> Result<SlurmCli, SlurmSetupError> {
        let contest = &self.plan.contest;
        let config = contest.executor.slurm.clone();
        let mccbuild = match config.mccbuild.clone() {
            Some(path) => path,
            None => std::env::current_exe().map_err(|source| SlurmSetupError {
                manifest: contest.manifest_path.clone(),
                source,
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
}
