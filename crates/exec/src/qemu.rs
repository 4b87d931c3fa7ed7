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

use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Read, Seek};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::local::wall_limit;
use crate::process::capture_all;
use crate::{host_name, now_rfc3339, Execution, InfraError, RunExecutor, RunSpec};
use mccbuild_core::hex;
use mccbuild_core::{CapturedOutput, Measurement, Termination};
use mccbuild_plan::digest_cache::DigestCache;
use mccbuild_plan::instance::{materialize, ArchiveLimits};
use mccbuild_plan::manifest::{Accel, Contest, GuestKind, QemuConfig, RunUser};
use mccbuild_store::VmInfo;

/// The in-guest runner, the same for both guests (its digest is part of every VM run's key).
pub const RUNNER: &str = include_str!("qemu_runner.sh");

/// How runs' CPU time and memory are measured (the record's `measurement`).
pub const MEASUREMENT: &str = "guest-cgroup-v2";

/// Seconds a guest may keep running after its result is complete before it is killed.
const POWEROFF_GRACE: Duration = Duration::from_secs(15);

pub struct QemuExecutor {
    config: QemuConfig,
    /// The QEMU binary, found on the PATH.
    binary: PathBuf,
    accel: &'static str,
    /// The kernel guest's firmware: qboot where QEMU ships it (else QEMU's default, SeaBIOS).
    firmware: Option<PathBuf>,
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
    #[error("[executor.qemu] accel = \"kvm\" but /dev/kvm cannot be opened: use accel = \"auto\" or \"tcg\", or enable KVM on this host")]
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
        ingredients.extend(machine_ingredients(config.guest, accel, firmware.is_some()));
        Ok(QemuExecutor {
            config,
            binary,
            accel,
            firmware,
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

/// How a run's VM ended, as the host saw it.
struct VmEnd {
    /// QEMU's wait status and resource usage.
    exit: libc::c_int,
    usage: libc::rusage,
    /// From starting QEMU to its exit.
    wall: Duration,
    /// mccbuild killed the VM at a limit: how the run ended, and why in words.
    killed: Option<(Termination, String)>,
    cancelled: bool,
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

    /// The run's folder: the output share, the instance (without its hidden files) on a disk.
    fn prepare(&self, spec: &RunSpec, dir: &Path) -> Result<RunFiles, InfraError> {
        let out = dir.join("out");
        let input = dir.join("input");
        fs::create_dir_all(&out)
            .and_then(|_| fs::create_dir_all(&input))
            .map_err(|e| {
                InfraError(format!(
                    "cannot create the run's folder {}: {e}",
                    dir.display()
                ))
            })?;
        let hidden: Vec<&str> = spec.hidden.iter().map(String::as_str).collect();
        materialize(
            &spec.instance,
            &spec.source,
            &input.join(&spec.instance),
            &hidden,
            self.archive_limits,
        )
        .map_err(|e| InfraError(format!("cannot prepare instance {}: {e}", spec.instance)))?;
        let disk = dir.join("input.img");
        make_input_disk(&input, &disk)?;
        Ok(RunFiles {
            dir: dir.to_path_buf(),
            out,
            disk,
            console: dir.join("console.log"),
        })
    }

    /// The tool's disk image (image-kind guests).
    fn image_of(&self, spec: &RunSpec) -> Result<Option<&PathBuf>, InfraError> {
        if self.config.guest == GuestKind::Kernel {
            return Ok(None);
        }
        let image = self.config.images.get(&spec.tool).ok_or_else(|| {
            InfraError(format!(
                "tool {} has no image in [executor.qemu] (set `image` or `images.{}`)",
                spec.tool, spec.tool
            ))
        })?;
        if !image.is_file() {
            return Err(InfraError(format!(
                "the image of tool {} ({}) does not exist (any more): build it with scripts/guest-image, or fix [executor.qemu] images",
                spec.tool,
                image.display()
            )));
        }
        Ok(Some(image))
    }

    /// The job the guest's runner reads: BenchKit's variables and where things are in the guest.
    fn write_job(&self, spec: &RunSpec, out: &Path) -> Result<(), InfraError> {
        let separate_bin = spec.bin_path != spec.tool_dir;
        // Both guests run the tool as BenchKit does, as `mcc` (root where the manifest says
        // `user = "root"`); the kernel guest's BK_BIN_PATH, a read-only share, gets a writable
        // overlay in the guest (the image's is on its own disk, writable).
        let (input_dev, bin_path, bin_overlay, work) = match self.config.guest {
            GuestKind::Kernel => (
                "/dev/vda",
                if separate_bin {
                    "/home/mcc/BenchKit-bin/"
                } else {
                    "/home/mcc/BenchKit/"
                },
                "1",
                "/tmp/mccbuild-run",
            ),
            GuestKind::Image => (
                "/dev/vdb",
                "/home/mcc/BenchKit/bin/",
                "",
                "/home/mcc/mccbuild-run",
            ),
        };
        let user = match spec.user {
            RunUser::Mcc => "mcc",
            RunUser::Root => "",
        };
        let entry = format!("/home/mcc/BenchKit/{}", spec.entry);
        let job = [
            ("BK_INPUT", spec.instance.as_str()),
            ("BK_EXAMINATION", &spec.examination),
            ("BK_TOOL", &spec.bk_tool),
            ("BK_TIME_CONFINEMENT", &spec.limits.time_s.to_string()),
            ("BK_MEMORY_CONFINEMENT", &spec.limits.memory_mb.to_string()),
            ("MCC_TIME_LIMIT", spec.limits.time.name()),
            ("BK_BIN_PATH", bin_path),
            ("MCC_INPUT_DEV", input_dev),
            ("MCC_ENTRY", &entry),
            ("MCC_USER", user),
            ("MCC_BIN_OVERLAY", bin_overlay),
            ("MCC_WORK", work),
        ]
        .iter()
        .map(|(k, v)| format!("{k}={}\n", shell_quote(v)))
        .collect::<String>();
        fs::write(out.join("job.env"), job)
            .and_then(|_| fs::write(out.join("runner.sh"), RUNNER))
            .map_err(|e| InfraError(format!("cannot write the job into {}: {e}", out.display())))
    }

    /// QEMU's command line, and the host port forwarded to the guest's ssh (image kind).
    fn qemu_args(
        &self,
        spec: &RunSpec,
        files: &RunFiles,
        image: Option<&PathBuf>,
    ) -> Result<(Vec<String>, Option<u16>), InfraError> {
        let mut args: Vec<String> = vec![
            "-accel".into(),
            self.accel.into(),
            "-cpu".into(),
            self.config.cpu_model.clone(),
            "-m".into(),
            spec.limits.memory_mb.to_string(),
            "-smp".into(),
            spec.cores.to_string(),
            "-nodefaults".into(),
            "-no-user-config".into(),
            "-display".into(),
            "none".into(),
            "-no-reboot".into(),
            "-serial".into(),
            format!("file:{}", files.console.display()),
        ];
        let virtfs = |args: &mut Vec<String>, path: &Path, tag: &str, readonly: bool| {
            args.push("-virtfs".into());
            args.push(format!(
                "local,path={},mount_tag={tag},security_model=none{}",
                escape_option(path),
                if readonly { ",readonly=on" } else { "" }
            ));
        };
        let mut ssh_port = None;
        match image {
            None => {
                args.extend([
                    "-kernel".into(),
                    self.config.kernel.display().to_string(),
                    "-initrd".into(),
                    self.config.initrd.display().to_string(),
                    "-append".into(),
                    kernel_cmdline(self.accel),
                ]);
                if let Some(firmware) = &self.firmware {
                    args.push("-bios".into());
                    args.push(firmware.display().to_string());
                }
                args.push("-drive".into());
                args.push(format!(
                    "file={},format=raw,if=virtio,readonly=on",
                    escape_option(&files.disk)
                ));
                virtfs(&mut args, Path::new("/usr"), "mccusr", true);
                // Debian's alternatives (/usr/bin/awk -> /etc/alternatives/awk -> mawk): without
                // them such commands of the host's /usr do not resolve in the guest.
                if Path::new("/etc/alternatives").is_dir() {
                    virtfs(&mut args, Path::new("/etc/alternatives"), "mccalt", true);
                }
                virtfs(&mut args, &spec.tool_dir, "mcctool", true);
                if spec.bin_path != spec.tool_dir {
                    virtfs(&mut args, &spec.bin_path, "mccbin", true);
                }
            }
            Some(image) => {
                // The image through a copy-on-write snapshot (guest writes are discarded); the
                // instance read-only; the output share writable.
                args.push("-drive".into());
                args.push(format!(
                    "file={},format={},if=virtio,snapshot=on",
                    escape_option(image),
                    image_format(image)
                ));
                args.push("-drive".into());
                args.push(format!(
                    "file={},format=raw,if=virtio,readonly=on",
                    escape_option(&files.disk)
                ));
                let port = free_port()?;
                args.extend([
                    "-netdev".into(),
                    format!("user,id=net0,hostfwd=tcp:127.0.0.1:{port}-:22"),
                    "-device".into(),
                    "virtio-net-pci,netdev=net0".into(),
                ]);
                ssh_port = Some(port);
            }
        }
        virtfs(&mut args, &files.out, "mccout", false);
        Ok((args, ssh_port))
    }

    /// Starts QEMU on the run's cores, its output in `qemu.log`.
    fn start_vm(&self, args: &[String], dir: &Path, cores: &[u32]) -> Result<Vm, InfraError> {
        let qemu_log = fs::File::create(dir.join("qemu.log"))
            .map_err(|e| InfraError(format!("cannot create {}: {e}", dir.display())))?;
        let mut command = Command::new(&self.binary);
        command
            .args(args)
            .stdin(Stdio::null())
            .stdout(
                qemu_log
                    .try_clone()
                    .map_err(|e| InfraError(e.to_string()))?,
            )
            .stderr(qemu_log);
        pin_and_tie(&mut command, cores.to_vec());
        let child = command
            .spawn()
            .map_err(|e| InfraError(format!("cannot start {}: {e}", self.binary.display())))?;
        Ok(Vm::new(child))
    }

    /// Watches the VM until it exits, killing it at the wall-clock or output limit, when the
    /// guest never answered ssh, when cancelled, or when a complete result is not followed by
    /// the guest's power-off.
    fn supervise(
        &self,
        mut vm: Vm,
        spec: &RunSpec,
        files: &RunFiles,
        start: Instant,
        cancel: &AtomicBool,
        boot_failed: &AtomicBool,
    ) -> VmEnd {
        let deadline =
            wall_limit(spec.limits.time_s) + Duration::from_secs(self.config.boot_timeout_s);
        let status_path = files.out.join("status");
        let mut killed: Option<(Termination, String)> = None;
        let mut cancelled = false;
        let mut complete_since: Option<Instant> = None;
        let (exit, usage) = loop {
            if let Some(done) = vm.try_wait() {
                break done;
            }
            if killed.is_none() && !cancelled {
                let output =
                    file_len(&files.out.join("stdout")) + file_len(&files.out.join("stderr"));
                if cancel.load(Ordering::Relaxed) {
                    cancelled = true;
                    vm.kill();
                } else if start.elapsed() >= deadline {
                    killed = Some((
                        Termination::WallLimit,
                        format!(
                            "killed at the wall-clock limit ({} s: twice the CPU limit + 30 s + boot_timeout_s)",
                            deadline.as_secs()
                        ),
                    ));
                    vm.kill();
                } else if boot_failed.load(Ordering::Relaxed) {
                    killed = Some((
                        Termination::WallLimit,
                        format!(
                            "the guest did not answer ssh within boot_timeout_s = {} s",
                            self.config.boot_timeout_s
                        ),
                    ));
                    vm.kill();
                } else if output > self.output_limit {
                    killed = Some((
                        Termination::OutputLimit,
                        format!(
                            "killed: the tool printed more than {} bytes",
                            self.output_limit
                        ),
                    ));
                    vm.kill();
                } else if status_path.exists() {
                    // The result is complete; a guest that does not power off is stopped.
                    let since = *complete_since.get_or_insert_with(Instant::now);
                    if since.elapsed() > POWEROFF_GRACE {
                        vm.kill();
                    }
                }
            }
            std::thread::sleep(Duration::from_millis(
                if start.elapsed() < Duration::from_secs(2) {
                    20
                } else {
                    50
                },
            ));
        };
        VmEnd {
            exit,
            usage,
            wall: start.elapsed(),
            killed,
            cancelled,
        }
    }

    /// The run's execution, from what the guest wrote (its status and the tool's output) and
    /// how the VM ended; a VM that ended without a result is an infrastructure failure.
    fn execution(
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
                )))
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
                )))
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
                wall_time_s: measured
                    .map(|s| s.number("wall_cs") as f64 / 100.0)
                    .unwrap_or(vm_wall),
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
        })
    }

    fn ssh_key(&self, image: &Path) -> PathBuf {
        self.config
            .ssh_key
            .clone()
            .unwrap_or_else(|| image.with_extension("key"))
    }
}

/// The QEMU process: killed and reaped when dropped, whatever happened.
struct Vm {
    child: Option<Child>,
}

impl Vm {
    fn new(child: Child) -> Vm {
        Vm { child: Some(child) }
    }

    /// Its exit status and resource usage once it has ended (and is reaped).
    fn try_wait(&mut self) -> Option<(libc::c_int, libc::rusage)> {
        let pid = self.child.as_ref()?.id() as i32;
        let mut status: libc::c_int = 0;
        // SAFETY: rusage is plain data, for which all zeroes is a valid value.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: wait4 on our own child, not yet reaped, with a status and a usage on the stack.
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if r == pid {
            // Reaped by wait4: forget the handle without waiting again.
            self.child = None;
            Some((status, usage))
        } else {
            None
        }
    }

    fn kill(&mut self) {
        if let Some(child) = &mut self.child {
            let _ = child.kill();
        }
    }
}

impl Drop for Vm {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The kernel guest's command line. Besides the console and `panic=-1` (a panic ends QEMU
/// through `-no-reboot`), it skips what costs boot time under emulation and changes nothing a
/// tool sees (docs/execution.md, "The kernel guest"): the crypto self-tests at boot
/// (`cryptomgr.notests`), the TSC watchdog (the guest's TSC is the host's: `tsc=reliable`) and
/// the IO-APIC timer check, probing of serial ports and a PS/2 mouse that are not there; under
/// TCG also the CPU vulnerability mitigations (`mitigations=off`): TCG does not speculate, so
/// they protect nothing, and PTI's page table switch on every system call flushes TCG's whole
/// TLB. It is part of the run key (`machine_ingredients`).
fn kernel_cmdline(accel: &str) -> String {
    let mut cmdline = String::from(
        "console=ttyS0 panic=-1 quiet loglevel=3 cryptomgr.notests tsc=reliable no_timer_check \
         8250.nr_uarts=1 i8042.noaux",
    );
    if accel == "tcg" {
        cmdline.push_str(" mitigations=off");
    }
    cmdline
}

/// The kernel guest's machine as run key ingredients: the machine type with its firmware and
/// the kernel's command line (what the guest's kernel is told can change what a tool sees).
fn machine_ingredients(guest: GuestKind, accel: &str, qboot: bool) -> Vec<(String, String)> {
    match guest {
        GuestKind::Kernel => vec![
            (
                "machine".into(),
                if qboot { "pc+qboot" } else { "pc" }.into(),
            ),
            ("kernel_cmdline".into(), kernel_cmdline(accel)),
        ],
        // The image guest boots its own bootloader through SeaBIOS on QEMU's default machine,
        // as before these ingredients existed (its keys stay).
        GuestKind::Image => Vec::new(),
    }
}

/// QEMU's qboot firmware (a minimal BIOS that boots `-kernel` only: under TCG ~0.4 s faster
/// than SeaBIOS), next to the QEMU binary's data or in Debian's /usr/share/qemu.
fn find_qboot(binary: &Path) -> Option<PathBuf> {
    let beside = binary
        .parent()
        .and_then(Path::parent)
        .map(|prefix| prefix.join("share/qemu/qboot.rom"));
    beside
        .into_iter()
        .chain([PathBuf::from("/usr/share/qemu/qboot.rom")])
        .find(|p| p.is_file())
}

/// Pins QEMU (and so its vCPU threads) to the run's cores, and ties its life to the thread that
/// started it: if mccbuild dies, the kernel kills the VM (no stray QEMU).
fn pin_and_tie(command: &mut Command, cores: Vec<u32>) {
    // SAFETY: between fork and exec, only async-signal-safe calls on data prepared before.
    unsafe {
        command.pre_exec(move || {
            if libc::setsid() < 0 {
                return Err(io::Error::last_os_error());
            }
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            crate::process::pin_to_cores(&cores)
        });
    }
}

/// The instance's read-only disk: a tar archive of `<instance>/` (padded to whole sectors),
/// which the guest's runner unpacks into the run's working directory, as BenchKit unpacks
/// `INPUTS/<instance>.tgz` on the MCC's VM. Written here, without a file system: the kernel
/// guest needs no file system driver for it (loading ext4 and its four helper modules and
/// mounting cost ~0.35 s of each run under TCG), and no mke2fs runs per run.
fn make_input_disk(input: &Path, disk: &Path) -> Result<(), InfraError> {
    let fail = |e: io::Error| {
        InfraError(format!(
            "cannot write the instance's disk {}: {e}",
            disk.display()
        ))
    };
    let file = fs::File::create(disk).map_err(fail)?;
    let mut archive = tar::Builder::new(io::BufWriter::new(file));
    // Links stay links, as the instance's folder holds them.
    archive.follow_symlinks(false);
    for entry in fs::read_dir(input).map_err(fail)? {
        let entry = entry.map_err(fail)?;
        let path = entry.path();
        if entry.file_type().map_err(fail)?.is_dir() {
            archive
                .append_dir_all(entry.file_name(), &path)
                .map_err(fail)?;
        } else {
            archive
                .append_path_with_name(&path, entry.file_name())
                .map_err(fail)?;
        }
    }
    // Two zero blocks end the archive: the guest's tar stops there.
    archive
        .into_inner()
        .map_err(fail)?
        .into_inner()
        .map_err(|e| fail(e.into_error()))?;
    Ok(())
}

/// Image kind: waits until the guest answers ssh (as root, with the image's key), then mounts
/// the run's share and starts the runner; powers the guest off at once afterwards (the VM is
/// thrown away). Stops when `stop` is raised (the VM ended or was killed).
fn drive_over_ssh(
    port: u16,
    key: &Path,
    boot_deadline: Instant,
    stop: &AtomicBool,
    boot_failed: &AtomicBool,
    log: &Path,
) {
    let ssh = |remote: &str| -> Command {
        let mut c = Command::new(which_ssh().unwrap_or_else(|| "ssh".into()));
        c.args([
            "-q",
            "-o",
            "BatchMode=yes",
            "-o",
            "StrictHostKeyChecking=no",
            "-o",
            "UserKnownHostsFile=/dev/null",
            "-o",
            "ConnectTimeout=5",
            "-o",
            "ServerAliveInterval=5",
            "-o",
            "ServerAliveCountMax=3",
            "-i",
        ])
        .arg(key)
        .args(["-p", &port.to_string(), "root@127.0.0.1", remote])
        .stdin(Stdio::null());
        if let Ok(f) = fs::OpenOptions::new().create(true).append(true).open(log) {
            if let Ok(g) = f.try_clone() {
                c.stdout(g);
            }
            c.stderr(f);
        }
        c
    };
    let run_until_stop = |mut command: Command| -> Option<bool> {
        let mut child = command.spawn().ok()?;
        loop {
            if let Ok(Some(status)) = child.try_wait() {
                return Some(status.success());
            }
            if stop.load(Ordering::Relaxed) {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    };
    loop {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        if Instant::now() >= boot_deadline {
            boot_failed.store(true, Ordering::Relaxed);
            return;
        }
        match run_until_stop(ssh("true")) {
            None => return,
            Some(true) => break,
            Some(false) => std::thread::sleep(Duration::from_millis(500)),
        }
    }
    run_until_stop(ssh(
        "mkdir -p /mnt/mccout && mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 mccout /mnt/mccout && sh /mnt/mccout/runner.sh; sync; echo o > /proc/sysrq-trigger",
    ));
}

/// Decides the accelerator: `tcg` or `kvm` as told, or for `auto` KVM when /dev/kvm opens and a
/// probe boot of the kernel-kind guest under KVM reaches its init (a probe's answer is kept
/// per host boot, QEMU and guest in the temporary folder).
fn decide_accel(config: &QemuConfig, binary: &Path) -> Result<&'static str, QemuError> {
    let kvm_opens = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/kvm")
        .is_ok();
    match config.accel {
        Accel::Tcg => Ok("tcg"),
        Accel::Kvm if kvm_opens => Ok("kvm"),
        Accel::Kvm => Err(QemuError::NoKvm),
        Accel::Auto if !kvm_opens => Ok("tcg"),
        Accel::Auto => {
            if !config.kernel.is_file() || !config.initrd.is_file() {
                // No guest to probe with (image kind without scripts/guest-kernel's guest).
                return Ok("tcg");
            }
            let boot_id = fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap_or_default();
            let stamp = |p: &Path| {
                fs::metadata(p)
                    .and_then(|m| m.modified())
                    .map(|t| format!("{t:?}"))
                    .unwrap_or_default()
            };
            let id = blake3::hash(
                format!(
                    "{boot_id}\n{}\n{}\n{}\n{}\n{}",
                    binary.display(),
                    stamp(binary),
                    config.kernel.display(),
                    stamp(&config.kernel),
                    config.cpu_model
                )
                .as_bytes(),
            );
            let memo =
                std::env::temp_dir().join(format!("mccbuild-kvm-probe-{}", &id.to_hex()[..16]));
            if let Ok(answer) = fs::read_to_string(&memo) {
                match answer.trim() {
                    "kvm" => return Ok("kvm"),
                    "tcg" => return Ok("tcg"),
                    _ => {}
                }
            }
            let answer = if probe_kvm(config, binary) {
                "kvm"
            } else {
                "tcg"
            };
            let _ = fs::write(&memo, answer);
            Ok(answer)
        }
    }
}

/// Boots the kernel-kind guest without a job under KVM: true when it reaches its init and
/// powers off within 20 s (KVM variants where stock kernels hang fail here).
fn probe_kvm(config: &QemuConfig, binary: &Path) -> bool {
    let console = std::env::temp_dir().join(format!(
        "mccbuild-kvm-probe-{}-console.log",
        std::process::id()
    ));
    let answer = probe_boot(config, binary, &console);
    let _ = fs::remove_file(&console);
    answer
}

fn probe_boot(config: &QemuConfig, binary: &Path, console: &Path) -> bool {
    let mut command = Command::new(binary);
    command
        .args([
            "-accel",
            "kvm",
            "-cpu",
            &config.cpu_model,
            "-m",
            "256",
            "-smp",
            "1",
        ])
        .args([
            "-nodefaults",
            "-no-user-config",
            "-display",
            "none",
            "-no-reboot",
        ])
        .arg("-serial")
        .arg(format!("file:{}", console.display()))
        .arg("-kernel")
        .arg(&config.kernel)
        .arg("-initrd")
        .arg(&config.initrd)
        .args(["-append", "console=ttyS0 panic=-1 quiet"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    pin_and_tie(&mut command, Vec::new());
    let Ok(child) = command.spawn() else {
        return false;
    };
    let mut vm = Vm::new(child);
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(20) {
        if let Some((status, _)) = vm.try_wait() {
            return libc::WIFEXITED(status)
                && libc::WEXITSTATUS(status) == 0
                && tail_of(console, 4096).contains("mccbuild-guest: ready, no job");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false // `vm` is killed and reaped as it drops
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
fn tail_of(path: &Path, bytes: u64) -> String {
    let Ok(mut f) = fs::File::open(path) else {
        return String::new();
    };
    let len = f.metadata().map_or(0, |m| m.len());
    let _ = f.seek(io::SeekFrom::Start(len.saturating_sub(bytes)));
    let mut buf = Vec::new();
    let _ = f.read_to_end(&mut buf);
    String::from_utf8_lossy(&buf).into_owned()
}

fn file_len(path: &Path) -> u64 {
    fs::metadata(path).map_or(0, |m| m.len())
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

/// A value for `job.env`, read by `sh`'s `.`.
fn shell_quote(value: &str) -> String {
    format!("'{}'", value.replace('\'', "'\\''"))
}

/// A path inside a QEMU option list (commas are doubled).
fn escape_option(path: &Path) -> String {
    path.display().to_string().replace(',', ",,")
}

fn image_format(image: &Path) -> &'static str {
    match image.extension().and_then(|e| e.to_str()) {
        Some("qcow2") => "qcow2",
        Some("vmdk") => "vmdk",
        _ => "raw",
    }
}

fn free_port() -> Result<u16, InfraError> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| InfraError(format!("no free local port for the guest's ssh: {e}")))
}

fn which_ssh() -> Option<PathBuf> {
    find_program("ssh")
}

/// A program on the PATH (or in /usr/sbin, /sbin), or a path given as is.
fn find_program(name: &str) -> Option<PathBuf> {
    if name.contains('/') {
        return Path::new(name).is_file().then(|| PathBuf::from(name));
    }
    let path = std::env::var("PATH").unwrap_or_default();
    let found = path
        .split(':')
        .chain(["/usr/sbin", "/sbin"])
        .map(|d| Path::new(d).join(name))
        .find(|p| p.is_file());
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_values_are_quoted_for_sh() {
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
    }

    #[test]
    fn commas_are_doubled_in_qemu_options() {
        assert_eq!(escape_option(Path::new("/a,b/c")), "/a,,b/c");
    }

    #[test]
    fn image_formats_come_from_the_extension() {
        assert_eq!(image_format(Path::new("x.qcow2")), "qcow2");
        assert_eq!(image_format(Path::new("mcc2026.vmdk")), "vmdk");
        assert_eq!(image_format(Path::new("disk.img")), "raw");
    }

    /// The machine, its firmware and the kernel's command line are run key ingredients, and
    /// each choice gives other values (crates/plan's key tests prove that any ingredient change
    /// changes the key).
    #[test]
    fn the_machine_and_the_kernel_command_line_are_key_ingredients() {
        let tcg = machine_ingredients(GuestKind::Kernel, "tcg", true);
        let names: Vec<&str> = tcg.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(names, ["machine", "kernel_cmdline"]);
        assert_ne!(tcg, machine_ingredients(GuestKind::Kernel, "kvm", true));
        assert_ne!(tcg, machine_ingredients(GuestKind::Kernel, "tcg", false));
        assert!(tcg[1].1.contains("mitigations=off"));
        assert!(!kernel_cmdline("kvm").contains("mitigations"));
        assert!(machine_ingredients(GuestKind::Image, "tcg", false).is_empty());
    }

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
