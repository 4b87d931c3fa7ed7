//! Importing one results file of `[contest] results`: its rows, runs of the plan, as records
//! straight into a pack of the store.

use std::path::Path;

use mccbuild_core::protocol::Answer;
use mccbuild_core::{CapturedOutput, Measurement, Response, Termination};
use mccbuild_plan::results_file::{ResultRow, RowResults, parse_results};
use mccbuild_plan::{Plan, Run, RunOrigin};
use mccbuild_store::{RECORD_FORMAT, RunRecord, StoreError};
use serde::Serialize;

use super::Session;
use crate::error::ImportError;

/// What `import` did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ImportSummary {
    /// Rows of the file that are runs of the contest.
    pub runs: usize,
    pub imported: usize,
    pub cached: usize,
}

impl Session {
    /// Reads the runs of one results file of `[contest] results` into the store.
    pub fn import(&mut self, file: &Path) -> Result<ImportSummary, ImportError> {
        let wanted = std::fs::canonicalize(file).map_err(|source| ImportError::Unreadable {
            path: file.to_path_buf(),
            source,
        })?;
        let Some(f) = self
            .plan
            .contest
            .results
            .iter()
            .position(|r| std::fs::canonicalize(r).ok().as_ref() == Some(&wanted))
        else {
            return Err(ImportError::NotAResultsFile {
                path: file.to_path_buf(),
                manifest: self.plan.contest.manifest_path.clone(),
            });
        };
        let Some(rows) = &self.plan.imported else {
            return Err(ImportError::PlanWithoutRows);
        };
        self.store.check_writable()?;
        let mut summary = ImportSummary::default();
        let mut records = Vec::new();
        let mut newly = Vec::new();
        for (i, run) in self.plan.runs.iter().enumerate() {
            let RunOrigin::Imported { file, row, .. } = run.origin else {
                continue;
            };
            if file != f {
                continue;
            }
            summary.runs += 1;
            if self.stored[i] {
                summary.cached += 1;
                continue;
            }
            records.push(imported_record(&self.plan, run, &rows[file][row]));
            newly.push(i);
        }
        // Straight into a pack (docs/cache.md, "Packs"): no loose file per imported run. The
        // index is saved with them (opening the session saved what loading learnt).
        if !records.is_empty() {
            self.index
                .put_packed(&self.store, &records)
                .map_err(|source| StoreError::Write {
                    path: self.store.root().to_path_buf(),
                    source,
                })?;
        }
        for i in newly {
            self.stored[i] = true;
        }
        summary.imported = records.len();
        Ok(summary)
    }
}

/// The record of a run read from a results file: its answers by position (the file's vectors
/// follow the examination's values, numbered as [`Plan::imported_slot`] says), its time and memory, the row itself as its output.
pub fn imported_record(plan: &Plan, run: &Run, row: &ResultRow) -> RunRecord {
    let (response, termination, answers, diagnostics) = read_row(plan, run, row);
    let source = match run.origin {
        RunOrigin::Imported { file, .. } => plan.contest.results[file].display().to_string(),
        RunOrigin::Executed => String::new(),
    };
    RunRecord {
        format: RECORD_FORMAT,
        key: run.key,
        mccbuild_version: env!("CARGO_PKG_VERSION").to_string(),
        tool: row.tool.clone(),
        instance: row.instance.clone(),
        examination: row.examination.clone(),
        executor: [("kind".to_string(), "import".to_string())].into(),
        limits: run.limits,
        started_at: String::new(),
        finished_at: String::new(),
        measurement: Measurement {
            termination,
            cpu_time_s: row.cpu_ms / 1000.0,
            wall_time_s: row.time_ms / 1000.0,
            peak_memory_bytes: (row.memory_mb * (1u64 << 20) as f64) as u64,
        },
        method: "imported".to_string(),
        cores: Vec::new(),
        host: String::new(),
        response,
        answers,
        diagnostics,
        stdout: CapturedOutput {
            text: format!(
                "imported from {source}, line {}: results `{}`, status `{}`\n",
                row.line, row.results, row.status
            ),
            bytes: 0,
            truncated: false,
        },
        stderr: CapturedOutput::default(),
        vm: None,
        slurm: None,
        machine: None,
    }
}

/// What a row's `results` say: the run's response, how it ended (`DNF`: stopped by the time
/// limit; otherwise it ended by itself), its answers matched to the examination's value ids, and
/// the problems found reading them.
fn read_row(
    plan: &Plan,
    run: &Run,
    row: &ResultRow,
) -> (Response, Termination, Vec<Answer>, Vec<String>) {
    let ei = &plan.exam_instances[run.exam_instance];
    let exam = &plan.contest.edition.examinations[ei.exam];
    let ended = Termination::Exit { code: 0 };
    let mut diagnostics = Vec::new();
    match parse_results(&row.results, exam.value) {
        Ok(RowResults::DoNotCompete) => (Response::DoNotCompete, ended, Vec::new(), diagnostics),
        Ok(RowResults::DidNotFinish) => (
            Response::CannotCompute,
            Termination::CpuLimit,
            Vec::new(),
            diagnostics,
        ),
        Ok(RowResults::CannotCompute) => (Response::CannotCompute, ended, Vec::new(), diagnostics),
        Ok(RowResults::Values(values)) => {
            let techniques: Vec<String> = row
                .techniques
                .split_whitespace()
                .map(String::from)
                .collect();
            let mut answers = Vec::new();
            for (position, value) in values.into_iter().enumerate() {
                let Some(value) = value else { continue };
                match plan.imported_slot(run.exam_instance, position) {
                    Some(slot) => answers.push(Answer {
                        id: ei.ids[slot].clone(),
                        position: slot as u16,
                        value,
                        techniques: techniques.clone(),
                    }),
                    None => diagnostics.push(format!(
                        "value {position} is beyond the {} values of {}",
                        ei.ids.len(),
                        exam.name
                    )),
                }
            }
            let response = if answers.is_empty() {
                Response::CannotCompute
            } else {
                Response::Answered
            };
            (response, ended, answers, diagnostics)
        }
        Err(e) => {
            diagnostics.push(format!("unreadable results `{}`: {e}", row.results));
            (Response::CannotCompute, ended, Vec::new(), diagnostics)
        }
    }
}
