//! The integration tests: the real `mccbuild` binary driven in temporary folders, one test
//! binary with one module per suite. A suite is chosen by its module path, e.g.
//! `cargo test --release --test it -- slurm::` runs the Slurm suite alone (scripts/test runs each
//! suite so, and checks that every suite's filter selects exactly that module's tests).
//! `common` is the harness the suites share.
//!
//! Where the text a command prints is the contract, a test compares it whole with a snapshot in
//! `snapshots/` (insta; `common::output_settings` writes the temporary folder and the repository
//! as `[CONTEST]` and `[REPO]`). A snapshot that differs or is missing fails the test. Outside CI
//! insta writes the new text beside it (`.snap.new`) for `cargo insta review`; in CI
//! (`CI=true`) and under scripts/test (`INSTA_UPDATE=no`) nothing is written.

mod common;

mod archives;
mod cli;
mod demo;
mod diagnostics;
mod diff;
mod docs;
mod exit_codes;
mod export;
mod golden_rules;
mod import;
mod noop;
mod promises;
mod qemu;
mod qualify;
mod reference;
mod replay;
mod report;
mod rerun;
mod sandbox;
mod setups;
mod slurm;
mod soak;
mod store;
mod submission;
mod svcomp;
mod tool_copies;
mod ux;
mod watch;
