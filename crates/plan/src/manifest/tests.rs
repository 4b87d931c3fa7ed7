//! Unit tests of the manifest reader.

use std::path::Path;

use super::*;

/// The demo's manifest edited: scoring settings keep the plan, anything else does not.
#[test]
fn only_scoring_settings_keep_the_plan() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../contest.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let base = Contest::parse(&path, &text).unwrap();
    let edited = |from: &str, to: &str| {
        assert!(text.contains(from), "{from}");
        Contest::parse(&path, &text.replacen(from, to, 1)).unwrap()
    };
    assert!(base.same_plan_as(&Contest::parse(&path, &format!("{text}\n# x\n")).unwrap()));
    assert!(base.same_plan_as(&edited("name = \"mccbuild demo\"", "name = \"demo\"")));
    let reference = edited(
        "dir = \"tools/pm4py\"",
        "dir = \"tools/pm4py\"\nkind = \"reference\"\nfamily = \"pm\"",
    );
    assert_ne!(reference.tools, base.tools);
    assert!(base.same_plan_as(&reference));
    // In the runs' keys, or which runs there are: planned again.
    assert!(!base.same_plan_as(&edited("time_s = 5", "time_s = 20")));
    assert!(!base.same_plan_as(&edited(
        "examinations = [\"StateSpace\", \"GlobalProperties\", \"UpperBounds\"]",
        "examinations = [\"StateSpace\"]"
    )));
}

#[test]
fn mcc_model_names() {
    assert_eq!(
        mcc_model_name("Philosophers-PT-000005"),
        Some("Philosophers")
    );
    assert_eq!(
        mcc_model_name("Philosophers-COL-000005"),
        Some("Philosophers")
    );
    assert_eq!(mcc_model_name("Referendum-COL-0010"), Some("Referendum"));
    assert_eq!(mcc_model_name("ASLink-PT-01a"), Some("ASLink"));
    assert_eq!(mcc_model_name("NoNaming"), None);
    assert_eq!(mcc_model_name("-PT-1"), None);
}

/// Found by the manifest property (a million manifests): `[limits] memory_mb = 2` and other
/// values checked after reading were reported without their line.
#[test]
fn limits_problems_are_at_their_line() {
    let text =
        "[contest]\nname = \"x\"\n\n[limits]\ntime_s = 0\nmemory_mb = 2\n\n[executor]\njobs = 0\n";
    let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../contest.toml"));
    let text = text.replace(
        "name = \"x\"\n",
        "name = \"x\"\nrules = \"rules/mcc-2026.toml\"\n",
    );
    let problems = Contest::parse(path, &text).unwrap_err();
    let line_of = |needle: &str| {
        problems
            .0
            .iter()
            .find(|p| p.message.contains(needle))
            .unwrap_or_else(|| panic!("no `{needle}` in {problems}"))
            .location
            .map(|l| l.line)
    };
    assert_eq!(line_of("time_s must be positive"), Some(6));
    assert_eq!(line_of("memory_mb = 2"), Some(7));
    assert_eq!(line_of("jobs must be at least 1"), Some(10));
}
