//! Diagnostics where people look, through the binary. The answer parser's: `run` summarises
//! them per tool at the end, `explain` shows a value's, the report's tool page lists them. Those
//! of the user's files: `check` reports every problem of a manifest at once, each at its
//! line and column in the manifest's words, and refuses input files that are not UTF-8 at
//! their bad byte, as `run` does.

use std::fs;
use std::path::Path;

use crate::common::*;

const I: &str = "Philosophers-PT-000002";

fn ub(n: usize) -> String {
    format!("{I}-UpperBounds-{n:02}")
}

/// Tool `faulty` answers every UpperBounds formula, then contradicts itself on formula 00 and
/// answers an id the file does not have; tool `clean` answers every formula once.
fn contest() -> TestContest {
    let mut c = TestContest::new();
    c.copy_demo_instance(I);
    c.model("Philosophers", "known", &[&format!("models/{I}")]);
    let mut clean = String::new();
    for n in 0..16 {
        clean.push_str(&format!("FORMULA {} 1 TECHNIQUES X\n", ub(n)));
    }
    let faulty = format!(
        "{clean}FORMULA {} 2 TECHNIQUES X\nFORMULA {I}-UpperBounds-99 3 TECHNIQUES X\n",
        ub(0)
    );
    for (tool, output) in [("faulty", &faulty), ("clean", &clean)] {
        c.scripted_tool(tool, "examinations = [\"UpperBounds\"]");
        c.answer(tool, I, "UpperBounds", output);
    }
    c.write("time_s = 5\nmemory_mb = 512");
    c
}

#[test]
fn diagnostics_in_run_explain_and_the_report() {
    let c = contest();
    let run = c.mccbuild(&["run"]);
    assert!(run.status.success(), "{}", stderr(&run));
    let err = stderr(&run);
    assert!(
        err.contains("faulty: 2 answer-parser diagnostics in 1 of the runs just executed:"),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "  {I} UpperBounds: lines 1 and 17: two different answers for {} (1 then 2)",
            ub(0)
        )),
        "{err}"
    );
    assert!(err.contains("unknown formula id"), "{err}");
    assert!(!err.contains("clean:"), "{err}");
    // Nothing executed, nothing to summarise.
    let again = c.mccbuild(&["run"]);
    assert!(
        !stderr(&again).contains("answer-parser"),
        "{}",
        stderr(&again)
    );

    // explain: the value's diagnostics (the contradiction names it), and those about the run as a
    // whole (the unknown id names no value of the examination), not another value's.
    let explain = |id: &str| {
        let out = c.mccbuild(&[
            "explain",
            "--instance",
            I,
            "--examination",
            "UpperBounds",
            "--id",
            id,
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        stdout(&out)
    };
    let text = explain(&ub(0));
    assert!(
        text.contains("answer-parser diagnostics of its runs:"),
        "{text}"
    );
    assert!(
        text.contains("  faulty: lines 1 and 17: two different answers"),
        "{text}"
    );
    assert!(text.contains("unknown formula id"), "{text}");
    let other = explain(&ub(1));
    assert!(other.contains("unknown formula id"), "{other}");
    assert!(!other.contains("two different answers"), "{other}");
    let out = c.mccbuild(&[
        "explain",
        "--json",
        "--instance",
        I,
        "--examination",
        "UpperBounds",
        "--id",
        &ub(0),
    ]);
    let x = json(&out);
    let messages = x["diagnostics"]["faulty"].as_array().unwrap();
    assert_eq!(messages.len(), 2, "{x}");
    assert!(x["diagnostics"].get("clean").is_none());

    // The report's tool page lists every diagnostic of the tool's runs.
    let report = c.mccbuild(&["report", "--out", "site"]);
    assert!(report.status.success(), "{}", stderr(&report));
    let page = fs::read_dir(c.path().join("site"))
        .unwrap()
        .flatten()
        .map(|e| fs::read_to_string(e.path()).unwrap_or_default())
        .find(|t| t.contains("<h1>faulty") || t.contains("Answer-parser diagnostics (1 runs)"))
        .expect("the tool page of faulty");
    assert!(
        page.contains("Answer-parser diagnostics (1 runs)"),
        "{page}"
    );
    assert!(page.contains("two different answers for"), "{page}");
    assert!(page.contains(&format!("`{I}-UpperBounds-99`")), "{page}");
}

/// A contest of one demo instance and one scripted tool, whose manifest has `limits` and the
/// extra `[[tool]]` text `tool`.
fn small_contest(limits: &str, tool: &str) -> TestContest {
    let mut c = TestContest::new();
    c.copy_demo_instance(I);
    c.model("Philosophers", "known", &[&format!("models/{I}")]);
    c.scripted_tool("a", tool);
    c.write(limits);
    c
}

/// `check`'s exit status and what it printed, the contest's folder written `[CONTEST]`.
fn check(c: &TestContest) -> (Option<i32>, String) {
    let out = c.mccbuild(&["check"]);
    (out.status.code(), stderr(&out))
}

#[test]
fn check_reports_an_unknown_key_a_missing_tool_folder_and_a_glob_matching_nothing_at_once() {
    let mut c = TestContest::new();
    c.copy_demo_instance(I);
    c.model("Philosophers", "known", &[&format!("models/{I}")]);
    c.model("Gone", "known", &["models/Gone-PT-*"]);
    c.scripted_tool("a", "");
    c.tools
        .push("[[tool]]\nname = \"b\"\ndir = \"tools/missing\"\n".to_string());
    c.write("time_s = 10\ntiem_s = 5");
    let (code, err) = check(&c);
    assert_eq!(code, Some(2), "{err}");
    for expected in [
        "unknown field `tiem_s` in [limits]",
        "did you mean `time_s`?",
        "`models/Gone-PT-*` matches no instance folder",
        "tool `b`: folder",
        "3 problems found",
    ] {
        assert!(err.contains(expected), "missing `{expected}` in:\n{err}");
    }
    output_settings(c.path()).bind(|| {
        insta::assert_snapshot!(
            "check_of_an_unknown_key_a_missing_folder_and_an_empty_glob",
            err
        )
    });
}

/// A rules file (`check --rules FILE`) with five problems in four sections: every one is
/// reported at once, each at its line and column, an unknown setting and a misspelt word with
/// "did you mean", not only the first (the file is read like the manifest).
#[test]
fn check_reports_every_problem_of_a_rules_file_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(Path::new(REPO).join("rules/mcc-2026.toml")).unwrap();
    let mut broken = text.clone();
    for (from, to) in [
        ("time_s = 3600 ", "time_s = \"1h\" "),
        ("min_agreeing = 3 ", "min_agreeing = -3"),
        ("votes = \"family\"", "votes = \"fmaily\""),
        ("shared_ranks = \"skip\"", "shared_rank = \"skip\""),
        (
            "points_per_examination = 16 ",
            "points_per_examination = [16]",
        ),
    ] {
        assert!(broken.contains(from), "rules/mcc-2026.toml has no `{from}`");
        broken = broken.replacen(from, to, 1);
    }
    let file = dir.path().join("broken.toml");
    std::fs::write(&file, &broken).unwrap();
    let out = mccbuild_in(dir.path(), &["check", "--rules", "broken.toml"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    for expected in [
        "unknown field `shared_rank` in [ranking]",
        "did you mean `family`?",
        "5 problems found",
    ] {
        assert!(err.contains(expected), "missing `{expected}` in:\n{err}");
    }
    output_settings(dir.path())
        .bind(|| insta::assert_snapshot!("check_of_a_rules_file_with_five_problems", err));
}

#[test]
fn check_reports_every_value_of_the_wrong_kind_in_the_manifests_words() {
    let c = small_contest(
        "time_s = \"ten\"\nmemory_mb = 512.5",
        "examinations = \"StateSpace\"\ncores = [1]",
    );
    let (code, err) = check(&c);
    assert_eq!(code, Some(2), "{err}");
    for expected in [
        "[limits] time_s must be a whole number, not the string \"ten\"",
        "[limits] memory_mb must be a whole number, not the number 512.5",
        "[tool] examinations must be a list of strings, not the string \"StateSpace\"",
        "[tool] cores must be a whole number, not a list",
        "4 problems found",
    ] {
        assert!(err.contains(expected), "missing `{expected}` in:\n{err}");
    }
    assert!(
        !err.contains("expected") && !err.contains("invalid type"),
        "{err}"
    );
    output_settings(c.path())
        .bind(|| insta::assert_snapshot!("check_of_four_values_of_the_wrong_kind", err));
}

#[test]
fn limits_cores_without_one_is_one_problem_at_its_line() {
    let mut c = small_contest("time_s = 10\ncores = [3]", "");
    c.scripted_tool("b", "");
    c.scripted_tool("c", "cores = 4");
    c.write("time_s = 10\ncores = [3]");
    let (code, err) = check(&c);
    assert_eq!(code, Some(2), "{err}");
    let text = fs::read_to_string(c.path().join("contest.toml")).unwrap();
    let line = |prefix: &str| {
        text.lines()
            .position(|l| l.starts_with(prefix))
            .map(|i| i + 1)
            .unwrap()
    };
    // The tools that do not write `cores` are one problem at [limits] cores; the tool that
    // writes a count [limits] does not allow has its own, at its `cores`.
    let limits = format!(
        "contest.toml:{}:9: [limits] cores = [3] leaves out 1, the cores of tools `a`, `b` (without `cores`)",
        line("cores = [3]")
    );
    assert!(err.contains(&limits), "{err}");
    assert!(
        err.contains(&format!(
            "contest.toml:{}:9: tool `c`: cores = 4",
            line("cores = 4")
        )),
        "{err}"
    );
    assert!(err.contains("2 problems found"), "{err}");
}

#[test]
fn a_manifest_that_is_not_utf8_is_refused_at_its_bad_byte() {
    let c = small_contest("time_s = 10", "");
    let manifest = c.path().join("contest.toml");
    let mut bytes = fs::read(&manifest).unwrap();
    let at = bytes.windows(6).position(|w| w == b"\"Test\"").unwrap() + 3;
    bytes.insert(at, 0xff);
    fs::write(&manifest, &bytes).unwrap();
    let (code, err) = check(&c);
    assert_eq!(code, Some(2), "{err}");
    // `name = "Te` comes before the byte, on line 2.
    assert!(
        err.contains(&format!(
            "contest.toml:2:11: the manifest is not UTF-8 text: byte 0xff at offset {at}"
        )),
        "{err}"
    );
    assert!(!err.contains("run mccbuild in a folder"), "{err}");
}

/// Puts byte 0xff into `file` after the first `after`; its line and column.
fn break_utf8(file: &std::path::Path, after: &str) -> (usize, usize) {
    let mut bytes = fs::read(file).unwrap();
    let at = bytes
        .windows(after.len())
        .position(|w| w == after.as_bytes())
        .unwrap()
        + after.len();
    bytes.insert(at, 0xff);
    fs::write(file, &bytes).unwrap();
    let before = std::str::from_utf8(&bytes[..at]).unwrap();
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap().chars().count() + 1;
    (line, column)
}

#[test]
fn model_and_formula_files_that_are_not_utf8_are_refused_by_check_and_run_alike() {
    let mut c = TestContest::new();
    let instance = c.copy_demo_instance(I);
    c.model("Philosophers", "known", &[&format!("models/{I}")]);
    c.scripted_tool("a", "examinations = [\"StateSpace\", \"UpperBounds\"]");
    c.write("time_s = 10\nmemory_mb = 512");
    let (pnml_line, pnml_column) = break_utf8(&instance.join("model.pnml"), "<text>");
    let (xml_line, xml_column) = break_utf8(&instance.join("UpperBounds.xml"), "<id>");
    let (code, err) = check(&c);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "{I}/model.pnml:{pnml_line}:{pnml_column}: model.pnml is not well-formed XML: byte 0xff at offset"
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "{I}/UpperBounds.xml:{xml_line}:{xml_column}: the formula file is not well-formed XML: byte 0xff at offset"
        )),
        "{err}"
    );
    assert!(err.contains("2 problems found"), "{err}");
    // run: the same two problems as warnings; model.pnml goes to the tools as it is, the
    // examination of the broken formula file is left out, and the exit status says so.
    let out = c.mccbuild(&["run", "--json"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "warning: {}",
            instance.join("model.pnml").display()
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "UpperBounds.xml:{xml_line}:{xml_column}: the formula file is not well-formed XML"
        )),
        "{err}"
    );
    assert_eq!(json(&out)["executed"], 1, "{err}");
    assert_eq!(
        json(&out)["left_out"],
        serde_json::json!([{"model": "Philosophers", "instance": I, "examination": "UpperBounds"}])
    );
}
