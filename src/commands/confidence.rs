//! `mccbuild confidence`: the reliability table (rule E-2.2; the MCC 2015 report's Table 3).

use std::path::Path;

use mccbuild_output::terminal::confidence_text;
use mccbuild_scoring::db::confidence_tally;
use mccbuild_scoring::explain::confidence_table;

use crate::error::Error;
use mccbuild_engine::Session;

pub fn confidence(manifest: &Path, json: bool) -> Result<(), Error> {
    let session = Session::open_and_warn(manifest)?;
    let (db, handles) = session.scoring();
    let rows = confidence_table(&session.plan, &db, &handles);
    if json {
        return super::print_json(&rows);
    }
    let agreed = confidence_tally(&db, handles.contest).agreed_values;
    super::print_out(&confidence_text(&rows, agreed))
}
