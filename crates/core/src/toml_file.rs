//! Reading a TOML file of the user's (the manifest, a rules file) into its typed form, with
//! every problem found at once: each unknown key at its line and column, then the first error
//! that stops reading (a wrong type, a missing key).

use serde::de::DeserializeOwned;
use toml::Spanned;
use toml::de::{DeTable, DeValue};

use crate::diag::{Problem, Problems, SourceText};

/// One step of the path to a key.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Step {
    Key(String),
    Index(usize),
}

/// Reads `source` as a `T`: every key `T` does not know is a problem (all of them, each at its
/// place), and so is anything that does not fit; `help` says where the format is documented.
/// `T` must not deny unknown fields itself (they are found here, all at once).
pub fn read_toml<T: DeserializeOwned>(source: &SourceText<'_>, help: &str) -> Result<T, Problems> {
    let deserializer =
        toml::de::Deserializer::parse(source.text).map_err(|e| source.toml_problem(&e, help))?;
    let mut unknown: Vec<Vec<Step>> = Vec::new();
    let read: Result<T, toml::de::Error> =
        serde_ignored::deserialize(deserializer, |path| unknown.push(steps(&path)));
    let mut problems = Problems::default();
    if !unknown.is_empty() {
        let document = DeTable::parse(source.text).ok();
        for path in &unknown {
            problems.push(unknown_key(source, document.as_ref(), path, help));
        }
    }
    match read {
        Ok(value) => problems.into_result(value),
        Err(e) => {
            problems.push(source.toml_problem(&e, help));
            Err(problems)
        }
    }
}

/// [`read_toml`], with every value that does not fit reported, not only the first: after each
/// such error its line is rewritten, in as many bytes (so that every other place stays where
/// it is), as the key with a stand-in of the expected kind (`""`, `0`, `[]`, the first expected
/// word...) where one fits, else blanked, and the file read again, until it reads, or a key is
/// missing, or nothing more can be taken out (a syntax error stops at once). The stand-ins are
/// never used: a file with a problem is not validated further. An unknown variant says which
/// of the expected words it likely misspells. The keys taken out are never reported missing.
pub fn read_toml_every<T: DeserializeOwned>(
    source: &SourceText<'_>,
    help: &str,
) -> Result<T, Problems> {
    if let Err(e) = toml::de::Deserializer::parse(source.text) {
        return Err(Problems(vec![source.toml_problem(&e, help)]));
    }
    let mut text = source.text.to_string();
    let mut unknown_keys: Vec<Problem> = Vec::new();
    let mut wrong: Vec<Problem> = Vec::new();
    let mut taken_out: Vec<String> = Vec::new();
    let mut lines_reported: Vec<usize> = Vec::new();
    // Each round takes one key out: at most one round per line.
    for _ in 0..=source.text.lines().count() {
        let attempt = SourceText {
            path: source.path,
            text: &text,
        };
        let (unknown, read) = read_once::<T>(&attempt, help);
        // Each round reads up to its error: the unknown keys past it come in later rounds.
        for p in unknown {
            if !unknown_keys
                .iter()
                .any(|q| q.message == p.message && q.location == p.location)
            {
                unknown_keys.push(p);
            }
        }
        let error = match read {
            Ok(value) => {
                unknown_keys.extend(wrong);
                return Problems(unknown_keys).into_result(value);
            }
            Err(error) => error,
        };
        let message = error.message().trim().to_string();
        if let Some(field) = missing_field(&message)
            && taken_out.iter().any(|k| k == field)
        {
            break;
        }
        let mut problem = source.toml_problem(&error, help);
        // A line reported already: what follows would only repeat it.
        let line = problem.location.map_or(0, |l| l.line);
        if lines_reported.contains(&line) {
            break;
        }
        lines_reported.push(line);
        if let Some(suggestion) = misspelt_variant(&message) {
            problem.message = format!("{}: did you mean `{suggestion}`?", problem.message);
        }
        wrong.push(problem);
        let Some(span) = error.span() else { break };
        if missing_field(&message).is_some() {
            break;
        }
        match blank_lines(&text, span, stand_in(&message).as_deref()) {
            Some((blanked, key)) => {
                text = blanked;
                taken_out.extend(key);
            }
            None => break,
        }
    }
    // In the file's order (serde meets them in its own).
    wrong.sort_by_key(|p| p.location.map(|l| (l.line, l.column)));
    unknown_keys.extend(wrong);
    Err(Problems(unknown_keys))
}

/// One reading: the unknown keys' problems, and the value or the error that stopped it.
fn read_once<T: DeserializeOwned>(
    source: &SourceText<'_>,
    help: &str,
) -> (Vec<Problem>, Result<T, toml::de::Error>) {
    let deserializer = match toml::de::Deserializer::parse(source.text) {
        Ok(d) => d,
        Err(e) => return (Vec::new(), Err(e)),
    };
    let mut unknown: Vec<Vec<Step>> = Vec::new();
    let read: Result<T, toml::de::Error> =
        serde_ignored::deserialize(deserializer, |path| unknown.push(steps(&path)));
    let document = DeTable::parse(source.text).ok();
    let problems = unknown
        .iter()
        .map(|path| unknown_key(source, document.as_ref(), path, help))
        .collect();
    (problems, read)
}

/// A value of the kind serde's error says was expected, to stand in for a wrong one.
fn stand_in(message: &str) -> Option<String> {
    if let Some(rest) = message.strip_prefix("unknown variant `") {
        let word = rest.split('`').nth(2)?;
        return Some(format!("\"{word}\""));
    }
    let expected = message.split("expected ").nth(1)?;
    let kind = if expected.contains("string") {
        "\"\""
    } else if expected.contains("bool") {
        "false"
    } else if expected.contains("sequence") || expected.contains("array") {
        "[]"
    } else if [
        "integer", "u64", "u32", "u16", "usize", "i64", "number", "float", "f64",
    ]
    .iter()
    .any(|k| expected.contains(k))
    {
        "0"
    } else {
        return None;
    };
    Some(kind.to_string())
}

/// The field of serde's "missing field `x`".
fn missing_field(message: &str) -> Option<&str> {
    message.strip_prefix("missing field `")?.split('`').next()
}

/// The expected word that the unknown variant of serde's "unknown variant `x`, expected `a` or
/// `b`" likely misspells.
fn misspelt_variant(message: &str) -> Option<String> {
    let rest = message.strip_prefix("unknown variant `")?;
    let (word, expected) = rest.split_once('`')?;
    let candidates: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
    crate::toml_table::closest(word, &candidates).map(str::to_string)
}

/// `text` with the lines of `span` blanked (every byte but the line ends a space: the other
/// offsets stay), then, on a line of its own that is no inline table, `key=stand_in` written
/// where it fits; and the key written at the start of the first of them. None when they are
/// blank already.
fn blank_lines(
    text: &str,
    span: std::ops::Range<usize>,
    stand_in: Option<&str>,
) -> Option<(String, Option<String>)> {
    let start = text[..span.start.min(text.len())]
        .rfind('\n')
        .map_or(0, |i| i + 1);
    let end = text[span.end.min(text.len())..]
        .find('\n')
        .map_or(text.len(), |i| span.end.min(text.len()) + i);
    let lines = &text[start..end];
    if lines.trim().is_empty() {
        return None;
    }
    let key = lines
        .split_once('=')
        .map(|(k, _)| k.trim().trim_matches('"').to_string());
    let mut bytes = text.as_bytes().to_vec();
    for b in &mut bytes[start..end] {
        if *b != b'\n' {
            *b = b' ';
        }
    }
    if let (Some(key), Some(value)) = (&key, stand_in) {
        let line = format!("{key}={value}");
        let simple = !lines.contains('\n')
            && !lines.contains('{')
            && key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if simple && line.len() <= end - start {
            bytes[start..start + line.len()].copy_from_slice(line.as_bytes());
        }
    }
    String::from_utf8(bytes).ok().map(|t| (t, key))
}

fn steps(path: &serde_ignored::Path<'_>) -> Vec<Step> {
    use serde_ignored::Path;
    match path {
        Path::Root => Vec::new(),
        Path::Seq { parent, index } => {
            let mut steps = self::steps(parent);
            steps.push(Step::Index(*index));
            steps
        }
        Path::Map { parent, key } => {
            let mut steps = self::steps(parent);
            // toml's Spanned<T> is a map of its own to serde: not a key of the file.
            if !key.starts_with("$__serde_spanned_private_") {
                steps.push(Step::Key(key.clone()));
            }
            steps
        }
        Path::Some { parent }
        | Path::NewtypeStruct { parent }
        | Path::NewtypeVariant { parent } => self::steps(parent),
    }
}

/// `unknown key `x` in [section]`, at the key.
fn unknown_key(
    source: &SourceText<'_>,
    document: Option<&Spanned<DeTable<'_>>>,
    path: &[Step],
    help: &str,
) -> Problem {
    let (key, table) = match path.split_last() {
        Some((Step::Key(key), table)) => (key.clone(), table),
        _ => (String::new(), path),
    };
    let section: Vec<String> = table
        .iter()
        .filter_map(|s| match s {
            Step::Key(k) => Some(k.clone()),
            Step::Index(_) => None,
        })
        .collect();
    let message = if section.is_empty() {
        format!("unknown field `{key}` at the top level")
    } else {
        format!("unknown field `{key}` in [{}]", section.join("."))
    };
    let span = document.and_then(|d| key_span(d.get_ref(), path));
    source.problem_at(span, message).help(help)
}

/// Where the key at `path` is written.
fn key_span(table: &DeTable<'_>, path: &[Step]) -> Option<std::ops::Range<usize>> {
    let (Step::Key(first), rest) = path.split_first()? else {
        return None;
    };
    let (key, value) = table.iter().find(|(k, _)| k.get_ref() == first)?;
    if rest.is_empty() {
        return Some(key.span());
    }
    value_key_span(value.get_ref(), rest)
}

fn value_key_span(value: &DeValue<'_>, path: &[Step]) -> Option<std::ops::Range<usize>> {
    match (value, path.first()?) {
        (DeValue::Table(table), Step::Key(_)) => key_span(table, path),
        (DeValue::Array(array), Step::Index(i)) => {
            value_key_span(array.get(*i)?.get_ref(), &path[1..])
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[derive(Debug, serde::Deserialize)]
    struct File {
        #[expect(dead_code)]
        name: String,
        #[serde(default, rename = "tool")]
        tools: Vec<Spanned<Tool>>,
    }

    #[derive(Debug, serde::Deserialize)]
    struct Tool {
        #[expect(dead_code)]
        name: String,
        #[serde(default)]
        cores: Option<Spanned<u32>>,
    }

    fn read(text: &str) -> Result<File, Problems> {
        read_toml(
            &SourceText {
                path: Path::new("c.toml"),
                text,
            },
            "see the docs",
        )
    }

    #[test]
    fn every_unknown_key_is_reported_at_its_place() {
        let text =
            "name = \"x\"\nnmae = 1\n[[tool]]\nname = \"a\"\n[[tool]]\nname = \"b\"\ncors = 4\n";
        let problems = read(text).unwrap_err();
        assert_eq!(problems.len(), 2, "{problems}");
        assert_eq!(problems.0[0].location.unwrap().line, 2);
        assert!(problems.0[0].message.contains("unknown field `nmae`"));
        assert_eq!(problems.0[1].location.unwrap().line, 7);
        assert_eq!(problems.0[1].location.unwrap().column, 1);
        assert!(
            problems.0[1]
                .message
                .contains("unknown field `cors` in [tool]")
        );
    }

    #[test]
    fn a_wrong_type_is_reported_after_the_unknown_keys() {
        let text = "name = \"x\"\nextra = 1\n[[tool]]\nname = 3\n";
        let problems = read(text).unwrap_err();
        assert_eq!(problems.len(), 2, "{problems}");
        assert!(problems.0[0].message.contains("extra"));
        assert_eq!(problems.0[1].location.unwrap().line, 4, "{problems}");
    }

    #[test]
    fn every_value_that_does_not_fit_is_reported_with_the_unknown_keys() {
        let text =
            "name = 3\nnmae = 1\n[[tool]]\nname = \"a\"\ncores = \"four\"\n[[tool]]\nname = [1]\n";
        let problems = read_every(text).unwrap_err();
        let lines: Vec<(usize, bool)> = problems
            .0
            .iter()
            .map(|p| {
                (
                    p.location.unwrap().line,
                    p.message.contains("unknown field"),
                )
            })
            .collect();
        // The unknown key, then each wrong value in the file's order; the keys taken out are
        // not reported missing.
        assert_eq!(
            lines,
            [(2, true), (1, false), (5, false), (7, false)],
            "{problems}"
        );
        // A good file reads as with `read_toml`.
        assert!(read_every("name = \"x\"\n[[tool]]\nname = \"a\"\n").is_ok());
        // A key really missing is reported once.
        let missing = read_every("[[tool]]\nname = \"a\"\n").unwrap_err();
        assert_eq!(missing.len(), 1, "{missing}");
        assert!(missing.0[0].message.contains("missing field `name`"));
    }

    #[test]
    fn a_misspelt_variant_gets_did_you_mean() {
        assert_eq!(
            misspelt_variant("unknown variant `fmaily`, expected `tool` or `family`").as_deref(),
            Some("family")
        );
        assert_eq!(
            misspelt_variant("unknown variant `zzz`, expected `tool` or `family`"),
            None
        );
    }

    fn read_every(text: &str) -> Result<File, Problems> {
        read_toml_every(
            &SourceText {
                path: Path::new("c.toml"),
                text,
            },
            "see the docs",
        )
    }

    #[test]
    fn a_good_file_reads_and_spans_survive() {
        let file = read("name = \"x\"\n[[tool]]\nname = \"a\"\ncores = 4\n").unwrap();
        // "cores = " starts at byte 31 (three lines of 11, 9 and 11 bytes), its value at 39.
        assert_eq!(
            file.tools[0].get_ref().cores.as_ref().unwrap().span(),
            39..40
        );
    }
}
