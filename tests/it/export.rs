//! `mccbuild export`: the CSV (read by Python's csv module, and by `mccbuild import` into a
//! fresh contest that must score the same), the JSON, and the verdict files (validated with
//! lxml against the RELAX NG grammar transcribed in tests/schemas/propertiesverdict.rng).

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::*;

/// The documented columns (docs/exports.md), in order.
const COLUMNS: [&str; 17] = [
    "tool",
    "Input",
    "Examination",
    "nb cores",
    "time flag",
    "memory flag",
    "results",
    "techniques",
    "max memory (MB)",
    "CPU (ms)",
    "Time (ms)",
    "i/o wait (ms)",
    "Status",
    "run id",
    "flags:bonus:scores:mask",
    "estimated result",
    "# tools computing estimated results",
];

const BIG: &str = "123456789012345678901234567890";

fn upper_bounds(instance: &str, n: usize, value: impl Fn(usize) -> String, tech: &str) -> String {
    (0..n)
        .map(|k| {
            format!(
                "FORMULA {instance}-UpperBounds-{k:02} {} TECHNIQUES {tech}\n",
                value(k)
            )
        })
        .collect()
}

fn state_space(values: [&str; 4], tech: &str) -> String {
    [
        "STATES",
        "TRANSITIONS",
        "MAX_TOKEN_IN_PLACE",
        "MAX_TOKEN_PER_MARKING",
    ]
    .iter()
    .zip(values)
    .map(|(what, v)| format!("STATE_SPACE {what} {v} TECHNIQUES {tech}\n"))
    .collect()
}

/// Three scripted tools on two models (Philosophers: two instances; Unbounded: one), on
/// StateSpace, ReachabilityDeadlock and UpperBounds: 27 runs with agreement, a wrong value, a
/// value beyond 64 bits, `+inf`, DO_NOT_COMPETE, CANNOT_COMPUTE and a crash (c exits 3 on
/// ReachabilityDeadlock).
fn contest() -> TestContest {
    let mut c = TestContest::new();
    c.copy_demo_instance("Philosophers-PT-000002");
    c.copy_demo_instance("Philosophers-PT-000003");
    c.copy_demo_instance("Unbounded-PT-1");
    c.model("Philosophers", "known", &["models/Philosophers-PT-*"]);
    c.model("Unbounded", "known", &["models/Unbounded-PT-1"]);
    let exams = "examinations = [\"StateSpace\", \"ReachabilityDeadlock\", \"UpperBounds\"]";
    c.scripted_tool("a", exams);
    c.scripted_tool("b", exams);
    c.script_tool(
        "c",
        "#!/bin/sh\nif [ \"$BK_EXAMINATION\" = ReachabilityDeadlock ]; then exit 3; fi\nf=\"$(dirname \"$0\")/answers/$BK_INPUT/$BK_EXAMINATION\"\nif [ -f \"$f\" ]; then cat \"$f\"; else echo DO_NOT_COMPETE; fi\n",
        exams,
    );
    let (p2, p3, u) = (
        "Philosophers-PT-000002",
        "Philosophers-PT-000003",
        "Unbounded-PT-1",
    );
    for (tool, tech) in [
        ("a", "EXPLICIT"),
        ("b", "SEQUENTIAL_PROCESSING DECISION_DIAGRAMS"),
        ("c", "EXPLICIT"),
    ] {
        c.answer(
            tool,
            p2,
            "StateSpace",
            &state_space(["9", "14", "1", "4"], tech),
        );
        // c is wrong on the first bound.
        let first = if tool == "c" { "2" } else { "1" };
        c.answer(
            tool,
            p2,
            "UpperBounds",
            &upper_bounds(
                p2,
                16,
                |k| {
                    if k == 0 {
                        first.to_string()
                    } else {
                        "1".to_string()
                    }
                },
                tech,
            ),
        );
    }
    for tool in ["a", "b"] {
        c.answer(
            tool,
            p3,
            "StateSpace",
            &state_space([BIG, "42", "1", "3"], "EXPLICIT"),
        );
        c.answer(
            tool,
            u,
            "UpperBounds",
            &format!("FORMULA {u}-UpperBounds-00 +inf TECHNIQUES EXPLICIT\n"),
        );
    }
    c.answer("c", p3, "StateSpace", "CANNOT_COMPUTE\n");
    c.answer(
        "a",
        p2,
        "ReachabilityDeadlock",
        "FORMULA ReachabilityDeadlock FALSE TECHNIQUES EXPLICIT\n",
    );
    c.answer(
        "b",
        p2,
        "ReachabilityDeadlock",
        "FORMULA ReachabilityDeadlock FALSE TECHNIQUES EXPLICIT\n",
    );
    // Two tools disagree, with the same Confidence: no trusted value (E-3.1, third situation).
    c.answer(
        "a",
        p3,
        "ReachabilityDeadlock",
        "FORMULA ReachabilityDeadlock TRUE TECHNIQUES EXPLICIT\n",
    );
    c.answer(
        "b",
        p3,
        "ReachabilityDeadlock",
        "FORMULA ReachabilityDeadlock FALSE TECHNIQUES EXPLICIT\n",
    );
    c.write("time_s = 10\nmemory_mb = 512");
    let run = c.mccbuild(&["run", "--json"]);
    assert_eq!(
        json(&run),
        serde_json::json!({"executed": 27, "cached": 0, "failed": 0}),
        "{}",
        stderr(&run)
    );
    c
}

/// A Python interpreter that can import `module`: `python3` on the PATH, or Debian's own
/// (/usr/bin/python3, where `apt-get install python3-lxml` puts lxml).
fn python_with(module: &str) -> Option<String> {
    ["python3", "/usr/bin/python3"]
        .into_iter()
        .find_map(|python| {
            Command::new(python)
                .args(["-c", &format!("import {module}")])
                .output()
                .ok()
                .filter(|o| o.status.success())
                .map(|_| python.to_string())
        })
}

fn run_python(python: &str, script: &str, args: &[&Path]) -> std::process::Output {
    Command::new(python)
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
        .expect("python runs")
}

const READ_CSV: &str = r#"
import csv, json, sys
with open(sys.argv[1], newline="") as f:
    rows = list(csv.reader(f))
print(json.dumps({"header": rows[0], "rows": rows[1:]}))
"#;

/// Rows of a CSV, each as column -> field.
type Rows = Vec<BTreeMap<String, String>>;

/// Reads a CSV with Python's csv module: (header, rows).
fn python_csv(path: &Path) -> Option<(Vec<String>, Rows)> {
    let Some(python) = python_with("csv") else {
        skip("python3 is not installed (the CSV is read with its csv module)");
        return None;
    };
    let out = run_python(&python, READ_CSV, &[path]);
    assert!(out.status.success(), "{}", stderr(&out));
    let parsed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let header: Vec<String> = serde_json::from_value(parsed["header"].clone()).unwrap();
    let rows: Vec<Vec<String>> = serde_json::from_value(parsed["rows"].clone()).unwrap();
    let rows = rows
        .into_iter()
        .map(|r| {
            assert_eq!(r.len(), header.len(), "a row of {} fields: {r:?}", r.len());
            header.iter().cloned().zip(r).collect()
        })
        .collect();
    Some((header, rows))
}

fn row<'a>(
    rows: &'a [BTreeMap<String, String>],
    tool: &str,
    instance: &str,
    exam: &str,
) -> &'a BTreeMap<String, String> {
    rows.iter()
        .find(|r| r["tool"] == tool && r["Input"] == instance && r["Examination"] == exam)
        .unwrap_or_else(|| panic!("no row {tool} {instance} {exam}"))
}

fn export_csv(c: &TestContest, name: &str) -> PathBuf {
    let path = c.path().join(name);
    let out = c.mccbuild(&["export", "--csv", path.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    path
}

#[test]
fn csv_reads_in_python_with_exactly_the_documented_columns() {
    let c = contest();
    let path = export_csv(&c, "out.csv");
    let Some((header, rows)) = python_csv(&path) else {
        return;
    };
    assert_eq!(header, COLUMNS);
    // The documentation states the same header line.
    let docs = fs::read_to_string(Path::new(REPO).join("docs/exports.md")).unwrap();
    assert!(
        docs.contains(&COLUMNS.join(",")),
        "docs/exports.md does not list the columns"
    );
    assert_eq!(rows.len(), 27);
    let p2 = "Philosophers-PT-000002";
    let p3 = "Philosophers-PT-000003";

    let a = row(&rows, "a", p2, "StateSpace");
    assert_eq!(a["results"], "9 14 1 4");
    assert_eq!(a["techniques"], "EXPLICIT");
    assert_eq!(a["nb cores"], "1");
    assert_eq!(a["Status"], "normal");
    assert_eq!(a["time flag"], "0");
    assert_eq!(a["run id"].len(), 64);
    assert_eq!(a["flags:bonus:scores:mask"], "::16:TTTT");
    assert_eq!(a["estimated result"], "9 14 1 4");
    assert_eq!(a["# tools computing estimated results"], "3 3 3 3");
    assert_eq!(
        row(&rows, "b", p2, "StateSpace")["techniques"],
        "SEQUENTIAL_PROCESSING DECISION_DIAGRAMS"
    );

    // Beyond 64 bits, written in full; c could not compute.
    let big = row(&rows, "a", p3, "StateSpace");
    assert_eq!(big["results"], format!("{BIG} 42 1 3"));
    assert_eq!(big["estimated result"], format!("{BIG} 42 1 3"));
    assert_eq!(big["# tools computing estimated results"], "2 2 2 2");
    let cc = row(&rows, "c", p3, "StateSpace");
    assert_eq!(cc["results"], "CC");
    assert_eq!(cc["flags:bonus:scores:mask"], "::0:----");

    // c's crash: did not finish, no answer; its exit is the Status.
    let dnf = row(&rows, "c", p2, "ReachabilityDeadlock");
    assert_eq!(dnf["results"], "DNF");
    assert_eq!(dnf["Status"], "exit 3");
    assert_eq!(dnf["estimated result"], "F");
    assert_eq!(dnf["# tools computing estimated results"], "2");
    // Two tools disagree: no trusted value, answers not judged.
    let split = row(&rows, "a", p3, "ReachabilityDeadlock");
    assert_eq!(split["results"], "T");
    assert_eq!(split["flags:bonus:scores:mask"], "::0:?");
    assert_eq!(split["estimated result"], "?");
    assert_eq!(split["# tools computing estimated results"], "0");

    // c is wrong on the first bound: X; E-4.1: 15 right values earn 16/16 each, the wrong one
    // costs twice that: 13 points.
    let wrong = row(&rows, "c", p2, "UpperBounds");
    assert_eq!(wrong["results"], format!("2{}", " 1".repeat(15)));
    assert_eq!(
        wrong["flags:bonus:scores:mask"],
        format!("::13:X{}", "T".repeat(15))
    );
    assert_eq!(wrong["estimated result"], format!("1{}", " 1".repeat(15)));
    assert_eq!(
        wrong["# tools computing estimated results"],
        format!("2{}", " 3".repeat(15))
    );

    // Unbounded: +inf, the other bounds unanswered; c did not compete.
    let inf = row(&rows, "a", "Unbounded-PT-1", "UpperBounds");
    assert_eq!(inf["results"], format!("+inf{}", " ?".repeat(7)));
    assert!(inf["flags:bonus:scores:mask"].ends_with(&format!(":T{}", "-".repeat(7))));
    assert_eq!(inf["estimated result"], format!("+inf{}", " ?".repeat(7)));
    let dnc = row(&rows, "c", "Unbounded-PT-1", "UpperBounds");
    assert_eq!(dnc["results"], "DNC");
    assert_eq!(
        dnc["flags:bonus:scores:mask"],
        format!(":::{}", "-".repeat(8))
    );
}

#[test]
fn import_of_the_exported_csv_scores_the_same() {
    let c = contest();
    let exported = export_csv(&c, "results.csv");
    let original = json(&c.mccbuild(&["scores", "--json"]));

    // A fresh contest made of the exported file only.
    let fresh = TestContest::new();
    fs::copy(&exported, fresh.path().join("results.csv")).unwrap();
    fs::write(
        fresh.path().join("contest.toml"),
        format!("[contest]\nname = \"Test\"\nrules = \"{REPO}/rules/mcc-2026.toml\"\nresults = [\"results.csv\"]\n\n[[tool]]\nname = \"a\"\n"),
    )
    .unwrap();
    let import = fresh.mccbuild(&["import", "results.csv", "--json"]);
    assert_eq!(
        json(&import),
        serde_json::json!({"runs": 27, "imported": 27, "cached": 0}),
        "{}",
        stderr(&import)
    );
    let again = json(&fresh.mccbuild(&["scores", "--json"]));
    for field in [
        "contest",
        "edition",
        "confidence",
        "scores",
        "podiums",
        "standings",
    ] {
        assert_eq!(original[field], again[field], "{field}");
    }
    // Values: the same trusted values and answers, position by position (imported formula ids
    // are positions: results files do not name them).
    let by_position = |scores: &serde_json::Value| {
        let mut out: BTreeMap<(String, String), Vec<(serde_json::Value, serde_json::Value)>> =
            BTreeMap::new();
        for v in scores["values"].as_array().unwrap() {
            out.entry((
                v["instance"].as_str().unwrap().to_string(),
                v["examination"].as_str().unwrap().to_string(),
            ))
            .or_default()
            .push((v["trusted"].clone(), v["answers"].clone()));
        }
        out
    };
    let (before, after) = (by_position(&original), by_position(&again));
    assert_eq!(before.len(), 9);
    assert_eq!(before, after);
    // What matters of each row reads back the same: exporting the fresh contest gives the
    // same results, techniques, measures, masks and estimated results.
    let Some((_, rows)) = python_csv(&exported) else {
        return;
    };
    let Some((_, rows_again)) = python_csv(&export_csv(&fresh, "again.csv")) else {
        return;
    };
    let kept = [
        "tool",
        "Input",
        "Examination",
        "nb cores",
        "results",
        "techniques",
        "max memory (MB)",
        "CPU (ms)",
        "Time (ms)",
        "flags:bonus:scores:mask",
        "estimated result",
        "# tools computing estimated results",
    ];
    let project = |rows: &[BTreeMap<String, String>]| -> Vec<Vec<String>> {
        rows.iter()
            .map(|r| kept.iter().map(|k| r[*k].clone()).collect())
            .collect()
    };
    assert_eq!(project(&rows), project(&rows_again));
}

#[test]
fn json_has_the_scores_and_every_run() {
    let c = contest();
    let out = c.mccbuild(&["export", "--json", "-"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let export = json(&out);
    let scores = json(&c.mccbuild(&["scores", "--json"]));
    assert_eq!(export["format"], 1);
    for (field, value) in scores.as_object().unwrap() {
        assert_eq!(&export[field], value, "{field}");
    }
    let runs = export["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 27);
    let find = |tool: &str, instance: &str, exam: &str| {
        runs.iter()
            .find(|r| r["tool"] == tool && r["instance"] == instance && r["examination"] == exam)
            .unwrap_or_else(|| panic!("no run {tool} {instance} {exam}"))
    };
    let wrong = find("c", "Philosophers-PT-000002", "UpperBounds");
    assert_eq!(wrong["model"], "Philosophers");
    assert_eq!(wrong["origin"], serde_json::json!({"kind": "executed"}));
    assert_eq!(wrong["verdict"], "answered");
    assert_eq!(
        wrong["termination"],
        serde_json::json!({"reason": "exit", "code": 0})
    );
    assert_eq!(wrong["ids"].as_array().unwrap().len(), 16);
    assert_eq!(wrong["ids"][0], "Philosophers-PT-000002-UpperBounds-00");
    assert_eq!(
        wrong["answers"]["Philosophers-PT-000002-UpperBounds-00"],
        "2"
    );
    assert_eq!(
        wrong["answers"]["Philosophers-PT-000002-UpperBounds-15"],
        "1"
    );
    assert_eq!(wrong["mask"], format!("X{}", "T".repeat(15)));
    assert_eq!(wrong["techniques"], serde_json::json!(["EXPLICIT"]));
    assert_eq!(wrong["points"], 13.0);
    assert!(
        wrong["cpu_time_s"].as_f64().is_some() && wrong["peak_memory_bytes"].as_u64().is_some()
    );
    let key = wrong["key"].as_str().unwrap();
    assert!(key.len() == 64 && key.bytes().all(|b| b.is_ascii_hexdigit()));
    let crash = find("c", "Philosophers-PT-000002", "ReachabilityDeadlock");
    assert_eq!(crash["verdict"], "cannot_compute");
    assert_eq!(
        crash["termination"],
        serde_json::json!({"reason": "exit", "code": 3})
    );
    assert_eq!(crash["answers"], serde_json::json!({}));
    assert_eq!(crash["mask"], "-");
    let dnc = find("c", "Unbounded-PT-1", "UpperBounds");
    assert_eq!(dnc["verdict"], "do_not_compete");
    assert_eq!(dnc["points"], serde_json::Value::Null);
    assert_eq!(
        find("a", "Philosophers-PT-000003", "StateSpace")["answers"]["STATES"],
        BIG
    );
}

/// Validates files against the transcribed grammar with lxml; returns (file, error) pairs, or
/// None when lxml is missing (skipped, or failed in CI).
fn relaxng_errors(files: &[PathBuf]) -> Option<Vec<(String, String)>> {
    let Some(python) = python_with("lxml.etree") else {
        skip(
            "Python's lxml is not installed (apt-get install python3-lxml); the verdict files are validated with it",
        );
        return None;
    };
    let script = r#"
import json, sys
from lxml import etree
schema = etree.RelaxNG(etree.parse(sys.argv[1]))
errors = []
for f in sys.argv[2:]:
    if not schema.validate(etree.parse(f)):
        errors.append([f, str(schema.error_log.last_error)])
print(json.dumps(errors))
"#;
    let rng = Path::new(REPO).join("tests/schemas/propertiesverdict.rng");
    let mut args: Vec<&Path> = vec![&rng];
    args.extend(files.iter().map(PathBuf::as_path));
    let out = run_python(&python, script, &args);
    assert!(out.status.success(), "{}", stderr(&out));
    Some(serde_json::from_slice(&out.stdout).unwrap())
}

#[test]
fn verdict_files_validate_against_the_grammar() {
    let c = contest();
    let dir = c.path().join("verdicts");
    let out = c.mccbuild(&["export", "--verdicts", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert_eq!(
        files,
        [dir.join("Philosophers.xml"), dir.join("Unbounded.xml")]
    );

    // The content: one verdict per value, each naming its instance.
    let text = fs::read_to_string(dir.join("Philosophers.xml")).unwrap();
    let doc = roxmltree::Document::parse(&text).unwrap();
    let root = doc.root_element();
    assert_eq!(
        (
            root.tag_name().name(),
            root.attribute("tool"),
            root.attribute("version")
        ),
        ("toolspecific", Some("propertiesverdict"), Some("2.0"))
    );
    let verdicts: Vec<_> = root
        .children()
        .filter(|n| n.has_tag_name("verdict"))
        .collect();
    // Per instance: 4 StateSpace values, 1 ReachabilityDeadlock, 16 UpperBounds.
    assert_eq!(verdicts.len(), 2 * (4 + 1 + 16));
    let find = |instance: &str, reference: &str| {
        verdicts
            .iter()
            .find(|v| {
                v.attribute("reference") == Some(reference)
                    && v.children().any(|m| {
                        m.has_tag_name("modelinstance")
                            && m.attribute("reference") == Some(instance)
                    })
            })
            .unwrap_or_else(|| panic!("no verdict {instance} {reference}"))
    };
    let states = find("Philosophers-PT-000003", "STATE_SPACE STATES");
    assert_eq!(states.attribute("category"), Some("StateSpace"));
    assert_eq!(states.attribute("value"), Some(BIG));
    let rd = find("Philosophers-PT-000002", "ReachabilityDeadlock");
    assert_eq!(
        (rd.attribute("category"), rd.attribute("value")),
        (Some("ReachabilityDeadlock"), Some("false"))
    );
    let explanation = rd
        .children()
        .find(|n| n.has_tag_name("explanation"))
        .and_then(|n| n.text())
        .unwrap();
    assert!(
        explanation.contains("unanimity") && explanation.contains("2 of the 2"),
        "{explanation}"
    );
    assert_eq!(
        find("Philosophers-PT-000003", "ReachabilityDeadlock").attribute("value"),
        Some("unknown")
    );
    let bound = find(
        "Philosophers-PT-000002",
        "Philosophers-PT-000002-UpperBounds-00",
    );
    assert_eq!(
        (bound.attribute("category"), bound.attribute("value")),
        (Some("UpperBounds"), Some("1"))
    );
    let unbounded = fs::read_to_string(dir.join("Unbounded.xml")).unwrap();
    assert!(
        unbounded.contains("reference=\"Unbounded-PT-1-UpperBounds-00\" value=\"+inf\""),
        "{unbounded}"
    );

    // Every file is valid; a file that breaks the grammar is not (the validation is real).
    let broken = c.path().join("broken.xml");
    fs::write(&broken, text.replace("version=\"2.0\"", "version=\"1.0\"")).unwrap();
    let no_verdict = c.path().join("no-verdict.xml");
    fs::write(
        &no_verdict,
        "<toolspecific tool=\"propertiesverdict\" version=\"2.0\"><modelreference modelname=\"M\"/></toolspecific>",
    )
    .unwrap();
    let mut all = files.clone();
    all.push(broken.clone());
    all.push(no_verdict.clone());
    let Some(errors) = relaxng_errors(&all) else {
        return;
    };
    let failed: Vec<&str> = errors.iter().map(|(f, _)| f.as_str()).collect();
    assert_eq!(
        failed,
        [broken.to_str().unwrap(), no_verdict.to_str().unwrap()],
        "{errors:?}"
    );
}

#[test]
fn the_schema_carries_every_literal_of_the_spec_grammar() {
    let spec = Path::new(REPO).join("../shared/spec/mcc-properties-verdict-format.txt");
    let Ok(text) = fs::read_to_string(&spec) else {
        skip(&format!("the spec is not at {}", spec.display()));
        return;
    };
    let start = text
        .find("start = toolspecific.element")
        .expect("the RNC grammar");
    let end = text[start..]
        .find("Grammar of properties verdicts in RNC")
        .expect("its end")
        + start;
    let rng =
        fs::read_to_string(Path::new(REPO).join("tests/schemas/propertiesverdict.rng")).unwrap();
    let mut literals = 0;
    // The `##` comments quote words too ("CONNECTED"): only the grammar's lines count.
    for line in text[start..end]
        .lines()
        .filter(|l| !l.trim_start().starts_with("##"))
    {
        for literal in line.split('"').skip(1).step_by(2) {
            literals += 1;
            assert!(
                rng.contains(&format!(">{literal}<")),
                "the grammar's literal \"{literal}\" is not in tests/schemas/propertiesverdict.rng"
            );
        }
    }
    assert!(literals > 50, "{literals} literals found");
    for name in [
        "toolspecific",
        "modelreference",
        "verdict",
        "modelinstance",
        "explanation",
        "statedby",
        "techniques",
        "technique",
        "trace",
    ] {
        assert!(
            rng.contains(&format!("<element name=\"{name}\">")),
            "element {name}"
        );
    }
}

#[test]
fn dir_writes_all_three_as_the_separate_options_do() {
    let c = contest();
    let out = c.mccbuild(&[
        "export",
        "--dir",
        "exports",
        "--csv",
        "one.csv",
        "--verdicts",
        "v",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let dir = c.path().join("exports");
    assert_eq!(
        fs::read(dir.join("results.csv")).unwrap(),
        fs::read(c.path().join("one.csv")).unwrap()
    );
    let exported: serde_json::Value =
        serde_json::from_slice(&fs::read(dir.join("results.json")).unwrap()).unwrap();
    assert_eq!(exported["runs"].as_array().unwrap().len(), 27);
    for model in ["Philosophers.xml", "Unbounded.xml"] {
        assert_eq!(
            fs::read(dir.join("verdicts").join(model)).unwrap(),
            fs::read(c.path().join("v").join(model)).unwrap()
        );
    }
    // The same export again writes the same bytes.
    assert!(c.mccbuild(&["export", "--csv", "two.csv"]).status.success());
    assert_eq!(
        fs::read(c.path().join("one.csv")).unwrap(),
        fs::read(c.path().join("two.csv")).unwrap()
    );
}

#[test]
fn export_errors_name_what_to_fix() {
    let c = contest();
    let nothing = c.mccbuild(&["export"]);
    assert_eq!(nothing.status.code(), Some(2));
    assert!(stderr(&nothing).contains("--csv"), "{}", stderr(&nothing));
    let both = c.mccbuild(&["export", "--csv", "-", "--json", "-"]);
    assert_eq!(both.status.code(), Some(2));
    assert!(
        stderr(&both).contains("standard output"),
        "{}",
        stderr(&both)
    );
    // A file where a folder should be: exit 4, naming the path.
    fs::write(c.path().join("file"), "").unwrap();
    let blocked = c.mccbuild(&["export", "--csv", "file/out.csv"]);
    assert_eq!(blocked.status.code(), Some(4), "{}", stderr(&blocked));
    assert!(
        stderr(&blocked).contains("file/out.csv"),
        "{}",
        stderr(&blocked)
    );
    let blocked = c.mccbuild(&["export", "--verdicts", "file"]);
    assert_eq!(blocked.status.code(), Some(4), "{}", stderr(&blocked));
    // A damaged record: exit 3, naming it.
    let record = fs::read_dir(c.path().join("cache/runs"))
        .unwrap()
        .flat_map(|shard| fs::read_dir(shard.unwrap().path()).unwrap())
        .map(|f| f.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "json"))
        .unwrap();
    fs::write(&record, "{").unwrap();
    let damaged = c.mccbuild(&["export", "--csv", "-"]);
    let err = stderr(&damaged);
    assert_eq!(damaged.status.code(), Some(3), "{err}");
    assert!(
        err.contains(record.to_str().unwrap())
            && err.contains("`mccbuild run` does these runs again"),
        "{err}"
    );
    assert!(!err.contains("delete") && !err.contains("remove"), "{err}");
    // Following the advice works: the run is done again, the export is whole.
    let rerun = c.mccbuild(&["run", "--json"]);
    assert_eq!(json(&rerun)["executed"], 1, "{}", stderr(&rerun));
    let again = c.mccbuild(&["export", "--csv", "-"]);
    assert!(again.status.success(), "{}", stderr(&again));
    assert_eq!(stdout(&again).lines().count(), 1 + 27);
}

#[test]
fn a_contest_without_runs_in_the_store_exports_a_header() {
    let mut c = TestContest::new();
    c.copy_demo_instance("Philosophers-PT-000002");
    c.model("Philosophers", "known", &["models/Philosophers-PT-000002"]);
    c.scripted_tool("a", "examinations = [\"StateSpace\"]");
    c.write("time_s = 10\nmemory_mb = 512");
    let out = c.mccbuild(&["export", "--csv", "-", "--verdicts", "v"]);
    // Written, and said partial (docs/cli.md, "Partial results").
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    assert_eq!(stdout(&out), format!("{}\n", COLUMNS.join(",")));
    assert!(
        stderr(&out).contains("partial results: the one planned run is not in the store yet"),
        "{}",
        stderr(&out)
    );
    // The values exist (unknown): the model has its file.
    let text = fs::read_to_string(c.path().join("v/Philosophers.xml")).unwrap();
    assert_eq!(text.matches("value=\"unknown\"").count(), 4, "{text}");
}
