//! The SV-COMP 2012 example contest (examples/svcomp-2012), run by the real binary with its three
//! real tools: the trusted values must be the tasks' expected verdicts (ground truth), each tool's
//! score the SV-COMP 2012 score table applied to its answers, and the podium ordered by score,
//! then by success CPU time.
//!
//! The example is copied into a temporary folder (with the rules file at the same relative place,
//! so the manifest is used byte for byte), with a store of its own: one record per run.
//! frama-c-eva needs Frama-C (Debian package frama-c-base): without it the test is skipped with
//! a printed reason, and fails in CI.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::process::Command;

use crate::common::*;

const TOOLS: [&str; 3] = ["tester", "frama-c-eva", "pessimist"];

/// The SV-COMP 2012 score table: (answer, expected verdict) -> points. `None`: UNKNOWN.
fn table(answer: Option<bool>, safe: bool) -> f64 {
    match (answer, safe) {
        (None, _) => 0.0,
        (Some(true), true) => 2.0,   // SAFE correct
        (Some(true), false) => -4.0, // SAFE incorrect
        (Some(false), false) => 1.0, // UNSAFE correct
        (Some(false), true) => -2.0, // UNSAFE incorrect
    }
}

/// What each tool answers on each task, worked out by hand (README.md of the example):
/// `S` SAFE, `U` UNSAFE, `-` UNKNOWN, for tester, frama-c-eva and pessimist.
const HAND: [(&str, &str, [char; 3]); 17] = [
    ("Arrays-even", "SAFE", ['-', 'S', 'U']),
    ("Arrays-max", "SAFE", ['-', '-', 'U']),
    ("Arrays-max-bug", "UNSAFE", ['U', '-', 'U']),
    ("Arrays-reverse-bug", "UNSAFE", ['U', '-', 'U']),
    ("Arrays-sort", "SAFE", ['-', '-', 'U']),
    ("Arrays-squares", "UNSAFE", ['U', '-', 'U']),
    ("ControlFlow-abs", "SAFE", ['-', 'S', 'U']),
    ("ControlFlow-locks", "SAFE", ['-', 'S', 'U']),
    ("ControlFlow-locks-bug", "UNSAFE", ['U', '-', 'U']),
    ("ControlFlow-min-bug", "UNSAFE", ['U', '-', 'U']),
    ("ControlFlow-password", "UNSAFE", ['-', '-', 'U']),
    ("ControlFlow-switch", "UNSAFE", ['U', '-', 'U']),
    ("Loops-collatz", "UNSAFE", ['U', '-', 'U']),
    ("Loops-count", "SAFE", ['-', '-', 'U']),
    ("Loops-even", "SAFE", ['-', 'S', 'U']),
    ("Loops-sum", "SAFE", ['-', '-', 'U']),
    ("Loops-sum-bug", "UNSAFE", ['U', '-', 'U']),
];

fn copy_example(to: &Path) -> std::path::PathBuf {
    let example = Path::new(REPO).join("examples/svcomp-2012");
    let target = to.join("examples/svcomp-2012");
    fs::create_dir_all(&target).unwrap();
    fs::copy(example.join("contest.toml"), target.join("contest.toml")).unwrap();
    copy_dir(&example.join("tasks"), &target.join("tasks"));
    copy_dir(&example.join("tools"), &target.join("tools"));
    // The manifest names its rules as ../../rules/svcomp-2012.toml.
    fs::create_dir_all(to.join("rules")).unwrap();
    fs::copy(
        Path::new(REPO).join("rules/svcomp-2012.toml"),
        to.join("rules/svcomp-2012.toml"),
    )
    .unwrap();
    target
}

fn has_frama_c() -> bool {
    Command::new("frama-c")
        .arg("-version")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn svcomp_2012_example_scores_by_the_table_and_ranks_by_success_cpu_time() {
    if !has_frama_c() {
        skip(
            "frama-c is not installed (Debian package frama-c-base): the example's frama-c-eva tool needs it",
        );
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = copy_example(tmp.path());

    // The tasks and their expected verdicts, as the files say.
    let mut expected: BTreeMap<String, bool> = BTreeMap::new();
    for entry in fs::read_dir(dir.join("tasks")).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        assert!(
            entry.path().join("program.c").is_file(),
            "{name}: no program.c"
        );
        let verdict = fs::read_to_string(entry.path().join("expected_verdict")).unwrap();
        let safe = match verdict.trim() {
            "SAFE" => true,
            "UNSAFE" => false,
            other => panic!("{name}: expected_verdict is `{other}`, not SAFE or UNSAFE"),
        };
        expected.insert(name, safe);
    }
    assert!(expected.len() >= 12, "{} tasks", expected.len());
    let hand: BTreeMap<&str, bool> = HAND.iter().map(|(t, v, _)| (*t, *v == "SAFE")).collect();
    assert_eq!(
        expected
            .iter()
            .map(|(t, s)| (t.as_str(), *s))
            .collect::<BTreeMap<_, _>>(),
        hand,
        "the tasks of the example and the hand-computed table of this test differ"
    );

    let check = mccbuild_in(&dir, &["check"]);
    assert!(
        check.status.success(),
        "{}{}",
        stdout(&check),
        stderr(&check)
    );
    let run = mccbuild_in(&dir, &["run", "--json"]);
    assert!(run.status.success(), "{}", stderr(&run));
    let counts = json(&run);
    assert_eq!(
        counts,
        serde_json::json!({"executed": 3 * expected.len(), "cached": 0, "failed": 0}),
        "{}",
        stderr(&run)
    );
    let again = json(&mccbuild_in(&dir, &["run", "--json"]));
    assert_eq!(
        again,
        serde_json::json!({"executed": 0, "cached": 3 * expected.len(), "failed": 0})
    );

    // One record per run (a fresh store): each tool's answer and CPU time on each task.
    let mut answers: BTreeMap<(String, String), Option<bool>> = BTreeMap::new();
    let mut cpu: BTreeMap<(String, String), f64> = BTreeMap::new();
    for shard in fs::read_dir(dir.join("cache/runs")).unwrap().flatten() {
        for file in fs::read_dir(shard.path()).unwrap().flatten() {
            if file.path().extension().is_none_or(|e| e != "json") {
                continue;
            }
            let r: serde_json::Value =
                serde_json::from_slice(&fs::read(file.path()).unwrap()).unwrap();
            assert_eq!(r["examination"], "ReachSafety", "{r}");
            let key = (
                r["tool"].as_str().unwrap().to_string(),
                r["instance"].as_str().unwrap().to_string(),
            );
            let values = r["answers"].as_array().unwrap();
            assert!(values.len() <= 1, "one verdict per run: {r}");
            let answer = values.first().map(|a| match a["value"].as_str().unwrap() {
                "TRUE" => true,
                "FALSE" => false,
                other => panic!("verdict value {other}: {r}"),
            });
            let stdout = r["stdout"]["text"].as_str().unwrap();
            let word = match answer {
                Some(true) => "SAFE",
                Some(false) => "UNSAFE",
                None => "UNKNOWN",
            };
            assert_eq!(
                stdout.trim(),
                word,
                "each tool prints exactly one verdict line: {r}"
            );
            assert!(
                answers.insert(key.clone(), answer).is_none(),
                "two records for {key:?}"
            );
            cpu.insert(key, r["cpu_time_s"].as_f64().unwrap());
        }
    }
    assert_eq!(answers.len(), 3 * expected.len());

    // Trusted values: the expected verdicts, from the ground truth.
    let scores = json(&mccbuild_in(&dir, &["scores", "--json"]));
    let values = scores["values"].as_array().unwrap();
    assert_eq!(values.len(), expected.len());
    for v in values {
        let task = v["instance"].as_str().unwrap();
        assert_eq!(v["examination"], "ReachSafety");
        assert_eq!(
            v["trusted"],
            if expected[task] { "TRUE" } else { "FALSE" },
            "{v}"
        );
        assert_eq!(v["case"], "ground-truth", "{v}");
        for tool in TOOLS {
            let shown = v["answers"].get(tool).and_then(|a| a.as_str());
            let recorded = answers[&(tool.to_string(), task.to_string())]
                .map(|b| if b { "TRUE" } else { "FALSE" });
            assert_eq!(shown, recorded, "{tool} on {task}");
        }
    }

    // Scores: the table applied to the recorded answers; success CPU time: the CPU time of the
    // runs with a correct verdict.
    let mut total: BTreeMap<&str, f64> = BTreeMap::new();
    let mut success_cpu: BTreeMap<&str, f64> = BTreeMap::new();
    for tool in TOOLS {
        for (task, &safe) in &expected {
            let key = (tool.to_string(), task.clone());
            let answer = answers[&key];
            *total.entry(tool).or_default() += table(answer, safe);
            if answer == Some(safe) {
                *success_cpu.entry(tool).or_default() += cpu[&key];
            }
        }
        assert_eq!(
            scores["scores"]["Overall"][tool].as_f64(),
            Some(total[tool]),
            "{tool}: {}",
            scores["scores"]
        );
    }

    // By hand (README.md of the example), 8 SAFE and 9 UNSAFE tasks:
    // - tester finds 8 of the 9 bugs (not ControlFlow-password) and never claims SAFE:
    //   8 x (+1) = 8;
    // - frama-c-eva proves ControlFlow-abs, ControlFlow-locks, Loops-even and Arrays-even, and
    //   answers UNKNOWN elsewhere: 4 x (+2) = 8;
    // - pessimist answers UNSAFE on all 17: 9 x (+1) + 8 x (-2) = 9 - 16 = -7.
    let letter = |a: Option<bool>| match a {
        Some(true) => 'S',
        Some(false) => 'U',
        None => '-',
    };
    let mut differ = Vec::new();
    for (task, _, by_hand) in HAND {
        for (t, tool) in TOOLS.iter().enumerate() {
            let got = letter(answers[&(tool.to_string(), task.to_string())]);
            if got != by_hand[t] {
                differ.push(format!("{tool} on {task}: {got}, by hand {}", by_hand[t]));
            }
        }
    }
    assert!(
        differ.is_empty(),
        "answers differ from the hand-computed table:\n{}",
        differ.join("\n")
    );
    assert_eq!(total["tester"], 8.0);
    assert_eq!(total["frama-c-eva"], 8.0);
    assert_eq!(total["pessimist"], -7.0);

    // Podium: by score, ties by success CPU time (lower first). tester and frama-c-eva tie at 8,
    // so the tie-break decides between them.
    let mut order: Vec<&str> = TOOLS.to_vec();
    order.sort_by(|a, b| {
        total[b].total_cmp(&total[a]).then(
            success_cpu
                .get(a)
                .unwrap_or(&0.0)
                .total_cmp(success_cpu.get(b).unwrap_or(&0.0)),
        )
    });
    let podium: Vec<&str> = scores["podiums"]["Overall"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert_eq!(podium, order, "success CPU time: {success_cpu:?}");
    assert_eq!(podium[2], "pessimist");
    let standings = scores["standings"]["Overall"].as_array().unwrap();
    let ranks: Vec<(String, u64)> = standings
        .iter()
        .map(|s| {
            (
                s["tool"].as_str().unwrap().to_string(),
                s["rank"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        ranks,
        order
            .iter()
            .enumerate()
            .map(|(i, t)| (t.to_string(), i as u64 + 1))
            .collect::<Vec<_>>(),
        "the tie-break gives distinct ranks"
    );
    // rules/svcomp-2012.toml: `medal_needs_positive_score` (a negative sum of points is no
    // better than random answers): no medal for the pessimist's -7.
    assert_eq!(standings[2]["medal"], serde_json::Value::Null);
    assert_eq!(standings[0]["medal"], "gold");
    assert_eq!(standings[1]["medal"], "silver");
}
