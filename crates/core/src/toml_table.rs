//! Reading a TOML document of the user's key by key, every problem at once: each unknown key
//! (with the key it most likely meant and the keys its table takes), each missing key and each
//! value of the wrong type, at its place and in the words of the file's documentation ("a
//! whole number", "a list of strings"), never serde's ("expected usize").
//!
//! A reader ([`TomlReader`]) collects the problems; a [`Table`] is one table of the document
//! with the keys it takes. A value that is wrong is reported and read as absent, so that the
//! checks that come after still run on everything else.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::ops::Range;
use std::path::Path;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use crate::diag::{Problem, Problems, SourceText};

/// A value of a TOML file, as its documentation describes it.
pub trait FromToml: Sized {
    /// What such a value is, in the documentation's words: "a whole number".
    fn what() -> Cow<'static, str>;
    /// The same, for a list of them: "whole numbers".
    fn plural() -> Cow<'static, str>;
    /// A value of the kind as written in the file, for a help line: `2`, `"..."`.
    fn example() -> Cow<'static, str>;
    /// The value, or what was found instead.
    fn from_toml(value: &Spanned<DeValue<'_>>) -> Result<Self, Mismatch>;
}

/// A value that is not of the kind asked for: what it is instead, and where (a list's item).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// What was found: "the string \"two\"".
    pub found: String,
    /// The item of a list that is wrong (1-based) and its place.
    pub item: Option<(usize, Range<usize>)>,
}

impl Mismatch {
    /// `value` is not what was asked for.
    pub fn of(value: &DeValue<'_>) -> Self {
        Mismatch {
            found: found(value),
            item: None,
        }
    }
}

/// What a value is, for "... must be a whole number, not the string \"two\"".
fn found(value: &DeValue<'_>) -> String {
    match value {
        DeValue::String(s) => {
            let shown: String = s.chars().take(40).collect();
            if shown.len() < s.len() {
                format!("the string {:?}...", shown)
            } else {
                format!("the string {s:?}")
            }
        }
        DeValue::Integer(i) => format!("the whole number {i}"),
        DeValue::Float(f) => format!("the number {f}"),
        DeValue::Boolean(b) => b.to_string(),
        DeValue::Datetime(d) => format!("the date {d}"),
        DeValue::Array(_) => "a list".to_string(),
        DeValue::Table(_) => "a table".to_string(),
    }
}

impl FromToml for String {
    fn what() -> Cow<'static, str> {
        "a string".into()
    }
    fn plural() -> Cow<'static, str> {
        "strings".into()
    }
    fn example() -> Cow<'static, str> {
        "\"...\"".into()
    }
    fn from_toml(value: &Spanned<DeValue<'_>>) -> Result<Self, Mismatch> {
        match value.get_ref() {
            DeValue::String(s) => Ok(s.to_string()),
            other => Err(Mismatch::of(other)),
        }
    }
}

impl FromToml for bool {
    fn what() -> Cow<'static, str> {
        "true or false".into()
    }
    fn plural() -> Cow<'static, str> {
        "true or false values".into()
    }
    fn example() -> Cow<'static, str> {
        "true".into()
    }
    fn from_toml(value: &Spanned<DeValue<'_>>) -> Result<Self, Mismatch> {
        match value.get_ref() {
            DeValue::Boolean(b) => Ok(*b),
            other => Err(Mismatch::of(other)),
        }
    }
}

/// A whole number of 0 or more that fits in `max`.
fn whole(value: &DeValue<'_>, max: u64) -> Result<u64, Mismatch> {
    let DeValue::Integer(i) = value else {
        return Err(Mismatch::of(value));
    };
    let n = i128::from_str_radix(i.as_str(), i.radix()).ok();
    let beyond = |what: &str| Mismatch {
        found: format!("{i}, which is {what}"),
        item: None,
    };
    match n {
        Some(n) if n < 0 => Err(beyond("negative")),
        Some(n) => u64::try_from(n)
            .ok()
            .filter(|&n| n <= max)
            .ok_or_else(|| beyond(&format!("more than {max}"))),
        None => Err(beyond(&format!("more than {max}"))),
    }
}

macro_rules! whole_number {
    ($($t:ty),*) => {$(
        impl FromToml for $t {
            fn what() -> Cow<'static, str> {
                "a whole number".into()
            }
            fn plural() -> Cow<'static, str> {
                "whole numbers".into()
            }
            fn example() -> Cow<'static, str> {
                "1".into()
            }
            fn from_toml(value: &Spanned<DeValue<'_>>) -> Result<Self, Mismatch> {
                let max = u64::try_from(<$t>::MAX).unwrap_or(u64::MAX);
                whole(value.get_ref(), max).and_then(|n| {
                    <$t>::try_from(n).map_err(|_| Mismatch::of(value.get_ref()))
                })
            }
        }
    )*};
}

whole_number!(u32, u64, usize);

impl<T: FromToml> FromToml for Vec<T> {
    fn what() -> Cow<'static, str> {
        format!("a list of {}", T::plural()).into()
    }
    fn plural() -> Cow<'static, str> {
        format!("lists of {}", T::plural()).into()
    }
    fn example() -> Cow<'static, str> {
        format!("[{}]", T::example()).into()
    }
    fn from_toml(value: &Spanned<DeValue<'_>>) -> Result<Self, Mismatch> {
        let DeValue::Array(items) = value.get_ref() else {
            return Err(Mismatch::of(value.get_ref()));
        };
        items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                T::from_toml(item).map_err(|m| Mismatch {
                    item: Some((i + 1, item.span())),
                    found: m.found,
                })
            })
            .collect()
    }
}

/// A table of values of one kind (`images = { explorer = "images/explorer.qcow2" }`).
impl<T: FromToml> FromToml for BTreeMap<String, T> {
    fn what() -> Cow<'static, str> {
        format!("a table of {}", T::plural()).into()
    }
    fn plural() -> Cow<'static, str> {
        format!("tables of {}", T::plural()).into()
    }
    fn example() -> Cow<'static, str> {
        format!("{{ name = {} }}", T::example()).into()
    }
    fn from_toml(value: &Spanned<DeValue<'_>>) -> Result<Self, Mismatch> {
        let DeValue::Table(table) = value.get_ref() else {
            return Err(Mismatch::of(value.get_ref()));
        };
        let mut map = BTreeMap::new();
        for (i, (key, item)) in table.iter().enumerate() {
            let item_value = T::from_toml(item).map_err(|m| Mismatch {
                item: Some((i + 1, item.span())),
                found: format!("`{}` = {}", key.get_ref(), m.found),
            })?;
            map.insert(key.get_ref().to_string(), item_value);
        }
        Ok(map)
    }
}

/// A value with its place in the file.
impl<T: FromToml> FromToml for Spanned<T> {
    fn what() -> Cow<'static, str> {
        T::what()
    }
    fn plural() -> Cow<'static, str> {
        T::plural()
    }
    fn example() -> Cow<'static, str> {
        T::example()
    }
    fn from_toml(value: &Spanned<DeValue<'_>>) -> Result<Self, Mismatch> {
        T::from_toml(value).map(|v| Spanned::new(value.span(), v))
    }
}

/// The word of `candidates` that `word` most likely misspells, if one is close enough (a
/// letter or two off, or two letters swapped).
pub fn closest<'k>(word: &str, candidates: &[&'k str]) -> Option<&'k str> {
    let limit = match word.chars().count() {
        0..=2 => 1,
        3..=5 => 2,
        _ => 3,
    };
    candidates
        .iter()
        .map(|c| (strsim::damerau_levenshtein(word, c), *c))
        .filter(|&(d, c)| d <= limit && d < c.chars().count())
        .min_by_key(|&(d, _)| d)
        .map(|(_, c)| c)
}

/// The problems of one TOML document, read key by key.
pub struct TomlReader<'a> {
    source: SourceText<'a>,
    /// Where the file's keys are documented (the help of an unknown key).
    help: &'a str,
    /// Each problem with the offset it is at, to report them in the file's order.
    problems: RefCell<Vec<(usize, Problem)>>,
}

impl<'a> TomlReader<'a> {
    pub fn new(path: &'a Path, text: &'a str, help: &'a str) -> Self {
        TomlReader {
            source: SourceText { path, text },
            help,
            problems: RefCell::new(Vec::new()),
        }
    }

    /// The document as a table of spanned values; a syntax error is a problem at its place (it
    /// stops the reading: what follows it cannot be told apart).
    pub fn parse(&self) -> Result<Spanned<DeTable<'a>>, Problems> {
        DeTable::parse(self.source.text).map_err(|e| self.source.toml_problem(&e, self.help).into())
    }

    /// The document's top level, which takes `keys`.
    pub fn root<'r>(
        &'r self,
        document: &'r Spanned<DeTable<'a>>,
        keys: &'static [&'static str],
    ) -> Table<'r, 'a> {
        Table::new(
            self,
            document.get_ref(),
            document.span(),
            String::new(),
            keys,
        )
    }

    /// A problem found by the caller at `span` (with the help given, if any).
    pub fn problem_at(&self, span: Range<usize>, message: impl Into<String>, help: Option<String>) {
        let mut problem = self.source.problem_at(Some(span.clone()), message);
        problem.help = help;
        self.problems.borrow_mut().push((span.start, problem));
    }

    /// Every problem found, in the order of the file.
    pub fn into_problems(self) -> Problems {
        let mut problems = self.problems.into_inner();
        problems.sort_by_key(|(offset, _)| *offset);
        Problems(problems.into_iter().map(|(_, p)| p).collect())
    }
}

/// One table of a document, with the keys it takes (any other key is reported when the table
/// is opened).
pub struct Table<'r, 'a> {
    reader: &'r TomlReader<'a>,
    table: &'r DeTable<'a>,
    span: Range<usize>,
    /// `[executor]`, `[tool]`; empty for the top level.
    label: String,
    keys: &'static [&'static str],
}

impl<'r, 'a> Table<'r, 'a> {
    fn new(
        reader: &'r TomlReader<'a>,
        table: &'r DeTable<'a>,
        span: Range<usize>,
        label: String,
        keys: &'static [&'static str],
    ) -> Self {
        let table = Table {
            reader,
            table,
            span,
            label,
            keys,
        };
        table.unknown_keys();
        table
    }

    /// Where the table is: its header (the start of the file for the top level).
    pub fn span(&self) -> Range<usize> {
        self.span.clone()
    }

    /// Each key the table does not take: at its place, with the key it most likely meant and
    /// the keys it takes.
    fn unknown_keys(&self) {
        for (key, _) in self.table.iter() {
            let name = key.get_ref();
            if self.keys.contains(&name.as_ref()) {
                continue;
            }
            let message = if self.label.is_empty() {
                format!("unknown field `{name}` at the top level")
            } else {
                format!("unknown field `{name}` in {}", self.label)
            };
            let keys = self
                .keys
                .iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ");
            let takes = if self.label.is_empty() {
                "the top level takes".to_string()
            } else {
                format!("{} takes", self.label)
            };
            let help = match closest(name, self.keys) {
                Some(meant) => format!("did you mean `{meant}`? {takes} {keys}"),
                None => format!("{takes} {keys}; {}", self.reader.help),
            };
            self.reader.problem_at(key.span(), message, Some(help));
        }
    }

    /// The value of `key` as written, if present.
    fn value(&self, key: &str) -> Option<&'r Spanned<DeValue<'a>>> {
        debug_assert!(
            self.keys.contains(&key),
            "{key} is not a key of {}",
            self.label
        );
        self.table.get(key)
    }

    /// How problems name `key` of this table: "[executor] jobs", "`name`" at the top level.
    fn name(&self, key: &str) -> String {
        if self.label.is_empty() {
            format!("`{key}`")
        } else {
            format!("{} {key}", self.label)
        }
    }

    /// Whether the table has `key` (whatever its value).
    pub fn has(&self, key: &str) -> bool {
        self.value(key).is_some()
    }

    /// `key`'s value: absent, or of the wrong kind (a problem at its place, then absent).
    pub fn get<T: FromToml>(&self, key: &str) -> Option<Spanned<T>> {
        let value = self.value(key)?;
        match T::from_toml(value) {
            Ok(v) => Some(Spanned::new(value.span(), v)),
            Err(mismatch) => {
                self.wrong_kind(key, value.span(), &T::what(), &T::example(), mismatch);
                None
            }
        }
    }

    /// `key`'s value, which the table must have (its absence is a problem at the table).
    pub fn require<T: FromToml>(&self, key: &str) -> Option<Spanned<T>> {
        if self.value(key).is_none() {
            let what = if self.label.is_empty() {
                "the file".to_string()
            } else {
                self.label.clone()
            };
            self.reader.problem_at(
                self.span(),
                format!("{what} has no `{key}`"),
                Some(format!("add `{key} = {}`", T::example())),
            );
            return None;
        }
        self.get(key)
    }

    /// `key`'s value, one of the words of `choices` (another word is a problem that lists them).
    pub fn choice<T: Copy>(&self, key: &str, choices: &[(&'static str, T)]) -> Option<Spanned<T>> {
        let word = self.get::<String>(key)?;
        if let Some((_, v)) = choices.iter().find(|(w, _)| *w == word.get_ref()) {
            return Some(Spanned::new(word.span(), *v));
        }
        let words: Vec<&str> = choices.iter().map(|(w, _)| *w).collect();
        let listed = words
            .iter()
            .map(|w| format!("\"{w}\""))
            .collect::<Vec<_>>()
            .join(", ");
        let help = match closest(word.get_ref(), &words) {
            Some(meant) => format!("did you mean \"{meant}\"? use one of {listed}"),
            None => format!("use one of {listed}"),
        };
        self.reader.problem_at(
            word.span(),
            format!("{} = \"{}\" is not known", self.name(key), word.get_ref()),
            Some(help),
        );
        None
    }

    /// The table `key` (`[executor.qemu]`, or an inline table), named `label` in problems.
    pub fn table(
        &self,
        key: &str,
        label: &str,
        keys: &'static [&'static str],
    ) -> Option<Table<'r, 'a>> {
        let value = self.value(key)?;
        match value.get_ref() {
            DeValue::Table(table) => Some(Table::new(
                self.reader,
                table,
                value.span(),
                label.to_string(),
                keys,
            )),
            other => {
                let example = format!("write it as a table: {label}");
                self.reader.problem_at(
                    value.span(),
                    format!("{} must be a table, not {}", self.name(key), found(other)),
                    Some(example),
                );
                None
            }
        }
    }

    /// The tables of the list `key` (`[[tool]]`), each named `label` in problems.
    pub fn tables(
        &self,
        key: &str,
        label: &str,
        keys: &'static [&'static str],
    ) -> Vec<Table<'r, 'a>> {
        let Some(value) = self.value(key) else {
            return Vec::new();
        };
        let help = || Some(format!("write each one as a table headed [[{key}]]"));
        let DeValue::Array(items) = value.get_ref() else {
            self.reader.problem_at(
                value.span(),
                format!(
                    "{} must be a list of tables, not {}",
                    self.name(key),
                    found(value.get_ref())
                ),
                help(),
            );
            return Vec::new();
        };
        let mut tables = Vec::new();
        for item in items.iter() {
            match item.get_ref() {
                DeValue::Table(table) => tables.push(Table::new(
                    self.reader,
                    table,
                    item.span(),
                    label.to_string(),
                    keys,
                )),
                other => self.reader.problem_at(
                    item.span(),
                    format!(
                        "{} must be a list of tables, not of {}",
                        self.name(key),
                        found(other)
                    ),
                    help(),
                ),
            }
        }
        tables
    }

    /// A value of the wrong kind, at its place (or its wrong item's).
    fn wrong_kind(
        &self,
        key: &str,
        span: Range<usize>,
        what: &str,
        example: &str,
        mismatch: Mismatch,
    ) {
        let name = self.name(key);
        let (span, message) = match mismatch.item {
            Some((n, item)) => (
                item,
                format!("{name} must be {what}: item {n} is {}", mismatch.found),
            ),
            None => (
                span,
                format!("{name} must be {what}, not {}", mismatch.found),
            ),
        };
        self.reader.problem_at(
            span,
            message,
            Some(format!("write it as `{key} = {example}`")),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEYS: &[&str] = &["name", "jobs", "cores", "tool"];
    const TOOL: &[&str] = &["name", "cores", "examinations"];

    /// Reads `text` as a file of KEYS and [[tool]]s; the problems as `line:column: message`.
    fn problems(text: &str) -> Vec<String> {
        let reader = TomlReader::new(Path::new("c.toml"), text, "see the docs");
        let document = reader.parse().unwrap();
        let root = reader.root(&document, KEYS);
        root.require::<String>("name");
        root.get::<usize>("jobs");
        root.get::<Vec<u32>>("cores");
        for tool in root.tables("tool", "[tool]", TOOL) {
            tool.require::<String>("name");
            tool.get::<u32>("cores");
            tool.get::<Vec<String>>("examinations");
        }
        reader
            .into_problems()
            .0
            .iter()
            .map(|p| {
                let at = p.location.unwrap();
                format!(
                    "{}:{}: {} | {}",
                    at.line,
                    at.column,
                    p.message,
                    p.help.as_deref().unwrap_or("")
                )
            })
            .collect()
    }

    #[test]
    fn every_problem_at_once_in_the_order_of_the_file() {
        let text = "jbos = 2\nname = 3\n[[tool]]\ncors = 4\ncores = \"one\"\n[[tool]]\nname = \"b\"\nexaminations = [\"a\", 3]\n";
        assert_eq!(
            problems(text),
            [
                "1:1: unknown field `jbos` at the top level | did you mean `jobs`? the top level takes `name`, `jobs`, `cores`, `tool`",
                "2:8: `name` must be a string, not the whole number 3 | write it as `name = \"...\"`",
                "3:1: [tool] has no `name` | add `name = \"...\"`",
                "4:1: unknown field `cors` in [tool] | did you mean `cores`? [tool] takes `name`, `cores`, `examinations`",
                "5:9: [tool] cores must be a whole number, not the string \"one\" | write it as `cores = 1`",
                "8:22: [tool] examinations must be a list of strings: item 2 is the whole number 3 | write it as `examinations = [\"...\"]`",
            ]
        );
    }

    #[test]
    fn numbers_out_of_range_and_far_keys() {
        let text = "name = \"x\"\njobs = -1\ncores = [1, 4294967296]\nzzzzzz = 1\n";
        assert_eq!(
            problems(text),
            [
                "2:8: `jobs` must be a whole number, not -1, which is negative | write it as `jobs = 1`",
                "3:13: `cores` must be a list of whole numbers: item 2 is 4294967296, which is more than 4294967295 | write it as `cores = [1]`",
                "4:1: unknown field `zzzzzz` at the top level | the top level takes `name`, `jobs`, `cores`, `tool`; see the docs",
            ]
        );
    }

    #[test]
    fn a_table_where_a_list_of_tables_is_expected() {
        let text = "name = \"x\"\n[tool]\nname = \"a\"\n";
        assert_eq!(
            problems(text),
            [
                "2:1: `tool` must be a list of tables, not a table | write each one as a table headed [[tool]]"
            ]
        );
    }

    #[test]
    fn choices_are_words_of_a_list() {
        let reader = TomlReader::new(Path::new("c.toml"), "name = \"qemo\"\n", "docs");
        let document = reader.parse().unwrap();
        let root = reader.root(&document, KEYS);
        let kind = root.choice("name", &[("local", 0), ("qemu", 1)]);
        assert!(kind.is_none());
        let problems = reader.into_problems();
        assert_eq!(problems.0[0].message, "`name` = \"qemo\" is not known");
        assert_eq!(
            problems.0[0].help.as_deref(),
            Some("did you mean \"qemu\"? use one of \"local\", \"qemu\"")
        );
    }

    #[test]
    fn closest_words() {
        assert_eq!(closest("jbos", &["kind", "jobs"]), Some("jobs"));
        assert_eq!(closest("setp", &["setup", "entry"]), Some("setup"));
        assert_eq!(closest("nodes", &["partition", "qos", "steps"]), None);
        assert_eq!(closest("x", &["y"]), None);
    }
}
