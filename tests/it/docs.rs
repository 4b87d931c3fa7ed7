//! Every command shown in a code block of README.md and docs/*.md, run on the demo contest (its
//! store, `cache/`, as tests/it/demo.rs and the README use it): none may fail. Commands that need
//! long runs, other contests or hardware are skipped, each with its reason (listed below and
//! printed); synopsis lines (`mccbuild run [--jobs N] [--tool T]`) run in their shortest form with
//! the placeholders of [`PLACEHOLDERS`]. A block that starts with `cd examples/...` is a session
//! in that folder, not on the demo: [`run_block`] runs it as written (tests/it/replay.rs runs
//! docs/replay.md's replays so and checks their figures).

use std::path::Path;

use crate::common::*;

/// Commands not run, by their start, with why.
const SKIPPED: &[(&str, &str)] = &[
    ("scripts/test", "the test command itself"),
    (
        "scripts/bench-",
        "a benchmark: minutes, under /work/heavy.lock, figures in docs/BENCHMARKS.md",
    ),
    (
        "scripts/guest-",
        "builds QEMU guests (minutes; tests/it/qemu.rs uses them)",
    ),
    (
        "scripts/mcc-replay-analysis",
        "the replay analysis of ../shared/data (a suite of scripts/test)",
    ),
    (
        "scripts/mcc-score-oracle",
        "the replay's oracle (its --self-test is a suite of scripts/test)",
    ),
    (
        "scripts/slurm-cluster",
        "starts a private Slurm cluster (root, slurm-wlm; tests/it/slurm.rs starts its own)",
    ),
    (
        "scripts/reenact-mcc2025",
        "the MCC 2025 edition re-enacted: minutes to an hour (tests/it/slurm/reenact.rs runs ~3,000 runs)",
    ),
    (
        "mccbuild import",
        "the demo has no results file; tests/it/import.rs runs import on the contest of docs/import.md",
    ),
    (
        "mccbuild diff --tool T [--against",
        "needs an earlier version of the tool in the store, which the demo's does not hold; tests/it/diff.rs compares two versions",
    ),
    (
        "mccbuild diff --old A --new B",
        "the demo has one entry per tool; tests/it/diff.rs compares two entries",
    ),
    (
        "mccbuild explain --instance I --examination E --id V",
        "placeholders of a value; docs/cli.md's explain runs on a demo value",
    ),
];

/// Placeholders of synopsis lines, and what the demo puts there.
const PLACEHOLDERS: &[(&str, &str)] =
    &[("T", "explorer"), ("C", "StateSpace"), ("CMD", "/bin/true")];

/// The commands of the code blocks of a Markdown file, with their line.
fn commands(file: &Path) -> Vec<(usize, String)> {
    let text = std::fs::read_to_string(file).unwrap();
    let mut in_block = false;
    let mut in_folder = false;
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.starts_with("```") {
            in_block = !in_block;
            in_folder = false;
            continue;
        }
        let t = line.trim();
        // A session in an example's folder (its first line `cd examples/...`): [`run_block`].
        in_folder |= in_block && t.starts_with("cd examples/");
        if in_folder {
            continue;
        }
        let t = t.strip_prefix("$ ").unwrap_or(t);
        if in_block
            && ["mccbuild ", "cargo run --release -- ", "scripts/"]
                .iter()
                .any(|p| t.starts_with(p))
        {
            let command = t.split(" #").next().unwrap().trim().to_string();
            out.push((n + 1, command));
        }
    }
    out
}

/// The argument list mccbuild gets for a documented command, in the temp folder `tmp`.
fn mccbuild_args(command: &str, tmp: &Path) -> Vec<String> {
    let rest = command
        .strip_prefix("cargo run --release -- ")
        .or_else(|| command.strip_prefix("mccbuild "))
        .unwrap();
    // Optional parts of a synopsis are left out.
    let mut words = Vec::new();
    let mut depth = 0;
    for w in rest.split_whitespace() {
        let opens = w.starts_with('[');
        if opens {
            depth += w.matches('[').count();
        }
        if depth == 0 {
            let w = PLACEHOLDERS
                .iter()
                .find(|(p, _)| *p == w)
                .map_or(w, |(_, v)| v);
            words.push(w.to_string());
        }
        depth -= w.matches(']').count().min(depth);
    }
    let manifest = format!("{REPO}/contest.toml");
    let sub = words[0].clone();
    if sub == "sandbox" {
        return words;
    }
    let mut args = vec![sub.clone(), "--manifest".into(), manifest];
    args.extend(words[1..].iter().cloned());
    match sub.as_str() {
        // Long-lived: the start update only.
        "watch" => args.extend(["--updates".into(), "1".into()]),
        // Written beside the manifest by default: here, into the temp folder.
        "report" if !args.iter().any(|a| a == "--out") => {
            args.extend(["--out".into(), tmp.join("report").display().to_string()])
        }
        _ => {}
    }
    args
}

#[test]
fn every_command_of_the_readme_and_the_docs_runs_on_the_demo() {
    let repo = Path::new(REPO);
    // The demo's runs, as the README's first command makes them (a no-op once done).
    let run = mccbuild_in(repo, &["run", "--json"]);
    assert!(run.status.success(), "the demo: {}", stderr(&run));
    let tmp = tempfile::tempdir().unwrap();
    let mut files = vec![repo.join("README.md")];
    let mut docs: Vec<_> = std::fs::read_dir(repo.join("docs"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    let (mut ran, mut failures) = (0, Vec::new());
    for file in &files {
        let name = file.strip_prefix(repo).unwrap().display().to_string();
        for (line, command) in commands(file) {
            if let Some((_, why)) = SKIPPED.iter().find(|(p, _)| command.starts_with(p)) {
                eprintln!("skipped {name}:{line}: `{command}`: {why}");
                continue;
            }
            let args = mccbuild_args(&command, tmp.path());
            let out = mccbuild_in(
                tmp.path(),
                &args.iter().map(String::as_str).collect::<Vec<_>>(),
            );
            ran += 1;
            eprintln!(
                "ran {name}:{line}: mccbuild {}: {:?}",
                args.join(" "),
                out.status.code()
            );
            if !out.status.success() {
                failures.push(format!(
                    "{name}:{line}: `{command}` (mccbuild {}): {:?}\n{}",
                    args.join(" "),
                    out.status.code(),
                    stderr(&out)
                ));
            }
        }
    }
    assert!(ran >= 12, "only {ran} commands found");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn synopsis_lines_run_in_their_shortest_form() {
    let tmp = Path::new("/tmp");
    assert_eq!(
        mccbuild_args(
            "mccbuild run [--jobs N] [--tool T] [--model M] [--examination E] [--json]",
            tmp
        )[0..1],
        ["run".to_string()]
    );
    assert_eq!(
        mccbuild_args("mccbuild explain --tool T --category C", tmp)[3..],
        ["--tool", "explorer", "--category", "StateSpace"].map(String::from)
    );
    assert_eq!(
        mccbuild_args("mccbuild sandbox -- CMD", tmp),
        ["sandbox", "--", "/bin/true"].map(String::from)
    );
}

/// The pages whose promises each name the test that proves them.
const PROMISE_PAGES: &[&str] = &["docs/cache.md", "docs/execution.md"];

/// Names of four words or more in these pages that are not tests: record fields.
const NOT_TESTS: &[&str] = &["qemu_cpu_time_s", "vm_wall_time_s"];

/// The `#[test]` functions of the workspace: (file relative to the repository, name).
fn test_functions() -> Vec<(String, String)> {
    fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() && !p.ends_with("target") {
                walk(&p, out);
            } else if p.extension().is_some_and(|e| e == "rs") {
                out.push(p);
            }
        }
    }
    let repo = Path::new(REPO);
    let mut files = Vec::new();
    for d in ["src", "tests", "crates"] {
        walk(&repo.join(d), &mut files);
    }
    let mut tests = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap_or_default();
        let rel = f.strip_prefix(repo).unwrap().display().to_string();
        let mut after_test = false;
        for line in text.lines().map(str::trim) {
            if line == "#[test]" {
                after_test = true;
            } else if after_test && line.starts_with("#[") {
                // #[ignore], #[cfg(...)]...: still the same test.
            } else if after_test {
                let name = line
                    .split("fn ")
                    .nth(1)
                    .and_then(|r| r.split('(').next())
                    .unwrap_or("");
                if !name.is_empty() {
                    tests.push((rel.clone(), name.to_string()));
                }
                after_test = false;
            }
        }
    }
    tests
}

/// The tests a page names: `name` or `file.rs::name` in backquotes, where the name has at least
/// four words (`a_full_store_is_refused...`), or three and the code defines no other item of
/// that name (fields such as `cpu_time_s` are not tests).
fn named_tests(text: &str, tests: &[(String, String)]) -> Vec<(Option<String>, String)> {
    let snake = |s: &str| {
        !s.is_empty()
            && s.starts_with(|c: char| c.is_ascii_lowercase())
            && s.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
    };
    let mut out = Vec::new();
    for (i, span) in text.split('`').enumerate() {
        if i % 2 == 0 {
            continue;
        }
        let (file, name) = match span.rsplit_once("::") {
            Some((f, n)) if f.ends_with(".rs") => (Some(f.to_string()), n),
            _ => (None, span),
        };
        if !snake(name) || NOT_TESTS.contains(&name) {
            continue;
        }
        let words = name.split('_').count();
        let is_test = tests.iter().any(|(_, t)| t == name);
        if file.is_some() || words >= 4 || (words == 3 && is_test) {
            out.push((file, name.to_string()));
        }
    }
    out
}

/// A test named in docs/cache.md or docs/execution.md as the proof of a promise must exist
/// (in the file named with it, when one is): renaming or deleting it fails here, so a promise
/// cannot silently lose its test.
#[test]
fn every_test_named_by_the_cache_and_execution_pages_exists() {
    let tests = test_functions();
    assert!(tests.len() > 300, "only {} tests found", tests.len());
    let mut missing = Vec::new();
    let mut named = std::collections::BTreeSet::new();
    for page in PROMISE_PAGES {
        let text = std::fs::read_to_string(Path::new(REPO).join(page)).unwrap();
        for (file, name) in named_tests(&text, &tests) {
            let found = tests
                .iter()
                .any(|(f, t)| *t == name && file.as_ref().is_none_or(|file| f == file));
            if !found {
                missing.push(format!(
                    "{page}: `{}{name}` is not a #[test] of the workspace",
                    file.map(|f| f + "::").unwrap_or_default()
                ));
            }
            named.insert(name);
        }
    }
    eprintln!("{} tests named by {PROMISE_PAGES:?}", named.len());
    assert!(named.len() >= 120, "only {} tests named", named.len());
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

#[test]
fn named_tests_are_found_with_or_without_their_file() {
    let tests = vec![(
        "crates/plan/src/instance.rs".to_string(),
        "real_archive_facts".to_string(),
    )];
    let text =
        "`cpu_time_s`, `real_archive_facts`, `tests/a.rs::x_y`, `an_old_name_of_a_test`, `run_key`";
    assert_eq!(
        named_tests(text, &tests),
        [
            (None, "real_archive_facts".to_string()),
            (Some("tests/a.rs".to_string()), "x_y".to_string()),
            (None, "an_old_name_of_a_test".to_string()),
        ]
    );
}

/// examples/explorer-vs-mcc2025/README.md: every command of the worked example runs from the
/// repository root, and the explorer's figures against the MCC 2025 consensus that the README
/// quotes are those `scores --json` computes. Reads ../shared/data (skips, with its reason,
/// where it is absent). About 160 small runs on a fresh store (the repository's, shared with
/// the demo); none once they are stored.
#[test]
fn the_worked_example_runs_from_its_readme() {
    if mcc_data().is_none() {
        return;
    }
    let repo = Path::new(REPO);
    let readme = repo.join("examples/explorer-vs-mcc2025/README.md");
    let commands = commands(&readme);
    assert_eq!(commands.len(), 6, "{commands:?}");
    for (line, command) in &commands {
        let args: Vec<&str> = command
            .strip_prefix("mccbuild ")
            .unwrap()
            .split_whitespace()
            .collect();
        let out = mccbuild_in(repo, &args);
        let text = stdout(&out);
        // `scores` before the variant's runs exist: partial results, said, exit 5 (as the
        // README says; docs/cli.md, "Partial results").
        let partial = args[0] == "scores" && text.contains("partial results: ");
        assert!(
            out.status.success() || (partial && out.status.code() == Some(5)),
            "README.md:{line}: `{command}`: {:?}\n{}",
            out.status.code(),
            stderr(&out)
        );
        match args[0] {
            "diff" => assert!(
                text.contains("(answers against the contest's reference answers)"),
                "{text}"
            ),
            "qualify" => assert!(text.contains("explorer: qualified"), "{text}"),
            "explain" => assert!(text.contains("(basis: reference)"), "{text}"),
            _ => {}
        }
    }
    // The README's table row, against the computed figures.
    let text = std::fs::read_to_string(&readme).unwrap();
    let row = text
        .lines()
        .find(|l| l.trim_start().starts_with("| explorer |"))
        .expect("the explorer's row");
    let quoted: Vec<u64> = row
        .split('|')
        .filter_map(|c| c.trim().parse().ok())
        .collect();
    let scores = json(&mccbuild_in(
        repo,
        &[
            "scores",
            "--json",
            "--manifest",
            "examples/explorer-vs-mcc2025/contest.toml",
        ],
    ));
    assert_eq!(scores["basis"], "reference");
    let c = &scores["reference"]["tools"]["explorer"];
    let computed: Vec<u64> = ["right", "wrong", "unknown", "unanswered"]
        .iter()
        .map(|k| c[k].as_u64().unwrap())
        .collect();
    assert_eq!(quoted, computed, "README.md's figures: {row}");
}

/// docs/architecture.md's table of crates is the workspace as Cargo sees it (`cargo metadata`),
/// in data-flow order: each crate's workspace dependencies are exactly those of its row, and
/// every one of them is a row above it (a stage earlier in the flow).
#[test]
fn the_crates_table_is_the_workspace_in_data_flow_order() {
    let text = std::fs::read_to_string(Path::new(REPO).join("docs/architecture.md")).unwrap();
    let short = |name: &str| name.trim_start_matches("mccbuild-").to_string();
    // (crate, its dependencies as the row says them), in the table's order
    let mut rows: Vec<(String, Vec<String>)> = Vec::new();
    for line in text.lines().filter(|l| l.starts_with("| `mccbuild")) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let name = cells[1].split('`').nth(1).unwrap().to_string();
        let deps = match cells[cells.len() - 2] {
            "–" => Vec::new(),
            "all of the above" => rows.iter().map(|(n, _)| short(n)).collect(),
            list => list.split(", ").map(String::from).collect(),
        };
        rows.push((name, deps));
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let out = std::process::Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(REPO)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let packages = meta["packages"].as_array().unwrap();
    let members: Vec<&str> = packages.iter().filter_map(|p| p["name"].as_str()).collect();
    for p in packages {
        let name = p["name"].as_str().unwrap();
        if name == "mccbuild-testkit" {
            continue; // a dev-dependency of the tests, outside the flow
        }
        let mut actual: Vec<String> = p["dependencies"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["kind"].is_null())
            .filter_map(|d| d["name"].as_str())
            .filter(|d| members.contains(d))
            .map(short)
            .collect();
        actual.sort();
        let Some(at) = rows.iter().position(|(n, _)| n == name) else {
            panic!("docs/architecture.md has no row for the crate {name}");
        };
        let mut documented = rows[at].1.clone();
        documented.sort();
        assert_eq!(
            actual, documented,
            "docs/architecture.md: the workspace dependencies of {name}"
        );
        for dep in &actual {
            let row = rows.iter().position(|(n, _)| short(n) == *dep).unwrap();
            assert!(
                row < at,
                "{name} depends on {dep}, a later stage of the flow (docs/architecture.md)"
            );
        }
    }
    assert_eq!(rows.len(), members.len() - 1, "a row per crate but testkit");
}

/// The lines of the code block of `page` (relative to the repository) whose first line is
/// `first`, comments and blank lines left out, with the block's line number.
pub fn block(page: &str, first: &str) -> (usize, Vec<String>) {
    let text = std::fs::read_to_string(Path::new(REPO).join(page)).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let start = lines
        .windows(2)
        .position(|w| w[0].starts_with("```") && w[1].trim() == first)
        .unwrap_or_else(|| panic!("{page}: no code block starting with `{first}`"));
    let body = lines[start + 1..]
        .iter()
        .take_while(|l| !l.starts_with("```"))
        .map(|l| l.split(" #").next().unwrap_or("").trim())
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(String::from)
        .collect();
    (start + 2, body)
}

/// Runs a documented session as a reader would from the repository's root, in a temporary
/// copy: the block's `cd examples/<name>` folder copied (its files only), `scripts` and `rules`
/// linked to the repository's, `mccbuild` on the PATH the binary under test. Each line runs in
/// `bash -o pipefail -c` from the folder; a line that fails fails the test with its output.
/// Returns the temporary root, the example folder in it and each command with its output.
pub fn run_block(page: &str, lines: &[String], line: usize) -> Ran {
    let root = tempfile::tempdir().unwrap();
    let folder = lines[0]
        .strip_prefix("cd ")
        .unwrap_or_else(|| panic!("{page}:{line}: the block does not start with `cd`"));
    let dir = root.path().join(folder);
    std::fs::create_dir_all(&dir).unwrap();
    for e in std::fs::read_dir(Path::new(REPO).join(folder))
        .unwrap()
        .flatten()
    {
        if e.path().is_file() {
            std::fs::copy(e.path(), dir.join(e.file_name())).unwrap();
        }
    }
    for linked in ["scripts", "rules"] {
        std::os::unix::fs::symlink(Path::new(REPO).join(linked), root.path().join(linked)).unwrap();
    }
    let bin = Path::new(env!("CARGO_BIN_EXE_mccbuild")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut outputs = Vec::new();
    for command in &lines[1..] {
        let out = std::process::Command::new("bash")
            .args(["-o", "pipefail", "-c", command])
            .current_dir(&dir)
            .env("PATH", &path)
            .env_remove("MCCBUILD_SANDBOX")
            .output()
            .expect("bash runs");
        eprintln!("ran {page}:{line}: {command}: {:?}", out.status.code());
        assert!(
            out.status.success(),
            "{page}:{line}: `{command}` failed ({}):\n{}\n{}",
            out.status,
            stdout(&out),
            stderr(&out)
        );
        outputs.push((command.clone(), out));
    }
    Ran {
        _root: root,
        dir,
        outputs,
    }
}

/// A documented session run by [`run_block`].
pub struct Ran {
    _root: tempfile::TempDir,
    /// The example's folder in the temporary copy.
    pub dir: std::path::PathBuf,
    /// Each command of the block (after its `cd`) and its output.
    pub outputs: Vec<(String, std::process::Output)>,
}

impl Ran {
    /// The output of the first command starting with `start`.
    pub fn output(&self, start: &str) -> &std::process::Output {
        &self
            .outputs
            .iter()
            .find(|(c, _)| c.starts_with(start))
            .unwrap_or_else(|| panic!("no documented command starts with `{start}`"))
            .1
    }
}

#[test]
fn a_documented_block_is_read_without_its_comments() {
    let (line, lines) = block("docs/replay.md", "cd examples/mcc2025-replay");
    assert!(line > 1);
    assert_eq!(lines[0], "cd examples/mcc2025-replay");
    assert!(lines.iter().all(|l| !l.contains('#')), "{lines:?}");
    assert!(
        lines.iter().any(|l| l.starts_with("mccbuild import")),
        "{lines:?}"
    );
}
