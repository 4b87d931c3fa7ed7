//! The runs behind values: each run named by its record and, for an executed run, the command
//! that reproduces it (`explain` of a value); and the values a tool got wrong, each with its run
//! (`scores --wrong`).

use std::fmt::Write as _;

use serde::Serialize;

/// A run: whose, its key, where its record is, and how to run it again by hand.
#[derive(Debug, Serialize)]
pub struct RunRef {
    pub tool: String,
    pub key: String,
    /// The record's file (a loose record, or the pack that holds it).
    pub record: String,
    /// The shell command that runs the tool as the run did (executed runs only: an imported
    /// run was made elsewhere).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reproduce: Option<String>,
}

/// A value a tool answered other than its trusted value.
#[derive(Debug, Serialize)]
pub struct WrongValue {
    pub instance: String,
    pub examination: String,
    pub id: String,
    pub answer: String,
    pub trusted: String,
    pub run: RunRef,
}

/// What `scores --wrong --json` prints.
#[derive(Debug, Serialize)]
pub struct WrongReport {
    /// What the trusted values are: `vote`, `ground-truth` or `reference` (scores --json).
    pub basis: String,
    /// Every wrong value, by tool, in the order of the scores report.
    pub wrong: Vec<WrongValue>,
}

/// The runs of a value's examination instance as text (`explain`): executed runs only, each
/// with its record and reproduction command.
pub fn runs_text(runs: &[RunRef]) -> String {
    let mut out = String::new();
    let executed: Vec<&RunRef> = runs.iter().filter(|r| r.reproduce.is_some()).collect();
    if executed.is_empty() {
        return out;
    }
    let _ = writeln!(out, "runs:");
    for r in executed {
        let _ = writeln!(out, "  {}: record {}", r.tool, r.record);
        if let Some(command) = &r.reproduce {
            let _ = writeln!(out, "    reproduce: {command}");
        }
    }
    out
}

/// The wrong values as text (`scores --wrong`), grouped by tool.
pub fn wrong_text(r: &WrongReport) -> String {
    let mut out = String::new();
    let basis = match r.basis.as_str() {
        "reference" => "the contest's reference answers",
        "ground-truth" => "the expected answers given with the tasks",
        _ => "the trusted values the contest's tools vote (E-3.1)",
    };
    let _ = writeln!(
        out,
        "{} wrong value{} (answers against {basis})",
        r.wrong.len(),
        if r.wrong.len() == 1 { "" } else { "s" }
    );
    let mut tool = None;
    for w in &r.wrong {
        if tool != Some(&w.run.tool) {
            tool = Some(&w.run.tool);
            let n = r.wrong.iter().filter(|x| x.run.tool == w.run.tool).count();
            let _ = writeln!(out, "{}: {n} wrong", w.run.tool);
        }
        let _ = writeln!(
            out,
            "  {} {} {}: {} (trusted {})\n    record: {}",
            w.instance, w.examination, w.id, w.answer, w.trusted, w.run.record
        );
        if let Some(command) = &w.run.reproduce {
            let _ = writeln!(out, "    reproduce: {command}");
        }
    }
    out
}
