//! Golden scenarios for the scoring rules: one per clause, and one per edition where a clause
//! differs. Each is a small contest of scripted tools with fixed answers, run through the real
//! `mccbuild run` and `mccbuild scores --json`. Every expected number is computed by hand from
//! the rules texts (../shared/spec/mcc-2026-rules.txt, mcc-2023-rules.txt, mcc-2015-report.txt),
//! with the arithmetic in the comment above its assertion.
//!
//! Where a text leaves a choice open, the expected values follow the choice documented in
//! src/rules/edition.rs and rules/*.toml:
//! - E-2.2: a tool's Confidence divides by the values of V it answered (`denominator =
//!   "answered"`, the 2015 report's "correct / selected"), not by all of V;
//! - E-3.1: a weighted majority is absolute (more than half of the total Confidence of the tools
//!   that answered the value) in 2026 and 2023;
//! - E-4.4: normalisation is linear (a model of n instances weighs 1 + (2-1)(n-1)/(N-1)
//!   one-instance models in total); the 2026 surprise share is computed per category;
//! - E-4.5: awards take each ranked tool's mean over the examinations it completed;
//! - E-4.6: equal scores share a rank (1, 1, 3).
//!
//! Run with `cargo test --release --test golden_rules`.

use std::fmt::Display;
use std::fs;
use std::sync::OnceLock;

use crate::common::*;
use serde_json::Value as Json;

// ---------------------------------------------------------------------------------------------
// Building contests.

const PNML: &str = "<pnml><net type=\"http://www.pnml.org/version-2009/grammar/ptnet\"><page id=\"p\"/></net></pnml>\n";

/// Limits written in the manifest (the same for every edition, so that switching editions keeps
/// every run key).
const LIMITS: &str = "time_s = 120\nmemory_mb = 2048";

/// Scores and Confidence are compared with this tolerance (the JSON rounds them to 6 decimals).
const TOL: f64 = 1e-6;

fn rules_file(edition: &str) -> String {
    format!("{REPO}/rules/mcc-{edition}.toml")
}

/// Writes contest.toml for `edition` ("2026", "2023", "2015"): the harness writes mcc-2026, the
/// `rules` line is then pointed at the edition.
fn write_manifest(c: &TestContest, edition: &str, limits: &str) {
    c.write(limits);
    set_edition(c, edition);
}

/// Switches the contest's edition: only the manifest's `rules = ...` line changes.
fn set_edition(c: &TestContest, edition: &str) {
    let path = c.path().join("contest.toml");
    let text = fs::read_to_string(&path).unwrap();
    let mut replaced = 0;
    let out: Vec<String> = text
        .lines()
        .map(|line| {
            if line.starts_with("rules = ") {
                replaced += 1;
                format!("rules = \"{}\"", rules_file(edition))
            } else {
                line.to_string()
            }
        })
        .collect();
    assert_eq!(replaced, 1, "one rules line in:\n{text}");
    fs::write(&path, out.join("\n") + "\n").unwrap();
}

/// Switches an already run contest to another edition, checking that every run is reused.
fn switch_edition(c: &TestContest, edition: &str) {
    set_edition(c, edition);
    let p = plan(c);
    assert_eq!(
        p["to_run"], 0,
        "switching to {edition} must reuse every run: {p}"
    );
}

/// The id of formula `i` of `exam`'s formula file on `instance`.
fn fid(instance: &str, exam: &str, i: usize) -> String {
    format!("{instance}-{exam}-{i:04}")
}

/// Every formula file of the editions' examinations (rules/*.toml, `formula_file`).
const FORMULA_FILES: &[&str] = &[
    "CTLCardinality",
    "CTLFireability",
    "CTLFireabilitySimple",
    "LTLCardinality",
    "LTLFireability",
    "LTLFireabilitySimple",
    "ReachabilityBounds",
    "ReachabilityCardinality",
    "ReachabilityComputeBounds",
    "ReachabilityFireability",
    "ReachabilityFireabilitySimple",
    "UpperBounds",
];

/// Generates the instance folder models/<name>: a stub model.pnml and, for each (examination,
/// n), the formula file `<examination>.xml` with n formulas whose ids are `fid(name, exam, i)`.
/// The other formula files are empty (no formula: the examination does not exist on the
/// instance; a missing one would be a problem).
fn instance(c: &TestContest, name: &str, formula_files: &[(&str, usize)]) {
    let dir = c.path().join("models").join(name);
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("model.pnml"), PNML).unwrap();
    fs::write(dir.join("iscolored"), "FALSE\n").unwrap();
    for exam in FORMULA_FILES {
        fs::write(dir.join(format!("{exam}.xml")), "<property-set/>\n").unwrap();
    }
    for (exam, n) in formula_files {
        let mut xml =
            String::from("<?xml version=\"1.0\"?>\n<property-set xmlns=\"http://mcc.lip6.fr/\">\n");
        for i in 0..*n {
            xml.push_str(&format!(
                "  <property><id>{}</id><description>golden</description><formula/></property>\n",
                fid(name, exam, i)
            ));
        }
        xml.push_str("</property-set>\n");
        fs::write(dir.join(format!("{exam}.xml")), xml).unwrap();
    }
}

/// A model of `kind` made of generated instances (`instance` must have made them).
fn model(c: &mut TestContest, name: &str, kind: &str, instances: &[&str]) {
    let paths: Vec<String> = instances.iter().map(|i| format!("models/{i}")).collect();
    let refs: Vec<&str> = paths.iter().map(String::as_str).collect();
    c.model(name, kind, &refs);
}

/// A one-instance known model named after its instance's model part.
fn solo(c: &mut TestContest, instance_name: &str, formula_files: &[(&str, usize)]) {
    instance(c, instance_name, formula_files);
    let model_name = instance_name.split('-').next().unwrap().to_string();
    model(c, &model_name, "known", &[instance_name]);
}

/// `FORMULA` lines of a formula examination: (formula index, value) pairs; the value may be
/// `CANNOT_COMPUTE`.
fn formulas<V: Display>(
    instance: &str,
    exam: &str,
    answers: impl IntoIterator<Item = (usize, V)>,
) -> String {
    answers
        .into_iter()
        .map(|(i, v)| {
            format!(
                "FORMULA {} {v} TECHNIQUES EXPLICIT\n",
                fid(instance, exam, i)
            )
        })
        .collect()
}

/// The `FORMULA` line of a global property.
fn global(exam: &str, value: &str) -> String {
    format!("FORMULA {exam} {value} TECHNIQUES EXPLICIT\n")
}

/// `STATE_SPACE` lines.
fn state_space(values: &[(&str, &str)]) -> String {
    values
        .iter()
        .map(|(what, v)| format!("STATE_SPACE {what} {v} TECHNIQUES EXPLICIT\n"))
        .collect()
}

/// StateSpace answered in full: 10 states, 20 transitions, 1 token at most in a place, 3 per
/// marking.
const SS_FULL: &[(&str, &str)] = &[
    ("STATES", "10"),
    ("TRANSITIONS", "20"),
    ("MAX_TOKEN_IN_PLACE", "1"),
    ("MAX_TOKEN_PER_MARKING", "3"),
];

/// A scripted tool taking part in `exams` only (a run without an answer file says
/// DO_NOT_COMPETE).
fn tool(c: &mut TestContest, name: &str, exams: &[&str], extra: &str) {
    let list: Vec<String> = exams.iter().map(|e| format!("\"{e}\"")).collect();
    c.scripted_tool(
        name,
        &format!("examinations = [{}]\n{extra}", list.join(", ")),
    );
}

// ---------------------------------------------------------------------------------------------
// Reading the results.

fn run_and_score(c: &TestContest) -> Json {
    let run = c.mccbuild(&["run"]);
    assert!(
        run.status.success(),
        "mccbuild run failed:\n{}\n{}",
        stdout(&run),
        stderr(&run)
    );
    scores(c)
}

fn scores(c: &TestContest) -> Json {
    let out = c.mccbuild(&["scores", "--json"]);
    assert!(
        out.status.success(),
        "mccbuild scores failed:\n{}",
        stderr(&out)
    );
    json(&out)
}

fn plan(c: &TestContest) -> Json {
    let out = c.mccbuild(&["plan", "--json"]);
    assert!(
        out.status.success(),
        "mccbuild plan failed:\n{}",
        stderr(&out)
    );
    json(&out)
}

#[track_caller]
fn close(actual: f64, expected: f64, what: &str) {
    assert!(
        (actual - expected).abs() <= TOL,
        "{what}: mccbuild gives {actual}, the rules give {expected}"
    );
}

#[track_caller]
fn confidence(s: &Json, tool: &str) -> f64 {
    s["confidence"][tool]
        .as_f64()
        .unwrap_or_else(|| panic!("no confidence for {tool}: {}", s["confidence"]))
}

#[track_caller]
fn score(s: &Json, category: &str, tool: &str) -> f64 {
    s["scores"][category][tool]
        .as_f64()
        .unwrap_or_else(|| panic!("no score for {tool} in {category}: {}", s["scores"]))
}

#[track_caller]
fn assert_confidence(s: &Json, tool: &str, expected: f64) {
    close(
        confidence(s, tool),
        expected,
        &format!("Confidence of {tool}"),
    );
}

#[track_caller]
fn assert_score(s: &Json, category: &str, tool: &str, expected: f64) {
    close(
        score(s, category, tool),
        expected,
        &format!("{category} score of {tool}"),
    );
}

/// The `values` row of one value.
#[track_caller]
fn value_row<'a>(s: &'a Json, instance: &str, exam: &str, id: &str) -> &'a Json {
    s["values"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["instance"] == instance && v["examination"] == exam && v["id"] == id)
        .unwrap_or_else(|| panic!("no value {instance} {exam} {id}"))
}

/// Asserts a value's trusted value (`None`: unknown) and the E-3.1 situation that decided it.
#[track_caller]
fn assert_trusted(
    s: &Json,
    instance: &str,
    exam: &str,
    id: &str,
    expected: Option<&str>,
    case: &str,
) {
    let row = value_row(s, instance, exam, id);
    let expected_json = expected.map_or(Json::Null, |v| Json::String(v.to_string()));
    assert_eq!(
        (&row["trusted"], row["case"].as_str().unwrap_or("")),
        (&expected_json, case),
        "trusted value of {instance} {exam} {id} (answers {})",
        row["answers"]
    );
}

/// Each tool of a category's standings, in order: (tool, rank, medal).
fn standings(s: &Json, category: &str) -> Vec<(String, Option<u64>, Option<String>)> {
    s["standings"][category]
        .as_array()
        .unwrap_or_else(|| panic!("no standings for {category}"))
        .iter()
        .map(|r| {
            (
                r["tool"].as_str().unwrap().to_string(),
                r["rank"].as_u64(),
                r["medal"].as_str().map(String::from),
            )
        })
        .collect()
}

fn standing<'a>(s: &'a Json, category: &str, tool: &str) -> &'a Json {
    s["standings"][category]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["tool"] == tool)
        .unwrap_or_else(|| panic!("{tool} not in {category}"))
}

fn row(
    tool: &str,
    rank: Option<u64>,
    medal: Option<&str>,
) -> (String, Option<u64>, Option<String>) {
    (tool.to_string(), rank, medal.map(String::from))
}

fn podium(s: &Json, category: &str) -> Vec<String> {
    s["podiums"][category]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_string())
        .collect()
}

fn keys(obj: &Json) -> Vec<String> {
    obj.as_object().unwrap().keys().cloned().collect()
}

// ---------------------------------------------------------------------------------------------
// E-2.2: the set V and each tool's Confidence.

/// E-2.2 (2026; the same text in 2023): V holds the values on which a strict majority of the
/// tools that answered agree, with at least 3 agreeing; "not computed results are of course not
/// considered". Confidence = values of V the tool answered right / values of V it answered.
#[test]
fn e2_2_confidence_set_v_and_tool_confidence() {
    let mut c = TestContest::new();
    let inst = "Conf-PT-1";
    solo(&mut c, inst, &[("UpperBounds", 9)]);
    for t in ["a", "b", "c", "d", "e", "f"] {
        tool(&mut c, t, &["UpperBounds"], "");
    }
    // Value by value (CC = CANNOT_COMPUTE, - = no answer):
    //   v0: a=1 b=1 c=1 d=1 e=1 f=1   6 of 6 agree               -> in V (1)
    //   v1: a=1 b=1 c=1 d=2 e=2 f=-   3 of 5 > 5/2, 3 >= 3       -> in V (1)
    //   v2: a=1 b=1 c=- d=2 e=2 f=-   2 of 4: no strict majority -> not in V
    //   v3: a=1 b=1                   2 of 2, but 2 < 3 tools    -> not in V
    //   v4: a=5 b=5 c=5 d=6 e=7       3 of 5 > 5/2               -> in V (5)
    //   v5: a=1 b=1 c=1 d=2 e=2 f=2   3 of 6 is not > 6/2        -> not in V
    //   v6: a=1 b=1 c=1 d=2 e=3 f=4   3 of 6 (a plurality only)  -> not in V
    //   v7: a=8 d=9 e=9 f=9           3 of 4 > 4/2               -> in V (9)
    //   v8: a=CC b=2 c=2 d=2          a not considered; 3 of 3   -> in V (2)
    let f = |t: &str, answers: &[(usize, &str)]| {
        c.answer(
            t,
            inst,
            "UpperBounds",
            &formulas(inst, "UpperBounds", answers.iter().copied()),
        )
    };
    f(
        "a",
        &[
            (0, "1"),
            (1, "1"),
            (2, "1"),
            (3, "1"),
            (4, "5"),
            (5, "1"),
            (6, "1"),
            (7, "8"),
            (8, "CANNOT_COMPUTE"),
        ],
    );
    f(
        "b",
        &[
            (0, "1"),
            (1, "1"),
            (2, "1"),
            (3, "1"),
            (4, "5"),
            (5, "1"),
            (6, "1"),
            (8, "2"),
        ],
    );
    f(
        "c",
        &[(0, "1"), (1, "1"), (4, "5"), (5, "1"), (6, "1"), (8, "2")],
    );
    f(
        "d",
        &[
            (0, "1"),
            (1, "2"),
            (2, "2"),
            (4, "6"),
            (5, "2"),
            (6, "2"),
            (7, "9"),
            (8, "2"),
        ],
    );
    f(
        "e",
        &[
            (0, "1"),
            (1, "2"),
            (2, "2"),
            (4, "7"),
            (5, "2"),
            (6, "3"),
            (7, "9"),
        ],
    );
    f("f", &[(0, "1"), (5, "2"), (6, "4"), (7, "9")]);
    write_manifest(&c, "2026", LIMITS);
    let s = run_and_score(&c);

    // |V| = 5 (v0, v1, v4, v7, v8).
    // a: v0 ok, v1 ok, v4 ok, v7 wrong (v8 not computed)  -> C_a = 3/4 = 0.75
    assert_confidence(&s, "a", 0.75);
    // b: v0, v1, v4, v8 all ok                             -> C_b = 4/4 = 1
    assert_confidence(&s, "b", 1.0);
    // c: v0, v1, v4, v8 all ok                             -> C_c = 4/4 = 1
    assert_confidence(&s, "c", 1.0);
    // d: v0 ok, v1 wrong, v4 wrong, v7 ok, v8 ok           -> C_d = 3/5 = 0.6
    assert_confidence(&s, "d", 0.6);
    // e: v0 ok, v1 wrong, v4 wrong, v7 ok                  -> C_e = 2/4 = 0.5
    assert_confidence(&s, "e", 0.5);
    // f: v0 ok, v7 ok (v5, v6 are not in V)                -> C_f = 2/2 = 1
    //    (E-2.2 read to the letter, |V_f|/|V| = 2/5 = 0.4; edition.rs documents the choice)
    assert_confidence(&s, "f", 1.0);

    // V is not the trusted values: v3 (2 tools agree) is not in V but is trusted by unanimity
    // (E-3.1), and v5 (3 against 3) is decided by Confidence weights:
    // 1: C_a + C_b + C_c = 0.75 + 1 + 1 = 2.75; 2: C_d + C_e + C_f = 0.6 + 0.5 + 1 = 2.1;
    // total 4.85, half 2.425; 2.75 > 2.425 -> 1.
    assert_trusted(
        &s,
        inst,
        "UpperBounds",
        &fid(inst, "UpperBounds", 3),
        Some("1"),
        "unanimity",
    );
    assert_trusted(
        &s,
        inst,
        "UpperBounds",
        &fid(inst, "UpperBounds", 5),
        Some("1"),
        "weighted-majority",
    );
}

// ---------------------------------------------------------------------------------------------
// E-3.1: the five situations (2026), on one shared contest.

/// Nine tools. Calibration: instance Cal-PT-1, UpperBounds with 40 formulas whose true bound is
/// 0; h1, h2, h3 and p answer 0 everywhere, the others answer 1 (wrong) on some formulas:
///   q wrong on 0..4   -> 36/40 = 0.9
///   r wrong on 0..8   -> 32/40 = 0.8
///   s wrong on 8..16  -> 32/40 = 0.8
///   u wrong on 12..40 -> 12/40 = 0.3
///   w wrong on 16..40 -> 16/40 = 0.4
/// At most 2 of the 9 tools are wrong on a formula, so all 40 are in V (7 of 9 agree).
/// Vote-PT-1, UpperBounds with 12 formulas, holds the situations (see each test).
fn vote_contest() -> &'static Json {
    static SCORES: OnceLock<Json> = OnceLock::new();
    SCORES.get_or_init(|| {
        let mut c = TestContest::new();
        solo(&mut c, "Cal-PT-1", &[("UpperBounds", 40)]);
        solo(&mut c, "Vote-PT-1", &[("UpperBounds", 12)]);
        let tools = ["h1", "h2", "h3", "p", "q", "r", "s", "u", "w"];
        for t in tools {
            tool(&mut c, t, &["UpperBounds"], "");
        }
        let wrong = |t: &str| -> std::ops::Range<usize> {
            match t {
                "q" => 0..4,
                "r" => 0..8,
                "s" => 8..16,
                "u" => 12..40,
                "w" => 16..40,
                _ => 0..0,
            }
        };
        for t in tools {
            let answers = (0..40).map(|i| (i, if wrong(t).contains(&i) { "1" } else { "0" }));
            c.answer(
                t,
                "Cal-PT-1",
                "UpperBounds",
                &formulas("Cal-PT-1", "UpperBounds", answers),
            );
        }
        let v = "Vote-PT-1";
        let mut vote: std::collections::BTreeMap<&str, Vec<(usize, &str)>> = Default::default();
        let mut say = |t: &'static str, i: usize, value: &'static str| {
            vote.entry(t).or_default().push((i, value))
        };
        // t0: h1 = h2 = h3 = 4 (in V)
        for h in ["h1", "h2", "h3"] {
            say(h, 0, "4");
        }
        // t1: u = w = 3
        say("u", 1, "3");
        say("w", 1, "3");
        // t2: p = s = 1, q = r = 2
        say("p", 2, "1");
        say("q", 2, "2");
        say("r", 2, "2");
        say("s", 2, "1");
        // t3: p = 5, u = w = 6
        say("p", 3, "5");
        say("u", 3, "6");
        say("w", 3, "6");
        // t4: p = 1, q = 2, r = 3
        say("p", 4, "1");
        say("q", 4, "2");
        say("r", 4, "3");
        // t5: q = 10, r = 11; t6: u = 12, w = 13; t7: r = 14, s = 15
        say("q", 5, "10");
        say("r", 5, "11");
        say("u", 6, "12");
        say("w", 6, "13");
        say("r", 7, "14");
        say("s", 7, "15");
        // t8: p = 16 alone; t9: q = 17 alone
        say("p", 8, "16");
        say("q", 9, "17");
        // t10: nobody; t11: h1 and p say CANNOT_COMPUTE
        say("h1", 11, "CANNOT_COMPUTE");
        say("p", 11, "CANNOT_COMPUTE");
        for (t, answers) in vote {
            c.answer(t, v, "UpperBounds", &formulas(v, "UpperBounds", answers));
        }
        write_manifest(&c, "2026", LIMITS);
        run_and_score(&c)
    })
}

fn vote_id(i: usize) -> String {
    fid("Vote-PT-1", "UpperBounds", i)
}

#[test]
fn e3_1_vote_contest_confidences() {
    let s = vote_contest();
    // V = the 40 calibration values + Vote t0 (3 of 3 agree); the other Vote values have fewer
    // than 3 agreeing tools or no strict majority, so they are not in V.
    // h1..h3: 41/41 = 1; p: 40/40 = 1; q: 36/40 = 0.9; r, s: 32/40 = 0.8; u: 12/40 = 0.3;
    // w: 16/40 = 0.4.
    for (t, c) in [
        ("h1", 1.0),
        ("h2", 1.0),
        ("h3", 1.0),
        ("p", 1.0),
        ("q", 0.9),
        ("r", 0.8),
        ("s", 0.8),
        ("u", 0.3),
        ("w", 0.4),
    ] {
        assert_confidence(s, t, c);
    }
}

/// E-3.1, first situation: "All tools agree".
#[test]
fn e3_1_unanimity() {
    let s = vote_contest();
    // t0: h1 = h2 = h3 = 4 -> 4.
    assert_trusted(
        s,
        "Vote-PT-1",
        "UpperBounds",
        &vote_id(0),
        Some("4"),
        "unanimity",
    );
    // t1: u = w = 3; both have a low Confidence (0.3, 0.4), which does not matter when all the
    // tools agree -> 3.
    assert_trusted(
        s,
        "Vote-PT-1",
        "UpperBounds",
        &vote_id(1),
        Some("3"),
        "unanimity",
    );
}

/// E-3.1, second situation: "a weighted majority of tools that agree on one value", each tool
/// weighted by its Confidence.
#[test]
fn e3_1_weighted_majority() {
    let s = vote_contest();
    // t2, two against two: 1 <- p, s: 1.0 + 0.8 = 1.8; 2 <- q, r: 0.9 + 0.8 = 1.7;
    // total 3.5, half 1.75; 1.8 > 1.75 -> 1.
    assert_trusted(
        s,
        "Vote-PT-1",
        "UpperBounds",
        &vote_id(2),
        Some("1"),
        "weighted-majority",
    );
    // t3, one against two: 5 <- p: 1.0; 6 <- u, w: 0.3 + 0.4 = 0.7; total 1.7, half 0.85;
    // 1.0 > 0.85 -> 5 (the weights decide, not the number of tools).
    assert_trusted(
        s,
        "Vote-PT-1",
        "UpperBounds",
        &vote_id(3),
        Some("5"),
        "weighted-majority",
    );
    // t4, three distinct values: 1 <- p 1.0, 2 <- q 0.9, 3 <- r 0.8; total 2.7, half 1.35;
    // no value weighs more than 1.35 -> unknown.
    assert_trusted(
        s,
        "Vote-PT-1",
        "UpperBounds",
        &vote_id(4),
        None,
        "weighted-majority",
    );
}

/// E-3.1, third situation: "Only two tools provide different values": the higher Confidence
/// wins; equal Confidence -> unknown.
#[test]
fn e3_1_two_tools_higher_confidence_wins() {
    let s = vote_contest();
    // t5: q = 10 (C 0.9), r = 11 (C 0.8); 0.8 < 0.9 -> 10.
    assert_trusted(
        s,
        "Vote-PT-1",
        "UpperBounds",
        &vote_id(5),
        Some("10"),
        "two-tools",
    );
    // t6: u = 12 (C 0.3), w = 13 (C 0.4); 0.3 < 0.4 -> 13 (the second tool in manifest order).
    assert_trusted(
        s,
        "Vote-PT-1",
        "UpperBounds",
        &vote_id(6),
        Some("13"),
        "two-tools",
    );
}

#[test]
fn e3_1_two_tools_equal_confidence_unknown() {
    let s = vote_contest();
    // t7: r = 14 (C 0.8), s = 15 (C 0.8); neither is lower -> unknown.
    assert_trusted(
        s,
        "Vote-PT-1",
        "UpperBounds",
        &vote_id(7),
        None,
        "two-tools",
    );
}

/// E-3.1, fourth situation (2026): "if C_tool >= 0.997, the value is considered correct".
#[test]
fn e3_1_single_tool_in_the_vote_contest() {
    let s = vote_contest();
    // t8: p alone, C_p = 1 >= 0.997 -> 16.
    assert_trusted(
        s,
        "Vote-PT-1",
        "UpperBounds",
        &vote_id(8),
        Some("16"),
        "single-tool",
    );
    // t9: q alone, C_q = 0.9 < 0.997 -> unknown.
    assert_trusted(
        s,
        "Vote-PT-1",
        "UpperBounds",
        &vote_id(9),
        None,
        "single-tool",
    );
}

/// E-3.1, fifth situation: "No tool provides any value"; CANNOT_COMPUTE is not a value.
#[test]
fn e3_1_no_answer() {
    let s = vote_contest();
    // t10: nobody answered -> unknown.
    assert_trusted(
        s,
        "Vote-PT-1",
        "UpperBounds",
        &vote_id(10),
        None,
        "no-answer",
    );
    // t11: h1 and p said CANNOT_COMPUTE -> no value provided -> unknown.
    assert_trusted(
        s,
        "Vote-PT-1",
        "UpperBounds",
        &vote_id(11),
        None,
        "no-answer",
    );
}

/// E-4.2 on the vote contest: the points follow the trusted values decided above.
#[test]
fn e4_2_scores_follow_the_trusted_values_of_the_vote_contest() {
    let s = vote_contest();
    // Two one-instance models: weight 1 each (E-4.4). Cal: 40 values, ScoreValue 16/40 = 0.4,
    // PenaltyValue 0.8. Vote: 12 values, ScoreValue 16/12 = 4/3, PenaltyValue 8/3.
    // p: Cal 40 x 0.4 = 16; Vote: t2 (1) ok, t3 (5) ok, t4 unknown 0, t8 (16) ok = 3 x 4/3 = 4
    //    -> 20.
    assert_score(s, "UpperBounds", "p", 20.0);
    // q: Cal 36 x 0.4 - 4 x 0.8 = 14.4 - 3.2 = 11.2; Vote: t2 said 2, trusted 1: -8/3; t4
    //    unknown 0; t5 ok +4/3; t9 unknown 0 -> 11.2 - 4/3 = 9.866667.
    assert_score(s, "UpperBounds", "q", 11.2 - 4.0 / 3.0);
    // u: Cal 12 x 0.4 - 28 x 0.8 = 4.8 - 22.4 = -17.6; Vote: t1 ok +4/3, t3 said 6, trusted 5:
    //    -8/3, t6 said 12, trusted 13: -8/3 -> -17.6 - 4 = -21.6.
    assert_score(s, "UpperBounds", "u", -21.6);
}

// ---------------------------------------------------------------------------------------------
// E-3.1, single tool: the thresholds of 2026 and 2023.

/// The threshold's example: one lone answer of a tool whose Confidence is 199/200 = 0.995 is
/// trusted under 2023 (threshold 0.993) and unknown under 2026 (threshold 0.997). Switching
/// editions changes only the manifest's `rules` line and runs nothing again.
#[test]
fn e3_1_issue_example_lone_answer_at_0_995_trusted_2023_unknown_2026() {
    let mut c = TestContest::new();
    solo(&mut c, "Cal-PT-1", &[("UpperBounds", 200)]);
    solo(&mut c, "Lone-PT-1", &[]);
    for t in ["x", "b", "c", "d"] {
        tool(&mut c, t, &["UpperBounds", "ReachabilityDeadlock"], "");
        // Cal: 200 bounds, all 0; x says 1 on the first one.
        let answers = (0..200).map(|i| (i, if t == "x" && i == 0 { "1" } else { "0" }));
        c.answer(
            t,
            "Cal-PT-1",
            "UpperBounds",
            &formulas("Cal-PT-1", "UpperBounds", answers),
        );
    }
    // Lone: only x answers ReachabilityDeadlock.
    c.answer(
        "x",
        "Lone-PT-1",
        "ReachabilityDeadlock",
        &global("ReachabilityDeadlock", "TRUE"),
    );
    write_manifest(&c, "2026", LIMITS);
    let s = run_and_score(&c);

    // E-2.2: every Cal value is in V (at least 3 of 4 agree): |V| = 200; x is right on 199.
    // C_x = 199/200 = 0.995; C_b = C_c = C_d = 200/200 = 1.
    assert_confidence(&s, "x", 0.995);
    assert_confidence(&s, "b", 1.0);
    // E-3.1 single tool, 2026: 0.995 < 0.997 -> unknown.
    assert_trusted(
        &s,
        "Lone-PT-1",
        "ReachabilityDeadlock",
        "ReachabilityDeadlock",
        None,
        "single-tool",
    );
    // E-4.2: an unknown trusted value scores 0 -> GlobalProperties: x = 0.
    assert_score(&s, "GlobalProperties", "x", 0.0);
    // E-4.6: x is alone on the GlobalProperties podium with 0 points: rank 1, gold (the text
    // sets no minimum score for a medal: docs/rules.md).
    assert_eq!(
        standings(&s, "GlobalProperties"),
        vec![row("x", Some(1), Some("gold"))]
    );
    // UpperBounds: ScoreValue 16/200 = 0.08, PenaltyValue 0.16; x: 199 x 0.08 - 0.16 = 15.76.
    assert_score(&s, "UpperBounds", "x", 15.76);
    assert_score(&s, "UpperBounds", "b", 16.0);

    // The same store under 2023: nothing to run (the run key does not depend on scoring rules).
    set_edition(&c, "2023");
    let p = plan(&c);
    assert_eq!(
        (p["to_run"].as_u64(), p["cached"].as_u64()),
        (Some(0), p["runs"].as_u64()),
        "{p}"
    );
    let s = scores(&c);
    assert_eq!(s["edition"], "MCC 2023");
    assert_confidence(&s, "x", 0.995);
    // E-3.1 single tool, 2023: 0.995 >= 0.993 -> trusted TRUE.
    assert_trusted(
        &s,
        "Lone-PT-1",
        "ReachabilityDeadlock",
        "ReachabilityDeadlock",
        Some("TRUE"),
        "single-tool",
    );
    // E-4.1: a global property is one value: ScoreValue 16 -> x = 16, gold.
    assert_score(&s, "GlobalProperties", "x", 16.0);
    assert_eq!(
        standings(&s, "GlobalProperties"),
        vec![row("x", Some(1), Some("gold"))]
    );
    assert_score(&s, "UpperBounds", "x", 15.76);
}

/// E-3.1 single tool exactly at, above and below the thresholds (">=": at counts). 1000
/// calibration values give Confidences of exactly 0.997 and 0.993.
#[test]
fn e3_1_single_tool_at_above_below_threshold() {
    let mut c = TestContest::new();
    solo(&mut c, "Cal-PT-1", &[("UpperBounds", 1000)]);
    solo(&mut c, "Lone-PT-1", &[("UpperBounds", 5)]);
    // Wrong (1 instead of 0) on disjoint formulas: at most 1 of the 8 tools is wrong on a value,
    // so all 1000 are in V.
    let tools: [(&str, std::ops::Range<usize>); 8] = [
        ("h1", 0..0),
        ("h2", 0..0),
        ("h3", 0..0),
        ("z", 0..0),
        ("x", 0..3),
        ("y", 3..7),
        ("v", 7..14),
        ("w", 14..22),
    ];
    for (t, wrong) in &tools {
        tool(&mut c, t, &["UpperBounds"], "");
        let answers = (0..1000).map(|i| (i, if wrong.contains(&i) { "1" } else { "0" }));
        c.answer(
            t,
            "Cal-PT-1",
            "UpperBounds",
            &formulas("Cal-PT-1", "UpperBounds", answers),
        );
    }
    // Lone: formula i answered by one tool only.
    for (i, t) in ["z", "x", "y", "v", "w"].iter().enumerate() {
        c.answer(
            t,
            "Lone-PT-1",
            "UpperBounds",
            &formulas("Lone-PT-1", "UpperBounds", [(i, "5")]),
        );
    }
    write_manifest(&c, "2026", LIMITS);
    let s = run_and_score(&c);
    // C_z = 1000/1000 = 1; C_x = 997/1000 = 0.997; C_y = 996/1000 = 0.996;
    // C_v = 993/1000 = 0.993; C_w = 992/1000 = 0.992.
    for (t, conf) in [
        ("z", 1.0),
        ("x", 0.997),
        ("y", 0.996),
        ("v", 0.993),
        ("w", 0.992),
    ] {
        assert_confidence(&s, t, conf);
    }
    let lone = |i| fid("Lone-PT-1", "UpperBounds", i);
    // 2026, threshold 0.997: z 1 >= 0.997 trusted; x 0.997 >= 0.997 trusted (at the threshold);
    // y 0.996, v 0.993, w 0.992 < 0.997 unknown.
    assert_trusted(
        &s,
        "Lone-PT-1",
        "UpperBounds",
        &lone(0),
        Some("5"),
        "single-tool",
    );
    assert_trusted(
        &s,
        "Lone-PT-1",
        "UpperBounds",
        &lone(1),
        Some("5"),
        "single-tool",
    );
    assert_trusted(
        &s,
        "Lone-PT-1",
        "UpperBounds",
        &lone(2),
        None,
        "single-tool",
    );
    assert_trusted(
        &s,
        "Lone-PT-1",
        "UpperBounds",
        &lone(3),
        None,
        "single-tool",
    );
    assert_trusted(
        &s,
        "Lone-PT-1",
        "UpperBounds",
        &lone(4),
        None,
        "single-tool",
    );

    switch_edition(&c, "2023");
    let s = scores(&c);
    // 2023, threshold 0.993: z, x, y trusted; v 0.993 >= 0.993 trusted (at); w 0.992 unknown.
    assert_trusted(
        &s,
        "Lone-PT-1",
        "UpperBounds",
        &lone(0),
        Some("5"),
        "single-tool",
    );
    assert_trusted(
        &s,
        "Lone-PT-1",
        "UpperBounds",
        &lone(1),
        Some("5"),
        "single-tool",
    );
    assert_trusted(
        &s,
        "Lone-PT-1",
        "UpperBounds",
        &lone(2),
        Some("5"),
        "single-tool",
    );
    assert_trusted(
        &s,
        "Lone-PT-1",
        "UpperBounds",
        &lone(3),
        Some("5"),
        "single-tool",
    );
    assert_trusted(
        &s,
        "Lone-PT-1",
        "UpperBounds",
        &lone(4),
        None,
        "single-tool",
    );
}

/// 2015 report: "We also discarded lonely answers from tools whose reliability was less than
/// 0.9": a single tool's answer is trusted only if its Confidence is >= 0.9.
#[test]
fn e3_1_2015_lonely_answers_need_confidence_0_9() {
    let mut c = TestContest::new();
    solo(&mut c, "Cal-PT-1", &[("ReachabilityCardinality", 10)]);
    solo(&mut c, "Lone-PT-1", &[("ReachabilityCardinality", 2)]);
    // Cal: 10 formulas, all TRUE; x says FALSE on formula 0, y on formulas 1 and 2. At most 1 of
    // 5 tools is wrong on a formula: all 10 are in V.
    for t in ["h1", "h2", "h3", "x", "y"] {
        tool(&mut c, t, &["ReachabilityCardinality"], "");
        let wrong = |i: usize| (t == "x" && i == 0) || (t == "y" && (i == 1 || i == 2));
        let answers = (0..10).map(|i| (i, if wrong(i) { "FALSE" } else { "TRUE" }));
        c.answer(
            t,
            "Cal-PT-1",
            "ReachabilityCardinality",
            &formulas("Cal-PT-1", "ReachabilityCardinality", answers),
        );
    }
    // Lone: formula 0 answered by x alone, formula 1 by y alone.
    c.answer(
        "x",
        "Lone-PT-1",
        "ReachabilityCardinality",
        &formulas("Lone-PT-1", "ReachabilityCardinality", [(0, "TRUE")]),
    );
    c.answer(
        "y",
        "Lone-PT-1",
        "ReachabilityCardinality",
        &formulas("Lone-PT-1", "ReachabilityCardinality", [(1, "TRUE")]),
    );
    write_manifest(&c, "2015", LIMITS);
    let s = run_and_score(&c);
    assert_eq!(s["edition"], "MCC 2015");
    // Reliability (Table 3: correct / selected): x 9/10 = 0.9; y 8/10 = 0.8.
    assert_confidence(&s, "x", 0.9);
    assert_confidence(&s, "y", 0.8);
    let lone = |i| fid("Lone-PT-1", "ReachabilityCardinality", i);
    // x alone: 0.9 is not less than 0.9 -> kept: TRUE. y alone: 0.8 < 0.9 -> discarded.
    assert_trusted(
        &s,
        "Lone-PT-1",
        "ReachabilityCardinality",
        &lone(0),
        Some("TRUE"),
        "single-tool",
    );
    assert_trusted(
        &s,
        "Lone-PT-1",
        "ReachabilityCardinality",
        &lone(1),
        None,
        "single-tool",
    );
    // Scores (2015: no penalty, one wrong value loses the examination on that instance;
    // Lone has 2 values: ScoreValue 16/2 = 8):
    // x: Cal one wrong -> 0; Lone 8 -> 8.  y: Cal 0; Lone unknown -> 0.  h1: Cal 10 x 1.6 = 16.
    assert_score(&s, "Reachability", "x", 8.0);
    assert_score(&s, "Reachability", "y", 0.0);
    assert_score(&s, "Reachability", "h1", 16.0);

    // Under 2026 the same lonely answers are both unknown (0.9 and 0.8 < 0.997).
    switch_edition(&c, "2026");
    let s = scores(&c);
    assert_trusted(
        &s,
        "Lone-PT-1",
        "ReachabilityCardinality",
        &lone(0),
        None,
        "single-tool",
    );
    assert_trusted(
        &s,
        "Lone-PT-1",
        "ReachabilityCardinality",
        &lone(1),
        None,
        "single-tool",
    );
}

// ---------------------------------------------------------------------------------------------
// E-4.1, E-4.2: points and penalties.

/// ScoreValue = 16 / number of values (StateSpace 4 values -> 4; a global property -> 16;
/// 16 formulas -> 1), PenaltyValue = 2 x ScoreValue, unknown trusted values and values not
/// computed count 0.
#[test]
fn e4_1_e4_2_score_value_penalty_value_unknown_counts_zero() {
    let mut c = TestContest::new();
    let inst = "Score-PT-1";
    solo(&mut c, inst, &[("UpperBounds", 16)]);
    let exams = [
        "StateSpace",
        "ReachabilityDeadlock",
        "QuasiLiveness",
        "UpperBounds",
    ];
    for t in ["a", "b", "c", "e"] {
        tool(&mut c, t, &exams, "");
    }
    let ub = |answers: Vec<(usize, String)>| formulas(inst, "UpperBounds", answers);
    for t in ["a", "b", "c"] {
        c.answer(t, inst, "StateSpace", &state_space(SS_FULL));
        c.answer(
            t,
            inst,
            "ReachabilityDeadlock",
            &global("ReachabilityDeadlock", "TRUE"),
        );
        c.answer(t, inst, "QuasiLiveness", &global("QuasiLiveness", "TRUE"));
    }
    // UpperBounds: a, b, c give bound i for formulas 0..14; on 14 a, b (and e) give three
    // different values, on 15 a and b (both C = 1) disagree.
    let base = |extra: &[(usize, &str)]| -> Vec<(usize, String)> {
        (0..14)
            .map(|i| (i, i.to_string()))
            .chain(extra.iter().map(|(i, v)| (*i, v.to_string())))
            .collect()
    };
    c.answer(
        "a",
        inst,
        "UpperBounds",
        &ub(base(&[(14, "100"), (15, "200")])),
    );
    c.answer(
        "b",
        inst,
        "UpperBounds",
        &ub(base(&[(14, "101"), (15, "201")])),
    );
    c.answer("c", inst, "UpperBounds", &ub(base(&[])));
    // e: StateSpace with TRANSITIONS wrong; ReachabilityDeadlock wrong; QuasiLiveness right;
    // UpperBounds 0..10 right, 10 and 11 wrong, 12 and 13 CANNOT_COMPUTE, 14 a third value.
    c.answer(
        "e",
        inst,
        "StateSpace",
        &state_space(&[
            ("STATES", "10"),
            ("TRANSITIONS", "21"),
            ("MAX_TOKEN_IN_PLACE", "1"),
            ("MAX_TOKEN_PER_MARKING", "3"),
        ]),
    );
    c.answer(
        "e",
        inst,
        "ReachabilityDeadlock",
        &global("ReachabilityDeadlock", "FALSE"),
    );
    c.answer("e", inst, "QuasiLiveness", &global("QuasiLiveness", "TRUE"));
    let e_ub: Vec<(usize, String)> = (0..10)
        .map(|i| (i, i.to_string()))
        .chain([
            (10, "99".to_string()),
            (11, "99".into()),
            (12, "CANNOT_COMPUTE".into()),
            (13, "CANNOT_COMPUTE".into()),
            (14, "102".into()),
        ])
        .collect();
    c.answer("e", inst, "UpperBounds", &ub(e_ub));
    write_manifest(&c, "2026", LIMITS);
    let s = run_and_score(&c);

    // E-2.2: V = SS x4, RD, QL, UB 0..14 (3 of 3 or 3 of 4 agree): a, b, c right on all 20 -> 1.
    // e answered 18 values of V (SS 4, RD, QL, UB 0..12) and is right on 14 (SS 3, QL, UB 10)
    // -> C_e = 14/18 = 0.777778.
    assert_confidence(&s, "a", 1.0);
    assert_confidence(&s, "e", 14.0 / 18.0);
    let id = |i| fid(inst, "UpperBounds", i);
    // UB 14: 100 (a, C 1), 101 (b, C 1), 102 (e, C 0.78): total 2.78, half 1.39, none above
    // -> unknown. UB 15: a and b, both C = 1 -> unknown.
    assert_trusted(&s, inst, "UpperBounds", &id(14), None, "weighted-majority");
    assert_trusted(&s, inst, "UpperBounds", &id(15), None, "two-tools");
    assert_trusted(
        &s,
        inst,
        "UpperBounds",
        &id(10),
        Some("10"),
        "weighted-majority",
    );

    // One one-instance model: weight 1 (E-4.4).
    // StateSpace: 4 values -> ScoreValue 16/4 = 4, PenaltyValue 8.
    // a, b, c: 4 x 4 = 16. e: 3 x 4 - 8 = 4.
    assert_score(&s, "StateSpace", "a", 16.0);
    assert_score(&s, "StateSpace", "e", 4.0);
    // GlobalProperties: one value per examination -> ScoreValue 16, PenaltyValue 32.
    // a, b, c: RD 16 + QL 16 = 32. e: RD -32 + QL 16 = -16.
    assert_score(&s, "GlobalProperties", "a", 32.0);
    assert_score(&s, "GlobalProperties", "e", -16.0);
    // UpperBounds: 16 formulas -> ScoreValue 1, PenaltyValue 2.
    // a, b: 0..14 right = 14, 14 and 15 unknown = 0 -> 14. c: 14.
    // e: 10 right - 2 wrong x 2 + 12, 13 not computed 0 + 14 unknown 0 = 6.
    assert_score(&s, "UpperBounds", "a", 14.0);
    assert_score(&s, "UpperBounds", "b", 14.0);
    assert_score(&s, "UpperBounds", "c", 14.0);
    assert_score(&s, "UpperBounds", "e", 6.0);
}

/// 2015 report: "Only correct values were considered and one wrong value disqualifies the tool
/// for the considered examination on the instance of the model" (no penalty otherwise).
#[test]
fn e4_2_2015_one_wrong_value_loses_the_examination() {
    let mut c = TestContest::new();
    solo(&mut c, "Lost-PT-1", &[("ReachabilityCardinality", 16)]);
    solo(&mut c, "Kept-PT-1", &[("ReachabilityCardinality", 16)]);
    for t in ["a", "b", "c", "e"] {
        tool(&mut c, t, &["StateSpace", "ReachabilityCardinality"], "");
    }
    for inst in ["Lost-PT-1", "Kept-PT-1"] {
        for t in ["a", "b", "c"] {
            c.answer(t, inst, "StateSpace", &state_space(SS_FULL));
            c.answer(
                t,
                inst,
                "ReachabilityCardinality",
                &formulas(
                    inst,
                    "ReachabilityCardinality",
                    (0..16).map(|i| (i, "TRUE")),
                ),
            );
        }
    }
    // e on Lost: StateSpace with TRANSITIONS wrong, 15 formulas right and formula 15 wrong.
    c.answer(
        "e",
        "Lost-PT-1",
        "StateSpace",
        &state_space(&[
            ("STATES", "10"),
            ("TRANSITIONS", "21"),
            ("MAX_TOKEN_IN_PLACE", "1"),
            ("MAX_TOKEN_PER_MARKING", "3"),
        ]),
    );
    c.answer(
        "e",
        "Lost-PT-1",
        "ReachabilityCardinality",
        &formulas(
            "Lost-PT-1",
            "ReachabilityCardinality",
            (0..16).map(|i| (i, if i == 15 { "FALSE" } else { "TRUE" })),
        ),
    );
    // e on Kept: the same answers without the wrong ones (TRANSITIONS and formula 15 not given).
    c.answer(
        "e",
        "Kept-PT-1",
        "StateSpace",
        &state_space(&[
            ("STATES", "10"),
            ("MAX_TOKEN_IN_PLACE", "1"),
            ("MAX_TOKEN_PER_MARKING", "3"),
        ]),
    );
    c.answer(
        "e",
        "Kept-PT-1",
        "ReachabilityCardinality",
        &formulas(
            "Kept-PT-1",
            "ReachabilityCardinality",
            (0..15).map(|i| (i, "TRUE")),
        ),
    );
    write_manifest(&c, "2015", LIMITS);
    let s = run_and_score(&c);
    // 2015 has four categories ("state-space generation, reachability formulas, CTL formulas,
    // and LTL formulas").
    assert_eq!(
        keys(&s["scores"]),
        vec!["CTL", "LTL", "Reachability", "StateSpace"]
    );
    // No normalisation in 2015: each instance weighs 1.
    // StateSpace, 4 values (ScoreValue 4): a = 16 + 16 = 32. e: Lost one wrong value -> 0;
    // Kept 3 right x 4 = 12 -> 12.
    assert_score(&s, "StateSpace", "a", 32.0);
    assert_score(&s, "StateSpace", "e", 12.0);
    // ReachabilityCardinality, 16 values (ScoreValue 1): a = 32. e: Lost -> 0; Kept 15 -> 15.
    assert_score(&s, "Reachability", "a", 32.0);
    assert_score(&s, "Reachability", "e", 15.0);

    // The same runs under 2026 (E-4.2: each wrong value costs PenaltyValue, 2 x ScoreValue):
    // StateSpace e: Lost 3 x 4 - 8 = 4, Kept 12 -> 16 (weight 1: one-instance models).
    // Reachability e: Lost 15 - 2 = 13, Kept 15 -> 28.
    switch_edition(&c, "2026");
    let s = scores(&c);
    assert_score(&s, "StateSpace", "e", 16.0);
    assert_score(&s, "Reachability", "e", 28.0);
}

// ---------------------------------------------------------------------------------------------
// E-4.3, E-4.5: time and memory awards.

/// A scripted tool that can also burn CPU (`burn/<instance>/<exam>`: loop iterations) and hold
/// memory (`mem/<instance>/<exam>`: MB, a buffer of dd) before printing its answer.
fn burner(c: &mut TestContest, name: &str, exams: &[&str], extra: &str) {
    let list: Vec<String> = exams.iter().map(|e| format!("\"{e}\"")).collect();
    c.script_tool(
        name,
        "#!/bin/sh\n\
         d=\"$(dirname \"$0\")\"\n\
         k=\"$BK_INPUT/$BK_EXAMINATION\"\n\
         if [ -f \"$d/burn/$k\" ]; then n=$(cat \"$d/burn/$k\"); i=0; while [ $i -lt $n ]; do i=$((i+1)); done; fi\n\
         if [ -f \"$d/mem/$k\" ]; then dd if=/dev/zero of=/dev/null bs=$(cat \"$d/mem/$k\")M count=1 2>/dev/null; fi\n\
         if [ -f \"$d/answers/$k\" ]; then cat \"$d/answers/$k\"; else echo DO_NOT_COMPETE; fi\n",
        &format!("examinations = [{}]\n{extra}", list.join(", ")),
    );
}

/// Every run's CPU time and peak memory, for messages.
fn perf_table(c: &TestContest) -> String {
    let mut rows: Vec<String> = c
        .records()
        .iter()
        .filter(|r| r["answers"].as_array().is_some_and(|a| !a.is_empty()))
        .map(|r| {
            format!(
                "{} {} {}: {:.3} s, {:.1} MB",
                r["tool"].as_str().unwrap_or(""),
                r["instance"].as_str().unwrap_or(""),
                r["examination"].as_str().unwrap_or(""),
                r["cpu_time_s"].as_f64().unwrap_or(-1.0),
                r["peak_memory_bytes"].as_f64().unwrap_or(-1.0) / (1 << 20) as f64
            )
        })
        .collect();
    rows.sort();
    rows.join("\n")
}

fn put(c: &TestContest, tool: &str, what: &str, instance: &str, exam: &str, text: &str) {
    let dir = c.path().join("tools").join(tool).join(what).join(instance);
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join(exam), text).unwrap();
}

/// One unit of CPU: 40,000 iterations of a dash loop, about 0.1 s here.
const UNIT: u64 = 40_000;

/// E-4.3: time and memory are measured only where the tool computed all the trusted values of
/// the examination; E-4.5: the fastest-tool and least-memory awards are computed from those
/// examinations only (mean over them, docs), among the ranked tools (competing, best variant).
#[test]
fn e4_3_e4_5_awards_count_completed_examinations_only() {
    let mut c = TestContest::new();
    solo(&mut c, "AwOne-PT-1", &[]);
    solo(&mut c, "AwTwo-PT-1", &[]);
    let exams = ["StateSpace", "ReachabilityDeadlock"];
    burner(&mut c, "a", &exams, "family = \"a\"");
    burner(&mut c, "a-var", &exams, "family = \"a\"");
    burner(&mut c, "b", &exams, "");
    burner(&mut c, "s", &exams, "");
    burner(&mut c, "r", &exams, "kind = \"reference\"");
    let (one, two) = ("AwOne-PT-1", "AwTwo-PT-1");
    let full = state_space(SS_FULL);
    // StateSpace:
    //   a:     both instances complete, 3 units and 40 MB each
    //   b:     both instances complete, 8 units and 80 MB each
    //   s:     AwOne complete, 1 unit, no extra memory; AwTwo without TRANSITIONS (incomplete),
    //          12 units and 200 MB
    //   a-var: AwOne complete, nothing burnt; AwTwo CANNOT_COMPUTE (a variant of a)
    //   r:     reference tool, both complete, nothing burnt
    for inst in [one, two] {
        for t in ["a", "b", "r"] {
            c.answer(t, inst, "StateSpace", &full);
        }
        put(&c, "a", "burn", inst, "StateSpace", &(3 * UNIT).to_string());
        put(&c, "a", "mem", inst, "StateSpace", "40");
        put(&c, "b", "burn", inst, "StateSpace", &(8 * UNIT).to_string());
        put(&c, "b", "mem", inst, "StateSpace", "80");
    }
    c.answer("s", one, "StateSpace", &full);
    put(&c, "s", "burn", one, "StateSpace", &UNIT.to_string());
    c.answer(
        "s",
        two,
        "StateSpace",
        &state_space(&[
            ("STATES", "10"),
            ("MAX_TOKEN_IN_PLACE", "1"),
            ("MAX_TOKEN_PER_MARKING", "3"),
        ]),
    );
    put(&c, "s", "burn", two, "StateSpace", &(12 * UNIT).to_string());
    put(&c, "s", "mem", two, "StateSpace", "200");
    c.answer("a-var", one, "StateSpace", &full);
    c.answer("a-var", two, "StateSpace", "CANNOT_COMPUTE\n");
    // ReachabilityDeadlock on AwOne: a (no CPU burnt, 80 MB) and b (8 units, no extra memory).
    c.answer(
        "a",
        one,
        "ReachabilityDeadlock",
        &global("ReachabilityDeadlock", "TRUE"),
    );
    put(&c, "a", "mem", one, "ReachabilityDeadlock", "80");
    c.answer(
        "b",
        one,
        "ReachabilityDeadlock",
        &global("ReachabilityDeadlock", "TRUE"),
    );
    put(
        &c,
        "b",
        "burn",
        one,
        "ReachabilityDeadlock",
        &(8 * UNIT).to_string(),
    );
    write_manifest(&c, "2026", LIMITS);
    let s = run_and_score(&c);

    // StateSpace values: all tools that answered agree (unanimity); Confidence 1 for all.
    // Scores (ScoreValue 4, weight 1): a 32, b 32, r 32, s 16 + 3 x 4 = 28, a-var 16.
    assert_score(&s, "StateSpace", "s", 28.0);
    assert_score(&s, "StateSpace", "a-var", 16.0);
    // E-4.6: r is a reference tool (unranked); a and b tie at 32 and share rank 1 (gold);
    // s is third (bronze); a-var is a's family's second variant (unranked).
    assert_eq!(
        standings(&s, "StateSpace"),
        vec![
            row("a", Some(1), Some("gold")),
            row("b", Some(1), Some("gold")),
            row("r", None, None),
            row("s", Some(3), Some("bronze")),
            row("a-var", None, None)
        ]
    );
    // E-4.5 (2026: per-examination wins) among the ranked tools a, b, s, on the examinations
    // each completed:
    //   AwOne: a 3 units ~40 MB, b 8 units ~80 MB, s 1 unit ~0 MB -> s wins time and memory;
    //   AwTwo: a 3 units ~40 MB, b 8 units ~80 MB (s incomplete)  -> a wins time and memory.
    //   Wins: a 1, s 1, b 0 each; equal wins go to the better-ranked tool: a (rank 1, s 3).
    //   -> fastest a, least memory a.
    // (Counting s's incomplete AwTwo would give s that win; counting r or a-var, which burn
    //  nothing, would give them the awards. A mean over each tool's own completions would give
    //  both to s, which completed less: e4_5_awards_never_reward_solving_less.)
    assert_eq!(
        s["awards"]["StateSpace"],
        serde_json::json!({"fastest": "a", "least_memory": "a"}),
        "{}\n{}",
        s["awards"],
        perf_table(&c)
    );
    // GlobalProperties: one examination instance, a (0 units, 80 MB) and b (8 units, ~0 MB),
    // both complete, 16 points each -> a wins time, b wins memory: fastest a, least memory b.
    assert_eq!(
        s["awards"]["GlobalProperties"],
        serde_json::json!({"fastest": "a", "least_memory": "b"}),
        "{}\n{}",
        s["awards"],
        perf_table(&c)
    );
}

/// E-4.5 read as per-examination wins never rewards solving less: x completes one
/// easy examination in 4 units of CPU (10 MB); y completes it in 1 unit (no extra memory) and
/// also two hard ones, 10 units and 40 MB each. The same runs under a mean over each tool's own
/// completions give both awards to x; under the 2026 edition's wins, both go to y.
#[test]
fn e4_5_awards_never_reward_solving_less() {
    let mut c = TestContest::new();
    let (easy, hard_a, hard_b) = ("Easy-PT-1", "HardA-PT-1", "HardB-PT-1");
    for inst in [easy, hard_a, hard_b] {
        solo(&mut c, inst, &[]);
    }
    burner(&mut c, "x", &["StateSpace"], "");
    burner(&mut c, "y", &["StateSpace"], "");
    // r, a reference tool (unranked: no award), answers everything without burning: every value
    // has two agreeing answers or more (unanimous, trusted: E-3.1).
    burner(&mut c, "r", &["StateSpace"], "kind = \"reference\"");
    let full = state_space(SS_FULL);
    for inst in [easy, hard_a, hard_b] {
        c.answer("r", inst, "StateSpace", &full);
    }
    c.answer("x", easy, "StateSpace", &full);
    put(&c, "x", "burn", easy, "StateSpace", &(4 * UNIT).to_string());
    put(&c, "x", "mem", easy, "StateSpace", "10");
    c.answer("y", easy, "StateSpace", &full);
    put(&c, "y", "burn", easy, "StateSpace", &UNIT.to_string());
    for inst in [hard_a, hard_b] {
        c.answer("y", inst, "StateSpace", &full);
        put(
            &c,
            "y",
            "burn",
            inst,
            "StateSpace",
            &(10 * UNIT).to_string(),
        );
        put(&c, "y", "mem", inst, "StateSpace", "40");
    }
    write_manifest(&c, "2026", LIMITS);
    let s = run_and_score(&c);
    // Scores (three one-instance models, weight 1; ScoreValue 16/4 = 4, 4 values): x 16,
    // y 3 x 16 = 48 -> y gold, x silver: both ranked (r: reference, unranked).
    assert_score(&s, "StateSpace", "x", 16.0);
    assert_score(&s, "StateSpace", "y", 48.0);
    // Wins (the 2026 edition): Easy: y 1 unit < x 4 units, y ~0 MB < x 10 MB -> y wins both;
    // HardA, HardB: y alone -> y. Wins y 3, x 0 -> fastest y, least memory y.
    assert_eq!(
        s["awards"]["StateSpace"],
        serde_json::json!({"fastest": "y", "least_memory": "y"}),
        "{}\n{}",
        s["awards"],
        perf_table(&c)
    );
    // The same runs, the mean over each tool's own completions: x 4 units, ~10 MB; y (1 + 10 +
    // 10) / 3 = 7 units, ~(0 + 40 + 40) / 3 = ~27 MB -> fastest x, least memory x: x solved a
    // third of what y solved and takes both awards.
    let mean = c.path().join("rules-mean.toml");
    let rules = fs::read_to_string(rules_file("2026")).unwrap();
    assert!(
        rules.contains("aggregate = \"wins\""),
        "the 2026 edition reads E-4.5 as wins"
    );
    fs::write(
        &mean,
        rules.replace("aggregate = \"wins\"", "aggregate = \"mean\""),
    )
    .unwrap();
    let manifest = c.path().join("contest.toml");
    let text = fs::read_to_string(&manifest).unwrap();
    let text = text.replace(&rules_file("2026"), mean.to_str().unwrap());
    fs::write(&manifest, text).unwrap();
    let s = scores(&c);
    assert_eq!(
        s["awards"]["StateSpace"],
        serde_json::json!({"fastest": "x", "least_memory": "x"}),
        "{}\n{}",
        s["awards"],
        perf_table(&c)
    );
}

/// E-4.5 with equal merit (`[awards] ties`): x and y each win one examination instance, for time
/// and for memory, and share rank 1. `ties = "rank"` (every edition file): the award goes to
/// the better rank, then the podium order (by name): x. `ties = "shared"`: both hold it.
#[test]
fn e4_5_award_ties_go_to_the_better_rank_or_are_shared() {
    let mut c = TestContest::new();
    let (one, two) = ("TieOne-PT-1", "TieTwo-PT-1");
    for inst in [one, two] {
        solo(&mut c, inst, &[]);
    }
    burner(&mut c, "x", &["StateSpace"], "");
    burner(&mut c, "y", &["StateSpace"], "");
    burner(&mut c, "r", &["StateSpace"], "kind = \"reference\"");
    let full = state_space(SS_FULL);
    for t in ["x", "y", "r"] {
        for inst in [one, two] {
            c.answer(t, inst, "StateSpace", &full);
        }
    }
    // TieOne: x burns 1 unit and no memory, y 6 units and 60 MB; TieTwo the other way round.
    for (slow, inst) in [("y", one), ("x", two)] {
        put(
            &c,
            slow,
            "burn",
            inst,
            "StateSpace",
            &(6 * UNIT).to_string(),
        );
        put(&c, slow, "mem", inst, "StateSpace", "60");
    }
    for (fast, inst) in [("x", one), ("y", two)] {
        put(&c, fast, "burn", inst, "StateSpace", &UNIT.to_string());
    }
    write_manifest(&c, "2026", LIMITS);
    let s = run_and_score(&c);
    // Scores: two one-instance models, 4 values each right (ScoreValue 4): x 32, y 32 -> both
    // rank 1 (gold); r is a reference tool (unranked, no award).
    assert_score(&s, "StateSpace", "x", 32.0);
    assert_score(&s, "StateSpace", "y", 32.0);
    // Wins: TieOne x (1 unit < 6, less memory), TieTwo y -> x 1, y 1 for each award: tied.
    // ties = "rank": equal rank 1, podium order by name -> x holds both.
    assert_eq!(
        s["awards"]["StateSpace"],
        serde_json::json!({"fastest": "x", "least_memory": "x"}),
        "{}\n{}",
        s["awards"],
        perf_table(&c)
    );
    let shared = c.path().join("rules-shared.toml");
    let rules = fs::read_to_string(rules_file("2026")).unwrap();
    assert!(rules.contains("aggregate = \"wins\""));
    fs::write(
        &shared,
        rules.replace(
            "aggregate = \"wins\"",
            "aggregate = \"wins\"\nties = \"shared\"",
        ),
    )
    .unwrap();
    let manifest = c.path().join("contest.toml");
    let text = fs::read_to_string(&manifest).unwrap();
    fs::write(
        &manifest,
        text.replace(&rules_file("2026"), shared.to_str().unwrap()),
    )
    .unwrap();
    let s = scores(&c);
    // ties = "shared": both hold both awards, listed in podium order; `fastest` keeps the first.
    assert_eq!(
        s["awards"]["StateSpace"],
        serde_json::json!({
            "fastest": "x",
            "least_memory": "x",
            "fastest_shared": ["x", "y"],
            "least_memory_shared": ["x", "y"],
        }),
        "{}\n{}",
        s["awards"],
        perf_table(&c)
    );
    // The terminal names both.
    let out = c.mccbuild(&["scores"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("fastest: x, y"), "{}", stdout(&out));
}

// ---------------------------------------------------------------------------------------------
// E-4.4: normalisation and model kinds.

/// 2026 (linear normalisation) and 2015 (none) on one contest of three known models: Big (3
/// instances), Mid (2), Solo (1).
#[test]
fn e4_4_normalisation_linear_2026_none_2015() {
    let mut c = TestContest::new();
    let big = ["Big-PT-1", "Big-PT-2", "Big-PT-3"];
    let mid = ["Mid-PT-1", "Mid-PT-2"];
    for i in big.iter().chain(&mid).chain(&["Solo-PT-1"]) {
        instance(&c, i, &[]);
    }
    model(&mut c, "Big", "known", &big);
    model(&mut c, "Mid", "known", &mid);
    model(&mut c, "Solo", "known", &["Solo-PT-1"]);
    for t in ["a", "b", "c", "d", "e"] {
        tool(&mut c, t, &["ReachabilityDeadlock"], "");
    }
    let yes = global("ReachabilityDeadlock", "TRUE");
    for i in big.iter().chain(&mid).chain(&["Solo-PT-1"]) {
        for t in ["a", "b", "c"] {
            c.answer(t, i, "ReachabilityDeadlock", &yes);
        }
    }
    // d answers on Big-PT-1 and Mid-PT-1 only; e on Solo-PT-1 only.
    c.answer("d", "Big-PT-1", "ReachabilityDeadlock", &yes);
    c.answer("d", "Mid-PT-1", "ReachabilityDeadlock", &yes);
    c.answer("e", "Solo-PT-1", "ReachabilityDeadlock", &yes);
    write_manifest(&c, "2026", LIMITS);
    let s = run_and_score(&c);
    // E-4.4, linear: N = 3 (Big). A model of n instances weighs 1 + (2 - 1)(n - 1)/(N - 1):
    //   Big 1 + 2/2 = 2 -> 2/3 per instance; Mid 1 + 1/2 = 1.5 -> 0.75 per instance; Solo 1.
    // A global property is worth 16 (E-4.1).
    // a: 16 x (3 x 2/3 + 2 x 0.75 + 1) = 16 x 4.5 = 72 (Big weighs 32 = 2 x Solo's 16).
    assert_score(&s, "GlobalProperties", "a", 72.0);
    // d: 16 x (2/3 + 0.75) = 22.666667.
    assert_score(&s, "GlobalProperties", "d", 16.0 * (2.0 / 3.0 + 0.75));
    // e: 16 x 1 = 16.
    assert_score(&s, "GlobalProperties", "e", 16.0);

    // 2015: no normalisation, every instance weighs 1 (ReachabilityDeadlock is in the
    // Reachability category there). a: 6 x 16 = 96; d: 2 x 16 = 32; e: 16.
    switch_edition(&c, "2015");
    let s = scores(&c);
    assert_score(&s, "Reachability", "a", 96.0);
    assert_score(&s, "Reachability", "d", 32.0);
    assert_score(&s, "Reachability", "e", 16.0);
}

/// Model kinds: 2026 "the total score for all instances of [surprise] models weight half the
/// score for all the instances of known models" (per category); 2023 surprise x10.
#[test]
fn e4_4_surprise_share_2026_and_x10_2023() {
    let mut c = TestContest::new();
    instance(&c, "Kone-PT-1", &[("UpperBounds", 16)]);
    instance(&c, "Ktwo-PT-1", &[]);
    instance(&c, "Ktwo-PT-2", &[]);
    instance(&c, "Sone-PT-1", &[("UpperBounds", 16)]);
    model(&mut c, "Kone", "known", &["Kone-PT-1"]);
    model(&mut c, "Ktwo", "known", &["Ktwo-PT-1", "Ktwo-PT-2"]);
    model(&mut c, "Sone", "surprise", &["Sone-PT-1"]);
    let exams = ["ReachabilityDeadlock", "UpperBounds"];
    for t in ["a", "b", "c", "k", "s"] {
        tool(&mut c, t, &exams, "");
    }
    let yes = global("ReachabilityDeadlock", "TRUE");
    let ub = |i: &str| formulas(i, "UpperBounds", (0..16).map(|n| (n, "1")));
    for t in ["a", "b", "c"] {
        for i in ["Kone-PT-1", "Ktwo-PT-1", "Ktwo-PT-2", "Sone-PT-1"] {
            c.answer(t, i, "ReachabilityDeadlock", &yes);
        }
        c.answer(t, "Kone-PT-1", "UpperBounds", &ub("Kone-PT-1"));
        c.answer(t, "Sone-PT-1", "UpperBounds", &ub("Sone-PT-1"));
    }
    // k answers the known Kone-PT-1 only, s the surprise Sone-PT-1 only, both right.
    c.answer("k", "Kone-PT-1", "ReachabilityDeadlock", &yes);
    c.answer("k", "Kone-PT-1", "UpperBounds", &ub("Kone-PT-1"));
    c.answer("s", "Sone-PT-1", "ReachabilityDeadlock", &yes);
    c.answer("s", "Sone-PT-1", "UpperBounds", &ub("Sone-PT-1"));
    write_manifest(&c, "2026", LIMITS);
    let s = run_and_score(&c);
    // Normalisation: N = 2 (Ktwo): Kone 1; Ktwo 1 + (2-1)(2-1)/(2-1) = 2 -> 1 per instance;
    // Sone 1. So every instance weighs 1 before the kind multiplier.
    // GlobalProperties (RD on the 4 instances): known could earn 16 x 3 = 48, surprise 16 x 1;
    // surprise multiplier m = 0.5 x 48 / 16 = 1.5 (all surprise instances weigh 24 = 48 / 2).
    //   a = 48 + 16 x 1.5 = 72; s = 24; k = 16.
    assert_score(&s, "GlobalProperties", "a", 72.0);
    assert_score(&s, "GlobalProperties", "s", 24.0);
    assert_score(&s, "GlobalProperties", "k", 16.0);
    // UpperBounds (formula files on Kone and Sone only): known 16, surprise 16;
    // m = 0.5 x 16 / 16 = 0.5 (per category: not the 1.5 of GlobalProperties).
    //   a = 16 + 16 x 0.5 = 24; s = 8; k = 16.
    assert_score(&s, "UpperBounds", "a", 24.0);
    assert_score(&s, "UpperBounds", "s", 8.0);
    assert_score(&s, "UpperBounds", "k", 16.0);

    // 2023: known x1, surprise x10 (the same normalisation text as 2026).
    //   GlobalProperties: a = 48 + 160 = 208; s = 160; k = 16.
    //   UpperBounds: a = 16 + 160 = 176; s = 160; k = 16.
    switch_edition(&c, "2023");
    let s = scores(&c);
    assert_score(&s, "GlobalProperties", "a", 208.0);
    assert_score(&s, "GlobalProperties", "s", 160.0);
    assert_score(&s, "GlobalProperties", "k", 16.0);
    assert_score(&s, "UpperBounds", "a", 176.0);
    assert_score(&s, "UpperBounds", "s", 160.0);
    assert_score(&s, "UpperBounds", "k", 16.0);
}

/// 2015 report: "outputs were weighted: x1 for known models, x2 for scrambled ones and x3 for
/// surprise ones" (no normalisation).
#[test]
fn e4_4_2015_known_x1_scrambled_x2_surprise_x3() {
    let mut c = TestContest::new();
    for i in ["Kn-PT-1", "Kn-PT-2", "Sc-PT-1", "Su-PT-1"] {
        instance(&c, i, &[]);
    }
    model(&mut c, "Kn", "known", &["Kn-PT-1", "Kn-PT-2"]);
    model(&mut c, "Sc", "scrambled", &["Sc-PT-1"]);
    model(&mut c, "Su", "surprise", &["Su-PT-1"]);
    for t in ["a", "b", "c", "t"] {
        tool(&mut c, t, &["ReachabilityDeadlock"], "");
    }
    let yes = global("ReachabilityDeadlock", "TRUE");
    for i in ["Kn-PT-1", "Kn-PT-2", "Sc-PT-1", "Su-PT-1"] {
        for t in ["a", "b", "c"] {
            c.answer(t, i, "ReachabilityDeadlock", &yes);
        }
    }
    c.answer("t", "Sc-PT-1", "ReachabilityDeadlock", &yes);
    c.answer("t", "Su-PT-1", "ReachabilityDeadlock", &yes);
    write_manifest(&c, "2015", LIMITS);
    let s = run_and_score(&c);
    // a: 16 x 1 + 16 x 1 (known) + 16 x 2 (scrambled) + 16 x 3 (surprise) = 112.
    assert_score(&s, "Reachability", "a", 112.0);
    // t: 32 + 48 = 80.
    assert_score(&s, "Reachability", "t", 80.0);
}

// ---------------------------------------------------------------------------------------------
// E-4.6: podiums.

/// Only the best variant of a family is ranked; reference tools are shown but never ranked nor
/// medalled (T-2); medals go to ranks 1-3 whatever the score; equal scores share a rank.
#[test]
fn e4_6_podium_best_variant_reference_tools_ties_and_medals() {
    let mut c = TestContest::new();
    let inst = "Pod-PT-1";
    solo(&mut c, inst, &[("UpperBounds", 16)]);
    let exams = ["UpperBounds", "ReachabilityDeadlock"];
    for t in ["r1", "r2", "r3"] {
        tool(&mut c, t, &exams, "kind = \"reference\"");
    }
    tool(&mut c, "a1", &exams, "family = \"a\"");
    tool(&mut c, "a2", &exams, "family = \"a\"");
    for t in ["b", "c", "d", "z"] {
        tool(&mut c, t, &exams, "");
    }
    // UpperBounds: the reference tools give all 16 bounds (bound i for formula i); the competing
    // tools give the first n of them: a1 12, a2 14, b 14, c 10, d 8; z says CANNOT_COMPUTE.
    let first = |n: usize| formulas(inst, "UpperBounds", (0..n).map(|i| (i, i)));
    for (t, n) in [
        ("r1", 16),
        ("r2", 16),
        ("r3", 16),
        ("a1", 12),
        ("a2", 14),
        ("b", 14),
        ("c", 10),
        ("d", 8),
    ] {
        c.answer(t, inst, "UpperBounds", &first(n));
    }
    c.answer("z", inst, "UpperBounds", "CANNOT_COMPUTE\n");
    // ReachabilityDeadlock: the reference tools and a1 say TRUE, a2 and b FALSE, c
    // CANNOT_COMPUTE.
    for t in ["r1", "r2", "r3", "a1"] {
        c.answer(
            t,
            inst,
            "ReachabilityDeadlock",
            &global("ReachabilityDeadlock", "TRUE"),
        );
    }
    c.answer(
        "a2",
        inst,
        "ReachabilityDeadlock",
        &global("ReachabilityDeadlock", "FALSE"),
    );
    c.answer(
        "b",
        inst,
        "ReachabilityDeadlock",
        &global("ReachabilityDeadlock", "FALSE"),
    );
    c.answer("c", inst, "ReachabilityDeadlock", "CANNOT_COMPUTE\n");
    write_manifest(&c, "2026", LIMITS);
    let s = run_and_score(&c);
    // E-4.5: six podiums.
    assert_eq!(
        keys(&s["podiums"]),
        vec![
            "CTL",
            "GlobalProperties",
            "LTL",
            "Reachability",
            "StateSpace",
            "UpperBounds"
        ]
    );
    // UpperBounds: every formula is trusted by the reference tools (E-3.1 holds for every tool,
    // reference or not). ScoreValue 1: r1..r3 16; a1 12; a2 14; b 14; c 10; d 8; z 0.
    for (t, v) in [
        ("r1", 16.0),
        ("a1", 12.0),
        ("a2", 14.0),
        ("b", 14.0),
        ("c", 10.0),
        ("d", 8.0),
        ("z", 0.0),
    ] {
        assert_score(&s, "UpperBounds", t, v);
    }
    // Ranked: a2 (best of family a) and b tie at 14 -> both rank 1, gold; c rank 3, bronze;
    // d rank 4, z rank 5: no medal. a1 (second variant) and r1..r3 (reference) are shown,
    // unranked.
    assert_eq!(
        standings(&s, "UpperBounds"),
        vec![
            row("r1", None, None),
            row("r2", None, None),
            row("r3", None, None),
            row("a2", Some(1), Some("gold")),
            row("b", Some(1), Some("gold")),
            row("a1", None, None),
            row("c", Some(3), Some("bronze")),
            row("d", Some(4), None),
            row("z", Some(5), None),
        ]
    );
    assert_eq!(standing(&s, "UpperBounds", "r1")["competing"], false);
    assert_eq!(standing(&s, "UpperBounds", "a1")["best_of_family"], false);
    assert_eq!(standing(&s, "UpperBounds", "a2")["best_of_family"], true);
    assert_eq!(podium(&s, "UpperBounds"), vec!["a2", "b", "c", "d", "z"]);
    // E-4.3/E-4.5: no ranked tool computed all 16 trusted values (only the reference tools
    // did): no award.
    assert_eq!(
        s["awards"]["UpperBounds"],
        serde_json::json!({"fastest": null, "least_memory": null})
    );
    // GlobalProperties: RD trusted TRUE (r1..r3 and a1: 4 of 6 agree). ScoreValue 16,
    // PenaltyValue 32: r1..r3 and a1 16, c 0 (not computed), a2 and b -32.
    // Here a1 is family a's best variant ("the best variant for the current category"): rank 1,
    // gold; c rank 2 (0 points) silver and b rank 3 (-32) bronze: the text sets no minimum
    // score for a medal (docs/rules.md); a2 is shown, unranked.
    assert_score(&s, "GlobalProperties", "a1", 16.0);
    assert_score(&s, "GlobalProperties", "a2", -32.0);
    assert_score(&s, "GlobalProperties", "b", -32.0);
    assert_eq!(
        standings(&s, "GlobalProperties"),
        vec![
            row("a1", Some(1), Some("gold")),
            row("r1", None, None),
            row("r2", None, None),
            row("r3", None, None),
            row("c", Some(2), Some("silver")),
            row("a2", None, None),
            row("b", Some(3), Some("bronze")),
        ]
    );
    assert_eq!(podium(&s, "GlobalProperties"), vec!["a1", "c", "b"]);
}

// ---------------------------------------------------------------------------------------------
// 2023 StateSpace (E-1.2).

/// 2023 E-1.2: tools "must provide the number of states"; the other three values are
/// "additional information": only STATES is scored, 16 points on one value.
fn state_space_2023_contest() -> TestContest {
    let mut c = TestContest::new();
    let inst = "States-PT-1";
    solo(&mut c, inst, &[]);
    for t in ["a", "b", "c", "e"] {
        tool(&mut c, t, &["StateSpace", "ReachabilityDeadlock"], "");
    }
    for t in ["a", "b", "c"] {
        c.answer(t, inst, "StateSpace", &state_space(SS_FULL));
    }
    // e: STATES right, TRANSITIONS wrong (21), the two others right; e alone answers
    // ReachabilityDeadlock.
    c.answer(
        "e",
        inst,
        "StateSpace",
        &state_space(&[
            ("STATES", "10"),
            ("TRANSITIONS", "21"),
            ("MAX_TOKEN_IN_PLACE", "1"),
            ("MAX_TOKEN_PER_MARKING", "3"),
        ]),
    );
    c.answer(
        "e",
        inst,
        "ReachabilityDeadlock",
        &global("ReachabilityDeadlock", "TRUE"),
    );
    write_manifest(&c, "2023", LIMITS);
    c
}

#[test]
fn e1_2_2023_state_space_scores_states_only() {
    let c = state_space_2023_contest();
    let s = run_and_score(&c);
    assert_eq!(s["edition"], "MCC 2023");
    // One scored value: ScoreValue 16/1 = 16. a: STATES right -> 16. e: STATES right -> 16
    // (its wrong TRANSITIONS is not scored: no penalty).
    assert_score(&s, "StateSpace", "a", 16.0);
    assert_score(&s, "StateSpace", "e", 16.0);
    // a, b, c and e all say 10 states: unanimity.
    assert_trusted(
        &s,
        "States-PT-1",
        "StateSpace",
        "STATES",
        Some("10"),
        "unanimity",
    );
    // TRANSITIONS etc. are read (kept in the record) but not scored.
    let record = c.record("e", "States-PT-1", "StateSpace");
    assert_eq!(
        record["answers"].as_array().map(Vec::len),
        Some(4),
        "{}",
        record["answers"]
    );

    // 2026 on the same runs: 4 values, ScoreValue 4, PenaltyValue 8.
    // a: 16. e: 3 x 4 - 8 = 4.
    switch_edition(&c, "2026");
    let s = scores(&c);
    assert_score(&s, "StateSpace", "a", 16.0);
    assert_score(&s, "StateSpace", "e", 4.0);
}

/// E-2.2 is the same text in 2023 and 2026: "From the full list of values provided by tools
/// ... Typically, the state space examination requires tools to compute 4 values that are to be
/// considered separately when evaluating the tools Confidence." The three values 2023 does not
/// score are still values provided by the tools: they count for Confidence.
#[test]
fn e2_2_2023_unscored_state_space_values_count_for_confidence() {
    let c = state_space_2023_contest();
    let s = run_and_score(&c);
    let rd = value_row(
        &s,
        "States-PT-1",
        "ReachabilityDeadlock",
        "ReachabilityDeadlock",
    );
    // Every discrepancy is reported at once.
    let mut wrong = Vec::new();
    // V = STATES, TRANSITIONS, MAX_TOKEN_IN_PLACE, MAX_TOKEN_PER_MARKING (a, b, c agree: 3 of 4).
    // e: right on 3, wrong on TRANSITIONS -> C_e = 3/4 = 0.75.
    if (confidence(&s, "e") - 0.75).abs() > TOL {
        wrong.push(format!(
            "Confidence of e: mccbuild gives {}, the rules give 3/4 = 0.75",
            confidence(&s, "e")
        ));
    }
    // Consequence (E-3.1, 2023 single tool): e alone on ReachabilityDeadlock with
    // C_e = 0.75 < 0.993 -> unknown ...
    if !rd["trusted"].is_null() {
        wrong.push(format!(
            "ReachabilityDeadlock (e alone): mccbuild trusts {} ({}), the rules: unknown",
            rd["trusted"], rd["case"]
        ));
    }
    // ... and e scores 0 in GlobalProperties.
    if score(&s, "GlobalProperties", "e").abs() > TOL {
        wrong.push(format!(
            "GlobalProperties score of e: mccbuild gives {}, the rules give 0",
            score(&s, "GlobalProperties", "e")
        ));
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// E-4.3 in the 2023 text: "Each time a tool computes all trusted results for a given
/// examination (i.e. the 4 values for StateSpace, the 5 values for GlobalProperties, or the 16
/// values for other formula examinations), computation time and memory consumption are
/// measured." A 2023 tool that gives the number of states only is scored in full (16 points,
/// E-1.2) but has not computed the 4 values: its time and memory do not count for the awards.
#[test]
fn e4_3_2023_state_space_awards_need_the_4_values() {
    let mut c = TestContest::new();
    let inst = "Four-PT-1";
    solo(&mut c, inst, &[]);
    for t in ["a", "b", "c", "t"] {
        burner(&mut c, t, &["StateSpace"], "");
    }
    // a, b, c give the 4 values: a burns 1 unit and holds 20 MB, b and c 5 units and 100 MB.
    // t gives STATES only, burning nothing.
    for (t, units, mb) in [("a", 1, "20"), ("b", 5, "100"), ("c", 5, "100")] {
        c.answer(t, inst, "StateSpace", &state_space(SS_FULL));
        put(
            &c,
            t,
            "burn",
            inst,
            "StateSpace",
            &(units * UNIT).to_string(),
        );
        put(&c, t, "mem", inst, "StateSpace", mb);
    }
    c.answer("t", inst, "StateSpace", &state_space(&[("STATES", "10")]));
    write_manifest(&c, "2026", LIMITS);
    let s = run_and_score(&c);
    // 2026: 4 scored values; t computed 1 of the 4 trusted values (ScoreValue 4): 4 points,
    // incomplete -> no time nor memory. Awards among a, b, c: fastest a (1 unit against 5),
    // least memory a (20 MB against 100).
    assert_score(&s, "StateSpace", "t", 4.0);
    assert_eq!(
        s["awards"]["StateSpace"],
        serde_json::json!({"fastest": "a", "least_memory": "a"}),
        "{}\n{}",
        s["awards"],
        perf_table(&c)
    );

    switch_edition(&c, "2023");
    let s = scores(&c);
    // 2023: STATES is the only scored value: everyone has 16 points (rank 1, gold).
    assert_score(&s, "StateSpace", "t", 16.0);
    assert_score(&s, "StateSpace", "a", 16.0);
    // E-4.3 (2023): t did not compute "the 4 values for StateSpace" (a, b, c agree on all 4:
    // they are trusted, E-3.1), so its run is not measured -> awards among a, b, c: fastest a,
    // least memory a.
    assert_eq!(
        s["awards"]["StateSpace"],
        serde_json::json!({"fastest": "a", "least_memory": "a"}),
        "{}\n{}",
        s["awards"],
        perf_table(&c)
    );
}

// ---------------------------------------------------------------------------------------------
// Switching editions.

/// Changing only the `rules` line reuses every run (the run key does not depend on scoring
/// rules) and gives that edition's results; switching back gives the first results again. The
/// manifest sets no [limits]: the editions' own limits (E-5.7: 3600 s, 1800 s for
/// GlobalProperties) are the same in 2026 and 2023.
#[test]
fn edition_switch_reuses_runs_and_rescores() {
    let mut c = state_space_2023_contest();
    // Add an UpperBounds instance too, and write the manifest without [limits] overrides.
    let inst = "Bounds-PT-1";
    solo(&mut c, inst, &[("UpperBounds", 16)]);
    c.tools.clear();
    for t in ["a", "b", "c", "e"] {
        tool(
            &mut c,
            t,
            &["StateSpace", "ReachabilityDeadlock", "UpperBounds"],
            "",
        );
        c.answer(
            t,
            inst,
            "UpperBounds",
            &formulas(inst, "UpperBounds", (0..16).map(|i| (i, i))),
        );
    }
    write_manifest(&c, "2026", "");
    let s2026 = run_and_score(&c);
    assert_eq!(s2026["edition"], "MCC 2026");
    let total = plan(&c)["runs"].as_u64().unwrap();
    // 4 tools x (2 instances x (StateSpace + ReachabilityDeadlock) + 1 UpperBounds) = 20 runs.
    assert_eq!(total, 20);

    set_edition(&c, "2023");
    let p = plan(&c);
    assert_eq!(p["to_run"], 0, "{p}");
    assert_eq!(p["cached"].as_u64(), Some(total), "{p}");
    let run = c.mccbuild(&["run", "--json"]);
    assert_eq!(
        json(&run),
        serde_json::json!({"executed": 0, "cached": total, "failed": 0})
    );
    let s2023 = scores(&c);
    assert_eq!(s2023["edition"], "MCC 2023");
    // StateSpace e: 2026 3 x 4 - 8 = 4; 2023 STATES only: 16.
    assert_score(&s2026, "StateSpace", "e", 4.0);
    assert_score(&s2023, "StateSpace", "e", 16.0);
    // UpperBounds is scored alike in both: 16 x 1 = 16 for everyone.
    assert_score(&s2023, "UpperBounds", "e", 16.0);

    set_edition(&c, "2026");
    assert_eq!(plan(&c)["to_run"], 0);
    let again = scores(&c);
    assert_eq!(again["scores"], s2026["scores"]);
    assert_eq!(again["confidence"], s2026["confidence"]);
}

// ---------------------------------------------------------------------------------------------
// Exact arithmetic: two cases where floats would decide wrongly, and ties at every level.

/// The `scores_exact` fraction of a tool in a category.
#[track_caller]
fn exact_score(s: &Json, category: &str, tool: &str) -> String {
    s["scores_exact"][category][tool]
        .as_str()
        .unwrap_or_else(|| {
            panic!(
                "no exact score for {tool} in {category}: {}",
                s["scores_exact"]
            )
        })
        .to_string()
}

/// Ties decided by fractions, not floats: at the examination level (two tools' points on one
/// examination instance), the category level (two totals of 32 made differently) and on the
/// podium (shared rank and medal, the next rank skipped). In floats the first total is
/// 31.999999999999996 and the two tools were ranked gold and silver, both printed 32.00.
#[test]
fn exact_ties_at_examination_category_and_podium() {
    let mut c = TestContest::new();
    // Big: 6 instances, the largest model (N = 6): it weighs 1 + (2 - 1)(6 - 1)/(6 - 1) = 2,
    // 2/6 = 1/3 per instance. Solo1, Solo2: one instance each, weight 1.
    let big: Vec<String> = (1..=6).map(|i| format!("Big-PT-{i}")).collect();
    let big: Vec<&str> = big.iter().map(String::as_str).collect();
    for i in &big {
        instance(&c, i, &[]);
    }
    model(&mut c, "Big", "known", &big);
    solo(&mut c, "Solo1-PT-1", &[]);
    solo(&mut c, "Solo2-PT-1", &[]);
    solo(&mut c, "Solo3-PT-1", &[]);
    // Upper: one instance (weight 1) with 6 bounds: ScoreValue 16/6 = 8/3, PenaltyValue 16/3.
    solo(&mut c, "Upper-PT-1", &[("UpperBounds", 6)]);
    let exams = ["ReachabilityDeadlock", "UpperBounds"];
    for t in ["r1", "r2"] {
        tool(&mut c, t, &exams, "kind = \"reference\"");
    }
    for t in ["a", "b", "c"] {
        tool(&mut c, t, &exams, "");
    }
    let yes = global("ReachabilityDeadlock", "TRUE");
    for i in big
        .iter()
        .chain(&["Solo1-PT-1", "Solo2-PT-1", "Solo3-PT-1"])
    {
        for t in ["r1", "r2"] {
            c.answer(t, i, "ReachabilityDeadlock", &yes);
        }
    }
    // a: the 6 Big instances; b: Solo1 and Solo2; c: Solo3 only.
    for i in &big {
        c.answer("a", i, "ReachabilityDeadlock", &yes);
    }
    c.answer("b", "Solo1-PT-1", "ReachabilityDeadlock", &yes);
    c.answer("b", "Solo2-PT-1", "ReachabilityDeadlock", &yes);
    c.answer("c", "Solo3-PT-1", "ReachabilityDeadlock", &yes);
    // UpperBounds: the reference tools give bound i for formula i (all trusted). a gives 3 right
    // bounds; b 5 right and one wrong (formula 5: 99); c 2 right.
    let upper = "Upper-PT-1";
    for t in ["r1", "r2"] {
        c.answer(
            t,
            upper,
            "UpperBounds",
            &formulas(upper, "UpperBounds", (0..6).map(|i| (i, i))),
        );
    }
    c.answer(
        "a",
        upper,
        "UpperBounds",
        &formulas(upper, "UpperBounds", (0..3).map(|i| (i, i))),
    );
    let b_bounds = (0..5).map(|i| (i, i)).chain([(5, 99)]);
    c.answer(
        "b",
        upper,
        "UpperBounds",
        &formulas(upper, "UpperBounds", b_bounds),
    );
    c.answer(
        "c",
        upper,
        "UpperBounds",
        &formulas(upper, "UpperBounds", (0..2).map(|i| (i, i))),
    );
    write_manifest(&c, "2026", LIMITS);
    let s = run_and_score(&c);

    // Category: a = 6 x 16 x 1/3 = 32; b = 16 x 1 + 16 x 1 = 32; c = 16.
    assert_eq!(exact_score(&s, "GlobalProperties", "a"), "32");
    assert_eq!(exact_score(&s, "GlobalProperties", "b"), "32");
    assert_eq!(exact_score(&s, "GlobalProperties", "c"), "16");
    assert_eq!(standing(&s, "GlobalProperties", "a")["score_exact"], "32");
    // Podium: a and b share rank 1 and gold (by name within the tie); c is third, bronze.
    assert_eq!(
        standings(&s, "GlobalProperties")
            .into_iter()
            .filter(|r| r.1.is_some())
            .collect::<Vec<_>>(),
        vec![
            row("a", Some(1), Some("gold")),
            row("b", Some(1), Some("gold")),
            row("c", Some(3), Some("bronze")),
        ]
    );

    // Examination: a = 3 x 8/3 = 8; b = 5 x 8/3 - 1 x 16/3 = 40/3 - 16/3 = 24/3 = 8 (floats:
    // 7.999999999999999); c = 2 x 8/3 = 16/3. The instance weighs 1, so the category totals
    // are the same numbers, and a and b share gold again.
    let export = json(&c.mccbuild(&["export", "--json", "-"]));
    let points = |tool: &str| {
        export["runs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| {
                r["tool"] == tool && r["instance"] == upper && r["examination"] == "UpperBounds"
            })
            .unwrap_or_else(|| panic!("no run of {tool}"))["points_exact"]
            .clone()
    };
    assert_eq!(points("a"), "8");
    assert_eq!(points("b"), "8");
    assert_eq!(points("c"), "16/3");
    assert_eq!(exact_score(&s, "UpperBounds", "a"), "8");
    assert_eq!(exact_score(&s, "UpperBounds", "b"), "8");
    assert_eq!(exact_score(&s, "UpperBounds", "c"), "16/3");
    assert_eq!(
        standings(&s, "UpperBounds")
            .into_iter()
            .filter(|r| r.1.is_some())
            .collect::<Vec<_>>(),
        vec![
            row("a", Some(1), Some("gold")),
            row("b", Some(1), Some("gold")),
            row("c", Some(3), Some("bronze")),
        ]
    );
    // The terminal shows both as 32.00, each with its gold medal.
    let table = stdout(&c.mccbuild(&["scores"]));
    let golds = table
        .lines()
        .filter(|l| l.contains("gold") && l.trim_end().ends_with("32.00"))
        .count();
    assert_eq!(golds, 2, "{table}");
}

/// A contested value whose two sides weigh exactly the same: Confidences 1/6 and 1 say TRUE,
/// 1/2 and 2/3 say FALSE; 1/6 + 1 = 7/6 = 1/2 + 2/3, so neither side weighs more than half of
/// 14/6 (E-3.1, weighted majority): unknown, and nobody scores on it. In floats 1/6 + 1 =
/// 1.1666666666666667 beat 1/2 + 2/3 = 1.1666666666666665: TRUE was trusted, p and q earned 16,
/// r and s lost 32.
#[test]
fn exact_contested_value_with_equal_weights_is_unknown() {
    let mut c = TestContest::new();
    // Calibration: 6 bounds, the three helpers h1..h3 give bound i for formula i (each value of
    // the set V of E-2.2: at least 3 agree, a strict majority).
    let cal = "Cal-PT-1";
    solo(&mut c, cal, &[("UpperBounds", 6)]);
    solo(&mut c, "Vote-PT-1", &[]);
    let exams = ["UpperBounds", "ReachabilityDeadlock"];
    for t in ["h1", "h2", "h3"] {
        tool(&mut c, t, &exams, "kind = \"reference\"");
        c.answer(
            t,
            cal,
            "UpperBounds",
            &formulas(cal, "UpperBounds", (0..6).map(|i| (i, i))),
        );
    }
    for t in ["p", "q", "r", "s"] {
        tool(&mut c, t, &exams, "");
    }
    // Confidence = right / answered values of V:
    //   p: formulas 0..6, right on 0 only          -> 1/6
    //   q: formula 0, right                         -> 1/1 = 1
    //   r: formulas 0, 1; right on 0                -> 1/2
    //   s: formulas 0, 1, 2; right on 0 and 1       -> 2/3
    let answers = |right: usize, wrong: usize| {
        formulas(
            cal,
            "UpperBounds",
            (0..right)
                .map(|i| (i, i))
                .chain((right..right + wrong).map(|i| (i, i + 100))),
        )
    };
    c.answer("p", cal, "UpperBounds", &answers(1, 5));
    c.answer("q", cal, "UpperBounds", &answers(1, 0));
    c.answer("r", cal, "UpperBounds", &answers(1, 1));
    c.answer("s", cal, "UpperBounds", &answers(2, 1));
    // The contested value: p and q TRUE, r and s FALSE (2 against 2: not in V).
    for (t, v) in [("p", "TRUE"), ("q", "TRUE"), ("r", "FALSE"), ("s", "FALSE")] {
        c.answer(
            t,
            "Vote-PT-1",
            "ReachabilityDeadlock",
            &global("ReachabilityDeadlock", v),
        );
    }
    write_manifest(&c, "2026", LIMITS);
    let s = run_and_score(&c);
    for (t, expected) in [("p", "1/6"), ("q", "1"), ("r", "1/2"), ("s", "2/3")] {
        assert_eq!(s["confidence_exact"][t], expected, "Confidence of {t}");
    }
    // 7/6 against 7/6: no weighted majority, unknown.
    assert_trusted(
        &s,
        "Vote-PT-1",
        "ReachabilityDeadlock",
        "ReachabilityDeadlock",
        None,
        "weighted-majority",
    );
    for t in ["p", "q", "r", "s"] {
        assert_eq!(exact_score(&s, "GlobalProperties", t), "0", "{t}");
    }
    // explain shows the two equal weights as fractions.
    let out = c.mccbuild(&[
        "explain",
        "--instance",
        "Vote-PT-1",
        "--examination",
        "ReachabilityDeadlock",
        "--id",
        "ReachabilityDeadlock",
        "--json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let x = json(&out);
    let weights: Vec<&str> = x["weights"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["weight_exact"].as_str().unwrap())
        .collect();
    assert_eq!(weights, vec!["7/6", "7/6"]);
}

// ---------------------------------------------------------------------------------------------
// E-2.2, E-3.1: who votes, every `[[tool]]` entry or one vote per family (`[confidence] votes`).

/// Points the manifest's `rules` line at a copy of the 2026 rules whose `[confidence] votes`
/// is `votes`.
fn set_votes(c: &TestContest, votes: &str) {
    let text = fs::read_to_string(rules_file("2026")).unwrap();
    let line = "denominator = \"answered\"";
    assert!(text.contains(line), "rules/mcc-2026.toml has no `{line}`");
    let text = text.replace("votes = \"family\"", "");
    let text = text.replacen(line, &format!("{line}\nvotes = \"{votes}\""), 1);
    let path = c.path().join(format!("rules-{votes}.toml"));
    fs::write(&path, text).unwrap();
    let manifest = c.path().join("contest.toml");
    let m = fs::read_to_string(&manifest).unwrap();
    let m: Vec<String> = m
        .lines()
        .map(|l| {
            if l.starts_with("rules = ") {
                format!("rules = \"{}\"", path.display())
            } else {
                l.to_string()
            }
        })
        .collect();
    fs::write(&manifest, m.join("\n") + "\n").unwrap();
}

/// E-2.2 ("a majority of tools agree on the same value, and at least 3 tools agree") and E-3.1
/// ("each tool is weighted by its Confidence"), with three variants of one tool (family `a`: a1,
/// a2, a3) beside b and c. With `votes = "tool"` every entry votes, so the family puts a value
/// into V by itself and outweighs b and c; with `votes = "family"` it votes once, with its first
/// entry's (a1's) answer and Confidence. Both readings score the same runs (none reruns).
#[test]
fn e2_2_e3_1_every_tool_or_one_vote_per_family() {
    let mut c = TestContest::new();
    let inst = "Fam-PT-1";
    solo(&mut c, inst, &[]);
    let exams = [
        "ReachabilityDeadlock",
        "StableMarking",
        "QuasiLiveness",
        "OneSafe",
    ];
    // (CC = CANNOT_COMPUTE)   RD  SM  QL  OS
    //   a1 (family a)          T   T   T   T
    //   a2 (family a)          T   T   T   T
    //   a3 (family a)          T   T   T   CC
    //   b                      T   T   F   F
    //   c                      T   T   F   CC
    let answers = [
        ("a1", "family = \"a\"", ["TRUE", "TRUE", "TRUE", "TRUE"]),
        ("a2", "family = \"a\"", ["TRUE", "TRUE", "TRUE", "TRUE"]),
        (
            "a3",
            "family = \"a\"",
            ["TRUE", "TRUE", "TRUE", "CANNOT_COMPUTE"],
        ),
        ("b", "", ["TRUE", "TRUE", "FALSE", "FALSE"]),
        ("c", "", ["TRUE", "TRUE", "FALSE", "CANNOT_COMPUTE"]),
    ];
    for (t, extra, values) in answers {
        tool(&mut c, t, &exams, extra);
        for (exam, v) in exams.iter().zip(values) {
            c.answer(t, inst, exam, &global(exam, v));
        }
    }
    write_manifest(&c, "2026", LIMITS);
    set_votes(&c, "tool");
    let tool_votes = run_and_score(&c);
    // votes = "tool": five voters.
    // E-2.2: RD, SM: 5 of 5 agree -> in V (T). QL: T 3 of 5 > 5/2 and 3 >= 3 -> in V (T).
    //   OS: T 2 of 3, but 2 < 3 tools -> not in V. |V| = 3.
    //   a1, a2, a3: 3/3 = 1; b, c: RD, SM right, QL wrong -> 2/3.
    for (t, expected) in [
        ("a1", "1"),
        ("a2", "1"),
        ("a3", "1"),
        ("b", "2/3"),
        ("c", "2/3"),
    ] {
        assert_eq!(
            tool_votes["confidence_exact"][t], expected,
            "Confidence of {t}"
        );
    }
    // E-3.1 QL: T weighs 1 + 1 + 1 = 3, F weighs 2/3 + 2/3 = 4/3; total 13/3, half 13/6;
    //   3 > 13/6 -> T (weighted majority).
    let id = |e: &str| e.to_string();
    assert_trusted(
        &tool_votes,
        inst,
        "QuasiLiveness",
        &id("QuasiLiveness"),
        Some("TRUE"),
        "weighted-majority",
    );
    // E-3.1 OS: three answers: T weighs 1 + 1 = 2, F weighs 2/3; total 8/3, half 4/3; 2 > 4/3
    //   -> T (weighted majority).
    assert_trusted(
        &tool_votes,
        inst,
        "OneSafe",
        &id("OneSafe"),
        Some("TRUE"),
        "weighted-majority",
    );

    set_votes(&c, "family");
    assert_eq!(plan(&c)["to_run"], 0, "the reading reruns nothing");
    let family_votes = scores(&c);
    // votes = "family": three voters, a (a1's answer and Confidence), b, c.
    // E-2.2: RD, SM: a, b, c agree (3 of 3) -> in V. QL: a T, b F, c F: F 2 of 3 is a majority
    //   but 2 < 3 -> not in V. OS: a T, b F -> not in V. |V| = 2.
    //   Every tool, a2 and a3 too (each counts its own answers against V): 2/2 = 1.
    for t in ["a1", "a2", "a3", "b", "c"] {
        assert_eq!(
            family_votes["confidence_exact"][t], "1",
            "Confidence of {t}"
        );
    }
    // E-3.1 QL: three votes: T weighs C_a1 = 1, F weighs C_b + C_c = 2; total 3, half 3/2;
    //   2 > 3/2 -> F (weighted majority).
    assert_trusted(
        &family_votes,
        inst,
        "QuasiLiveness",
        &id("QuasiLiveness"),
        Some("FALSE"),
        "weighted-majority",
    );
    // E-3.1 OS: two votes, a1 (T) and b (F), with different values: the third situation;
    //   C_a1 = C_b = 1 -> unknown.
    assert_trusted(
        &family_votes,
        inst,
        "OneSafe",
        &id("OneSafe"),
        None,
        "two-tools",
    );
    // explain weighs the votes: T 1 (one voter, a1), F 2 (b and c).
    let out = c.mccbuild(&[
        "explain",
        "--instance",
        inst,
        "--examination",
        "QuasiLiveness",
        "--id",
        "QuasiLiveness",
        "--json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let x = json(&out);
    let weights: Vec<(&str, &str, u64)> = x["weights"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            (
                w["value"].as_str().unwrap(),
                w["weight_exact"].as_str().unwrap(),
                w["tools"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(weights, vec![("TRUE", "1", 1), ("FALSE", "2", 2)]);
}

// ---------------------------------------------------------------------------------------------
// E-6.3: values decided by the organisers.

/// Adds `corrections = "corrections.csv"` to the manifest's [contest] and writes that file.
fn set_corrections(c: &TestContest, csv: &str) {
    let path = c.path().join("contest.toml");
    let text = fs::read_to_string(&path).unwrap();
    if !text.contains("corrections = ") {
        let text = text.replacen(
            "[contest]\n",
            "[contest]\ncorrections = \"corrections.csv\"\n",
            1,
        );
        fs::write(&path, text).unwrap();
    }
    fs::write(c.path().join("corrections.csv"), csv).unwrap();
}

/// E-6.3: "the MCC organizers are competent to solve the problems they might encounter". A
/// value of the corrections file is the trusted value whatever the vote says, including where
/// no tool gave it (wrong answers there are penalised, as the MCC 2024 did on BlocksWorld's
/// OneSafe values); E-2.2's Confidences stay the tools' agreement; the file is in no run key
/// (re-scores, reruns nothing); a line naming no value of the contest is an error with its line.
#[test]
fn e6_3_organisers_decisions_override_the_vote_and_rescore_without_rerunning() {
    let mut c = TestContest::new();
    let inst = "Dec-PT-1";
    solo(&mut c, inst, &[]);
    let exams = ["ReachabilityDeadlock", "QuasiLiveness", "OneSafe"];
    for t in ["a", "b", "c", "d"] {
        tool(&mut c, t, &exams, "");
        c.answer(t, inst, "QuasiLiveness", &global("QuasiLiveness", "TRUE"));
        let rd = if t == "d" { "FALSE" } else { "TRUE" };
        c.answer(
            t,
            inst,
            "ReachabilityDeadlock",
            &global("ReachabilityDeadlock", rd),
        );
    }
    // OneSafe: a and b say TRUE, c and d do not answer (CANNOT_COMPUTE).
    for t in ["a", "b"] {
        c.answer(t, inst, "OneSafe", &global("OneSafe", "TRUE"));
    }
    for t in ["c", "d"] {
        c.answer(t, inst, "OneSafe", &global("OneSafe", "CANNOT_COMPUTE"));
    }
    write_manifest(&c, "2026", LIMITS);
    let voted = run_and_score(&c);
    // E-2.2: V = RD (a, b, c agree: 3 of 4) and QL (4 agree); OneSafe has 2 tools: not in V.
    // C_a = C_b = C_c = 2/2 = 1; d: right on QL, wrong on RD: 1/2.
    assert_eq!(voted["confidence_exact"]["d"], "1/2");
    // The vote: RD TRUE (weighted majority, 3 against 1/2), OneSafe TRUE (a and b agree).
    assert_trusted(
        &voted,
        inst,
        "ReachabilityDeadlock",
        "ReachabilityDeadlock",
        Some("TRUE"),
        "weighted-majority",
    );
    assert_trusted(
        &voted,
        inst,
        "OneSafe",
        "OneSafe",
        Some("TRUE"),
        "unanimity",
    );
    // GlobalProperties, one one-instance model (weight 1), ScoreValue 16, PenaltyValue 32:
    //   a, b: RD 16 + QL 16 + OneSafe 16 = 48;  c: 16 + 16 = 32;  d: RD -32 + QL 16 = -16.
    for (t, expected) in [("a", "48"), ("b", "48"), ("c", "32"), ("d", "-16")] {
        assert_eq!(exact_score(&voted, "GlobalProperties", t), expected, "{t}");
    }

    // The organisers decide RD FALSE (against the vote) and OneSafe FALSE (no tool gave it).
    set_corrections(
        &c,
        "# decided by the organisers\ninstance,examination,id,value,why\n\
         Dec-PT-1,ReachabilityDeadlock,ReachabilityDeadlock,FALSE,the vote is wrong\n\
         Dec-PT-1,OneSafe,OneSafe,FALSE,no tool is right\n",
    );
    // Not in any run key: nothing to run.
    assert_eq!(plan(&c)["to_run"], 0);
    let decided = scores(&c);
    assert_trusted(
        &decided,
        inst,
        "ReachabilityDeadlock",
        "ReachabilityDeadlock",
        Some("FALSE"),
        "organisers",
    );
    assert_trusted(
        &decided,
        inst,
        "OneSafe",
        "OneSafe",
        Some("FALSE"),
        "organisers",
    );
    assert_trusted(
        &decided,
        inst,
        "QuasiLiveness",
        "QuasiLiveness",
        Some("TRUE"),
        "unanimity",
    );
    // What the vote alone gives is kept beside the decision.
    let rd = value_row(
        &decided,
        inst,
        "ReachabilityDeadlock",
        "ReachabilityDeadlock",
    );
    assert_eq!(rd["undecided"]["trusted"], "TRUE");
    assert_eq!(rd["undecided"]["case"], "weighted-majority");
    // The Confidences are the tools' agreement, as before (d still 1/2).
    assert_eq!(decided["confidence_exact"], voted["confidence_exact"]);
    //   a, b: RD -32 + QL 16 + OneSafe -32 = -48;  c: RD -32 + QL 16 = -16;
    //   d: RD 16 + QL 16 = 32 (its OneSafe is not computed: 0).
    for (t, expected) in [("a", "-48"), ("b", "-48"), ("c", "-16"), ("d", "32")] {
        assert_eq!(
            exact_score(&decided, "GlobalProperties", t),
            expected,
            "{t}"
        );
    }
    assert_eq!(
        decided["podiums"]["GlobalProperties"],
        serde_json::json!(["d", "c", "a", "b"])
    );
    // E-4.6: d gold; c (-16) silver; a and b (-48) share rank 3, bronze: no minimum score.
    assert_eq!(
        standings(&decided, "GlobalProperties"),
        vec![
            row("d", Some(1), Some("gold")),
            row("c", Some(2), Some("silver")),
            row("a", Some(3), Some("bronze")),
            row("b", Some(3), Some("bronze")),
        ]
    );
    // explain says who decided, and what the vote alone gives.
    let out = c.mccbuild(&[
        "explain",
        "--instance",
        inst,
        "--examination",
        "ReachabilityDeadlock",
        "--id",
        "ReachabilityDeadlock",
        "--json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let reason = json(&out)["reason"].as_str().unwrap().to_string();
    assert!(
        reason.starts_with("decided by the organisers (E-6.3, ")
            && reason.contains("corrections.csv): FALSE; without it, E-3.1, second situation"),
        "{reason}"
    );

    // A line naming no value of the contest fails scoring, with its file, line and fix.
    set_corrections(
        &c,
        "instance,examination,id,value\nDec-PT-1,OneSafe,OneSafe,FALSE\nDec-PT-2,OneSafe,OneSafe,TRUE\nDec-PT-1,OneSafe,OneSafe-07,TRUE\nDec-PT-1,QuasiLiveness,QuasiLiveness,3\n",
    );
    let out = c.mccbuild(&["scores", "--json"]);
    assert!(!out.status.success());
    let err = stderr(&out);
    for expected in [
        "corrections.csv:3:1: Dec-PT-2 OneSafe OneSafe: no such instance in the contest",
        "corrections.csv:4:1: Dec-PT-1 OneSafe OneSafe-07: no value `OneSafe-07`",
        "corrections.csv:5:1: Dec-PT-1 QuasiLiveness QuasiLiveness: the value 3 is not of the examination's kind (boolean)",
        "help: a correction names a value of the contest",
    ] {
        assert!(err.contains(expected), "{expected}\nnot in:\n{err}");
    }
}
