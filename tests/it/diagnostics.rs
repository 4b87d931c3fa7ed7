//! The answer parser's diagnostics where people look, through the binary: `run` summarises them
//! per tool at the end, `explain` shows a value's, the report's tool page lists them.

use std::fs;

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
