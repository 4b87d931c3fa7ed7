//! Progress of the runs being executed. The executor loop reports one stream of events
//! ([`Progress`]); [`CliProgress`] keeps the truth of them in a [`Tally`] (runs done, the runs
//! really running, failures, an ETA from the runs' own history) and shows it through one of
//! several reporters: a bar on a terminal, plain periodic lines without one (CI logs), or JSON
//! lines (`run --progress=json`, for dashboards). A Slurm step's log lines are [`StepProgress`].

/// `eprintln!` that never panics: a closed stderr pipe is noticed by the signal handling
/// (src/signals.rs), which stops the runs like SIGTERM.
macro_rules! say {
    ($($arg:tt)*) => {
        crate::signals::say(&format!($($arg)*))
    };
}

use std::collections::{BTreeMap, HashMap};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// `1 run`, `2 runs`: a count with the noun it takes.
pub fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
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
    /// The runs that are to be executed (before [`Progress::started`]).
    fn planned(&mut self, _runs: &[RunInfo]) {}
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
    fn planned(&mut self, runs: &[RunInfo]) {
        self.0.planned(runs);
        self.1.planned(runs);
    }
    fn started(&mut self, total: usize) {
        self.0.started(total);
        self.1.started(total);
    }
    fn run_started(&mut self, label: &str) {
        self.0.run_started(label);
        self.1.run_started(label);
    }
    fn run_finished(&mut self, label: &str, outcome: &str, failed: bool) {
        self.0.run_finished(label, outcome, failed);
        self.1.run_finished(label, outcome, failed);
    }
    fn run_requeued(&mut self, label: &str) {
        self.0.run_requeued(label);
        self.1.run_requeued(label);
    }
    fn message(&mut self, text: &str) {
        self.0.message(text);
        self.1.message(text);
    }
    fn finished(&mut self) {
        self.0.finished();
        self.1.finished();
    }
}

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

/// What one group of runs (a tool on an examination) takes, smoothed.
#[derive(Clone, Copy, Debug)]
struct Estimate {
    /// Exponentially smoothed wall-clock seconds (recent runs weigh 30%).
    mean: f64,
    min: f64,
    max: f64,
    samples: usize,
}

impl Estimate {
    fn add(&mut self, seconds: f64) {
        if self.samples == 0 {
            *self = Estimate {
                mean: seconds,
                min: seconds,
                max: seconds,
                samples: 1,
            };
        } else {
            self.mean = 0.3 * seconds + 0.7 * self.mean;
            self.min = self.min.min(seconds);
            self.max = self.max.max(seconds);
            self.samples += 1;
        }
    }

    fn of(samples: &[f64]) -> Option<Estimate> {
        let mut e = Estimate {
            mean: 0.0,
            min: 0.0,
            max: 0.0,
            samples: 0,
        };
        for &s in samples {
            e.add(s);
        }
        (e.samples > 0).then_some(e)
    }
}

/// The ETA: seconds left, and a range when the estimate is unsure.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Eta {
    pub seconds: f64,
    pub low: f64,
    pub high: f64,
}

impl Eta {
    /// `1m20s`, or `40s–2m10s` when the range is wide (few runs seen, or times that vary).
    pub fn text(&self) -> String {
        if self.high - self.low > 0.3 * self.seconds.max(1.0) {
            format!("{}–{}", duration(self.low), duration(self.high))
        } else {
            duration(self.seconds)
        }
    }
}

/// `45s`, `3m05s`, `1h02m`.
pub fn duration(seconds: f64) -> String {
    let s = seconds.max(0.0).round() as u64;
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

/// The truth of an execution, as its events tell it.
#[derive(Debug, Default)]
pub struct Tally {
    pub total: usize,
    pub done: usize,
    pub failed: usize,
    /// The runs started and not finished, with when they started.
    running: BTreeMap<String, Instant>,
    /// Label -> group of each planned run not finished.
    pending: HashMap<String, String>,
    estimates: HashMap<String, Estimate>,
    /// Most runs seen running at once (the parallelism the ETA divides by).
    width: usize,
    /// The last ETA computed, and when (shown counting down between runs).
    eta: Option<(Eta, Instant)>,
}

impl Tally {
    pub fn running(&self) -> usize {
        self.running.len()
    }

    fn planned(&mut self, runs: &[RunInfo]) {
        for run in runs {
            self.pending.insert(run.label.clone(), run.group.clone());
            if let Some(e) = Estimate::of(&run.history) {
                self.estimates.entry(run.group.clone()).or_insert(e);
            }
        }
    }

    fn run_started(&mut self, label: &str) {
        self.running.insert(label.to_string(), Instant::now());
        self.width = self.width.max(self.running.len());
    }

    fn run_finished(&mut self, label: &str, failed: bool) {
        let started = self.running.remove(label);
        let group = self.pending.remove(label);
        self.done += 1;
        if failed {
            self.failed += 1;
        } else if let (Some(started), Some(group)) = (started, group) {
            let seconds = started.elapsed().as_secs_f64();
            match self.estimates.get_mut(&group) {
                Some(e) => e.add(seconds),
                None => {
                    self.estimates
                        .insert(group, Estimate::of(&[seconds]).expect("one"));
                }
            }
        }
        self.eta = self.compute_eta().map(|e| (e, Instant::now()));
    }

    fn run_requeued(&mut self, label: &str) {
        self.running.remove(label);
    }

    /// Seconds left: every run not finished at its group's estimate (the runs running less what
    /// they have run), over the parallelism seen. None before any run's time is known.
    fn compute_eta(&self) -> Option<Eta> {
        if self.pending.is_empty() {
            return Some(Eta {
                seconds: 0.0,
                low: 0.0,
                high: 0.0,
            });
        }
        let all: Vec<&Estimate> = self.estimates.values().collect();
        if all.is_empty() {
            return None;
        }
        let n = all.len() as f64;
        let fallback = Estimate {
            mean: all.iter().map(|e| e.mean).sum::<f64>() / n,
            min: all.iter().map(|e| e.min).fold(f64::INFINITY, f64::min),
            max: all.iter().map(|e| e.max).fold(0.0, f64::max),
            samples: 0,
        };
        // Runs running longer than their group's estimate say the estimate is low: their
        // group's pending runs take at least that long.
        let mut overdue: HashMap<&str, f64> = HashMap::new();
        for (label, started) in &self.running {
            if let Some(group) = self.pending.get(label) {
                let ran = started.elapsed().as_secs_f64();
                let mean = self.estimates.get(group).unwrap_or(&fallback).mean;
                if ran > mean {
                    let o = overdue.entry(group.as_str()).or_insert(0.0);
                    *o = o.max(ran);
                }
            }
        }
        let (mut mid, mut low, mut high) = (0.0, 0.0, 0.0);
        for (label, group) in &self.pending {
            let e = self.estimates.get(group).unwrap_or(&fallback);
            // Few samples: the range is what the group (or all runs) took at most.
            let (lo, hi) = if e.samples >= 3 {
                (e.min, e.max)
            } else {
                (e.min.min(fallback.min), e.max.max(fallback.max) * 1.5)
            };
            let late = overdue.get(group.as_str()).copied().unwrap_or(0.0);
            let (mean, hi) = (e.mean.max(late), hi.max(2.0 * late));
            match self.running.get(label) {
                // Running: what is left of it; past its estimate, about as long again.
                Some(t) => {
                    let ran = t.elapsed().as_secs_f64();
                    mid += if ran < mean { mean - ran } else { ran };
                    low += (lo - ran).max(0.0);
                    high += (hi - ran).max(ran);
                }
                None => {
                    mid += mean;
                    low += lo;
                    high += hi;
                }
            }
        }
        let width = self.width.max(1) as f64;
        Some(Eta {
            seconds: mid / width,
            low: low / width,
            high: high / width,
        })
    }

    /// The ETA now: computed afresh (the runs running have run longer since), or, for very
    /// large executions, the last one computed at a run's end, counted down since.
    pub fn eta_now(&self) -> Option<Eta> {
        let (eta, at) = self.eta?;
        if self.pending.len() <= 20_000 {
            return self.compute_eta();
        }
        let since = at.elapsed().as_secs_f64();
        Some(Eta {
            seconds: (eta.seconds - since).max(0.0),
            low: (eta.low - since).max(0.0),
            high: (eta.high - since).max(0.0),
        })
    }

    fn eta_text(&self) -> String {
        match self.eta_now() {
            Some(eta) => format!("ETA {}", eta.text()),
            None => "ETA estimating".into(),
        }
    }

    /// `[12/144 runs] 2 running · 0 failed · ETA 1m20s`
    pub fn line(&self) -> String {
        format!(
            "[{}/{}] {} running · {} failed · {}",
            self.done,
            count(self.total, "run", "runs"),
            self.running(),
            self.failed,
            self.eta_text()
        )
    }
}

/// How progress is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ProgressFormat {
    /// A bar on a terminal, plain lines every few seconds otherwise.
    Auto,
    /// Plain lines every few seconds, even on a terminal.
    Plain,
    /// One JSON object per event on stderr.
    Json,
}

/// A thread doing something every `every` until stopped.
struct Ticker {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Ticker {
    fn start(every: Duration, mut tick: impl FnMut() + Send + 'static) -> Ticker {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut last = Instant::now();
            while !flag.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(50).min(every));
                if last.elapsed() >= every && !flag.load(Ordering::SeqCst) {
                    tick();
                    last = Instant::now();
                }
            }
        });
        Ticker {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Ticker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The last non-empty line of a log file (its last 4 KiB), shortened to `width` characters.
fn last_line(path: &Path, width: usize) -> String {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(mut f) = std::fs::File::open(path) else {
        return String::new();
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let _ = f.seek(SeekFrom::Start(len.saturating_sub(4096)));
    let mut bytes = Vec::new();
    let _ = f.read_to_end(&mut bytes);
    let text = String::from_utf8_lossy(&bytes);
    let line = text
        .split(['\n', '\r'])
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .unwrap_or("");
    let mut short: String = line
        .chars()
        .filter(|c| !c.is_control())
        .take(width)
        .collect();
    if line.chars().count() > width {
        short.push('…');
    }
    short
}

/// A setup being watched: its start, its log.
struct Setup {
    tool: String,
    log: PathBuf,
    started: Instant,
    _ticker: Option<Ticker>,
    bar: Option<ProgressBar>,
}

/// How often plain lines are printed: every 5 s, or `MCCBUILD_PROGRESS_EVERY_MS`.
fn plain_interval() -> Duration {
    std::env::var("MCCBUILD_PROGRESS_EVERY_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(Duration::from_secs(5), Duration::from_millis)
}

/// Where JSON lines go: stderr, or a file (the store's copy of the events, `progress.jsonl`).
type Sink = Option<Arc<Mutex<std::fs::File>>>;

/// One JSON line to its sink, in one write (a reader never sees half a line unless it reads
/// during that write: it takes whole lines only). A log that cannot be written only loses the log.
fn emit(sink: &Sink, line: &str) {
    match sink {
        Some(file) => {
            use std::io::Write as _;
            let mut file = file.lock().unwrap_or_else(|e| e.into_inner());
            let _ = file.write_all(format!("{line}\n").as_bytes());
        }
        None => crate::signals::say(line),
    }
}

/// Progress on stderr: a bar on a terminal, plain lines otherwise, or JSON lines.
pub struct CliProgress {
    format: ProgressFormat,
    sink: Sink,
    tally: Arc<Mutex<Tally>>,
    bar: Option<ProgressBar>,
    ticker: Option<Ticker>,
    setup: Option<Setup>,
}

impl Default for CliProgress {
    fn default() -> Self {
        Self::new()
    }
}

fn lock(tally: &Mutex<Tally>) -> std::sync::MutexGuard<'_, Tally> {
    tally.lock().unwrap_or_else(|e| e.into_inner())
}

impl CliProgress {
    pub fn new() -> Self {
        Self::with_format(ProgressFormat::Auto)
    }

    pub fn with_format(format: ProgressFormat) -> Self {
        let format = match format {
            ProgressFormat::Auto if !std::io::stderr().is_terminal() => ProgressFormat::Plain,
            f => f,
        };
        CliProgress {
            format,
            sink: None,
            tally: Arc::default(),
            bar: None,
            ticker: None,
            setup: None,
        }
    }

    /// The JSON lines of `--progress=json`, written into `file` instead of stderr.
    pub fn json_into(file: std::fs::File) -> Self {
        let mut p = Self::with_format(ProgressFormat::Json);
        p.sink = Some(Arc::new(Mutex::new(file)));
        p
    }

    fn json(&self, event: &str, label: Option<&str>, extra: serde_json::Value) {
        let t = lock(&self.tally);
        let mut object = serde_json::json!({
            "event": event,
            "done": t.done,
            "total": t.total,
            "running": t.running(),
            "failed": t.failed,
        });
        if let Some(label) = label {
            object["run"] = label.into();
        }
        if let Some(eta) = t.eta_now() {
            object["eta_s"] = serde_json::json!((eta.seconds * 10.0).round() / 10.0);
            object["eta_range_s"] = serde_json::json!([
                (eta.low * 10.0).round() / 10.0,
                (eta.high * 10.0).round() / 10.0
            ]);
        }
        if let serde_json::Value::Object(extra) = extra {
            for (k, v) in extra {
                object[k] = v;
            }
        }
        emit(&self.sink, &object.to_string());
    }

    fn update_bar(&self) {
        if let Some(bar) = &self.bar {
            bar.set_position(lock(&self.tally).done as u64);
            // The message is drawn by the style's keys (running, failed, ETA): a tick redraws.
            bar.tick();
        }
    }

    fn say(&self, text: &str) {
        match &self.bar {
            Some(bar) => bar.println(text),
            None => crate::signals::say(text),
        }
    }
}

impl Progress for CliProgress {
    fn setup_started(&mut self, tool: &str, log: &Path) {
        let started = Instant::now();
        let (bar, ticker) = match self.format {
            ProgressFormat::Json => {
                self.json(
                    "setup_started",
                    None,
                    serde_json::json!({"tool": tool, "log": log}),
                );
                let (tool, log) = (tool.to_string(), log.to_path_buf());
                let sink = self.sink.clone();
                let ticker = Ticker::start(plain_interval(), move || {
                    emit(
                        &sink,
                        &serde_json::json!({"event": "setup_progress", "tool": tool,
                            "elapsed_s": started.elapsed().as_secs(), "log_tail": last_line(&log, 200)})
                        .to_string(),
                    );
                });
                (None, Some(ticker))
            }
            ProgressFormat::Plain => {
                say!(
                    "setting up tool {tool} (once per version of the tool; log: {})",
                    log.display()
                );
                let (tool, log) = (tool.to_string(), log.to_path_buf());
                let ticker = Ticker::start(plain_interval(), move || {
                    say!(
                        "setting up tool {tool}: {} · {}",
                        duration(started.elapsed().as_secs_f64()),
                        last_line(&log, 100)
                    );
                });
                (None, Some(ticker))
            }
            ProgressFormat::Auto => {
                let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
                bar.set_style(
                    ProgressStyle::with_template(
                        "{spinner} setting up tool {prefix} {elapsed} · {wide_msg}",
                    )
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
                );
                bar.set_prefix(tool.to_string());
                bar.enable_steady_tick(Duration::from_millis(200));
                let (shown, log) = (bar.clone(), log.to_path_buf());
                let ticker = Ticker::start(Duration::from_millis(300), move || {
                    shown.set_message(last_line(&log, 120));
                });
                (Some(bar), Some(ticker))
            }
        };
        self.setup = Some(Setup {
            tool: tool.to_string(),
            log: log.to_path_buf(),
            started,
            _ticker: ticker,
            bar,
        });
    }

    fn setup_finished(&mut self, tool: &str, ok: bool) {
        let Some(setup) = self.setup.take() else {
            return;
        };
        let seconds = setup.started.elapsed().as_secs_f64();
        if let Some(bar) = &setup.bar {
            bar.finish_and_clear();
        }
        drop(setup._ticker);
        match self.format {
            ProgressFormat::Json => self.json(
                "setup_finished",
                None,
                serde_json::json!({"tool": tool, "ok": ok, "elapsed_s": (seconds * 10.0).round() / 10.0}),
            ),
            _ if ok => say!("set up tool {} in {}", setup.tool, duration(seconds)),
            _ => say!(
                "setup of tool {} failed after {}: {} (log: {})",
                setup.tool,
                duration(seconds),
                last_line(&setup.log, 120),
                setup.log.display()
            ),
        }
    }

    fn planned(&mut self, runs: &[RunInfo]) {
        lock(&self.tally).planned(runs);
    }

    fn started(&mut self, total: usize) {
        {
            let mut t = lock(&self.tally);
            t.total = total;
            t.eta = t.compute_eta().map(|e| (e, Instant::now()));
        }
        match self.format {
            ProgressFormat::Auto => {
                let bar =
                    ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr());
                let (a, b) = (self.tally.clone(), self.tally.clone());
                bar.set_style(
                    ProgressStyle::with_template(
                        "{elapsed_precise} [{bar:30}] {pos}/{len} runs · {state} · {tally_eta}",
                    )
                    .unwrap_or_else(|_| ProgressStyle::default_bar())
                    .with_key(
                        "state",
                        move |_: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                            let t = lock(&a);
                            let _ = write!(w, "running {} · failures {}", t.running(), t.failed);
                        },
                    )
                    .with_key(
                        "tally_eta",
                        move |_: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                            let _ = write!(w, "{}", lock(&b).eta_text());
                        },
                    )
                    .progress_chars("=> "),
                );
                bar.enable_steady_tick(Duration::from_millis(200));
                self.bar = Some(bar);
            }
            ProgressFormat::Plain => {
                say!("executing {}", count(total, "run", "runs"));
                let tally = self.tally.clone();
                self.ticker = Some(Ticker::start(plain_interval(), move || {
                    say!("{}", lock(&tally).line());
                }));
            }
            ProgressFormat::Json => self.json("started", None, serde_json::json!({})),
        }
    }

    fn run_started(&mut self, label: &str) {
        lock(&self.tally).run_started(label);
        match self.format {
            ProgressFormat::Json => self.json("run_started", Some(label), serde_json::json!({})),
            _ => self.update_bar(),
        }
    }

    fn run_finished(&mut self, label: &str, outcome: &str, failed: bool) {
        lock(&self.tally).run_finished(label, failed);
        match self.format {
            ProgressFormat::Json => self.json(
                "run_finished",
                Some(label),
                serde_json::json!({"outcome": outcome, "run_failed": failed}),
            ),
            ProgressFormat::Auto => {
                if failed {
                    self.say(&format!("failed: {label}: {outcome}"));
                }
                self.update_bar();
            }
            ProgressFormat::Plain => {
                let t = lock(&self.tally);
                if failed {
                    say!("failed: {label}: {outcome}");
                }
                if t.done == t.total {
                    say!("{}", t.line());
                }
            }
        }
    }

    fn run_requeued(&mut self, label: &str) {
        lock(&self.tally).run_requeued(label);
        match self.format {
            ProgressFormat::Json => self.json("run_requeued", Some(label), serde_json::json!({})),
            _ => self.update_bar(),
        }
    }

    fn message(&mut self, text: &str) {
        match self.format {
            ProgressFormat::Json => self.json("message", None, serde_json::json!({"text": text})),
            _ => self.say(text),
        }
    }

    fn finished(&mut self) {
        self.ticker = None;
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
        if self.format == ProgressFormat::Json {
            self.json("finished", None, serde_json::json!({}));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plurals_and_durations() {
        assert_eq!(count(1, "run", "runs"), "1 run");
        assert_eq!(count(2, "answer", "answers"), "2 answers");
        assert_eq!(duration(5.4), "5s");
        assert_eq!(duration(80.0), "1m20s");
        assert_eq!(duration(3720.0), "1h02m");
    }

    #[test]
    fn a_run_finished_without_being_started_does_not_hide_those_running() {
        let mut t = Tally::default();
        t.run_started("a");
        t.run_started("b");
        t.run_finished("c", true); // an infrastructure failure: never started
        assert_eq!(t.running(), 2);
        t.run_finished("a", false);
        assert_eq!(t.running(), 1);
    }

    #[test]
    fn one_slow_run_widens_the_range_instead_of_moving_the_eta_alone() {
        let runs: Vec<RunInfo> = (0..10)
            .map(|i| RunInfo {
                label: format!("r{i}"),
                group: "t E".into(),
                history: vec![1.0, 1.0, 1.0, 1.0],
            })
            .collect();
        let mut t = Tally::default();
        t.planned(&runs);
        let eta = t.compute_eta().unwrap();
        assert!((eta.seconds - 10.0).abs() < 1e-9, "{eta:?}");
        assert_eq!(eta.text(), "10s");
        // A slow run (20 s) of the group: smoothed, the estimate moves by 30%, the range widens.
        t.estimates.get_mut("t E").unwrap().add(20.0);
        let eta = t.compute_eta().unwrap();
        assert!(
            eta.seconds < 10.0 * 7.0 && eta.high >= 10.0 * 20.0 - 1e-9,
            "{eta:?}"
        );
        assert!(eta.text().contains('–'), "{}", eta.text());
    }

    #[test]
    fn a_run_past_its_estimate_raises_the_eta_of_its_group() {
        let runs: Vec<RunInfo> = (0..3)
            .map(|i| RunInfo {
                label: format!("r{i}"),
                group: "t E".into(),
                history: vec![0.01, 0.01, 0.01],
            })
            .collect();
        let mut t = Tally::default();
        t.planned(&runs);
        t.run_started("r0");
        std::thread::sleep(Duration::from_millis(300));
        t.eta = t.compute_eta().map(|e| (e, Instant::now()));
        let eta = t.eta_now().unwrap();
        // r0 has run 0.3 s against an estimate of 0.01 s: about 0.3 s more, and r1, r2 as long.
        assert!(eta.seconds >= 0.85, "{eta:?}");
        assert!(eta.high >= eta.seconds, "{eta:?}");
    }
}
