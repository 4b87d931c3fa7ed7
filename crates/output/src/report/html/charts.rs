//! An examination's execution-time charts page: the cactus plot of its tools, then one
//! scatter per pair of tools (the 2015 report's Fig. 1), each point an examination instance.

use maud::{PreEscaped, html};
use mccbuild_core::{Outcome, Value};

use super::super::svg::{self, Pair, Series};
use super::{ReportData, RunView, Shared, layout, slug, tools_in};

/// A run's answers as two runs' are compared on a chart ([`disagree`]), made once per run:
/// booleans at positions below 64, one answer per position in order (what records hold), as
/// two bit masks; any other answers as they are.
enum Compact {
    Bits { known: u64, set: u64 },
    Other,
}

impl Compact {
    fn of(run: &RunView) -> Compact {
        let (mut known, mut set) = (0u64, 0u64);
        let mut last = None;
        for (p, v) in run.answers.iter() {
            let (Value::Bool(b), true) = (v, *p < 64 && last.is_none_or(|l| l < *p)) else {
                return Compact::Other;
            };
            last = Some(*p);
            known |= 1 << p;
            set |= (*b as u64) << p;
        }
        Compact::Bits { known, set }
    }

    /// [`disagree`] of the runs `ra` (`self`) and `rb` (`other`): with one answer per position
    /// on both sides, whether a position both answered holds different booleans.
    fn disagrees(&self, other: &Compact, ra: &RunView, rb: &RunView) -> bool {
        match (self, other) {
            (Compact::Bits { known: ka, set: sa }, Compact::Bits { known: kb, set: sb }) => {
                ka & kb & (sa ^ sb) != 0
            }
            _ => disagree(&ra.answers, rb),
        }
    }
}

/// The execution-time charts of one examination: the cactus plot, then one scatter per pair of
/// tools. Returns the page and the number of charts.
pub(super) fn page(data: &ReportData<'_>, shared: &Shared, x: usize) -> (String, usize) {
    let plan = data.plan;
    let exam = &plan.contest.edition.examinations[x];
    let tools = tools_in(data, x);
    let limit = shared.chart_limit;
    // Per examination instance of x, each tool's run.
    let mut grid: Vec<(usize, Vec<Option<&RunView>>)> = Vec::new();
    for (e, ei) in plan.exam_instances.iter().enumerate() {
        if ei.exam == x {
            let row = tools
                .iter()
                .map(|t| {
                    data.runs_of[e]
                        .iter()
                        .map(|&i| &data.runs[i])
                        .find(|r| r.tool == *t)
                })
                .collect();
            grid.push((e, row));
        }
    }
    // Each run's answers in the form two runs' are compared in (once per run, not per pair).
    let compact: Vec<Vec<Option<Compact>>> = grid
        .iter()
        .map(|(_, row)| row.iter().map(|r| r.map(Compact::of)).collect())
        .collect();
    let series: Vec<Series> = tools
        .iter()
        .enumerate()
        .map(|(i, t)| Series {
            name: plan.contest.tools[*t].name.clone(),
            times: grid
                .iter()
                .filter_map(|(_, row)| row[i])
                .filter(|r| r.solved())
                .map(|r| r.measurement.cpu_time_s)
                .collect(),
        })
        .collect();
    let mut scatters = Vec::new();
    for a in 0..tools.len() {
        for b in a + 1..tools.len() {
            let pairs: Vec<Pair> = grid
                .iter()
                .enumerate()
                .zip(&compact)
                .filter_map(|((label, (_, row)), compact)| {
                    let (ra, rb) = (row[a]?, row[b]?);
                    if ra.outcome.is_none() || rb.outcome.is_none() {
                        return None;
                    }
                    let time = |r: &RunView| {
                        (r.outcome == Some(Outcome::Answered)).then_some(r.measurement.cpu_time_s)
                    };
                    let disagree = match (&compact[a], &compact[b]) {
                        (Some(ca), Some(cb)) => ca.disagrees(cb, ra, rb),
                        _ => disagree(&ra.answers, rb),
                    };
                    Some(Pair {
                        x: time(ra),
                        y: time(rb),
                        disagree,
                        label: label as u32,
                    })
                })
                .collect();
            let (x_name, y_name) = (
                &plan.contest.tools[tools[a]].name,
                &plan.contest.tools[tools[b]].name,
            );
            scatters.push(match &data.charts {
                Some(cache) => cache.scatter(x_name, y_name, &pairs, limit),
                None => std::sync::Arc::new(svg::scatter(x_name, y_name, &pairs, limit)),
            });
        }
    }
    let count = scatters.len() + 1;
    let body = html! {
        p { a href=(slug("examination", x, &exam.name)) { "Results of " (exam.name) } ". CPU times; a run that computed no value is drawn on the border line marked “failed”; red points: the two tools gave different values." }
        h2 { "Runs solved within a time (cactus)" }
        p { "Solved: every trusted value computed, none wrong." }
        figure { (PreEscaped(svg::cactus(&series, limit))) }
        h2 { "Tool against tool" }
        @let names: Vec<&str> = grid.iter().map(|(e, _)| plan.instances[plan.exam_instances[*e].instance].name.as_str()).collect();
        div.charts data-names=(names.join("|")) { @for s in &scatters { figure { (PreEscaped(s.as_str())) } } }
    };
    (
        layout(data, &format!("{}: execution times", exam.name), body),
        count,
    )
}

/// Whether `b` gave another value than `a` for a value both gave. `b`'s answers are searched by
/// halves when they are in order of position (as records keep them), one by one otherwise.
fn disagree(a: &[(u16, Value)], b: &RunView) -> bool {
    let sorted = b.answers.windows(2).all(|w| w[0].0 <= w[1].0);
    a.iter().any(|(p, v)| {
        let given = if sorted {
            // The first answer at position p, as `RunView::answer` finds it.
            let i = b.answers.partition_point(|(q, _)| q < p);
            b.answers.get(i).filter(|(q, _)| q == p).map(|(_, w)| w)
        } else {
            b.answer(*p as usize)
        };
        given.is_some_and(|w| w != v)
    })
}
