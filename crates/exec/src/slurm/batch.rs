//! A job as Slurm gets it: its batch script (one `srun` step per run, or one for the model) and
//! its `sbatch` command line.

use std::path::Path;

use mccbuild_plan::manifest::SlurmSteps;

use super::{JobRequest, SlurmCli};

/// `'text'` for a POSIX shell.
pub fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

impl SlurmCli {
    pub(super) fn job_name(&self, model: &str) -> String {
        format!("mccbuild-{}-{model}", self.tag)
    }

    /// The batch script of a job: each run as one `srun` step of `mccbuild exec-run`, at most
    /// as many at a time as the job's CPUs allow. A step exiting 0 recorded its run (whatever
    /// the tool did), 1 could not carry it out (not recorded: it is resubmitted); anything
    /// else (the step could not be launched, the manifest or the store are unusable on this
    /// node) stops the job, whose unrecorded runs are resubmitted. With `steps = "model"`, one
    /// step runs all of the job's runs, as many at a time.
    pub fn batch_script(&self, job: &JobRequest, keys_file: &Path) -> String {
        let max_cores = job.runs.iter().map(|r| r.cores).max().unwrap_or(1).max(1);
        let parallel = (job.cpus / max_cores).max(1);
        let srun_options: Vec<String> = self
            .config
            .srun_options
            .iter()
            .map(|o| shell_quote(o))
            .collect();
        let srun_options = srun_options.join(" ");
        let mccbuild = shell_quote(&self.mccbuild.to_string_lossy());
        let manifest = shell_quote(&self.manifest.to_string_lossy());
        let keys = shell_quote(&keys_file.to_string_lossy());
        let name = shell_quote(&self.job_name(&job.model));
        let (model, attempt) = (&job.model, job.attempt);
        if self.config.steps == SlurmSteps::PerModel {
            return format!(
                r#"#!/bin/bash
# Written by mccbuild: the runs of model {model} (attempt {attempt}), one job step for all.
srun --exact -N1 -n1 -c{cpus} --job-name={name} {srun_options} \
    {mccbuild} exec-run --manifest {manifest} --keys-file {keys} --jobs {parallel} </dev/null
"#,
                cpus = job.cpus,
            );
        }
        format!(
            r#"#!/bin/bash
# Written by mccbuild: the runs of model {model} (attempt {attempt}), one job step per run.
MCCBUILD={mccbuild}
MANIFEST={manifest}
KEYS={keys}
PARALLEL={parallel}
running=0
status=0
finish_one() {{
    wait -n
    rc=$?
    running=$((running - 1))
    case $rc in
        0|1) ;;
        *) echo "mccbuild: a step ended with status $rc: no more steps in this job" >&2
           [ "$status" = 0 ] && status=$rc ;;
    esac
}}
while read -r cores key; do
    [ "$status" = 0 ] || break
    [ "$running" -ge "$PARALLEL" ] && finish_one
    [ "$status" = 0 ] || break
    srun --exact -N1 -n1 -c"$cores" --job-name={name} {srun_options} \
        "$MCCBUILD" exec-run --manifest "$MANIFEST" --key "$key" </dev/null &
    running=$((running + 1))
done <"$KEYS"
while [ "$running" -gt 0 ]; do finish_one; done
exit $status
"#
        )
    }

    /// The `sbatch` arguments of a job (without the script).
    pub fn sbatch_args(&self, job: &JobRequest) -> Vec<String> {
        let mut args = vec![
            "--parsable".to_string(),
            "--nodes=1".into(),
            "--ntasks=1".into(),
            format!("--cpus-per-task={}", job.cpus),
            "--no-requeue".into(),
            format!("--job-name={}", self.job_name(&job.model)),
            format!("--chdir={}", self.chdir.display()),
            format!(
                "--output={}",
                self.dir.join(format!("{}-%j.out", job.model)).display()
            ),
        ];
        for (flag, value) in [
            ("--partition", &self.config.partition),
            ("--account", &self.config.account),
            ("--qos", &self.config.qos),
        ] {
            if let Some(v) = value {
                args.push(format!("{flag}={v}"));
            }
        }
        if !job.exclude.is_empty() {
            args.push(format!("--exclude={}", job.exclude.join(",")));
        }
        args.extend(self.config.sbatch_options.iter().cloned());
        args
    }
}
