//! `mccbuild report`: the results as a static site (podiums and awards, a page per tool, per
//! examination and per model, the reliability table, execution-time charts), self-contained:
//! no CDN, no JavaScript, readable from file://.
//!
//! [`ReportData`] gathers what the pages show from the plan, the store's run summaries and the
//! scoring database once; `html` renders it, `svg` draws the charts.

mod html;
pub mod svg;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::answers::Verdict;
use crate::db::{Handles, ScoringDb, ToolExamScore};
use crate::explain::ConfidenceRow;
use crate::plan::Plan;
use crate::results::ScoresReport;
use crate::rules::trusted::Decision;
use crate::store::index::Summary;
use crate::store::record::Termination;
use crate::value::Value;

/// What became of a run, as the pages show it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// At least one value computed.
    Answered,
    /// CANNOT_COMPUTE, or no well-formed answer, the tool having stopped by itself.
    CannotCompute,
    DoNotCompete,
    TimeOut,
    MemoryOut,
    /// Killed by a signal, a non-zero exit without answers, or too much output.
    Failed,
    /// Planned, not in the store.
    NotRun,
}

impl Status {
    fn of(summary: Option<&Summary>) -> Status {
        let Some(s) = summary else {
            return Status::NotRun;
        };
        match (s.verdict, s.termination) {
            (Verdict::Answered, _) => Status::Answered,
            (Verdict::DoNotCompete, _) => Status::DoNotCompete,
            (_, Termination::CpuLimit | Termination::WallLimit) => Status::TimeOut,
            (_, Termination::MemoryLimit) => Status::MemoryOut,
            (_, Termination::Exit { code: 0 }) => Status::CannotCompute,
            _ => Status::Failed,
        }
    }

    /// The short label of a table cell.
    pub fn label(self) -> &'static str {
        match self {
            Status::Answered => "ok",
            Status::CannotCompute => "CC",
            Status::DoNotCompete => "DNC",
            Status::TimeOut => "TO",
            Status::MemoryOut => "MO",
            Status::Failed => "fail",
            Status::NotRun => "-",
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            Status::Answered => "answered",
            Status::CannotCompute => "cannot compute",
            Status::DoNotCompete => "did not compete",
            Status::TimeOut => "time-out",
            Status::MemoryOut => "memory-out",
            Status::Failed => "failed (crash or error)",
            Status::NotRun => "not run yet",
        }
    }
}

/// One planned run with its outcome.
#[derive(Clone, Debug)]
pub struct RunView {
    pub tool: usize,
    pub exam_instance: usize,
    pub status: Status,
    pub cpu_s: f64,
    pub memory_mb: f64,
    /// (position among the examination instance's value ids, value).
    pub answers: Arc<[(u16, Value)]>,
    /// E-4.2/E-4.3 for this run (None when it did not take part).
    pub score: Option<ToolExamScore>,
}

impl RunView {
    /// Rule E-4.3's "complete" (every trusted value computed, hence none wrong): "solved" for
    /// the cactus plots.
    pub fn solved(&self) -> bool {
        self.score.as_ref().is_some_and(|s| s.score.complete)
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
}

impl<'a> ReportData<'a> {
    pub fn gather<'s>(
        plan: &'a Plan,
        db: &ScoringDb,
        handles: &Handles,
        summary: impl Fn(&crate::key::RunKey) -> Option<&'s Summary>,
    ) -> ReportData<'a> {
        let scores = crate::results::scores_report(plan, db, handles, false);
        let reliability = crate::explain::confidence_table(plan, db, handles);
        let agreed_values = crate::db::confidence_tally(db, handles.contest).agreed_values;
        let decisions: Vec<Arc<[Decision]>> = (0..plan.exam_instances.len())
            .map(|e| Arc::from(handles.decisions(db, e)))
            .collect();
        let mut runs_of: Vec<Vec<usize>> = vec![Vec::new(); plan.exam_instances.len()];
        let mut runs = Vec::with_capacity(plan.runs.len());
        for run in &plan.runs {
            let s = summary(&run.key);
            let e = run.exam_instance;
            // The scoring database's runs of an examination instance are in plan order.
            let score = handles
                .exam_scores(db, e)
                .iter()
                .find(|x| x.tool as usize == run.tool)
                .cloned();
            runs_of[e].push(runs.len());
            runs.push(RunView {
                tool: run.tool,
                exam_instance: e,
                status: Status::of(s),
                cpu_s: s.map_or(0.0, |s| s.cpu_time_s),
                memory_mb: s.map_or(0.0, |s| s.peak_memory_bytes as f64 / (1 << 20) as f64),
                answers: s.map_or_else(|| Arc::from(Vec::new()), |s| s.answers.clone()),
                score,
            });
        }
        ReportData {
            plan,
            scores,
            reliability,
            agreed_values,
            runs,
            runs_of,
            decisions,
            exports: false,
        }
    }
}

/// What `write_site` wrote.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct SiteSummary {
    pub dir: PathBuf,
    pub pages: usize,
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

/// Writes the site into `dir` (created if needed; files of an earlier report are replaced).
pub fn write_site(data: &ReportData<'_>, dir: &Path) -> Result<SiteSummary, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let mut summary = SiteSummary {
        dir: dir.to_path_buf(),
        ..Default::default()
    };
    for (name, text, charts) in html::pages(data) {
        let path = dir.join(&name);
        let tmp = dir.join(format!(".{name}.tmp"));
        std::fs::write(&tmp, text.as_bytes())
            .and_then(|_| std::fs::rename(&tmp, &path))
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        summary.pages += 1;
        summary.charts += charts;
        summary.bytes += text.len() as u64;
    }
    Ok(summary)
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

    #[test]
    fn statuses_follow_verdict_then_termination() {
        let s = |verdict, termination| Summary {
            verdict,
            termination,
            cpu_time_s: 0.0,
            wall_time_s: 0.0,
            peak_memory_bytes: 0,
            answers: Arc::from(Vec::new()),
        };
        assert_eq!(Status::of(None), Status::NotRun);
        assert_eq!(
            Status::of(Some(&s(Verdict::Answered, Termination::CpuLimit))),
            Status::Answered
        );
        assert_eq!(
            Status::of(Some(&s(Verdict::CannotCompute, Termination::CpuLimit))),
            Status::TimeOut
        );
        assert_eq!(
            Status::of(Some(&s(Verdict::CannotCompute, Termination::MemoryLimit))),
            Status::MemoryOut
        );
        assert_eq!(
            Status::of(Some(&s(
                Verdict::CannotCompute,
                Termination::Exit { code: 0 }
            ))),
            Status::CannotCompute
        );
        assert_eq!(
            Status::of(Some(&s(
                Verdict::CannotCompute,
                Termination::Signal { signal: 11 }
            ))),
            Status::Failed
        );
        assert_eq!(
            Status::of(Some(&s(
                Verdict::DoNotCompete,
                Termination::Exit { code: 0 }
            ))),
            Status::DoNotCompete
        );
    }
}
