//! The plan: one run per (tool, instance, examination) the tool takes part in, with its key.
//!
//! An examination exists on an instance when it needs no file (StateSpace, the global
//! properties) or when the instance has its formula file with at least one formula. A formula
//! examination that some tool takes part in, on an instance without its formula file (or with a
//! broken one), is left out and said (a problem, and [`Plan::left_out`]).
//!
//! One file per job: the instances the manifest declares (`declared_instances`), the tools'
//! identities (`tool_identities`), the executed runs (`executed_runs`), the results files' runs
//! (`imported_runs`) and the answers given besides them (`answers_given`).

mod answers_given;
mod declared_instances;
mod executed_runs;
mod imported_runs;
mod tool_identities;

#[cfg(test)]
mod tests;

use std::sync::Arc;

use mccbuild_core::diag::Problems;
use mccbuild_core::timing::phase;
use mccbuild_core::{RunKey, Value};
use mccbuild_rules::edition::{ExamId, Examination, Limits};
use serde::{Deserialize, Serialize};

use self::declared_instances::declared_instances;
use self::imported_runs::{add_imported_tools, imported_instances, read_results_files};
use self::tool_identities::tool_identities;
use crate::corrections::Corrections;
use crate::digest_cache::DigestCache;
use crate::instance::ArchiveLimits;
use crate::key::ToolIdentity;
use crate::manifest::{Contest, InstanceSource};
use crate::reference::Reference;
use crate::results_file::ResultRow;

pub use self::executed_runs::parse_truth;
pub(crate) use self::imported_runs::imported_tool;

/// An instance of the contest. (What its files are, [`InstanceFacts`], is read while the plan
/// is made, into its runs' keys and value ids, and not kept.)
///
/// [`InstanceFacts`]: crate::instance::InstanceFacts
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PlannedInstance {
    pub name: String,
    pub model: usize,
    pub source: InstanceSource,
}

/// A model with its kind resolved (`inputs` models: surprise if they carry `NewModel`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PlannedModel {
    pub name: String,
    /// Index into the edition's model kinds.
    pub kind: usize,
    pub instances: Vec<usize>,
}

/// One examination of one instance: the values it asks for.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ExamInstance {
    pub instance: usize,
    pub exam: ExamId,
    /// The value ids, in the order of the formula file (or of the rules: the scored values,
    /// then the edition's optional ones). Answers are matched to them; every one counts for
    /// Confidence (E-2.2), trusted values (E-3.1) and completeness (E-4.3).
    pub ids: Arc<[Arc<str>]>,
    /// The first `scored` ids earn points (E-4.1); the others are read but not scored (2023:
    /// StateSpace scores STATES only).
    pub scored: usize,
    /// Ground-truth contests: the expected value of each id (from the instance's truth file).
    pub truth: Option<Arc<[Option<Value>]>>,
    /// The reference answer of each id (`[reference]`; `None`: unknown there), or `None` when
    /// the contest names none or the reference says nothing of this examination instance.
    pub reference: Option<Arc<[Option<Value>]>>,
    /// The organisers' decided value of each id (`[contest] corrections`, E-6.3; `None`: the
    /// vote stands), or `None` when no value of this examination instance is decided.
    pub corrections: Option<Arc<[Option<Value>]>>,
}

/// One run of the plan.
#[derive(Clone, Debug)]
pub struct Run {
    pub tool: usize,
    /// Index into [`Plan::exam_instances`].
    pub exam_instance: usize,
    pub key: RunKey,
    pub limits: Limits,
    /// Instance files the run must not see (rule M-9).
    pub hidden: Arc<[String]>,
    /// Where the run comes from: executed by a tool, or a row of a results file.
    pub origin: RunOrigin,
}

/// What the plan leaves out because of a problem with an instance: the whole instance (it cannot
/// be read), or one examination of it (its formula file is missing or broken).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeftOut {
    pub model: String,
    pub instance: String,
    /// None: every examination of the instance.
    pub examination: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum RunOrigin {
    Executed,
    /// Row `row` of results file `file` (indices into [`Plan::imported`]), at `line` of it.
    Imported {
        file: usize,
        row: usize,
        line: usize,
    },
}

/// The keys of one version's runs, by instance name and examination name
/// ([`Plan::version_keys`]).
pub type VersionKeys = std::collections::BTreeMap<(String, String), RunKey>;

pub struct Plan {
    pub contest: Contest,
    /// The rows of each results file of `contest.results`; `None` when the plan came from its
    /// snapshot ([`crate::snapshot`]: the runs and keys made from them are in `runs`).
    pub imported: Option<Vec<Vec<ResultRow>>>,
    pub tools: Vec<ToolIdentity>,
    pub models: Vec<PlannedModel>,
    pub instances: Vec<PlannedInstance>,
    pub exam_instances: Vec<ExamInstance>,
    pub runs: Vec<Run>,
    /// Problems with instances (a malformed model.pnml or formula file): errors for `check`,
    /// warnings for `run` (the runs that can be made are made).
    pub problems: Problems,
    /// The reference answers of `[reference]`, as read (their values are in each examination
    /// instance's `reference`).
    pub reference: Option<Reference>,
    /// The organisers' decided values (`[contest] corrections`), as read (their values are in
    /// each examination instance's `corrections`).
    pub corrections: Option<Corrections>,
    /// The instances and examination instances those problems leave out (`run` exits non-zero
    /// when it left some out).
    pub left_out: Vec<LeftOut>,
}

impl Plan {
    /// Builds the plan: the results files' rows, the tools' identities, the instances, then one
    /// run per tool x instance x examination (and one per results row), each with its key.
    /// Problems with single instances or rows are in `problems`; the plan fails only when a
    /// tool's folder cannot be read.
    pub fn build(
        contest: Contest,
        executor: &[(String, String)],
        cache: &mut DigestCache,
        archive_limits: ArchiveLimits,
    ) -> Result<Plan, Problems> {
        Plan::build_runs(contest, executor, cache, archive_limits)?.with_answers_given()
    }

    /// [`Plan::build`] without the reference answers and the organisers' decisions: everything
    /// made from the files the runs are made of (results files, tools, instances). This is what
    /// the plan snapshot keeps ([`crate::snapshot`]).
    pub fn build_runs(
        contest: Contest,
        executor: &[(String, String)],
        cache: &mut DigestCache,
        archive_limits: ArchiveLimits,
    ) -> Result<Plan, Problems> {
        Plan::build_runs_as(contest, None, executor, cache, archive_limits)
    }

    /// The keys the runs of tool `tool` of `contest` would have with each of `versions` (earlier
    /// identities of the tool, `mccbuild diff --tool`): per version, the key of each examination
    /// instance the tool takes part in, by instance and examination name. Made as the plan is,
    /// from the instances' files (through the digest cache), so the keys are those the runs of
    /// that version got when their instances and limits were what they are now.
    pub fn version_keys(
        contest: &Contest,
        tool: usize,
        versions: &[ToolIdentity],
        executor: &[(String, String)],
        cache: &mut DigestCache,
    ) -> Result<Vec<VersionKeys>, Problems> {
        if versions.is_empty() {
            return Ok(Vec::new());
        }
        let mut contest = contest.clone();
        let Some(entry) = contest.tools.get(tool).cloned() else {
            return Ok(vec![Default::default(); versions.len()]);
        };
        contest.tools = vec![entry; versions.len()];
        contest.results.clear();
        let plan = Plan::build_runs_as(
            contest,
            Some(versions.to_vec()),
            executor,
            cache,
            ArchiveLimits::default(),
        )?;
        let mut keys = vec![std::collections::BTreeMap::new(); versions.len()];
        for run in &plan.runs {
            let ei = &plan.exam_instances[run.exam_instance];
            let name = (
                plan.instances[ei.instance].name.clone(),
                plan.contest.edition.examinations[ei.exam].name.clone(),
            );
            keys[run.tool].insert(name, run.key);
        }
        Ok(keys)
    }

    /// [`Plan::build_runs`], with the tools' identities given (`Some`: one per tool of the
    /// contest) rather than read from their folders.
    fn build_runs_as(
        mut contest: Contest,
        identities: Option<Vec<ToolIdentity>>,
        executor: &[(String, String)],
        cache: &mut DigestCache,
        archive_limits: ArchiveLimits,
    ) -> Result<Plan, Problems> {
        let mut problems = Problems::default();
        let imported = read_results_files(&contest, &mut problems);
        add_imported_tools(&mut contest, &imported);
        let tools = match identities {
            Some(tools) => tools,
            None => match tool_identities(&contest, &imported, cache, &mut problems) {
                Some(tools) => tools,
                None => return Err(problems),
            },
        };
        let t = phase("plan: instances");
        let mut left_out = Vec::new();
        let (mut models, mut instances, facts) = declared_instances(
            &contest,
            cache,
            archive_limits,
            &mut problems,
            &mut left_out,
        );
        let imported_instance = imported_instances(
            &contest,
            &imported,
            &mut models,
            &mut instances,
            &mut problems,
        );
        drop(t);
        let t = phase("plan: keys");
        let mut plan = Plan {
            contest,
            imported: None,
            tools,
            models,
            instances,
            exam_instances: Vec::new(),
            runs: Vec::new(),
            problems,
            reference: None,
            corrections: None,
            left_out,
        };
        plan.add_executed_runs(executor, &facts);
        drop(t);
        let t = phase("plan: imported runs");
        plan.add_imported_runs(&imported, &imported_instance);
        plan.imported = Some(imported);
        drop(t);
        Ok(plan)
    }

    /// The reference answers (`[reference]`) and the organisers' decided values (`[contest]
    /// corrections`), read into the examination instances. Neither is a key ingredient, and
    /// both are small: they are read on every command, never taken from a snapshot.
    pub fn with_answers_given(mut self) -> Result<Plan, Problems> {
        let t = phase("plan: reference answers");
        self.add_reference();
        drop(t);
        let _t = phase("plan: corrections");
        self.add_corrections()?;
        Ok(self)
    }

    /// The examination name of a run.
    pub fn exam_name(&self, run: &Run) -> &str {
        &self.contest.edition.examinations[self.exam_instances[run.exam_instance].exam].name
    }

    pub fn instance_of(&self, run: &Run) -> &PlannedInstance {
        &self.instances[self.exam_instances[run.exam_instance].instance]
    }
}

/// An examination instance: a formula examination's ids are its formula file's (all scored),
/// another's the rules' (the scored values, then the optional ones).
fn exam_instance(
    instance: usize,
    exam_id: ExamId,
    exam: &Examination,
    formula_ids: Arc<[Arc<str>]>,
    truth: Option<Arc<[Option<Value>]>>,
) -> ExamInstance {
    let (ids, scored): (Arc<[Arc<str>]>, usize) = if exam.formula_file.is_some() {
        let n = formula_ids.len();
        (formula_ids, n)
    } else {
        (exam.answer_ids().into(), exam.values.len())
    };
    ExamInstance {
        instance,
        exam: exam_id,
        ids,
        scored,
        truth,
        reference: None,
        corrections: None,
    }
}
