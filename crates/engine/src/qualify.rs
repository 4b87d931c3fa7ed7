//! `mccbuild qualify`'s checks: the MCC's qualification phase. Each tool runs every examination
//! it takes part in on the first instance of each known model (through the normal plan, store
//! and executor: the runs are cached like any other), then every run is checked against the
//! protocol (`mccbuild_core::conformance`). A tool qualifies when no run has a fault; each fault
//! is named under the run that shows it, with how to reproduce that run by hand. The report, its
//! text and its page are `mccbuild_output::qualify`'s.

use std::collections::BTreeMap;

use mccbuild_core::Response;
use mccbuild_core::conformance::{Check, RunOutput, check_run};
use mccbuild_core::protocol::Expected;
use mccbuild_output::qualify::{FaultyRun, Problem, QualifyReport, RunLine, ToolVerdict};
use mccbuild_plan::RunOrigin;

use crate::error::SelectError;
use crate::reproduce::reproduce;
use crate::session::{Filter, Session};

/// The runs of the qualification: each tool, each examination it takes part in, the first
/// instance of each model that is not new (the edition's new-model kind: `surprise`), narrowed
/// by `filter`. Runs imported from results files are not the tool's own runs: left out.
pub fn qualification_runs(session: &Session, filter: &Filter) -> Result<Vec<usize>, SelectError> {
    let plan = &session.plan;
    let new_kind = plan.contest.edition.new_model_kind;
    let first_instances: Vec<usize> = plan
        .models
        .iter()
        .filter(|m| Some(m.kind) != new_kind)
        .filter_map(|m| m.instances.first().copied())
        .collect();
    Ok(session
        .select(filter)?
        .into_iter()
        .filter(|&i| {
            let run = &plan.runs[i];
            run.origin == RunOrigin::Executed
                && first_instances.contains(&plan.exam_instances[run.exam_instance].instance)
        })
        .collect())
}

/// Every run of `selection` checked against the protocol (`mccbuild_core::conformance`), by
/// tool: a tool qualifies when none of its runs has a fault.
pub fn check_runs(session: &Session, selection: &[usize]) -> QualifyReport {
    let plan = &session.plan;
    let mut tools: BTreeMap<String, ToolVerdict> = BTreeMap::new();
    for &i in selection {
        let run = &plan.runs[i];
        let tool = &plan.contest.tools[run.tool];
        let ei = &plan.exam_instances[run.exam_instance];
        let exam = &plan.contest.edition.examinations[ei.exam];
        let instance = &plan.instances[ei.instance];
        let verdict = tools.entry(tool.name.clone()).or_default();
        verdict.runs += 1;
        let faulty = |problems: Vec<Problem>| FaultyRun {
            instance: instance.name.clone(),
            examination: exam.name.clone(),
            key: run.key.hex(),
            record: session.record_path(i),
            reproduce: reproduce(session, i),
            problems,
        };
        let record = match session.index.read(&session.store, &run.key) {
            Ok(Some((record, _))) => record,
            Ok(None) => {
                verdict.faulty_runs.push(faulty(vec![Problem {
                    check: Check::NotRun,
                    detail: "the run could not be carried out (see the messages above)".into(),
                }]));
                continue;
            }
            Err(corrupt) => {
                verdict.faulty_runs.push(faulty(vec![Problem {
                    check: Check::NotRun,
                    detail: format!("its record cannot be read: {}", corrupt.reason),
                }]));
                continue;
            }
        };
        match record.response {
            Response::Answered => verdict.answered += 1,
            Response::CannotCompute => verdict.cannot_compute += 1,
            Response::DoNotCompete => verdict.do_not_compete += 1,
        }
        let m = record.measurement;
        verdict.cpu_time_s += m.cpu_time_s;
        verdict.max_peak_memory_mb = verdict.max_peak_memory_mb.max(m.peak_memory_mb());
        verdict.run_list.push(RunLine {
            instance: instance.name.clone(),
            examination: exam.name.clone(),
            outcome: record.describe(),
            termination: m.termination,
            cpu_time_s: m.cpu_time_s,
            wall_time_s: m.wall_time_s,
            peak_memory_mb: m.peak_memory_mb(),
        });
        let findings = check_run(
            RunOutput {
                stdout: &record.stdout.text,
                stdout_complete: !record.stdout.truncated,
                stderr: &record.stderr.text,
                termination: m.termination,
                response: record.response,
            },
            Expected {
                examination: &exam.name,
                instance: &instance.name,
                form: exam.answers,
                kind: exam.value,
                ids: &ei.ids,
            },
        );
        if !findings.is_empty() {
            verdict.faulty_runs.push(faulty(
                findings
                    .into_iter()
                    .map(|f| Problem {
                        check: f.check,
                        detail: f.detail,
                    })
                    .collect(),
            ));
        }
    }
    for verdict in tools.values_mut() {
        verdict.problems = verdict.faulty_runs.iter().map(|r| r.problems.len()).sum();
        verdict.qualified = verdict.problems == 0;
    }
    QualifyReport { tools }
}
