//! One module per command; [`run`] dispatches the parsed command line to it.

mod check;
mod confidence;
mod diff;
mod exec_run;
mod explain;
mod export;
mod import;
mod plan;
mod qualify;
mod report;
mod run;
mod sandbox;
mod scores;
mod watch;

use crate::cli::{Cli, Command};
use crate::error::Error;

/// Runs the command the user asked for.
pub fn run(cli: Cli) -> Result<(), Error> {
    match cli.command {
        Command::Check { rules, .. } if !rules.is_empty() => check::rules_files(&rules),
        Command::Check { manifest, .. } => check::contest(&manifest.manifest),
        Command::Plan {
            manifest,
            filter,
            json,
            forecast,
        } => match forecast.nodes {
            Some(nodes) if forecast.forecast => plan::forecast(
                &manifest.manifest,
                &filter.filter(),
                json,
                nodes,
                forecast.cores,
                plan::Overheads {
                    run: forecast.run_overhead,
                    job: forecast.job_overhead,
                },
            ),
            _ => plan::plan(&manifest.manifest, &filter.filter(), json),
        },
        Command::Run {
            manifest,
            filter,
            jobs,
            json,
            progress,
            follow: true,
            ..
        } => run::follow(
            &manifest.manifest,
            &filter.filter(),
            jobs,
            json,
            progress.into(),
        ),
        Command::Run {
            manifest,
            filter,
            jobs,
            json,
            progress,
            no_wait,
            follow: _,
            rerun,
            diff,
            judge,
        } => run::run(
            &manifest.manifest,
            &filter.filter(),
            rerun.outcomes().as_deref(),
            jobs,
            json,
            progress.into(),
            no_wait,
            (diff || !judge.fail_on.is_empty()).then_some(&judge),
        ),
        Command::Diff {
            manifest,
            old,
            new,
            tool,
            against,
            list,
            judge,
            json,
            html,
        } => {
            let what = match (old, new, tool) {
                (Some(old), Some(new), _) => diff::What::Entries { old, new },
                (_, _, Some(tool)) if list => diff::What::List { tool },
                (_, _, Some(tool)) => diff::What::Version { tool, against },
                // clap requires --tool, or --old with --new.
                _ => return Err(Error::DiffWhat),
            };
            diff::diff(&manifest.manifest, what, &judge, json, html.as_deref())
        }
        Command::Qualify {
            manifest,
            filter,
            jobs,
            json,
            html,
        } => qualify::qualify(
            &manifest.manifest,
            &filter.filter(),
            jobs,
            json,
            html.as_deref(),
        ),
        Command::Scores {
            manifest,
            json,
            wrong: Some(tool),
        } => scores::wrong(
            &manifest.manifest,
            Some(tool.as_str()).filter(|t| !t.is_empty()),
            json,
        ),
        Command::Scores {
            manifest,
            json,
            wrong: None,
        } => scores::scores(&manifest.manifest, json),
        Command::ExecRun {
            manifest,
            keys,
            keys_file,
            jobs,
        } => exec_run::exec_run(&manifest.manifest, keys, keys_file.as_deref(), jobs),
        Command::Sandbox(args) => sandbox::sandbox(args),
        Command::Import {
            manifest,
            file,
            json,
        } => import::import(&manifest.manifest, &file, json),
        Command::Explain {
            manifest,
            what,
            json,
        } => explain::explain(&manifest.manifest, what, json),
        Command::Confidence { manifest, json } => confidence::confidence(&manifest.manifest, json),
        Command::Report {
            manifest,
            out,
            exports,
            json,
        } => report::report(&manifest.manifest, out.as_deref(), exports, json),
        Command::Watch {
            manifest,
            run,
            serve,
            out,
            json,
            updates,
        } => watch::watch(mccbuild_engine::watch::WatchOptions {
            manifest: manifest.manifest,
            run,
            serve,
            out,
            json,
            updates,
        }),
        Command::Export { manifest, to } => export::export(&manifest.manifest, to),
    }
}

/// Writes `text` to standard output; a closed pipe (`mccbuild ... | head`) is a normal end.
pub(crate) fn print_out(text: &str) -> Result<(), Error> {
    print_bytes(text.as_bytes())
}

/// What `write` writes on standard output (unbuffered: `write` writes in large pieces); a
/// closed pipe is a normal end, as for [`print_out`].
pub(crate) fn print_with(
    write: impl FnOnce(&mut std::io::StdoutLock<'static>) -> std::io::Result<()>,
) -> Result<(), Error> {
    match write(&mut std::io::stdout().lock()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(Error::Output {
            path: "standard output".into(),
            source: e,
        }),
        _ => Ok(()),
    }
}

/// [`print_out`] of bytes.
pub(crate) fn print_bytes(bytes: &[u8]) -> Result<(), Error> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(Error::Output {
            path: "standard output".into(),
            source: e,
        }),
        _ => Ok(()),
    }
}

/// Writes a page (`diff --html`, `qualify --html`) to `path` atomically.
pub(crate) fn write_page(path: &std::path::Path, page: &str) -> Result<(), Error> {
    mccbuild_core::fsio::write_atomically(path, page.as_bytes()).map_err(|source| Error::Output {
        path: path.to_path_buf(),
        source,
    })
}

/// As [`print_json`], the JSON (written by `write`) also kept in the store under a results key
/// ([`mccbuild_engine::results_cache::load_json`] reads it back).
pub(crate) fn print_json_cached(
    write: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
    store: &mccbuild_store::Store,
    key: &mccbuild_core::digest::Digest,
) -> Result<(), Error> {
    use std::io::Write;
    let tee = mccbuild_engine::results_cache::JsonTee::new(std::io::stdout().lock(), store, key);
    let mut out = std::io::BufWriter::with_capacity(1 << 16, tee);
    let written = write(&mut out)
        .and_then(|()| out.write_all(b"\n"))
        .and_then(|()| out.into_inner().map_err(|e| e.into_error()))
        .and_then(|tee| tee.finish());
    match written {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(Error::Output {
            path: "standard output".into(),
            source: e,
        }),
        _ => Ok(()),
    }
}

/// A value as one line of JSON on standard output, written as it is serialized, through a
/// buffer (`scores --json` of an edition is tens of megabytes, not held whole in memory); a
/// closed pipe is a normal end, as for [`print_out`].
pub(crate) fn print_json(value: &impl serde::Serialize) -> Result<(), Error> {
    use std::io::Write;
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let written = serde_json::to_writer(&mut out, value)
        .map_err(std::io::Error::from)
        .and_then(|()| out.write_all(b"\n"))
        .and_then(|()| out.flush());
    match written {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(Error::Output {
            path: "standard output".into(),
            source: e,
        }),
        _ => Ok(()),
    }
}
