//! The runs of the results files: their rows read, the tools and instances they name that the
//! manifest does not added (by name only, grouped into models by the MCC naming), and one run
//! per row with its key.
//!
//! A row may name a declared instance (one of `inputs` or the models' globs, whose files the
//! plan read): its run then joins that instance's examination instances, beside the executed
//! runs, so that published results and a tool's own runs are judged and scored together. The
//! row's values are by position, numbered as the MCC numbers formulas: position `nn` is the
//! formula file's id at place `nn` among the ids sorted as strings ([`Plan::imported_slot`]).

use std::collections::HashMap;
use std::sync::Arc;

use mccbuild_core::RunKey;
use mccbuild_core::diag::{Problem, Problems};
use mccbuild_rules::edition::ExamId;
use mccbuild_rules::weights::{model_kind, model_of};

use super::{ExamInstance, Plan, PlannedInstance, PlannedModel, Run, RunOrigin, exam_instance};
use crate::key::{KeyBuilder, reading};
use crate::manifest::{Contest, InstanceSource, Tool, ToolKind, mcc_model_name};
use crate::results_file::{ResultRow, read_results, vector_length};

impl Plan {
    /// The runs of the results files: one per row. An examination instance's values are as
    /// many as its longest results or estimated-result vector (formula ids are positions: the
    /// files do not name them). Two rows for one run: the last one counts.
    pub(super) fn add_imported_runs(
        &mut self,
        imported: &[Vec<ResultRow>],
        imported_instance: &HashMap<String, usize>,
    ) {
        let edition = self.contest.edition.clone();
        let lengths = self.imported_lengths(imported, imported_instance);
        let import_keys =
            KeyBuilder::new(&self.tools, &[("kind".to_string(), "import".to_string())]);
        // A declared instance's examination instances are its executed runs' (made before).
        let mut imported_ei: HashMap<(usize, ExamId), usize> = self
            .exam_instances
            .iter()
            .enumerate()
            .map(|(e, ei)| ((ei.instance, ei.exam), e))
            .collect();
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
        let instances = &self.instances;
        let runs = &mut self.runs[first_run..];
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let chunk = runs.len().div_ceil(threads).max(8192);
        std::thread::scope(|scope| {
            for part in runs.chunks_mut(chunk) {
                let (import_keys, readings, edition) = (&import_keys, &readings, &edition);
                let (exam_instances, instances) = (exam_instances, instances);
                scope.spawn(move || {
                    for run in part {
                        let RunOrigin::Imported { file, row, .. } = run.origin else {
                            continue;
                        };
                        let row = &imported[file][row];
                        let ei = &exam_instances[run.exam_instance];
                        let exam_id = ei.exam;
                        // On a declared instance, the value ids the positions stand for are
                        // the formula file's: they are part of how the row is read.
                        let reading = match declared_ids(ei, instances) {
                            Some(ids) => format!("{}; ids {ids}", readings[exam_id]),
                            None => readings[exam_id].clone(),
                        };
                        let task = import_keys.task(
                            &row.instance,
                            &row.digest,
                            &edition.examinations[exam_id].name,
                            &reading,
                            run.limits,
                        );
                        run.key = import_keys.key(run.tool, &task);
                    }
                });
            }
        });
    }

    /// The place among `ids` of the value at `position` of an imported run's results vector:
    /// the position itself on an instance known from the results only (its ids are positional),
    /// and on a declared instance the formula file's id at that place among its ids sorted as
    /// strings (the MCC's numbering; the rules' ids, the same order as the rules'). `None`:
    /// beyond the examination instance's values.
    pub fn imported_slot(&self, exam_instance: usize, position: usize) -> Option<usize> {
        let ei = &self.exam_instances[exam_instance];
        if position >= ei.ids.len() {
            return None;
        }
        let declared = !matches!(
            self.instances[ei.instance].source,
            InstanceSource::Imported(_)
        );
        if !declared
            || self.contest.edition.examinations[ei.exam]
                .formula_file
                .is_none()
        {
            return Some(position);
        }
        let mut sorted: Vec<usize> = (0..ei.ids.len()).collect();
        sorted.sort_by(|&a, &b| ei.ids[a].cmp(&ei.ids[b]));
        sorted.get(position).copied()
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

/// A declared instance's value ids, joined (a key ingredient of the rows read into them), or
/// `None` for an instance known from the results only.
fn declared_ids(ei: &ExamInstance, instances: &[PlannedInstance]) -> Option<String> {
    if matches!(instances[ei.instance].source, InstanceSource::Imported(_)) {
        return None;
    }
    Some(ei.ids.join(" "))
}

/// The rows of each results file of the contest; their tools join the contest (as competing
/// tools of their own family, unless the manifest says otherwise).
pub(super) fn read_results_files(
    contest: &Contest,
    problems: &mut Problems,
) -> Vec<Vec<ResultRow>> {
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
pub(super) fn add_imported_tools(contest: &mut Contest, imported: &[Vec<ResultRow>]) {
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

/// The instances of the results files, grouped into models by the MCC naming; returns each
/// one's index by name. An instance also declared is that one (its rows join its executed
/// runs); the others are known by name only.
pub(super) fn imported_instances(
    contest: &Contest,
    imported: &[Vec<ResultRow>],
    models: &mut Vec<PlannedModel>,
    instances: &mut Vec<PlannedInstance>,
) -> HashMap<String, usize> {
    let mut imported_instance: HashMap<String, usize> = HashMap::new();
    for (f, rows) in imported.iter().enumerate() {
        for row in rows {
            if imported_instance.contains_key(&row.instance) {
                continue;
            }
            if let Some(declared) = instances.iter().position(|i| i.name == row.instance) {
                imported_instance.insert(row.instance.clone(), declared);
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
