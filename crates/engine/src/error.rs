//! Why the engine stopped short: one typed error per kind of failure, each saying what to do.
//! The binary maps them to exit codes (src/error.rs, docs/cli.md "Exit codes").

use std::path::PathBuf;

use mccbuild_core::diag::Problems;
use mccbuild_store::StoreError;

/// Why a session could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The manifest, the rules or the instances are invalid: every problem found.
    #[error("{0}")]
    Input(Problems),
    /// The command's filter names a tool or an examination the contest does not have (said
    /// before waiting for the store).
    #[error(transparent)]
    Select(#[from] SelectError),
    /// The store cannot be used.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<Problems> for OpenError {
    fn from(problems: Problems) -> Self {
        OpenError::Input(problems)
    }
}

/// A filter (`--tool`, `--model`, `--examination`) that names what the contest does not have.
#[derive(Debug, thiserror::Error)]
pub enum SelectError {
    /// `hint`: the nearest valid name and the valid ones (`mccbuild_core::names`).
    #[error("no tool `{tool}` in {}{hint}", manifest.display())]
    NoTool {
        tool: String,
        manifest: PathBuf,
        hint: String,
    },
    #[error("no model `{model}` in {}{hint}", manifest.display())]
    NoModel {
        model: String,
        manifest: PathBuf,
        hint: String,
    },
    #[error("no examination or category `{examination}` in {edition}{hint}")]
    NoExamination {
        examination: String,
        edition: String,
        hint: String,
    },
}

/// Why `mccbuild import FILE` read nothing.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The file cannot be found or read.
    #[error("cannot read {}: {source}", path.display())]
    Unreadable {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The file is not one of the contest's results files.
    #[error("{} is not a results file of {}: add it to `results` in [contest] (paths relative to the manifest)", path.display(), manifest.display())]
    NotAResultsFile { path: PathBuf, manifest: PathBuf },
    /// The plan in hand was not made from the results files.
    #[error("the plan was not made from the results files: run `mccbuild import` again")]
    PlanWithoutRows,
    /// The store cannot be written.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Why `mccbuild diff` compared nothing.
#[derive(Debug, thiserror::Error)]
pub enum DiffError {
    #[error("no tool `{tool}` in {}{hint}", manifest.display())]
    NoTool {
        tool: String,
        manifest: PathBuf,
        hint: String,
    },
    #[error("diff compares two tools: --old and --new name the same one")]
    SameTool,
    /// `diff --tool T` of a tool whose runs are imported, never executed: it has no versions.
    #[error(
        "tool `{tool}` has no folder (its runs come from results files): it has no versions to compare; compare two tool entries with --old and --new"
    )]
    NoFolder { tool: String },
    /// `diff --tool T` and the store holds no run of another version of T.
    #[error("the store {} holds no run of an earlier version of tool `{tool}` than the current one: run the tool before changing it (each version is noted when its runs are executed); `mccbuild diff --tool {tool} --list` lists the versions", store.display())]
    NoEarlierVersion { tool: String, store: PathBuf },
    /// `diff --tool T --against X` where X names no version of T (or several).
    #[error(
        "--against {against}: {why}; `mccbuild diff --tool {tool} --list` lists the versions of tool `{tool}` (a digest or git revision, or a prefix of one; or a date, YYYY-MM-DD or RFC 3339)"
    )]
    NoSuchVersion {
        tool: String,
        against: String,
        why: String,
    },
    /// The keys of an earlier version's runs cannot be made (an instance cannot be read).
    #[error("{0}")]
    Plan(Problems),
}

/// Why the Slurm commands of a contest cannot be made.
#[derive(Debug, thiserror::Error)]
#[error("cannot find the mccbuild binary to run on the nodes: {source}; set `mccbuild` in [executor.slurm] of {}", manifest.display())]
pub struct SlurmSetupError {
    pub manifest: PathBuf,
    pub source: std::io::Error,
}

/// Why `mccbuild watch` stopped.
#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    /// The contest cannot be opened.
    #[error(transparent)]
    Open(#[from] OpenError),
    /// The live site cannot be served on the address asked for.
    #[error("cannot serve on {addr}: {source}")]
    Serve {
        addr: String,
        source: std::io::Error,
    },
    /// The store's files cannot be watched (a store error: docs/cli.md, exit 3).
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A page of the site (`--out`) cannot be written.
    #[error("cannot write {}: {source}; check that its folder can be created and written", path.display())]
    Output {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A signal stopped the watch.
    #[error("interrupted")]
    Interrupted,
}
