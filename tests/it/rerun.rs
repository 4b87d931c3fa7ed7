//! `mccbuild run --rerun`: the selected runs of the store, narrowed by outcome, are
//! executed again and their records replaced; nothing else runs, and no record is lost.

use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::common::*;

const I2: &str = "Philosophers-PT-000002";
const I3: &str = "Philosophers-PT-000003";

/// Two tools with the same script. StateSpace fails (exit 1, no answer, as a tool missing a
/// library does) until `<host>/installed` exists; ReachabilityDeadlock answers; QuasiLiveness
/// says CANNOT_COMPUTE, after a minute when `<host>/slow` exists. `host` stands for the host's
/// software: outside the contest, so not in any run's key.
fn contest(host: &Path) -> TestContest {
    let mut c = TestContest::new();
    c.copy_demo_instance(I2);
    c.copy_demo_instance(I3);
    c.model("Philosophers", "known", &["models/Philosophers-PT-*"]);
    let script = format!(
        r#"#!/bin/sh
case "$BK_EXAMINATION" in
StateSpace)
    if [ ! -f {host}/installed ]; then echo "libfoo.so.1: not found" >&2; exit 1; fi
    for v in "STATES 9" "TRANSITIONS 14" "MAX_TOKEN_IN_PLACE 1" "MAX_TOKEN_PER_MARKING 4"; do
        echo "STATE_SPACE $v TECHNIQUES EXPLICIT"
    done ;;
ReachabilityDeadlock) echo "FORMULA ReachabilityDeadlock FALSE TECHNIQUES EXPLICIT" ;;
*) if [ -f {host}/slow ]; then sleep 60; fi; echo CANNOT_COMPUTE ;;
esac
"#,
        host = host.display()
    );
    for tool in ["t", "u"] {
        c.script_tool(
            tool,
            &script,
            "examinations = [\"StateSpace\", \"ReachabilityDeadlock\", \"QuasiLiveness\"]",
        );
    }
    c.write("time_s = 100\nmemory_mb = 512");
    c
}

/// Every record file of the store, path -> bytes.
fn record_files(c: &TestContest) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for shard in fs::read_dir(c.path().join("cache/runs")).unwrap().flatten() {
        for f in fs::read_dir(shard.path()).unwrap().flatten() {
            if f.path().extension().is_some_and(|e| e == "json") {
                out.push((f.path(), fs::read(f.path()).unwrap()));
            }
        }
    }
    out.sort();
    out
}

fn outcome(c: &TestContest, tool: &str, instance: &str, exam: &str) -> String {
    let r = c.record(tool, instance, exam);
    format!("{} {}", r["verdict"], r["termination"]["reason"])
}

#[test]
fn run_rerun_failed_tool_t_redoes_exactly_t_s_failed_runs() {
    let host = host_software_dir();
    let c = contest(host.path());
    let first = c.mccbuild(&["run", "--json"]);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    assert_eq!(json(&first)["executed"], 12);
    assert_eq!(
        outcome(&c, "t", I2, "StateSpace"),
        "\"cannot_compute\" \"exit\""
    );
    let before = record_files(&c);
    assert_eq!(before.len(), 12);

    // The missing library installed: plain `run` finds every run cached (the host is not in
    // the key), `--rerun --failed --tool t` redoes t's two StateSpace runs and nothing else.
    fs::write(host.path().join("installed"), "").unwrap();
    let cached = c.mccbuild(&["run", "--json"]);
    assert_eq!(json(&cached)["executed"], 0, "{}", stderr(&cached));
    let rerun = c.mccbuild(&["run", "--rerun", "--failed", "--tool", "t", "--json"]);
    assert_eq!(rerun.status.code(), Some(0), "{}", stderr(&rerun));
    assert_eq!(
        json(&rerun),
        serde_json::json!({"executed": 2, "cached": 0, "failed": 0}),
        "{}",
        stderr(&rerun)
    );
    assert!(
        stderr(&rerun).contains("rerun: 2 runs (failed (crash or error))"),
        "{}",
        stderr(&rerun)
    );
    let after = record_files(&c);
    assert_eq!(after.len(), 12, "replaced, not added");
    let changed: std::collections::BTreeSet<String> = before
        .iter()
        .zip(&after)
        .filter(|(b, a)| b != a)
        .map(|((path, _), _)| {
            let r: serde_json::Value = serde_json::from_slice(&fs::read(path).unwrap()).unwrap();
            format!("{} {} {}", r["tool"], r["instance"], r["examination"])
        })
        .collect();
    assert_eq!(
        changed,
        [I2, I3]
            .map(|i| format!("\"t\" \"{i}\" \"StateSpace\""))
            .into(),
        "exactly t's failed runs were redone"
    );
    for instance in [I2, I3] {
        assert_eq!(
            outcome(&c, "t", instance, "StateSpace"),
            "\"answered\" \"exit\""
        );
        // u's failed runs are left as they were.
        assert_eq!(
            outcome(&c, "u", instance, "StateSpace"),
            "\"cannot_compute\" \"exit\""
        );
    }
    // The scores see the new records; redoing them again finds no failed run of t.
    let scores = json(&c.mccbuild(&["scores", "--json"]));
    let states = scores["values"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["instance"] == I2 && v["id"] == "STATES")
        .unwrap()
        .clone();
    assert_eq!(states["answers"]["t"], "9", "{states}");
    let again = c.mccbuild(&["run", "--rerun", "--failed", "--tool", "t", "--json"]);
    assert_eq!(json(&again)["executed"], 0, "{}", stderr(&again));
    // Several outcomes add up; the others and runs of other examinations are not redone.
    let cc = c.mccbuild(&[
        "run",
        "--rerun",
        "--cannot-compute",
        "--failed",
        "--examination",
        "QuasiLiveness",
        "--json",
    ]);
    assert_eq!(json(&cc)["executed"], 4, "{}", stderr(&cc));
}

#[test]
fn rerun_leaves_out_runs_not_in_the_store_and_outcome_options_need_it() {
    let host = host_software_dir();
    let c = contest(host.path());
    let first = c.mccbuild(&["run", "--json", "--tool", "u"]);
    assert_eq!(json(&first)["executed"], 6, "{}", stderr(&first));
    // t's runs are not in the store: --rerun does not execute them, and says so.
    let rerun = c.mccbuild(&[
        "run",
        "--rerun",
        "--json",
        "--examination",
        "ReachabilityDeadlock",
    ]);
    assert_eq!(
        json(&rerun),
        serde_json::json!({"executed": 2, "cached": 0, "failed": 0}),
        "{}",
        stderr(&rerun)
    );
    assert!(
        stderr(&rerun).contains("2 runs of the selection not in the store left out"),
        "{}",
        stderr(&rerun)
    );
    assert_eq!(c.records().len(), 6);
    let refused = c.mccbuild(&["run", "--failed"]);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(stderr(&refused).contains("--rerun"), "{}", stderr(&refused));
}

#[test]
fn an_interrupted_rerun_leaves_the_old_record() {
    let host = host_software_dir();
    let c = contest(host.path());
    let first = c.mccbuild(&[
        "run",
        "--json",
        "--tool",
        "t",
        "--examination",
        "QuasiLiveness",
    ]);
    assert_eq!(json(&first)["executed"], 2, "{}", stderr(&first));
    let before = record_files(&c);
    // Now the tool takes a minute: the rerun is interrupted while its runs execute.
    fs::write(host.path().join("slow"), "").unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_mccbuild"))
        .args([
            "run",
            "--rerun",
            "--cannot-compute",
            "--json",
            "--progress",
            "json",
        ])
        .current_dir(c.path())
        .env_remove("MCCBUILD_SANDBOX")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut events = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut started = 0;
    while started < 2 {
        let line = events.next().expect("run_started events").unwrap();
        started += usize::from(line.contains("\"run_started\""));
    }
    // SAFETY: kill on the child's pid.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    assert_eq!(json(&out)["interrupted"], true);
    assert_eq!(json(&out)["executed"], 0);
    assert_eq!(
        record_files(&c),
        before,
        "the old records are there, unchanged"
    );
    // And they still count: nothing is to run.
    let plan = json(&c.mccbuild(&[
        "plan",
        "--json",
        "--tool",
        "t",
        "--examination",
        "QuasiLiveness",
    ]));
    assert_eq!(plan["cached"], 2, "{plan}");
}

/// `host_packages`: the versions of the named Debian packages are in the tool's keys. Here
/// `dpkg-query` is a stand-in on the PATH reporting a version read from a file, so that the test
/// can "upgrade" the package: only that tool's runs are executed again.
#[test]
fn upgrading_a_host_package_a_tool_names_reruns_that_tools_runs_only() {
    let host = tempfile::tempdir().unwrap();
    let fake = host.path().join("bin");
    fs::create_dir_all(&fake).unwrap();
    let version = host.path().join("version");
    fs::write(&version, "1.0-1").unwrap();
    write_exec(
        &fake.join("dpkg-query"),
        &format!(
            "#!/bin/sh\nfor p; do case $p in libfoo) echo \"libfoo libfoo ii $(cat {})\";; -*) ;; *) echo \"dpkg-query: no packages found matching $p\" >&2;; esac; done\n",
            version.display()
        ),
    );
    let mut c = TestContest::new();
    c.copy_demo_instance(I2);
    c.model("Philosophers", "known", &["models/Philosophers-PT-*"]);
    let script = "#!/bin/sh\necho \"FORMULA $BK_EXAMINATION TRUE TECHNIQUES EXPLICIT\"\n";
    let exams = "examinations = [\"ReachabilityDeadlock\", \"OneSafe\"]";
    c.script_tool(
        "t",
        script,
        &format!("{exams}\nhost_packages = [\"libfoo\", \"libbar\"]"),
    );
    c.script_tool("u", script, exams);
    c.write("time_s = 30");
    let path = format!("{}:{}", fake.display(), std::env::var("PATH").unwrap());
    let mccbuild = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_mccbuild"))
            .args(args)
            .current_dir(c.path())
            .env("PATH", &path)
            .env_remove("MCCBUILD_SANDBOX")
            .output()
            .unwrap()
    };
    let first = mccbuild(&["run", "--json"]);
    assert_eq!(json(&first)["executed"], 4, "{}", stderr(&first));
    assert_eq!(json(&mccbuild(&["run", "--json"]))["executed"], 0);
    fs::write(&version, "1.1-1").unwrap();
    let plan = json(&mccbuild(&["plan", "--json"]));
    assert_eq!(plan["by_tool"]["t"]["to_run"], 2, "{plan}");
    assert_eq!(plan["by_tool"]["u"]["to_run"], 0, "{plan}");
    let upgraded = mccbuild(&["run", "--json", "--tool", "t"]);
    assert_eq!(json(&upgraded)["executed"], 2, "{}", stderr(&upgraded));
    // Installing the package that was missing (libbar) changes the keys too.
    write_exec(
        &fake.join("dpkg-query"),
        "#!/bin/sh\necho 'libfoo libfoo ii 1.1-1'\necho 'libbar libbar ii 0.9'\n",
    );
    assert_eq!(json(&mccbuild(&["plan", "--json"]))["to_run"], 2);

    // A name that is not a Debian package's: the manifest's line.
    let manifest = c.path().join("contest.toml");
    let text = fs::read_to_string(&manifest).unwrap();
    fs::write(&manifest, text.replace("\"libbar\"", "\"Lib Bar\"")).unwrap();
    let bad = mccbuild(&["check"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        stderr(&bad).contains("host_packages: `Lib Bar` is not a Debian package name")
            && stderr(&bad).contains("contest.toml:"),
        "{}",
        stderr(&bad)
    );
}
