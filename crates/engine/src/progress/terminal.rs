//! Progress on the terminal ([`CliProgress`]): a bar on a terminal, plain periodic lines
//! without one (CI logs), or JSON lines (`run --progress=json`, for dashboards; also the
//! store's copy of the events, `progress.jsonl`), all from one [`Tally`].

/// `eprintln!` that never panics: a closed stderr pipe is noticed by the signal handling of
/// the binary, which stops the runs like SIGTERM.
macro_rules! say {
    ($($arg:tt)*) => {
        super::say(&format!($($arg)*))
    };
}

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use mccbuild_exec::pool::{CoreWait, since_text};

use super::tally::{Tally, duration};
use super::{Progress, RunEvent, RunInfo, count};

/// How progress is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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

/// The width of the terminal standard error is drawn on, if it is one.
fn terminal_columns() -> Option<usize> {
    rustix::termios::tcgetwinsize(std::io::stderr())
        .ok()
        .map(|size| usize::from(size.ws_col))
        .filter(|&columns| columns > 0)
}

/// The bar's counts: `2 running · 130 queued · 0 failed`. Under 80 columns the queued count is
/// left out and the failed one is shown only when there is one, so that the line (elapsed time,
/// bar, counts, ETA) stays within 60 columns (`the_progress_bar_fits_a_narrow_terminal`,
/// tests/it/ux.rs); `--progress plain` and `json` always give every count.
fn state_text(t: &Tally, columns: Option<usize>) -> String {
    // Nothing runs because another process holds the cores: who, since when.
    if let (Some(waiting), 0) = (&t.waiting, t.running()) {
        return waiting.clone();
    }
    if columns.is_some_and(|c| c < 80) {
        if t.failed > 0 {
            format!("{} running · {} failed", t.running(), t.failed)
        } else {
            format!("{} running", t.running())
        }
    } else {
        format!(
            "{} running · {} queued · {} failed",
            t.running(),
            t.queued(),
            t.failed
        )
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
        None => super::say(line),
    }
}

/// Progress on stderr: a bar on a terminal, plain lines otherwise, or JSON lines.
pub struct CliProgress {
    format: ProgressFormat,
    sink: Sink,
    tally: Arc<Mutex<Tally>>,
    bar: Option<ProgressBar>,
    ticker: Option<Ticker>,
    /// The setups running (several at once), in the order they started.
    setups: Vec<Setup>,
    /// Their spinners on a terminal, drawn together.
    setup_bars: Option<MultiProgress>,
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
            setups: Vec::new(),
            setup_bars: None,
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
            "queued": t.queued(),
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

    /// Takes the setup of `tool` off the screen (its spinner cleared, its ticker stopped).
    fn end_setup(&mut self, tool: &str) -> Option<Setup> {
        let at = self.setups.iter().position(|s| s.tool == tool)?;
        let mut setup = self.setups.remove(at);
        if let Some(bar) = &setup.bar {
            bar.finish_and_clear();
        }
        setup._ticker = None;
        Some(setup)
    }

    fn say(&self, text: &str) {
        match &self.bar {
            Some(bar) => bar.println(text),
            None => super::say(text),
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
                let bar = self
                    .setup_bars
                    .get_or_insert_with(|| {
                        MultiProgress::with_draw_target(ProgressDrawTarget::stderr())
                    })
                    .add(ProgressBar::new_spinner());
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
        self.setups.push(Setup {
            tool: tool.to_string(),
            log: log.to_path_buf(),
            started,
            _ticker: ticker,
            bar,
        });
    }

    fn setup_finished(&mut self, tool: &str, ok: bool) {
        let Some(setup) = self.end_setup(tool) else {
            return;
        };
        let seconds = setup.started.elapsed().as_secs_f64();
        let say = |text: String| match &self.setup_bars {
            Some(bars) => {
                let _ = bars.println(text);
            }
            None => super::say(&text),
        };
        match self.format {
            ProgressFormat::Json => self.json(
                "setup_finished",
                None,
                serde_json::json!({"tool": tool, "ok": ok, "elapsed_s": (seconds * 10.0).round() / 10.0}),
            ),
            _ if ok => say(format!(
                "set up tool {} in {}",
                setup.tool,
                duration(seconds)
            )),
            _ => say(format!(
                "setup of tool {} failed after {}: {} (log: {})",
                setup.tool,
                duration(seconds),
                last_line(&setup.log, 120),
                setup.log.display()
            )),
        }
        if self.setups.is_empty() {
            self.setup_bars = None;
        }
    }

    fn setup_stopped(&mut self, tool: &str) {
        if let Some(setup) = self.end_setup(tool) {
            if self.format == ProgressFormat::Json {
                let seconds = setup.started.elapsed().as_secs_f64();
                self.json(
                    "setup_stopped",
                    None,
                    serde_json::json!({"tool": tool, "elapsed_s": (seconds * 10.0).round() / 10.0}),
                );
            }
        }
        if self.setups.is_empty() {
            self.setup_bars = None;
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
                // The bar takes what the terminal leaves (`wide_bar`): on 60 columns the line
                // stays one line (`the_progress_bar_fits_a_narrow_terminal`, tests/it/ux.rs).
                bar.set_style(
                    ProgressStyle::with_template(
                        "{elapsed_precise} [{wide_bar}] {pos}/{len} · {state} · {tally_eta}",
                    )
                    .unwrap_or_else(|_| ProgressStyle::default_bar())
                    .with_key(
                        "state",
                        move |_: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                            let t = lock(&a);
                            let _ = write!(w, "{}", state_text(&t, terminal_columns()));
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

    fn run(&mut self, event: &RunEvent<'_>) {
        match event {
            RunEvent::Started { label, .. } => {
                lock(&self.tally).run_started(label);
                match self.format {
                    ProgressFormat::Json => {
                        self.json("run_started", Some(label), serde_json::json!({}))
                    }
                    _ => self.update_bar(),
                }
            }
            RunEvent::Finished { label, end, .. } => {
                let (outcome, failed) = (end.text(), end.failed());
                lock(&self.tally).run_finished(label, failed);
                // A run stopped by an interruption: its line says so (not "failed").
                let line = match (failed, end.interrupted()) {
                    (true, _) => Some(format!("failed: {label}: {outcome}")),
                    (false, true) => Some(format!("{label}: {outcome}")),
                    (false, false) => None,
                };
                match self.format {
                    ProgressFormat::Json => {
                        let mut fields =
                            serde_json::json!({"outcome": outcome, "run_failed": failed});
                        if end.interrupted() {
                            fields["interrupted"] = true.into();
                        }
                        self.json("run_finished", Some(label), fields)
                    }
                    ProgressFormat::Auto => {
                        if let Some(line) = &line {
                            self.say(line);
                        }
                        self.update_bar();
                    }
                    ProgressFormat::Plain => {
                        let t = lock(&self.tally);
                        if let Some(line) = &line {
                            say!("{line}");
                        }
                        if t.done == t.total {
                            say!("{}", t.line());
                        }
                    }
                }
            }
            RunEvent::Requeued { label, .. } => {
                lock(&self.tally).run_requeued(label);
                match self.format {
                    ProgressFormat::Json => {
                        self.json("run_requeued", Some(label), serde_json::json!({}))
                    }
                    _ => self.update_bar(),
                }
            }
        }
    }

    fn message(&mut self, text: &str) {
        match self.format {
            ProgressFormat::Json => self.json("message", None, serde_json::json!({"text": text})),
            _ => self.say(text),
        }
    }

    fn waiting(&mut self, wait: &CoreWait) {
        lock(&self.tally).waiting = Some(wait.short());
        match self.format {
            ProgressFormat::Json => {
                let held: Vec<serde_json::Value> = wait
                    .held
                    .iter()
                    .map(|h| {
                        serde_json::json!({
                            "core": h.core,
                            "pid": h.pid,
                            "contest": h.contest,
                            "since": since_text(h.since_unix),
                        })
                    })
                    .collect();
                self.json(
                    "waiting",
                    None,
                    serde_json::json!({
                        "needed": wait.needed,
                        "held": held,
                        "held_unknown": wait.unknown,
                        "ahead": wait.ahead,
                        "text": wait.text(),
                    }),
                );
            }
            _ => {
                self.say(&wait.text());
                self.update_bar();
            }
        }
    }

    fn finished(&mut self) {
        for setup in std::mem::take(&mut self.setups) {
            if let Some(bar) = &setup.bar {
                bar.finish_and_clear();
            }
        }
        self.setup_bars = None;
        self.ticker = None;
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
        if self.format == ProgressFormat::Json {
            self.json("finished", None, serde_json::json!({}));
        }
    }
}
