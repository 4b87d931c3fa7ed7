//! The orchestrator is disposable: `mccbuild run` killed with SIGKILL mid-contest leaves its
//! jobs running, and the next `run` adopts them (`run --follow` follows them); a restarted
//! slurmctld loses nothing. Through a real cluster, as the rest of the Slurm suite.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::{Cluster, slurm_contest};
use crate::common::*;

/// Models in `mccbuild run`'s log: `submitted Slurm job N: model M, ...`.
pub(super) fn submitted_models(log: &str) -> Vec<String> {
    log.lines()
        .filter_map(|l| l.strip_prefix("submitted Slurm job "))
        .filter_map(|l| l.split("model ").nth(1))
        .filter_map(|l| l.split(',').next())
        .map(String::from)
        .collect()
}

/// A Slurm contest of the demo `instances` and one tool sleeping `seconds` on each of six
/// examinations: 6 runs per model, 2 at a time per job (`jobs = 2`).
fn sleeping_contest(instances: &[&str], seconds: u32) -> TestContest {
    slurm_contest(
        instances,
        (
            "slow",
            &format!("#!/bin/sh\nsleep {seconds}\necho 'STATE_SPACE STATES 1 TECHNIQUES X'\n"),
        ),
        "examinations = [\"StateSpace\", \"OneSafe\", \"QuasiLiveness\", \"StableMarking\", \"Liveness\", \"ReachabilityDeadlock\"]",
        "time_s = 60\nmemory_mb = 512",
        "",
    )
}

/// How many times each run was executed and recorded by a step: the `recorded on NODE: LABEL:`
/// lines of the jobs' logs in `<store>/slurm/`; and how many batch scripts were written there
/// (one per job submitted).
pub(super) fn executions(store: &Path) -> (BTreeMap<String, usize>, usize) {
    let (mut runs, mut scripts) = (BTreeMap::new(), 0);
    for f in fs::read_dir(store.join("slurm")).unwrap().flatten() {
        match f.path().extension().and_then(|e| e.to_str()) {
            Some("out") => {
                for line in fs::read_to_string(f.path()).unwrap().lines() {
                    if let Some(rest) = line.strip_prefix("recorded on ") {
                        let label = rest.split(": ").nth(1).unwrap_or("").to_string();
                        *runs.entry(label).or_default() += 1;
                    }
                }
            }
            Some("sh") => scripts += 1,
            _ => {}
        }
    }
    (runs, scripts)
}

/// Waits until some run is recorded and `jobs` jobs run.
fn wait_mid_contest(cluster: &Cluster, c: &TestContest, jobs: usize) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while c.records().is_empty() || cluster.running().len() < jobs {
        assert!(Instant::now() < deadline, "no run was recorded in a minute");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The orchestrator is disposable: `kill -9` of `mccbuild run` mid-contest leaves its jobs
/// running; `run --follow` from another terminal follows them and submits nothing; the next
/// `mccbuild run` adopts them, submits only the model no job covers, and counts as executed
/// only the runs of its own job. Every run is executed once (the steps' logs), one job per
/// model in all, and progress counts as running at most what the jobs run at once.
#[test]
fn a_killed_run_leaves_its_jobs_running_and_the_next_run_adopts_them() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(cluster) = Cluster::start(tmp.path()) else {
        return;
    };
    // 6 runs per model, 3 s each, 2 at a time: about 10 s per job.
    let c = sleeping_contest(&["Deadlock-PT-1", "TokenRing-PT-4", "ProdCons-PT-2"], 3);
    let spawn = |args: &[&str]| {
        cluster
            .command(env!("CARGO_BIN_EXE_mccbuild"))
            .args(args)
            .current_dir(c.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let two_models = ["--model", "Deadlock", "--model", "TokenRing"];
    let mut first = spawn(&[&["run", "--json"][..], &two_models].concat());
    wait_mid_contest(&cluster, &c, 2);
    first.kill().unwrap(); // SIGKILL
    let first = first.wait_with_output().unwrap();
    let at_kill = c.records().len();
    assert!(
        at_kill < 12,
        "the kill landed mid-contest: {at_kill} recorded"
    );
    let first_log = stderr(&first);
    let mut submitted = submitted_models(&first_log);
    assert_eq!(submitted.len(), 2, "{first_log}");

    // Another terminal follows the two models' jobs, submitting nothing.
    let follow = spawn(&[&["run", "--follow", "--json"][..], &two_models].concat());
    let second = cluster.mccbuild(c.path(), &["run", "--json"]);
    let follow = follow.wait_with_output().unwrap();

    let log = stderr(&second);
    assert!(second.status.success(), "{log}");
    assert_eq!(
        log.matches("following Slurm job").count(),
        2,
        "both jobs of the killed run adopted: {log}"
    );
    submitted.extend(submitted_models(&log));
    submitted.sort();
    assert_eq!(
        submitted,
        ["Deadlock", "ProdCons", "TokenRing"],
        "one job per model in all: {first_log}\n{log}"
    );
    let counts = json(&second);
    assert_eq!(counts["failed"], 0, "{log}");
    assert_eq!(
        counts["executed"], 6,
        "only ProdCons's runs are its own: {counts}"
    );
    let cached = counts["cached"].as_u64().unwrap();
    assert!(cached >= at_kill as u64, "{counts}");
    assert_eq!(counts["adopted"].as_u64().unwrap() + cached, 12, "{counts}");

    let follow_log = stderr(&follow);
    assert!(follow.status.success(), "{follow_log}");
    assert!(!follow_log.contains("submitted Slurm job"), "{follow_log}");
    let followed = json(&follow);
    assert_eq!(
        followed["adopted"].as_u64().unwrap() + followed["cached"].as_u64().unwrap(),
        12,
        "{followed}\n{follow_log}"
    );
    assert!(followed.get("executed") == Some(&0.into()), "{followed}");

    // Every planned run recorded, each executed exactly once (the steps' lines in the jobs'
    // logs), the adopted models' runs by the first command's jobs.
    let records = c.records();
    assert_eq!(records.len(), 18);
    let (executions, scripts) = executions(&c.path().join("cache"));
    assert_eq!(executions.len(), 18, "{executions:?}");
    assert!(executions.values().all(|&n| n == 1), "{executions:?}");
    assert_eq!(scripts, 3, "three jobs' scripts written in all");

    // Progress: at most 2 runs per job running at once (3 jobs), the others queued.
    let events: Vec<serde_json::Value> = fs::read_to_string(c.path().join("cache/progress.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let most = events.iter().filter_map(|e| e["running"].as_u64()).max();
    assert!(most.is_some_and(|m| (1..=6).contains(&m)), "{most:?}");
    assert!(
        events.iter().any(|e| e["queued"].as_u64() > Some(0)),
        "some runs were queued"
    );
}

/// slurmctld restarted mid-contest (an administrator's restart): `mccbuild run` waits until
/// Slurm answers again, and the jobs go on: nothing lost, nothing run twice, nothing submitted
/// again, no failure.
#[test]
fn a_restarted_slurmctld_loses_nothing_and_runs_nothing_twice() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(cluster) = Cluster::start(tmp.path()) else {
        return;
    };
    // 6 runs per model, 2 s each, 2 at a time: about 7 s per job.
    let c = sleeping_contest(&["Deadlock-PT-1", "TokenRing-PT-4"], 2);
    let run = cluster
        .command(env!("CARGO_BIN_EXE_mccbuild"))
        .args(["run", "--json"])
        .current_dir(c.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_mid_contest(&cluster, &c, 2);
    let out = Command::new(Path::new(REPO).join("scripts/slurm-cluster"))
        .args(["restart-ctld", "--dir"])
        .arg(&cluster.dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let during = c.records().len();
    let out = run.wait_with_output().unwrap();
    let log = stderr(&out);
    assert!(out.status.success(), "{log}");
    assert!(
        during < 12,
        "the restart came mid-contest: {during} recorded"
    );
    assert_eq!(
        json(&out),
        serde_json::json!({"executed": 12, "cached": 0, "failed": 0}),
        "{log}"
    );
    assert_eq!(
        submitted_models(&log).len(),
        2,
        "no job submitted again: {log}"
    );
    let (executions, scripts) = executions(&c.path().join("cache"));
    assert_eq!(scripts, 2);
    assert_eq!(executions.len(), 12, "{executions:?}");
    assert!(executions.values().all(|&n| n == 1), "{executions:?}");
    assert_eq!(c.records().len(), 12);
}
