//! Every command shown in a code block of README.md and docs/*.md, run on the demo contest (its
//! store, `cache/`, as tests/it/demo.rs and the README use it): none may fail. Commands that need
//! long runs, other contests or hardware are skipped, each with its reason (listed below and
//! printed); synopsis lines (`mccbuild run [--jobs N] [--tool T]`) run in their shortest form with
//! the placeholders of [`PLACEHOLDERS`].

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
    (
        "mccbuild scores --json > scores.json",
        "docs/replay.md: on the 2024 replay (examples/mcc2024-replay), not the demo",
    ),
];

/// Placeholders of synopsis lines, and what the demo puts there.
const PLACEHOLDERS: &[(&str, &str)] =
    &[("T", "explorer"), ("C", "StateSpace"), ("CMD", "/bin/true")];

/// The commands of the code blocks of a Markdown file, with their line.
fn commands(file: &Path) -> Vec<(usize, String)> {
    let text = std::fs::read_to_string(file).unwrap();
    let mut in_block = false;
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.starts_with("```") {
            in_block = !in_block;
            continue;
        }
        let t = line.trim();
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
        assert!(
            out.status.success(),
            "README.md:{line}: `{command}`: {:?}\n{}",
            out.status.code(),
            stderr(&out)
        );
        let text = stdout(&out);
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
