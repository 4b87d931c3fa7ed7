//! Executing runs: the I/O edge of mccbuild.
//!
//! A [`RunExecutor`] runs one run and measures it (locally in a cgroup sandbox, or in a QEMU
//! virtual machine); the [`pool`] runs many on dedicated cores; [`setup`] prepares tools once per
//! identity; [`slurm`] hands runs to a Slurm cluster, whose steps run each in the local sandbox.
//! Executors never touch the store: their results come back as [`Execution`]s and the caller
//! records them.

#![warn(clippy::undocumented_unsafe_blocks, unsafe_op_in_unsafe_fn)]

pub mod bin_view;
pub mod cgroup;
pub mod forecast;
pub mod isolation;
pub mod local;
pub mod owner;
pub mod pool;
pub mod process;
pub mod qemu;
pub mod run_user;
pub mod setup;
pub mod slurm;
mod spawn;

use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use mccbuild_core::RunKey;
use mccbuild_core::protocol::ParsedOutput;
use mccbuild_core::{CapturedOutput, Measurement};
use mccbuild_plan::manifest::InstanceSource;
use mccbuild_rules::edition::Limits;
use mccbuild_store::VmInfo;

/// Everything one run needs, self-contained (it can be sent to another thread or machine).
#[derive(Clone, Debug)]
pub struct RunSpec {
    pub key: RunKey,
    /// The manifest's name of the tool.
    pub tool: String,
    /// BK_TOOL (the manifest's `bk_tool`, by default the name).
    pub bk_tool: String,
    pub tool_dir: PathBuf,
    pub entry: String,
    /// BK_BIN_PATH: the tool's setup products (or its folder when it has no setup).
    pub bin_path: PathBuf,
    /// E-5.3/E-5.4: cores the run gets for itself.
    pub cores: u32,
    /// BK_INPUT.
    pub instance: String,
    pub source: InstanceSource,
    /// BK_EXAMINATION.
    pub examination: String,
    pub limits: Limits,
    /// Instance files the run must not see (rule M-9).
    pub hidden: Vec<String>,
    /// Who the run executes as (`user` of the tool: `mcc` by default).
    pub user: mccbuild_plan::manifest::RunUser,
}

/// What a run produced and how it was measured.
#[derive(Clone, Debug)]
pub struct Execution {
    pub measurement: Measurement,
    /// How CPU time and memory were measured (e.g. `cgroup-v1`, `rusage+proc`).
    pub method: String,
    pub cores: Vec<u32>,
    pub host: String,
    pub started_at: String,
    pub finished_at: String,
    pub stdout: CapturedOutput,
    pub stderr: CapturedOutput,
    pub parsed: ParsedOutput,
    /// Runs made in a virtual machine: how (accelerator, QEMU's own CPU time...).
    pub vm: Option<VmInfo>,
    /// The machine that ran it ([`this_machine`]; for a VM, the host running it).
    pub machine: Option<mccbuild_store::Machine>,
}

/// An infrastructure failure: the run could not be carried out (not the tool's fault). It is
/// reported and never stored; the run stays to be done.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InfraError(pub String);

/// Runs one run.
pub trait RunExecutor: Send + Sync {
    /// What of this executor can change a run's result (part of every run key).
    fn key_ingredients(&self) -> Vec<(String, String)>;

    /// Runs `spec` on `cores`. `Ok(None)` when `cancel` stopped it.
    fn execute(
        &self,
        spec: &RunSpec,
        cores: &[u32],
        cancel: &Arc<AtomicBool>,
    ) -> Result<Option<Execution>, InfraError>;

    /// Starts reclaiming what mccbuild processes that died left on this machine (their runs'
    /// processes, cgroups and working folders), once per executor; commands that execute runs
    /// and `watch` call it, commands that only read the store never do. Nothing by default.
    fn reclaim(&self) {}
}

/// This machine's CPU model, CPUs, memory and kernel, for records (read once per process).
pub fn this_machine() -> mccbuild_store::Machine {
    static MACHINE: std::sync::OnceLock<mccbuild_store::Machine> = std::sync::OnceLock::new();
    MACHINE
        .get_or_init(|| {
            let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
            mccbuild_store::Machine::from_proc(
                &read("/proc/cpuinfo"),
                &read("/proc/meminfo"),
                &read("/proc/sys/kernel/osrelease"),
            )
        })
        .clone()
}

/// This machine's host name.
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

/// Now, in RFC 3339.
pub fn now_rfc3339() -> String {
    humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string()
}

/// A small text file of the kernel's (/proc, a cgroup's files), read with as few system calls
/// as can be: an open and reads of 4 KB to the end. (The standard library's `read_to_string`
/// asks for the size first, which such files do not know, then reads from 32 bytes up: 5 to 10
/// system calls for /proc/self/mountinfo, several of these files per run.)
pub(crate) fn read_text(path: impl AsRef<Path>) -> io::Result<String> {
    let mut file = std::fs::File::open(path)?;
    let mut bytes = Vec::with_capacity(4096);
    let mut chunk = [0u8; 4096];
    loop {
        match file.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => bytes.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    String::from_utf8(bytes).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

#[cfg(test)]
mod tests {
    /// `read_text` reads what the standard library reads: a /proc file, and a file of several
    /// of its 4 KB reads.
    #[test]
    fn read_text_reads_whole_files() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big");
        let text: String = (0..3000).map(|i| format!("line {i}\n")).collect();
        std::fs::write(&big, &text).unwrap();
        assert_eq!(super::read_text(&big).unwrap(), text);
        assert_eq!(
            super::read_text("/proc/self/cgroup").unwrap(),
            std::fs::read_to_string("/proc/self/cgroup").unwrap()
        );
        assert!(super::read_text(dir.path().join("none")).is_err());
    }
}
