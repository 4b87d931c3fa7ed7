//! The results key's tests: every ingredient moves it, its parts do not depend on the threads;
//! and the demo plan past two parts of runs, which the session's tests share.

use super::key::runs_parts;
use super::*;
use mccbuild_core::digest::Digest;
use mccbuild_plan::Plan;
use mccbuild_plan::digest_cache::DigestCache;
use mccbuild_plan::instance::ArchiveLimits;
use mccbuild_plan::manifest::Contest;

/// The demo contest's plan, its runs repeated (each copy with other keys) past two parts
/// of the results key.
pub(crate) fn demo_plan_past_two_parts() -> Plan {
    // The demo contest of the repository (two folders above this crate).
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the repository");
    let contest = Contest::load(&root.join("contest.toml")).expect("the demo contest");

    let executor = vec![("kind".to_string(), "test".to_string())];
    let mut plan = Plan::build(
        contest,
        &executor,
        &mut DigestCache::in_memory(),
        ArchiveLimits::default(),
    )
    .expect("the demo plans");
    let demo = plan.runs.clone();
    // Hundreds of copies (the demo has ~200 runs): each numbered in two bytes of its keys.
    let mut copy = 0u16;
    while plan.runs.len() <= 2 * RUNS_PER_PART {
        copy += 1;
        plan.runs.extend(demo.iter().cloned().map(|mut run| {
            let [low, high] = copy.to_le_bytes();
            run.key.0[0] ^= low;
            run.key.0[1] = low;
            run.key.0[2] = high;
            run
        }));
    }
    plan
}

/// [`demo_plan_past_two_parts`], and a record digest for most runs.
fn plan_and_digests() -> (Plan, Vec<Option<Digest>>) {
    let plan = demo_plan_past_two_parts();
    let digests = (0..plan.runs.len())
        .map(|i| (i % 5 != 0).then(|| *blake3::hash(&i.to_le_bytes()).as_bytes()))
        .collect();
    (plan, digests)
}

#[test]
fn every_ingredient_of_the_runs_changes_the_results_key() {
    let (mut plan, mut digests) = plan_and_digests();
    let binary = [3; 32];
    let base = results_key(&plan, &digests, &binary);
    assert_eq!(
        base,
        results_key(&plan, &digests, &binary),
        "the same inputs"
    );
    let mut seen = vec![base];
    let mut changed = |what: &str, key: Digest| {
        assert!(!seen.contains(&key), "{what} left the key as it was");
        seen.push(key);
    };
    changed("the binary", results_key(&plan, &digests, &[4; 32]));
    // In the first part, in a later one, the very last run.
    for i in [7, RUNS_PER_PART + 11, plan.runs.len() - 1] {
        let was = digests[i];
        digests[i] = Some([i as u8; 32]);
        changed("a record's digest", results_key(&plan, &digests, &binary));
        digests[i] = None;
        changed("a record gone", results_key(&plan, &digests, &binary));
        // The key of a run not stored (a stored run's key is in its record, whose
        // digest is in the key).
        plan.runs[i].key.0[9] ^= 1;
        changed("a run's key", results_key(&plan, &digests, &binary));
        plan.runs[i].key.0[9] ^= 1;
        digests[i] = was;
        plan.runs[i].tool = (plan.runs[i].tool + 1) % plan.contest.tools.len();
        changed("a run's tool", results_key(&plan, &digests, &binary));
        plan.runs[i].exam_instance += 1;
        changed(
            "a run's examination instance",
            results_key(&plan, &digests, &binary),
        );
    }
    let run = plan.runs.pop().unwrap();
    let digest = digests.pop().unwrap();
    changed("a run fewer", results_key(&plan, &digests, &binary));
    plan.runs.push(run);
    digests.push(digest);
    plan.runs.swap(3, 4);
    digests.swap(3, 4);
    changed(
        "two runs in another order",
        results_key(&plan, &digests, &binary),
    );
    plan.contest.name.push('!');
    changed("the contest's name", results_key(&plan, &digests, &binary));
    plan.instances[0].name.push('!');
    changed("an instance's name", results_key(&plan, &digests, &binary));
}

/// The runs are hashed in parts of a fixed size, whatever the number of threads.
#[test]
fn the_parts_of_the_results_key_do_not_depend_on_the_threads() {
    let (plan, digests) = plan_and_digests();
    let one = runs_parts(&plan, &digests, 1);
    assert_eq!(one.len(), plan.runs.len().div_ceil(RUNS_PER_PART));
    for threads in [2, 3, 8] {
        assert_eq!(
            runs_parts(&plan, &digests, threads),
            one,
            "{threads} threads"
        );
    }
}

/// A small report, as the scoring writes one.
fn report() -> mccbuild_scoring::scores::ScoresReport {
    serde_json::from_str(
        r#"{"contest":"c","edition":"e","confidence":{"t":0.5},"scores":{},"podiums":{},
            "awards":{},"standings":{}}"#,
    )
    .unwrap()
}

#[test]
fn a_report_reads_back_and_one_cut_damaged_or_of_the_old_format_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let store = mccbuild_store::Store::open(dir.path()).unwrap();
    let key = [5; 32];
    assert!(load(&store, &key).is_none(), "none yet");
    save(&store, &key, &report()).unwrap();
    assert_eq!(load(&store, &key), Some(report()));
    let whole = std::fs::read(path(&store, &key)).unwrap();
    std::fs::write(path(&store, &key), &whole[..whole.len() - 1]).unwrap();
    assert!(load(&store, &key).is_none(), "cut");
    let mut flipped = whole.clone();
    *flipped.last_mut().unwrap() ^= 1;
    std::fs::write(path(&store, &key), &flipped).unwrap();
    assert!(load(&store, &key).is_none(), "damaged");
    // The bare JSON of the format before the frame.
    std::fs::write(path(&store, &key), serde_json::to_vec(&report()).unwrap()).unwrap();
    assert!(load(&store, &key).is_none(), "the bare JSON");
}

#[test]
fn a_json_output_reads_back_and_one_cut_damaged_or_of_the_old_format_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let store = mccbuild_store::Store::open(dir.path()).unwrap();
    let key = [6; 32];
    let json: Vec<u8> = (0..3_000_000u32)
        .map(|i| b"{}[],\"0"[i as usize % 7])
        .collect();
    let mut printed = Vec::new();
    let mut tee = JsonTee::new(&mut printed, &store, &key);
    for chunk in json.chunks(70_000) {
        std::io::Write::write_all(&mut tee, chunk).unwrap();
    }
    tee.finish().unwrap();
    assert_eq!(printed, json, "printed as it is");
    let mut copied = Vec::new();
    load_json(&store, &key)
        .unwrap()
        .copy_to(&mut copied)
        .unwrap();
    assert_eq!(copied, json, "read back");
    let file = store
        .root()
        .join("scores-json")
        .join(format!("{}.json", mccbuild_core::digest::hex(&key)));
    let whole = std::fs::read(&file).unwrap();
    for at in [
        0,
        20,
        whole.len() - json.len() - 1,
        whole.len() / 2,
        whole.len() - 1,
    ] {
        let mut flipped = whole.clone();
        flipped[at] ^= 1;
        std::fs::write(&file, &flipped).unwrap();
        assert!(load_json(&store, &key).is_none(), "byte {at} flipped");
    }
    for len in [10, whole.len() - json.len(), whole.len() - 1] {
        std::fs::write(&file, &whole[..len]).unwrap();
        assert!(load_json(&store, &key).is_none(), "cut at {len}");
    }
    // The format before the frame: the JSON, then its digest.
    let old = [&json[..], blake3::hash(&json).as_bytes()].concat();
    std::fs::write(&file, old).unwrap();
    assert!(
        load_json(&store, &key).is_none(),
        "the JSON followed by its digest"
    );
    std::fs::write(&file, &whole).unwrap();
    assert!(load_json(&store, &key).is_some());
}
