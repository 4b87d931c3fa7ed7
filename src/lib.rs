//! mccbuild: the Model Checking Contest's infrastructure, built like a build system.
//!
//! Data flows one way: manifest + rules -> plan (one run per tool x instance x examination, with
//! its key) -> store lookup -> executor for the missing runs -> run records -> salsa inputs ->
//! value groups -> Confidence -> trusted values -> scores -> podiums -> reports.

pub mod answers;
pub mod cli;
pub mod db;
pub mod diag;
pub mod digest;
pub mod exec;
pub mod explain;
pub mod export;
pub mod import;
pub mod instance;
pub mod key;
pub mod manifest;
pub mod plan;
pub mod report;
pub mod results;
pub mod rules;
pub mod serve;
pub mod session;
pub mod store;
pub mod timing;
pub mod value;
pub mod watch;
