//! `mccbuild diff --old A --new B`'s comparison gathered from a session: two versions of a
//! tool (two tool entries of one manifest), value by value against the trusted values of the
//! contest. Executes nothing: it reads the store (run both versions first). The report, its
//! text and its page are `mccbuild_output::diff`'s.
//!
//! The values, trusted values and scores are read from the scores report in its documented JSON
//! form (`scores --json`, docs/cli.md), so the comparison does not depend on how scoring
//! represents numbers.

use mccbuild_core::names::did_you_mean;
use std::collections::BTreeMap;

use mccbuild_output::diff::{CHANGES, Change, DiffReport, Ratios, ValueChange, classify};
use mccbuild_scoring::scores::scores_report;
use serde_json::Value as Json;

use crate::error::DiffError;
use crate::session::Session;

/// The comparison of tool `old` with tool `new` (two tool entries of the session's manifest),
/// from the store: the runs both made, and their values in the scores report's JSON form.
pub fn diff_report(session: &Session, old: &str, new: &str) -> Result<DiffReport, DiffError> {
    let plan = &session.plan;
    let tool_index = |name: &str| {
        plan.contest
            .tools
            .iter()
            .position(|t| t.name == name)
            .ok_or_else(|| DiffError::NoTool {
                tool: name.to_string(),
                manifest: plan.contest.manifest_path.clone(),
                hint: did_you_mean(
                    name,
                    plan.contest.tools.iter().map(|t| t.name.as_str()),
                    "tools",
                ),
            })
    };
    let (a, b) = (tool_index(old)?, tool_index(new)?);
    if a == b {
        return Err(DiffError::SameTool);
    }
    // Per examination instance, each version's stored run (its index in the plan).
    let mut runs: BTreeMap<usize, (Option<usize>, Option<usize>)> = BTreeMap::new();
    for (i, run) in plan.runs.iter().enumerate() {
        let slot = runs.entry(run.exam_instance).or_default();
        if run.tool == a {
            slot.0 = Some(i);
        } else if run.tool == b {
            slot.1 = Some(i);
        }
    }
    let mut compared: BTreeMap<(String, String), ()> = BTreeMap::new();
    let mut not_in_store = 0;
    let mut measurements: BTreeMap<String, Ratios> = BTreeMap::new();
    for (&e, &(ra, rb)) in &runs {
        let (Some(ra), Some(rb)) = (ra, rb) else {
            continue; // one version does not take part in it
        };
        let ei = &plan.exam_instances[e];
        let (Some(sa), Some(sb)) = (
            session.index.get(&plan.runs[ra].key),
            session.index.get(&plan.runs[rb].key),
        ) else {
            not_in_store += 1;
            continue;
        };
        let exam = plan.contest.edition.examinations[ei.exam].name.clone();
        compared.insert((plan.instances[ei.instance].name.clone(), exam.clone()), ());
        measurements
            .entry(exam)
            .or_default()
            .add(&sa.measurement, &sb.measurement);
    }
    for r in measurements.values_mut() {
        r.finish();
    }

    let (db, handles) = session.scoring();
    let scores = serde_json::to_value(scores_report(plan, &db, &handles, true)).unwrap_or_default();
    let text = |v: &Json| v.as_str().map(String::from);
    let mut values = Vec::new();
    let mut counts: BTreeMap<Change, usize> = CHANGES.iter().map(|&c| (c, 0)).collect();
    for v in scores["values"].as_array().into_iter().flatten() {
        let instance = v["instance"].as_str().unwrap_or_default().to_string();
        let examination = v["examination"].as_str().unwrap_or_default().to_string();
        if !compared.contains_key(&(instance.clone(), examination.clone())) {
            continue;
        }
        let (was, is) = (text(&v["answers"][old]), text(&v["answers"][new]));
        if was == is {
            continue;
        }
        let trusted = text(&v["trusted"]);
        let changes = classify(was.as_deref(), is.as_deref(), trusted.as_deref());
        for c in &changes {
            *counts.entry(*c).or_default() += 1;
        }
        values.push(ValueChange {
            instance,
            examination,
            id: v["id"].as_str().unwrap_or_default().to_string(),
            old: was,
            new: is,
            trusted,
            changes,
        });
    }
    let mut by_category = BTreeMap::new();
    if let Some(categories) = scores["scores"].as_object() {
        for (category, tools) in categories {
            by_category.insert(category.clone(), (tools[old].clone(), tools[new].clone()));
        }
    }
    Ok(DiffReport {
        old: old.to_string(),
        new: new.to_string(),
        basis: scores["basis"].as_str().unwrap_or("vote").to_string(),
        counts,
        values,
        scores: by_category,
        measurements,
        not_in_store,
    })
}
