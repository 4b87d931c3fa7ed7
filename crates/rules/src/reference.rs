//! Reference answers: a tool's values judged against answers given from outside the contest (a past
//! edition's consensus in the form the MCC publishes it, another store's trusted values, an
//! exported results CSV). Not a rule of the MCC: a harness for tool developers. The vote (E-3.1)
//! stays the contest's default basis; a contest may score against the reference instead
//! (`[reference] basis = "reference"`), and both can be compared value by value.

use serde::{Deserialize, Serialize};

use crate::trusted::{Decision, TrustCase};
use mccbuild_core::value::Value;

/// What the trusted values of a contest are taken from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Basis {
    /// Rule E-3.1's vote of the contest's tools (or, in a ground-truth contest, the truth
    /// given with each task): the default.
    #[default]
    Vote,
    /// The contest's reference answers.
    Reference,
}

impl Basis {
    pub fn name(self) -> &'static str {
        match self {
            Basis::Vote => "vote",
            Basis::Reference => "reference",
        }
    }
}

/// A value scored against the reference: the reference answer decides, whatever the tools said;
/// a value the reference does not know (`?`, or absent) is unknown.
pub fn trusted_by_reference(reference: Option<&Value>) -> Decision {
    Decision {
        value: reference.cloned(),
        case: TrustCase::Reference,
    }
}

/// How one answer of a tool compares with the reference.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Judgement {
    /// The tool's answer is the reference answer.
    Right,
    /// The tool answered, the reference knows the value, and they differ.
    Wrong,
    /// The tool answered a value the reference does not know.
    Unknown,
    /// The tool gave no answer (the reference may or may not know the value).
    Unanswered,
}

impl Judgement {
    pub fn name(self) -> &'static str {
        match self {
            Judgement::Right => "right",
            Judgement::Wrong => "wrong",
            Judgement::Unknown => "unknown",
            Judgement::Unanswered => "unanswered",
        }
    }
}

/// Judges one answer of a tool against the reference answer of its value.
pub fn judge(answer: Option<&Value>, reference: Option<&Value>) -> Judgement {
    match (answer, reference) {
        (None, _) => Judgement::Unanswered,
        (Some(_), None) => Judgement::Unknown,
        (Some(a), Some(r)) if a == r => Judgement::Right,
        (Some(_), Some(_)) => Judgement::Wrong,
    }
}

/// A tool's answers counted by judgement.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct JudgementCounts {
    pub right: u64,
    pub wrong: u64,
    pub unknown: u64,
    pub unanswered: u64,
}

impl JudgementCounts {
    pub fn add(&mut self, j: Judgement) {
        match j {
            Judgement::Right => self.right += 1,
            Judgement::Wrong => self.wrong += 1,
            Judgement::Unknown => self.unknown += 1,
            Judgement::Unanswered => self.unanswered += 1,
        }
    }
}

/// Whether the vote and the reference disagree on a value: both know it and they differ, or
/// exactly one of them knows it.
pub fn vote_and_reference_disagree(vote: Option<&Value>, reference: Option<&Value>) -> bool {
    vote != reference
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(x: bool) -> Value {
        Value::Bool(x)
    }

    #[test]
    fn answers_are_right_wrong_unknown_or_unanswered() {
        let n = |s: &str| Value::parse(s).unwrap();
        assert_eq!(judge(Some(&b(true)), Some(&b(true))), Judgement::Right);
        assert_eq!(judge(Some(&b(true)), Some(&b(false))), Judgement::Wrong);
        assert_eq!(judge(Some(&b(true)), None), Judgement::Unknown);
        assert_eq!(judge(None, Some(&b(true))), Judgement::Unanswered);
        assert_eq!(judge(None, None), Judgement::Unanswered);
        // Exact integers: equal values are right whatever their spelling was.
        assert_eq!(
            judge(
                Some(&n("18446744073709551617")),
                Some(&n("18446744073709551617"))
            ),
            Judgement::Right
        );
        assert_eq!(judge(Some(&n("+inf")), Some(&n("12"))), Judgement::Wrong);
        let mut counts = JudgementCounts::default();
        for j in [
            Judgement::Right,
            Judgement::Right,
            Judgement::Wrong,
            Judgement::Unknown,
        ] {
            counts.add(j);
        }
        assert_eq!((counts.right, counts.wrong, counts.unknown), (2, 1, 1));
    }

    #[test]
    fn the_reference_decides_whatever_the_tools_say() {
        assert_eq!(
            trusted_by_reference(Some(&b(false))),
            Decision {
                value: Some(b(false)),
                case: TrustCase::Reference
            }
        );
        assert_eq!(trusted_by_reference(None).value, None);
        assert!(vote_and_reference_disagree(Some(&b(true)), Some(&b(false))));
        assert!(vote_and_reference_disagree(None, Some(&b(false))));
        assert!(vote_and_reference_disagree(Some(&b(true)), None));
        assert!(!vote_and_reference_disagree(Some(&b(true)), Some(&b(true))));
        assert!(!vote_and_reference_disagree(None, None));
    }
}
