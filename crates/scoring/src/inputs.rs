//! The scoring database's inputs, built from a plan and the summaries of its stored runs.

use std::collections::HashMap;
use std::sync::Arc;

use mccbuild_core::{Measurement, RunKey};
use mccbuild_plan::Plan;
use mccbuild_plan::manifest::{Contest, ToolKind};
use mccbuild_rules::participation::takes_part;
use mccbuild_rules::reference::Basis;
use mccbuild_store::Summary;

use crate::database::{ContestInputs, ExamInstanceInputs, Handles, RunInputs, ScoringDb};
use crate::db::{Answers, ModelInfo, RunRef, ToolInfo};
use crate::memo::Remembered;

/// What the scoring database holds of a run: its answers, whether it takes part (stored, and
/// E-1.8: not DO_NOT_COMPETE), its measurement. No summary: not run yet.
pub fn run_inputs(summary: Option<&Summary>) -> (Answers, bool, Measurement) {
    match summary {
        Some(s) => (s.answers.clone(), takes_part(s.response), s.measurement),
        None => (no_answers(), false, Measurement::default()),
    }
}

/// No answers: one shared empty list (hundreds of thousands of runs have none to give).
pub fn no_answers() -> Answers {
    static EMPTY: std::sync::OnceLock<Answers> = std::sync::OnceLock::new();
    EMPTY.get_or_init(|| Arc::from(Vec::new())).clone()
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

/// What scoring knows of the contest's tools, in order.
pub fn tool_infos(contest: &Contest) -> Vec<ToolInfo> {
    contest
        .tools
        .iter()
        .map(|t| ToolInfo {
            name: t.name.clone(),
            family: t.family.clone(),
            competing: t.kind == ToolKind::Competing,
        })
        .collect()
}

/// The scoring database's inputs for `plan`: each examination instance (in plan order) with the
/// runs `runs` gives it by its number, and the model examinations `remembered` (`crate::memo`).
pub fn contest_inputs(
    plan: &Plan,
    mut runs: impl FnMut(usize) -> Vec<RunInputs>,
    remembered: HashMap<(u32, u32), Arc<Remembered>>,
) -> ContestInputs {
    ContestInputs {
        edition: plan.contest.edition.clone(),
        tools: tool_infos(&plan.contest),
        models: plan
            .models
            .iter()
            .map(|m| ModelInfo {
                name: m.name.clone(),
                kind: m.kind,
                instances: m.instances.len(),
            })
            .collect(),
        exam_instances: plan
            .exam_instances
            .iter()
            .enumerate()
            .map(|(e, ei)| ExamInstanceInputs {
                model: plan.instances[ei.instance].model as u32,
                exam: ei.exam as u32,
                ids: ei.ids.clone(),
                scored: ei.scored as u32,
                truth: ei.truth.clone(),
                reference: ei.reference.clone(),
                corrections: ei.corrections.clone(),
                runs: runs(e),
            })
            .collect(),
        basis: plan
            .contest
            .reference
            .as_ref()
            .map_or(Basis::Vote, |r| r.basis),
        remembered,
    }
}

/// Builds the scoring database of a plan from run summaries.
pub fn build_scoring<'a>(
    mut db: ScoringDb,
    plan: &Plan,
    summary: impl Fn(&RunKey) -> Option<&'a Summary> + Sync,
) -> (ScoringDb, Handles) {
    // The runs' summaries looked up on every core: at the 2024 replay's scale 144,000 index
    // lookups, each decoding its summary the first time it is asked for.
    use rayon::prelude::*;
    let summaries: Vec<Option<&'a Summary>> =
        plan.runs.par_iter().map(|run| summary(&run.key)).collect();
    let mut runs: Vec<Vec<RunInputs>> = vec![Vec::new(); plan.exam_instances.len()];
    for (run, summary) in plan.runs.iter().zip(summaries) {
        let (answers, competes, measurement) = run_inputs(summary);
        runs[run.exam_instance].push(RunInputs {
            tool: run.tool as u32,
            competes,
            answers,
            measurement,
        });
    }
    let mut runs = runs.into_iter();
    let handles = db.build(contest_inputs(
        plan,
        |_| runs.next().unwrap_or_default(),
        Default::default(),
    ));
    (db, handles)
}
