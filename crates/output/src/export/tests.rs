//! The exports' fields: vectors, results, masks, times, memory, statuses, verdicts.

use std::sync::Arc;

use mccbuild_core::{Outcome, Response, Termination, Value, ValueKind};
use mccbuild_rules::trusted::TrustCase;

use super::csv::format_number;
use super::*;

fn int(n: u64) -> Value {
    Value::Int(n)
}

#[test]
fn boolean_vectors_have_one_character_per_value() {
    let (t, f) = (Value::Bool(true), Value::Bool(false));
    assert_eq!(
        vector(ValueKind::Boolean, &[Some(&t), Some(&f), None, Some(&t)]),
        "TF?T"
    );
    assert_eq!(vector(ValueKind::Boolean, &[]), "");
}

#[test]
fn integer_vectors_keep_big_numbers_exact() {
    let big = Value::parse("71790000000000000000000").unwrap();
    assert!(matches!(big, Value::Big(_)));
    assert_eq!(
        vector(
            ValueKind::Integer,
            &[Some(&int(9)), None, Some(&big), Some(&Value::Inf)]
        ),
        "9 ? 71790000000000000000000 +inf"
    );
}

#[test]
fn vectors_read_back_by_the_importer() {
    use mccbuild_plan::results_file::{RowResults, parse_results};
    let big = Value::Big(Arc::new("123456789012345678901234567890".parse().unwrap()));
    let values = [Some(&int(0)), None, Some(&big), Some(&Value::Inf)];
    assert_eq!(
        parse_results(&vector(ValueKind::Integer, &values), ValueKind::Integer),
        Ok(RowResults::Values(
            values.iter().map(|v| v.cloned()).collect()
        ))
    );
    let (t, f) = (Value::Bool(true), Value::Bool(false));
    let values = [Some(&f), None, Some(&t)];
    assert_eq!(
        parse_results(&vector(ValueKind::Boolean, &values), ValueKind::Boolean),
        Ok(RowResults::Values(
            values.iter().map(|v| v.cloned()).collect()
        ))
    );
}

#[test]
fn row_results_say_dnc_dnf_cc_or_the_answers() {
    let exit0 = Termination::Exit { code: 0 };
    let none: [Option<&Value>; 2] = [None, None];
    assert_eq!(
        row_results(
            Outcome::of(Response::DoNotCompete, exit0),
            ValueKind::Boolean,
            &none
        ),
        "DNC"
    );
    assert_eq!(
        row_results(
            Outcome::of(Response::CannotCompute, exit0),
            ValueKind::Boolean,
            &none
        ),
        "CC"
    );
    for t in [
        Termination::CpuLimit,
        Termination::MemoryLimit,
        Termination::Exit { code: 3 },
        Termination::Signal { signal: 11 },
    ] {
        assert_eq!(
            row_results(
                Outcome::of(Response::CannotCompute, t),
                ValueKind::Integer,
                &none
            ),
            "DNF",
            "{t:?}"
        );
    }
    // Answers given before a time-out count.
    let one = int(1);
    assert_eq!(
        row_results(
            Outcome::of(Response::Answered, Termination::CpuLimit),
            ValueKind::Integer,
            &[Some(&one), None]
        ),
        "1 ?"
    );
}

#[test]
fn masks_judge_each_value_against_the_trusted_one() {
    let (one, two) = (int(1), int(2));
    assert_eq!(
        mask(
            &[Some(&one), Some(&one), Some(&one), None, None],
            &[Some(&one), Some(&two), None, Some(&one), None]
        ),
        "TX?--"
    );
    // Fewer trusted values than answers: the others are not judged.
    assert_eq!(mask(&[Some(&one), Some(&one)], &[Some(&one)]), "T?");
}

#[test]
fn times_and_memory_read_back_exactly() {
    assert_eq!(format_ms(1.5), "1500");
    assert_eq!(format_ms(0.0), "0");
    assert_eq!(format_ms(0.123456), "123.456");
    assert_eq!(format_mb(40 << 20), "40");
    assert_eq!(format_mb(12_582_912 + 1), "12.000000953674316");
    for bytes in [0u64, 1, 1_234_567, 40 << 20, (1 << 40) + 3] {
        let mb: f64 = format_mb(bytes).parse().unwrap();
        assert_eq!((mb * (1u64 << 20) as f64) as u64, bytes);
    }
    assert_eq!(format_number(-32.0), "-32");
    assert_eq!(format_number(0.5), "0.5");
    assert_eq!(format_number(-0.0000001), "0");
}

#[test]
fn status_is_normal_or_how_the_run_ended() {
    assert_eq!(status(Termination::Exit { code: 0 }), "normal");
    assert_eq!(status(Termination::CpuLimit), "timeout");
    assert_eq!(status(Termination::Exit { code: 3 }), "exit 3");
    assert_eq!(status(Termination::Signal { signal: 9 }), "signal 9");
}

#[test]
fn verdict_categories_and_references() {
    assert_eq!(
        verdict_reference("StateSpace", "STATES"),
        ("StateSpace".to_string(), "STATE_SPACE STATES".to_string())
    );
    assert_eq!(
        verdict_reference("UpperBounds", "M-PT-1-UpperBounds-03"),
        (
            "UpperBounds".to_string(),
            "M-PT-1-UpperBounds-03".to_string()
        )
    );
    assert_eq!(
        verdict_reference("OneSafe", "OneSafe"),
        ("OneSafe".to_string(), "OneSafe".to_string())
    );
    assert_eq!(verdict_value(Some(&Value::Bool(true))), "true");
    assert_eq!(verdict_value(Some(&Value::Bool(false))), "false");
    assert_eq!(verdict_value(Some(&Value::Inf)), "+inf");
    assert_eq!(verdict_value(Some(&int(42))), "42");
    assert_eq!(verdict_value(None), "unknown");
    assert_eq!(
        verdict_explanation(true, false, TrustCase::WeightedMajority, 3, 4),
        "trusted value (rule E-3.1, weighted-majority); 3 of the 4 tools that computed it gave it"
    );
    assert_eq!(
        verdict_explanation(false, false, TrustCase::NoAnswer, 0, 0),
        "no trusted value (rule E-3.1, no-answer); 0 tools computed it"
    );
    assert_eq!(
        verdict_explanation(true, true, TrustCase::GroundTruth, 1, 2),
        "expected answer given with the task; 1 of the 2 tools that computed it gave it"
    );
    assert_eq!(
        verdict_explanation(false, true, TrustCase::GroundTruth, 0, 1),
        "no expected answer given with the task; 1 tool computed it"
    );
    assert_eq!(
        verdict_explanation(true, false, TrustCase::Reference, 1, 2),
        "the contest's reference answer; 1 of the 2 tools that computed it gave it"
    );
}

#[test]
fn model_names_that_cannot_name_a_file_are_refused() {
    assert_eq!(model_file_stem("Philosophers").unwrap(), "Philosophers");
    for bad in ["", ".", "..", "a/b", "a\\b"] {
        assert!(model_file_stem(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn verdict_files_escape_what_they_carry() {
    let model = ModelVerdicts {
        model: "A&B<\"C\">".to_string(),
        verdicts: vec![VerdictEntry {
            instance: "A&B-PT-1".to_string(),
            category: "StateSpace".to_string(),
            reference: "STATE_SPACE STATES".to_string(),
            value: "9".to_string(),
            explanation: "a < b & c".to_string(),
        }],
    };
    let text = String::from_utf8(verdicts_xml(&model).unwrap()).unwrap();
    assert!(
        text.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>"),
        "{text}"
    );
    assert!(
        text.contains("<modelreference modelname=\"A&amp;B&lt;&quot;C&quot;&gt;\"/>"),
        "{text}"
    );
    assert!(
        text.contains("<modelinstance reference=\"A&amp;B-PT-1\"/>"),
        "{text}"
    );
    assert!(
        text.contains("<explanation>a &lt; b &amp; c</explanation>"),
        "{text}"
    );
    // Well-formed, and reads back to what was written.
    let doc = roxmltree::Document::parse(&text).unwrap();
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "toolspecific");
    assert_eq!(root.attribute("tool"), Some("propertiesverdict"));
    assert_eq!(root.attribute("version"), Some("2.0"));
    let reference = root.children().find(|n| n.is_element()).unwrap();
    assert_eq!(reference.attribute("modelname"), Some("A&B<\"C\">"));
    let verdict = root.children().find(|n| n.has_tag_name("verdict")).unwrap();
    assert_eq!(verdict.attribute("category"), Some("StateSpace"));
    assert_eq!(verdict.attribute("value"), Some("9"));

    let bad = ModelVerdicts {
        model: "M".to_string(),
        verdicts: vec![VerdictEntry {
            instance: "M\u{1}".to_string(),
            ..model.verdicts[0].clone()
        }],
    };
    assert!(matches!(
        verdicts_xml(&bad),
        Err(ExportError::NotXml {
            what: "instance",
            ..
        })
    ));
}
