//! The serde schema of `contest.toml`: the file's tables and keys as written, before any
//! check (docs/manifest.md). Unknown keys are refused by the reader with their line; values are
//! kept with their place in the file (`Spanned`) so that a problem found later can name it.

use std::collections::BTreeMap;

use serde::Deserialize;
use toml::Spanned;

use mccbuild_rules::edition::TimeLimit;
use mccbuild_rules::reference::Basis;

use super::{ExecutorKind, RunUser, ToolKind};

#[derive(Debug, Deserialize)]
pub(super) struct ManifestFile {
    pub(super) contest: ContestSection,
    #[serde(default)]
    pub(super) executor: ExecutorSection,
    #[serde(default)]
    pub(super) limits: LimitsSection,
    #[serde(default, rename = "model")]
    pub(super) models: Vec<Spanned<ModelSection>>,
    #[serde(default, rename = "tool")]
    pub(super) tools: Vec<Spanned<ToolSection>>,
    #[serde(default)]
    pub(super) reference: Option<ReferenceSection>,
}

/// `[reference]` as written (docs/manifest.md): reference answers to judge the tools against.
#[derive(Debug, Deserialize)]
pub(super) struct ReferenceSection {
    pub(super) answers: Spanned<String>,
    #[serde(default)]
    pub(super) basis: Basis,
}

#[derive(Debug, Deserialize)]
pub(super) struct ContestSection {
    pub(super) name: String,
    pub(super) rules: Spanned<String>,
    #[serde(default)]
    pub(super) store: Option<String>,
    #[serde(default)]
    pub(super) inputs: Option<Spanned<OneOrMany>>,
    #[serde(default)]
    pub(super) results: Option<Spanned<OneOrMany>>,
    /// The organisers' decided values (E-6.3): a CSV of instance, examination, id, value.
    #[serde(default)]
    pub(super) corrections: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
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

#[derive(Debug, Deserialize)]
pub(super) struct ExecutorSection {
    #[serde(default)]
    pub(super) kind: ExecutorKind,
    #[serde(default)]
    pub(super) jobs: Option<usize>,
    #[serde(default)]
    pub(super) qemu: Option<Spanned<QemuSection>>,
    /// `[executor.slurm]`: settings of the Slurm executor.
    #[serde(default)]
    pub(super) slurm: Option<Spanned<SlurmSection>>,
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
pub(super) struct QemuSection {
    pub(super) guest: Option<Spanned<String>>,
    pub(super) kernel: Option<Spanned<String>>,
    pub(super) initrd: Option<Spanned<String>>,
    pub(super) image: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) images: BTreeMap<String, Spanned<String>>,
    pub(super) ssh_key: Option<Spanned<String>>,
    pub(super) accel: Option<Spanned<String>>,
    pub(super) boot_timeout_s: Option<Spanned<u64>>,
    pub(super) binary: Option<String>,
}

/// `[executor.slurm]` as written (docs/manifest.md).
#[derive(Debug, Default, Deserialize)]
pub(super) struct SlurmSection {
    #[serde(default)]
    pub(super) partition: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) account: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) qos: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) sbatch_options: Vec<Spanned<String>>,
    #[serde(default)]
    pub(super) srun_options: Vec<Spanned<String>>,
    #[serde(default)]
    pub(super) shared_store: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) mccbuild: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) cpus_per_job: Option<Spanned<u32>>,
    #[serde(default)]
    pub(super) attempts: Option<Spanned<u32>>,
    #[serde(default)]
    pub(super) steps: Option<Spanned<String>>,
}

#[derive(Debug, Default, Deserialize)]
pub(super) struct LimitsSection {
    #[serde(default)]
    pub(super) time_s: Option<u64>,
    #[serde(default)]
    pub(super) memory_mb: Option<u64>,
    /// Which time `time_s` limits (`cpu`, `wall`, `both`), instead of the edition's.
    #[serde(default)]
    pub(super) time: Option<TimeLimit>,
    /// The core counts a tool may ask for, instead of E-5.3/E-5.4's 1 and 4 (a machine with
    /// 2 cores, a qualification round).
    #[serde(default)]
    pub(super) cores: Option<Vec<u32>>,
    /// The VMs' CPU model (QEMU executor), instead of the edition's.
    #[serde(default)]
    pub(super) cpu_model: Option<String>,
}

#[derive(Debug, Deserialize)]
pub(super) struct ModelSection {
    pub(super) name: String,
    /// Absent: the edition's default kind (E-4.4).
    #[serde(default)]
    pub(super) kind: Option<Spanned<String>>,
    /// Absent: the model's instances come from `inputs` or `results` (this entry gives its kind).
    #[serde(default)]
    pub(super) instances: Option<Vec<Spanned<String>>>,
}

#[derive(Debug, Deserialize)]
pub(super) struct ToolSection {
    pub(super) name: String,
    /// BK_TOOL: absent, the tool's name.
    #[serde(default)]
    pub(super) bk_tool: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) kind: ToolKind,
    /// Who its runs execute as: `mcc` (default) or `root`.
    #[serde(default)]
    pub(super) user: RunUser,
    /// Debian packages of the host whose versions are part of its runs' keys.
    #[serde(default)]
    pub(super) host_packages: Vec<Spanned<String>>,
    #[serde(default)]
    pub(super) family: Option<String>,
    #[serde(default = "one")]
    pub(super) cores: Spanned<u32>,
    /// Absent: a tool whose runs come from `results` files (this entry gives its kind, family).
    #[serde(default)]
    pub(super) dir: Option<Spanned<String>>,
    #[serde(default = "benchkit_head")]
    pub(super) entry: String,
    #[serde(default)]
    pub(super) setup: Option<String>,
    #[serde(default)]
    pub(super) setup_inputs: Option<Spanned<Vec<String>>>,
    #[serde(default = "all")]
    pub(super) examinations: Spanned<Vec<String>>,
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
