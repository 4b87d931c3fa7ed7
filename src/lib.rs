//! mccbuild: the Model Checking Contest's infrastructure, built like a build system.
//!
//! Data flows one way: manifest + rules -> plan (one run per tool x instance x examination, with
//! its key) -> store lookup -> executor for the missing runs -> run records -> salsa inputs ->
//! value groups -> Confidence -> trusted values -> scores -> podiums -> reports.

pub mod answers;
pub mod diag;
pub mod rules;
pub mod value;
pub mod digest;
pub mod instance;
pub mod manifest;
pub mod store;
pub mod key;
pub mod exec;
pub mod plan;
pub mod db;
pub mod session;
pub mod results;
pub mod cli;
pub mod timing;
pub mod import;
pub mod explain;
