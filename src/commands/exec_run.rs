//! `mccbuild exec-run` (internal): the runs of these keys, here, in the local sandbox, recorded
//! into the store: what each step of a Slurm job executes.

use std::path::Path;
use std::sync::atomic::Ordering;

use mccbuild_core::RunKey;

use mccbuild_engine::Session;
use mccbuild_engine::progress::StepProgress;

use crate::error::Error;

pub fn exec_run(
    manifest: &Path,
    mut keys: Vec<String>,
    keys_file: Option<&Path>,
    jobs: usize,
) -> Result<(), Error> {
    if let Some(file) = keys_file {
        let text = std::fs::read_to_string(file).map_err(|source| Error::KeysFile {
            path: file.to_path_buf(),
            source,
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
        .map(|k| parse_key(k))
        .collect::<Result<Vec<_>, _>>()?;
    let mut session = Session::open_and_warn(manifest)?;
    session.store.check_writable()?;
    let keys: Vec<RunKey> = wanted.iter().map(|(key, _)| *key).collect();
    let (selection, unknown) = find_runs(&session, manifest, &keys);
    // Reruns: executed again while the stored record is still the one they replace (a job
    // resubmitted after the new record was written skips them).
    for &i in &selection {
        let key = session.plan.runs[i].key;
        let replaces = wanted.iter().find(|(k, _)| *k == key).and_then(|(_, r)| *r);
        if let Some(old) = replaces {
            session.redo_if_stored_as(i, old);
        }
    }
    let cancel = crate::signals::cancel_on_interrupt()?;
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

/// A run key, or `<key>:<digest>`: a rerun replacing the record with that digest.
fn parse_key(text: &str) -> Result<(RunKey, Option<mccbuild_core::Digest>), Error> {
    let bad = || Error::BadKey {
        text: text.to_string(),
    };
    mccbuild_exec::slurm::parse_exec_run_key(text).ok_or_else(bad)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_may_name_the_record_its_rerun_replaces() {
        let (k, d) = ("ab".repeat(32), "cd".repeat(32));
        let (key, replaces) = parse_key(&k).unwrap();
        assert_eq!((key.hex(), replaces), (k.clone(), None));
        let (key, replaces) = parse_key(&format!("{k}:{d}")).unwrap();
        assert_eq!(key.hex(), k);
        assert_eq!(replaces, Some([0xcd; 32]));
        for bad in ["ab", &format!("{k}:"), &format!("{k}:zz"), &format!("x{k}")] {
            assert!(parse_key(bad).is_err(), "{bad}");
        }
    }
}
