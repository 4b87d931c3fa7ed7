//! Handles to a built contest: its inputs, and what the queries say of one examination instance
//! or run, by its index in the inputs.

use mccbuild_rules::trusted::Decision;
use mccbuild_rules::weights::Weight;

use super::ScoringDb;
use crate::db::{
    ContestData, ModelExamination, RunRef, ToolExamScore, ValueAnswers, exam_scores,
    trusted_values, value_answers, weights,
};

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
