//! The driver of the Confidence-dependent decisions (E-3.1): after every change, it computes the
//! decisions with their queries and writes into the inputs only those that changed
//! ([`ScoringDb::settle`]), so that the scores of a complete model examination read MEDIUM inputs
//! only; and [`ScoringDb::refresh`], which brings every model examination's scores up to date on
//! all cores.

use mccbuild_rules::confidence::ToolIdx;
use salsa::{Durability, Setter};

use super::{Handles, ScoringDb};
use crate::db::{
    ContestData, Contested, ContestedDecision, ModelExamination, ToolData, agreement,
    contested_decision, exam_scores, tool_trusted_alone,
};

/// The driver of the Confidence-dependent decisions (E-3.1): which model examinations have
/// contested values and of which shapes, which ones changed since the last settle, and which
/// are still at the durability they were built with. Outside salsa: it decides which inputs to
/// write, never what a result is (every decision it writes is a query's result).
#[derive(Clone, Default)]
pub(super) struct Driver {
    pub(super) contest: Option<ContestData>,
    /// Model examinations whose runs were set since the last settle.
    pub(super) dirty: Vec<ModelExamination>,
    /// Every shape of contested value seen, once each (indices into it stand for shapes).
    pub(super) shapes: Vec<Vec<Vec<ToolIdx>>>,
    pub(super) shape_index: std::collections::HashMap<Vec<Vec<ToolIdx>>, usize>,
    /// The contested shapes of each model examination that has some, sorted as its
    /// [`ModelExamination::decided`].
    pub(super) contested: std::collections::HashMap<ModelExamination, Vec<usize>>,
    /// Model examinations whose runs are still MEDIUM (complete when built, not set since).
    pub(super) medium: std::collections::HashSet<ModelExamination>,
    /// Model examinations answered from what an earlier process remembered (`crate::memo`).
    pub(super) remembered: std::collections::HashSet<ModelExamination>,
    /// Inputs were set since the last settle.
    pub(super) unsettled: bool,
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

    /// Brings the Confidence-dependent decisions the trusted values read
    /// ([`ToolData::alone`], [`ModelExamination::decided`]) up to date with the answers: at the
    /// end of [`ScoringDb::build`] and of every [`Changes`], so that no score is ever read from
    /// decisions older than the answers. It computes the Confidences (E-2.2), each tool's
    /// verdict on its lone values and each contested shape's winner (E-3.1) with their queries,
    /// and writes only the inputs whose value changed: a record that moves the Confidences
    /// without moving a decision re-decides no value.
    pub(super) fn settle(&mut self) {
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
    pub(super) fn touched(&mut self, m: ModelExamination, answers: bool) {
        self.driver.medium.remove(&m);
        if answers {
            self.driver.dirty.push(m);
            self.driver.unsettled = true;
        }
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
}
