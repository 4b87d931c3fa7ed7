//! `mccbuild diff --old A --new B`: two versions of a tool (two tool entries of one manifest),
//! value by value against the trusted values of the contest: newly right, newly wrong, newly
//! solved, newly unsolved; CPU-time and memory ratios per examination; each category's score
//! before and after. Executes nothing: it reads the store (run both versions first).
//!
//! The values, trusted values and scores are read from the scores report in its documented JSON
//! form (`scores --json`, docs/cli.md), so this command does not depend on how scoring represents
//! numbers.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use mccbuild_scoring::scores::scores_report;
use serde::Serialize;
use serde_json::Value as Json;

use crate::error::Error;
use crate::session::Session;

/// One way a value changed from the old version to the new one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Change {
    /// The new answer is the trusted value; the old one was not (or there was none).
    NewlyRight,
    /// The new answer differs from the trusted value; the old one did not (or there was none).
    NewlyWrong,
    /// An answer now, none before.
    NewlySolved,
    /// No answer now, one before.
    NewlyUnsolved,
    /// A different answer where the trusted value is unknown.
    Changed,
}

impl Change {
    fn name(self) -> &'static str {
        match self {
            Change::NewlyRight => "newly right",
            Change::NewlyWrong => "newly wrong",
            Change::NewlySolved => "newly solved",
            Change::NewlyUnsolved => "newly unsolved",
            Change::Changed => "changed (trusted value unknown)",
        }
    }
}

const CHANGES: [Change; 5] = [
    Change::NewlyRight,
    Change::NewlyWrong,
    Change::NewlySolved,
    Change::NewlyUnsolved,
    Change::Changed,
];

#[derive(Debug, Serialize)]
pub struct ValueChange {
    pub instance: String,
    pub examination: String,
    pub id: String,
    pub old: Option<String>,
    pub new: Option<String>,
    pub trusted: Option<String>,
    pub changes: Vec<Change>,
}

#[derive(Debug, Default, Serialize)]
pub struct Ratios {
    /// Examination instances both versions ran (and the store holds).
    pub runs: usize,
    pub old_cpu_time_s: f64,
    pub new_cpu_time_s: f64,
    /// Geometric mean of new / old per run (CPU times below 10 ms count as 10 ms).
    pub cpu_time_ratio: f64,
    pub memory_ratio: f64,
    #[serde(skip)]
    log_cpu: f64,
    #[serde(skip)]
    log_memory: f64,
}

#[derive(Debug, Serialize)]
pub struct DiffReport {
    pub old: String,
    pub new: String,
    /// What the trusted values are: `vote`, `ground-truth` or `reference` (scores --json).
    pub basis: String,
    /// How many values changed in each way (a value can change in two ways: newly solved and
    /// newly right).
    pub counts: BTreeMap<Change, usize>,
    /// Every value whose answer differs, in the order of the scores report.
    pub values: Vec<ValueChange>,
    /// Per category: the old and the new version's score.
    pub scores: BTreeMap<String, (Json, Json)>,
    /// Per examination: CPU time and memory, new against old.
    pub measurements: BTreeMap<String, Ratios>,
    /// Examination instances left out because a version's run is not in the store.
    pub not_in_store: usize,
}

pub fn diff(
    manifest: &Path,
    old: &str,
    new: &str,
    json: bool,
    html: Option<&Path>,
) -> Result<(), Error> {
    let session = Session::open_and_warn(manifest)?;
    let report = diff_report(&session, old, new)?;
    if let Some(path) = html {
        crate::commands::write_page(path, &diff_page(&report))?;
    }
    if report.not_in_store > 0 {
        eprintln!(
            "note: {} examination instances left out: a version's run is not in the store (`mccbuild run --tool {old} --tool {new}` makes them)",
            report.not_in_store
        );
    }
    if json {
        super::print_json(&report)
    } else {
        super::print_out(&diff_text(&report))
    }
}

fn diff_report(session: &Session, old: &str, new: &str) -> Result<DiffReport, Error> {
    let plan = &session.plan;
    let tool_index = |name: &str| {
        plan.contest
            .tools
            .iter()
            .position(|t| t.name == name)
            .ok_or_else(|| {
                Error::Usage(format!(
                    "no tool `{name}` in {}",
                    plan.contest.manifest_path.display()
                ))
            })
    };
    let (a, b) = (tool_index(old)?, tool_index(new)?);
    if a == b {
        return Err(Error::Usage(
            "diff compares two tools: --old and --new name the same one".into(),
        ));
    }
    // Per examination instance, each version's stored run (its index in the plan).
    let mut runs: BTreeMap<usize, (Option<usize>, Option<usize>)> = BTreeMap::new();
    for (i, run) in plan.runs.iter().enumerate() {
        let slot = runs.entry(run.exam_instance).or_default();
        if run.tool == a {
            slot.0 = Some(i);
        } else if run.tool == b {
            slot.1 = Some(i);
        }
    }
    let mut compared: BTreeMap<(String, String), ()> = BTreeMap::new();
    let mut not_in_store = 0;
    let mut measurements: BTreeMap<String, Ratios> = BTreeMap::new();
    for (&e, &(ra, rb)) in &runs {
        let (Some(ra), Some(rb)) = (ra, rb) else {
            continue; // one version does not take part in it
        };
        let ei = &plan.exam_instances[e];
        let (Some(sa), Some(sb)) = (
            session.index.get(&plan.runs[ra].key),
            session.index.get(&plan.runs[rb].key),
        ) else {
            not_in_store += 1;
            continue;
        };
        let exam = plan.contest.edition.examinations[ei.exam].name.clone();
        compared.insert((plan.instances[ei.instance].name.clone(), exam.clone()), ());
        let r = measurements.entry(exam).or_default();
        let (ma, mb) = (sa.measurement, sb.measurement);
        r.runs += 1;
        r.old_cpu_time_s += ma.cpu_time_s;
        r.new_cpu_time_s += mb.cpu_time_s;
        r.log_cpu += (mb.cpu_time_s.max(0.01) / ma.cpu_time_s.max(0.01)).ln();
        r.log_memory +=
            ((mb.peak_memory_bytes.max(1) as f64) / (ma.peak_memory_bytes.max(1) as f64)).ln();
    }
    for r in measurements.values_mut() {
        r.cpu_time_ratio = (r.log_cpu / r.runs as f64).exp();
        r.memory_ratio = (r.log_memory / r.runs as f64).exp();
    }

    let (db, handles) = session.scoring();
    let scores = serde_json::to_value(scores_report(plan, &db, &handles, true)).unwrap_or_default();
    let text = |v: &Json| v.as_str().map(String::from);
    let mut values = Vec::new();
    let mut counts: BTreeMap<Change, usize> = CHANGES.iter().map(|&c| (c, 0)).collect();
    for v in scores["values"].as_array().into_iter().flatten() {
        let instance = v["instance"].as_str().unwrap_or_default().to_string();
        let examination = v["examination"].as_str().unwrap_or_default().to_string();
        if !compared.contains_key(&(instance.clone(), examination.clone())) {
            continue;
        }
        let (was, is) = (text(&v["answers"][old]), text(&v["answers"][new]));
        if was == is {
            continue;
        }
        let trusted = text(&v["trusted"]);
        let changes = classify(was.as_deref(), is.as_deref(), trusted.as_deref());
        for c in &changes {
            *counts.entry(*c).or_default() += 1;
        }
        values.push(ValueChange {
            instance,
            examination,
            id: v["id"].as_str().unwrap_or_default().to_string(),
            old: was,
            new: is,
            trusted,
            changes,
        });
    }
    let mut by_category = BTreeMap::new();
    if let Some(categories) = scores["scores"].as_object() {
        for (category, tools) in categories {
            by_category.insert(category.clone(), (tools[old].clone(), tools[new].clone()));
        }
    }
    Ok(DiffReport {
        old: old.to_string(),
        new: new.to_string(),
        basis: scores["basis"].as_str().unwrap_or("vote").to_string(),
        counts,
        values,
        scores: by_category,
        measurements,
        not_in_store,
    })
}

/// How a value whose answer differs changed (`old != new`).
fn classify(old: Option<&str>, new: Option<&str>, trusted: Option<&str>) -> Vec<Change> {
    let mut changes = Vec::new();
    match (old, new) {
        (None, Some(_)) => changes.push(Change::NewlySolved),
        (Some(_), None) => changes.push(Change::NewlyUnsolved),
        _ => {}
    }
    match trusted {
        Some(t) => {
            let right = |x: Option<&str>| x == Some(t);
            let wrong = |x: Option<&str>| x.is_some_and(|x| x != t);
            if right(new) && !right(old) {
                changes.push(Change::NewlyRight);
            }
            if wrong(new) && !wrong(old) {
                changes.push(Change::NewlyWrong);
            }
        }
        None if old.is_some() && new.is_some() => changes.push(Change::Changed),
        None => {}
    }
    changes.sort();
    changes
}

fn diff_text(r: &DiffReport) -> String {
    let mut out = String::new();
    let basis = match r.basis.as_str() {
        "reference" => "the contest's reference answers",
        "ground-truth" => "the expected answers given with the tasks",
        _ => "the trusted values the contest's tools vote (E-3.1)",
    };
    let _ = writeln!(out, "{} -> {} (answers against {basis})", r.old, r.new);
    let counts: Vec<String> = CHANGES
        .iter()
        .map(|c| format!("{} {}", c.name(), r.counts.get(c).copied().unwrap_or(0)))
        .collect();
    let _ = writeln!(out, "  {}", counts.join(", "));
    let show = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
    for change in CHANGES {
        let of: Vec<&ValueChange> = r
            .values
            .iter()
            .filter(|v| v.changes.contains(&change))
            .collect();
        if of.is_empty() {
            continue;
        }
        let _ = writeln!(out, "{}:", change.name());
        for v in of {
            let _ = writeln!(
                out,
                "  {} {} {}: {} -> {} (trusted {})",
                v.instance,
                v.examination,
                v.id,
                show(&v.old),
                show(&v.new),
                v.trusted.as_deref().unwrap_or("unknown")
            );
        }
    }
    let _ = writeln!(out, "scores (old -> new):");
    for (category, (a, b)) in &r.scores {
        if a.is_null() && b.is_null() {
            continue;
        }
        let _ = writeln!(out, "  {category}: {a} -> {b}");
    }
    let _ = writeln!(
        out,
        "CPU time and memory, new / old (geometric mean over the runs both made):"
    );
    for (exam, m) in &r.measurements {
        let _ = writeln!(
            out,
            "  {exam}: {} runs, CPU time x{:.2} ({:.2} s -> {:.2} s), memory x{:.2}",
            m.runs, m.cpu_time_ratio, m.old_cpu_time_s, m.new_cpu_time_s, m.memory_ratio
        );
    }
    out
}

/// The comparison as one standalone HTML page (no script, no external resource).
fn diff_page(r: &DiffReport) -> String {
    use maud::{html, DOCTYPE};
    let show = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
    let title = format!("{} -> {}", r.old, r.new);
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                title { (title) }
                style { "body{font:14px/1.4 system-ui,sans-serif;margin:1em 2em;color:#222}table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:2px 6px;text-align:left;vertical-align:top}td.n{text-align:right}.ok{color:#070}.bad{color:#b00}" }
            }
            body {
                h1 { (title) }
                p { "Every value whose answer differs, against the contest's trusted values (basis: " b { (r.basis) } "; docs/cli.md, \"mccbuild diff\")." }
                p { @for (i, c) in CHANGES.iter().enumerate() { @if i > 0 { ", " } (c.name()) " " b { (r.counts.get(c).copied().unwrap_or(0)) } } }
                @if r.not_in_store > 0 { p.bad { (r.not_in_store) " examination instances left out: a version's run is not in the store." } }
                table {
                    tr { th { "instance" } th { "examination" } th { "value" } th { (r.old) } th { (r.new) } th { "trusted" } th { "change" } }
                    @for v in &r.values {
                        @let changes: Vec<&str> = v.changes.iter().map(|c| c.name()).collect();
                        tr {
                            td { (v.instance) } td { (v.examination) } td { (v.id) }
                            td { (show(&v.old)) } td { (show(&v.new)) } td { (v.trusted.as_deref().unwrap_or("unknown")) }
                            td class=(if v.changes.contains(&Change::NewlyWrong) { "bad" } else if v.changes.contains(&Change::NewlyRight) { "ok" } else { "" }) { (changes.join(", ")) }
                        }
                    }
                }
                h2 { "Scores" }
                table {
                    tr { th { "category" } th { (r.old) } th { (r.new) } }
                    @for (category, (a, b)) in &r.scores {
                        @if !(a.is_null() && b.is_null()) { tr { td { (category) } td.n { (a) } td.n { (b) } } }
                    }
                }
                h2 { "CPU time and memory, new / old" }
                table {
                    tr { th { "examination" } th { "runs" } th { "CPU time (s), old" } th { "new" } th { "CPU time ratio" } th { "memory ratio" } }
                    @for (exam, m) in &r.measurements {
                        tr { td { (exam) } td.n { (m.runs) } td.n { (format!("{:.2}", m.old_cpu_time_s)) } td.n { (format!("{:.2}", m.new_cpu_time_s)) }
                            td.n { (format!("{:.2}", m.cpu_time_ratio)) } td.n { (format!("{:.2}", m.memory_ratio)) } }
                    }
                }
            }
        }
    }
    .into_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_changes_in_each_way() {
        use Change::*;
        let t = Some("TRUE");
        assert_eq!(classify(Some("FALSE"), Some("TRUE"), t), [NewlyRight]);
        assert_eq!(classify(Some("TRUE"), Some("FALSE"), t), [NewlyWrong]);
        assert_eq!(classify(None, Some("TRUE"), t), [NewlyRight, NewlySolved]);
        assert_eq!(classify(None, Some("FALSE"), t), [NewlyWrong, NewlySolved]);
        assert_eq!(classify(Some("TRUE"), None, t), [NewlyUnsolved]);
        assert_eq!(classify(Some("FALSE"), None, t), [NewlyUnsolved]);
        assert_eq!(classify(Some("1"), Some("2"), None), [Changed]);
        assert_eq!(classify(None, Some("2"), None), [NewlySolved]);
    }
}
