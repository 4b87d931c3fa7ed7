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
        text.contains("regressions: newly wrong 3, newly unsolved 0"),
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

// A tool developer's comparison on a fixture that takes seconds: one instance with six
// ReachabilityCardinality formulas judged against reference answers, and scripted tools that
// print fixed answers (and sleep where told, for a slower run).

const INSTANCE: &str = "Dev-PT-1";
const PNML: &str = "<pnml><net type=\"http://www.pnml.org/version-2009/grammar/ptnet\"><page id=\"p\"/></net></pnml>\n";
/// The reference: formulas 00 to 05.
const REFERENCE: [&str; 6] = ["TRUE", "TRUE", "TRUE", "FALSE", "FALSE", "TRUE"];
/// Version 1: 02 unanswered, 03 wrong.
const V1: [&str; 6] = ["TRUE", "TRUE", "", "TRUE", "FALSE", "TRUE"];
/// Version 2, the planted change: 00 newly wrong, 01 newly unsolved, 02 newly solved (and
/// right), 03 newly right; its StateSpace run sleeps 1.5 s (slower).
const V2: [&str; 6] = ["FALSE", "", "TRUE", "FALSE", "FALSE", "TRUE"];

fn formula(i: usize) -> String {
    format!("{INSTANCE}-ReachabilityCardinality-{i:02}")
}

/// The contest, without its tools: the instance, the reference, wall-time limits.
pub(crate) fn dev_contest() -> TestContest {
    let mut c = TestContest::new();
    let dir = c.path().join("models").join(INSTANCE);
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("model.pnml"), PNML).unwrap();
    fs::write(dir.join("iscolored"), "FALSE\n").unwrap();
    let mut xml =
        String::from("<?xml version=\"1.0\"?>\n<property-set xmlns=\"http://mcc.lip6.fr/\">\n");
    for i in 0..REFERENCE.len() {
        xml.push_str(&format!(
            "  <property><id>{}</id><description>r</description><formula/></property>\n",
            formula(i)
        ));
    }
    xml.push_str("</property-set>\n");
    fs::write(dir.join("ReachabilityCardinality.xml"), xml).unwrap();
    c.model("Dev", "known", &[&format!("models/{INSTANCE}")]);
    let oracle = c.path().join("oracle");
    fs::create_dir_all(&oracle).unwrap();
    let mut text = format!("{INSTANCE} ReachabilityCardinality\n");
    for (i, v) in REFERENCE.iter().enumerate() {
        text.push_str(&format!("FORMULA {} {v} TECHNIQUES ORACLE\n", formula(i)));
    }
    fs::write(oracle.join(format!("{INSTANCE}-RC.out")), text).unwrap();
    c.extra = "[reference]\nanswers = \"oracle\"\nbasis = \"reference\"\n".to_string();
    c
}

/// A scripted tool `name` (sleeping `sleep/<examination>` seconds where that file exists).
pub(crate) fn dev_tool(c: &mut TestContest, name: &str) {
    let dir = c.script_tool(
        name,
        "#!/bin/sh\nd=\"$(dirname \"$0\")\"\nif [ -f \"$d/sleep/$BK_EXAMINATION\" ]; then sleep \"$(cat \"$d/sleep/$BK_EXAMINATION\")\"; fi\nf=\"$d/answers/$BK_INPUT/$BK_EXAMINATION\"\nif [ -f \"$f\" ]; then cat \"$f\"; else echo DO_NOT_COMPETE; fi\n",
        "examinations = [\"ReachabilityCardinality\", \"StateSpace\"]",
    );
    fs::create_dir_all(dir.join("answers")).unwrap();
}

/// Makes tool `name` answer as version 1 or version 2.
pub(crate) fn dev_version(c: &TestContest, name: &str, two: bool) {
    let answers = if two { V2 } else { V1 };
    let mut text = String::new();
    for (i, v) in answers.iter().enumerate() {
        if !v.is_empty() {
            text.push_str(&format!("FORMULA {} {v} TECHNIQUES EXPLICIT\n", formula(i)));
        }
    }
    c.answer(name, INSTANCE, "ReachabilityCardinality", &text);
    c.answer(
        name,
        INSTANCE,
        "StateSpace",
        "STATE_SPACE STATES 10 TECHNIQUES EXPLICIT\nSTATE_SPACE TRANSITIONS 20 TECHNIQUES EXPLICIT\nSTATE_SPACE MAX_TOKEN_IN_PLACE 1 TECHNIQUES EXPLICIT\nSTATE_SPACE MAX_TOKEN_PER_MARKING 3 TECHNIQUES EXPLICIT\n",
    );
    let sleep = c.path().join("tools").join(name).join("sleep");
    if two {
        fs::create_dir_all(&sleep).unwrap();
        fs::write(sleep.join("StateSpace"), "1.5").unwrap();
    } else {
        let _ = fs::remove_dir_all(&sleep);
    }
}

pub(crate) const DEV_LIMITS: &str = "time_s = 60\nmemory_mb = 2048\ntime = \"wall\"";

/// What the planted change must show, in the text: each value once, regressions first.
pub(crate) fn assert_the_planted_change(text: &str) {
    assert!(
        text.contains("regressions: newly wrong 1, newly unsolved 1, slower runs 1 (x2 or more)"),
        "{text}"
    );
    assert!(
        text.contains("improvements: newly solved 1, newly right 2;"),
        "{text}"
    );
    let at = |needle: &str| {
        text.find(needle)
            .unwrap_or_else(|| panic!("no `{needle}` in\n{text}"))
    };
    let order = [
        at("newly wrong:\n"),
        at(&format!("{}: TRUE -> FALSE (trusted TRUE)", formula(0))),
        at("newly unsolved:\n"),
        at("slower runs (x2 or more"),
        at(&format!("{INSTANCE} StateSpace: ")),
        at("newly solved:\n"),
        at("newly right:\n"),
    ];
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}\n{text}");
    // Each value once: 4 changed values, 4 lines naming a formula.
    for i in 0..4 {
        assert_eq!(
            text.matches(&format!("{}:", formula(i))).count(),
            1,
            "{i}\n{text}"
        );
    }
    assert!(!text.contains(&format!("{}:", formula(4))), "{text}");
    assert!(
        text.contains(&format!(
            "{}: - -> TRUE (trusted TRUE; also newly right)",
            formula(2)
        )),
        "{text}"
    );
}

#[test]
fn regressions_come_first_each_value_once_and_fail_on_sets_the_exit_code() {
    let mut c = dev_contest();
    dev_tool(&mut c, "v1");
    dev_tool(&mut c, "v2");
    dev_version(&c, "v1", false);
    dev_version(&c, "v2", true);
    c.write(DEV_LIMITS);
    let run = c.mccbuild(&["run"]);
    assert!(run.status.success(), "{}", stderr(&run));

    let out = c.mccbuild(&["diff", "--old", "v1", "--new", "v2"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert_the_planted_change(&text);
    assert!(text.contains("scores (old -> new):\n"), "{text}");

    let d = json(&c.mccbuild(&["diff", "--old", "v1", "--new", "v2", "--json"]));
    let listed: Vec<(&str, &serde_json::Value)> = d["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| (v["id"].as_str().unwrap(), &v["changes"]))
        .collect();
    let f = |i| formula(i);
    assert_eq!(
        listed,
        [
            (f(0).as_str(), &serde_json::json!(["newly-wrong"])),
            (f(1).as_str(), &serde_json::json!(["newly-unsolved"])),
            (
                f(2).as_str(),
                &serde_json::json!(["newly-solved", "newly-right"])
            ),
            (f(3).as_str(), &serde_json::json!(["newly-right"])),
        ],
        "{d}"
    );
    assert_eq!(d["slower"].as_array().unwrap().len(), 1, "{d}");
    assert_eq!(d["slower"][0]["examination"], "StateSpace");
    assert!(d["slower"][0]["new_time_s"].as_f64().unwrap() >= 1.5, "{d}");

    // --fail-on: exit 6 when a named regression is found, after the comparison is printed.
    for (args, code) in [
        (&["--fail-on", "wrong"][..], 6),
        (&["--fail-on", "unsolved,slower"], 6),
        (&["--fail-on", "slower", "--slower", "100"], 0),
        (&["--slower", "100"], 0),
    ] {
        let mut all = vec!["diff", "--old", "v1", "--new", "v2"];
        all.extend_from_slice(args);
        let out = c.mccbuild(&all);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {}", stderr(&out));
        assert!(stdout(&out).contains("newly wrong:"), "{args:?}");
        if code == 5 {
            assert!(
                stderr(&out).contains("regressions found (--fail-on)"),
                "{}",
                stderr(&out)
            );
        }
    }
    // The fix, the other way round: nothing wrong, nothing unsolved, nothing slower.
    let back = c.mccbuild(&["diff", "--old", "v2", "--new", "v1", "--fail-on", "slower"]);
    assert!(back.status.success(), "{}", stderr(&back));
    let bad = c.mccbuild(&["diff", "--old", "v1", "--new", "v2", "--slower", "0.5"]);
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
}

/// `diff` with the terminal's width (`COLUMNS`, as a terminal gives it): on 60 columns the counts'
/// labels are shorter, a value's place is its id alone when the id names its instance and
/// examination, and every line fits; on 120 columns the wide layout. Snapshots (times filtered).
#[test]
fn diff_lines_fit_a_60_column_terminal() {
    let mut c = dev_contest();
    dev_tool(&mut c, "v1");
    dev_tool(&mut c, "v2");
    dev_version(&c, "v1", false);
    dev_version(&c, "v2", true);
    c.write(DEV_LIMITS);
    let run = c.mccbuild(&["run"]);
    assert!(run.status.success(), "{}", stderr(&run));
    let diff = |columns: &str| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_mccbuild"))
            .args(["diff", "--old", "v1", "--new", "v2"])
            .current_dir(c.path())
            .env_remove("MCCBUILD_SANDBOX")
            .env("COLUMNS", columns)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        stdout(&out)
    };
    let narrow = diff("60");
    for line in narrow.lines() {
        assert!(line.chars().count() <= 60, "{line:?} in\n{narrow}");
    }
    let wide = diff("120");
    assert_the_planted_change(&wide);
    let mut settings = output_settings(c.path());
    settings.add_filter(r"x\d+\.\d+", "x[R]");
    settings.add_filter(r"\d+\.\d+ s", "[T] s");
    settings.bind(|| {
        insta::assert_snapshot!("diff_at_60_columns", narrow);
        insta::assert_snapshot!("diff_at_120_columns", wide);
    });
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.org"])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", stderr(&out));
    stdout(&out).trim().to_string()
}

#[test]
fn diff_against_the_previous_version_with_one_tool_entry_lists_exactly_the_planted_change() {
    let mut c = dev_contest();
    dev_tool(&mut c, "dev");
    dev_version(&c, "dev", false);
    c.write(DEV_LIMITS);
    let tool = c.path().join("tools/dev");
    git(&tool, &["init", "-q"]);
    git(&tool, &["add", "-A"]);
    git(&tool, &["commit", "-qm", "version 1"]);
    let v1_revision = git(&tool, &["rev-parse", "HEAD"]);
    let run = |c: &TestContest| {
        let out = c.mccbuild(&["run", "--json"]);
        assert!(out.status.success(), "{}", stderr(&out));
        json(&out)
    };
    run(&c);
    // One version only: nothing to compare with, and the message says why and what to do.
    let none = c.mccbuild(&["diff", "--tool", "dev"]);
    assert_eq!(none.status.code(), Some(2), "{}", stdout(&none));
    assert!(
        stderr(&none).contains("holds no run of an earlier version of tool `dev`"),
        "{}",
        stderr(&none)
    );

    // Version 2, the planted change, in the same folder: only its runs are executed.
    dev_version(&c, "dev", true);
    let second = run(&c);
    assert_eq!(second["executed"], 2, "{second}");
    let out = c.mccbuild(&["diff", "--tool", "dev"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert_the_planted_change(&text);
    assert!(text.starts_with("dev "), "{text}");

    // The versions: the first one, then the current one, each with its 2 runs and git revision.
    let list = json(&c.mccbuild(&["diff", "--tool", "dev", "--list", "--json"]));
    let list = list.as_array().unwrap();
    assert_eq!(list.len(), 2, "{list:?}");
    assert_eq!(list[0]["current"], false);
    assert_eq!(list[1]["current"], true);
    assert_eq!(
        (list[0]["runs"].as_u64(), list[1]["runs"].as_u64()),
        (Some(2), Some(2))
    );
    assert_eq!(list[0]["git"], v1_revision.as_str());
    assert_eq!(list[1]["git"], format!("{v1_revision}+changes").as_str());
    let v1 = list[0]["digest"].as_str().unwrap();
    let listed = stdout(&c.mccbuild(&["diff", "--tool", "dev", "--list"]));
    assert!(
        listed.contains(&v1[..12]) && listed.contains("(current)"),
        "{listed}"
    );

    // --against names the same version by digest, by git revision and by date.
    let today = &list[0]["first_run"].as_str().unwrap()[..10];
    for against in [&v1[..8], "HEAD", &v1_revision[..10], today] {
        let out = c.mccbuild(&["diff", "--tool", "dev", "--against", against, "--json"]);
        assert!(out.status.success(), "{against}: {}", stderr(&out));
        let d = json(&out);
        assert_eq!(d["old_version"]["digest"], v1, "{against}");
        assert_eq!(d["counts"]["newly-wrong"], 1, "{against}");
    }
    let unknown = c.mccbuild(&["diff", "--tool", "dev", "--against", "ffffffff"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(
        stderr(&unknown).contains("no earlier version matches"),
        "{}",
        stderr(&unknown)
    );

    // Back to version 1: nothing is executed (its runs are in the store), and the previous
    // version is now version 2: the comparison is the planted change reversed (03 wrong
    // again, 00 right again, no slower run).
    dev_version(&c, "dev", false);
    let third = run(&c);
    assert_eq!(third["executed"], 0, "{third}");
    let back = c.mccbuild(&["diff", "--tool", "dev", "--fail-on", "slower"]);
    assert!(
        back.status.success(),
        "{}\n{}",
        stdout(&back),
        stderr(&back)
    );
    assert!(
        stdout(&back).contains("regressions: newly wrong 1, newly unsolved 1, slower runs 0"),
        "{}",
        stdout(&back)
    );
    let wrong = c.mccbuild(&["diff", "--tool", "dev", "--fail-on", "wrong"]);
    assert_eq!(wrong.status.code(), Some(6), "{}", stderr(&wrong));
}

#[test]
fn explain_names_the_record_and_scores_wrong_lists_each_wrong_value_with_its_run() {
    let mut c = dev_contest();
    dev_tool(&mut c, "dev");
    dev_version(&c, "dev", false);
    c.write(DEV_LIMITS);
    let out = c.mccbuild(&["run"]);
    assert!(out.status.success(), "{}", stderr(&out));

    // Version 1 has one wrong value: formula 03, TRUE where the reference says FALSE.
    let wrong = json(&c.mccbuild(&["scores", "--wrong", "--json"]));
    assert_eq!(wrong["basis"], "reference");
    let list = wrong["wrong"].as_array().unwrap();
    assert_eq!(list.len(), 1, "{wrong}");
    let w = &list[0];
    assert_eq!(
        (
            w["id"].as_str(),
            w["answer"].as_str(),
            w["trusted"].as_str()
        ),
        (Some(formula(3).as_str()), Some("TRUE"), Some("FALSE"))
    );
    assert_eq!(w["run"]["tool"], "dev");
    let record = Path::new(w["run"]["record"].as_str().unwrap());
    assert!(record.is_file(), "{}", record.display());
    let text = stdout(&c.mccbuild(&["scores", "--wrong", "dev"]));
    assert!(
        text.starts_with(
            "1 wrong value (answers against the contest's reference answers)\ndev: 1 wrong\n"
        ),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "  {INSTANCE} ReachabilityCardinality {}: TRUE (trusted FALSE)\n    record: {}",
            formula(3),
            record.display()
        )),
        "{text}"
    );
    let nope = c.mccbuild(&["scores", "--wrong", "nope"]);
    assert_eq!(nope.status.code(), Some(2), "{}", stderr(&nope));

    // explain names the same record and the command that reproduces the run.
    let args = [
        "explain",
        "--instance",
        INSTANCE,
        "--examination",
        "ReachabilityCardinality",
        "--id",
        &formula(3),
    ];
    let text = stdout(&c.mccbuild(&args));
    assert!(
        text.contains(&format!(
            "runs:\n  dev: record {}\n    reproduce: ",
            record.display()
        )),
        "{text}"
    );
    let mut with_json = args.to_vec();
    with_json.push("--json");
    let x = json(&c.mccbuild(&with_json));
    assert_eq!(x["runs"][0]["record"], w["run"]["record"], "{x}");
    // The reproduction gives the wrong answer again.
    let command = x["runs"][0]["reproduce"].as_str().unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(c.path(), fs::Permissions::from_mode(0o755)).unwrap();
    }
    let again = std::process::Command::new("sh")
        .arg("-c")
        .arg(command)
        .output()
        .unwrap();
    assert!(again.status.success(), "{command}: {}", stderr(&again));
    assert!(
        stdout(&again).contains(&format!("FORMULA {} TRUE", formula(3))),
        "{}",
        stdout(&again)
    );
}

#[test]
fn one_command_after_a_change_runs_it_and_compares_it_with_the_previous_version() {
    let mut c = dev_contest();
    dev_tool(&mut c, "dev");
    dev_version(&c, "dev", false);
    c.write(DEV_LIMITS);
    // The first version: nothing to compare with, said, not an error.
    let first = c.mccbuild(&["run", "--diff"]);
    assert!(first.status.success(), "{}", stderr(&first));
    assert!(
        stderr(&first).contains("dev: no earlier version in the store to compare with"),
        "{}",
        stderr(&first)
    );
    // The change, then the one command: its runs executed, the comparison printed, and the
    // regressions --fail-on names fail it.
    dev_version(&c, "dev", true);
    let after = c.mccbuild(&["run", "--fail-on", "wrong,unsolved,slower"]);
    assert_eq!(after.status.code(), Some(6), "{}", stderr(&after));
    assert!(
        stderr(&after).contains("2 executed, 0 cached, 0 failed"),
        "{}",
        stderr(&after)
    );
    assert_the_planted_change(&stdout(&after));
    assert!(
        stderr(&after).contains(
            "regressions found (--fail-on): dev: newly wrong 1, newly unsolved 1, slower runs 1"
        ),
        "{}",
        stderr(&after)
    );
    // Again: nothing changed, nothing executed, nothing compared.
    let again = c.mccbuild(&["run", "--diff", "--json"]);
    assert!(again.status.success(), "{}", stderr(&again));
    assert_eq!(json(&again), serde_json::json!({}));
    // Named with --tool, the tool is compared even when nothing of it was executed now.
    let named = json(&c.mccbuild(&["run", "--tool", "dev", "--diff", "--json"]));
    assert_eq!(named["dev"]["counts"]["newly-wrong"], 1, "{named}");
}

/// A change run on some examinations only (`run --examination`): its values there are
/// compared, and the scores of a category where the new version's runs are missing are not
/// (they would count different runs), said so.
#[test]
fn a_change_run_on_some_examinations_compares_their_values_and_not_the_other_scores() {
    let mut c = dev_contest();
    dev_tool(&mut c, "dev");
    dev_version(&c, "dev", false);
    c.write(DEV_LIMITS);
    assert!(c.mccbuild(&["run"]).status.success());
    dev_version(&c, "dev", true);
    let args = [
        "run",
        "--tool",
        "dev",
        "--examination",
        "ReachabilityCardinality",
        "--diff",
    ];
    let text = c.mccbuild(&args);
    assert!(text.status.success(), "{}", stderr(&text));
    let out = stdout(&text);
    assert!(
        out.contains("newly wrong 1, newly unsolved 1, slower runs 0"),
        "{out}"
    );
    assert!(out.contains("  Reachability: "), "{out}");
    assert!(!out.contains("  StateSpace: "), "{out}");
    assert!(
        out.contains("  not compared: StateSpace (on some examination instances the run of one version only is in the store)"),
        "{out}"
    );
    let d = json(&c.mccbuild(&["diff", "--tool", "dev", "--json"]));
    assert_eq!(
        d["scores_not_compared"],
        serde_json::json!(["StateSpace"]),
        "{d}"
    );
    assert!(d["scores"]["Reachability"].is_array(), "{d}");
    assert!(d["scores"].get("StateSpace").is_none(), "{d}");
}

#[test]
fn the_ci_recipes_loop_runs_here_and_fails_on_a_planted_regression() {
    let mut c = dev_contest();
    dev_tool(&mut c, "dev");
    dev_version(&c, "dev", false);
    c.write(DEV_LIMITS);
    let workflow = fs::read_to_string(Path::new(REPO).join("examples/ci/mccbuild.yml")).unwrap();
    assert!(
        workflow.contains("run: sh ci/loop.sh"),
        "the workflow runs the loop"
    );
    let report = c.path().join("report");
    let loop_sh = |c: &TestContest| {
        std::process::Command::new("sh")
            .arg(Path::new(REPO).join("examples/ci/loop.sh"))
            .current_dir(c.path())
            .env("MCCBUILD", env!("CARGO_BIN_EXE_mccbuild"))
            .env("CONTEST", c.path().join("contest.toml"))
            .env("TOOL", "dev")
            .env("REPORT", &report)
            .env_remove("MCCBUILD_SANDBOX")
            .output()
            .unwrap()
    };
    let first = loop_sh(&c);
    assert!(
        first.status.success(),
        "{}\n{}",
        stdout(&first),
        stderr(&first)
    );
    assert!(
        stderr(&first).contains("no earlier version"),
        "{}",
        stderr(&first)
    );
    dev_version(&c, "dev", true);
    let second = loop_sh(&c);
    assert_eq!(second.status.code(), Some(6), "{}", stderr(&second));
    assert_the_planted_change(&stdout(&second));
    let d: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(report.join("diff.json")).unwrap()).unwrap();
    assert_eq!(d["counts"]["newly-wrong"], 1, "{d}");
    assert!(
        fs::read_to_string(report.join("diff.html"))
            .unwrap()
            .contains("newly wrong")
    );
    let wrong = fs::read_to_string(report.join("wrong.txt")).unwrap();
    assert!(
        wrong.contains(&format!("{}: FALSE (trusted TRUE)", formula(0))),
        "{wrong}"
    );
    let versions = fs::read_to_string(report.join("versions.txt")).unwrap();
    assert!(versions.contains("(current)"), "{versions}");
    // The loop on real instances (examples/ci/explorer.toml): of the 1,372 MCC 2025 instances,
    // each model's first PT and first COL instance, 152, with every examination.
    let plan = mccbuild_in(
        Path::new(REPO),
        &["plan", "--manifest", "examples/ci/explorer.toml", "--json"],
    );
    assert!(plan.status.success(), "{}", stderr(&plan));
    assert_eq!(json(&plan)["runs"], 1976, "{}", stderr(&plan));
}
