//! The plan: one run per (tool, instance, examination) the tool takes part in, with its key.
//!
//! An examination exists on an instance when it needs no file (StateSpace, the global
//! properties) or when the instance has its formula file with at least one formula.

use std::sync::Arc;

use crate::diag::{Problem, Problems};
use crate::digest::DigestCache;
use crate::instance::{instance_facts, ArchiveLimits, InstanceFacts};
use crate::key::{files_digest, tool_files_digest, KeyBuilder, RunKey, ToolIdentity};
use crate::manifest::{Contest, InstanceSource, ModelKindDecl};
use crate::rules::edition::{ExamId, Limits};

/// An instance of the contest.
#[derive(Clone, Debug)]
pub struct PlannedInstance {
    pub name: String,
    pub model: usize,
    pub source: InstanceSource,
    pub facts: Arc<InstanceFacts>,
}

/// A model with its kind resolved (`inputs` models: surprise if they carry `NewModel`).
#[derive(Clone, Debug)]
pub struct PlannedModel {
    pub name: String,
    /// Index into the edition's model kinds.
    pub kind: usize,
    pub instances: Vec<usize>,
}

/// One examination of one instance: the values it asks for.
#[derive(Clone, Debug)]
pub struct ExamInstance {
    pub instance: usize,
    pub exam: ExamId,
    /// The scored value ids, in the order of the formula file (or of the rules).
    pub ids: Arc<[Arc<str>]>,
    /// The ids answers are matched to: `ids`, then the edition's optional values.
    pub answer_ids: Arc<[Arc<str>]>,
    /// Ground-truth contests: the expected value of each id (from the instance's truth file).
    pub truth: Option<Arc<[Option<crate::value::Value>]>>,
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
}

pub struct Plan {
    pub contest: Contest,
    pub tools: Vec<ToolIdentity>,
    pub models: Vec<PlannedModel>,
    pub instances: Vec<PlannedInstance>,
    pub exam_instances: Vec<ExamInstance>,
    pub runs: Vec<Run>,
    /// Problems with instances (a malformed model.pnml or formula file): errors for `check`,
    /// warnings for `run` (the runs that can be made are made).
    pub problems: Problems,
}

/// The expected answer of a verification task's truth file: SAFE (the property holds) is TRUE,
/// UNSAFE is FALSE; other words are values as tools write them.
pub fn parse_truth(text: &str) -> Result<crate::value::Value, String> {
    match text.trim() {
        "SAFE" => Ok(crate::value::Value::Bool(true)),
        "UNSAFE" => Ok(crate::value::Value::Bool(false)),
        other => crate::value::Value::parse(other).map_err(|e| e.to_string()),
    }
}

impl Plan {
    /// Builds the plan. Fails only when a tool's folder cannot be read.
    pub fn build(contest: Contest, executor: &[(String, String)], cache: &mut DigestCache, archive_limits: ArchiveLimits) -> Result<Plan, Problems> {
        let edition = contest.edition.clone();
        let mut problems = Problems::default();

        let mut tools = Vec::with_capacity(contest.tools.len());
        for tool in &contest.tools {
            let digests = tool_files_digest(&tool.dir, cache).and_then(|files| {
                let setup_files = match &tool.setup_inputs {
                    Some(patterns) => files_digest(&tool.dir, Some(patterns), cache)?,
                    None => files,
                };
                Ok((files, setup_files))
            });
            match digests {
                Ok((files, setup_files)) => tools.push(ToolIdentity {
                    name: tool.name.clone(),
                    cores: tool.cores,
                    entry: tool.entry.clone(),
                    setup: tool.setup.clone(),
                    files,
                    setup_files,
                }),
                Err(e) => problems.push(Problem::new(&contest.manifest_path, format!("tool `{}`: cannot read {}: {e}", tool.name, tool.dir.display()))),
            }
        }
        if !problems.is_empty() {
            return Err(problems);
        }

        let t = crate::timing::phase("plan: instances");
        let surprise = edition.model_kind("surprise");
        let known = edition.model_kind("known").unwrap_or(0);
        let mut models = Vec::new();
        let mut instances: Vec<PlannedInstance> = Vec::new();
        for (m, model) in contest.models.iter().enumerate() {
            let mut planned = PlannedModel { name: model.name.clone(), kind: known, instances: Vec::new() };
            let mut any_new = false;
            for decl in &model.instances {
                match instance_facts(&decl.name, &decl.source, cache, archive_limits) {
                    Ok(facts) => {
                        if !facts.has_file(&edition.instances.model_file) {
                            problems.push(
                                Problem::new(decl.source.path(), format!("the instance has no {}", edition.instances.model_file))
                                    .help("tools will be run on it anyway; fix or remove the instance"),
                            );
                        } else if let (Err(e), true) = (&facts.net, edition.instances.model_file.ends_with(".pnml")) {
                            problems.push(Problem::new(decl.source.path(), e.clone()).help("tools will be run on it anyway; fix or remove the instance"));
                        }
                        any_new |= facts.new_model;
                        planned.instances.push(instances.len());
                        instances.push(PlannedInstance { name: decl.name.clone(), model: m, source: decl.source.clone(), facts });
                    }
                    Err(e) => problems.push(Problem::new(decl.source.path(), e).help("this instance is left out of the contest until it is fixed")),
                }
            }
            planned.kind = match model.kind {
                ModelKindDecl::Given(kind) => kind,
                ModelKindDecl::FromMarker if any_new => surprise.unwrap_or(known),
                ModelKindDecl::FromMarker => known,
            };
            models.push(planned);
        }

        drop(t);
        let _t = crate::timing::phase("plan: keys");
        let keys = KeyBuilder::new(&tools, executor);
        let mut exam_instances = Vec::new();
        let mut runs = Vec::new();
        for (i, instance) in instances.iter().enumerate() {
            let kind = models[instance.model].kind;
            for (exam_id, exam) in edition.examinations.iter().enumerate() {
                // An examination no tool takes part in is not part of the contest.
                if !contest.tools.iter().any(|t| t.examinations.contains(&exam_id)) {
                    continue;
                }
                let ids: Arc<[Arc<str>]> = match &exam.formula_file {
                    None => exam.values.iter().cloned().collect(),
                    Some(file) => match instance.facts.formulas.get(file) {
                        None => continue,
                        Some(Err(e)) => {
                            problems.push(
                                Problem::new(instance.source.path(), format!("{file}: {e}"))
                                    .help(format!("the {} runs of instance {} are left out until it is fixed", exam.name, instance.name)),
                            );
                            continue;
                        }
                        Some(Ok(ids)) if ids.is_empty() => continue,
                        Some(Ok(ids)) => ids.iter().map(|id| Arc::from(id.as_str())).collect(),
                    },
                };
                let truth = match &exam.truth_file {
                    None => None,
                    Some(file) => match instance.facts.texts.get(file).map(|t| parse_truth(t)) {
                        Some(Ok(value)) if value.kind() == exam.value => Some(Arc::from(vec![Some(value)])),
                        Some(Ok(value)) => {
                            problems.push(Problem::new(instance.source.path(), format!("{file}: `{value}` is not a {:?} answer", exam.value)));
                            None
                        }
                        Some(Err(e)) => {
                            problems.push(Problem::new(instance.source.path(), format!("{file}: {e}")).help("write SAFE, UNSAFE, TRUE, FALSE or an integer"));
                            None
                        }
                        None => {
                            problems.push(
                                Problem::new(instance.source.path(), format!("the expected answer file `{file}` is missing"))
                                    .help(format!("{} takes its trusted values from it (ground truth)", contest.edition.info.name)),
                            );
                            None
                        }
                    },
                };
                let answer_ids: Arc<[Arc<str>]> = if exam.formula_file.is_some() { ids.clone() } else { exam.answer_ids().into() };
                let ei = exam_instances.len();
                exam_instances.push(ExamInstance { instance: i, exam: exam_id, ids, answer_ids, truth });
                let verdict_file = edition.verdict_files.file.as_str();
                let hidden: Vec<String> = if !edition.shows_verdict_file(exam_id, kind) && instance.facts.has_file(verdict_file) {
                    vec![verdict_file.to_string()]
                } else {
                    Vec::new()
                };
                let hidden_refs: Vec<&str> = hidden.iter().map(String::as_str).collect();
                let content = instance.facts.visible_digest(&hidden_refs);
                let limits = contest.limits_for(exam_id);
                let task = keys.task(&instance.name, &content, &exam.name, &exam.parse_spec(), limits);
                let hidden: Arc<[String]> = hidden.into();
                for (t, tool) in contest.tools.iter().enumerate() {
                    if !tool.examinations.contains(&exam_id) {
                        continue;
                    }
                    runs.push(Run { tool: t, exam_instance: ei, key: keys.key(t, &task), limits, hidden: hidden.clone() });
                }
            }
        }
        Ok(Plan { contest, tools, models, instances, exam_instances, runs, problems })
    }

    /// The examination name of a run.
    pub fn exam_name(&self, run: &Run) -> &str {
        &self.contest.edition.examinations[self.exam_instances[run.exam_instance].exam].name
    }

    pub fn instance_of(&self, run: &Run) -> &PlannedInstance {
        &self.instances[self.exam_instances[run.exam_instance].instance]
    }
}
