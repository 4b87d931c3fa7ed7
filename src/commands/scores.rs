//! `mccbuild scores`: Confidence, trusted values, scores and podiums from the store, executing
//! nothing.

use std::path::Path;

use mccbuild_output::terminal::{podium_text_styled, TermStyle};
use mccbuild_scoring::scores::scores_json;

use crate::error::Error;
use crate::session::Session;

pub fn scores(manifest: &Path, json: bool) -> Result<(), Error> {
    let session = Session::open_and_warn(manifest)?;
    if json {
        let (db, handles) = session.scoring();
        return super::print_json_streamed(&scores_json(&session.plan, &db, &handles));
    }
    let report = session.podium_report();
    super::print_out(&podium_text_styled(
        &session.plan,
        &report,
        TermStyle::detect(),
    ))
}
