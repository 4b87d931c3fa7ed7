//! `[[model]]` and `[contest] inputs`: the contest's models and their instances (folders in the
//! MCC layout or BenchKit archives, named by paths or globs), each instance in one model.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use mccbuild_core::diag::Problem;
use mccbuild_rules::edition::ModelGrouping;
use mccbuild_rules::weights::model_of;

use super::reading::{Reading, at};
use super::schema::ManifestFile;
use super::{InstanceDecl, InstanceSource, Model, ModelKindDecl};

impl Reading<'_> {
    /// The `[[model]]`s with instances, and the kinds given to the others (models whose
    /// instances come from `inputs` or `results`).
    pub(super) fn declared_models(
        &mut self,
        file: &ManifestFile,
    ) -> (Vec<Model>, BTreeMap<String, usize>) {
        let (source, root, edition) = (&self.source, &self.root, &self.edition);
        let problems = &mut self.problems;
        // Models and their instances.
        let mut models: Vec<Model> = Vec::new();
        let mut model_kinds: BTreeMap<String, usize> = BTreeMap::new();
        for spanned in &file.models {
            let m = spanned.get_ref();
            if models.iter().any(|known| known.name == m.name) || model_kinds.contains_key(&m.name)
            {
                problems.push(
                    source
                        .problem_at(
                            Some(spanned.span()),
                            format!("model `{}` is declared twice", m.name),
                        )
                        .help("declare each model once: merge the two [[model]] tables"),
                );
                continue;
            }
            let kind = match &m.kind {
                None => edition.default_model_kind,
                Some(kind) => match edition.model_kind(kind.get_ref()) {
                    Some(kind) => kind,
                    None => {
                        let known: Vec<String> = edition
                            .model_kinds
                            .iter()
                            .map(|k| format!("`{}`", k.name))
                            .collect();
                        problems.push(
                            source
                                .problem_at(
                                    at(kind.span()).or(Some(spanned.span())),
                                    format!(
                                        "model `{}`: unknown kind `{}`",
                                        m.name,
                                        kind.get_ref()
                                    ),
                                )
                                .help(format!(
                                    "{} defines: {}",
                                    edition.info.name,
                                    known.join(", ")
                                )),
                        );
                        0
                    }
                },
            };
            let Some(patterns) = &m.instances else {
                model_kinds.insert(m.name.clone(), kind);
                continue;
            };
            let mut instances = Vec::new();
            for pattern in patterns {
                match expand_instances(root, pattern.get_ref(), &edition.instances.model_file) {
                Ok(found) => instances.extend(found),
                Err(message) => problems.push(source.problem_at(Some(pattern.span()), format!("model `{}`: {message}", m.name)).help(
                    format!("instances are folders holding {} or BenchKit .tgz archives, relative to the manifest; globs are allowed", edition.instances.model_file),
                )),
            }
            }
            if patterns.is_empty() {
                problems.push(
                    source
                        .problem_at(
                            Some(spanned.span()),
                            format!("model `{}` lists no instances", m.name),
                        )
                        .help("list its instance folders or archives in `instances`, or remove the key if they come from `inputs` or `results`"),
                );
            }
            models.push(Model {
                name: m.name.clone(),
                kind: ModelKindDecl::Given(kind),
                instances,
            });
        }
        (models, model_kinds)
    }

    /// The models of `inputs` (grouped by the MCC naming); returns the kinds given to models
    /// that are still to come from `results`.
    pub(super) fn input_models(
        &mut self,
        file: &ManifestFile,
        models: &mut Vec<Model>,
        mut model_kinds: BTreeMap<String, usize>,
    ) -> BTreeMap<String, usize> {
        let (source, root, edition) = (&self.source, &self.root, &self.edition);
        let problems = &mut self.problems;
        if let Some(inputs) = &file.contest.inputs {
            let mut by_model: BTreeMap<String, Vec<InstanceDecl>> = BTreeMap::new();
            for pattern in inputs.get_ref().items() {
                match expand_instances(root, pattern, &edition.instances.model_file) {
                    Ok(found) => {
                        for instance in found {
                            match model_of(&instance.name, edition.scoring.model_grouping) {
                            Some(model) => by_model.entry(model.to_string()).or_default().push(instance),
                            None => problems.push(
                                source
                                    .problem_at(Some(inputs.span()), format!("input `{}` does not follow the MCC naming <Model>-<PT|COL>-<parameters>", instance.name))
                                    .help("declare it in a [[model]] instead"),
                            ),
                        }
                        }
                    }
                    Err(message) => problems.push(
                        source
                            .problem_at(Some(inputs.span()), format!("inputs: {message}"))
                            .help("`inputs` names instance folders or BenchKit .tgz archives (globs allowed), relative to the manifest"),
                    ),
                }
            }
            if let Some(per_model) = &file.contest.inputs_per_model {
                match *per_model.get_ref() {
                    0 => problems.push(
                        source
                            .problem_at(Some(per_model.span()), "[contest] inputs_per_model must be at least 1")
                            .help("the instances kept of each model's PT and of its COL instances, e.g. `inputs_per_model = 1`; remove the key to keep them all"),
                    ),
                    n => {
                        for instances in by_model.values_mut() {
                            *instances = first_per_model(std::mem::take(instances), n);
                        }
                    }
                }
            }
            for (name, instances) in by_model {
                if models.iter().any(|m| m.name == name) {
                    problems.push(
                        source
                            .problem_at(
                                Some(inputs.span()),
                                format!("model `{name}` comes from inputs and from a [[model]]"),
                            )
                            .help("declare each model once"),
                    );
                    continue;
                }
                // A kind given to the family (`[[model]] name = "<Model>"`) is the kind of
                // its COL and PT models when the edition keeps them apart.
                let family = mcc_model_name(&name).unwrap_or(&name).to_string();
                let kind = model_kinds
                    .remove(&name)
                    .or_else(|| {
                        (family != name)
                            .then(|| model_kinds.get(&family).copied())
                            .flatten()
                    })
                    .map_or(ModelKindDecl::FromMarker, ModelKindDecl::Given);
                models.push(Model {
                    name,
                    kind,
                    instances,
                });
            }
        }
        model_kinds
    }

    /// Each model's instances sorted and unique; an instance in two models is a problem.
    pub(super) fn check_instance_names(&mut self, models: &mut [Model]) {
        let manifest_path = self.source.path;
        let problems = &mut self.problems;
        let mut instance_names: BTreeMap<String, String> = BTreeMap::new();
        for model in models.iter_mut() {
            model.instances.sort_by(|a, b| a.name.cmp(&b.name));
            model.instances.dedup_by(|a, b| a.source == b.source);
            for instance in &model.instances {
                if let Some(other) =
                    instance_names.insert(instance.name.clone(), model.name.clone())
                {
                    problems.push(
                        Problem::new(
                            manifest_path,
                            format!(
                                "instance `{}` belongs to model `{}` and to model `{other}`",
                                instance.name, model.name
                            ),
                        )
                        .help("an instance name must be unique in a contest"),
                    );
                }
            }
        }
    }
}

/// `[contest] inputs_per_model = n`: of a model's instances, the first `n` of its PT instances
/// and the first `n` of its COL instances, in name order (the MCC's names put the smallest
/// parameters first, mostly). Deterministic, and stable when instances of other models come
/// or go: a sample of the instances for a quick loop, the same at every commit.
pub(super) fn first_per_model(mut instances: Vec<InstanceDecl>, n: usize) -> Vec<InstanceDecl> {
    instances.sort_by(|a, b| a.name.cmp(&b.name));
    let mut kept: BTreeMap<String, usize> = BTreeMap::new();
    instances.retain(|i| {
        let kind = model_of(&i.name, ModelGrouping::FamilyType)
            .unwrap_or(&i.name)
            .to_string();
        let count = kept.entry(kind).or_insert(0);
        *count += 1;
        *count <= n
    });
    instances
}

/// The model name of an MCC instance name `<Model>-<PT|COL>-<parameters>` (its family: the
/// name `[[model]]` entries use); the model of the weights is the edition's
/// (`mccbuild_rules::weights::model_of`).
pub fn mcc_model_name(instance: &str) -> Option<&str> {
    model_of(instance, ModelGrouping::Family)
}

/// Expands one `instances` entry (a path or a glob) into instance declarations.
fn expand_instances(
    root: &Path,
    pattern: &str,
    model_file: &str,
) -> Result<Vec<InstanceDecl>, String> {
    let full = root.join(pattern);
    let full_text = full.to_string_lossy().into_owned();
    let is_glob = pattern.contains(['*', '?', '[']);
    let paths: Vec<PathBuf> = if is_glob {
        let entries = glob::glob(&full_text).map_err(|e| format!("bad glob `{pattern}`: {e}"))?;
        entries.filter_map(Result::ok).collect()
    } else {
        if !full.exists() {
            return Err(format!("instance path {} does not exist", full.display()));
        }
        vec![full]
    };
    let mut found = Vec::new();
    for path in paths {
        if let Some(decl) = instance_decl(&path, model_file) {
            found.push(decl);
        } else if !is_glob {
            return Err(format!(
                "{} is neither an instance folder (with {model_file}) nor a .tgz archive",
                path.display()
            ));
        }
    }
    if found.is_empty() {
        return Err(format!(
            "`{pattern}` matches no instance folder or .tgz archive"
        ));
    }
    Ok(found)
}

fn instance_decl(path: &Path, model_file: &str) -> Option<InstanceDecl> {
    let file_name = path.file_name()?.to_str()?;
    if path.is_dir() {
        path.join(model_file).exists().then(|| InstanceDecl {
            name: file_name.to_string(),
            source: InstanceSource::Folder(path.to_path_buf()),
        })
    } else {
        let name = file_name
            .strip_suffix(".tgz")
            .or_else(|| file_name.strip_suffix(".tar.gz"))?;
        Some(InstanceDecl {
            name: name.to_string(),
            source: InstanceSource::Archive(path.to_path_buf()),
        })
    }
}
