//! The `mccbuild` command: the command line ([`cli`]), one module per command ([`commands`]),
//! the errors and their exit codes ([`error`]), and what the commands share: a session over a
//! contest's plan and store ([`session`]), executing the missing runs ([`execute`]), progress
//! on the terminal ([`progress`]), signals ([`signals`]), the scores cache ([`results_cache`]),
//! the remembered no-op ([`noop`]), and the live site of `watch --serve` ([`serve`]).
//!
//! Data flows one way (docs/architecture.md): contest.toml + rules -> plan (mccbuild-plan) ->
//! store lookup (mccbuild-store) -> executors for the missing runs (mccbuild-exec) -> run
//! records -> scoring (mccbuild-scoring) -> exports, the site, tables (mccbuild-output).

pub mod cli;
pub mod commands;
pub mod error;
pub mod execute;
pub mod noop;
pub mod progress;
pub mod results_cache;
pub mod serve;
pub mod session;
pub mod signals;
