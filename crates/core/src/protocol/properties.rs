//! The answer parser on generated output: it never panics, reading the output in chunks split
//! anywhere is reading it whole, and every diagnostic names its place (a line of the output that
//! exists). `MCCBUILD_PROPTEST_CASES` sets the number of outputs
//! (scripts/bench-fuzz runs a million).

use std::sync::Arc;

use super::*;
use crate::value::ValueKind;
use proptest::collection::vec;
use proptest::prelude::*;

const IDS: [&str; 3] = [
    "X-PT-1-UpperBounds-00",
    "X-PT-1-UpperBounds-01",
    "UpperBounds",
];

/// Words of the protocol, numbers, and a few arbitrary characters.
fn word() -> impl Strategy<Value = String> {
    const KEYWORDS: &[&str] = &[
        "FORMULA",
        "STATE_SPACE",
        "TECHNIQUES",
        "CANNOT_COMPUTE",
        "DO_NOT_COMPETE",
        "DO",
        "NOT",
        "COMPETE",
        "TRUE",
        "FALSE",
        "STATES",
        "TRANSITIONS",
        "MAX_TOKEN_IN_PLACE",
        "MAX_TOKEN_PER_MARKING",
        "SAFE",
        "UNSAFE",
        "UNKNOWN",
        IDS[0],
        IDS[1],
        IDS[2],
        "X-PT-1-UpperBounds-0",
        "+inf",
        "inf",
        "-1",
        "-0",
        "1.5e3",
        "0x10",
        "",
    ];
    prop_oneof![
        4 => proptest::sample::select(KEYWORDS).prop_map(String::from),
        2 => any::<u64>().prop_map(|n| n.to_string()),
        1 => vec(0u8..10, 1..60).prop_map(|d| d.iter().map(|d| char::from(b'0' + d)).collect()),
        1 => vec(any::<char>(), 0..10).prop_map(|c| c.into_iter().collect()),
    ]
}

/// A tool's stdout: lines of words, or arbitrary bytes.
fn output() -> impl Strategy<Value = Vec<u8>> {
    let separator = proptest::sample::select(&[" ", "  ", "\t", " \r"][..]);
    let line = vec((word(), separator), 0..8).prop_map(|words| {
        words
            .into_iter()
            .map(|(w, s)| format!("{w}{s}"))
            .collect::<String>()
    });
    prop_oneof![
        3 => vec(line, 0..24).prop_map(|lines| lines.join("\n").into_bytes()),
        1 => vec(any::<u8>(), 0..1500),
    ]
}

fn cases() -> u32 {
    std::env::var("MCCBUILD_PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(2000)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn any_output_is_read_and_every_diagnostic_names_its_line(
        bytes in output(),
        cuts in vec(any::<prop::sample::Index>(), 0..6),
    ) {
        let mut parser = OutputParser::new();
        let mut cuts: Vec<usize> = cuts.iter().map(|c| c.index(bytes.len() + 1)).collect();
        cuts.sort_unstable();
        let mut from = 0;
        for cut in cuts.into_iter().chain([bytes.len()]) {
            parser.feed(&bytes[from..cut]);
            from = cut;
        }
        let parsed = parser.finish();
        let whole = parse_output(&String::from_utf8_lossy(&bytes));
        if std::str::from_utf8(&bytes).is_ok() {
            prop_assert_eq!(&parsed, &whole);
        }
        let lines = bytes.split(|&b| b == b'\n').count();
        let ids: Vec<Arc<str>> = IDS.iter().map(|&id| Arc::from(id)).collect();
        let state_space: Vec<Arc<str>> = ["STATES", "TRANSITIONS", "MAX_TOKEN_IN_PLACE", "MAX_TOKEN_PER_MARKING"]
            .iter().map(|&id| Arc::from(id)).collect();
        for (form, kind, ids) in [
            (AnswerForm::StateSpace, ValueKind::Integer, &state_space[..]),
            (AnswerForm::Global, ValueKind::Boolean, &ids[2..]),
            (AnswerForm::Formulas, ValueKind::Integer, &ids[..2]),
            (AnswerForm::Formulas, ValueKind::Boolean, &ids[..2]),
            (AnswerForm::VerificationResult, ValueKind::Boolean, &ids[2..]),
        ] {
            let expected = Expected { examination: "UpperBounds", instance: "X-PT-1", form, kind, ids };
            let (answers, kinds) = resolve_detailed(&parsed, expected);
            prop_assert_eq!(answers.diagnostics.len(), kinds.len());
            prop_assert!(answers.answers.len() <= ids.len());
            for d in &answers.diagnostics {
                let place = d.strip_prefix("lines ").or_else(|| d.strip_prefix("line "));
                let numbers: Vec<usize> = place
                    .map(|p| p.split(':').next().unwrap_or("").split(" and ").filter_map(|n| n.trim().parse().ok()).collect())
                    .unwrap_or_default();
                prop_assert!(!numbers.is_empty(), "a diagnostic without its line: {}", d);
                for n in numbers {
                    prop_assert!((1..=lines).contains(&n), "line {} of {}: {}", n, lines, d);
                }
            }
        }
    }
}
