//! Moving into a run's groups: the calling thread alone, for the time of a clone (so that the
//! run's process is born there), or a process by its pid.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::RunCgroup;

impl RunCgroup {
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
