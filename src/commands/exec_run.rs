//! `mccbuild exec-run` (internal): the runs of these keys, here, in the local sandbox, recorded
//! into the store: what each step of a Slurm job executes.

use std::path::Path;
use std::sync::atomic::Ordering;

use mccbuild_core::RunKey;

use crate::error::Error;
use crate::progress::StepProgress;
use crate::session::Session;

pub fn exec_run(
    manifest: &Path,
    mut keys: Vec<String>,
    keys_file: Option<&Path>,
    jobs: usize,
) -> Result<(), Error> {
    if let Some(file) = keys_file {
        let text = std::fs::read_to_string(file).map_err(|e| {
            Error::Usage(format!("cannot read the keys file {}: {e}", file.display()))
        })?;
        // A line may start with the run's cores: `1 <key>`.
        keys.extend(
            text.lines()
                .filter_map(|l| l.split_whitespace().last())
                .map(String::from),
        );
    }
    let wanted = keys
        .iter()
        .map(|k| {
            RunKey::from_hex(k)
                .ok_or_else(|| Error::Usage(format!("`{k}` is not a run key (64 hex digits)")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut session = Session::open_and_warn(manifest)?;
    session.store.check_writable()?;
    let (selection, unknown) = find_runs(&session, manifest, &wanted);
    let cancel = crate::signals::cancel_on_interrupt()
        .map_err(|e| Error::NotStarted(format!("cannot handle signals: {e}")))?;
    let outcome = session.execute_here(&selection, jobs, &mut StepProgress, &cancel);
    outcome.record_error()?;
    if cancel.load(Ordering::SeqCst) {
        return Err(Error::Interrupted);
    }
    match outcome.failed + unknown {
        0 => Ok(()),
        n => Err(Error::RunsFailed(n)),
    }
}

/// The plan's runs with these keys, and how many keys are not in the plan (each said).
fn find_runs(session: &Session, manifest: &Path, wanted: &[RunKey]) -> (Vec<usize>, usize) {
    let mut selection = Vec::new();
    let mut unknown = 0;
    for key in wanted {
        match session.plan.runs.iter().position(|r| r.key == *key) {
            Some(i) => selection.push(i),
            None => {
                unknown += 1;
                eprintln!(
                    "error: run {key} is not a run of {} as this machine ({}) sees it: its sandbox ({}), the contest's files or mccbuild differ from those of the machine that submitted it",
                    manifest.display(),
                    mccbuild_exec::host_name(),
                    session
                        .executor
                        .key_ingredients()
                        .iter()
                        .map(|(k, v)| format!("{k}={v}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            }
        }
    }
    (selection, unknown)
}
