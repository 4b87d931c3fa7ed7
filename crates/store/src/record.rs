//! The run record: everything a run produced and how it was measured.

use std::collections::BTreeMap;

use mccbuild_core::protocol::Answer;
use mccbuild_core::{CapturedOutput, Measurement, Outcome, Response, RunKey};
use mccbuild_rules::edition::Limits;
use serde::{Deserialize, Serialize};

/// Bump when the layout of records changes; readers refuse other versions clearly. 2: the file
/// ends with the record's content digest (`crate::encode_record`).
pub const RECORD_FORMAT: u32 = 2;

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
    /// How it ended, its CPU time, wall time and peak memory (flat in the JSON).
    #[serde(flatten)]
    pub measurement: Measurement,
    /// How CPU time and memory were measured (e.g. `cgroup-v1`, `rusage+proc`).
    #[serde(rename = "measurement")]
    pub method: String,
    /// The CPU cores the run was pinned to.
    pub cores: Vec<u32>,
    pub host: String,
    /// What the output says as a whole (E-1.8); `verdict` in the JSON.
    #[serde(rename = "verdict")]
    pub response: Response,
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
    /// The machine that ran the run (for a QEMU run: the host running the VM; the guest is in
    /// `vm`). An observation, not part of the run's key. Absent in records written before it
    /// existed, and in imported ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<Machine>,
}

/// What a machine is, as the results site's setup block states it (read from the kernel once
/// per process: `/proc/cpuinfo`, `/proc/meminfo`, `/proc/sys/kernel/osrelease`).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Machine {
    /// `model name` of `/proc/cpuinfo` (empty where the kernel does not say).
    pub cpu_model: String,
    /// Logical CPUs the kernel lists.
    pub cpus: u32,
    /// MemTotal, in MB (MiB).
    pub memory_mb: u64,
    /// The kernel's release (`uname -r`).
    pub kernel: String,
}

impl Machine {
    /// The machine from the texts of `/proc/cpuinfo`, `/proc/meminfo` and the kernel's release.
    pub fn from_proc(cpuinfo: &str, meminfo: &str, osrelease: &str) -> Machine {
        let field = |line: &str, name: &str| {
            let (key, value) = line.split_once(':')?;
            (key.trim() == name).then(|| value.trim().to_string())
        };
        let cpu_model = cpuinfo
            .lines()
            .find_map(|l| field(l, "model name"))
            .unwrap_or_default();
        let cpus = cpuinfo
            .lines()
            .filter(|l| field(l, "processor").is_some())
            .count() as u32;
        let memory_mb = meminfo
            .lines()
            .find_map(|l| field(l, "MemTotal"))
            .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
            .map_or(0, |kb| kb / 1024);
        Machine {
            cpu_model,
            cpus,
            memory_mb,
            kernel: osrelease.trim().to_string(),
        }
    }
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
    /// What became of the run.
    pub fn outcome(&self) -> Outcome {
        Outcome::of(self.response, self.measurement.termination)
    }

    /// One line about the run (`16 answers`, `CC`, `TIMEOUT`...).
    pub fn describe(&self) -> String {
        Outcome::describe(
            self.response,
            self.measurement.termination,
            self.answers.len(),
        )
    }
}
