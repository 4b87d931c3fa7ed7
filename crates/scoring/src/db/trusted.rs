//! Per model examination: its trusted values (E-3.1's vote, or the given truth, or the reference
//! answers, then the organisers' decisions of E-6.3), decided from the settled decisions the
//! inputs hold.

use mccbuild_rules::confidence::ToolIdx;
use mccbuild_rules::edition::TrustKind;
use mccbuild_rules::reference::{Basis, trusted_by_reference};
use mccbuild_rules::trusted::{
    Decision, decided_by_organisers, trusted_by_ground_truth, trusted_value_with,
};
use mccbuild_rules::votes::votes;

use super::{
    Contested, ModelExamination, ValueAnswers, contested_decision, exam_scores, value_answers,
    voters,
};

/// The trusted value of each value of each examination instance of a model examination: rule
/// E-3.1's vote (or the given truth, in a ground-truth contest), or, when the contest's basis
/// is its reference answers, those; then the organisers' decisions (E-6.3) where there are.
/// Decided by [`exam_scores`], which keeps them: one memo per model examination instead of two
/// (salsa verifies each model examination's memos after every record, as they read the
/// Confidences: docs/BENCHMARKS.md).
pub fn trusted_values(db: &dyn salsa::Database, m: ModelExamination) -> &Vec<Vec<Decision>> {
    &exam_scores(db, m).decisions
}

/// [`trusted_values`], decided, from the model examination's answers by value.
pub(super) fn decide(
    db: &dyn salsa::Database,
    m: ModelExamination,
    answers: &[ValueAnswers],
) -> Vec<Vec<Decision>> {
    let mut decisions = undecided_with(db, m, answers);
    for (decisions, decided) in decisions.iter_mut().zip(m.corrections(db).iter()) {
        let Some(decided) = decided else {
            continue;
        };
        for (d, value) in decisions.iter_mut().zip(decided.iter()) {
            if value.is_some() {
                *d = decided_by_organisers(d.clone(), value.as_ref());
            }
        }
    }
    decisions
}

/// The trusted values before the organisers' decisions: the vote's (or the given truth's), or
/// the reference's when the contest's basis is its reference answers. Reports show it beside a
/// decided value.
pub fn undecided_values(db: &dyn salsa::Database, m: ModelExamination) -> Vec<Vec<Decision>> {
    undecided_with(db, m, value_answers(db, m))
}

fn undecided_with(
    db: &dyn salsa::Database,
    m: ModelExamination,
    answers: &[ValueAnswers],
) -> Vec<Vec<Decision>> {
    if m.contest(db).basis(db) == Basis::Reference {
        return reference_decisions(db, m);
    }
    vote_decisions_with(db, m, answers)
}

/// The reference answers of a model examination as decisions (unknown where the reference does
/// not give a value).
pub fn reference_decisions(db: &dyn salsa::Database, m: ModelExamination) -> Vec<Vec<Decision>> {
    m.exam_instances(db)
        .iter()
        .zip(m.reference(db).iter())
        .map(|(ei, reference)| {
            (0..ei.ids.len())
                .map(|i| {
                    trusted_by_reference(
                        reference
                            .as_ref()
                            .and_then(|r| r.get(i))
                            .and_then(Option::as_ref),
                    )
                })
                .collect()
        })
        .collect()
}

/// Rule E-3.1: the voted trusted value of each value of each examination instance of a model
/// examination (or the given truth, in a ground-truth contest), whatever the contest's basis
/// (the comparison of the vote with the reference reads it).
pub fn vote_decisions(db: &dyn salsa::Database, m: ModelExamination) -> Vec<Vec<Decision>> {
    vote_decisions_with(db, m, value_answers(db, m))
}

fn vote_decisions_with(
    db: &dyn salsa::Database,
    m: ModelExamination,
    answers: &[ValueAnswers],
) -> Vec<Vec<Decision>> {
    let contest = m.contest(db);
    if contest.trust(db) == TrustKind::GroundTruth {
        return m
            .exam_instances(db)
            .iter()
            .map(|ei| {
                (0..ei.ids.len())
                    .map(|i| {
                        trusted_by_ground_truth(
                            ei.truth
                                .as_ref()
                                .and_then(|t| t.get(i))
                                .and_then(Option::as_ref),
                        )
                    })
                    .collect()
            })
            .collect();
    }
    let tools = contest.tool_data(db);
    let voters = voters(db, contest);
    // The Confidence-dependent decisions come from inputs the driver keeps
    // ([`ScoringDb::settle`]): a unanimity reads none, a lone answer its tool's `alone`, a
    // contested value this model examination's `decided`. A shape not settled yet (the driver
    // has not run since the answers changed) is decided by its query: the same decision.
    let decided = m.decided(db);
    let alone = |t: ToolIdx| tools.get(t as usize).is_some_and(|tool| tool.alone(db));
    let contested = |classes: &[Vec<ToolIdx>]| {
        let found = decided.binary_search_by(|(shape, _)| shape.as_slice().cmp(classes));
        match found {
            Ok(i) => decided[i].1,
            Err(_) => contested_decision(db, Contested::new(db, contest, classes.to_vec())),
        }
        .map(|i| i as usize)
    };
    answers
        .iter()
        .map(|answers| {
            answers
                .iter()
                .map(|value| trusted_value_with(&votes(value, voters), contested, alone))
                .collect()
        })
        .collect()
}
