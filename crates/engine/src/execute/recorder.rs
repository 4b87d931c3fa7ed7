//! Recording the runs the core pool finishes here (the local sandbox, a QEMU VM, or a Slurm
//! step's local sandbox), each as it ends, on the caller's thread.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};

use mccbuild_core::Termination;
use mccbuild_exec::{Execution, InfraError};
use mccbuild_plan::Plan;
use mccbuild_plan::key::executor_for_tool;
use mccbuild_store::record::SlurmPlacement;
use mccbuild_store::{Index, Store, Summary};

use super::ExecSummary;
use super::record::{label, make_record};
use crate::progress::{NotRecorded, Progress, RunEnd, RunEvent};

/// Whether a run executed by a Slurm step died of the signal Slurm sent the whole step (the
/// job was cancelled, hit its time limit or lost its node): Slurm signals every process of the
/// step, the tool's included, so the tool may die before this process notices its own signal.
/// Such a run is the infrastructure's doing, never recorded as the tool's crash: a tool killed
/// by SIGTERM, SIGKILL, SIGINT or SIGHUP while this process is told to stop (within a second).
/// (A run that ends otherwise once this process got its signal is not recorded either: a tool
/// whose child was killed may still exit 0 with fewer answers.)
fn signalled_with_its_step(execution: &Execution, cancel: &AtomicBool) -> bool {
    let Termination::Signal { signal } = execution.measurement.termination else {
        return false;
    };
    if ![libc::SIGTERM, libc::SIGKILL, libc::SIGINT, libc::SIGHUP].contains(&signal) {
        return false;
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
    while std::time::Instant::now() < deadline {
        if cancel.load(std::sync::atomic::Ordering::SeqCst) {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    false
}

/// Records the runs the pool finishes (on the caller's thread: no locking).
pub(super) struct Recorder<'a> {
    pub(super) plan: &'a Plan,
    pub(super) store: &'a Store,
    pub(super) index: &'a mut Index,
    pub(super) stored: &'a mut Vec<bool>,
    /// Runs redone (`run --rerun`) not recorded again yet.
    pub(super) redo: &'a mut BTreeMap<usize, mccbuild_core::Digest>,
    /// The executor's key ingredients (each record keeps its tool's).
    pub(super) ingredients: Vec<(String, String)>,
    /// Where the Slurm step runs (exec-run).
    pub(super) placement: Option<SlurmPlacement>,
    pub(super) step: bool,
    pub(super) cancel: &'a AtomicBool,
    pub(super) progress: &'a mut dyn Progress,
    pub(super) outcome: &'a mut ExecSummary,
}

impl Recorder<'_> {
    pub(super) fn started(&mut self, i: usize) {
        let run = &self.plan.runs[i];
        self.progress.run(&RunEvent::Started {
            key: run.key,
            label: &label(self.plan, run),
        });
    }

    /// Says how run `i` ended without a record.
    fn not_recorded(&mut self, i: usize, why: NotRecorded) {
        let run = &self.plan.runs[i];
        self.progress.run(&RunEvent::Finished {
            key: run.key,
            label: &label(self.plan, run),
            end: RunEnd::NotRecorded(why),
        });
    }

    pub(super) fn finished(&mut self, i: usize, result: Result<Option<Execution>, InfraError>) {
        match result {
            Ok(Some(execution)) if self.step && self.step_stopped(&execution) => self.not_recorded(
                i,
                NotRecorded::StepStopped(execution.measurement.termination),
            ),
            Ok(Some(execution)) => self.record(i, execution),
            Ok(None) => self.not_recorded(i, NotRecorded::Cancelled),
            Err(e) => {
                self.outcome.failed += 1;
                self.not_recorded(i, NotRecorded::Infrastructure(e.to_string()));
            }
        }
    }

    /// A Slurm step told to stop: what ended then is not the tool's doing.
    fn step_stopped(&self, execution: &Execution) -> bool {
        self.cancel.load(Ordering::SeqCst) || signalled_with_its_step(execution, self.cancel)
    }

    fn record(&mut self, i: usize, execution: Execution) {
        let run = &self.plan.runs[i];
        let name = label(self.plan, run);
        let ingredients =
            executor_for_tool(&self.ingredients, &self.plan.contest.tools[run.tool].name);
        let mut record = make_record(self.plan, run, ingredients, execution);
        if let Some(placement) = &self.placement {
            // On a simulated cluster every node has the host's name.
            record.host = placement.node.clone();
            record.slurm = Some(placement.clone());
        }
        match self.store.put(&record) {
            Ok(digest) => {
                self.outcome.executed += 1;
                self.stored[i] = true;
                self.redo.remove(&i);
                self.progress.run(&RunEvent::Finished {
                    key: run.key,
                    label: &name,
                    end: RunEnd::Recorded {
                        outcome: record.outcome(),
                        measurement: record.measurement,
                        description: record.describe(),
                        slurm: None,
                    },
                });
                self.index.insert(record.key, Summary::of(&record), digest);
            }
            Err(e) => {
                self.outcome.failed += 1;
                let path = self.store.record_path(&run.key);
                self.not_recorded(
                    i,
                    NotRecorded::CannotWrite {
                        path: path.clone(),
                        reason: e.to_string(),
                    },
                );
                // Fail fast: the next records would be lost too. No run starts after this one;
                // those in flight are stopped (and not recorded).
                if self.outcome.record_not_written.is_none() {
                    self.outcome.record_not_written = Some((path, e.to_string()));
                    self.progress.message(
                        "stopping: a record cannot be written, so no more runs are started",
                    );
                }
                self.cancel.store(true, Ordering::SeqCst);
            }
        }
    }
}
