//! `mccbuild plan`: how many runs the contest has, how many are stored, how many are to run.

use std::path::Path;

use crate::error::Error;
use mccbuild_engine::progress::count;
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
