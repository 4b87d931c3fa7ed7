//! Changing a built database's inputs: [`Changes`], applied together and settled once when it is
//! dropped, and [`ScoringDb`]'s setters of one change each. Every setter writes an input only
//! when its value changed (salsa's setters do not compare: an equal value would still
//! invalidate).

use std::sync::Arc;

use mccbuild_core::{Measurement, Value};
use mccbuild_rules::edition::Edition;
use mccbuild_rules::reference::Basis;
use salsa::{Durability, Setter};

use super::{Handles, RunInputs, ScoringDb};
use crate::db::{Answers, ModelExamination, RunRef, ToolInfo};

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

/// The setters behind [`Changes`]: each writes its input only when the value changed.
impl ScoringDb {
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
