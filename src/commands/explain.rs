//! `mccbuild explain`: why a value has its trusted value, or why a tool has its score.

use std::path::Path;

use mccbuild_output::terminal::{tool_text, value_text};
use mccbuild_scoring::explain::{explain_tool, explain_value};

use crate::cli::ExplainWhat;
use crate::error::Error;
use crate::session::Session;

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
                return Err(Error::Usage(format!(
                    "no instance `{i}` in {} (`mccbuild plan --json` counts the runs; the instances are those of [[model]], `inputs` and `results`)",
                    plan.contest.manifest_path.display()
                )));
            }
            let x = explain_value(plan, &db, &handles, &i, &e, &v)
                .map_err(|e| Error::Usage(e.to_string()))?;
            if json {
                super::print_json(&x)
            } else {
                super::print_out(&value_text(&x))
            }
        }
        ExplainWhat {
            instance: None,
            examination: None,
            id: None,
            tool: Some(t),
            category: Some(c),
        } => {
            let x = explain_tool(plan, &db, &handles, &t, &c)
                .map_err(|e| Error::Usage(e.to_string()))?;
            if json {
                super::print_json(&x)
            } else {
                super::print_out(&tool_text(&x))
            }
        }
        _ => Err(Error::Usage("explain a value with --instance I --examination E --id ID, or a tool's score with --tool T --category C".into())),
    }
}
