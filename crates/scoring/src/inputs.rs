//! The scoring database's inputs, built from a plan and the summaries of its stored runs.

use std::sync::Arc;

use mccbuild_core::RunKey;
use mccbuild_plan::manifest::ToolKind;
use mccbuild_plan::Plan;
use mccbuild_store::Summary;

use crate::db::{
    Answers, ContestShape, EiShape, Handles, ModelInfo, Perf, RunRef, RunShape, ScoringDb, ToolInfo,
};

/// What the scoring database holds of a run: its answers, whether it takes part (stored, and not
/// DO_NOT_COMPETE: E-1.8), its time and memory. No summary: not run yet.
pub fn run_inputs(summary: Option<&Summary>) -> (Answers, bool, Perf) {
    match summary {
        Some(s) => (
            s.answers.clone(),
            s.response != mccbuild_core::Response::DoNotCompete,
            Perf {
                cpu_s: s.measurement.cpu_time_s,
                peak_memory_mb: s.measurement.peak_memory_mb(),
            },
        ),
        None => (Arc::from(Vec::new()), false, Perf::default()),
    }
}

/// Each planned run's place in the scoring database that [`build_scoring`] made of the plan (it
/// lists an examination instance's runs in plan order).
pub fn run_refs(plan: &Plan, handles: &Handles) -> Vec<RunRef> {
    let mut position = vec![0usize; plan.exam_instances.len()];
    plan.runs
        .iter()
        .map(|run| {
            let r = handles.run(run.exam_instance, position[run.exam_instance]);
            position[run.exam_instance] += 1;
            r
        })
        .collect()
}

/// Builds the scoring database of a plan from run summaries.
pub fn build_scoring<'a>(
    mut db: ScoringDb,
    plan: &Plan,
    summary: impl Fn(&RunKey) -> Option<&'a Summary>,
) -> (ScoringDb, Handles) {
    let edition = plan.contest.edition.clone();
    let tools: Vec<ToolInfo> = plan
        .contest
        .tools
        .iter()
        .map(|t| ToolInfo {
            name: t.name.clone(),
            family: t.family.clone(),
            competing: t.kind == ToolKind::Competing,
        })
        .collect();
    let models: Vec<ModelInfo> = plan
        .models
        .iter()
        .map(|m| ModelInfo {
            name: m.name.clone(),
            kind: m.kind,
            instances: m.instances.len(),
        })
        .collect();
    let mut runs_by_ei: Vec<Vec<RunShape>> = vec![Vec::new(); plan.exam_instances.len()];
    for run in &plan.runs {
        let (answers, competes, perf) = run_inputs(summary(&run.key));
        let shape = RunShape {
            tool: run.tool as u32,
            competes,
            answers,
            perf,
        };
        runs_by_ei[run.exam_instance].push(shape);
    }
    let exam_instances = plan
        .exam_instances
        .iter()
        .zip(runs_by_ei)
        .map(|(ei, runs)| EiShape {
            instance: ei.instance as u32,
            model: plan.instances[ei.instance].model as u32,
            exam: ei.exam as u32,
            ids: ei.ids.clone(),
            scored: ei.scored as u32,
            runs,
            truth: ei.truth.clone(),
            _marker: std::marker::PhantomData,
        })
        .collect();
    let handles = db.build(ContestShape {
        edition,
        tools,
        models,
        exam_instances,
    });
    (db, handles)
}
