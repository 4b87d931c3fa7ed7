//! The contest manifest, `contest.toml`: models, tools, executor and limits.
//!
//! Paths are relative to the manifest's folder. A check reports every problem it finds at once,
//! each naming the file, the place and the fix: those of the keys (unknown, missing, of the
//! wrong kind) and those of what they name, checked even when some keys were wrong.
//!
//! One file per job: the file as written, read key by key (`schema`), the validated [`Contest`]
//! (`contest`), the reading that turns the one into the other (`reading`), with a reader per
//! part: the models and their instances (`models`), the tools (`tools`), the executor and
//! limits (`executor`) with the QEMU (`qemu`) and Slurm (`slurm`) settings.

mod contest;
mod executor;
mod models;
mod qemu;
mod reading;
mod schema;
mod slurm;
mod tools;

#[cfg(test)]
mod properties;
#[cfg(test)]
mod tests;

pub use self::contest::{
    Contest, InstanceDecl, InstanceSource, Model, ModelKindDecl, ReferenceConfig, RunUser, Tool,
    ToolKind,
};
pub use self::executor::{ExecutorConfig, ExecutorKind, MIN_MEMORY_MB};
pub use self::models::mcc_model_name;
pub use self::qemu::{Accel, GuestKind, QemuConfig};
pub use self::slurm::{SlurmConfig, SlurmSteps};
