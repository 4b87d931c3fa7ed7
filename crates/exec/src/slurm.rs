//! The Slurm executor: one batch job per model (one node: rule E-5.1), each run a job step
//! executing `mccbuild exec-run`, which runs it in the local executor's sandbox and writes its
//! record into the shared store. mccbuild follows the jobs (squeue) and the store (records
//! appearing); a job that ends (node failure, cancellation, time limit, ...) with runs left
//! unrecorded puts them back to "to run", and they are submitted again, a bounded number of
//! times, then reported as infrastructure failures, never as the tool's.
//!
//! Slurm's commands are behind [`Scheduler`], so the orchestration ([`follow_jobs`]) is tested
//! without a cluster; [`SlurmCli`] is the real one (sbatch, squeue, scancel).

use std::collections::{BTreeMap, VecDeque};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use mccbuild_core::RunKey;
use mccbuild_plan::manifest::{SlurmConfig, SlurmSteps};

/// A Slurm job id.
pub type JobId = String;

/// One run of a model's job: an opaque id for the caller (its index in the plan), its key and cores.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobRun {
    pub id: usize,
    pub key: RunKey,
    pub cores: u32,
    /// A rerun (`mccbuild run --rerun`): the digest of the record it replaces. The step
    /// executes it again while that record is the stored one, and skips it once replaced.
    pub replaces: Option<mccbuild_core::Digest>,
}

impl JobRun {
    /// The run as `mccbuild exec-run` takes it: its key, or `<key>:<digest of the record it
    /// replaces>` for a rerun.
    pub fn exec_run_key(&self) -> String {
        match &self.replaces {
            Some(digest) => format!("{}:{}", self.key.hex(), mccbuild_core::hex(digest)),
            None => self.key.hex(),
        }
    }
}

/// The runs of one model: they go to one job, so to one node (rule E-5.1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelJob {
    pub model: String,
    pub runs: Vec<JobRun>,
    /// CPUs the model's job asks for.
    pub cpus: u32,
}

/// What is submitted: one batch job running each run as a step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobRequest {
    pub model: String,
    /// 1 for the first job of these runs, 2 for the first resubmission, ...
    pub attempt: u32,
    pub runs: Vec<JobRun>,
    pub cpus: u32,
}

/// A job's state as the scheduler reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JobState {
    /// Waiting for a node (PENDING, REQUEUED, SUSPENDED, ...).
    Pending,
    /// On a node (RUNNING, COMPLETING).
    Running { node: String },
    /// Over (COMPLETED, FAILED, NODE_FAIL, CANCELLED, TIMEOUT, ..., or no longer known).
    Ended { state: String, node: String },
}

/// Why the scheduler did not do what it was asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SchedulerError {
    #[error("cannot run `{program}`: {reason} (install Slurm's client commands, and set SLURM_CONF if the cluster needs it)")]
    NotRun { program: String, reason: String },
    #[error("`{command}` failed ({status}): {stderr}")]
    Failed {
        command: String,
        status: String,
        /// What the command said on standard error.
        stderr: String,
    },
    #[error("cannot write {}: {reason}", path.display())]
    Write { path: PathBuf, reason: String },
    #[error("sbatch printed `{0}`, not a job id")]
    NoJobId(String),
}

/// Slurm's commands, as the orchestration needs them.
pub trait Scheduler {
    /// Submits a job; its id.
    fn submit(&mut self, job: &JobRequest) -> Result<JobId, SchedulerError>;
    /// The states of these jobs (a job the scheduler no longer knows is `Ended`).
    fn states(&mut self, jobs: &[JobId]) -> Result<BTreeMap<JobId, JobState>, SchedulerError>;
    /// Cancels exactly these jobs.
    fn cancel(&mut self, jobs: &[JobId]) -> Result<(), SchedulerError>;
    /// Where a job's output is, for messages.
    fn log_of(&self, _job: &JobId, _model: &str) -> Option<PathBuf> {
        None
    }
}

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

/// The real scheduler: Slurm's `sbatch`, `squeue` and `scancel` (with the environment's
/// SLURM_CONF). Job scripts, key lists and logs go to `dir`, which every node must see.
pub struct SlurmCli {
    pub config: SlurmConfig,
    /// The mccbuild binary as the nodes see it.
    pub mccbuild: PathBuf,
    /// The manifest, absolute.
    pub manifest: PathBuf,
    /// The jobs' working directory (the contest's folder).
    pub chdir: PathBuf,
    /// Job scripts, key lists and logs (under the shared store).
    pub dir: PathBuf,
    /// Names this contest's jobs: `mccbuild-<tag>-<model>`.
    pub tag: String,
}

/// `'text'` for a POSIX shell.
pub fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

impl SlurmCli {
    fn job_name(&self, model: &str) -> String {
        format!("mccbuild-{}-{model}", self.tag)
    }

    /// The batch script of a job: each run as one `srun` step of `mccbuild exec-run`, at most
    /// as many at a time as the job's CPUs allow. A step exiting 0 recorded its run (whatever
    /// the tool did), 1 could not carry it out (not recorded: it is resubmitted); anything
    /// else (the step could not be launched, the manifest or the store are unusable on this
    /// node) stops the job, whose unrecorded runs are resubmitted. With `steps = "model"`, one
    /// step runs all of the job's runs, as many at a time.
    pub fn batch_script(&self, job: &JobRequest, keys_file: &Path) -> String {
        let max_cores = job.runs.iter().map(|r| r.cores).max().unwrap_or(1).max(1);
        let parallel = (job.cpus / max_cores).max(1);
        let srun_options: Vec<String> = self
            .config
            .srun_options
            .iter()
            .map(|o| shell_quote(o))
            .collect();
        let srun_options = srun_options.join(" ");
        let mccbuild = shell_quote(&self.mccbuild.to_string_lossy());
        let manifest = shell_quote(&self.manifest.to_string_lossy());
        let keys = shell_quote(&keys_file.to_string_lossy());
        let name = shell_quote(&self.job_name(&job.model));
        let (model, attempt) = (&job.model, job.attempt);
        if self.config.steps == SlurmSteps::PerModel {
            return format!(
                r#"#!/bin/bash
# Written by mccbuild: the runs of model {model} (attempt {attempt}), one job step for all.
srun --exact -N1 -n1 -c{cpus} --job-name={name} {srun_options} \
    {mccbuild} exec-run --manifest {manifest} --keys-file {keys} --jobs {parallel} </dev/null
"#,
                cpus = job.cpus,
            );
        }
        format!(
            r#"#!/bin/bash
# Written by mccbuild: the runs of model {model} (attempt {attempt}), one job step per run.
MCCBUILD={mccbuild}
MANIFEST={manifest}
KEYS={keys}
PARALLEL={parallel}
running=0
status=0
finish_one() {{
    wait -n
    rc=$?
    running=$((running - 1))
    case $rc in
        0|1) ;;
        *) echo "mccbuild: a step ended with status $rc: no more steps in this job" >&2
           [ "$status" = 0 ] && status=$rc ;;
    esac
}}
while read -r cores key; do
    [ "$status" = 0 ] || break
    [ "$running" -ge "$PARALLEL" ] && finish_one
    [ "$status" = 0 ] || break
    srun --exact -N1 -n1 -c"$cores" --job-name={name} {srun_options} \
        "$MCCBUILD" exec-run --manifest "$MANIFEST" --key "$key" </dev/null &
    running=$((running + 1))
done <"$KEYS"
while [ "$running" -gt 0 ]; do finish_one; done
exit $status
"#
        )
    }

    /// The `sbatch` arguments of a job (without the script).
    pub fn sbatch_args(&self, job: &JobRequest) -> Vec<String> {
        let mut args = vec![
            "--parsable".to_string(),
            "--nodes=1".into(),
            "--ntasks=1".into(),
            format!("--cpus-per-task={}", job.cpus),
            "--no-requeue".into(),
            format!("--job-name={}", self.job_name(&job.model)),
            format!("--chdir={}", self.chdir.display()),
            format!(
                "--output={}",
                self.dir.join(format!("{}-%j.out", job.model)).display()
            ),
        ];
        for (flag, value) in [
            ("--partition", &self.config.partition),
            ("--account", &self.config.account),
            ("--qos", &self.config.qos),
        ] {
            if let Some(v) = value {
                args.push(format!("{flag}={v}"));
            }
        }
        args.extend(self.config.sbatch_options.iter().cloned());
        args
    }
}

fn run_command(program: &str, args: &[String]) -> Result<String, SchedulerError> {
    let out = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| SchedulerError::NotRun {
            program: program.to_string(),
            reason: e.to_string(),
        })?;
    if !out.status.success() {
        return Err(SchedulerError::Failed {
            command: format!("{program} {}", args.join(" ")),
            status: out.status.to_string(),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Reads `squeue -h -t all -o %i|%T|%N` lines.
pub fn parse_squeue(text: &str) -> BTreeMap<JobId, JobState> {
    let mut states = BTreeMap::new();
    for line in text.lines() {
        let mut fields = line.trim().splitn(3, '|');
        let (Some(id), Some(state)) = (fields.next(), fields.next()) else {
            continue;
        };
        let node = fields.next().unwrap_or("").trim().to_string();
        let state = state.trim();
        let state = match state {
            "RUNNING" | "COMPLETING" | "STAGE_OUT" | "SIGNALING" => JobState::Running { node },
            "PENDING" | "CONFIGURING" | "REQUEUED" | "REQUEUE_FED" | "REQUEUE_HOLD"
            | "RESIZING" | "SUSPENDED" | "STOPPED" | "RESV_DEL_HOLD" => JobState::Pending,
            other => JobState::Ended {
                state: other.to_string(),
                node,
            },
        };
        states.insert(id.trim().to_string(), state);
    }
    states
}

impl Scheduler for SlurmCli {
    fn submit(&mut self, job: &JobRequest) -> Result<JobId, SchedulerError> {
        let unwritable = |path: &Path| {
            let path = path.to_path_buf();
            move |e: std::io::Error| SchedulerError::Write {
                path,
                reason: e.to_string(),
            }
        };
        fs::create_dir_all(&self.dir).map_err(unwritable(&self.dir))?;
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let base = format!(
            "{}-a{}-{}-{stamp}",
            job.model,
            job.attempt,
            std::process::id()
        );
        let keys_file = self.dir.join(format!("{base}.keys"));
        let keys: String = job
            .runs
            .iter()
            .map(|r| format!("{} {}\n", r.cores, r.exec_run_key()))
            .collect();
        mccbuild_core::fsio::write_atomically(&keys_file, keys.as_bytes())
            .map_err(unwritable(&keys_file))?;
        let script = self.dir.join(format!("{base}.sh"));
        mccbuild_core::fsio::write_atomically(
            &script,
            self.batch_script(job, &keys_file).as_bytes(),
        )
        .map_err(unwritable(&script))?;
        let mut args = self.sbatch_args(job);
        args.push(script.to_string_lossy().into_owned());
        let out = run_command("sbatch", &args)?;
        let id = out
            .trim()
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_string();
        if id.is_empty() || !id.chars().all(|c| c.is_ascii_digit()) {
            return Err(SchedulerError::NoJobId(out.trim().to_string()));
        }
        Ok(id)
    }

    fn states(&mut self, jobs: &[JobId]) -> Result<BTreeMap<JobId, JobState>, SchedulerError> {
        let mut states = BTreeMap::new();
        // squeue takes a list; keep command lines short.
        for chunk in jobs.chunks(200) {
            let out = run_command(
                "squeue",
                &[
                    "--noheader".into(),
                    "--states=all".into(),
                    format!("--jobs={}", chunk.join(",")),
                    "--format=%i|%T|%N".into(),
                ],
            );
            match out {
                Ok(text) => states.extend(parse_squeue(&text)),
                // squeue fails on a list holding a job it no longer knows: ask one by one.
                Err(SchedulerError::Failed { stderr, .. }) if stderr.contains("Invalid job id") => {
                    for job in chunk {
                        if let Ok(text) = run_command(
                            "squeue",
                            &[
                                "--noheader".into(),
                                "--states=all".into(),
                                format!("--jobs={job}"),
                                "--format=%i|%T|%N".into(),
                            ],
                        ) {
                            states.extend(parse_squeue(&text));
                        }
                    }
                }
                Err(e) => return Err(e),
            }
        }
        Ok(states)
    }

    fn cancel(&mut self, jobs: &[JobId]) -> Result<(), SchedulerError> {
        if jobs.is_empty() {
            return Ok(());
        }
        run_command("scancel", jobs).map(|_| ())
    }

    fn log_of(&self, job: &JobId, model: &str) -> Option<PathBuf> {
        Some(self.dir.join(format!("{model}-{job}.out")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scheduler scripted by the test: each job goes through the states given for its
    /// attempt, one per poll, then stays in the last one; a recorded "store" of run ids.
    struct Fake {
        /// Per attempt: the states a job goes through; the runs it records when it starts.
        script: Vec<(Vec<JobState>, bool)>,
        jobs: BTreeMap<JobId, (JobRequest, usize)>,
        store: std::rc::Rc<std::cell::RefCell<Vec<usize>>>,
        cancelled: Vec<JobId>,
        next: u32,
        fail_submit: bool,
    }

    impl Scheduler for Fake {
        fn submit(&mut self, job: &JobRequest) -> Result<JobId, SchedulerError> {
            if self.fail_submit {
                return Err(SchedulerError::Failed {
                    command: "sbatch job.sh".into(),
                    status: "exit status: 1".into(),
                    stderr: "sbatch: error: invalid partition specified: nope".into(),
                });
            }
            self.next += 1;
            let id = self.next.to_string();
            self.jobs.insert(id.clone(), (job.clone(), 0));
            Ok(id)
        }
        fn states(&mut self, jobs: &[JobId]) -> Result<BTreeMap<JobId, JobState>, SchedulerError> {
            let mut out = BTreeMap::new();
            for id in jobs {
                let (req, step) = self.jobs.get_mut(id).unwrap();
                let (states, records) = &self.script[(req.attempt - 1) as usize];
                let state = states[(*step).min(states.len() - 1)].clone();
                *step += 1;
                if *records && matches!(state, JobState::Running { .. }) {
                    self.store
                        .borrow_mut()
                        .extend(req.runs.iter().map(|r| r.id));
                }
                out.insert(id.clone(), state);
            }
            Ok(out)
        }
        fn cancel(&mut self, jobs: &[JobId]) -> Result<(), SchedulerError> {
            self.cancelled.extend(jobs.iter().cloned());
            Ok(())
        }
    }

    #[derive(Default)]
    struct Log {
        store: std::rc::Rc<std::cell::RefCell<Vec<usize>>>,
        seen: Vec<usize>,
        events: Vec<SlurmEvent>,
    }

    impl Follower for Log {
        fn recorded(&mut self, id: usize) -> bool {
            let stored = self.store.borrow().contains(&id);
            if stored && !self.seen.contains(&id) {
                self.seen.push(id);
            }
            stored
        }
        fn event(&mut self, event: SlurmEvent) {
            self.events.push(event);
        }
    }

    fn key(n: u8) -> RunKey {
        RunKey::from_hex(&format!("{n:02x}").repeat(32)).unwrap()
    }

    fn model_job(model: &str, ids: &[usize]) -> ModelJob {
        ModelJob {
            model: model.into(),
            runs: ids
                .iter()
                .map(|&id| JobRun {
                    id,
                    key: key(id as u8),
                    cores: 1,
                    replaces: None,
                })
                .collect(),
            cpus: 2,
        }
    }

    fn settings(attempts: u32) -> FollowSettings {
        FollowSettings {
            attempts,
            poll: Duration::ZERO,
            patience: Duration::from_secs(60),
        }
    }

    fn running(node: &str) -> JobState {
        JobState::Running { node: node.into() }
    }

    fn ended(state: &str) -> JobState {
        JobState::Ended {
            state: state.into(),
            node: "node1".into(),
        }
    }

    fn fake(script: Vec<(Vec<JobState>, bool)>) -> (Fake, Log) {
        let store = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        (
            Fake {
                script,
                jobs: BTreeMap::new(),
                store: store.clone(),
                cancelled: Vec::new(),
                next: 0,
                fail_submit: false,
            },
            Log {
                store,
                ..Log::default()
            },
        )
    }

    #[test]
    fn one_job_per_model_and_all_runs_recorded() {
        let (mut s, mut log) = fake(vec![(
            vec![JobState::Pending, running("n1"), ended("COMPLETED")],
            true,
        )]);
        let out = follow_jobs(
            &mut s,
            vec![model_job("A", &[0, 1, 2]), model_job("B", &[3, 4])],
            &mut log,
            &settings(3),
            &AtomicBool::new(false),
        );
        assert_eq!(out.submitted.len(), 2);
        assert_eq!(out.failed, 0);
        let models: Vec<(String, Vec<usize>)> = s
            .jobs
            .values()
            .map(|(r, _)| (r.model.clone(), r.runs.iter().map(|r| r.id).collect()))
            .collect();
        assert_eq!(
            models,
            vec![("A".into(), vec![0, 1, 2]), ("B".into(), vec![3, 4])]
        );
        log.seen.sort_unstable();
        assert_eq!(log.seen, vec![0, 1, 2, 3, 4]);
    }

    #[test]
    fn a_failed_node_puts_unrecorded_runs_back_and_they_are_resubmitted() {
        // First job: NODE_FAIL with nothing recorded; second: runs and records everything.
        let (mut s, mut log) = fake(vec![
            (vec![running("n2"), ended("NODE_FAIL")], false),
            (vec![running("n1"), ended("COMPLETED")], true),
        ]);
        let out = follow_jobs(
            &mut s,
            vec![model_job("A", &[0, 1])],
            &mut log,
            &settings(3),
            &AtomicBool::new(false),
        );
        assert_eq!(out.submitted, vec!["1".to_string(), "2".to_string()]);
        assert_eq!(out.failed, 0);
        assert!(log.events.iter().any(|e| matches!(e,
            SlurmEvent::Requeued { state, runs, attempt: 2, .. } if state == "NODE_FAIL" && runs == &vec![0, 1])));
        assert!(!log
            .events
            .iter()
            .any(|e| matches!(e, SlurmEvent::Failed { .. })));
        assert_eq!(log.seen, vec![0, 1]);
    }

    #[test]
    fn only_unrecorded_runs_are_resubmitted() {
        let (mut s, mut log) = fake(vec![
            (vec![running("n2"), ended("CANCELLED")], false),
            (vec![running("n1"), ended("COMPLETED")], true),
        ]);
        log.store.borrow_mut().push(1); // run 1 recorded by the first job
        let out = follow_jobs(
            &mut s,
            vec![model_job("A", &[0, 1, 2])],
            &mut log,
            &settings(3),
            &AtomicBool::new(false),
        );
        assert_eq!(out.failed, 0);
        let second = &s.jobs["2"].0;
        assert_eq!(
            second.runs.iter().map(|r| r.id).collect::<Vec<_>>(),
            vec![0, 2]
        );
        assert_eq!(second.attempt, 2);
    }

    #[test]
    fn attempts_are_bounded_then_an_infrastructure_failure() {
        let (mut s, mut log) = fake(vec![
            (vec![ended("NODE_FAIL")], false),
            (vec![ended("FAILED")], false),
        ]);
        let out = follow_jobs(
            &mut s,
            vec![model_job("A", &[0, 1])],
            &mut log,
            &settings(2),
            &AtomicBool::new(false),
        );
        assert_eq!(out.submitted.len(), 2);
        assert_eq!(out.failed, 2);
        let failed: Vec<&SlurmEvent> = log
            .events
            .iter()
            .filter(|e| matches!(e, SlurmEvent::Failed { .. }))
            .collect();
        assert_eq!(failed.len(), 1);
        let SlurmEvent::Failed { runs, reason } = failed[0] else {
            unreachable!()
        };
        assert_eq!(runs, &vec![0, 1]);
        assert!(
            reason.contains("after 2 jobs") && reason.contains("FAILED"),
            "{reason}"
        );
    }

    #[test]
    fn runs_already_recorded_are_not_submitted() {
        let (mut s, mut log) = fake(vec![(vec![ended("COMPLETED")], false)]);
        log.store.borrow_mut().extend([0, 1]);
        let out = follow_jobs(
            &mut s,
            vec![model_job("A", &[0, 1]), model_job("B", &[2])],
            &mut log,
            &settings(1),
            &AtomicBool::new(false),
        );
        assert_eq!(out.submitted, vec!["1".to_string()]);
        assert_eq!(s.jobs["1"].0.model, "B");
        assert_eq!(out.failed, 1);
    }

    #[test]
    fn cancel_cancels_exactly_the_active_jobs_submitted() {
        let (mut s, mut log) = fake(vec![(vec![running("n1")], false)]);
        let cancel = AtomicBool::new(false);
        // The follower sets cancel when the first job runs (as Ctrl-C would).
        struct CancelOnRun<'a>(&'a mut Log, &'a AtomicBool);
        impl Follower for CancelOnRun<'_> {
            fn recorded(&mut self, id: usize) -> bool {
                self.0.recorded(id)
            }
            fn event(&mut self, e: SlurmEvent) {
                if matches!(e, SlurmEvent::Running { .. }) {
                    self.1.store(true, Ordering::SeqCst);
                }
                self.0.event(e);
            }
        }
        let out = follow_jobs(
            &mut s,
            vec![model_job("A", &[0]), model_job("B", &[1])],
            &mut CancelOnRun(&mut log, &cancel),
            &settings(3),
            &cancel,
        );
        assert_eq!(out.cancelled, vec!["1".to_string(), "2".to_string()]);
        assert_eq!(s.cancelled, out.cancelled);
        assert_eq!(out.failed, 0);
    }

    #[test]
    fn a_submission_error_fails_the_jobs_runs_without_retrying() {
        let (mut s, mut log) = fake(vec![(vec![ended("COMPLETED")], false)]);
        s.fail_submit = true;
        let out = follow_jobs(
            &mut s,
            vec![model_job("A", &[0, 1])],
            &mut log,
            &settings(3),
            &AtomicBool::new(false),
        );
        assert_eq!(out.failed, 2);
        assert!(out.submitted.is_empty());
        assert!(log.events.iter().any(|e| matches!(e,
            SlurmEvent::Failed { reason, .. } if reason.contains("invalid partition"))));
    }

    #[test]
    fn squeue_lines_are_read() {
        let states = parse_squeue(
            "12|RUNNING|node2\n13|PENDING|\n14|NODE_FAIL|node1\n15|COMPLETING|node3\n",
        );
        assert_eq!(states["12"], running("node2"));
        assert_eq!(states["13"], JobState::Pending);
        assert_eq!(states["14"], ended("NODE_FAIL"));
        assert_eq!(states["15"], running("node3"));
    }

    #[test]
    fn sbatch_gets_one_node_and_the_settings() {
        let cli = SlurmCli {
            config: SlurmConfig {
                partition: Some("mcc".into()),
                account: Some("lip6".into()),
                qos: None,
                sbatch_options: vec!["--time=1:00:00".into()],
                srun_options: vec!["--mem-per-cpu=100".into()],
                ..SlurmConfig::default()
            },
            mccbuild: "/opt/mcc build/mccbuild".into(),
            manifest: "/c/contest.toml".into(),
            chdir: "/c".into(),
            dir: "/c/cache/slurm".into(),
            tag: "abcd1234".into(),
        };
        let job = JobRequest {
            model: "Philosophers".into(),
            attempt: 1,
            runs: vec![JobRun {
                id: 0,
                key: key(7),
                cores: 1,
                replaces: None,
            }],
            cpus: 2,
        };
        let args = cli.sbatch_args(&job);
        for expected in [
            "--nodes=1",
            "--cpus-per-task=2",
            "--no-requeue",
            "--job-name=mccbuild-abcd1234-Philosophers",
            "--chdir=/c",
            "--output=/c/cache/slurm/Philosophers-%j.out",
            "--partition=mcc",
            "--account=lip6",
            "--time=1:00:00",
        ] {
            assert!(
                args.contains(&expected.to_string()),
                "{expected} in {args:?}"
            );
        }
        assert!(!args.iter().any(|a| a.starts_with("--qos")));
        let script = cli.batch_script(&job, Path::new("/c/cache/slurm/x.keys"));
        assert!(
            script.contains("MCCBUILD='/opt/mcc build/mccbuild'"),
            "{script}"
        );
        assert!(script.contains("PARALLEL=2"));
        assert!(script.contains("'--mem-per-cpu=100'"));
        assert!(script.contains("exec-run --manifest \"$MANIFEST\" --key \"$key\" </dev/null &"));

        let cli = SlurmCli {
            config: SlurmConfig {
                steps: SlurmSteps::PerModel,
                ..cli.config
            },
            ..cli
        };
        let script = cli.batch_script(&job, Path::new("/c/cache/slurm/x.keys"));
        assert!(
            script.contains("srun --exact -N1 -n1 -c2 ")
                && script.contains("exec-run --manifest '/c/contest.toml' --keys-file '/c/cache/slurm/x.keys' --jobs 2"),
            "{script}"
        );
    }

    #[test]
    fn a_rerun_names_the_record_it_replaces_in_one_word_of_the_keys_file() {
        let mut run = JobRun {
            id: 0,
            key: key(7),
            cores: 1,
            replaces: None,
        };
        assert_eq!(run.exec_run_key(), key(7).hex());
        run.replaces = Some(key(9).0);
        let word = run.exec_run_key();
        assert_eq!(word, format!("{}:{}", key(7).hex(), key(9).hex()));
        // The batch script reads `cores key` lines with `read -r`: one word, no blank.
        assert!(!word.contains(char::is_whitespace));
    }
}
