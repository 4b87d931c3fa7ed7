//! `mccbuild diff`'s comparison gathered from a session: two versions of a tool, value by value
//! against the trusted values of the contest, and run by run for time. The two versions are
//! two tool entries of one manifest ([`diff_report`]), or one entry as it is now and an earlier
//! version of it whose runs the store holds ([`diff_versions`], `versions`). Executes nothing:
//! it reads the store. The report, its text and its page are `mccbuild_output::diff`'s.
//!
//! The values, trusted values and scores are read from the scores report in its documented JSON
//! form (`scores --json`, docs/cli.md), so the comparison does not depend on how scoring
//! represents numbers.

pub mod versions;

use mccbuild_core::names::did_you_mean;

use std::collections::{BTreeMap, BTreeSet};

use mccbuild_output::diff::{
    CHANGES, Change, DiffReport, Ratios, Side, SlowerRun, ValueChange, classify, is_slower,
    limited_time,
};
use mccbuild_scoring::scores::scores_report;
use mccbuild_store::Summary;
use serde_json::Value as Json;

use crate::error::DiffError;
use crate::session::Session;

pub use versions::{Against, diff_versions, tool_versions};

/// How to compare.
#[derive(Clone, Copy, Debug)]
pub struct DiffOptions {
    /// A run of the new version is slower when it took more than this factor times the old
    /// version's run (`mccbuild_output::diff::is_slower`).
    pub slower_factor: f64,
}

/// The comparison of tool `old` with tool `new` (two tool entries of the session's manifest),
/// from the store: the runs both made, and their values in the scores report's JSON form.
pub fn diff_report(
    session: &Session,
    old: &str,
    new: &str,
    options: DiffOptions,
) -> Result<DiffReport, DiffError> {
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
    // Per examination instance, each version's stored run.
    let mut runs: BTreeMap<usize, Pair> = BTreeMap::new();
    for run in &plan.runs {
        let slot = runs.entry(run.exam_instance).or_default();
        if run.tool == a {
            slot.old = Some(run.key);
        } else if run.tool == b {
            slot.new = Some(run.key);
        }
        slot.limits = Some(run.limits);
    }
    let (db, handles) = session.scoring();
    let scores = serde_json::to_value(scores_report(plan, &db, &handles, true)).unwrap_or_default();
    let sides = (
        Side {
            tool: old.to_string(),
            version: None,
        },
        Side {
            tool: new.to_string(),
            version: None,
        },
    );
    Ok(compare(
        session,
        &runs,
        (&scores, old),
        (&scores, new),
        sides,
        options,
    ))
}

/// One examination instance's runs of the two versions (their keys), and its limits.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Pair {
    pub(crate) old: Option<mccbuild_core::RunKey>,
    pub(crate) new: Option<mccbuild_core::RunKey>,
    pub(crate) limits: Option<mccbuild_rules::edition::Limits>,
}

/// The comparison of the runs paired per examination instance: the old version's answers are
/// those of tool `old.1` in the scores report `old.0`, the new version's those of `new.1` in
/// `new.0`, whose trusted values and basis are the comparison's.
pub(crate) fn compare(
    session: &Session,
    runs: &BTreeMap<usize, Pair>,
    old: (&Json, &str),
    new: (&Json, &str),
    sides: (Side, Side),
    options: DiffOptions,
) -> DiffReport {
    let plan = &session.plan;
    let mut compared: BTreeSet<(String, String)> = BTreeSet::new();
    let mut not_in_store = 0;
    let mut measurements: BTreeMap<String, Ratios> = BTreeMap::new();
    let mut slower = Vec::new();
    // The categories where one version's run only is stored on some examination instance.
    let mut one_sided: BTreeSet<usize> = BTreeSet::new();
    for (&e, pair) in runs {
        let (Some(ka), Some(kb), Some(limits)) = (pair.old, pair.new, pair.limits) else {
            continue; // one version does not take part in it
        };
        let ei = &plan.exam_instances[e];
        let (Some(sa), Some(sb)): (Option<&Summary>, Option<&Summary>) =
            (session.index.get(&ka), session.index.get(&kb))
        else {
            not_in_store += 1;
            if session.index.contains(&ka) || session.index.contains(&kb) {
                one_sided.insert(plan.contest.edition.examinations[ei.exam].category);
            }
            continue;
        };
        let exam = plan.contest.edition.examinations[ei.exam].name.clone();
        let instance = plan.instances[ei.instance].name.clone();
        let (was, is) = (
            limited_time(&sa.measurement, limits.time),
            limited_time(&sb.measurement, limits.time),
        );
        if is_slower(was, is, options.slower_factor) {
            slower.push(SlowerRun {
                instance: instance.clone(),
                examination: exam.clone(),
                old_time_s: was,
                new_time_s: is,
                ratio: is / was.max(mccbuild_output::diff::NOISE_FLOOR_S),
            });
        }
        compared.insert((instance, exam.clone()));
        measurements
            .entry(exam)
            .or_default()
            .add(&sa.measurement, &sb.measurement);
    }
    for r in measurements.values_mut() {
        r.finish();
    }

    let text = |v: &Json| v.as_str().map(String::from);
    let key_of = |v: &Json| {
        (
            v["instance"].as_str().unwrap_or_default().to_string(),
            v["examination"].as_str().unwrap_or_default().to_string(),
            v["id"].as_str().unwrap_or_default().to_string(),
        )
    };
    // The old version's answers, by value (the same report as the new one's for two entries).
    let old_answers: BTreeMap<(String, String, String), Option<String>> = old.0["values"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|v| (key_of(v), text(&v["answers"][old.1])))
        .collect();
    let mut values = Vec::new();
    let mut counts: BTreeMap<Change, usize> = CHANGES.iter().map(|&c| (c, 0)).collect();
    for v in new.0["values"].as_array().into_iter().flatten() {
        let key = key_of(v);
        if !compared.contains(&(key.0.clone(), key.1.clone())) {
            continue;
        }
        let was = old_answers.get(&key).cloned().flatten();
        let is = text(&v["answers"][new.1]);
        if was == is {
            continue;
        }
        let trusted = text(&v["trusted"]);
        let changes = classify(was.as_deref(), is.as_deref(), trusted.as_deref());
        for c in &changes {
            *counts.entry(*c).or_default() += 1;
        }
        let (instance, examination, id) = key;
        values.push(ValueChange {
            instance,
            examination,
            id,
            old: was,
            new: is,
            trusted,
            changes,
        });
    }
    let not_compared: Vec<String> = one_sided
        .into_iter()
        .map(|c| plan.contest.edition.categories[c].name.clone())
        .collect();
    let mut by_category = BTreeMap::new();
    if let Some(categories) = new.0["scores"].as_object() {
        for (category, tools) in categories {
            if not_compared.contains(category) {
                continue;
            }
            let before = old.0["scores"][category][old.1].clone();
            by_category.insert(category.clone(), (before, tools[new.1].clone()));
        }
    }
    let mut report = DiffReport {
        old: sides.0.label(),
        new: sides.1.label(),
        old_version: sides.0,
        new_version: sides.1,
        basis: new.0["basis"].as_str().unwrap_or("vote").to_string(),
        counts,
        values,
        slower_factor: options.slower_factor,
        slower,
        scores: by_category,
        scores_not_compared: not_compared,
        measurements,
        not_in_store,
    };
    report.sort();
    report
}
