//! The run key: blake3 over a canonical encoding of everything that can change a run's result.
//!
//! This is the only place a key is built. Every ingredient is written with a tag and a length
//! prefix, so that no two different ingredient lists encode to the same bytes. The ingredients
//! are listed in docs/cache.md; each has a test (`key/tests.rs`) proving that it changes the
//! key, and tests prove that irrelevant things (file times, the order of tools in the manifest,
//! a tool's kind or family, other files) do not.

use std::path::Path;

use mccbuild_core::digest::Digest;
use mccbuild_core::run_key::RunKey;

use mccbuild_core::protocol::AnswerForm;
use mccbuild_core::value::ValueKind;
use mccbuild_rules::edition::{Examination, Limits};

use crate::digest_cache::DigestCache;

/// Bump when the meaning of stored records changes (record layout, answer parsing, what a run
/// sees): every key changes and every run is redone.
pub const STORE_SCHEMA: u32 = 1;

/// What a tool is, for the runs it makes: everything under its folder, and how it is run.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct ToolIdentity {
    /// The manifest's name of the tool.
    pub name: String,
    /// BK_TOOL (`bk_tool`, by default the name).
    pub bk_tool: String,
    /// The user its runs execute as (`mcc`, or `root` where the manifest says so).
    pub user: String,
    /// The host's versions of the packages of its `host_packages` (`name=version` lines,
    /// `crate::host_packages`); empty without them.
    pub host: String,
    /// E-5.3/E-5.4.
    pub cores: u32,
    pub entry: String,
    pub setup: Option<String>,
    /// Digest of every file under the tool's folder: relative path, executable bit, content.
    pub files: Digest,
    /// Digest of the files the setup reads (`setup_inputs`), or of all of them (`files`).
    pub setup_files: Digest,
}

impl ToolIdentity {
    /// Where the tool's setup products live in the store: shared by tools whose folder and
    /// setup command are the same (name, cores and entry do not change what setup builds).
    pub fn setup_digest(&self) -> Digest {
        let mut w = KeyWriter::new("mccbuild tool setup");
        w.u32("schema", STORE_SCHEMA);
        w.digest("tool.setup_files", &self.setup_files);
        w.opt_str("tool.setup", self.setup.as_deref());
        w.finish()
    }

    /// The digest of the tool's part of its runs' keys: two identities with the same digest
    /// make the same runs (`mccbuild diff --tool` names a version of a tool by it).
    pub fn digest(&self) -> Digest {
        tool_part(self)
    }
}

/// Digest of a tool folder: every regular file below it (sorted relative path, executable bit,
/// content); symbolic links are recorded by their target.
pub fn tool_files_digest(dir: &Path, cache: &mut DigestCache) -> std::io::Result<Digest> {
    files_digest(dir, None, cache)
}

/// Like [`tool_files_digest`], over the files matching one of `only` (globs relative to `dir`)
/// when given.
pub fn files_digest(
    dir: &Path,
    only: Option<&[glob::Pattern]>,
    cache: &mut DigestCache,
) -> std::io::Result<Digest> {
    let mut files = Vec::new();
    collect_files(dir, dir, &mut files)?;
    if let Some(patterns) = only {
        files.retain(|f| patterns.iter().any(|p| p.matches(f)));
    }
    files.sort();
    let mut w = KeyWriter::new("mccbuild tool files");
    for rel in files {
        let path = dir.join(&rel);
        let meta = std::fs::symlink_metadata(&path)?;
        w.str("path", &rel);
        if meta.file_type().is_symlink() {
            w.str("symlink", &std::fs::read_link(&path)?.to_string_lossy());
        } else {
            use std::os::unix::fs::PermissionsExt;
            w.u32("exec", (meta.permissions().mode() & 0o111 != 0) as u32);
            w.digest("content", &cache.file_digest(&path)?);
        }
    }
    Ok(w.finish())
}

fn collect_files(root: &Path, dir: &Path, out: &mut Vec<String>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        let ty = entry.file_type()?;
        if ty.is_dir() {
            collect_files(root, &path, out)?;
        } else if ty.is_file() || ty.is_symlink() {
            out.push(
                path.strip_prefix(root)
                    .unwrap_or(&path)
                    .to_string_lossy()
                    .into_owned(),
            );
        }
    }
    Ok(())
}

/// How an examination's answers are read, as a key ingredient (records hold parsed answers, so
/// reading them differently must redo the runs): the answer form, the kind of value and the
/// fixed value ids, scored then optional (a formula examination's ids come with the instance's
/// content). The words are explicit and fixed: they are those the first stores were keyed with
/// (the enums' names then), so that every existing key stays valid; tests pin them.
pub fn reading(exam: &Examination) -> String {
    let form = match exam.answers {
        AnswerForm::StateSpace => "StateSpace",
        AnswerForm::Global => "Global",
        AnswerForm::Formulas => "Formulas",
        AnswerForm::VerificationResult => "Verdict",
    };
    let kind = match exam.value {
        ValueKind::Boolean => "Boolean",
        ValueKind::Integer => "Integer",
    };
    let ids = exam.answer_ids();
    let ids: Vec<&str> = ids.iter().map(|id| &**id).collect();
    format!("{form};{kind};{}", ids.join(","))
}

/// Everything that can change a run's result.
#[derive(Clone, Debug)]
pub struct KeyInputs<'a> {
    pub tool: &'a ToolIdentity,
    /// BK_INPUT.
    pub instance: &'a str,
    /// Digest of the files the run sees (rule M-9 may hide the verdict file).
    pub instance_content: &'a Digest,
    /// BK_EXAMINATION.
    pub examination: &'a str,
    /// How the run's answers are read (form, kind, value ids of the rules): records hold parsed
    /// answers, so reading them differently must redo the run.
    pub reading: &'a str,
    /// BK_TIME_CONFINEMENT and BK_MEMORY_CONFINEMENT, enforced.
    pub limits: Limits,
    /// The executor and whatever of it can change a result (kind, how runs are isolated and
    /// measured, a VM's image and CPU model...), as name/value pairs.
    pub executor: &'a [(String, String)],
}

/// The one function that builds a run key: the tagged encodings of the tool's part, the
/// task's part (instance, examination, limits) and the executor's part are hashed separately,
/// and the key hashes the schema version and the three part digests.
pub fn run_key(inputs: &KeyInputs<'_>) -> RunKey {
    combine(
        &tool_part(inputs.tool),
        &task_part(
            inputs.instance,
            inputs.instance_content,
            inputs.examination,
            inputs.reading,
            inputs.limits,
        ),
        &executor_part(&executor_for_tool(inputs.executor, &inputs.tool.name)),
    )
}

/// The executor ingredients of one tool's runs: an ingredient named `tool:<name>:...` (a tool's
/// own VM image, say) belongs to that tool's runs only; every other one to all runs.
pub fn executor_for_tool(executor: &[(String, String)], tool: &str) -> Vec<(String, String)> {
    let own = format!("tool:{tool}:");
    executor
        .iter()
        .filter(|(name, _)| !name.starts_with("tool:") || name.starts_with(&own))
        .cloned()
        .collect()
}

/// The parts have fixed sizes, so their concatenation is unambiguous; blake3's keyed mode
/// (with a key derived from this module's purpose) separates run keys from every other hash.
fn combine(tool: &Digest, task: &Digest, executor: &Digest) -> RunKey {
    combine_with_schema(STORE_SCHEMA, tool, task, executor)
}

fn combine_with_schema(schema: u32, tool: &Digest, task: &Digest, executor: &Digest) -> RunKey {
    static DOMAIN: std::sync::OnceLock<[u8; 32]> = std::sync::OnceLock::new();
    let domain = DOMAIN.get_or_init(|| blake3::derive_key("mccbuild run key", b""));
    let mut h = blake3::Hasher::new_keyed(domain);
    h.update(&schema.to_le_bytes());
    h.update(tool);
    h.update(task);
    h.update(executor);
    RunKey(*h.finalize().as_bytes())
}

fn tool_part(tool: &ToolIdentity) -> Digest {
    let mut w = KeyWriter::new("mccbuild run: tool");
    w.str("tool.name", &tool.name);
    w.str("tool.bk_tool", &tool.bk_tool);
    w.str("tool.user", &tool.user);
    w.str("tool.host", &tool.host);
    w.u32("tool.cores", tool.cores);
    w.str("tool.entry", &tool.entry);
    w.opt_str("tool.setup", tool.setup.as_deref());
    w.digest("tool.files", &tool.files);
    w.finish()
}

fn task_part(
    instance: &str,
    content: &Digest,
    examination: &str,
    reading: &str,
    limits: Limits,
) -> Digest {
    let mut w = KeyWriter::new("mccbuild run: task");
    w.str("instance.name", instance);
    w.digest("instance.content", content);
    w.str("examination", examination);
    w.str("reading", reading);
    w.u64("limits.time_s", limits.time_s);
    w.u64("limits.memory_mb", limits.memory_mb);
    w.str("limits.time", limits.time.name());
    w.finish()
}

fn executor_part(executor: &[(String, String)]) -> Digest {
    let mut w = KeyWriter::new("mccbuild run: executor");
    w.u32("executor.count", executor.len() as u32);
    for (name, value) in executor {
        w.str("executor.name", name);
        w.str("executor.value", value);
    }
    w.finish()
}

/// Builds the keys of a whole plan: each tool's part and the executor's part are hashed once,
/// each task's part once for all its runs; a key then costs one small hash. The keys are those
/// of [`run_key`] (a test checks it).
pub struct KeyBuilder {
    tools: Vec<Digest>,
    /// Per tool: the executor's part of its runs' keys.
    executor: Vec<Digest>,
}

impl KeyBuilder {
    pub fn new(tools: &[ToolIdentity], executor: &[(String, String)]) -> KeyBuilder {
        KeyBuilder {
            tools: tools.iter().map(tool_part).collect(),
            executor: tools
                .iter()
                .map(|t| executor_part(&executor_for_tool(executor, &t.name)))
                .collect(),
        }
    }

    /// The digest of one examination of one instance, shared by its runs.
    pub fn task(
        &self,
        instance: &str,
        content: &Digest,
        examination: &str,
        reading: &str,
        limits: Limits,
    ) -> Digest {
        task_part(instance, content, examination, reading, limits)
    }

    pub fn key(&self, tool: usize, task: &Digest) -> RunKey {
        combine(&self.tools[tool], task, &self.executor[tool])
    }
}

/// A tagged, length-prefixed encoding, hashed with blake3 at the end.
struct KeyWriter {
    bytes: Vec<u8>,
}

impl KeyWriter {
    fn new(domain: &str) -> Self {
        let mut w = KeyWriter {
            bytes: Vec::with_capacity(192),
        };
        w.str("domain", domain);
        w
    }

    fn field(&mut self, tag: &str, bytes: &[u8]) {
        self.bytes
            .extend_from_slice(&(tag.len() as u32).to_le_bytes());
        self.bytes.extend_from_slice(tag.as_bytes());
        self.bytes
            .extend_from_slice(&(bytes.len() as u64).to_le_bytes());
        self.bytes.extend_from_slice(bytes);
    }

    fn str(&mut self, tag: &str, value: &str) {
        self.field(tag, value.as_bytes());
    }

    fn opt_str(&mut self, tag: &str, value: Option<&str>) {
        match value {
            None => self.field(tag, &[0]),
            Some(v) => {
                let mut bytes = vec![1];
                bytes.extend_from_slice(v.as_bytes());
                self.field(tag, &bytes);
            }
        }
    }

    fn u32(&mut self, tag: &str, value: u32) {
        self.field(tag, &value.to_le_bytes());
    }

    fn u64(&mut self, tag: &str, value: u64) {
        self.field(tag, &value.to_le_bytes());
    }

    fn digest(&mut self, tag: &str, value: &Digest) {
        self.field(tag, value);
    }

    fn finish(self) -> Digest {
        *blake3::hash(&self.bytes).as_bytes()
    }
}

#[cfg(test)]
mod tests;
