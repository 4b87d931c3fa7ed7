//! Progress of the runs being executed. The executor loop reports one stream of events
//! ([`Progress`]): tools' setups, the runs planned, and each run's typed event ([`RunEvent`]:
//! started, finished with how it ended, requeued), which carries the run's key and, when it
//! was recorded, its outcome and measurement. The reporters word them: [`CliProgress`] keeps
//! the truth of them in a [`Tally`] (runs done, the runs really running, failures, an ETA from
//! the runs' own history) and shows it as a bar on a terminal, plain periodic lines without one
//! (CI logs), or JSON lines (`run --progress=json`, for dashboards); a Slurm step's log lines
//! are [`StepProgress`].

mod event;
mod step;
mod tally;
mod terminal;

use mccbuild_exec::pool::CoreWait;
use std::path::Path;

pub use event::{NotRecorded, RunEnd, RunEvent};
pub use step::StepProgress;
pub use tally::{Eta, Tally, duration};
pub use terminal::{CliProgress, ProgressFormat};

/// `1 run`, `2 runs`: a count with the noun it takes.
pub fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Writes a line to stderr, ignoring errors (a closed pipe or terminal): what `run` says while
/// runs are in flight must never stop it (a closed stderr pipe is noticed by the binary's
/// signal handling, which stops the runs like SIGTERM).
pub fn say(text: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{text}");
}

/// A run about to be executed, as progress knows it.
#[derive(Clone, Debug)]
pub struct RunInfo {
    /// What progress lines call it (unique among the runs of one execution).
    pub label: String,
    /// The runs whose times predict this one's: `tool examination`.
    pub group: String,
    /// Wall-clock seconds of the runs of this tool and examination already in the store.
    pub history: Vec<f64>,
}

/// Progress reporting (the CLI draws it with indicatif).
pub trait Progress {
    /// A tool's setup starts; it writes its output into `log`.
    fn setup_started(&mut self, _tool: &str, _log: &Path) {}
    fn setup_finished(&mut self, _tool: &str, _ok: bool) {}
    /// A tool's setup was stopped (mccbuild was interrupted): neither done nor failed.
    fn setup_stopped(&mut self, _tool: &str) {}
    /// The runs that are to be executed (before [`Progress::started`]).
    fn planned(&mut self, _runs: &[RunInfo]) {}
    fn started(&mut self, _total: usize) {}
    /// A run started, finished or went back to "to run" (its Slurm job ended without it).
    fn run(&mut self, _event: &RunEvent<'_>) {}
    fn message(&mut self, _text: &str) {}
    /// A run waits for cores another process holds: who holds them, since when, and its place
    /// in the machine's waiting line.
    fn waiting(&mut self, _wait: &CoreWait) {}
    fn finished(&mut self) {}
}

/// Progress that shows nothing.
pub struct Quiet;
impl Progress for Quiet {}

/// One stream of events to two reporters (what is shown, and the store's copy).
pub struct Tee<'a>(pub &'a mut dyn Progress, pub &'a mut dyn Progress);
impl Progress for Tee<'_> {
    fn setup_started(&mut self, tool: &str, log: &Path) {
        self.0.setup_started(tool, log);
        self.1.setup_started(tool, log);
    }
    fn setup_finished(&mut self, tool: &str, ok: bool) {
        self.0.setup_finished(tool, ok);
        self.1.setup_finished(tool, ok);
    }
    fn setup_stopped(&mut self, tool: &str) {
        self.0.setup_stopped(tool);
        self.1.setup_stopped(tool);
    }
    fn planned(&mut self, runs: &[RunInfo]) {
        self.0.planned(runs);
        self.1.planned(runs);
    }
    fn started(&mut self, total: usize) {
        self.0.started(total);
        self.1.started(total);
    }
    fn run(&mut self, event: &RunEvent<'_>) {
        self.0.run(event);
        self.1.run(event);
    }
    fn message(&mut self, text: &str) {
        self.0.message(text);
        self.1.message(text);
    }
    fn waiting(&mut self, wait: &CoreWait) {
        self.0.waiting(wait);
        self.1.waiting(wait);
    }
    fn finished(&mut self) {
        self.0.finished();
        self.1.finished();
    }
}
