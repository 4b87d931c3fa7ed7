//! Remembered scores (`mccbuild_scoring::memo`): a podium report made from a memo is the report
//! of a database built from every run, whatever changed since the memo was made: a run's record
//! (its model examination is computed again), a run elsewhere that moves a Confidence-dependent
//! decision (the model examinations reading it are computed again from their runs), nothing (all
//! remembered); and a damaged memo is not used.

use std::collections::HashMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::Arc;

use mccbuild_core::digest::Digest;
use mccbuild_core::outcome::{Response, Termination};
use mccbuild_core::{Measurement, RunKey, Value};
use mccbuild_plan::Plan;
use mccbuild_plan::digest_cache::DigestCache;
use mccbuild_plan::instance::ArchiveLimits;
use mccbuild_plan::manifest::Contest;
use mccbuild_scoring::db::ScoringDb;
use mccbuild_scoring::inputs::build_scoring;
use mccbuild_scoring::memo::{self, Memo, MemoUse};
use mccbuild_scoring::scores::{ScoresReport, scores_report};
use mccbuild_store::Summary;

/// Two models (Philosophers: two instances; TokenRing: one), four tools a, b, c, d, two
/// examinations (StateSpace, ReachabilityDeadlock): four model examinations.
fn contest_dir() -> tempfile::TempDir {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = tempfile::tempdir().unwrap();
    for instance in [
        "Philosophers-PT-000002",
        "Philosophers-PT-000003",
        "TokenRing-PT-4",
    ] {
        let to = dir.path().join("models").join(instance);
        std::fs::create_dir_all(&to).unwrap();
        for entry in std::fs::read_dir(repo.join("models").join(instance)).unwrap() {
            let entry = entry.unwrap();
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
    let mut manifest = format!(
        "[contest]\nname = \"memo\"\nrules = \"{}\"\n\n\
         [[model]]\nname = \"Philosophers\"\ninstances = [\"models/Philosophers-PT-*\"]\n\n\
         [[model]]\nname = \"TokenRing\"\ninstances = [\"models/TokenRing-PT-4\"]\n",
        repo.join("rules/mcc-2026.toml").display()
    );
    for tool in ["a", "b", "c", "d"] {
        let d = dir.path().join("tools").join(tool);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("BenchKit_head.sh"), "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(
            d.join("BenchKit_head.sh"),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
        manifest.push_str(&format!(
            "\n[[tool]]\nname = \"{tool}\"\ndir = \"tools/{tool}\"\n\
             examinations = [\"StateSpace\", \"ReachabilityDeadlock\"]\n"
        ));
    }
    std::fs::write(dir.path().join("contest.toml"), manifest).unwrap();
    dir
}

fn plan_of(dir: &Path) -> Plan {
    let contest = Contest::load(&dir.join("contest.toml")).expect("the test contest");
    Plan::build_runs(
        contest,
        &[("kind".to_string(), "test".to_string())],
        &mut DigestCache::in_memory(),
        ArchiveLimits::default(),
    )
    .expect("the test contest plans")
}

/// Every run's summary: each tool gives every value 1, 2, 3... (StateSpace) or TRUE
/// (ReachabilityDeadlock), except on Philosophers-PT-000002's STATES, where a says 5, b says 6
/// and c and d say nothing: two tools disagree, decided by the higher Confidence (E-3.1, third
/// situation), a tie while every Confidence is 1 (unknown).
fn summaries(plan: &Plan) -> HashMap<RunKey, Summary> {
    let tools = &plan.contest.tools;
    plan.runs
        .iter()
        .map(|run| {
            let ei = &plan.exam_instances[run.exam_instance];
            let instance = &plan.instances[ei.instance].name;
            let tool = tools[run.tool].name.as_str();
            let answers: Arc<[(u16, Value)]> = (0..ei.ids.len())
                .filter_map(|i| {
                    let value = if ei.ids.len() == 1 {
                        Value::Bool(true)
                    } else {
                        Value::Int(i as u64 + 1)
                    };
                    match (instance.as_str(), i, tool) {
                        ("Philosophers-PT-000002", 0, "a") if ei.ids.len() > 1 => {
                            Some((0, Value::Int(5)))
                        }
                        ("Philosophers-PT-000002", 0, "b") if ei.ids.len() > 1 => {
                            Some((0, Value::Int(6)))
                        }
                        ("Philosophers-PT-000002", 0, "c" | "d") if ei.ids.len() > 1 => None,
                        _ => Some((i as u16, value)),
                    }
                })
                .collect();
            let summary = Summary {
                response: Response::Answered,
                measurement: Measurement {
                    termination: Termination::Exit { code: 0 },
                    cpu_time_s: 1.0 + run.tool as f64,
                    wall_time_s: 1.0 + run.tool as f64,
                    peak_memory_bytes: 1 << 20,
                },
                answers,
            };
            (run.key, summary)
        })
        .collect()
}

/// A record digest for each summary (what the store's content digest stands for: another
/// summary, another digest).
fn records(plan: &Plan, summaries: &HashMap<RunKey, Summary>) -> Vec<Option<Digest>> {
    plan.runs
        .iter()
        .map(|run| {
            summaries
                .get(&run.key)
                .map(|s| *blake3::hash(format!("{:?}", s).as_bytes()).as_bytes())
        })
        .collect()
}

/// The report of a database built from every run.
fn full(plan: &Plan, summaries: &HashMap<RunKey, Summary>) -> ScoresReport {
    let (db, handles) = build_scoring(ScoringDb::default(), plan, |k| summaries.get(k));
    scores_report(plan, &db, &handles, false)
}

fn from_memo(
    plan: &Plan,
    summaries: &HashMap<RunKey, Summary>,
    kept: &Memo,
) -> (ScoresReport, Memo, MemoUse) {
    memo::podium_report(
        plan,
        &records(plan, summaries),
        |k| summaries.get(k),
        kept,
        &[9; 32],
    )
}

/// The run of `tool` on `instance`'s examination `exam`.
fn run_key(plan: &Plan, tool: &str, instance: &str, exam: &str) -> RunKey {
    let edition = &plan.contest.edition;
    plan.runs
        .iter()
        .find(|r| {
            let ei = &plan.exam_instances[r.exam_instance];
            plan.contest.tools[r.tool].name == tool
                && plan.instances[ei.instance].name == instance
                && edition.examinations[ei.exam].name == exam
        })
        .expect("the run is planned")
        .key
}

#[test]
fn a_report_from_remembered_scores_is_the_report_of_every_run() {
    let dir = contest_dir();
    let plan = plan_of(dir.path());
    assert!(memo::applies(&plan));
    let mut runs = summaries(&plan);
    let global = memo::global_digest(&plan, &[9; 32]);

    // Nothing remembered: the four model examinations are computed.
    let (report, first, uses) = from_memo(&plan, &runs, &Memo::default());
    assert_eq!(report, full(&plan, &runs));
    assert_eq!(
        uses,
        MemoUse {
            remembered: 0,
            computed: 4,
            revived: 0
        }
    );
    let states = &report.standings["StateSpace"];
    assert!(
        states.iter().all(|s| s.score == states[0].score),
        "the tie: STATES unknown"
    );

    // Kept in a file and read back: all four remembered, the same report.
    let path = dir.path().join("scores.bin");
    first.write(&path).unwrap();
    let read = Memo::read(&path, &global);
    assert_eq!(read.len(), 4);
    let (again, _, uses) = from_memo(&plan, &runs, &read);
    assert_eq!(again, report);
    assert_eq!(
        uses,
        MemoUse {
            remembered: 4,
            computed: 0,
            revived: 0
        }
    );

    // b wrong on TokenRing's STATES (7; a, c and d say 1, three agreeing tools: E-2.2's set V):
    // that model examination is computed again; b's Confidence drops below a's, so Philosophers-PT-000002's STATES is now a's 5
    // (E-3.1, third situation): the Philosophers StateSpace model examination, whose runs did
    // not change, is computed again from its runs because a decision it reads moved.
    let key = run_key(&plan, "b", "TokenRing-PT-4", "StateSpace");
    let mut wrong = runs[&key].clone();
    let mut answers = wrong.answers.to_vec();
    answers[0].1 = Value::Int(7);
    wrong.answers = answers.into();
    runs.insert(key, wrong);
    let (changed, second, uses) = from_memo(&plan, &runs, &read);
    assert_eq!(changed, full(&plan, &runs));
    assert_ne!(changed, report);
    assert_eq!(
        uses,
        MemoUse {
            remembered: 2,
            computed: 1,
            revived: 1
        }
    );
    // And from the memo of that state: nothing to compute.
    let (same, _, uses) = from_memo(&plan, &runs, &second);
    assert_eq!(same, changed);
    assert_eq!(uses.remembered, 4);

    // Another binary (or other rules, tools, ...): nothing of the memo is used.
    let (other, _, uses) = memo::podium_report(
        &plan,
        &records(&plan, &runs),
        |k| runs.get(k),
        &second,
        &[8; 32],
    );
    assert_eq!(other, changed);
    assert_eq!(uses.computed, 4);
}

#[test]
fn a_damaged_or_cut_memo_is_not_used() {
    let dir = contest_dir();
    let plan = plan_of(dir.path());
    let runs = summaries(&plan);
    let global = memo::global_digest(&plan, &[9; 32]);
    let (_, kept, _) = from_memo(&plan, &runs, &Memo::default());
    let path = dir.path().join("scores.bin");
    kept.write(&path).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(Memo::read(&path, &global).len(), 4);
    assert!(
        Memo::read(&path, &[0; 32]).is_empty(),
        "made for another contest, rules or binary"
    );
    for at in [0, 9, 20, 50, bytes.len() / 2, bytes.len() - 1] {
        let mut damaged = bytes.clone();
        damaged[at] ^= 0x40;
        std::fs::write(&path, &damaged).unwrap();
        assert!(
            Memo::read(&path, &global).is_empty(),
            "a byte flipped at {at}"
        );
    }
    for len in [0, 10, 76, bytes.len() - 1] {
        std::fs::write(&path, &bytes[..len]).unwrap();
        assert!(Memo::read(&path, &global).is_empty(), "cut to {len} bytes");
    }
    std::fs::remove_file(&path).unwrap();
    assert!(Memo::read(&path, &global).is_empty(), "none");
}

/// A memo of the former layout (its magic, schema 1 and the global digest unframed, then its
/// blocks) is not used: everything is computed again, without a word.
#[test]
fn a_memo_of_the_former_version_is_computed_again() {
    let dir = contest_dir();
    let plan = plan_of(dir.path());
    let runs = summaries(&plan);
    let global = memo::global_digest(&plan, &[9; 32]);
    let (_, kept, _) = from_memo(&plan, &runs, &Memo::default());
    let path = dir.path().join("scores.bin");
    kept.write(&path).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(&bytes[..8], b"MCCBSCR1");
    assert_eq!(Memo::read(&path, &global).len(), 4);
    // The frame's head: magic, version, binding length, the binding, payload length and digest.
    let blocks = &bytes[8 + 4 + 4 + 32 + 8 + 32..];
    let mut former = b"MCCBSCR1".to_vec();
    former.extend_from_slice(&1u32.to_le_bytes());
    former.extend_from_slice(&global);
    former.extend_from_slice(blocks);
    std::fs::write(&path, &former).unwrap();
    assert!(Memo::read(&path, &global).is_empty());
    let (report, _, uses) = from_memo(&plan, &runs, &Memo::read(&path, &global));
    assert_eq!((uses.remembered, uses.computed), (0, 4));
    let (fresh, _, _) = from_memo(&plan, &runs, &Memo::default());
    assert_eq!(report, fresh);
}

/// A memo read from a file and written again after a change appends the entries it computed
/// (one block); an append torn by a crash (the file cut inside it) loses only that block.
#[test]
fn a_change_is_appended_and_a_torn_append_loses_only_its_entries() {
    let dir = contest_dir();
    let plan = plan_of(dir.path());
    let mut runs = summaries(&plan);
    let global = memo::global_digest(&plan, &[9; 32]);
    let path = dir.path().join("scores.bin");
    let (_, first, _) = from_memo(&plan, &runs, &Memo::default());
    first.write(&path).unwrap();
    let whole = std::fs::read(&path).unwrap();

    let key = run_key(&plan, "c", "TokenRing-PT-4", "ReachabilityDeadlock");
    let mut other = runs[&key].clone();
    other.measurement.cpu_time_s += 1.0;
    runs.insert(key, other);
    let (report, second, uses) = from_memo(&plan, &runs, &Memo::read(&path, &global));
    assert_eq!(uses.computed, 1);
    second.write(&path).unwrap();
    let appended = std::fs::read(&path).unwrap();
    assert_eq!(
        &appended[..whole.len()],
        &whole[..],
        "appended, not written anew"
    );
    let read = Memo::read(&path, &global);
    assert_eq!(read.len(), 5, "the four first entries and the new one");
    let (again, _, uses) = from_memo(&plan, &runs, &read);
    assert_eq!((again, uses.remembered), (report.clone(), 4));

    // The append cut short (a crash while writing): the first block is still read.
    std::fs::write(&path, &appended[..appended.len() - 3]).unwrap();
    let torn = Memo::read(&path, &global);
    assert_eq!(torn.len(), 4);
    let (same, _, uses) = from_memo(&plan, &runs, &torn);
    assert_eq!(same, report);
    assert_eq!((uses.remembered, uses.computed), (3, 1));
}

/// Every ingredient of a model examination's digest changes it (docs/cache.md, "Remembered
/// scores"): what the first part (the global digest) holds, and each examination instance's.
#[test]
fn every_ingredient_changes_the_digests() {
    let dir = contest_dir();
    let plan = plan_of(dir.path());
    let runs = summaries(&plan);
    let records = records(&plan, &runs);
    let mut runs_of: Vec<Vec<usize>> = vec![Vec::new(); plan.exam_instances.len()];
    for (i, run) in plan.runs.iter().enumerate() {
        runs_of[run.exam_instance].push(i);
    }
    // The first model examination: the exam instances of the first one's model and exam.
    let first = &plan.exam_instances[0];
    let model = |e: usize| plan.instances[plan.exam_instances[e].instance].model;
    let members: Vec<usize> = (0..plan.exam_instances.len())
        .filter(|&e| model(e) == model(0) && plan.exam_instances[e].exam == first.exam)
        .collect();
    assert!(members.len() > 1, "a model examination of two instances");
    let global = memo::global_digest(&plan, &[9; 32]);
    let digest = |plan: &Plan, records: &[Option<Digest>]| {
        memo::examination_digest(&global, plan, &members, &runs_of, records)
    };
    let base = digest(&plan, &records);
    assert_eq!(
        base,
        digest(&plan, &records),
        "the same inputs, the same digest"
    );

    // The global part.
    assert_ne!(global, memo::global_digest(&plan, &[8; 32]), "the binary");
    let mut other = plan_of(dir.path());
    let mut edition = (*other.contest.edition).clone();
    edition.digest.push('x');
    other.contest.edition = Arc::new(edition);
    assert_ne!(global, memo::global_digest(&other, &[9; 32]), "the rules");
    let mut other = plan_of(dir.path());
    other.contest.tools.swap(0, 1);
    assert_ne!(
        global,
        memo::global_digest(&other, &[9; 32]),
        "the tools' order"
    );
    let mut other = plan_of(dir.path());
    other.contest.tools[2].name.push('x');
    assert_ne!(
        global,
        memo::global_digest(&other, &[9; 32]),
        "a tool's name"
    );
    let mut other = plan_of(dir.path());
    other.contest.tools[2].family.push('x');
    assert_ne!(
        global,
        memo::global_digest(&other, &[9; 32]),
        "a tool's family (E-2.2, E-3.1 with `[confidence] votes = \"family\"`)"
    );

    // Each examination instance's part.
    let r = runs_of[members[1]][2];
    let mut changed = records.clone();
    changed[r] = Some([1; 32]);
    assert_ne!(base, digest(&plan, &changed), "a run's record");
    changed[r] = None;
    assert_ne!(base, digest(&plan, &changed), "a run not stored");
    let with = |change: &dyn Fn(&mut Plan)| {
        let mut other = plan_of(dir.path());
        change(&mut other);
        digest(&other, &records)
    };
    let e = members[1];
    type Change = Box<dyn Fn(&mut Plan)>;
    let cases: Vec<(&str, Change)> = vec![
        (
            "a run's key",
            Box::new(move |p: &mut Plan| p.runs[r].key = RunKey([3; 32])),
        ),
        (
            "a run's tool",
            Box::new(move |p: &mut Plan| p.runs[r].tool = 0),
        ),
        (
            "the instance",
            Box::new(move |p: &mut Plan| p.exam_instances[e].instance += 1),
        ),
        (
            "the examination",
            Box::new(move |p: &mut Plan| p.exam_instances[e].exam += 1),
        ),
        (
            "the scored values",
            Box::new(move |p: &mut Plan| p.exam_instances[e].scored -= 1),
        ),
        (
            "the value ids",
            Box::new(move |p: &mut Plan| {
                let mut ids = p.exam_instances[e].ids.to_vec();
                ids.pop();
                p.exam_instances[e].ids = ids.into();
            }),
        ),
        (
            "a given truth",
            Box::new(move |p: &mut Plan| {
                p.exam_instances[e].truth = Some(vec![Some(Value::Int(1)), None].into())
            }),
        ),
        (
            "a reference answer",
            Box::new(move |p: &mut Plan| {
                p.exam_instances[e].reference = Some(vec![None, Some(Value::Int(1))].into())
            }),
        ),
        (
            "an organisers' decision",
            Box::new(move |p: &mut Plan| {
                p.exam_instances[e].corrections = Some(vec![Some(Value::Bool(true))].into())
            }),
        ),
    ];
    for (what, change) in &cases {
        assert_ne!(base, with(change.as_ref()), "{what}");
    }
    // A value of the truth, the reference or the decisions.
    let one = |value: Value| {
        move |p: &mut Plan| p.exam_instances[e].corrections = Some(vec![Some(value.clone())].into())
    };
    assert_ne!(
        with(&one(Value::Int(1))),
        with(&one(Value::Int(2))),
        "a decided value"
    );
}
