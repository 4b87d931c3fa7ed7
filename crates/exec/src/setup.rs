//! Tool setup: a tool's optional preparation command (build a binary, create a venv and pip
//! install...), run once per tool identity. What it produces lives in the store
//! (`tools/<setup digest>/bin/`, given to the tool as BK_BIN_PATH), never under the tool's folder.

use std::fs;
use std::io::Write;
use std::os::unix::io::AsRawFd;
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

/// The folder a tool's runs get as BK_BIN_PATH, after running its setup if needed.
/// `on_start` is called before a setup command actually runs (for progress output).
pub fn ensure_setup(
    store: &Store,
    tool: &Tool,
    identity: &ToolIdentity,
    on_start: &mut dyn FnMut(&str),
) -> Result<PathBuf, String> {
    let Some(dir_of_tool) = &tool.dir else {
        return Err(format!(
            "tool `{}` has no folder: its runs come from results files (`mccbuild import`)",
            tool.name
        ));
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
    fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    // One setup at a time per identity, across processes.
    let lock = fs::File::create(dir.join(".lock"))
        .map_err(|e| format!("cannot lock {}: {e}", dir.display()))?;
    // SAFETY: flock on a file descriptor we own.
    unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) };
    if is_done(&marker) {
        return Ok(bin);
    }
    on_start(&tool.name);
    let _ = fs::remove_dir_all(&bin);
    fs::create_dir_all(&bin).map_err(|e| format!("cannot create {}: {e}", bin.display()))?;
    let log_path = dir.join("setup.log");
    let log = fs::File::create(&log_path)
        .map_err(|e| format!("cannot write {}: {e}", log_path.display()))?;
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
        .stdout(log.try_clone().map_err(|e| e.to_string())?)
        .stderr(log)
        .status()
        .map_err(|e| format!("cannot start the setup of tool {}: {e}", tool.name))?;
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
        return Err(format!(
            "the setup of tool `{}` failed ({status}) after {seconds:.1} s; its runs are not executed.\n  command: {command}\n  log: {}\n{}",
            tool.name,
            log_path.display(),
            tail.iter().map(|l| format!("    | {l}")).collect::<Vec<_>>().join("\n")
        ));
    }
    write_atomically(
        &marker,
        serde_json::to_string_pretty(&record)
            .unwrap_or_default()
            .as_bytes(),
    )
    .map_err(|e| format!("cannot write {}: {e}", marker.display()))?;
    Ok(bin)
}

fn is_done(marker: &std::path::Path) -> bool {
    fs::read(marker)
        .ok()
        .and_then(|b| serde_json::from_slice::<SetupRecord>(&b).ok())
        .is_some_and(|r| r.status == "ok")
}
