//! `mccbuild export`: the results as the MCC-layout CSV, the JSON and propertiesverdict XML
//! files, executing nothing.

use std::path::{Path, PathBuf};

use mccbuild_output::export::{Export, StoredRuns, collect, write_file};

use crate::cli::ExportTo;
use crate::error::Error;
use mccbuild_engine::Session;

fn is_stdout(path: &Option<PathBuf>) -> bool {
    path.as_deref() == Some(Path::new("-"))
}

pub fn export(manifest: &Path, to: ExportTo) -> Result<(), Error> {
    if is_stdout(&to.csv) && is_stdout(&to.json) {
        return Err(Error::TwoOnStandardOutput);
    }
    for (flag, path) in [("--verdicts", &to.verdicts), ("--dir", &to.dir)] {
        if is_stdout(path) {
            return Err(Error::FolderOnStandardOutput { flag });
        }
    }
    let session = Session::open_and_warn(manifest)?;
    session.warn_instance_problems();
    // An export is the contest's result: it does not leave a damaged record's run out quietly.
    if let Some(damaged) = session.corrupt.first() {
        return Err(Error::Store(mccbuild_store::StoreError::Record {
            path: damaged.path.clone(),
            reason: format!(
                "{} ({} damaged records in all); an export needs every run whose record was written: `mccbuild run` does these runs again and its new records replace the damaged ones",
                damaged.reason,
                session.corrupt.len()
            ),
        }));
    }
    let (db, handles) = session.scoring();
    let stored = StoredRuns {
        plan: &session.plan,
        store: &session.store,
        index: &session.index,
    };
    let export = collect(&stored, &db, &handles)?;
    write_files(&export, &to)?;
    let without_values = write_folders(&export, &to)?;
    if !without_values.is_empty() {
        eprintln!(
            "note: no verdict file for {} (none of their instances has an examination in the contest)",
            without_values.join(", ")
        );
    }
    // Planned runs without a record are not exported: said, and the exit status tells.
    Error::unless_partial(export.report.partial.clone())
}

/// `--csv FILE` and `--json FILE` (`-`: standard output).
fn write_files(export: &Export, to: &ExportTo) -> Result<(), Error> {
    for (path, csv) in [(&to.csv, true), (&to.json, false)] {
        let Some(path) = path else { continue };
        let bytes = if csv {
            export.csv_bytes()
        } else {
            export.json_bytes()
        };
        if path.as_path() == Path::new("-") {
            super::print_bytes(&bytes)?;
        } else {
            write_file(path, &bytes)?;
            eprintln!("wrote {}", path.display());
        }
    }
    Ok(())
}

/// `--verdicts DIR` and `--dir DIR`; returns the models without any value (no verdict file).
fn write_folders(export: &Export, to: &ExportTo) -> Result<Vec<String>, Error> {
    let mut without_values = Vec::new();
    if let Some(dir) = &to.verdicts {
        let files = export.write_verdicts(dir)?;
        eprintln!(
            "wrote {} verdict files under {}",
            files.len(),
            dir.display()
        );
        without_values = export.models_without_values();
    }
    if let Some(dir) = &to.dir {
        let written = export.write_dir(dir)?;
        eprintln!(
            "wrote results.csv, results.json and {} verdict files under {}",
            written.verdicts.len(),
            dir.display()
        );
        without_values = written.models_without_values;
    }
    Ok(without_values)
}
