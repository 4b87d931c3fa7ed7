//! What a mccbuild command does with a contest, between the command line (the `mccbuild` binary)
//! and the stages it drives: a session over a contest's plan and store ([`session`]), executing
//! a selection of runs and recording them ([`execute`]), the runs' expected times and the
//! contest's forecast on a cluster ([`forecast`]), the events of that execution and the
//! reporters that show them ([`progress`]), the scores report cached in the store
//! ([`results_cache`]), the remembered no-op ([`noop`]), the comparisons of `diff` and the
//! checks of `qualify` ([`diff`], [`qualify`]), and `watch`'s loop ([`watch`]) with its live
//! site ([`serve`]).
//!
//! Data flows one way (docs/architecture.md): contest.toml + rules -> plan (mccbuild-plan) ->
//! store lookup (mccbuild-store) -> executors for the missing runs (mccbuild-exec) -> run
//! records -> scoring (mccbuild-scoring) -> exports, the site, tables (mccbuild-output); this
//! crate wires them for one command, and the binary only reads the command line, calls it and
//! maps its errors to exit codes.

#![forbid(unsafe_code)]

pub mod diff;
pub mod error;
pub mod execute;
pub mod forecast;
pub mod noop;
pub mod progress;
pub mod qualify;
pub mod reproduce;
pub mod results_cache;
pub mod serve;
pub mod session;
pub mod versions;
pub mod watch;
pub mod wrong;

pub use error::{OpenError, SelectError};
pub use session::{Filter, Session};
