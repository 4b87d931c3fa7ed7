//! Results read from the scoring database: the JSON of `mccbuild scores` and the podium tables.

use std::collections::BTreeMap;

use serde::Serialize;

use mccbuild_rules::edition::TrustKind;
use mccbuild_rules::exact::{decimal, fraction, Exact};

use crate::database::{Handles, ScoringDb};
use crate::db::{
    category_podium, category_totals, tool_confidence, undecided_values, vote_decisions,
    ContestData,
};
use mccbuild_plan::Plan;
use mccbuild_rules::reference::{judge, vote_and_reference_disagree, Basis, JudgementCounts};
use mccbuild_rules::trusted::TrustCase;

#[derive(Clone, Debug, Serialize, serde::Deserialize, PartialEq)]
pub struct ValueRow {
    pub instance: String,
    pub examination: String,
    pub id: String,
    pub trusted: Option<String>,
    /// Which situation of rule E-3.1 decided it (`organisers`: the corrections file, E-6.3).
    pub case: String,
    pub answers: BTreeMap<String, String>,
    /// A value the organisers decided: what the vote (or the reference) alone gives.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undecided: Option<Undecided>,
}

/// The trusted value a value would have without the organisers' decision, and its case.
#[derive(Clone, Debug, Serialize, serde::Deserialize, PartialEq)]
pub struct Undecided {
    pub trusted: Option<String>,
    pub case: String,
}

#[derive(Clone, Debug, Serialize, serde::Deserialize, PartialEq)]
pub struct StandingRow {
    pub tool: String,
    /// The score rounded to 6 decimals (for reading).
    pub score: f64,
    /// The exact score, a fraction (`n/d` or `n`): what to compare.
    #[serde(default)]
    pub score_exact: String,
    pub rank: Option<u32>,
    pub medal: Option<String>,
    pub competing: bool,
    pub best_of_family: bool,
}

#[derive(Clone, Debug, Serialize, serde::Deserialize, PartialEq)]
pub struct AwardRow {
    pub fastest: Option<String>,
    pub least_memory: Option<String>,
}

/// The JSON of `mccbuild scores`.
#[derive(Clone, Debug, Serialize, serde::Deserialize, PartialEq)]
pub struct ScoresReport {
    pub contest: String,
    pub edition: String,
    /// Each tool's Confidence rounded to 6 decimals.
    pub confidence: BTreeMap<String, f64>,
    /// Per category, each tool's score rounded to 6 decimals.
    pub scores: BTreeMap<String, BTreeMap<String, f64>>,
    /// The same Confidences, exactly (fractions `n/d`).
    #[serde(default)]
    pub confidence_exact: BTreeMap<String, String>,
    /// The same scores, exactly (fractions `n/d`): what to compare.
    #[serde(default)]
    pub scores_exact: BTreeMap<String, BTreeMap<String, String>>,
    /// Per category, the ranked tools in order (competing tools, best variant of each family).
    pub podiums: BTreeMap<String, Vec<String>>,
    pub awards: BTreeMap<String, AwardRow>,
    /// Per category, every tool with its score, rank and medal (reference tools and other
    /// variants included, unranked).
    pub standings: BTreeMap<String, Vec<StandingRow>>,
    #[serde(default)]
    pub values: Vec<ValueRow>,
    /// What the trusted values are: `vote` (E-3.1, the default), `ground-truth` (the truth
    /// given with each task) or `reference` (the contest's reference answers).
    #[serde(default)]
    pub basis: String,
    /// With `[reference]`: each tool's answers judged against the reference, and where the vote
    /// and the reference disagree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<ReferenceReport>,
}

/// The tools against the reference answers, and the vote beside them.
#[derive(Clone, Debug, Serialize, serde::Deserialize, PartialEq)]
pub struct ReferenceReport {
    /// The reference: its form and path.
    pub answers: String,
    /// Values of the contest, and how many of them the reference knows.
    pub values: u64,
    pub known: u64,
    /// Per tool: its answers right, wrong, unknown (the reference does not know the value) and
    /// the values it did not answer.
    pub tools: BTreeMap<String, JudgementCounts>,
    /// Values both the vote and the reference know, with different values.
    pub disagreements: Vec<Disagreement>,
    /// Values the vote knows and the reference does not, and the other way round.
    pub vote_only: u64,
    pub reference_only: u64,
}

#[derive(Clone, Debug, Serialize, serde::Deserialize, PartialEq)]
pub struct Disagreement {
    pub instance: String,
    pub examination: String,
    pub id: String,
    pub vote: String,
    /// The situation of E-3.1 that decided the vote.
    pub case: String,
    pub reference: String,
}

fn medal_name(m: u8) -> String {
    match m {
        1 => "gold",
        2 => "silver",
        _ => "bronze",
    }
    .to_string()
}

/// Reads everything `scores` prints from the database.
pub fn scores_report(
    plan: &Plan,
    db: &ScoringDb,
    handles: &Handles,
    with_values: bool,
) -> ScoresReport {
    // Whatever is out of date is recomputed on all cores first.
    db.refresh(handles);
    report_of(plan, db, handles, with_values)
}

/// The scores report (without values) when the podiums were just computed: nothing to refresh.
pub fn scores_report_of_current(plan: &Plan, db: &ScoringDb, handles: &Handles) -> ScoresReport {
    report_of(plan, db, handles, false)
}

fn report_of(plan: &Plan, db: &ScoringDb, handles: &Handles, with_values: bool) -> ScoresReport {
    let edition = &plan.contest.edition;
    let tools = &plan.contest.tools;
    let contest = handles.contest;
    let tool_data = contest.tool_data(db);
    // Confidence means nothing where the truth is given (ground-truth contests): not shown.
    let exact_confidence: BTreeMap<String, &Exact> = if edition.info.trust == TrustKind::GroundTruth
    {
        BTreeMap::new()
    } else {
        tools
            .iter()
            .zip(tool_data.iter())
            .map(|(t, d)| (t.name.clone(), tool_confidence(db, *d)))
            .collect()
    };
    let confidence = exact_confidence
        .iter()
        .map(|(t, c)| (t.clone(), round(c)))
        .collect();
    let confidence_exact = exact_confidence
        .iter()
        .map(|(t, c)| (t.clone(), fraction(c)))
        .collect();
    let mut report = ScoresReport {
        contest: plan.contest.name.clone(),
        edition: edition.info.name.clone(),
        confidence,
        scores: BTreeMap::new(),
        confidence_exact,
        scores_exact: BTreeMap::new(),
        podiums: BTreeMap::new(),
        awards: BTreeMap::new(),
        standings: BTreeMap::new(),
        values: Vec::new(),
        basis: basis_name(plan, contest.basis(db)).to_string(),
        reference: reference_report(plan, db, handles),
    };
    for c in 0..plan.contest.edition.categories.len() {
        let rows = category_rows(db, contest, c as u32);
        let category = &rows.category;
        report.scores.insert(category.clone(), rows.scores.clone());
        report
            .scores_exact
            .insert(category.clone(), rows.scores_exact.clone());
        report.podiums.insert(category.clone(), rows.podium.clone());
        report.awards.insert(category.clone(), rows.awards.clone());
        report
            .standings
            .insert(category.clone(), rows.standings.clone());
    }
    if with_values {
        report.values = value_rows(plan, db, handles);
    }
    report
}

/// One category's part of the scores report: its scores (rounded and exact), podium, awards and
/// standings, by tool name.
#[derive(Clone, Debug, PartialEq)]
pub struct CategoryRows {
    pub category: String,
    pub scores: BTreeMap<String, f64>,
    pub scores_exact: BTreeMap<String, String>,
    pub podium: Vec<String>,
    pub awards: AwardRow,
    pub standings: Vec<StandingRow>,
}

/// A category's rows of the scores report, written from its totals (E-4.6) and podium (E-4.5):
/// a query of its own, so that a report after a record writes again (exact fractions turned into
/// text) the rows of the category that record changed only (`mccbuild watch`).
#[salsa::tracked(returns(ref))]
pub fn category_rows(
    db: &dyn salsa::Database,
    contest: ContestData,
    category: u32,
) -> CategoryRows {
    let tools = contest.tools(db);
    let name = |t: u32| tools[t as usize].name.clone();
    let totals = &category_totals(db, contest, category).scores;
    let podium = category_podium(db, contest, category);
    CategoryRows {
        category: contest.edition(db).categories[category as usize]
            .name
            .clone(),
        scores: tools
            .iter()
            .zip(totals)
            .map(|(t, total)| (t.name.clone(), round(total)))
            .collect(),
        scores_exact: tools
            .iter()
            .zip(totals)
            .map(|(t, total)| (t.name.clone(), fraction(total)))
            .collect(),
        podium: podium
            .standings
            .iter()
            .filter(|s| s.rank.is_some())
            .map(|s| name(s.tool))
            .collect(),
        awards: AwardRow {
            fastest: podium.awards.fastest.map(name),
            least_memory: podium.awards.least_memory.map(name),
        },
        standings: podium
            .standings
            .iter()
            .map(|s| StandingRow {
                tool: name(s.tool),
                score: round(&s.score),
                score_exact: fraction(&s.score),
                rank: s.rank,
                medal: s.medal.map(medal_name),
                competing: s.competing,
                best_of_family: s.best_of_family,
            })
            .collect(),
    }
}

/// Every value of every examination instance: its trusted value, the case of E-3.1 that decided
/// it, every tool's answer.
fn value_rows(plan: &Plan, db: &ScoringDb, handles: &Handles) -> Vec<ValueRow> {
    (0..plan.exam_instances.len())
        .flat_map(|e| exam_instance_rows(plan, db, handles, e))
        .collect()
}

/// The value rows of examination instance `e` (of [`value_rows`]).
fn exam_instance_rows(plan: &Plan, db: &ScoringDb, handles: &Handles, e: usize) -> Vec<ValueRow> {
    let edition = &plan.contest.edition;
    let tools = &plan.contest.tools;
    let ei = &plan.exam_instances[e];
    let answers = handles.value_answers(db, e);
    let decisions = handles.decisions(db, e);
    let undecided = ei.corrections.as_ref().map(|_| {
        let (m, j) = handles.exam_instances[e];
        undecided_values(db, handles.examinations[m]).swap_remove(j)
    });
    let mut values = Vec::with_capacity(ei.ids.len());
    for (i, id) in ei.ids.iter().enumerate() {
        values.push(ValueRow {
            instance: plan.instances[ei.instance].name.clone(),
            examination: edition.examinations[ei.exam].name.clone(),
            id: id.to_string(),
            trusted: decisions[i].value.as_ref().map(|v| v.to_string()),
            case: decisions[i].case.name().to_string(),
            answers: answers
                .value(i)
                .iter()
                .map(|(t, v)| (tools[*t as usize].name.clone(), v.to_string()))
                .collect(),
            undecided: undecided
                .as_ref()
                .filter(|_| decisions[i].case == TrustCase::Organisers)
                .map(|u| Undecided {
                    trusted: u[i].value.as_ref().map(|v| v.to_string()),
                    case: u[i].case.name().to_string(),
                }),
        });
    }
    values
}

/// The JSON of `mccbuild scores --json` ([`ScoresJson::write_json`]): the same bytes as the
/// [`ScoresReport`] with its `values` (`scores_report(.., true)`), without building the ~200,000
/// [`ValueRow`]s of an edition (hundreds of megabytes of strings) first. Each value's row is
/// written from the database's memos.
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
    /// Writes the JSON: the same bytes as `serde_json::to_writer` of the [`ScoresReport`] with
    /// its `values` (tests/import.rs `the_streamed_scores_json_is_the_report_serialized_whole`
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
        out.write_all(b"}")
    }
}

/// Examination instances whose rows are rendered at once (on all cores) before being written.
const ROWS_WINDOW: usize = 256;

/// Each tool's rank by name: the order of a [`ValueRow`]'s `answers` (a map by tool name).
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
/// serde_json writes for the [`ValueRow`]s of [`exam_instance_rows`], from borrowed text.
fn exam_instance_json(
    plan: &Plan,
    db: &ScoringDb,
    handles: &Handles,
    by_name: &[u32],
    e: usize,
    out: &mut Vec<u8>,
) -> std::io::Result<()> {
    use mccbuild_core::Value;
    /// A value written as its text (`to_string()` in a [`ValueRow`]).
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

/// What the trusted values are, as reports name it.
pub fn basis_name(plan: &Plan, basis: Basis) -> &'static str {
    match basis {
        Basis::Reference => "reference",
        Basis::Vote if plan.contest.edition.info.trust == TrustKind::GroundTruth => "ground-truth",
        Basis::Vote => "vote",
    }
}

/// Every tool's answers judged against the reference (each value a tool's run answered or
/// could have), and the vote against the reference.
pub fn reference_report(plan: &Plan, db: &ScoringDb, handles: &Handles) -> Option<ReferenceReport> {
    let reference = plan.reference.as_ref()?;
    let edition = &plan.contest.edition;
    let tools = &plan.contest.tools;
    let mut report = ReferenceReport {
        answers: reference.describe(),
        values: 0,
        known: 0,
        tools: BTreeMap::new(),
        disagreements: Vec::new(),
        vote_only: 0,
        reference_only: 0,
    };
    let mut counts = vec![JudgementCounts::default(); tools.len()];
    let mut taking_part = vec![false; tools.len()];
    // The plan's examination instance of each (model examination, examination instance there).
    let plan_index: std::collections::HashMap<(usize, usize), usize> = handles
        .exam_instances
        .iter()
        .enumerate()
        .map(|(e, &at)| (at, e))
        .collect();
    for (i, m) in handles.examinations.iter().enumerate() {
        let votes = vote_decisions(db, *m);
        for (j, ei) in m.exam_instances(db).iter().enumerate() {
            let Some(&e) = plan_index.get(&(i, j)) else {
                continue;
            };
            let pei = &plan.exam_instances[e];
            let given = &m.reference(db)[j];
            let runs = &m.answers(db)[j];
            let competes = &m.competes(db)[j];
            for (v, id) in ei.ids.iter().enumerate() {
                let r = given
                    .as_ref()
                    .and_then(|g| g.get(v))
                    .and_then(Option::as_ref);
                report.values += 1;
                report.known += u64::from(r.is_some());
                for (position, &tool) in ei.tools.iter().enumerate() {
                    if !competes[position] {
                        continue;
                    }
                    taking_part[tool as usize] = true;
                    let answer = runs[position]
                        .iter()
                        .find(|(k, _)| *k as usize == v)
                        .map(|(_, a)| a);
                    counts[tool as usize].add(judge(answer, r));
                }
                let vote = &votes[j][v];
                match (&vote.value, r) {
                    (Some(a), Some(b)) if vote_and_reference_disagree(Some(a), Some(b)) => {
                        report.disagreements.push(Disagreement {
                            instance: plan.instances[pei.instance].name.clone(),
                            examination: edition.examinations[pei.exam].name.clone(),
                            id: id.to_string(),
                            vote: a.to_string(),
                            case: vote.case.name().to_string(),
                            reference: b.to_string(),
                        })
                    }
                    (Some(_), None) => report.vote_only += 1,
                    (None, Some(_)) => report.reference_only += 1,
                    _ => {}
                }
            }
        }
    }
    report.disagreements.sort_by(|a, b| {
        (&a.instance, &a.examination, &a.id).cmp(&(&b.instance, &b.examination, &b.id))
    });
    report.tools = tools
        .iter()
        .zip(counts)
        .zip(taking_part)
        .filter(|(_, part)| *part)
        .map(|((t, c), _)| (t.name.clone(), c))
        .collect();
    Some(report)
}

/// Scores are fractions; their decimal form (6 places, rounded once from the exact value) keeps
/// the JSON readable; `*_exact` carries the fraction.
fn round(x: &Exact) -> f64 {
    decimal(x, 6).parse().unwrap_or(f64::NAN)
}
