//! `mccbuild diff --old A --new B`: two versions of a tool (two tool entries of one manifest),
//! value by value against the trusted values of the contest (`mccbuild_engine::diff`), printed
//! as text or JSON and written as a page with `--html` (`mccbuild_output::diff`). Executes
//! nothing: it reads the store (run both versions first).

use std::path::Path;

use mccbuild_engine::Session;
use mccbuild_engine::diff::diff_report;
use mccbuild_output::diff::{diff_page, diff_text};

use crate::error::Error;

pub fn diff(
    manifest: &Path,
    old: &str,
    new: &str,
    json: bool,
    html: Option<&Path>,
) -> Result<(), Error> {
    let session = Session::open_and_warn(manifest)?;
    let report = diff_report(&session, old, new)?;
    if let Some(path) = html {
        super::write_page(path, &diff_page(&report))?;
    }
    if report.not_in_store > 0 {
        eprintln!(
            "note: {} examination instances left out: a version's run is not in the store (`mccbuild run --tool {old} --tool {new}` makes them)",
            report.not_in_store
        );
    }
    if json {
        super::print_json(&report)
    } else {
        super::print_out(&diff_text(&report))
    }
}
