//! The MCC's qualification (`mccbuild qualify`) as people and programs read it: per tool its
//! verdict, its runs, and each faulty run once with its faults against the protocol, as JSON, text and one standalone
//! HTML page. The engine (`mccbuild_engine::qualify`) executes and checks the runs.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use mccbuild_core::Termination;
use mccbuild_core::conformance::Check;
use serde::Serialize;

/// What `qualify --json` prints.
#[derive(Debug, Serialize)]
pub struct QualifyReport {
    /// Every tool the qualification covered, qualified or not.
    pub tools: BTreeMap<String, ToolVerdict>,
}

/// A tool's qualification: its verdict, its runs by response, what they used, its faulty runs.
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
    /// How many problems its runs have in all.
    pub problems: usize,
    /// Each run with a problem, once, with all its problems.
    pub faulty_runs: Vec<FaultyRun>,
    /// Each run: where, how it ended, what it used.
    pub run_list: Vec<RunLine>,
}

/// A run with faults, with how to look at it and reproduce it.
#[derive(Debug, Serialize)]
pub struct FaultyRun {
    pub instance: String,
    pub examination: String,
    /// The run: its key, its record (full stdout and stderr heads and tails), and a shell
    /// command that runs the tool as the run did (its user, environment and time limit;
    /// outside the sandbox).
    pub key: String,
    pub record: String,
    pub reproduce: String,
    pub problems: Vec<Problem>,
}

/// One fault of a run against the protocol.
#[derive(Debug, Serialize)]
pub struct Problem {
    pub check: Check,
    pub detail: String,
}

/// One qualification run: where, how it ended, what it used.
#[derive(Debug, Serialize)]
pub struct RunLine {
    pub instance: String,
    pub examination: String,
    pub outcome: String,
    /// How its process ended, as in run records: `{"reason": "exit", "code": 0}`,
    /// `{"reason": "cpu_limit"}`...
    pub termination: Termination,
    pub cpu_time_s: f64,
    pub wall_time_s: f64,
    pub peak_memory_mb: f64,
}

/// The qualification as text (what `qualify` prints), at any width.
pub fn report_text(report: &QualifyReport) -> String {
    report_text_fitted(report, None)
}

/// The qualification as text for a terminal of `width` columns: under 80 columns each tool's
/// counts go on a line of their own, and every line is fitted to the width
/// ([`crate::terminal::fit_lines`]; `--json` has every field whole).
pub fn report_text_fitted(report: &QualifyReport, width: Option<usize>) -> String {
    let narrow = width.is_some_and(|w| w < 80);
    let mut out = String::new();
    for (name, v) in &report.tools {
        let head = if v.qualified {
            "qualified".to_string()
        } else {
            format!(
                "NOT qualified: {} problem{} in {} run{}",
                v.problems,
                if v.problems == 1 { "" } else { "s" },
                v.faulty_runs.len(),
                if v.faulty_runs.len() == 1 { "" } else { "s" }
            )
        };
        if narrow {
            let _ = writeln!(
                out,
                "{name}: {head}\n  {} runs: {} answered, {} CANNOT_COMPUTE, {} DO_NOT_COMPETE\n  {:.2} s CPU in all, peak memory at most {:.1} MB",
                v.runs,
                v.answered,
                v.cannot_compute,
                v.do_not_compete,
                v.cpu_time_s,
                v.max_peak_memory_mb
            );
        } else {
            let _ = writeln!(
                out,
                "{name}: {head} ({} runs: {} answered, {} CANNOT_COMPUTE, {} DO_NOT_COMPETE; {:.2} s CPU in all, peak memory at most {:.1} MB)",
                v.runs,
                v.answered,
                v.cannot_compute,
                v.do_not_compete,
                v.cpu_time_s,
                v.max_peak_memory_mb
            );
        }
        for r in &v.faulty_runs {
            let _ = writeln!(out, "  {} {}:", r.instance, r.examination);
            for p in &r.problems {
                let _ = writeln!(out, "    {}: {}", p.check.name(), p.detail);
            }
            let _ = writeln!(
                out,
                "    record:    {}\n    reproduce: {}",
                r.record, r.reproduce
            );
        }
    }
    if report.tools.is_empty() {
        out.push_str("no qualification run: no tool takes part in an examination of a known model's first instance\n");
    }
    crate::terminal::fit_lines(&out, width)
}

/// The report as one standalone HTML page (no script, no external resource).
pub fn report_page(report: &QualifyReport) -> String {
    use maud::{DOCTYPE, html};
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
                p { "Each tool on every examination it takes part in, on the first instance of each known model; every run checked against the protocol of the MCC's tools (made by " code { "mccbuild qualify" } ")." }
                table {
                    tr { th { "tool" } th { "verdict" } th { "runs" } th { "answered" } th { "CANNOT_COMPUTE" } th { "DO_NOT_COMPETE" } th { "CPU time (s)" } th { "max memory (MB)" } }
                    @for (name, v) in &report.tools {
                        tr {
                            td { a href=(format!("#{name}")) { (name) } }
                            @if v.qualified { td.ok { "qualified" } } @else { td.bad { "not qualified: " (v.problems) " problems in " (v.faulty_runs.len()) " runs" } }
                            td { (v.runs) } td { (v.answered) } td { (v.cannot_compute) } td { (v.do_not_compete) }
                            td { (format!("{:.2}", v.cpu_time_s)) } td { (format!("{:.1}", v.max_peak_memory_mb)) }
                        }
                    }
                }
                @for (name, v) in &report.tools {
                    h2 id=(name) { (name) }
                    @if !v.faulty_runs.is_empty() {
                        table {
                            tr { th { "instance" } th { "examination" } th { "problems" } th { "the run" } }
                            @for r in &v.faulty_runs {
                                tr {
                                    td { (r.instance) } td { (r.examination) }
                                    td { @for p in &r.problems { span.bad { (p.check.name()) } ": " (p.detail) br; } }
                                    td.mono { "record: " (r.record) br; "reproduce: " (r.reproduce) }
                                }
                            }
                        }
                    }
                    table {
                        tr { th { "instance" } th { "examination" } th { "outcome" } th { "ended" } th { "CPU (s)" } th { "wall (s)" } th { "memory (MB)" } }
                        @for r in &v.run_list {
                            tr {
                                td { (r.instance) } td { (r.examination) } td { (r.outcome) } td { (r.termination.label()) }
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
