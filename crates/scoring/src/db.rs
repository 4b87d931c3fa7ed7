//! The incremental scoring engine (salsa).
//!
//! Inputs are the contest's entities and the answers of its runs; tracked queries only wire the
//! pure rule functions of [`crate::rules`] together:
//!
//! ```text
//! instance.answers ─> value_groups(i) ─> agreement(i) ─> confidence_tally ─> tool_confidence(t)
//!                           │                                                       │
//!                           └───────────> trusted_values(i) <───────────────────────┘ (only where tools disagree)
//!                                                │
//! instance.perf, competes ──────────────> exam_scores(i) ─> category_scores ─> podiums
//!                                 weights (E-4.4, from the plan's shape) ──┘
//! ```
//!
//! The unit is one instance with all its examinations (queries return one entry per
//! examination): after a change salsa validates every memo once, and at contest scale (24,000
//! examination instances) one memo per examination instance cost more to validate than the whole
//! re-score (docs/BENCHMARKS.md). Dependencies are per field: a run's time and memory (`perf`)
//! do not invalidate its value groups. A trusted value recomputed to the same value stops the
//! wave (early cutoff), and a value on which all tools agree never reads any Confidence.

use std::sync::{Arc, Mutex};

use salsa::{Durability, Setter};

use mccbuild_core::value::Value;
use mccbuild_rules::confidence::{tool_confidence as confidence_rule, ConfidenceTally, ToolIdx};
use mccbuild_rules::edition::{CategoryId, Edition, TrustKind};
use mccbuild_rules::scoring::{self, Awards, Entrant, ExamScore, Performance, Standing};
use mccbuild_rules::trusted::{
    contested_winner, trusted_alone, trusted_value_with, Decision, TrustCase,
};

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
    pub groups: Arc<[RunGroup]>,
}

#[salsa::input(debug)]
pub struct ToolData {
    #[returns(copy)]
    pub contest: ContestData,
    #[returns(copy)]
    pub index: u32,
}

/// One examination instance of a group: the values it asks for and the tools whose runs are
/// planned.
#[derive(Clone, Debug, PartialEq)]
pub struct ExamSlot {
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
/// `slots`, one per examination instance) and, per slot, the runs planned for it. The runs'
/// answers, whether they take part, and their time and memory are three separate fields (a run's
/// time does not invalidate the values).
///
/// Why this grain (docs/BENCHMARKS.md): salsa verifies every memo on the way to a changed input,
/// so one input per examination instance (~20,000 at MCC scale, times five queries) costs tens of
/// milliseconds per change; one per model and examination (~1,300) keeps that to a few. Grouping
/// by examination rather than by instance means a tool rerun on one examination recomputes that
/// examination's values only. All slots of a group share the model, hence its E-4.4 weight.
#[salsa::input(debug)]
pub struct RunGroup {
    #[returns(copy)]
    pub contest: ContestData,
    #[returns(copy)]
    pub model: u32,
    #[returns(ref)]
    pub slots: Arc<[ExamSlot]>,
    /// Per slot, each run's answers (empty until it is stored).
    #[returns(ref)]
    pub answers: Arc<[Arc<[Answers]>]>,
    /// Per slot, each run is stored and its tool did not say DO_NOT_COMPETE: it takes part
    /// (E-1.8), even when it computed nothing.
    #[returns(ref)]
    pub competes: Arc<[Arc<[bool]>]>,
    #[returns(ref)]
    pub perf: Arc<[Arc<[Perf]>]>,
}

/// A planned run: its group, examination-instance slot and position there.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RunRef {
    pub group: RunGroup,
    pub slot: usize,
    pub position: usize,
}

/// For each value of an examination, every tool's answer: the groups E-2.2 and E-3.1 look at
/// (stored flat: one allocation per examination, not one per value).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ValueGroups {
    /// `answers[starts[i]..starts[i + 1]]` are the answers for value `i`.
    starts: Vec<u32>,
    answers: Vec<(ToolIdx, Value)>,
}

impl ValueGroups {
    /// Groups the answers of the runs of one examination.
    pub fn of(values: usize, tools: &[u32], runs: &[Answers]) -> ValueGroups {
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
        ValueGroups {
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

    pub fn group(&self, i: usize) -> &[(ToolIdx, Value)] {
        &self.answers[self.starts[i] as usize..self.starts[i + 1] as usize]
    }

    pub fn iter(&self) -> impl Iterator<Item = &[(ToolIdx, Value)]> {
        (0..self.len()).map(|i| self.group(i))
    }
}

/// The value groups of each examination instance of a group.
#[salsa::tracked(returns(ref))]
pub fn value_groups(db: &dyn salsa::Database, group: RunGroup) -> Vec<ValueGroups> {
    group
        .slots(db)
        .iter()
        .zip(group.answers(db).iter())
        .map(|(slot, runs)| ValueGroups::of(slot.ids.len(), &slot.tools, runs))
        .collect()
}

/// Rule E-2.2, for the values of one group.
#[salsa::tracked(returns(ref))]
pub fn agreement(db: &dyn salsa::Database, group: RunGroup) -> ConfidenceTally {
    let edition = group.contest(db).edition(db);
    let mut tally = ConfidenceTally::default();
    for groups in value_groups(db, group) {
        for group in groups.iter() {
            tally.add_value(group, &edition.confidence);
        }
    }
    tally
}

/// Rule E-2.2 over the whole contest.
#[salsa::tracked(returns(ref))]
pub fn confidence_tally(db: &dyn salsa::Database, contest: ContestData) -> ConfidenceTally {
    let mut tally = ConfidenceTally::default();
    for group in contest.groups(db).iter() {
        tally.merge(agreement(db, *group));
    }
    tally
}

/// Rule E-2.2: one tool's Confidence (a query of its own, so that a change to one tool's
/// Confidence re-decides only the values that tool took part in).
#[salsa::tracked(returns(copy))]
pub fn tool_confidence(db: &dyn salsa::Database, tool: ToolData) -> f64 {
    let contest = tool.contest(db);
    confidence_rule(
        confidence_tally(db, contest),
        tool.index(db),
        &contest.edition(db).confidence,
    )
}

/// Rule E-3.1, third situation: whether a value this tool computed alone is trusted. A query of
/// its own so that a small change of the tool's Confidence, which leaves this answer as it was,
/// stops there instead of re-deciding every value the tool computed alone.
#[salsa::tracked(returns(copy))]
pub fn tool_trusted_alone(db: &dyn salsa::Database, tool: ToolData) -> bool {
    trusted_alone(
        tool_confidence(db, tool),
        &tool.contest(db).edition(db).trusted,
    )
}

/// Rule E-3.1: the trusted value of each value of each examination instance of a group (or the given
/// truth, in a ground-truth contest).
#[salsa::tracked(returns(ref))]
pub fn trusted_values(db: &dyn salsa::Database, group: RunGroup) -> Vec<Vec<Decision>> {
    let contest = group.contest(db);
    let edition = contest.edition(db);
    if edition.info.trust == TrustKind::GroundTruth {
        return group
            .slots(db)
            .iter()
            .map(|slot| {
                let truth = slot
                    .truth
                    .clone()
                    .unwrap_or_else(|| vec![None; slot.ids.len()].into());
                truth
                    .iter()
                    .map(|v| Decision {
                        value: v.clone(),
                        case: TrustCase::GroundTruth,
                    })
                    .collect()
            })
            .collect();
    }
    let tools = contest.tool_data(db);
    // Confidences are read only where a decision needs them (salsa records the reads), and then
    // through queries whose results rarely change: a unanimity reads none.
    // Each query is asked once per group (a group has many values of the same shapes).
    let alone_seen: std::cell::RefCell<Vec<Option<bool>>> =
        std::cell::RefCell::new(vec![None; tools.len()]);
    let alone = |t: ToolIdx| {
        let Some(tool) = tools.get(t as usize) else {
            return false;
        };
        *alone_seen.borrow_mut()[t as usize].get_or_insert_with(|| tool_trusted_alone(db, *tool))
    };
    let contested_seen: std::cell::RefCell<
        std::collections::HashMap<Vec<Vec<ToolIdx>>, Option<usize>>,
    > = std::cell::RefCell::default();
    let contested = |classes: &[Vec<ToolIdx>]| {
        if let Some(decided) = contested_seen.borrow().get(classes) {
            return *decided;
        }
        let decided = contested_decision(db, Contested::new(db, contest, classes.to_vec()))
            .map(|i| i as usize);
        contested_seen
            .borrow_mut()
            .insert(classes.to_vec(), decided);
        decided
    };
    value_groups(db, group)
        .iter()
        .map(|groups| {
            groups
                .iter()
                .map(|group| trusted_value_with(group, contested, alone))
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

/// Rule E-3.1, second and fourth situations, for one shape of contested value: which class is
/// trusted. Its result changes only when a Confidence change moves the decision.
#[salsa::tracked(returns(copy))]
pub fn contested_decision<'db>(db: &'db dyn salsa::Database, shape: Contested<'db>) -> Option<u32> {
    let contest = shape.contest(db);
    let tools = contest.tool_data(db);
    let confidence = |t: ToolIdx| {
        tools
            .get(t as usize)
            .map_or(0.0, |tool| tool_confidence(db, *tool))
    };
    contested_winner(shape.classes(db), confidence, &contest.edition(db).trusted).map(|i| i as u32)
}

/// One tool's score on one examination of one instance.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolExamScore {
    pub tool: ToolIdx,
    pub score: ExamScore,
    /// Rule E-4.3: time and memory, when the tool computed all the trusted values.
    pub perf: Option<Perf>,
}

/// Rules E-4.2 and E-4.3 for every tool that takes part in each examination instance of a group (a
/// tool that computed nothing scores 0 but takes part; one that said DO_NOT_COMPETE does not).
#[salsa::tracked(returns(ref))]
pub fn exam_scores(db: &dyn salsa::Database, group: RunGroup) -> Vec<Vec<ToolExamScore>> {
    let edition = group.contest(db).edition(db);
    let decisions = trusted_values(db, group);
    let (slots, runs, competes, perfs) = (
        group.slots(db),
        group.answers(db),
        group.competes(db),
        group.perf(db),
    );
    let mut all = Vec::with_capacity(slots.len());
    for (s, slot) in slots.iter().enumerate() {
        let trusted: Vec<Option<Value>> = decisions[s].iter().map(|d| d.value.clone()).collect();
        let mut scores = Vec::new();
        for position in 0..slot.tools.len() {
            if !competes[s][position] {
                continue;
            }
            let answers = &runs[s][position];
            let score = scoring::examination_score(
                answers.iter().map(|(i, v)| (*i as usize, v)),
                &trusted,
                slot.scored as usize,
                &edition.scoring,
            );
            let perf = score.complete.then(|| perfs[s][position]);
            scores.push(ToolExamScore {
                tool: slot.tools[position],
                score,
                perf,
            });
        }
        all.push(scores);
    }
    all
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

/// Rule E-4.4's factors of each examination instance of each group (`[group][slot]`): the
/// instance's weight within its model and its model kind's multiplier in the examination's
/// category.
#[salsa::tracked(returns(ref))]
pub fn weights(db: &dyn salsa::Database, contest: ContestData) -> Vec<Vec<Weight>> {
    let edition = contest.edition(db);
    let models = contest.models(db);
    let groups = contest.groups(db);
    let largest = models.iter().map(|m| m.instances).max().unwrap_or(1);
    let instance_weight = |model: u32| {
        let m = &models[model as usize];
        scoring::instance_weight(&edition.scoring, m.instances, largest)
    };
    // Points each kind could attain per category, for share-of multipliers.
    let mut attainable = vec![vec![0.0; edition.model_kinds.len()]; edition.categories.len()];
    for group in groups.iter() {
        let kind = models[group.model(db) as usize].kind;
        for slot in group.slots(db).iter() {
            let category = edition.examinations[slot.exam as usize].category;
            attainable[category][kind] +=
                edition.scoring.points_per_examination * instance_weight(group.model(db));
        }
    }
    let multipliers: Vec<Vec<f64>> = attainable
        .iter()
        .map(|a| scoring::kind_multipliers(&edition.model_kinds, a))
        .collect();
    groups
        .iter()
        .map(|group| {
            let kind = models[group.model(db) as usize].kind;
            group
                .slots(db)
                .iter()
                .map(|slot| {
                    let category = edition.examinations[slot.exam as usize].category;
                    Weight {
                        instance: instance_weight(group.model(db)),
                        kind: multipliers[category][kind],
                        category,
                    }
                })
                .collect()
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
    for (group, w) in contest.groups(db).iter().zip(weights) {
        for (slot, w) in exam_scores(db, *group).iter().zip(w) {
            let (weight, category) = (w.factor(), w.category);
            for s in slot {
                participating[category][s.tool as usize] = true;
                scores[category][s.tool as usize] += s.score.points * weight;
                if let Some(p) = s.perf {
                    performance[category][s.tool as usize].add(p.cpu_s, p.peak_memory_mb);
                }
            }
        }
    }
    CategoryScores {
        scores,
        participating,
        performance,
    }
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
                .map(|(i, t)| Entrant {
                    tool: i as ToolIdx,
                    name: &t.name,
                    family: &t.family,
                    competing: t.competing,
                })
                .collect();
            let success_cpu: Vec<f64> = totals.performance[category]
                .iter()
                .map(|p| p.cpu_s)
                .collect();
            let tie_break = (edition.ranking.tie_break
                == mccbuild_rules::edition::TieBreak::SuccessCpuTime)
                .then_some(&success_cpu[..]);
            let standings = scoring::podium(&entrants, &totals.scores[category], tie_break);
            let awards = if edition.awards.enabled {
                scoring::awards(
                    &standings,
                    &totals.performance[category],
                    edition.awards.aggregate,
                )
            } else {
                Awards::default()
            };
            Podium {
                category,
                standings,
                awards,
            }
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
        ScoringDb {
            storage: salsa::Storage::new(None),
            log: Arc::default(),
        }
    }
}

impl ScoringDb {
    /// Brings every group's scores up to date using all cores (salsa runs queries on clones of
    /// one database at once; a query another thread is computing is waited for, not redone).
    /// [`podiums`] afterwards only sums. Results are those of [`podiums`] alone: this changes
    /// when the work is done, not what it computes.
    pub fn refresh(&self, handles: &Handles) {
        use rayon::prelude::*;
        handles
            .groups
            .par_iter()
            .for_each_with(self.clone(), |db, group| {
                let _ = exam_scores(db, *group);
            });
    }

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
        let keys = self
            .log
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default();
        keys.into_iter()
            .map(|k| {
                salsa::Database::ingredient_debug_name(self, k.ingredient_index()).into_owned()
            })
            .collect()
    }
}

/// `all` (per slot, per run) with `run`'s entry replaced by `value`; None if it is already that
/// (salsa's setters do not compare: setting an equal value would still invalidate).
fn replaced<T: Clone + PartialEq>(
    all: &Arc<[Arc<[T]>]>,
    run: RunRef,
    value: T,
) -> Option<Arc<[Arc<[T]>]>> {
    if all[run.slot][run.position] == value {
        return None;
    }
    let mut slot: Vec<T> = all[run.slot].to_vec();
    slot[run.position] = value;
    let mut new: Vec<Arc<[T]>> = all.to_vec();
    new[run.slot] = slot.into();
    Some(new.into())
}

/// The shape of a contest for scoring: what [`ScoringDb`] is built from.
pub struct ContestShape<'a> {
    pub edition: Arc<Edition>,
    pub tools: Vec<ToolInfo>,
    pub models: Vec<ModelInfo>,
    /// One per examination instance, in any order.
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
    pub groups: Vec<RunGroup>,
    /// Per examination instance of the shape, in its order: (index into `groups`, slot).
    pub exam_instances: Vec<(usize, usize)>,
}

impl Handles {
    /// The `position`-th planned run of examination instance `e` (in the shape's order).
    pub fn run(&self, e: usize, position: usize) -> RunRef {
        let (i, slot) = self.exam_instances[e];
        RunRef {
            group: self.groups[i],
            slot,
            position,
        }
    }

    /// The value groups of examination instance `e`.
    pub fn value_groups<'db>(&self, db: &'db ScoringDb, e: usize) -> &'db ValueGroups {
        let (i, slot) = self.exam_instances[e];
        &value_groups(db, self.groups[i])[slot]
    }

    /// The trusted values (E-3.1 decisions) of examination instance `e`.
    pub fn decisions<'db>(&self, db: &'db ScoringDb, e: usize) -> &'db [Decision] {
        let (i, slot) = self.exam_instances[e];
        &trusted_values(db, self.groups[i])[slot]
    }

    /// The scores (E-4.2) of examination instance `e`.
    pub fn exam_scores<'db>(&self, db: &'db ScoringDb, e: usize) -> &'db [ToolExamScore] {
        let (i, slot) = self.exam_instances[e];
        &exam_scores(db, self.groups[i])[slot]
    }

    /// The E-4.4 factors of examination instance `e`.
    pub fn weight(&self, db: &ScoringDb, e: usize) -> Weight {
        let (i, slot) = self.exam_instances[e];
        weights(db, self.contest)[i][slot]
    }

    /// The tools of examination instance `e`'s planned runs, in order.
    pub fn run_tools<'db>(&self, db: &'db ScoringDb, e: usize) -> &'db [u32] {
        let (i, slot) = self.exam_instances[e];
        &self.groups[i].slots(db)[slot].tools
    }
}

impl ScoringDb {
    /// Creates the inputs of a contest. The shape (edition, tools, models, which runs exist) has
    /// high durability; answers and performance are the low-durability inputs that change.
    pub fn build(&mut self, shape: ContestShape<'_>) -> Handles {
        let contest = ContestData::builder(
            shape.edition,
            shape.tools.into(),
            shape.models.into(),
            Arc::from(Vec::new()),
            Arc::from(Vec::new()),
        )
        .durability(Durability::HIGH)
        .new(self);
        let tool_count = contest.tools(self).len();
        let tool_data: Vec<ToolData> = (0..tool_count as u32)
            .map(|i| {
                ToolData::builder(contest, i)
                    .durability(Durability::HIGH)
                    .new(self)
            })
            .collect();
        // Group the examination instances by model and examination (see [`RunGroup`]).
        let mut order: Vec<(u32, u32)> = Vec::new();
        let mut grouped: std::collections::HashMap<(u32, u32), (u32, Vec<(usize, EiShape<'_>)>)> =
            std::collections::HashMap::new();
        for (e, ei) in shape.exam_instances.into_iter().enumerate() {
            let entry = grouped.entry((ei.model, ei.exam)).or_insert_with(|| {
                order.push((ei.model, ei.exam));
                (ei.model, Vec::new())
            });
            entry.1.push((e, ei));
        }
        let total: usize = grouped.values().map(|(_, v)| v.len()).sum();
        let mut exam_instances = vec![(0usize, 0usize); total];
        let mut groups = Vec::with_capacity(order.len());
        for key in order {
            let (model, eis) = grouped.remove(&key).unwrap_or_default();
            let mut slots = Vec::with_capacity(eis.len());
            let (mut answers, mut competes, mut perf) = (Vec::new(), Vec::new(), Vec::new());
            for (slot, (e, ei)) in eis.into_iter().enumerate() {
                exam_instances[e] = (groups.len(), slot);
                slots.push(ExamSlot {
                    exam: ei.exam,
                    ids: ei.ids,
                    scored: ei.scored,
                    truth: ei.truth,
                    tools: ei.runs.iter().map(|r| r.tool).collect(),
                });
                competes.push(ei.runs.iter().map(|r| r.competes).collect::<Arc<[bool]>>());
                perf.push(ei.runs.iter().map(|r| r.perf).collect::<Arc<[Perf]>>());
                answers.push(
                    ei.runs
                        .into_iter()
                        .map(|r| r.answers)
                        .collect::<Arc<[Answers]>>(),
                );
            }
            let group = RunGroup::builder(
                contest,
                model,
                slots.into(),
                answers.into(),
                competes.into(),
                perf.into(),
            )
            .contest_durability(Durability::HIGH)
            .model_durability(Durability::HIGH)
            .slots_durability(Durability::HIGH)
            .new(self);
            groups.push(group);
        }
        contest
            .set_tool_data(self)
            .with_durability(Durability::HIGH)
            .to(tool_data.into());
        contest
            .set_groups(self)
            .with_durability(Durability::HIGH)
            .to(groups.clone().into());
        Handles {
            contest,
            groups,
            exam_instances,
        }
    }

    /// Sets a run's answers, only if they changed (salsa setters always invalidate).
    pub fn set_answers(&mut self, run: RunRef, answers: Answers) {
        if let Some(new) = replaced(run.group.answers(self), run, answers) {
            run.group.set_answers(self).to(new);
        }
    }

    /// Sets whether a run takes part, only if it changed.
    pub fn set_competes(&mut self, run: RunRef, competes: bool) {
        if let Some(new) = replaced(run.group.competes(self), run, competes) {
            run.group.set_competes(self).to(new);
        }
    }

    /// Sets a run's time and memory, only if they changed.
    pub fn set_perf(&mut self, run: RunRef, perf: Perf) {
        if let Some(new) = replaced(run.group.perf(self), run, perf) {
            run.group.set_perf(self).to(new);
        }
    }

    /// A run's tool and answers.
    pub fn run_answers(&self, run: RunRef) -> (u32, Answers) {
        (
            run.group.slots(self)[run.slot].tools[run.position],
            run.group.answers(self)[run.slot][run.position].clone(),
        )
    }
}
