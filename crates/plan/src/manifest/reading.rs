//! Reading a manifest: the checks that turn the file as written ([`super::schema`]) into a
//! [`Contest`], reporting every problem at once, each at its place in the file with its fix.
//! The sections have their own readers ([`super::executor`], [`super::models`],
//! [`super::tools`]); this file drives them and reads the contest's other files (`results`,
//! `[reference]`, `corrections`).

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use toml::Spanned;

use mccbuild_core::diag::{Problem, Problems, SourceText};
use mccbuild_core::toml_table::TomlReader;
use mccbuild_rules::edition::{Edition, EditionError};

use super::schema::{self, ManifestFile};
use super::{Contest, ReferenceConfig};

pub(super) const MANIFEST_HELP: &str = "see docs/manifest.md for the keys of contest.toml";

/// Reads and validates a manifest's text and its rules file, reporting every problem found:
/// those of the file as written (unknown keys, missing keys, values of the wrong kind), then
/// those of what it names (the rules, tools, instances...), which are checked even when some
/// keys were wrong. They need the edition: without a readable `rules` they are not made.
pub(super) fn read(manifest_path: &Path, text: &str) -> Result<Contest, Problems> {
    let reader = TomlReader::new(manifest_path, text, MANIFEST_HELP);
    let document = reader.parse()?;
    let file = schema::read(&reader, &document);
    let mut problems = reader.into_problems();
    let source = SourceText {
        path: manifest_path,
        text,
    };
    let root = manifest_root(manifest_path);
    let Some(rules) = &file.contest.rules else {
        return Err(problems);
    };
    let rules_path = root.join(rules.get_ref());
    let edition = match load_edition(&source, rules, &rules_path) {
        Ok(edition) => edition,
        Err(more) => {
            problems.extend(more);
            return Err(problems);
        }
    };
    let mut reading = Reading {
        source,
        root,
        edition,
        problems,
        allowed_cores: file
            .limits
            .cores
            .as_ref()
            .map_or_else(|| vec![1, 4], |c| c.get_ref().clone()),
    };
    let (executor, shared_store) = reading.executor(&file);
    let (mut models, model_kinds) = reading.declared_models(&file);
    let model_kinds = reading.input_models(&file, &mut models, model_kinds);
    let results = reading.results_files(&file);
    let reference = reading.reference(&file);
    let corrections = reading.corrections(&file);
    reading.check_instance_names(&mut models);
    if models.is_empty() && results.is_empty() && file.model_tables == 0 {
        reading.problems.push(
            Problem::new(manifest_path, "the contest has no models")
                .help("add a [[model]], or set `inputs` or `results` in [contest]"),
        );
    }
    let tools = reading.tools(&file, &results);
    let Reading {
        root,
        edition,
        problems,
        ..
    } = reading;
    problems.into_result(())?;
    let store = match shared_store {
        Some(shared) => shared,
        None => root.join(file.contest.store.as_deref().unwrap_or("cache")),
    };
    Ok(Contest {
        manifest_path: manifest_path.to_path_buf(),
        root,
        name: file.contest.name,
        rules_path,
        edition,
        store,
        executor,
        time_s: file.limits.time_s.map(Spanned::into_inner),
        memory_mb: file.limits.memory_mb.map(Spanned::into_inner),
        time: file.limits.time,
        models,
        tools,
        results,
        model_kinds,
        reference,
        corrections,
    })
}

/// The manifest's folder (absolute): relative paths start there.
fn manifest_root(manifest_path: &Path) -> PathBuf {
    let root = manifest_path
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let root = if root.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        root
    };
    std::path::absolute(&root).unwrap_or(root)
}

/// The rules file `rules` names (an unreadable one is a problem at `rules`).
fn load_edition(
    source: &SourceText<'_>,
    rules: &Spanned<String>,
    rules_path: &Path,
) -> Result<Arc<Edition>, Problems> {
    match Edition::load(rules_path) {
        Ok(edition) => Ok(Arc::new(edition)),
        Err(EditionError::Unreadable { .. }) => Err(source
            .problem_at(
                Some(rules.span()),
                format!("cannot read the rules file {}", rules_path.display()),
            )
            .help("set `rules` to an edition of rules/, e.g. \"rules/mcc-2026.toml\"")
            .into()),
        Err(EditionError::Invalid(problems)) => Err(problems),
    }
}

/// A span, unless it is empty (a default value has no place in the file).
pub(super) fn at(span: Range<usize>) -> Option<Range<usize>> {
    if span.is_empty() { None } else { Some(span) }
}

/// A manifest being read: its text, folder and edition, and the problems found so far.
pub(super) struct Reading<'a> {
    pub(super) source: SourceText<'a>,
    pub(super) root: PathBuf,
    pub(super) edition: Arc<Edition>,
    pub(super) problems: Problems,
    /// `[limits] cores`, or E-5.3/E-5.4's 1 and 4.
    pub(super) allowed_cores: Vec<u32>,
}

impl Reading<'_> {
    /// `results`: files in the layout of the MCC's raw-result-analysis.csv.
    fn results_files(&mut self, file: &ManifestFile) -> Vec<PathBuf> {
        let (source, root) = (&self.source, &self.root);
        let problems = &mut self.problems;
        let mut results = Vec::new();
        if let Some(files) = &file.contest.results {
            for f in files.get_ref().items() {
                let path = root.join(f);
                if !path.is_file() {
                    problems.push(source.problem_at(Some(files.span()), format!("results file {} does not exist", path.display())).help(
                    "`results` names files in the layout of the MCC's raw-result-analysis.csv, relative to the manifest",
                ));
                }
                results.push(path);
            }
        }
        results
    }

    /// `[reference]`: the answers must exist.
    fn reference(&mut self, file: &ManifestFile) -> Option<ReferenceConfig> {
        let section = file.reference.as_ref()?;
        let path = self.root.join(section.answers.get_ref());
        if !path.exists() {
            self.problems.push(
                self.source
                    .problem_at(
                        Some(section.answers.span()),
                        format!("reference answers {} do not exist", path.display()),
                    )
                    .help("`answers` names a folder or .tar.gz of <instance>-<EXAM>.out files (the MCC's consensus), or a results CSV, relative to the manifest"),
            );
        }
        Some(ReferenceConfig {
            answers: path,
            basis: section.basis,
        })
    }

    /// `corrections`: the file must exist (its lines are checked against the plan's values).
    fn corrections(&mut self, file: &ManifestFile) -> Option<PathBuf> {
        let name = file.contest.corrections.as_ref()?;
        let path = self.root.join(name.get_ref());
        if !path.is_file() {
            self.problems.push(
                self.source
                    .problem_at(
                        Some(name.span()),
                        format!("corrections file {} does not exist", path.display()),
                    )
                    .help("`corrections` names a CSV of the organisers' decided values (header `instance,examination,id,value`), relative to the manifest"),
            );
        }
        Some(path)
    }
}
