//! `[executor]` and `[limits]`: which executor runs the runs, how many at once, and the limits
//! the manifest puts in place of the edition's; `[executor.qemu]` and `[executor.slurm]` are
//! read by [`super::qemu`] and [`super::slurm`].

use std::path::PathBuf;

use serde::Deserialize;

use super::qemu::{QemuConfig, qemu_config};
use super::reading::Reading;
use super::schema::ManifestFile;
use super::slurm::{SlurmConfig, slurm_config};

/// `[executor] kind`.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq, Hash)]
#[serde(rename_all = "lowercase")]
pub enum ExecutorKind {
    #[default]
    Local,
    Qemu,
    /// One Slurm job per model, each run a job step (docs/execution.md, "Slurm executor").
    Slurm,
}

impl ExecutorKind {
    pub fn name(self) -> &'static str {
        match self {
            ExecutorKind::Local => "local",
            ExecutorKind::Qemu => "qemu",
            ExecutorKind::Slurm => "slurm",
        }
    }
}

/// `[executor]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecutorConfig {
    pub kind: ExecutorKind,
    pub jobs: usize,
    /// `[executor.qemu]`, resolved (always present; used when `kind = "qemu"`).
    pub qemu: QemuConfig,
    /// `[executor.slurm]` (defaults when absent).
    pub slurm: SlurmConfig,
}

/// The least `[limits] memory_mb` accepted: below it no tool can start, every run would end as
/// a memory-out.
pub const MIN_MEMORY_MB: u64 = 64;

impl Reading<'_> {
    /// `[executor]` with `[executor.qemu]` and `[executor.slurm]`, and `[limits]`; the shared
    /// store Slurm names, if any.
    pub(super) fn executor(&mut self, file: &ManifestFile) -> (ExecutorConfig, Option<PathBuf>) {
        let (source, problems) = (&self.source, &mut self.problems);
        let (slurm, shared_store) =
            slurm_config(source, file.executor.slurm.as_ref(), &self.root, problems);
        if file.executor.slurm.is_some() && file.executor.kind != ExecutorKind::Slurm {
            problems.push(
                source
                    .problem_at(
                        file.executor.slurm.as_ref().map(|s| s.span()),
                        "[executor.slurm] is given but [executor] kind is not \"slurm\"",
                    )
                    .help("set `kind = \"slurm\"` in [executor], or remove [executor.slurm]"),
            );
        }
        let jobs = file.executor.jobs.as_ref().map_or(1, |j| *j.get_ref());
        if let Some(zero) = file.executor.jobs.as_ref().filter(|j| *j.get_ref() == 0) {
            problems.push(
                source
                    .problem_at(Some(zero.span()), "[executor] jobs must be at least 1")
                    .help("the runs executed at a time, e.g. `jobs = 2`"),
            );
        }
        for (name, value) in [
            ("time_s", &file.limits.time_s),
            ("memory_mb", &file.limits.memory_mb),
        ] {
            if let Some(zero) = value.as_ref().filter(|v| *v.get_ref() == 0) {
                problems.push(
                    source
                        .problem_at(
                            Some(zero.span()),
                            format!("[limits] {name} must be positive"),
                        )
                        .help("remove the key to keep the edition's limit"),
                );
            }
        }
        if let Some(mb) = file
            .limits
            .memory_mb
            .as_ref()
            .filter(|mb| *mb.get_ref() > 0 && *mb.get_ref() < MIN_MEMORY_MB)
        {
            problems.push(
                source.problem_at(
                    Some(mb.span()),
                    format!("[limits] memory_mb = {}: no tool can start in less than {MIN_MEMORY_MB} MB (a shell and a JVM or Python alone need more); every run would be a memory-out", mb.get_ref()),
                )
                .help("the edition's limit is 16384 MB (E-5.3/E-5.4); the demo uses 2048"),
            );
        }
        if let Some(cores) = &file.limits.cores {
            if cores.get_ref().is_empty() || cores.get_ref().contains(&0) {
                problems.push(
                    source
                        .problem_at(
                            Some(cores.span()),
                            format!("[limits] cores = {:?}: every count of cores must be at least 1, and there must be one", cores.get_ref()),
                        )
                        .help("the core counts tools may ask for, e.g. `cores = [1, 4]` (E-5.3/E-5.4)"),
                );
            }
        }
        let cpu_model = file
            .limits
            .cpu_model
            .clone()
            .unwrap_or_else(|| self.edition.vm.cpu_model.clone());
        let qemu = qemu_config(
            source,
            &self.root,
            file.executor.qemu.as_ref(),
            file.executor.kind,
            cpu_model,
            &file.tools,
            problems,
        );
        let executor = ExecutorConfig {
            kind: file.executor.kind,
            jobs,
            qemu,
            slurm,
        };
        (executor, shared_store)
    }
}
