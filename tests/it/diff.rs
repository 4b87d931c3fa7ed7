//! `mccbuild diff` through the binary: the explorer against a copy of it with a deliberate bug
//! (its BenchKit_head.sh flips every ReachabilityDeadlock answer) lists exactly the values the bug
//! changed, each newly wrong against the trusted values the demo's tools vote.
//!
//! The contest uses the repository's store (`cache/`, as tests/it/demo.rs and tests/it/qualify.rs do),
//! so pm4py's and SNAKES's runs and setups are shared with them.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

use crate::common::*;

const FLIP: &str = r#"if [ "$BK_EXAMINATION" = ReachabilityDeadlock ]; then
    # The deliberate bug: every ReachabilityDeadlock answer flipped.
    "$BIN_DIR/explorer" | sed 's/^\(FORMULA ReachabilityDeadlock\) TRUE/\1 T/; s/^\(FORMULA ReachabilityDeadlock\) FALSE/\1 TRUE/; s/^\(FORMULA ReachabilityDeadlock\) T /\1 FALSE /'
else
    exec "$BIN_DIR/explorer"
fi"#;

#[test]
fn diff_lists_exactly_the_values_a_bug_changed() {
    let repo = Path::new(REPO);
    let dir = tempfile::tempdir().unwrap();
    // The copy of the explorer, with the bug in its entry script.
    let copy = dir.path().join("explorer-bug");
    fs::create_dir_all(&copy).unwrap();
    for entry in [
        "Cargo.toml",
        "Cargo.lock",
        "setup.sh",
        "BenchKit_head.sh",
        "src",
    ] {
        let from = repo.join("tools/explorer").join(entry);
        if from.is_dir() {
            copy_dir(&from, &copy.join(entry));
        } else {
            fs::copy(&from, copy.join(entry)).unwrap();
        }
    }
    let head = fs::read_to_string(copy.join("BenchKit_head.sh")).unwrap();
    assert!(head.contains("exec \"$BIN_DIR/explorer\""));
    write_exec(
        &copy.join("BenchKit_head.sh"),
        &head.replace("exec \"$BIN_DIR/explorer\"", FLIP),
    );
    let setup = "setup = \"./setup.sh\"\nsetup_inputs = [\"setup.sh\", \"Cargo.toml\", \"Cargo.lock\", \"src\"]";
    // As in contest.toml: the Python tools run as root (their venv's Python may be under /root).
    let python = "setup = \"./setup.sh\"\nsetup_inputs = [\"setup.sh\", \"requirements.txt\"]\nuser = \"root\"";
    let exams = "examinations = [\"GlobalProperties\"]";
    let manifest = format!(
        r#"[contest]
name = "diff test"
rules = "{r}/rules/mcc-2026.toml"
store = "{r}/cache"

[limits]
time_s = 10
memory_mb = 2048

[[model]]
name = "Philosophers"
instances = ["{r}/models/Philosophers-PT-000002"]
[[model]]
name = "TokenRing"
instances = ["{r}/models/TokenRing-PT-4"]
[[model]]
name = "Deadlock"
instances = ["{r}/models/Deadlock-PT-1"]

[[tool]]
name = "explorer"
dir = "{r}/tools/explorer"
{setup}
{exams}
[[tool]]
name = "explorer-bug"
dir = "explorer-bug"
{setup}
{exams}
[[tool]]
name = "pm4py"
dir = "{r}/tools/pm4py"
{python}
{exams}
[[tool]]
name = "snakes"
dir = "{r}/tools/snakes"
{python}
{exams}
"#,
        r = REPO
    );
    fs::write(dir.path().join("contest.toml"), manifest).unwrap();
    let run = mccbuild_in(dir.path(), &["run", "--json"]);
    assert!(run.status.success(), "{}", stderr(&run));

    // What the bug changed, read from the scores: the explorer's ReachabilityDeadlock answers.
    let scores = json(&mccbuild_in(dir.path(), &["scores", "--json"]));
    let mut flipped = BTreeSet::new();
    let mut trusted = BTreeMap::new();
    for v in scores["values"].as_array().unwrap() {
        let key = (
            v["instance"].as_str().unwrap().to_string(),
            v["examination"].as_str().unwrap().to_string(),
            v["id"].as_str().unwrap().to_string(),
        );
        let (old, new) = (&v["answers"]["explorer"], &v["answers"]["explorer-bug"]);
        if key.1 == "ReachabilityDeadlock" {
            assert!(old.is_string(), "the explorer answers {key:?}");
            assert_ne!(old, new, "{key:?}");
            flipped.insert(key.clone());
        } else {
            assert_eq!(old, new, "{key:?}");
        }
        trusted.insert(key, (v["trusted"].clone(), old.clone()));
    }
    assert_eq!(flipped.len(), 3);

    let out = mccbuild_in(
        dir.path(),
        &[
            "diff",
            "--old",
            "explorer",
            "--new",
            "explorer-bug",
            "--json",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let d = json(&out);
    let listed: BTreeSet<(String, String, String)> = d["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["instance"].as_str().unwrap().to_string(),
                v["examination"].as_str().unwrap().to_string(),
                v["id"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(listed, flipped, "{d}");
    for v in d["values"].as_array().unwrap() {
        let key = (
            v["instance"].as_str().unwrap().to_string(),
            v["examination"].as_str().unwrap().to_string(),
            v["id"].as_str().unwrap().to_string(),
        );
        // Three tools against one: the trusted value is the explorer's (and the other tools').
        assert_eq!(trusted[&key].0, trusted[&key].1, "{key:?}");
        assert_eq!(v["changes"], serde_json::json!(["newly-wrong"]), "{v}");
    }
    assert_eq!(d["counts"]["newly-wrong"], 3);
    assert_eq!(d["counts"]["newly-right"], 0);
    assert_eq!(d["measurements"]["ReachabilityDeadlock"]["runs"], 3);
    assert_eq!(d["measurements"]["OneSafe"]["runs"], 3);

    let page = dir.path().join("diff.html");
    let text = stdout(&mccbuild_in(
        dir.path(),
        &[
            "diff",
            "--old",
            "explorer",
            "--new",
            "explorer-bug",
            "--html",
            page.to_str().unwrap(),
        ],
    ));
    assert!(
        text.contains("newly right 0, newly wrong 3, newly solved 0, newly unsolved 0"),
        "{text}"
    );
    assert!(
        text.contains("(answers against the trusted values the contest's tools vote (E-3.1))"),
        "{text}"
    );
    // The page lists the same values, each marked newly wrong.
    let html = fs::read_to_string(&page).unwrap();
    assert_eq!(
        html.matches("<td class=\"bad\">newly wrong</td>").count(),
        3,
        "{html}"
    );
    assert!(html.contains("basis: <b>vote</b>"), "{html}");
    assert!(text.contains("  Deadlock-PT-1 ReachabilityDeadlock ReachabilityDeadlock: TRUE -> FALSE (trusted TRUE)"), "{text}");

    // The other way round, the fix: every value newly right.
    let back = json(&mccbuild_in(
        dir.path(),
        &[
            "diff",
            "--old",
            "explorer-bug",
            "--new",
            "explorer",
            "--json",
        ],
    ));
    assert_eq!(back["counts"]["newly-right"], 3, "{back}");
    assert_eq!(back["counts"]["newly-wrong"], 0, "{back}");
    let usage = mccbuild_in(dir.path(), &["diff", "--old", "explorer", "--new", "nope"]);
    assert_eq!(usage.status.code(), Some(2));
    assert!(stderr(&usage).contains("no tool `nope`"));
}
