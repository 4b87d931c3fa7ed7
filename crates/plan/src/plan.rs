//! The plan: one run per (tool, instance, examination) the tool takes part in, with its key.
//!
//! An examination exists on an instance when it needs no file (StateSpace, the global
//! properties) or when the instance has its formula file with at least one formula.

use std::sync::Arc;

use crate::digest_cache::DigestCache;
use crate::instance::{instance_facts, ArchiveLimits, InstanceFacts};
use crate::key::{files_digest, tool_files_digest, KeyBuilder, ToolIdentity};
use crate::manifest::{mcc_model_name, Contest, InstanceSource, ModelKindDecl, Tool, ToolKind};
use crate::results_file::{read_results, ResultRow};
use mccbuild_core::diag::{Problem, Problems};
use mccbuild_core::run_key::RunKey;
use mccbuild_rules::edition::{ExamId, Limits};
use mccbuild_rules::hidden_files::hidden_files;
use mccbuild_rules::weights::model_kind;

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
    /// The value ids, in the order of the formula file (or of the rules: the scored values,
    /// then the edition's optional ones). Answers are matched to them; every one counts for
    /// Confidence (E-2.2), trusted values (E-3.1) and completeness (E-4.3).
    pub ids: Arc<[Arc<str>]>,
    /// The first `scored` ids earn points (E-4.1); the others are read but not scored (2023:
    /// StateSpace scores STATES only).
    pub scored: usize,
    /// Ground-truth contests: the expected value of each id (from the instance's truth file).
    pub truth: Option<Arc<[Option<mccbuild_core::value::Value>]>>,
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

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunOrigin {
    Executed,
    /// Row `row` of results file `file` (indices into [`Plan::imported`]).
    Imported {
        file: usize,
        row: usize,
    },
}

pub struct Plan {
    pub contest: Contest,
    /// The rows of each results file of `contest.results`.
    pub imported: Vec<Vec<ResultRow>>,
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
pub fn parse_truth(text: &str) -> Result<mccbuild_core::value::Value, String> {
    match text.trim() {
        "SAFE" => Ok(mccbuild_core::value::Value::Bool(true)),
        "UNSAFE" => Ok(mccbuild_core::value::Value::Bool(false)),
        other => mccbuild_core::value::Value::parse(other).map_err(|e| e.to_string()),
    }
}

impl Plan {
    /// Builds the plan. Fails only when a tool's folder cannot be read.
    pub fn build(
        mut contest: Contest,
        executor: &[(String, String)],
        cache: &mut DigestCache,
        archive_limits: ArchiveLimits,
    ) -> Result<Plan, Problems> {
        let edition = contest.edition.clone();
        let mut problems = Problems::default();

        // Results files: their rows are runs; their tools join the contest.
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
        for rows in &imported {
            for row in rows {
                if contest.tool(&row.tool).is_none() {
                    contest.tools.push(Tool {
                        name: row.tool.clone(),
                        kind: ToolKind::Competing,
                        family: row.tool.clone(),
                        cores: row.cores,
                        dir: None,
                        entry: String::new(),
                        setup: None,
                        setup_inputs: None,
                        examinations: (0..edition.examinations.len()).collect(),
                    });
                }
            }
        }

        let mut tools = Vec::with_capacity(contest.tools.len());
        let mut unreadable_tool = false;
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
                        .help(
                            "check the tool's name against the `tool` column of the results files",
                        ),
                    );
                }
                // Imported tools are known by name only; their runs' keys hold their rows.
                let files = *blake3::hash(b"mccbuild imported tool").as_bytes();
                tools.push(ToolIdentity {
                    name: tool.name.clone(),
                    cores: tool.cores,
                    entry: String::new(),
                    setup: None,
                    files,
                    setup_files: files,
                });
                continue;
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
                    cores: tool.cores,
                    entry: tool.entry.clone(),
                    setup: tool.setup.clone(),
                    files,
                    setup_files,
                }),
                Err(e) => {
                    unreadable_tool = true;
                    problems.push(Problem::new(
                        &contest.manifest_path,
                        format!("tool `{}`: cannot read {}: {e}", tool.name, dir.display()),
                    ))
                }
            }
        }
        if unreadable_tool {
            return Err(problems);
        }

        let t = mccbuild_core::timing::phase("plan: instances");
        let mut models = Vec::new();
        let mut instances: Vec<PlannedInstance> = Vec::new();
        for (m, model) in contest.models.iter().enumerate() {
            let mut planned = PlannedModel {
                name: model.name.clone(),
                kind: edition.default_model_kind,
                instances: Vec::new(),
            };
            let mut any_new = false;
            for decl in &model.instances {
                match instance_facts(&decl.name, &decl.source, cache, archive_limits) {
                    Ok(facts) => {
                        if !facts.has_file(&edition.instances.model_file) {
                            problems.push(
                                Problem::new(
                                    decl.source.path(),
                                    format!("the instance has no {}", edition.instances.model_file),
                                )
                                .help("tools will be run on it anyway; fix or remove the instance"),
                            );
                        } else if let (Err(e), true) =
                            (&facts.net, edition.instances.model_file.ends_with(".pnml"))
                        {
                            problems.push(Problem::new(decl.source.path(), e.clone()).help(
                                "tools will be run on it anyway; fix or remove the instance",
                            ));
                        }
                        any_new |= facts.new_model;
                        planned.instances.push(instances.len());
                        instances.push(PlannedInstance {
                            name: decl.name.clone(),
                            model: m,
                            source: decl.source.clone(),
                            facts,
                        });
                    }
                    Err(e) => problems.push(
                        Problem::new(decl.source.path(), e)
                            .help("this instance is left out of the contest until it is fixed"),
                    ),
                }
            }
            let given = match model.kind {
                ModelKindDecl::Given(kind) => Some(kind),
                ModelKindDecl::FromMarker => None,
            };
            planned.kind = model_kind(&edition, given, any_new);
            models.push(planned);
        }

        // Instances of the results files, grouped into models by the MCC naming.
        let mut imported_instance: std::collections::HashMap<String, usize> =
            std::collections::HashMap::new();
        for (f, rows) in imported.iter().enumerate() {
            for row in rows {
                if imported_instance.contains_key(&row.instance) {
                    continue;
                }
                if instances.iter().any(|i| i.name == row.instance) {
                    problems.push(
                        Problem::new(&contest.results[f], format!("line {}: instance `{}` is also a declared instance", row.line, row.instance))
                            .help("an instance's runs are either executed or imported; rename one of them"),
                    );
                    continue;
                }
                let model_name = mcc_model_name(&row.instance)
                    .unwrap_or(&row.instance)
                    .to_string();
                let model = match models.iter().position(|m| m.name == model_name) {
                    Some(m) => m,
                    None => {
                        let kind = model_kind(
                            &edition,
                            contest.model_kinds.get(&model_name).copied(),
                            false,
                        );
                        models.push(PlannedModel {
                            name: model_name,
                            kind,
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
                    facts: Arc::new(InstanceFacts::default()),
                });
            }
        }

        drop(t);
        let _t = mccbuild_core::timing::phase("plan: keys");
        let keys = KeyBuilder::new(&tools, executor);
        let mut exam_instances = Vec::new();
        let mut runs = Vec::new();
        for (i, instance) in instances.iter().enumerate() {
            if matches!(instance.source, InstanceSource::Imported(_)) {
                continue;
            }
            let kind = models[instance.model].kind;
            for (exam_id, exam) in edition.examinations.iter().enumerate() {
                // An examination no tool takes part in is not part of the contest.
                if !contest
                    .tools
                    .iter()
                    .any(|t| t.dir.is_some() && t.examinations.contains(&exam_id))
                {
                    continue;
                }
                let ids: Arc<[Arc<str>]> = match &exam.formula_file {
                    None => exam.values.iter().cloned().collect(),
                    Some(file) => match instance.facts.formulas.get(file) {
                        None => continue,
                        Some(Err(e)) => {
                            problems.push(
                                Problem::new(instance.source.path(), format!("{file}: {e}")).help(
                                    format!(
                                        "the {} runs of instance {} are left out until it is fixed",
                                        exam.name, instance.name
                                    ),
                                ),
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
                        Some(Ok(value)) if value.kind() == exam.value => {
                            Some(Arc::from(vec![Some(value)]))
                        }
                        Some(Ok(value)) => {
                            problems.push(Problem::new(
                                instance.source.path(),
                                format!("{file}: `{value}` is not a {:?} answer", exam.value),
                            ));
                            None
                        }
                        Some(Err(e)) => {
                            problems.push(Problem::new(instance.source.path(), format!("{file}: {e}")).help("write SAFE or UNSAFE (or a value as tools write it: TRUE, FALSE, an integer)"));
                            None
                        }
                        None => {
                            problems.push(
                                Problem::new(
                                    instance.source.path(),
                                    format!("the expected answer file `{file}` is missing"),
                                )
                                .help(format!(
                                    "{} takes its trusted values from it (ground truth)",
                                    contest.edition.info.name
                                )),
                            );
                            None
                        }
                    },
                };
                let (ids, scored): (Arc<[Arc<str>]>, usize) = if exam.formula_file.is_some() {
                    (ids.clone(), ids.len())
                } else {
                    (exam.answer_ids().into(), exam.values.len())
                };
                let ei = exam_instances.len();
                exam_instances.push(ExamInstance {
                    instance: i,
                    exam: exam_id,
                    ids,
                    scored,
                    truth,
                });
                // What the run must not see (M-9; a ground-truth task's expected answer). Hidden
                // files are not part of the run's key either: correcting an expected answer
                // re-scores, it does not rerun.
                let hidden = hidden_files(&edition, exam_id, kind, |f| instance.facts.has_file(f));
                let hidden_refs: Vec<&str> = hidden.iter().map(String::as_str).collect();
                let content = instance.facts.visible_digest(&hidden_refs);
                let limits = contest.limits_for(exam_id);
                let task = keys.task(
                    &instance.name,
                    &content,
                    &exam.name,
                    &crate::key::reading(exam),
                    limits,
                );
                let hidden: Arc<[String]> = hidden.into();
                for (t, tool) in contest.tools.iter().enumerate() {
                    if tool.dir.is_none() || !tool.examinations.contains(&exam_id) {
                        continue;
                    }
                    runs.push(Run {
                        tool: t,
                        exam_instance: ei,
                        key: keys.key(t, &task),
                        limits,
                        hidden: hidden.clone(),
                        origin: RunOrigin::Executed,
                    });
                }
            }
        }
        drop(_t);
        let _t = mccbuild_core::timing::phase("plan: imported runs");
        // Imported runs: one per row; an examination instance's values are as many as its
        // longest results or estimated-result vector (formula ids are positions: the files do
        // not name them).
        let import_keys = KeyBuilder::new(&tools, &[("kind".to_string(), "import".to_string())]);
        let mut imported_ei: std::collections::HashMap<(usize, ExamId), usize> =
            std::collections::HashMap::new();
        let mut lengths: std::collections::HashMap<(usize, ExamId), usize> =
            std::collections::HashMap::new();
        for (f, rows) in imported.iter().enumerate() {
            for row in rows {
                let (Some(&i), Some(exam)) = (
                    imported_instance.get(&row.instance),
                    edition.examination(&row.examination),
                ) else {
                    if edition.examination(&row.examination).is_none() {
                        problems.push(Problem::new(
                            &contest.results[f],
                            format!(
                                "line {}: no examination `{}` in {}; row left out",
                                row.line, row.examination, edition.info.name
                            ),
                        ));
                    }
                    continue;
                };
                // The row's answers, and the trusted values it states (the only length known
                // when no tool answered).
                for vector in [&row.results, &row.estimated] {
                    if let Ok(crate::results_file::RowResults::Values(v)) =
                        crate::results_file::parse_results(vector, edition.examinations[exam].value)
                    {
                        let n = lengths.entry((i, exam)).or_insert(0);
                        *n = (*n).max(v.len());
                    }
                }
            }
        }
        let mut seen_rows: std::collections::HashMap<(usize, usize), (usize, usize)> =
            std::collections::HashMap::new();
        for (f, rows) in imported.iter().enumerate() {
            for (r, row) in rows.iter().enumerate() {
                let (Some(&i), Some(exam_id)) = (
                    imported_instance.get(&row.instance),
                    edition.examination(&row.examination),
                ) else {
                    continue;
                };
                let exam = &edition.examinations[exam_id];
                let Some(t) = contest.tool(&row.tool) else {
                    continue;
                };
                let ei = *imported_ei.entry((i, exam_id)).or_insert_with(|| {
                    let ids: Arc<[Arc<str>]> = match exam.formula_file {
                        None => exam.values.iter().cloned().collect(),
                        Some(_) => {
                            let n = lengths.get(&(i, exam_id)).copied().unwrap_or(1).max(1);
                            (0..n)
                                .map(|k| {
                                    Arc::from(format!("{}-{}-{k:02}", row.instance, exam.name))
                                })
                                .collect()
                        }
                    };
                    let (ids, scored): (Arc<[Arc<str>]>, usize) = if exam.formula_file.is_some() {
                        (ids.clone(), ids.len())
                    } else {
                        (exam.answer_ids().into(), exam.values.len())
                    };
                    exam_instances.push(ExamInstance {
                        instance: i,
                        exam: exam_id,
                        ids,
                        scored,
                        truth: None,
                    });
                    exam_instances.len() - 1
                });
                if let Some((line, _)) = seen_rows.insert((t, ei), (row.line, r)) {
                    problems.push(Problem::new(
                        &contest.results[f],
                        format!(
                            "lines {line} and {}: two runs of {} on {} {}; the last one counts",
                            row.line, row.tool, row.instance, row.examination
                        ),
                    ));
                    runs.retain(|run: &Run| !(run.tool == t && run.exam_instance == ei));
                }
                let limits = contest.limits_for(exam_id);
                let task = import_keys.task(
                    &row.instance,
                    &row.digest,
                    &exam.name,
                    &crate::key::reading(exam),
                    limits,
                );
                runs.push(Run {
                    tool: t,
                    exam_instance: ei,
                    key: import_keys.key(t, &task),
                    limits,
                    hidden: Arc::from(Vec::new()),
                    origin: RunOrigin::Imported { file: f, row: r },
                });
            }
        }
        Ok(Plan {
            contest,
            imported,
            tools,
            models,
            instances,
            exam_instances,
            runs,
            problems,
        })
    }

    /// The examination name of a run.
    pub fn exam_name(&self, run: &Run) -> &str {
        &self.contest.edition.examinations[self.exam_instances[run.exam_instance].exam].name
    }

    pub fn instance_of(&self, run: &Run) -> &PlannedInstance {
        &self.instances[self.exam_instances[run.exam_instance].instance]
    }
}
