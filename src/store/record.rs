//! The run record: everything a run produced and how it was measured.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::answers::{Answer, Verdict};
use crate::key::RunKey;
use crate::rules::edition::Limits;

/// Bump when the layout of records changes; readers refuse other versions clearly.
pub const RECORD_FORMAT: u32 = 1;

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum Termination {
    /// The tool's main process exited by itself.
    Exit { code: i32 },
    /// The tool's main process was killed by a signal mccbuild did not send.
    Signal { signal: i32 },
    /// CPU-time limit reached (E-5.1): the run was killed.
    CpuLimit,
    /// Memory limit reached: the run was killed (or the kernel's OOM killer hit it).
    MemoryLimit,
    /// Wall-clock safety limit reached (a tool sleeping or blocked).
    WallLimit,
    /// The tool printed more than the output limit.
    OutputLimit,
    /// The run's virtual machine crashed (its kernel panicked) before the tool's end was seen.
    GuestPanic,
}

impl Termination {
    pub fn is_limit(&self) -> bool {
        matches!(
            self,
            Termination::CpuLimit
                | Termination::MemoryLimit
                | Termination::WallLimit
                | Termination::OutputLimit
        )
    }

    /// Short upper-case label for tables (`TIMEOUT`, `MEMORY`, ...).
    pub fn label(&self) -> String {
        match self {
            Termination::Exit { code: 0 } => "OK".into(),
            Termination::Exit { code } => format!("EXIT {code}"),
            Termination::Signal { signal } => format!("SIGNAL {signal}"),
            Termination::CpuLimit => "TIMEOUT".into(),
            Termination::MemoryLimit => "MEMORY".into(),
            Termination::WallLimit => "WALL TIMEOUT".into(),
            Termination::OutputLimit => "OUTPUT LIMIT".into(),
            Termination::GuestPanic => "GUEST PANIC".into(),
        }
    }
}

/// A capped copy of one of the tool's output streams.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CapturedOutput {
    /// The first and last bytes (lossy UTF-8), with a marker where the middle was dropped.
    pub text: String,
    /// How many bytes the tool wrote in all.
    pub bytes: u64,
    /// Whether `text` is not the whole output.
    pub truncated: bool,
}

/// One run's record in the store.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    pub format: u32,
    pub key: RunKey,
    pub mccbuild_version: String,
    pub tool: String,
    pub instance: String,
    pub examination: String,
    /// The executor's key ingredients (kind, sandbox, ...).
    pub executor: BTreeMap<String, String>,
    pub limits: Limits,
    /// RFC 3339.
    pub started_at: String,
    pub finished_at: String,
    pub termination: Termination,
    pub cpu_time_s: f64,
    pub wall_time_s: f64,
    pub peak_memory_bytes: u64,
    /// How CPU time and memory were measured (e.g. `cgroup-v1`, `rusage+proc`).
    pub measurement: String,
    /// The CPU cores the run was pinned to.
    pub cores: Vec<u32>,
    pub host: String,
    pub verdict: Verdict,
    /// The answers, in the order of the instance's value ids.
    pub answers: Vec<Answer>,
    /// Problems found in the output (unknown ids, conflicting answers, malformed lines).
    pub diagnostics: Vec<String>,
    pub stdout: CapturedOutput,
    pub stderr: CapturedOutput,
    /// Runs made in a virtual machine (QEMU executor): how. Absent in other records (and in
    /// records written before it existed), so format 1 stores still load.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vm: Option<VmInfo>,
    /// Where a Slurm step ran the run (absent for other executors; records written before it
    /// existed load without it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slurm: Option<SlurmPlacement>,
}

/// How a run's virtual machine was run and what it cost (the tool's own CPU time and peak
/// memory, measured inside the guest, are the record's `cpu_time_s` and `peak_memory_bytes`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VmInfo {
    /// `kvm` or `tcg`.
    pub accel: String,
    /// `kernel` or `image`.
    pub guest: String,
    pub cpu_model: String,
    pub memory_mb: u64,
    pub vcpus: u32,
    /// CPU time of the QEMU process itself (all its threads: emulation, I/O), from wait4.
    pub qemu_cpu_time_s: f64,
    /// From starting QEMU to its exit (boot, the run, power-off).
    pub vm_wall_time_s: f64,
    /// What happened to the VM when it did not end by itself (killed at a limit, panicked).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub note: String,
    /// The end of the guest's console (kernel messages), when the run did not end normally.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub console: String,
}

/// The Slurm job and step that ran a run, and the node they ran on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SlurmPlacement {
    /// SLURM_JOB_ID.
    pub job: String,
    /// SLURM_STEP_ID.
    pub step: String,
    /// SLURMD_NODENAME: the node (also the record's `host`).
    pub node: String,
}

impl SlurmPlacement {
    /// The placement of the current process, when it is a Slurm job step.
    pub fn from_env() -> Option<SlurmPlacement> {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        Some(SlurmPlacement {
            job: var("SLURM_JOB_ID")?,
            step: var("SLURM_STEP_ID").unwrap_or_default(),
            node: var("SLURMD_NODENAME")?,
        })
    }
}

impl RunRecord {
    /// A one-word outcome for tables: the verdict, or why there is none.
    pub fn outcome_label(&self) -> String {
        outcome_label(self.verdict, self.termination, self.answers.len())
    }
}

pub fn outcome_label(verdict: Verdict, termination: Termination, answers: usize) -> String {
    match verdict {
        Verdict::DoNotCompete => "DNC".into(),
        Verdict::Answered if termination.is_limit() => {
            format!("{answers} answers, then {}", termination.label())
        }
        Verdict::Answered => format!("{answers} answers"),
        Verdict::CannotCompute => match termination {
            Termination::Exit { code: 0 } => "CC".into(),
            Termination::Exit { .. } | Termination::Signal { .. } => {
                format!("CC ({})", termination.label())
            }
            limit => limit.label(),
        },
    }
}
