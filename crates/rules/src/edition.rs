//! An edition's rules, as data (`rules/<edition>.toml`).
//!
//! Everything that differs between editions is a setting here, never a code branch: the
//! examinations and the values they require (E-1.x), categories and podiums (E-4.5), time and
//! memory limits (E-5.3, E-5.4, E-5.7), the Confidence set (E-2.2), trusted-value settings
//! (E-3.1), points and penalties (E-4.1, E-4.2), normalisation and model-kind weights (E-4.4),
//! awards (E-4.5), and which runs see the verdict file (M-9).
//! Where a rules text leaves a choice open, the setting documents the choice made.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use toml::Spanned;

use mccbuild_core::diag::{Problem, Problems, SourceText};
use mccbuild_core::protocol::AnswerForm;
use mccbuild_core::toml_file::read_toml;
use mccbuild_core::value::ValueKind;

use crate::exact::Exact;

/// Index of an examination in [`Edition::examinations`].
pub type ExamId = usize;
/// Index of a category in [`Edition::categories`].
pub type CategoryId = usize;

const RULES_HELP: &str = "see docs/rules.md for the format of rules files";

// ---------------------------------------------------------------------------------------------
// The file format.

#[derive(Debug, Deserialize)]
struct EditionFile {
    edition: EditionInfo,
    limits: Limits,
    confidence: ConfidenceRules,
    trusted: TrustedRules,
    scoring: ScoringRules,
    #[serde(default)]
    awards: AwardRules,
    #[serde(default)]
    vm: VmRules,
    #[serde(default)]
    ranking: RankingRules,
    #[serde(default)]
    instances: InstanceRules,
    #[serde(default)]
    verdict_files: VerdictFileRules,
    #[serde(default, rename = "model_kind")]
    model_kinds: Vec<Spanned<ModelKindFile>>,
    #[serde(rename = "category")]
    categories: Vec<Spanned<CategoryFile>>,
    #[serde(rename = "examination")]
    examinations: Vec<Spanned<ExaminationFile>>,
}

/// `[edition]`: what this rules file is.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
pub struct EditionInfo {
    /// Shown in reports, e.g. "MCC 2026".
    pub name: String,
    /// Where the rules text comes from (informational).
    #[serde(default)]
    pub source: Option<String>,
    /// How the reference values are found: voted by the tools (MCC) or given (SV-COMP).
    #[serde(default)]
    pub trust: TrustKind,
}

#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum TrustKind {
    /// E-2, E-3: trusted values by Confidence-weighted majority.
    #[default]
    Consensus,
    /// The expected answer of every value is given with the task.
    GroundTruth,
}

/// `[limits]`: E-5.1, E-5.3, E-5.4 (an examination may override `time_s`, E-5.7).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Hash)]
pub struct Limits {
    /// Time limit of a run, in seconds (BK_TIME_CONFINEMENT); `time` says of which time.
    pub time_s: u64,
    /// Memory limit of a run, in MB (MiB, as BenchKit's BK_MEMORY_CONFINEMENT).
    pub memory_mb: u64,
    /// Which time `time_s` limits: the wall clock (BenchKit's `timeout`), the CPU time of the
    /// run's process tree, or both. Absent in a file (and in records written before it
    /// existed): CPU time. Records of CPU-limited runs do not write it, so they stay as they were.
    #[serde(default, skip_serializing_if = "TimeLimit::is_cpu")]
    pub time: TimeLimit,
}

/// E-5.1: which time a run's time limit applies to (`[limits] time`).
///
/// The MCC's rules say "a CPU time limit of one hour", but its harness, BenchKit, kills the
/// tool's command with `timeout -s 9 $BK_TIME_CONFINEMENT` (conf/invocation_template.txt):
/// the wall clock of the run, CPU time being only measured (docs/rules.md quotes both). Tools
/// were written for the harness (they budget their time by the clock), so the MCC editions say
/// `wall`; SV-COMP 2012 measures "seconds of CPU time": `cpu`.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq, Hash)]
#[serde(rename_all = "lowercase")]
pub enum TimeLimit {
    /// The CPU time of the run's whole process tree (wall clock: a safety net at 2 x + 30 s).
    #[default]
    Cpu,
    /// The wall-clock time since the run started; CPU time is measured, not limited.
    Wall,
    /// Whichever of the two comes first.
    Both,
}

impl TimeLimit {
    pub fn is_cpu(&self) -> bool {
        *self == TimeLimit::Cpu
    }

    /// The word of the edition file and of the run key.
    pub fn name(self) -> &'static str {
        match self {
            TimeLimit::Cpu => "cpu",
            TimeLimit::Wall => "wall",
            TimeLimit::Both => "both",
        }
    }

    /// Whether the CPU time of the tree is limited.
    pub fn limits_cpu(self) -> bool {
        self != TimeLimit::Wall
    }

    /// Whether the wall clock is limited (at the time limit itself, not the safety net).
    pub fn limits_wall(self) -> bool {
        self != TimeLimit::Cpu
    }
}

/// `[vm]`: the virtual machines runs are made in (E-5.2), for the QEMU executor.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
pub struct VmRules {
    /// QEMU's name of the CPU model the VMs show their guests.
    #[serde(default = "westmere")]
    pub cpu_model: String,
}

impl Default for VmRules {
    fn default() -> Self {
        VmRules {
            cpu_model: westmere(),
        }
    }
}

fn westmere() -> String {
    "Westmere".to_string()
}

/// `[confidence]`: rule E-2.2.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
pub struct ConfidenceRules {
    /// "at least 3 tools agree on this value".
    pub min_agreeing: u32,
    /// What a tool's Confidence divides by. E-2.2 writes |V_tool| / |V|, but E-2.1 says that
    /// Confidence 1 "means the tool always finds the commonly agreed results", and the 2015
    /// report's Table 3 defines the rate as correct / selected values of the tool: a tool that is
    /// right every time it answers must reach 1, so the default is `answered`.
    #[serde(default)]
    pub denominator: ConfidenceDenominator,
}

#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum ConfidenceDenominator {
    /// The values of V that the tool answered (2015 report: rate = correct / selected).
    #[default]
    Answered,
    /// All of V (the formula of E-2.2 read to the letter).
    All,
}

/// `[trusted]`: rule E-3.1.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
pub struct TrustedRules {
    /// "Only one tool provides a value. Then, if C_tool >= threshold ..." (0.997 in 2026,
    /// 0.993 in 2023; the 2015 report discards lonely answers of tools under 0.9).
    #[serde(with = "crate::exact::serde_exact")]
    pub single_tool_threshold: Exact,
    /// How "a weighted majority of tools agree on one value" is read when there are three or
    /// more answers.
    #[serde(default)]
    pub weighted_majority: WeightedMajority,
}

#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum WeightedMajority {
    /// The value whose tools weigh more than half of the total weight of the tools that
    /// answered (a majority in the literal sense); otherwise the value is unknown.
    #[default]
    Absolute,
    /// The value whose tools weigh the most, if no other value weighs as much.
    Relative,
}

/// `[scoring]`: rules E-4.1, E-4.2, E-4.4.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
pub struct ScoringRules {
    /// E-4.1: "the total number of points a tool can receive from an examination being 16";
    /// ScoreValue is this divided by the number of values of the examination.
    #[serde(with = "crate::exact::serde_exact")]
    pub points_per_examination: Exact,
    /// E-4.1: PenaltyValue = penalty_factor x ScoreValue ("twice the points").
    #[serde(with = "crate::exact::serde_exact")]
    pub penalty_factor: Exact,
    /// What a wrong value costs.
    #[serde(default)]
    pub wrong_value: WrongValue,
    /// E-4.4: how instances of models of different sizes are weighed.
    #[serde(default)]
    pub model_weight: ModelWeight,
    /// E-4.4: the largest model weighs at most this many times a one-instance model.
    #[serde(
        default = "default_max_model_ratio",
        with = "crate::exact::serde_exact"
    )]
    pub max_model_ratio: Exact,
    /// E-4.4: a factor on every instance's weight (a global scale: it changes no rank, only the
    /// figures). `"one"` (the default: a one-instance model's instance weighs 1), `"half-mean-known"`
    /// (a one-instance known model's instance weighs n_known / (2 m_known), half the mean number
    /// of instances of a known model, as the published MCC 2024 figures show:
    /// docs/replay-analysis.md), or a number (`"839/132"`).
    #[serde(default)]
    pub weight_scale: WeightScale,
    /// E-4.4: what a "model" is for the weights, from the MCC instance names
    /// `<Model>-<COL|PT>-<parameters>` (`weights::model_of`).
    #[serde(default)]
    pub model_grouping: ModelGrouping,
    /// A score table instead of ScoreValue/PenaltyValue: the points of each answer, right and
    /// wrong (SV-COMP 2012: SAFE +2 / -4, UNSAFE +1 / -2; UNKNOWN, no answer, 0).
    #[serde(default)]
    pub table: Vec<ScoreRow>,
}

#[cfg(test)]
impl ScoringRules {
    /// The MCC 2026 settings (`rules/mcc-2026.toml`), for the rules' unit tests.
    pub(crate) fn mcc_2026() -> ScoringRules {
        ScoringRules {
            points_per_examination: crate::exact::int(16),
            penalty_factor: crate::exact::int(2),
            wrong_value: WrongValue::Penalty,
            model_weight: ModelWeight::Linear,
            max_model_ratio: crate::exact::int(2),
            weight_scale: WeightScale::One,
            model_grouping: ModelGrouping::Family,
            table: Vec::new(),
        }
    }
}

/// One row of a score table.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
pub struct ScoreRow {
    /// The answer, as tools write it (`TRUE` = SAFE, `FALSE` = UNSAFE for verdicts).
    pub answer: mccbuild_core::value::Value,
    #[serde(with = "crate::exact::serde_exact")]
    pub correct: Exact,
    #[serde(with = "crate::exact::serde_exact")]
    pub wrong: Exact,
}

fn default_max_model_ratio() -> Exact {
    crate::exact::int(2)
}

#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum WrongValue {
    /// E-4.2: each wrong value costs PenaltyValue points.
    #[default]
    Penalty,
    /// MCC 2015: "one wrong value disqualifies the tool for the considered examination on the
    /// instance": the examination scores 0 there.
    LoseExamination,
}

/// E-4.4 normalisation: the text fixes only the bound ("the model with the largest number of
/// instances cannot weight more than x2 a model providing only one instance"), not the formula.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum ModelWeight {
    /// A model of n instances weighs `1 + (ratio - 1)(n - 1)/(N - 1)` single-instance models in
    /// total, N being the largest number of instances of a model: one instance weighs 1, the
    /// largest model weighs exactly `ratio`, linear in between (the simplest reading that meets
    /// the bound exactly). Each instance gets the model's weight divided by n.
    #[default]
    Linear,
    /// No normalisation: every instance weighs 1.
    None,
}

/// E-4.4's "model" (`model_grouping`): the texts say "model" and "instance" without saying
/// whether a model's colored (COL) and P/T (PT) instances are one model.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum ModelGrouping {
    /// The COL and PT instances of `<Model>` are one model, as the MCC computes its scores
    /// (the 2024 data: N = 40, BridgeAndVehicles and Sudoku, 20 + 20; docs/replay-analysis.md).
    #[default]
    Family,
    /// `<Model>-COL` and `<Model>-PT` are two models.
    FamilyType,
}

/// E-4.4's global scale of instance weights (`weight_scale`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum WeightScale {
    /// Every weight as the model weight gives it: a one-instance model's instance weighs 1.
    #[default]
    One,
    /// A one-instance known model's instance weighs n_known / (2 m_known): n_known instances of
    /// known models (the edition's first model kind), m_known known models.
    HalfMeanKnown,
    /// A fixed factor.
    Fixed(Exact),
}

impl Serialize for WeightScale {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            WeightScale::One => s.serialize_str("one"),
            WeightScale::HalfMeanKnown => s.serialize_str("half-mean-known"),
            WeightScale::Fixed(x) => crate::exact::serde_exact::serialize(x, s),
        }
    }
}

impl<'de> Deserialize<'de> for WeightScale {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<WeightScale, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Text(String),
            Number(#[serde(with = "crate::exact::serde_exact")] Exact),
        }
        match Raw::deserialize(d)? {
            Raw::Text(t) if t == "one" => Ok(WeightScale::One),
            Raw::Text(t) if t == "half-mean-known" => Ok(WeightScale::HalfMeanKnown),
            Raw::Text(t) => crate::exact::parse(&t)
                .filter(|x| *x > crate::exact::zero())
                .map(WeightScale::Fixed)
                .ok_or_else(|| {
                    serde::de::Error::custom(format!(
                        "weight_scale `{t}`: expected \"one\", \"half-mean-known\" or a positive number such as \"839/132\""
                    ))
                }),
            Raw::Number(x) if x > crate::exact::zero() => Ok(WeightScale::Fixed(x)),
            Raw::Number(_) => Err(serde::de::Error::custom("weight_scale must be positive")),
        }
    }
}

/// `[ranking]`: how tools with equal scores are ordered, and who gets a medal.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
pub struct RankingRules {
    #[serde(default)]
    pub tie_break: TieBreak,
    /// Whether a medal needs a score above 0 besides a rank of 1 to 3. The MCC texts set no
    /// minimum (E-4.6: "tools are ranked in this category with respect to this sum"; the MCC's
    /// papers: "golden, silver, and bronze medals are attributed to the three best tools"), so
    /// the MCC editions leave it off (the default). SV-COMP 2012 gives no medals; its file sets
    /// it, from "a competition candidate that generates random answers should be ranked with a
    /// negative sum of points": a tool that does no better than guessing gets no medal.
    #[serde(default)]
    pub medal_needs_positive_score: bool,
}

#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum TieBreak {
    /// Equal scores share a rank (the MCC rules say nothing more).
    #[default]
    None,
    /// SV-COMP 2012: "sub-ranked according to success-runtime", the total CPU time of the runs
    /// with a correct result; less is better.
    SuccessCpuTime,
}

/// `[awards]`: rule E-4.5's fastest-tool and least-memory awards.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
pub struct AwardRules {
    /// Whether the edition has E-4.5's fastest-tool and least-memory awards (SV-COMP has none).
    #[serde(default = "yes")]
    pub enabled: bool,
    /// "computed, for each tool, based on the examinations for which all the values have been
    /// provided": each tool's mean CPU time (and mean peak memory) over those examinations; the
    /// text does not say sum or mean, and a sum would favour tools that solve less.
    #[serde(default)]
    pub aggregate: AwardAggregate,
}

impl Default for AwardRules {
    fn default() -> Self {
        AwardRules {
            enabled: true,
            aggregate: AwardAggregate::default(),
        }
    }
}

#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum AwardAggregate {
    #[default]
    Mean,
    Sum,
    /// Per-examination wins: in each examination instance of the category, the ranked tool
    /// with the lowest CPU time (peak memory) among those that completed it wins it (a tie
    /// shares the win); the award goes to the most wins. Solving more never loses a win.
    Wins,
}

/// `[instances]`: what an instance is.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
pub struct InstanceRules {
    /// The file that makes a folder an instance (`model.pnml` for the MCC; a verification task's
    /// program for SV-COMP). A `.pnml` model is checked to be well-formed PNML.
    #[serde(default = "default_model_file")]
    pub model_file: String,
}

fn default_model_file() -> String {
    "model.pnml".to_string()
}

impl Default for InstanceRules {
    fn default() -> Self {
        InstanceRules {
            model_file: default_model_file(),
        }
    }
}

/// `[verdict_files]`: rule M-9.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
pub struct VerdictFileRules {
    /// The verdict file of an instance.
    #[serde(default = "default_verdict_file")]
    pub file: String,
    /// Model kinds whose instances never show it ("no verdict file for the surprise models").
    #[serde(default)]
    pub hidden_for_model_kinds: Vec<String>,
}

fn default_verdict_file() -> String {
    "GenericPropertiesVerdict.xml".to_string()
}

impl Default for VerdictFileRules {
    fn default() -> Self {
        VerdictFileRules {
            file: default_verdict_file(),
            hidden_for_model_kinds: Vec::new(),
        }
    }
}

#[derive(Clone, Debug, Deserialize)]
struct ModelKindFile {
    name: String,
    #[serde(default, with = "crate::exact::serde_exact::option")]
    multiplier: Option<Exact>,
    #[serde(default)]
    share_of: Option<ShareOf>,
    /// The kind of new models: those whose instances carry the `NewModel` marker (2026's
    /// "surprise" models), when the manifest does not give their kind.
    #[serde(default)]
    new_models: bool,
}

#[derive(Clone, Debug, Deserialize)]
struct ShareOf {
    kind: String,
    #[serde(with = "crate::exact::serde_exact")]
    share: Exact,
}

#[derive(Clone, Debug, Deserialize)]
struct CategoryFile {
    name: String,
    #[serde(default)]
    title: Option<String>,
}

#[derive(Clone, Debug, Deserialize)]
struct ExaminationFile {
    name: String,
    category: Spanned<String>,
    answers: AnswerForm,
    value: ValueKind,
    #[serde(default)]
    values: Option<Vec<String>>,
    #[serde(default)]
    optional_values: Vec<String>,
    #[serde(default)]
    formula_file: Option<String>,
    #[serde(default)]
    truth_file: Option<String>,
    #[serde(default)]
    abbrev: Option<String>,
    #[serde(default)]
    time_s: Option<u64>,
    #[serde(default = "yes")]
    verdict_file: bool,
}

fn yes() -> bool {
    true
}

// ---------------------------------------------------------------------------------------------
// The validated edition.

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
        let file: EditionFile = read_toml(&source, RULES_HELP)?;
        let mut problems = Problems::default();
        check_settings(&file, path, &mut problems);
        let mut categories = categories(&file, &source, &mut problems);
        let examinations = examinations(&file, &source, &mut categories, &mut problems);
        let (model_kinds, new_model_kind) = model_kinds(&file, &source, &mut problems);
        check_references(&file, path, &model_kinds, &examinations, &mut problems);
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

/// The settings that are single numbers: limits, Confidence, threshold, points.
fn check_settings(file: &EditionFile, path: &Path, problems: &mut Problems) {
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
fn categories(
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
fn examinations(
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
        problem(format!("examination `{}`: answers = \"verification-result\" (SAFE/UNSAFE) needs value = \"boolean\"", e.name), None);
    }
    if file.edition.trust == TrustKind::GroundTruth && e.truth_file.is_none() {
        problem(
            format!("examination `{}`: a ground-truth edition needs truth_file (the instance file with the expected answer)", e.name),
            Some(RULES_HELP),
        );
    }
}

/// `[[model_kind]]` (E-4.4): the kinds, their weights (shares resolved), and the kind of new
/// models.
fn model_kinds(
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
fn check_references(
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

#[cfg(test)]
mod tests {
    use super::*;

    fn default_rules() -> String {
        std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../rules/mcc-2026.toml"
        ))
        .unwrap()
    }

    /// An edit of a scoring rule keeps the plan; an edit of what the runs are does not.
    #[test]
    fn only_scoring_settings_keep_the_plan() {
        let path = Path::new("rules.toml");
        let text = default_rules();
        let base = Edition::parse(path, &text).unwrap();
        let edited = |from: &str, to: &str| {
            assert!(text.contains(from), "{from}");
            Edition::parse(path, &text.replacen(from, to, 1)).unwrap()
        };
        // A comment: same rules, another digest.
        let comment = Edition::parse(path, &format!("{text}\n# a comment\n")).unwrap();
        assert_ne!(comment.digest, base.digest);
        assert!(base.same_plan_as(&comment));
        // E-3.1's threshold and E-2.2's set: scoring only.
        let threshold = edited(
            "single_tool_threshold = 0.997",
            "single_tool_threshold = 0.9",
        );
        assert_ne!(threshold.trusted, base.trusted);
        assert!(base.same_plan_as(&threshold));
        assert!(base.same_plan_as(&edited("min_agreeing = 3", "min_agreeing = 2")));
        // The default time limit is in every run's key: planned again.
        let limits = edited("time_s = 3600", "time_s = 1800");
        assert!(!base.same_plan_as(&limits));
        assert!(!limits.same_plan_as(&base));
    }

    /// E-5.1 as BenchKit applies it: the MCC editions limit the wall clock, SV-COMP 2012 the
    /// CPU time (docs/rules.md quotes the evidence); a file without the setting limits CPU time.
    #[test]
    fn each_edition_limits_the_time_its_harness_limits() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../rules");
        for (file, time) in [
            ("mcc-2015.toml", TimeLimit::Wall),
            ("mcc-2023.toml", TimeLimit::Wall),
            ("mcc-2026.toml", TimeLimit::Wall),
            ("svcomp-2012.toml", TimeLimit::Cpu),
        ] {
            let edition = Edition::load(&dir.join(file)).unwrap();
            assert_eq!(edition.limits.time, time, "{file}");
            assert_eq!(edition.limits_for(0).time, time, "{file}");
        }
        let without = default_rules().replace("time = \"wall\"", "");
        assert_ne!(without, default_rules());
        let edition = Edition::parse(Path::new("rules/x.toml"), &without).unwrap();
        assert_eq!(edition.limits.time, TimeLimit::Cpu);
        let bad = default_rules().replace("time = \"wall\"", "time = \"cpu-ish\"");
        assert!(Edition::parse(Path::new("rules/x.toml"), &bad).is_err());
    }

    /// What each edition's text defines, and nothing more (issue 14): E-4.5's awards in the MCC
    /// 2023 and 2026 rules, none in the 2015 report (it only charts CPU and memory) nor in
    /// SV-COMP 2012; medals for the three best ranks whatever the score, except SV-COMP 2012
    /// (no medals in its text; a negative sum is no better than random answers).
    #[test]
    fn each_edition_has_the_awards_and_medals_its_text_defines() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../rules");
        for (file, awards, positive) in [
            ("mcc-2015.toml", false, false),
            ("mcc-2023.toml", true, false),
            ("mcc-2026.toml", true, false),
            ("svcomp-2012.toml", false, true),
        ] {
            let edition = Edition::load(&dir.join(file)).unwrap();
            assert_eq!(edition.awards.enabled, awards, "{file}");
            assert_eq!(
                edition.ranking.medal_needs_positive_score, positive,
                "{file}"
            );
        }
    }

    #[test]
    fn the_2026_edition_loads() {
        let edition = Edition::parse(Path::new("rules/mcc-2026.toml"), &default_rules()).unwrap();
        assert_eq!(edition.examinations.len(), 13);
        assert_eq!(edition.categories.len(), 6);
        let ss = edition.examination("StateSpace").unwrap();
        assert_eq!(edition.examinations[ss].values.len(), 4);
        let rd = edition.examination("ReachabilityDeadlock").unwrap();
        assert_eq!(edition.examinations[rd].time_s, 1800);
        assert_eq!(edition.examinations[ss].time_s, 3600);
        assert_eq!(
            edition.trusted.single_tool_threshold,
            crate::exact::ratio(997, 1000)
        );
        let surprise = edition.model_kind("surprise").unwrap();
        let known = edition.model_kind("known").unwrap();
        assert_eq!(
            edition.model_kinds[surprise].weight,
            KindWeight::ShareOf {
                of: known,
                share: crate::exact::ratio(1, 2)
            }
        );
        // M-9
        let ub = edition.examination("UpperBounds").unwrap();
        let rc = edition.examination("ReachabilityCardinality").unwrap();
        use crate::hidden_files::shows_verdict_file;
        assert!(!shows_verdict_file(&edition, ub, known));
        assert!(!shows_verdict_file(&edition, rd, known));
        assert!(shows_verdict_file(&edition, rc, known));
        assert!(shows_verdict_file(&edition, ss, known));
        assert!(!shows_verdict_file(&edition, rc, surprise));
        // E-4.4: unmarked models are known, models marked new are surprise ones.
        assert_eq!(edition.default_model_kind, known);
        assert_eq!(edition.new_model_kind, Some(surprise));
    }

    #[test]
    fn unknown_key_is_reported_with_its_line() {
        let text = default_rules().replacen("min_agreeing = 3", "min_agreeng = 3", 1);
        let err = Edition::parse(Path::new("r.toml"), &text).unwrap_err();
        let line = text
            .lines()
            .position(|l| l.starts_with("min_agreeng"))
            .unwrap()
            + 1;
        assert_eq!(err.0[0].location.unwrap().line, line, "{err}");
        assert!(err.0[0].message.contains("min_agreeng"), "{err}");
    }

    #[test]
    fn unknown_category_is_reported_with_its_line() {
        let text =
            default_rules().replacen("category = \"UpperBounds\"", "category = \"UperBounds\"", 1);
        let err = Edition::parse(Path::new("r.toml"), &text).unwrap_err();
        let line = text
            .lines()
            .position(|l| l.contains("\"UperBounds\""))
            .unwrap()
            + 1;
        assert_eq!(err.0.len(), 2, "{err}"); // the bad reference, and the now empty category
        assert_eq!(err.0[0].location.unwrap().line, line);
        assert!(err.to_string().contains("unknown category `UperBounds`"));
    }

    #[test]
    fn bad_threshold_and_share_are_reported_together() {
        let text = default_rules()
            .replacen(
                "single_tool_threshold = 0.997",
                "single_tool_threshold = 1.5",
                1,
            )
            .replacen(
                "share_of = { kind = \"known\", share = 0.5 }",
                "share_of = { kind = \"nope\", share = 0.5 }",
                1,
            );
        let err = Edition::parse(Path::new("r.toml"), &text).unwrap_err();
        assert_eq!(err.len(), 2, "{err}");
    }
}
