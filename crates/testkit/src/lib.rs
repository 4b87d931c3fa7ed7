//! What the tests of every crate share: the one way a test skips ([`skip`]) and where the
//! shared data is ([`mcc_data`]). A dev-dependency only.
//!
//! A test that needs something the machine lacks (root, cgroups, QEMU, Slurm, chromium, the
//! MCC data...) calls [`skip`] with what is missing:
//! - in CI (`CI=true` or `CI=1`) the test fails: CI installs everything (`.ci/run`), so a skip
//!   there would hide a test that did not run;
//! - elsewhere it fails too, naming what is missing and how to get it, unless
//!   `MCCBUILD_ALLOW_SKIP=1` is set: then it writes `SKIPPED <test>: <reason>` on the terminal
//!   (straight to standard error, which the test runner does not capture) and into
//!   `target/skipped-tests.txt`, and returns; `scripts/test` lists that file at its end and fails
//!   when it is not empty. No run that skipped a test is ever green.

#![forbid(unsafe_code)]

use std::io::Write;
use std::path::{Path, PathBuf};

/// Whether this process runs in CI.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// The test cannot run here because of `reason` (what is missing, and how to get it). Fails the
/// test unless skipping is allowed outside CI (see the crate's documentation); returns when the
/// test is to end as skipped.
pub fn skip(reason: &str) {
    if in_ci() {
        panic!("cannot skip in CI: {reason}");
    }
    if std::env::var("MCCBUILD_ALLOW_SKIP").map_or(true, |v| v != "1") {
        panic!(
            "{reason}\n(this test needs it: install it, or set MCCBUILD_ALLOW_SKIP=1 to skip such tests on this machine; they are then listed as SKIPPED and scripts/test fails)"
        );
    }
    let test = std::thread::current()
        .name()
        .unwrap_or("a test")
        .to_string();
    let line = format!("SKIPPED {test}: {reason}\n");
    let _ = std::io::stderr().write_all(line.as_bytes());
    let log = skipped_log();
    if let Some(parent) = log.parent() {
        let _ = std::fs::create_dir_all(parent);
    }
    if let Ok(mut file) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log)
    {
        let _ = file.write_all(line.as_bytes());
    }
}

/// Where skipped tests are listed: `MCCBUILD_SKIPPED_LOG` (scripts/test sets it), else
/// `target/skipped-tests.txt` of the workspace.
pub fn skipped_log() -> PathBuf {
    std::env::var_os("MCCBUILD_SKIPPED_LOG")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace().join("target/skipped-tests.txt"))
}

/// The workspace's root folder.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `../shared/data/mcc2025` beside the checkout (the real MCC 2025 inputs and answers), or
/// None when it is absent and the test is to end as skipped (see [`skip`]).
pub fn mcc_data() -> Option<PathBuf> {
    let path = workspace().join("../shared/data/mcc2025");
    if path.is_dir() {
        Some(path)
    } else {
        skip(&format!(
            "the MCC data is not at {} (the shared data is read beside the checkout)",
            path.display()
        ));
        None
    }
}
