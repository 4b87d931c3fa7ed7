//! The incremental scoring engine (salsa).
//!
//! Inputs are the contest's entities and the answers of its runs; tracked queries only wire the
//! pure rule functions of [`crate::rules`] together:
//!
//! ```text
//! ei.answers ─────> value_groups(ei) ─> agreement(ei) ─> confidence_tally ─> tool_confidence(t)
//!                          │                                                        │
//!                          └──────────────> trusted_values(ei) <────────────────────┘ (only where tools disagree)
//!                                                 │
//! ei.perf, competes ─────────────────────> exam_scores(ei) ─> category_scores ─> podiums
//!                                 weights (E-4.4, from the plan's shape) ───┘
//! ```
//!
//! Dependencies are per field: a run's time and memory (`perf`) do not invalidate its value
//! groups. A trusted value recomputed to the same value stops the wave (early cutoff), and a
//! value on which all tools agree never reads any Confidence.

use std::sync::{Arc, Mutex};

use salsa::{Durability, Setter};

use crate::rules::confidence::{tool_confidence as confidence_rule, ConfidenceTally, ToolIdx};
use crate::rules::edition::{CategoryId, Edition, TrustKind};
use crate::rules::scoring::{self, Awards, Entrant, ExamScore, Performance, Standing};
use crate::rules::trusted::{trusted_value, Decision, TrustCase};
use crate::value::Value;

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

/// Time and memory of a run (rule E-4.3).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Perf {
    pub cpu_s: f64,
    pub peak_memory_mb: f64,
}

/// The answers of one run, by value index, sorted.
pub type Answers = Arc<[(u16, Value)]>;

#[salsa::input(debug)]
pub struct ContestData {
    #[returns(ref)]
    pub edition: Arc<Edition>,
    #[returns(ref)]
    pub tools: Arc<[ToolInfo]>,
    #[returns(ref)]
    pub models: Arc<[ModelInfo]>,
    #[returns(ref)]
    pub tool_data: Arc<[ToolData]>,
    #[returns(ref)]
    pub exam_instances: Arc<[ExamInstanceData]>,
}

#[salsa::input(debug)]
pub struct ToolData {
    #[returns(copy)]
    pub contest: ContestData,
    #[returns(copy)]
    pub index: u32,
}

/// One examination of one instance, with the runs planned for it. The runs' answers, whether
/// they take part, and their time and memory are three separate fields (a run's time does not
/// invalidate the values); they are per examination instance rather than per run so that the
/// dependency graph salsa verifies after a change stays small (docs/BENCHMARKS.md).
#[salsa::input(debug)]
pub struct ExamInstanceData {
    #[returns(copy)]
    pub contest: ContestData,
    #[returns(copy)]
    pub instance: u32,
    #[returns(copy)]
    pub model: u32,
    #[returns(copy)]
    pub exam: u32,
    #[returns(ref)]
    pub ids: Arc<[Arc<str>]>,
    /// The first `scored` values earn points (E-4.1); all count for E-2.2, E-3.1 and E-4.3.
    #[returns(copy)]
    pub scored: u32,
    /// Ground-truth contests: the expected value of each value id.
    #[returns(ref)]
    pub truth: Option<Arc<[Option<Value>]>>,
    /// The tool of each planned run.
    #[returns(ref)]
    pub tools: Arc<[u32]>,
    /// Each run's answers (empty until it is stored).
    #[returns(ref)]
    pub answers: Arc<[Answers]>,
    /// Each run is stored and its tool did not say DO_NOT_COMPETE: it takes part (E-1.8), even
    /// when it computed nothing.
    #[returns(ref)]
    pub competes: Arc<[bool]>,
    #[returns(ref)]
    pub perf: Arc<[Perf]>,
}

/// A planned run: its examination instance and its position there.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RunRef {
    pub ei: ExamInstanceData,
    pub position: usize,
}

/// For each value of an examination, every tool's answer: the groups E-2.2 and E-3.1 look at
/// (stored flat: one allocation per examination instance, not one per value).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ValueGroups {
    /// `answers[starts[i]..starts[i + 1]]` are the answers for value `i`.
    starts: Vec<u32>,
    answers: Vec<(ToolIdx, Value)>,
}

impl ValueGroups {
    pub fn len(&self) -> usize {
        self.starts.len().saturating_sub(1)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn group(&self, i: usize) -> &[(ToolIdx, Value)] {
        &self.answers[self.starts[i] as usize..self.starts[i + 1] as usize]
    }

    pub fn iter(&self) -> impl Iterator<Item = &[(ToolIdx, Value)]> {
        (0..self.len()).map(|i| self.group(i))
    }
}

#[salsa::tracked(returns(ref))]
pub fn value_groups(db: &dyn salsa::Database, ei: ExamInstanceData) -> ValueGroups {
    let values = ei.ids(db).len();
    let tools = ei.tools(db);
    let runs = ei.answers(db);
    let mut counts = vec![0u32; values + 1];
    let mut total = 0;
    for answers in runs.iter() {
        for (index, _) in answers.iter() {
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
    for (run_answers, &tool) in runs.iter().zip(tools.iter()) {
        for (index, value) in run_answers.iter() {
            let i = *index as usize;
            if i < values {
                answers[fill[i] as usize] = (tool, value.clone());
                fill[i] += 1;
            }
        }
    }
    ValueGroups { starts: counts, answers }
}

/// Rule E-2.2, for the values of one examination of one instance.
#[salsa::tracked(returns(ref))]
pub fn agreement(db: &dyn salsa::Database, ei: ExamInstanceData) -> ConfidenceTally {
    let edition = ei.contest(db).edition(db);
    let mut tally = ConfidenceTally::default();
    for group in value_groups(db, ei).iter() {
        tally.add_value(group, &edition.confidence);
    }
    tally
}

/// Rule E-2.2 over the whole contest.
#[salsa::tracked(returns(ref))]
pub fn confidence_tally(db: &dyn salsa::Database, contest: ContestData) -> ConfidenceTally {
    let mut tally = ConfidenceTally::default();
    for ei in contest.exam_instances(db).iter() {
        tally.merge(agreement(db, *ei));
    }
    tally
}

/// Rule E-2.2: one tool's Confidence (a query of its own, so that a change to one tool's
/// Confidence re-decides only the values that tool took part in).
#[salsa::tracked(returns(copy))]
pub fn tool_confidence(db: &dyn salsa::Database, tool: ToolData) -> f64 {
    let contest = tool.contest(db);
    confidence_rule(confidence_tally(db, contest), tool.index(db), &contest.edition(db).confidence)
}

/// Rule E-3.1: the trusted value of each value of one examination of one instance (or the given
/// truth, in a ground-truth contest).
#[salsa::tracked(returns(ref))]
pub fn trusted_values(db: &dyn salsa::Database, ei: ExamInstanceData) -> Vec<Decision> {
    let contest = ei.contest(db);
    let edition = contest.edition(db);
    if edition.info.trust == TrustKind::GroundTruth {
        let truth = ei.truth(db).clone().unwrap_or_else(|| vec![None; ei.ids(db).len()].into());
        return truth.iter().map(|v| Decision { value: v.clone(), case: TrustCase::GroundTruth }).collect();
    }
    let tools = contest.tool_data(db);
    let confidence = |t: ToolIdx| tools.get(t as usize).map_or(0.0, |tool| tool_confidence(db, *tool));
    value_groups(db, ei).iter().map(|group| trusted_value(group, confidence, &edition.trusted)).collect()
}

/// One tool's score on one examination of one instance.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolExamScore {
    pub tool: ToolIdx,
    pub score: ExamScore,
    /// Rule E-4.3: time and memory, when the tool computed all the trusted values.
    pub perf: Option<Perf>,
}

/// Rules E-4.2 and E-4.3 for every tool that takes part in this examination of this instance
/// (a tool that computed nothing scores 0 but takes part; one that said DO_NOT_COMPETE does not).
#[salsa::tracked(returns(ref))]
pub fn exam_scores(db: &dyn salsa::Database, ei: ExamInstanceData) -> Vec<ToolExamScore> {
    let edition = ei.contest(db).edition(db);
    let trusted: Vec<Option<Value>> = trusted_values(db, ei).iter().map(|d| d.value.clone()).collect();
    let mut scores = Vec::new();
    let (tools, runs, competes) = (ei.tools(db), ei.answers(db), ei.competes(db));
    for position in 0..tools.len() {
        if !competes[position] {
            continue;
        }
        let answers = &runs[position];
        let score = scoring::examination_score(answers.iter().map(|(i, v)| (*i as usize, v)), &trusted, ei.scored(db) as usize, &edition.scoring);
        let perf = score.complete.then(|| ei.perf(db)[position]);
        scores.push(ToolExamScore { tool: tools[position], score, perf });
    }
    scores
}

/// Rule E-4.4's factors of one examination instance.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Weight {
    /// Normalisation: the instance's share of its model's weight.
    pub instance: f64,
    /// The multiplier of its model's kind in its category.
    pub kind: f64,
    pub category: CategoryId,
}

impl Weight {
    pub fn factor(&self) -> f64 {
        self.instance * self.kind
    }
}

/// Rule E-4.4's factors of each examination instance: the instance's weight within its model
/// and its model kind's multiplier in the examination's category.
#[salsa::tracked(returns(ref))]
pub fn weights(db: &dyn salsa::Database, contest: ContestData) -> Vec<Weight> {
    let edition = contest.edition(db);
    let models = contest.models(db);
    let eis = contest.exam_instances(db);
    let largest = models.iter().map(|m| m.instances).max().unwrap_or(1);
    let instance_weight = |model: u32| {
        let m = &models[model as usize];
        scoring::instance_weight(&edition.scoring, m.instances, largest)
    };
    // Points each kind could attain per category, for share-of multipliers.
    let mut attainable = vec![vec![0.0; edition.model_kinds.len()]; edition.categories.len()];
    for ei in eis.iter() {
        let category = edition.examinations[ei.exam(db) as usize].category;
        let kind = models[ei.model(db) as usize].kind;
        attainable[category][kind] += edition.scoring.points_per_examination * instance_weight(ei.model(db));
    }
    let multipliers: Vec<Vec<f64>> = attainable.iter().map(|a| scoring::kind_multipliers(&edition.model_kinds, a)).collect();
    eis.iter()
        .map(|ei| {
            let category = edition.examinations[ei.exam(db) as usize].category;
            let kind = models[ei.model(db) as usize].kind;
            Weight { instance: instance_weight(ei.model(db)), kind: multipliers[category][kind], category }
        })
        .collect()
}

/// Rule E-4.6's totals: per category, each tool's score, and its time and memory over the
/// examinations it completed (E-4.3).
#[derive(Clone, Debug, PartialEq)]
pub struct CategoryScores {
    /// `[category][tool]`
    pub scores: Vec<Vec<f64>>,
    /// `[category][tool]`: the tool took part in some examination of the category.
    pub participating: Vec<Vec<bool>>,
    /// `[category][tool]`
    pub performance: Vec<Vec<Performance>>,
}

#[salsa::tracked(returns(ref))]
pub fn category_scores(db: &dyn salsa::Database, contest: ContestData) -> CategoryScores {
    let edition = contest.edition(db);
    let tools = contest.tools(db).len();
    let weights = weights(db, contest);
    let mut scores = vec![vec![0.0; tools]; edition.categories.len()];
    let mut performance = vec![vec![Performance::default(); tools]; edition.categories.len()];
    let mut participating = vec![vec![false; tools]; edition.categories.len()];
    for (ei, w) in contest.exam_instances(db).iter().zip(weights) {
        let (weight, category) = (w.factor(), w.category);
        for s in exam_scores(db, *ei) {
            participating[category][s.tool as usize] = true;
            scores[category][s.tool as usize] += s.score.points * weight;
            if let Some(p) = s.perf {
                performance[category][s.tool as usize].add(p.cpu_s, p.peak_memory_mb);
            }
        }
    }
    CategoryScores { scores, participating, performance }
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
    let edition = contest.edition(db);
    let tools = contest.tools(db);
    let totals = category_scores(db, contest);
    (0..edition.categories.len())
        .map(|category| {
            let entrants: Vec<Entrant<'_>> = tools
                .iter()
                .enumerate()
                .filter(|(i, _)| totals.participating[category][*i])
                .map(|(i, t)| Entrant { tool: i as ToolIdx, name: &t.name, family: &t.family, competing: t.competing })
                .collect();
            let success_cpu: Vec<f64> = totals.performance[category].iter().map(|p| p.cpu_s).collect();
            let tie_break = (edition.ranking.tie_break == crate::rules::edition::TieBreak::SuccessCpuTime).then_some(&success_cpu[..]);
            let standings = scoring::podium(&entrants, &totals.scores[category], tie_break);
            let awards = if edition.awards.enabled {
                scoring::awards(&standings, &totals.performance[category], edition.awards.aggregate)
            } else {
                Awards::default()
            };
            Podium { category, standings, awards }
        })
        .collect()
}

/// The database, with an optional log of executed queries (for incrementality tests and
/// `--explain-incremental` style diagnostics).
#[salsa::db]
#[derive(Clone)]
pub struct ScoringDb {
    storage: salsa::Storage<Self>,
    log: Arc<Mutex<Option<Vec<salsa::DatabaseKeyIndex>>>>,
}

#[salsa::db]
impl salsa::Database for ScoringDb {}

impl Default for ScoringDb {
    /// A database without event log (salsa builds an event for every validated memo when a
    /// callback is installed: it costs time at contest scale).
    fn default() -> Self {
        ScoringDb { storage: salsa::Storage::new(None), log: Arc::default() }
    }
}

impl ScoringDb {
    /// A database that records which queries execute (see [`ScoringDb::start_logging`]).
    pub fn with_log() -> Self {
        let log: Arc<Mutex<Option<Vec<salsa::DatabaseKeyIndex>>>> = Arc::default();
        let sink = log.clone();
        let storage = salsa::Storage::new(Some(Box::new(move |event: salsa::Event| {
            if let salsa::EventKind::WillExecute { database_key } = event.kind {
                if let Some(log) = sink.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
                    log.push(database_key);
                }
            }
        })));
        ScoringDb { storage, log }
    }

    /// Starts recording which queries execute (a database made by [`ScoringDb::with_log`]).
    pub fn start_logging(&self) {
        *self.log.lock().unwrap_or_else(|e| e.into_inner()) = Some(Vec::new());
    }

    /// The queries executed since the last call, by name (`value_groups`, `trusted_values`...).
    pub fn take_executed(&self) -> Vec<String> {
        let keys = self.log.lock().unwrap_or_else(|e| e.into_inner()).as_mut().map(std::mem::take).unwrap_or_default();
        keys.into_iter().map(|k| salsa::Database::ingredient_debug_name(self, k.ingredient_index()).into_owned()).collect()
    }
}

/// The shape of a contest for scoring: what [`ScoringDb`] is built from.
pub struct ContestShape<'a> {
    pub edition: Arc<Edition>,
    pub tools: Vec<ToolInfo>,
    pub models: Vec<ModelInfo>,
    /// Per examination instance: (instance, model, examination, ids, tools taking part).
    pub exam_instances: Vec<EiShape<'a>>,
}

/// One run, for [`ScoringDb::build`].
#[derive(Clone, Debug)]
pub struct RunShape {
    pub tool: u32,
    pub competes: bool,
    pub answers: Answers,
    pub perf: Perf,
}

pub struct EiShape<'a> {
    pub instance: u32,
    pub model: u32,
    pub exam: u32,
    pub ids: Arc<[Arc<str>]>,
    /// How many of `ids` (the first ones) earn points.
    pub scored: u32,
    /// Each planned run: tool, whether it takes part (stored, not DO_NOT_COMPETE), answers, perf.
    pub runs: Vec<RunShape>,
    pub truth: Option<Arc<[Option<Value>]>>,
    pub _marker: std::marker::PhantomData<&'a ()>,
}

/// Handles to a built contest.
pub struct Handles {
    pub contest: ContestData,
    pub exam_instances: Vec<ExamInstanceData>,
}

impl Handles {
    /// The `position`-th planned run of examination instance `ei`.
    pub fn run(&self, ei: usize, position: usize) -> RunRef {
        RunRef { ei: self.exam_instances[ei], position }
    }
}

impl ScoringDb {
    /// Creates the inputs of a contest. The shape (edition, tools, models, which runs exist) has
    /// high durability; answers and performance are the low-durability inputs that change.
    pub fn build(&mut self, shape: ContestShape<'_>) -> Handles {
        let contest = ContestData::builder(shape.edition, shape.tools.into(), shape.models.into(), Arc::from(Vec::new()), Arc::from(Vec::new()))
            .durability(Durability::HIGH)
            .new(self);
        let tool_count = contest.tools(self).len();
        let tool_data: Vec<ToolData> = (0..tool_count as u32).map(|i| ToolData::builder(contest, i).durability(Durability::HIGH).new(self)).collect();
        let mut eis = Vec::with_capacity(shape.exam_instances.len());
        for e in shape.exam_instances {
            let tools: Arc<[u32]> = e.runs.iter().map(|r| r.tool).collect();
            let competes: Arc<[bool]> = e.runs.iter().map(|r| r.competes).collect();
            let perf: Arc<[Perf]> = e.runs.iter().map(|r| r.perf).collect();
            let answers: Arc<[Answers]> = e.runs.into_iter().map(|r| r.answers).collect();
            let ei = ExamInstanceData::builder(contest, e.instance, e.model, e.exam, e.ids, e.scored, e.truth, tools, answers, competes, perf)
                .contest_durability(Durability::HIGH)
                .instance_durability(Durability::HIGH)
                .model_durability(Durability::HIGH)
                .exam_durability(Durability::HIGH)
                .ids_durability(Durability::HIGH)
                .scored_durability(Durability::HIGH)
                .truth_durability(Durability::HIGH)
                .tools_durability(Durability::HIGH)
                .new(self);
            eis.push(ei);
        }
        contest.set_tool_data(self).with_durability(Durability::HIGH).to(tool_data.into());
        contest.set_exam_instances(self).with_durability(Durability::HIGH).to(eis.clone().into());
        Handles { contest, exam_instances: eis }
    }

    /// Sets a run's answers, only if they changed (salsa setters always invalidate).
    pub fn set_answers(&mut self, run: RunRef, answers: Answers) {
        let all = run.ei.answers(self);
        if all[run.position] != answers {
            let mut new: Vec<Answers> = all.to_vec();
            new[run.position] = answers;
            run.ei.set_answers(self).to(new.into());
        }
    }

    /// Sets whether a run takes part, only if it changed.
    pub fn set_competes(&mut self, run: RunRef, competes: bool) {
        let all = run.ei.competes(self);
        if all[run.position] != competes {
            let mut new: Vec<bool> = all.to_vec();
            new[run.position] = competes;
            run.ei.set_competes(self).to(new.into());
        }
    }

    /// Sets a run's time and memory, only if they changed.
    pub fn set_perf(&mut self, run: RunRef, perf: Perf) {
        let all = run.ei.perf(self);
        if all[run.position] != perf {
            let mut new: Vec<Perf> = all.to_vec();
            new[run.position] = perf;
            run.ei.set_perf(self).to(new.into());
        }
    }

    /// A run's tool and answers.
    pub fn run_answers(&self, run: RunRef) -> (u32, Answers) {
        (run.ei.tools(self)[run.position], run.ei.answers(self)[run.position].clone())
    }
}
