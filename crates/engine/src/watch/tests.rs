//! The pure parts of `watch`: what an update says changed, which file events are changes of
//! the plan's inputs. (The loop itself is tested through the binary: tests/it/watch.rs.)

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use mccbuild_scoring::scores::ScoresReport;
use notify::event::{AccessKind, CreateKind, EventKind, MetadataKind, ModifyKind, RemoveKind};

use super::files::{InputChange, is_change, is_input};
use super::update::{Update, counts, podium_changes, since};

/// A scores report with these podiums (nothing else).
fn report(podiums: &[(&str, &[&str])]) -> ScoresReport {
    let podiums: BTreeMap<&str, &[&str]> = podiums.iter().copied().collect();
    serde_json::from_value(serde_json::json!({
        "contest": "c", "edition": "e", "confidence": {}, "scores": {},
        "podiums": podiums, "awards": {}, "standings": {}
    }))
    .expect("a scores report")
}

#[test]
fn only_the_podiums_that_changed_are_listed_with_before_and_after() {
    let before = report(&[("StateSpace", &["a", "b"]), ("LTL", &["c"])]);
    let after = report(&[
        ("StateSpace", &["b", "a"]),
        ("LTL", &["c"]),
        ("CTL", &["d"]),
    ]);
    let changes = podium_changes(&before, &after);
    assert_eq!(changes.len(), 2, "{changes:?}");
    assert_eq!(
        changes["StateSpace"],
        (
            vec!["a".to_string(), "b".into()],
            vec!["b".to_string(), "a".into()]
        )
    );
    // A category new in the report: it had no podium before.
    assert_eq!(changes["CTL"], (Vec::new(), vec!["d".to_string()]));
    assert!(podium_changes(&after, &after).is_empty());
}

#[test]
fn executed_queries_are_counted_by_name() {
    let names = ["exam_scores", "podiums", "exam_scores"].map(String::from);
    let counted = counts(names.to_vec());
    assert_eq!(counted["exam_scores"], 2);
    assert_eq!(counted["podiums"], 1);
    assert_eq!(counted.len(), 2);
    assert!(counts(Vec::new()).is_empty());
}

#[test]
fn latency_is_measured_from_a_past_write_only() {
    assert_eq!(since(None), None);
    let ms = since(Some(SystemTime::now() - Duration::from_millis(1500))).unwrap();
    assert!((1500.0..60_000.0).contains(&ms), "{ms}");
    // A write time in the future (another clock): no latency rather than a negative one.
    assert_eq!(
        since(Some(SystemTime::now() + Duration::from_secs(60))),
        None
    );
}

#[test]
fn the_start_update_is_update_0_with_the_scores_and_nothing_changed() {
    let scores = report(&[("StateSpace", &["a"])]);
    let start = Update::start(&scores);
    let json = serde_json::to_value(&start).unwrap();
    assert_eq!(json["update"], 0);
    assert_eq!(json["cause"], "start");
    assert_eq!(json["records"], 0);
    assert!(json["latency_ms"].is_null());
    // No site without --serve or --out: the key is left out.
    assert!(json.get("site").is_none(), "{json}");
    assert_eq!(json["scores"]["podiums"]["StateSpace"][0], "a");
}

#[test]
fn writes_creations_renames_and_removals_are_changes_reads_and_touches_are_not() {
    for kind in [
        EventKind::Create(CreateKind::File),
        EventKind::Remove(RemoveKind::File),
        EventKind::Modify(ModifyKind::Data(notify::event::DataChange::Content)),
        EventKind::Modify(ModifyKind::Name(notify::event::RenameMode::To)),
    ] {
        assert!(is_change(&kind), "{kind:?}");
    }
    for kind in [
        EventKind::Access(AccessKind::Read),
        EventKind::Modify(ModifyKind::Metadata(MetadataKind::AccessTime)),
        EventKind::Any,
    ] {
        assert!(!is_change(&kind), "{kind:?}");
    }
}

#[test]
fn inputs_are_the_plans_files_and_folders_never_the_store() {
    let store = Path::new("/c/cache");
    let inputs: Vec<PathBuf> = ["/c/contest.toml", "/c/tools/a", "/c/cache/tools/b"]
        .iter()
        .map(PathBuf::from)
        .collect();
    assert!(is_input(Path::new("/c/contest.toml"), store, &inputs));
    assert!(is_input(Path::new("/c/tools/a/run.sh"), store, &inputs));
    assert!(!is_input(Path::new("/c/notes.txt"), store, &inputs));
    // What mccbuild writes in its store is never an input, even under an input's folder.
    assert!(!is_input(Path::new("/c/cache/tools/b/x"), store, &inputs));
    assert!(!is_input(
        Path::new("/c/cache/runs/ab/cd.json"),
        store,
        &inputs
    ));
}

#[test]
fn input_changes_are_ordered_by_what_they_cost() {
    assert!(InputChange::None < InputChange::Contest);
    assert!(InputChange::Contest < InputChange::Other);
    assert_eq!(
        InputChange::None.max(InputChange::Other),
        InputChange::Other
    );
}
