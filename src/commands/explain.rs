//! `mccbuild explain`: why a value has its trusted value (with the runs behind it: each one's
//! record and reproduction command), or why a tool has its score.

use std::collections::BTreeMap;
use std::path::Path;

use mccbuild_engine::wrong::value_runs;
use mccbuild_output::terminal::{tool_text, value_text};
use mccbuild_output::wrong::runs_text;
use mccbuild_scoring::explain::{explain_tool, explain_value};

use crate::cli::ExplainWhat;
use crate::error::Error;
use mccbuild_engine::Session;

pub fn explain(manifest: &Path, what: ExplainWhat, json: bool) -> Result<(), Error> {
    let session = Session::open_and_warn(manifest)?;
    let (db, handles) = session.scoring();
    let plan = &session.plan;
    match what {
        ExplainWhat {
            instance: Some(i),
            examination: Some(e),
            id: Some(v),
            tool: None,
            category: None,
        } => {
            if !plan.instances.iter().any(|x| x.name == i) {
                return Err(Error::NoInstance {
                    hint: mccbuild_core::names::did_you_mean(
                        &i,
                        plan.instances.iter().map(|x| x.name.as_str()),
                        "instances",
                    ),
                    instance: i,
                    manifest: plan.contest.manifest_path.clone(),
                });
            }
            let x = explain_value(plan, &db, &handles, &i, &e, &v)?;
            let diagnostics = value_diagnostics(&session, &i, &e, &v);
            let runs = value_runs(&session, &i, &e);
            if json {
                let mut x = serde_json::to_value(&x).unwrap_or_default();
                if let Some(object) = x.as_object_mut() {
                    object.insert("diagnostics".into(), serde_json::json!(diagnostics));
                    object.insert("runs".into(), serde_json::json!(runs));
                }
                super::print_json(&x)
            } else {
                let mut text = value_text(&x);
                text.push_str(&runs_text(&runs));
                if !diagnostics.is_empty() {
                    text.push_str("answer-parser diagnostics of its runs:\n");
                    for (tool, messages) in &diagnostics {
                        for m in messages {
                            text.push_str(&format!("  {tool}: {m}\n"));
                        }
                    }
                }
                super::print_out(&text)
            }
        }
        ExplainWhat {
            instance: None,
            examination: None,
            id: None,
            tool: Some(t),
            category: Some(c),
        } => {
            let x = explain_tool(plan, &db, &handles, &t, &c)?;
            if json {
                super::print_json(&x)
            } else {
                super::print_out(&tool_text(&x))
            }
        }
        _ => Err(Error::ExplainWhat),
    }
}

/// The answer parser's diagnostics about one value, by tool: those of the runs of its
/// examination instance that name the value's id, and those that name no id of the examination
/// (about the run as a whole: a malformed line, DO_NOT_COMPETE with answers).
fn value_diagnostics(
    session: &Session,
    instance: &str,
    examination: &str,
    id: &str,
) -> BTreeMap<String, Vec<String>> {
    let plan = &session.plan;
    let Some(e) = plan.exam_instances.iter().position(|ei| {
        plan.instances[ei.instance].name == instance
            && plan.contest.edition.examinations[ei.exam].name == examination
    }) else {
        return BTreeMap::new();
    };
    let ids = &plan.exam_instances[e].ids;
    let runs = (0..plan.runs.len()).filter(|&i| plan.runs[i].exam_instance == e);
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (i, diagnostics) in session.diagnostics_of(runs) {
        let about: Vec<String> = diagnostics
            .into_iter()
            .filter(|d| d.contains(id) || !ids.iter().any(|other| d.contains(&**other)))
            .collect();
        if !about.is_empty() {
            out.insert(plan.contest.tools[plan.runs[i].tool].name.clone(), about);
        }
    }
    out
}
