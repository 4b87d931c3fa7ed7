//! `mccbuild import`, `explain` and `confidence` on a contest whose runs come from a results
//! file in the layout of the MCC's raw-result-analysis.csv.

use std::fs;

use crate::common::*;

const HEADER: &str = "tool,Input,Examination,nb cores,time flag,memory flag,results,techniques,max memory (MB),CPU (ms),Time (ms),i/o wait (ms),Status,run id,flags:bonus:scores:mask,estimated result,# tools computing estimated results\n";

/// Four tools on two instances of model M: ReachabilityDeadlock and a StateSpace.
/// On M-PT-1 ReachabilityDeadlock, c says FALSE against a, b, d (TRUE).
fn contest() -> TestContest {
    let c = TestContest::new();
    let rows = [
        "a,M-PT-1,ReachabilityDeadlock,1,0,0,T,EXPLICIT,10,1000,1100,0,normal,1,,,",
        "b,M-PT-1,ReachabilityDeadlock,1,0,0,T,,20,2000,2100,0,normal,2,,,",
        "c,M-PT-1,ReachabilityDeadlock,1,0,0,F,,30,3000,3100,0,normal,3,,,",
        "d,M-PT-1,ReachabilityDeadlock,4,0,0,T,,40,4000,1100,0,normal,4,,,",
        "a,M-PT-2,StateSpace,1,0,0,6 8 1 4,,10,500,600,0,normal,5,,,",
        "b,M-PT-2,StateSpace,1,0,0,6 8 ? ?,,10,500,600,0,normal,6,,,",
        "c,M-PT-2,StateSpace,1,0,0,DNC,,0,0,0,0,normal,7,,,",
        "d,M-PT-2,StateSpace,1,0,0,6 8 -1 4,,10,500,600,0,normal,8,,,",
        "d,M-PT-2,NoSuchExamination,1,0,0,T,,10,500,600,0,normal,9,,,",
    ];
    fs::write(
        c.path().join("results.csv"),
        format!("{HEADER}{}\n", rows.join("\n")),
    )
    .unwrap();
    let manifest = format!(
        "[contest]\nname = \"Imported\"\nrules = \"{REPO}/rules/mcc-2026.toml\"\nresults = [\"results.csv\"]\n\n[[tool]]\nname = \"d\"\nkind = \"reference\"\n"
    );
    fs::write(c.path().join("contest.toml"), manifest).unwrap();
    c
}

#[test]
fn import_reads_a_results_file_into_the_store_once() {
    let c = contest();
    let plan = json(&c.mccbuild(&["plan", "--json"]));
    assert_eq!(plan["runs"], 8, "{plan}");
    let run = c.mccbuild(&["run", "--json"]);
    assert!(stderr(&run).contains("mccbuild import"), "{}", stderr(&run));
    assert!(
        stderr(&run).contains("no examination `NoSuchExamination`"),
        "{}",
        stderr(&run)
    );
    let first = c.mccbuild(&["import", "results.csv", "--json"]);
    assert_eq!(
        json(&first),
        serde_json::json!({"runs": 8, "imported": 8, "cached": 0}),
        "{}",
        stderr(&first)
    );
    assert_eq!(
        json(&c.mccbuild(&["import", "results.csv", "--json"]))["cached"],
        8
    );
    assert_eq!(json(&c.mccbuild(&["plan", "--json"]))["to_run"], 0);
    let r = c.record("d", "M-PT-1", "ReachabilityDeadlock");
    assert_eq!(r["cpu_time_s"], 4.0);
    assert_eq!(r["peak_memory_bytes"], 40 * 1024 * 1024);
    assert_eq!(r["executor"]["kind"], "import");
    assert_eq!(
        c.record("c", "M-PT-2", "StateSpace")["verdict"],
        "do_not_compete"
    );
    // A file that is not in `results` is refused with the fix.
    fs::write(c.path().join("other.csv"), HEADER).unwrap();
    let out = c.mccbuild(&["import", "other.csv"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("add it to `results`"),
        "{}",
        stderr(&out)
    );
}

/// Row 2 of the results file now says FALSE where b said TRUE.
fn change_b_on_m1(c: &TestContest) {
    let text = fs::read_to_string(c.path().join("results.csv"))
        .unwrap()
        .replace(
            "b,M-PT-1,ReachabilityDeadlock,1,0,0,T",
            "b,M-PT-1,ReachabilityDeadlock,1,0,0,F",
        );
    fs::write(c.path().join("results.csv"), text).unwrap();
}

#[test]
fn changing_a_row_reimports_only_that_run() {
    let c = contest();
    assert!(c.mccbuild(&["import", "results.csv"]).status.success());
    change_b_on_m1(&c);
    assert_eq!(json(&c.mccbuild(&["plan", "--json"]))["to_run"], 1);
    assert_eq!(
        json(&c.mccbuild(&["import", "results.csv", "--json"]))["imported"],
        1
    );
}

#[test]
fn scores_explain_and_confidence_of_imported_runs() {
    let c = contest();
    assert!(c.mccbuild(&["import", "results.csv"]).status.success());
    let scores = json(&c.mccbuild(&["scores", "--json"]));
    // E-2.2: V = {RD of M-PT-1 (3 of 4 agree on TRUE), STATES, TRANSITIONS (3 of 3)};
    // MAX_TOKEN_IN_PLACE (2 answers) and MAX_TOKEN_PER_MARKING (2 answers) are not in V.
    // a: 3/3 = 1; c: 0/1 = 0 (wrong on RD, DNC on StateSpace); d: 3/3 = 1 (its -1 is "not
    // computed").
    assert_eq!(scores["confidence"]["a"], 1.0);
    assert_eq!(scores["confidence"]["c"], 0.0);
    assert_eq!(scores["confidence"]["d"], 1.0);

    let explained = json(&c.mccbuild(&[
        "explain",
        "--instance",
        "M-PT-1",
        "--examination",
        "ReachabilityDeadlock",
        "--id",
        "ReachabilityDeadlock",
        "--json",
    ]));
    // E-3.1 weighted majority: TRUE weighs C_a + C_b + C_d = 3, FALSE weighs C_c = 0.
    assert_eq!(explained["case"], "weighted-majority");
    assert_eq!(explained["trusted"], "TRUE");
    assert_eq!(explained["confidence_set"], "TRUE");
    assert_eq!(
        explained["weights"][0],
        serde_json::json!({"value": "TRUE", "weight": 3.0, "weight_exact": "3", "tools": 3})
    );
    let text = stdout(&c.mccbuild(&[
        "explain",
        "--instance",
        "M-PT-1",
        "--examination",
        "ReachabilityDeadlock",
        "--id",
        "ReachabilityDeadlock",
    ]));
    assert!(
        text.contains("E-3.1, second situation") && text.contains("trusted value: TRUE"),
        "{text}"
    );
    output_settings(c.path()).bind(|| insta::assert_snapshot!("explain_a_weighted_majority", text));
    let states = json(&c.mccbuild(&[
        "explain",
        "--instance",
        "M-PT-2",
        "--examination",
        "StateSpace",
        "--id",
        "MAX_TOKEN_IN_PLACE",
        "--json",
    ]));
    // Only a answered (b: ?, d: -1): single tool, C_a = 1 >= 0.997.
    assert_eq!(states["case"], "single-tool");
    assert_eq!(states["trusted"], "1");
    assert_eq!(states["not_computed"], serde_json::json!(["b", "d"]));

    // The breakdown of c's GlobalProperties score sums to it: one wrong value of 16: -32;
    // 2 models of 1 instance each: weight 1.
    let breakdown = json(&c.mccbuild(&[
        "explain",
        "--tool",
        "c",
        "--category",
        "GlobalProperties",
        "--json",
    ]));
    assert_eq!(breakdown["score"], -32.0);
    assert_eq!(scores["scores"]["GlobalProperties"]["c"], -32.0);
    let entries = &breakdown["models"][0]["entries"];
    assert_eq!(entries[0]["penalty"], 32.0);
    assert_eq!(entries[0]["wrong"], 1);

    let table = json(&c.mccbuild(&["confidence", "--json"]));
    let a = table
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["tool"] == "a")
        .unwrap();
    assert_eq!(
        a,
        &serde_json::json!({"tool": "a", "rate": 1.0, "correct": 3, "selected": 3, "examinations": 2})
    );
    // The table as printed: every tool's rate, correct and selected values, examinations.
    let printed = c.mccbuild(&["confidence"]);
    assert!(printed.status.success(), "{}", stderr(&printed));
    output_settings(c.path())
        .bind(|| insta::assert_snapshot!("confidence_table", stdout(&printed)));
    // The plan as printed, every run imported: nothing to run.
    let plan = c.mccbuild(&["plan"]);
    assert!(plan.status.success(), "{}", stderr(&plan));
    output_settings(c.path()).bind(|| insta::assert_snapshot!("plan_all_imported", stdout(&plan)));
    let bad = c.mccbuild(&[
        "explain",
        "--instance",
        "M-PT-9",
        "--examination",
        "StateSpace",
        "--id",
        "STATES",
    ]);
    assert_eq!(bad.status.code(), Some(2));
    // An instance the contest does not have is named as such, not as a missing examination.
    assert!(
        stderr(&bad).contains("no instance `M-PT-9`"),
        "{}",
        stderr(&bad)
    );
}

/// E-4.4's "model" as a setting of the edition (`[scoring] model_grouping`): the same imported
/// runs weighed with a model's COL and PT instances pooled (the MCC's way, the default) or apart.
/// Instances A-COL-1, A-PT-1, A-PT-2, B-PT-1; tool a computes the 4 StateSpace values of A-COL-1
/// only (b agrees: unanimous, trusted), 4 x ScoreValue 4 = 16 points before weighting.
/// - family: models A (3 instances) and B (1); N = 3; A weighs 1 + (3 - 1)/(3 - 1) = 2, 2/3 per
///   instance: a = 16 x 2/3 = 32/3.
/// - family-type: models A-COL (1), A-PT (2), B-PT (1); N = 2; A-COL weighs 1: a = 16.
#[test]
fn model_grouping_pools_or_separates_col_and_pt_instances() {
    let c = TestContest::new();
    let mut rows = vec!["a,A-COL-1,StateSpace,1,0,0,6 8 1 4,,10,500,600,0,normal,1,,,".to_string()];
    for (i, inst) in ["A-COL-1", "A-PT-1", "A-PT-2", "B-PT-1"].iter().enumerate() {
        rows.push(format!(
            "b,{inst},StateSpace,1,0,0,6 8 1 4,,10,500,600,0,normal,{},,,",
            i + 2
        ));
    }
    fs::write(
        c.path().join("results.csv"),
        format!("{HEADER}{}\n", rows.join("\n")),
    )
    .unwrap();
    let rules = fs::read_to_string(format!("{REPO}/rules/mcc-2026.toml")).unwrap();
    assert!(
        rules.contains("model_grouping = \"family\""),
        "the 2026 edition pools"
    );
    let apart = rules.replacen(
        "model_grouping = \"family\"",
        "model_grouping = \"family-type\"",
        1,
    );
    fs::write(c.path().join("apart.toml"), apart).unwrap();
    let manifest = |rules: &str| {
        format!(
            "[contest]\nname = \"Grouping\"\nrules = \"{rules}\"\nresults = [\"results.csv\"]\n\n[[tool]]\nname = \"b\"\n"
        )
    };
    fs::write(
        c.path().join("contest.toml"),
        manifest(&format!("{REPO}/rules/mcc-2026.toml")),
    )
    .unwrap();
    let import = c.mccbuild(&["import", "results.csv"]);
    assert!(import.status.success(), "{}", stderr(&import));
    let pooled = json(&c.mccbuild(&["scores", "--json"]));
    assert_eq!(
        pooled["scores_exact"]["StateSpace"]["a"], "32/3",
        "{pooled}"
    );

    fs::write(c.path().join("contest.toml"), manifest("apart.toml")).unwrap();
    let apart = json(&c.mccbuild(&["scores", "--json"]));
    assert_eq!(apart["scores_exact"]["StateSpace"]["a"], "16", "{apart}");
    // Switching the grouping re-scores the same runs: nothing to import or run again.
    let plan = json(&c.mccbuild(&["plan", "--json"]));
    assert_eq!(plan["to_run"], 0, "{plan}");
}

/// `scores --json` is written as it is serialized (the values row by row, not built first):
/// its bytes are those of the scores report serialized whole, and its content that of the JSON
/// export's report (which is built whole). The tools are declared d, a, b, c: each value's
/// answers are by tool name, as in the report's map.
#[test]
fn the_streamed_scores_json_is_the_report_serialized_whole() {
    let c = contest();
    c.mccbuild(&["import", "results.csv"]);
    let streamed = c.mccbuild(&["scores", "--json"]);
    assert!(streamed.status.success(), "{}", stderr(&streamed));
    let text = stdout(&streamed);
    let report: mccbuild_scoring::scores::ScoresReport =
        serde_json::from_str(&text).expect("scores --json is a scores report");
    assert_eq!(report.values.len(), 5, "{text}");
    assert_eq!(
        format!("{}\n", serde_json::to_string(&report).unwrap()),
        text
    );
    let export = c.mccbuild(&["export", "--json", "-"]);
    assert!(export.status.success(), "{}", stderr(&export));
    let mut exported = json(&export);
    let exported = exported.as_object_mut().unwrap();
    exported.remove("format");
    exported.remove("runs");
    assert_eq!(serde_json::Value::Object(exported.clone()), json(&streamed));
}

/// The plan snapshot (docs/cache.md, "The plan snapshot"): kept once its inputs are two seconds
/// old, used by the next commands with the same outputs, and not used once the results file
/// changes (a stale plan would say that the changed row's run is stored).
#[test]
fn the_plan_snapshot_is_used_until_the_results_file_changes() {
    let c = contest();
    assert!(c.mccbuild(&["import", "results.csv"]).status.success());
    std::thread::sleep(std::time::Duration::from_millis(2100));
    let (first, made) = mccbuild_timed(c.path(), &["export", "--json", "-"]);
    assert!(made, "no snapshot yet: {}", stderr(&first));
    let snapshots: Vec<_> = fs::read_dir(c.path().join("cache/meta"))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("plan-"))
        .collect();
    assert_eq!(snapshots.len(), 1, "one snapshot for the manifest");
    let (second, made) = mccbuild_timed(c.path(), &["export", "--json", "-"]);
    assert!(!made, "the snapshot is used: {}", stderr(&second));
    assert_eq!(
        stdout(&second),
        stdout(&first),
        "the same export, with each run's line"
    );
    assert!(stdout(&first).contains("\"line\""), "{}", stdout(&first));
    let (plan, made) = mccbuild_timed(c.path(), &["plan", "--json"]);
    assert!(!made);
    assert_eq!(json(&plan)["to_run"], 0);
    change_b_on_m1(&c);
    let (plan, made) = mccbuild_timed(c.path(), &["plan", "--json"]);
    assert!(made, "a changed results file makes the plan again");
    assert_eq!(json(&plan)["to_run"], 1);
    assert_eq!(
        json(&c.mccbuild(&["import", "results.csv", "--json"]))["imported"],
        1
    );
}

/// The remembered no-op (docs/cache.md, "The remembered no-op") of a contest of imported runs
/// (its results file without the row of an unknown examination: a plan with problems is not
/// remembered) is keyed by the results file's stamp: a changed row is seen by the next command.
#[test]
fn the_remembered_no_op_is_not_used_once_the_results_file_changes() {
    let c = contest();
    let results = c.path().join("results.csv");
    let text = fs::read_to_string(&results).unwrap();
    let kept: Vec<&str> = text
        .lines()
        .filter(|l| !l.contains("NoSuchExamination"))
        .collect();
    fs::write(&results, format!("{}\n", kept.join("\n"))).unwrap();
    assert!(c.mccbuild(&["import", "results.csv"]).status.success());
    // Once every stamp, and the index these commands write again, is two seconds old.
    let remembered = (0..4).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(2100));
        let (plan, _) = mccbuild_timed(c.path(), &["plan", "--json"]);
        assert_eq!(json(&plan)["to_run"], 0);
        stderr(&plan).contains("timing: no-op: remembered")
    });
    assert!(remembered, "the no-op is remembered");
    change_b_on_m1(&c);
    let (plan, made) = mccbuild_timed(c.path(), &["plan", "--json"]);
    assert!(made, "a changed results file makes the plan again");
    assert!(!stderr(&plan).contains("timing: no-op: remembered"));
    assert_eq!(json(&plan)["to_run"], 1);
}

/// Results imported under one edition file, scored with a manifest whose edition limits
/// another time (`[limits] time = "cpu"`): no run of the second contest is in the store, and
/// each command that looks says why (the time kind differs) and what to do (import again with
/// that manifest), which then stores them.
#[test]
fn records_under_another_time_kind_are_named_with_the_fix() {
    let c = contest();
    assert!(c.mccbuild(&["import", "results.csv"]).status.success());
    let rules = fs::read_to_string(format!("{REPO}/rules/mcc-2026.toml"))
        .unwrap()
        .replace("time = \"wall\"", "time = \"cpu\"");
    fs::write(c.path().join("cpu-rules.toml"), rules).unwrap();
    fs::write(
        c.path().join("contest-cpu.toml"),
        fs::read_to_string(c.path().join("contest.toml"))
            .unwrap()
            .replace(&format!("{REPO}/rules/mcc-2026.toml"), "cpu-rules.toml"),
    )
    .unwrap();
    for command in [&["scores"][..], &["plan"], &["export", "--csv", "-"]] {
        let mut args = command.to_vec();
        args.extend(["--manifest", "contest-cpu.toml"]);
        let out = c.mccbuild(&args);
        let err = stderr(&out);
        assert!(
            err.contains("0 of the 8 planned runs are in the store")
                && err.contains("the time kind (`[limits] time`; stored: wall, planned: cpu)")
                && err.contains("mccbuild import --manifest contest-cpu.toml FILE"),
            "{command:?}: {err}"
        );
    }
    // The fix the message gives stores the runs; then nothing is said.
    let import = c.mccbuild(&["import", "--manifest", "contest-cpu.toml", "results.csv"]);
    assert!(import.status.success(), "{}", stderr(&import));
    let out = c.mccbuild(&["scores", "--manifest", "contest-cpu.toml"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stderr(&out).contains("other keys"), "{}", stderr(&out));
}

/// `watch` starts by saying what the store holds (not the 0 records its start applied).
#[test]
fn watch_starts_with_the_records_in_the_store() {
    let c = contest();
    assert!(c.mccbuild(&["import", "results.csv"]).status.success());
    let out = c.mccbuild(&["watch", "--updates", "1"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out)
            .starts_with("update 0: start (8 records in the store, 8 of the contest's 8 runs)"),
        "{}",
        stdout(&out)
    );
}
