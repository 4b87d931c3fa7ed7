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
//! MEDIUM inputs only and are verified at a glance (docs/BENCHMARKS.md, issue 17, eighth
//! session).

use std::sync::Arc;

use mccbuild_core::{Measurement, Value};
use mccbuild_rules::confidence::{tool_confidence as confidence_rule, ConfidenceTally, ToolIdx};
use mccbuild_rules::edition::{
    AwardAggregate, AwardRules, CategoryId, ConfidenceRules, Edition, ModelKind, RankingRules,
    ScoringRules, TieBreak, TrustKind, TrustedRules,
};
use mccbuild_rules::exact::{zero, Exact, Sum};
use mccbuild_rules::podium::{
    self, category_total, weighted_points, weighted_sum, Awards, Completed, Entrant, Performance,
    Standing, Wins,
};
use mccbuild_rules::points::{examination_score, reported_measurement, ExamScore};
use mccbuild_rules::reference::{trusted_by_reference, Basis};
use mccbuild_rules::trusted::{
    contested_winner, decided_by_organisers, trusted_alone, trusted_by_ground_truth,
    trusted_value_with, Decision,
};
use mccbuild_rules::weights::{
    attainable_points, instance_weight, kind_multipliers, weight_scale, Weight,
};
use num_traits::Zero;

pub use crate::database::{ContestInputs, ExamInstanceInputs, Handles, RunInputs, ScoringDb};

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

/// The contest: its edition, tools, models and model examinations. The rules that the queries
/// per model examination or per tool read (E-2.2, E-3.1, E-4.1 to E-4.3) are also fields of
/// their own, so that an edit of one of them (`mccbuild watch` applies rules edits through
/// [`ScoringDb::set_edition`]) re-executes only the queries that read it; the contest-wide
/// queries read the rest through [`edition_shape`].
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
    /// trusted ([`tool_trusted_alone`], copied here by [`ScoringDb::settle`] when it changes).
    /// The trusted values read this input, not the query: see [`ModelExamination::decided`].
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
    /// contested value this model examination has ([`contested_decision`], copied here by
    /// [`ScoringDb::settle`] when it changes), sorted by shape.
    ///
    /// Why inputs (docs/BENCHMARKS.md, issue 17, eighth session): the Confidences move with
    /// every record, so every query reading them is LOW; a model examination's scores reading
    /// the decisions through queries were LOW too, and salsa walked every one of them after each
    /// record. Read from this input (and from [`ToolData::alone`]), the scores of a complete
    /// model examination depend on MEDIUM inputs only and are verified at a glance; the driver
    /// writes a decision only when it changes, which is rare.
    #[returns(ref)]
    pub decided: Arc<[ContestedDecision]>,
    /// What an earlier process computed of this model examination, when its inputs are the
    /// same (`crate::memo`): then its runs' fields are left empty, and [`agreement`] and
    /// [`exam_scores`] answer from here as long as the decisions it was computed under hold.
    /// Only the podium report reads such a database (`crate::memo::podium_report`).
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
fn gathered(db: &dyn salsa::Database, m: ModelExamination) -> Vec<ValueAnswers> {
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
    /// function that decides them says which decisions it asks for).
    pub fn of(answers: &[ValueAnswers]) -> DecisionNeeds {
        let mut needs = DecisionNeeds::default();
        for value in answers.iter().flat_map(ValueAnswers::iter) {
            let _ = trusted_value_with(
                value,
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
    let rules = m.contest(db).confidence_rules(db);
    let answers = gathered(db, m);
    let mut tally = ConfidenceTally::default();
    for value in answers.iter().flat_map(ValueAnswers::iter) {
        tally.add_value(value, rules);
    }
    Agreement {
        tally,
        needs: DecisionNeeds::of(&answers),
    }
}

/// How many model examinations a [`tally_chunk`] sums.
pub const TALLY_CHUNK: usize = 32;

/// Rule E-2.2 over the model examinations `chunk * TALLY_CHUNK ..` of the contest (the next
/// [`TALLY_CHUNK`]). A query of its own: the contest's tally adds ~40 of these instead of ~1,300
/// model examinations' tallies, and salsa verifies a chunk of complete model examinations
/// (MEDIUM inputs) in O(1) after a record elsewhere, instead of each of its members (the tally's
/// verification was a sixth of `mccbuild watch`'s time per record, docs/BENCHMARKS.md, seventh
/// session). The counts are integers: chunked or not, the same sum.
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

/// The trusted value of each value of each examination instance of a model examination: rule
/// E-3.1's vote (or the given truth, in a ground-truth contest), or, when the contest's basis
/// is its reference answers, those; then the organisers' decisions (E-6.3) where there are.
/// Decided by [`exam_scores`], which keeps them: one memo per model examination instead of two
/// (salsa verifies each model examination's memos after every record, as they read the
/// Confidences: docs/BENCHMARKS.md, seventh session).
pub fn trusted_values(db: &dyn salsa::Database, m: ModelExamination) -> &Vec<Vec<Decision>> {
    &exam_scores(db, m).decisions
}

/// [`trusted_values`], decided, from the model examination's answers by value.
fn decide(
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
                .map(|value| trusted_value_with(value, contested, alone))
                .collect()
        })
        .collect()
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

/// One tool's score on one examination of one instance.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolExamScore {
    pub tool: ToolIdx,
    pub score: ExamScore,
    /// Rule E-4.3: the run's measurement, reported when the tool computed all the trusted values.
    pub reported: Option<Measurement>,
}

/// The scores of a model examination: `[examination instance][tool taking part]` (through
/// `Deref`), and what they add up to per tool ([`ExamTotal`]), summed here once so that a
/// re-score adds the model examinations that changed, not all their examination instances again.
#[derive(Clone, Debug, PartialEq)]
pub struct ExamScores {
    /// The trusted values they are scored against ([`trusted_values`]).
    decisions: Vec<Vec<Decision>>,
    scores: Vec<Vec<ToolExamScore>>,
    /// Per tool taking part, in tool order.
    pub totals: Arc<[ExamTotal]>,
    /// Per examination instance, the runs that completed it (E-4.3's measurements), for E-4.5.
    pub completed: Arc<[Vec<Completed>]>,
}

impl std::ops::Deref for ExamScores {
    type Target = [Vec<ToolExamScore>];

    fn deref(&self) -> &Self::Target {
        &self.scores
    }
}

/// One tool's points over the examination instances of a model examination, and its time and
/// memory over those it completed (E-4.3), exactly.
#[derive(Clone, Debug, PartialEq)]
pub struct ExamTotal {
    pub tool: ToolIdx,
    pub points: Sum,
    pub completed: u32,
    pub cpu_s: Sum,
    pub peak_memory_mb: Sum,
}

/// Rules E-4.2 and E-4.3 for every tool that takes part in each examination instance of a model
/// examination (a tool that computed nothing scores 0 but takes part; one that said
/// DO_NOT_COMPETE does not: E-1.8).
#[salsa::tracked(returns(ref))]
pub fn exam_scores(db: &dyn salsa::Database, m: ModelExamination) -> ExamScores {
    if let Some(r) = m.remembered(db).as_ref().filter(|r| r.holds(db, m)) {
        return ExamScores {
            decisions: Vec::new(),
            scores: Vec::new(),
            totals: r.totals.clone(),
            completed: r.completed.clone(),
        };
    }
    let rules = m.contest(db).scoring_rules(db);
    let decisions = decide(db, m, &gathered(db, m));
    let (exam_instances, runs, competes, measurements) = (
        m.exam_instances(db),
        m.answers(db),
        m.competes(db),
        m.measurements(db),
    );
    let mut all = Vec::with_capacity(exam_instances.len());
    for (e, ei) in exam_instances.iter().enumerate() {
        let trusted: Vec<Option<Value>> = decisions[e].iter().map(|d| d.value.clone()).collect();
        let mut scores = Vec::new();
        for position in 0..ei.tools.len() {
            if !competes[e][position] {
                continue;
            }
            let score = examination_score(
                runs[e][position].iter().map(|(i, v)| (*i as usize, v)),
                &trusted,
                ei.scored as usize,
                rules,
            );
            let reported = reported_measurement(&score, &measurements[e][position]).copied();
            scores.push(ToolExamScore {
                tool: ei.tools[position],
                score,
                reported,
            });
        }
        all.push(scores);
    }
    let tools = all
        .iter()
        .flatten()
        .map(|s| s.tool as usize + 1)
        .max()
        .unwrap_or(0);
    let mut totals: Vec<Option<ExamTotal>> = vec![None; tools];
    for s in all.iter().flatten() {
        let total = totals[s.tool as usize].get_or_insert_with(|| ExamTotal {
            tool: s.tool,
            points: Sum::default(),
            completed: 0,
            cpu_s: Sum::default(),
            peak_memory_mb: Sum::default(),
        });
        if !s.score.points.is_zero() {
            total.points.add(&s.score.points);
        }
        if let Some(r) = s.reported {
            total.completed += 1;
            total.cpu_s.add_f64(r.cpu_time_s);
            total.peak_memory_mb.add_f64(r.peak_memory_mb());
        }
    }
    let completed: Vec<Vec<Completed>> = all
        .iter()
        .map(|instance| {
            instance
                .iter()
                .filter_map(|s| {
                    s.reported.map(|r| Completed {
                        tool: s.tool,
                        cpu_s: r.cpu_time_s,
                        peak_memory_mb: r.peak_memory_mb(),
                    })
                })
                .collect()
        })
        .collect();
    ExamScores {
        decisions,
        scores: all,
        totals: totals.into_iter().flatten().collect(),
        completed: completed.into(),
    }
}

/// What the contest-wide queries read of the edition besides `[scoring]`: the categories, the
/// model kinds (E-4.4), the ranking and awards (E-4.5). A firewall: an edit of another rule (a
/// threshold) leaves it equal, and [`weights`], [`category_scores`] and [`podiums`] are not
/// recomputed for that.
#[derive(Clone, Debug, PartialEq)]
pub struct EditionShape {
    pub categories: usize,
    /// The category of each examination.
    pub exam_category: Vec<CategoryId>,
    pub model_kinds: Vec<ModelKind>,
    pub default_model_kind: usize,
    pub ranking: RankingRules,
    pub awards: AwardRules,
}

#[salsa::tracked(returns(ref))]
pub fn edition_shape(db: &dyn salsa::Database, contest: ContestData) -> EditionShape {
    let edition = contest.edition(db);
    EditionShape {
        categories: edition.categories.len(),
        exam_category: edition.examinations.iter().map(|x| x.category).collect(),
        model_kinds: edition.model_kinds.clone(),
        default_model_kind: edition.default_model_kind,
        ranking: edition.ranking.clone(),
        awards: edition.awards.clone(),
    }
}

/// Rule E-4.4's factors of each examination instance of each model examination
/// (`[model examination][examination instance]`): the instance's weight within its model and
/// its model kind's multiplier in the examination's category.
#[salsa::tracked(returns(ref))]
pub fn weights(db: &dyn salsa::Database, contest: ContestData) -> Vec<Vec<Weight>> {
    let edition = edition_shape(db, contest);
    let scoring = contest.scoring_rules(db);
    let models = contest.models(db);
    let examinations = contest.examinations(db);
    let largest = models.iter().map(|m| m.instances).max().unwrap_or(1);
    let known = models
        .iter()
        .filter(|m| m.kind == edition.default_model_kind);
    let scale = weight_scale(
        scoring,
        known.clone().count(),
        known.map(|m| m.instances).sum(),
    );
    let model_weights: Vec<Exact> = models
        .iter()
        .map(|m| instance_weight(scoring, m.instances, largest) * &scale)
        .collect();
    let weight_of = |model: u32| model_weights[model as usize].clone();
    // The category, model kind and instance weight of every examination instance, in order.
    let shape = || {
        examinations.iter().flat_map(|m| {
            let model = m.model(db);
            m.exam_instances(db).iter().map(move |ei| {
                let category = edition.exam_category[ei.exam as usize];
                (category, models[model as usize].kind, weight_of(model))
            })
        })
    };
    let attainable = attainable_points(
        scoring,
        edition.categories,
        edition.model_kinds.len(),
        shape(),
    );
    let multipliers: Vec<Vec<Exact>> = attainable
        .iter()
        .map(|a| kind_multipliers(&edition.model_kinds, a))
        .collect();
    examinations
        .iter()
        .map(|m| {
            let model = m.model(db);
            let kind = models[model as usize].kind;
            m.exam_instances(db)
                .iter()
                .map(|ei| {
                    let category = edition.exam_category[ei.exam as usize];
                    Weight {
                        instance: weight_of(model),
                        kind: multipliers[category][kind].clone(),
                        category,
                    }
                })
                .collect()
        })
        .collect()
}

/// What one examination of one instance adds to one tool's total in its category (E-4.6).
#[derive(Clone, Debug, PartialEq)]
pub struct CategoryEntry {
    /// Index into the contest's model examinations, and of the examination instance there.
    pub examination: usize,
    pub exam_instance: usize,
    pub category: CategoryId,
    pub tool: ToolIdx,
    /// Its points, weighted (E-4.4), exactly.
    pub weighted: Exact,
    /// E-4.3: its measurement, when the examination is complete.
    pub reported: Option<Measurement>,
}

/// Every tool's entries of every category (explanations): their exact sum is the total of
/// [`category_scores`].
pub fn category_entries(
    db: &dyn salsa::Database,
    contest: ContestData,
) -> impl Iterator<Item = CategoryEntry> + '_ {
    let weights = weights(db, contest);
    contest
        .examinations(db)
        .iter()
        .zip(weights)
        .enumerate()
        .flat_map(move |(i, (m, w))| {
            exam_scores(db, *m)
                .iter()
                .zip(w)
                .enumerate()
                .flat_map(move |(j, (scores, w))| {
                    scores.iter().map(move |s| CategoryEntry {
                        examination: i,
                        exam_instance: j,
                        category: w.category,
                        tool: s.tool,
                        weighted: weighted_points(&s.score.points, w),
                        reported: s.reported,
                    })
                })
        })
}

/// Rule E-4.6's totals: per category, each tool's score, and its time and memory over the
/// examinations it completed (E-4.3).
#[derive(Clone, Debug, PartialEq)]
pub struct CategoryScores {
    /// `[category][tool]`, exact.
    pub scores: Vec<Vec<Exact>>,
    /// `[category][tool]`: the tool took part in some examination of the category.
    pub participating: Vec<Vec<bool>>,
    /// `[category][tool]`
    pub performance: Vec<Vec<Performance>>,
}

/// E-4.4's weights grouped: the model examinations whose examination instances share a
/// category and both weight factors (many models share them: same number of instances, same
/// kind). It depends on the contest's shape only, so it is computed once: a re-score sums each
/// group's points by index instead of hashing fractions again (hashing a big fraction expands it
/// into a continued fraction: it dominated the re-score after one run).
#[derive(Clone, Debug, PartialEq)]
pub struct WeightGroups {
    /// Per model examination, its group (None: it has no examination instance).
    pub of: Vec<Option<usize>>,
    /// Each group's weight (its category included).
    pub weights: Vec<Weight>,
    /// Each group's E-4.4 factor (`Weight::factor`), in machine words if it fits.
    pub factors: Vec<Sum>,
    /// Each group's model examinations (indices into the contest's), in order.
    pub members: Vec<Vec<usize>>,
}

#[salsa::tracked(returns(ref))]
pub fn weight_groups(db: &dyn salsa::Database, contest: ContestData) -> WeightGroups {
    let mut index: std::collections::HashMap<(CategoryId, &Exact, &Exact), usize> =
        std::collections::HashMap::new();
    let mut groups = WeightGroups {
        of: Vec::new(),
        weights: Vec::new(),
        factors: Vec::new(),
        members: Vec::new(),
    };
    for w in weights(db, contest) {
        let group = w.first().map(|weight| {
            *index
                .entry((weight.category, &weight.instance, &weight.kind))
                .or_insert_with(|| {
                    groups.weights.push(weight.clone());
                    groups.factors.push(Sum::from(weight.factor()));
                    groups.members.push(Vec::new());
                    groups.weights.len() - 1
                })
        });
        if let Some(g) = group {
            groups.members[g].push(groups.of.len());
        }
        groups.of.push(group);
    }
    groups
}

/// One weight group's totals (E-4.6 before E-4.4's weighting): per tool taking part in one of
/// its model examinations, in tool order, its points, and its time and memory over the
/// examinations it completed (E-4.3), summed exactly. A query of its own: a new record re-sums
/// the group of its model examination only, and [`category_scores`] weights and adds the
/// groups' totals (the sums over every model examination were a sixth of a re-score).
#[salsa::tracked(returns(ref))]
pub fn group_totals(db: &dyn salsa::Database, contest: ContestData, group: u32) -> Vec<ExamTotal> {
    let examinations = contest.examinations(db);
    let mut totals: Vec<Option<ExamTotal>> = vec![None; contest.tools(db).len()];
    for &i in &weight_groups(db, contest).members[group as usize] {
        for total in exam_scores(db, examinations[i]).totals.iter() {
            let Some(slot) = totals.get_mut(total.tool as usize) else {
                continue;
            };
            let sum = slot.get_or_insert_with(|| ExamTotal {
                tool: total.tool,
                points: Sum::default(),
                completed: 0,
                cpu_s: Sum::default(),
                peak_memory_mb: Sum::default(),
            });
            if !total.points.is_zero() {
                sum.points.merge(&total.points);
            }
            if total.completed > 0 {
                sum.completed += total.completed;
                sum.cpu_s.merge(&total.cpu_s);
                sum.peak_memory_mb.merge(&total.peak_memory_mb);
            }
        }
    }
    totals.into_iter().flatten().collect()
}

/// Rule E-4.6's totals of one category: each tool's score, whether it took part, and its time
/// and memory over the examinations it completed (E-4.3), in tool order.
#[derive(Clone, Debug, PartialEq)]
pub struct CategoryTotals {
    pub scores: Vec<Exact>,
    pub participating: Vec<bool>,
    pub performance: Vec<Performance>,
}

/// Rule E-4.6 for one category (a query per category: a record re-sums the category of its
/// model examination only; the others' totals are verified through their weight groups).
#[salsa::tracked(returns(ref))]
pub fn category_totals(
    db: &dyn salsa::Database,
    contest: ContestData,
    category: u32,
) -> CategoryTotals {
    let tools = contest.tools(db).len();
    let mut weighted: Vec<Vec<Sum>> = vec![Vec::new(); tools];
    // Per tool: completed examinations, time, memory.
    let mut performance = vec![(0u32, Sum::default(), Sum::default()); tools];
    let mut participating = vec![false; tools];
    // Every examination instance of a model examination has the same weight (one model, one
    // category), and many models share a weight (same number of instances, same kind): each
    // tool's points are summed per weight group first ([`group_totals`]: small fractions, in
    // machine words while they fit, see `Sum`), then weighted once. The same total as weighting
    // each entry (the weighting is linear and the arithmetic exact), with a few multiplications
    // per category instead of one per entry, in machine words while they fit (as the totals
    // are summed).
    let groups = weight_groups(db, contest);
    for (g, (weight, factor)) in groups.weights.iter().zip(&groups.factors).enumerate() {
        if weight.category != category as usize {
            continue;
        }
        for total in group_totals(db, contest, g as u32) {
            let t = total.tool as usize;
            participating[t] = true;
            if !total.points.is_zero() {
                weighted[t].push(weighted_sum(&total.points, factor));
            }
            if total.completed > 0 {
                let p = &mut performance[t];
                p.0 += total.completed;
                p.1.merge(&total.cpu_s);
                p.2.merge(&total.peak_memory_mb);
            }
        }
    }
    CategoryTotals {
        scores: weighted.into_iter().map(category_total).collect(),
        participating,
        performance: performance
            .into_iter()
            .map(|(completed, cpu, memory)| Performance {
                completed,
                cpu_s: cpu.value(),
                peak_memory_mb: memory.value(),
            })
            .collect(),
    }
}

/// Rule E-4.6's totals of every category ([`category_totals`], gathered).
pub fn category_scores(db: &dyn salsa::Database, contest: ContestData) -> CategoryScores {
    let mut all = CategoryScores {
        scores: Vec::new(),
        participating: Vec::new(),
        performance: Vec::new(),
    };
    for c in 0..edition_shape(db, contest).categories {
        let totals = category_totals(db, contest, c as u32);
        all.scores.push(totals.scores.clone());
        all.participating.push(totals.participating.clone());
        all.performance.push(totals.performance.clone());
    }
    all
}

/// The tools ranked on one category's podium (E-4.5's wins are counted among them).
#[salsa::interned(debug)]
pub struct Ranked<'db> {
    contest: ContestData,
    #[returns(ref)]
    tools: Vec<ToolIdx>,
}

/// E-4.5's wins among the `ranked` tools over the examination instances of one weight group's
/// model examinations (all of one category; from E-4.3's measurements of the runs that completed
/// each). A query of its own: a new record counts its group's wins again, and the podiums add the
/// other groups' as they were (the wins were counted over every examination instance of the
/// category on every re-score: 15-17 % of it, docs/BENCHMARKS.md, seventh session). Per group rather than per model examination: ~1,300 more memos to verify
/// after each record cost more than counting one group's.
#[salsa::tracked(returns(ref))]
pub fn group_wins<'db>(
    db: &'db dyn salsa::Database,
    contest: ContestData,
    group: u32,
    ranked: Ranked<'db>,
) -> Wins {
    let examinations = contest.examinations(db);
    let completed = weight_groups(db, contest).members[group as usize]
        .iter()
        .flat_map(|&i| exam_scores(db, examinations[i]).completed.iter());
    podium::count_wins(ranked.tools(db), completed)
}

/// One category's podium and awards.
#[derive(Clone, Debug, PartialEq)]
pub struct Podium {
    pub category: CategoryId,
    pub standings: Vec<Standing>,
    pub awards: Awards,
}

/// Rules E-4.5 and E-4.6: in each category, the tools that took part in it.
#[salsa::tracked(returns(ref))]
pub fn podiums(db: &dyn salsa::Database, contest: ContestData) -> Vec<Podium> {
    (0..edition_shape(db, contest).categories)
        .map(|c| category_podium(db, contest, c as u32).clone())
        .collect()
}

/// Rules E-4.5 and E-4.6 in one category (a query per category: a record ranks the category of
/// its model examination again, the others' podiums are verified).
#[salsa::tracked(returns(ref))]
pub fn category_podium(db: &dyn salsa::Database, contest: ContestData, category: u32) -> Podium {
    let edition = edition_shape(db, contest);
    let tools = contest.tools(db);
    let totals = category_totals(db, contest, category);
    let category = category as usize;
    let entrants: Vec<Entrant<'_>> = tools
        .iter()
        .enumerate()
        .filter(|(i, _)| totals.participating[*i])
        .map(|(i, t)| Entrant {
            tool: i as ToolIdx,
            name: &t.name,
            family: &t.family,
            competing: t.competing,
        })
        .collect();
    let success_cpu: Vec<Exact> = totals.performance.iter().map(|p| p.cpu_s.clone()).collect();
    let tie_break =
        (edition.ranking.tie_break == TieBreak::SuccessCpuTime).then_some(&success_cpu[..]);
    let standings = podium::podium(
        &entrants,
        &totals.scores,
        tie_break,
        edition.ranking.medal_needs_positive_score,
    );
    let awards = if !edition.awards.enabled {
        Awards::default()
    } else if edition.awards.aggregate == AwardAggregate::Wins {
        let ranked = podium::ranked_tools(&standings);
        let key = Ranked::new(db, contest, ranked.clone());
        let groups = weight_groups(db, contest);
        let wins: Vec<&Wins> = (0..groups.weights.len())
            .filter(|&g| groups.weights[g].category == category)
            .map(|g| group_wins(db, contest, g as u32, key))
            .collect();
        podium::awards_of_wins(&ranked, wins)
    } else {
        podium::awards(&standings, &totals.performance, edition.awards.aggregate)
    };
    Podium {
        category,
        standings,
        awards,
    }
}
