//! Reference answers (`[reference]` in contest.toml) through the binary: a one-tool contest is
//! judged right/wrong/unknown against a consensus in the MCC's published form; `scores`,
//! `explain`, the report and the exports say which basis they use; the vote stays the default
//! and is shown beside the reference; and a changed reference re-scores without rerunning
//! anything (the reference is in no run key).

use std::fs;

use crate::common::*;

const PNML: &str = "<pnml><net type=\"http://www.pnml.org/version-2009/grammar/ptnet\"><page id=\"p\"/></net></pnml>\n";
const INSTANCE: &str = "Ref-PT-1";

/// One instance with a 4-formula ReachabilityCardinality file, and one scripted tool `solo`
/// that answers: formula 00 TRUE, 01 FALSE, 02 TRUE, 03 nothing; StateSpace 10 states, 20
/// transitions, 1, 3.
fn contest(basis: Option<&str>) -> TestContest {
    let mut c = TestContest::new();
    let dir = c.path().join("models").join(INSTANCE);
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("model.pnml"), PNML).unwrap();
    fs::write(dir.join("iscolored"), "FALSE\n").unwrap();
    let mut xml =
        String::from("<?xml version=\"1.0\"?>\n<property-set xmlns=\"http://mcc.lip6.fr/\">\n");
    for i in 0..4 {
        xml.push_str(&format!(
            "  <property><id>{INSTANCE}-ReachabilityCardinality-{i:02}</id><description>r</description><formula/></property>\n"
        ));
    }
    xml.push_str("</property-set>\n");
    fs::write(dir.join("ReachabilityCardinality.xml"), xml).unwrap();
    c.model("Ref", "known", &[&format!("models/{INSTANCE}")]);
    c.scripted_tool(
        "solo",
        "examinations = [\"ReachabilityCardinality\", \"StateSpace\"]",
    );
    let f = |i: usize, v: &str| {
        format!("FORMULA {INSTANCE}-ReachabilityCardinality-{i:02} {v} TECHNIQUES EXPLICIT\n")
    };
    c.answer(
        "solo",
        INSTANCE,
        "ReachabilityCardinality",
        &(f(0, "TRUE") + &f(1, "FALSE") + &f(2, "TRUE")),
    );
    c.answer(
        "solo",
        INSTANCE,
        "StateSpace",
        "STATE_SPACE STATES 10 TECHNIQUES EXPLICIT\nSTATE_SPACE TRANSITIONS 20 TECHNIQUES EXPLICIT\nSTATE_SPACE MAX_TOKEN_IN_PLACE 1 TECHNIQUES EXPLICIT\nSTATE_SPACE MAX_TOKEN_PER_MARKING 3 TECHNIQUES EXPLICIT\n",
    );
    // The consensus, in the MCC's form: 00 TRUE (right), 01 TRUE (solo wrong), 02 `?`
    // (unknown), 03 FALSE (solo did not answer); StateSpace: STATES 10 (right), TRANSITIONS 21
    // (wrong), the other two not given (unknown).
    let oracle = c.path().join("oracle");
    fs::create_dir_all(&oracle).unwrap();
    let g = |i: usize, v: &str| {
        format!("FORMULA {INSTANCE}-ReachabilityCardinality-{i:02} {v} TECHNIQUES ORACLE2025\n")
    };
    fs::write(
        oracle.join(format!("{INSTANCE}-RC.out")),
        format!("{INSTANCE} ReachabilityCardinality\n")
            + &g(0, "TRUE")
            + &g(1, "TRUE")
            + &g(2, "?")
            + &g(3, "FALSE"),
    )
    .unwrap();
    write_state_space_reference(&c, "10", "21");
    c.extra = match basis {
        Some(b) => format!("[reference]\nanswers = \"oracle\"\nbasis = \"{b}\"\n"),
        None => "[reference]\nanswers = \"oracle\"\n".to_string(),
    };
    c.write("time_s = 60\nmemory_mb = 2048");
    c
}

fn write_state_space_reference(c: &TestContest, states: &str, transitions: &str) {
    fs::write(
        c.path().join("oracle").join(format!("{INSTANCE}-SS.out")),
        format!("{INSTANCE} StateSpace\nSTATE_SPACE STATES {states} TECHNIQUES X\nSTATE_SPACE TRANSITIONS {transitions} TECHNIQUES X\n"),
    )
    .unwrap();
}

fn scores(c: &TestContest) -> serde_json::Value {
    let out = c.mccbuild(&["scores", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    json(&out)
}

fn run(c: &TestContest) {
    let out = c.mccbuild(&["run"]);
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
}

#[test]
fn a_one_tool_contest_is_judged_against_the_reference_and_rescored_without_rerunning() {
    let c = contest(Some("reference"));
    run(&c);
    let s = scores(&c);
    assert_eq!(s["basis"], "reference");
    let r = &s["reference"];
    assert!(r["answers"].as_str().unwrap().contains("oracle"), "{r}");
    // 8 values (4 formulas, 4 StateSpace values); the reference knows 00, 01, 03, STATES,
    // TRANSITIONS: 5.
    assert_eq!(
        (r["values"].as_u64(), r["known"].as_u64()),
        (Some(8), Some(5))
    );
    // solo: right 00 and STATES (2); wrong 01 and TRANSITIONS (2); unknown 02,
    // MAX_TOKEN_IN_PLACE and MAX_TOKEN_PER_MARKING (3); unanswered 03 (1).
    assert_eq!(
        r["tools"]["solo"],
        serde_json::json!({"right": 2, "wrong": 2, "unknown": 3, "unanswered": 1})
    );
    // Scored against the reference: ReachabilityCardinality (ScoreValue 2 per formula, penalty
    // 4): 00 right +2, 01 wrong -4: -2. StateSpace (ScoreValue 4 per value, penalty 8): STATES
    // +4, TRANSITIONS -8: -4. (Scores are weighted; the signs are what the vote cannot give:
    // alone, the tool is never wrong against itself.)
    let rc = s["scores"]["Reachability"]["solo"].as_f64().unwrap();
    let ss = s["scores"]["StateSpace"]["solo"].as_f64().unwrap();
    assert!(rc < 0.0 && ss < 0.0, "{s}");
    // The values' trusted values are the reference's.
    let value = |id: &str| {
        s["values"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["id"] == id)
            .unwrap()
            .clone()
    };
    let v01 = value(&format!("{INSTANCE}-ReachabilityCardinality-01"));
    assert_eq!(
        (v01["trusted"].as_str(), v01["case"].as_str()),
        (Some("TRUE"), Some("reference"))
    );

    // explain says the basis and judges the answer.
    let out = c.mccbuild(&[
        "explain",
        "--instance",
        INSTANCE,
        "--examination",
        "StateSpace",
        "--id",
        "TRANSITIONS",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("trusted value: 21 (basis: reference)"),
        "{text}"
    );
    assert!(text.contains("solo wrong"), "{text}");

    // A corrected reference (TRANSITIONS 20): nothing reruns, TRANSITIONS is now right.
    write_state_space_reference(&c, "10", "20");
    let plan = json(&c.mccbuild(&["plan", "--json"]));
    assert_eq!(plan["to_run"], 0, "the reference is in no run key: {plan}");
    let again = scores(&c);
    assert_eq!(
        again["reference"]["tools"]["solo"],
        serde_json::json!({"right": 3, "wrong": 1, "unknown": 3, "unanswered": 1})
    );
    let ss_again = again["scores"]["StateSpace"]["solo"].as_f64().unwrap();
    assert!(ss_again > ss, "{ss} -> {ss_again}");
    // `scores` (text, from the cached results) shows the new figures too.
    let text = stdout(&c.mccbuild(&["scores"]));
    assert!(
        text.contains("right 3, wrong 1, unknown 3, unanswered 1"),
        "{text}"
    );
    assert!(text.contains("trusted values: the reference"), "{text}");

    // The tool page judges the tool against the reference, not by a Confidence that decides
    // nothing here (a lone tool answers no value of V: "0 of 0").
    let out = c.mccbuild(&["report"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let page = fs::read_to_string(c.path().join("report/tool-0-solo.html")).unwrap();
    assert!(
        page.contains("Against the reference answers") && page.contains("<b>3 right</b>"),
        "{page}"
    );
    assert!(!page.contains("Confidence (E-2.2)"), "{page}");
}

#[test]
fn the_vote_stays_the_default_and_is_shown_beside_the_reference() {
    let c = contest(None);
    run(&c);
    let s = scores(&c);
    assert_eq!(s["basis"], "vote");
    // Under the vote a lone tool is judged by its own Confidence: its scores are not negative.
    assert!(
        s["scores"]["StateSpace"]["solo"].as_f64().unwrap() >= 0.0,
        "{s}"
    );
    let r = &s["reference"];
    assert_eq!(r["tools"]["solo"]["wrong"], 2);
    // Where the vote (the tool alone, trusted or not) and the reference differ: listed when
    // both know the value.
    let listed: Vec<String> = r["disagreements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            format!(
                "{} {} {}",
                d["id"].as_str().unwrap(),
                d["vote"],
                d["reference"]
            )
        })
        .collect();
    let vote_known = s["values"]
        .as_array()
        .unwrap()
        .iter()
        .any(|v| v["trusted"].is_string());
    if vote_known {
        assert_eq!(
            listed,
            [
                format!("{INSTANCE}-ReachabilityCardinality-01 \"FALSE\" \"TRUE\""),
                "TRANSITIONS \"20\" \"21\"".to_string()
            ]
        );
    } else {
        assert!(listed.is_empty());
        assert_eq!(r["reference_only"], 5);
    }
    let text = stdout(&c.mccbuild(&["scores"]));
    assert!(
        text.contains("trusted values: the vote (reference: "),
        "{text}"
    );
    assert!(text.contains("Against the reference"), "{text}");

    // The report's index page and the JSON export say the basis.
    let out = c.mccbuild(&["report", "--exports"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let index = fs::read_to_string(c.path().join("report/index.html")).unwrap();
    assert!(index.contains("Against the reference"), "{index}");
    assert!(index.contains("the vote (E-3.1)"));
    // The reference is named as a reader of the site sees it: relative to the contest.
    assert!(index.contains("consensus answers oracle"), "{index}");
    assert_publishable(&c.path().join("report"), &[c.path()]);
    let export: serde_json::Value = serde_json::from_str(
        &fs::read_to_string(c.path().join("report/exports/results.json")).unwrap(),
    )
    .unwrap();
    let text = export.to_string();
    assert!(text.contains("\"basis\":\"vote\""), "{text}");
}

#[test]
fn a_missing_reference_is_a_manifest_problem() {
    let c = contest(None);
    fs::remove_dir_all(c.path().join("oracle")).unwrap();
    let out = c.mccbuild(&["check"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("reference answers") && stderr(&out).contains("do not exist"),
        "{}",
        stderr(&out)
    );
}

/// A results CSV as the reference (another contest's export, or the MCC's
/// raw-result-analysis.csv): its `estimated result` column, by position. The same reference as
/// the consensus files above gives the same judgements.
#[test]
fn a_results_csv_is_a_reference_too() {
    let c = contest(Some("reference"));
    fs::write(
        c.path().join("estimated.csv"),
        format!(
            "tool,Input,Examination,results,estimated result\n\
             other,{INSTANCE},ReachabilityCardinality,TT?F,TT?F\n\
             other,{INSTANCE},StateSpace,10 21 ? ?,10 21 ? ?\n\
             other,Elsewhere-PT-1,StateSpace,1 1 1 1,1 1 1 1\n"
        ),
    )
    .unwrap();
    let manifest = fs::read_to_string(c.path().join("contest.toml"))
        .unwrap()
        .replace("answers = \"oracle\"", "answers = \"estimated.csv\"");
    fs::write(c.path().join("contest.toml"), manifest).unwrap();
    run(&c);
    let s = scores(&c);
    let r = &s["reference"];
    assert!(
        r["answers"].as_str().unwrap().contains("estimated.csv"),
        "{r}"
    );
    assert_eq!(
        (r["values"].as_u64(), r["known"].as_u64()),
        (Some(8), Some(5))
    );
    assert_eq!(
        r["tools"]["solo"],
        serde_json::json!({"right": 2, "wrong": 2, "unknown": 3, "unanswered": 1})
    );
}
