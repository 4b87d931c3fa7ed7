//! A model's page: per instance, per examination, the trusted values and each tool's answers as
//! value vectors, with each run's outcome, time and memory. The site's largest pages (32 MB of
//! the 2024 replay's 57 MB): the rows are written with no text made and dropped per cell (the
//! tool links made once per page, the vectors written straight into the page).

use std::fmt::Write as _;

use maud::{PreEscaped, Render, html};
use mccbuild_core::{Outcome, Value};

use super::{
    ReportData, RunView, Shared, layout, outcome_label, outcome_title, run_href, seconds, slug,
};

/// A value vector as the MCC writes it: booleans as `TFFT`, numbers separated by spaces; `?`
/// where nothing is known. The values that differ from the one at the same position of
/// `against` (both known) are highlighted.
struct Vector<'a> {
    values: &'a [Option<&'a Value>],
    against: &'a [Option<&'a Value>],
}

impl Render for Vector<'_> {
    fn render_to(&self, out: &mut String) {
        let all_bool = self
            .values
            .iter()
            .flatten()
            .all(|v| matches!(v, Value::Bool(_)));
        out.push_str(r#"<span class="mono">"#);
        for (i, v) in self.values.iter().enumerate() {
            if !all_bool && i > 0 {
                out.push(' ');
            }
            let marked = matches!((v, self.against.get(i)), (Some(g), Some(Some(t))) if g != t);
            if marked {
                out.push_str(r#"<span class="x">"#);
            }
            // A value's text (digits, `+inf`) needs no escaping.
            match v {
                Some(Value::Bool(b)) => out.push(if *b { 'T' } else { 'F' }),
                Some(v) => {
                    let _ = write!(out, "{v}");
                }
                None => out.push('?'),
            }
            if marked {
                out.push_str("</span>");
            }
        }
        out.push_str("</span>");
    }
}

/// A run's answer at each position of its examination instance's values (as
/// [`RunView::answer`] finds them: the first answer given for a position), into `given`.
fn answers_by_position<'r>(run: &'r RunView, positions: usize, given: &mut Vec<Option<&'r Value>>) {
    given.clear();
    given.resize(positions, None);
    for (p, v) in run.answers.iter().rev() {
        if let Some(slot) = given.get_mut(*p as usize) {
            *slot = Some(v);
        }
    }
}

pub(super) fn page(data: &ReportData<'_>, shared: &Shared, m: usize) -> String {
    let plan = data.plan;
    let edition = &plan.contest.edition;
    let model = &plan.models[m];
    let tool_links = &shared.tool_links;
    let mut given = Vec::new();
    let body = html! {
        p { (edition.model_kinds.get(model.kind).map_or("", |k| k.name.as_str())) " model, " (model.instances.len()) " instances. "
            "Answers as vectors in the order of the value ids (T/F, or numbers); " span.x { "highlighted" } ": differs from the trusted value; ?: unknown or not answered." }
        @for &i in &model.instances {
            h2 id=(format!("i{i}")) { (plan.instances[i].name) }
            table {
                tr { th { "examination" } th { "who" } th { "values" } th { "status" } th { "CPU (s)" } th { "memory (MB)" } }
                @for &e in &shared.exams_of_instance[i] {
                    @let ei = &plan.exam_instances[e];
                    @let trusted: Vec<Option<&Value>> = data.decisions[e].iter().map(|d| d.value.as_ref()).collect();
                    @let runs = &data.runs_of[e];
                    tr {
                        td rowspan=(runs.len() + 1) { a href=(slug("examination", ei.exam, &edition.examinations[ei.exam].name)) { (edition.examinations[ei.exam].name) } }
                        td { b { "trusted" } } td { (Vector { values: &trusted, against: &[] }) } td {} td {} td {}
                    }
                    @for &i in runs {
                        @let r = &data.runs[i];
                        tr {
                            td { (PreEscaped(&tool_links[r.tool])) }
                            td { @if r.outcome == Some(Outcome::Answered) {
                                ({ answers_by_position(r, ei.ids.len(), &mut given); Vector { values: &given, against: &trusted } })
                            } }
                            td class={ "s-" (outcome_label(r.outcome)) } {
                                @if let Some(h) = run_href(data, i) { a href=(h) title="the run: command, measurements, output" { (outcome_title(r.outcome)) } }
                                @else { (outcome_title(r.outcome)) }
                            }
                            td.n { @if r.outcome.is_some() { (seconds(r.measurement.cpu_time_s)) } }
                            td.n { @if r.outcome.is_some() { (format_args!("{:.0}", r.measurement.peak_memory_mb())) } }
                        }
                    }
                }
            }
        }
    };
    layout(data, &model.name, body)
}
