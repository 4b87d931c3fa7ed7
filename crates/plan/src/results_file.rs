//! Results files in the layout of the MCC's `raw-result-analysis.csv`: one row per run, read
//! into the store so that a past edition can be scored again, or under another edition's rules,
//! without running anything (`mccbuild import`, `[contest] results`).
//!
//! Columns (by header name; extra columns are ignored): `tool`, `Input` (the instance),
//! `Examination`, `nb cores`, `results`, `techniques`, `max memory (MB)`, `CPU (ms)`,
//! `Time (ms)`, `Status`, `estimated result` (the trusted values as a vector: only its length is
//! read, so that an examination no tool answered keeps its number of values). `results` is `DNC` (did not compete), `DNF` (did not finish), `CC`
//! (cannot compute), or a vector: one character per value for boolean examinations (`T`, `F`,
//! `?` not computed), space-separated numbers otherwise (`?` or a negative number: not
//! computed; `+inf`; `7.1790E+0023`, the file's shortened big numbers, read as the integer they
//! denote: 7179 x 10^20).

use std::path::Path;

use mccbuild_core::diag::{Problem, Problems};
use mccbuild_core::digest::Digest;
use mccbuild_core::value::{Value, ValueKind};

/// What a row says the run gave.
#[derive(Clone, Debug, PartialEq)]
pub enum RowResults {
    DoNotCompete,
    DidNotFinish,
    CannotCompute,
    /// By position; `None`: not computed.
    Values(Vec<Option<Value>>),
}

/// One row (one run) of a results file.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ResultRow {
    /// 1-based line in the file.
    pub line: usize,
    pub tool: String,
    pub instance: String,
    pub examination: String,
    pub cores: u32,
    /// The `results` field as written.
    pub results: String,
    pub techniques: String,
    pub memory_mb: f64,
    pub cpu_ms: f64,
    pub time_ms: f64,
    pub status: String,
    /// The `estimated result` field as written (empty when the file has no such column).
    pub estimated: String,
    /// blake3 of the row's fields: the content of an imported run.
    pub digest: Digest,
}

/// Reads a results file; rows that cannot be read are problems (with their line), the others
/// are returned.
pub fn read_results(path: &Path) -> Result<(Vec<ResultRow>, Problems), Problems> {
    let mut reader = csv::ReaderBuilder::new()
        .flexible(true)
        .from_path(path)
        .map_err(|e| Problem::new(path, format!("cannot read the results file: {e}")).help("`results` in [contest] names raw-result-analysis.csv files, relative to the manifest"))?;
    let headers = reader
        .headers()
        .map_err(|e| Problem::new(path, format!("cannot read the header line: {e}")))?
        .clone();
    let column = |name: &str| {
        headers
            .iter()
            .position(|h| h.trim().eq_ignore_ascii_case(name))
    };
    let (Some(tool), Some(input), Some(exam), Some(results)) = (
        column("tool"),
        column("Input"),
        column("Examination"),
        column("results"),
    ) else {
        return Err(Problem::new(
            path,
            "the header must name the columns tool, Input, Examination and results",
        )
        .help("the layout of the MCC's raw-result-analysis.csv (docs/import.md)")
        .into());
    };
    let (cores, techniques, memory, cpu, time, status, estimated) = (
        column("nb cores"),
        column("techniques"),
        column("max memory (MB)"),
        column("CPU (ms)"),
        column("Time (ms)"),
        column("Status"),
        column("estimated result"),
    );
    let mut rows = Vec::new();
    let mut problems = Problems::default();
    let mut fields: Vec<u8> = Vec::new();
    for record in reader.records() {
        let record = match record {
            Ok(r) => r,
            Err(e) => {
                let line = e.position().map_or(0, |p| p.line() as usize);
                problems.push(Problem::new(
                    path,
                    format!("line {line}: unreadable row: {e}"),
                ));
                continue;
            }
        };
        let line = record.position().map_or(0, |p| p.line() as usize);
        let field = |i: Option<usize>| {
            i.and_then(|i| record.get(i))
                .unwrap_or("")
                .trim()
                .to_string()
        };
        let number = |i: Option<usize>| field(i).parse::<f64>().unwrap_or(0.0);
        let row_tool = field(Some(tool));
        let row_instance = field(Some(input));
        let row_exam = field(Some(exam));
        if row_tool.is_empty() || row_instance.is_empty() || row_exam.is_empty() {
            problems.push(Problem::new(
                path,
                format!("line {line}: a row needs a tool, an Input and an Examination"),
            ));
            continue;
        }
        // The row's fields, each after its length, hashed at once (one call per field costs
        // more than the hashing of a short row).
        fields.clear();
        for f in record.iter() {
            fields.extend_from_slice(&(f.len() as u64).to_le_bytes());
            fields.extend_from_slice(f.as_bytes());
        }
        let digest = *blake3::hash(&fields).as_bytes();
        rows.push(ResultRow {
            line,
            tool: row_tool,
            instance: row_instance,
            examination: row_exam,
            cores: field(cores).parse().unwrap_or(1),
            results: field(Some(results)),
            techniques: field(techniques),
            memory_mb: number(memory),
            cpu_ms: number(cpu),
            time_ms: number(time),
            status: field(status),
            estimated: field(estimated),
            digest,
        });
    }
    Ok((rows, problems))
}

/// Why a row's results vector cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VectorError {
    #[error("`{0}` is not T, F or ? in a boolean results vector")]
    NotBoolean(char),
    #[error("`{0}` is not a number")]
    NotNumber(String),
}

/// Reads a row's `results` for an examination whose values are of `kind`.
pub fn parse_results(text: &str, kind: ValueKind) -> Result<RowResults, VectorError> {
    match text.trim() {
        "DNC" => return Ok(RowResults::DoNotCompete),
        "DNF" => return Ok(RowResults::DidNotFinish),
        "CC" => return Ok(RowResults::CannotCompute),
        "" => return Ok(RowResults::CannotCompute),
        _ => {}
    }
    let values = match kind {
        ValueKind::Boolean => text
            .trim()
            .chars()
            .filter(|c| !c.is_whitespace())
            .map(|c| match c {
                'T' => Ok(Some(Value::Bool(true))),
                'F' => Ok(Some(Value::Bool(false))),
                '?' | '-' | 'X' => Ok(None),
                other => Err(VectorError::NotBoolean(other)),
            })
            .collect::<Result<Vec<_>, _>>()?,
        ValueKind::Integer => text
            .split_whitespace()
            .map(parse_number)
            .collect::<Result<Vec<_>, _>>()?,
    };
    Ok(RowResults::Values(values))
}

/// The number of values of a row's vector (`results` or `estimated result`): `Some` exactly
/// when [`parse_results`] reads it as values, with their count, without building the values
/// (the plan needs only the lengths of the 144,034 rows of an edition; test
/// `vector_length_is_the_length_of_the_parsed_vector`).
pub fn vector_length(text: &str, kind: ValueKind) -> Option<usize> {
    let text = text.trim();
    if matches!(text, "DNC" | "DNF" | "CC" | "") {
        return None;
    }
    let mut n = 0;
    match kind {
        ValueKind::Boolean => {
            for c in text.chars().filter(|c| !c.is_whitespace()) {
                if !matches!(c, 'T' | 'F' | '?' | '-' | 'X') {
                    return None;
                }
                n += 1;
            }
        }
        ValueKind::Integer => {
            for word in text.split_whitespace() {
                // Plain decimal numbers and `?` are always read; the rest as the parser does.
                let plain = word == "?" || word.bytes().all(|b| b.is_ascii_digit());
                if !plain && parse_number(word).is_err() {
                    return None;
                }
                n += 1;
            }
        }
    }
    Some(n)
}

fn parse_number(word: &str) -> Result<Option<Value>, VectorError> {
    let not_a_number = || VectorError::NotNumber(word.to_string());
    if word == "?" {
        return Ok(None);
    }
    match Value::parse(word) {
        Ok(v) => return Ok(Some(v)),
        Err(mccbuild_core::value::ValueError::Negative(_)) => return Ok(None),
        Err(_) => {}
    }
    // The shortened big numbers of the MCC's files: d.dddE+xx.
    if word.starts_with('-') {
        return Ok(None);
    }
    Value::parse_scientific_integer(word)
        .map(Some)
        .ok_or_else(not_a_number)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_vectors() {
        assert_eq!(
            parse_results("DNC", ValueKind::Boolean),
            Ok(RowResults::DoNotCompete)
        );
        assert_eq!(
            parse_results("DNF", ValueKind::Integer),
            Ok(RowResults::DidNotFinish)
        );
        assert_eq!(
            parse_results("CC", ValueKind::Integer),
            Ok(RowResults::CannotCompute)
        );
        assert_eq!(
            parse_results("TF?T", ValueKind::Boolean),
            Ok(RowResults::Values(vec![
                Some(Value::Bool(true)),
                Some(Value::Bool(false)),
                None,
                Some(Value::Bool(true))
            ]))
        );
        assert_eq!(
            parse_results("243 945 -1 ?", ValueKind::Integer),
            Ok(RowResults::Values(vec![
                Some(Value::Int(243)),
                Some(Value::Int(945)),
                None,
                None
            ]))
        );
        assert_eq!(
            parse_results("+inf 1", ValueKind::Integer),
            Ok(RowResults::Values(vec![
                Some(Value::Inf),
                Some(Value::Int(1))
            ]))
        );
        assert!(parse_results("TFZ", ValueKind::Boolean).is_err());
        assert!(parse_results("12 x", ValueKind::Integer).is_err());
    }

    #[test]
    fn shortened_big_numbers_read_as_the_integer_they_denote() {
        // 7.1790E+0023 = 71790 x 10^19
        assert_eq!(
            parse_number("7.1790E+0023").unwrap().unwrap().to_string(),
            format!("71790{}", "0".repeat(19))
        );
        assert_eq!(parse_number("1E3").unwrap(), Some(Value::Int(1000)));
        assert!(parse_number("1.2345E+2").is_err()); // not an integer
    }

    #[test]
    fn reading_a_file_with_its_problems() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.csv");
        std::fs::write(
            &path,
            "tool,Input,Examination,nb cores,time flag,memory flag,results,techniques,max memory (MB),CPU (ms),Time (ms),i/o wait (ms),Status,run id\n\
             lola,M-PT-1,ReachabilityDeadlock,1,0,0,T,EXPLICIT,12.5,1500,1600,0,normal,1\n\
             ,M-PT-1,OneSafe,1,0,0,T,,1,1,1,0,normal,2\n\
             tapaal,M-PT-1,StateSpace,4,0,0,6 8 1 4,EXPLICIT,20,300,120,0,normal,3\n",
        )
        .unwrap();
        let (rows, problems) = read_results(&path).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(problems.len(), 1);
        assert!(problems.0[0].message.contains("line 3"), "{problems}");
        assert_eq!(rows[1].cores, 4);
        assert_eq!(rows[1].results, "6 8 1 4");
        assert_eq!(rows[0].cpu_ms, 1500.0);
        assert_ne!(rows[0].digest, rows[1].digest);
        assert_eq!(rows[0].estimated, "", "no `estimated result` column");
    }

    #[test]
    fn the_estimated_result_is_read_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.csv");
        std::fs::write(
            &path,
            "tool,Input,Examination,results,estimated result\n\
             lola,M-PT-1,UpperBounds,DNC,3 ? +inf\n",
        )
        .unwrap();
        let (rows, problems) = read_results(&path).unwrap();
        assert!(problems.is_empty(), "{problems}");
        assert_eq!(rows[0].estimated, "3 ? +inf");
    }

    mod properties {
        use super::super::*;
        use proptest::prelude::*;

        proptest! {
            #[test]
            fn vector_length_is_the_length_of_the_parsed_vector(
                words in proptest::collection::vec(
                    prop_oneof![
                        Just("T".to_string()), Just("F".to_string()), Just("?".to_string()),
                        Just("-".to_string()), Just("X".to_string()), Just("DNC".to_string()),
                        Just("CC".to_string()), Just("+inf".to_string()), Just("-3".to_string()),
                        Just("7.1790E+0023".to_string()), Just("1.5e2".to_string()),
                        Just("1e".to_string()), Just("TF?".to_string()), Just(" ".to_string()),
                        "[0-9]{1,30}", "[+]?[0-9]{0,3}", ".{0,4}",
                    ],
                    0..6,
                ),
                spaces in proptest::collection::vec(prop_oneof![Just(" "), Just("  "), Just("\t"), Just("")], 6),
            ) {
                let mut text = String::new();
                for (w, s) in words.iter().zip(spaces.iter().cycle()) {
                    text.push_str(w);
                    text.push_str(s);
                }
                for kind in [ValueKind::Boolean, ValueKind::Integer] {
                    let parsed = match parse_results(&text, kind) {
                        Ok(RowResults::Values(v)) => Some(v.len()),
                        _ => None,
                    };
                    prop_assert_eq!(vector_length(&text, kind), parsed, "{:?} {:?}", text, kind);
                }
            }
        }
    }
}
