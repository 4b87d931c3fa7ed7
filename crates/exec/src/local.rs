//! The local executor: each run in a fresh working directory, under BenchKit's protocol, in its
//! own cgroups (or the fallback), pinned to its own cores.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::bin_view::BinView;
use crate::cgroup::CgroupSupport;
use crate::isolation::{self, IsolationPlan, IsolationRequest, PendingNamespaces, Prepared};
use crate::process::{run_process, ProcessSpec};
use crate::{host_name, now_rfc3339, Execution, InfraError, RunExecutor, RunSpec};
use mccbuild_plan::instance::{materialize, ArchiveLimits};
use mccbuild_rules::edition::Limits;

/// Settings of the local executor.
#[derive(Clone, Debug)]
pub struct LocalSettings {
    /// Where runs' working directories are made (removed after each run).
    pub work_root: PathBuf,
    /// Bytes of stdout and of stderr kept in a record.
    pub capture_bytes: usize,
    /// A run printing more than this (stdout + stderr) is killed (`output_limit`).
    pub output_limit: u64,
    /// Processes and threads a run may have at once.
    pub pids_limit: u64,
    pub archive_limits: ArchiveLimits,
    /// Keep working directories (for debugging a tool).
    pub keep_workdirs: bool,
    /// Folders isolated runs must not see (the project, the store); the runs' own folders and
    /// the instances' sources are added to them.
    pub hidden: Vec<PathBuf>,
    /// Check with a real process that namespaces work before using them (a run key depends on
    /// the answer). `mccbuild sandbox`, which keys nothing, tries them directly instead.
    pub probe_isolation: bool,
    /// The executor is made to execute a run right away (`mccbuild sandbox`): the cgroup
    /// warm-up and the making of the first run's network and IPC namespaces start when it is
    /// made, so that they overlap with the rest of the start instead of the run's preparation.
    pub run_at_once: bool,
}

impl Default for LocalSettings {
    fn default() -> Self {
        LocalSettings {
            work_root: std::env::temp_dir(),
            capture_bytes: 64 * 1024,
            output_limit: 256 << 20,
            pids_limit: 4096,
            archive_limits: ArchiveLimits::default(),
            keep_workdirs: false,
            hidden: Vec::new(),
            probe_isolation: true,
            run_at_once: false,
        }
    }
}

/// Reclaims what mccbuild processes that died left: first their runs' cgroups (whatever still
/// runs in them is killed), then their working folders. Those of live ones are left alone.
fn reclaim(work_root: &Path, cgroups: Option<&CgroupSupport>) {
    let groups = cgroups.map_or(0, CgroupSupport::reclaim);
    let folders = crate::owner::reclaim_folders(work_root);
    if groups + folders > 0 {
        eprintln!(
            "note: reclaimed {folders} working folders and {groups} runs' cgroups left by mccbuild processes that died"
        );
    }
}

/// The wall-clock safety limit of a run with CPU limit `time_s`: twice the CPU limit plus 30 s
/// (a tool blocked or sleeping would otherwise never reach its CPU limit).
pub fn wall_limit(time_s: u64) -> Duration {
    Duration::from_secs(time_s.saturating_mul(2).saturating_add(30))
}

/// The CPU-time limit given to the monitor when only the wall clock is limited: none in effect
/// (136 years; finite, so that the fallback's per-process RLIMIT_CPU stays a number).
const NO_CPU_LIMIT_S: f64 = u32::MAX as f64;

/// The CPU-time and wall-clock limits a run is killed at, as its edition says (`[limits]
/// time`): CPU time of the tree with the wall-clock safety net (`cpu`), the wall clock alone as
/// BenchKit's `timeout` (`wall`: CPU time is measured, not limited), or both.
pub fn time_limits(limits: &Limits) -> (f64, Duration) {
    let cpu = if limits.time.limits_cpu() {
        limits.time_s as f64
    } else {
        NO_CPU_LIMIT_S
    };
    let wall = if limits.time.limits_wall() {
        Duration::from_secs(limits.time_s)
    } else {
        wall_limit(limits.time_s)
    };
    (cpu, wall)
}

pub struct LocalExecutor {
    settings: LocalSettings,
    cgroups: Option<CgroupSupport>,
    /// Runs enter namespaces and give up their capabilities (see `isolation`).
    isolated: bool,
    counter: AtomicU64,
    /// The thread reclaiming what dead mccbuild processes left ([`LocalExecutor::reclaim`]):
    /// started once the first run's tool executes, or when the executor is dropped; joined
    /// when dropped.
    reclaimer: std::sync::Mutex<Option<std::thread::JoinHandle<()>>>,
    reclaim_started: std::sync::Once,
    /// The cgroup warm-up (`CgroupSupport::warm_up`), started by the first run or command
    /// executed: commands that only read the store never move a process.
    warmed: std::sync::Once,
    /// The first run's namespaces, made when the executor was made (`run_at_once`).
    first_namespaces: std::sync::Mutex<Option<PendingNamespaces>>,
}

impl Drop for LocalExecutor {
    fn drop(&mut self) {
        self.reclaim();
        let reclaimer = self
            .reclaimer
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(reclaimer) = reclaimer {
            let _ = reclaimer.join();
        }
    }
}

impl LocalExecutor {
    /// Detects cgroups and namespaces and uses the best sandbox the host offers; without them
    /// runs use the fallback, and their keys say so. `MCCBUILD_SANDBOX` can ask for less:
    /// `cgroup` (cgroups without namespaces) or `fallback`.
    pub fn new(settings: LocalSettings) -> LocalExecutor {
        let asked = std::env::var("MCCBUILD_SANDBOX").unwrap_or_default();
        // A run right away, which will most likely be isolated (root, namespaces not ruled
        // out): its network namespace (~0.6 ms of the kernel's time) is started before the
        // cgroups are detected, the earlier the more of it overlaps; dropped if not isolated.
        // SAFETY: geteuid has no preconditions.
        let early_namespaces = (settings.run_at_once
            && !settings.probe_isolation
            && asked.is_empty()
            && unsafe { libc::geteuid() } == 0)
            .then(isolation::Namespaces::prepare);
        let support = (asked != "fallback")
            .then(CgroupSupport::detect)
            .filter(CgroupSupport::is_complete);
        let isolated = support.is_some()
            && asked != "cgroup"
            && (!settings.probe_isolation
                || isolation::probe()
                    .map_err(|why| {
                        eprintln!(
                            "warning: runs cannot be isolated in namespaces here ({why}); \
                             they run in cgroups only (sandbox `cgroup`, other run keys)"
                        )
                    })
                    .is_ok());
        let first_namespaces = (isolated && settings.run_at_once)
            .then(|| early_namespaces.unwrap_or_else(isolation::Namespaces::prepare));
        let executor = LocalExecutor {
            settings,
            cgroups: support,
            isolated,
            counter: AtomicU64::new(0),
            reclaimer: std::sync::Mutex::new(None),
            reclaim_started: std::sync::Once::new(),
            warmed: std::sync::Once::new(),
            first_namespaces: std::sync::Mutex::new(first_namespaces),
        };
        if executor.settings.run_at_once {
            executor.warm_up();
        }
        executor
    }

    /// Starts, once, the reclaiming of what dead mccbuild processes left, on a thread of its
    /// own (what it removes is never this process's). Called when the first run's tool
    /// executes, so that its work overlaps with that run instead of delaying its start (on a
    /// machine with two cores, a third thread at the start of a run takes a core from the
    /// run's preparation), and when the executor is dropped, if no run ever started.
    fn reclaim(&self) {
        self.reclaim_started.call_once(|| {
            let (root, support) = (self.settings.work_root.clone(), self.cgroups.clone());
            let thread = std::thread::spawn(move || reclaim(&root, support.as_ref()));
            *self.reclaimer.lock().unwrap_or_else(|e| e.into_inner()) = Some(thread);
        });
    }

    /// The namespaces of a run about to be prepared, isolated: those made for the first run
    /// with the executor, else made now, beside the run's preparation.
    fn namespaces(&self) -> Option<PendingNamespaces> {
        if !self.isolated {
            return None;
        }
        let made = self
            .first_namespaces
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        Some(made.unwrap_or_else(isolation::Namespaces::prepare))
    }

    /// Starts the cgroup warm-up once, with the first run or command: its wait then overlaps
    /// with that run's preparation. Only for runs that are not isolated, whose processes are
    /// moved into their groups: an isolated run's process is born in them (`spawn`), and a
    /// warm-up would only hold the kernel's `cgroup_mutex` for a grace period, delaying the
    /// creation of the run's groups.
    fn warm_up(&self) {
        if self.isolated {
            return;
        }
        self.warmed.call_once(|| {
            if let Some(support) = &self.cgroups {
                support.warm_up();
            }
        });
    }

    /// The sandbox runs get (a run key ingredient): `cgroup+namespaces`, `cgroup` or `fallback`.
    pub fn sandbox(&self) -> &'static str {
        match (&self.cgroups, self.isolated) {
            (Some(_), true) => "cgroup+namespaces",
            (Some(_), false) => "cgroup",
            (None, _) => "fallback",
        }
    }

    /// How runs are limited and measured: `cgroup-v1+v2`, `cgroup-v2`, or `fallback`.
    pub fn method(&self) -> String {
        match &self.cgroups {
            Some(c) => c.method(),
            None => "fallback".to_string(),
        }
    }

    fn fresh_workdir(&self, spec: &RunSpec) -> Result<PathBuf, InfraError> {
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        let dir = self.settings.work_root.join(format!(
            "mccbuild-{}-{}-{n}",
            &spec.key.hex()[..12],
            crate::owner::tag()
        ));
        if dir.exists() {
            let _ = fs::remove_dir_all(&dir);
        }
        for sub in ["result", "home", "tmp"] {
            fs::create_dir_all(dir.join(sub)).map_err(|e| {
                InfraError(format!(
                    "cannot create the run's folder {}: {e}",
                    dir.display()
                ))
            })?;
        }
        Ok(dir)
    }
}

impl RunExecutor for LocalExecutor {
    fn key_ingredients(&self) -> Vec<(String, String)> {
        // The sandbox decides how limits are enforced and what a run may reach: a run limited
        // per process (fallback) may end differently from one limited per tree, and a tool that
        // needs the network or writes outside its folder from an isolated one, so they never
        // share a key.
        // The output and process caps can stop a run too (`output_limit`, a failed fork).
        vec![
            ("kind".into(), "local".into()),
            ("sandbox".into(), self.sandbox().into()),
            (
                "output_limit_bytes".into(),
                self.settings.output_limit.to_string(),
            ),
            ("pids_limit".into(), self.settings.pids_limit.to_string()),
        ]
    }

    fn execute(
        &self,
        spec: &RunSpec,
        cores: &[u32],
        cancel: &Arc<AtomicBool>,
    ) -> Result<Option<Execution>, InfraError> {
        self.warm_up();
        let namespaces = self.namespaces();
        let dir = self.fresh_workdir(spec)?;
        let result = self.execute_in(spec, cores, cancel, &dir, namespaces);
        if !self.settings.keep_workdirs {
            let _ = fs::remove_dir_all(&dir);
        }
        result
    }
}

impl LocalExecutor {
    fn execute_in(
        &self,
        spec: &RunSpec,
        cores: &[u32],
        cancel: &Arc<AtomicBool>,
        dir: &Path,
        namespaces: Option<PendingNamespaces>,
    ) -> Result<Option<Execution>, InfraError> {
        let workdir = dir.join(&spec.instance);
        let hidden: Vec<&str> = spec.hidden.iter().map(String::as_str).collect();
        materialize(
            &spec.instance,
            &spec.source,
            &workdir,
            &hidden,
            self.settings.archive_limits,
        )
        .map_err(|e| InfraError(format!("cannot prepare instance {}: {e}", spec.instance)))?;
        // The run's folder (working directory, instance, HOME, TMPDIR, results) is its user's.
        let user = crate::run_user::resolve(spec.user)?;
        if let Some(ids) = user {
            crate::run_user::give(dir, ids).map_err(|e| {
                InfraError(format!(
                    "cannot give the run's folder {} to the user `{}`: {e}",
                    dir.display(),
                    spec.user.name()
                ))
            })?;
        }
        let entry = spec.tool_dir.join(&spec.entry);
        // Unique across processes: two mccbuild processes may run the same key at once.
        let run_name = format!(
            "{}-{}-{}",
            &spec.key.hex()[..16],
            crate::owner::tag(),
            self.counter.fetch_add(1, Ordering::Relaxed)
        );
        let cgroup = match &self.cgroups {
            Some(support) => Some(
                support
                    .create(&run_name)
                    .map_err(|e| InfraError(format!("cannot create the run's cgroups: {e}")))?,
            ),
            None => None,
        };
        let isolation = if self.isolated {
            Some(self.isolation(spec, dir, &workdir)?.run_as(user))
        } else {
            None
        };
        // After the isolation's plan read the host's mounts: the overlay is not one of the
        // host mounts a run sees read-only; it comes with the run's folder, writable.
        let bin_view = BinView::new(&spec.bin_path, dir, user)?;
        // Handed to the run's process at its gate: their making overlaps with all of the above
        // and with the building of the run's view.
        let isolation = isolation.map(|i| i.with_namespaces(namespaces));
        let env = benchkit_env(spec, dir, bin_view.path());
        let started_at = now_rfc3339();
        let (cpu_limit_s, wall_limit) = time_limits(&spec.limits);
        let result = run_process(
            ProcessSpec {
                program: entry.clone(),
                args: Vec::new(),
                cwd: workdir,
                user: if self.isolated { None } else { user },
                isolation,
                env,
                cpu_limit_s,
                memory_limit_bytes: spec.limits.memory_mb.saturating_mul(1 << 20),
                wall_limit,
                output_limit: self.settings.output_limit,
                capture_bytes: self.settings.capture_bytes,
                cores: cores.to_vec(),
                pids_limit: self.settings.pids_limit,
                cgroup,
                cancel: cancel.clone(),
            },
            &|| self.reclaim(),
        )
        .map_err(|e| {
            InfraError(format!(
                "cannot start {} for tool {}: {}",
                entry.display(),
                spec.tool,
                if self.isolated {
                    isolation::describe_apply_error(&e)
                } else {
                    e.to_string()
                }
            ))
        })?;
        drop(bin_view);
        if result.cancelled {
            return Ok(None);
        }
        Ok(Some(Execution {
            measurement: result.measurement,
            method: self.method(),
            cores: cores.to_vec(),
            host: host_name(),
            started_at,
            finished_at: now_rfc3339(),
            stdout: result.stdout,
            stderr: result.stderr,
            parsed: result.parsed,
            vm: None,
        }))
    }

    /// Plans the run's view of the files.
    fn isolation(
        &self,
        spec: &RunSpec,
        dir: &Path,
        workdir: &Path,
    ) -> Result<Prepared, InfraError> {
        let host = isolation::HostMounts::of_this_host()
            .map_err(|e| InfraError(format!("cannot read /proc/self/mountinfo: {e}")))?;
        let absolute = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
        let work_root = absolute(&self.settings.work_root);
        let source = absolute(spec.source.path());
        let source_folder = source.parent().map(Path::to_path_buf).unwrap_or(source);
        let hidden: Vec<PathBuf> = self
            .settings
            .hidden
            .iter()
            .map(|p| absolute(p))
            .chain([work_root, source_folder])
            .collect();
        let tool_dir = absolute(&spec.tool_dir);
        let bin_path = absolute(&spec.bin_path);
        let plan = IsolationPlan::new(
            &IsolationRequest {
                run_dir: dir,
                read_only: vec![&tool_dir, &bin_path],
                hidden: hidden.iter().map(PathBuf::as_path).collect(),
                fresh: Vec::new(),
            },
            &host,
            Path::exists,
        );
        Prepared::new(&plan, workdir).map_err(|e| InfraError(e.to_string()))
    }

    /// The folder of a command given by its path, which the sandbox shows it read-only (a
    /// command found on the PATH needs none: the host's system folders are visible); an error
    /// saying why when it cannot be shown: a folder hidden with `--hide`, or one that holds the
    /// sandbox's own folders (`/tmp` itself: runs get a private `/tmp`).
    fn program_folder(
        &self,
        program: &Path,
        run_dir: &Path,
        hidden: &[PathBuf],
    ) -> Result<Option<PathBuf>, InfraError> {
        if !self.isolated || !program.is_absolute() {
            return Ok(None);
        }
        let Some(folder) = program
            .parent()
            .filter(|f| f.is_dir())
            .map(Path::to_path_buf)
        else {
            return Ok(None);
        };
        if let Some(h) = hidden.iter().find(|h| folder.starts_with(h)) {
            return Err(InfraError(format!(
                "{} is in {}, which the sandbox is told to hide (--hide): it cannot run from there",
                program.display(),
                h.display()
            )));
        }
        if run_dir.starts_with(&folder) {
            return Err(InfraError(format!(
                "{} cannot run in the sandbox from {}: that folder holds the sandbox's own folders (a run's /tmp is private: it never sees the host's); put the command in a folder of its own, e.g. {}/",
                program.display(),
                folder.display(),
                folder.join("tools").display()
            )));
        }
        Ok(Some(folder))
    }

    /// Runs one command (not a contest run) in the same sandbox as runs, in a fresh folder of
    /// its own that is its working directory, HOME and TMPDIR (`mccbuild sandbox`). A command
    /// given by its path (`./x`, `/opt/t/x`) is run from there: its folder is shown read-only.
    pub fn run_command(
        &self,
        command: &SandboxCommand,
        cancel: &Arc<AtomicBool>,
    ) -> Result<crate::process::ProcessResult, InfraError> {
        self.warm_up();
        let namespaces = self.namespaces();
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        let name = format!("sandbox-{}-{n}", crate::owner::tag());
        let dir = self.settings.work_root.join(format!("mccbuild-{name}"));
        // Isolated, the folder is made in the command's private /tmp (nothing on the host to
        // make and remove); else, or to keep it, on the host.
        let fresh = self.isolated
            && !self.settings.keep_workdirs
            && isolation::in_private_tmp(&dir, Path::exists);
        if !fresh {
            let _ = fs::remove_dir_all(&dir);
            for sub in ["home", "tmp"] {
                fs::create_dir_all(dir.join(sub)).map_err(|e| {
                    InfraError(format!("cannot create the folder {}: {e}", dir.display()))
                })?;
            }
        }
        let result = self.run_command_in(command, cancel, &dir, &name, namespaces, fresh);
        if !fresh && !self.settings.keep_workdirs {
            let _ = fs::remove_dir_all(&dir);
        }
        result
    }

    fn run_command_in(
        &self,
        command: &SandboxCommand,
        cancel: &Arc<AtomicBool>,
        dir: &Path,
        name: &str,
        namespaces: Option<PendingNamespaces>,
        fresh: bool,
    ) -> Result<crate::process::ProcessResult, InfraError> {
        let hidden: Vec<PathBuf> = self
            .settings
            .hidden
            .iter()
            .map(|p| std::path::absolute(p).unwrap_or_else(|_| p.clone()))
            .collect();
        let program = program_path(&command.argv[0]);
        let program_dir = self.program_folder(&program, dir, &hidden)?;
        let (home, tmp) = (dir.join("home"), dir.join("tmp"));
        let isolation = if self.isolated {
            let host = isolation::HostMounts::of_this_host()
                .map_err(|e| InfraError(format!("cannot read /proc/self/mountinfo: {e}")))?;
            let plan = IsolationPlan::new(
                &IsolationRequest {
                    run_dir: dir,
                    read_only: program_dir.iter().map(PathBuf::as_path).collect(),
                    hidden: hidden.iter().map(PathBuf::as_path).collect(),
                    fresh: if fresh {
                        vec![dir, &home, &tmp]
                    } else {
                        Vec::new()
                    },
                },
                &host,
                Path::exists,
            );
            Some(Prepared::new(&plan, dir).map_err(|e| InfraError(e.to_string()))?)
        } else {
            None
        };
        let cgroup = match &self.cgroups {
            Some(support) => Some(
                support
                    .create(name)
                    .map_err(|e| InfraError(format!("cannot create the run's cgroups: {e}")))?,
            ),
            None => None,
        };
        // Handed to the run's process at its gate: their making overlaps with all of the above
        // and with the building of the run's view.
        let isolation = isolation.map(|i| i.with_namespaces(namespaces));
        let path = |p: &str| dir.join(p).to_string_lossy().into_owned();
        run_process(
            ProcessSpec {
                program,
                args: command.argv[1..].to_vec(),
                cwd: dir.to_path_buf(),
                user: None,
                isolation,
                env: vec![
                    (
                        "PATH".to_string(),
                        "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin".to_string(),
                    ),
                    ("HOME".to_string(), path("home")),
                    ("TMPDIR".to_string(), path("tmp")),
                    ("LANG".to_string(), "C.UTF-8".to_string()),
                ],
                cpu_limit_s: command.cpu_limit_s,
                memory_limit_bytes: command.memory_limit_bytes,
                wall_limit: command.wall_limit,
                output_limit: self.settings.output_limit,
                capture_bytes: self.settings.capture_bytes,
                cores: command.cores.clone(),
                pids_limit: self.settings.pids_limit,
                cgroup,
                cancel: cancel.clone(),
            },
            &|| self.reclaim(),
        )
        .map_err(|e| {
            InfraError(format!(
                "cannot start {}: {}",
                command.argv[0],
                if self.isolated {
                    isolation::describe_apply_error(&e)
                } else {
                    e.to_string()
                }
            ))
        })
    }
}

/// A command for [`LocalExecutor::run_command`].
/// The program of a command: a path (with a `/`) made absolute, since the command runs in a
/// folder of its own; a name is looked up on the standard PATH.
fn program_path(argv0: &str) -> PathBuf {
    if argv0.contains('/') {
        std::path::absolute(argv0).unwrap_or_else(|_| PathBuf::from(argv0))
    } else {
        PathBuf::from(argv0)
    }
}

/// The environment of a run: BenchKit's variables (BK_INPUT, BK_EXAMINATION, BK_TOOL, the
/// confinements, BK_BIN_PATH, BK_LOG_FILE, BK_RESULT_DIR), a standard PATH, and a HOME and TMPDIR
/// of its own in its folder.
fn benchkit_env(spec: &RunSpec, dir: &Path, bin_path: &Path) -> Vec<(String, String)> {
    let mut bin_path = bin_path.to_string_lossy().into_owned();
    if !bin_path.ends_with('/') {
        bin_path.push('/');
    }
    vec![
        (
            "PATH".to_string(),
            "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin".to_string(),
        ),
        (
            "HOME".to_string(),
            dir.join("home").to_string_lossy().into_owned(),
        ),
        (
            "TMPDIR".to_string(),
            dir.join("tmp").to_string_lossy().into_owned(),
        ),
        ("LANG".to_string(), "C.UTF-8".to_string()),
        ("BK_INPUT".to_string(), spec.instance.clone()),
        ("BK_EXAMINATION".to_string(), spec.examination.clone()),
        ("BK_TOOL".to_string(), spec.bk_tool.clone()),
        (
            "BK_TIME_CONFINEMENT".to_string(),
            spec.limits.time_s.to_string(),
        ),
        (
            "BK_MEMORY_CONFINEMENT".to_string(),
            spec.limits.memory_mb.to_string(),
        ),
        ("BK_BIN_PATH".to_string(), bin_path),
        (
            "BK_LOG_FILE".to_string(),
            dir.join("BenchKit.log").to_string_lossy().into_owned(),
        ),
        (
            "BK_RESULT_DIR".to_string(),
            dir.join("result").to_string_lossy().into_owned(),
        ),
    ]
}

#[derive(Clone, Debug)]
pub struct SandboxCommand {
    /// The program (found on the standard PATH) and its arguments.
    pub argv: Vec<String>,
    pub cpu_limit_s: f64,
    pub memory_limit_bytes: u64,
    pub wall_limit: Duration,
    pub cores: Vec<u32>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ingredients(settings: LocalSettings) -> Vec<(String, String)> {
        LocalExecutor::new(LocalSettings {
            probe_isolation: false,
            ..settings
        })
        .key_ingredients()
    }

    /// The caps that can end a run are run key ingredients (key.rs proves that any change of
    /// an executor ingredient changes the key: `executor_settings_change_the_key`).
    #[test]
    fn output_and_process_caps_are_key_ingredients() {
        let base = ingredients(LocalSettings::default());
        let output = ingredients(LocalSettings {
            output_limit: 1 << 20,
            ..LocalSettings::default()
        });
        let pids = ingredients(LocalSettings {
            pids_limit: 64,
            ..LocalSettings::default()
        });
        assert_ne!(base, output);
        assert_ne!(base, pids);
        assert!(base.iter().any(|(k, _)| k == "sandbox"));
    }
}
