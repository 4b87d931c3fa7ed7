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
    fn a_good_file_reads_and_spans_survive() {
        let file = read("name = \"x\"\n[[tool]]\nname = \"a\"\ncores = 4\n").unwrap();
        // "cores = " starts at byte 31 (three lines of 11, 9 and 11 bytes), its value at 39.
        assert_eq!(
            file.tools[0].get_ref().cores.as_ref().unwrap().span(),
            39..40
        );
    }
}
