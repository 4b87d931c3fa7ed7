//! Reference answers named by a contest (`[reference] answers`): the values of each examination
//! instance as a past edition's consensus, or another store's export, gives them. Two forms:
//!
//! - the MCC's published consensus: files `<instance>-<EXAM>.out` (in a folder, or a `.tar.gz`
//!   of one such as `mcc2025/oracle.tar.gz`), each starting with a line `<instance>
//!   <Examination>`, then answer lines in the tool-output form (`FORMULA <id> <value> ...`,
//!   `STATE_SPACE <STATES|...> <n> ...`), `?` where the value is unknown; the consensus numbers
//!   a file's formulas `<instance>-<Examination>-<nn>`, `nn` being the position of the formula's
//!   id among the formula file's ids *sorted as strings* (files that mix `-2023-` and `-2025-`
//!   ids, such as Angiogenesis-PT-01's CTLCardinality, sort the `-2023-` ones first; the
//!   explorer's `tests/mcc2025.rs` pairs them the same way, with 0 disagreements);
//! - a results CSV (the `results.csv` of `mccbuild export`, or the MCC's
//!   `raw-result-analysis.csv`): the `estimated result` column of each row, by position in the
//!   examination instance's value ids.
//!
//! The reference is not part of any run key: changing it re-scores, it does not rerun.

use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use mccbuild_core::diag::{Problem, Problems};
use mccbuild_core::value::Value;
use mccbuild_rules::edition::Edition;

use crate::results_file::{RowResults, parse_results, read_results};

/// The values a reference gives an examination instance.
#[derive(Clone, Debug, PartialEq)]
enum Given {
    /// By value id (`None`: `?`).
    ById(HashMap<String, Option<Value>>),
    /// By position among the value ids (results CSVs do not name them).
    ByPosition(Vec<Option<Value>>),
}

/// The form a reference was read in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReferenceForm {
    /// `<instance>-<EXAM>.out` files: the MCC's published consensus.
    Consensus,
    /// A results CSV's `estimated result` column.
    ResultsCsv,
}

/// Reference answers, for the instances of one contest.
#[derive(Clone, Debug)]
pub struct Reference {
    pub path: PathBuf,
    pub form: ReferenceForm,
    /// By (instance, examination name).
    given: HashMap<(String, String), Given>,
}

impl Reference {
    /// Reads the reference answers at `path` for the instances named in `instances` (the others
    /// are skipped unread). Lines or rows that cannot be read are problems; the rest is kept.
    pub fn load(
        path: &Path,
        instances: &HashSet<&str>,
        edition: &Edition,
    ) -> Result<(Reference, Problems), Problems> {
        let mut problems = Problems::default();
        let name = path.to_string_lossy();
        let (form, given) = if name.ends_with(".csv") {
            (
                ReferenceForm::ResultsCsv,
                read_csv(path, instances, edition, &mut problems)?,
            )
        } else if path.is_dir() {
            let mut given = HashMap::new();
            let entries = std::fs::read_dir(path).map_err(|e| {
                Problem::new(path, format!("cannot read the reference folder: {e}"))
            })?;
            let mut names: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
            names.sort();
            for file in names {
                let Some(file_name) = file.file_name().and_then(|n| n.to_str()) else {
                    continue;
                };
                if !wanted(file_name, instances) {
                    continue;
                }
                match std::fs::read_to_string(&file) {
                    Ok(text) => read_out(&file, &text, &mut given, &mut problems),
                    Err(e) => problems.push(Problem::new(&file, format!("cannot read: {e}"))),
                }
            }
            (ReferenceForm::Consensus, given)
        } else if name.ends_with(".tar.gz") || name.ends_with(".tgz") {
            (
                ReferenceForm::Consensus,
                read_tar(path, instances, &mut problems)?,
            )
        } else {
            return Err(Problem::new(path, "reference answers: not a folder, a .tar.gz or a .csv")
                .help("name a folder or .tar.gz of <instance>-<EXAM>.out files (the MCC's consensus), or a results CSV")
                .into());
        };
        Ok((
            Reference {
                path: path.to_path_buf(),
                form,
                given,
            },
            problems,
        ))
    }

    /// The reference value of each of `ids` of an examination instance (`None`: unknown), or
    /// `None` when the reference says nothing of it.
    pub fn values(
        &self,
        instance: &str,
        exam: &str,
        ids: &[Arc<str>],
    ) -> Option<Arc<[Option<Value>]>> {
        let given = self.given.get(&(instance.to_string(), exam.to_string()))?;
        Some(match given {
            Given::ById(by_id) => {
                let mut sorted: Vec<&str> = ids.iter().map(|id| &**id).collect();
                sorted.sort_unstable();
                ids.iter()
                    .map(|id| {
                        by_id
                            .get(&**id)
                            .or_else(|| {
                                let nn = sorted.binary_search(&&**id).ok()?;
                                by_id.get(&consensus_id(instance, exam, nn))
                            })
                            .cloned()
                            .flatten()
                    })
                    .collect()
            }
            Given::ByPosition(values) => (0..ids.len())
                .map(|i| values.get(i).cloned().flatten())
                .collect(),
        })
    }

    /// How many examination instances the reference gives values for.
    pub fn len(&self) -> usize {
        self.given.len()
    }

    pub fn is_empty(&self) -> bool {
        self.given.is_empty()
    }

    /// The reference in words, for reports: its form and path.
    pub fn describe(&self) -> String {
        let form = match self.form {
            ReferenceForm::Consensus => "consensus answers",
            ReferenceForm::ResultsCsv => "estimated results of",
        };
        format!("{form} {}", self.path.display())
    }

    /// [`Reference::describe`] for a file to publish (the site, the exports): the path relative
    /// to the contest's folder `root`, or its file name alone when it lies elsewhere, never a
    /// path of the machine that made it.
    pub fn describe_published(&self, root: &Path) -> String {
        let form = match self.form {
            ReferenceForm::Consensus => "consensus answers",
            ReferenceForm::ResultsCsv => "estimated results of",
        };
        let path = match self.path.strip_prefix(root) {
            Ok(relative) => relative.display().to_string(),
            Err(_) if self.path.is_relative() => self.path.display().to_string(),
            Err(_) => self
                .path
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
        };
        format!("{form} {path}")
    }
}

/// The consensus's name of the formula at position `nn` of a formula file's ids sorted as
/// strings (the MCC's published consensus numbers formulas so, whatever the ids of the file).
fn consensus_id(instance: &str, exam: &str, nn: usize) -> String {
    format!("{instance}-{exam}-{nn:02}")
}

/// Whether a `<instance>-<EXAM>.out` file name is of one of `instances`.
fn wanted(file_name: &str, instances: &HashSet<&str>) -> bool {
    file_name
        .strip_suffix(".out")
        .and_then(|stem| stem.rsplit_once('-'))
        .is_some_and(|(instance, _)| instances.contains(instance))
}

/// One `.out` file: its header line names the instance and the examination.
fn read_out(
    file: &Path,
    text: &str,
    given: &mut HashMap<(String, String), Given>,
    problems: &mut Problems,
) {
    let mut lines = text.lines().enumerate();
    let header = lines
        .next()
        .map(|(_, l)| l.split_whitespace().collect::<Vec<_>>());
    let Some([instance, exam]) = header
        .as_deref()
        .and_then(|h| <[&str; 2]>::try_from(h).ok())
    else {
        problems.push(
            Problem::new(file, "line 1: expected `<instance> <Examination>`")
                .help("the MCC's consensus files start with the instance and the examination"),
        );
        return;
    };
    let mut by_id = HashMap::new();
    for (n, line) in lines {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            [] => {}
            ["FORMULA" | "STATE_SPACE", id, value, ..] => {
                let value = if *value == "?" {
                    None
                } else {
                    match Value::parse(value) {
                        Ok(v) => Some(v),
                        Err(e) => {
                            problems.push(Problem::new(
                                file,
                                format!("line {}: value `{value}` of {id}: {e}", n + 1),
                            ));
                            continue;
                        }
                    }
                };
                by_id.insert(id.to_string(), value);
            }
            _ => problems.push(Problem::new(
                file,
                format!("line {}: not an answer line (`FORMULA <id> <value>` or `STATE_SPACE <what> <n>`)", n + 1),
            )),
        }
    }
    given.insert((instance.to_string(), exam.to_string()), Given::ById(by_id));
}

fn read_tar(
    path: &Path,
    instances: &HashSet<&str>,
    problems: &mut Problems,
) -> Result<HashMap<(String, String), Given>, Problems> {
    let bad = |e: std::io::Error| -> Problems {
        Problem::new(path, format!("cannot read the reference archive: {e}"))
            .help("a .tar.gz of <instance>-<EXAM>.out files, such as the MCC's oracle.tar.gz")
            .into()
    };
    let file = std::fs::File::open(path).map_err(bad)?;
    let gz = flate2::read::MultiGzDecoder::new(std::io::BufReader::new(file));
    let mut archive = tar::Archive::new(gz);
    let mut given = HashMap::new();
    for entry in archive.entries().map_err(bad)? {
        let mut entry = entry.map_err(bad)?;
        let name = entry.path().map_err(bad)?.to_string_lossy().into_owned();
        let file_name = name.rsplit('/').next().unwrap_or(&name);
        if !entry.header().entry_type().is_file() || !wanted(file_name, instances) {
            continue;
        }
        // Consensus files are a few KB; anything larger is not one.
        let mut text = String::new();
        if let Err(e) = entry.by_ref().take(1 << 20).read_to_string(&mut text) {
            problems.push(Problem::new(path, format!("{name}: cannot read: {e}")));
            continue;
        }
        read_out(&path.join(&name), &text, &mut given, problems);
    }
    Ok(given)
}

fn read_csv(
    path: &Path,
    instances: &HashSet<&str>,
    edition: &Edition,
    problems: &mut Problems,
) -> Result<HashMap<(String, String), Given>, Problems> {
    let (rows, row_problems) = read_results(path)?;
    problems.extend(row_problems);
    let mut given = HashMap::new();
    for row in rows {
        if !instances.contains(row.instance.as_str()) || row.estimated.trim().is_empty() {
            continue;
        }
        let Some(exam) = edition.examination(&row.examination) else {
            continue;
        };
        match parse_results(&row.estimated, edition.examinations[exam].value) {
            Ok(RowResults::Values(values)) => {
                given.insert(
                    (row.instance.clone(), row.examination.clone()),
                    Given::ByPosition(values),
                );
            }
            Ok(_) => {}
            Err(e) => problems.push(Problem::new(
                path,
                format!(
                    "line {}: estimated result `{}`: {e}",
                    row.line, row.estimated
                ),
            )),
        }
    }
    Ok(given)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consensus_files_by_id_with_unknowns() {
        let mut given = HashMap::new();
        let mut problems = Problems::default();
        read_out(
            Path::new("X-PT-1-UB.out"),
            "X-PT-1 UpperBounds\nFORMULA X-PT-1-UpperBounds-00 3 TECHNIQUES ORACLE2025\nFORMULA X-PT-1-UpperBounds-01 ? TECHNIQUES ORACLE2025\nFORMULA X-PT-1-UpperBounds-02 +inf\nnonsense\n",
            &mut given,
            &mut problems,
        );
        assert_eq!(problems.len(), 1, "the line that is not an answer line");
        let r = Reference {
            path: PathBuf::from("x"),
            form: ReferenceForm::Consensus,
            given,
        };
        let ids: Vec<Arc<str>> = [
            "X-PT-1-UpperBounds-00",
            "X-PT-1-UpperBounds-01",
            "X-PT-1-UpperBounds-02",
            "X-PT-1-UpperBounds-03",
        ]
        .map(Arc::from)
        .to_vec();
        let v = r.values("X-PT-1", "UpperBounds", &ids).unwrap();
        assert_eq!(
            &*v,
            &[
                Some(Value::parse("3").unwrap()),
                None,
                Some(Value::Inf),
                None
            ]
        );
        assert!(r.values("X-PT-1", "StateSpace", &ids).is_none());
        // The formula files' ids carry the edition's year, the consensus's do not: the consensus
        // numbers them by position among the ids sorted as strings. In a file that mixes years
        // the -2023- ids sort first: here the consensus's 00 is -2023-12, 01 is -2025-00 and
        // 02 is -2025-01 (a file order of 2025-00, 2025-01, 2023-12).
        let mixed: Vec<Arc<str>> = [
            "X-PT-1-UpperBounds-2025-00",
            "X-PT-1-UpperBounds-2025-01",
            "X-PT-1-UpperBounds-2023-12",
        ]
        .map(Arc::from)
        .to_vec();
        assert_eq!(
            &*r.values("X-PT-1", "UpperBounds", &mixed).unwrap(),
            &[None, Some(Value::Inf), Some(Value::parse("3").unwrap())]
        );
        let set: HashSet<&str> = ["X-PT-1"].into();
        assert!(wanted("X-PT-1-UB.out", &set));
        assert!(!wanted("X-PT-10-UB.out", &set));
        assert!(!wanted("X-PT-1-UB.txt", &set));
    }
}
