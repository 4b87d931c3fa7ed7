//! `mccbuild qualify` through the binary: the demo's tools qualify; a test tool per protocol fault
//! (tests/qualify/<fault>.sh, each a conforming tool plus one fault) gets exactly that fault,
//! named with its run, and the run's reproduction command does what the run did.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

use crate::common::*;

/// The faults, each the name of its check and of its script under tests/qualify/.
const FAULTS: [&str; 9] = [
    "unknown-id",
    "ill-formed-value",
    "stdout",
    "contradiction",
    "no-response",
    "techniques",
    "answer-on-stderr",
    "exit-status",
    "limits",
];

const EXAMS: &str = "examinations = [\"StateSpace\", \"ReachabilityDeadlock\", \"UpperBounds\", \"ReachabilityCardinality\"]";

fn test_tool(c: &mut TestContest, name: &str, examinations: &str) {
    let scripts = Path::new(REPO).join("tests/qualify");
    let script = fs::read_to_string(scripts.join(format!("{name}.sh"))).unwrap();
    let dir = c.script_tool(name, &script, examinations);
    fs::copy(scripts.join("lib.sh"), dir.join("lib.sh")).unwrap();
}

fn contest() -> TestContest {
    let mut c = TestContest::new();
    c.copy_demo_instance("Philosophers-PT-000002");
    c.copy_demo_instance("Philosophers-PT-000003");
    c.copy_demo_instance("ProdCons-PT-2");
    // Qualification: the first instance of each known model only; a surprise model is new.
    c.model(
        "Philosophers",
        "known",
        &[
            "models/Philosophers-PT-000002",
            "models/Philosophers-PT-000003",
        ],
    );
    c.model("ProdCons", "surprise", &["models/ProdCons-PT-2"]);
    test_tool(&mut c, "good", EXAMS);
    for fault in FAULTS {
        // The looping tool takes part in one examination: one run at the CPU-time limit.
        let exams = if fault == "limits" {
            "examinations = [\"StateSpace\"]"
        } else {
            EXAMS
        };
        test_tool(&mut c, fault, exams);
    }
    c.write("time_s = 1\nmemory_mb = 512");
    c
}

#[test]
fn each_protocol_fault_is_named_with_its_run_and_a_conforming_tool_qualifies() {
    let c = contest();
    let out = c.mccbuild(&["qualify", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let report = json(&out);
    let tools = report["tools"].as_object().unwrap();
    assert_eq!(tools.len(), FAULTS.len() + 1, "{report}");

    let good = &tools["good"];
    assert_eq!(good["qualified"], true, "{good}");
    assert_eq!(good["problems"], 0);
    assert_eq!(good["faulty_runs"].as_array().unwrap().len(), 0);
    // How each run ended is typed, as in records.
    for r in good["run_list"].as_array().unwrap() {
        assert_eq!(
            r["termination"],
            serde_json::json!({"reason": "exit", "code": 0}),
            "{r}"
        );
    }
    // 4 examinations on Philosophers-PT-000002 alone.
    assert_eq!(good["runs"], 4);
    assert_eq!(good["answered"], 4);
    let instances: BTreeSet<&str> = good["run_list"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["instance"].as_str().unwrap())
        .collect();
    assert_eq!(instances, BTreeSet::from(["Philosophers-PT-000002"]));

    for fault in FAULTS {
        let verdict = &tools[fault];
        assert_eq!(verdict["qualified"], false, "{fault}: {verdict}");
        // One entry per faulty run, its problems under it.
        let faulty = verdict["faulty_runs"].as_array().unwrap();
        let mut runs_seen = BTreeSet::new();
        let mut problems = 0;
        for r in faulty {
            assert!(
                runs_seen.insert(r["key"].as_str().unwrap()),
                "{fault}: a run listed twice: {verdict}"
            );
            assert_eq!(r["instance"], "Philosophers-PT-000002", "{r}");
            let record = Path::new(r["record"].as_str().unwrap());
            assert!(
                record.is_file(),
                "{fault}: no record at {}",
                record.display()
            );
            assert!(
                r["reproduce"]
                    .as_str()
                    .unwrap()
                    .contains(&format!(" BK_TOOL={fault} "))
            );
            let checks: BTreeSet<&str> = r["problems"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p["check"].as_str().unwrap())
                .collect();
            assert_eq!(checks, BTreeSet::from([fault]), "{fault}: {r}");
            problems += r["problems"].as_array().unwrap().len();
        }
        assert_eq!(verdict["problems"], problems, "{fault}: {verdict}");
        // Every run of a fault tool shows it (the fault is in every examination).
        let runs = verdict["runs"].as_u64().unwrap() as usize;
        assert_eq!(faulty.len(), runs, "{fault}: {verdict}");
    }
    // The fault is said with where it is.
    let detail = |tool: &str, exam: &str| -> String {
        tools[tool]["faulty_runs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["examination"] == exam)
            .map(|r| r["problems"][0]["detail"].as_str().unwrap().to_string())
            .unwrap_or_default()
    };
    assert!(
        detail("unknown-id", "ReachabilityCardinality").contains("NoSuchFormula-00"),
        "{}",
        detail("unknown-id", "ReachabilityCardinality")
    );
    assert!(detail("exit-status", "StateSpace").contains("status 3"));
    assert!(detail("answer-on-stderr", "UpperBounds").contains("16 answers only on stderr"));

    // The text names the same, and a second qualify executes nothing (the runs are cached).
    let text = c.mccbuild(&["qualify", "--html", "qualification.html"]);
    assert!(text.status.success(), "{}", stderr(&text));
    let text = stdout(&text);
    assert!(text.contains("good: qualified (4 runs"), "{text}");
    assert!(
        text.contains("exit-status: NOT qualified: 4 problems in 4 runs"),
        "{text}"
    );
    // Grouped per run: the run, its problems, then its record and reproduction once.
    assert!(
        text.contains(
            "  Philosophers-PT-000002 StateSpace:\n    exit-status: exited with status 3"
        ),
        "{text}"
    );
    assert_eq!(
        text.matches("    reproduce: ").count(),
        text.matches("    record:    ").count()
    );
    // The page says the same.
    let page = fs::read_to_string(c.path().join("qualification.html")).unwrap();
    assert!(
        page.contains("not qualified: 4 problems in 4 runs"),
        "{page}"
    );
    assert!(page.contains("exited with status 3"), "{page}");
    assert!(page.contains(">qualified<"), "{page}");
    let plan = json(&c.mccbuild(&[
        "plan",
        "--json",
        "--tool",
        "good",
        "--model",
        "Philosophers",
    ]));
    assert_eq!(
        plan["cached"], 4,
        "qualification runs are ordinary runs: {plan}"
    );
}

#[test]
fn the_reproduction_command_runs_the_tool_as_the_run_did() {
    let mut c = TestContest::new();
    c.copy_demo_instance("Philosophers-PT-000002");
    c.model("Philosophers", "known", &["models/Philosophers-PT-000002"]);
    // A variant of a submission: its runs get the submission's BK_TOOL, not the entry's name,
    // and so must the reproduction.
    test_tool(
        &mut c,
        "exit-status",
        "examinations = [\"UpperBounds\"]\nbk_tool = \"exit-status-variant\"",
    );
    c.write("time_s = 5\nmemory_mb = 512");
    let report = json(&c.mccbuild(&["qualify", "--json"]));
    let problem = &report["tools"]["exit-status"]["faulty_runs"][0];
    let command = problem["reproduce"].as_str().unwrap();
    assert!(
        command.contains(" BK_TOOL=exit-status-variant "),
        "the run's BK_TOOL: {command}"
    );
    // The run's environment only, its time limit, and (mccbuild as root) its user.
    assert!(command.contains("env -i PATH="), "{command}");
    assert!(
        command.contains(" BK_TIME_CONFINEMENT=5 BK_MEMORY_CONFINEMENT=512 "),
        "{command}"
    );
    // MCC 2026 limits wall-clock time.
    assert!(command.contains(" timeout -s KILL 5 "), "{command}");
    let root = std::process::Command::new("id").arg("-u").output().unwrap();
    if stdout(&root).trim() == "0" {
        assert!(command.contains("runuser -u mcc -- "), "{command}");
        // The user `mcc` reads the tool where the test put it.
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(c.path(), fs::Permissions::from_mode(0o755)).unwrap();
    }
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(command)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{command}");
    let answers: BTreeMap<String, String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.strip_prefix("FORMULA "))
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (w[0].to_string(), w[1].to_string())
        })
        .collect();
    assert_eq!(answers.len(), 16, "{command}");
    assert!(
        answers
            .keys()
            .all(|id| id.starts_with("Philosophers-PT-000002-UpperBounds-"))
    );
}

/// The demo's three tools (tools/) qualify, in the repository's own store (shared with
/// tests/it/demo.rs and `mccbuild run`).
#[test]
fn the_demo_tools_qualify() {
    let repo = Path::new(REPO);
    let out = mccbuild_in(repo, &["qualify", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let report = json(&out);
    let tools = report["tools"].as_object().unwrap();
    assert_eq!(
        tools.keys().map(String::as_str).collect::<Vec<_>>(),
        ["explorer", "pm4py", "snakes"]
    );
    for (name, verdict) in tools {
        assert_eq!(
            verdict["qualified"], true,
            "{name}: {:#}",
            verdict["problems"]
        );
        assert!(verdict["runs"].as_u64().unwrap() > 0);
    }
}

/// `qualify` with the terminal's width (`COLUMNS`, as a terminal gives it): on 60 columns each
/// tool's counts go on lines of their own and every line fits, the long ones (a faulty run's
/// record and reproduction command) broken without losing a character; on 120 columns the
/// wide layout. The tool's counts are snapshots (times and memory filtered out).
#[test]
fn qualify_lines_fit_a_60_column_terminal() {
    let mut c = TestContest::new();
    c.copy_demo_instance("Philosophers-PT-000002");
    c.model("Philosophers", "known", &["models/Philosophers-PT-000002"]);
    test_tool(&mut c, "good", EXAMS);
    test_tool(&mut c, "unknown-id", EXAMS);
    c.write("time_s = 10\nmemory_mb = 512");
    // Its own core reservations: other contests on the machine would make its runs wait.
    let locks = tempfile::tempdir().unwrap();
    let qualify = |columns: &str| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_mccbuild"))
            .args(["qualify"])
            .current_dir(c.path())
            .env_remove("MCCBUILD_SANDBOX")
            .env("MCCBUILD_CORE_LOCKS", locks.path())
            .env("COLUMNS", columns)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        stdout(&out)
    };
    let narrow = qualify("60");
    for line in narrow.lines() {
        assert!(line.chars().count() <= 60, "{line:?} in\n{narrow}");
    }
    let wide = qualify("120");
    // Nothing lost: the faulty run's record path and reproduction command, whole once the
    // breaks are taken out.
    let joined: String = narrow.split_whitespace().collect();
    for w in wide.split_whitespace().filter(|w| w.len() > 30) {
        assert!(joined.contains(w), "{w} lost in\n{narrow}");
    }
    let good = |text: &str| -> String {
        let at = text.find("good:").unwrap();
        let end = text[at..]
            .find("\nunknown-id")
            .map_or(text.len(), |e| at + e);
        text[at..end].to_string()
    };
    let mut settings = output_settings(c.path());
    settings.add_filter(r"\d+\.\d+ s CPU", "[T] s CPU");
    settings.add_filter(r"at most \d+\.\d MB", "at most [M] MB");
    settings.bind(|| {
        insta::assert_snapshot!("qualify_at_60_columns", good(&narrow));
        insta::assert_snapshot!("qualify_at_120_columns", good(&wide));
    });
}
