//! A rules file checked: every problem found at once (unknown names, definitions given twice,
//! settings out of range, examinations whose answers, values and files do not go together), and
//! the lists of the file (`[[category]]`, `[[examination]]`, `[[model_kind]]`) turned into the
//! edition's own types.

use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;

use toml::Spanned;

use mccbuild_core::diag::{Problem, Problems, SourceText};
use mccbuild_core::protocol::AnswerForm;
use mccbuild_core::value::ValueKind;

use super::schema::{EditionFile, ExaminationFile, TrustKind};
use super::{Category, Examination, KindWeight, ModelKind, RULES_HELP};
use crate::exact::Exact;

/// The settings that are single numbers: limits, Confidence, threshold, points.
pub(super) fn check_settings(file: &EditionFile, path: &Path, problems: &mut Problems) {
    if file.limits.time_s == 0 || file.limits.memory_mb == 0 {
        problems.push(
            Problem::new(path, "[limits] time_s and memory_mb must be positive").help(RULES_HELP),
        );
    }
    if file.confidence.min_agreeing == 0 {
        problems.push(
            Problem::new(path, "[confidence] min_agreeing must be at least 1").help(RULES_HELP),
        );
    }
    let (zero, one) = (crate::exact::zero(), crate::exact::one());
    if !(zero..=one.clone()).contains(&file.trusted.single_tool_threshold) {
        problems.push(
            Problem::new(
                path,
                "[trusted] single_tool_threshold must be within [0, 1] (a Confidence)",
            )
            .help(RULES_HELP),
        );
    }
    let scoring = &file.scoring;
    if scoring.points_per_examination <= crate::exact::zero()
        || scoring.penalty_factor < crate::exact::zero()
        || scoring.max_model_ratio < one
    {
        problems.push(
            Problem::new(path, "[scoring] needs points_per_examination > 0, penalty_factor >= 0 and max_model_ratio >= 1")
                .help(RULES_HELP),
        );
    }
}

/// `[[category]]`: the podiums (E-4.5), each defined once.
pub(super) fn categories(
    file: &EditionFile,
    source: &SourceText<'_>,
    problems: &mut Problems,
) -> Vec<Category> {
    let path = source.path;
    let mut categories: Vec<Category> = Vec::new();
    for spanned in &file.categories {
        let c = spanned.get_ref();
        if categories.iter().any(|known| known.name == c.name) {
            problems.push(source.problem_at(
                Some(spanned.span()),
                format!("category `{}` is defined twice", c.name),
            ));
            continue;
        }
        categories.push(Category {
            name: c.name.clone(),
            title: c.title.clone().unwrap_or_else(|| c.name.clone()),
            examinations: Vec::new(),
        });
    }
    if categories.is_empty() {
        problems.push(
            Problem::new(path, "no [[category]]: an edition needs at least one").help(RULES_HELP),
        );
    }
    categories
}

/// `[[examination]]`: each examination and its values, added to its category.
pub(super) fn examinations(
    file: &EditionFile,
    source: &SourceText<'_>,
    categories: &mut [Category],
    problems: &mut Problems,
) -> Vec<Examination> {
    let mut examinations: Vec<Examination> = Vec::new();
    for spanned in &file.examinations {
        let known = examinations
            .iter()
            .any(|e| e.name == spanned.get_ref().name);
        if let Some(exam) = examination(file, source, spanned, known, categories, problems) {
            categories[exam.category]
                .examinations
                .push(examinations.len());
            examinations.push(exam);
        }
    }
    for c in categories.iter() {
        if c.examinations.is_empty() {
            problems.push(
                Problem::new(
                    source.path,
                    format!("category `{}` has no examination", c.name),
                )
                .help(RULES_HELP),
            );
        }
    }
    examinations
}

/// One `[[examination]]`, checked (`known`: another examination has its name).
fn examination(
    file: &EditionFile,
    source: &SourceText<'_>,
    spanned: &Spanned<ExaminationFile>,
    known: bool,
    categories: &[Category],
    problems: &mut Problems,
) -> Option<Examination> {
    let e = spanned.get_ref();
    let here = Some(spanned.span());
    if known {
        problems
            .push(source.problem_at(here, format!("examination `{}` is defined twice", e.name)));
        return None;
    }
    let Some(category) = categories
        .iter()
        .position(|c| &c.name == e.category.get_ref())
    else {
        problems.push(
            source
                .problem_at(
                    Some(e.category.span()),
                    format!("unknown category `{}`", e.category.get_ref()),
                )
                .help(format!(
                    "define it with [[category]] name = \"{}\", or use one of: {}",
                    e.category.get_ref(),
                    names(categories.iter().map(|c| &c.name))
                )),
        );
        return None;
    };
    let values = fixed_values(e, |message| {
        problems.push(source.problem_at(here.clone(), message))
    })?;
    check_examination(file, e, &values, |message, help| {
        let problem = source.problem_at(here.clone(), message);
        problems.push(match help {
            Some(help) => problem.help(help),
            None => problem,
        })
    });
    Some(Examination {
        name: e.name.clone(),
        abbrev: e.abbrev.clone(),
        category,
        answers: e.answers,
        value: e.value,
        values,
        optional_values: e
            .optional_values
            .iter()
            .map(|v| Arc::from(v.as_str()))
            .collect(),
        formula_file: e.formula_file.clone(),
        truth_file: e.truth_file.clone(),
        time_s: e.time_s.unwrap_or(file.limits.time_s),
        verdict_file: e.verdict_file,
    })
}

/// An examination's fixed value ids (StateSpace's, a global property's own name), or none for a
/// formula examination (its ids come from each instance's formula file); `None` (with the
/// problem told) when its answers, values and formula file do not go together.
fn fixed_values(e: &ExaminationFile, mut problem: impl FnMut(String)) -> Option<Vec<Arc<str>>> {
    match (e.answers, &e.values, &e.formula_file) {
        (AnswerForm::Formulas, None, Some(_)) => Some(Vec::new()),
        (AnswerForm::Formulas, _, _) => {
            problem(format!(
                "examination `{}`: answers = \"formulas\" needs formula_file and no values",
                e.name
            ));
            None
        }
        (AnswerForm::Global | AnswerForm::VerificationResult, None, None) => {
            Some(vec![Arc::from(e.name.as_str())])
        }
        (AnswerForm::StateSpace, Some(values), None) if !values.is_empty() => {
            Some(values.iter().map(|v| Arc::from(v.as_str())).collect())
        }
        _ => {
            problem(format!(
                "examination `{}`: answers = \"state-space\" needs a non-empty values list; \"global\" takes neither values nor formula_file",
                e.name
            ));
            None
        }
    }
}

/// The other checks of an examination: unique values, a positive time, optional values and
/// verification results only where they make sense, a truth file in a ground-truth edition.
fn check_examination(
    file: &EditionFile,
    e: &ExaminationFile,
    values: &[Arc<str>],
    mut problem: impl FnMut(String, Option<&str>),
) {
    let mut seen = HashSet::new();
    if let Some(dup) = values
        .iter()
        .map(|v| v.to_string())
        .chain(e.optional_values.iter().cloned())
        .find(|v| !seen.insert(v.clone()))
    {
        problem(
            format!("examination `{}` lists value `{dup}` twice", e.name),
            None,
        );
    }
    if e.time_s == Some(0) {
        problem(
            format!("examination `{}`: time_s must be positive", e.name),
            None,
        );
    }
    if !e.optional_values.is_empty() && e.answers != AnswerForm::StateSpace {
        problem(
            format!(
                "examination `{}`: optional_values are for answers = \"state-space\"",
                e.name
            ),
            None,
        );
    }
    if e.answers == AnswerForm::VerificationResult && e.value != ValueKind::Boolean {
        problem(
            format!(
                "examination `{}`: answers = \"verification-result\" (SAFE/UNSAFE) needs value = \"boolean\"",
                e.name
            ),
            None,
        );
    }
    if file.edition.trust == TrustKind::GroundTruth && e.truth_file.is_none() {
        problem(
            format!(
                "examination `{}`: a ground-truth edition needs truth_file (the instance file with the expected answer)",
                e.name
            ),
            Some(RULES_HELP),
        );
    }
}

/// `[[model_kind]]` (E-4.4): the kinds, their weights (shares resolved), and the kind of new
/// models.
pub(super) fn model_kinds(
    file: &EditionFile,
    source: &SourceText<'_>,
    problems: &mut Problems,
) -> (Vec<ModelKind>, Option<usize>) {
    let mut model_kinds: Vec<ModelKind> = Vec::new();
    let mut shares: Vec<(usize, String, Exact, std::ops::Range<usize>)> = Vec::new();
    for spanned in &file.model_kinds {
        let k = spanned.get_ref();
        if model_kinds.iter().any(|known| known.name == k.name) {
            problems.push(source.problem_at(
                Some(spanned.span()),
                format!("model kind `{}` is defined twice", k.name),
            ));
            continue;
        }
        let weight = match (&k.multiplier, &k.share_of) {
            (Some(m), None) if *m >= crate::exact::zero() => KindWeight::Multiplier(m.clone()),
            (None, Some(share)) if share.share >= crate::exact::zero() => {
                shares.push((
                    model_kinds.len(),
                    share.kind.clone(),
                    share.share.clone(),
                    spanned.span(),
                ));
                KindWeight::Multiplier(crate::exact::one()) // resolved below
            }
            _ => {
                problems.push(source.problem_at(
                    Some(spanned.span()),
                    format!("model kind `{}` needs either multiplier = x or share_of = {{ kind = \"...\", share = x }} (non-negative)", k.name),
                ));
                continue;
            }
        };
        model_kinds.push(ModelKind {
            name: k.name.clone(),
            weight,
        });
    }
    for (index, of, share, span) in shares {
        match model_kinds.iter().position(|k| k.name == of) {
            Some(of_index) if of_index != index && matches!(model_kinds[of_index].weight, KindWeight::Multiplier(_)) && !is_share(file, &of) => {
                model_kinds[index].weight = KindWeight::ShareOf { of: of_index, share };
            }
            _ => problems.push(source.problem_at(
                Some(span),
                format!("model kind `{}`: share_of names `{of}`, which must be another kind with a fixed multiplier", model_kinds[index].name),
            )),
        }
    }
    if model_kinds.is_empty() {
        model_kinds.push(ModelKind {
            name: "known".into(),
            weight: KindWeight::Multiplier(crate::exact::one()),
        });
    }
    let new: Vec<usize> = file
        .model_kinds
        .iter()
        .filter(|k| k.get_ref().new_models)
        .filter_map(|k| model_kinds.iter().position(|m| m.name == k.get_ref().name))
        .collect();
    if new.len() > 1 {
        problems.push(
            Problem::new(
                source.path,
                "more than one [[model_kind]] has new_models = true",
            )
            .help("new models (instances with the NewModel marker) get one kind"),
        );
    }
    (model_kinds, new.first().copied())
}

/// What refers to model kinds and values is checked against them.
pub(super) fn check_references(
    file: &EditionFile,
    path: &Path,
    model_kinds: &[ModelKind],
    examinations: &[Examination],
    problems: &mut Problems,
) {
    for hidden in &file.verdict_files.hidden_for_model_kinds {
        if !model_kinds.iter().any(|k| &k.name == hidden) {
            problems.push(Problem::new(
                path,
                format!(
                    "[verdict_files] hidden_for_model_kinds names unknown model kind `{hidden}`"
                ),
            ));
        }
    }

    for row in &file.scoring.table {
        if !examinations.iter().any(|e| e.value == row.answer.kind()) {
            problems.push(
                Problem::new(
                    path,
                    format!(
                        "[scoring] table: answer `{}` is not a value any examination asks for",
                        row.answer
                    ),
                )
                .help(RULES_HELP),
            );
        }
    }
}

fn is_share(file: &EditionFile, kind: &str) -> bool {
    file.model_kinds
        .iter()
        .any(|k| k.get_ref().name == kind && k.get_ref().share_of.is_some())
}

fn names<'a>(names: impl Iterator<Item = &'a String>) -> String {
    names
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}
