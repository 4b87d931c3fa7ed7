//! Scoring at real scale (docs/BENCHMARKS.md): the salsa database of a contest, built from its
//! store, fully scored, then re-scored after changes, in one process.
//!
//!   cargo run --release --example bench_scoring -- MANIFEST [TOOL EXAMINATION]
//!
//! Prints: the time to open the contest (plan + index), to build the salsa inputs, to compute
//! every trusted value and the podiums; the process's peak memory; then the medians of two series
//! of 20: the time to re-score after one run of a tool changes (its booleans negated, its
//! integers plus 1; a different run each round, put back after it), then after all of that tool's runs in
//! that examination change.

use std::time::Instant;

use mccbuild::session::Session;
use mccbuild_core::Value;
use mccbuild_scoring::db::{podiums, trusted_values};

fn max_rss_mb() -> f64 {
    // SAFETY: getrusage fills a struct we own.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    usage.ru_maxrss as f64 / 1024.0
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn changed(answers: &[(u16, Value)]) -> std::sync::Arc<[(u16, Value)]> {
    answers
        .iter()
        .map(|(i, v)| {
            let v = match v {
                Value::Bool(b) => Value::Bool(!b),
                Value::Int(n) => Value::Int(n + 1),
                other => other.clone(),
            };
            (*i, v)
        })
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let manifest = std::path::PathBuf::from(
        args.get(1)
            .expect("usage: bench_scoring MANIFEST [TOOL EXAMINATION]"),
    );
    let t = Instant::now();
    let session = Session::open(&manifest).unwrap_or_else(|e| panic!("{e:?}"));
    println!(
        "open (plan + store index): {:.0} ms, {} runs",
        t.elapsed().as_secs_f64() * 1e3,
        session.plan.runs.len()
    );

    let t = Instant::now();
    let (mut db, handles) = if std::env::var_os("BENCH_LOG").is_some() {
        session.scoring_logged()
    } else {
        session.scoring()
    };
    let inputs_ms = t.elapsed().as_secs_f64() * 1e3;
    let t = Instant::now();
    let mut values = 0usize;
    for m in &handles.examinations {
        values += trusted_values(&db, *m).iter().map(Vec::len).sum::<usize>();
    }
    let podium = podiums(&db, handles.contest).clone();
    let queries_ms = t.elapsed().as_secs_f64() * 1e3;
    let answers: usize = handles
        .examinations
        .iter()
        .map(|i| {
            i.answers(&db)
                .iter()
                .flat_map(|s| s.iter())
                .map(|a| a.len())
                .sum::<usize>()
        })
        .sum();
    println!(
        "full scoring: {:.0} ms (salsa inputs {inputs_ms:.0} ms + queries {queries_ms:.0} ms) for {values} values, {answers} answers; peak memory {:.0} MB",
        inputs_ms + queries_ms,
        max_rss_mb()
    );
    let _ = podium;

    // The tool and examination to change: given, or the tool with the most runs and its first examination.
    let tools = &session.plan.contest.tools;
    let edition = &session.plan.contest.edition;
    let (tool, exam) = match (args.get(2), args.get(3)) {
        (Some(t), Some(e)) => (
            session.plan.contest.tool(t).expect("tool"),
            edition.examination(e).expect("examination"),
        ),
        _ => {
            let mut count = vec![0usize; tools.len()];
            for r in &session.plan.runs {
                count[r.tool] += 1;
            }
            let tool = (0..tools.len()).max_by_key(|&t| count[t]).unwrap_or(0);
            let exam = session
                .plan
                .runs
                .iter()
                .find(|r| r.tool == tool)
                .map(|r| session.plan.exam_instances[r.exam_instance].exam)
                .unwrap_or(0);
            (tool, exam)
        }
    };
    // The salsa handles of that tool's runs in that examination.
    let mut targets = Vec::new();
    for (e, ei) in session.plan.exam_instances.iter().enumerate() {
        if ei.exam != exam {
            continue;
        }
        for position in 0..handles.run_tools(&db, e).len() {
            let run = handles.run(e, position);
            let (t, answers) = db.run_answers(run);
            if t == tool as u32 && !answers.is_empty() {
                targets.push(run);
            }
        }
    }
    println!(
        "changing {} ({} runs answered in {})",
        tools[tool].name,
        targets.len(),
        edition.examinations[exam].name
    );
    if std::env::var_os("BENCH_LOG").is_some() {
        // Which queries one change re-executes (salsa's event log; needs ScoringDb::with_log).
        let run = targets[0];
        let before = db.run_answers(run).1;
        db.start_logging();
        db.set_answers(run, changed(&before));
        let _ = podiums(&db, handles.contest);
        let mut counts = std::collections::BTreeMap::new();
        for q in db.take_executed() {
            *counts.entry(q).or_insert(0) += 1;
        }
        println!("queries re-executed after one run changes: {counts:?}");
        db.set_answers(run, before);
        db.refresh(&handles);
        let _ = podiums(&db, handles.contest);
        let _ = db.take_executed();
    }
    // Two series, one after the other: one run changes (and is put back), 20 times; then all the
    // tool's runs in the examination change (and are put back), 20 times.
    let rounds: usize = std::env::var("BENCH_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(20);
    // One run changes: one group to recompute, sequentially (as `mccbuild watch` does for a
    // few records). All runs change: the groups are recomputed on all cores first
    // (ScoringDb::refresh, as `scores_report` and `watch` do for many records).
    let mut one = Vec::new();
    for round in 0..rounds {
        let run = targets[round % targets.len()];
        let before = db.run_answers(run).1;
        let t = Instant::now();
        db.set_answers(run, changed(&before));
        let _ = podiums(&db, handles.contest);
        one.push(t.elapsed().as_secs_f64() * 1e3);
        db.set_answers(run, before);
        let _ = podiums(&db, handles.contest);
    }
    let mut all = Vec::new();
    for _ in 0..if std::env::var_os("BENCH_ONE_ONLY").is_some() {
        0
    } else {
        rounds
    } {
        let saved: Vec<_> = targets.iter().map(|r| db.run_answers(*r).1).collect();
        let t = Instant::now();
        for (r, a) in targets.iter().zip(&saved) {
            db.set_answers(*r, changed(a));
        }
        db.refresh(&handles);
        let _ = podiums(&db, handles.contest);
        all.push(t.elapsed().as_secs_f64() * 1e3);
        for (r, a) in targets.iter().zip(saved) {
            db.set_answers(*r, a);
        }
        db.refresh(&handles);
        let _ = podiums(&db, handles.contest);
    }
    println!(
        "re-score after one run of {} changes: median {:.1} ms (min {:.1}, max {:.1})",
        tools[tool].name,
        median(one.clone()),
        one.iter().cloned().fold(f64::MAX, f64::min),
        one.iter().cloned().fold(0.0, f64::max)
    );
    println!(
        "re-score after all {} runs of {} in {} change: median {:.1} ms",
        targets.len(),
        tools[tool].name,
        edition.examinations[exam].name,
        if all.is_empty() {
            f64::NAN
        } else {
            median(all)
        }
    );
    println!("peak memory {:.0} MB", max_rss_mb());
}
