//! What the host offers: the cgroup hierarchies this process can create groups in, found once
//! per process; creating a run's groups there, and reclaiming those that dead mccbuild
//! processes left.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::RunCgroup;

/// One cgroup hierarchy this process can create groups in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Hierarchy {
    /// The folder of this process's own group in that hierarchy (the parent of ours).
    own: PathBuf,
}

/// What the host offers, found once per process.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CgroupSupport {
    pub(super) v1_memory: Option<Hierarchy>,
    pub(super) v1_cpuacct: Option<Hierarchy>,
    pub(super) v1_pids: Option<Hierarchy>,
    pub(super) v1_freezer: Option<Hierarchy>,
    pub(super) v2: Option<Hierarchy>,
    pub(super) v2_memory: bool,
    pub(super) v2_pids: bool,
}

impl CgroupSupport {
    /// Detects the cgroup hierarchies and checks that groups can be created in them.
    pub fn detect() -> CgroupSupport {
        let (Ok(own), Ok(mounts)) = (
            crate::read_text("/proc/self/cgroup"),
            crate::read_text("/proc/self/mountinfo"),
        ) else {
            return CgroupSupport::default();
        };
        let mut support = CgroupSupport::default();
        let groups: Vec<(&str, &str)> = own
            .lines()
            .filter_map(|line| {
                let mut parts = line.splitn(3, ':');
                let (_id, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
                Some((controllers, path.trim_start_matches('/')))
            })
            .collect();
        // The v2 hierarchy first: it gives CPU time (`cpu.stat`) and killing (`cgroup.kill`)
        // without any controller, and v1's cpuacct and freezer are then not used (nor checked).
        // Each hierarchy a run joins costs it a move (see `RunCgroup::enter_v1_as_thread`).
        if let Some((_, path)) = groups
            .iter()
            .find(|(controllers, _)| controllers.is_empty())
        {
            if let Some(mount) = mount_point(&mounts, "cgroup2", None) {
                support.v2 = usable(mount.join(path));
            }
        }
        let v2 = support.v2.is_some();
        for (controllers, path) in &groups {
            for controller in controllers.split(',').filter(|c| !c.is_empty()) {
                let slot = match controller {
                    "memory" => &mut support.v1_memory,
                    "pids" => &mut support.v1_pids,
                    "cpuacct" if !v2 => &mut support.v1_cpuacct,
                    "freezer" if !v2 => &mut support.v1_freezer,
                    _ => continue,
                };
                if let Some(mount) = mount_point(&mounts, "cgroup", Some(controller)) {
                    *slot = usable(mount.join(path));
                }
            }
        }
        if let Some(v2) = &support.v2 {
            let controllers =
                crate::read_text(v2.own.join("cgroup.controllers")).unwrap_or_default();
            let has = |c: &str| controllers.split_whitespace().any(|x| x == c);
            support.v2_memory = support.v1_memory.is_none()
                && has("memory")
                && enable_controllers(&v2.own, "memory");
            support.v2_pids =
                support.v1_pids.is_none() && has("pids") && enable_controllers(&v2.own, "pids");
        }
        support
    }

    /// Starts, on a thread of its own, a move of this process into the cgroup v1 group it is
    /// already in, which changes nothing but this: the kernel's first move into a cgroup after a
    /// quiet while waits for an RCU grace period (~10 ms here; the `rcu_sync` of its
    /// thread-group semaphore), and moves made during or shortly after that wait do not wait
    /// again. The local executor starts it with its first run, so that the wait overlaps with
    /// that run's preparation instead of delaying its start (see `process`); commands that
    /// execute nothing never start it, nor do isolated runs, which are born in their groups
    /// ([`RunCgroup::enter_v1_as_thread`]). Without cgroup v1, nothing.
    pub fn warm_up(&self) {
        let Some(own) = self.v1_memory.as_ref().or(self.v1_pids.as_ref()) else {
            return;
        };
        let procs = own.own.join("cgroup.procs");
        std::thread::spawn(move || {
            use std::io::Write;
            // A failure costs only the overlap.
            let _ = fs::OpenOptions::new()
                .write(true)
                .open(procs)
                .and_then(|mut f| f.write_all(std::process::id().to_string().as_bytes()));
        });
    }

    /// Whether runs can be limited and measured by cgroups (memory and CPU of the whole tree,
    /// and a way to kill it).
    pub fn is_complete(&self) -> bool {
        let memory = self.v1_memory.is_some() || self.v2_memory;
        let cpu = self.v1_cpuacct.is_some() || self.v2.is_some();
        let kill = self.v2.is_some() || self.v1_freezer.is_some() || self.v1_memory.is_some();
        memory && cpu && kill
    }

    /// A short name of the method, recorded in every run record and in the run key.
    pub fn method(&self) -> String {
        let mut parts = Vec::new();
        if self.v1_memory.is_some() || self.v1_cpuacct.is_some() {
            parts.push("v1");
        }
        if self.v2.is_some() {
            parts.push("v2");
        }
        format!("cgroup-{}", parts.join("+"))
    }

    /// Creates the groups of one run.
    pub fn create(&self, name: &str) -> io::Result<RunCgroup> {
        let mut group = RunCgroup::default();
        let make = |h: &Option<Hierarchy>| -> io::Result<Option<PathBuf>> {
            let Some(h) = h else { return Ok(None) };
            let dir = h.own.join("mccbuild").join(name);
            fs::create_dir_all(&dir)?;
            Ok(Some(dir))
        };
        group.memory = make(&self.v1_memory)?;
        group.cpuacct = make(&self.v1_cpuacct)?;
        group.pids = make(&self.v1_pids)?;
        group.freezer = make(&self.v1_freezer)?;
        group.v2 = make(&self.v2)?;
        if let Some(v2) = &self.v2 {
            if self.v2_memory || self.v2_pids {
                let controllers = [
                    self.v2_memory.then_some("+memory"),
                    self.v2_pids.then_some("+pids"),
                ];
                let text: Vec<&str> = controllers.into_iter().flatten().collect();
                let _ = fs::write(
                    v2.own.join("mccbuild/cgroup.subtree_control"),
                    text.join(" "),
                );
            }
        }
        group.v2_memory = self.v2_memory;
        group.v2_pids = self.v2_pids;
        Ok(group)
    }

    /// The existing groups `name` of a run (those of the hierarchies that have it).
    fn existing(&self, name: &str) -> RunCgroup {
        let find = |h: &Option<Hierarchy>| {
            h.as_ref()
                .map(|h| h.own.join("mccbuild").join(name))
                .filter(|d| d.is_dir())
        };
        RunCgroup {
            memory: find(&self.v1_memory),
            cpuacct: find(&self.v1_cpuacct),
            pids: find(&self.v1_pids),
            freezer: find(&self.v1_freezer),
            v2: find(&self.v2),
            v2_memory: self.v2_memory,
            v2_pids: self.v2_pids,
        }
    }

    /// Kills the processes of, and removes, the runs' groups whose mccbuild process died
    /// (see `owner`); returns how many runs' groups. Those of live mccbuild processes are left.
    pub fn reclaim(&self) -> usize {
        let mut names: Vec<String> = [
            &self.v1_memory,
            &self.v1_cpuacct,
            &self.v1_pids,
            &self.v1_freezer,
            &self.v2,
        ]
        .into_iter()
        .flatten()
        .filter_map(|h| fs::read_dir(h.own.join("mccbuild")).ok())
        .flat_map(|dir| dir.flatten())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|name| crate::owner::owner_is_dead(name))
        .collect();
        names.sort();
        names.dedup();
        for name in &names {
            let group = self.existing(name);
            group.kill_all(Duration::from_secs(5));
            group.remove();
        }
        names.len()
    }
}

pub(super) fn mount_point(
    mountinfo: &str,
    fstype: &str,
    controller: Option<&str>,
) -> Option<PathBuf> {
    for line in mountinfo.lines() {
        // <id> <parent> <dev> <root> <mount point> <options> ... - <fstype> <source> <super options>
        let (before, after) = line.split_once(" - ")?;
        let mut after = after.split_whitespace();
        if after.next() != Some(fstype) {
            continue;
        }
        let super_options = after.nth(1).unwrap_or("");
        if let Some(c) = controller {
            if !super_options.split(',').any(|o| o == c) {
                continue;
            }
        }
        let fields: Vec<&str> = before.split_whitespace().collect();
        if fields.len() >= 5 && fields[3] == "/" {
            return Some(PathBuf::from(unescape_mount(fields[4])));
        }
    }
    None
}

fn unescape_mount(path: &str) -> String {
    path.replace("\\040", " ")
        .replace("\\011", "\t")
        .replace("\\012", "\n")
        .replace("\\134", "\\")
}

/// Whether groups can be created below `own`: its `mccbuild` folder exists or can be made, and
/// is writable. (Not by making and removing a probe group: each costs milliseconds in v1.)
fn usable(own: PathBuf) -> Option<Hierarchy> {
    let base = own.join("mccbuild");
    let path = std::ffi::CString::new(base.as_os_str().as_encoded_bytes()).ok()?;
    // SAFETY: access on a valid C string.
    let writable = || unsafe { libc::access(path.as_ptr(), libc::W_OK) } == 0;
    // Most often it is there already: one system call.
    (writable() || (fs::create_dir_all(&base).is_ok() && writable())).then_some(Hierarchy { own })
}

/// cgroup v2's "no internal processes" rule: to give children controllers, this process moves
/// into a leaf of its own group first.
fn enable_controllers(own: &Path, controller: &str) -> bool {
    let base = own.join("mccbuild");
    if fs::create_dir_all(&base).is_err() {
        return false;
    }
    let ok = fs::write(own.join("cgroup.subtree_control"), format!("+{controller}")).is_ok() || {
        let leaf = own.join("mccbuild-main");
        fs::create_dir_all(&leaf).is_ok()
            && fs::write(leaf.join("cgroup.procs"), std::process::id().to_string()).is_ok()
            && fs::write(own.join("cgroup.subtree_control"), format!("+{controller}")).is_ok()
    };
    ok && fs::write(
        base.join("cgroup.subtree_control"),
        format!("+{controller}"),
    )
    .is_ok()
}
