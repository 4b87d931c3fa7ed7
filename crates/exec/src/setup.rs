//! Tool setup: a tool's optional preparation command (build a binary, create a venv and pip
//! install...), run once per tool identity. What it produces lives in the store
//! (`tools/<setup digest>/bin/`, given to the tool as BK_BIN_PATH), never under the tool's folder.

use std::fs;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use mccbuild_core::fsio::write_atomically;
use mccbuild_core::hex;
use mccbuild_plan::key::ToolIdentity;
use mccbuild_plan::manifest::Tool;
use mccbuild_store::Store;

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
/// `on_start` is called before a setup command actually runs (for progress output).
pub fn ensure_setup(
    store: &Store,
    tool: &Tool,
    identity: &ToolIdentity,
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
    // Not holding it, the setup could run twice at once into the same folder: an error is the
    // setup's failure (a signal only interrupts the wait).
    loop {
        match rustix::fs::flock(&lock, rustix::fs::FlockOperation::LockExclusive) {
            Ok(()) => break,
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(io("lock", &dir.join(".lock"))(e.into())),
        }
    }
    if is_done(&marker) {
        return Ok(bin);
    }
    on_start(&tool.name);
    let _ = fs::remove_dir_all(&bin);
    fs::create_dir_all(&bin).map_err(io("create", &bin))?;
    let log_path = dir.join("setup.log");
    let log = fs::File::create(&log_path).map_err(io("write", &log_path))?;
    let start = Instant::now();
    let mut bin_env = bin.to_string_lossy().into_owned();
    bin_env.push('/');
    let status = Command::new("/bin/sh")
        .arg("-c")
        .arg(command)
        .current_dir(dir_of_tool)
        .env("BK_BIN_PATH", &bin_env)
        .env("MCC_TOOL_DIR", dir_of_tool)
        .env("BK_TOOL", &tool.name)
        .stdin(Stdio::null())
        .stdout(log.try_clone().map_err(io("write", &log_path))?)
        .stderr(log)
        .status()
        .map_err(|source| SetupError::NotStarted {
            tool: tool.name.clone(),
            source,
        })?;
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
        .arg(&bin)
        .status();
    if !readable.as_ref().is_ok_and(|s| s.success()) {
        return Err(SetupError::Io {
            what: "make readable by the runs' user",
            path: bin.clone(),
            source: std::io::Error::other(format!("chmod -R a+rX: {readable:?}")),
        });
    }
    write_atomically(
        &marker,
        serde_json::to_string_pretty(&record)
            .unwrap_or_default()
            .as_bytes(),
    )
    .map_err(io("write", &marker))?;
    Ok(bin)
}

fn is_done(marker: &std::path::Path) -> bool {
    fs::read(marker)
        .ok()
        .and_then(|b| serde_json::from_slice::<SetupRecord>(&b).ok())
        .is_some_and(|r| r.status == "ok")
}
