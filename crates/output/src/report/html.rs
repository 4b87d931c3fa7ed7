//! The pages of the results site (maud templates: every text is escaped).

use maud::{DOCTYPE, Markup, html};

mod charts;
mod model;

use mccbuild_core::Outcome;

use super::{ReportData, RunView, outcome_label, outcome_title, slug};
use mccbuild_plan::manifest::ToolKind;

/// The site's one script (progressive enhancement: tables that filter, sort and hide columns;
/// the instance under the pointer on scatter charts). Every page reads without it.
const SCRIPT: &str = include_str!("assets/site.js");

const STYLE: &str = r#"body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#222}
nav{background:#1f3b5a;padding:.5em 1em}nav a{color:#fff;margin-right:1.2em;text-decoration:none}
main{padding:1em 1.5em;max-width:1400px}footer{color:#777;padding:1em 1.5em;font-size:12px}
table{border-collapse:collapse;margin:.5em 0 1.5em}th,td{border:1px solid #ccc;padding:2px 6px;text-align:left;vertical-align:top}
th{background:#eef2f6}td.n{text-align:right;font-variant-numeric:tabular-nums}
.gold{background:#f7e27e}.silver{background:#dfe3e8}.bronze{background:#e9c29b}
.ref{color:#666;font-style:italic}.x{color:#fff;background:#d00000}.warn{color:#b00}
.mono{font-family:ui-monospace,monospace}.s-TO,.s-MO,.s-fail{color:#b00}.s-CC,.s-DNC,.s--{color:#888}
.charts{display:flex;flex-wrap:wrap;gap:8px}figure{margin:0}tr.organisers{background:#eef7ee}
.tablebar{margin:.5em 0 0}.tablebar input{margin-right:1em}.tablebar details{display:inline-block;margin-left:1em}
.tablebar label{display:block}.count{color:#666}th.sortable{cursor:pointer}th[aria-sort=ascending]::after{content:" \25b2"}
th[aria-sort=descending]::after{content:" \25bc"}tr.stats td{background:#f4f4f4;font-weight:600}
.tip{position:absolute;background:#ffffe0;border:1px solid #999;padding:2px 6px;font-size:12px;pointer-events:none}
.pick{position:absolute;background:#fff;border:1px solid #999;padding:4px 8px;font-size:13px;box-shadow:0 2px 6px rgba(0,0,0,.2)}
pre{background:#f6f8fa;border:1px solid #ddd;padding:.5em;white-space:pre-wrap;word-break:break-all;max-height:40em;overflow:auto}a.run{font-size:11px}
"#;

/// One page of the site to render.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Page {
    Style,
    Script,
    Index,
    Reliability,
    Disputes,
    Tools,
    Examinations,
    Models,
    Tool(usize),
    Examination(usize),
    Charts(usize),
    Model(usize),
}

/// Every page: (file name, text, charts drawn on it), rendered on all cores (the pages are
/// independent; the charts pages take most of the time).
pub fn pages(data: &ReportData<'_>) -> Vec<(String, String, usize)> {
    use rayon::prelude::*;
    let shared = Shared::of(data);
    list(data)
        .into_par_iter()
        .map(|page| render(data, &shared, page))
        .collect()
}

/// What several pages read, computed once per site rather than once per page.
pub(crate) struct Shared {
    /// Each tool's link from a page at the site's top ([`tool_link`]).
    tool_links: Vec<String>,
    /// Each instance's examination instances, in plan order.
    exams_of_instance: Vec<Vec<usize>>,
    /// The charts' time limit: the largest of the runs' (60 s without runs).
    chart_limit: f64,
}

impl Shared {
    pub(crate) fn of(data: &ReportData<'_>) -> Shared {
        let plan = data.plan;
        let mut exams_of_instance = vec![Vec::new(); plan.instances.len()];
        for (e, ei) in plan.exam_instances.iter().enumerate() {
            exams_of_instance[ei.instance].push(e);
        }
        Shared {
            tool_links: (0..plan.contest.tools.len())
                .map(|t| tool_link(data, t).into_string())
                .collect(),
            exams_of_instance,
            chart_limit: plan
                .runs
                .iter()
                .map(|r| r.limits.time_s)
                .max()
                .unwrap_or(60) as f64,
        }
    }
}

/// The pages of the site, in the order they are written.
pub(crate) fn list(data: &ReportData<'_>) -> Vec<Page> {
    let plan = data.plan;
    let mut list = vec![
        Page::Style,
        Page::Script,
        Page::Index,
        Page::Reliability,
        Page::Disputes,
        Page::Tools,
        Page::Examinations,
        Page::Models,
    ];
    list.extend((0..plan.contest.tools.len()).map(Page::Tool));
    for x in exams_with_runs(data) {
        list.push(Page::Examination(x));
        list.push(Page::Charts(x));
    }
    list.extend((0..plan.models.len()).map(Page::Model));
    list
}

/// One page: (file name, text, charts drawn on it).
pub(crate) fn render(
    data: &ReportData<'_>,
    shared: &Shared,
    page: Page,
) -> (String, String, usize) {
    let plan = data.plan;
    let exam_name = |x: usize| &plan.contest.edition.examinations[x].name;
    match page {
        Page::Style => ("style.css".to_string(), STYLE.to_string(), 0),
        Page::Script => ("site.js".to_string(), SCRIPT.to_string(), 0),
        Page::Index => ("index.html".into(), index(data), 0),
        Page::Reliability => ("reliability.html".into(), reliability(data), 0),
        Page::Disputes => (
            "disputes.html".into(),
            layout(data, "Disputes", super::disputes::page(data)),
            0,
        ),
        Page::Tools => ("tools.html".into(), tools(data), 0),
        Page::Examinations => ("examinations.html".into(), examinations(data), 0),
        Page::Models => ("models.html".into(), models(data), 0),
        Page::Tool(t) => (
            slug("tool", t, &plan.contest.tools[t].name),
            tool(data, t),
            0,
        ),
        Page::Examination(x) => (
            slug("examination", x, exam_name(x)),
            examination(data, x),
            0,
        ),
        Page::Charts(x) => {
            let (text, charts) = charts::page(data, shared, x);
            (slug("charts", x, exam_name(x)), text, charts)
        }
        Page::Model(m) => (
            slug("model", m, &plan.models[m].name),
            model::page(data, shared, m),
            0,
        ),
    }
}

fn layout(data: &ReportData<'_>, title: &str, body: Markup) -> String {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " — " (data.scores.contest) }
                link rel="stylesheet" href="style.css";
                // No favicon request (a 404 in the browser's console when served).
                link rel="icon" href="data:,";
                script src="site.js" defer {}
            }
            body {
                (nav(""))
                main { h1 { (title) } (body) }
                footer { (super::setup::footer(data)) }
            }
        }
    }
    .into_string()
}

/// The link to run `i`'s page from a page at the site's top, if it has one.
fn run_href<'d>(data: &'d ReportData<'_>, i: usize) -> Option<&'d str> {
    data.run_pages.get(&i).map(|(name, _)| name.as_str())
}

fn tool_link(data: &ReportData<'_>, t: usize) -> Markup {
    let tool = &data.plan.contest.tools[t];
    html! { a href=(slug("tool", t, &tool.name)) { (tool.name) } @if tool.kind == ToolKind::Reference { span.ref { " (reference)" } } }
}

fn model_link(data: &ReportData<'_>, m: usize) -> Markup {
    html! { a href=(slug("model", m, &data.plan.models[m].name)) { (data.plan.models[m].name) } }
}

fn seconds(s: f64) -> String {
    if s >= 100.0 {
        format!("{s:.0}")
    } else {
        format!("{s:.2}")
    }
}

fn index(data: &ReportData<'_>) -> String {
    let plan = data.plan;
    let edition = &plan.contest.edition;
    let stored = data.runs.iter().filter(|r| r.outcome.is_some()).count();
    let body = html! {
        p { (plan.contest.tools.len()) " tools, " (plan.models.len()) " models, " (plan.instances.len()) " instances, "
            (plan.runs.len()) " runs (" (stored) " done). Rules: " (edition.info.name) "." }
        @if let Some(p) = &data.scores.partial { p.warn.partial { (p.notice()) "." } }
        @if let Some(r) = &data.scores.reference {
            p { "Trusted values: " b { @if data.scores.basis == "reference" { "the reference answers" } @else { "the vote (E-3.1)" } }
                "; reference answers: " code { (r.answers) } " (they know " (r.known) " of " (r.values) " values)." }
            h2 { "Against the reference" }
            table.data {
                tr { th { "tool" } th { "right" } th { "wrong" } th { "unknown" } th { "unanswered" } }
                @for (tool, c) in &r.tools {
                    tr { td { (tool) } td.n { (c.right) } td.n { (c.wrong) } td.n { (c.unknown) } td.n { (c.unanswered) } }
                }
            }
            p { "Vote and reference: " (r.disagreements.len()) " values differ; " (r.vote_only) " known to the vote only, " (r.reference_only) " to the reference only." }
            @if !r.disagreements.is_empty() {
                table.data {
                    tr { th { "instance" } th { "examination" } th { "value" } th { "vote" } th { "reference" } }
                    @for d in &r.disagreements {
                        tr { td { (d.instance) } td { (d.examination) } td { (d.id) } td { (d.vote) " (" (d.case) ")" } td { (d.reference) } }
                    }
                }
            }
        }
        @if data.exports {
            p { "Exports: " a href="exports/results.csv" { "results.csv" } " (the layout of the MCC's raw-result-analysis.csv), "
                a href="exports/results.json" { "results.json" } " (scores, values, every run), "
                "and the trusted values of each model as propertiesverdict XML in " code { "exports/verdicts/" } "." }
        }
        @for category in &edition.categories {
            h2 { (category.title) }
            @match data.scores.standings.get(&category.name) {
                Some(rows) if !rows.is_empty() => {
                    table.podium {
                        tr { th { "rank" } th { "tool" } th { "score" } th { "entry" } }
                        @for row in rows {
                            @let t = plan.contest.tool(&row.tool).unwrap_or(0);
                            tr class=[row.medal.as_deref()] {
                                td.n { @if let Some(r) = row.rank { (r) } @if let Some(m) = &row.medal { " " (m) } }
                                td { (tool_link(data, t)) }
                                td.n { (format!("{:.2}", row.score)) }
                                td { @if !row.competing { "reference tool, not ranked" } @else if !row.best_of_family { "variant (best of its family ranks)" } @else { "competing" } }
                            }
                        }
                    }
                    @if let Some(a) = data.scores.awards.get(&category.name) {
                        @if a.fastest.is_some() || a.least_memory.is_some() {
                            p.awards { "Fastest tool: " b { (a.fastest_shown().as_deref().unwrap_or("-")) } " · least memory: " b { (a.least_memory_shown().as_deref().unwrap_or("-")) } }
                        }
                    }
                }
                _ => { p { "No tool took part." } }
            }
        }
        (super::setup::block(data))
    };
    layout(data, &format!("{}: podiums", data.scores.contest), body)
}

fn reliability(data: &ReportData<'_>) -> String {
    let body = html! {
        p { "Rule E-2.2: a tool's Confidence is the share of the values of V it answered with V's value, V being the "
            (data.agreed_values) " values on which at least three tools agree (the MCC 2015 report's Table 3)." }
        table.data {
            tr { th { "tool" } th { "Confidence" } th { "correct" } th { "selected" } th { "examinations entered" } }
            @for row in &data.reliability {
                @let t = data.plan.contest.tool(&row.tool).unwrap_or(0);
                tr { td { (tool_link(data, t)) } td.n { (format!("{:.5}", row.rate)) } td.n { (row.correct) } td.n { (row.selected) } td.n { (row.examinations) } }
            }
        }
    };
    layout(data, "Reliability", body)
}

fn tools(data: &ReportData<'_>) -> String {
    let plan = data.plan;
    let mut runs = vec![0usize; plan.contest.tools.len()];
    for r in &data.runs {
        runs[r.tool] += 1;
    }
    let body = html! {
        table.data {
            tr { th { "tool" } th { "family" } th { "kind" } th { "cores" } th { "Confidence" } th { "runs" } }
            @for (t, tool) in plan.contest.tools.iter().enumerate() {
                tr {
                    td { (tool_link(data, t)) } td { (tool.family) }
                    td { (if tool.kind == ToolKind::Reference { "reference" } else { "competing" }) }
                    td.n { (tool.cores) }
                    td.n { @if let Some(c) = data.scores.confidence.get(&tool.name) { (format!("{c:.5}")) } }
                    td.n { (runs[t]) }
                }
            }
        }
    };
    layout(data, "Tools", body)
}

/// The examinations that have runs, in the edition's order.
pub(crate) fn exams_with_runs(data: &ReportData<'_>) -> Vec<usize> {
    let mut used = vec![false; data.plan.contest.edition.examinations.len()];
    for ei in &data.plan.exam_instances {
        used[ei.exam] = true;
    }
    (0..used.len()).filter(|&x| used[x]).collect()
}

fn examinations(data: &ReportData<'_>) -> String {
    let edition = &data.plan.contest.edition;
    // Per examination, its instances and their runs, in one pass.
    let mut instances = vec![0usize; edition.examinations.len()];
    let mut runs = vec![0usize; edition.examinations.len()];
    for (e, ei) in data.plan.exam_instances.iter().enumerate() {
        instances[ei.exam] += 1;
        runs[ei.exam] += data.runs_of[e].len();
    }
    let body = html! {
        table.data {
            tr { th { "examination" } th { "category" } th { "instances" } th { "runs" } th { "charts" } }
            @for x in exams_with_runs(data) {
                @let exam = &edition.examinations[x];
                tr {
                    td { a href=(slug("examination", x, &exam.name)) { (exam.name) } }
                    td { (edition.categories[exam.category].title) }
                    td.n { (instances[x]) }
                    td.n { (runs[x]) }
                    td { a href=(slug("charts", x, &exam.name)) { "execution times" } }
                }
            }
        }
    };
    layout(data, "Examinations", body)
}

fn models(data: &ReportData<'_>) -> String {
    let plan = data.plan;
    let body = html! {
        table.data {
            tr { th { "model" } th { "kind" } th { "instances" } }
            @for (m, model) in plan.models.iter().enumerate() {
                tr { td { (model_link(data, m)) } td { (plan.contest.edition.model_kinds.get(model.kind).map_or("", |k| k.name.as_str())) } td.n { (model.instances.len()) } }
            }
        }
    };
    layout(data, "Models", body)
}

#[derive(Default)]
struct Tally {
    runs: usize,
    by_status: [usize; 7],
    right: u64,
    wrong: u64,
    /// Summed in machine words while it can be (`Sum`: the same fraction as adding `Exact`s).
    points: mccbuild_rules::exact::Sum,
    solved: usize,
    cpu: f64,
    max_memory: f64,
}

fn status_index(s: Option<Outcome>) -> usize {
    [
        Some(Outcome::Answered),
        Some(Outcome::CannotCompute),
        Some(Outcome::DoNotCompete),
        Some(Outcome::TimeOut),
        Some(Outcome::MemoryOut),
        Some(Outcome::Failed),
        None,
    ]
    .iter()
    .position(|x| *x == s)
    .unwrap_or(6)
}

fn tool(data: &ReportData<'_>, t: usize) -> String {
    let plan = data.plan;
    let edition = &plan.contest.edition;
    let tool = &plan.contest.tools[t];
    let mut per_exam: Vec<Tally> = (0..edition.examinations.len())
        .map(|_| Tally::default())
        .collect();
    let mut wrong = Vec::new();
    for (ri, run) in data.runs.iter().enumerate().filter(|(_, r)| r.tool == t) {
        let ei = &plan.exam_instances[run.exam_instance];
        let tally = &mut per_exam[ei.exam];
        tally.runs += 1;
        tally.by_status[status_index(run.outcome)] += 1;
        tally.cpu += run.measurement.cpu_time_s;
        tally.max_memory = tally.max_memory.max(run.measurement.peak_memory_mb());
        tally.solved += run.solved() as usize;
        if let Some(s) = &run.score {
            tally.right += s.score.right as u64;
            tally.wrong += s.score.wrong as u64;
            tally.points.add(&s.score.points);
        }
        let decisions = &data.decisions[run.exam_instance];
        for (position, value) in run.answers.iter() {
            if let Some(d) = decisions.get(*position as usize) {
                if d.value.as_ref().is_some_and(|v| v != value) {
                    wrong.push((
                        ri,
                        run.exam_instance,
                        *position as usize,
                        value.clone(),
                        d.clone(),
                    ));
                }
            }
        }
    }
    let confidence = data.reliability.iter().find(|r| r.tool == tool.name);
    let body = html! {
        p { "Family " (tool.family) ", " (if tool.kind == ToolKind::Reference { "reference tool (not ranked)" } else { "competing" }) ", "
            (tool.cores) (if tool.cores == 1 { " core" } else { " cores" }) "." }
        @if data.scores.basis == "reference" {
            // The reference decides the trusted values: the Confidence decides nothing here.
            @if let Some(c) = data.scores.reference.as_ref().and_then(|r| r.tools.get(&tool.name)) {
                p.judged { "Against the reference answers (the basis of the trusted values): " b { (c.right) " right" } ", "
                    (c.wrong) " wrong, " (c.unknown) " unknown to the reference, " (c.unanswered) " not answered." }
            }
        } @else if let Some(c) = confidence {
            @if c.selected == 0 {
                p { "Confidence (E-2.2): " b { (format!("{:.5}", c.rate)) } " — it answered none of the " (data.agreed_values) " values of V (those on which at least three tools agree)." }
            } @else {
                p { "Confidence (E-2.2): " b { (format!("{:.5}", c.rate)) } " — " (c.correct) " of " (c.selected) " values of V right." }
            }
        }
        h2 { "Scores" }
        table.data {
            tr { th { "category" } th { "score" } th { "rank" } }
            @for category in &edition.categories {
                @if let Some(row) = data.scores.standings.get(&category.name).and_then(|rows| rows.iter().find(|r| r.tool == tool.name)) {
                    tr class=[row.medal.as_deref()] { td { (category.title) } td.n { (format!("{:.2}", row.score)) }
                        td { @if let Some(r) = row.rank { (r) } @else { "-" } @if let Some(m) = &row.medal { " " (m) } } }
                }
            }
        }
        h2 { "Per examination" }
        table.data {
            tr { th { "examination" } th { "runs" } th title="answered" { "ok" } th title="cannot compute" { "CC" } th title="did not compete" { "DNC" }
                 th title="time-out" { "TO" } th title="memory-out" { "MO" } th { "failed" } th { "not run" }
                 th { "values right" } th { "values wrong" } th { "points" } th title="every trusted value computed, none wrong" { "solved" }
                 th { "CPU time (s)" } th { "max memory (MB)" } }
            @for x in exams_with_runs(data) {
                @let y = &per_exam[x];
                @if y.runs > 0 {
                    tr {
                        td { a href=(slug("examination", x, &edition.examinations[x].name)) { (edition.examinations[x].name) } }
                        td.n { (y.runs) }
                        @for n in &y.by_status { td.n { (n) } }
                        td.n { (y.right) } td.n class=[(y.wrong > 0).then_some("warn")] { (y.wrong) }
                        td.n { (mccbuild_rules::exact::decimal(&y.points.value(), 2)) } td.n { (y.solved) }
                        td.n { (seconds(y.cpu)) } td.n { (format!("{:.0}", y.max_memory)) }
                    }
                }
            }
            @let all: Vec<&Tally> = per_exam.iter().filter(|y| y.runs > 0).collect();
            tr.stats {
                td { "all examinations" }
                td.n { (all.iter().map(|y| y.runs).sum::<usize>()) }
                @for s in 0..7 { td.n { (all.iter().map(|y| y.by_status[s]).sum::<usize>()) } }
                td.n { (all.iter().map(|y| y.right).sum::<u64>()) } td.n { (all.iter().map(|y| y.wrong).sum::<u64>()) }
                td {} td.n { (all.iter().map(|y| y.solved).sum::<usize>()) }
                td.n { (seconds(all.iter().map(|y| y.cpu).sum::<f64>())) } td.n { (format!("{:.0}", all.iter().map(|y| y.max_memory).fold(0.0, f64::max))) }
            }
        }
        h2 { "Values where it disagreed with the trusted value (" (wrong.len()) ")" }
        @if !wrong.is_empty() {
            table.data {
                tr { th { "instance" } th { "examination" } th { "value" } th { "its answer" } th { "trusted" } th { "decided by (E-3.1)" } }
                @for (ri, e, position, value, decision) in &wrong {
                    @let ei = &plan.exam_instances[*e];
                    @let instance = &plan.instances[ei.instance];
                    tr {
                        td { a href=(format!("{}#i{}", slug("model", instance.model, &plan.models[instance.model].name), ei.instance)) { (instance.name) } }
                        td { (edition.examinations[ei.exam].name) }
                        td.mono { (ei.ids[*position]) }
                        td.mono.warn { @if let Some(h) = run_href(data, *ri) { a href=(h) { (value) } } @else { (value) } }
                        td.mono { @if let Some(v) = &decision.value { (v) } }
                        td { (decision.case.name()) }
                    }
                }
            }
        }
        @let diagnosed: Vec<(usize, &Vec<String>)> = data.diagnostics.iter()
            .filter(|(i, _)| plan.runs[**i].tool == t).map(|(i, d)| (*i, d)).collect();
        h2 id="diagnostics" { "Answer-parser diagnostics (" (diagnosed.len()) " runs)" }
        @if !diagnosed.is_empty() {
            p { "What the parser noticed in the tool's output: the lines it ignored and why, answers it chose between." }
            table.data {
                tr { th { "instance" } th { "examination" } th { "diagnostic" } }
                @for (i, messages) in &diagnosed {
                    @let run = &plan.runs[*i];
                    @for m in messages.iter() {
                        tr {
                            td { (plan.instance_of(run).name) }
                            td { (plan.exam_name(run)) }
                            td.mono { (m) }
                        }
                    }
                }
            }
        }
    };
    layout(data, &tool.name, body)
}

/// The tools with runs in examination `x`, in manifest order.
fn tools_in(data: &ReportData<'_>, x: usize) -> Vec<usize> {
    let mut used = vec![false; data.plan.contest.tools.len()];
    // The runs of examination `x`'s instances only (not a pass over every run per page).
    for (e, ei) in data.plan.exam_instances.iter().enumerate() {
        if ei.exam == x {
            for &r in &data.runs_of[e] {
                used[data.runs[r].tool] = true;
            }
        }
    }
    (0..used.len()).filter(|&t| used[t]).collect()
}

fn run_cell(data: &ReportData<'_>, run: Option<usize>) -> Markup {
    match run {
        None => html! { td class="s--" { "" } },
        Some(i) => {
            let r = &data.runs[i];
            let href = run_href(data, i);
            let (right, wrong) = r
                .score
                .as_ref()
                .map_or((0, 0), |s| (s.score.right, s.score.wrong));
            html! {
                td class={ "s-" (outcome_label(r.outcome)) } title=(outcome_title(r.outcome)) {
                    @if r.outcome == Some(Outcome::Answered) {
                        (right) " right" @if wrong > 0 { ", " span.x { (wrong) " wrong" } }
                    } @else { (outcome_label(r.outcome)) }
                    @if r.outcome.is_some() { br; small { (seconds(r.measurement.cpu_time_s)) " s" }
                        @if let Some(h) = href { " " a.run href=(h) title="the run: command, measurements, output" { "run" } } }
                }
            }
        }
    }
}

/// Each tool's run of examination instance `e` (its first, if it has several), in the
/// columns `column` gives the tools (`None`: a tool without a column).
fn row_runs(
    data: &ReportData<'_>,
    column: &[Option<usize>],
    columns: usize,
    e: usize,
) -> Vec<Option<usize>> {
    let mut row = vec![None; columns];
    for &i in &data.runs_of[e] {
        if let Some(c) = column[data.runs[i].tool] {
            row[c].get_or_insert(i);
        }
    }
    row
}

fn examination(data: &ReportData<'_>, x: usize) -> String {
    let plan = data.plan;
    let exam = &plan.contest.edition.examinations[x];
    let tools = tools_in(data, x);
    let mut column = vec![None; plan.contest.tools.len()];
    for (c, &t) in tools.iter().enumerate() {
        column[t] = Some(c);
    }
    let body = html! {
        p { "Category: " (plan.contest.edition.categories[exam.category].title) ". "
            a href=(slug("charts", x, &exam.name)) { "Execution-time charts" } "." }
        table.data {
            tr { th { "instance" } th { "values" } th { "trusted" } @for t in &tools { th { (tool_link(data, *t)) } } }
            @for (e, ei) in plan.exam_instances.iter().enumerate().filter(|(_, ei)| ei.exam == x) {
                @let instance = &plan.instances[ei.instance];
                tr {
                    td { a href=(format!("{}#i{}", slug("model", instance.model, &plan.models[instance.model].name), ei.instance)) { (instance.name) } }
                    td.n { (ei.ids.len()) }
                    td.n { (data.decisions[e].iter().filter(|d| d.value.is_some()).count()) }
                    @for run in row_runs(data, &column, tools.len(), e) { (run_cell(data, run)) }
                }
            }
            @let instances: Vec<usize> = plan.exam_instances.iter().enumerate().filter(|(_, ei)| ei.exam == x).map(|(e, _)| e).collect();
            tr.stats {
                td { "all " (instances.len()) " instances" }
                td.n { (instances.iter().map(|&e| plan.exam_instances[e].ids.len()).sum::<usize>()) }
                td.n { (instances.iter().map(|&e| data.decisions[e].iter().filter(|d| d.value.is_some()).count()).sum::<usize>()) }
                @for t in &tools {
                    @let runs: Vec<&RunView> = instances.iter().flat_map(|&e| data.runs_of[e].iter().map(|&i| &data.runs[i])).filter(|r| r.tool == *t).collect();
                    @let (right, wrong) = runs.iter().filter_map(|r| r.score.as_ref()).fold((0u64, 0u64), |(a, b), s| (a + s.score.right as u64, b + s.score.wrong as u64));
                    td {
                        (runs.iter().filter(|r| r.outcome == Some(Outcome::Answered)).count()) " answered, " (runs.iter().filter(|r| r.solved()).count()) " solved" br;
                        (right) " right" @if wrong > 0 { ", " span.x { (wrong) " wrong" } } br;
                        small { (seconds(runs.iter().map(|r| r.measurement.cpu_time_s).sum::<f64>())) " s CPU" }
                    }
                }
            }
        }
    };
    layout(data, &exam.name, body)
}

/// The site's navigation bar, its links relative to a page `up` folders below the site's root
/// (`up`: `""` for the root's pages, `"../"` for the run pages under `runs/`).
pub(super) fn nav(up: &str) -> maud::Markup {
    maud::html! {
        nav {
            @for (page, name) in [
                ("index.html", "Podiums"),
                ("tools.html", "Tools"),
                ("examinations.html", "Examinations"),
                ("models.html", "Models"),
                ("reliability.html", "Reliability"),
                ("disputes.html", "Disputes"),
            ] {
                a href={ (up) (page) } { (name) }
            }
        }
    }
}
