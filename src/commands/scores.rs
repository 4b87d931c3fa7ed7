//! `mccbuild scores`: Confidence, trusted values, scores and podiums from the store, executing
//! nothing; with `--wrong`, the values a tool got wrong, each with its run.

use std::path::Path;

use mccbuild_core::timing::phase;
use mccbuild_output::terminal::{TermStyle, podium_text_styled};
use mccbuild_scoring::scores::scores_json;

use crate::error::Error;
use mccbuild_engine::Session;

pub fn scores(manifest: &Path, json: bool) -> Result<(), Error> {
    let mut session = Session::open_and_warn(manifest)?;
    if json {
        // The output of the same results (and value ids), printed before (docs/cache.md,
        // "Cached results").
        let key = {
            let _t = phase("scores: results key");
            session.results_key()
        };
        let key = {
            let _t = phase("scores: json key");
            mccbuild_engine::results_cache::json_key(&key, &session.plan)
        };
        if let Some(cached) = {
            let _t = phase("scores: cached json checked");
            mccbuild_engine::results_cache::load_json(&session.store, &key)
        } {
            let _t = phase("scores: json written");
            super::print_with(|out| cached.copy_to(out))?;
            return Error::unless_partial(session.partial());
        }
        // The rows of the results files are planned runs now (their answers are in the
        // index): not held while the whole edition is scored (~50 MB for the 2024 replay).
        drop(std::mem::take(&mut session.plan.imported));
        let (db, handles) = session.scoring();
        let t = phase("scores: scoring");
        let partial = session.partial();
        let report = scores_json(&session.plan, &db, &handles).with_partial(partial.clone());
        drop(t);
        let _t = phase("scores: json written");
        super::print_json_cached(|out| report.write_json(&mut { out }), &session.store, &key)?;
        return Error::unless_partial(partial);
    }
    let report = session.podium_report();
    super::print_out(&podium_text_styled(
        &session.plan,
        &report,
        TermStyle::detect(),
    ))?;
    Error::unless_partial(report.partial)
}

/// `scores --wrong [TOOL]`: every value a tool (or every tool) answered other than its trusted
/// value, with the run's record and reproduction command.
pub fn wrong(manifest: &Path, tool: Option<&str>, json: bool) -> Result<(), Error> {
    let session = Session::open_and_warn(manifest)?;
    let report = mccbuild_engine::wrong::wrong_values(&session, tool)?;
    if json {
        super::print_json(&report)
    } else {
        super::print_out(&mccbuild_output::wrong::wrong_text(&report))
    }
}
