//! `mccbuild qualify`: the MCC's qualification phase. Each tool runs every examination it takes
//! part in on the first instance of each known model (through the normal plan, store and
//! executor: the runs are cached like any other), then every run is checked against the protocol
//! (`mccbuild_core::conformance`). A tool qualifies when no run has a fault; each fault is named
//! with the run that shows it and how to reproduce that run by hand.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::sync::atomic::Ordering;

use mccbuild_core::conformance::{check_run, Check, RunOutput};
use mccbuild_core::protocol::Expected;
use mccbuild_core::{hex, Response};
use mccbuild_plan::manifest::InstanceSource;
use mccbuild_plan::RunOrigin;
use serde::Serialize;

use crate::error::Error;
use crate::progress::CliProgress;
use crate::session::{Filter, Session};

/// What `qualify --json` prints.
#[derive(Debug, Serialize)]
pub struct QualifyReport {
    /// Every tool the qualification covered, qualified or not.
    pub tools: BTreeMap<String, ToolVerdict>,
}

#[derive(Debug, Default, Serialize)]
pub struct ToolVerdict {
    pub qualified: bool,
    pub runs: usize,
    pub answered: usize,
    pub cannot_compute: usize,
    pub do_not_compete: usize,
    /// CPU time of all its qualification runs, and the largest peak memory of one.
    pub cpu_time_s: f64,
    pub max_peak_memory_mb: f64,
    pub problems: Vec<Problem>,
    /// Each run: where, how it ended, what it used.
    pub run_list: Vec<RunLine>,
}

#[derive(Debug, Serialize)]
pub struct Problem {
    pub check: Check,
    pub instance: String,
    pub examination: String,
    pub detail: String,
    /// The run: its key, its record (full stdout and stderr heads and tails), and a shell
    /// command that runs the tool as the run did (outside the sandbox).
    pub key: String,
    pub record: String,
    pub reproduce: String,
}

#[derive(Debug, Serialize)]
pub struct RunLine {
    pub instance: String,
    pub examination: String,
    pub outcome: String,
    pub exit: String,
    pub cpu_time_s: f64,
    pub wall_time_s: f64,
    pub peak_memory_mb: f64,
}

pub fn qualify(
    manifest: &Path,
    filter: &Filter,
    jobs: Option<usize>,
    json: bool,
    html: Option<&Path>,
) -> Result<(), Error> {
    // qualify executes runs: it holds the store's execution lock as `run` does.
    let mut session = Session::open_executing_and_warn(
        manifest,
        mccbuild_store::LockWait::Wait,
        "mccbuild qualify",
    )?;
    session.warn_instance_problems();
    let selection = qualification_runs(&session, filter)?;
    session.store.check_writable()?;
    let jobs = jobs.unwrap_or(session.plan.contest.executor.jobs);
    let cancel = crate::signals::cancel_on_interrupt()
        .map_err(|e| Error::NotStarted(format!("cannot handle signals: {e}")))?;
    let outcome = session.execute(&selection, jobs, &mut CliProgress::new(), &cancel);
    outcome.record_error()?;
    if cancel.load(Ordering::SeqCst) {
        crate::signals::say(&format!(
            "interrupted: {} runs recorded; runs in flight were stopped and not recorded",
            outcome.executed
        ));
        return Err(Error::Interrupted);
    }
    let report = check_runs(&session, &selection);
    if let Some(path) = html {
        crate::commands::write_page(path, &report_page(&report))?;
    }
    if json {
        super::print_json(&report)?;
    } else {
        super::print_out(&report_text(&report))?;
    }
    match outcome.failed {
        0 => Ok(()),
        n => Err(Error::RunsFailed(n)),
    }
}

/// The runs of the qualification: each tool, each examination it takes part in, the first
/// instance of each model that is not new (the edition's new-model kind: `surprise`), narrowed
/// by `filter`. Runs imported from results files are not the tool's own runs: left out.
fn qualification_runs(session: &Session, filter: &Filter) -> Result<Vec<usize>, Error> {
    let plan = &session.plan;
    let new_kind = plan.contest.edition.new_model_kind;
    let first_instances: Vec<usize> = plan
        .models
        .iter()
        .filter(|m| Some(m.kind) != new_kind)
        .filter_map(|m| m.instances.first().copied())
        .collect();
    Ok(session
        .select(filter)?
        .into_iter()
        .filter(|&i| {
            let run = &plan.runs[i];
            run.origin == RunOrigin::Executed
                && first_instances.contains(&plan.exam_instances[run.exam_instance].instance)
        })
        .collect())
}

fn check_runs(session: &Session, selection: &[usize]) -> QualifyReport {
    let plan = &session.plan;
    let mut tools: BTreeMap<String, ToolVerdict> = BTreeMap::new();
    for &i in selection {
        let run = &plan.runs[i];
        let tool = &plan.contest.tools[run.tool];
        let ei = &plan.exam_instances[run.exam_instance];
        let exam = &plan.contest.edition.examinations[ei.exam];
        let instance = &plan.instances[ei.instance];
        let verdict = tools.entry(tool.name.clone()).or_default();
        verdict.runs += 1;
        let record_path = session.index.record_location(&session.store, &run.key);
        let problem = |check: Check, detail: String| Problem {
            check,
            instance: instance.name.clone(),
            examination: exam.name.clone(),
            detail,
            key: run.key.hex(),
            record: record_path.display().to_string(),
            reproduce: reproduce(session, i),
        };
        let record = match session.index.read(&session.store, &run.key) {
            Ok(Some((record, _))) => record,
            Ok(None) => {
                verdict.problems.push(problem(
                    Check::NotRun,
                    "the run could not be carried out (see the messages above)".to_string(),
                ));
                continue;
            }
            Err(corrupt) => {
                verdict.problems.push(problem(
                    Check::NotRun,
                    format!("its record cannot be read: {}", corrupt.reason),
                ));
                continue;
            }
        };
        match record.response {
            Response::Answered => verdict.answered += 1,
            Response::CannotCompute => verdict.cannot_compute += 1,
            Response::DoNotCompete => verdict.do_not_compete += 1,
        }
        let m = record.measurement;
        verdict.cpu_time_s += m.cpu_time_s;
        verdict.max_peak_memory_mb = verdict.max_peak_memory_mb.max(m.peak_memory_mb());
        verdict.run_list.push(RunLine {
            instance: instance.name.clone(),
            examination: exam.name.clone(),
            outcome: record.describe(),
            exit: format!("{:?}", m.termination),
            cpu_time_s: m.cpu_time_s,
            wall_time_s: m.wall_time_s,
            peak_memory_mb: m.peak_memory_mb(),
        });
        let findings = check_run(
            RunOutput {
                stdout: &record.stdout.text,
                stdout_complete: !record.stdout.truncated,
                stderr: &record.stderr.text,
                termination: m.termination,
                response: record.response,
            },
            Expected {
                examination: &exam.name,
                instance: &instance.name,
                form: exam.answers,
                kind: exam.value,
                ids: &ei.ids,
            },
        );
        for f in findings {
            verdict.problems.push(problem(f.check, f.detail));
        }
    }
    for verdict in tools.values_mut() {
        verdict.qualified = verdict.problems.is_empty();
    }
    QualifyReport { tools }
}

/// A shell command that runs the tool on the instance as the run did, with BenchKit's variables,
/// in a scratch copy of the instance (outside the sandbox: no limits, no isolation).
fn reproduce(session: &Session, i: usize) -> String {
    let plan = &session.plan;
    let run = &plan.runs[i];
    let tool = &plan.contest.tools[run.tool];
    let instance = plan.instance_of(run);
    let tool_dir = tool.dir.clone().unwrap_or_default();
    let bin_path = if tool.setup.is_some() {
        session
            .store
            .tools_dir()
            .join(hex(&plan.tools[run.tool].setup_digest()))
            .join("bin")
    } else {
        tool_dir.clone()
    };
    let unpack = match &instance.source {
        InstanceSource::Archive(path) => {
            format!(
                "tar -xzf {} --strip-components=1",
                quote(&path.display().to_string())
            )
        }
        other => format!("cp -r {}/. .", quote(&other.path().display().to_string())),
    };
    format!(
        "cd \"$(mktemp -d)\" && {unpack} && BK_INPUT={} BK_EXAMINATION={} BK_TOOL={} BK_TIME_CONFINEMENT={} BK_MEMORY_CONFINEMENT={} BK_BIN_PATH={}/ {}",
        quote(&instance.name),
        quote(plan.exam_name(run)),
        quote(&tool.name),
        run.limits.time_s,
        run.limits.memory_mb,
        quote(&bin_path.display().to_string()),
        quote(&tool_dir.join(&tool.entry).display().to_string()),
    )
}

/// A word for sh: as is when it is plain, else in single quotes.
fn quote(word: &str) -> String {
    if !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+=:,".contains(&b))
    {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

fn report_text(report: &QualifyReport) -> String {
    let mut out = String::new();
    for (name, v) in &report.tools {
        let head = if v.qualified {
            "qualified".to_string()
        } else {
            format!(
                "NOT qualified: {} problem{}",
                v.problems.len(),
                if v.problems.len() == 1 { "" } else { "s" }
            )
        };
        let _ = writeln!(
            out,
            "{name}: {head} ({} runs: {} answered, {} CANNOT_COMPUTE, {} DO_NOT_COMPETE; {:.2} s CPU in all, peak memory at most {:.1} MB)",
            v.runs, v.answered, v.cannot_compute, v.do_not_compete, v.cpu_time_s, v.max_peak_memory_mb
        );
        for p in &v.problems {
            let _ = writeln!(
                out,
                "  {} {} {}: {}\n    record:    {}\n    reproduce: {}",
                p.check.name(),
                p.instance,
                p.examination,
                p.detail,
                p.record,
                p.reproduce
            );
        }
    }
    if report.tools.is_empty() {
        out.push_str("no qualification run: no tool takes part in an examination of a known model's first instance\n");
    }
    out
}

/// The report as one standalone HTML page (no script, no external resource).
fn report_page(report: &QualifyReport) -> String {
    use maud::{html, DOCTYPE};
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                title { "Qualification" }
                style { "body{font:14px/1.4 system-ui,sans-serif;margin:1em 2em;color:#222}table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:2px 6px;text-align:left;vertical-align:top}.ok{color:#070}.bad{color:#b00}.mono{font-family:monospace;font-size:12px;word-break:break-all}" }
            }
            body {
                h1 { "Qualification" }
                p { "Each tool on every examination it takes part in, on the first instance of each known model; every run checked against the protocol (docs/cli.md, \"mccbuild qualify\")." }
                table {
                    tr { th { "tool" } th { "verdict" } th { "runs" } th { "answered" } th { "CANNOT_COMPUTE" } th { "DO_NOT_COMPETE" } th { "CPU time (s)" } th { "max memory (MB)" } }
                    @for (name, v) in &report.tools {
                        tr {
                            td { a href=(format!("#{name}")) { (name) } }
                            @if v.qualified { td.ok { "qualified" } } @else { td.bad { "not qualified: " (v.problems.len()) " problems" } }
                            td { (v.runs) } td { (v.answered) } td { (v.cannot_compute) } td { (v.do_not_compete) }
                            td { (format!("{:.2}", v.cpu_time_s)) } td { (format!("{:.1}", v.max_peak_memory_mb)) }
                        }
                    }
                }
                @for (name, v) in &report.tools {
                    h2 id=(name) { (name) }
                    @if !v.problems.is_empty() {
                        table {
                            tr { th { "check" } th { "instance" } th { "examination" } th { "problem" } th { "the run" } }
                            @for p in &v.problems {
                                tr {
                                    td.bad { (p.check.name()) } td { (p.instance) } td { (p.examination) } td { (p.detail) }
                                    td.mono { "record: " (p.record) br; "reproduce: " (p.reproduce) }
                                }
                            }
                        }
                    }
                    table {
                        tr { th { "instance" } th { "examination" } th { "outcome" } th { "ended" } th { "CPU (s)" } th { "wall (s)" } th { "memory (MB)" } }
                        @for r in &v.run_list {
                            tr {
                                td { (r.instance) } td { (r.examination) } td { (r.outcome) } td { (r.exit) }
                                td { (format!("{:.2}", r.cpu_time_s)) } td { (format!("{:.2}", r.wall_time_s)) } td { (format!("{:.1}", r.peak_memory_mb)) }
                            }
                        }
                    }
                }
            }
        }
    }
    .into_string()
}
