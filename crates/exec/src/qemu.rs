//! The QEMU executor: each run in a fresh virtual machine, as the MCC does (rules E-5.1 to E-5.6).
//!
//! A run boots a VM with the contest's CPU model, the run's memory and the tool's cores, pinned
//! to the run's host cores; the instance is on a read-only disk; the run's shared folder
//! (`mccout`, 9p) carries the job in (`job.env`, the runner) and the results out (`stdout`,
//! `stderr`, `status`). Inside, `qemu_runner.sh` runs the tool under BenchKit's protocol, enforces
//! the CPU-time limit and measures the tool's tree with a cgroup v2 of the guest; outside, a
//! wall-clock watchdog kills the VM. Two guests (docs/execution.md, "QEMU executor"):
//! - `kernel`: a kernel + initramfs booted directly (scripts/guest-kernel), the tool's folder,
//!   its setup products and the host's /usr shared read-only;
//! - `image`: a BenchKit-style disk image (scripts/guest-image) booted through its BIOS from a
//!   copy-on-write snapshot, driven over ssh.
//!
//! Whatever happens, the QEMU process is killed and reaped before `execute` returns.
//!
//! The files: this one makes the executor and runs one run; `machine` decides the accelerator
//! and the machine, `job` prepares what goes into the guest, `command_line` makes QEMU's, `vm`
//! starts and watches QEMU, `ssh` drives the image guest, `results` reads what came out, `tsc`
//! measures the host's TSC rate for the TCG guest's clock.

mod command_line;
mod job;
mod machine;
mod results;
mod ssh;
mod tsc;
mod vm;

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::{Execution, InfraError, RunExecutor, RunSpec, now_rfc3339};
use mccbuild_core::hex;
use mccbuild_plan::digest_cache::DigestCache;
use mccbuild_plan::instance::ArchiveLimits;
use mccbuild_plan::manifest::{Contest, GuestKind, QemuConfig};

use self::machine::{decide_accel, find_qboot, machine_ingredients};
use self::ssh::{drive_over_ssh, which_ssh};

/// The in-guest runner, the same for both guests (its digest is part of every VM run's key).
pub const RUNNER: &str = include_str!("qemu_runner.sh");

/// How runs' CPU time and memory are measured (the record's `measurement`).
pub const MEASUREMENT: &str = "guest-cgroup-v2";

pub struct QemuExecutor {
    config: QemuConfig,
    /// The QEMU binary, found on the PATH.
    binary: PathBuf,
    accel: &'static str,
    /// The kernel guest's firmware: qboot where QEMU ships it (else QEMU's default, SeaBIOS).
    firmware: Option<PathBuf>,
    /// Under TCG, the host's TSC rate in kHz for the kernel guest's `tsc_early_khz` (empty:
    /// not given, the guest's kernel calibrates it).
    tsc_khz: String,
    ingredients: Vec<(String, String)>,
    work_root: PathBuf,
    capture_bytes: usize,
    output_limit: u64,
    archive_limits: ArchiveLimits,
    counter: AtomicU64,
}

/// Why the QEMU executor cannot run on this machine.
#[derive(Debug, thiserror::Error)]
pub enum QemuError {
    #[error("{what} `{program}`, which is not on the PATH: {fix}")]
    MissingProgram {
        what: &'static str,
        program: String,
        fix: &'static str,
    },
    #[error("[executor.qemu] {what}: cannot read {}: {source}; {fix}", path.display())]
    GuestFile {
        what: String,
        path: PathBuf,
        source: std::io::Error,
        fix: &'static str,
    },
    #[error(
        "[executor.qemu] accel = \"kvm\" but /dev/kvm cannot be opened: use accel = \"auto\" or \"tcg\", or enable KVM on this host"
    )]
    NoKvm,
}

impl QemuExecutor {
    /// Finds QEMU, digests the guest's files (they are part of the run key) and decides the
    /// accelerator (a probe boot when `accel = "auto"` and /dev/kvm can be opened). Errors name
    /// the file or program and what to do.
    pub fn new(contest: &Contest, cache: &mut DigestCache) -> Result<QemuExecutor, QemuError> {
        let config = contest.executor.qemu.clone();
        let binary = find_program(&config.binary).ok_or_else(|| QemuError::MissingProgram {
            what: "[executor] kind = \"qemu\" needs",
            program: config.binary.clone(),
            fix: "on Debian 12, add bookworm-backports and `apt-get install -t bookworm-backports qemu-system-x86` (see .ci/run)",
        })?;
        let digest = |path: &Path, cache: &mut DigestCache, what: &str, fix: &'static str| {
            cache
                .file_digest(path)
                .map(|d| hex(&d))
                .map_err(|source| QemuError::GuestFile {
                    what: what.to_string(),
                    path: path.to_path_buf(),
                    source,
                    fix,
                })
        };
        let mut ingredients: Vec<(String, String)> = vec![
            ("kind".into(), "qemu".into()),
            (
                "guest".into(),
                match config.guest {
                    GuestKind::Kernel => "kernel",
                    GuestKind::Image => "image",
                }
                .into(),
            ),
            ("cpu_model".into(), config.cpu_model.clone()),
            // The VM's memory is the run's memory limit (in the task part of the key).
            ("vm_memory".into(), "limit".into()),
            (
                "runner".into(),
                hex(blake3::hash(RUNNER.as_bytes()).as_bytes()),
            ),
        ];
        match config.guest {
            GuestKind::Kernel => {
                let fix = "build it with scripts/guest-kernel";
                ingredients.push((
                    "kernel".into(),
                    digest(&config.kernel, cache, "kernel", fix)?,
                ));
                ingredients.push((
                    "initrd".into(),
                    digest(&config.initrd, cache, "initrd", fix)?,
                ));
            }
            GuestKind::Image => {
                for (tool, image) in &config.images {
                    let d = digest(
                        image,
                        cache,
                        &format!("the image of tool `{tool}`"),
                        "build one with scripts/guest-image",
                    )?;
                    ingredients.push((format!("tool:{tool}:image"), d));
                }
                if which_ssh().is_none() {
                    return Err(QemuError::MissingProgram {
                        what: "guest = \"image\" drives the VMs over",
                        program: "ssh".into(),
                        fix: "apt-get install openssh-client",
                    });
                }
            }
        }
        let accel = decide_accel(&config, &binary)?;
        // TCG and KVM can end a run differently (under TCG a tool does 20-30x less work per
        // CPU second, so it reaches its CPU limit sooner): they never share a key
        // (docs/cache.md).
        ingredients.push(("accel".into(), accel.into()));
        let firmware = match config.guest {
            GuestKind::Kernel => find_qboot(&binary),
            GuestKind::Image => None,
        };
        ingredients.extend(machine_ingredients(
            config.guest,
            accel,
            firmware.is_some(),
            &config.kernel_args,
        ));
        let tsc_khz = match (config.guest, accel) {
            (GuestKind::Kernel, "tcg") => tsc::host_tsc_khz().map(|k| k.to_string()),
            _ => None,
        }
        .unwrap_or_default();
        Ok(QemuExecutor {
            config,
            binary,
            accel,
            firmware,
            tsc_khz,
            ingredients,
            work_root: std::env::temp_dir(),
            capture_bytes: 64 * 1024,
            output_limit: 256 << 20,
            archive_limits: ArchiveLimits::default(),
            counter: AtomicU64::new(0),
        })
    }

    /// `kvm` or `tcg`.
    pub fn accel(&self) -> &'static str {
        self.accel
    }
}

impl RunExecutor for QemuExecutor {
    fn key_ingredients(&self) -> Vec<(String, String)> {
        self.ingredients.clone()
    }

    fn execute(
        &self,
        spec: &RunSpec,
        cores: &[u32],
        cancel: &Arc<AtomicBool>,
    ) -> Result<Option<Execution>, InfraError> {
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        let dir = self.work_root.join(format!(
            "mccbuild-vm-{}-{}-{n}",
            &spec.key.hex()[..12],
            std::process::id()
        ));
        let _ = fs::remove_dir_all(&dir);
        let result = self.execute_in(spec, cores, cancel, &dir);
        let _ = fs::remove_dir_all(&dir);
        result
    }
}

/// Where a run's VM keeps its files: the host side of its shares and disks.
struct RunFiles {
    dir: PathBuf,
    /// The share the guest writes the tool's output and status into.
    out: PathBuf,
    /// The instance's read-only disk.
    disk: PathBuf,
    console: PathBuf,
}

impl QemuExecutor {
    fn execute_in(
        &self,
        spec: &RunSpec,
        cores: &[u32],
        cancel: &Arc<AtomicBool>,
        dir: &Path,
    ) -> Result<Option<Execution>, InfraError> {
        let files = self.prepare(spec, dir)?;
        let image = self.image_of(spec)?;
        self.write_job(spec, &files.out)?;
        let (args, ssh_port) = self.qemu_args(spec, &files, image)?;
        let started_at = now_rfc3339();
        let start = Instant::now();
        let vm = self.start_vm(&args, dir, cores)?;
        // Image kind: ssh in once the guest is up, start the runner.
        let stop = Arc::new(AtomicBool::new(false));
        let boot_failed = Arc::new(AtomicBool::new(false));
        let driver = ssh_port.map(|port| {
            let key = self.ssh_key(image.expect("image kind"));
            let (stop, boot_failed) = (stop.clone(), boot_failed.clone());
            let boot_deadline = start + Duration::from_secs(self.config.boot_timeout_s);
            let log = dir.join("ssh.log");
            std::thread::spawn(move || {
                drive_over_ssh(port, &key, boot_deadline, &stop, &boot_failed, &log)
            })
        });
        let end = self.supervise(vm, spec, &files, start, cancel, &boot_failed);
        stop.store(true, Ordering::Relaxed);
        if let Some(driver) = driver {
            let _ = driver.join();
        }
        if end.cancelled {
            return Ok(None);
        }
        self.execution(spec, cores, &files, end, started_at)
            .map(Some)
    }
}

/// A program on the PATH (or in /usr/sbin, /sbin), or a path given as is.
fn find_program(name: &str) -> Option<PathBuf> {
    if name.contains('/') {
        return Path::new(name).is_file().then(|| PathBuf::from(name));
    }
    let path = std::env::var("PATH").unwrap_or_default();
    path.split(':')
        .chain(["/usr/sbin", "/sbin"])
        .map(|d| Path::new(d).join(name))
        .find(|p| p.is_file())
}
