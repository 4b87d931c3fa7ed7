//! The plan: one run per (tool, instance, examination) the tool takes part in, with its key.
//!
//! An examination exists on an instance when it needs no file (StateSpace, the global
//! properties) or when the instance has its formula file with at least one formula. A formula
//! examination that some tool takes part in, on an instance without its formula file (or with a
//! broken one), is left out and said (a problem, and [`Plan::left_out`]).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use mccbuild_core::diag::{Problem, Problems};
use mccbuild_core::digest::Digest;
use mccbuild_core::timing::phase;
use mccbuild_core::{RunKey, Value};
use mccbuild_rules::edition::{ExamId, Examination, Limits};
use mccbuild_rules::hidden_files::hidden_files;
use mccbuild_rules::weights::{model_kind, model_of};
use serde::{Deserialize, Serialize};

use crate::corrections::Corrections;
use crate::digest_cache::DigestCache;
use crate::instance::{instance_facts, ArchiveLimits, FileProblem, InstanceFacts};
use crate::key::{files_digest, reading, tool_files_digest, KeyBuilder, ToolIdentity};
use crate::manifest::{mcc_model_name, Contest, InstanceSource, ModelKindDecl, Tool, ToolKind};
use crate::reference::Reference;
use crate::results_file::{read_results, vector_length, ResultRow};

/// An instance of the contest. (What its files are, [`InstanceFacts`], is read while the plan
/// is made, into its runs' keys and value ids, and not kept.)
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

/// The expected answer of a verification task's truth file: SAFE (the property holds) is TRUE,
/// UNSAFE is FALSE; other words are values as tools write them.
pub fn parse_truth(text: &str) -> Result<Value, mccbuild_core::value::ValueError> {
    match text.trim() {
        "SAFE" => Ok(Value::Bool(true)),
        "UNSAFE" => Ok(Value::Bool(false)),
        other => Value::parse(other),
    }
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
        mut contest: Contest,
        executor: &[(String, String)],
        cache: &mut DigestCache,
        archive_limits: ArchiveLimits,
    ) -> Result<Plan, Problems> {
        let mut problems = Problems::default();
        let imported = read_results_files(&contest, &mut problems);
        add_imported_tools(&mut contest, &imported);
        let Some(tools) = tool_identities(&contest, &imported, cache, &mut problems) else {
            return Err(problems);
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

    /// `[contest] corrections`: reads the organisers' decided values (E-6.3) and gives each
    /// examination instance its own (not part of any run key: new corrections re-score). A
    /// file that cannot be read, or an entry naming no value of the contest or a value of the
    /// wrong kind, fails the plan: a contest is never scored with part of its decisions.
    fn add_corrections(&mut self) -> Result<(), Problems> {
        let Some(path) = &self.contest.corrections else {
            return Ok(());
        };
        let corrections = Corrections::load(path)?;
        let edition = self.contest.edition.clone();
        let mut used = vec![false; corrections.len()];
        for ei in &mut self.exam_instances {
            ei.corrections = corrections.values(
                &self.instances[ei.instance].name,
                &edition.examinations[ei.exam].name,
                &ei.ids,
                &mut used,
            );
        }
        let mut problems = Problems::default();
        let instances: HashSet<&str> = self.instances.iter().map(|i| i.name.as_str()).collect();
        for (entry, used) in corrections.entries.iter().zip(&used) {
            let why = if !instances.contains(entry.instance.as_str()) {
                "no such instance in the contest".to_string()
            } else if let Some(exam) = edition.examination(&entry.examination) {
                if *used {
                    let kind = edition.examinations[exam].value;
                    if entry.value.kind() == kind {
                        continue;
                    }
                    format!(
                        "the value {} is not of the examination's kind ({})",
                        entry.value,
                        kind.name()
                    )
                } else {
                    format!(
                        "no value `{}` in this examination of this instance (or no tool takes part in it)",
                        entry.id
                    )
                }
            } else {
                format!(
                    "no examination `{}` in the edition {}",
                    entry.examination, edition.info.name
                )
            };
            problems.push(corrections.unknown_value(entry, &why));
        }
        problems.into_result(())?;
        self.corrections = Some(corrections);
        Ok(())
    }

    /// `[reference]`: reads the reference answers of the contest's instances and gives each
    /// examination instance its values (not part of any run key: a new reference re-scores).
    fn add_reference(&mut self) {
        let Some(config) = &self.contest.reference else {
            return;
        };
        let names: HashSet<&str> = self.instances.iter().map(|i| i.name.as_str()).collect();
        let reference = match Reference::load(&config.answers, &names, &self.contest.edition) {
            Ok((reference, problems)) => {
                self.problems.extend(problems);
                reference
            }
            Err(problems) => {
                self.problems.extend(problems);
                return;
            }
        };
        let edition = &self.contest.edition;
        for ei in &mut self.exam_instances {
            ei.reference = reference.values(
                &self.instances[ei.instance].name,
                &edition.examinations[ei.exam].name,
                &ei.ids,
            );
        }
        self.reference = Some(reference);
    }

    /// The examination name of a run.
    pub fn exam_name(&self, run: &Run) -> &str {
        &self.contest.edition.examinations[self.exam_instances[run.exam_instance].exam].name
    }

    pub fn instance_of(&self, run: &Run) -> &PlannedInstance {
        &self.instances[self.exam_instances[run.exam_instance].instance]
    }

    /// The runs of the declared instances (`facts[i]`: the facts of declared instance `i`):
    /// every examination of every instance that some tool takes part in, and the runs of those
    /// tools.
    fn add_executed_runs(&mut self, executor: &[(String, String)], facts: &[Arc<InstanceFacts>]) {
        let contest = &self.contest;
        let edition = contest.edition.clone();
        let keys = KeyBuilder::new(&self.tools, executor);
        // Per examination instance of this loop: its task digest (the runs' keys are combined
        // from it below, on every core).
        let first_run = self.runs.len();
        let first_ei = self.exam_instances.len();
        let mut tasks: Vec<Digest> = Vec::new();
        // The tools that execute each examination.
        let users: Vec<Vec<&str>> = (0..edition.examinations.len())
            .map(|exam_id| {
                contest
                    .tools
                    .iter()
                    .filter(|t| t.dir.is_some() && t.examinations.contains(&exam_id))
                    .map(|t| t.name.as_str())
                    .collect()
            })
            .collect();
        for (i, (instance, facts)) in self.instances.iter().zip(facts).enumerate() {
            if matches!(instance.source, InstanceSource::Imported(_)) {
                continue;
            }
            let kind = self.models[instance.model].kind;
            for (exam_id, exam) in edition.examinations.iter().enumerate() {
                // An examination no tool takes part in is not part of the contest.
                if !contest
                    .tools
                    .iter()
                    .any(|t| t.dir.is_some() && t.examinations.contains(&exam_id))
                {
                    continue;
                }
                let Some(formula_ids) = formula_ids(
                    instance,
                    facts,
                    &self.models[instance.model].name,
                    exam,
                    &users[exam_id],
                    &mut self.problems,
                    &mut self.left_out,
                ) else {
                    continue;
                };
                let truth = expected_answer(contest, instance, facts, exam, &mut self.problems);
                let ei = self.exam_instances.len();
                self.exam_instances
                    .push(exam_instance(i, exam_id, exam, formula_ids, truth));
                // What the run must not see (M-9; a ground-truth task's expected answer). Hidden
                // files are not part of the run's key either: correcting an expected answer
                // re-scores, it does not rerun.
                let hidden = hidden_files(&edition, exam_id, kind, |f| facts.has_file(f));
                let hidden_refs: Vec<&str> = hidden.iter().map(String::as_str).collect();
                let content = facts.visible_digest(&hidden_refs);
                let limits = contest.limits_for(exam_id);
                tasks.push(keys.task(&instance.name, &content, &exam.name, &reading(exam), limits));
                let hidden: Arc<[String]> = hidden.into();
                for (t, tool) in contest.tools.iter().enumerate() {
                    if tool.dir.is_none() || !tool.examinations.contains(&exam_id) {
                        continue;
                    }
                    self.runs.push(Run {
                        tool: t,
                        exam_instance: ei,
                        key: RunKey([0; 32]),
                        limits,
                        hidden: hidden.clone(),
                        origin: RunOrigin::Executed,
                    });
                }
            }
        }
        // One small hash per run: 300,000 of them for an MCC edition, spread over the cores.
        let runs = &mut self.runs[first_run..];
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let chunk = runs.len().div_ceil(threads).max(8192);
        std::thread::scope(|scope| {
            for part in runs.chunks_mut(chunk) {
                let (keys, tasks) = (&keys, &tasks);
                scope.spawn(move || {
                    for run in part {
                        run.key = keys.key(run.tool, &tasks[run.exam_instance - first_ei]);
                    }
                });
            }
        });
    }

    /// The runs of the results files: one per row. An examination instance's values are as
    /// many as its longest results or estimated-result vector (formula ids are positions: the
    /// files do not name them). Two rows for one run: the last one counts.
    fn add_imported_runs(
        &mut self,
        imported: &[Vec<ResultRow>],
        imported_instance: &HashMap<String, usize>,
    ) {
        let edition = self.contest.edition.clone();
        let lengths = self.imported_lengths(imported, imported_instance);
        let import_keys =
            KeyBuilder::new(&self.tools, &[("kind".to_string(), "import".to_string())]);
        let mut imported_ei: HashMap<(usize, ExamId), usize> = HashMap::new();
        let mut seen_rows: HashMap<(usize, usize), usize> = HashMap::new();
        // How each examination's answers are read (a key ingredient), written once.
        let readings: Vec<String> = edition.examinations.iter().map(reading).collect();
        let first_run = self.runs.len();
        for (f, rows) in imported.iter().enumerate() {
            for (r, row) in rows.iter().enumerate() {
                let (Some(&i), Some(exam_id)) = (
                    imported_instance.get(&row.instance),
                    edition.examination(&row.examination),
                ) else {
                    continue;
                };
                let exam = &edition.examinations[exam_id];
                let Some(t) = self.contest.tool(&row.tool) else {
                    continue;
                };
                let ei = *imported_ei.entry((i, exam_id)).or_insert_with(|| {
                    let n = lengths.get(&(i, exam_id)).copied().unwrap_or(1).max(1);
                    let ids: Vec<Arc<str>> = (0..n)
                        .map(|k| Arc::from(format!("{}-{}-{k:02}", row.instance, exam.name)))
                        .collect();
                    self.exam_instances
                        .push(exam_instance(i, exam_id, exam, ids.into(), None));
                    self.exam_instances.len() - 1
                });
                if let Some(line) = seen_rows.insert((t, ei), row.line) {
                    self.problems.push(Problem::new(
                        &self.contest.results[f],
                        format!(
                            "lines {line} and {}: two runs of {} on {} {}; the last one counts",
                            row.line, row.tool, row.instance, row.examination
                        ),
                    ));
                    self.runs
                        .retain(|run: &Run| !(run.tool == t && run.exam_instance == ei));
                }
                self.runs.push(Run {
                    tool: t,
                    exam_instance: ei,
                    key: RunKey([0; 32]),
                    limits: self.contest.limits_for(exam_id),
                    hidden: Arc::from(Vec::new()),
                    origin: RunOrigin::Imported {
                        file: f,
                        row: r,
                        line: row.line,
                    },
                });
            }
        }
        // Two small hashes per run (its task, then its key), spread over the cores as the
        // executed runs' keys are.
        let exam_instances = &self.exam_instances;
        let runs = &mut self.runs[first_run..];
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let chunk = runs.len().div_ceil(threads).max(8192);
        std::thread::scope(|scope| {
            for part in runs.chunks_mut(chunk) {
                let (import_keys, readings, edition) = (&import_keys, &readings, &edition);
                scope.spawn(move || {
                    for run in part {
                        let RunOrigin::Imported { file, row, .. } = run.origin else {
                            continue;
                        };
                        let row = &imported[file][row];
                        let exam_id = exam_instances[run.exam_instance].exam;
                        let task = import_keys.task(
                            &row.instance,
                            &row.digest,
                            &edition.examinations[exam_id].name,
                            &readings[exam_id],
                            run.limits,
                        );
                        run.key = import_keys.key(run.tool, &task);
                    }
                });
            }
        });
    }

    /// Per imported instance and examination, the length of its longest vector: the row's
    /// answers, and the trusted values it states (the only length known when no tool answered).
    /// Rows of an examination the edition does not have are problems.
    fn imported_lengths(
        &mut self,
        imported: &[Vec<ResultRow>],
        imported_instance: &HashMap<String, usize>,
    ) -> HashMap<(usize, ExamId), usize> {
        let edition = &self.contest.edition;
        let mut lengths: HashMap<(usize, ExamId), usize> = HashMap::new();
        for (f, rows) in imported.iter().enumerate() {
            for row in rows {
                let Some(exam) = edition.examination(&row.examination) else {
                    self.problems.push(Problem::new(
                        &self.contest.results[f],
                        format!(
                            "line {}: no examination `{}` in {}; row left out",
                            row.line, row.examination, edition.info.name
                        ),
                    ));
                    continue;
                };
                let Some(&i) = imported_instance.get(&row.instance) else {
                    continue;
                };
                for vector in [&row.results, &row.estimated] {
                    if let Some(len) = vector_length(vector, edition.examinations[exam].value) {
                        let n = lengths.entry((i, exam)).or_insert(0);
                        *n = (*n).max(len);
                    }
                }
            }
        }
        lengths
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

/// The value ids of an examination on an instance: the rules' fixed ones, or the ids of the
/// instance's formula file. None when the examination does not exist there: its formula file is
/// empty, or missing or broken (a problem, and the examination instance is left out).
fn formula_ids(
    instance: &PlannedInstance,
    facts: &InstanceFacts,
    model: &str,
    exam: &Examination,
    users: &[&str],
    problems: &mut Problems,
    left_out: &mut Vec<LeftOut>,
) -> Option<Arc<[Arc<str>]>> {
    let Some(file) = &exam.formula_file else {
        return Some(exam.values.iter().cloned().collect());
    };
    let mut leave_out = |problem: Problem| {
        problems.push(problem);
        left_out.push(LeftOut {
            model: model.to_string(),
            instance: instance.name.clone(),
            examination: Some(exam.name.clone()),
        });
        None
    };
    match facts.formulas.get(file) {
        Some(Err(e)) => leave_out(file_problem(instance, file, e).help(format!(
            "the {} runs of instance {} are left out until it is fixed",
            exam.name, instance.name
        ))),
        None => {
            let what = if facts.has_file(file) {
                "is not a formula file (its root element is not <property-set>)"
            } else {
                "is missing"
            };
            leave_out(
                Problem::new(
                    instance.source.path().join(file),
                    format!(
                        "the formula file of examination {} {what}: instance {} has no {} runs",
                        exam.name, instance.name, exam.name
                    ),
                )
                .help(format!(
                    "restore {file} from the instance's MCC archive, or take {} out of the `examinations` of {}",
                    exam.name,
                    users.iter().map(|u| format!("`{u}`")).collect::<Vec<_>>().join(", ")
                )),
            )
        }
        Some(Ok(ids)) if ids.is_empty() => None,
        Some(Ok(ids)) => Some(ids.iter().map(|id| Arc::from(id.as_str())).collect()),
    }
}

/// A problem of one file of an instance, at its place in that file.
fn file_problem(instance: &PlannedInstance, file: &str, problem: &FileProblem) -> Problem {
    Problem::new(instance.source.path().join(file), problem.message.clone()).at(problem.location)
}

/// Ground-truth contests: the expected answer of an examination on an instance, from its truth
/// file (missing or unreadable: a problem, and no expected answer).
fn expected_answer(
    contest: &Contest,
    instance: &PlannedInstance,
    facts: &InstanceFacts,
    exam: &Examination,
    problems: &mut Problems,
) -> Option<Arc<[Option<Value>]>> {
    let file = exam.truth_file.as_ref()?;
    let path = instance.source.path();
    match facts.texts.get(file).map(|t| parse_truth(t)) {
        Some(Ok(value)) if value.kind() == exam.value => Some(Arc::from(vec![Some(value)])),
        Some(Ok(value)) => {
            problems.push(Problem::new(
                path,
                format!("{file}: `{value}` is not a {} answer", exam.value.name()),
            ));
            None
        }
        Some(Err(e)) => {
            problems.push(Problem::new(path, format!("{file}: {e}")).help(
                "write SAFE or UNSAFE (or a value as tools write it: TRUE, FALSE, an integer)",
            ));
            None
        }
        None => {
            problems.push(
                Problem::new(
                    path,
                    format!("the expected answer file `{file}` is missing"),
                )
                .help(format!(
                    "{} takes its trusted values from it (ground truth)",
                    contest.edition.info.name
                )),
            );
            None
        }
    }
}

/// The rows of each results file of the contest; their tools join the contest (as competing
/// tools of their own family, unless the manifest says otherwise).
fn read_results_files(contest: &Contest, problems: &mut Problems) -> Vec<Vec<ResultRow>> {
    let mut imported: Vec<Vec<ResultRow>> = Vec::new();
    for path in &contest.results {
        match read_results(path) {
            Ok((rows, file_problems)) => {
                problems.extend(file_problems);
                imported.push(rows);
            }
            Err(file_problems) => {
                problems.extend(file_problems);
                imported.push(Vec::new());
            }
        }
    }
    imported
}

/// The tools the results files name and the manifest does not: competing tools known by name
/// only, in every examination.
fn add_imported_tools(contest: &mut Contest, imported: &[Vec<ResultRow>]) {
    for row in imported.iter().flatten() {
        if contest.tool(&row.tool).is_none() {
            let tool = imported_tool(contest, &row.tool, row.cores);
            contest.tools.push(tool);
        }
    }
}

/// A tool known from a results file only: competing, by name, in every examination.
pub(crate) fn imported_tool(contest: &Contest, name: &str, cores: u32) -> Tool {
    Tool {
        name: name.to_string(),
        bk_tool: name.to_string(),
        kind: ToolKind::Competing,
        user: Default::default(),
        host_packages: Vec::new(),
        family: name.to_string(),
        cores,
        dir: None,
        entry: String::new(),
        setup: None,
        setup_inputs: None,
        examinations: (0..contest.edition.examinations.len()).collect(),
    }
}

/// Each tool's identity (its files' digests): None when a tool's folder cannot be read.
fn tool_identities(
    contest: &Contest,
    imported: &[Vec<ResultRow>],
    cache: &mut DigestCache,
    problems: &mut Problems,
) -> Option<Vec<ToolIdentity>> {
    let mut tools = Vec::with_capacity(contest.tools.len());
    let mut unreadable = false;
    for tool in &contest.tools {
        let Some(dir) = &tool.dir else {
            if !imported.iter().flatten().any(|r| r.tool == tool.name) {
                problems.push(
                    Problem::new(
                        &contest.manifest_path,
                        format!(
                            "tool `{}` has no `dir` and no run in the results files",
                            tool.name
                        ),
                    )
                    .help("check the tool's name against the `tool` column of the results files"),
                );
            }
            // Imported tools are known by name only; their runs' keys hold their rows.
            let files = *blake3::hash(b"mccbuild imported tool").as_bytes();
            tools.push(ToolIdentity {
                name: tool.name.clone(),
                bk_tool: tool.bk_tool.clone(),
                user: tool.user.name().to_string(),
                host: String::new(),
                cores: tool.cores,
                entry: String::new(),
                setup: None,
                files,
                setup_files: files,
            });
            continue;
        };
        let host = match crate::host_packages::package_versions(&tool.host_packages) {
            Ok(host) => host,
            Err(e) => {
                unreadable = true;
                problems.push(
                    Problem::new(
                        &contest.manifest_path,
                        format!("tool `{}`: host_packages: {e}", tool.name),
                    )
                    .help("host_packages names Debian packages of this machine; remove it where there is no dpkg"),
                );
                String::new()
            }
        };
        let digests = tool_files_digest(dir, cache).and_then(|files| {
            let setup_files = match &tool.setup_inputs {
                Some(patterns) => files_digest(dir, Some(patterns), cache)?,
                None => files,
            };
            Ok((files, setup_files))
        });
        match digests {
            Ok((files, setup_files)) => tools.push(ToolIdentity {
                name: tool.name.clone(),
                bk_tool: tool.bk_tool.clone(),
                user: tool.user.name().to_string(),
                host,
                cores: tool.cores,
                entry: tool.entry.clone(),
                setup: tool.setup.clone(),
                files,
                setup_files,
            }),
            Err(e) => {
                unreadable = true;
                problems.push(Problem::new(
                    &contest.manifest_path,
                    format!("tool `{}`: cannot read {}: {e}", tool.name, dir.display()),
                ))
            }
        }
    }
    (!unreadable).then_some(tools)
}

/// The models of the manifest and their instances (inspected: a broken one is left out, an
/// instance with a broken model file is a problem but planned), each model's kind resolved, and
/// each instance's facts.
fn declared_instances(
    contest: &Contest,
    cache: &mut DigestCache,
    archive_limits: ArchiveLimits,
    problems: &mut Problems,
    left_out: &mut Vec<LeftOut>,
) -> (
    Vec<PlannedModel>,
    Vec<PlannedInstance>,
    Vec<Arc<InstanceFacts>>,
) {
    let edition = &contest.edition;
    let model_file = &edition.instances.model_file;
    let mut models = Vec::new();
    let mut instances: Vec<PlannedInstance> = Vec::new();
    let mut all_facts: Vec<Arc<InstanceFacts>> = Vec::new();
    for (m, model) in contest.models.iter().enumerate() {
        let mut planned = Vec::new();
        let mut any_new = false;
        for decl in &model.instances {
            match instance_facts(&decl.name, &decl.source, cache, archive_limits) {
                Ok(facts) => {
                    let fix = "tools will be run on it anyway; fix or remove the instance";
                    if !facts.has_file(model_file) {
                        problems.push(
                            Problem::new(
                                decl.source.path(),
                                format!("the instance has no {model_file}"),
                            )
                            .help(fix),
                        );
                    } else if let (Err(e), true) = (&facts.net, model_file.ends_with(".pnml")) {
                        problems.push(
                            Problem::new(decl.source.path().join(model_file), e.message.clone())
                                .at(e.location)
                                .help(fix),
                        );
                    }
                    any_new |= facts.new_model;
                    planned.push(instances.len());
                    instances.push(PlannedInstance {
                        name: decl.name.clone(),
                        model: m,
                        source: decl.source.clone(),
                    });
                    all_facts.push(facts);
                }
                Err(e) => {
                    problems.push(
                        Problem::new(decl.source.path(), e.to_string())
                            .help("this instance is left out of the contest until it is fixed"),
                    );
                    left_out.push(LeftOut {
                        model: model.name.clone(),
                        instance: decl.name.clone(),
                        examination: None,
                    });
                }
            }
        }
        let given = match model.kind {
            ModelKindDecl::Given(kind) => Some(kind),
            ModelKindDecl::FromMarker => None,
        };
        models.push(PlannedModel {
            name: model.name.clone(),
            kind: model_kind(edition, given, any_new),
            instances: planned,
        });
    }
    (models, instances, all_facts)
}

/// The instances of the results files (known by name only), grouped into models by the MCC
/// naming; returns each one's index by name.
fn imported_instances(
    contest: &Contest,
    imported: &[Vec<ResultRow>],
    models: &mut Vec<PlannedModel>,
    instances: &mut Vec<PlannedInstance>,
    problems: &mut Problems,
) -> HashMap<String, usize> {
    let mut imported_instance: HashMap<String, usize> = HashMap::new();
    for (f, rows) in imported.iter().enumerate() {
        for row in rows {
            if imported_instance.contains_key(&row.instance) {
                continue;
            }
            if instances.iter().any(|i| i.name == row.instance) {
                problems.push(
                    Problem::new(
                        &contest.results[f],
                        format!(
                            "line {}: instance `{}` is also a declared instance",
                            row.line, row.instance
                        ),
                    )
                    .help("an instance's runs are either executed or imported; rename one of them"),
                );
                continue;
            }
            let model_name = model_of(&row.instance, contest.edition.scoring.model_grouping)
                .unwrap_or(&row.instance)
                .to_string();
            let model = match models.iter().position(|m| m.name == model_name) {
                Some(m) => m,
                None => {
                    // A kind given to the family is its COL and PT models' when they are apart.
                    let family = mcc_model_name(&row.instance).unwrap_or(&row.instance);
                    let given = contest
                        .model_kinds
                        .get(&model_name)
                        .or_else(|| contest.model_kinds.get(family))
                        .copied();
                    models.push(PlannedModel {
                        kind: model_kind(&contest.edition, given, false),
                        name: model_name,
                        instances: Vec::new(),
                    });
                    models.len() - 1
                }
            };
            models[model].instances.push(instances.len());
            imported_instance.insert(row.instance.clone(), instances.len());
            instances.push(PlannedInstance {
                name: row.instance.clone(),
                model,
                source: InstanceSource::Imported(contest.results[f].clone()),
            });
        }
    }
    imported_instance
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::{run_key, KeyInputs};

    /// The plan fills its keys on several threads from one task digest per examination
    /// instance: each must be the key `run_key` computes from that run's own ingredients.
    #[test]
    fn every_planned_key_is_the_run_key_of_its_run() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let contest = Contest::load(&root.join("contest.toml")).expect("the demo contest");
        let executor = vec![("kind".to_string(), "test".to_string())];
        let plan = Plan::build(
            contest,
            &executor,
            &mut DigestCache::in_memory(),
            ArchiveLimits::default(),
        )
        .expect("the demo plans");
        assert!(plan.runs.len() > 50, "{} runs", plan.runs.len());
        let edition = &plan.contest.edition;
        // Each instance's facts read again, as the plan read them.
        let facts: Vec<Arc<InstanceFacts>> = plan
            .instances
            .iter()
            .map(|i| {
                instance_facts(
                    &i.name,
                    &i.source,
                    &mut DigestCache::in_memory(),
                    ArchiveLimits::default(),
                )
                .expect("the demo's instances read")
            })
            .collect();
        for run in &plan.runs {
            let ei = &plan.exam_instances[run.exam_instance];
            let instance = &plan.instances[ei.instance];
            let exam = &edition.examinations[ei.exam];
            let hidden: Vec<&str> = run.hidden.iter().map(String::as_str).collect();
            let tool = &plan.tools[run.tool];
            let direct = run_key(&KeyInputs {
                tool,
                instance: &instance.name,
                instance_content: &facts[ei.instance].visible_digest(&hidden),
                examination: &exam.name,
                reading: &reading(exam),
                limits: run.limits,
                executor: &crate::key::executor_for_tool(&executor, &tool.name),
            });
            assert_eq!(run.key, direct, "{} {}", instance.name, exam.name);
        }
    }
}
