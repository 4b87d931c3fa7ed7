//! `mccbuild diff`: two versions of a tool (two tool entries of one manifest, `--old A --new B`;
//! or one entry as it is now and an earlier version of it in the store, `--tool T`), value by
//! value against the trusted values of the contest and run by run
//! (`mccbuild_engine::diff`), printed as text or JSON and written as a page with `--html`
//! (`mccbuild_output::diff`); `--fail-on` turns the regressions it names into exit code 6.
//! Executes nothing: it reads the store (run both versions first).

use std::path::Path;

use mccbuild_engine::Session;
use mccbuild_engine::diff::{Against, DiffOptions, diff_report, diff_versions, tool_versions};
use mccbuild_output::diff::{DiffReport, Regression, diff_page, diff_text_fitted};
use mccbuild_output::terminal::TermStyle;
use mccbuild_output::versions::versions_text;

use crate::cli::JudgeArgs;
use crate::error::Error;

/// What `diff` compares.
pub enum What {
    /// Two tool entries.
    Entries { old: String, new: String },
    /// One tool entry now against an earlier version of it (`None`: the previous one).
    Version {
        tool: String,
        against: Option<String>,
    },
    /// The versions of a tool the store knows.
    List { tool: String },
}

pub fn diff(
    manifest: &Path,
    what: What,
    judge: &JudgeArgs,
    json: bool,
    html: Option<&Path>,
) -> Result<(), Error> {
    let session = Session::open_and_warn(manifest)?;
    let options = DiffOptions {
        slower_factor: judge.slower,
    };
    let report = match what {
        What::Entries { old, new } => {
            let report = diff_report(&session, &old, &new, options)?;
            if report.not_in_store > 0 {
                eprintln!(
                    "note: {} examination instances left out: a version's run is not in the store (`mccbuild run --tool {old} --tool {new}` makes them)",
                    report.not_in_store
                );
            }
            report
        }
        What::Version { tool, against } => {
            let against = against.map_or(Against::Previous, Against::Named);
            let report = diff_versions(&session, &tool, &against, options)?;
            if report.not_in_store > 0 {
                eprintln!(
                    "note: {} examination instances left out: the run of one of the versions is not in the store (`mccbuild run --tool {tool}` makes the current version's)",
                    report.not_in_store
                );
            }
            report
        }
        What::List { tool } => {
            let versions = tool_versions(&session, &tool)?;
            return if json {
                super::print_json(&versions)
            } else {
                super::print_out(&versions_text(&tool, &versions))
            };
        }
    };
    show(&report, judge, json, html)
}

/// Prints the comparison (and writes its page), then fails when it found a regression that
/// `--fail-on` names.
pub(crate) fn show(
    report: &DiffReport,
    judge: &JudgeArgs,
    json: bool,
    html: Option<&Path>,
) -> Result<(), Error> {
    if let Some(path) = html {
        super::write_page(path, &diff_page(report))?;
    }
    if json {
        super::print_json(report)?;
    } else {
        super::print_out(&diff_text_fitted(report, TermStyle::detect().width))?;
    }
    judged(report, judge)
}

/// `Err(Error::Regressions)` when the comparison found a regression `--fail-on` names.
pub(crate) fn judged(report: &DiffReport, judge: &JudgeArgs) -> Result<(), Error> {
    let mut named: Vec<Regression> = judge.fail_on.iter().map(|&w| w.into()).collect();
    named.sort();
    named.dedup();
    let found: Vec<String> = named
        .into_iter()
        .filter_map(|what| match report.regressions(what) {
            0 => None,
            n => Some(format!("{} {n}", what.name())),
        })
        .collect();
    if found.is_empty() {
        Ok(())
    } else {
        Err(Error::Regressions(found.join(", ")))
    }
}
