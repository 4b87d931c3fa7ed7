//! The scoring database: salsa's storage with an optional log of executed queries, its inputs
//! created from a contest's shape, handles to them, and the setters that apply a run's new
//! record (only when something changed).

use std::sync::{Arc, Mutex};

use mccbuild_core::{Measurement, Value};
use mccbuild_rules::edition::Edition;
use mccbuild_rules::reference::Basis;
use mccbuild_rules::trusted::Decision;
use mccbuild_rules::weights::Weight;
use salsa::{Durability, Setter};

use crate::db::{
    agreement, contested_decision, exam_scores, tool_trusted_alone, trusted_values, value_answers,
    weights, Answers, ContestData, Contested, ContestedDecision, ExamInstance, ModelExamination,
    ModelInfo, RunRef, ToolData, ToolExamScore, ToolInfo, ValueAnswers,
};
use crate::memo::Remembered;
use mccbuild_rules::confidence::ToolIdx;

/// The database, with an optional log of executed queries (for incrementality tests and
/// `--explain-incremental` style diagnostics).
#[salsa::db]
#[derive(Clone)]
pub struct ScoringDb {
    storage: salsa::Storage<Self>,
    log: Arc<Mutex<Option<Vec<salsa::DatabaseKeyIndex>>>>,
    /// What [`ScoringDb::settle`] keeps between changes.
    driver: Driver,
}

/// The driver of the Confidence-dependent decisions (E-3.1): which model examinations have
/// contested values and of which shapes, which ones changed since the last settle, and which
/// are still at the durability they were built with. Outside salsa: it decides which inputs to
/// write, never what a result is (every decision it writes is a query's result).
#[derive(Clone, Default)]
struct Driver {
    contest: Option<ContestData>,
    /// Model examinations whose runs were set since the last settle.
    dirty: Vec<ModelExamination>,
    /// Every shape of contested value seen, once each (indices into it stand for shapes).
    shapes: Vec<Vec<Vec<ToolIdx>>>,
    shape_index: std::collections::HashMap<Vec<Vec<ToolIdx>>, usize>,
    /// The contested shapes of each model examination that has some, sorted as its
    /// [`ModelExamination::decided`].
    contested: std::collections::HashMap<ModelExamination, Vec<usize>>,
    /// Model examinations whose runs are still MEDIUM (complete when built, not set since).
    medium: std::collections::HashSet<ModelExamination>,
    /// Model examinations answered from what an earlier process remembered (`crate::memo`).
    remembered: std::collections::HashSet<ModelExamination>,
    /// Inputs were set since the last settle.
    unsettled: bool,
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
            driver: Driver::default(),
        }
    }
}

impl ScoringDb {
    /// Brings every model examination's scores up to date using all cores (salsa runs queries
    /// on clones of one database at once; a query another thread is computing is waited for,
    /// not redone). [`crate::db::podiums`] afterwards only sums. Results are those of
    /// [`crate::db::podiums`] alone: this changes when the work is done, not what it computes.
    pub fn refresh(&self, handles: &Handles) {
        use rayon::prelude::*;
        debug_assert!(
            !self.driver.unsettled,
            "ScoringDb::settle must follow the setters before scores are read"
        );
        handles
            .examinations
            .par_iter()
            .for_each_with(self.clone(), |db, m| {
                let _ = exam_scores(db, *m);
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
        ScoringDb {
            storage,
            log,
            driver: Driver::default(),
        }
    }

    /// Starts recording which queries execute (a database made by [`ScoringDb::with_log`]).
    pub fn start_logging(&self) {
        *self.log.lock().unwrap_or_else(|e| e.into_inner()) = Some(Vec::new());
    }

    /// The queries executed since the last call, by name (`value_answers`, `exam_scores`...).
    pub fn take_executed(&self) -> Vec<String> {
        self.take_executed_with_ids()
            .into_iter()
            .map(|(name, _)| name)
            .collect()
    }

    /// The queries executed since the last call: each one's name and the salsa id of what it
    /// ran on (for a query of a model examination, [`Handles::examination_ids`] tells which).
    pub fn take_executed_with_ids(&self) -> Vec<(String, salsa::Id)> {
        self.executed_with_ids().unwrap_or_default()
    }

    /// As [`ScoringDb::take_executed_with_ids`]; None when nothing is being recorded.
    pub fn executed_with_ids(&self) -> Option<Vec<(String, salsa::Id)>> {
        let keys = self
            .log
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_mut()
            .map(std::mem::take)?;
        Some(
            keys.into_iter()
                .map(|k| {
                    let name = salsa::Database::ingredient_debug_name(self, k.ingredient_index());
                    (name.into_owned(), k.key_index())
                })
                .collect(),
        )
    }
}

/// `all` (per examination instance, per run) with `run`'s entry replaced by `value`; None if it
/// is already that (salsa's setters do not compare: setting an equal value would still
/// invalidate).
fn replaced<T: Clone + PartialEq>(
    all: &Arc<[Arc<[T]>]>,
    run: RunRef,
    value: T,
) -> Option<Arc<[Arc<[T]>]>> {
    if all[run.exam_instance][run.position] == value {
        return None;
    }
    let mut runs: Vec<T> = all[run.exam_instance].to_vec();
    runs[run.position] = value;
    let mut new: Vec<Arc<[T]>> = all.to_vec();
    new[run.exam_instance] = runs.into();
    Some(new.into())
}

/// What [`ScoringDb::build`] makes a database of: a contest's shape and its runs.
pub struct ContestInputs {
    pub edition: Arc<Edition>,
    pub tools: Vec<ToolInfo>,
    pub models: Vec<ModelInfo>,
    /// One per examination instance, in any order.
    pub exam_instances: Vec<ExamInstanceInputs>,
    /// The vote (the default) or the reference answers.
    pub basis: Basis,
    /// Model examinations (by model and examination) remembered from an earlier process, whose
    /// runs are given without their answers (`crate::memo`); empty for a database built from
    /// the runs alone.
    pub remembered: std::collections::HashMap<(u32, u32), Arc<Remembered>>,
}

/// One examination instance and its planned runs.
pub struct ExamInstanceInputs {
    pub model: u32,
    pub exam: u32,
    pub ids: Arc<[Arc<str>]>,
    /// How many of `ids` (the first ones) earn points.
    pub scored: u32,
    pub truth: Option<Arc<[Option<Value>]>>,
    /// The reference answer of each value id (`[reference]`), if the reference gives them.
    pub reference: Option<Arc<[Option<Value>]>>,
    /// The organisers' decided value of each value id (`[contest] corrections`, E-6.3), if any
    /// is decided here.
    pub corrections: Option<Arc<[Option<Value>]>>,
    pub runs: Vec<RunInputs>,
}

/// One planned run.
#[derive(Clone, Debug)]
pub struct RunInputs {
    pub tool: u32,
    /// Stored, and takes part (E-1.8).
    pub competes: bool,
    pub answers: Answers,
    pub measurement: Measurement,
}

/// Handles to a built contest.
pub struct Handles {
    pub contest: ContestData,
    pub examinations: Vec<ModelExamination>,
    /// Per examination instance of the inputs, in their order: (index into `examinations`,
    /// index of the examination instance there).
    pub exam_instances: Vec<(usize, usize)>,
}

impl Handles {
    /// The `position`-th planned run of examination instance `e` (in the inputs' order).
    pub fn run(&self, e: usize, position: usize) -> RunRef {
        let (i, j) = self.exam_instances[e];
        RunRef {
            examination: self.examinations[i],
            exam_instance: j,
            position,
        }
    }

    /// The answers by value of examination instance `e`.
    pub fn value_answers<'db>(&self, db: &'db ScoringDb, e: usize) -> &'db ValueAnswers {
        let (i, j) = self.exam_instances[e];
        &value_answers(db, self.examinations[i])[j]
    }

    /// The trusted values (E-3.1 decisions) of examination instance `e`.
    pub fn decisions<'db>(&self, db: &'db ScoringDb, e: usize) -> &'db [Decision] {
        let (i, j) = self.exam_instances[e];
        &trusted_values(db, self.examinations[i])[j]
    }

    /// The scores (E-4.2) of examination instance `e`.
    pub fn exam_scores<'db>(&self, db: &'db ScoringDb, e: usize) -> &'db [ToolExamScore] {
        let (i, j) = self.exam_instances[e];
        &exam_scores(db, self.examinations[i])[j]
    }

    /// The E-4.4 factors of examination instance `e`.
    pub fn weight<'db>(&self, db: &'db ScoringDb, e: usize) -> &'db Weight {
        let (i, j) = self.exam_instances[e];
        &weights(db, self.contest)[i][j]
    }

    /// The tools of examination instance `e`'s planned runs, in order.
    pub fn run_tools<'db>(&self, db: &'db ScoringDb, e: usize) -> &'db [u32] {
        let (i, j) = self.exam_instances[e];
        &self.examinations[i].exam_instances(db)[j].tools
    }

    /// The salsa id of each model examination: index into `examinations` by id.
    pub fn examination_ids(&self) -> std::collections::HashMap<salsa::Id, usize> {
        use salsa::plumbing::AsId;
        self.examinations
            .iter()
            .enumerate()
            .map(|(i, m)| (m.as_id(), i))
            .collect()
    }

    /// The examination instance of the inputs at (model examination `i`, `j` there).
    pub fn exam_instance_at(&self, i: usize, j: usize) -> Option<usize> {
        self.exam_instances.iter().position(|&x| x == (i, j))
    }
}

impl ScoringDb {
    /// Creates the inputs of a contest. Its shape (edition, tools, models, which runs exist) has
    /// high durability; answers and measurements are the low-durability inputs that change.
    pub fn build(&mut self, inputs: ContestInputs) -> Handles {
        let contest = ContestData::builder(
            inputs.edition.clone(),
            Arc::new(inputs.edition.confidence.clone()),
            Arc::new(inputs.edition.trusted.clone()),
            Arc::new(inputs.edition.scoring.clone()),
            inputs.edition.info.trust,
            inputs.tools.into(),
            inputs.models.into(),
            Arc::from(Vec::new()),
            Arc::from(Vec::new()),
            inputs.basis,
            (),
        )
        .durability(Durability::HIGH)
        .low_durability(Durability::LOW)
        .new(self);
        let tool_count = contest.tools(self).len();
        let tool_data: Vec<ToolData> = (0..tool_count as u32)
            .map(|i| {
                ToolData::builder(contest, i, false)
                    .durability(Durability::HIGH)
                    .alone_durability(Durability::MEDIUM)
                    .new(self)
            })
            .collect();
        let (by_model_examination, total) = by_model_examination(inputs.exam_instances);
        let mut exam_instances = vec![(0usize, 0usize); total];
        let mut examinations = Vec::with_capacity(by_model_examination.len());
        let mut remembered = inputs.remembered;
        for (model, members) in by_model_examination {
            for (j, (e, _)) in members.iter().enumerate() {
                exam_instances[*e] = (examinations.len(), j);
            }
            let exam = members.first().map_or(0, |(_, ei)| ei.exam);
            let inputs: Vec<ExamInstanceInputs> = members.into_iter().map(|(_, ei)| ei).collect();
            let kept = remembered.remove(&(model, exam));
            examinations.push(self.model_examination(contest, model, inputs, kept));
        }
        contest
            .set_tool_data(self)
            .with_durability(Durability::HIGH)
            .to(tool_data.into());
        contest
            .set_examinations(self)
            .with_durability(Durability::HIGH)
            .to(examinations.clone().into());
        self.driver = Driver {
            contest: Some(contest),
            dirty: examinations.clone(),
            shapes: Vec::new(),
            shape_index: Default::default(),
            contested: Default::default(),
            medium: std::mem::take(&mut self.driver.medium),
            remembered: std::mem::take(&mut self.driver.remembered),
            unsettled: true,
        };
        self.settle();
        Handles {
            contest,
            examinations,
            exam_instances,
        }
    }

    /// Brings the Confidence-dependent decisions the trusted values read
    /// ([`ToolData::alone`], [`ModelExamination::decided`]) up to date with the answers: at the
    /// end of [`ScoringDb::build`] and of every [`Changes`], so that no score is ever read from
    /// decisions older than the answers. It computes the Confidences (E-2.2), each tool's
    /// verdict on its lone values and each contested shape's winner (E-3.1) with their queries,
    /// and writes only the inputs whose value changed: a record that moves the Confidences
    /// without moving a decision re-decides no value.
    fn settle(&mut self) {
        let Some(contest) = self.driver.contest else {
            return;
        };
        if !self.driver.unsettled {
            return;
        }
        let mut dirty = std::mem::take(&mut self.driver.dirty);
        let mut seen = std::collections::HashSet::new();
        dirty.retain(|m| seen.insert(*m));
        let dirty_set = seen;
        if dirty.len() > 32 {
            // Many at once (the first settle, a tool's rerun): their answers on every core.
            use rayon::prelude::*;
            dirty.par_iter().for_each_with(self.clone(), |db, m| {
                let _ = agreement(db, *m);
            });
        }
        for &m in &dirty {
            let shapes = agreement(self, m).needs.shapes.clone();
            if shapes.is_empty() {
                if self.driver.contested.remove(&m).is_some() && !m.decided(self).is_empty() {
                    self.driver.contested.insert(m, Vec::new());
                }
                continue;
            }
            let driver = &mut self.driver;
            let indices = shapes
                .iter()
                .map(|shape| {
                    *driver.shape_index.entry(shape.clone()).or_insert_with(|| {
                        driver.shapes.push(shape.clone());
                        driver.shapes.len() - 1
                    })
                })
                .collect();
            driver.contested.insert(m, indices);
        }
        let tools: Vec<ToolData> = contest.tool_data(self).to_vec();
        let alone: Vec<(ToolData, bool)> = tools
            .iter()
            .map(|t| (*t, tool_trusted_alone(self, *t)))
            .filter(|(t, alone)| t.alone(self) != *alone)
            .collect();
        // Each shape in use decided once (its query), then each model examination's decisions
        // compared with what it holds; its shapes are those it was last written with unless
        // its answers changed.
        let mut decision: Vec<Option<Option<u32>>> = vec![None; self.driver.shapes.len()];
        let mut decided: Vec<(ModelExamination, Vec<ContestedDecision>)> = Vec::new();
        for (m, indices) in &self.driver.contested {
            for &i in indices {
                if decision[i].is_none() {
                    let key = Contested::new(self, contest, self.driver.shapes[i].clone());
                    decision[i] = Some(contested_decision(self, key));
                }
            }
            let held = m.decided(self);
            let now = |i: usize| decision[i].flatten();
            let same = held.len() == indices.len()
                && held.iter().zip(indices).all(|((shape, d), &i)| {
                    *d == now(i) && (!dirty_set.contains(m) || *shape == self.driver.shapes[i])
                });
            if !same {
                let now = indices
                    .iter()
                    .map(|&i| (self.driver.shapes[i].clone(), now(i)))
                    .collect();
                decided.push((*m, now));
            }
        }
        self.driver
            .contested
            .retain(|_, indices| !indices.is_empty());
        for (tool, alone) in alone {
            tool.set_alone(self)
                .with_durability(Durability::MEDIUM)
                .to(alone);
        }
        for (m, now) in decided {
            // A complete model examination's decisions stay MEDIUM (its scores verify at a
            // glance); once its runs were set they are LOW, as its runs.
            let durability = if self.driver.medium.contains(&m) {
                Durability::MEDIUM
            } else {
                Durability::LOW
            };
            m.set_decided(self)
                .with_durability(durability)
                .to(now.into());
        }
        self.driver.unsettled = false;
    }

    /// Records that a setter changed `m`'s runs: its inputs are LOW from now on, and, when its
    /// answers changed (the only runs' field E-2.2 and E-3.1 read), its decisions are looked at
    /// by the next [`ScoringDb::settle`].
    fn touched(&mut self, m: ModelExamination, answers: bool) {
        self.driver.medium.remove(&m);
        if answers {
            self.driver.dirty.push(m);
            self.driver.unsettled = true;
        }
    }

    /// The input of one model examination.
    fn model_examination(
        &mut self,
        contest: ContestData,
        model: u32,
        members: Vec<ExamInstanceInputs>,
        remembered: Option<Arc<Remembered>>,
    ) -> ModelExamination {
        let mut exam_instances = Vec::with_capacity(members.len());
        let (mut answers, mut competes, mut measurements) = (Vec::new(), Vec::new(), Vec::new());
        let mut reference = Vec::new();
        let mut corrections = Vec::new();
        for ei in members {
            reference.push(ei.reference);
            corrections.push(ei.corrections);
            exam_instances.push(ExamInstance {
                exam: ei.exam,
                ids: ei.ids,
                scored: ei.scored,
                truth: ei.truth,
                tools: ei.runs.iter().map(|r| r.tool).collect(),
            });
            competes.push(ei.runs.iter().map(|r| r.competes).collect::<Arc<[bool]>>());
            measurements.push(
                ei.runs
                    .iter()
                    .map(|r| r.measurement)
                    .collect::<Arc<[Measurement]>>(),
            );
            answers.push(
                ei.runs
                    .into_iter()
                    .map(|r| r.answers)
                    .collect::<Arc<[Answers]>>(),
            );
        }
        let runs = match remembered {
            Some(_) => Durability::MEDIUM,
            None => runs_durability(&competes),
        };
        let is_remembered = remembered.is_some();
        let m = ModelExamination::builder(
            contest,
            model,
            exam_instances.into(),
            answers.into(),
            competes.into(),
            measurements.into(),
            reference.into(),
            corrections.into(),
            Arc::from(Vec::new()),
            remembered,
        )
        .contest_durability(Durability::HIGH)
        .model_durability(Durability::HIGH)
        .exam_instances_durability(Durability::HIGH)
        .answers_durability(runs)
        .competes_durability(runs)
        .measurements_durability(runs)
        .reference_durability(Durability::MEDIUM)
        .corrections_durability(Durability::MEDIUM)
        .decided_durability(runs)
        .remembered_durability(Durability::MEDIUM)
        .new(self);
        if runs == Durability::MEDIUM {
            self.driver.medium.insert(m);
        }
        if is_remembered {
            self.driver.remembered.insert(m);
        }
        m
    }

    /// The remembered model examinations whose scores were computed under other decisions than
    /// those settled now: their runs are to be given ([`Changes::revive`]).
    pub(crate) fn stale_remembered(&self) -> Vec<ModelExamination> {
        self.driver
            .remembered
            .iter()
            .filter(|m| {
                m.remembered(self)
                    .as_ref()
                    .is_some_and(|r| !r.holds(self, **m))
            })
            .copied()
            .collect()
    }

    /// Gives a remembered model examination its runs (per examination instance, in the order
    /// it was built with): from now on it is computed as any other.
    fn put_runs(&mut self, m: ModelExamination, runs: Vec<Vec<RunInputs>>) {
        let answers: Vec<Arc<[Answers]>> = runs
            .iter()
            .map(|runs| runs.iter().map(|r| r.answers.clone()).collect())
            .collect();
        let competes: Vec<Arc<[bool]>> = runs
            .iter()
            .map(|runs| runs.iter().map(|r| r.competes).collect())
            .collect();
        let measurements: Vec<Arc<[Measurement]>> = runs
            .iter()
            .map(|runs| runs.iter().map(|r| r.measurement).collect())
            .collect();
        self.touched(m, true);
        self.driver.remembered.remove(&m);
        m.set_answers(self)
            .with_durability(Durability::LOW)
            .to(answers.into());
        m.set_competes(self)
            .with_durability(Durability::LOW)
            .to(competes.into());
        m.set_measurements(self)
            .with_durability(Durability::LOW)
            .to(measurements.into());
        m.set_remembered(self)
            .with_durability(Durability::LOW)
            .to(None);
    }

    /// Applies an edit of the edition's rules to the contest `handles` were built for, setting
    /// only the inputs that changed: the queries that read a changed rule re-execute, the others
    /// are kept (an edit of E-3.1's threshold re-decides contested and single-tool values, not
    /// the answers gathered or E-2.2's tally). The edition must plan the same runs
    /// ([`Edition::same_plan_as`]: the same examinations, categories, model kinds); one that
    /// does not needs a new plan, hence a new database.
    fn put_edition(&mut self, handles: &Handles, edition: Arc<Edition>) {
        let contest = handles.contest;
        if **contest.edition(self) == *edition {
            return;
        }
        if **contest.confidence_rules(self) != edition.confidence {
            contest
                .set_confidence_rules(self)
                .with_durability(Durability::HIGH)
                .to(Arc::new(edition.confidence.clone()));
        }
        if **contest.trusted_rules(self) != edition.trusted {
            contest
                .set_trusted_rules(self)
                .with_durability(Durability::HIGH)
                .to(Arc::new(edition.trusted.clone()));
        }
        if **contest.scoring_rules(self) != edition.scoring {
            contest
                .set_scoring_rules(self)
                .with_durability(Durability::HIGH)
                .to(Arc::new(edition.scoring.clone()));
        }
        if contest.trust(self) != edition.info.trust {
            contest
                .set_trust(self)
                .with_durability(Durability::HIGH)
                .to(edition.info.trust);
        }
        contest
            .set_edition(self)
            .with_durability(Durability::HIGH)
            .to(edition);
        self.driver.unsettled = true;
    }

    /// Sets what scoring knows of the tools (names, families, competing or not), only if it
    /// changed: the same tools, in the same order, as the plan's.
    fn put_tools(&mut self, handles: &Handles, tools: Vec<ToolInfo>) {
        let contest = handles.contest;
        if **contest.tools(self) != *tools {
            contest
                .set_tools(self)
                .with_durability(Durability::HIGH)
                .to(tools.into());
        }
    }

    /// Sets a run's answers, only if they changed (salsa setters always invalidate).
    /// [`ScoringDb::settle`] must follow before scores are read.
    fn put_answers(&mut self, run: RunRef, answers: Answers) {
        if let Some(new) = replaced(run.examination.answers(self), run, answers) {
            self.touched(run.examination, true);
            run.examination
                .set_answers(self)
                .with_durability(Durability::LOW)
                .to(new);
        }
    }

    /// Sets whether a run takes part, only if it changed.
    fn put_competes(&mut self, run: RunRef, competes: bool) {
        if let Some(new) = replaced(run.examination.competes(self), run, competes) {
            self.touched(run.examination, false);
            run.examination
                .set_competes(self)
                .with_durability(Durability::LOW)
                .to(new);
        }
    }

    /// Sets a run's measurement, only if it changed.
    fn put_measurement(&mut self, run: RunRef, measurement: Measurement) {
        if let Some(new) = replaced(run.examination.measurements(self), run, measurement) {
            self.touched(run.examination, false);
            run.examination
                .set_measurements(self)
                .with_durability(Durability::LOW)
                .to(new);
        }
    }

    /// Sets the reference answers of examination instance `e` (in the inputs' order), only if
    /// they changed: the answers, hence the vote, stay as they are.
    fn put_reference(
        &mut self,
        handles: &Handles,
        e: usize,
        reference: Option<Arc<[Option<Value>]>>,
    ) {
        let (i, j) = handles.exam_instances[e];
        let m = handles.examinations[i];
        let all = m.reference(self);
        if all[j] == reference {
            return;
        }
        let mut new: Vec<Option<Arc<[Option<Value>]>>> = all.to_vec();
        new[j] = reference;
        m.set_reference(self).to(new.into());
    }

    /// Sets the organisers' decided values of examination instance `e` (in the inputs' order),
    /// only if they changed: the answers, the vote and the Confidences stay as they are.
    fn put_corrections(
        &mut self,
        handles: &Handles,
        e: usize,
        corrections: Option<Arc<[Option<Value>]>>,
    ) {
        let (i, j) = handles.exam_instances[e];
        let m = handles.examinations[i];
        let all = m.corrections(self);
        if all[j] == corrections {
            return;
        }
        let mut new: Vec<Option<Arc<[Option<Value>]>>> = all.to_vec();
        new[j] = corrections;
        m.set_corrections(self).to(new.into());
    }

    /// Sets what the trusted values are (the vote or the reference), only if it changed.
    fn put_basis(&mut self, handles: &Handles, basis: Basis) {
        if handles.contest.basis(self) != basis {
            handles.contest.set_basis(self).to(basis);
        }
    }

    /// A run's tool and answers.
    pub fn run_answers(&self, run: RunRef) -> (u32, Answers) {
        (
            run.examination.exam_instances(self)[run.exam_instance].tools[run.position],
            run.examination.answers(self)[run.exam_instance][run.position].clone(),
        )
    }
}

/// The durability of a model examination's runs (answers, taking part, measurements) as the
/// database is built: LOW where a run does not take part yet (not stored, or DO_NOT_COMPETE:
/// its record may still come), MEDIUM where every run does.
///
/// Why (docs/BENCHMARKS.md): salsa verifies a memo whose inputs all have a durability above the
/// changed input's in O(1), without walking its dependencies. With every model examination's runs
/// LOW, one new record had the ~1,300 model examinations' memos verified one dependency at a time;
/// with the complete ones MEDIUM, a record of a model examination still running (LOW) leaves them
/// verified at a glance. A new record of a complete model examination (a rerun) is a MEDIUM write
/// once (salsa reports a write at the field's durability before it: a full verification, as
/// before), and its fields are LOW from then on (the setters below).
fn runs_durability(competes: &[Arc<[bool]>]) -> Durability {
    if competes.iter().all(|runs| runs.iter().all(|&c| c)) {
        Durability::MEDIUM
    } else {
        Durability::LOW
    }
}

/// The examination instances of one model examination, each with its index in the inputs.
type Members = Vec<(usize, ExamInstanceInputs)>;

/// The examination instances grouped by model and examination (see [`ModelExamination`]), in
/// order of first appearance; and how many there are.
fn by_model_examination(exam_instances: Vec<ExamInstanceInputs>) -> (Vec<(u32, Members)>, usize) {
    let total = exam_instances.len();
    let mut order: Vec<(u32, Members)> = Vec::new();
    let mut index: std::collections::HashMap<(u32, u32), usize> = std::collections::HashMap::new();
    for (e, ei) in exam_instances.into_iter().enumerate() {
        let i = *index.entry((ei.model, ei.exam)).or_insert_with(|| {
            order.push((ei.model, Vec::new()));
            order.len() - 1
        });
        order[i].1.push((e, ei));
    }
    (order, total)
}

/// Changes to a built database's inputs, applied together: the decisions the trusted values
/// read are settled once, when it is dropped (`ScoringDb::settle`). Every change goes through
/// one: the database is never left with decisions older than its answers. For one change,
/// [`ScoringDb`]'s methods of the same names make one and drop it at once.
pub struct Changes<'a> {
    db: &'a mut ScoringDb,
}

/// Reading while changing (a run's answers, say): the inputs as set so far.
impl std::ops::Deref for Changes<'_> {
    type Target = ScoringDb;

    fn deref(&self) -> &ScoringDb {
        self.db
    }
}

impl Drop for Changes<'_> {
    fn drop(&mut self) {
        self.db.settle();
    }
}

impl Changes<'_> {
    /// Applies an edit of the edition's rules to the contest `handles` were built for, setting
    /// only the inputs that changed: the queries that read a changed rule re-execute, the others
    /// are kept (an edit of E-3.1's threshold re-decides contested and single-tool values, not
    /// the answers gathered or E-2.2's tally). The edition must plan the same runs
    /// ([`Edition::same_plan_as`]: the same examinations, categories, model kinds); one that
    /// does not needs a new plan, hence a new database.
    pub fn set_edition(&mut self, handles: &Handles, edition: Arc<Edition>) {
        self.db.put_edition(handles, edition);
    }

    /// Sets what scoring knows of the tools (names, families, competing or not), only if it
    /// changed: the same tools, in the same order, as the plan's.
    pub fn set_tools(&mut self, handles: &Handles, tools: Vec<ToolInfo>) {
        self.db.put_tools(handles, tools);
    }

    /// Sets a run's answers, only if they changed (salsa setters always invalidate).
    pub fn set_answers(&mut self, run: RunRef, answers: Answers) {
        self.db.put_answers(run, answers);
    }

    /// Sets whether a run takes part, only if it changed.
    pub fn set_competes(&mut self, run: RunRef, competes: bool) {
        self.db.put_competes(run, competes);
    }

    /// Sets a run's measurement, only if it changed.
    pub fn set_measurement(&mut self, run: RunRef, measurement: Measurement) {
        self.db.put_measurement(run, measurement);
    }

    /// Sets the reference answers of examination instance `e` (in the inputs' order), only if
    /// they changed: the answers, hence the vote, stay as they are.
    pub fn set_reference(
        &mut self,
        handles: &Handles,
        e: usize,
        reference: Option<Arc<[Option<Value>]>>,
    ) {
        self.db.put_reference(handles, e, reference);
    }

    /// Sets the organisers' decided values of examination instance `e` (in the inputs' order),
    /// only if they changed: the answers, the vote and the Confidences stay as they are.
    pub fn set_corrections(
        &mut self,
        handles: &Handles,
        e: usize,
        corrections: Option<Arc<[Option<Value>]>>,
    ) {
        self.db.put_corrections(handles, e, corrections);
    }

    /// Sets what the trusted values are (the vote or the reference), only if it changed.
    pub fn set_basis(&mut self, handles: &Handles, basis: Basis) {
        self.db.put_basis(handles, basis);
    }

    /// Gives a remembered model examination its runs (per examination instance, in the order it
    /// was built with), for its scores to be computed from them.
    pub(crate) fn revive(&mut self, m: ModelExamination, runs: Vec<Vec<RunInputs>>) {
        self.db.put_runs(m, runs);
    }
}

/// One change at a time: each settles the decisions at once (for many, see
/// [`ScoringDb::change`]).
impl ScoringDb {
    /// Changes applied together, settled once when the returned [`Changes`] is dropped.
    pub fn change(&mut self) -> Changes<'_> {
        Changes { db: self }
    }

    /// [`Changes::set_edition`], alone.
    pub fn set_edition(&mut self, handles: &Handles, edition: Arc<Edition>) {
        self.change().set_edition(handles, edition);
    }

    /// [`Changes::set_tools`], alone.
    pub fn set_tools(&mut self, handles: &Handles, tools: Vec<ToolInfo>) {
        self.change().set_tools(handles, tools);
    }

    /// [`Changes::set_answers`], alone.
    pub fn set_answers(&mut self, run: RunRef, answers: Answers) {
        self.change().set_answers(run, answers);
    }

    /// [`Changes::set_competes`], alone.
    pub fn set_competes(&mut self, run: RunRef, competes: bool) {
        self.change().set_competes(run, competes);
    }

    /// [`Changes::set_measurement`], alone.
    pub fn set_measurement(&mut self, run: RunRef, measurement: Measurement) {
        self.change().set_measurement(run, measurement);
    }

    /// [`Changes::set_reference`], alone.
    pub fn set_reference(
        &mut self,
        handles: &Handles,
        e: usize,
        reference: Option<Arc<[Option<Value>]>>,
    ) {
        self.change().set_reference(handles, e, reference);
    }

    /// [`Changes::set_corrections`], alone.
    pub fn set_corrections(
        &mut self,
        handles: &Handles,
        e: usize,
        corrections: Option<Arc<[Option<Value>]>>,
    ) {
        self.change().set_corrections(handles, e, corrections);
    }

    /// [`Changes::set_basis`], alone.
    pub fn set_basis(&mut self, handles: &Handles, basis: Basis) {
        self.change().set_basis(handles, basis);
    }
}
