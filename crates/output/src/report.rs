//! `mccbuild report`: the results as a static site (podiums and awards, a page per tool, per
//! examination and per model, the reliability table, execution-time charts), self-contained:
//! no CDN, no JavaScript, readable from file://.
//!
//! [`ReportData`] gathers what the pages show from the plan, the store's run summaries and the
//! scoring database once; `html` renders it, `svg` draws the charts.

pub mod disputes;
mod html;
pub mod live;
pub mod run_page;
pub mod setup;
pub mod svg;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use mccbuild_core::{Measurement, Outcome, Value};
use mccbuild_plan::Plan;
use mccbuild_rules::trusted::Decision;
use mccbuild_scoring::db::{Handles, ScoringDb, ToolExamScore};
use mccbuild_scoring::explain::ConfidenceRow;
use mccbuild_scoring::scores::ScoresReport;
use mccbuild_store::Summary;

/// The short label of a table cell: the outcome's, or `-` for a run not made yet.
pub fn outcome_label(outcome: Option<Outcome>) -> &'static str {
    outcome.map_or("-", Outcome::label)
}

/// The outcome in words, or "not run yet".
pub fn outcome_title(outcome: Option<Outcome>) -> &'static str {
    outcome.map_or("not run yet", Outcome::title)
}

/// One planned run with its outcome.
#[derive(Clone, Debug)]
pub struct RunView {
    pub tool: usize,
    pub exam_instance: usize,
    /// None: planned, not in the store.
    pub outcome: Option<Outcome>,
    /// What it used (nothing when not run).
    pub measurement: Measurement,
    /// (position among the examination instance's value ids, value).
    pub answers: Arc<[(u16, Value)]>,
    /// E-4.2/E-4.3 for this run (None when it did not take part).
    pub score: Option<ToolExamScore>,
}

impl RunView {
    /// Rule E-4.3's "complete" (every trusted value computed, hence none wrong: its measurement
    /// is reported): "solved" for the cactus plots.
    pub fn solved(&self) -> bool {
        self.score.as_ref().is_some_and(|s| s.reported.is_some())
    }

    /// The value it gave at `position`, if any.
    pub fn answer(&self, position: usize) -> Option<&Value> {
        self.answers
            .iter()
            .find(|(p, _)| *p as usize == position)
            .map(|(_, v)| v)
    }
}

/// Everything the pages show.
pub struct ReportData<'a> {
    pub plan: &'a Plan,
    pub scores: ScoresReport,
    pub reliability: Vec<ConfidenceRow>,
    /// Values of V (E-2.2) in the reliability table.
    pub agreed_values: u64,
    pub runs: Vec<RunView>,
    /// Per examination instance, indices into `runs`.
    pub runs_of: Vec<Vec<usize>>,
    /// Per examination instance, the decision of each value (E-3.1).
    pub decisions: Vec<Arc<[Decision]>>,
    /// The exports were written beside the site, in `exports/` (the index links them).
    pub exports: bool,
    /// The answer parser's diagnostics by run (index into the plan's runs), for the runs that
    /// have some; the tool pages list them. Filled by the caller, which reads the records.
    pub diagnostics: BTreeMap<usize, Vec<String>>,
    /// Charts drawn before (a live site's), reused where their inputs are the same.
    pub charts: Option<Arc<live::ChartCache>>,
    /// What the setup block reads of each executed run's record (by run index). Filled by the
    /// caller with the diagnostics ([`ReportData::set_records`]).
    pub facts: BTreeMap<usize, setup::RunFacts>,
    /// The facts gathered (the setup block's observed part).
    pub observed: setup::Observed,
    /// Each tool's version string, where it gives one ([`setup::tool_version`]).
    pub tool_versions: Vec<Option<String>>,
    /// The contested values and those the organisers decided, by stake (the disputes page).
    pub disputes: Vec<disputes::Dispute>,
    /// The pages of the runs whose records were read, by run.
    pub run_pages: BTreeMap<usize, RunPage>,
    /// The limits in words, per examination where they differ ([`setup::limits_of`]).
    pub limits: Arc<Vec<(String, String)>>,
}

/// What the site reads of the run records (the executed runs' only; an imported run's record
/// holds nothing more than its summary): the answer parser's diagnostics of the runs that have
/// some, and every run's setup facts.
#[derive(Debug, Default)]
pub struct RecordNotes {
    pub diagnostics: BTreeMap<usize, Vec<String>>,
    pub facts: BTreeMap<usize, setup::RunFacts>,
    /// Each run's page ([`run_page`]): its file name (from the record's digest) and text.
    pub pages: BTreeMap<usize, RunPage>,
}

/// A run's page: its file name in the site and its text.
pub type RunPage = (String, Arc<String>);

impl RecordNotes {
    /// Adds run `i`'s record, whose content digest is `digest`.
    pub fn add(
        &mut self,
        plan: &Plan,
        i: usize,
        record: mccbuild_store::RunRecord,
        digest: &mccbuild_core::Digest,
    ) {
        self.pages.insert(
            i,
            (
                run_page::run_page_name(digest),
                Arc::new(run_page::run_page(plan, i, &record)),
            ),
        );
        self.facts.insert(i, setup::RunFacts::of(&record));
        if !record.diagnostics.is_empty() {
            self.diagnostics.insert(i, record.diagnostics);
        }
    }
}

impl<'a> ReportData<'a> {
    pub fn gather<'s>(
        plan: &'a Plan,
        db: &ScoringDb,
        handles: &Handles,
        summary: impl Fn(&mccbuild_core::RunKey) -> Option<&'s Summary> + Sync,
    ) -> ReportData<'a> {
        let t = mccbuild_core::timing::phase("report: scores");
        let mut scores = published_scores(
            plan,
            mccbuild_scoring::scores::scores_report(plan, db, handles, false),
        );
        drop(t);
        // The reliability table on a thread of its own (with its own handle on the scoring
        // database), beside the decisions and the run views.
        let db_aside = db.clone();
        std::thread::scope(|scope| {
            let reliability = scope.spawn(move || {
                let t = mccbuild_core::timing::phase("report: reliability");
                let reliability =
                    mccbuild_scoring::explain::confidence_table(plan, &db_aside, handles);
                let agreed_values =
                    mccbuild_scoring::db::confidence_tally(&db_aside, handles.contest)
                        .agreed_values;
                drop(t);
                (reliability, agreed_values)
            });
            let t = mccbuild_core::timing::phase("report: decisions and run views");
            let decisions: Vec<Arc<[Decision]>> = (0..plan.exam_instances.len())
                .map(|e| Arc::from(handles.decisions(db, e)))
                .collect();
            // Each examination instance's scores fetched once (not once per run).
            let exam_scores: Vec<&[ToolExamScore]> = (0..plan.exam_instances.len())
                .map(|e| handles.exam_scores(db, e))
                .collect();
            // On every core: 144,034 index lookups and views at the replay's scale.
            use rayon::prelude::*;
            let runs: Vec<RunView> = plan
                .runs
                .par_iter()
                .map(|run| {
                    let s = summary(&run.key);
                    let e = run.exam_instance;
                    // The scoring database's runs of an examination instance are in plan order.
                    let score = exam_scores[e]
                        .iter()
                        .find(|x| x.tool as usize == run.tool)
                        .cloned();
                    RunView {
                        tool: run.tool,
                        exam_instance: e,
                        outcome: s.map(Summary::outcome),
                        measurement: s.map(|s| s.measurement).unwrap_or_default(),
                        answers: s.map_or_else(|| Arc::from(Vec::new()), |s| s.answers.clone()),
                        score,
                    }
                })
                .collect();
            // Runs without a record: the index page says the results are partial.
            let missing = runs.iter().filter(|r| r.outcome.is_none()).count();
            scores.partial = mccbuild_scoring::scores::Partial::of(missing, plan.runs.len());
            let mut runs_of: Vec<Vec<usize>> = vec![Vec::new(); plan.exam_instances.len()];
            for (i, run) in plan.runs.iter().enumerate() {
                runs_of[run.exam_instance].push(i);
            }
            drop(t);
            let t = mccbuild_core::timing::phase("report: disputes");
            let disputes = disputes::disputes(plan, db, handles, &runs, &runs_of);
            drop(t);
            let (reliability, agreed_values) = match reliability.join() {
                Ok(table) => table,
                Err(panic) => std::panic::resume_unwind(panic),
            };
            ReportData {
                plan,
                scores,
                reliability,
                agreed_values,
                runs,
                runs_of,
                decisions,
                exports: false,
                diagnostics: BTreeMap::new(),
                charts: None,
                facts: BTreeMap::new(),
                observed: setup::Observed::default(),
                disputes,
                run_pages: BTreeMap::new(),
                limits: Arc::new(setup::limits_of(plan)),
                tool_versions: plan
                    .contest
                    .tools
                    .iter()
                    .map(|t| t.dir.as_deref().and_then(setup::tool_version))
                    .collect(),
            }
        })
    }

    /// What was read of the run records: the diagnostics and the setup's facts.
    pub fn set_records(&mut self, notes: RecordNotes) {
        self.diagnostics = notes.diagnostics;
        self.facts = notes.facts;
        self.run_pages = notes.pages;
        self.observed = setup::Observed::of(self.facts.values());
    }
}

/// The scores report as the site shows it: the reference answers named without this
/// machine's paths (the site is published).
pub fn published_scores(plan: &Plan, mut scores: ScoresReport) -> ScoresReport {
    if let (Some(r), Some(reference)) = (scores.reference.as_mut(), plan.reference.as_ref()) {
        r.answers = reference.describe_published(&plan.contest.root);
    }
    scores
}

/// What `write_site` wrote.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct SiteSummary {
    pub dir: PathBuf,
    pub pages: usize,
    /// Run pages written (those of new records), and kept from an earlier report.
    pub run_pages_written: usize,
    pub run_pages_kept: usize,
    pub charts: usize,
    pub bytes: u64,
}

/// The site's files in memory: (file name, text).
pub fn render(data: &ReportData<'_>) -> Vec<(String, String)> {
    html::pages(data)
        .into_iter()
        .map(|(name, text, _)| (name, text))
        .collect()
}

/// A file of the site that cannot be written.
#[derive(Debug, thiserror::Error)]
#[error("cannot write {}: {source}", path.display())]
pub struct SiteError {
    pub path: PathBuf,
    pub source: std::io::Error,
}

/// Writes the site into `dir` (created if needed; files of an earlier report are replaced).
/// The site is publishable as it is: files 0644, the folder 0755 (`fsio::PUBLISHED_*`),
/// every link relative, no path of this machine, the same bytes for the same store.
pub fn write_site(data: &ReportData<'_>, dir: &Path) -> Result<SiteSummary, SiteError> {
    mccbuild_core::fsio::create_published_dir(dir).map_err(|source| SiteError {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut summary = SiteSummary {
        dir: dir.to_path_buf(),
        ..Default::default()
    };
    // Each page is written as soon as it is rendered, on every core: the writing overlaps the
    // rendering, and no more than a page per core is held (the replay's site is 53 MB).
    use rayon::prelude::*;
    let shared = html::Shared::of(data);
    let written: Vec<(usize, u64)> = html::list(data)
        .into_par_iter()
        .map(|page| {
            let (name, text, charts) = html::render(data, &shared, page);
            let path = dir.join(&name);
            mccbuild_core::fsio::write_published_in_batch(&path, text.as_bytes())
                .map_err(|source| SiteError { path, source })?;
            Ok((charts, text.len() as u64))
        })
        .collect::<Result<_, SiteError>>()?;
    for (charts, bytes) in written {
        summary.pages += 1;
        summary.charts += charts;
        summary.bytes += bytes;
    }
    let (written, kept) = write_run_pages(data, dir)?;
    summary.run_pages_written = written;
    summary.run_pages_kept = kept;
    // The pages are durable together.
    mccbuild_core::fsio::sync_dir(dir).map_err(|source| SiteError {
        path: dir.to_path_buf(),
        source,
    })?;
    Ok(summary)
}

/// Writes the run pages into `dir/runs/`: each page whose file is missing (a page is named after
/// its record's digest: a file of that name holds the same bytes), then removes the pages no run
/// of the plan links. Returns (written, kept).
fn write_run_pages(data: &ReportData<'_>, dir: &Path) -> Result<(usize, usize), SiteError> {
    let runs = dir.join(run_page::RUNS_DIR);
    let err = |path: &Path| {
        let path = path.to_path_buf();
        move |source| SiteError { path, source }
    };
    if data.run_pages.is_empty() && !runs.exists() {
        return Ok((0, 0));
    }
    mccbuild_core::fsio::create_published_dir(&runs).map_err(err(&runs))?;
    let wanted: std::collections::HashSet<&str> = data
        .run_pages
        .values()
        .map(|(name, _)| name.as_str())
        .collect();
    use rayon::prelude::*;
    let written: Vec<bool> = data
        .run_pages
        .par_iter()
        .map(|(_, (name, text))| {
            let path = dir.join(name);
            if path.is_file() {
                return Ok(false);
            }
            mccbuild_core::fsio::write_published_in_batch(&path, text.as_bytes())
                .map_err(err(&path))?;
            Ok(true)
        })
        .collect::<Result<_, SiteError>>()?;
    for entry in std::fs::read_dir(&runs).map_err(err(&runs))?.flatten() {
        let name = format!(
            "{}/{}",
            run_page::RUNS_DIR,
            entry.file_name().to_string_lossy()
        );
        if !wanted.contains(name.as_str()) && name.ends_with(".html") {
            std::fs::remove_file(entry.path()).map_err(err(&entry.path()))?;
        }
    }
    mccbuild_core::fsio::sync_dir(&runs).map_err(err(&runs))?;
    let n = written.iter().filter(|w| **w).count();
    Ok((n, written.len() - n))
}

/// Writes some files of the site into `dir` (created if needed), each atomically, durable
/// together: what a live site rewrites after an update ([`live::LiveSite`]).
pub fn write_files(dir: &Path, files: &[live::SiteFile]) -> Result<(), SiteError> {
    mccbuild_core::fsio::create_published_dir(dir).map_err(|source| SiteError {
        path: dir.to_path_buf(),
        source,
    })?;
    if files.iter().any(|(n, _)| n.starts_with(run_page::RUNS_DIR)) {
        let runs = dir.join(run_page::RUNS_DIR);
        mccbuild_core::fsio::create_published_dir(&runs)
            .map_err(|source| SiteError { path: runs, source })?;
    }
    for (name, text) in files {
        let path = dir.join(name);
        mccbuild_core::fsio::write_published_in_batch(&path, text.as_bytes())
            .map_err(|source| SiteError { path, source })?;
    }
    mccbuild_core::fsio::sync_dir(dir).map_err(|source| SiteError {
        path: dir.to_path_buf(),
        source,
    })
}

/// A file name for a tool, examination or model: its index (unique) and its name's safe letters.
pub fn slug(prefix: &str, index: usize, name: &str) -> String {
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{prefix}-{index}-{safe}.html")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_unique_and_safe() {
        assert_eq!(slug("tool", 3, "GreatSPN+red"), "tool-3-GreatSPN_red.html");
        assert_ne!(slug("tool", 1, "a+b"), slug("tool", 2, "a_b"));
        assert_eq!(slug("model", 0, "../x y"), "model-0-___x_y.html");
    }
}
