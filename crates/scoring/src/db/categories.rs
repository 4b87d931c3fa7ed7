//! Queries of the whole contest, E-4.6: each weight group's totals, each category's totals
//! (weighted by E-4.4), and every tool's entries of every category for explanations.

use mccbuild_core::Measurement;
use mccbuild_rules::confidence::ToolIdx;
use mccbuild_rules::edition::CategoryId;
use mccbuild_rules::exact::{Exact, Sum};
use mccbuild_rules::podium::{Performance, category_total, weighted_points, weighted_sum};

use super::{ContestData, ExamTotal, edition_shape, exam_scores, weight_groups, weights};

/// What one examination of one instance adds to one tool's total in its category (E-4.6).
#[derive(Clone, Debug, PartialEq)]
pub struct CategoryEntry {
    /// Index into the contest's model examinations, and of the examination instance there.
    pub examination: usize,
    pub exam_instance: usize,
    pub category: CategoryId,
    pub tool: ToolIdx,
    /// Its points, weighted (E-4.4), exactly.
    pub weighted: Exact,
    /// E-4.3: its measurement, when the examination is complete.
    pub reported: Option<Measurement>,
}

/// Every tool's entries of every category (explanations): their exact sum is the total of
/// [`category_scores`].
pub fn category_entries(
    db: &dyn salsa::Database,
    contest: ContestData,
) -> impl Iterator<Item = CategoryEntry> + '_ {
    let weights = weights(db, contest);
    contest
        .examinations(db)
        .iter()
        .zip(weights)
        .enumerate()
        .flat_map(move |(i, (m, w))| {
            exam_scores(db, *m)
                .iter()
                .zip(w)
                .enumerate()
                .flat_map(move |(j, (scores, w))| {
                    scores.iter().map(move |s| CategoryEntry {
                        examination: i,
                        exam_instance: j,
                        category: w.category,
                        tool: s.tool,
                        weighted: weighted_points(&s.score.points, w),
                        reported: s.reported,
                    })
                })
        })
}

/// Rule E-4.6's totals: per category, each tool's score, and its time and memory over the
/// examinations it completed (E-4.3).
#[derive(Clone, Debug, PartialEq)]
pub struct CategoryScores {
    /// `[category][tool]`, exact.
    pub scores: Vec<Vec<Exact>>,
    /// `[category][tool]`: the tool took part in some examination of the category.
    pub participating: Vec<Vec<bool>>,
    /// `[category][tool]`
    pub performance: Vec<Vec<Performance>>,
}

/// One weight group's totals (E-4.6 before E-4.4's weighting): per tool taking part in one of
/// its model examinations, in tool order, its points, and its time and memory over the
/// examinations it completed (E-4.3), summed exactly. A query of its own: a new record re-sums
/// the group of its model examination only, and [`category_scores`] weights and adds the
/// groups' totals (the sums over every model examination were a sixth of a re-score).
#[salsa::tracked(returns(ref))]
pub fn group_totals(db: &dyn salsa::Database, contest: ContestData, group: u32) -> Vec<ExamTotal> {
    let examinations = contest.examinations(db);
    let mut totals: Vec<Option<ExamTotal>> = vec![None; contest.tools(db).len()];
    for &i in &weight_groups(db, contest).members[group as usize] {
        for total in exam_scores(db, examinations[i]).totals.iter() {
            let Some(slot) = totals.get_mut(total.tool as usize) else {
                continue;
            };
            let sum = slot.get_or_insert_with(|| ExamTotal {
                tool: total.tool,
                points: Sum::default(),
                completed: 0,
                cpu_s: Sum::default(),
                peak_memory_mb: Sum::default(),
            });
            if !total.points.is_zero() {
                sum.points.merge(&total.points);
            }
            if total.completed > 0 {
                sum.completed += total.completed;
                sum.cpu_s.merge(&total.cpu_s);
                sum.peak_memory_mb.merge(&total.peak_memory_mb);
            }
        }
    }
    totals.into_iter().flatten().collect()
}

/// Rule E-4.6's totals of one category: each tool's score, whether it took part, and its time
/// and memory over the examinations it completed (E-4.3), in tool order.
#[derive(Clone, Debug, PartialEq)]
pub struct CategoryTotals {
    pub scores: Vec<Exact>,
    pub participating: Vec<bool>,
    pub performance: Vec<Performance>,
}

/// Rule E-4.6 for one category (a query per category: a record re-sums the category of its
/// model examination only; the others' totals are verified through their weight groups).
#[salsa::tracked(returns(ref))]
pub fn category_totals(
    db: &dyn salsa::Database,
    contest: ContestData,
    category: u32,
) -> CategoryTotals {
    let tools = contest.tools(db).len();
    let mut weighted: Vec<Vec<Sum>> = vec![Vec::new(); tools];
    // Per tool: completed examinations, time, memory.
    let mut performance = vec![(0u32, Sum::default(), Sum::default()); tools];
    let mut participating = vec![false; tools];
    // Every examination instance of a model examination has the same weight (one model, one
    // category), and many models share a weight (same number of instances, same kind): each
    // tool's points are summed per weight group first ([`group_totals`]: small fractions, in
    // machine words while they fit, see `Sum`), then weighted once. The same total as weighting
    // each entry (the weighting is linear and the arithmetic exact), with a few multiplications
    // per category instead of one per entry, in machine words while they fit (as the totals
    // are summed).
    let groups = weight_groups(db, contest);
    for (g, (weight, factor)) in groups.weights.iter().zip(&groups.factors).enumerate() {
        if weight.category != category as usize {
            continue;
        }
        for total in group_totals(db, contest, g as u32) {
            let t = total.tool as usize;
            participating[t] = true;
            if !total.points.is_zero() {
                weighted[t].push(weighted_sum(&total.points, factor));
            }
            if total.completed > 0 {
                let p = &mut performance[t];
                p.0 += total.completed;
                p.1.merge(&total.cpu_s);
                p.2.merge(&total.peak_memory_mb);
            }
        }
    }
    CategoryTotals {
        scores: weighted.into_iter().map(category_total).collect(),
        participating,
        performance: performance
            .into_iter()
            .map(|(completed, cpu, memory)| Performance {
                completed,
                cpu_s: cpu.value(),
                peak_memory_mb: memory.value(),
            })
            .collect(),
    }
}

/// Rule E-4.6's totals of every category ([`category_totals`], gathered).
pub fn category_scores(db: &dyn salsa::Database, contest: ContestData) -> CategoryScores {
    let mut all = CategoryScores {
        scores: Vec::new(),
        participating: Vec::new(),
        performance: Vec::new(),
    };
    for c in 0..edition_shape(db, contest).categories {
        let totals = category_totals(db, contest, c as u32);
        all.scores.push(totals.scores.clone());
        all.participating.push(totals.participating.clone());
        all.performance.push(totals.performance.clone());
    }
    all
}
