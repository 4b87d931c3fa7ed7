//! The groups of one run: its limits, its measurements (CPU time, peak memory, OOM kills), the
//! killing of its whole tree, and their removal.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The groups of one run.
#[derive(Debug, Default)]
pub struct RunCgroup {
    pub(super) memory: Option<PathBuf>,
    pub(super) cpuacct: Option<PathBuf>,
    pub(super) pids: Option<PathBuf>,
    pub(super) freezer: Option<PathBuf>,
    pub(super) v2: Option<PathBuf>,
    pub(super) v2_memory: bool,
    pub(super) v2_pids: bool,
}

impl RunCgroup {
    /// The `cgroup.procs` files the tool's first process writes itself into before it executes
    /// the tool (so that nothing it starts escapes).
    pub fn procs_files(&self) -> Vec<PathBuf> {
        self.dirs().map(|d| d.join("cgroup.procs")).collect()
    }

    /// The group's folder in the cgroup v2 hierarchy, if it has one (a process can be cloned
    /// into it: `CLONE_INTO_CGROUP`).
    pub fn v2_dir(&self) -> Option<&Path> {
        self.v2.as_deref()
    }

    /// The group's folders in its cgroup v1 hierarchies.
    pub(super) fn v1_dirs(&self) -> impl Iterator<Item = &PathBuf> {
        [&self.memory, &self.cpuacct, &self.pids, &self.freezer]
            .into_iter()
            .flatten()
    }

    /// The group's folder in each hierarchy it has.
    pub(super) fn dirs(&self) -> impl Iterator<Item = &PathBuf> {
        [
            &self.memory,
            &self.cpuacct,
            &self.pids,
            &self.freezer,
            &self.v2,
        ]
        .into_iter()
        .flatten()
    }

    /// Hard memory limit of the whole tree (no swap).
    pub fn set_memory_limit(&self, bytes: u64) -> io::Result<()> {
        if let Some(m) = &self.memory {
            fs::write(m.join("memory.limit_in_bytes"), bytes.to_string())?;
            // Without swap accounting this file is absent: swap is then not limited separately.
            let _ = fs::write(m.join("memory.memsw.limit_in_bytes"), bytes.to_string());
            let _ = fs::write(m.join("memory.swappiness"), "0");
        } else if let (Some(v2), true) = (&self.v2, self.v2_memory) {
            fs::write(v2.join("memory.max"), bytes.to_string())?;
            let _ = fs::write(v2.join("memory.swap.max"), "0");
        }
        Ok(())
    }

    /// Limit on the number of processes and threads (contains fork bombs).
    pub fn set_pids_limit(&self, max: u64) -> io::Result<()> {
        if let Some(p) = &self.pids {
            fs::write(p.join("pids.max"), max.to_string())?;
        } else if let (Some(v2), true) = (&self.v2, self.v2_pids) {
            fs::write(v2.join("pids.max"), max.to_string())?;
        }
        Ok(())
    }

    pub fn has_pids_limit(&self) -> bool {
        self.pids.is_some() || (self.v2.is_some() && self.v2_pids)
    }

    /// CPU time of the whole tree so far, in seconds.
    pub fn cpu_time_s(&self) -> Option<f64> {
        if let Some(c) = &self.cpuacct {
            let ns: u64 = crate::read_text(c.join("cpuacct.usage"))
                .ok()?
                .trim()
                .parse()
                .ok()?;
            return Some(ns as f64 / 1e9);
        }
        let v2 = self.v2.as_ref()?;
        let stat = crate::read_text(v2.join("cpu.stat")).ok()?;
        let usec: u64 = stat
            .lines()
            .find_map(|l| l.strip_prefix("usage_usec "))?
            .trim()
            .parse()
            .ok()?;
        Some(usec as f64 / 1e6)
    }

    /// Peak memory of the whole tree, in bytes.
    pub fn peak_memory(&self) -> Option<u64> {
        if let Some(m) = &self.memory {
            return crate::read_text(m.join("memory.max_usage_in_bytes"))
                .ok()?
                .trim()
                .parse()
                .ok();
        }
        let v2 = self.v2.as_ref().filter(|_| self.v2_memory)?;
        crate::read_text(v2.join("memory.peak"))
            .ok()?
            .trim()
            .parse()
            .ok()
    }

    /// Whether the kernel killed a process of the tree for lack of memory.
    pub fn oom_killed(&self) -> bool {
        if let Some(m) = &self.memory {
            let control = crate::read_text(m.join("memory.oom_control")).unwrap_or_default();
            return control
                .lines()
                .any(|l| l.strip_prefix("oom_kill ").is_some_and(|n| n.trim() != "0"));
        }
        if let (Some(v2), true) = (&self.v2, self.v2_memory) {
            let events = crate::read_text(v2.join("memory.events")).unwrap_or_default();
            return events
                .lines()
                .any(|l| l.strip_prefix("oom_kill ").is_some_and(|n| n.trim() != "0"));
        }
        false
    }

    /// The processes still in the tree.
    pub fn pids(&self) -> Vec<i32> {
        let dir = self
            .v2
            .as_ref()
            .or(self.freezer.as_ref())
            .or(self.memory.as_ref())
            .or(self.cpuacct.as_ref())
            .or(self.pids.as_ref());
        let Some(dir) = dir else { return Vec::new() };
        crate::read_text(dir.join("cgroup.procs"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect()
    }

    pub fn is_empty(&self) -> bool {
        if let Some(v2) = &self.v2 {
            if let Ok(events) = crate::read_text(v2.join("cgroup.events")) {
                return events.lines().any(|l| l.trim() == "populated 0");
            }
        }
        self.pids().is_empty()
    }

    /// Kills every process of the tree at once and waits until the tree is empty (at most
    /// `patience`). With cgroup v2 `cgroup.kill` does it in one write; with v1 the tree is
    /// frozen first, so that no process can fork while its siblings are being killed.
    pub fn kill_all(&self, patience: Duration) -> bool {
        let deadline = Instant::now() + patience;
        loop {
            // Most often the tree is empty already (a run's init took it down with it).
            if self.is_empty() {
                return true;
            }
            if let Some(v2) = &self.v2 {
                let _ = fs::write(v2.join("cgroup.kill"), "1");
            }
            if self.v2.is_none() {
                if let Some(f) = &self.freezer {
                    let _ = fs::write(f.join("freezer.state"), "FROZEN");
                }
                for pid in self.pids() {
                    // SAFETY: kill(2) on a pid read from our own cgroup; at worst ESRCH.
                    unsafe { libc::kill(pid, libc::SIGKILL) };
                }
                if let Some(f) = &self.freezer {
                    let _ = fs::write(f.join("freezer.state"), "THAWED");
                }
            }
            if self.is_empty() {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// Removes the groups (after the tree is empty).
    pub fn remove(&self) {
        for dir in self.dirs() {
            for _ in 0..50 {
                match fs::remove_dir(dir) {
                    Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {
                        std::thread::sleep(Duration::from_millis(2))
                    }
                    _ => break,
                }
            }
        }
    }
}
