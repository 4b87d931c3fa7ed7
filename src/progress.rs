//! Progress of the runs being executed: what the executor loop reports ([`Progress`]), drawn on
//! the terminal as a bar or as plain lines ([`CliProgress`]), or as a Slurm step's log lines
//! ([`StepProgress`]).

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Progress reporting (the CLI draws it with indicatif).
pub trait Progress {
    fn setup_started(&mut self, _tool: &str) {}
    fn started(&mut self, _total: usize) {}
    fn run_started(&mut self, _label: &str) {}
    fn run_finished(&mut self, _label: &str, _outcome: &str, _failed: bool) {}
    /// A run shown as started goes back to "to run" (its Slurm job ended without it).
    fn run_requeued(&mut self, _label: &str) {}
    fn message(&mut self, _text: &str) {}
    fn finished(&mut self) {}
}

/// Progress that shows nothing.
pub struct Quiet;
impl Progress for Quiet {}

/// A step's lines, for its job's log.
pub struct StepProgress;

impl Progress for StepProgress {
    fn run_finished(&mut self, label: &str, outcome: &str, failed: bool) {
        let host = std::env::var("SLURMD_NODENAME").unwrap_or_else(|_| mccbuild_exec::host_name());
        let word = if failed { "failed" } else { "recorded" };
        crate::signals::say(&format!("{word} on {host}: {label}: {outcome}"));
    }

    fn message(&mut self, text: &str) {
        crate::signals::say(text);
    }
}

/// Progress on stderr: a bar on a terminal, plain lines otherwise (CI logs).
pub struct CliProgress {
    bar: Option<ProgressBar>,
    total: usize,
    done: usize,
    running: usize,
    failed: usize,
    last_line: Instant,
}

impl Default for CliProgress {
    fn default() -> Self {
        Self::new()
    }
}

impl CliProgress {
    pub fn new() -> Self {
        CliProgress {
            bar: None,
            total: 0,
            done: 0,
            running: 0,
            failed: 0,
            last_line: Instant::now(),
        }
    }

    fn update(&mut self) {
        if let Some(bar) = &self.bar {
            bar.set_position(self.done as u64);
            bar.set_message(format!(
                "running {} · failures {}",
                self.running, self.failed
            ));
        }
    }
}

impl Progress for CliProgress {
    fn setup_started(&mut self, tool: &str) {
        crate::signals::say(&format!(
            "setting up tool {tool} (once per version of the tool)..."
        ));
    }

    fn started(&mut self, total: usize) {
        self.total = total;
        if std::io::stderr().is_terminal() {
            let bar =
                ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template(
                    "{elapsed_precise} [{bar:30}] {pos}/{len} runs · {msg} · ETA {eta}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
            );
            bar.enable_steady_tick(Duration::from_millis(200));
            self.bar = Some(bar);
        } else {
            crate::signals::say(&format!("executing {total} runs"));
        }
    }

    fn run_started(&mut self, _label: &str) {
        self.running += 1;
        self.update();
    }

    fn run_finished(&mut self, label: &str, outcome: &str, failed: bool) {
        self.running = self.running.saturating_sub(1);
        self.done += 1;
        if failed {
            self.failed += 1;
        }
        match &self.bar {
            Some(bar) if failed => bar.println(format!("failed: {label}: {outcome}")),
            Some(_) => {}
            None => {
                if failed
                    || self.last_line.elapsed() >= Duration::from_secs(10)
                    || self.done == self.total
                {
                    crate::signals::say(&format!(
                        "[{}/{}] {label}: {outcome}",
                        self.done, self.total
                    ));
                    self.last_line = Instant::now();
                }
            }
        }
        self.update();
    }

    fn run_requeued(&mut self, _label: &str) {
        self.running = self.running.saturating_sub(1);
        self.update();
    }

    fn message(&mut self, text: &str) {
        match &self.bar {
            Some(bar) => bar.println(text),
            None => crate::signals::say(text),
        }
    }

    fn finished(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}
