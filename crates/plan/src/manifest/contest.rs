//! The validated contest: the models, instances, tools and settings the rest of mccbuild reads,
//! and the questions asked of them (the limits of a run, whether an edit keeps the plan).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;

use mccbuild_core::diag::{Problem, Problems, utf8_text};
use mccbuild_rules::edition::{Edition, ExamId, Limits, TimeLimit};
use mccbuild_rules::reference::Basis;

use super::ExecutorConfig;
use super::reading;

/// Rule T-2: competing tools can win medals; reference tools are shown for comparison.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolKind {
    #[default]
    Competing,
    Reference,
}

/// Who a tool's runs execute as: BenchKit's unprivileged user `mcc` (the default,
/// as on the MCC's VM), or root where the manifest says so (`user = "root"`).
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RunUser {
    #[default]
    Mcc,
    Root,
}

impl RunUser {
    /// The user's name (as in the manifest, the run key and records).
    pub fn name(self) -> &'static str {
        match self {
            RunUser::Mcc => "mcc",
            RunUser::Root => "root",
        }
    }
}

/// Where an instance comes from: a folder in the MCC layout or a BenchKit `.tgz` archive.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum InstanceSource {
    Folder(PathBuf),
    Archive(PathBuf),
    /// Known from a results file only (its runs are imported, never executed).
    Imported(PathBuf),
}

impl InstanceSource {
    pub fn path(&self) -> &Path {
        match self {
            InstanceSource::Folder(p)
            | InstanceSource::Archive(p)
            | InstanceSource::Imported(p) => p,
        }
    }
}

/// One instance of a model, as the manifest names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InstanceDecl {
    pub name: String,
    pub source: InstanceSource,
}

/// How a model's kind is known.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModelKindDecl {
    /// Given in the manifest (an index into the edition's model kinds).
    Given(usize),
    /// From `inputs`: the edition's kind of new models if its instances carry the `NewModel`
    /// marker, its default kind otherwise (E-4.4).
    FromMarker,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Model {
    pub name: String,
    pub kind: ModelKindDecl,
    pub instances: Vec<InstanceDecl>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tool {
    pub name: String,
    /// BK_TOOL of its runs (`bk_tool`, default the name): variants of one submission share a
    /// folder and an entry that dispatches on it.
    pub bk_tool: String,
    pub kind: ToolKind,
    /// Who its runs execute as (`user`: `mcc` by default, `root` where the manifest says so).
    pub user: RunUser,
    /// Debian packages of the host the tool uses (`host_packages`): their installed versions
    /// are part of its runs' keys (docs/cache.md).
    pub host_packages: Vec<String>,
    pub family: String,
    /// E-5.3/E-5.4: 1 (sequential) or 4 (parallel).
    pub cores: u32,
    /// Absolute path of the tool's folder; every file below it is part of its identity. None:
    /// the tool's runs are imported from results files, never executed.
    pub dir: Option<PathBuf>,
    /// The entry script, relative to `dir`.
    pub entry: String,
    pub setup: Option<String>,
    /// The files the setup reads (globs relative to `dir`); its products are shared by the
    /// versions of the tool that agree on them. None: every file.
    pub setup_inputs: Option<Vec<glob::Pattern>>,
    /// The examinations the tool takes part in (indices into the edition).
    pub examinations: Vec<ExamId>,
}

/// A validated manifest.
#[derive(Clone, Debug, PartialEq)]
pub struct Contest {
    pub manifest_path: PathBuf,
    /// The manifest's folder: relative paths start here.
    pub root: PathBuf,
    pub name: String,
    pub rules_path: PathBuf,
    pub edition: Arc<Edition>,
    pub store: PathBuf,
    pub executor: ExecutorConfig,
    /// `[limits]` overrides of the edition's limits.
    pub time_s: Option<u64>,
    pub memory_mb: Option<u64>,
    pub time: Option<TimeLimit>,
    pub models: Vec<Model>,
    pub tools: Vec<Tool>,
    /// Results files (raw-result-analysis.csv layout) whose rows are runs of this contest.
    pub results: Vec<PathBuf>,
    /// Kinds given to models that get their instances from `inputs` or `results`.
    pub model_kinds: BTreeMap<String, usize>,
    /// `[reference]`: reference answers (a folder or .tar.gz of `<instance>-<EXAM>.out` files, or
    /// a results CSV) and whether the trusted values are the vote's (the default) or theirs.
    /// Not part of any run key.
    pub reference: Option<ReferenceConfig>,
    /// `corrections`: the organisers' decided values (E-6.3), a CSV file
    /// ([`crate::corrections`]). Not part of any run key.
    pub corrections: Option<PathBuf>,
}

/// `[reference]`, validated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReferenceConfig {
    pub answers: PathBuf,
    pub basis: Basis,
}

impl Contest {
    /// Reads and validates a manifest and its rules file, reporting every problem found.
    pub fn load(manifest_path: &Path) -> Result<Contest, Problems> {
        let bytes = std::fs::read(manifest_path).map_err(|e| {
            Problem::new(manifest_path, format!("cannot read the manifest: {e}"))
                .help("run mccbuild in a folder holding contest.toml, or pass --manifest PATH")
        })?;
        let text = utf8_text(manifest_path, &bytes, "the manifest")?;
        Contest::parse(manifest_path, text)
    }

    /// Reads and validates the manifest `text` of `manifest_path`, reporting every problem found.
    pub fn parse(manifest_path: &Path, text: &str) -> Result<Contest, Problems> {
        reading::read(manifest_path, text)
    }

    /// Whether `other` (this manifest read again) plans the same runs: it differs only in what
    /// scoring reads and planning does not: the contest's name, the tools' kinds (competing or
    /// reference) and families, and the edition's scoring rules ([`Edition::same_plan_as`]).
    /// `mccbuild watch` re-scores such an edit without planning again. Conservative: whatever
    /// else changed (a tool, a model, a limit, a results file, the store) is planned again.
    pub fn same_plan_as(&self, other: &Contest) -> bool {
        if !self.edition.same_plan_as(&other.edition) || self.tools.len() != other.tools.len() {
            return false;
        }
        let mut masked = other.clone();
        masked.name.clone_from(&self.name);
        masked.edition = self.edition.clone();
        for (tool, mine) in masked.tools.iter_mut().zip(&self.tools) {
            tool.kind = mine.kind;
            tool.family.clone_from(&mine.family);
        }
        masked == *self
    }

    /// The limits of a run of `exam`: the edition's (E-5.7 per examination), overridden by
    /// the manifest's `[limits]`.
    pub fn limits_for(&self, exam: ExamId) -> Limits {
        let base = self.edition.limits_for(exam);
        Limits {
            time_s: self.time_s.unwrap_or(base.time_s),
            memory_mb: self.memory_mb.unwrap_or(base.memory_mb),
            time: self.time.unwrap_or(base.time),
        }
    }

    pub fn tool(&self, name: &str) -> Option<usize> {
        self.tools.iter().position(|t| t.name == name)
    }
}
