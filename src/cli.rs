//! The command line: parse, dispatch, map errors to exit codes. The work lives in the library.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::{ArgGroup, Args, Parser, Subcommand};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::diag::Problems;
use crate::results::{podium_text_styled, scores_report, TermStyle};
use crate::session::{Filter, OpenError, Progress, Session};

/// Exit codes (docs/cli.md).
pub mod exit {
    /// Everything asked for was done.
    pub const OK: i32 = 0;
    /// Some runs could not be carried out (a tool's setup failed, an infrastructure failure);
    /// what could be done was recorded.
    pub const RUNS_FAILED: i32 = 1;
    /// The manifest, the rules or the inputs are invalid, or the command line is wrong.
    pub const INVALID_INPUT: i32 = 2;
    /// The store cannot be used.
    pub const STORE_ERROR: i32 = 3;
    /// An output file (an export) cannot be written.
    pub const OUTPUT_ERROR: i32 = 4;
    /// Interrupted (Ctrl-C): runs in flight were stopped and not recorded.
    pub const INTERRUPTED: i32 = 130;
}

#[derive(Parser, Debug)]
#[command(
    name = "mccbuild",
    version,
    about = "Model Checking Contest infrastructure: content-addressed runs, incremental scoring"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Args, Debug, Clone)]
pub struct ManifestArg {
    /// The contest manifest.
    #[arg(
        long,
        global = true,
        default_value = "contest.toml",
        value_name = "PATH"
    )]
    pub manifest: PathBuf,
}

#[derive(Args, Debug, Clone, Default)]
pub struct FilterArgs {
    /// Only this tool (repeatable).
    #[arg(long = "tool", value_name = "TOOL")]
    pub tools: Vec<String>,
    /// Only this model (repeatable).
    #[arg(long = "model", value_name = "MODEL")]
    pub models: Vec<String>,
    /// Only this examination or category (repeatable).
    #[arg(long = "examination", value_name = "EXAMINATION")]
    pub examinations: Vec<String>,
}

impl FilterArgs {
    fn filter(&self) -> Filter {
        Filter {
            tools: self.tools.clone(),
            models: self.models.clone(),
            examinations: self.examinations.clone(),
        }
    }
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Validate the manifest, the rules and the inputs (or, with --rules, rules files alone);
    /// report every problem at once.
    Check {
        #[command(flatten)]
        manifest: ManifestArg,
        /// Rules files to validate instead of the manifest (repeatable).
        #[arg(long = "rules", value_name = "RULES")]
        rules: Vec<PathBuf>,
    },
    /// Show how many runs the contest has, how many are in the store and how many are to run.
    Plan {
        #[command(flatten)]
        manifest: ManifestArg,
        #[command(flatten)]
        filter: FilterArgs,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Execute the runs that are not in the store, then print the podiums.
    Run {
        #[command(flatten)]
        manifest: ManifestArg,
        #[command(flatten)]
        filter: FilterArgs,
        /// Runs at a time (default: [executor] jobs).
        #[arg(long)]
        jobs: Option<usize>,
        /// Print JSON counts at the end instead of the podiums.
        #[arg(long)]
        json: bool,
    },
    /// Explain a value (every answer, Confidence, the case of E-3.1 that decided it) or a tool's
    /// score in a category (points per model, instance and examination, penalties, weights).
    Explain {
        #[command(flatten)]
        manifest: ManifestArg,
        /// The value's instance (with --examination and --id).
        #[arg(long)]
        instance: Option<String>,
        #[arg(long)]
        examination: Option<String>,
        /// A formula id; the examination's name for a global property; STATES, TRANSITIONS,
        /// MAX_TOKEN_IN_PLACE or MAX_TOKEN_PER_MARKING for StateSpace.
        #[arg(long)]
        id: Option<String>,
        /// The tool (with --category).
        #[arg(long)]
        tool: Option<String>,
        #[arg(long)]
        category: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// The reliability table: each tool's Confidence, values correct and selected, examinations
    /// entered (the MCC 2015 report's Table 3).
    Confidence {
        #[command(flatten)]
        manifest: ManifestArg,
        #[arg(long)]
        json: bool,
    },
    /// Read a results file (the layout of the MCC's raw-result-analysis.csv) into the store.
    Import {
        #[command(flatten)]
        manifest: ManifestArg,
        /// A file named in `results` of [contest].
        file: PathBuf,
        /// Print JSON counts.
        #[arg(long)]
        json: bool,
    },
    /// Write the results site (podiums, a page per tool, examination and model, the
    /// reliability table, execution-time charts): static HTML, readable from file://.
    Report {
        #[command(flatten)]
        manifest: ManifestArg,
        /// Where to write it (default: `report` beside the manifest).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Also write the exports (as `mccbuild export --dir`) in `exports/` and link them.
        #[arg(long)]
        exports: bool,
        /// Print JSON counts.
        #[arg(long)]
        json: bool,
    },
    /// Keep the scores current: apply each run record written to the store (by any executor),
    /// each edit of the manifest, the rules or a tool, and print what changed in the podiums.
    Watch {
        #[command(flatten)]
        manifest: ManifestArg,
        /// Also execute the runs a change makes necessary (with `mccbuild run`).
        #[arg(long)]
        run: bool,
        /// Serve the results site, updated live in the browser, on ADDR (`host:port`, or a port
        /// on loopback).
        #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = "127.0.0.1:8017")]
        serve: Option<String>,
        /// Print one JSON object per update.
        #[arg(long)]
        json: bool,
        /// Stop after N updates (for scripts and tests).
        #[arg(long, value_name = "N")]
        updates: Option<u64>,
    },
    /// Write the results: a CSV in the layout of the MCC's raw-result-analysis.csv, a JSON with
    /// the scores and every run, the trusted values as propertiesverdict XML files (one per model).
    #[command(group(ArgGroup::new("outputs").required(true).multiple(true).args(["csv", "json", "verdicts", "dir"])))]
    Export {
        #[command(flatten)]
        manifest: ManifestArg,
        /// The CSV, one row per run in the store (`-`: standard output).
        #[arg(long, value_name = "FILE")]
        csv: Option<PathBuf>,
        /// The JSON: scores, values and every run (`-`: standard output).
        #[arg(long, value_name = "FILE")]
        json: Option<PathBuf>,
        /// A folder for the verdict files, `<Model>.xml` (created if needed).
        #[arg(long, value_name = "DIR")]
        verdicts: Option<PathBuf>,
        /// A folder for all three: results.csv, results.json and verdicts/ (created if needed).
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
    /// Internal: execute the runs with these keys here, in the local sandbox, and record them
    /// into the store (what each step of a Slurm job runs). Exits 0 when every run is recorded
    /// (whatever the tool did), 1 when some could not be carried out (not recorded).
    #[command(hide = true)]
    ExecRun {
        #[command(flatten)]
        manifest: ManifestArg,
        /// A run key (64 hex digits; repeatable).
        #[arg(long = "key", value_name = "HEX")]
        keys: Vec<String>,
        /// A file of run keys, one a line (a line may start with the run's cores: `1 <key>`).
        #[arg(long, value_name = "FILE")]
        keys_file: Option<PathBuf>,
        /// Runs at a time (default 1).
        #[arg(long, default_value_t = 1)]
        jobs: usize,
    },
    /// Run one command in the sandbox runs get (cgroups, namespaces, pinned cores) and print
    /// how it ended and what it used, as BenchExec's runexec does: to check the sandbox on a
    /// machine, measure a tool by hand, or compare with runexec.
    Sandbox {
        /// CPU-time limit of the whole process tree, in seconds.
        #[arg(long, value_name = "S", default_value_t = 3600.0)]
        time: f64,
        /// Memory limit of the whole process tree, in MB.
        #[arg(long, value_name = "MB", default_value_t = 16384)]
        memory: u64,
        /// Wall-clock limit in seconds (default: twice the CPU-time limit plus 30 s).
        #[arg(long, value_name = "S")]
        wall: Option<f64>,
        /// Cores to pin the command to, e.g. `0` or `0,1` (default: the first core mccbuild may use).
        #[arg(long, value_name = "LIST", value_delimiter = ',')]
        cores: Vec<u32>,
        /// A folder the command must not see (repeatable).
        #[arg(long, value_name = "DIR")]
        hide: Vec<PathBuf>,
        /// Print JSON (with the head and tail of the command's output).
        #[arg(long)]
        json: bool,
        /// The command and its arguments.
        #[arg(trailing_var_arg = true, required = true, value_name = "COMMAND")]
        command: Vec<String>,
    },
    /// Compute Confidence, trusted values, scores and podiums from the store, executing nothing.
    Scores {
        #[command(flatten)]
        manifest: ManifestArg,
        /// Print JSON (with every value, its trusted value and every tool's answer).
        #[arg(long)]
        json: bool,
    },
}

use crate::exec::INTERRUPTED as CANCEL;

extern "C" fn on_interrupt(_: libc::c_int) {
    CANCEL.store(true, Ordering::SeqCst);
}

pub fn main_with(cli: Cli) -> i32 {
    match cli.command {
        Command::Check { rules, .. } if !rules.is_empty() => check_rules(&rules),
        Command::Check { manifest, .. } => check(&manifest.manifest),
        Command::Plan {
            manifest,
            filter,
            json,
        } => plan(&manifest.manifest, &filter.filter(), json),
        Command::Run {
            manifest,
            filter,
            jobs,
            json,
        } => run(&manifest.manifest, &filter.filter(), jobs, json),
        Command::Scores { manifest, json } => scores(&manifest.manifest, json),
        Command::ExecRun {
            manifest,
            keys,
            keys_file,
            jobs,
        } => exec_run(&manifest.manifest, keys, keys_file.as_deref(), jobs),
        Command::Sandbox {
            time,
            memory,
            wall,
            cores,
            hide,
            json,
            command,
        } => sandbox(time, memory, wall, cores, hide, json, command),
        Command::Import {
            manifest,
            file,
            json,
        } => import(&manifest.manifest, &file, json),
        Command::Explain {
            manifest,
            instance,
            examination,
            id,
            tool,
            category,
            json,
        } => explain(
            &manifest.manifest,
            ExplainWhat {
                instance,
                examination,
                id,
                tool,
                category,
            },
            json,
        ),
        Command::Confidence { manifest, json } => confidence(&manifest.manifest, json),
        Command::Report {
            manifest,
            out,
            exports,
            json,
        } => report(&manifest.manifest, out.as_deref(), exports, json),
        Command::Watch {
            manifest,
            run,
            serve,
            json,
            updates,
        } => crate::watch::watch(crate::watch::WatchOptions {
            manifest: manifest.manifest,
            run,
            serve,
            json,
            updates,
        }),
        Command::Export {
            manifest,
            csv,
            json,
            verdicts,
            dir,
        } => export(
            &manifest.manifest,
            ExportTo {
                csv,
                json,
                verdicts,
                dir,
            },
        ),
    }
}

fn sandbox(
    time: f64,
    memory: u64,
    wall: Option<f64>,
    cores: Vec<u32>,
    hide: Vec<PathBuf>,
    json: bool,
    argv: Vec<String>,
) -> i32 {
    use crate::exec::local::{wall_limit, LocalExecutor, LocalSettings, SandboxCommand};
    if !(time.is_finite() && time > 0.0) || wall.is_some_and(|w| !(w.is_finite() && w > 0.0)) {
        eprintln!("error: --time and --wall must be positive numbers of seconds");
        return exit::INVALID_INPUT;
    }
    let available = crate::exec::pool::available_cores();
    if let Some(c) = cores.iter().find(|c| !available.contains(c)) {
        eprintln!("error: --cores: core {c} is not one mccbuild may use here ({available:?})");
        return exit::INVALID_INPUT;
    }
    let cores = if cores.is_empty() {
        available.into_iter().take(1).collect()
    } else {
        cores
    };
    let t = crate::timing::phase("sandbox: executor");
    let executor = LocalExecutor::new(LocalSettings {
        hidden: hide,
        probe_isolation: false,
        ..LocalSettings::default()
    });
    let command = SandboxCommand {
        argv,
        cpu_limit_s: time,
        memory_limit_bytes: memory.saturating_mul(1 << 20),
        wall_limit: wall
            .map(Duration::from_secs_f64)
            .unwrap_or_else(|| wall_limit(time.ceil() as u64)),
        cores: cores.clone(),
    };
    drop(t);
    let cancel = Arc::new(AtomicBool::new(false));
    let t = crate::timing::phase("sandbox: run");
    let result = match executor.run_command(&command, &cancel) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            if executor.sandbox() == "cgroup+namespaces" {
                eprintln!("(MCCBUILD_SANDBOX=cgroup runs without namespaces)");
            }
            return exit::RUNS_FAILED;
        }
    };
    drop(t);
    let (reason, detail) = match result.termination {
        crate::store::Termination::Exit { code } => ("exit", Some(code)),
        crate::store::Termination::Signal { signal } => ("signal", Some(signal)),
        crate::store::Termination::CpuLimit => ("cpu_limit", None),
        crate::store::Termination::MemoryLimit => ("memory_limit", None),
        crate::store::Termination::WallLimit => ("wall_limit", None),
        crate::store::Termination::OutputLimit => ("output_limit", None),
        crate::store::Termination::GuestPanic => ("guest_panic", None),
    };
    if json {
        let out = serde_json::json!({
            "termination": result.termination,
            "cpu_time_s": result.cpu_time_s,
            "wall_time_s": result.wall_time_s,
            "peak_memory_bytes": result.peak_memory_bytes,
            "sandbox": executor.sandbox(),
            "measurement": executor.method(),
            "cores": cores,
            "stdout": result.stdout,
            "stderr": result.stderr,
        });
        println!("{out}");
    } else {
        println!("termination={reason}");
        match (reason, detail) {
            ("exit", Some(code)) => println!("returnvalue={code}"),
            ("signal", Some(signal)) => println!("signal={signal}"),
            _ => {}
        }
        println!("cputime={:.6}s", result.cpu_time_s);
        println!("walltime={:.6}s", result.wall_time_s);
        println!("memory={}B", result.peak_memory_bytes);
        println!(
            "cores={}",
            cores
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(",")
        );
        println!("sandbox={}", executor.sandbox());
        println!("measurement={}", executor.method());
        println!(
            "output={}B{}",
            result.stdout.bytes + result.stderr.bytes,
            if result.stdout.truncated || result.stderr.truncated {
                " (truncated in the capture)"
            } else {
                ""
            }
        );
    }
    exit::OK
}

fn report(
    manifest: &std::path::Path,
    out: Option<&std::path::Path>,
    exports: bool,
    json: bool,
) -> i32 {
    let session = match open(manifest) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let dir = match out {
        Some(d) => d.to_path_buf(),
        None => session.plan.contest.root.join("report"),
    };
    let (db, handles) = session.scoring();
    let mut data = crate::report::ReportData::gather(&session.plan, &db, &handles, |key| {
        session.index.get(key)
    });
    if exports {
        if let Err(e) = std::fs::create_dir_all(&dir)
            .map_err(|e| e.to_string())
            .and_then(|_| {
                crate::export::write_all(&session, &db, &handles, &dir.join("exports"))
                    .map_err(|e| e.to_string())
            })
        {
            eprintln!("error: {e}");
            return exit::STORE_ERROR;
        }
        data.exports = true;
    }
    match crate::report::write_site(&data, &dir) {
        Ok(summary) => {
            if json {
                println!("{}", serde_json::to_string(&summary).unwrap_or_default());
            } else {
                println!(
                    "report: {} pages, {} charts, {:.1} MB in {}; open {}",
                    summary.pages,
                    summary.charts,
                    summary.bytes as f64 / 1e6,
                    dir.display(),
                    dir.join("index.html").display()
                );
            }
            exit::OK
        }
        Err(e) => {
            eprintln!("error: {e}");
            eprintln!("help: choose a writable directory with --out DIR");
            exit::STORE_ERROR
        }
    }
}

fn report_problems(problems: &Problems) -> i32 {
    eprintln!("{problems}");
    let n = problems.len();
    eprintln!("{n} problem{} found", if n == 1 { "" } else { "s" });
    exit::INVALID_INPUT
}

fn open_error(e: OpenError) -> i32 {
    match e {
        OpenError::Input(problems) => report_problems(&problems),
        OpenError::Store(message) => {
            eprintln!("error: {message}");
            exit::STORE_ERROR
        }
    }
}

fn open(manifest: &std::path::Path) -> Result<Session, i32> {
    let session = Session::open(manifest).map_err(open_error)?;
    for w in &session.warnings {
        eprintln!("warning: {w}");
    }
    Ok(session)
}

fn warn_instance_problems(session: &Session) {
    for p in &session.plan.problems.0 {
        eprintln!("warning: {p}");
    }
}

fn check(manifest: &std::path::Path) -> i32 {
    let session = match Session::open(manifest) {
        Ok(s) => s,
        Err(e) => return open_error(e),
    };
    if !session.plan.problems.is_empty() {
        return report_problems(&session.plan.problems);
    }
    let plan = &session.plan;
    println!(
        "ok: {} ({}): {} models, {} instances, {} tools, {} runs",
        plan.contest.name,
        plan.contest.edition.info.name,
        plan.models.len(),
        plan.instances.len(),
        plan.contest.tools.len(),
        plan.runs.len()
    );
    exit::OK
}

fn check_rules(files: &[PathBuf]) -> i32 {
    let mut problems = Problems::default();
    for file in files {
        match crate::rules::edition::Edition::load(file) {
            Ok(edition) => println!(
                "ok: {} ({}): {} categories, {} examinations, {} model kinds",
                file.display(),
                edition.info.name,
                edition.categories.len(),
                edition.examinations.len(),
                edition.model_kinds.len()
            ),
            Err(p) => problems.extend(p),
        }
    }
    if problems.is_empty() {
        exit::OK
    } else {
        report_problems(&problems)
    }
}

fn plan(manifest: &std::path::Path, filter: &Filter, json: bool) -> i32 {
    let session = match open(manifest) {
        Ok(s) => s,
        Err(code) => return code,
    };
    warn_instance_problems(&session);
    let selection = match session.select(filter) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return exit::INVALID_INPUT;
        }
    };
    let summary = session.summary(&selection);
    if json {
        println!("{}", serde_json::to_string(&summary).unwrap_or_default());
    } else {
        println!(
            "{} runs: {} in the store, {} to run",
            summary.runs, summary.cached, summary.to_run
        );
        for (tool, c) in &summary.by_tool {
            println!(
                "  {tool:<20} {:>7} runs {:>7} cached {:>7} to run",
                c.runs, c.cached, c.to_run
            );
        }
    }
    exit::OK
}

fn run(manifest: &std::path::Path, filter: &Filter, jobs: Option<usize>, json: bool) -> i32 {
    let mut session = match open(manifest) {
        Ok(s) => s,
        Err(code) => return code,
    };
    warn_instance_problems(&session);
    let selection = match session.select(filter) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return exit::INVALID_INPUT;
        }
    };
    let jobs = jobs.unwrap_or(session.plan.contest.executor.jobs);
    let (cancel, watcher) = install_cancel();
    let mut progress = CliProgress::new();
    let outcome = session.execute(&selection, jobs, &mut progress, &cancel);
    let interrupted = CANCEL.load(Ordering::SeqCst);
    cancel.store(true, Ordering::SeqCst);
    let _ = watcher.join();
    if interrupted {
        eprintln!(
            "interrupted: {} runs recorded; runs in flight were stopped and not recorded",
            outcome.executed
        );
        return exit::INTERRUPTED;
    }
    if json {
        println!("{}", serde_json::to_string(&outcome).unwrap_or_default());
    } else {
        eprintln!(
            "{} executed, {} cached, {} failed",
            outcome.executed, outcome.cached, outcome.failed
        );
        let report = session.podium_report();
        print!(
            "{}",
            podium_text_styled(&session.plan, &report, TermStyle::detect())
        );
    }
    if outcome.failed > 0 {
        exit::RUNS_FAILED
    } else {
        exit::OK
    }
}

/// SIGINT and SIGTERM set the returned flag (checked by executors); join the thread after
/// setting the flag yourself.
fn install_cancel() -> (Arc<AtomicBool>, std::thread::JoinHandle<()>) {
    // SAFETY: installing a handler that only stores to an atomic.
    unsafe {
        libc::signal(
            libc::SIGINT,
            on_interrupt as *const () as libc::sighandler_t,
        );
        libc::signal(
            libc::SIGTERM,
            on_interrupt as *const () as libc::sighandler_t,
        );
    }
    let cancel = Arc::new(AtomicBool::new(false));
    let watcher = {
        let cancel = cancel.clone();
        std::thread::spawn(move || loop {
            if CANCEL.load(Ordering::SeqCst) {
                cancel.store(true, Ordering::SeqCst);
                break;
            }
            if cancel.load(Ordering::SeqCst) {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        })
    };
    (cancel, watcher)
}

/// `mccbuild exec-run`: the runs of these keys, here, in the local sandbox (a Slurm step).
fn exec_run(
    manifest: &std::path::Path,
    mut keys: Vec<String>,
    keys_file: Option<&std::path::Path>,
    jobs: usize,
) -> i32 {
    if let Some(file) = keys_file {
        match std::fs::read_to_string(file) {
            Ok(text) => keys.extend(
                text.lines()
                    .filter_map(|l| l.split_whitespace().last())
                    .map(String::from),
            ),
            Err(e) => {
                eprintln!("error: cannot read the keys file {}: {e}", file.display());
                return exit::INVALID_INPUT;
            }
        }
    }
    let mut wanted = Vec::new();
    for k in &keys {
        match crate::key::RunKey::from_hex(k) {
            Some(key) => wanted.push(key),
            None => {
                eprintln!("error: `{k}` is not a run key (64 hex digits)");
                return exit::INVALID_INPUT;
            }
        }
    }
    let mut session = match open(manifest) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let mut selection = Vec::new();
    let mut unknown = 0;
    for key in &wanted {
        match session.plan.runs.iter().position(|r| r.key == *key) {
            Some(i) => selection.push(i),
            None => {
                unknown += 1;
                eprintln!(
                    "error: run {key} is not a run of {} as this machine ({}) sees it: its sandbox ({}), the contest's files or mccbuild differ from those of the machine that submitted it",
                    manifest.display(),
                    crate::exec::host_name(),
                    session
                        .executor
                        .key_ingredients()
                        .iter()
                        .map(|(k, v)| format!("{k}={v}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            }
        }
    }
    let (cancel, watcher) = install_cancel();
    let mut progress = StepProgress;
    let outcome = session.execute_here(&selection, jobs, &mut progress, &cancel);
    let interrupted = CANCEL.load(Ordering::SeqCst);
    cancel.store(true, Ordering::SeqCst);
    let _ = watcher.join();
    if interrupted {
        return exit::INTERRUPTED;
    }
    if outcome.failed > 0 || unknown > 0 {
        exit::RUNS_FAILED
    } else {
        exit::OK
    }
}

/// A step's lines, for its job's log.
struct StepProgress;

impl Progress for StepProgress {
    fn run_finished(&mut self, label: &str, outcome: &str, failed: bool) {
        let host = std::env::var("SLURMD_NODENAME").unwrap_or_else(|_| crate::exec::host_name());
        let word = if failed { "failed" } else { "recorded" };
        eprintln!("{word} on {host}: {label}: {outcome}");
    }

    fn message(&mut self, text: &str) {
        eprintln!("{text}");
    }
}

struct ExplainWhat {
    instance: Option<String>,
    examination: Option<String>,
    id: Option<String>,
    tool: Option<String>,
    category: Option<String>,
}

fn explain(manifest: &std::path::Path, what: ExplainWhat, json: bool) -> i32 {
    let session = match open(manifest) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let (db, handles) = session.scoring();
    let out = match what {
        ExplainWhat { instance: Some(i), examination: Some(e), id: Some(v), tool: None, category: None } => {
            crate::explain::explain_value(&session.plan, &db, &handles, &i, &e, &v).map(|x| {
                if json {
                    serde_json::to_string(&x).unwrap_or_default() + "\n"
                } else {
                    crate::explain::value_text(&x)
                }
            })
        }
        ExplainWhat { instance: None, examination: None, id: None, tool: Some(t), category: Some(c) } => {
            crate::explain::explain_tool(&session.plan, &db, &handles, &t, &c).map(|x| {
                if json {
                    serde_json::to_string(&x).unwrap_or_default() + "\n"
                } else {
                    crate::explain::tool_text(&x)
                }
            })
        }
        _ => Err("explain a value with --instance I --examination E --id ID, or a tool's score with --tool T --category C".to_string()),
    };
    match out {
        Ok(text) => {
            print!("{text}");
            exit::OK
        }
        Err(e) => {
            eprintln!("error: {e}");
            exit::INVALID_INPUT
        }
    }
}

fn confidence(manifest: &std::path::Path, json: bool) -> i32 {
    let session = match open(manifest) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let (db, handles) = session.scoring();
    let rows = crate::explain::confidence_table(&session.plan, &db, &handles);
    if json {
        println!("{}", serde_json::to_string(&rows).unwrap_or_default());
    } else {
        let agreed = crate::db::confidence_tally(&db, handles.contest).agreed_values;
        print!("{}", crate::explain::confidence_text(&rows, agreed));
    }
    exit::OK
}

fn import(manifest: &std::path::Path, file: &std::path::Path, json: bool) -> i32 {
    let mut session = match open(manifest) {
        Ok(s) => s,
        Err(code) => return code,
    };
    warn_instance_problems(&session);
    match session.import(file) {
        Ok(summary) => {
            if json {
                println!("{}", serde_json::to_string(&summary).unwrap_or_default());
            } else {
                println!(
                    "{}: {} runs, {} imported, {} already in the store",
                    file.display(),
                    summary.runs,
                    summary.imported,
                    summary.cached
                );
            }
            exit::OK
        }
        Err(e) => {
            eprintln!("error: {e}");
            exit::INVALID_INPUT
        }
    }
}

struct ExportTo {
    csv: Option<PathBuf>,
    json: Option<PathBuf>,
    verdicts: Option<PathBuf>,
    dir: Option<PathBuf>,
}

fn is_stdout(path: &Option<PathBuf>) -> bool {
    path.as_deref() == Some(std::path::Path::new("-"))
}

fn export(manifest: &std::path::Path, to: ExportTo) -> i32 {
    if is_stdout(&to.csv) && is_stdout(&to.json) {
        eprintln!("error: --csv - and --json - would both write to standard output; write one of them to a file");
        return exit::INVALID_INPUT;
    }
    for (flag, path) in [("--verdicts", &to.verdicts), ("--dir", &to.dir)] {
        if is_stdout(path) {
            eprintln!(
                "error: {flag} names a folder; `-` (standard output) is for --csv and --json"
            );
            return exit::INVALID_INPUT;
        }
    }
    let session = match open(manifest) {
        Ok(s) => s,
        Err(code) => return code,
    };
    warn_instance_problems(&session);
    let (db, handles) = session.scoring();
    let export = match crate::export::collect(&session, &db, &handles) {
        Ok(e) => e,
        Err(e) => return export_error(e),
    };
    if export.not_stored > 0 {
        eprintln!(
            "note: {} planned runs are not in the store and are not exported (`mccbuild run`, or `mccbuild import` for results files, records them)",
            export.not_stored
        );
    }
    for (path, csv) in [(&to.csv, true), (&to.json, false)] {
        let Some(path) = path else { continue };
        let bytes = if csv {
            export.csv_bytes()
        } else {
            export.json_bytes()
        };
        let written = if path.as_path() == std::path::Path::new("-") {
            let mut out = std::io::stdout().lock();
            match out.write_all(&bytes).and_then(|_| out.flush()) {
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                    Err(crate::export::ExportError::Write {
                        path: PathBuf::from("standard output"),
                        source: e,
                    })
                }
                _ => Ok(()),
            }
        } else {
            crate::export::write_file(path, &bytes).map(|_| eprintln!("wrote {}", path.display()))
        };
        if let Err(e) = written {
            return export_error(e);
        }
    }
    let mut without_values = Vec::new();
    if let Some(dir) = &to.verdicts {
        match export.write_verdicts(dir) {
            Ok(files) => eprintln!(
                "wrote {} verdict files under {}",
                files.len(),
                dir.display()
            ),
            Err(e) => return export_error(e),
        }
        without_values = export.models_without_values();
    }
    if let Some(dir) = &to.dir {
        match export.write_dir(dir) {
            Ok(written) => {
                eprintln!(
                    "wrote results.csv, results.json and {} verdict files under {}",
                    written.verdicts.len(),
                    dir.display()
                );
                without_values = written.models_without_values;
            }
            Err(e) => return export_error(e),
        }
    }
    if !without_values.is_empty() {
        eprintln!(
            "note: no verdict file for {} (none of their instances has an examination in the contest)",
            without_values.join(", ")
        );
    }
    exit::OK
}

fn export_error(e: crate::export::ExportError) -> i32 {
    eprintln!("error: {e}");
    match e {
        crate::export::ExportError::Write { .. } => exit::OUTPUT_ERROR,
        crate::export::ExportError::Record { .. } => exit::STORE_ERROR,
        crate::export::ExportError::ModelFileName { .. }
        | crate::export::ExportError::NotXml { .. } => exit::INVALID_INPUT,
    }
}

fn scores(manifest: &std::path::Path, json: bool) -> i32 {
    let session = match open(manifest) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let report = if json {
        let (db, handles) = session.scoring();
        scores_report(&session.plan, &db, &handles, true)
    } else {
        session.podium_report()
    };
    let mut out = std::io::stdout().lock();
    let written = if json {
        serde_json::to_writer(&mut out, &report)
            .map_err(std::io::Error::other)
            .and_then(|_| writeln!(out))
    } else {
        write!(
            out,
            "{}",
            podium_text_styled(&session.plan, &report, TermStyle::detect())
        )
    };
    match written {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            eprintln!("error: cannot write the scores: {e}");
            exit::RUNS_FAILED
        }
        _ => exit::OK,
    }
}

/// Progress on stderr: a bar on a terminal, plain lines otherwise (CI logs).
struct CliProgress {
    bar: Option<ProgressBar>,
    total: usize,
    done: usize,
    running: usize,
    failed: usize,
    last_line: Instant,
}

impl CliProgress {
    fn new() -> Self {
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
        eprintln!("setting up tool {tool} (once per version of the tool)...");
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
            eprintln!("executing {total} runs");
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
                    eprintln!("[{}/{}] {label}: {outcome}", self.done, self.total);
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
            None => eprintln!("{text}"),
        }
    }

    fn finished(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}
