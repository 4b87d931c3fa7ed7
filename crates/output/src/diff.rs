//! The comparison of two versions of a tool (`mccbuild diff`): value by value against the
//! contest's trusted values, regressions first (newly wrong, newly unsolved, runs slower by more
//! than a factor), then improvements (newly solved, newly right); each category's score before
//! and after; CPU-time and memory ratios per examination. As JSON, text ([`text`]) and one
//! standalone HTML page ([`page`]). The engine (`mccbuild_engine::diff`) gathers it from the
//! store and the scores report.

mod page;
mod text;

use std::collections::BTreeMap;

use mccbuild_core::Measurement;
use mccbuild_rules::edition::TimeLimit;
use serde::Serialize;
use serde_json::Value as Json;

pub use page::diff_page;
pub use text::{diff_text, diff_text_fitted};

/// One way a value changed from the old version to the new one. The order is the order of
/// severity: the text and the page list regressions first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Change {
    /// The new answer differs from the trusted value; the old one did not (or there was none).
    NewlyWrong,
    /// No answer now, one before.
    NewlyUnsolved,
    /// An answer now, none before.
    NewlySolved,
    /// The new answer is the trusted value; the old one was not (or there was none).
    NewlyRight,
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

    /// A regression: what `--fail-on` can name.
    pub fn is_regression(self) -> bool {
        matches!(self, Change::NewlyWrong | Change::NewlyUnsolved)
    }
}

/// Every way, in the order of severity (the order of the text and the page).
pub const CHANGES: [Change; 5] = [
    Change::NewlyWrong,
    Change::NewlyUnsolved,
    Change::NewlySolved,
    Change::NewlyRight,
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
    /// Every way it changed, the most severe first (the category it is listed under).
    pub changes: Vec<Change>,
}

/// A run of the new version slower than the old version's run of the same examination instance
/// by more than the factor ([`is_slower`]).
#[derive(Debug, Serialize)]
pub struct SlowerRun {
    pub instance: String,
    pub examination: String,
    /// The time the contest limits ([`limited_time`]), in seconds, of each version's run.
    pub old_time_s: f64,
    pub new_time_s: f64,
    /// `new_time_s / max(old_time_s, NOISE_FLOOR_S)`.
    pub ratio: f64,
}

/// Runs shorter than this are noise, never a slowdown: a run must take at least this long to be
/// slower, and an old run shorter than this counts as this long.
pub const NOISE_FLOOR_S: f64 = 0.1;

/// The factor `diff` uses when `--slower` is not given.
pub const DEFAULT_SLOWER_FACTOR: f64 = 2.0;

/// The time of a run that the contest limits (`[limits] time`): its CPU time, its wall time, or
/// with `both` the larger of the two.
pub fn limited_time(m: &Measurement, limit: TimeLimit) -> f64 {
    match limit {
        TimeLimit::Cpu => m.cpu_time_s,
        TimeLimit::Wall => m.wall_time_s,
        TimeLimit::Both => m.cpu_time_s.max(m.wall_time_s),
    }
}

/// Whether a run that took `new_s` seconds is slower than one that took `old_s` by more than
/// `factor`: it took at least [`NOISE_FLOOR_S`], and more than `factor` times the old time (the
/// old time taken as at least [`NOISE_FLOOR_S`]).
pub fn is_slower(old_s: f64, new_s: f64, factor: f64) -> bool {
    new_s >= NOISE_FLOOR_S && new_s > factor * old_s.max(NOISE_FLOOR_S)
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

/// One version of a tool as the comparison names it.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Side {
    /// The tool entry's name.
    pub tool: String,
    /// For a version found in the store (`diff --tool`): the digest of its folder (hex), when
    /// its runs were first and last executed, and the git revision of its folder then.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub version: Option<crate::versions::VersionInfo>,
}

impl Side {
    /// How the text and the page name it: the tool, and its version's short digest.
    pub fn label(&self) -> String {
        match &self.version {
            Some(v) => format!("{} {}", self.tool, v.short()),
            None => self.tool.clone(),
        }
    }
}

/// What `diff --json` prints, and what its text and page show.
#[derive(Debug, Serialize)]
pub struct DiffReport {
    /// The old and the new version: their labels (the text's), then each in full.
    pub old: String,
    pub new: String,
    pub old_version: Side,
    pub new_version: Side,
    /// What the trusted values are: `vote`, `ground-truth` or `reference` (scores --json).
    pub basis: String,
    /// How many values changed in each way (a value can change in two ways: newly solved and
    /// newly right), the most severe first.
    pub counts: BTreeMap<Change, usize>,
    /// Every value whose answer differs, the most severe change first (newly wrong, newly
    /// unsolved, newly solved, newly right, changed), then in the order of the scores report.
    pub values: Vec<ValueChange>,
    /// The factor of `--slower`, and the runs of the new version slower by more than it, the
    /// largest ratio first.
    pub slower_factor: f64,
    pub slower: Vec<SlowerRun>,
    /// Per category: the old and the new version's score, for the categories where both
    /// versions' runs are in the store on the same examination instances.
    pub scores: BTreeMap<String, (Json, Json)>,
    /// The categories whose scores are not compared: where both versions take part, the run
    /// of one version only is in the store on some examination instances (a version run on a
    /// sample of the instances, or on some examinations only), so their scores would count
    /// different runs.
    pub scores_not_compared: Vec<String>,
    /// Per examination: CPU time and memory, new against old.
    pub measurements: BTreeMap<String, Ratios>,
    /// Examination instances left out because a version's run is not in the store.
    pub not_in_store: usize,
}

/// A category of regression `--fail-on` can name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Regression {
    Wrong,
    Unsolved,
    Slower,
}

impl Regression {
    pub fn name(self) -> &'static str {
        match self {
            Regression::Wrong => "newly wrong",
            Regression::Unsolved => "newly unsolved",
            Regression::Slower => "slower runs",
        }
    }
}

impl DiffReport {
    /// Puts the values in the order of the text: by their most severe change (stable, so the
    /// order of the scores report within each), and the slower runs largest ratio first.
    pub fn sort(&mut self) {
        self.values
            .sort_by_key(|v| v.changes.first().copied().unwrap_or(Change::Changed));
        self.slower.sort_by(|a, b| b.ratio.total_cmp(&a.ratio));
    }

    /// How many of a regression the comparison found.
    pub fn regressions(&self, what: Regression) -> usize {
        let count = |c: Change| self.counts.get(&c).copied().unwrap_or(0);
        match what {
            Regression::Wrong => count(Change::NewlyWrong),
            Regression::Unsolved => count(Change::NewlyUnsolved),
            Regression::Slower => self.slower.len(),
        }
    }
}

/// How a value whose answer differs changed (`old != new`), the most severe way first.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_changes_in_each_way_most_severe_first() {
        use Change::*;
        let t = Some("TRUE");
        assert_eq!(classify(Some("FALSE"), Some("TRUE"), t), [NewlyRight]);
        assert_eq!(classify(Some("TRUE"), Some("FALSE"), t), [NewlyWrong]);
        assert_eq!(classify(None, Some("TRUE"), t), [NewlySolved, NewlyRight]);
        assert_eq!(classify(None, Some("FALSE"), t), [NewlyWrong, NewlySolved]);
        assert_eq!(classify(Some("TRUE"), None, t), [NewlyUnsolved]);
        assert_eq!(classify(Some("FALSE"), None, t), [NewlyUnsolved]);
        assert_eq!(classify(Some("1"), Some("2"), None), [Changed]);
        assert_eq!(classify(None, Some("2"), None), [NewlySolved]);
    }

    #[test]
    fn short_runs_are_never_slower() {
        // Twice as slow, by more than the factor 2 only above the noise floor.
        assert!(!is_slower(0.01, 0.09, 2.0), "under 0.1 s: noise");
        assert!(!is_slower(0.01, 0.15, 2.0), "0.15 s against 0.1 s: x1.5");
        assert!(is_slower(0.01, 0.25, 2.0));
        assert!(is_slower(1.0, 2.5, 2.0));
        assert!(
            !is_slower(1.0, 2.0, 2.0),
            "exactly the factor is not more than it"
        );
        assert!(!is_slower(1.0, 2.5, 3.0));
    }

    #[test]
    fn the_limited_time_is_the_contests() {
        let m = Measurement {
            cpu_time_s: 1.0,
            wall_time_s: 3.0,
            ..Measurement::default()
        };
        assert_eq!(limited_time(&m, TimeLimit::Cpu), 1.0);
        assert_eq!(limited_time(&m, TimeLimit::Wall), 3.0);
        assert_eq!(limited_time(&m, TimeLimit::Both), 3.0);
    }
}
