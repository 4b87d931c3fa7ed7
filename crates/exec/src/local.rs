//! The local executor: each run in a fresh working directory, under BenchKit's protocol, in its
//! own cgroups (or the fallback), pinned to its own cores.
//!
//! The files: this one holds the executor's settings, its making and what it shares between
//! runs; `run` executes one contest run; `sandbox_command` runs one command in the sandbox.

mod run;
mod sandbox_command;

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::time::Duration;

use crate::cgroup::CgroupSupport;
use crate::isolation::{self, PendingNamespaces};
use crate::{Execution, InfraError, RunExecutor, RunSpec};
use mccbuild_plan::instance::ArchiveLimits;
use mccbuild_rules::edition::Limits;

pub use self::sandbox_command::SandboxCommand;

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
/// Returns what was reclaimed (said once the command's runs are over: [`reclaimed_note`]).
fn reclaim(work_root: &Path, cgroups: Option<&CgroupSupport>) -> Reclaimed {
    Reclaimed {
        groups: cgroups.map_or(0, CgroupSupport::reclaim),
        folders: crate::owner::reclaim_folders(work_root),
    }
}

/// What a reclaiming found of processes that died.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Reclaimed {
    /// Runs' cgroups removed (whatever ran in them killed).
    groups: usize,
    /// Working folders removed.
    folders: usize,
}

/// The note said after the runs when something was reclaimed (`None`: nothing was).
fn reclaimed_note(r: Reclaimed) -> Option<String> {
    if r.groups + r.folders == 0 {
        return None;
    }
    let of = |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let what = match (r.groups, r.folders) {
        (0, f) => of(f, "working folder", "working folders"),
        (g, 0) => of(g, "run's cgroup", "runs' cgroups"),
        (g, f) => format!(
            "{} and {}",
            of(g, "run's cgroup", "runs' cgroups"),
            of(f, "working folder", "working folders")
        ),
    };
    Some(format!(
        "note: removed {what} left by mccbuild processes that died (their processes were stopped)"
    ))
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
    /// started once the first run's tool executes; joined when the executor is dropped.
    reclaimer: std::sync::Mutex<Option<std::thread::JoinHandle<Reclaimed>>>,
    reclaim_started: std::sync::Once,
    /// The cgroup warm-up (`CgroupSupport::warm_up`), started by the first run or command
    /// executed: commands that only read the store never move a process.
    warmed: std::sync::Once,
    /// The first run's namespaces, made when the executor was made (`run_at_once`).
    first_namespaces: std::sync::Mutex<Option<PendingNamespaces>>,
}

impl Drop for LocalExecutor {
    /// Ends the reclaiming, if a run started one, and says what it reclaimed: after the runs
    /// (never in the middle of a progress bar). An executor that ran nothing reclaims nothing.
    fn drop(&mut self) {
        let reclaimer = self
            .reclaimer
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(note) = reclaimer
            .and_then(|r| r.join().ok())
            .and_then(reclaimed_note)
        {
            eprintln!("{note}");
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
    /// run's preparation). A command that executes nothing reclaims nothing.
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

    /// What was reclaimed is said in words, once, and nothing is said of nothing.
    #[test]
    fn the_reclaimed_note_counts_in_words_and_nothing_says_nothing() {
        assert_eq!(reclaimed_note(Reclaimed::default()), None);
        let note = |groups, folders| reclaimed_note(Reclaimed { groups, folders }).unwrap();
        assert_eq!(
            note(1, 0),
            "note: removed 1 run's cgroup left by mccbuild processes that died (their processes were stopped)"
        );
        assert!(note(2, 1).contains("removed 2 runs' cgroups and 1 working folder left"));
        assert!(note(0, 3).contains("removed 3 working folders left"));
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
