//! Promises of docs/cache.md and docs/execution.md that no other suite proved, each through the
//! real binary; the pages name these tests (tests/docs.rs checks that the names exist).

mod common;

use std::path::Path;

use common::*;

const PHIL: &str = "Philosophers-PT-000002";

/// A contest of one demo instance and one tool answering UpperBounds.
fn one_run_contest(kind: &str, model: &str) -> TestContest {
    let mut c = TestContest::new();
    c.copy_demo_instance(PHIL);
    c.model(model, kind, &[&format!("models/{PHIL}")]);
    c.scripted_tool("t", "examinations = [\"UpperBounds\"]");
    c.answer(
        "t",
        PHIL,
        "UpperBounds",
        "FORMULA Philosophers-PT-000002-UpperBounds-00 2\n",
    );
    c
}

fn to_run(c: &TestContest) -> u64 {
    let plan = c.mccbuild(&["plan", "--json"]);
    json(&plan)["to_run"].as_u64().unwrap()
}

/// docs/execution.md, "The BenchKit protocol": a clean environment (PATH, HOME, TMPDIR,
/// LANG=C.UTF-8 and the BK_* values), an empty stdin, a working folder of the run's own in the
/// temporary folder, removed afterwards.
#[test]
fn a_run_sees_a_clean_environment_and_an_empty_stdin_in_a_folder_removed_afterwards() {
    let mut c = TestContest::new();
    c.copy_demo_instance(PHIL);
    c.model("Philosophers", "known", &[&format!("models/{PHIL}")]);
    c.script_tool(
        "env",
        "#!/bin/sh\nenv | cut -d= -f1 | sort | tr '\\n' ' ' >&2; echo >&2\n\
         echo \"LANG=$LANG HOME=$HOME TMPDIR=$TMPDIR\" >&2\n\
         echo \"STDIN $(cat | wc -c)\" >&2\necho \"PWD $(pwd)\" >&2\necho DO_NOT_COMPETE\n",
        "examinations = [\"UpperBounds\"]",
    );
    c.write("time_s = 20\nmemory_mb = 512");
    let tmp = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mccbuild"))
        .args(["run"])
        .current_dir(c.path())
        .env_remove("MCCBUILD_SANDBOX")
        .env("TMPDIR", tmp.path())
        .env("SECRET_OF_THE_HOST", "x")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let err = c.record("env", PHIL, "UpperBounds")["stderr"]["text"]
        .as_str()
        .unwrap()
        .to_string();
    let mut lines = err.lines();
    let names: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    for name in &names {
        assert!(
            ["PATH", "HOME", "TMPDIR", "LANG", "PWD", "SHLVL", "_", "OLDPWD"].contains(name)
                || name.starts_with("BK_"),
            "{name} in the run's environment: {err}"
        );
    }
    for name in ["PATH", "HOME", "TMPDIR", "LANG", "BK_INPUT", "BK_LOG_FILE"] {
        assert!(names.contains(&name), "{name} missing: {err}");
    }
    let pwd = err
        .lines()
        .find_map(|l| l.strip_prefix("PWD "))
        .unwrap()
        .to_string();
    let run_folder = Path::new(&pwd).parent().unwrap();
    assert!(
        run_folder.starts_with(tmp.path()),
        "the run's folder {pwd} is in TMPDIR {}",
        tmp.path().display()
    );
    assert!(lines.next().unwrap().starts_with(&format!(
        "LANG=C.UTF-8 HOME={0}/home TMPDIR={0}/tmp",
        run_folder.display()
    )));
    assert!(err.contains("STDIN 0\n"), "{err}");
    assert!(!run_folder.exists(), "{} is removed", run_folder.display());
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .filter(|n| {
            n.to_string_lossy().starts_with("mccbuild-") && n.to_string_lossy() != "mccbuild-cores"
        })
        .collect();
    assert!(left.is_empty(), "left in TMPDIR: {left:?}");
}

/// docs/cache.md, "Hashing large inputs once": losing the digest cache only costs rehashing.
#[test]
fn losing_the_digest_cache_only_costs_rehashing() {
    let c = one_run_contest("known", "Philosophers");
    c.write("time_s = 20\nmemory_mb = 512");
    assert!(c.mccbuild(&["run"]).status.success());
    let digests = c.path().join("cache/meta/digests.bin");
    assert!(digests.exists());
    std::fs::remove_file(&digests).unwrap();
    let out = c.mccbuild(&["run", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(json(&out)["executed"], 0, "{}", stderr(&out));
    assert!(digests.exists(), "the digest cache is written again");
    // A damaged one too.
    std::fs::write(&digests, b"not a digest cache").unwrap();
    let out = c.mccbuild(&["run", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(json(&out)["executed"], 0, "{}", stderr(&out));
}

/// docs/cache.md, "Not in the key": a model's kind and the model an instance belongs to change
/// scores, not runs (UpperBounds never shows the verdict file, so the kind changes no content).
#[test]
fn a_models_kind_and_name_are_not_in_the_key() {
    let c = one_run_contest("known", "Philosophers");
    c.write("time_s = 20\nmemory_mb = 512");
    assert!(c.mccbuild(&["run"]).status.success());
    assert_eq!(to_run(&c), 0);
    let mut moved = one_run_contest("surprise", "Another");
    // The same folder: rewrite the manifest of `c` with the other model.
    moved.dir = c.dir;
    moved.write("time_s = 20\nmemory_mb = 512");
    assert_eq!(to_run(&moved), 0, "a model's kind and name rerun nothing");
}

/// docs/cache.md, "Cached results": the 20 most recent reports are kept.
#[test]
fn the_twenty_most_recent_results_reports_are_kept() {
    let mut c = one_run_contest("known", "Philosophers");
    c.write("time_s = 20\nmemory_mb = 512");
    assert!(c.mccbuild(&["run"]).status.success());
    let base = c.tools[0].clone();
    let results = c.path().join("cache/results");
    for n in 0..23 {
        // A tool's family is in the results' key (scores), not in the run's.
        c.tools[0] = format!("{base}family = \"f{n}\"\n");
        c.write("time_s = 20\nmemory_mb = 512");
        let out = c.mccbuild(&["scores"]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(to_run(&c), 0);
    }
    let reports = std::fs::read_dir(&results).unwrap().count();
    assert_eq!(reports, 20, "reports kept in {}", results.display());
}

/// docs/execution.md, "Sandboxes": `MCCBUILD_SANDBOX=fallback` forces the fallback; its records
/// say so, and its runs have other keys than the cgroup runs (the same contest runs again).
#[test]
fn the_fallback_is_recorded_and_keyed_apart_from_cgroup_runs() {
    let c = one_run_contest("known", "Philosophers");
    c.write("time_s = 20\nmemory_mb = 512");
    let fallback = std::process::Command::new(env!("CARGO_BIN_EXE_mccbuild"))
        .args(["run", "--json"])
        .current_dir(c.path())
        .env("MCCBUILD_SANDBOX", "fallback")
        .output()
        .unwrap();
    assert!(fallback.status.success(), "{}", stderr(&fallback));
    assert_eq!(json(&fallback)["executed"], 1);
    let rec = c.record("t", PHIL, "UpperBounds");
    assert_eq!(rec["measurement"], "fallback", "{rec}");
    assert_eq!(rec["executor"]["sandbox"], "fallback", "{rec}");
    let default = c.mccbuild(&["run", "--json"]);
    if !is_root() {
        skip("cgroups need root: the default sandbox is the fallback here too");
        return;
    }
    assert_eq!(json(&default)["executed"], 1, "{}", stderr(&default));
    assert_eq!(c.records().len(), 2);
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"))
}
