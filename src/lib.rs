//! The `mccbuild` command line: its definition ([`cli`]), one module per command
//! ([`commands`]: argument handling, then the engine and the output crate), the errors and
//! their exit codes ([`error`]), and signals ([`signals`]). What the commands do with a
//! contest is `mccbuild_engine`'s (the session, execution, progress, the caches, `watch` and
//! its live site).
//!
//! Data flows one way (docs/architecture.md): contest.toml + rules -> plan (mccbuild-plan) ->
//! store lookup (mccbuild-store) -> executors for the missing runs (mccbuild-exec) -> run
//! records -> scoring (mccbuild-scoring) -> exports, the site, tables (mccbuild-output), wired
//! for each command by mccbuild-engine.

pub mod cli;
pub mod commands;
pub mod error;
pub mod signals;

/// The session over a contest's plan and store, as the examples and benchmarks open it.
pub use mccbuild_engine::session;
