//! `mccbuild qualify`: the MCC's qualification phase. Each tool runs every examination it takes
//! part in on the first instance of each known model (through the normal plan, store and
//! executor), then every run is checked against the protocol (`mccbuild_engine::qualify`); the
//! report is printed as text or JSON, and written as a page with `--html`
//! (`mccbuild_output::qualify`).

use std::path::Path;
use std::sync::atomic::Ordering;

use mccbuild_engine::progress::CliProgress;
use mccbuild_engine::qualify::{check_runs, qualification_runs};
use mccbuild_engine::session::{Filter, Session};
use mccbuild_output::qualify::{report_page, report_text_fitted};
use mccbuild_output::terminal::TermStyle;

use crate::error::Error;

pub fn qualify(
    manifest: &Path,
    filter: &Filter,
    jobs: Option<usize>,
    json: bool,
    html: Option<&Path>,
) -> Result<(), Error> {
    // qualify executes runs: it holds the store's execution lock as `run` does.
    let mut session = Session::open_executing_and_warn(
        manifest,
        mccbuild_store::LockWait::Wait,
        "mccbuild qualify",
        filter,
    )?;
    session.warn_instance_problems();
    let selection = qualification_runs(&session, filter)?;
    session.store.check_writable()?;
    let jobs = jobs.unwrap_or(session.plan.contest.executor.jobs);
    let cancel = crate::signals::cancel_on_interrupt()?;
    let outcome = session.execute(&selection, jobs, &mut CliProgress::new(), &cancel);
    outcome.record_error()?;
    if cancel.load(Ordering::SeqCst) {
        crate::signals::say(&format!(
            "interrupted: {} runs recorded; runs in flight were stopped and not recorded",
            outcome.executed
        ));
        return Err(Error::Interrupted);
    }
    let report = check_runs(&session, &selection);
    if let Some(path) = html {
        super::write_page(path, &report_page(&report))?;
    }
    if json {
        super::print_json(&report)?;
    } else {
        super::print_out(&report_text_fitted(&report, TermStyle::detect().width))?;
    }
    match outcome.failed {
        0 => Ok(()),
        n => Err(Error::RunsFailed(n)),
    }
}
