//! Rule E-3: the trusted value of each value (E-3.1), or the expected answer given with a task
//! (ground-truth contests).

use serde::{Deserialize, Serialize};

use crate::confidence::{ToolIdx, distinct_values};
use crate::edition::{TrustedRules, WeightedMajority};
use crate::exact::{Exact, Sum, int, zero};
use mccbuild_core::value::Value;

/// Which situation of rule E-3.1 decided a value, numbered as in the rules text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TrustCase {
    /// First situation: "All tools agree" (two tools or more).
    Unanimity,
    /// Second situation: "There is a weighted majority of tools that agree on one value".
    WeightedMajority,
    /// Third situation: "Only two tools (t_1 and t_2) provide different values": the higher
    /// Confidence wins, a tie is unknown.
    TwoTools,
    /// Fourth situation: "Only one tool provides a value": trusted if its Confidence reaches the
    /// threshold.
    SingleTool,
    /// Fifth situation: "No tool provides any value".
    NoAnswer,
    /// The value is given with the task (ground-truth contests such as SV-COMP).
    GroundTruth,
    /// The contest's reference answers decide (a past edition's consensus, another store's
    /// trusted values, an exported results CSV): the contest is scored against them instead of
    /// the vote (`[reference] basis = "reference"`).
    Reference,
    /// Decided by the organisers (E-6.3): the contest's corrections file (`[contest]
    /// corrections`) gives this value, whatever the vote or the reference said.
    Organisers,
}

impl TrustCase {
    /// The case's name, as reports and exports write it (`unanimity`, `weighted-majority`,
    /// `two-tools`, `single-tool`, `no-answer`, `ground-truth`, `reference`).
    pub fn name(self) -> &'static str {
        match self {
            TrustCase::Unanimity => "unanimity",
            TrustCase::WeightedMajority => "weighted-majority",
            TrustCase::TwoTools => "two-tools",
            TrustCase::SingleTool => "single-tool",
            TrustCase::NoAnswer => "no-answer",
            TrustCase::GroundTruth => "ground-truth",
            TrustCase::Reference => "reference",
            TrustCase::Organisers => "organisers",
        }
    }

    /// Its situation in rule E-3.1's list (1 to 5); none for a given truth, a reference or an
    /// organisers' decision.
    pub fn situation(self) -> Option<u8> {
        match self {
            TrustCase::Unanimity => Some(1),
            TrustCase::WeightedMajority => Some(2),
            TrustCase::TwoTools => Some(3),
            TrustCase::SingleTool => Some(4),
            TrustCase::NoAnswer => Some(5),
            TrustCase::GroundTruth | TrustCase::Reference | TrustCase::Organisers => None,
        }
    }
}

/// The outcome of rule E-3.1 for one value.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Decision {
    /// `None`: the trusted value is unknown.
    pub value: Option<Value>,
    pub case: TrustCase,
}

/// Rule E-3.1: the trusted value of one value, from the answers of the tools that computed it
/// (those that said "I cannot compute" or "I do not compete" are not in `answers`), each tool
/// weighted by its Confidence.
///
/// The situations are taken in the order that makes them exclusive: one tool alone is the
/// single-tool case (not a unanimity of one); two tools that agree are a unanimity.
pub fn trusted_value(
    answers: &[(ToolIdx, Value)],
    confidence: impl Fn(ToolIdx) -> Exact,
    rules: &TrustedRules,
) -> Decision {
    trusted_value_with(
        answers,
        |classes| contested_winner(classes, &confidence, rules),
        |tool| trusted_alone(&confidence(tool), rules),
    )
}

/// Rule E-3.1, fourth situation: "Only one tool provides a value. Then, if C_tool >= 0.997, the
/// value is considered to be the a correct value. Otherwise, the value is declared to be
/// unknown." Whether a value computed by one tool alone is trusted: its Confidence reaches the
/// edition's single-tool threshold.
pub fn trusted_alone(confidence: &Exact, rules: &TrustedRules) -> bool {
    *confidence >= rules.single_tool_threshold
}

/// Rule E-3.1, second and third situations: the tools disagree. `classes` holds the tools behind
/// each distinct value, in order of first appearance (at least two classes). "Only two tools
/// (t_1 and t_2) provide different values": the higher Confidence wins and a tie is unknown;
/// with more, "a weighted majority of tools that agree on one value" decides (read as the rules
/// file says, see [`WeightedMajority`]). Returns the index of the trusted class.
///
/// Confidences and their sums are exact: equal weights are a tie (`1/6 + 1 = 7/6 = 1/2 + 2/3`
/// is no majority), whatever order they are added in.
///
/// A contested value depends on nothing but this shape and the Confidences, which is what lets
/// the scoring database share one decision among all values of the same shape.
pub fn contested_winner(
    classes: &[Vec<ToolIdx>],
    confidence: impl Fn(ToolIdx) -> Exact,
    rules: &TrustedRules,
) -> Option<usize> {
    if let [a, b] = classes {
        if let ([t1], [t2]) = (a.as_slice(), b.as_slice()) {
            let (c1, c2) = (confidence(*t1), confidence(*t2));
            return if c1 > c2 {
                Some(0)
            } else if c2 > c1 {
                Some(1)
            } else {
                None
            };
        }
    }
    // Exact sums, in machine words while they fit (a Confidence is a small fraction).
    let weights: Vec<Sum> = classes
        .iter()
        .map(|tools| {
            let mut sum = Sum::default();
            for t in tools {
                sum.add(&confidence(*t));
            }
            sum
        })
        .collect();
    let mut total = Sum::default();
    for w in &weights {
        total.merge(w);
    }
    let (best, best_weight) = weights.iter().enumerate().max_by(|a, b| a.1.cmp(b.1))?;
    match rules.weighted_majority {
        // weight > total / 2, as 2 x weight > total (no division).
        WeightedMajority::Absolute => {
            (best_weight.times(&Sum::from(int(2))) > total).then_some(best)
        }
        WeightedMajority::Relative => {
            let tied = weights.iter().filter(|w| *w == best_weight).count() > 1;
            (!tied && best_weight.is_positive()).then_some(best)
        }
    }
}

/// [`trusted_value`] with the Confidence-dependent situations asked of `contested` (see
/// [`contested_winner`]) and `alone` (see [`trusted_alone`]), which must agree with those
/// functions. The scoring database answers both from queries of their own, whose results change
/// far less often than the Confidences, so that a small change of one tool's Confidence does not
/// re-decide every value it took part in. A unanimity reads no Confidence at all.
pub fn trusted_value_with(
    answers: &[(ToolIdx, Value)],
    contested: impl FnOnce(&[Vec<ToolIdx>]) -> Option<usize>,
    alone: impl FnOnce(ToolIdx) -> bool,
) -> Decision {
    match answers {
        [] => Decision {
            value: None,
            case: TrustCase::NoAnswer,
        },
        [(tool, value)] => Decision {
            value: alone(*tool).then(|| value.clone()),
            case: TrustCase::SingleTool,
        },
        [(_, first), rest @ ..] if rest.iter().all(|(_, v)| v == first) => Decision {
            value: Some(first.clone()),
            case: TrustCase::Unanimity,
        },
        _ => {
            let distinct = distinct_values(answers);
            let classes: Vec<Vec<ToolIdx>> = distinct
                .iter()
                .map(|d| d.tools(answers).collect())
                .collect();
            let case = if answers.len() == 2 {
                TrustCase::TwoTools
            } else {
                TrustCase::WeightedMajority
            };
            Decision {
                value: contested(&classes).map(|i| distinct[i].value.clone()),
                case,
            }
        }
    }
}

/// Rule E-3.1's weights: the total Confidence behind each distinct value (with how many tools
/// gave it), in order of first appearance, summed as [`contested_winner`] sums them.
pub fn value_weights(
    answers: &[(ToolIdx, Value)],
    confidence: impl Fn(ToolIdx) -> Exact,
) -> Vec<(Value, Exact, usize)> {
    distinct_values(answers)
        .iter()
        .map(|d| {
            let weight = d.tools(answers).fold(zero(), |sum, t| sum + confidence(t));
            (d.value.clone(), weight, d.count)
        })
        .collect()
}

/// A given truth (ground-truth contests): the expected answer of a value decides it, whatever
/// the tools said; none given is unknown.
pub fn trusted_by_ground_truth(expected: Option<&Value>) -> Decision {
    Decision {
        value: expected.cloned(),
        case: TrustCase::GroundTruth,
    }
}

/// Rule E-6.3, the organisers' decision: "Once the call for tool participation is issued, and
/// especially when execution of submitted tools is running, the MCC organizers are competent to
/// solve the problems they might encounter. [...] Resolution of problems would be performed
/// with, as much as possible, the least impact on the outcomes of the contest." A value the
/// organisers decided (a value of the contest's corrections file) is the trusted value, whatever
/// E-3.1's vote (`decided` is `None`: the vote stands). It may give a trusted value where the
/// vote gives none (no tool right, tools disagreeing with equal weights), so that the tools'
/// answers there are judged right or wrong (E-4.2) like any other. The MCC did so in 2024: 37
/// contested values whose official value is not the vote's, and wrong answers on values no tool
/// got right (docs/replay-analysis.md, section 6). E-2.2's Confidence is not affected: the set V
/// is what the tools agree on, before any decision.
pub fn decided_by_organisers(vote: Decision, decided: Option<&Value>) -> Decision {
    match decided {
        Some(value) => Decision {
            value: Some(value.clone()),
            case: TrustCase::Organisers,
        },
        None => vote,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exact::{parse, ratio};

    fn q(text: &str) -> Exact {
        parse(text).unwrap()
    }

    fn b(v: bool) -> Value {
        Value::Bool(v)
    }

    fn rules(threshold: &str) -> TrustedRules {
        TrustedRules {
            single_tool_threshold: q(threshold),
            weighted_majority: WeightedMajority::Absolute,
        }
    }

    /// Confidences of tools 0..=4 in these scenarios.
    fn conf(tool: ToolIdx) -> Exact {
        q(["0.999", "0.8", "0.6", "0.995", "0.6"][tool as usize])
    }

    #[test]
    fn no_answer_is_unknown() {
        let d = trusted_value(&[], conf, &rules("0.997"));
        assert_eq!(
            d,
            Decision {
                value: None,
                case: TrustCase::NoAnswer
            }
        );
    }

    #[test]
    fn unanimity_ignores_confidence() {
        // Tools 1 and 2 (C = 0.8, 0.6) agree: all tools agree.
        let d = trusted_value(&[(1, b(true)), (2, b(true))], conf, &rules("0.997"));
        assert_eq!(
            d,
            Decision {
                value: Some(b(true)),
                case: TrustCase::Unanimity
            }
        );
    }

    #[test]
    fn single_tool_threshold_differs_between_editions() {
        // Tool 3 alone, C = 0.995: 0.995 < 0.997 (2026) -> unknown; 0.995 >= 0.993 (2023) -> trusted.
        let answers = [(3, Value::Int(42))];
        assert_eq!(trusted_value(&answers, conf, &rules("0.997")).value, None);
        assert_eq!(
            trusted_value(&answers, conf, &rules("0.993")).value,
            Some(Value::Int(42))
        );
        // Exactly at the threshold counts ("C_tool >= 0.997").
        assert_eq!(
            trusted_value(&answers, |_| q("0.997"), &rules("0.997")).value,
            Some(Value::Int(42))
        );
        assert_eq!(
            trusted_value(&answers, conf, &rules("0.997")).case,
            TrustCase::SingleTool
        );
    }

    #[test]
    fn two_tools_decided_by_confidence_tie_unknown() {
        // C_1 = 0.8 > C_2 = 0.6: tool 1's value.
        let d = trusted_value(&[(1, b(true)), (2, b(false))], conf, &rules("0.997"));
        assert_eq!(
            d,
            Decision {
                value: Some(b(true)),
                case: TrustCase::TwoTools
            }
        );
        let d = trusted_value(&[(2, b(false)), (1, b(true))], conf, &rules("0.997"));
        assert_eq!(d.value, Some(b(true)));
        // C_2 = C_4 = 0.6: unknown.
        let d = trusted_value(&[(2, b(true)), (4, b(false))], conf, &rules("0.997"));
        assert_eq!(
            d,
            Decision {
                value: None,
                case: TrustCase::TwoTools
            }
        );
    }

    #[test]
    fn weighted_majority_golden() {
        // Tools 0 (0.999) and 2 (0.6) say 7; tools 1 (0.8) and 4 (0.6) say 8.
        // Weights: 7 -> 999/1000 + 3/5 = 1599/1000, 8 -> 4/5 + 3/5 = 7/5; total 2999/1000;
        // 2 x 1599/1000 = 3198/1000 > 2999/1000: 7 is trusted,
        // although the tools are split two against two.
        let answers = [
            (0, Value::Int(7)),
            (1, Value::Int(8)),
            (2, Value::Int(7)),
            (4, Value::Int(8)),
        ];
        let d = trusted_value(&answers, conf, &rules("0.997"));
        assert_eq!(
            d,
            Decision {
                value: Some(Value::Int(7)),
                case: TrustCase::WeightedMajority
            }
        );
        // Three tools, 3 distinct values: weights 999/1000, 4/5, 3/5; total 2399/1000, and
        // 2 x 999/1000 = 1998/1000 is not more:
        // no absolute majority -> unknown; relative reading -> 0.999 is the largest -> 1.
        let answers = [(0, Value::Int(1)), (1, Value::Int(2)), (2, Value::Int(3))];
        assert_eq!(trusted_value(&answers, conf, &rules("0.997")).value, None);
        let relative = TrustedRules {
            single_tool_threshold: q("0.997"),
            weighted_majority: WeightedMajority::Relative,
        };
        assert_eq!(
            trusted_value(&answers, conf, &relative).value,
            Some(Value::Int(1))
        );
        // Relative with a tie: tools 2 and 4 (0.6 each) say 1 and 2, a third tool (0.5) says 3:
        // the two largest weights are equal -> unknown under both readings.
        let answers = [(2, Value::Int(1)), (4, Value::Int(2)), (5, Value::Int(3))];
        let with_fifth = |t: ToolIdx| if t == 5 { ratio(1, 2) } else { conf(t) };
        assert_eq!(trusted_value(&answers, with_fifth, &relative).value, None);
        assert_eq!(
            trusted_value(&answers, with_fifth, &rules("0.997")).value,
            None
        );
    }

    #[test]
    fn equal_weights_are_a_tie_whatever_the_order_of_addition() {
        // Floats got this wrong: tools 0 (1/6) and 1 (1) say TRUE, tools 2 (1/2) and 3 (2/3) FALSE.
        // 1/6 + 1 = 7/6 = 1/2 + 2/3: no value weighs more than half of 14/6 (in floats
        // 1/6 + 1 = 1.1666666666666667 > 1/2 + 2/3 = 1.1666666666666665 decided it).
        let c =
            |t: ToolIdx| [ratio(1, 6), ratio(1, 1), ratio(1, 2), ratio(2, 3)][t as usize].clone();
        let answers = [(0, b(true)), (1, b(true)), (2, b(false)), (3, b(false))];
        assert_eq!(trusted_value(&answers, c, &rules("0.997")).value, None);
        let relative = TrustedRules {
            single_tool_threshold: q("0.997"),
            weighted_majority: WeightedMajority::Relative,
        };
        assert_eq!(trusted_value(&answers, c, &relative).value, None);
        // Two tools of equal Confidence, 7/6 - 1 = 1/6 and 2/3 - 1/2 = 1/6: unknown.
        let two =
            |t: ToolIdx| [ratio(7, 6) - ratio(1, 1), ratio(2, 3) - ratio(1, 2)][t as usize].clone();
        assert_eq!(
            trusted_value(&[(0, b(true)), (1, b(false))], two, &rules("0.997")).value,
            None
        );
    }

    #[test]
    fn case_names_are_the_serialized_names_and_situations_follow_the_text() {
        let cases = [
            TrustCase::Unanimity,
            TrustCase::WeightedMajority,
            TrustCase::TwoTools,
            TrustCase::SingleTool,
            TrustCase::NoAnswer,
            TrustCase::GroundTruth,
            TrustCase::Reference,
            TrustCase::Organisers,
        ];
        for (i, case) in cases.into_iter().enumerate() {
            assert_eq!(
                serde_json::to_value(case).unwrap(),
                serde_json::Value::from(case.name())
            );
            // E-3.1 lists them in this order: all agree, weighted majority, only two tools,
            // only one tool, no tool.
            assert_eq!(case.situation(), (i < 5).then_some(i as u8 + 1));
        }
    }

    #[test]
    fn a_given_truth_decides_whatever_the_tools_say() {
        assert_eq!(
            trusted_by_ground_truth(Some(&b(true))),
            Decision {
                value: Some(b(true)),
                case: TrustCase::GroundTruth
            }
        );
        assert_eq!(trusted_by_ground_truth(None).value, None);
    }

    #[test]
    fn the_organisers_decision_overrides_the_vote_and_gives_unknown_values() {
        // Tools 0 and 3 (C = 0.999 and 0.995) say TRUE, tool 1 (0.8) FALSE: the vote is TRUE
        // (1.994 of 2.594); the organisers say FALSE.
        let answers = [(0, b(true)), (1, b(false)), (3, b(true))];
        let vote = trusted_value(&answers, conf, &rules("0.997"));
        assert_eq!(vote.value, Some(b(true)));
        let decided = decided_by_organisers(vote.clone(), Some(&b(false)));
        assert_eq!(
            decided,
            Decision {
                value: Some(b(false)),
                case: TrustCase::Organisers
            }
        );
        // No decision: the vote stands, its case too.
        assert_eq!(
            decided_by_organisers(vote, None).case,
            TrustCase::WeightedMajority
        );
        // A value no tool computed alone with enough Confidence (tool 2, 0.6: unknown) gets the
        // organisers' value: tool 2's answer is now judged against it.
        let unknown = trusted_value(&[(2, b(true))], conf, &rules("0.997"));
        assert_eq!(unknown.value, None);
        assert_eq!(
            decided_by_organisers(unknown, Some(&b(false))).value,
            Some(b(false))
        );
    }

    #[test]
    fn value_weights_add_up() {
        let answers = [(0, b(true)), (1, b(false)), (2, b(true))];
        let w = value_weights(&answers, conf);
        assert_eq!(w.len(), 2);
        assert_eq!(w[0].0, b(true));
        // 999/1000 + 6/10 = 1599/1000.
        assert_eq!(w[0].1, ratio(1599, 1000));
        assert_eq!(w[0].2, 2);
        assert_eq!(w[1], (b(false), ratio(4, 5), 1));
    }
}
