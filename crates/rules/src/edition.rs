//! An edition's rules, as data (`rules/<edition>.toml`).
//!
//! Everything that differs between editions is a setting here, never a code branch: the
//! examinations and the values they require (E-1.x), categories and podiums (E-4.5), time and
//! memory limits (E-5.3, E-5.4, E-5.7), the Confidence set (E-2.2), trusted-value settings
//! (E-3.1), points and penalties (E-4.1, E-4.2), normalisation and model-kind weights (E-4.4),
//! awards (E-4.5), and which runs see the verdict file (M-9).
//! Where a rules text leaves a choice open, the setting documents the choice made.

mod defaults;
mod schema;
mod validate;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use serde::Serialize;

use mccbuild_core::diag::{Problem, Problems, SourceText};
use mccbuild_core::protocol::AnswerForm;
use mccbuild_core::toml_file::read_toml_every;
use mccbuild_core::value::ValueKind;

use crate::exact::Exact;

use schema::EditionFile;
pub use schema::{
    AwardAggregate, AwardRules, AwardTies, ConfidenceDenominator, ConfidenceRules, EditionInfo,
    InstanceRules, Limits, ModelGrouping, ModelWeight, RankingRules, ScoreRow, ScoringRules,
    SharedRanks, TieBreak, TimeLimit, TrustKind, TrustedRules, VerdictFileRules, VmRules, Votes,
    WeightScale, WeightedMajority, WrongValue,
};

/// Index of an examination in [`Edition::examinations`].
pub type ExamId = usize;
/// Index of a category in [`Edition::categories`].
pub type CategoryId = usize;

/// The help of every problem with a rules file.
const RULES_HELP: &str = "see docs/rules.md for the format of rules files";

/// How a model kind weighs in the scores (E-4.4).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum KindWeight {
    /// A fixed multiplier (2023: surprise x10; 2015: known x1, scrambled x2, surprise x3).
    Multiplier(#[serde(with = "crate::exact::serde_exact")] Exact),
    /// 2026: "the total score for all instances of such models weight half the score for all the
    /// instances of known models": the multiplier is chosen, per category, so that the maximum
    /// attainable points of this kind are `share` times those of kind `of`.
    ShareOf {
        of: usize,
        #[serde(with = "crate::exact::serde_exact")]
        share: Exact,
    },
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ModelKind {
    pub name: String,
    pub weight: KindWeight,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Category {
    pub name: String,
    pub title: String,
    pub examinations: Vec<ExamId>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Examination {
    pub name: String,
    /// The short name used in oracle file names (`SS`, `RD`, `UB`, ...).
    pub abbrev: Option<String>,
    pub category: CategoryId,
    pub answers: AnswerForm,
    pub value: ValueKind,
    /// Fixed value ids (StateSpace's four, a global property's own name).
    pub values: Vec<Arc<str>>,
    /// Values tools may give that this edition does not score (2023: StateSpace requires STATES
    /// only; "some additional information can be provided"). They follow `values` in the
    /// protocol's order, so that records keep the same positions under every edition.
    pub optional_values: Vec<Arc<str>>,
    /// The formula file whose `<id>`s are the value ids (formula examinations).
    pub formula_file: Option<String>,
    /// Ground-truth contests: the instance file holding the expected answer.
    pub truth_file: Option<String>,
    /// E-5.7: CPU-time limit of this examination (the edition's default otherwise).
    pub time_s: u64,
    /// M-9: whether runs of this examination see the verdict file.
    pub verdict_file: bool,
}

impl Examination {
    /// The ids a run's answers are matched to: the scored ones first, then the optional ones.
    /// (Formula examinations take theirs from the instance's formula file.)
    pub fn answer_ids(&self) -> Vec<Arc<str>> {
        self.values
            .iter()
            .chain(&self.optional_values)
            .cloned()
            .collect()
    }
}

/// Why a rules file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum EditionError {
    #[error("cannot read the rules file {}: {source}", path.display())]
    Unreadable {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    #[error("{0}")]
    Invalid(Problems),
}

impl EditionError {
    /// The problems to report, an unreadable file being one of them.
    pub fn into_problems(self) -> Problems {
        match self {
            EditionError::Unreadable { ref path, .. } => Problem::new(path, self.to_string())
                .help("set `rules` in [contest] to an edition of rules/, e.g. \"rules/mcc-2026.toml\"")
                .into(),
            EditionError::Invalid(problems) => problems,
        }
    }
}

/// An edition's rules, validated.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Edition {
    pub info: EditionInfo,
    pub limits: Limits,
    pub confidence: ConfidenceRules,
    pub trusted: TrustedRules,
    pub scoring: ScoringRules,
    pub awards: AwardRules,
    pub vm: VmRules,
    pub ranking: RankingRules,
    pub instances: InstanceRules,
    pub verdict_files: VerdictFileRules,
    pub model_kinds: Vec<ModelKind>,
    /// E-4.4: the kind of a model the manifest gives no kind and that is not new (the first
    /// kind: `known` in the MCC's editions).
    pub default_model_kind: usize,
    /// E-4.4: the kind of new models (`new_models = true`: `surprise` in the MCC's editions).
    pub new_model_kind: Option<usize>,
    pub categories: Vec<Category>,
    pub examinations: Vec<Examination>,
    /// blake3 of the rules file's text (reports and caches of derived results key on it).
    pub digest: String,
}

impl Edition {
    /// Reads and validates a rules file; every problem found is reported.
    pub fn load(path: &Path) -> Result<Edition, EditionError> {
        let text = std::fs::read_to_string(path).map_err(|source| EditionError::Unreadable {
            path: path.to_path_buf(),
            source,
        })?;
        Edition::parse(path, &text).map_err(EditionError::Invalid)
    }

    /// Validates the text of a rules file (`path` names it in problems).
    pub fn parse(path: &Path, text: &str) -> Result<Edition, Problems> {
        let source = SourceText { path, text };
        let file: EditionFile = read_toml_every(&source, RULES_HELP)?;
        let mut problems = Problems::default();
        validate::check_settings(&file, path, &mut problems);
        let mut categories = validate::categories(&file, &source, &mut problems);
        let examinations = validate::examinations(&file, &source, &mut categories, &mut problems);
        let (model_kinds, new_model_kind) = validate::model_kinds(&file, &source, &mut problems);
        validate::check_references(&file, path, &model_kinds, &examinations, &mut problems);
        problems.into_result(())?;
        Ok(Edition {
            info: file.edition,
            limits: file.limits,
            confidence: file.confidence,
            trusted: file.trusted,
            scoring: file.scoring,
            awards: file.awards,
            vm: file.vm,
            ranking: file.ranking,
            instances: file.instances,
            verdict_files: file.verdict_files,
            model_kinds,
            default_model_kind: 0,
            new_model_kind,
            categories,
            examinations,
            digest: blake3::hash(text.as_bytes()).to_hex().to_string(),
        })
    }

    pub fn examination(&self, name: &str) -> Option<ExamId> {
        self.examinations.iter().position(|e| e.name == name)
    }

    pub fn category(&self, name: &str) -> Option<CategoryId> {
        self.categories.iter().position(|c| c.name == name)
    }

    pub fn model_kind(&self, name: &str) -> Option<usize> {
        self.model_kinds.iter().position(|k| k.name == name)
    }

    /// The limits of one examination's runs (E-5.7 per-examination time), before manifest
    /// overrides.
    pub fn limits_for(&self, exam: ExamId) -> Limits {
        Limits {
            time_s: self.examinations[exam].time_s,
            memory_mb: self.limits.memory_mb,
            time: self.limits.time,
        }
    }

    /// Whether `other` differs from this edition only in what scoring reads and planning does
    /// not: the rules of E-2.2 (`[confidence]`), E-3.1 (`[trusted]`), E-4.1 to E-4.4
    /// (`[scoring]`, the model kinds' weights), E-4.5 (`[ranking]`, `[awards]`), and the name and
    /// source shown in reports. Such an edit is re-scored with the same plan (`mccbuild watch`);
    /// any other (examinations, categories, limits, instances, verdict files, the trust kind...)
    /// is planned again. Conservative: a setting it does not name counts as part of the plan.
    pub fn same_plan_as(&self, other: &Edition) -> bool {
        if self.model_kinds.len() != other.model_kinds.len() {
            return false;
        }
        let mut masked = other.clone();
        masked.info.name.clone_from(&self.info.name);
        masked.info.source.clone_from(&self.info.source);
        masked.confidence = self.confidence.clone();
        masked.trusted = self.trusted.clone();
        masked.scoring = self.scoring.clone();
        masked.ranking = self.ranking.clone();
        masked.awards = self.awards.clone();
        for (kind, mine) in masked.model_kinds.iter_mut().zip(&self.model_kinds) {
            kind.weight = mine.weight.clone();
        }
        masked.digest.clone_from(&self.digest);
        masked == *self
    }

    /// Examinations by category, for listings.
    pub fn by_category(&self) -> BTreeMap<&str, Vec<&str>> {
        self.categories
            .iter()
            .map(|c| {
                (
                    c.name.as_str(),
                    c.examinations
                        .iter()
                        .map(|&e| self.examinations[e].name.as_str())
                        .collect(),
                )
            })
            .collect()
    }
}
