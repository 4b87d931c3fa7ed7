//! Executing through Slurm: one job per model, each run a step (`mccbuild exec-run`) that
//! records it into the shared store; the jobs and the store followed until every run is
//! recorded or given up. The contest's jobs still queued or running (an earlier `mccbuild run`
//! killed, or running in another terminal) are adopted: followed, their runs not submitted
//! again.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use mccbuild_core::{RunKey, hex};
use mccbuild_exec::slurm::{
    Adopted, FollowSettings, JobRequest, JobRun, JobState, LiveJob, ModelJob, SlurmCli, Whose,
    follow_jobs,
};
use mccbuild_plan::Plan;
use mccbuild_store::{Index, Store, Summary};

use super::ExecSummary;
use super::record::label;
use crate::error::SlurmSetupError;
use crate::progress::{NotRecorded, Progress, RunEnd, RunEvent, count};
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
    /// Those of `runs` shown as started go back to the queue on the progress (their job ended
    /// without recording them).
    fn requeued(&mut self, runs: &[usize]) {
        for i in runs {
            if self.started.remove(i).is_some() {
                let run = &self.plan.runs[*i];
                self.progress.run(&RunEvent::Requeued {
                    key: run.key,
                    label: &label(self.plan, run),
                });
            }
        }
    }

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
    fn recorded(&mut self, i: usize, whose: Whose) -> bool {
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
                match whose {
                    Whose::Ours => self.outcome.executed += 1,
                    Whose::Others => self.outcome.adopted += 1,
                }
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
                why,
            } => {
                self.requeued(&runs);
                let why = why.map(|w| format!(": {w}")).unwrap_or_default();
                self.progress.message(&format!(
                    "Slurm job {job} ended {state} on node {}{why}; its {} unrecorded runs are to run again (attempt {attempt}, on another node where there is one); not a failure of the tools",
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
            SlurmEvent::Left { job, state, runs } => {
                self.requeued(&runs);
                self.progress.message(&format!(
                    "Slurm job {job} ended {state} with {} unrecorded: `mccbuild run` submits them again",
                    count(runs.len(), "run", "runs")
                ));
            }
            SlurmEvent::Message(text) => self.progress.message(&text),
        }
    }
}

impl Session {
    /// Adopts this contest's jobs still queued or running, submits one job per model for the
    /// runs none of them covers (models longest first, each job's runs longest first:
    /// [`crate::forecast`]), and follows the jobs and the shared store until every run is
    /// recorded or given up. With `submit` off (`run --follow`) it only follows the live jobs.
    pub(super) fn run_on_slurm(
        &mut self,
        runnable: &[usize],
        jobs: usize,
        progress: &mut dyn Progress,
        cancel: &Arc<AtomicBool>,
        outcome: &mut ExecSummary,
        submit: bool,
    ) {
        use mccbuild_exec::slurm::Scheduler;
        let mut scheduler = match self.slurm_cli() {
            Ok(scheduler) => scheduler,
            Err(e) => {
                outcome.failed += runnable.len();
                progress.message(&format!("error: {e}"));
                return;
            }
        };
        let live = match scheduler.live_jobs() {
            Ok(live) => live,
            Err(e) => {
                // Submitting without knowing the live jobs could run their runs twice.
                let reason = format!(
                    "cannot list this contest's Slurm jobs still queued or running, so nothing was submitted: {e}"
                );
                progress.planned(&self.run_infos(runnable));
                progress.started(runnable.len());
                for &i in runnable {
                    let run = &self.plan.runs[i];
                    let name = label(&self.plan, run);
                    progress.run(&RunEvent::Started {
                        key: run.key,
                        label: &name,
                    });
                    progress.run(&RunEvent::Finished {
                        key: run.key,
                        label: &name,
                        end: RunEnd::NotRecorded(NotRecorded::Infrastructure(reason.clone())),
                    });
                }
                outcome.failed += runnable.len();
                return;
            }
        };
        let adopted = self.adopt(live, runnable, progress);
        let covered: HashSet<usize> = adopted
            .iter()
            .flat_map(|a| a.request.runs.iter().map(|r| r.id))
            .collect();
        let uncovered: Vec<usize> = runnable
            .iter()
            .copied()
            .filter(|i| !covered.contains(i))
            .collect();
        let (followed, jobs_of_models) = if submit {
            (runnable.to_vec(), self.model_jobs(&uncovered, jobs))
        } else {
            if !uncovered.is_empty() {
                outcome.left += uncovered.len();
                progress.message(&format!(
                    "{} to run no live job covers: `mccbuild run` submits them",
                    count(uncovered.len(), "run", "runs")
                ));
            }
            let mut followed: Vec<usize> = covered.into_iter().collect();
            followed.sort_unstable();
            (followed, Vec::new())
        };
        progress.planned(&self.run_infos(&followed));
        progress.started(followed.len());
        let settings = FollowSettings {
            attempts: self.plan.contest.executor.slurm.attempts,
            poll: Duration::from_millis(200),
            quiet_poll: Duration::from_secs(2),
            patience: Duration::from_secs(120),
            submit,
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
            adopted,
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
        follower.outcome.left += result.left;
        follower.warn_models_on_several_nodes();
    }

    /// The live jobs to follow: for each, the runs of its key list that are among `runnable`
    /// (each run in one job: the first that names it) and that it does as this command would
    /// (a rerun of the same record, or a plain run). Says which jobs are followed.
    fn adopt(
        &self,
        live: Vec<LiveJob>,
        runnable: &[usize],
        progress: &mut dyn Progress,
    ) -> Vec<Adopted> {
        let wanted: HashMap<RunKey, usize> = runnable
            .iter()
            .map(|&i| (self.plan.runs[i].key, i))
            .collect();
        let mut covered: HashSet<usize> = HashSet::new();
        let mut adopted = Vec::new();
        for job in live {
            let lines = match job.runs {
                Ok(lines) => lines,
                Err(why) => {
                    progress.message(&format!(
                        "warning: Slurm job {} of this contest (model {}) cannot be followed: {why}; its runs not recorded are submitted again",
                        job.id, job.model
                    ));
                    continue;
                }
            };
            let mut runs = Vec::new();
            for (cores, key, replaces) in lines {
                let Some(&i) = wanted.get(&key) else {
                    continue;
                };
                if replaces == self.redo.get(&i).copied() && covered.insert(i) {
                    runs.push(JobRun {
                        id: i,
                        key,
                        cores,
                        replaces,
                    });
                }
            }
            if runs.is_empty() {
                continue;
            }
            let state = match &job.state {
                JobState::Running { node } => format!("running on {node}"),
                _ => "queued".to_string(),
            };
            progress.message(&format!(
                "following Slurm job {} (model {}, {state}), submitted earlier: {}",
                job.id,
                job.model,
                count(runs.len(), "run", "runs")
            ));
            adopted.push(Adopted {
                job: job.id,
                request: JobRequest {
                    model: job.model,
                    attempt: job.attempt,
                    runs,
                    cpus: job.cpus,
                    exclude: Vec::new(),
                },
            });
        }
        adopted
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
    /// all runs of a model on one machine): longest first, each job's runs longest first, by
    /// their expected times ([`crate::forecast`]).
    fn model_jobs(&self, runnable: &[usize], jobs: usize) -> Vec<ModelJob> {
        let times = self.expected_times(runnable);
        let contest = &self.plan.contest;
        self.planned_jobs(runnable, &times.seconds, jobs, 0.0)
            .into_iter()
            .map(|job| ModelJob {
                model: self.plan.models[job.model].name.clone(),
                cpus: job.cpus,
                runs: job
                    .runs
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
                    .collect(),
            })
            .collect()
    }
}
