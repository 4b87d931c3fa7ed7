//! What each update of `watch` publishes ([`Update`], [`SiteUpdate`]) and the pure pieces it is
//! made of: the podiums that changed, the queries counted by name, the time since a write.

use std::collections::BTreeMap;
use std::time::{Duration, Instant, SystemTime};

use mccbuild_scoring::scores::ScoresReport;
use serde::Serialize;

/// One published update.
#[derive(Debug, Serialize)]
pub struct Update {
    pub update: u64,
    /// Why: "start", "records", "rules" (an edit of the manifest or the rules that plans the
    /// same runs: re-scored through the scoring database's inputs) or "replan".
    pub cause: &'static str,
    /// Run records applied (appeared or disappeared).
    pub records: usize,
    /// Applying them and re-scoring, in this process.
    pub compute_ms: f64,
    /// From the moment the newest applied record appeared in the store (its inode change time),
    /// or the edited manifest or rules file was written, to the new scores: noticing it,
    /// reading it, applying it, re-scoring.
    pub latency_ms: Option<f64>,
    /// The salsa queries that re-executed, by name.
    pub queries: BTreeMap<String, usize>,
    /// Categories whose podium changed: (before, after).
    pub podium_changes: BTreeMap<String, (Vec<String>, Vec<String>)>,
    /// The results site's update (with `--serve` or `--out`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub site: Option<SiteUpdate>,
    pub scores: ScoresReport,
}

/// What an update did to the results site.
#[derive(Debug, Serialize)]
pub struct SiteUpdate {
    /// Pages (and the style sheet) rendered again: those whose inputs changed.
    pub rendered: usize,
    /// Charts drawn on them.
    pub charts: usize,
    /// Files of the site in all.
    pub pages: usize,
    /// Gathering what changed, rendering, writing (`--out`) and publishing, in this process.
    pub ms: f64,
}

impl Update {
    /// The first update: the scores as the watch started.
    pub(super) fn start(scores: &ScoresReport) -> Update {
        Update {
            update: 0,
            cause: "start",
            records: 0,
            compute_ms: 0.0,
            latency_ms: None,
            queries: BTreeMap::new(),
            podium_changes: BTreeMap::new(),
            site: None,
            scores: scores.clone(),
        }
    }

    /// The update of a re-plan: a new plan, new scores.
    pub(super) fn replan(
        number: u64,
        started: Instant,
        before: &ScoresReport,
        after: &ScoresReport,
    ) -> Update {
        Update {
            update: number,
            cause: "replan",
            records: 0,
            compute_ms: started.elapsed().as_secs_f64() * 1e3,
            latency_ms: None,
            queries: BTreeMap::new(),
            podium_changes: podium_changes(before, after),
            site: None,
            scores: after.clone(),
        }
    }
}

/// A file's inode change time (set by a write, and by the rename that atomic writers end with).
pub(super) fn change_time(meta: &std::fs::Metadata) -> SystemTime {
    use std::os::unix::fs::MetadataExt;
    SystemTime::UNIX_EPOCH
        + Duration::new(
            meta.ctime().max(0) as u64,
            meta.ctime_nsec().clamp(0, 999_999_999) as u32,
        )
}

/// Milliseconds from `t` to now.
pub(super) fn since(t: Option<SystemTime>) -> Option<f64> {
    t.and_then(|t| SystemTime::now().duration_since(t).ok())
        .map(|d| d.as_secs_f64() * 1e3)
}

/// Per category whose podium changed: the podium before and after.
pub(super) fn podium_changes(
    before: &ScoresReport,
    after: &ScoresReport,
) -> BTreeMap<String, (Vec<String>, Vec<String>)> {
    let mut changes = BTreeMap::new();
    for (category, now) in &after.podiums {
        let was = before.podiums.get(category).cloned().unwrap_or_default();
        if &was != now {
            changes.insert(category.clone(), (was, now.clone()));
        }
    }
    changes
}

/// How many times each name occurs.
pub(super) fn counts(names: Vec<String>) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for n in names {
        *counts.entry(n).or_insert(0) += 1;
    }
    counts
}
