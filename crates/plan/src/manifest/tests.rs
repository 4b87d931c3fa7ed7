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

/// `inputs_per_model = n` keeps the first `n` instances, by name, of each model's PT and COL
/// instances; 0 is a problem at its place.
#[test]
fn inputs_per_model_keeps_the_first_instances_of_each_model() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../contest.toml");
    let manifest = |per_model: &str| {
        format!(
            "[contest]\nname = \"t\"\nrules = \"rules/mcc-2026.toml\"\ninputs = \"models/*\"\n\
             {per_model}\n[[tool]]\nname = \"explorer\"\ndir = \"tools/explorer\"\n"
        )
    };
    let instances = |contest: &Contest| {
        let mut names: Vec<String> = contest
            .models
            .iter()
            .flat_map(|m| m.instances.iter().map(|i| i.name.clone()))
            .collect();
        names.sort();
        names
    };
    let all = Contest::parse(&path, &manifest("")).unwrap();
    assert!(instances(&all).contains(&"Philosophers-PT-000003".to_string()));
    let first = Contest::parse(&path, &manifest("inputs_per_model = 1")).unwrap();
    assert_eq!(
        instances(&first),
        [
            "Deadlock-PT-1",
            "Philosophers-PT-000002",
            "ProdCons-PT-2",
            "TokenRing-PT-4",
            "Unbounded-PT-1"
        ]
    );
    assert!(!first.same_plan_as(&all));
    let two = Contest::parse(&path, &manifest("inputs_per_model = 2")).unwrap();
    assert_eq!(instances(&two), instances(&all));

    let problems = Contest::parse(&path, &manifest("inputs_per_model = 0")).unwrap_err();
    assert!(
        problems
            .to_string()
            .contains("inputs_per_model must be at least 1"),
        "{problems}"
    );
}

/// Of each model, the first instances of each kind (PT, COL) by name, whatever their order.
#[test]
fn first_per_model_keeps_each_kinds_first_instances_by_name() {
    let decl = |name: &str| InstanceDecl {
        name: name.to_string(),
        source: InstanceSource::Folder(format!("/m/{name}").into()),
    };
    let names =
        |kept: Vec<InstanceDecl>| -> Vec<String> { kept.into_iter().map(|i| i.name).collect() };
    let model = vec![
        decl("M-PT-003"),
        decl("M-COL-010"),
        decl("M-PT-001"),
        decl("M-COL-005"),
        decl("M-PT-002"),
    ];
    assert_eq!(
        names(super::models::first_per_model(model.clone(), 1)),
        ["M-COL-005", "M-PT-001"]
    );
    assert_eq!(
        names(super::models::first_per_model(model, 2)),
        ["M-COL-005", "M-COL-010", "M-PT-001", "M-PT-002"]
    );
}
