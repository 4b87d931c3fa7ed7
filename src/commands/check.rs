//! `mccbuild check`: the manifest, the rules and every instance validated, every problem at
//! once; or, with `--rules`, rules files alone.

use std::path::{Path, PathBuf};

use mccbuild_core::diag::Problems;
use mccbuild_rules::edition::Edition;

use crate::error::Error;
use mccbuild_engine::Session;
use mccbuild_engine::progress::count;

/// Checks a contest: its manifest, rules, tools and instances.
pub fn contest(manifest: &Path) -> Result<(), Error> {
    let session = Session::open_and_warn(manifest)?;
    let mut problems = session.plan.problems.clone();
    problems.extend(session.machine_problems());
    if !problems.is_empty() {
        return Err(Error::Input(problems));
    }
    let plan = &session.plan;
    println!(
        "ok: {} ({}): {}, {}, {}, {}",
        plan.contest.name,
        plan.contest.edition.info.name,
        count(plan.models.len(), "model", "models"),
        count(plan.instances.len(), "instance", "instances"),
        count(plan.contest.tools.len(), "tool", "tools"),
        count(plan.runs.len(), "run", "runs")
    );
    Ok(())
}

/// Checks rules files.
pub fn rules_files(files: &[PathBuf]) -> Result<(), Error> {
    let mut problems = Problems::default();
    for file in files {
        match Edition::load(file) {
            Ok(edition) => println!(
                "ok: {} ({}): {} categories, {} examinations, {} model kinds",
                file.display(),
                edition.info.name,
                edition.categories.len(),
                edition.examinations.len(),
                edition.model_kinds.len()
            ),
            Err(e) => problems.extend(e.into_problems()),
        }
    }
    problems.into_result(()).map_err(Error::Input)
}
