//! `[executor.slurm]`: how the Slurm executor submits its jobs (docs/manifest.md): partition,
//! account and QoS, extra options, the binary the nodes run, CPUs, attempts, steps and the shared
//! store, checked.

use std::path::{Path, PathBuf};

use toml::Spanned;

use mccbuild_core::diag::{Problems, SourceText};

use super::reading::MANIFEST_HELP;
use super::schema::SlurmSection;

/// `[executor.slurm]`: how jobs are submitted (docs/manifest.md).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SlurmConfig {
    pub partition: Option<String>,
    pub account: Option<String>,
    pub qos: Option<String>,
    /// Extra options of every `sbatch` (e.g. `--time=2:00:00`, `--exclusive`).
    pub sbatch_options: Vec<String>,
    /// Extra options of every run's `srun` step.
    pub srun_options: Vec<String>,
    /// The mccbuild binary as the nodes see it (default: the running one).
    pub mccbuild: Option<PathBuf>,
    /// CPUs each model's job asks for (default: `jobs` x the most cores a run of it needs).
    pub cpus_per_job: Option<u32>,
    /// Jobs a run gets before it is reported as an infrastructure failure (default 3).
    pub attempts: u32,
    /// Whether `shared_store` was given (the contest's `store` is then that folder).
    pub shared_store: bool,
    /// One step per run (the default) or one per model's job.
    pub steps: SlurmSteps,
}

/// `[executor.slurm] steps`: what a job step executes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SlurmSteps {
    /// `"run"`: each run is a step of its own (Slurm sees and can signal each run).
    #[default]
    PerRun,
    /// `"model"`: one step runs all of the job's runs, `jobs` at a time (one `mccbuild`
    /// process per job instead of one per run: for contests whose plan is large).
    PerModel,
}

/// Validates `[executor.slurm]`; returns its settings and the shared store's path, if given.
pub(super) fn slurm_config(
    source: &SourceText<'_>,
    section: Option<&Spanned<SlurmSection>>,
    root: &Path,
    problems: &mut Problems,
) -> (SlurmConfig, Option<PathBuf>) {
    let mut config = SlurmConfig {
        attempts: 3,
        ..SlurmConfig::default()
    };
    let Some(section) = section else {
        return (config, None);
    };
    let s = section.get_ref();
    let mut word = |field: &str, value: &Option<Spanned<String>>| -> Option<String> {
        let value = value.as_ref()?;
        let text = value.get_ref();
        if text.is_empty() || text.chars().any(|c| c.is_whitespace() || c.is_control()) {
            problems.push(
                source
                    .problem_at(
                        Some(value.span()),
                        format!("[executor.slurm] {field} `{text}` is not a Slurm name"),
                    )
                    .help(format!(
                        "give the {field}'s name as `sinfo`/`sacctmgr` show it, one word"
                    )),
            );
            return None;
        }
        Some(text.clone())
    };
    config.partition = word("partition", &s.partition);
    config.account = word("account", &s.account);
    config.qos = word("qos", &s.qos);
    for (field, options, out) in [
        (
            "sbatch_options",
            &s.sbatch_options,
            &mut config.sbatch_options,
        ),
        ("srun_options", &s.srun_options, &mut config.srun_options),
    ] {
        for option in options {
            let text = option.get_ref();
            if !text.starts_with('-') || text.contains('\n') {
                problems.push(
                    source
                        .problem_at(
                            Some(option.span()),
                            format!("[executor.slurm] {field}: `{text}` is not an option"),
                        )
                        .help("give each option as one string starting with `-`, e.g. \"--time=2:00:00\""),
                );
            } else {
                out.push(text.clone());
            }
        }
    }
    slurm_run_settings(source, s, root, &mut config, problems);
    let shared = shared_store(source, s, root, problems);
    config.shared_store = shared.is_some();
    if let Some(steps) = &s.steps {
        match steps.get_ref().as_str() {
            "run" => config.steps = SlurmSteps::PerRun,
            "model" => config.steps = SlurmSteps::PerModel,
            other => problems.push(
                source
                    .problem_at(
                        Some(steps.span()),
                        format!("[executor.slurm] steps `{other}` is neither \"run\" nor \"model\""),
                    )
                    .help("\"run\": a job step per run (the default); \"model\": one step per model's job"),
            ),
        }
    }
    (config, shared)
}

/// `mccbuild`, `cpus_per_job`, `attempts` of `[executor.slurm]`.
fn slurm_run_settings(
    source: &SourceText<'_>,
    s: &SlurmSection,
    root: &Path,
    config: &mut SlurmConfig,
    problems: &mut Problems,
) {
    if let Some(exe) = &s.mccbuild {
        let path = root.join(exe.get_ref());
        if exe.get_ref().is_empty() {
            problems.push(
                source
                    .problem_at(Some(exe.span()), "[executor.slurm] mccbuild is empty")
                    .help("give the path of the mccbuild binary as the nodes see it, or remove the key"),
            );
        } else {
            config.mccbuild = Some(path);
        }
    }
    for (field, value) in [("cpus_per_job", &s.cpus_per_job), ("attempts", &s.attempts)] {
        if let Some(v) = value {
            if *v.get_ref() == 0 {
                problems.push(
                    source
                        .problem_at(
                            Some(v.span()),
                            format!("[executor.slurm] {field} must be at least 1"),
                        )
                        .help(MANIFEST_HELP),
                );
            }
        }
    }
    config.cpus_per_job = s
        .cpus_per_job
        .as_ref()
        .map(|v| *v.get_ref())
        .filter(|&v| v > 0);
    if let Some(a) = s.attempts.as_ref().map(|v| *v.get_ref()).filter(|&v| v > 0) {
        config.attempts = a;
    }
}

/// `shared_store`: a folder every node sees at the same path.
fn shared_store(
    source: &SourceText<'_>,
    s: &SlurmSection,
    root: &Path,
    problems: &mut Problems,
) -> Option<PathBuf> {
    match &s.shared_store {
        Some(path) if path.get_ref().is_empty() => {
            problems.push(
                source
                    .problem_at(Some(path.span()), "[executor.slurm] shared_store is empty")
                    .help("give a folder every node sees at the same path, or remove the key to use [contest] store"),
            );
            None
        }
        Some(path) => Some(root.join(path.get_ref())),
        None => None,
    }
}
