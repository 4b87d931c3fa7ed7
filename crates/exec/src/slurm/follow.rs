//! Following the jobs: submitting one per model, watching the store for records and the
//! scheduler for the jobs' states, resubmitting the unrecorded runs of a job that ended (a
//! bounded number of times), cancelling on request.

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::{JobId, JobRequest, JobRun, JobState, ModelJob, Scheduler, SchedulerError};

/// What happens while jobs are followed, for progress and messages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SlurmEvent {
    Submitted {
        job: JobId,
        model: String,
        runs: usize,
        attempt: u32,
    },
    /// A job reached a node: its runs (ids) are running there.
    Running {
        job: JobId,
        node: String,
        runs: Vec<usize>,
    },
    /// A job ended with these runs unrecorded: they are to run again (in a new job).
    Requeued {
        job: JobId,
        state: String,
        node: String,
        runs: Vec<usize>,
        attempt: u32,
    },
    /// These runs could not be carried out (never recorded): an infrastructure failure.
    Failed { runs: Vec<usize>, reason: String },
    /// A message (the scheduler does not answer, ...).
    Message(String),
}

/// The caller's side: the store (has this run a record now?) and progress.
pub trait Follower {
    /// Whether run `id` has its record in the store now (the caller reads and reports it once).
    fn recorded(&mut self, id: usize) -> bool;
    fn event(&mut self, event: SlurmEvent);
}

/// How jobs are followed.
#[derive(Clone, Debug)]
pub struct FollowSettings {
    /// Jobs a run may get before it is an infrastructure failure.
    pub attempts: u32,
    /// Time between two looks at the store and the scheduler.
    pub poll: Duration,
    /// How long the scheduler may fail to answer before the runs are given up.
    pub patience: Duration,
}

/// What [`follow_jobs`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FollowOutcome {
    /// Every job submitted, in order.
    pub submitted: Vec<JobId>,
    /// Jobs cancelled because of `cancel`.
    pub cancelled: Vec<JobId>,
    /// Runs reported as infrastructure failures.
    pub failed: usize,
}

struct ActiveJob {
    model: String,
    attempt: u32,
    cpus: u32,
    runs: Vec<JobRun>,
    running: bool,
}

/// Submits one job per model, follows them until every run is recorded or given up, and
/// resubmits the unrecorded runs of jobs that end (up to `attempts` jobs per run). On `cancel`,
/// cancels exactly the jobs it submitted that are still active, and returns.
pub fn follow_jobs(
    scheduler: &mut dyn Scheduler,
    jobs: Vec<ModelJob>,
    follower: &mut dyn Follower,
    settings: &FollowSettings,
    cancel: &AtomicBool,
) -> FollowOutcome {
    let mut following = Following {
        scheduler,
        follower,
        settings,
        queue: jobs
            .into_iter()
            .filter(|g| !g.runs.is_empty())
            .map(|g| JobRequest {
                model: g.model,
                attempt: 1,
                runs: g.runs,
                cpus: g.cpus,
            })
            .collect(),
        active: BTreeMap::new(),
        outcome: FollowOutcome::default(),
    };
    let mut silent_since: Option<Instant> = None;
    loop {
        if cancel.load(Ordering::SeqCst) {
            following.cancel_active();
            return following.outcome;
        }
        following.submit_queued();
        if following.active.is_empty() {
            return following.outcome;
        }
        std::thread::sleep(settings.poll);
        // Records first (only of jobs on a node: pending ones write none, and a contest may
        // have thousands of runs waiting): a job whose runs are all recorded is done.
        let follower = &mut *following.follower;
        following.active.retain(|_, job| {
            if job.running {
                job.runs.retain(|r| !follower.recorded(r.id));
            }
            !job.runs.is_empty()
        });
        if following.active.is_empty() {
            continue;
        }
        let ids: Vec<JobId> = following.active.keys().cloned().collect();
        match following.scheduler.states(&ids) {
            Ok(states) => {
                silent_since = None;
                for id in ids {
                    let state = states.get(&id).cloned().unwrap_or(JobState::Ended {
                        state: "UNKNOWN (no longer listed by Slurm)".into(),
                        node: String::new(),
                    });
                    following.update(id, state);
                }
            }
            Err(e) => {
                let since = *silent_since.get_or_insert_with(Instant::now);
                if since.elapsed() >= settings.patience {
                    following.give_up(&ids, &e);
                    return following.outcome;
                }
            }
        }
    }
}

/// Jobs being followed: those to submit, those submitted and not over.
struct Following<'a> {
    scheduler: &'a mut dyn Scheduler,
    follower: &'a mut dyn Follower,
    settings: &'a FollowSettings,
    queue: VecDeque<JobRequest>,
    active: BTreeMap<JobId, ActiveJob>,
    outcome: FollowOutcome,
}

impl Following<'_> {
    /// Cancels exactly the jobs submitted here that are still active.
    fn cancel_active(&mut self) {
        let ids: Vec<JobId> = self.active.keys().cloned().collect();
        if !ids.is_empty() {
            if let Err(e) = self.scheduler.cancel(&ids) {
                self.follower.event(SlurmEvent::Message(format!(
                    "could not cancel jobs {}: {e}; cancel them with `scancel {}`",
                    ids.join(","),
                    ids.join(" ")
                )));
            }
        }
        self.outcome.cancelled = ids;
    }

    /// Submits the queued jobs (of their runs still unrecorded).
    fn submit_queued(&mut self) {
        while let Some(mut request) = self.queue.pop_front() {
            request.runs.retain(|r| !self.follower.recorded(r.id));
            if request.runs.is_empty() {
                continue;
            }
            match self.scheduler.submit(&request) {
                Ok(job) => {
                    self.follower.event(SlurmEvent::Submitted {
                        job: job.clone(),
                        model: request.model.clone(),
                        runs: request.runs.len(),
                        attempt: request.attempt,
                    });
                    self.outcome.submitted.push(job.clone());
                    self.active.insert(
                        job,
                        ActiveJob {
                            model: request.model,
                            attempt: request.attempt,
                            cpus: request.cpus,
                            runs: request.runs,
                            running: false,
                        },
                    );
                }
                Err(e) => {
                    // Submitting again would fail the same way (a bad partition, no sbatch).
                    self.outcome.failed += request.runs.len();
                    self.follower.event(SlurmEvent::Failed {
                        runs: request.runs.iter().map(|r| r.id).collect(),
                        reason: format!("cannot submit the job of model {}: {e}", request.model),
                    });
                }
            }
        }
    }

    /// A job's new state: running (say so once), or over (resubmit what it left unrecorded,
    /// or give it up after `attempts` jobs).
    fn update(&mut self, id: JobId, state: JobState) {
        match state {
            JobState::Pending => {}
            JobState::Running { node } => {
                let job = self.active.get_mut(&id).expect("an active job");
                if !job.running {
                    job.running = true;
                    self.follower.event(SlurmEvent::Running {
                        job: id,
                        node,
                        runs: job.runs.iter().map(|r| r.id).collect(),
                    });
                }
            }
            JobState::Ended { state, node } => self.ended(id, state, node),
        }
    }

    fn ended(&mut self, id: JobId, state: String, node: String) {
        let mut job = self.active.remove(&id).expect("an active job");
        // A step may have written its record just before the job ended.
        job.runs.retain(|r| !self.follower.recorded(r.id));
        if job.runs.is_empty() {
            return;
        }
        let ids: Vec<usize> = job.runs.iter().map(|r| r.id).collect();
        if job.attempt < self.settings.attempts {
            self.follower.event(SlurmEvent::Requeued {
                job: id,
                state,
                node,
                runs: ids,
                attempt: job.attempt + 1,
            });
            self.queue.push_back(JobRequest {
                model: job.model,
                attempt: job.attempt + 1,
                runs: job.runs,
                cpus: job.cpus,
            });
        } else {
            self.outcome.failed += ids.len();
            let log = self
                .scheduler
                .log_of(&id, &job.model)
                .map(|p| format!("; its log: {}", p.display()))
                .unwrap_or_default();
            self.follower.event(SlurmEvent::Failed {
                runs: ids,
                reason: format!(
                    "not recorded after {} jobs; the last, job {id} on node {}, ended {state}{log}",
                    job.attempt,
                    if node.is_empty() { "?" } else { &node }
                ),
            });
        }
    }

    /// The scheduler is gone: gives the runs up (they stay to be done) and cancels what can
    /// still be cancelled.
    fn give_up(&mut self, ids: &[JobId], e: &SchedulerError) {
        let _ = self.scheduler.cancel(ids);
        for (job, a) in std::mem::take(&mut self.active) {
            self.outcome.failed += a.runs.len();
            self.follower.event(SlurmEvent::Failed {
                runs: a.runs.iter().map(|r| r.id).collect(),
                reason: format!(
                    "Slurm did not answer for {} s about job {job} (model {}): {e}",
                    self.settings.patience.as_secs(),
                    a.model
                ),
            });
        }
    }
}
