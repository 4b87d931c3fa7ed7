//! The salsa inputs of the scoring database: the contest ([`ContestData`]: the edition and the
//! rules the queries read, tools, models), one [`ToolData`] per tool, and one
//! [`ModelExamination`] per model and examination with its runs' answers, taking part and
//! measurements; with the decisions the driver settles (`ToolData::alone`,
//! `ModelExamination::decided`) and what scoring needs to know of tools, models and runs.

use std::sync::Arc;

use mccbuild_core::{Measurement, Value};
use mccbuild_rules::confidence::ToolIdx;
use mccbuild_rules::edition::{ConfidenceRules, Edition, ScoringRules, TrustKind, TrustedRules};
use mccbuild_rules::reference::Basis;

/// What scoring needs to know of a tool.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ToolInfo {
    pub name: String,
    pub family: String,
    pub competing: bool,
}

/// What scoring needs to know of a model.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ModelInfo {
    pub name: String,
    /// Index into the edition's model kinds.
    pub kind: usize,
    pub instances: usize,
}

/// The answers of one run, by value index, sorted.
pub type Answers = Arc<[(u16, Value)]>;

/// The contest: its edition, tools, models and model examinations. The rules that the queries per
/// model examination or per tool read (E-2.2, E-3.1, E-4.1 to E-4.3) are also fields of their own,
/// so that an edit of one of them (`mccbuild watch` applies rules edits through
/// [`ScoringDb::set_edition`](super::ScoringDb::set_edition)) re-executes only the queries that
/// read it; the contest-wide queries read the rest through [`edition_shape`](super::edition_shape).
#[salsa::input(debug)]
pub struct ContestData {
    /// The whole edition (always the same as the fields below).
    #[returns(ref)]
    pub edition: Arc<Edition>,
    /// `[confidence]`: E-2.2.
    #[returns(ref)]
    pub confidence_rules: Arc<ConfidenceRules>,
    /// `[trusted]`: E-3.1.
    #[returns(ref)]
    pub trusted_rules: Arc<TrustedRules>,
    /// `[scoring]`: E-4.1 to E-4.4.
    #[returns(ref)]
    pub scoring_rules: Arc<ScoringRules>,
    /// How trusted values are found: voted (E-3.1) or given.
    #[returns(copy)]
    pub trust: TrustKind,
    #[returns(ref)]
    pub tools: Arc<[ToolInfo]>,
    #[returns(ref)]
    pub models: Arc<[ModelInfo]>,
    #[returns(ref)]
    pub tool_data: Arc<[ToolData]>,
    #[returns(ref)]
    pub examinations: Arc<[ModelExamination]>,
    /// What the trusted values are: the vote (E-3.1, the default) or the reference answers.
    #[returns(copy)]
    pub basis: Basis,
    /// Nothing, at LOW durability, never set: E-2.2's tally reads it so that the tally, and every
    /// query reading a Confidence, is LOW from the start. The runs of a complete model
    /// examination are MEDIUM (`ScoringDb::build`); were the tally MEDIUM while every model
    /// examination is complete, the first new record would lower it, and salsa does not backdate
    /// a result whose durability dropped: every value reading a Confidence would be re-decided
    /// once, equal or not.
    #[returns(copy)]
    pub low: (),
}

#[salsa::input(debug)]
pub struct ToolData {
    #[returns(copy)]
    pub contest: ContestData,
    #[returns(copy)]
    pub index: u32,
    /// Rule E-3.1, fourth situation, as last settled: whether a value this tool alone computed is
    /// trusted ([`tool_trusted_alone`](super::tool_trusted_alone), copied here by
    /// [`ScoringDb::settle`](super::ScoringDb::settle) when it changes). The trusted values read
    /// this input, not the query: see [`ModelExamination::decided`].
    #[returns(copy)]
    pub alone: bool,
}

/// One examination of one instance, as scoring sees it: the values it asks for and the tools
/// whose runs are planned.
#[derive(Clone, Debug, PartialEq)]
pub struct ExamInstance {
    pub exam: u32,
    pub ids: Arc<[Arc<str>]>,
    /// The first `scored` values earn points (E-4.1); all count for E-2.2, E-3.1 and E-4.3.
    pub scored: u32,
    /// Ground-truth contests: the expected value of each value id.
    pub truth: Option<Arc<[Option<Value>]>>,
    /// The tool of each planned run.
    pub tools: Arc<[u32]>,
}

/// The unit of scoring inputs and queries: one examination on the instances of one model (its
/// `exam_instances`) and, per examination instance, the runs planned for it. The runs' answers,
/// whether they take part, and their measurements are three separate fields (a run's time does
/// not invalidate the values).
///
/// Why this grain (docs/BENCHMARKS.md): salsa verifies every memo on the way to a changed input,
/// so one input per examination instance (~20,000 at MCC scale, times five queries) costs tens of
/// milliseconds per change; one per model and examination (~1,300) keeps that to a few. Grouping
/// by examination rather than by instance means a tool rerun on one examination recomputes that
/// examination's values only. All its examination instances share the model, hence its E-4.4
/// weight.
#[salsa::input(debug)]
pub struct ModelExamination {
    #[returns(copy)]
    pub contest: ContestData,
    #[returns(copy)]
    pub model: u32,
    #[returns(ref)]
    pub exam_instances: Arc<[ExamInstance]>,
    /// Per examination instance, each run's answers (empty until it is stored).
    #[returns(ref)]
    pub answers: Arc<[Arc<[Answers]>]>,
    /// Per examination instance, each run is stored and takes part (E-1.8: it did not say
    /// DO_NOT_COMPETE), even when it computed nothing.
    #[returns(ref)]
    pub competes: Arc<[Arc<[bool]>]>,
    /// Per examination instance, each run's measurement.
    #[returns(ref)]
    pub measurements: Arc<[Arc<[Measurement]>]>,
    /// Per examination instance, the reference answer of each value (`[reference]`), if the
    /// reference gives it; a field of its own: a new reference re-scores without touching the
    /// answers.
    #[returns(ref)]
    pub reference: Arc<[Option<Arc<[Option<Value>]>>]>,
    /// Per examination instance, the organisers' decided value of each value (`[contest]
    /// corrections`, E-6.3), if any is decided there; a field of its own: new corrections
    /// re-score without touching the answers or the Confidences.
    #[returns(ref)]
    pub corrections: Arc<[Option<Arc<[Option<Value>]>>]>,
    /// Rule E-3.1, second and third situations, as last settled: the decision of each shape of
    /// contested value this model examination has
    /// ([`contested_decision`](super::contested_decision), copied here by
    /// [`ScoringDb::settle`](super::ScoringDb::settle) when it changes), sorted by shape.
    ///
    /// Why inputs (docs/BENCHMARKS.md): the Confidences move with every record, so every query
    /// reading them is LOW; a model examination's scores reading the decisions through queries were
    /// LOW too, and salsa walked every one of them after each record. Read from this input (and
    /// from [`ToolData::alone`]), the scores of a complete model examination depend on MEDIUM
    /// inputs only and are verified at a glance; the driver writes a decision only when it changes,
    /// which is rare.
    #[returns(ref)]
    pub decided: Arc<[ContestedDecision]>,
    /// What an earlier process computed of this model examination, when its inputs are the same
    /// (`crate::memo`): then its runs' fields are left empty, and [`agreement`](super::agreement)
    /// and [`exam_scores`](super::exam_scores) answer from here as long as the decisions it was
    /// computed under hold. Only the podium report reads such a database
    /// (`crate::memo::podium_report`).
    #[returns(ref)]
    pub remembered: Option<Arc<crate::memo::Remembered>>,
}

/// A shape of contested value (the tools behind each distinct answer, in order of first
/// appearance) and its decision: the index of the trusted class, None when no class wins.
pub type ContestedDecision = (Vec<Vec<ToolIdx>>, Option<u32>);

/// A planned run: its model examination, the examination instance there and its position.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RunRef {
    pub examination: ModelExamination,
    pub exam_instance: usize,
    pub position: usize,
}
