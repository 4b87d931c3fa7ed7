//! A planned run as the executor sees it ([`Session::spec`]), as progress names it ([`label`]),
//! and its execution turned into its record ([`make_record`]).

use std::path::Path;

use mccbuild_core::protocol::{Expected, resolve};
use mccbuild_exec::{Execution, RunSpec};
use mccbuild_plan::{Plan, Run};
use mccbuild_store::{RECORD_FORMAT, RunRecord};

use crate::session::Session;

impl Session {
    /// What the executor is given of planned run `i`, its tool set up in `bin_path`.
    pub(super) fn spec(&self, i: usize, bin_path: &Path) -> RunSpec {
        let run = &self.plan.runs[i];
        let tool = &self.plan.contest.tools[run.tool];
        let instance = self.plan.instance_of(run);
        RunSpec {
            key: run.key,
            tool: tool.name.clone(),
            bk_tool: tool.bk_tool.clone(),
            tool_dir: tool.dir.clone().unwrap_or_default(),
            entry: tool.entry.clone(),
            bin_path: bin_path.to_path_buf(),
            cores: tool.cores,
            instance: instance.name.clone(),
            source: instance.source.clone(),
            examination: self.plan.exam_name(run).to_string(),
            limits: run.limits,
            hidden: run.hidden.to_vec(),
            user: tool.user,
        }
    }
}

/// `tool/instance/examination`, for progress lines.
pub fn label(plan: &Plan, run: &Run) -> String {
    format!(
        "{} {} {}",
        plan.contest.tools[run.tool].name,
        plan.instance_of(run).name,
        plan.exam_name(run)
    )
}

/// Turns an execution into the run's record: the answers are matched to the instance's ids.
pub fn make_record(
    plan: &Plan,
    run: &Run,
    executor: Vec<(String, String)>,
    execution: Execution,
) -> RunRecord {
    let ei = &plan.exam_instances[run.exam_instance];
    let exam = &plan.contest.edition.examinations[ei.exam];
    let instance = &plan.instances[ei.instance];
    let resolved = resolve(
        &execution.parsed,
        Expected {
            examination: &exam.name,
            instance: &instance.name,
            form: exam.answers,
            kind: exam.value,
            ids: &ei.ids,
        },
    );
    RunRecord {
        format: RECORD_FORMAT,
        key: run.key,
        mccbuild_version: env!("CARGO_PKG_VERSION").to_string(),
        tool: plan.contest.tools[run.tool].name.clone(),
        instance: instance.name.clone(),
        examination: exam.name.clone(),
        executor: executor.into_iter().collect(),
        limits: run.limits,
        started_at: execution.started_at,
        finished_at: execution.finished_at,
        measurement: execution.measurement,
        method: execution.method,
        cores: execution.cores,
        host: execution.host,
        response: resolved.response,
        answers: resolved.answers,
        diagnostics: resolved.diagnostics,
        stdout: execution.stdout,
        stderr: execution.stderr,
        vm: execution.vm,
        slurm: None,
        machine: execution.machine,
    }
}
