//! Results read from the scoring database: the JSON of `mccbuild scores` and the podium tables.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::db::{category_scores, podiums, tool_confidence, Handles, ScoringDb};
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
    pub score: f64,
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
    pub confidence: BTreeMap<String, f64>,
    pub scores: BTreeMap<String, BTreeMap<String, f64>>,
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
    let confidence = if edition.info.trust == mccbuild_rules::edition::TrustKind::GroundTruth {
        BTreeMap::new()
    } else {
        tools
            .iter()
            .zip(tool_data.iter())
            .map(|(t, d)| (t.name.clone(), round(tool_confidence(db, *d))))
            .collect()
    };
    let totals = category_scores(db, contest);
    let mut scores = BTreeMap::new();
    let mut podium_lists = BTreeMap::new();
    let mut awards = BTreeMap::new();
    let mut standings = BTreeMap::new();
    for podium in podiums(db, contest) {
        let category = edition.categories[podium.category].name.clone();
        scores.insert(
            category.clone(),
            tools
                .iter()
                .enumerate()
                .map(|(i, t)| (t.name.clone(), round(totals.scores[podium.category][i])))
                .collect(),
        );
        podium_lists.insert(
            category.clone(),
            podium
                .standings
                .iter()
                .filter(|s| s.rank.is_some())
                .map(|s| tools[s.tool as usize].name.clone())
                .collect(),
        );
        awards.insert(
            category.clone(),
            AwardRow {
                fastest: podium
                    .awards
                    .fastest
                    .map(|t| tools[t as usize].name.clone()),
                least_memory: podium
                    .awards
                    .least_memory
                    .map(|t| tools[t as usize].name.clone()),
            },
        );
        standings.insert(
            category,
            podium
                .standings
                .iter()
                .map(|s| StandingRow {
                    tool: tools[s.tool as usize].name.clone(),
                    score: round(s.score),
                    rank: s.rank,
                    medal: s.medal.map(medal_name),
                    competing: s.competing,
                    best_of_family: s.best_of_family,
                })
                .collect(),
        );
    }
    let mut values = Vec::new();
    if with_values {
        for (e, ei) in plan.exam_instances.iter().enumerate() {
            let groups = handles.value_groups(db, e);
            let decisions = handles.decisions(db, e);
            for (i, id) in ei.ids.iter().enumerate() {
                values.push(ValueRow {
                    instance: plan.instances[ei.instance].name.clone(),
                    examination: edition.examinations[ei.exam].name.clone(),
                    id: id.to_string(),
                    trusted: decisions[i].value.as_ref().map(|v| v.to_string()),
                    case: serde_json::to_value(decisions[i].case)
                        .ok()
                        .and_then(|v| v.as_str().map(String::from))
                        .unwrap_or_default(),
                    answers: groups
                        .group(i)
                        .iter()
                        .map(|(t, v)| (tools[*t as usize].name.clone(), v.to_string()))
                        .collect(),
                });
            }
        }
    }
    ScoresReport {
        contest: plan.contest.name.clone(),
        edition: edition.info.name.clone(),
        confidence,
        scores,
        podiums: podium_lists,
        awards,
        standings,
        values,
    }
}

/// Scores are sums of fractions; keep them readable and stable in JSON.
fn round(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}
