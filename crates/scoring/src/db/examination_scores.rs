//! Per model examination: each tool's score on each examination instance (E-4.2, E-4.3), against
//! the trusted values, and what they add up to per tool.

use std::sync::Arc;

use mccbuild_core::{Measurement, Value};
use mccbuild_rules::confidence::ToolIdx;
use mccbuild_rules::exact::Sum;
use mccbuild_rules::podium::Completed;
use mccbuild_rules::points::{ExamScore, examination_score, reported_measurement};
use mccbuild_rules::trusted::Decision;
use num_traits::Zero;

use super::ModelExamination;
use super::answers::gathered;
use super::trusted::decide;

/// One tool's score on one examination of one instance.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolExamScore {
    pub tool: ToolIdx,
    pub score: ExamScore,
    /// Rule E-4.3: the run's measurement, reported when the tool computed all the trusted values.
    pub reported: Option<Measurement>,
}

/// The scores of a model examination: `[examination instance][tool taking part]` (through
/// `Deref`), and what they add up to per tool ([`ExamTotal`]), summed here once so that a
/// re-score adds the model examinations that changed, not all their examination instances again.
#[derive(Clone, Debug, PartialEq)]
pub struct ExamScores {
    /// The trusted values they are scored against ([`trusted_values`](super::trusted_values)).
    pub(super) decisions: Vec<Vec<Decision>>,
    scores: Vec<Vec<ToolExamScore>>,
    /// Per tool taking part, in tool order.
    pub totals: Arc<[ExamTotal]>,
    /// Per examination instance, the runs that completed it (E-4.3's measurements), for E-4.5.
    pub completed: Arc<[Vec<Completed>]>,
}

impl std::ops::Deref for ExamScores {
    type Target = [Vec<ToolExamScore>];

    fn deref(&self) -> &Self::Target {
        &self.scores
    }
}

/// One tool's points over the examination instances of a model examination, and its time and
/// memory over those it completed (E-4.3), exactly.
#[derive(Clone, Debug, PartialEq)]
pub struct ExamTotal {
    pub tool: ToolIdx,
    pub points: Sum,
    pub completed: u32,
    pub cpu_s: Sum,
    pub peak_memory_mb: Sum,
}

/// Rules E-4.2 and E-4.3 for every tool that takes part in each examination instance of a model
/// examination (a tool that computed nothing scores 0 but takes part; one that said
/// DO_NOT_COMPETE does not: E-1.8).
#[salsa::tracked(returns(ref))]
pub fn exam_scores(db: &dyn salsa::Database, m: ModelExamination) -> ExamScores {
    if let Some(r) = m.remembered(db).as_ref().filter(|r| r.holds(db, m)) {
        return ExamScores {
            decisions: Vec::new(),
            scores: Vec::new(),
            totals: r.totals.clone(),
            completed: r.completed.clone(),
        };
    }
    let rules = m.contest(db).scoring_rules(db);
    let decisions = decide(db, m, &gathered(db, m));
    let (exam_instances, runs, competes, measurements) = (
        m.exam_instances(db),
        m.answers(db),
        m.competes(db),
        m.measurements(db),
    );
    let mut all = Vec::with_capacity(exam_instances.len());
    for (e, ei) in exam_instances.iter().enumerate() {
        let trusted: Vec<Option<Value>> = decisions[e].iter().map(|d| d.value.clone()).collect();
        let mut scores = Vec::new();
        for position in 0..ei.tools.len() {
            if !competes[e][position] {
                continue;
            }
            let score = examination_score(
                runs[e][position].iter().map(|(i, v)| (*i as usize, v)),
                &trusted,
                ei.scored as usize,
                rules,
            );
            let reported = reported_measurement(&score, &measurements[e][position]).copied();
            scores.push(ToolExamScore {
                tool: ei.tools[position],
                score,
                reported,
            });
        }
        all.push(scores);
    }
    let tools = all
        .iter()
        .flatten()
        .map(|s| s.tool as usize + 1)
        .max()
        .unwrap_or(0);
    let mut totals: Vec<Option<ExamTotal>> = vec![None; tools];
    for s in all.iter().flatten() {
        let total = totals[s.tool as usize].get_or_insert_with(|| ExamTotal {
            tool: s.tool,
            points: Sum::default(),
            completed: 0,
            cpu_s: Sum::default(),
            peak_memory_mb: Sum::default(),
        });
        if !s.score.points.is_zero() {
            total.points.add(&s.score.points);
        }
        if let Some(r) = s.reported {
            total.completed += 1;
            total.cpu_s.add_f64(r.cpu_time_s);
            total.peak_memory_mb.add_f64(r.peak_memory_mb());
        }
    }
    let completed: Vec<Vec<Completed>> = all
        .iter()
        .map(|instance| {
            instance
                .iter()
                .filter_map(|s| {
                    s.reported.map(|r| Completed {
                        tool: s.tool,
                        cpu_s: r.cpu_time_s,
                        peak_memory_mb: r.peak_memory_mb(),
                    })
                })
                .collect()
        })
        .collect();
    ExamScores {
        decisions,
        scores: all,
        totals: totals.into_iter().flatten().collect(),
        completed: completed.into(),
    }
}
