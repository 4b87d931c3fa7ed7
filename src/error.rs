//! Why a command did not do all it was asked, and the one mapping from that to an exit code
//! (docs/cli.md, "Exit codes"): every way a command stops short is a typed variant here or in
//! the engine's errors it wraps.

use std::path::PathBuf;

use mccbuild_core::diag::Problems;
use mccbuild_engine::error::{DiffError, ImportError, OpenError, SelectError, WatchError};
use mccbuild_exec::InfraError;
use mccbuild_output::export::ExportError;
use mccbuild_scoring::explain::ExplainError;
use mccbuild_scoring::scores::Partial;
use mccbuild_store::StoreError;

use mccbuild_engine::progress::count;

/// Exit codes (docs/cli.md).
pub mod exit {
    /// Everything asked for was done.
    pub const OK: u8 = 0;
    /// Some runs could not be carried out (a tool's setup failed, an infrastructure failure, a
    /// command the sandbox could not start, `run` left out an instance or an examination of one
    /// because of a problem with its files); everything else was recorded.
    pub const RUNS_FAILED: u8 = 1;
    /// The manifest, the rules or the inputs are invalid, or the command line is wrong.
    pub const INVALID_INPUT: u8 = 2;
    /// The store cannot be used (read, or written by a command that records).
    pub const STORE_ERROR: u8 = 3;
    /// An output file (an export, the report site, standard output) cannot be written.
    pub const OUTPUT_ERROR: u8 = 4;
    /// The results were computed, written or printed, but planned runs are missing from the
    /// store: they are partial (said with the count and what completes them).
    pub const PARTIAL: u8 = 5;
    /// `diff --fail-on` (and `run --fail-on`): the comparison, printed in full, found a
    /// regression the list names.
    pub const REGRESSIONS: u8 = 6;
    /// Interrupted (Ctrl-C, SIGTERM): runs in flight were stopped and not recorded.
    pub const INTERRUPTED: u8 = 130;
}

/// Why a command stopped short.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The manifest, the rules or the instances are invalid: every problem found.
    #[error("{0}")]
    Input(Problems),
    /// A filter names a tool, model or examination the contest does not have.
    #[error(transparent)]
    Select(#[from] SelectError),
    /// `import` was given a file it cannot import.
    #[error(transparent)]
    Import(ImportError),
    /// `diff` was given tools it cannot compare.
    #[error(transparent)]
    Diff(#[from] DiffError),
    /// `explain` was asked about a value or a score the contest does not have.
    #[error(transparent)]
    Explain(#[from] ExplainError),
    /// `explain` was asked about an instance the contest does not have.
    #[error("no instance `{instance}` in {}{hint}; the instances are those of [[model]], `inputs` and `results`", manifest.display())]
    NoInstance {
        instance: String,
        manifest: PathBuf,
        hint: String,
    },
    /// `diff` was given neither `--tool` nor `--old` with `--new`.
    #[error(
        "diff compares --old A --new B (two tool entries), or --tool T with an earlier version of T"
    )]
    DiffWhat,
    /// `explain` was given neither a value nor a tool's score.
    #[error(
        "explain a value with --instance I --examination E --id ID, or a tool's score with --tool T --category C"
    )]
    ExplainWhat,
    /// `exec-run`'s keys file cannot be read.
    #[error("cannot read the keys file {}: {source}", path.display())]
    KeysFile {
        path: PathBuf,
        source: std::io::Error,
    },
    /// `exec-run` was given something that is not a run key.
    #[error(
        "`{text}` is not a run key (64 hex digits, or `<key>:<digest of the record it replaces>`)"
    )]
    BadKey { text: String },
    /// `export --csv - --json -`.
    #[error(
        "--csv - and --json - would both write to standard output; write one of them to a file"
    )]
    TwoOnStandardOutput,
    /// `export --verdicts -` or `--dir -`.
    #[error("{flag} names a folder; `-` (standard output) is for --csv and --json")]
    FolderOnStandardOutput { flag: &'static str },
    /// An export cannot name its files (a model's name), or was given something else than XML.
    #[error(transparent)]
    Export(ExportError),
    /// `run --follow` for a contest whose executor is not Slurm.
    #[error(
        "--follow follows a Slurm contest's jobs; the executor of {} is not Slurm (`[executor] kind = \"slurm\"`)",
        manifest.display()
    )]
    FollowNotSlurm { manifest: PathBuf },
    /// `plan --forecast` on a cluster its jobs do not fit.
    #[error(
        "--forecast: {0} (give more --cores, or fewer CPUs per job: [executor.slurm] cpus_per_job)"
    )]
    Forecast(mccbuild_exec::forecast::ForecastError),
    /// `plan --run-overhead` or `--job-overhead` that is not a number of seconds, 0 or more.
    #[error("--run-overhead and --job-overhead must be numbers of seconds, 0 or more")]
    RunOverhead,
    /// `sandbox --time` or `--wall` that is not a positive number of seconds.
    #[error("--time and --wall must be positive numbers of seconds")]
    SandboxTime,
    /// `sandbox --cores` names a core mccbuild may not use here.
    #[error("--cores: core {core} is not one mccbuild may use here ({available:?})")]
    SandboxCore { core: u32, available: Vec<u32> },
    /// `watch --serve` on an address that cannot be bound (docs/cli.md: the command line asks
    /// for what cannot be).
    #[error("cannot serve on {addr}: {source}")]
    Serve {
        addr: String,
        source: std::io::Error,
    },
    /// The store cannot be used.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// An output cannot be written.
    #[error("cannot write {path}: {source}; check that its folder can be created and written")]
    Output {
        path: PathBuf,
        source: std::io::Error,
    },
    /// `diff --fail-on`: regressions of the kinds named were found (the comparison was printed).
    #[error("regressions found (--fail-on): {0}")]
    Regressions(String),
    /// Some runs could not be carried out (what happened to each was said as it happened).
    #[error("{} could not be carried out (not recorded; `mccbuild run` tries them again)", count(*.0, "run", "runs"))]
    RunsFailed(usize),
    /// `run` left out instances or examination instances (problems with their files, said as
    /// warnings); every other run was carried out.
    #[error("{} left out because of problems with their files (the warnings above say which and why; `mccbuild check` lists them): their runs were not made", count(*.0, "instance or examination instance was", "instances or examination instances were"))]
    LeftOut(usize),
    /// A command given to `mccbuild sandbox` could not be started (`hint`: what else to try).
    #[error("{source}{hint}")]
    NotStarted {
        source: InfraError,
        hint: &'static str,
    },
    /// The signal handlers that stop the runs cannot be installed: nothing was started.
    #[error("cannot handle signals: {0}")]
    Signals(std::io::Error),
    /// The results (scores, podiums, the report, the exports) were computed while planned runs
    /// are missing from the store: they were printed or written, and said to be partial.
    #[error("{}", .0.notice())]
    Partial(Partial),
    /// A signal stopped the command.
    #[error("interrupted")]
    Interrupted,
}

impl Error {
    /// `Err(Error::Partial)` when `partial` says results are partial, otherwise `Ok`.
    pub fn unless_partial(partial: Option<Partial>) -> Result<(), Error> {
        match partial {
            Some(p) => Err(Error::Partial(p)),
            None => Ok(()),
        }
    }
}

impl From<Problems> for Error {
    fn from(problems: Problems) -> Self {
        Error::Input(problems)
    }
}

impl From<OpenError> for Error {
    fn from(e: OpenError) -> Self {
        match e {
            OpenError::Input(problems) => Error::Input(problems),
            OpenError::Select(e) => Error::Select(e),
            OpenError::Store(e) => Error::Store(e),
        }
    }
}

impl From<ImportError> for Error {
    fn from(e: ImportError) -> Self {
        match e {
            ImportError::Store(e) => Error::Store(e),
            other => Error::Import(other),
        }
    }
}

impl From<WatchError> for Error {
    fn from(e: WatchError) -> Self {
        match e {
            WatchError::Open(e) => e.into(),
            WatchError::Serve { addr, source } => Error::Serve { addr, source },
            WatchError::Store(e) => Error::Store(e),
            WatchError::Output { path, source } => Error::Output { path, source },
            WatchError::Interrupted => Error::Interrupted,
        }
    }
}

impl From<ExportError> for Error {
    fn from(e: ExportError) -> Self {
        match e {
            ExportError::Write { path, source } => Error::Output { path, source },
            ExportError::Record { path, reason } => Error::Store(StoreError::Record {
                path,
                reason: format!(
                    "{reason}; `mccbuild run` (or `mccbuild import FILE` for an imported run) does the run again and its new record replaces the damaged one"
                ),
            }),
            other @ (ExportError::ModelFileName { .. } | ExportError::NotXml { .. }) => {
                Error::Export(other)
            }
        }
    }
}

impl Error {
    /// The exit code of this error (docs/cli.md): the only place one is chosen.
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Input(_)
            | Error::Select(_)
            | Error::Import(_)
            | Error::Diff(_)
            | Error::Explain(_)
            | Error::NoInstance { .. }
            | Error::ExplainWhat
            | Error::DiffWhat
            | Error::KeysFile { .. }
            | Error::BadKey { .. }
            | Error::TwoOnStandardOutput
            | Error::FolderOnStandardOutput { .. }
            | Error::Export(_)
            | Error::SandboxTime
            | Error::FollowNotSlurm { .. }
            | Error::Forecast(_)
            | Error::RunOverhead
            | Error::SandboxCore { .. }
            | Error::Serve { .. } => exit::INVALID_INPUT,
            Error::Store(_) => exit::STORE_ERROR,
            Error::Output { .. } => exit::OUTPUT_ERROR,
            Error::Regressions(_) => exit::REGRESSIONS,
            Error::RunsFailed(_)
            | Error::LeftOut(_)
            | Error::NotStarted { .. }
            | Error::Signals(_) => exit::RUNS_FAILED,
            Error::Partial(_) => exit::PARTIAL,
            Error::Interrupted => exit::INTERRUPTED,
        }
    }

    /// Tells the user, on standard error.
    pub fn report(&self) {
        match self {
            Error::Input(problems) => {
                eprintln!("{problems}");
                let n = problems.len();
                eprintln!("{n} problem{} found", if n == 1 { "" } else { "s" });
            }
            // Said as it happened.
            Error::Interrupted => {}
            Error::Partial(p) => eprintln!("warning: {}", p.notice()),
            other => eprintln!("error: {other}"),
        }
    }
}

/// What `main` returns: the exit code of a command's result, the error told.
pub fn exit_code(result: Result<(), Error>) -> std::process::ExitCode {
    match result {
        Ok(()) => std::process::ExitCode::from(exit::OK),
        Err(e) => {
            e.report();
            std::process::ExitCode::from(e.exit_code())
        }
    }
}
