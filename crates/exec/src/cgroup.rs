//! Per-run control groups: limits, measurement and killing of a run's whole process tree.
//!
//! What the host offers is detected, never assumed (see docs/execution.md):
//! - cgroup v1 hierarchies (`memory`, `cpuacct`, `pids`, `freezer`), with groups created under
//!   this process's own group of each hierarchy (it is not always the root);
//! - the cgroup v2 hierarchy, alone or beside v1: its core files give `cgroup.kill` (the whole tree
//!   at once, orphans included), `cgroup.events` and `cpu.stat` even without controllers, and its
//!   `memory`/`pids` controllers when v1 does not hold them.
//!
//! Each part (CPU, memory, pids, kill) comes from wherever it is available. A run's groups are
//! created fresh (so the memory peak is the run's own), joined by the tool's first process
//! before it executes anything, emptied, read and removed after the run.
//!
//! The files: `support` finds what the host offers and creates a run's groups, `run_group` is
//! one run's groups, `moves` moves a thread or a process into them.

mod moves;
mod run_group;
mod support;
#[cfg(test)]
mod tests;

pub use self::moves::{ThreadInGroup, move_into};
pub use self::run_group::RunCgroup;
pub use self::support::CgroupSupport;
