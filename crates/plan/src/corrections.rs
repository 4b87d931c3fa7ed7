//! The organisers' decisions (`[contest] corrections`, rule E-6.3): values whose trusted value
//! the organisers set themselves, overriding E-3.1's vote (docs/manifest.md).
//!
//! The file is a CSV with a header line naming at least the columns `instance`, `examination`,
//! `id` and `value` (others are kept for the reader and ignored); lines starting with `#` are
//! comments. `id` is the value's id as the plan has it (a formula id, a StateSpace value such
//! as `STATES`, the examination's name for a global property); `value` is written as tools
//! write it (`TRUE`, `FALSE`, an integer, `+inf`). Every entry must name a value of the contest:
//! a line that does not is an error, with its line and what to fix, never silently skipped.
//!
//! The corrections are not part of any run key: changing them re-scores, it does not rerun.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use mccbuild_core::diag::{Location, Problem, Problems};
use mccbuild_core::value::Value;

const HELP: &str = "a corrections file is a CSV with the header `instance,examination,id,value` (docs/manifest.md, `[contest] corrections`)";

/// One decided value, as read.
#[derive(Clone, Debug, PartialEq)]
pub struct Correction {
    /// Its line in the file (1-based).
    pub line: usize,
    pub instance: String,
    pub examination: String,
    pub id: String,
    pub value: Value,
}

/// The organisers' decisions of a contest.
#[derive(Clone, Debug, PartialEq)]
pub struct Corrections {
    pub path: PathBuf,
    pub entries: Vec<Correction>,
    /// By (instance, examination): id -> index into `entries`.
    by_exam: HashMap<(String, String), HashMap<String, usize>>,
}

impl Corrections {
    /// Reads a corrections file. Every line that cannot be read is a problem (with its line);
    /// any problem fails the whole file: a contest is never scored with part of its decisions.
    pub fn load(path: &Path) -> Result<Corrections, Problems> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            Problem::new(path, format!("cannot read the corrections file: {e}"))
                .help("`corrections` in [contest] names a CSV file, relative to the manifest")
        })?;
        Corrections::parse(path, &text)
    }

    pub fn parse(path: &Path, text: &str) -> Result<Corrections, Problems> {
        let mut problems = Problems::default();
        let at = |line: usize| Some(Location { line, column: 1 });
        let mut reader = csv::ReaderBuilder::new()
            .comment(Some(b'#'))
            .flexible(true)
            .from_reader(text.as_bytes());
        let header = match reader.headers() {
            Ok(h) => h.clone(),
            Err(e) => {
                return Err(Problem::new(path, format!("cannot read the header: {e}"))
                    .help(HELP)
                    .into());
            }
        };
        let header_line = text
            .lines()
            .position(|l| !l.starts_with('#') && !l.trim().is_empty())
            .map_or(1, |i| i + 1);
        let column = |name: &str| header.iter().position(|h| h.trim() == name);
        let (Some(ci), Some(ce), Some(cid), Some(cv)) = (
            column("instance"),
            column("examination"),
            column("id"),
            column("value"),
        ) else {
            let missing: Vec<&str> = ["instance", "examination", "id", "value"]
                .into_iter()
                .filter(|c| column(c).is_none())
                .collect();
            return Err(Problem::new(
                path,
                format!("the header has no column {}", missing.join(", ")),
            )
            .at(at(header_line))
            .help(HELP)
            .into());
        };
        let mut entries = Vec::new();
        let mut by_exam: HashMap<(String, String), HashMap<String, usize>> = HashMap::new();
        for record in reader.records() {
            let record = match record {
                Ok(r) => r,
                Err(e) => {
                    let line = e.position().map_or(0, |p| p.line() as usize);
                    problems.push(
                        Problem::new(path, format!("cannot read this line: {e}"))
                            .at(at(line))
                            .help(HELP),
                    );
                    continue;
                }
            };
            let line = record.position().map_or(0, |p| p.line() as usize);
            let field = |i: usize| record.get(i).map(str::trim).unwrap_or("");
            let (instance, examination, id, value) = (field(ci), field(ce), field(cid), field(cv));
            if instance.is_empty() || examination.is_empty() || id.is_empty() || value.is_empty() {
                problems.push(
                    Problem::new(path, "an empty instance, examination, id or value")
                        .at(at(line))
                        .help(HELP),
                );
                continue;
            }
            let value = match Value::parse(value) {
                Ok(v) => v,
                Err(e) => {
                    problems.push(
                        Problem::new(path, format!("value `{value}`: {e}"))
                            .at(at(line))
                            .help("write the value as tools do: TRUE, FALSE, an integer, +inf"),
                    );
                    continue;
                }
            };
            let ids = by_exam
                .entry((instance.to_string(), examination.to_string()))
                .or_default();
            if let Some(&first) = ids.get(id) {
                problems.push(
                    Problem::new(
                        path,
                        format!(
                            "{instance} {examination} {id} is decided twice (first on line {})",
                            entries_line(&entries, first)
                        ),
                    )
                    .at(at(line))
                    .help("keep one line per value"),
                );
                continue;
            }
            ids.insert(id.to_string(), entries.len());
            entries.push(Correction {
                line,
                instance: instance.to_string(),
                examination: examination.to_string(),
                id: id.to_string(),
                value,
            });
        }
        problems.into_result(Corrections {
            path: path.to_path_buf(),
            entries,
            by_exam,
        })
    }

    /// The decided value of each of `ids` of an examination instance (`None`: the vote
    /// stands), or `None` when no value of it is decided. Marks the entries used in `used`.
    pub fn values(
        &self,
        instance: &str,
        exam: &str,
        ids: &[Arc<str>],
        used: &mut [bool],
    ) -> Option<Arc<[Option<Value>]>> {
        let decided = self
            .by_exam
            .get(&(instance.to_string(), exam.to_string()))?;
        Some(
            ids.iter()
                .map(|id| {
                    decided.get(&**id).map(|&e| {
                        used[e] = true;
                        self.entries[e].value.clone()
                    })
                })
                .collect(),
        )
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The problem of an entry that names no value of the contest.
    pub fn unknown_value(&self, entry: &Correction, why: &str) -> Problem {
        Problem::new(
            &self.path,
            format!(
                "{} {} {}: {why}",
                entry.instance, entry.examination, entry.id
            ),
        )
        .at(Some(Location {
            line: entry.line,
            column: 1,
        }))
        .help("a correction names a value of the contest: an instance of the manifest, an examination it has, and one of that examination's value ids (`mccbuild scores --json` lists them)")
    }
}

fn entries_line(entries: &[Correction], i: usize) -> usize {
    entries[i].line
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(names: &[&str]) -> Vec<Arc<str>> {
        names.iter().map(|n| Arc::from(*n)).collect()
    }

    #[test]
    fn reads_the_four_columns_in_any_order_with_comments_and_extra_columns() {
        let text = "# decided on 2024-06-20\nexamination,instance,id,value,why\nOneSafe,A-PT-1,OneSafe,TRUE,vote wrong\nUpperBounds,A-PT-1,A-PT-1-UpperBounds-03,+inf,\n";
        let c = Corrections::parse(Path::new("c.csv"), text).unwrap();
        assert_eq!(c.len(), 2);
        assert_eq!(c.entries[0].line, 3);
        let mut used = vec![false; 2];
        assert_eq!(
            c.values("A-PT-1", "OneSafe", &ids(&["OneSafe"]), &mut used)
                .unwrap()
                .to_vec(),
            vec![Some(Value::Bool(true))]
        );
        assert_eq!(
            c.values(
                "A-PT-1",
                "UpperBounds",
                &ids(&["A-PT-1-UpperBounds-02", "A-PT-1-UpperBounds-03"]),
                &mut used
            )
            .unwrap()
            .to_vec(),
            vec![None, Some(Value::Inf)]
        );
        assert_eq!(used, vec![true, true]);
        assert!(
            c.values("A-PT-2", "OneSafe", &ids(&["OneSafe"]), &mut used)
                .is_none()
        );
    }

    #[test]
    fn errors_name_the_line_and_the_fix() {
        let missing = Corrections::parse(Path::new("c.csv"), "instance,examination,value\n")
            .unwrap_err()
            .to_string();
        assert!(
            missing.contains("c.csv:1:1: the header has no column id"),
            "{missing}"
        );
        let text = "instance,examination,id,value\nA,OneSafe,OneSafe,maybe\nA,OneSafe,OneSafe,TRUE\nA,OneSafe,OneSafe,FALSE\nA,,X,1\n";
        let e = Corrections::parse(Path::new("c.csv"), text)
            .unwrap_err()
            .to_string();
        assert!(e.contains("c.csv:2:1: value `maybe`"), "{e}");
        assert!(
            e.contains("c.csv:4:1: A OneSafe OneSafe is decided twice (first on line 3)"),
            "{e}"
        );
        assert!(e.contains("c.csv:5:1: an empty instance"), "{e}");
        assert!(e.contains("help: "), "{e}");
    }
}
