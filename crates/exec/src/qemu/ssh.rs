//! The image guest driven over ssh: a forwarded local port, the image's key, waiting for the
//! guest to answer, then starting the runner and powering the guest off.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::{QemuExecutor, find_program};
use crate::InfraError;

impl QemuExecutor {
    pub(super) fn ssh_key(&self, image: &Path) -> PathBuf {
        self.config
            .ssh_key
            .clone()
            .unwrap_or_else(|| image.with_extension("key"))
    }
}

/// Image kind: waits until the guest answers ssh (as root, with the image's key), then mounts
/// the run's share and starts the runner; powers the guest off at once afterwards (the VM is
/// thrown away). Stops when `stop` is raised (the VM ended or was killed).
pub(super) fn drive_over_ssh(
    port: u16,
    key: &Path,
    boot_deadline: Instant,
    stop: &AtomicBool,
    boot_failed: &AtomicBool,
    log: &Path,
) {
    let ssh = |remote: &str| -> Command {
        let mut c = Command::new(which_ssh().unwrap_or_else(|| "ssh".into()));
        c.args([
            "-q",
            "-o",
            "BatchMode=yes",
            "-o",
            "StrictHostKeyChecking=no",
            "-o",
            "UserKnownHostsFile=/dev/null",
            "-o",
            "ConnectTimeout=5",
            "-o",
            "ServerAliveInterval=5",
            "-o",
            "ServerAliveCountMax=3",
            "-i",
        ])
        .arg(key)
        .args(["-p", &port.to_string(), "root@127.0.0.1", remote])
        .stdin(Stdio::null());
        if let Ok(f) = fs::OpenOptions::new().create(true).append(true).open(log) {
            if let Ok(g) = f.try_clone() {
                c.stdout(g);
            }
            c.stderr(f);
        }
        c
    };
    let run_until_stop = |mut command: Command| -> Option<bool> {
        let mut child = command.spawn().ok()?;
        loop {
            if let Ok(Some(status)) = child.try_wait() {
                return Some(status.success());
            }
            if stop.load(Ordering::Relaxed) {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    };
    loop {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        if Instant::now() >= boot_deadline {
            boot_failed.store(true, Ordering::Relaxed);
            return;
        }
        match run_until_stop(ssh("true")) {
            None => return,
            Some(true) => break,
            Some(false) => std::thread::sleep(Duration::from_millis(500)),
        }
    }
    run_until_stop(ssh(
        "mkdir -p /mnt/mccout && mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 mccout /mnt/mccout && sh /mnt/mccout/runner.sh; sync; echo o > /proc/sysrq-trigger",
    ));
}

pub(super) fn free_port() -> Result<u16, InfraError> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| InfraError(format!("no free local port for the guest's ssh: {e}")))
}

pub(super) fn which_ssh() -> Option<PathBuf> {
    find_program("ssh")
}
