//! The Slurm executor through a real Slurm cluster on this machine (scripts/slurm-cluster: one
//! slurmctld and `slurmd -N nodeK` daemons), driving the real `mccbuild` binary: the MCC 2025
//! edition re-enacted through three nodes scores as its import replay, each model on one node,
//! and a second `run` submits only what is missing (`reenact`); a tenth of the nodes killed, or
//! a node whose disk is full, loses nothing and charges no tool (`failures`); the jobs of a
//! `run` killed with SIGKILL are adopted by the next one and followed by `run --follow`, and a
//! restarted slurmctld loses nothing (`orchestrator`). Without Slurm or root these tests skip
//! (and fail in CI).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::*;

mod failures;
mod orchestrator;
mod reenact;

/// A private cluster in a temporary folder, stopped (exactly its own daemons) when dropped.
/// One cluster at a time: the machine has 2 cores.
struct Cluster {
    dir: PathBuf,
    conf: PathBuf,
    _one_at_a_time: std::sync::MutexGuard<'static, ()>,
}

static ONE_CLUSTER: std::sync::Mutex<()> = std::sync::Mutex::new(());

impl Cluster {
    /// A cluster of three nodes; None (skipped, or a failure in CI) without Slurm's daemons or
    /// root.
    fn start(parent: &Path) -> Option<Cluster> {
        Cluster::with_nodes(parent, 3)
    }

    /// A cluster of `nodes` nodes, as [`Cluster::start`].
    fn with_nodes(parent: &Path, nodes: usize) -> Option<Cluster> {
        let have = |p: &str| {
            Command::new("sh")
                .arg("-c")
                .arg(format!("command -v {p}"))
                .stdout(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        };
        if !["slurmctld", "slurmd", "sbatch", "squeue"]
            .iter()
            .all(|p| have(p))
        {
            skip("Slurm is not installed (apt-get install slurm-wlm; .ci/run does)");
            return None;
        }
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            skip("a Slurm cluster needs root (slurmd starts jobs as their user)");
            return None;
        }
        let guard = ONE_CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
        let dir = parent.join("cluster");
        let out = Command::new(Path::new(REPO).join("scripts/slurm-cluster"))
            .args(["start", "--nodes", &nodes.to_string(), "--dir"])
            .arg(&dir)
            .output()
            .expect("scripts/slurm-cluster runs");
        let cluster = Cluster {
            conf: dir.join("slurm.conf"),
            dir,
            _one_at_a_time: guard,
        };
        assert!(
            out.status.success(),
            "the cluster did not start: {}{}",
            stdout(&out),
            stderr(&out)
        );
        // A node the script had to start again says so here.
        if !out.stderr.is_empty() {
            eprintln!("scripts/slurm-cluster start: {}", stderr(&out));
        }
        Some(cluster)
    }

    fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = Command::new(program);
        c.env("SLURM_CONF", &self.conf)
            .env_remove("MCCBUILD_SANDBOX");
        c
    }

    fn mccbuild(&self, dir: &Path, args: &[&str]) -> Output {
        self.command(env!("CARGO_BIN_EXE_mccbuild"))
            .args(args)
            .current_dir(dir)
            .output()
            .expect("mccbuild runs")
    }

    /// Running jobs and their nodes.
    fn running(&self) -> Vec<(String, String)> {
        let out = self
            .command("squeue")
            .args(["-h", "-t", "R", "-o", "%i %N"])
            .output()
            .expect("squeue runs");
        stdout(&out)
            .lines()
            .filter_map(|l| {
                let mut f = l.split_whitespace();
                Some((f.next()?.to_string(), f.next()?.to_string()))
            })
            .collect()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new(Path::new(REPO).join("scripts/slurm-cluster"))
            .args(["stop", "--dir"])
            .arg(&self.dir)
            .output();
    }
}

fn model_of(instance: &str) -> &str {
    instance.split("-PT-").next().unwrap()
}

/// `c` under the Slurm executor, with `slurm` appended to the manifest (`[executor.slurm]`
/// settings, or nothing).
fn under_slurm(c: &TestContest, slurm: &str) {
    let manifest = c.path().join("contest.toml");
    let text = fs::read_to_string(&manifest).unwrap();
    fs::write(
        &manifest,
        text.replace("[executor]\n", "[executor]\nkind = \"slurm\"\n") + slurm,
    )
    .unwrap();
}

/// A Slurm contest of the demo `instances` (each its own model, named by the instance's model)
/// and one script tool `tool` answering `examinations` (a TOML line) within `limits`, with
/// `slurm` appended to the manifest (as `under_slurm`).
fn slurm_contest(
    instances: &[&str],
    tool: (&str, &str),
    examinations: &str,
    limits: &str,
    slurm: &str,
) -> TestContest {
    let mut c = TestContest::new();
    for instance in instances {
        c.copy_demo_instance(instance);
        c.model(
            model_of(instance),
            "known",
            &[&format!("models/{instance}")],
        );
    }
    c.script_tool(tool.0, tool.1, examinations);
    c.write(limits);
    under_slurm(&c, slurm);
    c
}

#[test]
fn ctrl_c_cancels_exactly_this_contests_jobs_and_records_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(cluster) = Cluster::start(tmp.path()) else {
        return;
    };
    let c = slurm_contest(
        &["Deadlock-PT-1", "TokenRing-PT-4"],
        (
            "slow",
            "#!/bin/sh\nsleep 60\necho 'STATE_SPACE STATES 1 TECHNIQUES X'\n",
        ),
        "examinations = [\"StateSpace\", \"OneSafe\"]",
        "time_s = 100\nmemory_mb = 512",
        "",
    );
    // Someone else's job on the same cluster.
    let other = cluster
        .command("sbatch")
        .args([
            "--parsable",
            "-N1",
            "-c1",
            "-o",
            "/dev/null",
            "--wrap",
            "sleep 120",
        ])
        .current_dir(c.path())
        .output()
        .unwrap();
    assert!(other.status.success(), "{}", stderr(&other));
    let other = stdout(&other).trim().to_string();
    let child = cluster
        .command(env!("CARGO_BIN_EXE_mccbuild"))
        .args(["run", "--json"])
        .current_dir(c.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while cluster.running().len() < 3 {
        assert!(Instant::now() < deadline, "the jobs did not start");
        std::thread::sleep(Duration::from_millis(100));
    }
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("cancelled Slurm jobs"),
        "{}",
        stderr(&out)
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let running = cluster.running();
        if running.len() == 1 {
            assert_eq!(running[0].0, other, "only the other job is left");
            break;
        }
        assert!(Instant::now() < deadline, "still running: {running:?}");
        std::thread::sleep(Duration::from_millis(200));
    }
    let records = c.records();
    assert!(
        records.is_empty(),
        "cancelled runs are not recorded: {:?}\n{}",
        records
            .iter()
            .map(|r| (&r["examination"], &r["termination"], &r["host"]))
            .collect::<Vec<_>>(),
        stderr(&out)
    );
}

#[test]
fn slurm_runs_share_the_local_sandbox_key_and_bad_settings_are_named() {
    // No cluster needed: keys and the manifest.
    let mut c = TestContest::new();
    c.copy_demo_instance("Deadlock-PT-1");
    c.model("Deadlock", "known", &["models/Deadlock-PT-1"]);
    c.scripted_tool("t", "examinations = [\"StateSpace\"]");
    c.answer(
        "t",
        "Deadlock-PT-1",
        "StateSpace",
        "STATE_SPACE STATES 2 TECHNIQUES X\n",
    );
    c.write("time_s = 10\nmemory_mb = 512");
    let out = c.mccbuild(&["run", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let record = c.record("t", "Deadlock-PT-1", "StateSpace");
    // The key's executor part is the sandbox that executed the run, never the scheduler.
    let sandbox = record["executor"]["sandbox"].as_str().unwrap().to_string();
    assert!(
        ["cgroup+namespaces", "cgroup", "fallback"].contains(&sandbox.as_str()),
        "{record}"
    );
    let names: Vec<&String> = record["executor"].as_object().unwrap().keys().collect();
    assert_eq!(
        names,
        ["kind", "output_limit_bytes", "pids_limit", "sandbox"],
        "the local sandbox's ingredients only: {record}"
    );
    assert_eq!(record["executor"]["kind"], "local");
    assert!(
        record.get("slurm").is_none(),
        "local records have no Slurm placement"
    );
    let manifest = c.path().join("contest.toml");
    let text = fs::read_to_string(&manifest).unwrap();
    fs::write(
        &manifest,
        text.replace("[executor]\n", "[executor]\nkind = \"slurm\"\n"),
    )
    .unwrap();
    let plan = json(&c.mccbuild(&["plan", "--json"]));
    assert_eq!(
        plan["to_run"], 0,
        "moving to Slurm reuses the records: {plan}"
    );
    assert_eq!(plan["cached"], 1);

    // Bad settings: the manifest, the line and the field.
    let good = fs::read_to_string(&manifest).unwrap();
    for (extra, expected) in [
        (
            "[executor.slurm]\npartition = \"a b\"\n",
            "partition `a b` is not a Slurm name",
        ),
        (
            "[executor.slurm]\nsbatch_options = [\"time=1\"]\n",
            "sbatch_options: `time=1` is not an option",
        ),
        (
            "[executor.slurm]\nattempts = 0\n",
            "attempts must be at least 1",
        ),
        ("[executor.slurm]\nnodes = 3\n", "unknown field `nodes`"),
    ] {
        fs::write(&manifest, format!("{good}\n{extra}")).unwrap();
        let out = c.mccbuild(&["check"]);
        assert_eq!(out.status.code(), Some(2), "{extra}");
        let err = stderr(&out);
        assert!(
            err.contains(expected) && err.contains("contest.toml:"),
            "{extra} -> {err}"
        );
    }
    fs::write(
        &manifest,
        format!(
            "{}\n[executor.slurm]\npartition = \"main\"\n",
            good.replace("kind = \"slurm\"\n", "")
        ),
    )
    .unwrap();
    let err = stderr(&c.mccbuild(&["check"]));
    assert!(err.contains("kind is not \"slurm\""), "{err}");
}

#[test]
fn without_sbatch_the_runs_are_infrastructure_failures_never_recorded() {
    let mut c = TestContest::new();
    c.copy_demo_instance("Deadlock-PT-1");
    c.model("Deadlock", "known", &["models/Deadlock-PT-1"]);
    c.scripted_tool("t", "examinations = [\"StateSpace\"]");
    c.write("time_s = 10\nmemory_mb = 512");
    let manifest = c.path().join("contest.toml");
    let text = fs::read_to_string(&manifest).unwrap();
    fs::write(
        &manifest,
        text.replace("[executor]\n", "[executor]\nkind = \"slurm\"\n"),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_mccbuild"))
        .args(["run", "--json"])
        .current_dir(c.path())
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(json(&out)["failed"], 1);
    let err = stderr(&out);
    assert!(
        err.contains("infrastructure failure (not recorded)")
            && err.contains("cannot run `squeue`"),
        "{err}"
    );
    assert!(c.records().is_empty(), "nothing recorded");
}

#[test]
fn exec_run_records_a_run_of_the_contest_with_its_step_and_refuses_others() {
    let mut c = TestContest::new();
    c.copy_demo_instance("Deadlock-PT-1");
    c.model("Deadlock", "known", &["models/Deadlock-PT-1"]);
    c.scripted_tool("t", "examinations = [\"StateSpace\"]");
    c.write("time_s = 10\nmemory_mb = 512");
    let out = c.mccbuild(&["exec-run", "--key", &"ab".repeat(32)]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("is not a run of"), "{}", stderr(&out));
    let out = c.mccbuild(&["exec-run", "--key", "xyz"]);
    assert_eq!(out.status.code(), Some(2));
    // A real key runs here and is recorded (exit 0), with the Slurm step it ran in.
    let out = c.mccbuild(&["run", "--json"]);
    assert!(out.status.success());
    let record = c.record("t", "Deadlock-PT-1", "StateSpace");
    let key = record["key"].as_str().unwrap().to_string();
    let path = c.loose_path(&key);
    fs::remove_file(&path).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_mccbuild"))
        .args(["exec-run", "--key", &key])
        .current_dir(c.path())
        .env("SLURM_JOB_ID", "77")
        .env("SLURM_STEP_ID", "3")
        .env("SLURMD_NODENAME", "node9")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("recorded on node9"),
        "{}",
        stderr(&out)
    );
    let again = c.record("t", "Deadlock-PT-1", "StateSpace");
    assert_eq!(again["host"], "node9");
    assert_eq!(
        again["slurm"],
        serde_json::json!({"job": "77", "step": "3", "node": "node9"})
    );
    assert_eq!(again["executor"], record["executor"]);
    assert_eq!(again["answers"], record["answers"]);
}

#[test]
fn steps_per_model_run_a_jobs_runs_in_one_step_on_one_node() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(cluster) = Cluster::start(tmp.path()) else {
        return;
    };
    let c = slurm_contest(
        &["Deadlock-PT-1", "TokenRing-PT-4"],
        (
            "quick",
            "#!/bin/sh\necho 'STATE_SPACE STATES 1 TECHNIQUES X'\n",
        ),
        "examinations = [\"StateSpace\", \"GlobalProperties\"]",
        "time_s = 10\nmemory_mb = 512",
        "\n[executor.slurm]\nsteps = \"model\"\n",
    );
    let out = cluster.mccbuild(c.path(), &["run", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(json(&out)["executed"], 12, "{}", stderr(&out));
    let mut steps: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for r in c.records() {
        let slurm = &r["slurm"];
        assert_eq!(slurm["node"], r["host"]);
        steps
            .entry(model_of(r["instance"].as_str().unwrap()).to_string())
            .or_default()
            .insert(format!(
                "{} {}.{}",
                slurm["node"], slurm["job"], slurm["step"]
            ));
    }
    assert_eq!(steps.len(), 2);
    for (model, s) in &steps {
        assert_eq!(
            s.len(),
            1,
            "model {model}: one node, one job, one step: {s:?}"
        );
    }
}

/// A tool whose StateSpace fails until `<host>/installed` exists (the host's software, outside
/// every key), on two models.
fn failing_until_installed(host: &Path) -> TestContest {
    let mut c = TestContest::new();
    c.copy_demo_instance("Deadlock-PT-1");
    c.copy_demo_instance("TokenRing-PT-4");
    c.model("Deadlock", "known", &["models/Deadlock-PT-1"]);
    c.model("TokenRing", "known", &["models/TokenRing-PT-4"]);
    c.script_tool(
        "t",
        &format!(
            "#!/bin/sh\nif [ \"$BK_EXAMINATION\" = StateSpace ] && [ ! -f {}/installed ]; then exit 1; fi\necho 'STATE_SPACE STATES 1 TECHNIQUES X'\necho 'FORMULA ReachabilityDeadlock FALSE TECHNIQUES X'\n",
            host.display()
        ),
        "examinations = [\"StateSpace\", \"ReachabilityDeadlock\"]",
    );
    c.write("time_s = 10\nmemory_mb = 512");
    c
}

#[test]
fn exec_run_redoes_a_rerun_only_while_the_record_it_replaces_is_stored() {
    let host = host_software_dir();
    let c = failing_until_installed(host.path());
    let out = c.mccbuild(&["run", "--json", "--model", "Deadlock"]);
    assert_eq!(json(&out)["executed"], 2, "{}", stderr(&out));
    let old = c.record("t", "Deadlock-PT-1", "StateSpace");
    let (key, digest) = (
        old["key"].as_str().unwrap(),
        old["digest"].as_str().unwrap(),
    );
    fs::write(host.path().join("installed"), "").unwrap();
    // Plain key: in the store, so nothing to do.
    let out = c.mccbuild(&["exec-run", "--key", key]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(c.record("t", "Deadlock-PT-1", "StateSpace"), old);
    // A rerun of another record (already replaced, say): nothing to do either.
    let stale = format!("{key}:{}", "00".repeat(32));
    let out = c.mccbuild(&["exec-run", "--key", &stale]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(c.record("t", "Deadlock-PT-1", "StateSpace"), old);
    // The rerun of the stored record: executed, the record replaced.
    let out = c.mccbuild(&["exec-run", "--key", &format!("{key}:{digest}")]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let new = c.record("t", "Deadlock-PT-1", "StateSpace");
    assert_eq!(new["verdict"], "answered", "{new}");
    // Resubmitted after that (the same word again): not redone a second time.
    let out = c.mccbuild(&["exec-run", "--key", &format!("{key}:{digest}")]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(c.record("t", "Deadlock-PT-1", "StateSpace"), new);
}

#[test]
fn rerun_failed_through_slurm_redoes_exactly_the_failed_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(cluster) = Cluster::start(tmp.path()) else {
        return;
    };
    let host = host_software_dir();
    let c = failing_until_installed(host.path());
    under_slurm(&c, "");
    let out = cluster.mccbuild(c.path(), &["run", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json(&out)["executed"], 4, "{}", stderr(&out));
    let before: BTreeMap<String, serde_json::Value> = c
        .records()
        .into_iter()
        .map(|r| (format!("{} {}", r["instance"], r["examination"]), r))
        .collect();
    fs::write(host.path().join("installed"), "").unwrap();
    let out = cluster.mccbuild(c.path(), &["run", "--rerun", "--failed", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        json(&out),
        serde_json::json!({"executed": 2, "cached": 0, "failed": 0}),
        "{}",
        stderr(&out)
    );
    for r in c.records() {
        let name = format!("{} {}", r["instance"], r["examination"]);
        if r["examination"] == "StateSpace" {
            assert_eq!(r["verdict"], "answered", "{name}: {r}");
            assert_ne!(r["slurm"], before[&name]["slurm"], "{name}: a new step");
        } else {
            assert_eq!(r, before[&name], "{name}: not redone");
        }
    }
    assert_eq!(c.records().len(), 4);
}

/// A real submission under the Slurm executor: the test submission of tests/submission-tool,
/// unchanged, answers all 13 examinations of Philosophers-PT-000002 with the golden values
/// (tests/golden/demo-models.csv) through a real cluster, each run a step in the local sandbox of
/// a node, as `mcc`.
#[test]
fn the_test_submission_gives_the_golden_answers_through_slurm() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(cluster) = Cluster::start(tmp.path()) else {
        return;
    };
    let dir = tmp.path().join("contest");
    fs::create_dir_all(&dir).unwrap();
    let exams = ALL_EXAMINATIONS;
    submission_contest(
        &dir,
        "[executor]\nkind = \"slurm\"\njobs = 2",
        60,
        &[("submission", "portfolio")],
        &exams,
    );
    let out = cluster.mccbuild(&dir, &["run", "--json"]);
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    assert_eq!(json(&out)["executed"], 13, "{}", stderr(&out));
    let records = store_records(&dir.join("store"));
    assert_eq!(records.len(), 13);
    let mut values = 0;
    for r in &records {
        assert!(r["slurm"]["job"].is_string(), "{r}");
        values += assert_submission_run(r, "portfolio");
        let err = r["stderr"]["text"].as_str().unwrap();
        assert!(err.contains("user mcc (") && !err.contains("(0)"), "{err}");
    }
    let golden: usize = exams
        .iter()
        .map(|e| golden_answers(SUBMISSION_INSTANCE, e).len())
        .sum();
    assert_eq!(values, golden);
}
