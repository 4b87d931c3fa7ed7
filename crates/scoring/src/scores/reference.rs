//! The tools' answers against the contest's reference answers (`[reference]`), and the vote
//! beside them; and the name of what the trusted values are.

use std::collections::BTreeMap;

use serde::Serialize;

use mccbuild_plan::Plan;
use mccbuild_rules::edition::TrustKind;
use mccbuild_rules::reference::{Basis, JudgementCounts, judge, vote_and_reference_disagree};

use crate::database::{Handles, ScoringDb};
use crate::db::vote_decisions;

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
