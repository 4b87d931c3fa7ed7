//! An examination's execution-time charts page: the cactus plot of its tools, then one
//! scatter per pair of tools (the 2015 report's Fig. 1), each point an examination instance.

use maud::{PreEscaped, html};
use mccbuild_core::{Outcome, Value};

use super::super::run_page;
use super::super::svg::{self, Pair, Series};
use super::{ReportData, RunView, Shared, layout, run_href, slug, tools_in};

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
    // Per examination instance of x, each tool's run (its index).
    let mut grid_runs: Vec<(usize, Vec<Option<usize>>)> = Vec::new();
    for (e, ei) in plan.exam_instances.iter().enumerate() {
        if ei.exam == x {
            let row = tools
                .iter()
                .map(|t| {
                    data.runs_of[e]
                        .iter()
                        .copied()
                        .find(|&i| data.runs[i].tool == *t)
                })
                .collect();
            grid_runs.push((e, row));
        }
    }
    let grid: Vec<(usize, Vec<Option<&RunView>>)> = grid_runs
        .iter()
        .map(|(e, row)| (*e, row.iter().map(|i| i.map(|i| &data.runs[i])).collect()))
        .collect();
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
    let links = run_links(data, &grid_runs);
    let body = html! {
        p { a href=(slug("examination", x, &exam.name)) { "Results of " (exam.name) } ". CPU times; a run that computed no value is drawn on the border line marked “failed”; red points: the two tools gave different values." }
        @if links.is_some() {
            p { "A click on a point opens its run (on a scatter chart: a choice of its two runs)." }
            noscript { p { "Without JavaScript the points do not open their runs: each run is linked from its cell of the " a href=(slug("examination", x, &exam.name)) { "results table" } "." } }
        }
        h2 { "Runs solved within a time (cactus)" }
        p { "Solved: every trusted value computed, none wrong." }
        @match &links {
            Some(_) => { figure data-order=(cactus_order(&grid, tools.len())) { (PreEscaped(svg::cactus(&series, limit))) } }
            None => { figure { (PreEscaped(svg::cactus(&series, limit))) } }
        }
        h2 { "Tool against tool" }
        @let names: Vec<&str> = grid.iter().map(|(e, _)| plan.instances[plan.exam_instances[*e].instance].name.as_str()).collect();
        @match &links {
            Some(runs) => {
                @let tool_names: Vec<&str> = tools.iter().map(|&t| plan.contest.tools[t].name.as_str()).collect();
                div.charts data-names=(names.join("|")) data-tools=(tool_names.join("|")) data-runs=(runs) {
                    @for (s, (a, b)) in scatters.iter().zip(pairs_of(tools.len())) { figure data-x=(a) data-y=(b) { (PreEscaped(s.as_str())) } }
                }
            }
            None => { div.charts data-names=(names.join("|")) { @for s in &scatters { figure { (PreEscaped(s.as_str())) } } } }
        }
    };
    (
        layout(data, &format!("{}: execution times", exam.name), body),
        count,
    )
}

/// The pairs of columns of the scatter charts, in the order they are drawn.
fn pairs_of(columns: usize) -> impl Iterator<Item = (usize, usize)> {
    (0..columns).flat_map(move |a| (a + 1..columns).map(move |b| (a, b)))
}

/// The run pages of a charts page's points, for its script (`site.js`): per examination
/// instance (the points' labels), `|`-separated, each column's run page as the file name
/// under `runs/` without `.html`, space-separated, `-` where the run has no page. `None` when
/// no run of the page has one (imported runs): the page then carries nothing of it.
fn run_links(data: &ReportData<'_>, grid: &[(usize, Vec<Option<usize>>)]) -> Option<String> {
    let stem = |i: usize| {
        run_href(data, i).and_then(|h| {
            h.strip_prefix(run_page::RUNS_DIR)?
                .strip_prefix('/')?
                .strip_suffix(".html")
        })
    };
    if !grid
        .iter()
        .flat_map(|(_, row)| row)
        .flatten()
        .any(|&i| stem(i).is_some())
    {
        return None;
    }
    let rows: Vec<String> = grid
        .iter()
        .map(|(_, row)| {
            row.iter()
                .map(|i| i.and_then(stem).unwrap_or("-"))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    Some(rows.join("|"))
}

/// The cactus plot's points in the order it draws them, for the page's script: per column
/// (`|`-separated), the labels of its solved runs sorted by CPU time (the order of
/// [`svg::cactus`]: a stable sort), space-separated.
fn cactus_order(grid: &[(usize, Vec<Option<&RunView>>)], columns: usize) -> String {
    (0..columns)
        .map(|c| {
            let mut solved: Vec<(usize, f64)> = grid
                .iter()
                .enumerate()
                .filter_map(|(label, (_, row))| row[c].map(|r| (label, r)))
                .filter(|(_, r)| r.solved())
                .map(|(label, r)| (label, r.measurement.cpu_time_s))
                .collect();
            solved.sort_by(|a, b| a.1.total_cmp(&b.1));
            solved
                .iter()
                .map(|(label, _)| label.to_string())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect::<Vec<_>>()
        .join("|")
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
