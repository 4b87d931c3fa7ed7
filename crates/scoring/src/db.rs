//! The incremental scoring database (salsa): inputs are the contest's shape and the answers of
//! its runs; tracked queries only wire the pure rule functions of `mccbuild-rules` together.
//!
//! ```text
//! answers ─> agreement(m) ─> tally_chunk ─> confidence_tally ─> tool_confidence(t) ─> tool_trusted_alone(t)
//!   │            │ (E-2.2's counts, and the decisions its values need)       └──────> contested_decision(shape)
//!   │            └─────────────────────┐                                                   │
//!   │                         ScoringDb::settle (the driver) writes the decisions that changed ┘
//!   │                                   ▼
//!   │                        ToolData::alone, ModelExamination::decided (inputs)
//!   │                                   │
//!   └──────────────> exam_scores(m): trusted values, then scores
//!                                      │
//! competes, measurements ──────────────┘──> group_totals, group_wins ─> category_scores ─> podiums
//!                          weights (E-4.4, from the plan's shape) ──┘
//! ```
//!
//! The unit (`m`) is one examination on the instances of one model, a [`ModelExamination`]:
//! after a change salsa validates every memo on the way once, and at contest scale (24,000
//! examination instances) one memo per examination instance cost more to validate than the whole
//! re-score (docs/BENCHMARKS.md). Dependencies are per field: a run's time and memory do not
//! invalidate its answers. A trusted value recomputed to the same value stops the wave (early
//! cutoff), and a value on which all tools agree never reads any Confidence.
//!
//! The Confidence-dependent decisions of E-3.1 reach the scores through inputs, not queries: the
//! Confidences move with every record, so everything reading them is LOW, and salsa walked the
//! scores of every model examination after each record. [`ScoringDb::settle`] (run at the end
//! of every change, [`crate::database::Changes`]) computes the decisions with their queries and
//! writes only those that changed; the scores of a complete model examination then depend on
//! MEDIUM inputs only and are verified at a glance (docs/BENCHMARKS.md).
//!
//! One file per layer: the inputs (`inputs`); per model examination, its answers by value and
//! what they agree on before any Confidence (`answers`), its trusted values (`trusted`) and its
//! scores (`examination_scores`); per contest, the Confidences and the decisions that depend on
//! them (`confidence`), E-4.4's weights (`weight`), E-4.6's totals (`categories`) and E-4.5's
//! podiums (`podium`). The driver that settles the decisions is [`crate::database`].

mod answers;
mod categories;
mod confidence;
mod examination_scores;
mod inputs;
mod podium;
mod trusted;
mod weight;

pub use crate::database::{ContestInputs, ExamInstanceInputs, Handles, RunInputs, ScoringDb};

pub use answers::{Agreement, DecisionNeeds, ValueAnswers, agreement, value_answers, voters};
pub use categories::{
    CategoryEntry, CategoryScores, CategoryTotals, category_entries, category_scores,
    category_totals, group_totals,
};
pub use confidence::{
    Contested, TALLY_CHUNK, confidence_tally, contested_decision, tally_chunk, tool_confidence,
    tool_trusted_alone,
};
pub use examination_scores::{ExamScores, ExamTotal, ToolExamScore, exam_scores};
pub use inputs::{
    Answers, ContestData, ContestedDecision, ExamInstance, ModelExamination, ModelInfo, RunRef,
    ToolData, ToolInfo,
};
pub use podium::{Podium, Ranked, category_podium, group_wins, podiums};
pub use trusted::{reference_decisions, trusted_values, undecided_values, vote_decisions};
pub use weight::{EditionShape, WeightGroups, edition_shape, weight_groups, weights};
