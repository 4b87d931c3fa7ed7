//! One command that is not a contest run in the same sandbox as runs (`mccbuild sandbox`), in a
//! fresh folder of its own.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::LocalExecutor;
use crate::InfraError;
use crate::isolation::{self, IsolationPlan, IsolationRequest, PendingNamespaces, Prepared};
use crate::process::{ProcessSpec, run_process};

/// A command for [`LocalExecutor::run_command`].
#[derive(Clone, Debug)]
pub struct SandboxCommand {
    /// The program (found on the standard PATH) and its arguments.
    pub argv: Vec<String>,
    pub cpu_limit_s: f64,
    pub memory_limit_bytes: u64,
    pub wall_limit: Duration,
    pub cores: Vec<u32>,
}

impl LocalExecutor {
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
            &|| self.start_reclaim(),
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
}

/// The program of a command: a path (with a `/`) made absolute, since the command runs in a
/// folder of its own; a name is looked up on the standard PATH.
fn program_path(argv0: &str) -> PathBuf {
    if argv0.contains('/') {
        std::path::absolute(argv0).unwrap_or_else(|_| PathBuf::from(argv0))
    } else {
        PathBuf::from(argv0)
    }
}
