//! Why a command did not do all it was asked, and the one mapping from that to an exit code
//! (docs/cli.md, "Exit codes").

use std::path::PathBuf;

use mccbuild_core::diag::Problems;
use mccbuild_store::StoreError;

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
    /// Interrupted (Ctrl-C, SIGTERM): runs in flight were stopped and not recorded.
    pub const INTERRUPTED: u8 = 130;
}

/// Why a command stopped short.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The manifest, the rules or the instances are invalid: every problem found.
    #[error("{0}")]
    Input(Problems),
    /// The command line asks for something that cannot be (an unknown tool, two outputs on
    /// standard output, a bad key...).
    #[error("{0}")]
    Usage(String),
    /// The store cannot be used.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// An output cannot be written.
    #[error("cannot write {path}: {source}; check that its folder can be created and written")]
    Output {
        path: PathBuf,
        source: std::io::Error,
    },
    /// Some runs could not be carried out (what happened to each was said as it happened).
    #[error("{} could not be carried out (not recorded; `mccbuild run` tries them again)", crate::progress::count(*.0, "run", "runs"))]
    RunsFailed(usize),
    /// `run` left out instances or examination instances (problems with their files, said as
    /// warnings); every other run was carried out.
    #[error("{} left out because of problems with their files (the warnings above say which and why; `mccbuild check` lists them): their runs were not made", crate::progress::count(*.0, "instance or examination instance was", "instances or examination instances were"))]
    LeftOut(usize),
    /// A command given to `mccbuild sandbox` could not be started.
    #[error("{0}")]
    NotStarted(String),
    /// A signal stopped the command.
    #[error("interrupted")]
    Interrupted,
}

impl From<Problems> for Error {
    fn from(problems: Problems) -> Self {
        Error::Input(problems)
    }
}

impl From<mccbuild_output::export::ExportError> for Error {
    fn from(e: mccbuild_output::export::ExportError) -> Self {
        use mccbuild_output::export::ExportError;
        match e {
            ExportError::Write { path, source } => Error::Output { path, source },
            ExportError::Record { path, reason } => Error::Store(StoreError::Record {
                path,
                reason: format!(
                    "{reason}; `mccbuild run` (or `mccbuild import FILE` for an imported run) does the run again and its new record replaces the damaged one"
                ),
            }),
            other @ (ExportError::ModelFileName { .. } | ExportError::NotXml { .. }) => {
                Error::Usage(other.to_string())
            }
        }
    }
}

impl Error {
    /// The exit code of this error (docs/cli.md): the only place one is chosen.
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Input(_) | Error::Usage(_) => exit::INVALID_INPUT,
            Error::Store(_) => exit::STORE_ERROR,
            Error::Output { .. } => exit::OUTPUT_ERROR,
            Error::RunsFailed(_) | Error::LeftOut(_) | Error::NotStarted(_) => exit::RUNS_FAILED,
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
