//! A Slurm step's lines, for its job's log (`mccbuild exec-run`).

use super::{Progress, RunEvent, say};

/// A step's lines, for its job's log.
pub struct StepProgress;

impl Progress for StepProgress {
    fn run(&mut self, event: &RunEvent<'_>) {
        let RunEvent::Finished { label, end, .. } = event else {
            return;
        };
        let host = std::env::var("SLURMD_NODENAME").unwrap_or_else(|_| mccbuild_exec::host_name());
        let word = match (end.failed(), end.interrupted()) {
            (true, _) => "failed",
            (false, true) => "stopped",
            (false, false) => "recorded",
        };
        say(&format!("{word} on {host}: {label}: {}", end.text()));
    }

    fn message(&mut self, text: &str) {
        say(text);
    }
}
