//! The run key: blake3 over a canonical encoding of everything that can change a run's result.
//!
//! This is the only place a key is built. Every ingredient is written with a tag and a length
//! prefix, so that no two different ingredient lists encode to the same bytes. The ingredients
//! are listed in docs/cache.md; each has a test below proving that it changes the key, and tests
//! prove that irrelevant things (file times, the order of tools in the manifest, a tool's kind or
//! family, other files) do not.

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
mod tests {
    use super::*;
    use mccbuild_core::hex;
    use mccbuild_rules::edition::TimeLimit;

    fn tool() -> ToolIdentity {
        ToolIdentity {
            name: "explorer".into(),
            bk_tool: "explorer".into(),
            user: "mcc".into(),
            host: String::new(),
            cores: 1,
            entry: "BenchKit_head.sh".into(),
            setup: None,
            files: [7; 32],
            setup_files: [7; 32],
        }
    }

    fn executor() -> Vec<(String, String)> {
        vec![
            ("kind".into(), "local".into()),
            ("sandbox".into(), "cgroup-v1".into()),
        ]
    }

    fn key_with(
        change: impl FnOnce(
            &mut ToolIdentity,
            &mut String,
            &mut Digest,
            &mut String,
            &mut Limits,
            &mut Vec<(String, String)>,
        ),
    ) -> RunKey {
        key_reading("state-space;integer;STATES", change)
    }

    fn key_reading(
        reading: &str,
        change: impl FnOnce(
            &mut ToolIdentity,
            &mut String,
            &mut Digest,
            &mut String,
            &mut Limits,
            &mut Vec<(String, String)>,
        ),
    ) -> RunKey {
        let mut t = tool();
        let mut instance = "Philosophers-PT-000002".to_string();
        let mut content = [1u8; 32];
        let mut exam = "StateSpace".to_string();
        let mut limits = Limits {
            time_s: 3600,
            memory_mb: 16384,
            time: TimeLimit::Cpu,
        };
        let mut exec = executor();
        change(
            &mut t,
            &mut instance,
            &mut content,
            &mut exam,
            &mut limits,
            &mut exec,
        );
        run_key(&KeyInputs {
            tool: &t,
            instance: &instance,
            instance_content: &content,
            examination: &exam,
            reading,
            limits,
            executor: &exec,
        })
    }

    #[test]
    fn how_answers_are_read_changes_the_key() {
        assert_ne!(
            base(),
            key_reading(
                "state-space;integer;STATES,TRANSITIONS",
                |_, _, _, _, _, _| {}
            )
        );
    }

    fn base() -> RunKey {
        key_with(|_, _, _, _, _, _| {})
    }

    /// The keys of mccbuild's first stores, written down: a change of the encoding (a tag, a
    /// length, an ingredient's spelling) shows here before it silently redoes every run of
    /// every store. These values were computed by the first implementation (b4076d1), then
    /// recomputed on purpose when an ingredient was added (issue 15: `tool.bk_tool`, `limits.time`, `tool.user`, `tool.host`).
    #[test]
    fn the_encoding_is_pinned() {
        assert_eq!(
            base().hex(),
            "de2e8b8b8bf53f9173f800dc70a82362f55d04e3702e9aa96b5f9ec3460a7d2a"
        );
        let edition = edition("mcc-2026.toml");
        let ss = &edition.examinations[edition.examination("StateSpace").unwrap()];
        assert_eq!(
            key_reading(&reading(ss), |_, _, _, _, _, _| {}).hex(),
            "0dc02cbd1303d93edec56e8a263e75f9a83bf51a76b8a65d68e91aa913064649"
        );
        let t = ToolIdentity {
            setup: Some("./setup.sh".into()),
            ..tool()
        };
        assert_eq!(
            hex(&t.setup_digest()),
            "beafd2e8c88e9c8389577a12061498dfa381ed78556990d34f2db1852ba676b5"
        );
        let builder = KeyBuilder::new(&[tool()], &[("kind".to_string(), "import".to_string())]);
        let limits = Limits {
            time_s: 1800,
            memory_mb: 16384,
            time: TimeLimit::Cpu,
        };
        let task = builder.task(
            "M-PT-1",
            &[9u8; 32],
            "OneSafe",
            "Global;Boolean;OneSafe",
            limits,
        );
        assert_eq!(
            builder.key(0, &task).hex(),
            "24d460b8d1c4deadb13ee21d01f17e88e8cbc623f29f676e26754a83d6e2e6c9"
        );
    }

    /// How answers are read is spelled with the words the first keys were made of (the enums'
    /// names then): renaming a variant in the code must not change a key.
    #[test]
    fn the_reading_ingredient_keeps_its_first_spelling() {
        let mcc = edition("mcc-2026.toml");
        let read = |name: &str| reading(&mcc.examinations[mcc.examination(name).unwrap()]);
        assert_eq!(
            read("StateSpace"),
            "StateSpace;Integer;STATES,TRANSITIONS,MAX_TOKEN_IN_PLACE,MAX_TOKEN_PER_MARKING"
        );
        assert_eq!(
            read("ReachabilityDeadlock"),
            "Global;Boolean;ReachabilityDeadlock"
        );
        assert_eq!(read("UpperBounds"), "Formulas;Integer;");
        assert_eq!(read("LTLFireability"), "Formulas;Boolean;");
        let svcomp = edition("svcomp-2012.toml");
        assert_eq!(
            reading(&svcomp.examinations[0]),
            "Verdict;Boolean;ReachSafety"
        );
    }

    /// A tool folder's digest, pinned (file order, paths, executable bits, contents).
    #[test]
    fn the_tool_folder_digest_is_pinned() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let file = |name: &str, text: &str, mode: u32| {
            std::fs::write(dir.path().join(name), text).unwrap();
            std::fs::set_permissions(dir.path().join(name), std::fs::Permissions::from_mode(mode))
                .unwrap();
        };
        std::fs::create_dir(dir.path().join("lib")).unwrap();
        file("BenchKit_head.sh", "#!/bin/sh\necho hi\n", 0o755);
        file("lib/a.txt", "a", 0o644);
        let mut cache = DigestCache::in_memory();
        assert_eq!(
            hex(&tool_files_digest(dir.path(), &mut cache).unwrap()),
            "c7295489fe21a1eb8094cb8d58fbf1448e3fe8dda657add79389bc7fd5daa069"
        );
    }

    fn edition(file: &str) -> mccbuild_rules::edition::Edition {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../rules")
            .join(file);
        mccbuild_rules::edition::Edition::load(&path).unwrap()
    }

    #[test]
    fn tool_name_changes_the_key() {
        assert_ne!(
            base(),
            key_with(|t, _, _, _, _, _| t.name = "explorer2".into())
        );
    }

    #[test]
    fn bk_tool_changes_the_key() {
        assert_ne!(
            base(),
            key_with(|t, _, _, _, _, _| t.bk_tool = "explorer-variant".into())
        );
    }

    #[test]
    fn run_user_changes_the_key() {
        assert_ne!(base(), key_with(|t, _, _, _, _, _| t.user = "root".into()));
    }

    #[test]
    fn host_packages_versions_change_the_key() {
        let with = |host: &str| key_with(|t, _, _, _, _, _| t.host = host.into());
        assert_ne!(base(), with("libgmp10=2:6.2.1+dfsg1-1.1\n"));
        assert_ne!(with("libgmp10=\n"), with("libgmp10=2:6.2.1+dfsg1-1.1\n"));
        assert_ne!(
            with("libgmp10=2:6.2.1+dfsg1-1.1\n"),
            with("libgmp10=2:6.3.0+dfsg-2\n")
        );
    }

    #[test]
    fn tool_cores_change_the_key() {
        assert_ne!(base(), key_with(|t, _, _, _, _, _| t.cores = 4));
    }

    #[test]
    fn tool_entry_changes_the_key() {
        assert_ne!(
            base(),
            key_with(|t, _, _, _, _, _| t.entry = "run.sh".into())
        );
    }

    #[test]
    fn tool_setup_changes_the_key() {
        let with_setup = key_with(|t, _, _, _, _, _| t.setup = Some("make".into()));
        assert_ne!(base(), with_setup);
        // An empty setup command is not the same as none.
        assert_ne!(
            with_setup,
            key_with(|t, _, _, _, _, _| t.setup = Some(String::new()))
        );
        assert_ne!(
            base(),
            key_with(|t, _, _, _, _, _| t.setup = Some(String::new()))
        );
    }

    #[test]
    fn tool_files_change_the_key() {
        assert_ne!(base(), key_with(|t, _, _, _, _, _| t.files = [8; 32]));
    }

    #[test]
    fn instance_name_changes_the_key() {
        assert_ne!(
            base(),
            key_with(|_, i, _, _, _, _| *i = "Philosophers-PT-000003".into())
        );
    }

    #[test]
    fn instance_content_changes_the_key() {
        assert_ne!(base(), key_with(|_, _, c, _, _, _| c[0] = 2));
    }

    #[test]
    fn examination_changes_the_key() {
        assert_ne!(
            base(),
            key_with(|_, _, _, e, _, _| *e = "UpperBounds".into())
        );
    }

    #[test]
    fn time_limit_changes_the_key() {
        assert_ne!(base(), key_with(|_, _, _, _, l, _| l.time_s = 1800));
    }

    #[test]
    fn which_time_is_limited_changes_the_key() {
        let wall = key_with(|_, _, _, _, l, _| l.time = TimeLimit::Wall);
        let both = key_with(|_, _, _, _, l, _| l.time = TimeLimit::Both);
        assert_ne!(base(), wall);
        assert_ne!(base(), both);
        assert_ne!(wall, both);
    }

    #[test]
    fn memory_limit_changes_the_key() {
        assert_ne!(base(), key_with(|_, _, _, _, l, _| l.memory_mb = 8192));
    }

    #[test]
    fn executor_kind_changes_the_key() {
        assert_ne!(base(), key_with(|_, _, _, _, _, x| x[0].1 = "qemu".into()));
    }

    #[test]
    fn executor_settings_change_the_key() {
        assert_ne!(
            base(),
            key_with(|_, _, _, _, _, x| x[1].1 = "rlimits".into())
        );
        assert_ne!(
            base(),
            key_with(|_, _, _, _, _, x| x.push(("cpu".into(), "Westmere".into())))
        );
    }

    #[test]
    fn qemu_settings_change_the_key() {
        let qemu = |x: &mut Vec<(String, String)>| {
            *x = vec![
                ("kind".into(), "qemu".into()),
                ("guest".into(), "kernel".into()),
                ("cpu_model".into(), "Westmere".into()),
                ("accel".into(), "tcg".into()),
                ("vm_memory".into(), "limit".into()),
                ("kernel".into(), "k1".into()),
            ]
        };
        let base = key_with(|_, _, _, _, _, x| qemu(x));
        for (i, other) in ["image", "Nehalem", "kvm", "4096", "k2"]
            .into_iter()
            .enumerate()
        {
            assert_ne!(
                base,
                key_with(|_, _, _, _, _, x| {
                    qemu(x);
                    x[i + 1].1 = other.into();
                }),
                "{other}"
            );
        }
    }

    #[test]
    fn a_tools_own_executor_ingredient_changes_its_keys_only() {
        let image = |digest: &str| -> Vec<(String, String)> {
            let mut x = executor();
            x.push(("tool:explorer:image".into(), digest.into()));
            x
        };
        // `tool()` is named explorer: its image is an ingredient of its runs...
        assert_ne!(
            key_with(|_, _, _, _, _, x| *x = image("a")),
            key_with(|_, _, _, _, _, x| *x = image("b"))
        );
        // ...and not of another tool's.
        let other = |x: &mut Vec<(String, String)>, d: &str| {
            *x = executor();
            x.push(("tool:lola:image".into(), d.into()));
        };
        assert_eq!(
            key_with(|_, _, _, _, _, x| other(x, "a")),
            key_with(|_, _, _, _, _, x| other(x, "b"))
        );
        assert_eq!(base(), key_with(|_, _, _, _, _, x| other(x, "a")));
    }

    #[test]
    fn fields_do_not_run_into_each_other() {
        // The tag-and-length framing keeps "ab"+"c" apart from "a"+"bc".
        let a = key_with(|t, i, _, _, _, _| {
            t.name = "ab".into();
            *i = "c".into();
        });
        let b = key_with(|t, i, _, _, _, _| {
            t.name = "a".into();
            *i = "bc".into();
        });
        assert_ne!(a, b);
    }

    #[test]
    fn the_plan_builder_makes_the_same_keys() {
        let t = tool();
        let other = ToolIdentity {
            name: "other".into(),
            ..tool()
        };
        let mut exec = executor();
        exec.push(("tool:other:image".into(), "d".into()));
        let builder = KeyBuilder::new(&[t.clone(), other.clone()], &exec);
        let limits = Limits {
            time_s: 1800,
            memory_mb: 16384,
            time: TimeLimit::Cpu,
        };
        let content = [9u8; 32];
        let task = builder.task("M-PT-1", &content, "OneSafe", "global;boolean", limits);
        for (i, tool) in [t, other].iter().enumerate() {
            let direct = run_key(&KeyInputs {
                tool,
                instance: "M-PT-1",
                instance_content: &content,
                examination: "OneSafe",
                reading: "global;boolean",
                limits,
                executor: &exec,
            });
            assert_eq!(builder.key(i, &task), direct);
        }
    }

    #[test]
    fn schema_version_is_an_ingredient() {
        // The same parts combined under another schema version give another key.
        let (tool, task, executor) = ([1u8; 32], [2u8; 32], [3u8; 32]);
        assert_ne!(
            combine_with_schema(STORE_SCHEMA + 1, &tool, &task, &executor),
            combine(&tool, &task, &executor)
        );
    }

    #[test]
    fn setup_products_depend_on_the_setup_inputs_only() {
        let t = ToolIdentity {
            setup: Some("./setup.sh".into()),
            ..tool()
        };
        // Another file of the tool (its code): new runs, same setup products.
        let code_changed = ToolIdentity {
            files: [8; 32],
            ..t.clone()
        };
        assert_eq!(t.setup_digest(), code_changed.setup_digest());
        // What the setup reads, or the setup command: new setup products.
        assert_ne!(
            t.setup_digest(),
            ToolIdentity {
                setup_files: [9; 32],
                ..t.clone()
            }
            .setup_digest()
        );
        assert_ne!(
            t.setup_digest(),
            ToolIdentity {
                setup: Some("make".into()),
                ..t.clone()
            }
            .setup_digest()
        );
    }

    #[test]
    fn tool_folder_digest_sees_content_names_and_exec_bits_not_times() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("BenchKit_head.sh"), "#!/bin/sh\necho hi\n").unwrap();
        std::fs::create_dir(dir.path().join("lib")).unwrap();
        std::fs::write(dir.path().join("lib/a.txt"), "a").unwrap();
        let mut cache = DigestCache::in_memory();
        let d0 = tool_files_digest(dir.path(), &mut cache).unwrap();
        // mtime only: same digest.
        let f = std::fs::File::options()
            .write(true)
            .open(dir.path().join("lib/a.txt"))
            .unwrap();
        f.set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(3600))
            .unwrap();
        assert_eq!(tool_files_digest(dir.path(), &mut cache).unwrap(), d0);
        // content
        std::fs::write(dir.path().join("lib/a.txt"), "b").unwrap();
        let d1 = tool_files_digest(dir.path(), &mut cache).unwrap();
        assert_ne!(d1, d0);
        // exec bit
        std::fs::set_permissions(
            dir.path().join("lib/a.txt"),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
        let d2 = tool_files_digest(dir.path(), &mut cache).unwrap();
        assert_ne!(d2, d1);
        // a file's name
        std::fs::rename(dir.path().join("lib/a.txt"), dir.path().join("lib/b.txt")).unwrap();
        assert_ne!(tool_files_digest(dir.path(), &mut cache).unwrap(), d2);
    }
}
