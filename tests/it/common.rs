//! Test harness: contests in temporary folders, scripted tools, the real `mccbuild` binary.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub const REPO: &str = env!("CARGO_MANIFEST_DIR");

pub use mccbuild_testkit::{mcc_data, skip};

pub struct TestContest {
    pub dir: tempfile::TempDir,
    pub models: Vec<(String, String, Vec<String>)>,
    pub tools: Vec<String>,
    pub extra: String,
}

impl TestContest {
    pub fn new() -> TestContest {
        TestContest {
            dir: tempfile::tempdir().expect("temp dir"),
            models: Vec::new(),
            tools: Vec::new(),
            extra: String::new(),
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Copies a demo instance of the repository under models/.
    pub fn copy_demo_instance(&mut self, name: &str) -> PathBuf {
        let target = self.path().join("models").join(name);
        copy_dir(&Path::new(REPO).join("models").join(name), &target);
        target
    }

    /// Declares a model with instance paths (relative to the contest folder).
    pub fn model(&mut self, name: &str, kind: &str, instances: &[&str]) -> &mut Self {
        self.models.push((
            name.to_string(),
            kind.to_string(),
            instances.iter().map(|s| s.to_string()).collect(),
        ));
        self
    }

    /// A scripted tool: its BenchKit_head.sh prints `answers/<instance>/<examination>` if it
    /// exists, `DO_NOT_COMPETE` otherwise. `extra_toml` goes into its [[tool]] table.
    pub fn scripted_tool(&mut self, name: &str, extra_toml: &str) -> PathBuf {
        let dir = self.path().join("tools").join(name);
        fs::create_dir_all(dir.join("answers")).unwrap();
        write_exec(
            &dir.join("BenchKit_head.sh"),
            "#!/bin/sh\nf=\"$(dirname \"$0\")/answers/$BK_INPUT/$BK_EXAMINATION\"\nif [ -f \"$f\" ]; then cat \"$f\"; else echo DO_NOT_COMPETE; fi\n",
        );
        self.tools.push(format!(
            "[[tool]]\nname = \"{name}\"\ndir = \"tools/{name}\"\n{extra_toml}\n"
        ));
        dir
    }

    /// A tool whose BenchKit_head.sh is `script`.
    pub fn script_tool(&mut self, name: &str, script: &str, extra_toml: &str) -> PathBuf {
        let dir = self.path().join("tools").join(name);
        fs::create_dir_all(&dir).unwrap();
        write_exec(&dir.join("BenchKit_head.sh"), script);
        self.tools.push(format!(
            "[[tool]]\nname = \"{name}\"\ndir = \"tools/{name}\"\n{extra_toml}\n"
        ));
        dir
    }

    /// Sets what a scripted tool prints for one run.
    pub fn answer(&self, tool: &str, instance: &str, exam: &str, output: &str) {
        let dir = self
            .path()
            .join("tools")
            .join(tool)
            .join("answers")
            .join(instance);
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join(exam), output).unwrap();
    }

    /// Writes contest.toml.
    pub fn write(&self, limits: &str) {
        let mut text = format!(
            "[contest]\nname = \"Test\"\nrules = \"{}/rules/mcc-2026.toml\"\n\n[executor]\njobs = 2\n\n[limits]\n{limits}\n\n",
            REPO
        );
        for (name, kind, instances) in &self.models {
            let list: Vec<String> = instances.iter().map(|i| format!("\"{i}\"")).collect();
            text.push_str(&format!(
                "[[model]]\nname = \"{name}\"\nkind = \"{kind}\"\ninstances = [{}]\n\n",
                list.join(", ")
            ));
        }
        for tool in &self.tools {
            text.push_str(tool);
            text.push('\n');
        }
        text.push_str(&self.extra);
        fs::write(self.path().join("contest.toml"), text).unwrap();
    }

    pub fn mccbuild(&self, args: &[&str]) -> Output {
        mccbuild_in(self.path(), args)
    }

    /// Forgets every score kept in the store (the cached podium reports and the remembered
    /// scores of each model examination): the next command computes them from the records alone.
    pub fn forget_scores(&self) {
        forget_scores_in(&self.path().join("cache"));
    }

    /// Every run record of the store, as JSON.
    pub fn records(&self) -> Vec<serde_json::Value> {
        store_records(&self.path().join("cache"))
    }

    /// Where the loose record of the run with key `key` (hex) lies in the store.
    pub fn loose_path(&self, key: &str) -> PathBuf {
        self.path()
            .join("cache/runs")
            .join(&key[..2])
            .join(format!("{key}.json"))
    }

    /// The store's files in `cache/meta/` whose names begin with `prefix`.
    pub fn meta_files(&self, prefix: &str) -> Vec<PathBuf> {
        fs::read_dir(self.path().join("cache/meta"))
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with(prefix))
            })
            .collect()
    }

    pub fn record(&self, tool: &str, instance: &str, exam: &str) -> serde_json::Value {
        self.records()
            .into_iter()
            .find(|r| r["tool"] == tool && r["instance"] == instance && r["examination"] == exam)
            .unwrap_or_else(|| panic!("no record for {tool} {instance} {exam}"))
    }
}

/// [`TestContest::forget_scores`] for the store at `store`.
pub fn forget_scores_in(store: &Path) {
    let _ = fs::remove_dir_all(store.join("results"));
    for entry in fs::read_dir(store.join("meta"))
        .into_iter()
        .flatten()
        .flatten()
    {
        if entry.file_name().to_string_lossy().starts_with("scores-") {
            fs::remove_file(entry.path()).unwrap();
        }
    }
}

pub fn mccbuild_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mccbuild"))
        .args(args)
        .current_dir(dir)
        .env_remove("MCCBUILD_SANDBOX")
        .output()
        .expect("mccbuild runs")
}

/// `args` run in `dir` with the phase timings on (MCCBUILD_TIMINGS=1), asserting success: the
/// output, and whether the plan was made from the files (its `plan` phase) rather than taken
/// from its snapshot (docs/cache.md, "The plan snapshot").
pub fn mccbuild_timed(dir: &Path, args: &[&str]) -> (Output, bool) {
    let out = Command::new(env!("CARGO_BIN_EXE_mccbuild"))
        .args(args)
        .current_dir(dir)
        .env_remove("MCCBUILD_SANDBOX")
        .env("MCCBUILD_TIMINGS", "1")
        .output()
        .expect("mccbuild runs");
    assert!(out.status.success(), "{}", stderr(&out));
    let made = stderr(&out)
        .lines()
        .any(|l| l.starts_with("timing: plan  "));
    (out, made)
}

/// Asserts that a command showing results (`scores`, `report`, `export`) succeeded: exit 0, or
/// exit 5 having said its results are partial (planned runs missing from the store; docs/cli.md,
/// "Partial results").
pub fn assert_results(o: &Output) {
    let partial = stderr(o).contains("partial results: ");
    let expected = if partial { 5 } else { 0 };
    assert_eq!(o.status.code(), Some(expected), "{}", stderr(o));
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\nstderr: {}", stdout(o), stderr(o)))
}

pub fn write_exec(path: &Path, text: &str) {
    fs::write(path, text).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
}

pub fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap().flatten() {
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Debian's chromium (or another Chromium-based browser) on the PATH.
pub fn chromium() -> Option<PathBuf> {
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find_map(|name| {
            let out = Command::new("sh")
                .arg("-c")
                .arg(format!("command -v {name}"))
                .output()
                .ok()?;
            let path = String::from_utf8_lossy(&out.stdout).trim().to_string();
            (out.status.success() && !path.is_empty()).then(|| PathBuf::from(path))
        })
}

/// A folder standing for the host's own software (a library a tool needs): a run sees it where
/// the host has it. Runs get private `/tmp`, `/var/tmp` and `/dev/shm` and are the user `mcc`, so
/// the folder is outside those (a clone under /tmp puts CARGO_TARGET_TMPDIR there) and readable by
/// all, its parents included.
pub fn host_software_dir() -> tempfile::TempDir {
    let private = |p: &Path| {
        ["/tmp", "/var/tmp", "/dev/shm"]
            .iter()
            .any(|t| p.starts_with(t))
    };
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let root = if private(target) {
        let shared = Path::new("/var/lib/mccbuild-tests");
        fs::create_dir_all(shared).expect("create /var/lib/mccbuild-tests (tests run as root)");
        fs::set_permissions(shared, fs::Permissions::from_mode(0o755)).unwrap();
        shared.to_path_buf()
    } else {
        target.to_path_buf()
    };
    let dir = tempfile::tempdir_in(&root).unwrap();
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

/// The hand-computed answers of tests/golden/demo-models.csv for one instance and examination:
/// (id, value) in the file's order.
pub fn golden_answers(instance: &str, examination: &str) -> Vec<(String, String)> {
    let text = fs::read_to_string(Path::new(REPO).join("tests/golden/demo-models.csv")).unwrap();
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f.len() == 4 && f[0] == instance && f[1] == examination)
                .then(|| (f[2].to_string(), f[3].to_string()))
        })
        .collect()
}

/// Asserts that a run record answers exactly the golden values of its instance and examination
/// (every value, none other); returns how many were compared.
pub fn assert_golden_answers(record: &serde_json::Value) -> usize {
    let instance = record["instance"].as_str().unwrap();
    let instance = instance.rsplit('/').next().unwrap();
    let exam = record["examination"].as_str().unwrap();
    let expected = golden_answers(instance, exam);
    assert!(
        !expected.is_empty(),
        "no golden values for {instance} {exam}"
    );
    let given: Vec<(String, String)> = record["answers"]
        .as_array()
        .unwrap_or_else(|| panic!("no answers: {record}"))
        .iter()
        .map(|a| {
            (
                a["id"].as_str().unwrap().to_string(),
                a["value"].to_string().trim_matches('"').to_string(),
            )
        })
        .collect();
    let sorted = |mut v: Vec<(String, String)>| {
        v.sort();
        v
    };
    assert_eq!(
        sorted(given),
        sorted(expected.clone()),
        "{instance} {exam}: the answers against tests/golden/demo-models.csv\n{record}"
    );
    expected.len()
}

/// The instance the test submission (tests/submission-tool) answers in the executors' tests: its
/// values are in tests/golden/demo-models.csv.
pub const SUBMISSION_INSTANCE: &str = "Philosophers-PT-000002";

/// A contest in `dir` running the test submission of tests/submission-tool, unchanged
/// from the repository, on SUBMISSION_INSTANCE for `exams`, one tool entry per (name, bk_tool),
/// under `executor` (the `[executor]` table and its sub-tables), with `time_s` of wall clock
/// (the edition's) and 1024 MB. Its store is `dir/store`, whose
/// tool setups are the repository store's: the explorer the submission delegates to is set up
/// once for all the tests that use it.
pub fn submission_contest(
    dir: &Path,
    executor: &str,
    time_s: u64,
    tools: &[(&str, &str)],
    exams: &[&str],
) {
    copy_dir(
        &Path::new(REPO).join("models").join(SUBMISSION_INSTANCE),
        &dir.join("models").join(SUBMISSION_INSTANCE),
    );
    let exams: Vec<String> = exams.iter().map(|e| format!("\"{e}\"")).collect();
    let mut text = format!(
        "[contest]\nname = \"submission\"\nrules = \"{REPO}/rules/mcc-2026.toml\"\nstore = \"store\"\n\n\
         {executor}\n\n[limits]\ntime_s = {time_s}\nmemory_mb = 1024\n\n\
         [[model]]\nname = \"Philosophers\"\ninstances = [\"models/{SUBMISSION_INSTANCE}\"]\n\n"
    );
    for (name, bk_tool) in tools {
        text.push_str(&format!(
            "[[tool]]\nname = \"{name}\"\nbk_tool = \"{bk_tool}\"\ndir = \"{REPO}/tests/submission-tool\"\n\
             setup = \"./setup.sh\"\nexaminations = [{}]\n\n",
            exams.join(", ")
        ));
    }
    fs::write(dir.join("contest.toml"), text).unwrap();
    let shared_tools = Path::new(REPO).join("cache/tools");
    fs::create_dir_all(&shared_tools).unwrap();
    fs::create_dir_all(dir.join("store")).unwrap();
    std::os::unix::fs::symlink(&shared_tools, dir.join("store/tools")).unwrap();
}

/// The records of a store folder.
/// Every record of a store: the loose ones, then those of its packs (docs/cache.md, "Packs"),
/// newest pack first, each run once (the record that counts).
pub fn store_records(store: &Path) -> Vec<serde_json::Value> {
    let mut out: Vec<serde_json::Value> = Vec::new();
    if let Ok(shards) = fs::read_dir(store.join("runs")) {
        for shard in shards.flatten() {
            for f in fs::read_dir(shard.path()).unwrap().flatten() {
                if f.path().extension().is_some_and(|e| e == "json") {
                    out.push(serde_json::from_slice(&fs::read(f.path()).unwrap()).unwrap());
                }
            }
        }
    }
    let mut packs: Vec<PathBuf> = fs::read_dir(store.join("packs"))
        .map(|l| l.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    packs.retain(|p| p.extension().is_some_and(|e| e == "jsonl"));
    packs.sort();
    for pack in packs.iter().rev() {
        for line in fs::read_to_string(pack).unwrap().lines() {
            let record: serde_json::Value = serde_json::from_str(line).unwrap();
            if !out.iter().any(|r| r["key"] == record["key"]) {
                out.push(record);
            }
        }
    }
    out
}

/// Checks a run of the test submission: the answers are the golden ones, and its stderr shows
/// that it ran as a real submission does (its variant, GNU parallel, /usr/bin/time, ulimit -v,
/// its temporary files under BK_BIN_PATH, its background heartbeat). Returns the values compared.
pub fn assert_submission_run(record: &serde_json::Value, bk_tool: &str) -> usize {
    let time_s = record["limits"]["time_s"].as_u64().unwrap();
    let err = record["stderr"]["text"].as_str().unwrap_or_default();
    assert_eq!(
        record["termination"],
        serde_json::json!({"reason": "exit", "code": 0}),
        "{err}\n{record}"
    );
    let strategies = if bk_tool == "portfolio" {
        "full bounded"
    } else {
        "full"
    };
    for seen in [
        format!("variant {bk_tool}, strategies: {strategies}"),
        format!("clock budget: {} s of {time_s} s", time_s * 9 / 10),
        "tmp/".to_string() + record["examination"].as_str().unwrap(),
        "ulimit -v 1048576".to_string(),
        "parallel exited with 0".to_string(),
        "full (/usr/bin/time): ".to_string(),
        "heartbeat ran".to_string(),
    ] {
        assert!(
            err.contains(&seen),
            "`{seen}` not in the run's stderr:\n{err}"
        );
    }
    assert!(!err.contains("Could not create"), "{err}");
    assert_golden_answers(record)
}

/// The 13 examinations of the MCC, in the order of the rules.
pub const ALL_EXAMINATIONS: [&str; 13] = [
    "StateSpace",
    "ReachabilityDeadlock",
    "OneSafe",
    "QuasiLiveness",
    "StableMarking",
    "Liveness",
    "UpperBounds",
    "ReachabilityCardinality",
    "ReachabilityFireability",
    "CTLCardinality",
    "CTLFireability",
    "LTLCardinality",
    "LTLFireability",
];

/// The settings of a snapshot of a command's output (insta, tests/it/snapshots/): the contest's
/// folder `dir` is written `[CONTEST]` and the repository `[REPO]`, so a snapshot holds no path
/// of this machine. Use as `output_settings(c.path()).bind(|| insta::assert_snapshot!(...))`.
pub fn output_settings(dir: &Path) -> insta::Settings {
    let literal = |path: &Path| -> String {
        path.to_string_lossy()
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '/' || c == '_' || c == '-' {
                    c.to_string()
                } else {
                    format!("\\{c}")
                }
            })
            .collect()
    };
    let mut settings = insta::Settings::clone_current();
    settings.add_filter(&literal(dir), "[CONTEST]");
    if let Ok(canonical) = dir.canonicalize() {
        settings.add_filter(&literal(&canonical), "[CONTEST]");
    }
    settings.add_filter(&literal(Path::new(REPO)), "[REPO]");
    settings
}

/// The live processes of the setups of the contest in `contest`: those naming one of its attempt folders in their
/// environment (every process of a setup does, crates/exec's setup).
pub fn setup_processes(contest: &Path) -> Vec<String> {
    let marker = format!(
        "MCCBUILD_SETUP_ATTEMPT={}",
        contest.join("cache").join("tools").display()
    );
    let mut found = Vec::new();
    for entry in fs::read_dir("/proc").unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.chars().all(|ch| ch.is_ascii_digit()) {
            continue;
        }
        let named = fs::read(entry.path().join("environ")).is_ok_and(|env| {
            env.split(|b| *b == 0)
                .any(|var| String::from_utf8_lossy(var).starts_with(&marker))
        });
        let stat = fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let zombie = stat
            .rsplit_once(')')
            .is_none_or(|(_, rest)| rest.trim_start().starts_with(['Z', 'X']));
        if named && !zombie {
            found.push(format!("{name}: {}", stat.trim()));
        }
    }
    found
}

/// Every file under `dir` (recursively), sorted, relative to `dir`.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            if entry.file_type().unwrap().is_dir() {
                walk(root, &path, out);
            } else {
                out.push(path.strip_prefix(root).unwrap().to_path_buf());
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// Every `href="..."` and `src="..."` of a page.
pub fn page_links(html: &str) -> Vec<String> {
    let mut links = Vec::new();
    for attr in ["href=\"", "src=\""] {
        for (i, _) in html.match_indices(attr) {
            let rest = &html[i + attr.len()..];
            links.push(rest[..rest.find('"').unwrap_or(0)].to_string());
        }
    }
    links
}

/// A site publishable as it is: every folder 0755 and file 0644; every link relative (or to
/// the web, or a fragment, or `data:`) and resolving to a file of the site; no text naming one
/// of `machine_paths` (the contest's folder, the store...) or a repository's `docs/` file.
pub fn assert_publishable(site: &Path, machine_paths: &[&Path]) {
    let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(site), 0o755, "{}", site.display());
    let files = files_under(site);
    assert!(!files.is_empty());
    for file in &files {
        let path = site.join(file);
        assert_eq!(mode(&path), 0o644, "{}", path.display());
        assert_eq!(mode(path.parent().unwrap()), 0o755, "{}", path.display());
        let text = fs::read_to_string(&path).unwrap();
        for machine in machine_paths {
            let machine = machine.display().to_string();
            assert!(
                !text.contains(&machine),
                "{} names {machine}",
                path.display()
            );
        }
        if file.extension().is_some_and(|e| e == "html") {
            assert!(!text.contains("docs/"), "{} cites docs/", path.display());
            for link in page_links(&text) {
                if link.starts_with('#')
                    || link.starts_with("data:")
                    || link.starts_with("https://")
                {
                    continue;
                }
                assert!(
                    !link.starts_with('/') && !link.contains("://"),
                    "{}: link {link} is not relative",
                    path.display()
                );
                let target = link.split(['#', '?']).next().unwrap();
                assert!(
                    path.parent().unwrap().join(target).is_file(),
                    "{}: broken link {link}",
                    path.display()
                );
            }
        }
    }
}
