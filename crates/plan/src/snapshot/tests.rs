//! Tests of the plan snapshot: its fingerprint, and a snapshot saved and loaded back, damaged,
//! cut or too fresh.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::Arc;

use mccbuild_core::digest::Digest;

use super::fingerprint::{DPKG_STATUS, read_by_plan};
use super::layout::{ExamKept, HEADER, Header, RUN_BYTES, SNAPSHOT};
use super::value_ids::{coded_ids, exam_instances_of};
use super::*;
use crate::archive::ArchiveLimits;
use crate::digest_cache::DigestCache;
use crate::manifest::Contest;
use crate::plan::{ExamInstance, Plan, RunOrigin};

const RESULTS: &str = "tool,Input,Examination,results\n\
    lola,Other-PT-1,ReachabilityDeadlock,T\n\
    lola,Other-PT-1,StateSpace,6 8 1 4\n";

/// A contest in a temporary folder: two instance folders copied from the demo, a tool, a
/// results file whose rows are runs of a second tool, the repository's 2026 rules.
fn contest_dir() -> tempfile::TempDir {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = tempfile::tempdir().unwrap();
    for instance in ["Deadlock-PT-1", "TokenRing-PT-4"] {
        let to = dir.path().join("models").join(instance);
        fs::create_dir_all(&to).unwrap();
        for entry in fs::read_dir(repo.join("models").join(instance)).unwrap() {
            let entry = entry.unwrap();
            fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
    let tool = dir.path().join("tools/t");
    fs::create_dir_all(tool.join("lib")).unwrap();
    fs::write(tool.join("BenchKit_head.sh"), "#!/bin/sh\necho hi\n").unwrap();
    fs::set_permissions(
        tool.join("BenchKit_head.sh"),
        fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    fs::write(tool.join("lib/a.txt"), "a").unwrap();
    fs::write(dir.path().join("results.csv"), RESULTS).unwrap();
    write_manifest(dir.path(), "time_s = 10");
    dir
}

fn write_manifest(dir: &Path, limits: &str) {
    let rules = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../rules/mcc-2026.toml");
    fs::write(
        dir.join("contest.toml"),
        format!(
            "[contest]\nname = \"s\"\nrules = \"{}\"\nresults = [\"results.csv\"]\n\n\
             [limits]\n{limits}\n\n\
             [[model]]\nname = \"Deadlock\"\ninstances = [\"models/Deadlock-PT-1\"]\n\n\
             [[model]]\nname = \"TokenRing\"\ninstances = [\"models/TokenRing-PT-4\"]\n\n\
             [[tool]]\nname = \"t\"\ndir = \"tools/t\"\nexaminations = [\"all\"]\n",
            rules.display()
        ),
    )
    .unwrap();
}

fn executor() -> Vec<(String, String)> {
    vec![("kind".to_string(), "test".to_string())]
}

fn load(dir: &Path) -> Contest {
    Contest::load(&dir.join("contest.toml")).expect("the test contest")
}

fn fingerprint(dir: &Path) -> Digest {
    let exe = dir.join("contest.toml");
    Fingerprint::of(&load(dir), &executor(), ArchiveLimits::default(), &exe).digest
}

/// Lets the change time of whatever is written next differ from the last one's (the
/// file system's clock ticks coarser than its nanoseconds).
fn tick() {
    std::thread::sleep(std::time::Duration::from_millis(20));
}

#[test]
fn every_input_of_the_plan_changes_the_fingerprint() {
    let dir = contest_dir();
    let d = dir.path();
    let mut seen = vec![fingerprint(d)];
    assert_eq!(
        fingerprint(d),
        seen[0],
        "the same inputs, the same fingerprint"
    );
    let mut changed = |what: &str, change: &dyn Fn()| {
        tick();
        change();
        let now = fingerprint(d);
        assert!(
            !seen.contains(&now),
            "{what} left the fingerprint as it was"
        );
        seen.push(now);
    };
    changed("the manifest", &|| write_manifest(d, "time_s = 11"));
    changed("a tool file's content", &|| {
        fs::write(d.join("tools/t/lib/a.txt"), "b").unwrap()
    });
    changed("a tool file's mode", &|| {
        fs::set_permissions(
            d.join("tools/t/lib/a.txt"),
            fs::Permissions::from_mode(0o755),
        )
        .unwrap()
    });
    changed("a file added to a tool", &|| {
        fs::write(d.join("tools/t/lib/b.txt"), "b").unwrap()
    });
    changed("a file renamed in a tool", &|| {
        fs::rename(d.join("tools/t/lib/b.txt"), d.join("tools/t/lib/c.txt")).unwrap()
    });
    changed("an instance's formula file", &|| {
        let f = d.join("models/Deadlock-PT-1/UpperBounds.xml");
        let text = fs::read_to_string(&f).unwrap();
        fs::write(&f, text.replace("UpperBounds-00", "UpperBounds-99")).unwrap();
    });
    changed("a file added to an instance", &|| {
        fs::write(d.join("models/TokenRing-PT-4/NewModel"), "").unwrap()
    });
    changed("a row of the results file", &|| {
        fs::write(d.join("results.csv"), RESULTS.replace("6 8 1 4", "6 8 1 5")).unwrap()
    });
    let contest = load(d);
    let exe = d.join("contest.toml");
    let base = Fingerprint::of(&contest, &executor(), ArchiveLimits::default(), &exe);
    let other_executor = vec![("kind".to_string(), "qemu".to_string())];
    let limits = ArchiveLimits {
        max_entries: 7,
        ..ArchiveLimits::default()
    };
    for (what, other) in [
        (
            "the executor",
            Fingerprint::of(&contest, &other_executor, ArchiveLimits::default(), &exe),
        ),
        (
            "the archive limits",
            Fingerprint::of(&contest, &executor(), limits, &exe),
        ),
        (
            "the binary",
            Fingerprint::of(
                &contest,
                &executor(),
                ArchiveLimits::default(),
                &d.join("results.csv"),
            ),
        ),
    ] {
        assert_ne!(
            other.digest, base.digest,
            "{what} left the fingerprint as it was"
        );
    }
}

/// The remembered no-op's key has the stamps of what every command reads besides the plan
/// (crates/engine/src/noop.rs): the reference answers (a folder, every file of it) and the
/// corrections.
#[test]
fn the_answers_fingerprint_sees_the_reference_and_the_corrections() {
    let dir = contest_dir();
    let d = dir.path();
    let manifest = d.join("contest.toml");
    let text = fs::read_to_string(&manifest).unwrap().replace(
        "[contest]\n",
        "[contest]\ncorrections = \"corrections.csv\"\n",
    );
    fs::write(
        &manifest,
        format!("{text}\n[reference]\nanswers = \"oracle\"\n"),
    )
    .unwrap();
    fs::create_dir_all(d.join("oracle")).unwrap();
    fs::write(d.join("oracle/StateSpace.out"), "a").unwrap();
    fs::write(d.join("corrections.csv"), "instance,examination,id,value\n").unwrap();
    let answers = || answers_fingerprint(&load(d)).digest;
    let mut seen = vec![answers()];
    assert_eq!(answers(), seen[0]);
    for (what, path, text) in [
        ("a reference file", "oracle/StateSpace.out", "b"),
        ("a file added to the reference", "oracle/Other.out", "c"),
        (
            "the corrections",
            "corrections.csv",
            "instance,examination,id,value\nx,y,z,1\n",
        ),
    ] {
        tick();
        fs::write(d.join(path), text).unwrap();
        let now = answers();
        assert!(!seen.contains(&now), "{what} left it as it was");
        seen.push(now);
    }
    assert!(
        answers_fingerprint(&load(d)).racy,
        "files written a moment ago"
    );
}

#[test]
fn dpkg_is_read_only_for_tools_naming_host_packages() {
    let dir = contest_dir();
    let mut contest = load(dir.path());
    let dpkg = |contest: &Contest| {
        read_by_plan(contest)
            .iter()
            .any(|(p, _)| p == Path::new(DPKG_STATUS))
    };
    assert!(!dpkg(&contest));
    contest.tools[0].host_packages = vec!["coreutils".to_string()];
    assert!(dpkg(&contest));
}

fn build(dir: &Path) -> Plan {
    Plan::build_runs(
        load(dir),
        &executor(),
        &mut DigestCache::in_memory(),
        ArchiveLimits::default(),
    )
    .expect("the test contest plans")
}

fn trusted(dir: &Path) -> Fingerprint {
    Fingerprint {
        racy: false,
        ..Fingerprint::of(
            &load(dir),
            &executor(),
            ArchiveLimits::default(),
            &dir.join("contest.toml"),
        )
    }
}

/// What a plan says, for comparing a plan with its snapshot.
fn said(plan: &Plan) -> String {
    format!(
        "{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{}",
        plan.runs,
        plan.exam_instances,
        plan.instances,
        plan.models,
        plan.tools,
        plan.problems,
        plan.left_out,
        plan.contest.tools.len()
    )
}

#[test]
fn a_snapshot_gives_back_the_plan_it_kept() {
    let dir = contest_dir();
    let plan = build(dir.path());
    assert!(
        plan.runs
            .iter()
            .any(|r| matches!(r.origin, RunOrigin::Imported { .. }))
    );
    assert!(plan.runs.iter().any(|r| r.origin == RunOrigin::Executed));
    let path = dir.path().join("plan.bin");
    let fp = trusted(dir.path());
    save(&path, &fp, &plan, 1, [7; 32]).unwrap();
    let (back, binary) = load_snapshot(&path, &fp, dir.path()).expect("a hit");
    assert_eq!(binary, [7; 32]);
    assert_eq!(said(&back), said(&plan));
    assert!(back.imported.is_none(), "the rows are not kept");
    let other = Fingerprint {
        digest: [1; 32],
        racy: false,
    };
    assert!(
        load_snapshot(&path, &other, dir.path()).is_none(),
        "another fingerprint"
    );
}

fn load_snapshot(path: &Path, fp: &Fingerprint, dir: &Path) -> Option<(Plan, Digest)> {
    super::load(path, load(dir), |_| Some(fp.clone())).1.ok()
}

#[test]
fn a_damaged_or_cut_snapshot_is_not_used() {
    let dir = contest_dir();
    let plan = build(dir.path());
    let path = dir.path().join("plan.bin");
    let fp = trusted(dir.path());
    save(&path, &fp, &plan, 1, [7; 32]).unwrap();
    let whole = fs::read(&path).unwrap();
    let header = Header::decode(&whole[..HEADER]).expect("a framed header");
    assert_eq!(header.made_under, fp.digest);
    let runs_at = HEADER + header.payload_len as usize;
    assert_eq!(whole.len(), runs_at + plan.runs.len() * RUN_BYTES);
    // The framed header: magic 0..8, version 8..12, the binding's length 12..16 (no binding),
    // its payload's length 16..24 and digest 24..56; then its payload: the fingerprint 56..88,
    // the digests of the payload 88..120 and of the runs 120..152, the counts 152..168.
    assert_eq!(HEADER, 168);
    // A byte flipped in the header (the magic, the version, the frame's lengths and digest, the
    // fingerprint, the sections' digests, the counts), in the payload (its tables, the value ids
    // at its end) and in the runs (a key, an index, an origin).
    for at in [
        3,
        9,
        13,
        18,
        30,
        60,
        100,
        130,
        155,
        163,
        HEADER + 1,
        runs_at - 3,
        runs_at + 5,
        runs_at + RUN_BYTES + 40,
        runs_at + 2 * RUN_BYTES + 48,
        whole.len() - 1,
    ] {
        let mut bytes = whole.clone();
        bytes[at] ^= 0x20;
        fs::write(&path, &bytes).unwrap();
        assert!(
            load_snapshot(&path, &fp, dir.path()).is_none(),
            "byte {at} flipped"
        );
    }
    for len in [
        0,
        10,
        56,
        HEADER - 1,
        HEADER,
        runs_at,
        runs_at + 7,
        whole.len() - 1,
    ] {
        fs::write(&path, &whole[..len]).unwrap();
        assert!(
            load_snapshot(&path, &fp, dir.path()).is_none(),
            "cut at {len}"
        );
    }
    let mut longer = whole.clone();
    longer.push(0);
    fs::write(&path, &longer).unwrap();
    assert!(
        load_snapshot(&path, &fp, dir.path()).is_none(),
        "a byte more"
    );
    // A snapshot of the version before (the same magic) is made again.
    let mut before = whole.clone();
    before[8..12].copy_from_slice(&(SNAPSHOT.version - 1).to_le_bytes());
    fs::write(&path, &before).unwrap();
    assert!(
        load_snapshot(&path, &fp, dir.path()).is_none(),
        "the version before"
    );
    fs::write(&path, &whole).unwrap();
    assert!(load_snapshot(&path, &fp, dir.path()).is_some());
}

/// Value ids are kept front-coded: ids that share a start (or are the start of the one
/// before, or empty, or share part of a character) come back as they were; the rules' ids
/// are taken from the contest.
#[test]
fn value_ids_come_back_as_they_were() {
    let dir = contest_dir();
    let edition = load(dir.path()).edition;
    let formula = edition
        .examinations
        .iter()
        .position(|e| e.formula_file.is_some())
        .unwrap();
    let rules = edition
        .examinations
        .iter()
        .position(|e| e.formula_file.is_none())
        .unwrap();
    let exam_instance = |exam: usize, ids: &[&str], scored: usize| ExamInstance {
        instance: 0,
        exam,
        ids: ids.iter().map(|id| Arc::from(*id)).collect(),
        scored,
        truth: None,
        reference: None,
        corrections: None,
    };
    let rules_ids: Vec<String> = edition.examinations[rules]
        .answer_ids()
        .iter()
        .map(|id| id.to_string())
        .collect();
    let rules_ids: Vec<&str> = rules_ids.iter().map(String::as_str).collect();
    let cases = [
        exam_instance(
            formula,
            &[
                "Net-PT-01-RC-00",
                "Net-PT-01-RC-01",
                "Net-PT-01-RC-10",
                "Net-PT-01",
            ],
            4,
        ),
        exam_instance(formula, &["", "é", "éa", "èa", "e", "", "x"], 7),
        exam_instance(formula, &["日本-1", "日本-2", "日-3", "月"], 2),
        exam_instance(rules, &rules_ids, edition.examinations[rules].values.len()),
        // The rules' ids but fewer scored: kept as written.
        exam_instance(rules, &rules_ids, 0),
        exam_instance(rules, &["other"], 1),
    ];
    let mut bytes = Vec::new();
    let kept: Vec<ExamKept> = cases
        .iter()
        .map(|ei| ExamKept {
            instance: ei.instance,
            exam: ei.exam,
            ids: coded_ids(ei, &edition, &mut bytes),
            scored: ei.scored,
            truth: None,
        })
        .collect();
    assert!(kept[3].ids.is_none(), "the rules' ids are not written");
    assert!(kept[4].ids.is_some() && kept[5].ids.is_some());
    let back = exam_instances_of(&kept, &bytes, &edition).expect("whole");
    assert_eq!(format!("{back:?}"), format!("{cases:?}"));
    // Cut short, or pointing past the end: not used.
    assert!(exam_instances_of(&kept[..3], &bytes[..bytes.len() / 2], &edition).is_none());
    let odd = |exam: usize, ids: Option<(u32, u64)>| {
        let odd = ExamKept {
            instance: 0,
            exam,
            ids,
            scored: 0,
            truth: None,
        };
        exam_instances_of(&[odd], &bytes, &edition)
    };
    assert!(
        odd(formula, Some((1, bytes.len() as u64 + 1))).is_none(),
        "past the end"
    );
    assert!(odd(formula, Some((1, 0))).is_some());
    assert!(
        odd(edition.examinations.len(), None).is_none(),
        "an examination the rules do not have"
    );
}

#[test]
fn no_snapshot_is_kept_while_an_input_is_too_fresh_to_trust() {
    let dir = contest_dir();
    let fp = Fingerprint::of(
        &load(dir.path()),
        &executor(),
        ArchiveLimits::default(),
        &dir.path().join("contest.toml"),
    );
    assert!(fp.racy, "files written a moment ago");
    let path = dir.path().join("plan.bin");
    save(&path, &fp, &build(dir.path()), 1, [7; 32]).unwrap();
    assert!(!path.exists());
}
