//! What happened to one run, typed: the events an execution reports and the reporters word
//! ([`RunEvent`]), and how a finished run ended ([`RunEnd`]: recorded with its outcome and
//! measurement, or not recorded and why).

use std::path::PathBuf;

use mccbuild_core::{Measurement, Outcome, RunKey, Termination};
use mccbuild_store::record::SlurmPlacement;

/// One run's event, with the run's key and its label (`tool instance examination`, unique
/// among the runs of one execution).
#[derive(Clone, Debug)]
pub enum RunEvent<'a> {
    /// The run started (its process here, or its Slurm job reached a node).
    Started { key: RunKey, label: &'a str },
    /// The run ended.
    Finished {
        key: RunKey,
        label: &'a str,
        end: RunEnd,
    },
    /// A run shown as started goes back to "to run" (its Slurm job ended without it).
    Requeued { key: RunKey, label: &'a str },
}

impl RunEvent<'_> {
    /// The run's key.
    pub fn key(&self) -> RunKey {
        match self {
            RunEvent::Started { key, .. }
            | RunEvent::Finished { key, .. }
            | RunEvent::Requeued { key, .. } => *key,
        }
    }

    /// The run's label.
    pub fn label(&self) -> &str {
        match self {
            RunEvent::Started { label, .. }
            | RunEvent::Finished { label, .. }
            | RunEvent::Requeued { label, .. } => label,
        }
    }
}

/// How a finished run ended.
#[derive(Clone, Debug)]
pub enum RunEnd {
    /// Its record is in the store.
    Recorded {
        outcome: Outcome,
        measurement: Measurement,
        /// The record's one line (`16 answers`, `CC`, `TIMEOUT`...: `RunRecord::describe`).
        description: String,
        /// Where Slurm ran it, when this process followed it through Slurm (a step says its
        /// node on its own lines).
        slurm: Option<SlurmPlacement>,
    },
    /// It was not recorded (the runs of the next command do it again).
    NotRecorded(NotRecorded),
}

/// What progress says of a run stopped because the command was.
const INTERRUPTED: &str =
    "interrupted: stopped before it ended, not recorded (the next `mccbuild run` does it)";

/// Why a finished run was not recorded.
#[derive(Clone, Debug)]
pub enum NotRecorded {
    /// Stopped (a signal, or a record that could not be written stopped the runs in flight).
    Cancelled,
    /// A Slurm step told to stop as the run ended: how the run ended then is not the tool's
    /// doing.
    StepStopped(Termination),
    /// The infrastructure failed (the sandbox, the VM, a Slurm job given up): why.
    Infrastructure(String),
    /// Its record cannot be written.
    CannotWrite { path: PathBuf, reason: String },
}

impl RunEnd {
    /// Whether the run counts as failed: not recorded, and not because the command was
    /// interrupted ([`RunEnd::interrupted`]).
    pub fn failed(&self) -> bool {
        matches!(self, RunEnd::NotRecorded(_)) && !self.interrupted()
    }

    /// Whether the run was stopped because the command was (a signal, or a record that could
    /// not be written stopped the runs in flight): not recorded, not a failure of anything.
    pub fn interrupted(&self) -> bool {
        matches!(self, RunEnd::NotRecorded(NotRecorded::Cancelled))
    }

    /// What progress says of it: the record's line (and where Slurm ran it), or why it was not
    /// recorded.
    pub fn text(&self) -> String {
        match self {
            RunEnd::Recorded {
                description, slurm, ..
            } => match slurm {
                Some(p) => format!("{description} (node {}, job {}.{})", p.node, p.job, p.step),
                None => description.clone(),
            },
            RunEnd::NotRecorded(NotRecorded::Cancelled) => INTERRUPTED.to_string(),
            RunEnd::NotRecorded(NotRecorded::StepStopped(termination)) => format!(
                "cancelled: the step was told to stop as the run ended ({}); not recorded",
                termination.label()
            ),
            RunEnd::NotRecorded(NotRecorded::Infrastructure(reason)) => {
                format!("infrastructure failure (not recorded): {reason}")
            }
            RunEnd::NotRecorded(NotRecorded::CannotWrite { path, reason }) => {
                format!("not recorded: cannot write {}: {reason}", path.display())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mccbuild_core::Response;

    /// What progress says of each way a run ends (the lines the terminal and the JSON events
    /// carry, as they were when progress took texts).
    #[test]
    fn each_end_is_worded_as_progress_says_it() {
        let measurement = Measurement {
            termination: Termination::Exit { code: 0 },
            cpu_time_s: 0.5,
            wall_time_s: 0.6,
            peak_memory_bytes: 1 << 20,
        };
        let recorded = |slurm| RunEnd::Recorded {
            outcome: Outcome::of(Response::CannotCompute, measurement.termination),
            measurement,
            description: "CC".into(),
            slurm,
        };
        assert_eq!(recorded(None).text(), "CC");
        assert!(!recorded(None).failed());
        let placement = SlurmPlacement {
            job: "12".into(),
            step: "3".into(),
            node: "n1".into(),
        };
        assert_eq!(recorded(Some(placement)).text(), "CC (node n1, job 12.3)");
        let not = |why| RunEnd::NotRecorded(why);
        for (end, text) in [
            (not(NotRecorded::Cancelled), INTERRUPTED.to_string()),
            (
                not(NotRecorded::Infrastructure("no cgroup".into())),
                "infrastructure failure (not recorded): no cgroup".into(),
            ),
            (
                not(NotRecorded::CannotWrite {
                    path: "/s/runs/ab.json".into(),
                    reason: "disk full".into(),
                }),
                "not recorded: cannot write /s/runs/ab.json: disk full".into(),
            ),
            (
                not(NotRecorded::StepStopped(Termination::Signal { signal: 15 })),
                format!(
                    "cancelled: the step was told to stop as the run ended ({}); not recorded",
                    Termination::Signal { signal: 15 }.label()
                ),
            ),
        ] {
            let interrupted = matches!(end, RunEnd::NotRecorded(NotRecorded::Cancelled));
            assert_eq!(end.failed(), !interrupted, "{text}");
            assert_eq!(end.interrupted(), interrupted, "{text}");
            assert!(!text.contains("fail") || !interrupted, "{text}");
            assert_eq!(end.text(), text);
        }
    }

    #[test]
    fn an_event_tells_its_runs_key_and_label() {
        let key = RunKey([7; 32]);
        for event in [
            RunEvent::Started {
                key,
                label: "t i E",
            },
            RunEvent::Requeued {
                key,
                label: "t i E",
            },
            RunEvent::Finished {
                key,
                label: "t i E",
                end: RunEnd::NotRecorded(NotRecorded::Cancelled),
            },
        ] {
            assert_eq!((event.key(), event.label()), (key, "t i E"));
        }
    }
}
