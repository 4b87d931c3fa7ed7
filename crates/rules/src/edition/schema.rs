//! The schema of a rules file (`rules/<edition>.toml`, docs/rules.md): its sections as serde
//! reads them (and writes them, in reports and the plan snapshot), each setting with what it
//! means and the rule it sets. The sections are kept as read in [`super::Edition`]; the lists
//! (`[[model_kind]]`, `[[category]]`, `[[examination]]`) are validated into its own types
//! ([`super::validate`]); what a file may leave out is in [`super::defaults`].

use serde::{Deserialize, Serialize};
use toml::Spanned;

use mccbuild_core::protocol::AnswerForm;
use mccbuild_core::value::ValueKind;

use crate::exact::Exact;

/// A rules file as serde reads it, before validation ([`super::validate`]).
#[derive(Debug, Deserialize)]
pub(super) struct EditionFile {
    pub(super) edition: EditionInfo,
    pub(super) limits: Limits,
    pub(super) confidence: ConfidenceRules,
    pub(super) trusted: TrustedRules,
    pub(super) scoring: ScoringRules,
    #[serde(default)]
    pub(super) awards: AwardRules,
    #[serde(default)]
    pub(super) vm: VmRules,
    #[serde(default)]
    pub(super) ranking: RankingRules,
    #[serde(default)]
    pub(super) instances: InstanceRules,
    #[serde(default)]
    pub(super) verdict_files: VerdictFileRules,
    #[serde(default, rename = "model_kind")]
    pub(super) model_kinds: Vec<Spanned<ModelKindFile>>,
    #[serde(rename = "category")]
    pub(super) categories: Vec<Spanned<CategoryFile>>,
    #[serde(rename = "examination")]
    pub(super) examinations: Vec<Spanned<ExaminationFile>>,
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
    #[serde(default = "super::defaults::westmere")]
    pub cpu_model: String,
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
    /// Who votes in E-2.2's "a majority of tools agree ... at least 3 tools" and in E-3.1's
    /// weighted majority: every `[[tool]]` entry, or one vote per family (the variants of one
    /// tool, T-2 and E-4.6). Absent: every entry (`tool`).
    #[serde(default, skip_serializing_if = "Votes::is_tool")]
    pub votes: Votes,
}

/// Rules E-2.2 and E-3.1: who votes (`[confidence] votes`, see [`crate::votes`]).
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq, Hash)]
#[serde(rename_all = "kebab-case")]
pub enum Votes {
    /// Every `[[tool]]` entry is a tool and votes: three variants of one tool are three votes.
    #[default]
    Tool,
    /// The variants of one tool (one `family`) cast one vote: the answer of the family's first
    /// entry in the manifest among those that gave that value, weighted by that entry's
    /// Confidence; variants that disagree vote once for each value they gave.
    Family,
}

impl Votes {
    pub fn is_tool(&self) -> bool {
        *self == Votes::Tool
    }

    /// The word of the edition file.
    pub fn name(self) -> &'static str {
        match self {
            Votes::Tool => "tool",
            Votes::Family => "family",
        }
    }
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
        default = "super::defaults::default_max_model_ratio",
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
    /// E-4.6: which rank follows tools that share one (equal totals share a rank).
    #[serde(default)]
    pub shared_ranks: SharedRanks,
}

/// `[ranking] shared_ranks`: E-4.6 ranks tools "with respect to this sum" and says nothing of
/// equal sums. Equal totals share a rank in both readings; they differ in the rank after them.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum SharedRanks {
    /// Competition ranking, 1, 1, 3: the tool after two gold medallists is third (bronze), and
    /// no silver is given. The reading of every edition file.
    #[default]
    Skip,
    /// Dense ranking, 1, 1, 2: the tool after two gold medallists is second (silver), so up to
    /// every tool of the first three distinct totals gets a medal.
    Dense,
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
    #[serde(default = "super::defaults::yes")]
    pub enabled: bool,
    /// "computed, for each tool, based on the examinations for which all the values have been
    /// provided": each tool's mean CPU time (and mean peak memory) over those examinations; the
    /// text does not say sum or mean, and a sum would favour tools that solve less.
    #[serde(default)]
    pub aggregate: AwardAggregate,
    /// Who gets an award that several tools earn equally (equal wins, equal means):
    /// `rank` (the default) or `shared` (see [`crate::podium::award_ties`]).
    #[serde(default, skip_serializing_if = "AwardTies::is_rank")]
    pub ties: AwardTies,
}

/// `[awards] ties`: E-4.5 names "the fastest tool" and says nothing of equal merit.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum AwardTies {
    /// The better-ranked of the tied tools, then the first in podium order (by name): one
    /// holder. The reading of every edition file.
    #[default]
    Rank,
    /// Every tied tool holds the award.
    Shared,
}

impl AwardTies {
    pub fn is_rank(&self) -> bool {
        *self == AwardTies::Rank
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
    #[serde(default = "super::defaults::default_model_file")]
    pub model_file: String,
}

/// `[verdict_files]`: rule M-9.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
pub struct VerdictFileRules {
    /// The verdict file of an instance.
    #[serde(default = "super::defaults::default_verdict_file")]
    pub file: String,
    /// Model kinds whose instances never show it ("no verdict file for the surprise models").
    #[serde(default)]
    pub hidden_for_model_kinds: Vec<String>,
}

/// `[[model_kind]]`, as read.
#[derive(Clone, Debug, Deserialize)]
pub(super) struct ModelKindFile {
    pub(super) name: String,
    #[serde(default, with = "crate::exact::serde_exact::option")]
    pub(super) multiplier: Option<Exact>,
    #[serde(default)]
    pub(super) share_of: Option<ShareOf>,
    /// The kind of new models: those whose instances carry the `NewModel` marker (2026's
    /// "surprise" models), when the manifest does not give their kind.
    #[serde(default)]
    pub(super) new_models: bool,
}

/// `share_of = { kind = "...", share = x }` of a `[[model_kind]]`.
#[derive(Clone, Debug, Deserialize)]
pub(super) struct ShareOf {
    pub(super) kind: String,
    #[serde(with = "crate::exact::serde_exact")]
    pub(super) share: Exact,
}

/// `[[category]]`, as read.
#[derive(Clone, Debug, Deserialize)]
pub(super) struct CategoryFile {
    pub(super) name: String,
    #[serde(default)]
    pub(super) title: Option<String>,
}

/// `[[examination]]`, as read.
#[derive(Clone, Debug, Deserialize)]
pub(super) struct ExaminationFile {
    pub(super) name: String,
    pub(super) category: Spanned<String>,
    pub(super) answers: AnswerForm,
    pub(super) value: ValueKind,
    #[serde(default)]
    pub(super) values: Option<Vec<String>>,
    #[serde(default)]
    pub(super) optional_values: Vec<String>,
    #[serde(default)]
    pub(super) formula_file: Option<String>,
    #[serde(default)]
    pub(super) truth_file: Option<String>,
    #[serde(default)]
    pub(super) abbrev: Option<String>,
    #[serde(default)]
    pub(super) time_s: Option<u64>,
    #[serde(default = "super::defaults::yes")]
    pub(super) verdict_file: bool,
}
