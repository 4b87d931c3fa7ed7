//! The runs behind values, gathered from a session: the runs of one examination instance
//! (`explain` of a value) and the values a tool got wrong with the run of each (`scores
//! --wrong`). The texts are `mccbuild_output::wrong`'s.

use std::collections::BTreeMap;

use mccbuild_output::wrong::{RunRef, WrongReport, WrongValue};
use mccbuild_plan::RunOrigin;
use mccbuild_scoring::scores::scores_report;

use crate::error::SelectError;
use crate::reproduce::reproduce;
use crate::session::Session;

/// Run `i` of the plan: its tool, key, record file and (executed runs) reproduction command.
pub fn run_ref(session: &Session, i: usize) -> RunRef {
    let run = &session.plan.runs[i];
    RunRef {
        tool: session.plan.contest.tools[run.tool].name.clone(),
        key: run.key.hex(),
        record: session.record_path(i),
        reproduce: (run.origin == RunOrigin::Executed).then(|| reproduce(session, i)),
    }
}

/// The stored runs of examination `examination` of instance `instance`, in the plan's order.
pub fn value_runs(session: &Session, instance: &str, examination: &str) -> Vec<RunRef> {
    let plan = &session.plan;
    (0..plan.runs.len())
        .filter(|&i| {
            let run = &plan.runs[i];
            let ei = &plan.exam_instances[run.exam_instance];
            plan.instances[ei.instance].name == instance
                && plan.exam_name(run) == examination
                && session.index.contains(&run.key)
        })
        .map(|i| run_ref(session, i))
        .collect()
}

/// Every value a tool (`tool`, or every tool) answered other than its trusted value, with its
/// run, by tool (in the manifest's order) then in the order of the scores report.
pub fn wrong_values(session: &Session, tool: Option<&str>) -> Result<WrongReport, SelectError> {
    let plan = &session.plan;
    if let Some(name) = tool {
        if !plan.contest.tools.iter().any(|t| t.name == name) {
            return Err(SelectError::NoTool {
                tool: name.to_string(),
                manifest: plan.contest.manifest_path.clone(),
                hint: mccbuild_core::names::did_you_mean(
                    name,
                    plan.contest.tools.iter().map(|t| t.name.as_str()),
                    "tools",
                ),
            });
        }
    }
    // Each run by tool name, instance and examination.
    let mut runs: BTreeMap<(&str, &str, &str), usize> = BTreeMap::new();
    for (i, run) in plan.runs.iter().enumerate() {
        let name = plan.contest.tools[run.tool].name.as_str();
        if tool.is_some_and(|t| t != name) {
            continue;
        }
        let ei = &plan.exam_instances[run.exam_instance];
        runs.insert(
            (name, &plan.instances[ei.instance].name, plan.exam_name(run)),
            i,
        );
    }
    let (db, handles) = session.scoring();
    let scores = serde_json::to_value(scores_report(plan, &db, &handles, true)).unwrap_or_default();
    let mut by_tool: BTreeMap<usize, Vec<WrongValue>> = BTreeMap::new();
    for v in scores["values"].as_array().into_iter().flatten() {
        let Some(trusted) = v["trusted"].as_str() else {
            continue;
        };
        let (instance, examination) = (
            v["instance"].as_str().unwrap_or_default(),
            v["examination"].as_str().unwrap_or_default(),
        );
        for (name, answer) in v["answers"].as_object().into_iter().flatten() {
            let Some(answer) = answer.as_str().filter(|a| *a != trusted) else {
                continue;
            };
            let Some(&i) = runs.get(&(name.as_str(), instance, examination)) else {
                continue;
            };
            by_tool
                .entry(plan.runs[i].tool)
                .or_default()
                .push(WrongValue {
                    instance: instance.to_string(),
                    examination: examination.to_string(),
                    id: v["id"].as_str().unwrap_or_default().to_string(),
                    answer: answer.to_string(),
                    trusted: trusted.to_string(),
                    run: run_ref(session, i),
                });
        }
    }
    Ok(WrongReport {
        basis: scores["basis"].as_str().unwrap_or("vote").to_string(),
        wrong: by_tool.into_values().flatten().collect(),
    })
}
