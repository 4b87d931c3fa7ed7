//! From `contest.toml` and the rules to the plan: one run per tool x instance x examination,
//! each with its key. The manifest ([`manifest`]), the instances it names ([`instance`]), their
//! digests cached by file stamp ([`digest_cache`]), results files whose rows are runs
//! ([`results_file`]), the run key builder ([`key`]), the plan itself ([`plan`]) and its snapshot, kept while
//! nothing it was made from changes ([`snapshot`]).

#![forbid(unsafe_code)]

pub mod archive;
pub mod corrections;
pub mod digest_cache;
pub mod host_packages;
pub mod instance;
pub mod key;
pub mod manifest;
pub mod model_files;
pub mod plan;
pub mod reference;
pub mod results_file;
pub mod snapshot;

pub use plan::{ExamInstance, Plan, PlannedInstance, PlannedModel, Run, RunOrigin};
