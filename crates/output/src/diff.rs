//! The comparison of two versions of a tool (`mccbuild diff`): value by value against the
//! contest's trusted values (newly right, newly wrong, newly solved, newly unsolved), CPU-time
//! and memory ratios per examination, each category's score before and after; as JSON, text
//! and one standalone HTML page. The engine (`mccbuild_engine::diff`) gathers it from the store
//! and the scores report.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use mccbuild_core::Measurement;
use serde::Serialize;
use serde_json::Value as Json;

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
    /// How the text and the page name it.
    pub fn name(self) -> &'static str {
        match self {
            Change::NewlyRight => "newly right",
            Change::NewlyWrong => "newly wrong",
            Change::NewlySolved => "newly solved",
            Change::NewlyUnsolved => "newly unsolved",
            Change::Changed => "changed (trusted value unknown)",
        }
    }
}

/// Every way, in the order the text and the page list them.
pub const CHANGES: [Change; 5] = [
    Change::NewlyRight,
    Change::NewlyWrong,
    Change::NewlySolved,
    Change::NewlyUnsolved,
    Change::Changed,
];

/// A value whose answer differs between the two versions.
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

/// CPU time and memory of the new version against the old, over the runs both made.
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

impl Ratios {
    /// One more run both versions made, with the old and the new version's measurement.
    pub fn add(&mut self, old: &Measurement, new: &Measurement) {
        self.runs += 1;
        self.old_cpu_time_s += old.cpu_time_s;
        self.new_cpu_time_s += new.cpu_time_s;
        self.log_cpu += (new.cpu_time_s.max(0.01) / old.cpu_time_s.max(0.01)).ln();
        self.log_memory +=
            ((new.peak_memory_bytes.max(1) as f64) / (old.peak_memory_bytes.max(1) as f64)).ln();
    }

    /// The geometric means, once every run was added.
    pub fn finish(&mut self) {
        self.cpu_time_ratio = (self.log_cpu / self.runs as f64).exp();
        self.memory_ratio = (self.log_memory / self.runs as f64).exp();
    }
}

/// What `diff --json` prints, and what its text and page show.
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

/// How a value whose answer differs changed (`old != new`).
pub fn classify(old: Option<&str>, new: Option<&str>, trusted: Option<&str>) -> Vec<Change> {
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

/// The comparison as text (what `diff` prints).
pub fn diff_text(r: &DiffReport) -> String {
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
pub fn diff_page(r: &DiffReport) -> String {
    use maud::{DOCTYPE, html};
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
                p { "Every value whose answer differs, against the contest's trusted values (basis: " b { (r.basis) } "; made by " code { "mccbuild diff" } ")." }
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
