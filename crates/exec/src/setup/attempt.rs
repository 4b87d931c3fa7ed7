//! A setup's attempts: each setup builds into a private folder of the identity's folder,
//! `attempt-<pid>.<start>/bin` (its owner's tag, see `owner`), moved to `bin` only when it
//! succeeded. An attempt folder found later (under the identity's lock, so its owner no longer
//! sets up) is what a killed or failed setup left: its processes, if any survived, are killed,
//! then it is removed. A half-made setup is therefore never used, and two setups never write
//! into the same folder.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rustix::process::{Pid, Signal, kill_process};

use super::process::ATTEMPT_VAR;

/// The prefix of attempt folders' names.
const PREFIX: &str = "attempt-";

/// This process's attempt folder in the identity's folder `dir`.
pub fn folder(dir: &Path) -> PathBuf {
    dir.join(format!("{PREFIX}{}", crate::owner::tag()))
}

/// Removes the attempt folders of `dir` (the identity's lock held), first killing the processes
/// of each that still run; returns how many folders were removed.
pub fn reclaim(dir: &Path) -> usize {
    let Ok(entries) = fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        if !name.to_str().is_some_and(|n| n.starts_with(PREFIX)) {
            continue;
        }
        let path = entry.path();
        kill_survivors(&path);
        if fs::remove_dir_all(&path).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// Kills every process whose environment names the attempt `attempt` (all a setup's processes
/// do, see `process`), until none is left (a process may fork meanwhile); gives up after 5 s.
fn kill_survivors(attempt: &Path) {
    let mut marker = format!("{ATTEMPT_VAR}=").into_bytes();
    marker.extend_from_slice(attempt.as_os_str().as_encoded_bytes());
    for _ in 0..250 {
        let found = processes_with(&marker);
        if found.is_empty() {
            return;
        }
        for pid in found {
            if let Some(pid) = Pid::from_raw(pid) {
                let _ = kill_process(pid, Signal::KILL);
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The live processes (not zombies) whose environment holds the entry `entry`.
fn processes_with(entry: &[u8]) -> Vec<i32> {
    let me = std::process::id() as i32;
    let Ok(proc) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    proc.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| pid != me)
        .filter(|pid| {
            fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.split(|b| *b == 0).any(|var| var == entry))
        })
        .filter(|pid| !is_zombie(*pid))
        .collect()
}

/// Whether `pid` has ended and waits to be reaped (it holds nothing: not a survivor).
fn is_zombie(pid: i32) -> bool {
    crate::read_text(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with(['Z', 'X']))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    /// A survivor of an attempt (a process naming it in its environment, as a setup's
    /// processes do) is killed, and the attempt's folder removed; other folders stay.
    #[test]
    fn an_attempts_survivors_are_killed_and_its_folder_removed() {
        let dir = tempfile::tempdir().unwrap();
        let attempt = dir.path().join("attempt-999999999.5");
        fs::create_dir_all(attempt.join("bin")).unwrap();
        fs::create_dir_all(dir.path().join("bin")).unwrap();
        let mut survivor = Command::new("/bin/sleep")
            .arg("60")
            .env(ATTEMPT_VAR, &attempt)
            .spawn()
            .unwrap();
        // The environment is read from /proc once the process executed.
        while processes_with(
            &[
                format!("{ATTEMPT_VAR}=").as_bytes(),
                attempt.as_os_str().as_encoded_bytes(),
            ]
            .concat(),
        )
        .is_empty()
        {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(reclaim(dir.path()), 1);
        assert!(!attempt.exists());
        assert!(dir.path().join("bin").exists());
        let status = survivor.wait().unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(libc::SIGKILL));
    }
}
