//! Exports of the results, for people and for other programs (docs/exports.md):
//!
//! - a CSV in the layout of the MCC's `raw-result-analysis.csv`, one row per planned run that has
//!   a record in the store, which `mccbuild import` reads back;
//! - a JSON with the scores report (`mccbuild scores --json`, values included) and one entry per
//!   run;
//! - the trusted values of each model as a `propertiesverdict` XML file, version 2.0 of the MCC's
//!   properties verdict format.
//!
//! [`collect`] reads everything once (the scoring database, the store's index, the records for
//! the techniques); [`Export`] writes each format; [`write_all`] puts the three under a folder.
//! Each format is a module of its own (`csv`, `json`, `verdicts`), and so is the reading
//! (`collect`).

mod collect;
mod csv;
mod json;
mod verdicts;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use mccbuild_core::{Measurement, Response};
use mccbuild_plan::Plan;
use mccbuild_scoring::db::{Handles, ScoringDb};
use mccbuild_scoring::scores::ScoresReport;
use mccbuild_store::{Index, Store};

pub use self::collect::collect;
use self::csv::Estimated;
pub use self::csv::{CSV_HEADER, format_mb, format_ms, mask, row_results, status, vector};
pub use self::json::EXPORT_FORMAT;
pub use self::verdicts::{
    ModelVerdicts, VERDICT_MCC_CATEGORIES, VERDICT_TOOL, VERDICT_VERSION, VerdictEntry,
    model_file_stem, verdict_explanation, verdict_reference, verdict_value, verdicts_xml,
};

/// Why an export could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("cannot write {path}: {source}; check that its folder can be created and written")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "cannot read the run record {path}: {reason}; `mccbuild run` (or `mccbuild import FILE` for an imported run) does the run again and its new record replaces the damaged one; export after that"
    )]
    Record { path: PathBuf, reason: String },
    #[error("model `{model}` cannot name a file ({why}); rename the model in the manifest")]
    ModelFileName { model: String, why: &'static str },
    #[error(
        "{what} `{text}` holds a character XML cannot carry (a control character); rename it in the manifest"
    )]
    NotXml { what: &'static str, text: String },
}

/// Where a run comes from.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Origin {
    /// Executed by mccbuild.
    Executed,
    /// A row of a results file.
    Imported { file: String, line: usize },
}

/// One run of the JSON export (and the source of its CSV row).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunEntry {
    pub tool: String,
    pub instance: String,
    pub model: String,
    pub examination: String,
    /// The run key, in hex (the CSV's `run id`).
    pub key: String,
    pub origin: Origin,
    /// What the output says as a whole (E-1.8).
    #[serde(rename = "verdict")]
    pub response: Response,
    /// One line for tables: `DNC`, `CC`, `TIMEOUT`, `16 answers`, ...
    pub outcome: String,
    /// How it ended, CPU and wall time, peak memory (flat in the JSON).
    #[serde(flatten)]
    pub measurement: Measurement,
    /// The tool's cores (E-5.3/E-5.4).
    pub cores: u32,
    /// The techniques the tool named in its answers, each once, in order of appearance.
    pub techniques: Vec<String>,
    /// The examination's value ids, in order: the positions of `mask` and of the CSV vectors.
    pub ids: Vec<String>,
    /// The values the run computed, by value id.
    pub answers: BTreeMap<String, String>,
    /// One character per value id: `T` right, `X` wrong, `?` no trusted value, `-` no answer.
    pub mask: String,
    /// The run's points on its examination (E-4.2, before the weights of E-4.4); null when the
    /// tool did not take part (DO_NOT_COMPETE). Rounded to 6 decimals from the exact value.
    pub points: Option<f64>,
    /// The same points, exactly: a fraction `n/d` (or `n`).
    pub points_exact: Option<String>,
    /// The CSV's `results` field.
    #[serde(skip)]
    results: String,
    /// Index into [`mccbuild_plan::Plan::exam_instances`].
    #[serde(skip)]
    exam_instance: usize,
}

/// Everything the exports hold, read once.
pub struct Export {
    pub report: ScoresReport,
    /// One per planned run with a record in the store, in the plan's order.
    pub runs: Vec<RunEntry>,
    /// One per model, in the plan's order; models without any value have no verdicts.
    pub verdicts: Vec<ModelVerdicts>,
    /// Planned runs without a record (not executed or imported yet): not exported.
    pub not_stored: usize,
    estimated: Vec<Estimated>,
}

/// What [`write_all`] wrote.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Written {
    pub csv: PathBuf,
    pub json: PathBuf,
    pub verdicts: Vec<PathBuf>,
    /// Runs exported.
    pub runs: usize,
    /// Planned runs not in the store, not exported.
    pub not_stored: usize,
    /// Models without any value: no verdict file (the format needs at least one verdict).
    pub models_without_values: Vec<String>,
}

/// Writes `results.csv`, `results.json` and `verdicts/<Model>.xml` under `dir` (created if
/// needed), each file atomically: [`collect`], then [`Export::write_dir`].
pub fn write_all(
    stored: &StoredRuns<'_>,
    db: &ScoringDb,
    handles: &Handles,
    dir: &Path,
) -> Result<Written, ExportError> {
    collect(stored, db, handles)?.write_dir(dir)
}

/// A plan and the store its runs are looked up in.
pub struct StoredRuns<'a> {
    pub plan: &'a Plan,
    pub store: &'a Store,
    pub index: &'a Index,
}

/// Writes a file atomically (temporary file, rename), readable by everyone (an export is made
/// to be published: `fsio::PUBLISHED_FILE_MODE`).
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<(), ExportError> {
    mccbuild_core::fsio::write_published(path, bytes).map_err(|source| ExportError::Write {
        path: path.to_path_buf(),
        source,
    })
}

impl Export {
    /// Writes `results.csv`, `results.json` and `verdicts/<Model>.xml` under `dir` (created if
    /// needed, world-readable), each file atomically.
    pub fn write_dir(&self, dir: &Path) -> Result<Written, ExportError> {
        mccbuild_core::fsio::create_published_dir(dir).map_err(|source| ExportError::Write {
            path: dir.to_path_buf(),
            source,
        })?;
        let csv = dir.join("results.csv");
        let json = dir.join("results.json");
        write_file(&csv, &self.csv_bytes())?;
        write_file(&json, &self.json_bytes())?;
        let verdicts = self.write_verdicts(&dir.join("verdicts"))?;
        Ok(Written {
            csv,
            json,
            verdicts,
            runs: self.runs.len(),
            not_stored: self.not_stored,
            models_without_values: self.models_without_values(),
        })
    }

    /// Models without any value (no verdict file for them).
    pub fn models_without_values(&self) -> Vec<String> {
        self.verdicts
            .iter()
            .filter(|m| m.verdicts.is_empty())
            .map(|m| m.model.clone())
            .collect()
    }
}
