//! The executed runs: one per declared instance, examination and tool taking part in it, each
//! examination instance with its value ids (the rules', or its formula file's) and, in
//! ground-truth contests, its expected answer; the keys computed on every core.

use std::sync::Arc;

use mccbuild_core::diag::{Problem, Problems};
use mccbuild_core::digest::Digest;
use mccbuild_core::{RunKey, Value};
use mccbuild_rules::edition::Examination;
use mccbuild_rules::hidden_files::hidden_files;

use super::{LeftOut, Plan, PlannedInstance, Run, RunOrigin, exam_instance};
use crate::instance::{FileProblem, InstanceFacts};
use crate::key::{KeyBuilder, reading};
use crate::manifest::{Contest, InstanceSource};

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
    /// The runs of the declared instances (`facts[i]`: the facts of declared instance `i`):
    /// every examination of every instance that some tool takes part in, and the runs of those
    /// tools.
    pub(super) fn add_executed_runs(
        &mut self,
        executor: &[(String, String)],
        facts: &[Arc<InstanceFacts>],
    ) {
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
