//! Per-run control groups: limits, measurement and killing of a run's whole process tree.
//!
//! What the host offers is detected, never assumed (see docs/execution.md):
//! - cgroup v1 hierarchies (`memory`, `cpuacct`, `pids`, `freezer`), with groups created under
//!   this process's own group of each hierarchy (it is not always the root);
//! - the cgroup v2 hierarchy, alone or beside v1: its core files give `cgroup.kill` (the whole tree
//!   at once, orphans included), `cgroup.events` and `cpu.stat` even without controllers, and its
//!   `memory`/`pids` controllers when v1 does not hold them.
//!
//! Each part (CPU, memory, pids, kill) comes from wherever it is available. A run's groups are
//! created fresh (so the memory peak is the run's own), joined by the tool's first process
//! before it executes anything, emptied, read and removed after the run.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// One cgroup hierarchy this process can create groups in.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Hierarchy {
    /// The folder of this process's own group in that hierarchy (the parent of ours).
    own: PathBuf,
}

/// What the host offers, found once per process.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CgroupSupport {
    v1_memory: Option<Hierarchy>,
    v1_cpuacct: Option<Hierarchy>,
    v1_pids: Option<Hierarchy>,
    v1_freezer: Option<Hierarchy>,
    v2: Option<Hierarchy>,
    v2_memory: bool,
    v2_pids: bool,
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

fn mount_point(mountinfo: &str, fstype: &str, controller: Option<&str>) -> Option<PathBuf> {
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

/// The groups of one run.
#[derive(Debug, Default)]
pub struct RunCgroup {
    memory: Option<PathBuf>,
    cpuacct: Option<PathBuf>,
    pids: Option<PathBuf>,
    freezer: Option<PathBuf>,
    v2: Option<PathBuf>,
    v2_memory: bool,
    v2_pids: bool,
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

    /// Moves the calling thread, and only it, into each of the group's cgroup v1 hierarchies
    /// (a write of `0` to each `tasks` file), so that a process it forks from then on is born
    /// there; [`ThreadInGroup::leave`] moves it back to mccbuild's own groups.
    ///
    /// Why not move the run's process (a write of its pid to `cgroup.procs`): that takes the
    /// kernel's global thread-group semaphore for writing, whose first writer after a quiet
    /// while waits for an RCU grace period (6-14 ms here), holding `cgroup_mutex` all along, so
    /// that every cgroup operation of the machine waits too. A thread moving itself needs
    /// neither (kernel/cgroup/cgroup.c, `cgroup_procs_write_start`: "If we migrate a single
    /// thread ... we can skip the global lock"): 0.2-0.3 ms, cold or not.
    ///
    /// While the thread is in the groups, the kernel charges what it allocates for itself to
    /// the run's memory group (a fork's page tables and task: the run's process's own), and a
    /// memory-cgroup OOM kill there could pick mccbuild: the memory limit is therefore set only
    /// after the thread left ([`RunCgroup::set_memory_limit`]). A failure leaves the thread
    /// where it was; the first failure is the error, naming the file.
    pub fn enter_v1_as_thread(&self) -> io::Result<ThreadInGroup> {
        let dirs: Vec<&PathBuf> = self.v1_dirs().collect();
        let mut placed = ThreadInGroup {
            homes: Vec::new(),
            _thread: std::marker::PhantomData,
        };
        for dir in dirs {
            let home = home_of(dir)?;
            move_this_thread(dir)?;
            placed.homes.push(home);
        }
        Ok(placed)
    }

    /// The group's folders in its cgroup v1 hierarchies.
    fn v1_dirs(&self) -> impl Iterator<Item = &PathBuf> {
        [&self.memory, &self.cpuacct, &self.pids, &self.freezer]
            .into_iter()
            .flatten()
    }

    /// The group's folder in each hierarchy it has.
    fn dirs(&self) -> impl Iterator<Item = &PathBuf> {
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

/// The calling thread inside a run's cgroup v1 groups ([`RunCgroup::enter_v1_as_thread`]),
/// until [`ThreadInGroup::leave`]; dropped without it, it leaves as well (errors ignored).
#[must_use = "the thread must leave the run's groups"]
pub struct ThreadInGroup {
    /// mccbuild's own group of each hierarchy entered (where the thread goes back).
    homes: Vec<PathBuf>,
    /// Not `Send`: only the thread that entered may leave.
    _thread: std::marker::PhantomData<*const ()>,
}

impl ThreadInGroup {
    /// Moves the calling thread (the one that entered) back into mccbuild's own groups. An
    /// error if one move failed (the others are made): the thread is then still in that run
    /// group, which cannot be removed while it is.
    pub fn leave(mut self) -> io::Result<()> {
        let mut result = Ok(());
        for home in std::mem::take(&mut self.homes) {
            if let Err(e) = move_this_thread(&home) {
                result = result.and(Err(e));
            }
        }
        result
    }
}

impl Drop for ThreadInGroup {
    fn drop(&mut self) {
        for home in &self.homes {
            let _ = move_this_thread(home);
        }
    }
}

/// mccbuild's own group of the hierarchy of a run's group `dir` (`<own>/mccbuild/<run>`).
fn home_of(dir: &Path) -> io::Result<PathBuf> {
    dir.parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .ok_or_else(|| io::Error::other(format!("{} is no run's group", dir.display())))
}

/// Moves the calling thread alone into the cgroup v1 group `dir` (`0` written to its `tasks`).
fn move_this_thread(dir: &Path) -> io::Result<()> {
    use std::io::Write;
    let tasks = dir.join("tasks");
    fs::OpenOptions::new()
        .write(true)
        .open(&tasks)
        .and_then(|mut f| f.write_all(b"0"))
        .map_err(|e| {
            io::Error::other(format!(
                "cannot move mccbuild's thread into {}: {e}",
                tasks.display()
            ))
        })
}

/// Moves process `pid` into the groups whose `cgroup.procs` files are `procs` (a write to each);
/// the first failure is the error, naming the file.
pub fn move_into(pid: libc::pid_t, procs: &[PathBuf]) -> io::Result<()> {
    use std::io::Write;
    let pid = pid.to_string();
    for path in procs {
        fs::OpenOptions::new()
            .write(true)
            .open(path)
            .and_then(|mut f| f.write_all(pid.as_bytes()))
            .map_err(|e| {
                io::Error::other(format!(
                    "cannot move the run's process into {}: {e}",
                    path.display()
                ))
            })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The groups of `/proc/<who>/cgroup` (hierarchy id and controllers -> path), v1 only.
    fn v1_groups(who: &str) -> Vec<String> {
        fs::read_to_string(format!("/proc/{who}/cgroup"))
            .unwrap()
            .lines()
            .filter(|l| !l.starts_with("0::"))
            .map(str::to_string)
            .collect()
    }

    /// A thread that entered a run's cgroup v1 groups forks a process born in them (memory and
    /// pids: what a run's limits and measurements are), then leaves alone: it is back in
    /// mccbuild's own groups, the process stays, and the other threads never moved. The run's
    /// groups then hold the process alone (`tasks`), so that they can be emptied and removed.
    #[test]
    fn a_thread_in_a_runs_groups_forks_into_them_and_leaves_alone() {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            mccbuild_testkit::skip("cgroups need root");
            return;
        }
        let support = CgroupSupport::detect();
        if support.v1_memory.is_none() || support.v1_pids.is_none() {
            mccbuild_testkit::skip("no cgroup v1 memory and pids hierarchies here");
            return;
        }
        let name = format!("test-{}-thread", crate::owner::tag());
        let group = support.create(&name).unwrap();
        let own = v1_groups("thread-self");
        let (child, inside, after) = std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    let placed = group.enter_v1_as_thread().unwrap();
                    let inside = v1_groups("thread-self");
                    let child = std::process::Command::new("sleep")
                        .arg("5")
                        .spawn()
                        .unwrap();
                    placed.leave().unwrap();
                    (child, inside, v1_groups("thread-self"))
                })
                .join()
                .unwrap()
        });
        let mut child = child;
        let theirs = v1_groups(&child.id().to_string());
        let _ = child.kill();
        let _ = child.wait();
        for groups in [&inside, &theirs] {
            let runs: Vec<&String> = groups.iter().filter(|l| l.contains(&name)).collect();
            assert_eq!(runs.len(), 2, "memory and pids: {groups:?}");
        }
        assert_eq!(after, own, "the thread is back where it was");
        assert_eq!(v1_groups("self"), own, "the main thread never moved");
        assert!(group.kill_all(Duration::from_secs(5)));
        for dir in group.v1_dirs() {
            let tasks = fs::read_to_string(dir.join("tasks")).unwrap();
            assert_eq!(tasks, "", "{} holds no thread of mccbuild", dir.display());
        }
        group.remove();
        assert!(group.dirs().all(|d| !d.exists()), "removed");
    }

    #[test]
    fn mount_points_are_read_from_mountinfo() {
        let info = "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n\
                    35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n\
                    41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
        assert_eq!(
            mount_point(info, "cgroup", Some("memory")),
            Some(PathBuf::from("/sys/fs/cgroup/memory"))
        );
        assert_eq!(mount_point(info, "cgroup", Some("pids")), None);
        assert_eq!(
            mount_point(info, "cgroup2", None),
            Some(PathBuf::from("/sys/fs/cgroup/unified"))
        );
        // A bind mount of a subfolder is not a hierarchy's root.
        let bind = "50 31 0:32 /sub /mnt/mem rw - cgroup cgroup rw,memory\n";
        assert_eq!(mount_point(bind, "cgroup", Some("memory")), None);
    }
}
