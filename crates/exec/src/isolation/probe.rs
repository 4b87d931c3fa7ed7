//! Whether runs can be isolated on this host: a real process given a whole view.

use std::io;
use std::path::Path;

use super::failure::describe_apply_error;
use super::host_mounts::HostMounts;
use super::plan::{IsolationPlan, IsolationRequest};
use super::prepared::Prepared;

/// Whether runs can be isolated here: root, and a real process can be given a view
/// ([`Prepared::enter`], all of it) and run `/bin/true` in it. Checked once per executor.
pub(crate) fn probe() -> Result<(), String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err("mccbuild does not run as root".into());
    }
    let dir = std::env::temp_dir().join(format!("mccbuild-probe-{}", crate::owner::tag()));
    std::fs::create_dir_all(&dir)
        .map_err(|e| format!("cannot make {} to probe in: {e}", dir.display()))?;
    let result = probe_in(&dir);
    let _ = std::fs::remove_dir_all(&dir);
    result
}

fn probe_in(dir: &Path) -> Result<(), String> {
    let host =
        HostMounts::of_this_host().map_err(|e| format!("cannot read /proc/self/mountinfo: {e}"))?;
    let plan = IsolationPlan::new(
        &IsolationRequest {
            run_dir: dir,
            read_only: Vec::new(),
            hidden: Vec::new(),
            fresh: Vec::new(),
        },
        &host,
        Path::exists,
    );
    let prepared = Prepared::new(&plan, dir).map_err(|e| e.to_string())?;
    let spawned = crate::spawn::spawn(crate::spawn::Launch {
        program: Path::new("/bin/true"),
        args: &[],
        env: &[],
        cores: &[],
        isolation: &prepared,
        cgroup: None,
        memory_limit_bytes: 0,
        namespaces: None,
    })
    .map_err(|e| describe_apply_error(&e))?;
    let mut status = 0;
    // SAFETY: waiting for our own child.
    while unsafe { libc::waitpid(spawned.pid, &mut status, 0) } < 0 {
        if io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return Err(format!(
                "waiting for the probe: {}",
                io::Error::last_os_error()
            ));
        }
    }
    let status = spawned.status.tool_status().unwrap_or(status);
    if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 {
        Ok(())
    } else {
        Err(format!(
            "/bin/true in a sandbox ended with wait status {status}"
        ))
    }
}
