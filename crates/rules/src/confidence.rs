//! Rule E-2: the Confidence of tools.

use crate::edition::{ConfidenceDenominator, ConfidenceRules};
use crate::exact::{Exact, zero};
use crate::votes::{Voters, votes};
use mccbuild_core::value::Value;

/// Index of a tool in the contest (position in the manifest's tool list).
pub type ToolIdx = u32;

/// Rule E-2.2: the value of the set V of trusted values for one value, if any.
///
/// "A majority of tools agree on the same value, and at least 3 tools agree on this value":
/// among the tools that answered this value (not computed results are not considered), more
/// than half gave the same value, and at least `min_agreeing` of them.
pub fn agreed_value<'a>(
    answers: &'a [(ToolIdx, Value)],
    rules: &ConfidenceRules,
) -> Option<&'a Value> {
    let (value, count) = most_common(answers)?;
    let majority = 2 * count > answers.len();
    (majority && count >= rules.min_agreeing as usize).then_some(value)
}

/// The most frequent value and its count (the first one found on a tie; a tie is never a
/// strict majority, so the choice does not matter to E-2.2).
fn most_common(answers: &[(ToolIdx, Value)]) -> Option<(&Value, usize)> {
    let mut best: Option<(&Value, usize)> = None;
    for d in distinct_values(answers) {
        if best.is_none_or(|(_, b)| d.count > b) {
            best = Some((d.value, d.count));
        }
    }
    best
}

/// One distinct value among the answers for a value: how many tools gave it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DistinctValue<'a> {
    pub value: &'a Value,
    pub count: usize,
}

impl<'a> DistinctValue<'a> {
    /// The tools that gave it, in the order of the answers.
    pub fn tools<'b>(
        &self,
        answers: &'b [(ToolIdx, Value)],
    ) -> impl Iterator<Item = ToolIdx> + 'b + use<'b>
    where
        'a: 'b,
    {
        let value = self.value;
        answers
            .iter()
            .filter(move |(_, v)| v == value)
            .map(|(t, _)| *t)
    }
}

/// The answers for one value grouped by what they say: each distinct value once, in order of
/// first appearance, with how many tools gave it (E-2.2 counts them, E-3.1 weighs them). A short
/// list: there are rarely more than two.
pub fn distinct_values(answers: &[(ToolIdx, Value)]) -> Vec<DistinctValue<'_>> {
    let mut distinct: Vec<DistinctValue<'_>> = Vec::with_capacity(2);
    for (_, value) in answers {
        match distinct.iter_mut().find(|d| d.value == value) {
            Some(d) => d.count += 1,
            None => distinct.push(DistinctValue { value, count: 1 }),
        }
    }
    distinct
}

/// A tool's standing against the set V (rule E-2.2; the 2015 report's Table 3 columns).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ToolTally {
    /// Values of V the tool answered ("selected").
    pub selected: u64,
    /// Values of V the tool answered with V's value ("correct", |V_tool|).
    pub correct: u64,
}

/// The contribution of some values to everyone's Confidence; tallies add up.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ConfidenceTally {
    /// |V| over the values tallied.
    pub agreed_values: u64,
    /// Per tool, indexed by [`ToolIdx`]; shorter than the tool list when later tools are absent.
    pub tools: Vec<ToolTally>,
}

impl ConfidenceTally {
    /// Rule E-2.2: adds one value (all its answers) to the tally: whether it is in V is decided
    /// by the votes ([`crate::votes::votes`]), and every answer, a variant's too, is counted
    /// against it.
    pub fn add_value(
        &mut self,
        answers: &[(ToolIdx, Value)],
        voters: &Voters,
        rules: &ConfidenceRules,
    ) {
        let cast = votes(answers, voters);
        let Some(agreed) = agreed_value(&cast, rules) else {
            return;
        };
        self.agreed_values += 1;
        for (tool, value) in answers {
            let t = self.tool_mut(*tool);
            t.selected += 1;
            if value == agreed {
                t.correct += 1;
            }
        }
    }

    fn tool_mut(&mut self, tool: ToolIdx) -> &mut ToolTally {
        let i = tool as usize;
        if self.tools.len() <= i {
            self.tools.resize(i + 1, ToolTally::default());
        }
        &mut self.tools[i]
    }

    pub fn merge(&mut self, other: &ConfidenceTally) {
        self.agreed_values += other.agreed_values;
        for (i, t) in other.tools.iter().enumerate() {
            let mine = self.tool_mut(i as ToolIdx);
            mine.selected += t.selected;
            mine.correct += t.correct;
        }
    }

    pub fn tool(&self, tool: ToolIdx) -> ToolTally {
        self.tools.get(tool as usize).copied().unwrap_or_default()
    }
}

/// Rule E-2.2: C_tool = |V_tool| / |V|, with the denominator the rules file chose (see
/// [`ConfidenceDenominator`]). A tool with no value in the denominator has Confidence 0: nothing
/// vouches for it, so its lonely answers are never trusted and it weighs nothing in a vote.
/// The fraction is exact (E-2.2's quotient, never rounded).
pub fn tool_confidence(tally: &ConfidenceTally, tool: ToolIdx, rules: &ConfidenceRules) -> Exact {
    let t = tally.tool(tool);
    let denominator = match rules.denominator {
        ConfidenceDenominator::Answered => t.selected,
        ConfidenceDenominator::All => tally.agreed_values,
    };
    if denominator == 0 {
        zero()
    } else {
        Exact::new(t.correct.into(), denominator.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exact::{int, ratio};

    fn rules(denominator: ConfidenceDenominator) -> ConfidenceRules {
        ConfidenceRules {
            min_agreeing: 3,
            denominator,
            votes: crate::edition::Votes::Tool,
        }
    }

    fn b(v: bool) -> Value {
        Value::Bool(v)
    }

    #[test]
    fn agreement_needs_a_strict_majority_and_three_tools() {
        let r = rules(ConfidenceDenominator::Answered);
        // 3 of 3 agree.
        assert_eq!(
            agreed_value(&[(0, b(true)), (1, b(true)), (2, b(true))], &r),
            Some(&b(true))
        );
        // 2 of 2 agree: a majority, but fewer than 3 tools.
        assert_eq!(agreed_value(&[(0, b(true)), (1, b(true))], &r), None);
        // 3 of 5 agree: 3 > 5/2.
        let five = [
            (0, b(true)),
            (1, b(true)),
            (2, b(false)),
            (3, b(true)),
            (4, b(false)),
        ];
        assert_eq!(agreed_value(&five, &r), Some(&b(true)));
        // 3 of 6 agree: 3 is not more than half of 6.
        let six = [
            (0, b(true)),
            (1, b(true)),
            (2, b(true)),
            (3, b(false)),
            (4, b(false)),
            (5, b(false)),
        ];
        assert_eq!(agreed_value(&six, &r), None);
        // Integers: 3 of 4 agree on 243.
        let ints = [
            (0, Value::Int(243)),
            (1, Value::Int(243)),
            (2, Value::Int(244)),
            (3, Value::Int(243)),
        ];
        assert_eq!(agreed_value(&ints, &r), Some(&Value::Int(243)));
        assert_eq!(agreed_value(&[], &r), None);
    }

    #[test]
    fn confidence_golden_scenario() {
        // Four tools, four values (E-2.2):
        //   v1: A=T B=T C=T D=F  -> 3 of 4 agree on T: in V; A,B,C correct, D wrong
        //   v2: A=5 B=5 C=5      -> in V; A,B,C correct
        //   v3: A=T B=F          -> only 2 tools: not in V
        //   v4: A=F B=T C=T D=T  -> in V (T); A wrong, B,C,D correct
        // |V| = 3.
        // answered: A = 2/3, B = 3/3, C = 3/3, D = 1/2
        // all:      A = 2/3, B = 3/3, C = 3/3, D = 1/3
        let values: Vec<Vec<(ToolIdx, Value)>> = vec![
            vec![(0, b(true)), (1, b(true)), (2, b(true)), (3, b(false))],
            vec![(0, Value::Int(5)), (1, Value::Int(5)), (2, Value::Int(5))],
            vec![(0, b(true)), (1, b(false))],
            vec![(0, b(false)), (1, b(true)), (2, b(true)), (3, b(true))],
        ];
        let answered = rules(ConfidenceDenominator::Answered);
        let mut tally = ConfidenceTally::default();
        for v in &values {
            tally.add_value(v, &Voters::default(), &answered);
        }
        assert_eq!(tally.agreed_values, 3);
        assert_eq!(
            tally.tool(0),
            ToolTally {
                selected: 3,
                correct: 2
            }
        );
        assert_eq!(
            tally.tool(3),
            ToolTally {
                selected: 2,
                correct: 1
            }
        );
        assert_eq!(tool_confidence(&tally, 0, &answered), ratio(2, 3));
        assert_eq!(tool_confidence(&tally, 1, &answered), int(1));
        assert_eq!(tool_confidence(&tally, 3, &answered), ratio(1, 2));
        let all = rules(ConfidenceDenominator::All);
        assert_eq!(tool_confidence(&tally, 3, &all), ratio(1, 3));
        // A tool that never answered a value of V.
        assert_eq!(tool_confidence(&tally, 7, &answered), int(0));
    }

    #[test]
    fn tallies_merge_like_one_tally() {
        let r = rules(ConfidenceDenominator::Answered);
        let v1 = vec![(0, b(true)), (1, b(true)), (2, b(true))];
        let v2 = vec![(2, b(false)), (3, b(false)), (4, b(false)), (0, b(true))];
        let mut whole = ConfidenceTally::default();
        whole.add_value(&v1, &Voters::default(), &r);
        whole.add_value(&v2, &Voters::default(), &r);
        let mut a = ConfidenceTally::default();
        a.add_value(&v1, &Voters::default(), &r);
        let mut c = ConfidenceTally::default();
        c.add_value(&v2, &Voters::default(), &r);
        a.merge(&c);
        assert_eq!(a, whole);
    }
}
