//! The JSON export: the fields of `mccbuild scores --json` (values included), the layout's
//! version and one entry per run.

use serde::Serialize;

use mccbuild_scoring::scores::ScoresReport;

use super::{Export, RunEntry};

/// Bump when the layout of the JSON export changes.
pub const EXPORT_FORMAT: u32 = 1;

/// The JSON export: the scores report's fields, then the runs.
#[derive(Serialize)]
struct JsonExport<'a> {
    format: u32,
    #[serde(flatten)]
    report: &'a ScoresReport,
    runs: &'a [RunEntry],
}

impl Export {
    /// The JSON: the fields of `mccbuild scores --json` (values included), `format` and `runs`.
    pub fn json_bytes(&self) -> Vec<u8> {
        let mut bytes = serde_json::to_vec(&JsonExport {
            format: EXPORT_FORMAT,
            report: &self.report,
            runs: &self.runs,
        })
        .unwrap_or_default();
        bytes.push(b'\n');
        bytes
    }
}
