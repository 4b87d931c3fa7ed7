//! Building the database: its inputs created from a contest's shape and runs, each model
//! examination's at the durability that lets salsa verify complete ones at a glance.

use std::sync::Arc;

use mccbuild_core::{Measurement, Value};
use mccbuild_rules::edition::Edition;
use mccbuild_rules::reference::Basis;
use salsa::{Durability, Setter};

use super::driver::Driver;
use super::{Handles, ScoringDb};
use crate::db::{
    Answers, ContestData, ExamInstance, ModelExamination, ModelInfo, ToolData, ToolInfo,
};
use crate::memo::Remembered;

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
