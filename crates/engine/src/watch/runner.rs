//! The `mccbuild run` child of `watch --run`: started for the runs a change makes necessary,
//! one at a time.

use std::path::{Path, PathBuf};

use crate::progress::count;

/// The `mccbuild run` child of `watch --run`.
pub(super) struct Runner {
    pub(super) manifest: PathBuf,
    pub(super) enabled: bool,
    pub(super) child: Option<std::process::Child>,
    /// A re-plan with runs to do while a child is still going: start another after it.
    pub(super) wanted: bool,
}

impl Runner {
    /// Starts a child for the missing runs when one is wanted and none is going.
    pub(super) fn poll(&mut self, missing: impl FnOnce() -> usize) {
        if let Some(c) = &mut self.child {
            if let Ok(Some(_)) = c.try_wait() {
                self.child = None;
            }
        }
        if self.wanted && self.child.is_none() {
            self.wanted = false;
            self.child = spawn_run(&self.manifest, missing());
        }
    }

    /// Interrupts the child (the watch was told to stop), and waits for it.
    pub(super) fn interrupt(&mut self) {
        if let Some(mut c) = self.child.take() {
            // Our own child, whose pid it still is (not waited for yet).
            if let Some(pid) = rustix::process::Pid::from_raw(c.id() as i32) {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::INT);
            }
            let _ = c.wait();
        }
    }

    /// Waits for the child, if one is going (the watch ends).
    pub(super) fn wait(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.wait();
        }
    }
}

/// Starts `mccbuild run` for the runs a change made necessary.
fn spawn_run(manifest: &Path, missing: usize) -> Option<std::process::Child> {
    if missing == 0 {
        return None;
    }
    eprintln!(
        "running {} (their records are applied as they arrive)",
        count(missing, "run", "runs")
    );
    let exe = std::env::current_exe().ok()?;
    std::process::Command::new(exe)
        .args(["run", "--json", "--manifest"])
        .arg(manifest)
        .stdout(std::process::Stdio::null())
        .spawn()
        .map_err(|e| eprintln!("error: cannot start mccbuild run: {e}"))
        .ok()
}
