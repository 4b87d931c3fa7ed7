//! Incrementality: changing one run's answers re-executes only the queries that depend on it,
//! and a trusted value recomputed to the same value stops the wave (salsa's early cutoff).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use mccbuild_core::{Measurement, Termination, Value};
use mccbuild_rules::edition::Edition;
use mccbuild_rules::trusted::TrustCase;
use mccbuild_scoring::db::{
    ContestInputs, ExamInstanceInputs, ModelInfo, RunInputs, ScoringDb, ToolInfo, podiums,
};

fn edition() -> Arc<Edition> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../rules/mcc-2026.toml");
    Arc::new(Edition::load(&path).expect("the 2026 rules load"))
}

/// A run that ended by itself after `cpu_s` seconds of CPU, using `memory_mb` MB at most.
fn measured(cpu_s: f64, memory_mb: f64) -> Measurement {
    Measurement {
        termination: Termination::Exit { code: 0 },
        cpu_time_s: cpu_s,
        wall_time_s: cpu_s,
        peak_memory_bytes: (memory_mb * (1u64 << 20) as f64) as u64,
    }
}

/// The queries expected to re-execute, with how many times each.
fn expect(pairs: &[(&str, usize)]) -> BTreeMap<String, usize> {
    pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

fn counts(executed: Vec<String>) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for name in executed {
        *counts.entry(name).or_insert(0) += 1;
    }
    counts
}

/// Four tools A, B, C, D; five StateSpace examinations (4 values each) on five instances of one
/// model. Every tool answers every value 1, except on instance 1, value 0, where C gives no
/// answer and D says 2 (A and B say 1): three tools that disagree, decided by weighted majority
/// (A + B weigh 2.0 against D's 1.0), and not part of the Confidence set V (only 2 agree).
fn contest(db: &mut ScoringDb) -> mccbuild_scoring::db::Handles {
    let edition = edition();
    let ss = edition.examination("StateSpace").unwrap() as u32;
    let ids: Arc<[Arc<str>]> = [
        "STATES",
        "TRANSITIONS",
        "MAX_TOKEN_IN_PLACE",
        "MAX_TOKEN_PER_MARKING",
    ]
    .iter()
    .map(|s| Arc::from(*s))
    .collect();
    let tools = ["A", "B", "C", "D"]
        .iter()
        .map(|n| ToolInfo {
            name: n.to_string(),
            family: n.to_string(),
            competing: true,
        })
        .collect();
    let all_ones: Arc<[(u16, Value)]> = (0..4).map(|i| (i as u16, Value::Int(1))).collect();
    let mut exam_instances = Vec::new();
    for instance in 0..5u32 {
        let runs = (0..4u32)
            .map(|tool| {
                let answers: Arc<[(u16, Value)]> = match (instance, tool) {
                    (1, 2) => (1..4).map(|i| (i as u16, Value::Int(1))).collect(),
                    (1, 3) => (0..4)
                        .map(|i| (i as u16, Value::Int(if i == 0 { 2 } else { 1 })))
                        .collect(),
                    _ => all_ones.clone(),
                };
                RunInputs {
                    tool,
                    competes: true,
                    answers,
                    measurement: measured(1.0 + tool as f64, 10.0),
                }
            })
            .collect();
        exam_instances.push(ExamInstanceInputs {
            model: 0,
            exam: ss,
            ids: ids.clone(),
            scored: 4,
            runs,
            truth: None,
            reference: None,
            corrections: None,
        });
    }
    let models = vec![ModelInfo {
        name: "M".into(),
        kind: 0,
        instances: 5,
    }];
    db.build(ContestInputs {
        edition,
        tools,
        models,
        exam_instances,
        basis: mccbuild_rules::reference::Basis::Vote,
        remembered: Default::default(),
    })
}

#[test]
fn one_changed_run_reexecutes_only_what_depends_on_it() {
    let mut db = ScoringDb::with_log();
    let handles = contest(&mut db);
    let before = podiums(&db, handles.contest).clone();
    db.start_logging();

    // Tool A now says 5 for instance 0's STATES: three tools still agree on 1 (in V), so A is
    // wrong once: its Confidence drops from 1 to 18/19.
    let changed: Arc<[(u16, Value)]> = (0..4)
        .map(|i| (i as u16, Value::Int(if i == 0 { 5 } else { 1 })))
        .collect();
    db.set_answers(handles.run(0, 0), changed);
    let after = podiums(&db, handles.contest).clone();

    let executed = counts(db.take_executed());
    let expected = expect(&[
        // Scoring inputs and queries are per model and examination: the five instances are one
        // group, recomputed because instance 0's answers changed (their answers by value are
        // gathered inside `agreement` and `exam_scores`, not kept: `value_answers` is for reports).
        ("agreement", 1),
        ("tally_chunk", 1),      // its chunk of 32 model examinations' tallies
        ("confidence_tally", 1), // the sum over the contest
        ("tool_confidence", 4),  // each reads the tally; only A's value changes
        // The driver (`ScoringDb::settle`) asks each tool's verdict on its lone values: A's, whose
        // Confidence changed, is asked again (still not trusted alone); the others' Confidences
        // came out equal, so their verdicts are not recomputed.
        ("tool_trusted_alone", 1),
        // Two shapes of contested value read A's Confidence: instance 0's new one (A alone
        // against B, C, D) and instance 1's (A + B against D), where A + B still outweigh D: its
        // decision is unchanged: no other group would be re-decided for it.
        ("contested_decision", 2),
        ("exam_scores", 1), // its trusted values (E-3.1) and scores
        ("group_wins", 1),  // E-4.5's wins: the changed weight group's counted again only
        ("group_totals", 1),
        ("category_totals", 1), // one sum over the examination scores: the category changed
        ("category_podium", 1), // its podium
        ("podiums", 1),
    ]);
    assert_eq!(executed, expected);
    // The weights (E-4.4) depend on the contest's shape, not on answers: reused.
    assert!(!executed.contains_key("weights"));

    // A lost 1 point and paid a 2-point penalty on STATES (ScoreValue 4 per StateSpace value:
    // 16 / 4 values): from +4 to -8 on that value. Its StateSpace score moves by -12 x weight.
    let a_before = before[0]
        .standings
        .iter()
        .find(|s| s.tool == 0)
        .unwrap()
        .score
        .clone();
    let a_after = after[0]
        .standings
        .iter()
        .find(|s| s.tool == 0)
        .unwrap()
        .score
        .clone();
    // One model of 5 instances is also the largest: it weighs max_model_ratio = 2 in total,
    // 2/5 per instance. -12 x 2/5 = -24/5, exactly.
    assert_eq!(
        &a_after - &a_before,
        mccbuild_rules::exact::ratio(-24, 5),
        "{a_before} -> {a_after}"
    );
}

#[test]
fn an_unchanged_input_reexecutes_nothing() {
    let mut db = ScoringDb::with_log();
    let handles = contest(&mut db);
    let _ = podiums(&db, handles.contest);
    db.start_logging();
    // Setting the same answers again is not a change (setters compare first).
    let same: Arc<[(u16, Value)]> = (0..4).map(|i| (i as u16, Value::Int(1))).collect();
    db.set_answers(handles.run(2, 1), same);
    let _ = podiums(&db, handles.contest);
    assert_eq!(db.take_executed(), Vec::<String>::new());
}

#[test]
fn time_and_memory_do_not_touch_values() {
    let mut db = ScoringDb::with_log();
    let handles = contest(&mut db);
    let _ = podiums(&db, handles.contest);
    db.start_logging();
    db.set_measurement(handles.run(3, 1), measured(0.5, 3.0));
    let _ = podiums(&db, handles.contest);
    // Only the score of that examination (which carries E-4.3's time and memory) and the sums
    // above it: no value answers, no Confidence, no trusted value.
    let executed = counts(db.take_executed());
    let expected = expect(&[
        ("exam_scores", 1),
        ("group_wins", 1),
        ("group_totals", 1),
        ("category_totals", 1),
        ("category_podium", 1),
        ("podiums", 1),
    ]);
    assert_eq!(executed, expected);
}

/// The 2026 rules with E-3.1's single-tool threshold edited (as an organizer edits the rules
/// file that `mccbuild watch` watches).
fn edition_with_threshold(threshold: &str) -> Arc<Edition> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../rules/mcc-2026.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let from = "single_tool_threshold = 0.997";
    assert!(text.contains(from));
    let edited = text.replacen(from, &format!("single_tool_threshold = {threshold}"), 1);
    Arc::new(Edition::parse(&path, &edited).expect("the edited rules load"))
}

/// The small contest where A is wrong once (A says 5 for instance 0's STATES: Confidence
/// 18/19, about 0.947) and alone on instance 2's MAX_TOKEN_PER_MARKING (B, C and D do not
/// answer it): under the 2026 threshold (0.997) A's lone value is not trusted; under 0.9 it is.
fn contest_with_a_lone_value(db: &mut ScoringDb) -> mccbuild_scoring::db::Handles {
    let handles = contest(db);
    let a_wrong: Arc<[(u16, Value)]> = (0..4)
        .map(|i| (i as u16, Value::Int(if i == 0 { 5 } else { 1 })))
        .collect();
    db.set_answers(handles.run(0, 0), a_wrong);
    let without_last: Arc<[(u16, Value)]> = (0..3).map(|i| (i as u16, Value::Int(1))).collect();
    for tool in 1..4 {
        db.set_answers(handles.run(2, tool), without_last.clone());
    }
    handles
}

/// An edit of E-3.1's threshold goes through the edition's input setters: it re-decides what
/// reads the threshold (the single-tool verdict of the tool concerned, the shapes of contested
/// value), then only what a changed decision reaches. The answers gathered and E-2.2's tally
/// (the Confidences) are reused, the weights too; the result is that of a database built
/// with the edited rules from scratch.
#[test]
fn a_threshold_edit_reexecutes_only_what_reads_the_threshold() {
    let mut db = ScoringDb::with_log();
    let handles = contest_with_a_lone_value(&mut db);
    let before = podiums(&db, handles.contest).clone();
    let lone = |db: &ScoringDb| handles.decisions(db, 2)[3].clone();
    assert_eq!(lone(&db).value, None, "0.947 < 0.997: not trusted");
    db.start_logging();

    db.set_edition(&handles, edition_with_threshold("0.9"));
    let after = podiums(&db, handles.contest).clone();
    let executed = counts(db.take_executed());
    let expected = expect(&[
        ("edition_shape", 1), // reads the edition: re-executed, equal, stops there
        // Each tool's verdict on its lone values reads the threshold (the driver asks all four):
        // A's is now trusted, the others' are unchanged and re-decide nothing.
        ("tool_trusted_alone", 4),
        ("contested_decision", 2), // the two shapes of contested value read the threshold
        ("exam_scores", 1),        // the group where A's lone value is: re-decided
        ("group_wins", 1),
        ("group_totals", 1),
        ("category_totals", 1),
        ("category_podium", 1),
        ("podiums", 1),
    ]);
    assert_eq!(executed, expected);
    assert_eq!(
        lone(&db).value,
        Some(Value::Int(1)),
        "0.947 >= 0.9: trusted"
    );
    assert_ne!(before, after, "A earns the lone value's points");

    // The same contest built with the edited rules from the start scores the same.
    let mut fresh = ScoringDb::default();
    let fresh_handles = contest_with_a_lone_value(&mut fresh);
    fresh.set_edition(&fresh_handles, edition_with_threshold("0.9"));
    assert_eq!(*podiums(&fresh, fresh_handles.contest), after);

    // The same edition again changes nothing; the edit undone restores the podiums.
    db.set_edition(&handles, edition_with_threshold("0.9"));
    let _ = podiums(&db, handles.contest);
    assert_eq!(db.take_executed(), Vec::<String>::new());
    db.set_edition(&handles, edition());
    assert_eq!(*podiums(&db, handles.contest), before);
}

/// A comment added to the rules file (another digest, the same rules) re-executes only the
/// firewall query that reads the whole edition.
#[test]
fn a_rules_edit_that_changes_no_rule_reexecutes_nothing_else() {
    let mut db = ScoringDb::with_log();
    let handles = contest(&mut db);
    let _ = podiums(&db, handles.contest);
    db.start_logging();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../rules/mcc-2026.toml");
    let text = std::fs::read_to_string(&path).unwrap() + "\n# a comment\n";
    db.set_edition(&handles, Arc::new(Edition::parse(&path, &text).unwrap()));
    let _ = podiums(&db, handles.contest);
    assert_eq!(db.take_executed(), vec!["edition_shape".to_string()]);
}

/// A contest of some size: 4 tools, 60 examination instances of 16 boolean values (40
/// ReachabilityCardinality instances, 20 CTLCardinality). All tools agree everywhere, except
/// that tool 3 disagrees on value 0 of the CTL instances (so those 20 instances read its
/// Confidence: 3 against 1, decided by weighted majority).
fn medium(db: &mut ScoringDb) -> (mccbuild_scoring::db::Handles, Vec<usize>, Vec<usize>) {
    medium_with(db, None)
}

/// [`medium`], with the run of (examination instance, tool) `missing` not stored yet.
fn medium_with(
    db: &mut ScoringDb,
    missing: Option<(usize, u32)>,
) -> (mccbuild_scoring::db::Handles, Vec<usize>, Vec<usize>) {
    let edition = edition();
    let rc = edition.examination("ReachabilityCardinality").unwrap() as u32;
    let ctl = edition.examination("CTLCardinality").unwrap() as u32;
    let ids: Arc<[Arc<str>]> = (0..16).map(|i| Arc::from(format!("f{i:02}"))).collect();
    let tools = (0..4)
        .map(|n| ToolInfo {
            name: format!("t{n}"),
            family: format!("t{n}"),
            competing: true,
        })
        .collect();
    let truth = |i: u16| Value::Bool(i % 3 == 0);
    let mut exam_instances = Vec::new();
    let (mut rc_eis, mut ctl_eis) = (Vec::new(), Vec::new());
    for instance in 0..60u32 {
        let exam = if instance < 40 { rc } else { ctl };
        let runs = (0..4u32)
            .map(|tool| {
                let answers: Arc<[(u16, Value)]> = (0..16u16)
                    .map(|i| {
                        (
                            i,
                            if exam == ctl && tool == 3 && i == 0 {
                                Value::Bool(i % 3 != 0)
                            } else {
                                truth(i)
                            },
                        )
                    })
                    .collect();
                if missing == Some((instance as usize, tool)) {
                    return RunInputs {
                        tool,
                        competes: false,
                        answers: Arc::from(Vec::new()),
                        measurement: Measurement::default(),
                    };
                }
                RunInputs {
                    tool,
                    competes: true,
                    answers,
                    measurement: measured(1.0, 1.0),
                }
            })
            .collect();
        if exam == rc {
            rc_eis.push(instance as usize)
        } else {
            ctl_eis.push(instance as usize)
        }
        exam_instances.push(ExamInstanceInputs {
            model: instance / 10,
            exam,
            ids: ids.clone(),
            scored: 16,
            runs,
            truth: None,
            reference: None,
            corrections: None,
        });
    }
    let models = (0..6)
        .map(|m| ModelInfo {
            name: format!("M{m}"),
            kind: 0,
            instances: 10,
        })
        .collect();
    (
        db.build(ContestInputs {
            edition,
            tools,
            models,
            exam_instances,
            basis: mccbuild_rules::reference::Basis::Vote,
            remembered: Default::default(),
        }),
        rc_eis,
        ctl_eis,
    )
}

#[test]
fn one_tools_runs_of_one_examination_change_at_contest_scale() {
    let mut db = ScoringDb::with_log();
    let (handles, rc_eis, ctl_eis) = medium(&mut db);
    let before = podiums(&db, handles.contest).clone();
    db.start_logging();
    // Tool 0 now gets value 1 wrong on all 40 ReachabilityCardinality instances: those 40 value
    // groups change; each value 1 still has 3 agreeing tools of 4 (in V), tool 0 is wrong 40
    // times: its Confidence changes. Contested shapes: the new one of the Reachability
    // instances (tool 0 against 1, 2, 3) and the one all 20 CTL instances share (0, 1, 2 against
    // 3), which reads tool 0's Confidence but still decides for 0, 1, 2: the wave stops there,
    // the CTL instances' trusted values are not re-decided. Scoring queries are per model and
    // examination: the 40 changed instances are 4 groups (models M0..M3 of 10 instances each),
    // and only those are regrouped, re-decided and re-scored.
    let mut changes = db.change();
    for &e in &rc_eis {
        let (_, answers) = changes.run_answers(handles.run(e, 0));
        let changed: Arc<[(u16, Value)]> = answers
            .iter()
            .map(|(i, v)| {
                (
                    *i,
                    if *i == 1 {
                        Value::Bool(!matches!(v, Value::Bool(true)))
                    } else {
                        v.clone()
                    },
                )
            })
            .collect();
        changes.set_answers(handles.run(e, 0), changed);
    }
    drop(changes);
    let after = podiums(&db, handles.contest).clone();
    let executed = counts(db.take_executed());
    let expected: BTreeMap<String, usize> = expect(&[
        ("agreement", 4),
        ("tally_chunk", 1), // the contest's 12 model examinations are one chunk
        ("confidence_tally", 1),
        ("tool_confidence", 4),
        ("tool_trusted_alone", 1), // the driver asks tool 0's verdict on lone values again
        ("contested_decision", 2),
        ("exam_scores", 4),  // their trusted values and scores
        ("group_wins", 1),   // the four are models of one weight group
        ("group_totals", 1), // the same
        ("category_totals", 1),
        ("category_podium", 1),
        ("podiums", 1),
    ]);
    assert_eq!(executed, expected);
    assert_ne!(before, after, "tool 0 lost points in Reachability");
    // The CTL instances' contested value 0 is still decided for the three tools (true).
    for &e in &ctl_eis {
        let d = &handles.decisions(&db, e)[0];
        assert_eq!(
            (d.value.clone(), d.case),
            (Some(Value::Bool(true)), TrustCase::WeightedMajority)
        );
    }
}

/// An explanation's total is the podium's: the same entries summed in the same order by the same
/// rule function (E-4.6), to the last bit, here with fractional weights (E-4.4 normalisation
/// over models of 10 instances) where another order of summation would differ.
#[test]
fn an_explanations_total_is_the_podiums_to_the_last_bit() {
    let mut db = ScoringDb::default();
    let (handles, _, _) = medium(&mut db);
    let edition = handles.contest.edition(&db).clone();
    let totals = mccbuild_scoring::db::category_scores(&db, handles.contest).clone();
    let mut checked = 0;
    for category in 0..edition.categories.len() {
        for tool in 0..handles.contest.tools(&db).len() as u32 {
            let explained = mccbuild_scoring::explain::tool_category_total(
                &db,
                handles.contest,
                category,
                tool,
            );
            let podium = &totals.scores[category][tool as usize];
            assert_eq!(&explained, podium, "{category} {tool}");
            checked += (*podium != mccbuild_rules::exact::zero()) as usize;
        }
    }
    assert!(checked > 0);
}

/// Reference answers are an input of their own: under the vote (the default) a new reference
/// re-executes nothing; under the reference basis it re-decides and re-scores the model
/// examination, and never recomputes the answers by value, the agreement or any Confidence.
#[test]
fn a_new_reference_rescores_without_touching_the_answers() {
    use mccbuild_rules::reference::Basis;
    let mut db = ScoringDb::with_log();
    let handles = contest(&mut db);
    let voted = podiums(&db, handles.contest).clone();
    db.start_logging();
    // The reference says 7 for instance 0's STATES, where every tool says 1.
    let reference: Arc<[Option<Value>]> =
        [Some(Value::Int(7)), Some(Value::Int(1)), None, None].into();
    db.set_reference(&handles, 0, Some(reference));
    assert_eq!(podiums(&db, handles.contest), &voted);
    assert_eq!(counts(db.take_executed()), BTreeMap::new());

    db.set_basis(&handles, Basis::Reference);
    let against_reference = podiums(&db, handles.contest).clone();
    let executed = counts(db.take_executed());
    let expected: BTreeMap<String, usize> = expect(&[
        ("exam_scores", 1), // its trusted values (E-3.1) and scores
        ("group_wins", 1),
        ("group_totals", 1),
        ("category_totals", 1),
        ("category_podium", 1),
        ("podiums", 1),
    ]);
    assert_eq!(executed, expected);
    assert_ne!(against_reference, voted, "every tool is now wrong once");
    let decisions = &mccbuild_scoring::db::trusted_values(&db, handles.examinations[0])[0];
    assert_eq!(decisions[0].value, Some(Value::Int(7)));
    assert_eq!(decisions[0].case, TrustCase::Reference);
    assert_eq!(decisions[2].value, None, "unknown in the reference");

    // Back to the vote: the first podiums again.
    db.set_basis(&handles, Basis::Vote);
    assert_eq!(podiums(&db, handles.contest), &voted);
}

/// The organisers' decisions (`[contest] corrections`, E-6.3) are an input of their own: a new
/// decision re-decides and re-scores its model examination only, and never recomputes the
/// answers by value, the agreement or any Confidence (the corrections are in no run key: nothing
/// reruns either). Removing it gives the vote's podiums back.
#[test]
fn a_new_correction_rescores_without_touching_the_answers_or_the_confidences() {
    let mut db = ScoringDb::with_log();
    let handles = contest(&mut db);
    let voted = podiums(&db, handles.contest).clone();
    db.start_logging();
    // The organisers decide that instance 0's STATES is 7, where every tool says 1.
    let decided: Arc<[Option<Value>]> = [Some(Value::Int(7)), None, None, None].into();
    db.set_corrections(&handles, 0, Some(decided.clone()));
    let corrected = podiums(&db, handles.contest).clone();
    let executed = counts(db.take_executed());
    let expected: BTreeMap<String, usize> = expect(&[
        ("exam_scores", 1), // its trusted values (E-3.1) and scores
        ("group_wins", 1),
        ("group_totals", 1),
        ("category_totals", 1),
        ("category_podium", 1),
        ("podiums", 1),
    ]);
    assert_eq!(executed, expected);
    assert_ne!(corrected, voted, "every tool is now wrong once");
    let decisions = &mccbuild_scoring::db::trusted_values(&db, handles.examinations[0])[0];
    assert_eq!(decisions[0].value, Some(Value::Int(7)));
    assert_eq!(decisions[0].case, TrustCase::Organisers);
    assert_eq!(decisions[1].case, TrustCase::Unanimity, "the vote stands");

    // The same decision again: nothing re-executes.
    db.set_corrections(&handles, 0, Some(decided));
    assert_eq!(podiums(&db, handles.contest), &corrected);
    assert_eq!(counts(db.take_executed()), BTreeMap::new());

    // Withdrawn: the vote's podiums again.
    db.set_corrections(&handles, 0, None);
    assert_eq!(podiums(&db, handles.contest), &voted);
}

/// E-4.5's wins are counted per weight group by a query of its own: a new record (here a faster
/// measurement of one run) counts the wins of its group again only, not those of the other, and re-sums its weight group only (the
/// contest's two: Reachability's four models, CTL's two); the awards are those of a database
/// built with that record from the start.
#[test]
fn one_record_counts_only_its_weight_groups_wins_again() {
    let mut db = ScoringDb::with_log();
    let (handles, rc_eis, _) = medium(&mut db);
    let edition = handles.contest.edition(&db).clone();
    let rc = edition.examination("ReachabilityCardinality").unwrap();
    let category = edition.examinations[rc].category;
    let before = podiums(&db, handles.contest).clone();
    // Every run took 1 s and 1 MB: every examination instance's win is shared by the four tools,
    // and the awards go to the first in podium order.
    assert_eq!(before[category].awards.fastest, vec![0]);
    db.start_logging();

    // Tool 3's run on the first Reachability instance (model M0) now took 0.5 s: it wins that
    // instance alone (1 + 39/4 wins against 39/4).
    db.set_measurement(handles.run(rc_eis[0], 3), measured(0.5, 1.0));
    let after = podiums(&db, handles.contest).clone();
    let executed = counts(db.take_executed());
    assert_eq!(
        executed,
        expect(&[
            ("exam_scores", 1),
            ("group_wins", 1),
            ("group_totals", 1),
            ("category_totals", 1),
            ("category_podium", 1),
            ("podiums", 1),
        ])
    );
    assert_eq!(after[category].awards.fastest, vec![3]);
    assert_eq!(
        after[category].awards.least_memory,
        vec![0],
        "memory unchanged"
    );

    let mut fresh = ScoringDb::default();
    let (fresh_handles, _, _) = medium(&mut fresh);
    fresh.set_measurement(fresh_handles.run(rc_eis[0], 3), measured(0.5, 1.0));
    assert_eq!(*podiums(&fresh, fresh_handles.contest), after);
}

/// Durability (`ScoringDb::build`): the runs of a model examination with a run still to come
/// are LOW inputs, those of complete ones MEDIUM. Records of both kinds, and a complete model
/// examination's first rerun (a MEDIUM write, after which its runs are LOW), re-execute the
/// same small set as in an all-LOW database (no wave: E-2.2's tally is LOW from the start, so no
/// Confidence's durability drops, which salsa would not backdate), and every state scores as a
/// database built with it from the start.
#[test]
fn records_of_running_and_complete_model_examinations_score_as_a_fresh_database() {
    // With a CTL instance's run (model M4, tool 2) still to come, then with every run stored
    // (every model examination complete: E-2.2's tally would be MEDIUM but for its LOW field).
    for (missing, first) in [(Some((45, 2)), 0), (None, 1)] {
        one_record_at_a_time(missing, first);
    }
}

fn one_record_at_a_time(missing: Option<(usize, u32)>, first: usize) {
    let mut db = ScoringDb::with_log();
    let (handles, rc_eis, _) = medium_with(&mut db, missing);
    let _ = podiums(&db, handles.contest);
    let full: Arc<[(u16, Value)]> = (0..16u16).map(|i| (i, Value::Bool(i % 3 == 0))).collect();
    // Tool 0 wrong on value 1 of the first Reachability instance (model M0, complete).
    let wrong: Arc<[(u16, Value)]> = (0..16u16)
        .map(|i| (i, Value::Bool((i % 3 == 0) != (i == 1))))
        .collect();
    type Step = Box<dyn Fn(&mut ScoringDb, &mccbuild_scoring::db::Handles)>;
    let steps: Vec<(&str, Step)> = vec![
        ("the missing record arrives", {
            let full = full.clone();
            Box::new(move |db, h| {
                let Some(missing) = missing else { return };
                let run = h.run(missing.0, missing.1 as usize);
                let mut changes = db.change();
                changes.set_answers(run, full.clone());
                changes.set_competes(run, true);
                changes.set_measurement(run, measured(1.0, 1.0));
            })
        }),
        ("a first rerun in a complete model examination", {
            let wrong = wrong.clone();
            let e = rc_eis[0];
            Box::new(move |db, h| {
                db.set_answers(h.run(e, 0), wrong.clone());
            })
        }),
        ("the same run again", {
            let full = full.clone();
            let e = rc_eis[0];
            Box::new(move |db, h| {
                db.set_answers(h.run(e, 0), full.clone());
            })
        }),
        ("another complete model examination's run", {
            let wrong = wrong.clone();
            let e = rc_eis[15]; // model M1
            Box::new(move |db, h| {
                db.set_answers(h.run(e, 0), wrong.clone());
            })
        }),
    ];
    for (i, (what, step)) in steps.iter().enumerate().skip(first) {
        db.start_logging();
        step(&mut db, &handles);
        let after = podiums(&db, handles.contest).clone();
        let executed = counts(db.take_executed());
        // One model examination's answers changed: its own memos, the tally, and nothing of the
        // other model examinations (a Confidence moved, no decision did).
        assert_eq!(
            executed.get("exam_scores"),
            Some(&1),
            "{what}: {executed:?}"
        );
        assert_eq!(executed.get("agreement"), Some(&1), "{what}: {executed:?}");
        assert_eq!(
            executed.get("tally_chunk"),
            Some(&1),
            "{what}: {executed:?}"
        );

        let mut fresh = ScoringDb::default();
        let (fresh_handles, _, _) = medium_with(&mut fresh, missing);
        for (_, step) in &steps[..=i] {
            step(&mut fresh, &fresh_handles);
        }
        assert_eq!(*podiums(&fresh, fresh_handles.contest), after, "{what}");
        for e in 0..60 {
            assert_eq!(
                handles.decisions(&db, e),
                fresh_handles.decisions(&fresh, e),
                "{what}"
            );
            assert_eq!(
                handles.exam_scores(&db, e),
                fresh_handles.exam_scores(&fresh, e),
                "{what}"
            );
        }
    }
}
