//! The real scheduler: Slurm's `sbatch` (the job's files written first), `squeue` and `scancel`,
//! run as commands and their output read.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use mccbuild_plan::manifest::SlurmConfig;

use super::{JobId, JobRequest, JobState, LiveJob, Scheduler, SchedulerError};

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

pub(super) fn run_command(program: &str, args: &[String]) -> Result<String, SchedulerError> {
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
        states.insert(id.trim().to_string(), job_state(state, node));
    }
    states
}

/// A job's state as squeue words it (`%T`), on its node (`%N`).
fn job_state(state: &str, node: String) -> JobState {
    match state.trim() {
        "RUNNING" | "COMPLETING" | "STAGE_OUT" | "SIGNALING" => JobState::Running { node },
        "PENDING" | "CONFIGURING" | "REQUEUED" | "REQUEUE_FED" | "REQUEUE_HOLD" | "RESIZING"
        | "SUSPENDED" | "STOPPED" | "RESV_DEL_HOLD" => JobState::Pending,
        other => JobState::Ended {
            state: other.to_string(),
            node,
        },
    }
}

/// The format of `squeue` listing the jobs to adopt: id, state, node, CPUs, name, batch script.
const LIVE_FORMAT: &str = "--format=%i|%T|%N|%C|%j|%o";

/// A job `squeue -o %i|%T|%N|%C|%j|%o` lists, named `<prefix><model>`, queued or running.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListedJob {
    pub id: JobId,
    pub model: String,
    pub state: JobState,
    pub cpus: u32,
    /// Its batch script (`%o`, the command it runs).
    pub script: PathBuf,
}

/// Reads `squeue -o %i|%T|%N|%C|%j|%o` lines: the jobs named `<prefix><model>` that are not
/// over. Other jobs (other contests', other users') are left out.
pub fn parse_live_jobs(text: &str, prefix: &str) -> Vec<ListedJob> {
    let mut jobs = Vec::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.trim().splitn(6, '|').collect();
        let [id, state, node, cpus, name, script] = fields[..] else {
            continue;
        };
        let Some(model) = name.trim().strip_prefix(prefix) else {
            continue;
        };
        let state = job_state(state, node.trim().to_string());
        if matches!(state, JobState::Ended { .. }) {
            continue;
        }
        jobs.push(ListedJob {
            id: id.trim().to_string(),
            model: model.to_string(),
            state,
            cpus: cpus.trim().parse().unwrap_or(1),
            script: PathBuf::from(script.trim()),
        });
    }
    jobs
}

/// The attempt a key list's or script's name says: `<model>-a<attempt>-<pid>-<stamp>.keys`.
pub(super) fn attempt_of(path: &Path) -> u32 {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy())
        .unwrap_or_default();
    stem.rsplit('-')
        .nth(2)
        .and_then(|a| a.strip_prefix('a'))
        .and_then(|a| a.parse().ok())
        .unwrap_or(1)
}

/// A key list's lines: `<cores> <key>[:<digest>]`.
pub(super) fn read_key_list(
    path: &Path,
) -> Result<Vec<(u32, mccbuild_core::RunKey, Option<mccbuild_core::Digest>)>, String> {
    let text =
        fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let mut fields = line.split_whitespace();
            let (cores, key) = (fields.next(), fields.next());
            let run = key.and_then(super::parse_exec_run_key);
            match (cores.and_then(|c| c.parse().ok()), run) {
                (Some(cores), Some((key, replaces))) => Ok((cores, key, replaces)),
                _ => Err(format!(
                    "{}: `{line}` is not `<cores> <key>`",
                    path.display()
                )),
            }
        })
        .collect()
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

    fn live_jobs(&mut self) -> Result<Vec<LiveJob>, SchedulerError> {
        let text = run_command(
            "squeue",
            &["--noheader".into(), "--me".into(), LIVE_FORMAT.into()],
        )?;
        let prefix = self.job_name("");
        Ok(parse_live_jobs(&text, &prefix)
            .into_iter()
            .map(|job| {
                let keys = job.script.with_extension("keys");
                LiveJob {
                    attempt: attempt_of(&keys),
                    runs: read_key_list(&keys),
                    id: job.id,
                    model: job.model,
                    cpus: job.cpus,
                    state: job.state,
                }
            })
            .collect())
    }

    fn log_of(&self, job: &JobId, model: &str) -> Option<PathBuf> {
        Some(self.dir.join(format!("{model}-{job}.out")))
    }

    fn failure_of(&self, job: &JobId, model: &str) -> Option<String> {
        use std::io::{Read, Seek, SeekFrom};
        let mut file = fs::File::open(self.log_of(job, model)?).ok()?;
        // The end of the log is enough: a job's last failure is there.
        let len = file.metadata().ok()?.len();
        file.seek(SeekFrom::Start(len.saturating_sub(LOG_TAIL)))
            .ok()?;
        let mut tail = Vec::new();
        file.read_to_end(&mut tail).ok()?;
        last_failure(&String::from_utf8_lossy(&tail))
    }
}

/// How much of a job's log [`SlurmCli::failure_of`] reads, from its end.
const LOG_TAIL: u64 = 64 * 1024;

/// The last failure a job's steps wrote in its log: a run they could not carry out (`failed on
/// NODE: RUN: why`, `mccbuild exec-run`'s line), else an error that stopped a step.
pub fn last_failure(log: &str) -> Option<String> {
    let last = |prefix: &str| {
        log.lines()
            .rev()
            .map(str::trim)
            .find(|l| l.starts_with(prefix))
            .map(String::from)
    };
    last("failed on ").or_else(|| last("error: "))
}
