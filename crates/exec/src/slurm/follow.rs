//! Following the jobs: submitting one per model (after adopting the contest's jobs still
//! queued or running), watching the store for records and the scheduler for the jobs' states,
//! resubmitting the unrecorded runs of a job that ended (a bounded number of times), cancelling
//! on request.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
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
    /// Runs (ids) of a job on a node started: the job runs its runs in its key list's order,
    /// `slots` at a time, so its first `slots` unrecorded runs are the ones running.
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
        /// Why, as its steps said (the last failure in its log), if they said.
        why: Option<String>,
    },
    /// These runs could not be carried out (never recorded): an infrastructure failure.
    Failed { runs: Vec<usize>, reason: String },
    /// Following only (nothing is submitted): a job ended with these runs unrecorded; they are
    /// left to the next `mccbuild run`.
    Left {
        job: JobId,
        state: String,
        runs: Vec<usize>,
    },
    /// A message (the scheduler does not answer, ...).
    Message(String),
}

/// Whose job recorded a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Whose {
    /// A job submitted by this follower.
    Ours,
    /// A job adopted (submitted by an earlier command), or no job of ours: the record was
    /// there before this follower submitted the run.
    Others,
}

/// The caller's side: the store (has this run a record now?) and progress.
pub trait Follower {
    /// Whether run `id` has its record in the store now (the caller reads and reports it once,
    /// as recorded by `whose` job).
    fn recorded(&mut self, id: usize, whose: Whose) -> bool;
    fn event(&mut self, event: SlurmEvent);
}

/// How jobs are followed.
#[derive(Clone, Debug)]
pub struct FollowSettings {
    /// Jobs a run may get before it is an infrastructure failure.
    pub attempts: u32,
    /// Time between two looks at the store (and at the scheduler while something changes).
    pub poll: Duration,
    /// The longest time between two questions to the scheduler: while no job changes state,
    /// the interval doubles from `poll` up to this, so a contest waiting for the cluster costs
    /// mccbuild and slurmctld next to nothing.
    pub quiet_poll: Duration,
    /// How long the scheduler may fail to answer before the runs are given up.
    pub patience: Duration,
    /// Whether jobs are submitted (`mccbuild run`) or only the adopted ones followed (`mccbuild
    /// run --follow`: nothing submitted, resubmitted or cancelled).
    pub submit: bool,
}

/// A job still queued or running that an earlier command submitted, followed as if it had
/// been submitted here.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Adopted {
    pub job: JobId,
    /// Its runs still to be recorded (in its key list's order), its model, attempt and CPUs.
    pub request: JobRequest,
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
    /// Following only: runs of followed jobs that ended without recording them.
    pub left: usize,
}

struct ActiveJob {
    model: String,
    attempt: u32,
    cpus: u32,
    exclude: Vec<String>,
    runs: Vec<JobRun>,
    /// On a node: which one.
    node: Option<String>,
    adopted: bool,
    /// Runs the job runs at a time.
    slots: usize,
    /// Runs said to be running (a prefix of `runs` when said).
    announced: BTreeSet<usize>,
}

impl ActiveJob {
    fn new(request: JobRequest, adopted: bool) -> ActiveJob {
        let most = request
            .runs
            .iter()
            .map(|r| r.cores)
            .max()
            .unwrap_or(1)
            .max(1);
        ActiveJob {
            slots: (request.cpus / most).max(1) as usize,
            model: request.model,
            attempt: request.attempt,
            cpus: request.cpus,
            exclude: request.exclude,
            runs: request.runs,
            node: None,
            adopted,
            announced: BTreeSet::new(),
        }
    }

    fn whose(&self) -> Whose {
        if self.adopted {
            Whose::Others
        } else {
            Whose::Ours
        }
    }
}

/// Follows the adopted jobs, submits one job per model of `jobs` (in their order), follows
/// them until every run is recorded or given up, and resubmits the unrecorded runs of jobs that
/// end (up to `attempts` jobs per run). On `cancel`, cancels exactly the jobs it follows, those
/// it submitted and those it adopted, that are still active, and returns. With `submit` off it
/// only follows the adopted jobs, and cancels nothing.
pub fn follow_jobs(
    scheduler: &mut dyn Scheduler,
    adopted: Vec<Adopted>,
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
                exclude: Vec::new(),
            })
            .collect(),
        active: adopted
            .into_iter()
            .filter(|a| !a.request.runs.is_empty())
            .map(|a| (a.job, ActiveJob::new(a.request, true)))
            .collect(),
        outcome: FollowOutcome::default(),
    };
    if !settings.submit {
        following.queue.clear();
    }
    let mut silent_since: Option<Instant> = None;
    // When to ask the scheduler next, and the interval since the last change.
    let (mut ask_at, mut interval) = (Instant::now(), settings.poll);
    loop {
        if cancel.load(Ordering::SeqCst) {
            if settings.submit {
                following.cancel_active();
            }
            return following.outcome;
        }
        following.submit_queued();
        if following.active.is_empty() {
            return following.outcome;
        }
        std::thread::sleep(settings.poll);
        // Records first (only of jobs on a node: pending ones write none, and a contest may
        // have thousands of runs waiting): a job whose runs are all recorded is done.
        let before = following.shape();
        let follower = &mut *following.follower;
        following.active.retain(|_, job| {
            if job.node.is_some() {
                let whose = job.whose();
                // A job runs its runs in its key list's order, `slots` at a time: the next
                // records are among its first unrecorded runs (the rest are looked at once it
                // has run them, at the latest when it ends).
                let mut looked = 0;
                let window = job.slots * 2 + LOOK_AHEAD;
                job.runs.retain(|r| {
                    looked += 1;
                    looked > window || !follower.recorded(r.id, whose)
                });
            }
            !job.runs.is_empty()
        });
        following.announce_running();
        if following.active.is_empty() {
            continue;
        }
        let now = Instant::now();
        if following.shape() != before {
            (ask_at, interval) = (now, settings.poll);
        }
        if now < ask_at {
            continue;
        }
        let ids: Vec<JobId> = following.active.keys().cloned().collect();
        match following.scheduler.states(&ids) {
            Ok(states) => {
                silent_since = None;
                let before = following.shape();
                for id in ids {
                    let state = states.get(&id).cloned().unwrap_or(JobState::Ended {
                        state: "UNKNOWN (no longer listed by Slurm)".into(),
                        node: String::new(),
                    });
                    following.update(id, state);
                }
                interval = if following.shape() == before {
                    (interval * 2).min(settings.quiet_poll.max(settings.poll))
                } else {
                    settings.poll
                };
                ask_at = Instant::now() + interval;
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

/// How many unrecorded runs of a running job beyond twice its slots are looked for in the
/// store at each poll (runs recorded a little out of order are seen at once).
const LOOK_AHEAD: usize = 32;

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
    /// What the scheduler's answers may change: the jobs followed, those on a node, the jobs
    /// queued to submit (runs recorded alone do not: the store is looked at every poll).
    fn shape(&self) -> (usize, usize, usize) {
        (
            self.active.len(),
            self.active.values().filter(|j| j.node.is_some()).count(),
            self.queue.len(),
        )
    }

    /// Cancels exactly the jobs followed here (submitted or adopted) that are still active.
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
            request
                .runs
                .retain(|r| !self.follower.recorded(r.id, Whose::Others));
            if request.runs.is_empty() {
                continue;
            }
            let mut submitted = self.scheduler.submit(&request);
            if submitted.is_err() && !request.exclude.is_empty() {
                // No node left but those excluded (a small cluster): any node will do.
                request.exclude.clear();
                submitted = self.scheduler.submit(&request);
            }
            match submitted {
                Ok(job) => {
                    self.follower.event(SlurmEvent::Submitted {
                        job: job.clone(),
                        model: request.model.clone(),
                        runs: request.runs.len(),
                        attempt: request.attempt,
                    });
                    self.outcome.submitted.push(job.clone());
                    self.active.insert(job, ActiveJob::new(request, false));
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

    /// A job's new state: running (its first runs are said to run), or over (resubmit what
    /// it left unrecorded, or give it up after `attempts` jobs).
    fn update(&mut self, id: JobId, state: JobState) {
        match state {
            JobState::Pending => {}
            JobState::Running { node } => {
                if let Some(job) = self.active.get_mut(&id) {
                    if job.node.is_none() {
                        job.node = Some(node);
                        self.announce_running();
                    }
                }
            }
            JobState::Ended { state, node } => self.ended(id, state, node),
        }
    }

    /// Says which runs of the jobs on a node run now: a job runs its runs in its key list's
    /// order, `slots` at a time, so its first `slots` unrecorded runs (those recorded are gone).
    fn announce_running(&mut self) {
        for (id, job) in &mut self.active {
            let Some(node) = &job.node else {
                continue;
            };
            let present: BTreeSet<usize> = job.runs.iter().map(|r| r.id).collect();
            job.announced.retain(|r| present.contains(r));
            let new: Vec<usize> = job
                .runs
                .iter()
                .take(job.slots)
                .map(|r| r.id)
                .filter(|r| !job.announced.contains(r))
                .collect();
            if !new.is_empty() {
                job.announced.extend(new.iter().copied());
                self.follower.event(SlurmEvent::Running {
                    job: id.clone(),
                    node: node.clone(),
                    runs: new,
                });
            }
        }
    }

    fn ended(&mut self, id: JobId, state: String, node: String) {
        let Some(mut job) = self.active.remove(&id) else {
            return;
        };
        // Where it ran: as Slurm says now, or as it was seen running.
        let node = match (node.is_empty(), &job.node) {
            (true, Some(seen)) => seen.clone(),
            _ => node,
        };
        // A step may have written its record just before the job ended.
        let whose = job.whose();
        job.runs.retain(|r| !self.follower.recorded(r.id, whose));
        if job.runs.is_empty() {
            return;
        }
        let ids: Vec<usize> = job.runs.iter().map(|r| r.id).collect();
        if !self.settings.submit {
            self.outcome.left += ids.len();
            self.follower.event(SlurmEvent::Left {
                job: id,
                state,
                runs: ids,
            });
            return;
        }
        let why = self.scheduler.failure_of(&id, &job.model);
        if job.attempt < self.settings.attempts {
            // The next job avoids the node this one ended on (down, its disk full, ...).
            let mut exclude = job.exclude;
            if !node.is_empty() && !exclude.contains(&node) {
                exclude.push(node.clone());
            }
            self.follower.event(SlurmEvent::Requeued {
                job: id,
                state,
                node,
                runs: ids,
                attempt: job.attempt + 1,
                why,
            });
            self.queue.push_back(JobRequest {
                model: job.model,
                attempt: job.attempt + 1,
                runs: job.runs,
                cpus: job.cpus,
                exclude,
            });
        } else {
            self.outcome.failed += ids.len();
            let log = self
                .scheduler
                .log_of(&id, &job.model)
                .map(|p| format!("; its log: {}", p.display()))
                .unwrap_or_default();
            let why = why.map(|w| format!(" ({w})")).unwrap_or_default();
            self.follower.event(SlurmEvent::Failed {
                runs: ids,
                reason: format!(
                    "not recorded after {} jobs; the last, job {id} on node {}, ended {state}{why}{log}",
                    job.attempt,
                    if node.is_empty() { "?" } else { &node }
                ),
            });
        }
    }

    /// The scheduler is gone: gives the runs up (they stay to be done) and cancels what can
    /// still be cancelled.
    fn give_up(&mut self, ids: &[JobId], e: &SchedulerError) {
        if self.settings.submit {
            let _ = self.scheduler.cancel(ids);
        }
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
