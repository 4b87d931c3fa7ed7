//! `mccbuild run`: executes the runs that are not in the store, records them, prints the
//! podiums.

use std::path::Path;
use std::sync::atomic::Ordering;

use mccbuild_output::terminal::{podium_text_styled, TermStyle};

use mccbuild_store::LockWait;

use crate::error::Error;
use crate::progress::CliProgress;
use crate::session::{Filter, Session};

pub fn run(
    manifest: &Path,
    filter: &Filter,
    jobs: Option<usize>,
    json: bool,
    no_wait: bool,
) -> Result<(), Error> {
    let wait = if no_wait {
        LockWait::Refuse
    } else {
        LockWait::Wait
    };
    let mut session = Session::open_executing_and_warn(manifest, wait, "mccbuild run")?;
    session.warn_instance_problems();
    let selection = session.select(filter)?;
    session.store.check_writable()?;
    let jobs = jobs.unwrap_or(session.plan.contest.executor.jobs);
    let cancel = crate::signals::cancel_on_interrupt()
        .map_err(|e| Error::NotStarted(format!("cannot handle signals: {e}")))?;
    let outcome = session.execute(&selection, jobs, &mut CliProgress::new(), &cancel);
    if let Some((path, reason)) = outcome.record_not_written.clone() {
        return Err(Error::Store(mccbuild_store::StoreError::RecordNotWritten {
            path,
            reason,
            recorded: outcome.executed,
        }));
    }
    if cancel.load(Ordering::SeqCst) {
        eprintln!(
            "interrupted: {} runs recorded; runs in flight were stopped and not recorded",
            outcome.executed
        );
        return Err(Error::Interrupted);
    }
    if json {
        super::print_json(&outcome)?;
    } else {
        eprintln!(
            "{} executed, {} cached, {} failed",
            outcome.executed, outcome.cached, outcome.failed
        );
        let report = session.podium_report();
        super::print_out(&podium_text_styled(
            &session.plan,
            &report,
            TermStyle::detect(),
        ))?;
    }
    match outcome.failed {
        0 => Ok(()),
        n => Err(Error::RunsFailed(n)),
    }
}
