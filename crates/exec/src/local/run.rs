//! Executing one contest run locally: its fresh folder, the instance in it, its user, cgroups
//! and view of the files, BenchKit's environment, then the process and its execution record.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use mccbuild_plan::instance::materialize;

use super::{LocalExecutor, time_limits};
use crate::bin_view::BinView;
use crate::isolation::{self, IsolationPlan, IsolationRequest, PendingNamespaces, Prepared};
use crate::process::{ProcessSpec, run_process};
use crate::{Execution, InfraError, RunSpec, host_name, now_rfc3339};

impl LocalExecutor {
    pub(super) fn fresh_workdir(&self, spec: &RunSpec) -> Result<PathBuf, InfraError> {
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

    pub(super) fn execute_in(
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
            &|| self.start_reclaim(),
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
            machine: Some(crate::this_machine()),
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
