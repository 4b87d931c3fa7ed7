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

use mccbuild_rules::exact::{decimal, fraction, Exact};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use quick_xml::events::{BytesDecl, BytesEnd, BytesStart, BytesText, Event};
use rayon::prelude::*;
use serde::Serialize;

use mccbuild_core::{Measurement, Outcome, Response, Termination, Value, ValueKind};
use mccbuild_plan::{Plan, RunOrigin};
use mccbuild_rules::confidence::distinct_values;
use mccbuild_rules::edition::TrustKind;
use mccbuild_rules::trusted::TrustCase;
use mccbuild_scoring::db::{Handles, ScoringDb};
use mccbuild_scoring::scores::{scores_report, ScoresReport};
use mccbuild_store::{Index, Store};

/// Bump when the layout of the JSON export changes.
pub const EXPORT_FORMAT: u32 = 1;

/// The columns of the CSV, in order: those of the MCC's `raw-result-analysis.csv`.
pub const CSV_HEADER: [&str; 17] = [
    "tool",
    "Input",
    "Examination",
    "nb cores",
    "time flag",
    "memory flag",
    "results",
    "techniques",
    "max memory (MB)",
    "CPU (ms)",
    "Time (ms)",
    "i/o wait (ms)",
    "Status",
    "run id",
    "flags:bonus:scores:mask",
    "estimated result",
    "# tools computing estimated results",
];

/// The `tool` and `version` of the root element of a properties verdict file.
pub const VERDICT_TOOL: &str = "propertiesverdict";
pub const VERDICT_VERSION: &str = "2.0";

/// The categories the properties verdict grammar (version 2.0) enumerates for MCC examinations.
pub const VERDICT_MCC_CATEGORIES: [&str; 13] = [
    "StateSpace",
    "UpperBounds",
    "ReachabilityDeadlock",
    "QuasiLiveness",
    "StableMarking",
    "Liveness",
    "OneSafe",
    "ReachabilityFireability",
    "ReachabilityCardinality",
    "LTLFireability",
    "LTLCardinality",
    "CTLFireability",
    "CTLCardinality",
];

/// Why an export could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("cannot write {path}: {source}; check that its folder can be created and written")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot read the run record {path}: {reason}; `mccbuild run` (or `mccbuild import FILE` for an imported run) does the run again and its new record replaces the damaged one; export after that")]
    Record { path: PathBuf, reason: String },
    #[error("model `{model}` cannot name a file ({why}); rename the model in the manifest")]
    ModelFileName { model: String, why: &'static str },
    #[error("{what} `{text}` holds a character XML cannot carry (a control character); rename it in the manifest")]
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

/// One verdict of a properties verdict file.
#[derive(Clone, Debug, PartialEq)]
pub struct VerdictEntry {
    pub instance: String,
    pub category: String,
    pub reference: String,
    pub value: String,
    pub explanation: String,
}

/// The verdicts of one model.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelVerdicts {
    pub model: String,
    pub verdicts: Vec<VerdictEntry>,
}

/// Per examination instance: the trusted values as a vector, and how many tools computed each.
#[derive(Clone, Debug, Default, PartialEq)]
struct Estimated {
    vector: String,
    computing: String,
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

/// The JSON export: the scores report's fields, then the runs.
#[derive(Serialize)]
struct JsonExport<'a> {
    format: u32,
    #[serde(flatten)]
    report: &'a ScoresReport,
    runs: &'a [RunEntry],
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

/// Writes a file atomically (temporary file, rename).
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<(), ExportError> {
    mccbuild_core::fsio::write_atomically(path, bytes).map_err(|source| ExportError::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// Reads what the exports hold: the scores report with its values, every stored run (its
/// summary from the index, its techniques from its record), the trusted values.
pub fn collect(
    stored_runs: &StoredRuns<'_>,
    db: &ScoringDb,
    handles: &Handles,
) -> Result<Export, ExportError> {
    let plan = stored_runs.plan;
    let report = scores_report(plan, db, handles, true);
    let results: Vec<ExamInstanceResults> = (0..plan.exam_instances.len())
        .map(|e| ExamInstanceResults::of(plan, db, handles, e))
        .collect();
    let stored: Vec<usize> = (0..plan.runs.len())
        .filter(|&i| stored_runs.index.contains(&plan.runs[i].key))
        .collect();
    let techniques = techniques(stored_runs, &stored)?;
    let runs = stored
        .iter()
        .zip(techniques)
        .map(|(&i, techniques)| run_entry(stored_runs, &results, i, techniques))
        .collect::<Result<Vec<_>, _>>()?;
    let mut by_instance: Vec<Vec<usize>> = vec![Vec::new(); plan.instances.len()];
    for (e, ei) in plan.exam_instances.iter().enumerate() {
        by_instance[ei.instance].push(e);
    }
    let verdicts = plan
        .models
        .iter()
        .map(|model| model_verdicts(plan, &results, &by_instance, model))
        .collect();
    Ok(Export {
        report,
        runs,
        verdicts,
        not_stored: plan.runs.len() - stored.len(),
        estimated: results.into_iter().map(|r| r.estimated).collect(),
    })
}

/// What the exports say of one examination instance: its trusted values (E-3.1), the CSV's
/// estimated result, each tool's points, and per value how it was decided.
struct ExamInstanceResults {
    trusted: Vec<Option<Value>>,
    estimated: Estimated,
    /// Per tool taking part, its points (E-4.2).
    points: BTreeMap<u32, Exact>,
    /// Per value: the case of E-3.1, how many tools gave the trusted value, how many computed it.
    decided: Vec<(TrustCase, usize, usize)>,
}

impl ExamInstanceResults {
    fn of(plan: &Plan, db: &ScoringDb, handles: &Handles, e: usize) -> ExamInstanceResults {
        let ei = &plan.exam_instances[e];
        let kind = plan.contest.edition.examinations[ei.exam].value;
        let decisions = handles.decisions(db, e);
        let answers = handles.value_answers(db, e);
        let trusted: Vec<Option<Value>> = decisions.iter().map(|d| d.value.clone()).collect();
        let decided: Vec<(TrustCase, usize, usize)> = (0..ei.ids.len())
            .map(|v| {
                let given = if v < answers.len() {
                    answers.value(v)
                } else {
                    &[]
                };
                let trusted = trusted.get(v).and_then(Option::as_ref);
                let agreeing = trusted.map_or(0, |t| {
                    distinct_values(given)
                        .iter()
                        .find(|d| d.value == t)
                        .map_or(0, |d| d.count)
                });
                let case = decisions.get(v).map_or(TrustCase::NoAnswer, |d| d.case);
                (case, agreeing, given.len())
            })
            .collect();
        let computing: Vec<String> = trusted
            .iter()
            .enumerate()
            .map(|(v, t)| match t {
                Some(_) if v < answers.len() => decided[v].1.to_string(),
                _ => "0".to_string(),
            })
            .collect();
        let estimated = Estimated {
            vector: vector(
                kind,
                &trusted.iter().map(Option::as_ref).collect::<Vec<_>>(),
            ),
            computing: computing.join(" "),
        };
        let points = handles
            .exam_scores(db, e)
            .iter()
            .map(|s| (s.tool, s.score.points.clone()))
            .collect();
        ExamInstanceResults {
            trusted,
            estimated,
            points,
            decided,
        }
    }
}

/// The techniques each stored run named, each once, in order of appearance (from their
/// records, read in parallel).
fn techniques(
    stored_runs: &StoredRuns<'_>,
    stored: &[usize],
) -> Result<Vec<Vec<String>>, ExportError> {
    let (plan, store, index) = (stored_runs.plan, stored_runs.store, stored_runs.index);
    stored
        .par_iter()
        .map(|&i| {
            let key = &plan.runs[i].key;
            match index.read(store, key) {
                Ok(Some((record, _))) => {
                    let mut seen: Vec<String> = Vec::new();
                    for t in record.answers.iter().flat_map(|a| a.techniques.iter()) {
                        if !seen.contains(t) {
                            seen.push(t.clone());
                        }
                    }
                    Ok(seen)
                }
                Ok(None) => Err(ExportError::Record {
                    path: index.record_location(store, key),
                    reason: "it is not in the store's index".to_string(),
                }),
                Err(c) => Err(ExportError::Record {
                    path: c.path,
                    reason: c.reason,
                }),
            }
        })
        .collect()
}

/// The export's entry of stored run `i`.
fn run_entry(
    stored_runs: &StoredRuns<'_>,
    results: &[ExamInstanceResults],
    i: usize,
    techniques: Vec<String>,
) -> Result<RunEntry, ExportError> {
    let plan = stored_runs.plan;
    let run = &plan.runs[i];
    let summary = stored_runs
        .index
        .get(&run.key)
        .ok_or_else(|| ExportError::Record {
            path: stored_runs
                .index
                .record_location(stored_runs.store, &run.key),
            reason: "it is not in the store's index".to_string(),
        })?;
    let ei = &plan.exam_instances[run.exam_instance];
    let exam = &plan.contest.edition.examinations[ei.exam];
    let instance = &plan.instances[ei.instance];
    let tool = &plan.contest.tools[run.tool];
    let mut by_position: Vec<Option<&Value>> = vec![None; ei.ids.len()];
    for (position, value) in summary.answers.iter() {
        if let Some(slot) = by_position.get_mut(*position as usize) {
            *slot = Some(value);
        }
    }
    let result = &results[run.exam_instance];
    let trusted: Vec<Option<&Value>> = result.trusted.iter().map(Option::as_ref).collect();
    let origin = match run.origin {
        RunOrigin::Executed => Origin::Executed,
        RunOrigin::Imported { file, line, .. } => Origin::Imported {
            file: plan.contest.results[file].display().to_string(),
            line,
        },
    };
    Ok(RunEntry {
        tool: tool.name.clone(),
        instance: instance.name.clone(),
        model: plan.models[instance.model].name.clone(),
        examination: exam.name.clone(),
        key: run.key.hex(),
        origin,
        response: summary.response,
        outcome: Outcome::describe(
            summary.response,
            summary.measurement.termination,
            summary.answers.len(),
        ),
        measurement: summary.measurement,
        cores: tool.cores,
        techniques,
        ids: ei.ids.iter().map(|id| id.to_string()).collect(),
        answers: ei
            .ids
            .iter()
            .zip(&by_position)
            .filter_map(|(id, v)| v.map(|v| (id.to_string(), v.to_string())))
            .collect(),
        mask: mask(&by_position, &trusted),
        points: result.points.get(&(run.tool as u32)).map(round),
        points_exact: result.points.get(&(run.tool as u32)).map(fraction),
        results: row_results(summary.outcome(), exam.value, &by_position),
        exam_instance: run.exam_instance,
    })
}

/// A model's verdicts: its instances in order, their examinations in order, their values.
fn model_verdicts(
    plan: &Plan,
    results: &[ExamInstanceResults],
    by_instance: &[Vec<usize>],
    model: &mccbuild_plan::PlannedModel,
) -> ModelVerdicts {
    let edition = &plan.contest.edition;
    let ground_truth = edition.info.trust == TrustKind::GroundTruth;
    let mut entries = Vec::new();
    for &i in &model.instances {
        for &e in &by_instance[i] {
            let ei = &plan.exam_instances[e];
            let exam = &edition.examinations[ei.exam];
            for (v, id) in ei.ids.iter().enumerate() {
                let (category, reference) = verdict_reference(&exam.name, id);
                let value = results[e].trusted.get(v).and_then(Option::as_ref);
                let (case, agreeing, computed) = results[e].decided[v];
                entries.push(VerdictEntry {
                    instance: plan.instances[i].name.clone(),
                    category,
                    reference,
                    value: verdict_value(value),
                    explanation: verdict_explanation(
                        value.is_some(),
                        ground_truth,
                        case,
                        agreeing,
                        computed,
                    ),
                });
            }
        }
    }
    ModelVerdicts {
        model: model.name.clone(),
        verdicts: entries,
    }
}

impl Export {
    /// Writes `results.csv`, `results.json` and `verdicts/<Model>.xml` under `dir` (created if
    /// needed), each file atomically.
    pub fn write_dir(&self, dir: &Path) -> Result<Written, ExportError> {
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

    /// The CSV, header included.
    pub fn csv_bytes(&self) -> Vec<u8> {
        let mut writer = csv::WriterBuilder::new()
            .terminator(csv::Terminator::Any(b'\n'))
            .from_writer(Vec::new());
        // Writing records into a Vec cannot fail: every record has the header's length.
        let _ = writer.write_record(CSV_HEADER);
        for run in &self.runs {
            let estimated = &self.estimated[run.exam_instance];
            let time_flag = run.measurement.termination.is_time_out();
            let memory_flag = run.measurement.termination.is_memory_out();
            let scores = run.points.map(format_number).unwrap_or_default();
            let record = [
                run.tool.clone(),
                run.instance.clone(),
                run.examination.clone(),
                run.cores.to_string(),
                u8::from(time_flag).to_string(),
                u8::from(memory_flag).to_string(),
                run.results.clone(),
                run.techniques.join(" "),
                format_mb(run.measurement.peak_memory_bytes),
                format_ms(run.measurement.cpu_time_s),
                format_ms(run.measurement.wall_time_s),
                String::new(),
                status(run.measurement.termination),
                run.key.clone(),
                format!("::{scores}:{}", run.mask),
                estimated.vector.clone(),
                estimated.computing.clone(),
            ];
            let _ = writer.write_record(&record);
        }
        writer.into_inner().unwrap_or_default()
    }

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

    /// Models without any value (no verdict file for them).
    pub fn models_without_values(&self) -> Vec<String> {
        self.verdicts
            .iter()
            .filter(|m| m.verdicts.is_empty())
            .map(|m| m.model.clone())
            .collect()
    }

    /// Writes `<Model>.xml` under `dir` for each model with values; returns the files written.
    pub fn write_verdicts(&self, dir: &Path) -> Result<Vec<PathBuf>, ExportError> {
        std::fs::create_dir_all(dir).map_err(|source| ExportError::Write {
            path: dir.to_path_buf(),
            source,
        })?;
        let mut written = Vec::new();
        for model in self.verdicts.iter().filter(|m| !m.verdicts.is_empty()) {
            let path = dir.join(format!("{}.xml", model_file_stem(&model.model)?));
            write_file(&path, &verdicts_xml(model)?)?;
            written.push(path);
        }
        Ok(written)
    }
}

/// A results vector (rule of `raw-result-analysis.csv`): one character per value for boolean
/// examinations (`T`, `F`, `?` unknown), space-separated numbers otherwise (`?` unknown, `+inf`,
/// integers written in full).
pub fn vector(kind: ValueKind, values: &[Option<&Value>]) -> String {
    match kind {
        ValueKind::Boolean => values
            .iter()
            .map(|v| match v {
                Some(Value::Bool(true)) => 'T',
                Some(Value::Bool(false)) => 'F',
                // Answers are checked against the examination's kind when they are read: an
                // integer cannot stand here; if it did, it would be no boolean answer.
                _ => '?',
            })
            .collect(),
        ValueKind::Integer => values
            .iter()
            .map(|v| match v {
                Some(v @ (Value::Int(_) | Value::Big(_) | Value::Inf)) => v.to_string(),
                _ => "?".to_string(),
            })
            .collect::<Vec<_>>()
            .join(" "),
    }
}

/// The `results` field of a run: `DNC` (did not compete), the vector of its answers, `CC` (no
/// answer, the tool ended normally), or `DNF` (no answer, and stopped by a limit, a crash or an
/// error exit).
pub fn row_results(outcome: Outcome, kind: ValueKind, answers: &[Option<&Value>]) -> String {
    match outcome {
        Outcome::DoNotCompete => "DNC".to_string(),
        _ if answers.iter().any(Option::is_some) => vector(kind, answers),
        Outcome::Answered | Outcome::CannotCompute => "CC".to_string(),
        Outcome::TimeOut | Outcome::MemoryOut | Outcome::Failed => "DNF".to_string(),
    }
}

/// The mask: per value, `T` the answer is the trusted value, `X` it is another, `?` there is no
/// trusted value to judge it by, `-` no answer.
pub fn mask(answers: &[Option<&Value>], trusted: &[Option<&Value>]) -> String {
    answers
        .iter()
        .enumerate()
        .map(|(i, a)| match (a, trusted.get(i).copied().flatten()) {
            (None, _) => '-',
            (Some(_), None) => '?',
            (Some(a), Some(t)) if a == &t => 'T',
            (Some(_), Some(_)) => 'X',
        })
        .collect()
}

/// The `Status` column: `normal` when the tool ended by itself with exit code 0, otherwise how
/// the run ended, in lower case (`timeout`, `memory`, `exit 3`, `signal 9`, ...).
pub fn status(termination: Termination) -> String {
    match termination {
        Termination::Exit { code: 0 } => "normal".to_string(),
        other => other.label().to_lowercase(),
    }
}

/// Milliseconds from seconds, to the nanosecond, without trailing zeros.
pub fn format_ms(seconds: f64) -> String {
    trim_decimals(format!("{:.6}", seconds * 1000.0))
}

/// Mebibytes from bytes, exactly (a division by 2^20 is exact in binary; the shortest decimal
/// that reads back as the same number).
pub fn format_mb(bytes: u64) -> String {
    format!("{}", bytes as f64 / (1u64 << 20) as f64)
}

fn format_number(x: f64) -> String {
    trim_decimals(format!("{x:.6}"))
}

fn trim_decimals(text: String) -> String {
    if !text.contains('.') {
        return text;
    }
    let trimmed = text.trim_end_matches('0').trim_end_matches('.');
    if trimmed == "-0" {
        "0".to_string()
    } else {
        trimmed.to_string()
    }
}

/// Scores are exact fractions; as in `mccbuild scores`, six decimals, rounded once.
fn round(x: &Exact) -> f64 {
    decimal(x, 6).parse().unwrap_or(f64::NAN)
}

/// The `category` and `reference` of a value's verdict. StateSpace values are `STATE_SPACE
/// <id>`; the other examinations the grammar enumerates are their own category with the value id
/// (formula id, or the examination's name for a global property) as reference; examinations the
/// grammar does not enumerate (MCC 2015's, SV-COMP's) use its free form, with the same
/// convention.
pub fn verdict_reference(examination: &str, id: &str) -> (String, String) {
    if examination == "StateSpace" {
        ("StateSpace".to_string(), format!("STATE_SPACE {id}"))
    } else {
        (examination.to_string(), id.to_string())
    }
}

/// The `value` of a verdict: `true`/`false` (the grammar's boolean form, as for generic
/// properties), integers in full, `+inf`, `unknown` where there is no trusted value.
pub fn verdict_value(value: Option<&Value>) -> String {
    match value {
        Some(Value::Bool(true)) => "true".to_string(),
        Some(Value::Bool(false)) => "false".to_string(),
        Some(v) => v.to_string(),
        None => "unknown".to_string(),
    }
}

/// The `explanation` of a verdict: what decided it and how many tools gave it.
pub fn verdict_explanation(
    known: bool,
    ground_truth: bool,
    case: TrustCase,
    agreeing: usize,
    computed: usize,
) -> String {
    let tools = |n: usize| if n == 1 { "tool" } else { "tools" };
    if case == TrustCase::Organisers {
        return format!(
            "decided by the organisers (rule E-6.3); {agreeing} of the {computed} {} that computed it gave it",
            tools(computed)
        );
    }
    if case == TrustCase::Reference {
        return if known {
            format!(
                "the contest's reference answer; {agreeing} of the {computed} {} that computed it gave it",
                tools(computed)
            )
        } else {
            format!(
                "unknown in the contest's reference answers; {computed} {} computed it",
                tools(computed)
            )
        };
    }
    match (known, ground_truth) {
        (true, true) => format!(
            "expected answer given with the task; {agreeing} of the {computed} {} that computed it gave it",
            tools(computed)
        ),
        (true, false) => format!(
            "trusted value (rule E-3.1, {}); {agreeing} of the {computed} {} that computed it gave it",
            case.name(),
            tools(computed)
        ),
        (false, true) => format!(
            "no expected answer given with the task; {computed} {} computed it",
            tools(computed)
        ),
        (false, false) => format!(
            "no trusted value (rule E-3.1, {}); {computed} {} computed it",
            case.name(),
            tools(computed)
        ),
    }
}

/// The file name of a model's verdicts, without `.xml`.
pub fn model_file_stem(model: &str) -> Result<&str, ExportError> {
    let why = if model.is_empty() {
        Some("it is empty")
    } else if model == "." || model == ".." {
        Some("it is a folder name")
    } else if model.contains(['/', '\\', '\0']) {
        Some("it holds a path separator")
    } else {
        None
    };
    match why {
        Some(why) => Err(ExportError::ModelFileName {
            model: model.to_string(),
            why,
        }),
        None => Ok(model),
    }
}

/// Whether XML 1.0 can carry `text` (escaped where needed): no control characters but tab and
/// line ends, no U+FFFE or U+FFFF.
fn xml_safe(what: &'static str, text: &str) -> Result<(), ExportError> {
    let bad = text.chars().any(|c| {
        (c < ' ' && !matches!(c, '\t' | '\n' | '\r')) || c == '\u{FFFE}' || c == '\u{FFFF}'
    });
    if bad {
        Err(ExportError::NotXml {
            what,
            text: text.escape_debug().to_string(),
        })
    } else {
        Ok(())
    }
}

/// A model's properties verdict file (version 2.0 of the MCC's format): `toolspecific` with
/// `modelreference`, then one `verdict` per value, each naming its instance in `modelinstance`.
/// Attributes are written in the grammar's order, escaped by quick-xml.
pub fn verdicts_xml(model: &ModelVerdicts) -> Result<Vec<u8>, ExportError> {
    xml_safe("model", &model.model)?;
    for v in &model.verdicts {
        xml_safe("instance", &v.instance)?;
        xml_safe("examination", &v.category)?;
        xml_safe("value id", &v.reference)?;
    }
    let mut writer = quick_xml::Writer::new_with_indent(Vec::new(), b' ', 2);
    // Writing into a Vec cannot fail.
    let _ = write_verdicts_events(&mut writer, model);
    let mut bytes = writer.into_inner();
    bytes.push(b'\n');
    Ok(bytes)
}

fn write_verdicts_events(
    writer: &mut quick_xml::Writer<Vec<u8>>,
    model: &ModelVerdicts,
) -> std::io::Result<()> {
    writer.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
    let mut root = BytesStart::new("toolspecific");
    root.push_attribute(("tool", VERDICT_TOOL));
    root.push_attribute(("version", VERDICT_VERSION));
    writer.write_event(Event::Start(root))?;
    let mut reference = BytesStart::new("modelreference");
    reference.push_attribute(("modelname", model.model.as_str()));
    writer.write_event(Event::Empty(reference))?;
    for v in &model.verdicts {
        let mut verdict = BytesStart::new("verdict");
        verdict.push_attribute(("category", v.category.as_str()));
        verdict.push_attribute(("reference", v.reference.as_str()));
        verdict.push_attribute(("value", v.value.as_str()));
        writer.write_event(Event::Start(verdict))?;
        let mut instance = BytesStart::new("modelinstance");
        instance.push_attribute(("reference", v.instance.as_str()));
        writer.write_event(Event::Empty(instance))?;
        writer.write_event(Event::Start(BytesStart::new("explanation")))?;
        writer.write_event(Event::Text(BytesText::new(&v.explanation)))?;
        writer.write_event(Event::End(BytesEnd::new("explanation")))?;
        writer.write_event(Event::End(BytesEnd::new("verdict")))?;
    }
    writer.write_event(Event::End(BytesEnd::new("toolspecific")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn int(n: u64) -> Value {
        Value::Int(n)
    }

    #[test]
    fn boolean_vectors_have_one_character_per_value() {
        let (t, f) = (Value::Bool(true), Value::Bool(false));
        assert_eq!(
            vector(ValueKind::Boolean, &[Some(&t), Some(&f), None, Some(&t)]),
            "TF?T"
        );
        assert_eq!(vector(ValueKind::Boolean, &[]), "");
    }

    #[test]
    fn integer_vectors_keep_big_numbers_exact() {
        let big = Value::parse("71790000000000000000000").unwrap();
        assert!(matches!(big, Value::Big(_)));
        assert_eq!(
            vector(
                ValueKind::Integer,
                &[Some(&int(9)), None, Some(&big), Some(&Value::Inf)]
            ),
            "9 ? 71790000000000000000000 +inf"
        );
    }

    #[test]
    fn vectors_read_back_by_the_importer() {
        use mccbuild_plan::results_file::{parse_results, RowResults};
        let big = Value::Big(Arc::new("123456789012345678901234567890".parse().unwrap()));
        let values = [Some(&int(0)), None, Some(&big), Some(&Value::Inf)];
        assert_eq!(
            parse_results(&vector(ValueKind::Integer, &values), ValueKind::Integer),
            Ok(RowResults::Values(
                values.iter().map(|v| v.cloned()).collect()
            ))
        );
        let (t, f) = (Value::Bool(true), Value::Bool(false));
        let values = [Some(&f), None, Some(&t)];
        assert_eq!(
            parse_results(&vector(ValueKind::Boolean, &values), ValueKind::Boolean),
            Ok(RowResults::Values(
                values.iter().map(|v| v.cloned()).collect()
            ))
        );
    }

    #[test]
    fn row_results_say_dnc_dnf_cc_or_the_answers() {
        let exit0 = Termination::Exit { code: 0 };
        let none: [Option<&Value>; 2] = [None, None];
        assert_eq!(
            row_results(
                Outcome::of(Response::DoNotCompete, exit0),
                ValueKind::Boolean,
                &none
            ),
            "DNC"
        );
        assert_eq!(
            row_results(
                Outcome::of(Response::CannotCompute, exit0),
                ValueKind::Boolean,
                &none
            ),
            "CC"
        );
        for t in [
            Termination::CpuLimit,
            Termination::MemoryLimit,
            Termination::Exit { code: 3 },
            Termination::Signal { signal: 11 },
        ] {
            assert_eq!(
                row_results(
                    Outcome::of(Response::CannotCompute, t),
                    ValueKind::Integer,
                    &none
                ),
                "DNF",
                "{t:?}"
            );
        }
        // Answers given before a time-out count.
        let one = int(1);
        assert_eq!(
            row_results(
                Outcome::of(Response::Answered, Termination::CpuLimit),
                ValueKind::Integer,
                &[Some(&one), None]
            ),
            "1 ?"
        );
    }

    #[test]
    fn masks_judge_each_value_against_the_trusted_one() {
        let (one, two) = (int(1), int(2));
        assert_eq!(
            mask(
                &[Some(&one), Some(&one), Some(&one), None, None],
                &[Some(&one), Some(&two), None, Some(&one), None]
            ),
            "TX?--"
        );
        // Fewer trusted values than answers: the others are not judged.
        assert_eq!(mask(&[Some(&one), Some(&one)], &[Some(&one)]), "T?");
    }

    #[test]
    fn times_and_memory_read_back_exactly() {
        assert_eq!(format_ms(1.5), "1500");
        assert_eq!(format_ms(0.0), "0");
        assert_eq!(format_ms(0.123456), "123.456");
        assert_eq!(format_mb(40 << 20), "40");
        assert_eq!(format_mb(12_582_912 + 1), "12.000000953674316");
        for bytes in [0u64, 1, 1_234_567, 40 << 20, (1 << 40) + 3] {
            let mb: f64 = format_mb(bytes).parse().unwrap();
            assert_eq!((mb * (1u64 << 20) as f64) as u64, bytes);
        }
        assert_eq!(format_number(-32.0), "-32");
        assert_eq!(format_number(0.5), "0.5");
        assert_eq!(format_number(-0.0000001), "0");
    }

    #[test]
    fn status_is_normal_or_how_the_run_ended() {
        assert_eq!(status(Termination::Exit { code: 0 }), "normal");
        assert_eq!(status(Termination::CpuLimit), "timeout");
        assert_eq!(status(Termination::Exit { code: 3 }), "exit 3");
        assert_eq!(status(Termination::Signal { signal: 9 }), "signal 9");
    }

    #[test]
    fn verdict_categories_and_references() {
        assert_eq!(
            verdict_reference("StateSpace", "STATES"),
            ("StateSpace".to_string(), "STATE_SPACE STATES".to_string())
        );
        assert_eq!(
            verdict_reference("UpperBounds", "M-PT-1-UpperBounds-03"),
            (
                "UpperBounds".to_string(),
                "M-PT-1-UpperBounds-03".to_string()
            )
        );
        assert_eq!(
            verdict_reference("OneSafe", "OneSafe"),
            ("OneSafe".to_string(), "OneSafe".to_string())
        );
        assert_eq!(verdict_value(Some(&Value::Bool(true))), "true");
        assert_eq!(verdict_value(Some(&Value::Bool(false))), "false");
        assert_eq!(verdict_value(Some(&Value::Inf)), "+inf");
        assert_eq!(verdict_value(Some(&int(42))), "42");
        assert_eq!(verdict_value(None), "unknown");
        assert_eq!(
            verdict_explanation(true, false, TrustCase::WeightedMajority, 3, 4),
            "trusted value (rule E-3.1, weighted-majority); 3 of the 4 tools that computed it gave it"
        );
        assert_eq!(
            verdict_explanation(false, false, TrustCase::NoAnswer, 0, 0),
            "no trusted value (rule E-3.1, no-answer); 0 tools computed it"
        );
        assert_eq!(
            verdict_explanation(true, true, TrustCase::GroundTruth, 1, 2),
            "expected answer given with the task; 1 of the 2 tools that computed it gave it"
        );
        assert_eq!(
            verdict_explanation(false, true, TrustCase::GroundTruth, 0, 1),
            "no expected answer given with the task; 1 tool computed it"
        );
        assert_eq!(
            verdict_explanation(true, false, TrustCase::Reference, 1, 2),
            "the contest's reference answer; 1 of the 2 tools that computed it gave it"
        );
    }

    #[test]
    fn model_names_that_cannot_name_a_file_are_refused() {
        assert_eq!(model_file_stem("Philosophers").unwrap(), "Philosophers");
        for bad in ["", ".", "..", "a/b", "a\\b"] {
            assert!(model_file_stem(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn verdict_files_escape_what_they_carry() {
        let model = ModelVerdicts {
            model: "A&B<\"C\">".to_string(),
            verdicts: vec![VerdictEntry {
                instance: "A&B-PT-1".to_string(),
                category: "StateSpace".to_string(),
                reference: "STATE_SPACE STATES".to_string(),
                value: "9".to_string(),
                explanation: "a < b & c".to_string(),
            }],
        };
        let text = String::from_utf8(verdicts_xml(&model).unwrap()).unwrap();
        assert!(
            text.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>"),
            "{text}"
        );
        assert!(
            text.contains("<modelreference modelname=\"A&amp;B&lt;&quot;C&quot;&gt;\"/>"),
            "{text}"
        );
        assert!(
            text.contains("<modelinstance reference=\"A&amp;B-PT-1\"/>"),
            "{text}"
        );
        assert!(
            text.contains("<explanation>a &lt; b &amp; c</explanation>"),
            "{text}"
        );
        // Well-formed, and reads back to what was written.
        let doc = roxmltree::Document::parse(&text).unwrap();
        let root = doc.root_element();
        assert_eq!(root.tag_name().name(), "toolspecific");
        assert_eq!(root.attribute("tool"), Some("propertiesverdict"));
        assert_eq!(root.attribute("version"), Some("2.0"));
        let reference = root.children().find(|n| n.is_element()).unwrap();
        assert_eq!(reference.attribute("modelname"), Some("A&B<\"C\">"));
        let verdict = root.children().find(|n| n.has_tag_name("verdict")).unwrap();
        assert_eq!(verdict.attribute("category"), Some("StateSpace"));
        assert_eq!(verdict.attribute("value"), Some("9"));

        let bad = ModelVerdicts {
            model: "M".to_string(),
            verdicts: vec![VerdictEntry {
                instance: "M\u{1}".to_string(),
                ..model.verdicts[0].clone()
            }],
        };
        assert!(matches!(
            verdicts_xml(&bad),
            Err(ExportError::NotXml {
                what: "instance",
                ..
            })
        ));
    }
}
