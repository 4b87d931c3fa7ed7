//! Rules E-2.2 and E-3.1: who votes, every `[[tool]]` entry or one vote per family
//! (`[confidence] votes`).

use std::borrow::Cow;

use crate::confidence::ToolIdx;
use crate::edition::Votes;
use mccbuild_core::value::Value;

/// Whose vote each tool's answer is: the tool itself (`votes = "tool"`), or the first entry of
/// its family in the manifest (`votes = "family"`). Built once per contest from the tools'
/// families in manifest order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Voters {
    /// `voter[t]`: the tool whose vote tool `t`'s answers are; empty when every tool votes for
    /// itself.
    voter: Vec<ToolIdx>,
}

impl Voters {
    /// The voters of tools whose families are `families`, in manifest order.
    pub fn new<'a>(families: impl IntoIterator<Item = &'a str>, reading: Votes) -> Voters {
        if reading == Votes::Tool {
            return Voters::default();
        }
        let families: Vec<&str> = families.into_iter().collect();
        let voter: Vec<ToolIdx> = families
            .iter()
            .enumerate()
            .map(|(i, f)| families.iter().position(|g| g == f).unwrap_or(i) as ToolIdx)
            .collect();
        let every_tool_alone = voter.iter().enumerate().all(|(i, v)| i as ToolIdx == *v);
        if every_tool_alone {
            Voters::default()
        } else {
            Voters { voter }
        }
    }

    /// The voter of tool `t`.
    pub fn of(&self, t: ToolIdx) -> ToolIdx {
        self.voter.get(t as usize).copied().unwrap_or(t)
    }

    /// Whether every tool votes for itself.
    pub fn each_tool_votes(&self) -> bool {
        self.voter.is_empty()
    }
}

/// Rules E-2.2 ("a majority of tools agree on the same value, and at least 3 tools agree") and
/// E-3.1 ("evaluated according to the majority of the participating tools ... each tool is
/// weighted by its Confidence"): the votes cast on one value, from its answers.
///
/// With every tool voting, the answers themselves. With one vote per family, each family's
/// variants count once for each distinct value they gave: the answer of the family's first
/// entry (in manifest order) among those that gave it stands for them, so the family weighs its
/// Confidence in E-3.1; the others are left out of the vote (their own Confidence still counts
/// their answers against V, E-2.2). The votes keep the answers' order.
pub fn votes<'a>(answers: &'a [(ToolIdx, Value)], voters: &Voters) -> Cow<'a, [(ToolIdx, Value)]> {
    if voters.each_tool_votes() {
        return Cow::Borrowed(answers);
    }
    // The representative of each (family, value): the lowest tool index that gave it.
    let mut cast: Vec<(ToolIdx, &Value, ToolIdx)> = Vec::with_capacity(answers.len());
    for (t, v) in answers {
        let family = voters.of(*t);
        match cast.iter_mut().find(|(f, w, _)| *f == family && *w == v) {
            Some((_, _, rep)) => *rep = (*rep).min(*t),
            None => cast.push((family, v, *t)),
        }
    }
    if cast.len() == answers.len() {
        return Cow::Borrowed(answers);
    }
    Cow::Owned(
        answers
            .iter()
            .filter(|(t, v)| cast.iter().any(|(_, w, rep)| rep == t && *w == v))
            .cloned()
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(v: bool) -> Value {
        Value::Bool(v)
    }

    #[test]
    fn every_tool_votes_unless_the_edition_counts_families() {
        // Tools 0 and 2 are variants of "a", 1 is "b", 3 is "c".
        let families = ["a", "b", "a", "c"];
        let answers = [(0, b(true)), (1, b(false)), (2, b(true)), (3, b(true))];
        let tool = Voters::new(families, Votes::Tool);
        assert_eq!(votes(&answers, &tool).as_ref(), &answers);
        let family = Voters::new(families, Votes::Family);
        assert_eq!(family.of(2), 0);
        assert_eq!(family.of(3), 3);
        // Variant 2 agrees with 0: one vote, tool 0's.
        assert_eq!(
            votes(&answers, &family).as_ref(),
            &[(0, b(true)), (1, b(false)), (3, b(true))]
        );
        // Variants that disagree vote once for each value: both stay.
        let split = [(0, b(true)), (2, b(false)), (1, b(false))];
        assert_eq!(votes(&split, &family).as_ref(), &split);
        // The family's first entry stands for it even when it comes later in the answers.
        let late = [(2, b(true)), (1, b(false)), (0, b(true))];
        assert_eq!(
            votes(&late, &family).as_ref(),
            &[(1, b(false)), (0, b(true))]
        );
        // Without a family of two entries, nothing changes.
        assert!(Voters::new(["a", "b"], Votes::Family).each_tool_votes());
    }
}
