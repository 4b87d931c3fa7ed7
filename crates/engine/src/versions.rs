//! The versions of each tool whose runs were executed into a store: one small file per version,
//! `tools/versions/<tool>/<version digest>.json` in the store, written when a version's runs
//! are executed. It holds the tool's identity (everything of it that is in its runs' keys:
//! `mccbuild_plan::key::ToolIdentity`), so the keys of that version's runs can be made again
//! after its folder has changed (`mccbuild diff --tool`: the store keeps every version's
//! records under their own keys), the git revision of its folder then, and when its runs were
//! first and last executed.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use mccbuild_core::fsio::write_atomically;
use mccbuild_core::hex;
use mccbuild_plan::key::ToolIdentity;
use mccbuild_store::Store;
use serde::{Deserialize, Serialize};

/// One version of a tool, as its file holds it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolVersion {
    /// The tool entry's name.
    pub tool: String,
    pub identity: ToolIdentity,
    /// `git rev-parse HEAD` in its folder when its runs were first executed, with `+changes`
    /// when the folder's files differed from it; none outside a git work tree.
    pub git: Option<String>,
    /// When its runs were first and last executed (RFC 3339, UTC).
    pub first_run: String,
    pub last_run: String,
}

impl ToolVersion {
    /// The version's digest (that of its runs' keys' tool part), in hex.
    pub fn digest(&self) -> String {
        hex(&self.identity.digest())
    }
}

/// The folder of a tool's versions (its name, with any character other than a letter, a digit,
/// `.`, `_` or `-` written `_`: each file also holds the exact name).
fn folder(store: &Store, tool: &str) -> PathBuf {
    let safe: String = tool
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    store.tools_dir().join("versions").join(safe)
}

/// Notes that runs of tool `identity` (whose folder is `dir`) are executed now: its version's
/// file is made (with the folder's git revision) or its last run moved to `now`.
pub fn note_version(
    store: &Store,
    identity: &ToolIdentity,
    dir: Option<&Path>,
    now: &str,
) -> std::io::Result<()> {
    let path = folder(store, &identity.name).join(format!("{}.json", hex(&identity.digest())));
    let version = match read(&path) {
        Some(mut known) if known.identity == *identity => {
            known.last_run = now.to_string();
            known
        }
        _ => ToolVersion {
            tool: identity.name.clone(),
            identity: identity.clone(),
            git: dir.and_then(git_revision),
            first_run: now.to_string(),
            last_run: now.to_string(),
        },
    };
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent)?;
    }
    let text = serde_json::to_string_pretty(&version).map_err(std::io::Error::other)?;
    write_atomically(&path, text.as_bytes())
}

/// Every version of tool `tool` the store has a file of, the oldest first (by first run). A
/// file that cannot be read is skipped: it only costs that version.
pub fn versions_of(store: &Store, tool: &str) -> Vec<ToolVersion> {
    let mut versions: Vec<ToolVersion> = fs::read_dir(folder(store, tool))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| read(&e.path()))
        .filter(|v| v.tool == tool)
        .collect();
    versions.sort_by(|a, b| a.first_run.cmp(&b.first_run));
    versions
}

fn read(path: &Path) -> Option<ToolVersion> {
    serde_json::from_slice(&fs::read(path).ok()?).ok()
}

/// The git revision of the work tree `dir` is in, with `+changes` when files under `dir`
/// differ from it; none when `dir` is in no work tree (or git is not installed).
fn git_revision(dir: &Path) -> Option<String> {
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
    };
    let head = git(&["rev-parse", "--verify", "HEAD"])?;
    // Without optional locks, `status` does not refresh git's index: a tool folder that holds
    // its `.git` keeps its digest.
    let changes =
        git(&["--no-optional-locks", "status", "--porcelain", "--", "."]).unwrap_or_default();
    Some(if changes.is_empty() {
        head
    } else {
        format!("{head}+changes")
    })
}
