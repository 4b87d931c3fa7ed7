//! Rules E-4.1 to E-4.3: the points of a value, of an examination, and when an examination is
//! complete.

use mccbuild_core::{Measurement, Value};
use serde::Serialize;

use crate::edition::{ScoringRules, WrongValue};
use crate::exact::{Exact, count, serde_exact, zero};
use num_traits::Zero;

/// Rule E-4.1: ScoreValue, the points of one right value of an examination with `values` values
/// ("the total number of points a tool can receive from an examination being 16").
pub fn score_value(rules: &ScoringRules, values: usize) -> Exact {
    if values == 0 {
        zero()
    } else {
        &rules.points_per_examination / count(values)
    }
}

/// Rule E-4.1: PenaltyValue, "worth twice the points when a tool has provided the correct value".
pub fn penalty_value(rules: &ScoringRules, score_value: &Exact) -> Exact {
    &rules.penalty_factor * score_value
}

/// A tool's result on one examination of one instance.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct ExamScore {
    /// `earned - penalty`.
    #[serde(with = "serde_exact")]
    pub points: Exact,
    /// Points of the right values (ScoreValue each, or the score table's `correct`).
    #[serde(with = "serde_exact")]
    pub earned: Exact,
    /// Points lost: PenaltyValue per wrong value (or the table's `wrong`, negated), or, under
    /// 2015's rule, everything earned when one value is wrong.
    #[serde(with = "serde_exact")]
    pub penalty: Exact,
    /// Values answered with the trusted value.
    pub right: u32,
    /// Values answered with another value than the trusted one.
    pub wrong: u32,
    /// Rule E-4.3: the tool computed every trusted value of the examination (and there was at
    /// least one); only then are its time and memory reported.
    pub complete: bool,
}

/// Rules E-4.2 and E-4.3: the score of one tool on one examination of one instance.
///
/// `answers` are the tool's values by value index; `trusted` the trusted value of each index
/// (`None`: unknown); the first `scored` values earn points (the others, 2023's extra
/// StateSpace values, only count for completeness). A right value earns ScoreValue, a wrong one
/// costs PenaltyValue, values not computed or without trusted value count 0; the examination's
/// score is the sum. Under `wrong_value = "lose-examination"` (MCC 2015) one wrong value makes
/// the whole examination 0. With a score table (SV-COMP 2012), each answer earns its row's
/// points, right or wrong. `right`, `wrong` and `complete` are over all values (E-4.3: "the 4
/// values for StateSpace").
pub fn examination_score<'a>(
    answers: impl IntoIterator<Item = (usize, &'a Value)>,
    trusted: &[Option<Value>],
    scored: usize,
    rules: &ScoringRules,
) -> ExamScore {
    let value_points = if rules.table.is_empty() {
        score_value(rules, scored)
    } else {
        zero()
    };
    let mut score = ExamScore::default();
    let (mut scored_right, mut scored_wrong) = (0u32, 0u32);
    let (mut table_earned, mut table_lost) = (zero(), zero());
    for (index, value) in answers {
        let row = rules
            .table
            .iter()
            .find(|r| &r.answer == value)
            .filter(|_| index < scored);
        match trusted.get(index) {
            Some(Some(reference)) if reference == value => {
                score.right += 1;
                scored_right += (index < scored) as u32;
                if let Some(r) = row {
                    table_earned += &r.correct;
                }
            }
            Some(Some(_)) => {
                score.wrong += 1;
                scored_wrong += (index < scored) as u32;
                if let Some(r) = row {
                    table_lost -= &r.wrong;
                }
            }
            _ => {}
        }
    }
    (score.earned, score.penalty) = if !rules.table.is_empty() {
        (table_earned, table_lost)
    } else {
        let earned = if scored_right == 0 {
            zero()
        } else {
            count(scored_right as usize) * &value_points
        };
        match rules.wrong_value {
            WrongValue::Penalty if scored_wrong == 0 => (earned, zero()),
            WrongValue::Penalty => (
                earned,
                count(scored_wrong as usize) * penalty_value(rules, &value_points),
            ),
            WrongValue::LoseExamination if scored_wrong > 0 => (earned.clone(), earned),
            WrongValue::LoseExamination => (earned, zero()),
        }
    };
    score.points = if score.penalty.is_zero() {
        score.earned.clone()
    } else {
        &score.earned - &score.penalty
    };
    let known = trusted.iter().filter(|t| t.is_some()).count() as u32;
    score.complete = known > 0 && score.right == known;
    score
}

/// Rule E-4.3: "Each time a tool computes all trusted results for a given examination [...],
/// computation time and memory consumption are measured. This information is reported
/// separately but no score is associated." A run's measurement, reported (for the awards of
/// E-4.5, the report's solved runs) when its examination is complete.
pub fn reported_measurement<'a>(
    score: &ExamScore,
    measurement: &'a Measurement,
) -> Option<&'a Measurement> {
    score.complete.then_some(measurement)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edition::ModelWeight;
    use crate::exact::int;

    fn rules() -> ScoringRules {
        ScoringRules::mcc_2026()
    }

    fn b(v: bool) -> Value {
        Value::Bool(v)
    }

    #[test]
    fn score_table_of_svcomp_2012() {
        // SV-COMP 2012: SAFE correct +2, SAFE incorrect -4, UNSAFE correct +1, UNSAFE incorrect
        // -2, UNKNOWN 0. One task per run (one value).
        let table = ScoringRules {
            table: vec![
                crate::edition::ScoreRow {
                    answer: b(true),
                    correct: int(2),
                    wrong: int(-4),
                },
                crate::edition::ScoreRow {
                    answer: b(false),
                    correct: int(1),
                    wrong: int(-2),
                },
            ],
            model_weight: ModelWeight::None,
            ..rules()
        };
        let safe = [Some(b(true))];
        let unsafe_ = [Some(b(false))];
        let score = |answer: Option<bool>, truth: &[Option<Value>]| {
            let a: Vec<(usize, Value)> = answer.map(|v| (0, b(v))).into_iter().collect();
            examination_score(a.iter().map(|(i, v)| (*i, v)), truth, 1, &table).points
        };
        assert_eq!(score(Some(true), &safe), int(2));
        assert_eq!(score(Some(true), &unsafe_), int(-4));
        assert_eq!(score(Some(false), &unsafe_), int(1));
        assert_eq!(score(Some(false), &safe), int(-2));
        assert_eq!(score(None, &safe), int(0));
    }

    #[test]
    fn score_and_penalty_values() {
        // E-4.1: 16 points spread over the values.
        assert_eq!(score_value(&rules(), 16), int(1));
        assert_eq!(score_value(&rules(), 4), int(4)); // StateSpace
        assert_eq!(score_value(&rules(), 1), int(16)); // a global property
        assert_eq!(score_value(&rules(), 3), crate::exact::ratio(16, 3)); // exact, not 5.333...
        assert_eq!(penalty_value(&rules(), &int(4)), int(8));
    }

    #[test]
    fn examination_score_golden() {
        // 16 formulas: trusted values known for 0..14, unknown for 14 and 15.
        // The tool answers 0..10 right (10 x 1 = 10), 10 and 11 wrong (2 x -2 = -4),
        // 14 (unknown: 0), and nothing for 12, 13, 15.  Score: 10 - 4 = 6.
        let mut trusted: Vec<Option<Value>> = (0..14).map(|i| Some(b(i % 2 == 0))).collect();
        trusted.extend([None, None]);
        let answers: Vec<(usize, Value)> = (0..10)
            .map(|i| (i, b(i % 2 == 0)))
            .chain([(10, b(false)), (11, b(true)), (14, b(true))])
            .collect();
        let s = examination_score(
            answers.iter().map(|(i, v)| (*i, v)),
            &trusted,
            trusted.len(),
            &rules(),
        );
        assert_eq!(
            s,
            ExamScore {
                points: int(6),
                earned: int(10),
                penalty: int(4),
                right: 10,
                wrong: 2,
                complete: false
            }
        );
        // 2015: one wrong value loses the examination on this instance.
        let r2015 = ScoringRules {
            wrong_value: WrongValue::LoseExamination,
            ..rules()
        };
        assert_eq!(
            examination_score(
                answers.iter().map(|(i, v)| (*i, v)),
                &trusted,
                trusted.len(),
                &r2015
            )
            .points,
            int(0)
        );
    }

    #[test]
    fn unscored_values_count_for_completeness_not_points() {
        // 2023 StateSpace: 4 values, only STATES (the first) scored: ScoreValue 16 / 1 = 16.
        // Right STATES, wrong TRANSITIONS: 16 points, no penalty; not complete (E-4.3 needs the
        // 4 values).
        let trusted = vec![
            Some(Value::Int(6)),
            Some(Value::Int(8)),
            Some(Value::Int(1)),
            Some(Value::Int(4)),
        ];
        let answers = [
            (0, Value::Int(6)),
            (1, Value::Int(9)),
            (2, Value::Int(1)),
            (3, Value::Int(4)),
        ];
        let s = examination_score(answers.iter().map(|(i, v)| (*i, v)), &trusted, 1, &rules());
        assert_eq!(
            s,
            ExamScore {
                points: int(16),
                earned: int(16),
                penalty: int(0),
                right: 3,
                wrong: 1,
                complete: false
            }
        );
        // STATES only: 16 points, not complete either.
        let s = examination_score(std::iter::once((0, &Value::Int(6))), &trusted, 1, &rules());
        assert_eq!(
            s,
            ExamScore {
                points: int(16),
                earned: int(16),
                penalty: int(0),
                right: 1,
                wrong: 0,
                complete: false
            }
        );
    }

    #[test]
    fn completeness_counts_trusted_values_only() {
        // StateSpace: TRANSITIONS unknown; the tool gives the 3 trusted ones right: complete,
        // 3 x 4 = 12 points.
        let trusted = vec![
            Some(Value::Int(6)),
            None,
            Some(Value::Int(1)),
            Some(Value::Int(4)),
        ];
        let answers = [(0, Value::Int(6)), (2, Value::Int(1)), (3, Value::Int(4))];
        let s = examination_score(
            answers.iter().map(|(i, v)| (*i, v)),
            &trusted,
            trusted.len(),
            &rules(),
        );
        assert_eq!(
            s,
            ExamScore {
                points: int(12),
                earned: int(12),
                penalty: int(0),
                right: 3,
                wrong: 0,
                complete: true
            }
        );
        // Nothing trusted: never complete.
        let none = vec![None; 4];
        assert!(
            !examination_score(answers.iter().map(|(i, v)| (*i, v)), &none, 4, &rules()).complete
        );
    }
}
