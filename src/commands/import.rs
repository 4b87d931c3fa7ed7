//! `mccbuild import FILE`: the rows of a results file of `[contest] results` into the store.

use std::path::Path;

use mccbuild_engine::Session;
use mccbuild_engine::progress::count;

use crate::error::Error;

pub fn import(manifest: &Path, file: &Path, json: bool) -> Result<(), Error> {
    let mut session = Session::open_for_import(manifest)?;
    session.warn_instance_problems();
    let summary = session.import(file)?;
    if json {
        return super::print_json(&summary);
    }
    super::print_out(&format!(
        "{}: {}, {} imported, {} already in the store\n",
        file.display(),
        count(summary.runs, "run", "runs"),
        summary.imported,
        summary.cached
    ))
}
