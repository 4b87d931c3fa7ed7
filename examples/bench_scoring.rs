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
//!
//! `BENCH_ARRIVALS=N`: instead, as `mccbuild watch` sees runs arrive: the database is built with N
//! stored runs (spread over the plan, seed-free: every k-th stored run) not stored yet, then each
//! one's record is applied, one at a time, and the podiums re-scored; prints the median wall and
//! CPU time per record (`BENCH_LOG=1`: with salsa's event log, as `watch` has it).
//!
//! `BENCH_WATCH=N`: records replaced and restored as `scripts/bench-watch` makes them on a packed
//! store (N answered runs picked with seed 2024, each first with its answers dropped and a second
//! more of CPU time, then as stored), with the event log; prints the median per update, of the
//! replaced and of the restored ones. `BENCH_SLEEP_MS=M`: M ms between updates (caches as cold as
//! a watch's between records); `BENCH_EACH=1`: each update's time (and the time to settle the
//! decisions) and re-executed queries; `BENCH_NOLOG=1`: without the event log.

use std::time::Instant;

use mccbuild::session::Session;
use mccbuild_core::Value;
use mccbuild_scoring::db::{Handles, RunRef, ScoringDb, podiums, trusted_values};

fn max_rss_mb() -> f64 {
    // SAFETY: rusage is plain old data, for which all-zero bytes are a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage fills a struct we own.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    usage.ru_maxrss as f64 / 1024.0
}

/// This thread's CPU time in milliseconds: on a loaded machine it drifts less than wall time.
fn thread_cpu_ms() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime fills a struct we own.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    t.tv_sec as f64 * 1e3 + t.tv_nsec as f64 / 1e6
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

/// Stops the benchmark with a message saying what to do (exit status 2), never a panic.
fn fail(message: &str) -> ! {
    eprintln!("bench_scoring: {message}");
    std::process::exit(2)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(manifest) = args.get(1).map(std::path::PathBuf::from) else {
        fail("usage: bench_scoring MANIFEST [TOOL EXAMINATION]");
    };
    let t = Instant::now();
    let session = Session::open(&manifest)
        .unwrap_or_else(|e| fail(&format!("cannot open {}: {e}", manifest.display())));
    let stored = (0..session.plan.runs.len())
        .filter(|&i| session.is_stored(i))
        .count();
    println!(
        "open (plan + store index): {:.0} ms, {} runs, {stored} stored",
        t.elapsed().as_secs_f64() * 1e3,
        session.plan.runs.len()
    );
    if stored == 0 {
        fail(&format!(
            "no run of {} is in its store: there is nothing to score (for the MCC 2024 replay: \
             cd examples/mcc2024-replay && ../../scripts/mcc-analysis-replay results 2024 \
             raw-result-analysis.csv && mccbuild import raw-result-analysis.csv; \
             scripts/bench-scoring does it)",
            manifest.display()
        ));
    }
    if let Some(n) = std::env::var("BENCH_ARRIVALS")
        .ok()
        .and_then(|n| n.parse::<usize>().ok())
    {
        arrivals(&session, n);
        return;
    }
    if let Some(n) = std::env::var("BENCH_WATCH")
        .ok()
        .and_then(|n| n.parse::<usize>().ok())
    {
        changed_records(&session, n);
        return;
    }
    let (mut db, handles) = full_scoring(&session);

    let (tool, exam) = tool_and_examination(&session, args.get(2), args.get(3));
    let targets = runs_of(&session, &db, &handles, tool, exam);
    if targets.is_empty() {
        fail(&format!(
            "{} has no answered run in {}: give a tool and an examination it answered",
            session.plan.contest.tools[tool].name,
            session.plan.contest.edition.examinations[exam].name
        ));
    }
    let tools = &session.plan.contest.tools;
    let edition = &session.plan.contest.edition;
    println!(
        "changing {} ({} runs answered in {})",
        tools[tool].name,
        targets.len(),
        edition.examinations[exam].name
    );
    if std::env::var_os("BENCH_LOG").is_some() {
        log_one_change(&mut db, &handles, targets[0]);
    }
    // Two series, one after the other: one run changes (and is put back), 20 times; then all the
    // tool's runs in the examination change (and are put back), 20 times.
    let rounds: usize = std::env::var("BENCH_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(20);
    let (one, one_cpu) = one_run_changes(&mut db, &handles, &targets, rounds);
    let all_rounds = if std::env::var_os("BENCH_ONE_ONLY").is_some() {
        0
    } else {
        rounds
    };
    let all = all_runs_change(&mut db, &handles, &targets, all_rounds);
    println!(
        "re-score after one run of {} changes: median {:.1} ms (min {:.1}, max {:.1}), CPU {:.1} ms",
        tools[tool].name,
        median(one.clone()),
        one.iter().cloned().fold(f64::MAX, f64::min),
        one.iter().cloned().fold(0.0, f64::max),
        median(one_cpu)
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

/// The salsa inputs built and every trusted value and podium computed, timed.
fn full_scoring(session: &Session) -> (ScoringDb, Handles) {
    let t = Instant::now();
    let (db, handles) = if std::env::var_os("BENCH_LOG").is_some() {
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
    let _ = podiums(&db, handles.contest);
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
    (db, handles)
}

/// The tool and examination to change: given, or the tool with the most runs and its first
/// examination.
fn tool_and_examination(
    session: &Session,
    tool: Option<&String>,
    exam: Option<&String>,
) -> (usize, usize) {
    let contest = &session.plan.contest;
    if let (Some(t), Some(e)) = (tool, exam) {
        return (
            contest
                .tool(t)
                .unwrap_or_else(|| fail(&format!("no tool `{t}` in the contest"))),
            contest.edition.examination(e).unwrap_or_else(|| {
                fail(&format!(
                    "no examination `{e}` in {}",
                    contest.edition.info.name
                ))
            }),
        );
    }
    let mut count = vec![0usize; contest.tools.len()];
    for r in &session.plan.runs {
        count[r.tool] += 1;
    }
    let tool = (0..contest.tools.len())
        .max_by_key(|&t| count[t])
        .unwrap_or(0);
    let exam = session
        .plan
        .runs
        .iter()
        .find(|r| r.tool == tool)
        .map(|r| session.plan.exam_instances[r.exam_instance].exam)
        .unwrap_or(0);
    (tool, exam)
}

/// The salsa handles of the tool's answered runs in the examination.
fn runs_of(
    session: &Session,
    db: &ScoringDb,
    handles: &Handles,
    tool: usize,
    exam: usize,
) -> Vec<RunRef> {
    let mut targets = Vec::new();
    for (e, ei) in session.plan.exam_instances.iter().enumerate() {
        if ei.exam != exam {
            continue;
        }
        for position in 0..handles.run_tools(db, e).len() {
            let run = handles.run(e, position);
            let (t, answers) = db.run_answers(run);
            if t == tool as u32 && !answers.is_empty() {
                targets.push(run);
            }
        }
    }
    targets
}

/// Which queries one change re-executes (salsa's event log; needs ScoringDb::with_log).
fn log_one_change(db: &mut ScoringDb, handles: &Handles, run: RunRef) {
    let before = db.run_answers(run).1;
    db.start_logging();
    db.set_answers(run, changed(&before));
    let _ = podiums(db, handles.contest);
    let mut counts = std::collections::BTreeMap::new();
    for q in db.take_executed() {
        *counts.entry(q).or_insert(0) += 1;
    }
    println!("queries re-executed after one run changes: {counts:?}");
    db.set_answers(run, before);
    db.refresh(handles);
    let _ = podiums(db, handles.contest);
    let _ = db.take_executed();
}

/// One run changes (a different one each round, put back after): one model examination to
/// recompute, sequentially (as `mccbuild watch` does for a few records). Milliseconds per round,
/// wall and CPU time.
fn one_run_changes(
    db: &mut ScoringDb,
    handles: &Handles,
    targets: &[RunRef],
    rounds: usize,
) -> (Vec<f64>, Vec<f64>) {
    let (mut times, mut cpu) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        let run = targets[round % targets.len()];
        let before = db.run_answers(run).1;
        let (t, c) = (Instant::now(), thread_cpu_ms());
        db.set_answers(run, changed(&before));
        let _ = podiums(db, handles.contest);
        times.push(t.elapsed().as_secs_f64() * 1e3);
        cpu.push(thread_cpu_ms() - c);
        db.set_answers(run, before);
        let _ = podiums(db, handles.contest);
    }
    (times, cpu)
}

/// All the tool's runs in the examination change (and are put back): the model examinations are
/// recomputed on all cores first (ScoringDb::refresh, as `scores` and `watch` do for many
/// records). Milliseconds per round.
fn all_runs_change(
    db: &mut ScoringDb,
    handles: &Handles,
    targets: &[RunRef],
    rounds: usize,
) -> Vec<f64> {
    let mut times = Vec::new();
    for _ in 0..rounds {
        let saved: Vec<_> = targets.iter().map(|r| db.run_answers(*r).1).collect();
        let t = Instant::now();
        let mut changes = db.change();
        for (r, a) in targets.iter().zip(&saved) {
            changes.set_answers(*r, changed(a));
        }
        drop(changes);
        db.refresh(handles);
        let _ = podiums(db, handles.contest);
        times.push(t.elapsed().as_secs_f64() * 1e3);
        let mut changes = db.change();
        for (r, a) in targets.iter().zip(saved) {
            changes.set_answers(*r, a);
        }
        drop(changes);
        db.refresh(handles);
        let _ = podiums(db, handles.contest);
    }
    times
}

/// Runs arriving one at a time (see the module's doc): `n` stored runs hidden when the database
/// is built, then applied one by one. Prints the medians per record.
fn arrivals(session: &Session, n: usize) {
    use mccbuild_scoring::inputs::{build_scoring, run_inputs, run_refs};
    let stored: Vec<usize> = (0..session.plan.runs.len())
        .filter(|&i| session.is_stored(i))
        .collect();
    let step = (stored.len() / n.max(1)).max(1);
    let hidden: Vec<usize> = stored.iter().step_by(step).take(n).copied().collect();
    let hidden_keys: std::collections::HashSet<_> =
        hidden.iter().map(|&i| session.plan.runs[i].key).collect();
    let db = if std::env::var_os("BENCH_LOG").is_some() {
        ScoringDb::with_log()
    } else {
        ScoringDb::default()
    };
    let (mut db, handles) = build_scoring(db, &session.plan, |key| {
        if hidden_keys.contains(key) {
            None
        } else {
            session.index.get(key)
        }
    });
    db.refresh(&handles);
    let _ = podiums(&db, handles.contest);
    let refs = run_refs(&session.plan, &handles);
    // `perf record -D -1 --control fifo:FIFO` profiles only the arrivals.
    if let Some(fifo) = std::env::var_os("BENCH_PERF_FIFO") {
        let _ = std::fs::write(fifo, "enable\n");
    }
    let (mut times, mut cpu) = (Vec::new(), Vec::new());
    let mut executed = std::collections::BTreeMap::new();
    for &i in &hidden {
        let (answers, competes, measurement) =
            run_inputs(session.index.get(&session.plan.runs[i].key));
        db.start_logging();
        let (t, c) = (Instant::now(), thread_cpu_ms());
        let mut changes = db.change();
        changes.set_answers(refs[i], answers);
        changes.set_competes(refs[i], competes);
        changes.set_measurement(refs[i], measurement);
        drop(changes);
        let _ = podiums(&db, handles.contest);
        times.push(t.elapsed().as_secs_f64() * 1e3);
        cpu.push(thread_cpu_ms() - c);
        for q in db.take_executed() {
            *executed.entry(q).or_insert(0usize) += 1;
        }
    }
    println!(
        "{} runs arriving one at a time: re-score median {:.2} ms (min {:.2}, max {:.2}), CPU {:.2} ms",
        hidden.len(),
        median(times.clone()),
        times.iter().cloned().fold(f64::MAX, f64::min),
        times.iter().cloned().fold(0.0, f64::max),
        median(cpu)
    );
    if !executed.is_empty() {
        println!("queries executed in all: {executed:?}");
    }
}

/// Records changed and restored one at a time, as `scripts/bench-watch` makes them on a packed
/// store (examples/bench_records: `n` answered runs picked with seed 2024, each first with its
/// answers dropped and one second more of CPU time, then as stored), with salsa's event log as
/// `mccbuild watch` has it. Prints the medians per update.
fn changed_records(session: &Session, n: usize) {
    use mccbuild_scoring::inputs::{build_scoring, run_inputs, run_refs};
    let db = if std::env::var_os("BENCH_NOLOG").is_some() {
        ScoringDb::default()
    } else {
        ScoringDb::with_log()
    };
    let (mut db, handles) = build_scoring(db, &session.plan, |key| session.index.get(key));
    db.refresh(&handles);
    let _ = podiums(&db, handles.contest);
    let refs = run_refs(&session.plan, &handles);
    let mut answered: Vec<usize> = (0..session.plan.runs.len())
        .filter(|&i| {
            session
                .index
                .get(&session.plan.runs[i].key)
                .is_some_and(|s| !s.answers.is_empty())
        })
        .collect();
    answered.sort_unstable_by_key(|&i| session.plan.runs[i].key);
    let mut state: u64 = 2024;
    let mut picked = Vec::new();
    for _ in 0..n.min(answered.len()) {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        picked.push(answered.swap_remove((state >> 33) as usize % answered.len()));
    }
    if let Some(fifo) = std::env::var_os("BENCH_PERF_FIFO") {
        let _ = std::fs::write(fifo, "enable\n");
    }
    let (mut changes, mut restores) = (Vec::new(), Vec::new());
    let mut executed = std::collections::BTreeMap::new();
    for &i in &picked {
        let summary = session.index.get(&session.plan.runs[i].key);
        let (answers, competes, measurement) = run_inputs(summary);
        let mut slower = measurement;
        slower.cpu_time_s += 1.0;
        for (answers, measurement, times) in [
            (std::sync::Arc::from(Vec::new()), slower, &mut changes),
            (answers, measurement, &mut restores),
        ] {
            if let Some(ms) = std::env::var("BENCH_SLEEP_MS")
                .ok()
                .and_then(|ms| ms.parse::<u64>().ok())
            {
                std::thread::sleep(std::time::Duration::from_millis(ms));
            }
            db.start_logging();
            let t = Instant::now();
            let mut changes = db.change();
            changes.set_answers(refs[i], answers);
            changes.set_competes(refs[i], competes);
            changes.set_measurement(refs[i], measurement);
            drop(changes);
            let settled = t.elapsed().as_secs_f64() * 1e3;
            let _ = podiums(&db, handles.contest);
            times.push(t.elapsed().as_secs_f64() * 1e3);
            if std::env::var_os("BENCH_EACH").is_some() {
                print!("settled {settled:.2} ms, ");
            }
            let mut this = std::collections::BTreeMap::new();
            for q in db.take_executed() {
                *this.entry(q.clone()).or_insert(0usize) += 1;
                *executed.entry(q).or_insert(0usize) += 1;
            }
            if std::env::var_os("BENCH_EACH").is_some() {
                println!("{:.2} ms {this:?}", times.last().unwrap());
            }
        }
    }
    println!(
        "{} records changed, then restored: re-score median {:.2} ms (changed {:.2}, restored {:.2})",
        picked.len(),
        median(changes.iter().chain(&restores).copied().collect()),
        median(changes),
        median(restores)
    );
    println!("queries executed in all: {executed:?}");
}
