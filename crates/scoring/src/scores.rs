//! Results read from the scoring database: the JSON of `mccbuild scores` and the podium tables.
//! The JSON with every value's row is streamed (`json`); the tools against the reference
//! answers are in `reference`.

mod json;
mod reference;

use std::collections::BTreeMap;

use serde::Serialize;

use mccbuild_rules::edition::TrustKind;
use mccbuild_rules::exact::{Exact, decimal, fraction};

use crate::database::{Handles, ScoringDb};
use crate::db::{ContestData, category_podium, category_totals, tool_confidence, undecided_values};
use mccbuild_plan::Plan;
use mccbuild_rules::trusted::TrustCase;

pub use self::json::{ScoresJson, scores_json};
pub use self::reference::{Disagreement, ReferenceReport, basis_name, reference_report};

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
    /// The holder of the award (the first in podium order when it is shared).
    pub fastest: Option<String>,
    pub least_memory: Option<String>,
    /// Every holder, in podium order, when the award is shared (`[awards] ties = "shared"` and
    /// several tools tied for it); empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fastest_shared: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub least_memory_shared: Vec<String>,
}

impl AwardRow {
    /// The holders of the fastest-tool award, as shown: "a" or "a, b" when shared.
    pub fn fastest_shown(&self) -> Option<String> {
        shown_holders(&self.fastest, &self.fastest_shared)
    }

    /// The holders of the least-memory award, as shown.
    pub fn least_memory_shown(&self) -> Option<String> {
        shown_holders(&self.least_memory, &self.least_memory_shared)
    }
}

fn shown_holders(holder: &Option<String>, shared: &[String]) -> Option<String> {
    if shared.len() > 1 {
        Some(shared.join(", "))
    } else {
        holder.clone()
    }
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
    /// Present when planned runs are missing from the store: these results are partial.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partial: Option<Partial>,
}

/// Results computed while planned runs have no record in the store (not made yet, given up, or
/// their records damaged): every output that shows scores says so, with the count and what
/// completes them (docs/cli.md, "Partial results").
#[derive(Clone, Debug, Serialize, serde::Deserialize, PartialEq, Eq)]
pub struct Partial {
    /// Planned runs without a record in the store.
    pub missing_runs: usize,
    /// Planned runs in all.
    pub planned_runs: usize,
    /// What makes them.
    pub help: String,
}

impl Partial {
    /// What to say when `missing` of `planned` runs have no record (`None`: nothing missing).
    pub fn of(missing: usize, planned: usize) -> Option<Partial> {
        (missing > 0).then(|| Partial {
            missing_runs: missing,
            planned_runs: planned,
            help: "`mccbuild run` makes them (`mccbuild import FILE` the rows of a results file; `mccbuild plan` counts them by tool)".to_string(),
        })
    }

    /// The sentence printed with the results (text, warnings, the report's index page).
    pub fn notice(&self) -> String {
        let (are, them) = match self.missing_runs {
            1 => ("is", "it"),
            _ => ("are", "them"),
        };
        let which = match self.missing_runs == self.planned_runs {
            true if self.planned_runs == 1 => "the one planned run is not in the store yet".into(),
            true => format!(
                "none of the {} planned runs is in the store yet",
                self.planned_runs
            ),
            false => format!(
                "{} of the {} planned runs {are} not in the store and these scores leave {them} out",
                self.missing_runs, self.planned_runs
            ),
        };
        format!("partial results: {which}; {}", self.help)
    }
}

#[cfg(test)]
mod partial_tests {
    use super::Partial;

    /// What partial results say: the count in words, and what completes them.
    #[test]
    fn partial_results_are_said_with_the_count_and_what_completes_them() {
        assert_eq!(Partial::of(0, 6), None);
        let said = |m, p| Partial::of(m, p).unwrap().notice();
        assert!(said(1, 6).starts_with(
            "partial results: 1 of the 6 planned runs is not in the store and these scores leave it out; `mccbuild run` makes them"
        ));
        assert!(said(2, 6).contains(
            "2 of the 6 planned runs are not in the store and these scores leave them out"
        ));
        assert!(said(3, 3).contains("none of the 3 planned runs is in the store yet"));
        assert!(said(1, 1).contains("the one planned run is not in the store yet"));
    }
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
        partial: None,
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
        awards: {
            let shared = |holders: &[u32]| -> Vec<String> {
                if holders.len() > 1 {
                    holders.iter().map(|t| name(*t)).collect()
                } else {
                    Vec::new()
                }
            };
            AwardRow {
                fastest: podium.awards.fastest.first().map(|t| name(*t)),
                least_memory: podium.awards.least_memory.first().map(|t| name(*t)),
                fastest_shared: shared(&podium.awards.fastest),
                least_memory_shared: shared(&podium.awards.least_memory),
            }
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
pub fn exam_instance_rows(
    plan: &Plan,
    db: &ScoringDb,
    handles: &Handles,
    e: usize,
) -> Vec<ValueRow> {
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

/// Scores are fractions; their decimal form (6 places, rounded once from the exact value) keeps
/// the JSON readable; `*_exact` carries the fraction.
fn round(x: &Exact) -> f64 {
    decimal(x, 6).parse().unwrap_or(f64::NAN)
}
