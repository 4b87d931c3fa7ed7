//! Failures of the cluster's machines mid-contest, done for real: a tenth of the nodes killed, a
//! node whose temporary folder's file system is full. Nothing lost, nothing charged to a tool,
//! nothing run twice.

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::Cluster;
use super::orchestrator::{executions, submitted_models};
use crate::common::*;

/// A Slurm contest of `models` models (each one copy of the demo's Deadlock-PT-1, named
/// `M<k>-PT-1`) and one tool sleeping `seconds` on each of `exams` examinations, 2 runs at a
/// time per job.
fn sleeping_models(models: usize, seconds: f32, exams: &[&str]) -> TestContest {
    let mut c = TestContest::new();
    for k in 0..models {
        let name = format!("M{k}");
        let instance = format!("{name}-PT-1");
        copy_dir(
            &Path::new(REPO).join("models/Deadlock-PT-1"),
            &c.path().join("models").join(&instance),
        );
        c.model(&name, "known", &[&format!("models/{instance}")]);
    }
    let list: Vec<String> = exams.iter().map(|e| format!("\"{e}\"")).collect();
    c.script_tool(
        "slow",
        &format!("#!/bin/sh\nsleep {seconds}\necho 'STATE_SPACE STATES 1 TECHNIQUES X'\n"),
        &format!("examinations = [{}]", list.join(", ")),
    );
    c.write("time_s = 60\nmemory_mb = 512");
    let manifest = c.path().join("contest.toml");
    let text = fs::read_to_string(&manifest).unwrap();
    fs::write(
        &manifest,
        text.replace("[executor]\n", "[executor]\nkind = \"slurm\"\n"),
    )
    .unwrap();
    c
}

const SIX: [&str; 6] = [
    "StateSpace",
    "OneSafe",
    "QuasiLiveness",
    "StableMarking",
    "Liveness",
    "ReachabilityDeadlock",
];

/// Every record ended as the tool ended it (exit 0 after its sleep): none charged to the tool.
fn assert_all_exited(records: &[serde_json::Value]) {
    for r in records {
        assert_eq!(
            r["termination"],
            serde_json::json!({"reason": "exit", "code": 0}),
            "{r}"
        );
    }
}

fn cluster_script(cluster: &Cluster, args: &[&str]) -> String {
    let out = Command::new(Path::new(REPO).join("scripts/slurm-cluster"))
        .args(args)
        .arg("--dir")
        .arg(&cluster.dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    stdout(&out)
}

/// A tenth of the nodes killed mid-contest (the slurmd of one node of ten, with a job on it,
/// killed with SIGKILL): its job's unrecorded runs are submitted again and run on other nodes;
/// every run is recorded exactly once (one `recorded on` line per run in the jobs' logs), none
/// as a failure of the tool, none given up.
#[test]
fn a_tenth_of_the_nodes_killed_loses_nothing_and_charges_no_tool() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(cluster) = Cluster::with_nodes(tmp.path(), 10) else {
        return;
    };
    // 10 models of 6 runs of 2 s, 2 at a time: about 6 s per job, one job per node.
    let c = sleeping_models(10, 2.0, &SIX);
    let child = cluster
        .command(env!("CARGO_BIN_EXE_mccbuild"))
        .args(["run", "--json"])
        .current_dir(c.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Once a job has recorded a run, kill the slurmd of its node.
    let deadline = Instant::now() + Duration::from_secs(60);
    let killed = loop {
        assert!(Instant::now() < deadline, "no run recorded within a minute");
        let running = cluster.running();
        let records = c.records();
        let busy = running.iter().find(|(_, node)| {
            records
                .iter()
                .any(|r| r["host"] == node.as_str() && r["slurm"]["node"] == node.as_str())
        });
        if let Some((_, node)) = busy {
            cluster_script(&cluster, &["kill-node", node]);
            break node.clone();
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let at_kill = c.records().len();
    let out = child.wait_with_output().unwrap();
    let log = stderr(&out);
    assert!(out.status.success(), "killed {killed}:\n{log}");
    assert!(
        at_kill < 60,
        "the kill came mid-contest: {at_kill} recorded"
    );
    assert_eq!(
        json(&out),
        serde_json::json!({"executed": 60, "cached": 0, "failed": 0}),
        "{log}"
    );
    assert!(
        log.contains(&format!("on node {killed}"))
            && log.contains("to run again")
            && log.contains("not a failure of the tools"),
        "the killed node's runs were put back to run: {log}"
    );
    // One job per model, and one more for the killed node's model.
    assert_eq!(submitted_models(&log).len(), 11, "{log}");

    let records = c.records();
    assert_eq!(records.len(), 60);
    assert_all_exited(&records);
    // Each run recorded by one step: one `recorded on` line in the jobs' logs, but for runs
    // recorded on the killed node, whose line may be lost with its job's output.
    let (executions, _) = executions(&c.path().join("cache"));
    for r in &records {
        let label = format!(
            "slow {} {}",
            r["instance"].as_str().unwrap(),
            r["examination"].as_str().unwrap()
        );
        let lines = executions.get(&label).copied().unwrap_or(0);
        let on_killed = r["host"] == killed.as_str();
        assert!(
            lines == 1 || (on_killed && lines == 0),
            "{label}: {lines} executions recorded (on {}): {executions:?}",
            r["host"]
        );
    }
    // The killed node's model: its runs not recorded there were run on another node.
    let hit = records
        .iter()
        .find(|r| r["host"] == killed.as_str())
        .map(|r| r["instance"].clone())
        .unwrap();
    let elsewhere: Vec<&serde_json::Value> = records
        .iter()
        .filter(|r| r["instance"] == hit && r["host"] != killed.as_str())
        .map(|r| &r["host"])
        .collect();
    assert!(!elsewhere.is_empty(), "{hit}'s runs all ran on {killed}");
}

/// A node whose disk is full (its temporary folder, where the sandbox unpacks each run, a full
/// file system: `scripts/slurm-cluster fill-disk`), two of three here: the runs of the jobs
/// placed there cannot start; they are not recorded (nothing charged to the tools), mccbuild
/// says which node and folder failed, and submits them again on the node left. Every run is
/// recorded once, by the healthy node.
#[test]
fn a_node_whose_disk_is_full_charges_no_tool_and_its_runs_go_elsewhere() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(cluster) = Cluster::start(tmp.path()) else {
        return;
    };
    let full: Vec<String> = ["node1", "node2"]
        .iter()
        .map(|n| cluster_script(&cluster, &["fill-disk", n]))
        .collect();
    assert!(full.iter().all(|f| f.contains(": 0 KB left")), "{full:?}");
    // 2 models of 2 runs of 0.2 s: one job on each full node, as Slurm fills idle nodes in order.
    let c = sleeping_models(2, 0.2, &SIX[..2]);
    let out = cluster.mccbuild(c.path(), &["run", "--json"]);
    let log = stderr(&out);
    assert!(out.status.success(), "{log}");
    assert_eq!(
        json(&out),
        serde_json::json!({"executed": 4, "cached": 0, "failed": 0}),
        "{log}"
    );
    let folder = cluster.dir.join("tmp");
    let requeued: Vec<&str> = log.lines().filter(|l| l.contains("to run again")).collect();
    assert!(!requeued.is_empty(), "{log}");
    for line in &requeued {
        assert!(
            (line.contains("on node node1") || line.contains("on node node2"))
                && line.contains(&folder.display().to_string())
                && line.contains("No space left on device")
                && line.contains("not a failure of the tools"),
            "the node, the folder and why: {line}"
        );
    }
    let records = c.records();
    assert_eq!(records.len(), 4);
    assert_all_exited(&records);
    assert!(
        records.iter().all(|r| r["host"] == "node3"),
        "{:?}",
        records.iter().map(|r| &r["host"]).collect::<Vec<_>>()
    );
}
