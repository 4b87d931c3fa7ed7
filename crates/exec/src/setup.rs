//! Tool setup: a tool's optional preparation command (build a binary, create a venv and pip
//! install...), run once per tool identity. What it produces lives in the store
//! (`tools/<setup digest>/bin/`, given to the tool as BK_BIN_PATH), never under the tool's folder.
//!
//! The files: this one runs a setup and moves its products into place; `process` holds its
//! processes (a group of their own, killed with mccbuild); `attempt` the private folder each
//! setup builds into, and reclaiming what a killed one left.

mod attempt;
mod process;

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use mccbuild_core::fsio::write_atomically;
use mccbuild_core::hex;
use mccbuild_plan::key::ToolIdentity;
use mccbuild_plan::manifest::Tool;
use mccbuild_store::Store;

use self::process::Ended;

#[derive(Serialize, Deserialize)]
struct SetupRecord {
    status: String,
    command: String,
    tool_dir: String,
    seconds: f64,
    finished_at: String,
    mccbuild_version: String,
}

/// Why a tool's runs cannot get their setup products.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error("tool `{0}` has no folder: its runs come from results files (`mccbuild import`)")]
    NoFolder(String),
    #[error("cannot {what} {}: {source}", path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot start the setup of tool {tool}: {source}")]
    NotStarted {
        tool: String,
        source: std::io::Error,
    },
    /// Stopped by SIGINT, SIGTERM...: its processes were killed, nothing of it is kept.
    #[error("the setup of tool `{0}` was interrupted")]
    Interrupted(String),
    #[error("the setup of tool `{tool}` failed ({status}) after {seconds:.1} s; its runs are not executed.\n  command: {command}\n  log: {}\n{}", log.display(), tail.iter().map(|l| format!("    | {l}")).collect::<Vec<_>>().join("\n"))]
    Failed {
        tool: String,
        status: std::process::ExitStatus,
        seconds: f64,
        command: String,
        log: PathBuf,
        /// The last lines of its log.
        tail: Vec<String>,
    },
}

/// An I/O error doing `what` on `path`.
fn io(
    what: &'static str,
    path: &std::path::Path,
) -> impl FnOnce(std::io::Error) -> SetupError + use<> {
    let path = path.to_path_buf();
    move |source| SetupError::Io { what, path, source }
}

/// The folder a tool's runs get as BK_BIN_PATH, after running its setup if needed.
/// `on_start` is called before a setup command actually runs (for progress output). When
/// `cancel` is set (SIGINT, SIGTERM...) while the setup runs or waits for another process's
/// setup of the same identity, its processes are killed and [`SetupError::Interrupted`] comes
/// back within a fraction of a second.
///
/// The setup builds into a private attempt folder (`attempt`), moved to
/// `tools/<setup digest>/bin` only when it succeeded, and then marked done (`setup.json`): a
/// killed or failed setup leaves no `bin` to use, and what it left is reclaimed by the next one.
/// Moving the products is sound because runs never see them at the path they were built at
/// (each run gets its own view of them, `bin_view`, elsewhere): a setup whose products work
/// only where they were built would fail its runs anyway. The demo's venvs run from any path.
pub fn ensure_setup(
    store: &Store,
    tool: &Tool,
    identity: &ToolIdentity,
    cancel: &AtomicBool,
    on_start: &mut dyn FnMut(&str),
) -> Result<PathBuf, SetupError> {
    let Some(dir_of_tool) = &tool.dir else {
        return Err(SetupError::NoFolder(tool.name.clone()));
    };
    let Some(command) = &tool.setup else {
        return Ok(dir_of_tool.clone());
    };
    let dir = store.tools_dir().join(hex(&identity.setup_digest()));
    let bin = dir.join("bin");
    let marker = dir.join("setup.json");
    if is_done(&marker) {
        return Ok(bin);
    }
    fs::create_dir_all(&dir).map_err(io("create", &dir))?;
    // One setup at a time per identity, across processes.
    let lock = fs::File::create(dir.join(".lock")).map_err(io("lock", &dir))?;
    lock_or_cancel(&lock, &dir.join(".lock"), cancel, &tool.name)?;
    if is_done(&marker) {
        return Ok(bin);
    }
    // What a killed or failed setup of this identity left: its survivors, its attempt folder.
    attempt::reclaim(&dir);
    on_start(&tool.name);
    let attempt = attempt::folder(&dir);
    let attempt_bin = attempt.join("bin");
    fs::create_dir_all(&attempt_bin).map_err(io("create", &attempt_bin))?;
    let log_path = dir.join("setup.log");
    let log = fs::File::create(&log_path).map_err(io("write", &log_path))?;
    let start = Instant::now();
    let mut bin_env = attempt_bin.to_string_lossy().into_owned();
    bin_env.push('/');
    let mut shell = Command::new("/bin/sh");
    shell
        .arg("-c")
        .arg(command)
        .current_dir(dir_of_tool)
        .env("BK_BIN_PATH", &bin_env)
        .env("MCC_TOOL_DIR", dir_of_tool)
        .env("BK_TOOL", &tool.name)
        .stdin(Stdio::null())
        .stdout(log.try_clone().map_err(io("write", &log_path))?)
        .stderr(log);
    let ended = process::run_in_own_group(shell, &attempt, cancel).map_err(|source| {
        SetupError::NotStarted {
            tool: tool.name.clone(),
            source,
        }
    });
    let status = match ended {
        Ok(Ended::Exited(status)) => status,
        Ok(Ended::Interrupted) => {
            let _ = fs::remove_dir_all(&attempt);
            return Err(SetupError::Interrupted(tool.name.clone()));
        }
        Err(e) => {
            let _ = fs::remove_dir_all(&attempt);
            return Err(e);
        }
    };
    let seconds = start.elapsed().as_secs_f64();
    let record = SetupRecord {
        status: if status.success() {
            "ok".into()
        } else {
            format!("failed ({status})")
        },
        command: command.clone(),
        tool_dir: dir_of_tool.to_string_lossy().into_owned(),
        seconds,
        finished_at: crate::now_rfc3339(),
        mccbuild_version: env!("CARGO_PKG_VERSION").into(),
    };
    if !status.success() {
        let _ = fs::remove_dir_all(&attempt);
        let log_text = fs::read_to_string(&log_path).unwrap_or_default();
        let tail: Vec<&str> = log_text.lines().rev().take(15).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        let _ = fs::File::create(dir.join("setup.failed")).and_then(|mut f| {
            f.write_all(
                serde_json::to_string_pretty(&record)
                    .unwrap_or_default()
                    .as_bytes(),
            )
        });
        return Err(SetupError::Failed {
            tool: tool.name.clone(),
            status,
            seconds,
            command: command.clone(),
            log: log_path,
            tail: tail.into_iter().map(String::from).collect(),
        });
    }
    // Runs execute as the unprivileged user `mcc` (crate::run_user): the products must be
    // readable (and folders and programs enterable) by every user, whatever the setup's umask.
    let readable = Command::new("chmod")
        .args(["-R", "a+rX", "--"])
        .arg(&attempt_bin)
        .status();
    if !readable.as_ref().is_ok_and(|s| s.success()) {
        return Err(SetupError::Io {
            what: "make readable by the runs' user",
            path: attempt_bin.clone(),
            source: std::io::Error::other(format!("chmod -R a+rX: {readable:?}")),
        });
    }
    into_place(&attempt, &bin)?;
    write_atomically(
        &marker,
        serde_json::to_string_pretty(&record)
            .unwrap_or_default()
            .as_bytes(),
    )
    .map_err(io("write", &marker))?;
    let _ = fs::remove_file(dir.join("setup.failed"));
    Ok(bin)
}

/// Moves a succeeded attempt's products to `bin` (replacing what a setup killed between this
/// move and its marker left there), then syncs the folder: the marker written next is never
/// on disk before the products it marks.
fn into_place(attempt: &Path, bin: &Path) -> Result<(), SetupError> {
    if bin.exists() {
        fs::remove_dir_all(bin).map_err(io("replace", bin))?;
    }
    fs::rename(attempt.join("bin"), bin).map_err(io("move the products into", bin))?;
    let _ = fs::remove_dir_all(attempt);
    if let Some(dir) = bin.parent() {
        fs::File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(io("sync", dir))?;
    }
    Ok(())
}

/// Takes the identity's lock (`path`), waiting for another process's setup of it, unless
/// `cancel` is set meanwhile. Not holding it, the setup could run twice at once: an error is the
/// setup's failure.
fn lock_or_cancel(
    lock: &fs::File,
    path: &Path,
    cancel: &AtomicBool,
    tool: &str,
) -> Result<(), SetupError> {
    use rustix::fs::{FlockOperation, flock};
    loop {
        match flock(lock, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => return Ok(()),
            Err(rustix::io::Errno::WOULDBLOCK | rustix::io::Errno::INTR) => {}
            Err(e) => return Err(io("lock", path)(e.into())),
        }
        if cancel.load(Ordering::SeqCst) {
            return Err(SetupError::Interrupted(tool.to_string()));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn is_done(marker: &std::path::Path) -> bool {
    fs::read(marker)
        .ok()
        .and_then(|b| serde_json::from_slice::<SetupRecord>(&b).ok())
        .is_some_and(|r| r.status == "ok")
}
