//! The tables and keys of `contest.toml` as written, before any check of what they name
//! (docs/manifest.md), read key by key: every unknown key, missing key and value of the wrong
//! kind is reported at once, each at its place, and read as absent, so that the checks that
//! follow still run on the rest. Values keep their place in the file (`Spanned`) so that a
//! problem found later can name it.

use std::borrow::Cow;
use std::collections::BTreeMap;

use toml::Spanned;
use toml::de::DeValue;

use mccbuild_core::toml_table::{FromToml, Mismatch, Table, TomlReader};
use mccbuild_rules::edition::TimeLimit;
use mccbuild_rules::reference::Basis;

use super::{ExecutorKind, RunUser, ToolKind};

#[derive(Debug)]
pub(super) struct ManifestFile {
    pub(super) contest: ContestSection,
    pub(super) executor: ExecutorSection,
    pub(super) limits: LimitsSection,
    pub(super) models: Vec<Spanned<ModelSection>>,
    pub(super) tools: Vec<Spanned<ToolSection>>,
    pub(super) reference: Option<ReferenceSection>,
    /// How many `[[model]]` and `[[tool]]` tables the file has, read or not (a table too broken
    /// to read is not "no tools").
    pub(super) model_tables: usize,
    pub(super) tool_tables: usize,
}

/// `[reference]` as written (docs/manifest.md): reference answers to judge the tools against.
#[derive(Debug)]
pub(super) struct ReferenceSection {
    pub(super) answers: Spanned<String>,
    pub(super) basis: Basis,
}

#[derive(Debug, Default)]
pub(super) struct ContestSection {
    pub(super) name: String,
    /// Absent (a problem already reported): nothing that needs the edition is checked.
    pub(super) rules: Option<Spanned<String>>,
    pub(super) store: Option<String>,
    pub(super) inputs: Option<Spanned<OneOrMany>>,
    /// Of `inputs`, only the first this many instances of each `<Model>-<PT|COL>`, by name.
    pub(super) inputs_per_model: Option<Spanned<usize>>,
    pub(super) results: Option<Spanned<OneOrMany>>,
    /// The organisers' decided values (E-6.3): a CSV of instance, examination, id, value.
    pub(super) corrections: Option<Spanned<String>>,
}

/// A string or a list of strings (`inputs`, `results`).
#[derive(Debug)]
pub(super) enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    pub(super) fn items(&self) -> Vec<&str> {
        match self {
            OneOrMany::One(s) => vec![s.as_str()],
            OneOrMany::Many(v) => v.iter().map(String::as_str).collect(),
        }
    }
}

impl FromToml for OneOrMany {
    fn what() -> Cow<'static, str> {
        "a string or a list of strings".into()
    }
    fn plural() -> Cow<'static, str> {
        "strings or lists of strings".into()
    }
    fn example() -> Cow<'static, str> {
        "[\"...\"]".into()
    }
    fn from_toml(value: &Spanned<DeValue<'_>>) -> Result<Self, Mismatch> {
        match value.get_ref() {
            DeValue::String(s) => Ok(OneOrMany::One(s.to_string())),
            DeValue::Array(_) => Vec::from_toml(value).map(OneOrMany::Many),
            other => Err(Mismatch::of(other)),
        }
    }
}

#[derive(Debug, Default)]
pub(super) struct ExecutorSection {
    pub(super) kind: ExecutorKind,
    pub(super) jobs: Option<Spanned<usize>>,
    pub(super) qemu: Option<Spanned<QemuSection>>,
    /// `[executor.slurm]`: settings of the Slurm executor.
    pub(super) slurm: Option<Spanned<SlurmSection>>,
}

/// `[executor.qemu]` (docs/manifest.md).
#[derive(Debug, Default)]
pub(super) struct QemuSection {
    pub(super) guest: Option<Spanned<String>>,
    pub(super) kernel: Option<Spanned<String>>,
    pub(super) initrd: Option<Spanned<String>>,
    pub(super) image: Option<Spanned<String>>,
    pub(super) images: BTreeMap<String, Spanned<String>>,
    pub(super) ssh_key: Option<Spanned<String>>,
    pub(super) accel: Option<Spanned<String>>,
    pub(super) boot_timeout_s: Option<Spanned<u64>>,
    pub(super) binary: Option<String>,
    pub(super) kernel_args: Option<Spanned<String>>,
}

/// `[executor.slurm]` as written (docs/manifest.md).
#[derive(Debug, Default)]
pub(super) struct SlurmSection {
    pub(super) partition: Option<Spanned<String>>,
    pub(super) account: Option<Spanned<String>>,
    pub(super) qos: Option<Spanned<String>>,
    pub(super) sbatch_options: Vec<Spanned<String>>,
    pub(super) srun_options: Vec<Spanned<String>>,
    pub(super) shared_store: Option<Spanned<String>>,
    pub(super) mccbuild: Option<Spanned<String>>,
    pub(super) cpus_per_job: Option<Spanned<u32>>,
    pub(super) attempts: Option<Spanned<u32>>,
    pub(super) steps: Option<Spanned<String>>,
}

#[derive(Debug, Default)]
pub(super) struct LimitsSection {
    pub(super) time_s: Option<Spanned<u64>>,
    pub(super) memory_mb: Option<Spanned<u64>>,
    /// Which time `time_s` limits (`cpu`, `wall`, `both`), instead of the edition's.
    pub(super) time: Option<TimeLimit>,
    /// The core counts a tool may ask for, instead of E-5.3/E-5.4's 1 and 4 (a machine with
    /// 2 cores, a qualification round).
    pub(super) cores: Option<Spanned<Vec<u32>>>,
    /// The VMs' CPU model (QEMU executor), instead of the edition's.
    pub(super) cpu_model: Option<String>,
}

#[derive(Debug)]
pub(super) struct ModelSection {
    pub(super) name: String,
    /// Absent: the edition's default kind (E-4.4).
    pub(super) kind: Option<Spanned<String>>,
    /// Absent: the model's instances come from `inputs` or `results` (this entry gives its kind).
    pub(super) instances: Option<Vec<Spanned<String>>>,
}

#[derive(Debug)]
pub(super) struct ToolSection {
    pub(super) name: String,
    /// BK_TOOL: absent, the tool's name.
    pub(super) bk_tool: Option<Spanned<String>>,
    pub(super) kind: ToolKind,
    /// Who its runs execute as: `mcc` (default) or `root`.
    pub(super) user: RunUser,
    /// Debian packages of the host whose versions are part of its runs' keys.
    pub(super) host_packages: Vec<Spanned<String>>,
    pub(super) family: Option<String>,
    /// Absent: 1, with an empty span (not written in the file).
    pub(super) cores: Spanned<u32>,
    /// Absent: a tool whose runs come from `results` files (this entry gives its kind, family).
    pub(super) dir: Option<Spanned<String>>,
    pub(super) entry: String,
    pub(super) setup: Option<String>,
    pub(super) setup_inputs: Option<Spanned<Vec<String>>>,
    /// Absent: `["all"]`, with an empty span.
    pub(super) examinations: Spanned<Vec<String>>,
}

const TOP: &[&str] = &[
    "contest",
    "executor",
    "limits",
    "model",
    "tool",
    "reference",
];
const CONTEST: &[&str] = &[
    "name",
    "rules",
    "store",
    "inputs",
    "inputs_per_model",
    "results",
    "corrections",
];
const EXECUTOR: &[&str] = &["kind", "jobs", "qemu", "slurm"];
const QEMU: &[&str] = &[
    "guest",
    "kernel",
    "initrd",
    "image",
    "images",
    "ssh_key",
    "accel",
    "boot_timeout_s",
    "binary",
    "kernel_args",
];
const SLURM: &[&str] = &[
    "partition",
    "account",
    "qos",
    "sbatch_options",
    "srun_options",
    "shared_store",
    "mccbuild",
    "cpus_per_job",
    "attempts",
    "steps",
];
const LIMITS: &[&str] = &["time_s", "memory_mb", "time", "cores", "cpu_model"];
const MODEL: &[&str] = &["name", "kind", "instances"];
const TOOL: &[&str] = &[
    "name",
    "bk_tool",
    "kind",
    "user",
    "host_packages",
    "family",
    "cores",
    "dir",
    "entry",
    "setup",
    "setup_inputs",
    "examinations",
];
const REFERENCE: &[&str] = &["answers", "basis"];

/// The value of an optional key, without its place.
fn plain<T: FromToml>(table: &Table<'_, '_>, key: &str) -> Option<T> {
    table.get::<T>(key).map(Spanned::into_inner)
}

/// Reads the manifest's tables and keys; the problems are the reader's.
pub(super) fn read(
    reader: &TomlReader<'_>,
    document: &Spanned<toml::de::DeTable<'_>>,
) -> ManifestFile {
    let top = reader.root(document, TOP);
    let contest = match top.table("contest", "[contest]", CONTEST) {
        Some(t) => contest(&t),
        None => {
            if !top.has("contest") {
                reader.problem_at(
                    0..0,
                    "the manifest has no [contest] table",
                    Some("add a [contest] table with `name` and `rules`".to_string()),
                );
            }
            ContestSection::default()
        }
    };
    let executor = top
        .table("executor", "[executor]", EXECUTOR)
        .map(|t| executor(&t))
        .unwrap_or_default();
    let limits = top
        .table("limits", "[limits]", LIMITS)
        .map(|t| limits(&t))
        .unwrap_or_default();
    let model_tables = top.tables("model", "[model]", MODEL);
    let tool_tables = top.tables("tool", "[tool]", TOOL);
    let reference = top
        .table("reference", "[reference]", REFERENCE)
        .and_then(|t| reference(&t));
    ManifestFile {
        contest,
        executor,
        limits,
        models: model_tables.iter().filter_map(model).collect(),
        tools: tool_tables.iter().filter_map(tool).collect(),
        reference,
        model_tables: model_tables.len(),
        tool_tables: tool_tables.len(),
    }
}

fn contest(t: &Table<'_, '_>) -> ContestSection {
    ContestSection {
        name: t
            .require::<String>("name")
            .map(Spanned::into_inner)
            .unwrap_or_default(),
        rules: t.require("rules"),
        store: plain(t, "store"),
        inputs: t.get("inputs"),
        inputs_per_model: t.get("inputs_per_model"),
        results: t.get("results"),
        corrections: t.get("corrections"),
    }
}

fn executor(t: &Table<'_, '_>) -> ExecutorSection {
    let kind = t.choice(
        "kind",
        &[
            ("local", ExecutorKind::Local),
            ("qemu", ExecutorKind::Qemu),
            ("slurm", ExecutorKind::Slurm),
        ],
    );
    ExecutorSection {
        kind: kind.map_or(ExecutorKind::Local, Spanned::into_inner),
        jobs: t.get("jobs"),
        qemu: t
            .table("qemu", "[executor.qemu]", QEMU)
            .map(|q| Spanned::new(q.span(), qemu(&q))),
        slurm: t
            .table("slurm", "[executor.slurm]", SLURM)
            .map(|s| Spanned::new(s.span(), slurm(&s))),
    }
}

fn qemu(t: &Table<'_, '_>) -> QemuSection {
    QemuSection {
        guest: t.get("guest"),
        kernel: t.get("kernel"),
        initrd: t.get("initrd"),
        image: t.get("image"),
        images: plain(t, "images").unwrap_or_default(),
        ssh_key: t.get("ssh_key"),
        accel: t.get("accel"),
        boot_timeout_s: t.get("boot_timeout_s"),
        binary: plain(t, "binary"),
        kernel_args: t.get("kernel_args"),
    }
}

fn slurm(t: &Table<'_, '_>) -> SlurmSection {
    SlurmSection {
        partition: t.get("partition"),
        account: t.get("account"),
        qos: t.get("qos"),
        sbatch_options: plain(t, "sbatch_options").unwrap_or_default(),
        srun_options: plain(t, "srun_options").unwrap_or_default(),
        shared_store: t.get("shared_store"),
        mccbuild: t.get("mccbuild"),
        cpus_per_job: t.get("cpus_per_job"),
        attempts: t.get("attempts"),
        steps: t.get("steps"),
    }
}

fn limits(t: &Table<'_, '_>) -> LimitsSection {
    let time = t.choice(
        "time",
        &[
            ("wall", TimeLimit::Wall),
            ("cpu", TimeLimit::Cpu),
            ("both", TimeLimit::Both),
        ],
    );
    LimitsSection {
        time_s: t.get("time_s"),
        memory_mb: t.get("memory_mb"),
        time: time.map(Spanned::into_inner),
        cores: t.get("cores"),
        cpu_model: plain(t, "cpu_model"),
    }
}

/// A `[[model]]`; without a name (a problem) it is not read further.
fn model(t: &Table<'_, '_>) -> Option<Spanned<ModelSection>> {
    let name = t.require::<String>("name");
    let kind = t.get("kind");
    let instances = plain(t, "instances");
    Some(Spanned::new(
        t.span(),
        ModelSection {
            name: name?.into_inner(),
            kind,
            instances,
        },
    ))
}

/// A `[[tool]]`; without a name (a problem) it is not read further.
fn tool(t: &Table<'_, '_>) -> Option<Spanned<ToolSection>> {
    let name = t.require::<String>("name");
    let kind = t.choice(
        "kind",
        &[
            ("competing", ToolKind::Competing),
            ("reference", ToolKind::Reference),
        ],
    );
    let user = t.choice("user", &[("mcc", RunUser::Mcc), ("root", RunUser::Root)]);
    let section = ToolSection {
        name: String::new(),
        bk_tool: t.get("bk_tool"),
        kind: kind.map_or_else(ToolKind::default, Spanned::into_inner),
        user: user.map_or_else(RunUser::default, Spanned::into_inner),
        host_packages: plain(t, "host_packages").unwrap_or_default(),
        family: plain(t, "family"),
        cores: t.get("cores").unwrap_or_else(|| Spanned::new(0..0, 1)),
        dir: t.get("dir"),
        entry: plain(t, "entry").unwrap_or_else(|| "BenchKit_head.sh".to_string()),
        setup: plain(t, "setup"),
        setup_inputs: t.get("setup_inputs"),
        examinations: t
            .get("examinations")
            .unwrap_or_else(|| Spanned::new(0..0, vec!["all".to_string()])),
    };
    Some(Spanned::new(
        t.span(),
        ToolSection {
            name: name?.into_inner(),
            ..section
        },
    ))
}

/// `[reference]`; without `answers` (a problem) it is not read further.
fn reference(t: &Table<'_, '_>) -> Option<ReferenceSection> {
    let answers = t.require("answers");
    let basis = t.choice(
        "basis",
        &[("vote", Basis::Vote), ("reference", Basis::Reference)],
    );
    Some(ReferenceSection {
        answers: answers?,
        basis: basis.map_or_else(Basis::default, Spanned::into_inner),
    })
}
