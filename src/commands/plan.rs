//! `mccbuild plan`: how many runs the contest has, how many are stored, how many are to run.

use std::path::Path;

use crate::error::Error;
use mccbuild_engine::progress::{count, duration};
use mccbuild_engine::session::{Filter, Opening, Session};

pub fn plan(manifest: &Path, filter: &Filter, json: bool) -> Result<(), Error> {
    let summary = match filter.is_empty() {
        true => match Session::open_or_recall(manifest, None, false)? {
            Opening::Noop(noop) => noop.summary(),
            Opening::Session(session) => {
                session.warn_instance_problems();
                session.summary(&session.select(filter)?)
            }
        },
        false => {
            let session = Session::open_and_warn(manifest)?;
            session.warn_instance_problems();
            let selection = session.select(filter)?;
            if let Some(note) = session.empty_selection_note(filter, &selection) {
                eprintln!("note: {note}");
            }
            session.summary(&selection)
        }
    };
    if json {
        return super::print_json(&summary);
    }
    let mut text = format!(
        "{}: {} in the store, {} to run\n",
        count(summary.runs, "run", "runs"),
        summary.cached,
        summary.to_run
    );
    for (tool, c) in &summary.by_tool {
        text += &format!(
            "  {tool:<20} {:>7} runs {:>7} cached {:>7} to run\n",
            c.runs, c.cached, c.to_run
        );
    }
    super::print_out(&text)
}

/// What `plan --forecast` adds to the stored run times: seconds per run and per job.
pub struct Overheads {
    pub run: Option<f64>,
    pub job: Option<f64>,
}

/// `mccbuild plan --forecast --nodes N [--cores C] [--run-overhead S] [--job-overhead S]`: the
/// selected runs' expected makespan on the cluster and the order to submit the models in
/// (docs/cli.md).
pub fn forecast(
    manifest: &Path,
    filter: &Filter,
    json: bool,
    nodes: usize,
    cores: Option<usize>,
    overheads: Overheads,
) -> Result<(), Error> {
    let seconds = |s: Option<f64>| match s.unwrap_or(0.0) {
        s if s.is_finite() && s >= 0.0 => Ok(s),
        _ => Err(Error::RunOverhead),
    };
    let (overhead, job_overhead) = (seconds(overheads.run)?, seconds(overheads.job)?);
    let session = Session::open_and_warn(manifest)?;
    session.warn_instance_problems();
    let selection = session.select(filter)?;
    let cores = cores.map(|c| u32::try_from(c).unwrap_or(u32::MAX));
    let jobs = session.plan.contest.executor.jobs;
    let forecast = session
        .forecast(&selection, nodes, cores, jobs, (overhead, job_overhead))
        .map_err(Error::Forecast)?;
    if json {
        return super::print_json(&forecast);
    }
    const SHOWN: usize = 20;
    let mut text = format!(
        "forecast: {} on {} of {} (one job per model, E-5.1): makespan {} ({:.1} s)\n",
        count(forecast.runs, "run", "runs"),
        count(forecast.nodes, "node", "nodes"),
        count(forecast.cores as usize, "core", "cores"),
        duration(forecast.makespan_s),
        forecast.makespan_s
    );
    text += &format!(
        "  run times: {} from the store, {} estimated (the median of their tool and examination in the store), {} unknown (counted as 0 s: no run of their tool and examination is stored)\n",
        forecast.stored, forecast.estimated, forecast.unknown
    );
    if forecast.run_overhead_s > 0.0 {
        text += &format!("  plus {} s per run\n", forecast.run_overhead_s);
    }
    if forecast.job_overhead_s > 0.0 {
        text += &format!("  plus {} s per job\n", forecast.job_overhead_s);
    }
    text += "  submission order (longest job first), each job's runs longest first:\n";
    for (n, job) in forecast.jobs.iter().take(SHOWN).enumerate() {
        text += &format!(
            "  {:>4}. {:<28} {:>10.1} s  {:>6} runs  {} CPUs, {} at a time  node {} from {:.1} s\n",
            n + 1,
            job.model,
            job.seconds,
            job.runs,
            job.cpus,
            job.slots,
            job.node,
            job.start_s
        );
    }
    if forecast.jobs.len() > SHOWN {
        text += &format!(
            "  ... and {} more (--json lists them all)\n",
            count(forecast.jobs.len() - SHOWN, "job", "jobs")
        );
    }
    super::print_out(&text)
}
