//! The versions of a tool the store holds runs of (`mccbuild diff --tool T --list`): each with
//! the digest of its folder, when its runs were first and last executed, how many of its runs
//! the store holds, and the git revision of its folder when it ran.

use std::fmt::Write as _;

use serde::Serialize;

/// One version of a tool.
#[derive(Clone, Debug, Default, Serialize)]
pub struct VersionInfo {
    /// The digest of everything that makes the version (its folder's files, entry, setup,
    /// BK_TOOL, user, cores, host packages), in hex: what `--against` matches.
    pub digest: String,
    /// The digest of its folder's files alone, in hex.
    pub files: String,
    /// When its runs were first and last executed (RFC 3339, UTC).
    pub first_run: Option<String>,
    pub last_run: Option<String>,
    /// Its runs of the contest's examination instances that the store holds.
    pub runs: usize,
    /// `git rev-parse HEAD` in its folder when its runs were first executed, with `+changes`
    /// when files of the folder differed from that revision; none outside a git work tree.
    pub git: Option<String>,
    /// The version the tool's folder is now.
    pub current: bool,
}

impl VersionInfo {
    /// The first 12 hex digits of its digest: how the text names it.
    pub fn short(&self) -> &str {
        self.digest.get(..12).unwrap_or(&self.digest)
    }
}

/// The versions as text (`diff --tool T --list`), the oldest first.
pub fn versions_text(tool: &str, versions: &[VersionInfo]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "versions of {tool} in the store (the oldest first; `--against DIGEST|REVISION|DATE` picks one):"
    );
    let _ = writeln!(
        out,
        "  {:<12}  {:<24}  {:<24}  {:>6}  git revision",
        "digest", "first run", "last run", "runs"
    );
    for v in versions {
        let _ = writeln!(
            out,
            "  {:<12}  {:<24}  {:<24}  {:>6}  {}{}",
            v.short(),
            v.first_run.as_deref().unwrap_or("-"),
            v.last_run.as_deref().unwrap_or("-"),
            v.runs,
            v.git.as_deref().unwrap_or("-"),
            if v.current { "  (current)" } else { "" }
        );
    }
    out
}
