//! The protocol's line forms and their matching, case by case.

use std::sync::Arc;

use super::lines::MAX_LINE;
use super::*;
use crate::outcome::Response;
use crate::value::ValueKind;

fn ids(names: &[&str]) -> Vec<Arc<str>> {
    names.iter().map(|n| Arc::from(*n)).collect()
}

const SS: [&str; 4] = [
    "STATES",
    "TRANSITIONS",
    "MAX_TOKEN_IN_PLACE",
    "MAX_TOKEN_PER_MARKING",
];

fn state_space(ids: &[Arc<str>]) -> Expected<'_> {
    Expected {
        examination: "StateSpace",
        instance: "Philosophers-PT-000005",
        form: AnswerForm::StateSpace,
        kind: ValueKind::Integer,
        ids,
    }
}

fn value_of(answers: &RunAnswers, id: &str) -> Option<String> {
    answers
        .answers
        .iter()
        .find(|a| &*a.id == id)
        .map(|a| a.value.to_string())
}

#[test]
fn state_space_lines_in_any_order_with_noise() {
    let out = "# Hello from the tool\n\
               STATE_SPACE TRANSITIONS 945 TECHNIQUES DECISION_DIAGRAMS\n\
               computing...\n\
               STATE_SPACE STATES 243 TECHNIQUES DECISION_DIAGRAMS TOPOLOGICAL\n\
               STATE_SPACE MAX_TOKEN_PER_MARKING 10 TECHNIQUES DECISION_DIAGRAMS\n\
               STATE_SPACE MAX_TOKEN_IN_PLACE 1 TECHNIQUES DECISION_DIAGRAMS\n\
               Total time 0.3s\n";
    let ids = ids(&SS);
    let answers = resolve(&parse_output(out), state_space(&ids));
    assert_eq!(answers.response, Response::Answered);
    assert_eq!(value_of(&answers, "STATES").as_deref(), Some("243"));
    assert_eq!(value_of(&answers, "TRANSITIONS").as_deref(), Some("945"));
    assert_eq!(
        value_of(&answers, "MAX_TOKEN_IN_PLACE").as_deref(),
        Some("1")
    );
    assert_eq!(
        value_of(&answers, "MAX_TOKEN_PER_MARKING").as_deref(),
        Some("10")
    );
    assert_eq!(
        answers.answers[0].techniques,
        vec!["DECISION_DIAGRAMS", "TOPOLOGICAL"]
    );
    assert!(answers.diagnostics.is_empty(), "{:?}", answers.diagnostics);
}

#[test]
fn negative_state_space_value_means_not_computed() {
    // TAPAAL prints TRANSITIONS -1 when it did not count edges.
    let out = "STATE_SPACE STATES 12 TECHNIQUES EXPLICIT\nSTATE_SPACE TRANSITIONS -1 TECHNIQUES EXPLICIT\n";
    let ids = ids(&SS);
    let answers = resolve(&parse_output(out), state_space(&ids));
    assert_eq!(answers.answers.len(), 1);
    assert_eq!(value_of(&answers, "TRANSITIONS"), None);
    assert!(answers.diagnostics.is_empty());
}

#[test]
fn huge_integers_and_infinity() {
    let big = "7".repeat(23_857);
    let out = format!(
        "STATE_SPACE STATES {big} TECHNIQUES DECISION_DIAGRAMS\nSTATE_SPACE TRANSITIONS +inf TECHNIQUES X\nSTATE_SPACE MAX_TOKEN_IN_PLACE inf\n"
    );
    let ids = ids(&SS);
    let answers = resolve(&parse_output(&out), state_space(&ids));
    assert_eq!(value_of(&answers, "STATES"), Some(big));
    assert_eq!(value_of(&answers, "TRANSITIONS").as_deref(), Some("+inf"));
    assert_eq!(
        value_of(&answers, "MAX_TOKEN_IN_PLACE").as_deref(),
        Some("+inf")
    );
}

/// A state count in scientific notation is read as the integer it denotes, as the MCC's
/// own files write big numbers (`7.1790E+0023`); one that denotes no integer is an invalid
/// value, reported, and the value is not computed (docs/rules.md, "Where the texts leave a
/// choice open").
#[test]
fn state_counts_in_scientific_notation_are_the_integers_they_denote() {
    let out = "STATE_SPACE STATES 7.1790E+0023 TECHNIQUES DECISION_DIAGRAMS\n\
               STATE_SPACE TRANSITIONS 2.5e3 TECHNIQUES DECISION_DIAGRAMS\n\
               STATE_SPACE MAX_TOKEN_IN_PLACE 1.25E+1 TECHNIQUES X\n\
               STATE_SPACE MAX_TOKEN_PER_MARKING 1.50E+1 TECHNIQUES X\n";
    let parsed = parse_output(out);
    assert_eq!(
        parsed.invalid_values.len(),
        1,
        "{:?}",
        parsed.invalid_values
    );
    assert_eq!(parsed.invalid_values[0].0, 3);
    let ids = ids(&SS);
    let answers = resolve(&parsed, state_space(&ids));
    assert_eq!(
        value_of(&answers, "STATES"),
        Some(format!("71790{}", "0".repeat(19)))
    );
    assert_eq!(value_of(&answers, "TRANSITIONS").as_deref(), Some("2500"));
    assert_eq!(value_of(&answers, "MAX_TOKEN_IN_PLACE"), None);
    assert_eq!(
        value_of(&answers, "MAX_TOKEN_PER_MARKING").as_deref(),
        Some("15")
    );
}

#[test]
fn formulas_keyed_by_the_ids_of_the_file() {
    let names = [
        "M-PT-1-ReachabilityCardinality-2025-00",
        "M-PT-1-ReachabilityCardinality-2025-01",
        "M-PT-1-ReachabilityCardinality-2023-02",
    ];
    let ids = ids(&names);
    let expected = Expected {
        examination: "ReachabilityCardinality",
        instance: "M-PT-1",
        form: AnswerForm::Formulas,
        kind: ValueKind::Boolean,
        ids: &ids,
    };
    let out = "FORMULA M-PT-1-ReachabilityCardinality-2023-02 TRUE TECHNIQUES SAT_SMT\n\
               FORMULA M-PT-1-ReachabilityCardinality-2025-00 FALSE TECHNIQUES EXPLICIT STUBBORN_SETS\n\
               FORMULA M-PT-1-ReachabilityCardinality-2025-01 CANNOT_COMPUTE\n\
               FORMULA M-PT-1-ReachabilityCardinality-2025-02 TRUE TECHNIQUES X\n";
    let answers = resolve(&parse_output(out), expected);
    assert_eq!(answers.response, Response::Answered);
    // Kept in the order of the file, not of the output.
    let got: Vec<_> = answers
        .answers
        .iter()
        .map(|a| (a.id.to_string(), a.value.to_string()))
        .collect();
    assert_eq!(
        got,
        vec![
            (names[0].to_string(), "FALSE".to_string()),
            (names[2].to_string(), "TRUE".to_string())
        ]
    );
    assert_eq!(answers.diagnostics.len(), 1, "{:?}", answers.diagnostics);
    assert!(
        answers.diagnostics[0]
            .contains("unknown formula id `M-PT-1-ReachabilityCardinality-2025-02`")
    );
}

#[test]
fn upper_bounds_integers_and_inf() {
    let ids = ids(&["U-00", "U-01", "U-02"]);
    let expected = Expected {
        examination: "UpperBounds",
        instance: "U",
        form: AnswerForm::Formulas,
        kind: ValueKind::Integer,
        ids: &ids,
    };
    let out = "FORMULA U-00 5 TECHNIQUES TOPOLOGICAL\nFORMULA U-01 +inf TECHNIQUES CPN_APPROX\nFORMULA U-02 TRUE TECHNIQUES X\n";
    let answers = resolve(&parse_output(out), expected);
    assert_eq!(value_of(&answers, "U-00").as_deref(), Some("5"));
    assert_eq!(value_of(&answers, "U-01").as_deref(), Some("+inf"));
    assert_eq!(value_of(&answers, "U-02"), None);
    assert!(answers.diagnostics[0].contains("not a valid integer value"));
}

#[test]
fn global_property_ids_old_and_new() {
    let ids = ids(&["ReachabilityDeadlock"]);
    let expected = Expected {
        examination: "ReachabilityDeadlock",
        instance: "Dekker-PT-010",
        form: AnswerForm::Global,
        kind: ValueKind::Boolean,
        ids: &ids,
    };
    for line in [
        "FORMULA ReachabilityDeadlock TRUE TECHNIQUES EXPLICIT",
        "FORMULA Dekker-PT-010-ReachabilityDeadlock-0 TRUE TECHNIQUES EXPLICIT",
        "FORMULA  Dekker-PT-010-ReachabilityDeadlock-0  TRUE  TECHNIQUES  EXPLICIT",
        "FORMULA ReachabilityDeadlock TRUE",
    ] {
        let answers = resolve(&parse_output(line), expected);
        assert_eq!(
            value_of(&answers, "ReachabilityDeadlock").as_deref(),
            Some("TRUE"),
            "{line}"
        );
        assert!(
            answers.diagnostics.is_empty(),
            "{line}: {:?}",
            answers.diagnostics
        );
    }
    let answers = resolve(&parse_output("FORMULA OneSafe TRUE TECHNIQUES X"), expected);
    assert_eq!(answers.response, Response::CannotCompute);
    assert_eq!(answers.diagnostics.len(), 1);
}

#[test]
fn verification_results_of_verification_tasks() {
    let ids = ids(&["ReachSafety"]);
    let expected = Expected {
        examination: "ReachSafety",
        instance: "loop1",
        form: AnswerForm::VerificationResult,
        kind: ValueKind::Boolean,
        ids: &ids,
    };
    assert_eq!(
        value_of(
            &resolve(&parse_output("checking...\nSAFE\n"), expected),
            "ReachSafety"
        )
        .as_deref(),
        Some("TRUE")
    );
    assert_eq!(
        value_of(&resolve(&parse_output("UNSAFE\n"), expected), "ReachSafety").as_deref(),
        Some("FALSE")
    );
    let unknown = resolve(&parse_output("UNKNOWN\n"), expected);
    assert_eq!(unknown.response, Response::CannotCompute);
    let two = resolve(&parse_output("SAFE\nUNSAFE\n"), expected);
    assert_eq!(value_of(&two, "ReachSafety").as_deref(), Some("FALSE"));
    assert_eq!(two.diagnostics.len(), 1);
    // Verification results are noise in an MCC run.
    let ss = ids_of_state_space();
    assert_eq!(
        resolve(&parse_output("SAFE\n"), state_space(&ss)).response,
        Response::CannotCompute
    );
}

fn ids_of_state_space() -> Vec<Arc<str>> {
    ids(&SS)
}

#[test]
fn do_not_compete_and_cannot_compute() {
    let ids = ids(&SS);
    let answers = resolve(&parse_output("banner\nDO_NOT_COMPETE\n"), state_space(&ids));
    assert_eq!(answers.response, Response::DoNotCompete);
    // LoLA's wrapper once printed it with spaces.
    assert_eq!(
        resolve(&parse_output("DO NOT COMPETE"), state_space(&ids)).response,
        Response::DoNotCompete
    );
    assert_eq!(
        resolve(&parse_output("CANNOT_COMPUTE\n"), state_space(&ids)).response,
        Response::CannotCompute
    );
    // E-1.8: no well-formed answer means nothing computed.
    assert_eq!(
        resolve(&parse_output("Segmentation fault\n"), state_space(&ids)).response,
        Response::CannotCompute
    );
    // CANNOT_COMPUTE for the run does not cancel the answers printed before.
    let answers = resolve(
        &parse_output("STATE_SPACE STATES 3\nCANNOT_COMPUTE\n"),
        state_space(&ids),
    );
    assert_eq!(answers.response, Response::Answered);
    let answers = resolve(
        &parse_output("STATE_SPACE STATES 3\nDO_NOT_COMPETE\n"),
        state_space(&ids),
    );
    assert_eq!(answers.response, Response::DoNotCompete);
    assert!(answers.answers.is_empty());
    assert_eq!(answers.diagnostics.len(), 1);
    // Found by the properties below: the diagnostic names its place, the first answer's line.
    let answers = resolve(
        &parse_output("banner\nDO_NOT_COMPETE\nSTATE_SPACE TRANSITIONS 4\nSTATE_SPACE STATES 3\n"),
        state_space(&ids),
    );
    assert!(
        answers.diagnostics[0].starts_with("line 3: "),
        "{:?}",
        answers.diagnostics
    );
}

#[test]
fn two_different_answers_for_one_key_last_wins_with_diagnostic() {
    let ids = ids(&["F-00"]);
    let expected = Expected {
        examination: "CTLCardinality",
        instance: "F",
        form: AnswerForm::Formulas,
        kind: ValueKind::Boolean,
        ids: &ids,
    };
    let answers = resolve(
        &parse_output("FORMULA F-00 TRUE\nFORMULA F-00 FALSE\n"),
        expected,
    );
    assert_eq!(value_of(&answers, "F-00").as_deref(), Some("FALSE"));
    assert_eq!(answers.diagnostics.len(), 1);
    assert!(answers.diagnostics[0].contains("two different answers"));
    // The same answer twice is not a problem.
    let answers = resolve(
        &parse_output("FORMULA F-00 TRUE\nFORMULA F-00 TRUE TECHNIQUES X\n"),
        expected,
    );
    assert!(answers.diagnostics.is_empty());
}

#[test]
fn malformed_lines_are_reported_not_fatal() {
    let ids = ids(&SS);
    let out = "STATE_SPACE STATES\nSTATE_SPACE STATES 1.5e3\nSTATE_SPACE STATES 7 TECHNIQUE X\nFORMULA\nSTATE_SPACE STATES 7\n";
    let answers = resolve(&parse_output(out), state_space(&ids));
    assert_eq!(value_of(&answers, "STATES").as_deref(), Some("7"));
    assert_eq!(answers.diagnostics.len(), 4, "{:?}", answers.diagnostics);
}

#[test]
fn chunked_feeding_and_garbage() {
    let mut parser = OutputParser::new();
    let out = b"\xff\xfe garbage \x00\nSTATE_SPACE STA";
    parser.feed(out);
    parser.feed(b"TES 9 TECHNIQUES EXPLICIT\n");
    parser.feed(&vec![b'x'; 3 * MAX_LINE]);
    parser.feed(b"\nSTATE_SPACE TRANSITIONS 4");
    let parsed = parser.finish();
    let ids = ids(&SS);
    let answers = resolve(&parsed, state_space(&ids));
    assert_eq!(value_of(&answers, "STATES").as_deref(), Some("9"));
    assert_eq!(value_of(&answers, "TRANSITIONS").as_deref(), Some("4"));
}

/// docs/protocol.md, "Answers mccbuild accepts": each statement there, checked here.
#[test]
fn the_documented_answer_syntax() {
    let ss = ids(&SS);
    let value = |out: &str, id: &str| value_of(&resolve(&parse_output(out), state_space(&ss)), id);
    // Line endings: \n and \r\n; the last line needs none. Words: spaces or tabs, any number.
    assert_eq!(
        value("STATE_SPACE STATES 5 TECHNIQUES X\r\n", "STATES").as_deref(),
        Some("5")
    );
    assert_eq!(
        value("STATE_SPACE\tSTATES\t\t5", "STATES").as_deref(),
        Some("5")
    );
    assert_eq!(
        value("  STATE_SPACE STATES 5  ", "STATES").as_deref(),
        Some("5")
    );
    // A bare \r is not a line end: the line has two answers in it and is malformed.
    let answers = resolve(
        &parse_output("STATE_SPACE STATES 5\rSTATE_SPACE TRANSITIONS 6\n"),
        state_space(&ss),
    );
    assert!(answers.answers.is_empty());
    assert_eq!(answers.diagnostics.len(), 1, "{:?}", answers.diagnostics);
    // Keywords are upper case; a lower-case line is noise, without a diagnostic.
    let answers = resolve(&parse_output("state_space STATES 5\n"), state_space(&ss));
    assert!(answers.answers.is_empty() && answers.diagnostics.is_empty());
    // Integers: digits, an optional +, leading zeros, any size; +inf's six spellings.
    assert_eq!(
        value("STATE_SPACE STATES +0042", "STATES").as_deref(),
        Some("42")
    );
    for inf in ["+inf", "inf", "+INF", "INF", "+Inf", "Inf"] {
        assert_eq!(
            value(&format!("STATE_SPACE STATES {inf}"), "STATES").as_deref(),
            Some("+inf"),
            "{inf}"
        );
    }
    // Scientific notation denoting an integer is that integer (docs/rules.md).
    assert_eq!(
        value("STATE_SPACE STATES 1e6", "STATES").as_deref(),
        Some("1000000")
    );
    // Not values: a diagnostic each, the line ignored.
    for word in ["true", "1.5", "1.25E+1", "1e-6", "0x10", "-inf", "--1", "∞"] {
        let answers = resolve(
            &parse_output(&format!("STATE_SPACE STATES {word}")),
            state_space(&ss),
        );
        assert!(answers.answers.is_empty(), "{word}");
        assert_eq!(
            answers.diagnostics.len(),
            1,
            "{word}: {:?}",
            answers.diagnostics
        );
    }
    // A negative integer: not computed, no diagnostic; an earlier answer for the id stands.
    let answers = resolve(
        &parse_output("STATE_SPACE STATES 5\nSTATE_SPACE STATES -1\n"),
        state_space(&ss),
    );
    assert_eq!(value_of(&answers, "STATES").as_deref(), Some("5"));
    assert_eq!(
        answers.diagnostics.len(),
        1,
        "answered and not computed: {:?}",
        answers.diagnostics
    );
    // DO_NOT_COMPETE before the answers wins too.
    let answers = resolve(
        &parse_output("DO_NOT_COMPETE\nSTATE_SPACE STATES 5\n"),
        state_space(&ss),
    );
    assert_eq!(answers.response, Response::DoNotCompete);
    assert!(answers.answers.is_empty());
    // DO_NOT_COMPETE with other words on its line is noise.
    let answers = resolve(
        &parse_output("DO_NOT_COMPETE now\nSTATE_SPACE STATES 5\n"),
        state_space(&ss),
    );
    assert_eq!(answers.response, Response::Answered);
    // An answer inside a line longer than 64 KiB is not read.
    let long = format!("STATE_SPACE STATES 5 TECHNIQUES {}\n", "X".repeat(MAX_LINE));
    assert_eq!(value(&long, "STATES"), None);
    // A per-id CANNOT_COMPUTE before an answer: the answer counts, with a diagnostic.
    let answers = resolve(
        &parse_output("FORMULA F-00 CANNOT_COMPUTE\nFORMULA F-00 TRUE TECHNIQUES X\n"),
        Expected {
            examination: "CTLCardinality",
            instance: "F",
            form: AnswerForm::Formulas,
            kind: ValueKind::Boolean,
            ids: &ids(&["F-00"]),
        },
    );
    assert_eq!(value_of(&answers, "F-00").as_deref(), Some("TRUE"));
    assert_eq!(answers.diagnostics.len(), 1);
    // The four spellings of a global property's id.
    let global = ids(&["OneSafe"]);
    for id in ["OneSafe", "OneSafe-0", "D-PT-1-OneSafe", "D-PT-1-OneSafe-0"] {
        let answers = resolve(
            &parse_output(&format!("FORMULA {id} FALSE")),
            Expected {
                examination: "OneSafe",
                instance: "D-PT-1",
                form: AnswerForm::Global,
                kind: ValueKind::Boolean,
                ids: &global,
            },
        );
        assert_eq!(
            value_of(&answers, "OneSafe").as_deref(),
            Some("FALSE"),
            "{id}"
        );
    }
}
