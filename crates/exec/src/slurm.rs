//! The Slurm executor: one batch job per model (one node: rule E-5.1), each run a job step
//! executing `mccbuild exec-run`, which runs it in the local executor's sandbox and writes its
//! record into the shared store. mccbuild follows the jobs (squeue) and the store (records
//! appearing); a job that ends (node failure, cancellation, time limit, ...) with runs left
//! unrecorded puts them back to "to run", and they are submitted again, a bounded number of
//! times, then reported as infrastructure failures, never as the tool's.
//!
//! Slurm's commands are behind [`Scheduler`], so the orchestration ([`follow_jobs`]) is tested
//! without a cluster; [`SlurmCli`] is the real one (sbatch, squeue, scancel).
//!
//! The files: this one holds what the orchestration and the scheduler share; [`follow_jobs`]
//! (`follow`) follows and resubmits jobs; `batch` makes a job's script and `sbatch` command
//! line; `cli` runs Slurm's commands.

mod batch;
mod cli;
mod follow;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::path::PathBuf;

use mccbuild_core::RunKey;

pub use self::batch::shell_quote;
pub use self::cli::{SlurmCli, last_failure, parse_live_jobs, parse_squeue};
pub use self::follow::{
    Adopted, FollowOutcome, FollowSettings, Follower, SlurmEvent, Whose, follow_jobs,
};

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

/// Reads a key as a key list holds it: `<key>` or `<key>:<digest of the record it replaces>`
/// ([`JobRun::exec_run_key`]).
pub fn parse_exec_run_key(text: &str) -> Option<(RunKey, Option<mccbuild_core::Digest>)> {
    let (key, replaces) = match text.split_once(':') {
        Some((key, digest)) => (key, Some(digest)),
        None => (text, None),
    };
    let key = RunKey::from_hex(key)?;
    let replaces = match replaces {
        Some(digest) => Some(RunKey::from_hex(digest)?.0),
        None => None,
    };
    Some((key, replaces))
}

/// A job of this contest that Slurm still has queued or running, submitted by this or an
/// earlier `mccbuild run` (found by its name, its key list read from its batch script's
/// folder): a later `mccbuild run` follows it instead of submitting its runs again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LiveJob {
    pub id: JobId,
    pub model: String,
    /// Its attempt, from its key list's name (1 when the name does not say).
    pub attempt: u32,
    /// CPUs it asked for.
    pub cpus: u32,
    pub state: JobState,
    /// Its runs as its key list names them (cores, key, the record a rerun replaces), in its
    /// order; or why the key list cannot be read.
    pub runs: Result<Vec<(u32, RunKey, Option<mccbuild_core::Digest>)>, String>,
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
    /// Nodes not to run on: those where an earlier job of these runs ended leaving some of
    /// them unrecorded (a node failing, its disk full, ...).
    pub exclude: Vec<String>,
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
    #[error(
        "cannot run `{program}`: {reason} (install Slurm's client commands, and set SLURM_CONF if the cluster needs it)"
    )]
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
    /// This contest's jobs still queued or running, whoever submitted them.
    fn live_jobs(&mut self) -> Result<Vec<LiveJob>, SchedulerError> {
        Ok(Vec::new())
    }
    /// Where a job's output is, for messages.
    fn log_of(&self, _job: &JobId, _model: &str) -> Option<PathBuf> {
        None
    }
    /// Why a job's runs were not recorded, as its steps said (the last failure in its log).
    fn failure_of(&self, _job: &JobId, _model: &str) -> Option<String> {
        None
    }
}
