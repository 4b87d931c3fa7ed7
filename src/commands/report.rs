//! `mccbuild report`: the results as a static site (and, with `--exports`, the exports beside
//! it).

use std::path::Path;

use mccbuild_core::timing::phase;
use mccbuild_output::export::{StoredRuns, write_all};
use mccbuild_output::report::{ReportData, write_site};

use crate::error::Error;
use mccbuild_engine::Session;

pub fn report(manifest: &Path, out: Option<&Path>, exports: bool, json: bool) -> Result<(), Error> {
    let session = Session::open_and_warn(manifest)?;
    let dir = match out {
        Some(d) => d.to_path_buf(),
        None => session.plan.contest.root.join("report"),
    };
    let (db, handles) = session.scoring();
    let t = phase("report: scoring and gathering");
    let mut data = ReportData::gather(&session.plan, &db, &handles, |key| session.index.get(key));
    drop(t);
    let t = phase("report: diagnostics and setup facts");
    data.set_records(session.record_notes(0..session.plan.runs.len()));
    drop(t);
    if exports {
        let stored = StoredRuns {
            plan: &session.plan,
            store: &session.store,
            index: &session.index,
        };
        write_all(&stored, &db, &handles, &dir.join("exports"))?;
        data.exports = true;
    }
    let t = phase("report: pages rendered and written");
    let summary = write_site(&data, &dir).map_err(|e| Error::Output {
        path: e.path,
        source: e.source,
    })?;
    drop(t);
    // The command ends here: the pages' data and the scoring database (~270 MB at the 2024
    // replay's scale, in hundreds of thousands of allocations) are left to the process's exit
    // rather than freed one by one (~40-70 ms). They hold memory only: no file, lock or child.
    let partial = data.scores.partial.take();
    std::mem::forget(data);
    std::mem::forget(db);
    if json {
        super::print_json(&summary)?;
        return Error::unless_partial(partial);
    }
    super::print_out(&format!(
        "report: {} pages, {} charts, {:.1} MB in {}; open {}\n",
        summary.pages,
        summary.charts,
        summary.bytes as f64 / 1e6,
        dir.display(),
        dir.join("index.html").display()
    ))?;
    Error::unless_partial(partial)
}
