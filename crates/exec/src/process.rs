//! Running one process tree under limits, and measuring it.
//!
//! The tool's first process joins the run's cgroups and its cores before it executes the tool,
//! so nothing it starts escapes. Isolated, it is born in its cgroups (see `spawn`). Not
//! isolated, it is moved into them by a thread of mccbuild while it sets itself up, and waits
//! for that move before it executes the tool: the first move into a cgroup after a quiet while
//! waits for an RCU grace period of the kernel (10-14 ms here), which then overlaps with the
//! setup instead of preceding it (see `Gate`). The monitor, which reads the tool's output too,
//! wakes when the main process exits (pidfd), when output comes, and every few milliseconds to
//! check the limits; at a limit the whole tree is killed at once. When the main process has
//! exited, what it left running (orphans) is killed too, the tree is waited until empty, and
//! only then are CPU time and peak memory read.
//!
//! Without cgroups (a laptop, no root) the fallback limits and measures through the process
//! session: /proc sampling of its members, rusage of the main process, SIGKILL to the session.
//! It is less exact (orphans that leave the session are not seen); records say which was used.
//!
//! The files: this one runs the tree and measures it; `start` starts it (`gate`: moving a
//! process that is not isolated into its cgroups), `supervise` follows it to its end under the
//! limits, `output` reads and keeps what it prints, `proc_sampler` measures it without cgroups,
//! `cores` pins it.

mod cores;
mod gate;
mod output;
mod proc_sampler;
mod start;
mod supervise;

use std::io;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use crate::cgroup::RunCgroup;
use crate::isolation::Prepared;
use crate::spawn::StatusSlot;
use mccbuild_core::protocol::ParsedOutput;
use mccbuild_core::{CapturedOutput, Measurement, Termination};

pub(crate) use self::cores::{pin_process, pin_to_cores};
use self::output::Output;
pub(crate) use self::output::capture_all;
use self::proc_sampler::ProcSampler;
use self::start::start_tree;
use self::supervise::{kill_tree, supervise};

/// What to run and under which limits.
pub struct ProcessSpec {
    pub program: PathBuf,
    pub args: Vec<String>,
    pub cwd: PathBuf,
    pub env: Vec<(String, String)>,
    pub cpu_limit_s: f64,
    pub memory_limit_bytes: u64,
    pub wall_limit: Duration,
    /// Total bytes of stdout + stderr after which the run is killed.
    pub output_limit: u64,
    /// Bytes of each stream kept in the record (half from the start, half from the end).
    pub capture_bytes: usize,
    pub cores: Vec<u32>,
    pub pids_limit: u64,
    pub cgroup: Option<RunCgroup>,
    /// Namespaces, the run's view of the files and its own user (None: none of them).
    pub isolation: Option<Prepared>,
    /// Not isolated, started by root: the user (uid, gid) the tool runs as (isolated runs
    /// carry theirs in `isolation`).
    pub user: Option<(u32, u32)>,
    /// Set by another thread to stop the run (Ctrl-C).
    pub cancel: Arc<AtomicBool>,
}

/// What came out.
#[derive(Debug)]
pub struct ProcessResult {
    pub measurement: Measurement,
    pub stdout: CapturedOutput,
    pub stderr: CapturedOutput,
    pub parsed: ParsedOutput,
    /// True when the run was stopped by a cancellation, not by itself or a limit.
    pub cancelled: bool,
}

/// Runs the process tree to its end; `started` is called once the tool executes (or could not
/// be started). Errors are infrastructure failures (the tool could not be started); everything
/// the tool does is a result.
pub fn run_process(mut spec: ProcessSpec, started: &dyn Fn()) -> io::Result<ProcessResult> {
    if let Some(cg) = &spec.cgroup {
        cg.set_pids_limit(spec.pids_limit)?;
        // Isolated, the spawn sets it once the run's process is in its groups (see `spawn`).
        if spec.isolation.is_none() {
            cg.set_memory_limit(spec.memory_limit_bytes)?;
        }
    }
    let start = Instant::now();
    let tree = start_tree(&mut spec);
    started();
    let (pid, stdout, stderr, status) = match tree {
        Ok(started) => started,
        Err(e) => {
            // Nothing of the run is left: whatever started is killed, the groups removed.
            if let Some(cg) = &spec.cgroup {
                cg.kill_all(Duration::from_secs(10));
                // The run's process used more than the run's memory limit before its tool
                // started (a limit of a few hundred KB): the run hit its limit, as when the
                // limit was in place and the kernel killed it.
                if e.kind() == io::ErrorKind::OutOfMemory {
                    return Ok(over_memory_at_start(&spec, cg, start));
                }
                cg.remove();
            }
            return Err(e);
        }
    };
    // The tool's output is read by this thread while it supervises the run (no reader
    // threads: on a short run, making and ending two threads cost more than the run itself).
    let mut output = Output::new(stdout, stderr, spec.capture_bytes, spec.output_limit);
    let mut sampler = ProcSampler::new(pid);
    let mut ended = supervise(&spec, pid, start, &mut sampler, &mut output)?;
    // Isolated, mccbuild waited for the run's init: the tool's own status is the one it left.
    if let Some(status) = status.as_ref().and_then(StatusSlot::tool_status) {
        ended.status = status;
    }
    let wall_time_s = start.elapsed().as_secs_f64();
    let t = mccbuild_core::timing::phase("process: kill, wait, read");
    // Whatever the main process left behind (orphans) is killed; then the tree is empty.
    if spec.cgroup.is_none() {
        sampler.sample();
    }
    kill_tree(&spec.cgroup, pid, &sampler);
    let (cpu_time_s, peak_memory_bytes, oom) = used(&spec, &ended.usage, &mut sampler);
    // The tree is empty: every writer of the pipes is gone, what is left in them is read to
    // their end.
    let ((stdout_capture, parsed), (stderr_capture, _)) = output.finish();
    drop(t);
    Ok(ProcessResult {
        measurement: Measurement {
            termination: ended.termination(oom, spec.cgroup.is_none()),
            cpu_time_s,
            wall_time_s,
            peak_memory_bytes,
        },
        stdout: stdout_capture,
        stderr: stderr_capture,
        parsed,
        cancelled: ended.cancelled,
    })
}

/// The result of a run whose process used more than its memory limit before its tool started
/// (see `run_process`): `memory_limit`, with what its groups measured; the groups are removed.
fn over_memory_at_start(spec: &ProcessSpec, cg: &RunCgroup, start: Instant) -> ProcessResult {
    let result = ProcessResult {
        measurement: Measurement {
            termination: Termination::MemoryLimit,
            cpu_time_s: cg.cpu_time_s().unwrap_or(0.0),
            wall_time_s: start.elapsed().as_secs_f64(),
            peak_memory_bytes: cg.peak_memory().unwrap_or(spec.memory_limit_bytes),
        },
        stdout: CapturedOutput::default(),
        stderr: CapturedOutput::default(),
        parsed: ParsedOutput::default(),
        cancelled: false,
    };
    cg.remove();
    result
}

/// The tree's CPU time and peak memory (its cgroups', else sampled from /proc and rusage), and
/// whether the OOM killer hit it; the cgroups are removed.
fn used(spec: &ProcessSpec, usage: &libc::rusage, sampler: &mut ProcSampler) -> (f64, u64, bool) {
    let rusage_cpu = timeval_s(usage.ru_utime) + timeval_s(usage.ru_stime);
    match &spec.cgroup {
        Some(cg) => {
            let oom = cg.oom_killed();
            let cpu = cg.cpu_time_s().unwrap_or(rusage_cpu);
            let peak = cg.peak_memory().unwrap_or(usage.ru_maxrss as u64 * 1024);
            cg.remove();
            (cpu, peak, oom)
        }
        None => {
            let (cpu, _) = sampler.sample();
            (
                cpu.max(rusage_cpu),
                sampler.peak_rss.max(usage.ru_maxrss as u64 * 1024),
                false,
            )
        }
    }
}

fn timeval_s(t: libc::timeval) -> f64 {
    t.tv_sec as f64 + t.tv_usec as f64 / 1e6
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A process of `script` (sh) under the fallback (no cgroups, no root needed), with these
    /// output caps.
    fn run_sh(script: &str, output_limit: u64, capture_bytes: usize) -> ProcessResult {
        run_process(
            ProcessSpec {
                program: PathBuf::from("/bin/sh"),
                args: vec!["-c".into(), script.into()],
                cwd: std::env::temp_dir(),
                env: vec![("PATH".into(), "/usr/bin:/bin".into())],
                cpu_limit_s: 60.0,
                memory_limit_bytes: 1 << 30,
                wall_limit: Duration::from_secs(60),
                output_limit,
                capture_bytes,
                cores: Vec::new(),
                pids_limit: 4096,
                cgroup: None,
                isolation: None,
                user: None,
                cancel: Arc::new(AtomicBool::new(false)),
            },
            &|| {},
        )
        .unwrap()
    }

    /// Both streams are read by the supervising thread as they fill: a tool writing more than
    /// a pipe holds to stderr, then to stdout, then to both, is never blocked, every byte is
    /// counted, the head and tail of each are kept and stdout's answers are parsed.
    #[test]
    fn both_streams_are_read_as_they_come_and_kept_head_and_tail() {
        let r = run_sh(
            "head -c 300000 /dev/zero | tr '\\0' e >&2; \
             echo 'STATE_SPACE STATES 42 TECHNIQUES X'; \
             head -c 300000 /dev/zero | tr '\\0' o; \
             head -c 200000 /dev/zero | tr '\\0' E >&2; echo; echo last line",
            256 << 20,
            1024,
        );
        assert_eq!(r.measurement.termination, Termination::Exit { code: 0 });
        assert_eq!(r.stderr.bytes, 500_000);
        assert!(r.stderr.truncated);
        assert!(r.stderr.text.starts_with(&"e".repeat(512)));
        assert!(r.stderr.text.ends_with(&"E".repeat(512)));
        assert_eq!(r.stdout.bytes, 35 + 300_000 + 1 + 10);
        assert!(r.stdout.text.starts_with("STATE_SPACE STATES 42"));
        assert!(r.stdout.text.ends_with("last line\n"));
        assert!(!r.parsed.lines.is_empty(), "the answer is parsed");
    }

    /// Past the output limit (both streams together) the tree is killed at once and nothing
    /// more is kept, what came before is.
    #[test]
    fn output_past_the_limit_kills_the_tree() {
        let r = run_sh(
            "echo first; while :; do head -c 65536 /dev/zero; head -c 65536 /dev/zero >&2; done",
            1 << 20,
            1024,
        );
        assert_eq!(r.measurement.termination, Termination::OutputLimit);
        assert!(r.stdout.bytes + r.stderr.bytes > 1 << 20);
        assert!(
            r.stdout.text.starts_with("first\n"),
            "{:?}",
            &r.stdout.text[..20]
        );
        assert!(r.measurement.wall_time_s < 30.0);
    }
}
