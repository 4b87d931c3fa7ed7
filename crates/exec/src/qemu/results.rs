//! What comes out of the guest: the runner's status and the tool's output on the output share,
//! the console, and how the VM ended, made into the run's execution.

use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Read, Seek};
use std::path::Path;

use mccbuild_core::{CapturedOutput, Measurement, Termination};
use mccbuild_plan::manifest::GuestKind;
use mccbuild_store::VmInfo;

use super::vm::VmEnd;
use super::{MEASUREMENT, QemuExecutor, RunFiles};
use crate::process::capture_all;
use crate::{Execution, InfraError, RunSpec, host_name, now_rfc3339};

/// What the guest's runner wrote in `status`.
#[derive(Debug, Default)]
struct GuestStatus {
    fields: BTreeMap<String, String>,
}

impl GuestStatus {
    fn read(path: &Path) -> Option<GuestStatus> {
        let text = fs::read_to_string(path).ok()?;
        let fields = text
            .lines()
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Some(GuestStatus { fields })
    }

    fn get(&self, name: &str) -> &str {
        self.fields.get(name).map_or("", String::as_str)
    }

    fn number(&self, name: &str) -> u64 {
        self.get(name).trim().parse().unwrap_or(0)
    }

    /// How the tool ended, as the guest's runner saw it.
    fn termination(&self) -> Termination {
        match self.get("reason") {
            "cpu_limit" => Termination::CpuLimit,
            "wall_limit" => Termination::WallLimit,
            "memory_limit" => Termination::MemoryLimit,
            "signal" => Termination::Signal {
                signal: self.number("code") as i32,
            },
            _ => Termination::Exit {
                code: self.number("code") as i32,
            },
        }
    }
}

impl QemuExecutor {
    /// The run's execution, from what the guest wrote (its status and the tool's output) and
    /// how the VM ended; a VM that ended without a result is an infrastructure failure.
    pub(super) fn execution(
        &self,
        spec: &RunSpec,
        cores: &[u32],
        files: &RunFiles,
        end: VmEnd,
        started_at: String,
    ) -> Result<Execution, InfraError> {
        let vm_wall = end.wall.as_secs_f64();
        let qemu_cpu = timeval_s(end.usage.ru_utime) + timeval_s(end.usage.ru_stime);
        let console_text = tail_of(&files.console, 4096);
        let panicked = console_text.contains("Kernel panic");
        let status = GuestStatus::read(&files.out.join("status"));
        let (termination, note) = match (&status, end.killed) {
            (Some(s), _) if s.get("reason") == "infra" => {
                return Err(InfraError(format!(
                    "the guest could not prepare the run: {}",
                    s.get("message")
                )));
            }
            (Some(s), None) => (s.termination(), String::new()),
            (_, Some((reason, note))) => (reason, note),
            (None, None) if panicked => (
                Termination::GuestPanic,
                "the guest's kernel panicked before the tool's end was seen".to_string(),
            ),
            (None, None) => {
                return Err(InfraError(format!(
                    "the VM of tool {} stopped without a result ({}); qemu said: {}; its console ends with:\n{}",
                    spec.tool,
                    describe_exit(end.exit),
                    tail_of(&files.dir.join("qemu.log"), 1000).trim(),
                    console_text.trim()
                )));
            }
        };
        let (stdout, parsed) = read_output(&files.out.join("stdout"), true, self.capture_bytes);
        let (stderr, _) = read_output(&files.out.join("stderr"), false, self.capture_bytes);
        let measured = status.as_ref().filter(|s| s.get("reason") != "infra");
        let normal = measured.is_some() && note.is_empty();
        Ok(Execution {
            measurement: Measurement {
                termination,
                cpu_time_s: measured.map_or(0.0, |s| s.number("cpu_usec") as f64 / 1e6),
                // The host's clock (the guest's may run at another rate).
                wall_time_s: measured
                    .and(end.tool_wall)
                    .map_or(vm_wall, |w| w.as_secs_f64()),
                peak_memory_bytes: measured.map_or(0, |s| s.number("peak_bytes")),
            },
            method: if measured.is_some() {
                MEASUREMENT.to_string()
            } else {
                "none: the VM ended before the guest measured the tool".to_string()
            },
            cores: cores.to_vec(),
            host: host_name(),
            started_at,
            finished_at: now_rfc3339(),
            stdout,
            stderr,
            parsed,
            vm: Some(VmInfo {
                accel: self.accel.to_string(),
                guest: match self.config.guest {
                    GuestKind::Kernel => "kernel".into(),
                    GuestKind::Image => "image".into(),
                },
                cpu_model: self.config.cpu_model.clone(),
                memory_mb: spec.limits.memory_mb,
                vcpus: spec.cores,
                qemu_cpu_time_s: qemu_cpu,
                vm_wall_time_s: vm_wall,
                note,
                console: if normal { String::new() } else { console_text },
            }),
            machine: Some(crate::this_machine()),
        })
    }
}

fn read_output(
    path: &Path,
    is_stdout: bool,
    capture: usize,
) -> (CapturedOutput, mccbuild_core::protocol::ParsedOutput) {
    match fs::File::open(path) {
        Ok(file) => capture_all(file, is_stdout, capture),
        Err(_) => Default::default(),
    }
}

/// The last `bytes` of a file, as text.
pub(super) fn tail_of(path: &Path, bytes: u64) -> String {
    let Ok(mut f) = fs::File::open(path) else {
        return String::new();
    };
    let len = f.metadata().map_or(0, |m| m.len());
    let _ = f.seek(io::SeekFrom::Start(len.saturating_sub(bytes)));
    let mut buf = Vec::new();
    let _ = f.read_to_end(&mut buf);
    String::from_utf8_lossy(&buf).into_owned()
}

fn describe_exit(status: libc::c_int) -> String {
    if libc::WIFSIGNALED(status) {
        format!("qemu killed by signal {}", libc::WTERMSIG(status))
    } else {
        format!("qemu exit status {}", libc::WEXITSTATUS(status))
    }
}

fn timeval_s(t: libc::timeval) -> f64 {
    t.tv_sec as f64 + t.tv_usec as f64 / 1e6
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guest_status_is_read_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("status");
        fs::write(
            &path,
            "reason=cpu_limit\ncode=137\ncpu_usec=2010000\npeak_bytes=1048576\n",
        )
        .unwrap();
        let s = GuestStatus::read(&path).unwrap();
        assert_eq!(s.get("reason"), "cpu_limit");
        assert_eq!(s.number("cpu_usec"), 2_010_000);
        assert_eq!(s.number("missing"), 0);
    }
}
