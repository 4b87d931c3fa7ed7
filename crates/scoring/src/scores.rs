//! Results read from the scoring database: the JSON of `mccbuild scores` and the podium tables.

use std::collections::BTreeMap;

use serde::Serialize;

use mccbuild_rules::edition::TrustKind;
use mccbuild_rules::exact::{decimal, fraction, Exact};

use crate::database::{Handles, ScoringDb};
use crate::db::{category_scores, podiums, tool_confidence, Podium};
use mccbuild_plan::Plan;

#[derive(Clone, Debug, Serialize, serde::Deserialize, PartialEq)]
pub struct ValueRow {
    pub instance: String,
    pub examination: String,
    pub id: String,
    pub trusted: Option<String>,
    /// Which situation of rule E-3.1 decided it.
    pub case: String,
    pub answers: BTreeMap<String, String>,
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
    };
    let totals = category_scores(db, contest);
    for podium in podiums(db, contest) {
        add_podium(&mut report, plan, &totals.scores[podium.category], podium);
    }
    if with_values {
        report.values = value_rows(plan, db, handles);
    }
    report
}

/// A category's scores, podium, awards and standings, by tool name.
fn add_podium(report: &mut ScoresReport, plan: &Plan, totals: &[Exact], podium: &Podium) {
    let tools = &plan.contest.tools;
    let name = |t: u32| tools[t as usize].name.clone();
    let category = plan.contest.edition.categories[podium.category]
        .name
        .clone();
    report.scores.insert(
        category.clone(),
        tools
            .iter()
            .enumerate()
            .map(|(i, t)| (t.name.clone(), round(&totals[i])))
            .collect(),
    );
    report.scores_exact.insert(
        category.clone(),
        tools
            .iter()
            .enumerate()
            .map(|(i, t)| (t.name.clone(), fraction(&totals[i])))
            .collect(),
    );
    report.podiums.insert(
        category.clone(),
        podium
            .standings
            .iter()
            .filter(|s| s.rank.is_some())
            .map(|s| name(s.tool))
            .collect(),
    );
    report.awards.insert(
        category.clone(),
        AwardRow {
            fastest: podium.awards.fastest.map(name),
            least_memory: podium.awards.least_memory.map(name),
        },
    );
    report.standings.insert(
        category,
        podium
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
    );
}

/// Every value of every examination instance: its trusted value, the case of E-3.1 that decided
/// it, every tool's answer.
fn value_rows(plan: &Plan, db: &ScoringDb, handles: &Handles) -> Vec<ValueRow> {
    let edition = &plan.contest.edition;
    let tools = &plan.contest.tools;
    let mut values = Vec::new();
    for (e, ei) in plan.exam_instances.iter().enumerate() {
        let answers = handles.value_answers(db, e);
        let decisions = handles.decisions(db, e);
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
            });
        }
    }
    values
}

/// Scores are fractions; their decimal form (6 places, rounded once from the exact value) keeps
/// the JSON readable; `*_exact` carries the fraction.
fn round(x: &Exact) -> f64 {
    decimal(x, 6).parse().unwrap_or(f64::NAN)
}
