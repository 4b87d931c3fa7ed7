//! The Confidences (E-2.2) and the Confidence-dependent decisions of E-3.1, queries of the whole
//! contest: the tally per chunk of model examinations and over the contest, each tool's
//! Confidence and whether its lone answers are trusted, and the decision per shape of contested
//! value. The driver ([`crate::database`]) copies the decisions into inputs when they change.

use mccbuild_rules::confidence::{ConfidenceTally, ToolIdx, tool_confidence as confidence_rule};
use mccbuild_rules::exact::{Exact, zero};
use mccbuild_rules::trusted::{contested_winner, trusted_alone};

use super::{ContestData, ToolData, agreement};

/// How many model examinations a [`tally_chunk`] sums.
pub const TALLY_CHUNK: usize = 32;

/// Rule E-2.2 over the model examinations `chunk * TALLY_CHUNK ..` of the contest (the next
/// [`TALLY_CHUNK`]). A query of its own: the contest's tally adds ~40 of these instead of ~1,300
/// model examinations' tallies, and salsa verifies a chunk of complete model examinations
/// (MEDIUM inputs) in O(1) after a record elsewhere, instead of each of its members (the tally's
/// verification was a sixth of `mccbuild watch`'s time per record, docs/BENCHMARKS.md). The
/// counts are integers: chunked or not, the same sum.
#[salsa::tracked(returns(ref))]
pub fn tally_chunk(db: &dyn salsa::Database, contest: ContestData, chunk: u32) -> ConfidenceTally {
    let mut tally = ConfidenceTally::default();
    for m in contest
        .examinations(db)
        .iter()
        .skip(chunk as usize * TALLY_CHUNK)
        .take(TALLY_CHUNK)
    {
        tally.merge(&agreement(db, *m).tally);
    }
    tally
}

/// Rule E-2.2 over the whole contest (the sum of its [`tally_chunk`]s).
#[salsa::tracked(returns(ref))]
pub fn confidence_tally(db: &dyn salsa::Database, contest: ContestData) -> ConfidenceTally {
    contest.low(db);
    let mut tally = ConfidenceTally::default();
    for chunk in 0..contest.examinations(db).len().div_ceil(TALLY_CHUNK) {
        tally.merge(tally_chunk(db, contest, chunk as u32));
    }
    tally
}

/// Rule E-2.2: one tool's Confidence (a query of its own, so that a change to one tool's
/// Confidence re-decides only the values that tool took part in).
#[salsa::tracked(returns(ref))]
pub fn tool_confidence(db: &dyn salsa::Database, tool: ToolData) -> Exact {
    let contest = tool.contest(db);
    confidence_rule(
        confidence_tally(db, contest),
        tool.index(db),
        contest.confidence_rules(db),
    )
}

/// Rule E-3.1, fourth situation: whether a value this tool computed alone is trusted. A query of
/// its own so that a small change of the tool's Confidence, which leaves this answer as it was,
/// stops there instead of re-deciding every value the tool computed alone.
#[salsa::tracked(returns(copy))]
pub fn tool_trusted_alone(db: &dyn salsa::Database, tool: ToolData) -> bool {
    trusted_alone(
        tool_confidence(db, tool),
        tool.contest(db).trusted_rules(db),
    )
}

/// The shape of a contested value: the tools behind each distinct answer, in order of first
/// appearance. Values of the same shape share one decision.
#[salsa::interned(debug)]
pub struct Contested<'db> {
    contest: ContestData,
    #[returns(ref)]
    classes: Vec<Vec<ToolIdx>>,
}

/// Rule E-3.1, second and third situations, for one shape of contested value: which class is
/// trusted. Its result changes only when a Confidence change moves the decision.
#[salsa::tracked(returns(copy))]
pub fn contested_decision<'db>(db: &'db dyn salsa::Database, shape: Contested<'db>) -> Option<u32> {
    let contest = shape.contest(db);
    let tools = contest.tool_data(db);
    let confidence = |t: ToolIdx| {
        tools
            .get(t as usize)
            .map_or_else(zero, |tool| tool_confidence(db, *tool).clone())
    };
    contested_winner(shape.classes(db), confidence, contest.trusted_rules(db)).map(|i| i as u32)
}
