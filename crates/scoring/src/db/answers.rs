//! Per model examination, before any Confidence: every tool's answer by value
//! ([`value_answers`]), and what E-2.2 and E-3.1 take from them ([`agreement`]): the model
//! examination's share of the Confidence tally and which Confidence-dependent decisions its
//! trusted values need.

use mccbuild_core::Value;
use mccbuild_rules::confidence::{ConfidenceTally, ToolIdx};
use mccbuild_rules::trusted::trusted_value_with;
use mccbuild_rules::votes::{Voters, votes};

use super::{Answers, ContestData, ModelExamination};

/// Rules E-2.2 and E-3.1: whose vote each tool's answers are (`[confidence] votes`: every tool,
/// or one vote per family), from the tools' families.
#[salsa::tracked(returns(ref))]
pub fn voters(db: &dyn salsa::Database, contest: ContestData) -> Voters {
    Voters::new(
        contest.tools(db).iter().map(|t| t.family.as_str()),
        contest.confidence_rules(db).votes,
    )
}

/// For each value of an examination instance, every tool's answer: what E-2.2 and E-3.1 look at
/// (stored flat: one allocation per examination instance, not one per value).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ValueAnswers {
    /// `answers[starts[i]..starts[i + 1]]` are the answers for value `i`.
    starts: Vec<u32>,
    answers: Vec<(ToolIdx, Value)>,
}

impl ValueAnswers {
    /// The answers of the runs of one examination instance, by value.
    pub fn gather(values: usize, tools: &[u32], runs: &[Answers]) -> ValueAnswers {
        let mut counts = vec![0u32; values + 1];
        let mut total = 0;
        for run in runs {
            for (index, _) in run.iter() {
                if (*index as usize) < values {
                    counts[*index as usize + 1] += 1;
                    total += 1;
                }
            }
        }
        for i in 0..values {
            counts[i + 1] += counts[i];
        }
        let mut fill = counts.clone();
        let mut answers: Vec<(ToolIdx, Value)> = vec![(0, Value::Bool(false)); total];
        for (run, &tool) in runs.iter().zip(tools) {
            for (index, value) in run.iter() {
                let i = *index as usize;
                if i < values {
                    answers[fill[i] as usize] = (tool, value.clone());
                    fill[i] += 1;
                }
            }
        }
        ValueAnswers {
            starts: counts,
            answers,
        }
    }

    pub fn len(&self) -> usize {
        self.starts.len().saturating_sub(1)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every tool's answer for value `i`.
    pub fn value(&self, i: usize) -> &[(ToolIdx, Value)] {
        &self.answers[self.starts[i] as usize..self.starts[i + 1] as usize]
    }

    pub fn iter(&self) -> impl Iterator<Item = &[(ToolIdx, Value)]> {
        (0..self.len()).map(|i| self.value(i))
    }
}

/// The answers by value of each examination instance of a model examination (kept: for reports
/// and explanations).
#[salsa::tracked(returns(ref))]
pub fn value_answers(db: &dyn salsa::Database, m: ModelExamination) -> Vec<ValueAnswers> {
    gathered(db, m)
}

/// The answers by value of each examination instance of a model examination, gathered without
/// keeping them (the queries on the way to the podiums: one memo fewer per model examination for
/// salsa to verify; reports and explanations read [`value_answers`]).
pub(super) fn gathered(db: &dyn salsa::Database, m: ModelExamination) -> Vec<ValueAnswers> {
    m.exam_instances(db)
        .iter()
        .zip(m.answers(db).iter())
        .map(|(ei, runs)| ValueAnswers::gather(ei.ids.len(), &ei.tools, runs))
        .collect()
}

/// What E-2.2 and E-3.1 take from the answers of one model examination alone, before any
/// Confidence: its contribution to the Confidence tally, and which Confidence-dependent
/// decisions its trusted values need.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Agreement {
    /// Rule E-2.2's counts over its values.
    pub tally: ConfidenceTally,
    pub needs: DecisionNeeds,
}

/// The Confidence-dependent decisions (E-3.1) the trusted values of a model examination need:
/// the tools that computed a value alone, and the shapes of its contested values; each sorted,
/// without repeats.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct DecisionNeeds {
    pub alone: Vec<ToolIdx>,
    pub shapes: Vec<Vec<Vec<ToolIdx>>>,
}

impl DecisionNeeds {
    /// The decisions the values `answers` need (E-3.1 asked with recording stand-ins: the same
    /// function that decides them says which decisions it asks for), on the votes `voters` cast.
    pub fn of(answers: &[ValueAnswers], voters: &Voters) -> DecisionNeeds {
        let mut needs = DecisionNeeds::default();
        for value in answers.iter().flat_map(ValueAnswers::iter) {
            let _ = trusted_value_with(
                &votes(value, voters),
                |classes| {
                    needs.shapes.push(classes.to_vec());
                    None
                },
                |tool| {
                    needs.alone.push(tool);
                    false
                },
            );
        }
        needs.alone.sort_unstable();
        needs.alone.dedup();
        needs.shapes.sort_unstable();
        needs.shapes.dedup();
        needs
    }
}

/// Rule E-2.2, for the values of one model examination, and the decisions its values need.
#[salsa::tracked(returns(ref))]
pub fn agreement(db: &dyn salsa::Database, m: ModelExamination) -> Agreement {
    if let Some(r) = m.remembered(db) {
        return r.agreement.clone();
    }
    let contest = m.contest(db);
    let rules = contest.confidence_rules(db);
    let voters = voters(db, contest);
    let answers = gathered(db, m);
    let mut tally = ConfidenceTally::default();
    for value in answers.iter().flat_map(ValueAnswers::iter) {
        tally.add_value(value, voters, rules);
    }
    Agreement {
        tally,
        needs: DecisionNeeds::of(&answers, voters),
    }
}
