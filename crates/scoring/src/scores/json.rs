//! The JSON of `mccbuild scores --json`, streamed: the same bytes as the [`ScoresReport`] with
//! its values serialized whole, without building every value's row first.

use std::collections::BTreeMap;

use serde::Serialize;

use mccbuild_plan::Plan;
use mccbuild_rules::trusted::TrustCase;

use super::{AwardRow, Partial, ScoresReport, StandingRow, scores_report};
use crate::database::{Handles, ScoringDb};
use crate::db::undecided_values;

/// The JSON of `mccbuild scores --json` ([`ScoresJson::write_json`]): the same bytes as the
/// [`ScoresReport`] with its `values` (`scores_report(.., true)`), without building the ~200,000
/// [`ValueRow`](super::ValueRow)s of an edition (hundreds of megabytes of strings) first. Each
/// value's row is written from the database's memos.
pub struct ScoresJson<'a> {
    report: ScoresReport,
    plan: &'a Plan,
    db: &'a ScoringDb,
    handles: &'a Handles,
}

/// The scores report with its values, to write (see [`ScoresJson`]).
pub fn scores_json<'a>(plan: &'a Plan, db: &'a ScoringDb, handles: &'a Handles) -> ScoresJson<'a> {
    ScoresJson {
        report: scores_report(plan, db, handles, false),
        plan,
        db,
        handles,
    }
}

impl ScoresJson<'_> {
    /// Says that these results are partial (written last, as the report serializes it).
    pub fn with_partial(mut self, partial: Option<Partial>) -> Self {
        self.report.partial = partial;
        self
    }

    /// Writes the JSON: the same bytes as `serde_json::to_writer` of the [`ScoresReport`] with
    /// its `values` (tests/it/import.rs `the_streamed_scores_json_is_the_report_serialized_whole`
    /// compares the two). The value rows are rendered on every core, a window of examination
    /// instances at a time (a few megabytes held), each written from the database's memos as
    /// borrowed text, then written in order.
    pub fn write_json<W: std::io::Write>(&self, out: &mut W) -> std::io::Result<()> {
        use rayon::prelude::*;
        let ScoresReport {
            contest,
            edition,
            confidence,
            scores,
            confidence_exact,
            scores_exact,
            podiums,
            awards,
            standings,
            values: _,
            basis,
            reference,
            partial,
        } = &self.report;
        // The fields before `values`, in `ScoresReport`'s order, as serde_json writes them.
        #[derive(Serialize)]
        struct Head<'r> {
            contest: &'r String,
            edition: &'r String,
            confidence: &'r BTreeMap<String, f64>,
            scores: &'r BTreeMap<String, BTreeMap<String, f64>>,
            confidence_exact: &'r BTreeMap<String, String>,
            scores_exact: &'r BTreeMap<String, BTreeMap<String, String>>,
            podiums: &'r BTreeMap<String, Vec<String>>,
            awards: &'r BTreeMap<String, AwardRow>,
            standings: &'r BTreeMap<String, Vec<StandingRow>>,
        }
        let head = serde_json::to_vec(&Head {
            contest,
            edition,
            confidence,
            scores,
            confidence_exact,
            scores_exact,
            podiums,
            awards,
            standings,
        })?;
        out.write_all(&head[..head.len() - 1])?; // without its closing brace
        out.write_all(b",\"values\":[")?;
        let (plan, db, handles) = (self.plan, self.db, self.handles);
        let by_name = tools_by_name(plan);
        let mut first = true;
        for start in (0..plan.exam_instances.len()).step_by(ROWS_WINDOW) {
            let end = (start + ROWS_WINDOW).min(plan.exam_instances.len());
            let rendered: Vec<Vec<u8>> = (start..end)
                .into_par_iter()
                .map_with(db.clone(), |db, e| {
                    let mut text = Vec::new();
                    exam_instance_json(plan, db, handles, &by_name, e, &mut text).map(|()| text)
                })
                .collect::<std::io::Result<_>>()?;
            for text in rendered.iter().filter(|t| !t.is_empty()) {
                if !first {
                    out.write_all(b",")?;
                }
                first = false;
                out.write_all(text)?;
            }
        }
        out.write_all(b"],\"basis\":")?;
        serde_json::to_writer(&mut *out, basis)?;
        if let Some(r) = reference {
            out.write_all(b",\"reference\":")?;
            serde_json::to_writer(&mut *out, r)?;
        }
        if let Some(p) = partial {
            out.write_all(b",\"partial\":")?;
            serde_json::to_writer(&mut *out, p)?;
        }
        out.write_all(b"}")
    }
}

/// Examination instances whose rows are rendered at once (on all cores) before being written.
const ROWS_WINDOW: usize = 256;

/// Each tool's rank by name: the order of a [`ValueRow`](super::ValueRow)'s `answers` (a map by
/// tool name).
fn tools_by_name(plan: &Plan) -> Vec<u32> {
    let tools = &plan.contest.tools;
    let mut order: Vec<usize> = (0..tools.len()).collect();
    order.sort_by(|a, b| tools[*a].name.cmp(&tools[*b].name));
    let mut rank = vec![0; tools.len()];
    for (r, t) in order.into_iter().enumerate() {
        rank[t] = r as u32;
    }
    rank
}

/// The JSON of the value rows of examination instance `e`, separated by commas: the bytes
/// serde_json writes for the [`ValueRow`](super::ValueRow)s of
/// [`exam_instance_rows`](super::exam_instance_rows), from borrowed text.
fn exam_instance_json(
    plan: &Plan,
    db: &ScoringDb,
    handles: &Handles,
    by_name: &[u32],
    e: usize,
    out: &mut Vec<u8>,
) -> std::io::Result<()> {
    use mccbuild_core::Value;
    /// A value written as its text (`to_string()` in a [`ValueRow`](super::ValueRow)).
    struct Shown<'v>(&'v Value);
    impl Serialize for Shown<'_> {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.collect_str(self.0)
        }
    }
    /// A value's answers by tool name (a map, in the order of the names).
    struct Answers<'v>(Vec<(&'v str, &'v Value)>);
    impl Serialize for Answers<'_> {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            use serde::ser::SerializeMap;
            let mut map = s.serialize_map(Some(self.0.len()))?;
            for (tool, value) in &self.0 {
                map.serialize_entry(tool, &Shown(value))?;
            }
            map.end()
        }
    }
    #[derive(Serialize)]
    struct UndecidedRef<'v> {
        trusted: Option<Shown<'v>>,
        case: &'static str,
    }
    // `ValueRow`'s fields, in its order.
    #[derive(Serialize)]
    struct Row<'v> {
        instance: &'v str,
        examination: &'v str,
        id: &'v str,
        trusted: Option<Shown<'v>>,
        case: &'static str,
        answers: Answers<'v>,
        #[serde(skip_serializing_if = "Option::is_none")]
        undecided: Option<UndecidedRef<'v>>,
    }
    let tools = &plan.contest.tools;
    let ei = &plan.exam_instances[e];
    let answers = handles.value_answers(db, e);
    let decisions = handles.decisions(db, e);
    let undecided = ei.corrections.as_ref().map(|_| {
        let (m, j) = handles.exam_instances[e];
        undecided_values(db, handles.examinations[m]).swap_remove(j)
    });
    let instance = plan.instances[ei.instance].name.as_str();
    let examination = plan.contest.edition.examinations[ei.exam].name.as_str();
    for (i, id) in ei.ids.iter().enumerate() {
        // As a map collected from the answers: in the order of the names, the last answer of
        // a tool kept.
        let mut by_tool: Vec<(u32, &str, &Value)> = answers
            .value(i)
            .iter()
            .rev()
            .map(|(t, v)| (by_name[*t as usize], tools[*t as usize].name.as_str(), v))
            .collect();
        by_tool.sort_by_key(|(rank, _, _)| *rank);
        by_tool.dedup_by_key(|(rank, _, _)| *rank);
        if i > 0 {
            out.push(b',');
        }
        serde_json::to_writer(
            &mut *out,
            &Row {
                instance,
                examination,
                id,
                trusted: decisions[i].value.as_ref().map(Shown),
                case: decisions[i].case.name(),
                answers: Answers(by_tool.into_iter().map(|(_, t, v)| (t, v)).collect()),
                undecided: undecided
                    .as_ref()
                    .filter(|_| decisions[i].case == TrustCase::Organisers)
                    .map(|u| UndecidedRef {
                        trusted: u[i].value.as_ref().map(Shown),
                        case: u[i].case.name(),
                    }),
            },
        )?;
    }
    Ok(())
}
