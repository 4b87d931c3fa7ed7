//! The CSV export, in the layout of the MCC's `raw-result-analysis.csv` (which `mccbuild import`
//! reads back): its columns, and how runs, answers, times and memory are written in them.

use mccbuild_core::{Outcome, Termination, Value, ValueKind};

use super::Export;

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

/// Per examination instance: the trusted values as a vector, and how many tools computed each.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Estimated {
    pub(super) vector: String,
    pub(super) computing: String,
}

impl Export {
    /// The CSV, header included.
    pub fn csv_bytes(&self) -> Vec<u8> {
        let mut writer = ::csv::WriterBuilder::new()
            .terminator(::csv::Terminator::Any(b'\n'))
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

pub(super) fn format_number(x: f64) -> String {
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
