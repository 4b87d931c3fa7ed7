//! The contest manifest, `contest.toml`: models, tools, executor and limits.
//!
//! Paths are relative to the manifest's folder. Unknown keys are errors with their line; a check
//! reports every problem it finds at once, each naming the file, the place and the fix.

use std::collections::{BTreeMap, HashSet};
use std::ops::Range;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;
use toml::Spanned;

use mccbuild_core::diag::{Problem, Problems, SourceText};
use mccbuild_core::toml_file::read_toml;
use mccbuild_rules::edition::{Edition, EditionError, ExamId, Limits, ModelGrouping, TimeLimit};
use mccbuild_rules::reference::Basis;
use mccbuild_rules::weights::model_of;

const MANIFEST_HELP: &str = "see docs/manifest.md for the keys of contest.toml";

// ---------------------------------------------------------------------------------------------
// The file format.

#[derive(Debug, Deserialize)]
struct ManifestFile {
    contest: ContestSection,
    #[serde(default)]
    executor: ExecutorSection,
    #[serde(default)]
    limits: LimitsSection,
    #[serde(default, rename = "model")]
    models: Vec<Spanned<ModelSection>>,
    #[serde(default, rename = "tool")]
    tools: Vec<Spanned<ToolSection>>,
    #[serde(default)]
    reference: Option<ReferenceSection>,
}

/// `[reference]` as written (docs/manifest.md): reference answers to judge the tools against.
#[derive(Debug, Deserialize)]
struct ReferenceSection {
    answers: Spanned<String>,
    #[serde(default)]
    basis: Basis,
}

#[derive(Debug, Deserialize)]
struct ContestSection {
    name: String,
    rules: Spanned<String>,
    #[serde(default)]
    store: Option<String>,
    #[serde(default)]
    inputs: Option<Spanned<OneOrMany>>,
    #[serde(default)]
    results: Option<Spanned<OneOrMany>>,
    /// The organisers' decided values (E-6.3): a CSV of instance, examination, id, value.
    #[serde(default)]
    corrections: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    fn items(&self) -> Vec<&str> {
        match self {
            OneOrMany::One(s) => vec![s.as_str()],
            OneOrMany::Many(v) => v.iter().map(String::as_str).collect(),
        }
    }
}

#[derive(Debug, Deserialize)]
struct ExecutorSection {
    #[serde(default)]
    kind: ExecutorKind,
    #[serde(default)]
    jobs: Option<usize>,
    #[serde(default)]
    qemu: Option<Spanned<QemuSection>>,
    /// `[executor.slurm]`: settings of the Slurm executor.
    #[serde(default)]
    slurm: Option<Spanned<SlurmSection>>,
}

impl Default for ExecutorSection {
    fn default() -> Self {
        ExecutorSection {
            kind: ExecutorKind::Local,
            jobs: None,
            qemu: None,
            slurm: None,
        }
    }
}

/// `[executor.qemu]` (docs/manifest.md).
#[derive(Debug, Default, Deserialize)]
struct QemuSection {
    guest: Option<Spanned<String>>,
    kernel: Option<Spanned<String>>,
    initrd: Option<Spanned<String>>,
    image: Option<Spanned<String>>,
    #[serde(default)]
    images: BTreeMap<String, Spanned<String>>,
    ssh_key: Option<Spanned<String>>,
    accel: Option<Spanned<String>>,
    boot_timeout_s: Option<Spanned<u64>>,
    binary: Option<String>,
}

/// `[executor.slurm]` as written (docs/manifest.md).
#[derive(Debug, Default, Deserialize)]
struct SlurmSection {
    #[serde(default)]
    partition: Option<Spanned<String>>,
    #[serde(default)]
    account: Option<Spanned<String>>,
    #[serde(default)]
    qos: Option<Spanned<String>>,
    #[serde(default)]
    sbatch_options: Vec<Spanned<String>>,
    #[serde(default)]
    srun_options: Vec<Spanned<String>>,
    #[serde(default)]
    shared_store: Option<Spanned<String>>,
    #[serde(default)]
    mccbuild: Option<Spanned<String>>,
    #[serde(default)]
    cpus_per_job: Option<Spanned<u32>>,
    #[serde(default)]
    attempts: Option<Spanned<u32>>,
    #[serde(default)]
    steps: Option<Spanned<String>>,
}

/// `[executor] kind`.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq, Hash)]
#[serde(rename_all = "lowercase")]
pub enum ExecutorKind {
    #[default]
    Local,
    Qemu,
    /// One Slurm job per model, each run a job step (docs/execution.md, "Slurm executor").
    Slurm,
}

impl ExecutorKind {
    pub fn name(self) -> &'static str {
        match self {
            ExecutorKind::Local => "local",
            ExecutorKind::Qemu => "qemu",
            ExecutorKind::Slurm => "slurm",
        }
    }
}

#[derive(Debug, Default, Deserialize)]
struct LimitsSection {
    #[serde(default)]
    time_s: Option<u64>,
    #[serde(default)]
    memory_mb: Option<u64>,
    /// Which time `time_s` limits (`cpu`, `wall`, `both`), instead of the edition's.
    #[serde(default)]
    time: Option<TimeLimit>,
    /// The core counts a tool may ask for, instead of E-5.3/E-5.4's 1 and 4 (a machine with
    /// 2 cores, a qualification round).
    #[serde(default)]
    cores: Option<Vec<u32>>,
    /// The VMs' CPU model (QEMU executor), instead of the edition's.
    #[serde(default)]
    cpu_model: Option<String>,
}

#[derive(Debug, Deserialize)]
struct ModelSection {
    name: String,
    /// Absent: the edition's default kind (E-4.4).
    #[serde(default)]
    kind: Option<Spanned<String>>,
    /// Absent: the model's instances come from `inputs` or `results` (this entry gives its kind).
    #[serde(default)]
    instances: Option<Vec<Spanned<String>>>,
}

#[derive(Debug, Deserialize)]
struct ToolSection {
    name: String,
    /// BK_TOOL: absent, the tool's name.
    #[serde(default)]
    bk_tool: Option<Spanned<String>>,
    #[serde(default)]
    kind: ToolKind,
    /// Who its runs execute as: `mcc` (default) or `root`.
    #[serde(default)]
    user: RunUser,
    /// Debian packages of the host whose versions are part of its runs' keys.
    #[serde(default)]
    host_packages: Vec<Spanned<String>>,
    #[serde(default)]
    family: Option<String>,
    #[serde(default = "one")]
    cores: Spanned<u32>,
    /// Absent: a tool whose runs come from `results` files (this entry gives its kind, family).
    #[serde(default)]
    dir: Option<Spanned<String>>,
    #[serde(default = "benchkit_head")]
    entry: String,
    #[serde(default)]
    setup: Option<String>,
    #[serde(default)]
    setup_inputs: Option<Spanned<Vec<String>>>,
    #[serde(default = "all")]
    examinations: Spanned<Vec<String>>,
}

fn one() -> Spanned<u32> {
    Spanned::new(0..0, 1)
}

fn benchkit_head() -> String {
    "BenchKit_head.sh".to_string()
}

fn all() -> Spanned<Vec<String>> {
    Spanned::new(0..0, vec!["all".to_string()])
}

/// The least `[limits] memory_mb` accepted: below it no tool can start, every run would end as
/// a memory-out.
pub const MIN_MEMORY_MB: u64 = 64;

/// Rule T-2: competing tools can win medals; reference tools are shown for comparison.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolKind {
    #[default]
    Competing,
    Reference,
}

/// Who a tool's runs execute as (issue 15): BenchKit's unprivileged user `mcc` (the default,
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

// ---------------------------------------------------------------------------------------------
// The resolved contest.

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

/// `[executor]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecutorConfig {
    pub kind: ExecutorKind,
    pub jobs: usize,
    /// `[executor.qemu]`, resolved (always present; used when `kind = "qemu"`).
    pub qemu: QemuConfig,
    /// `[executor.slurm]` (defaults when absent).
    pub slurm: SlurmConfig,
}

/// `[executor.qemu]`: how runs boot their VMs (docs/execution.md, "QEMU executor").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QemuConfig {
    pub guest: GuestKind,
    /// Kernel-kind guest (and the accelerator probe): the kernel and initramfs.
    pub kernel: PathBuf,
    pub initrd: PathBuf,
    /// Image-kind guests: each tool's disk image (`images`, else `image`).
    pub images: BTreeMap<String, PathBuf>,
    /// Private key of the images' root account (image kind).
    pub ssh_key: Option<PathBuf>,
    pub accel: Accel,
    /// Seconds a VM may take beyond the run's wall-clock limit (boot, copying the instance).
    pub boot_timeout_s: u64,
    /// The QEMU binary.
    pub binary: String,
    /// The VMs' CPU model: `[limits] cpu_model`, else the edition's.
    pub cpu_model: String,
}

/// `[executor.qemu] guest`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GuestKind {
    /// A kernel + initramfs booted directly; the tool's files shared read-only.
    Kernel,
    /// A BenchKit-style disk image, driven over ssh.
    Image,
}

/// `[executor.qemu] accel`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Accel {
    /// KVM when a probe boot shows it works, TCG otherwise.
    Auto,
    Kvm,
    Tcg,
}

/// `[executor.slurm]`: how jobs are submitted (docs/manifest.md).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SlurmConfig {
    pub partition: Option<String>,
    pub account: Option<String>,
    pub qos: Option<String>,
    /// Extra options of every `sbatch` (e.g. `--time=2:00:00`, `--exclusive`).
    pub sbatch_options: Vec<String>,
    /// Extra options of every run's `srun` step.
    pub srun_options: Vec<String>,
    /// The mccbuild binary as the nodes see it (default: the running one).
    pub mccbuild: Option<PathBuf>,
    /// CPUs each model's job asks for (default: `jobs` x the most cores a run of it needs).
    pub cpus_per_job: Option<u32>,
    /// Jobs a run gets before it is reported as an infrastructure failure (default 3).
    pub attempts: u32,
    /// Whether `shared_store` was given (the contest's `store` is then that folder).
    pub shared_store: bool,
    /// One step per run (the default) or one per model's job.
    pub steps: SlurmSteps,
}

/// `[executor.slurm] steps`: what a job step executes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SlurmSteps {
    /// `"run"`: each run is a step of its own (Slurm sees and can signal each run).
    #[default]
    PerRun,
    /// `"model"`: one step runs all of the job's runs, `jobs` at a time (one `mccbuild`
    /// process per job instead of one per run: for contests whose plan is large).
    PerModel,
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
        let text = std::fs::read_to_string(manifest_path).map_err(|e| {
            Problem::new(manifest_path, format!("cannot read the manifest: {e}"))
                .help("run mccbuild in a folder holding contest.toml, or pass --manifest PATH")
        })?;
        Contest::parse(manifest_path, &text)
    }

    pub fn parse(manifest_path: &Path, text: &str) -> Result<Contest, Problems> {
        let source = SourceText {
            path: manifest_path,
            text,
        };
        let file: ManifestFile = read_toml(&source, MANIFEST_HELP)?;
        let root = manifest_root(manifest_path);
        let rules_path = root.join(file.contest.rules.get_ref());
        let edition = load_edition(&source, &file.contest.rules, &rules_path)?;
        let mut reading = Reading {
            source,
            root,
            edition,
            problems: Problems::default(),
            allowed_cores: file.limits.cores.clone().unwrap_or_else(|| vec![1, 4]),
        };
        let (executor, shared_store) = reading.executor(&file);
        let (mut models, model_kinds) = reading.declared_models(&file);
        let model_kinds = reading.input_models(&file, &mut models, model_kinds);
        let results = reading.results_files(&file);
        let reference = reading.reference(&file);
        let corrections = reading.corrections(&file);
        reading.check_instance_names(&mut models);
        if models.is_empty() && results.is_empty() {
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
            time_s: file.limits.time_s,
            memory_mb: file.limits.memory_mb,
            time: file.limits.time,
            models,
            tools,
            results,
            model_kinds,
            reference,
            corrections,
        })
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
fn at(span: Range<usize>) -> Option<Range<usize>> {
    if span.is_empty() {
        None
    } else {
        Some(span)
    }
}

/// A manifest being read: its text, folder and edition, and the problems found so far.
struct Reading<'a> {
    source: SourceText<'a>,
    root: PathBuf,
    edition: Arc<Edition>,
    problems: Problems,
    /// `[limits] cores`, or E-5.3/E-5.4's 1 and 4.
    allowed_cores: Vec<u32>,
}

impl Reading<'_> {
    /// `[executor]` with `[executor.qemu]` and `[executor.slurm]`, and `[limits]`; the shared
    /// store Slurm names, if any.
    fn executor(&mut self, file: &ManifestFile) -> (ExecutorConfig, Option<PathBuf>) {
        let (source, problems) = (&self.source, &mut self.problems);
        let (slurm, shared_store) =
            slurm_config(source, file.executor.slurm.as_ref(), &self.root, problems);
        if file.executor.slurm.is_some() && file.executor.kind != ExecutorKind::Slurm {
            problems.push(
                source
                    .problem_at(
                        file.executor.slurm.as_ref().map(|s| s.span()),
                        "[executor.slurm] is given but [executor] kind is not \"slurm\"",
                    )
                    .help("set `kind = \"slurm\"` in [executor], or remove [executor.slurm]"),
            );
        }
        let jobs = file.executor.jobs.unwrap_or(1);
        if jobs == 0 {
            problems.push(source.problem_at(
                key_span(source.text, "executor", "jobs"),
                "[executor] jobs must be at least 1",
            ));
        }
        for (name, value) in [
            ("time_s", file.limits.time_s),
            ("memory_mb", file.limits.memory_mb),
        ] {
            if value == Some(0) {
                problems.push(source.problem_at(
                    key_span(source.text, "limits", name),
                    format!("[limits] {name} must be positive"),
                ));
            }
        }
        if let Some(mb) = file
            .limits
            .memory_mb
            .filter(|&mb| mb > 0 && mb < MIN_MEMORY_MB)
        {
            problems.push(
                source.problem_at(
                    key_span(source.text, "limits", "memory_mb"),
                    format!("[limits] memory_mb = {mb}: no tool can start in less than {MIN_MEMORY_MB} MB (a shell and a JVM or Python alone need more); every run would be a memory-out"),
                )
                .help("the edition's limit is 16384 MB (E-5.3/E-5.4); the demo uses 2048"),
            );
        }
        let cpu_model = file
            .limits
            .cpu_model
            .clone()
            .unwrap_or_else(|| self.edition.vm.cpu_model.clone());
        let qemu = qemu_config(
            source,
            &self.root,
            file.executor.qemu.as_ref(),
            file.executor.kind,
            cpu_model,
            &file.tools,
            problems,
        );
        let executor = ExecutorConfig {
            kind: file.executor.kind,
            jobs,
            qemu,
            slurm,
        };
        (executor, shared_store)
    }

    /// The `[[model]]`s with instances, and the kinds given to the others (models whose
    /// instances come from `inputs` or `results`).
    fn declared_models(&mut self, file: &ManifestFile) -> (Vec<Model>, BTreeMap<String, usize>) {
        let (source, root, edition) = (&self.source, &self.root, &self.edition);
        let problems = &mut self.problems;
        // Models and their instances.
        let mut models: Vec<Model> = Vec::new();
        let mut model_kinds: BTreeMap<String, usize> = BTreeMap::new();
        for spanned in &file.models {
            let m = spanned.get_ref();
            if models.iter().any(|known| known.name == m.name) || model_kinds.contains_key(&m.name)
            {
                problems.push(source.problem_at(
                    Some(spanned.span()),
                    format!("model `{}` is declared twice", m.name),
                ));
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
                problems.push(source.problem_at(
                    Some(spanned.span()),
                    format!("model `{}` lists no instances", m.name),
                ));
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
    fn input_models(
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
                    Err(message) => problems
                        .push(source.problem_at(Some(inputs.span()), format!("inputs: {message}"))),
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

    /// Each model's instances sorted and unique; an instance in two models is a problem.
    fn check_instance_names(&mut self, models: &mut [Model]) {
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

    /// The `[[tool]]`s.
    fn tools(&mut self, file: &ManifestFile, results: &[PathBuf]) -> Vec<Tool> {
        let mut tools: Vec<Tool> = Vec::new();
        let mut tool_names = HashSet::new();
        for spanned in &file.tools {
            let name = &spanned.get_ref().name;
            if !tool_names.insert(name.clone()) {
                self.problems.push(self.source.problem_at(
                    Some(spanned.span()),
                    format!("tool `{name}` is declared twice"),
                ));
                continue;
            }
            tools.push(self.tool(spanned, results));
        }
        if tools.is_empty() {
            self.problems.push(
                Problem::new(self.source.path, "the contest has no tools").help("add a [[tool]]"),
            );
        }
        tools
    }

    /// One `[[tool]]`, checked.
    fn tool(&mut self, spanned: &Spanned<ToolSection>, results: &[PathBuf]) -> Tool {
        let t = spanned.get_ref();
        let here = Some(spanned.span());
        let (source, problems) = (&self.source, &mut self.problems);
        let cores = *t.cores.get_ref();
        if t.name.is_empty()
            || !t
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.+".contains(c))
        {
            problems.push(
                source
                    .problem_at(
                        here.clone(),
                        format!("tool name `{}` must be letters, digits and - _ . +", t.name),
                    )
                    .help("it becomes BK_TOOL and a file name"),
            );
        }
        if !self.allowed_cores.contains(&cores) {
            problems.push(
                source
                    .problem_at(
                        at(t.cores.span()).or(here.clone()),
                        format!("tool `{}`: cores = {cores}", t.name),
                    )
                    .help(if self.allowed_cores == [1, 4] {
                        "rules E-5.3 and E-5.4 allow 1 (sequential tools) or 4 (parallel tools)"
                            .to_string()
                    } else {
                        format!("[limits] cores allows {:?}", self.allowed_cores)
                    }),
            );
        }
        if let Some(bk) = &t.bk_tool {
            if bk.get_ref().is_empty()
                || !bk
                    .get_ref()
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.+".contains(c))
            {
                problems.push(
                    source
                        .problem_at(
                            at(bk.span()).or(here.clone()),
                            format!(
                                "tool `{}`: bk_tool `{}` must be letters, digits and - _ . +",
                                t.name,
                                bk.get_ref()
                            ),
                        )
                        .help("it is the BK_TOOL the tool's entry reads"),
                );
            }
        }
        for package in &t.host_packages {
            let name = package.get_ref();
            let valid = name.len() >= 2
                && name.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
                && name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "+-.:".contains(c));
            if !valid {
                problems.push(
                    source
                        .problem_at(
                            at(package.span()).or(here.clone()),
                            format!(
                                "tool `{}`: host_packages: `{name}` is not a Debian package name",
                                t.name
                            ),
                        )
                        .help("lower-case letters, digits and + - . (an architecture after `:`), as `dpkg-query -W` lists them"),
                );
            }
        }
        let dir = t.dir.as_ref().map(|d| {
            let dir = self.root.join(d.get_ref());
            std::path::absolute(&dir).unwrap_or(dir)
        });
        self.check_tool_dir(t, here.clone(), dir.as_deref(), results);
        let examinations = self.tool_examinations(t, here);
        let setup_inputs = self.setup_inputs(t);
        Tool {
            name: t.name.clone(),
            bk_tool: t
                .bk_tool
                .as_ref()
                .map_or_else(|| t.name.clone(), |b| b.get_ref().clone()),
            kind: t.kind,
            user: t.user,
            host_packages: t
                .host_packages
                .iter()
                .map(|p| p.get_ref().clone())
                .collect(),
            family: t.family.clone().unwrap_or_else(|| t.name.clone()),
            cores,
            dir,
            entry: t.entry.clone(),
            setup: t.setup.clone(),
            setup_inputs,
            examinations,
        }
    }

    /// A tool is a folder with an executable entry inside it, unless its runs come from
    /// results files.
    fn check_tool_dir(
        &mut self,
        t: &ToolSection,
        here: Option<Range<usize>>,
        dir: Option<&Path>,
        results: &[PathBuf],
    ) {
        let (source, problems) = (&self.source, &mut self.problems);
        match (&t.dir, dir) {
            (None, _) if results.is_empty() => problems.push(
                source
                    .problem_at(here, format!("tool `{}` has no `dir`", t.name))
                    .help("a tool is a folder (`dir`), unless its runs come from `results` files"),
            ),
            (None, _) if t.setup.is_some() => {
                problems
                    .push(source.problem_at(here, format!("tool `{}`: setup without dir", t.name)));
            }
            (Some(spanned), Some(dir)) if !dir.is_dir() => problems.push(
                source
                    .problem_at(
                        Some(spanned.span()),
                        format!("tool `{}`: folder {} does not exist", t.name, dir.display()),
                    )
                    .help("`dir` is relative to the manifest"),
            ),
            (Some(_), Some(dir)) => {
                let entry = dir.join(&t.entry);
                match std::fs::metadata(&entry) {
                    Err(_) => problems.push(
                        source
                            .problem_at(
                                here.clone(),
                                format!(
                                    "tool `{}`: entry {} does not exist",
                                    t.name,
                                    entry.display()
                                ),
                            )
                            .help(
                                "`entry` is relative to the tool's dir (default BenchKit_head.sh)",
                            ),
                    ),
                    Ok(meta) if !meta.is_file() || meta.permissions().mode() & 0o111 == 0 => {
                        problems.push(
                            source
                                .problem_at(
                                    here.clone(),
                                    format!(
                                        "tool `{}`: entry {} is not an executable file",
                                        t.name,
                                        entry.display()
                                    ),
                                )
                                .help(format!("make it executable: chmod +x {}", entry.display())),
                        )
                    }
                    Ok(_) => {}
                }
                if Path::new(&t.entry).is_absolute()
                    || Path::new(&t.entry)
                        .components()
                        .any(|c| c == std::path::Component::ParentDir)
                {
                    problems.push(source.problem_at(
                        here,
                        format!(
                            "tool `{}`: entry must be a path inside the tool's dir",
                            t.name
                        ),
                    ));
                }
            }
            _ => {}
        }
    }

    /// The examinations a tool takes part in: "all", categories and examinations.
    fn tool_examinations(&mut self, t: &ToolSection, here: Option<Range<usize>>) -> Vec<ExamId> {
        let edition = &self.edition;
        let mut examinations = Vec::new();
        for name in t.examinations.get_ref() {
            if name == "all" {
                examinations.extend(0..edition.examinations.len());
            } else if let Some(exam) = edition.examination(name) {
                examinations.push(exam);
            } else if let Some(category) = edition.category(name) {
                examinations.extend(edition.categories[category].examinations.iter().copied());
            } else {
                self.problems.push(
                    self.source
                        .problem_at(
                            at(t.examinations.span()).or(here.clone()),
                            format!("tool `{}`: unknown examination `{name}`", t.name),
                        )
                        .help(format!(
                            "use \"all\", a category or an examination of {}: {}",
                            edition.info.name,
                            edition
                                .examinations
                                .iter()
                                .map(|e| e.name.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        )),
                );
            }
        }
        examinations.sort_unstable();
        examinations.dedup();
        examinations
    }

    /// `setup_inputs`: the globs of the files a tool's setup reads.
    fn setup_inputs(&mut self, t: &ToolSection) -> Option<Vec<glob::Pattern>> {
        let list = t.setup_inputs.as_ref()?;
        let mut patterns = Vec::new();
        for p in list.get_ref() {
            match glob::Pattern::new(p) {
                Ok(p) => patterns.push(p),
                Err(e) => self.problems.push(self.source.problem_at(
                    Some(list.span()),
                    format!("tool `{}`: bad setup_inputs pattern `{p}`: {e}", t.name),
                )),
            }
        }
        if t.setup.is_none() {
            self.problems.push(self.source.problem_at(
                Some(list.span()),
                format!("tool `{}`: setup_inputs without setup", t.name),
            ));
        }
        Some(patterns)
    }
}

/// Resolves and checks `[executor.qemu]`. The guest's files must exist when the executor is
/// `qemu` (their digests are part of every run key).
fn qemu_config(
    source: &SourceText<'_>,
    root: &Path,
    section: Option<&Spanned<QemuSection>>,
    kind: ExecutorKind,
    cpu_model: String,
    tools: &[Spanned<ToolSection>],
    problems: &mut Problems,
) -> QemuConfig {
    let empty = QemuSection::default();
    let mut q = QemuReading {
        source,
        root,
        section,
        q: section.map_or(&empty, Spanned::get_ref),
        active: kind == ExecutorKind::Qemu,
        problems,
    };
    let guest = match q.choice("guest", &q.q.guest, &["kernel", "image"]) {
        Some(1) => GuestKind::Image,
        _ => GuestKind::Kernel,
    };
    let accel = match q.choice("accel", &q.q.accel, &["auto", "kvm", "tcg"]) {
        Some(1) => Accel::Kvm,
        Some(2) => Accel::Tcg,
        _ => Accel::Auto,
    };
    let (kernel, initrd) = q.kernel_files(guest == GuestKind::Kernel);
    let images = if guest == GuestKind::Image {
        q.images(tools)
    } else {
        BTreeMap::new()
    };
    let ssh_key = q.ssh_key(guest == GuestKind::Image, &images);
    let boot_timeout_s = q.q.boot_timeout_s.as_ref().map_or(120, |b| *b.get_ref());
    if boot_timeout_s == 0 {
        let span = q.at(q.q.boot_timeout_s.as_ref().map(Spanned::span));
        q.problems
            .push(source.problem_at(span, "[executor.qemu] boot_timeout_s must be positive"));
    }
    if cpu_model.is_empty()
        || !cpu_model
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.,=+".contains(c))
    {
        q.problems.push(
            Problem::new(
                source.path,
                format!("[limits] cpu_model `{cpu_model}` is not a QEMU CPU model"),
            )
            .help("e.g. \"Westmere\" (qemu-system-x86_64 -cpu help lists them)"),
        );
    }
    QemuConfig {
        guest,
        kernel,
        initrd,
        images,
        ssh_key,
        accel,
        boot_timeout_s,
        binary: q
            .q
            .binary
            .clone()
            .unwrap_or_else(|| "qemu-system-x86_64".to_string()),
        cpu_model,
    }
}

/// `[executor.qemu]` being read.
struct QemuReading<'a, 'b> {
    source: &'a SourceText<'b>,
    root: &'a Path,
    section: Option<&'a Spanned<QemuSection>>,
    q: &'a QemuSection,
    /// The executor is `qemu`: the guest's files must exist.
    active: bool,
    problems: &'a mut Problems,
}

impl QemuReading<'_, '_> {
    /// A span, or the section's.
    fn at(&self, span: Option<Range<usize>>) -> Option<Range<usize>> {
        span.or_else(|| self.section.map(Spanned::span))
    }

    /// Which of `allowed` a field is (an unknown word is a problem).
    fn choice(
        &mut self,
        field: &str,
        value: &Option<Spanned<String>>,
        allowed: &[&str],
    ) -> Option<usize> {
        let v = value.as_ref()?;
        let found = allowed.iter().position(|a| a == v.get_ref());
        if found.is_none() {
            let span = self.at(Some(v.span()));
            self.problems.push(
                self.source
                    .problem_at(
                        span,
                        format!("[executor.qemu] {field} = \"{}\" is not known", v.get_ref()),
                    )
                    .help(format!("use one of: {}", allowed.join(", "))),
            );
        }
        found
    }

    fn must_exist(&mut self, field: &str, span: Option<Range<usize>>, file: &Path, fix: &str) {
        if self.active && !file.is_file() {
            let span = self.at(span);
            self.problems.push(
                self.source
                    .problem_at(
                        span,
                        format!("[executor.qemu] {field}: {} does not exist", file.display()),
                    )
                    .help(fix.to_string()),
            );
        }
    }

    /// The kernel and initramfs (checked when the guest is of the kernel kind).
    fn kernel_files(&mut self, checked: bool) -> (PathBuf, PathBuf) {
        let path = |p: &Option<Spanned<String>>, default: &str| {
            self.root
                .join(p.as_ref().map_or(default, |s| s.get_ref().as_str()))
        };
        let kernel = path(&self.q.kernel, "target/qemu-guest/vmlinux");
        let initrd = path(&self.q.initrd, "target/qemu-guest/initrd.gz");
        if checked {
            let fix = "build the kernel-kind guest with scripts/guest-kernel (or set `kernel` and `initrd`, relative to the manifest)";
            let q = self.q;
            self.must_exist("kernel", q.kernel.as_ref().map(Spanned::span), &kernel, fix);
            self.must_exist("initrd", q.initrd.as_ref().map(Spanned::span), &initrd, fix);
        }
        (kernel, initrd)
    }

    /// Each tool's disk image (`images.<tool>`, else `image`).
    fn images(&mut self, tools: &[Spanned<ToolSection>]) -> BTreeMap<String, PathBuf> {
        let fix = "build a BenchKit-style image with scripts/guest-image, or set `image`/`images` (relative to the manifest)";
        let q = self.q;
        let mut images = BTreeMap::new();
        for tool in tools {
            let t = tool.get_ref();
            if t.dir.is_none() {
                continue;
            }
            let (spanned, field) = match (q.images.get(&t.name), &q.image) {
                (Some(s), _) => (s, format!("images.{}", t.name)),
                (None, Some(s)) => (s, "image".to_string()),
                (None, None) => {
                    if self.active {
                        let span = self.at(None);
                        self.problems.push(
                            self.source
                                .problem_at(span, format!("[executor.qemu] guest = \"image\" and tool `{}` has no image", t.name))
                                .help("set `image` (every tool) or `images.<tool>` in [executor.qemu]; scripts/guest-image builds one"),
                        );
                    }
                    continue;
                }
            };
            let file = self.root.join(spanned.get_ref());
            self.must_exist(&field, Some(spanned.span()), &file, fix);
            images.insert(t.name.clone(), file);
        }
        for (name, spanned) in &q.images {
            if !tools.iter().any(|t| &t.get_ref().name == name) {
                let span = self.at(Some(spanned.span()));
                self.problems.push(
                    self.source
                        .problem_at(span, format!("[executor.qemu] images: no tool `{name}`")),
                );
            }
        }
        images
    }

    /// The images' ssh key (`ssh_key`, else `<image>.key` beside each image).
    fn ssh_key(&mut self, checked: bool, images: &BTreeMap<String, PathBuf>) -> Option<PathBuf> {
        let q = self.q;
        let ssh_key = q.ssh_key.as_ref().map(|k| self.root.join(k.get_ref()));
        if checked {
            let keys: Vec<PathBuf> = match &ssh_key {
                Some(key) => vec![key.clone()],
                None => images
                    .values()
                    .filter(|i| i.is_file())
                    .map(|i| i.with_extension("key"))
                    .collect(),
            };
            for key in keys {
                self.must_exist("ssh_key", q.ssh_key.as_ref().map(Spanned::span), &key, "scripts/guest-image writes the key next to the image (<image>.key); or set `ssh_key`");
            }
        }
        ssh_key
    }
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

/// Validates `[executor.slurm]`; returns its settings and the shared store's path, if given.
fn slurm_config(
    source: &SourceText<'_>,
    section: Option<&Spanned<SlurmSection>>,
    root: &Path,
    problems: &mut Problems,
) -> (SlurmConfig, Option<PathBuf>) {
    let mut config = SlurmConfig {
        attempts: 3,
        ..SlurmConfig::default()
    };
    let Some(section) = section else {
        return (config, None);
    };
    let s = section.get_ref();
    let mut word = |field: &str, value: &Option<Spanned<String>>| -> Option<String> {
        let value = value.as_ref()?;
        let text = value.get_ref();
        if text.is_empty() || text.chars().any(|c| c.is_whitespace() || c.is_control()) {
            problems.push(
                source
                    .problem_at(
                        Some(value.span()),
                        format!("[executor.slurm] {field} `{text}` is not a Slurm name"),
                    )
                    .help(format!(
                        "give the {field}'s name as `sinfo`/`sacctmgr` show it, one word"
                    )),
            );
            return None;
        }
        Some(text.clone())
    };
    config.partition = word("partition", &s.partition);
    config.account = word("account", &s.account);
    config.qos = word("qos", &s.qos);
    for (field, options, out) in [
        (
            "sbatch_options",
            &s.sbatch_options,
            &mut config.sbatch_options,
        ),
        ("srun_options", &s.srun_options, &mut config.srun_options),
    ] {
        for option in options {
            let text = option.get_ref();
            if !text.starts_with('-') || text.contains('\n') {
                problems.push(
                    source
                        .problem_at(
                            Some(option.span()),
                            format!("[executor.slurm] {field}: `{text}` is not an option"),
                        )
                        .help("give each option as one string starting with `-`, e.g. \"--time=2:00:00\""),
                );
            } else {
                out.push(text.clone());
            }
        }
    }
    slurm_run_settings(source, s, root, &mut config, problems);
    let shared = shared_store(source, s, root, problems);
    config.shared_store = shared.is_some();
    if let Some(steps) = &s.steps {
        match steps.get_ref().as_str() {
            "run" => config.steps = SlurmSteps::PerRun,
            "model" => config.steps = SlurmSteps::PerModel,
            other => problems.push(
                source
                    .problem_at(
                        Some(steps.span()),
                        format!("[executor.slurm] steps `{other}` is neither \"run\" nor \"model\""),
                    )
                    .help("\"run\": a job step per run (the default); \"model\": one step per model's job"),
            ),
        }
    }
    (config, shared)
}

/// `mccbuild`, `cpus_per_job`, `attempts` of `[executor.slurm]`.
fn slurm_run_settings(
    source: &SourceText<'_>,
    s: &SlurmSection,
    root: &Path,
    config: &mut SlurmConfig,
    problems: &mut Problems,
) {
    if let Some(exe) = &s.mccbuild {
        let path = root.join(exe.get_ref());
        if exe.get_ref().is_empty() {
            problems.push(
                source
                    .problem_at(Some(exe.span()), "[executor.slurm] mccbuild is empty")
                    .help("give the path of the mccbuild binary as the nodes see it, or remove the key"),
            );
        } else {
            config.mccbuild = Some(path);
        }
    }
    for (field, value) in [("cpus_per_job", &s.cpus_per_job), ("attempts", &s.attempts)] {
        if let Some(v) = value {
            if *v.get_ref() == 0 {
                problems.push(
                    source
                        .problem_at(
                            Some(v.span()),
                            format!("[executor.slurm] {field} must be at least 1"),
                        )
                        .help(MANIFEST_HELP),
                );
            }
        }
    }
    config.cpus_per_job = s
        .cpus_per_job
        .as_ref()
        .map(|v| *v.get_ref())
        .filter(|&v| v > 0);
    if let Some(a) = s.attempts.as_ref().map(|v| *v.get_ref()).filter(|&v| v > 0) {
        config.attempts = a;
    }
}

/// `shared_store`: a folder every node sees at the same path.
fn shared_store(
    source: &SourceText<'_>,
    s: &SlurmSection,
    root: &Path,
    problems: &mut Problems,
) -> Option<PathBuf> {
    match &s.shared_store {
        Some(path) if path.get_ref().is_empty() => {
            problems.push(
                source
                    .problem_at(Some(path.span()), "[executor.slurm] shared_store is empty")
                    .help("give a folder every node sees at the same path, or remove the key to use [contest] store"),
            );
            None
        }
        Some(path) => Some(root.join(path.get_ref())),
        None => None,
    }
}

/// Where `key` of table `[table]` is written in a manifest (for a problem with a value serde read
/// without its place): its line in the table, else the table's header, else the file's start.
fn key_span(text: &str, table: &str, key: &str) -> Option<std::ops::Range<usize>> {
    let mut offset = 0;
    let mut in_table = false;
    let mut header = None;
    for line in text.split_inclusive('\n') {
        let t = line.trim_start();
        if t.starts_with('[') {
            let name = t
                .trim_start_matches('[')
                .split(']')
                .next()
                .unwrap_or("")
                .trim();
            in_table = name == table;
            if in_table && header.is_none() {
                header = Some(offset..offset + line.len());
            }
        } else if in_table
            && t.strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with('='))
        {
            let start = offset + (line.len() - t.len());
            return Some(start..start + key.len());
        }
        offset += line.len();
    }
    header.or(Some(0..0))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The demo's manifest edited: scoring settings keep the plan, anything else does not.
    #[test]
    fn only_scoring_settings_keep_the_plan() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../contest.toml");
        let text = std::fs::read_to_string(&path).unwrap();
        let base = Contest::parse(&path, &text).unwrap();
        let edited = |from: &str, to: &str| {
            assert!(text.contains(from), "{from}");
            Contest::parse(&path, &text.replacen(from, to, 1)).unwrap()
        };
        assert!(base.same_plan_as(&Contest::parse(&path, &format!("{text}\n# x\n")).unwrap()));
        assert!(base.same_plan_as(&edited("name = \"mccbuild demo\"", "name = \"demo\"")));
        let reference = edited(
            "dir = \"tools/pm4py\"",
            "dir = \"tools/pm4py\"\nkind = \"reference\"\nfamily = \"pm\"",
        );
        assert_ne!(reference.tools, base.tools);
        assert!(base.same_plan_as(&reference));
        // In the runs' keys, or which runs there are: planned again.
        assert!(!base.same_plan_as(&edited("time_s = 10", "time_s = 20")));
        assert!(!base.same_plan_as(&edited(
            "examinations = [\"StateSpace\", \"GlobalProperties\", \"UpperBounds\"]",
            "examinations = [\"StateSpace\"]"
        )));
    }

    #[test]
    fn mcc_model_names() {
        assert_eq!(
            mcc_model_name("Philosophers-PT-000005"),
            Some("Philosophers")
        );
        assert_eq!(
            mcc_model_name("Philosophers-COL-000005"),
            Some("Philosophers")
        );
        assert_eq!(mcc_model_name("Referendum-COL-0010"), Some("Referendum"));
        assert_eq!(mcc_model_name("ASLink-PT-01a"), Some("ASLink"));
        assert_eq!(mcc_model_name("NoNaming"), None);
        assert_eq!(mcc_model_name("-PT-1"), None);
    }

    /// Found by the manifest property (a million manifests): `[limits] memory_mb = 2` and other
    /// values checked after reading were reported without their line.
    #[test]
    fn limits_problems_are_at_their_line() {
        let text = "[contest]\nname = \"x\"\n\n[limits]\ntime_s = 0\nmemory_mb = 2\n\n[executor]\njobs = 0\n";
        let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../contest.toml"));
        let text = text.replace(
            "name = \"x\"\n",
            "name = \"x\"\nrules = \"rules/mcc-2026.toml\"\n",
        );
        let problems = Contest::parse(path, &text).unwrap_err();
        let line_of = |needle: &str| {
            problems
                .0
                .iter()
                .find(|p| p.message.contains(needle))
                .unwrap_or_else(|| panic!("no `{needle}` in {problems}"))
                .location
                .map(|l| l.line)
        };
        assert_eq!(line_of("time_s must be positive"), Some(6));
        assert_eq!(line_of("memory_mb = 2"), Some(7));
        assert_eq!(line_of("jobs must be at least 1"), Some(10));
    }
}

/// The manifest reader on generated manifests (issue 13, item 10): the repository's demo
/// contest.toml edited at random (TOML punctuation, keys, values of every type), and arbitrary
/// text. It never panics, and every problem names a file (the manifest, or the file it is about)
/// and, in the manifest, its line. `MCCBUILD_PROPTEST_CASES` sets the number of manifests
/// (scripts/bench-fuzz runs a million).
#[cfg(test)]
mod properties {
    use super::*;
    use crate::model_files::properties::{cases, edited};
    use proptest::collection::vec;
    use proptest::prelude::*;

    const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

    fn base() -> String {
        std::fs::read_to_string(format!("{REPO}/contest.toml")).unwrap()
    }

    fn edits() -> impl Strategy<Value = Vec<(prop::sample::Index, usize, Vec<u8>)>> {
        const SNIPPETS: &[&str] = &[
            "",
            "[",
            "]",
            "[[",
            "]]",
            "=",
            "\"",
            "'",
            "\"\"\"",
            "{",
            "}",
            ",",
            "#",
            "\n",
            ".",
            "[[tool]]\n",
            "[[model]]\n",
            "[limits]\n",
            "[executor]\n",
            "[contest]\n",
            "name = \"x\"\n",
            "kind = \"surprise\"\n",
            "instances = []\n",
            "examinations = [\"Nope\"]\n",
            "cores = 0\n",
            "time_s = -1\n",
            "memory_mb = 1e400\n",
            "jobs = 18446744073709551616\n",
            "dir = \"/\"\n",
            "dir = \"../../..\"\n",
            "instances = [\"models/*\"]\n",
            "rules = \"/dev/null\"\n",
            "unknown = 1\n",
            "true",
            "2026-11-24T00:00:00Z",
            "\\u0000",
            "é",
            "\t",
            "\r\n",
        ];
        let snippet = prop_oneof![
            5 => proptest::sample::select(SNIPPETS).prop_map(|s| s.as_bytes().to_vec()),
            1 => vec(any::<u8>(), 0..8),
        ];
        vec((any::<prop::sample::Index>(), 0usize..30, snippet), 0..5)
    }

    fn manifest() -> impl Strategy<Value = String> {
        let base = base();
        prop_oneof![
            6 => edits().prop_map(move |e| String::from_utf8_lossy(&edited(base.as_bytes(), &e)).into_owned()),
            1 => vec(any::<char>(), 0..300).prop_map(|c| c.into_iter().collect()),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(cases()))]

        #[test]
        fn manifests_are_read_or_refused_naming_file_and_line(text in manifest()) {
            let path = Path::new(REPO).join("contest.toml");
            if let Err(problems) = Contest::parse(&path, &text) {
                prop_assert!(!problems.is_empty());
                let lines = text.split('\n').count();
                for p in &problems.0 {
                    prop_assert!(!p.file.as_os_str().is_empty(), "{}", p);
                    if p.file == path {
                        let Some(at) = p.location else {
                            return Err(TestCaseError::fail(format!("a problem of the manifest without its line: {p}")));
                        };
                        prop_assert!(at.line >= 1 && at.line <= lines, "{} (of {} lines)", p, lines);
                    }
                }
            }
        }
    }
}
