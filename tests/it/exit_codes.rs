//! Every exit code docs/cli.md documents, each path through the real binary (the table of
//! docs/cli.md names these tests). Codes are mapped in one place (src/error.rs); these tests
//! hold that mapping to the documentation.

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::common::*;

const SS: &str = "STATE_SPACE STATES 9\nSTATE_SPACE TRANSITIONS 24\nSTATE_SPACE MAX_TOKEN_IN_PLACE 1\nSTATE_SPACE MAX_TOKEN_PER_MARKING 3\n";

/// One instance, one tool `a` answering its StateSpace.
fn contest() -> TestContest {
    let mut c = TestContest::new();
    c.copy_demo_instance("Philosophers-PT-000002");
    c.model("Philosophers", "known", &["models/Philosophers-PT-000002"]);
    c.scripted_tool("a", "examinations = [\"StateSpace\"]");
    c.answer("a", "Philosophers-PT-000002", "StateSpace", SS);
    c.write("time_s = 10\nmemory_mb = 512");
    c
}

fn code(out: &std::process::Output) -> Option<i32> {
    out.status.code()
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

// 0 -------------------------------------------------------------------------------------------

#[test]
fn exit_0_when_everything_asked_for_was_done() {
    let c = contest();
    for args in [
        &["check"][..],
        &["plan"],
        &["run"],
        &["scores"],
        &["confidence"],
        &["export", "--json", "-"],
    ] {
        let out = c.mccbuild(args);
        assert_eq!(code(&out), Some(0), "{args:?}: {}", stderr(&out));
    }
}

// 1 -------------------------------------------------------------------------------------------

#[test]
fn exit_1_when_a_tools_setup_fails() {
    let mut c = contest();
    c.scripted_tool(
        "broken",
        "examinations = [\"StateSpace\"]\nsetup = \"exit 3\"",
    );
    c.write("time_s = 10\nmemory_mb = 512");
    let out = c.mccbuild(&["run", "--json"]);
    assert_eq!(code(&out), Some(1), "{}", stderr(&out));
    assert_eq!(json(&out)["failed"], 1);
}

/// An infrastructure failure: the tool's entry cannot be started (its interpreter does not
/// exist). The run is reported and not recorded: it is still to do.
#[test]
fn exit_1_when_a_run_cannot_be_started() {
    let mut c = contest();
    c.script_tool(
        "unstartable",
        "#!/nonexistent/interpreter\necho 'STATE_SPACE STATES 9'\n",
        "examinations = [\"StateSpace\"]",
    );
    c.write("time_s = 10\nmemory_mb = 512");
    let out = c.mccbuild(&["run", "--json"]);
    assert_eq!(code(&out), Some(1), "{}", stderr(&out));
    assert_eq!(json(&out)["failed"], 1, "{}", stderr(&out));
    assert_eq!(
        json(&c.mccbuild(&["plan", "--json", "--tool", "unstartable"]))["to_run"],
        1
    );
}

/// A formula file missing from an instance (UpperBounds.xml removed) is a
/// problem of `check` naming the file, the instance and the examination and saying what to do;
/// `run` makes every other run, warns, and exits 1; so does an instance that cannot be read at
/// all (a broken archive). `--model` of another model asks nothing of them: exit 0.
#[test]
fn exit_1_when_run_leaves_out_an_instance_or_an_examination() {
    let mut c = TestContest::new();
    c.copy_demo_instance("Philosophers-PT-000002");
    fs::remove_file(
        c.path()
            .join("models/Philosophers-PT-000002/UpperBounds.xml"),
    )
    .unwrap();
    c.model("Philosophers", "known", &["models/Philosophers-PT-000002"]);
    c.scripted_tool("a", "examinations = [\"StateSpace\", \"UpperBounds\"]");
    c.answer("a", "Philosophers-PT-000002", "StateSpace", SS);
    c.write("time_s = 10\nmemory_mb = 512");
    let out = c.mccbuild(&["check"]);
    assert_eq!(code(&out), Some(2), "{}", stderr(&out));
    let said = stderr(&out);
    for part in [
        "Philosophers-PT-000002/UpperBounds.xml",
        "the formula file of examination UpperBounds is missing",
        "instance Philosophers-PT-000002 has no UpperBounds runs",
        "help: restore UpperBounds.xml",
        "take UpperBounds out of the `examinations` of `a`",
    ] {
        assert!(said.contains(part), "`{part}` not in: {said}");
    }
    let out = c.mccbuild(&["run", "--json"]);
    assert_eq!(code(&out), Some(1), "{}", stderr(&out));
    let said = stderr(&out);
    assert!(
        said.contains("warning: ") && said.contains("UpperBounds is missing"),
        "{said}"
    );
    assert!(
        said.contains("1 instance or examination instance was left out"),
        "{said}"
    );
    let summary = json(&out);
    assert_eq!(summary["executed"], 1, "the StateSpace run is made: {said}");
    assert_eq!(
        summary["left_out"],
        serde_json::json!([{"model": "Philosophers", "instance": "Philosophers-PT-000002", "examination": "UpperBounds"}])
    );
    // Asking only for StateSpace leaves nothing out.
    let out = c.mccbuild(&["run", "--examination", "StateSpace"]);
    assert_eq!(code(&out), Some(0), "{}", stderr(&out));

    // A whole instance left out: an archive that is not one, beside a good instance.
    let mut c = contest();
    fs::create_dir_all(c.path().join("inputs")).unwrap();
    fs::write(c.path().join("inputs/Broken-PT-1.tgz"), "not a tar.gz").unwrap();
    c.model("Broken", "known", &["inputs/Broken-PT-1.tgz"]);
    c.write("time_s = 10\nmemory_mb = 512");
    let out = c.mccbuild(&["run", "--json"]);
    assert_eq!(code(&out), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("Broken-PT-1.tgz"), "{}", stderr(&out));
    assert_eq!(
        json(&out)["left_out"],
        serde_json::json!([{"model": "Broken", "instance": "Broken-PT-1", "examination": null}])
    );
    let out = c.mccbuild(&["run", "--model", "Philosophers"]);
    assert_eq!(code(&out), Some(0), "{}", stderr(&out));
}

#[test]
fn exit_1_when_the_sandbox_cannot_start_the_command() {
    let out = mccbuild_in(
        Path::new(REPO),
        &["sandbox", "--time", "5", "--", "/nonexistent/command"],
    );
    assert_eq!(code(&out), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("/nonexistent/command"),
        "{}",
        stderr(&out)
    );
}

// 2 -------------------------------------------------------------------------------------------

#[test]
fn exit_2_for_an_invalid_manifest_with_every_unknown_key_reported() {
    let c = contest();
    let manifest = c.path().join("contest.toml");
    let text = fs::read_to_string(&manifest).unwrap();
    let text = text
        .replacen("[executor]\n", "[executor]\njbos = 3\n", 1)
        .replacen("[[tool]]\n", "[[tool]]\nsetp = \"x\"\n", 1);
    fs::write(&manifest, text).unwrap();
    let out = c.mccbuild(&["check"]);
    assert_eq!(code(&out), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    // Both unknown keys, each with its line, at once.
    assert!(err.contains("unknown field `jbos` in [executor]"), "{err}");
    assert!(err.contains("unknown field `setp` in [tool]"), "{err}");
    assert!(err.contains("contest.toml:"), "{err}");
    assert!(err.contains("2 problems found"), "{err}");
    // The whole report: each problem at its line and column, with the line quoted.
    output_settings(c.path()).bind(|| insta::assert_snapshot!("check_of_two_unknown_keys", err));
}

#[test]
fn exit_2_for_a_wrong_command_line() {
    let c = contest();
    for args in [
        &["plan", "--tool", "nope"][..],
        &["explain", "--tool", "a"],
        &["explain", "--tool", "nope", "--category", "StateSpace"],
        &["export", "--csv", "-", "--json", "-"],
        &["exec-run", "--key", "not-a-key"],
        &["import", "contest.toml"],
        &["sandbox", "--time", "0", "--", "true"],
        // A local contest has no Slurm jobs to follow; a forecast needs its nodes.
        &["run", "--follow"],
        &["plan", "--forecast"],
        &["plan", "--forecast", "--nodes", "2", "--run-overhead=-1"],
        &["plan", "--forecast", "--nodes", "2", "--job-overhead=-1"],
        &["frobnicate"],
    ] {
        let out = c.mccbuild(args);
        assert_eq!(code(&out), Some(2), "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn exit_2_for_invalid_rules_or_instances() {
    // A rules file with an unknown key.
    let c = contest();
    let rules = fs::read_to_string(Path::new(REPO).join("rules/mcc-2026.toml")).unwrap();
    fs::write(
        c.path().join("rules.toml"),
        rules.replacen("[scoring]", "[scoring]\npoints_per_exam = 16\n#", 1),
    )
    .unwrap();
    let manifest = c.path().join("contest.toml");
    let text = fs::read_to_string(&manifest).unwrap();
    let rules_line = text.lines().find(|l| l.starts_with("rules = ")).unwrap();
    fs::write(
        &manifest,
        text.replacen(rules_line, "rules = \"rules.toml\"", 1),
    )
    .unwrap();
    let out = c.mccbuild(&["check"]);
    assert_eq!(code(&out), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("points_per_exam"), "{}", stderr(&out));

    // An instance whose model is not XML.
    let c = contest();
    fs::write(
        c.path().join("models/Philosophers-PT-000002/model.pnml"),
        "not xml",
    )
    .unwrap();
    let out = c.mccbuild(&["check"]);
    assert_eq!(code(&out), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("model.pnml"), "{}", stderr(&out));
}

#[test]
fn exit_2_for_a_model_that_cannot_name_a_file() {
    let mut c = TestContest::new();
    c.copy_demo_instance("Philosophers-PT-000002");
    c.model("Philo/sophers", "known", &["models/Philosophers-PT-000002"]);
    c.scripted_tool("a", "examinations = [\"StateSpace\"]");
    c.answer("a", "Philosophers-PT-000002", "StateSpace", SS);
    c.write("time_s = 10\nmemory_mb = 512");
    assert_eq!(code(&c.mccbuild(&["run"])), Some(0));
    let out = c.mccbuild(&["export", "--verdicts", "verdicts"]);
    assert_eq!(code(&out), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("Philo/sophers"), "{}", stderr(&out));
}

#[test]
fn exit_2_when_watch_cannot_serve_on_the_address() {
    let c = contest();
    // An address already taken.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let out = c.mccbuild(&["watch", "--updates", "1", "--serve", &addr]);
    assert_eq!(code(&out), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("cannot serve"), "{}", stderr(&out));
}

// 3 -------------------------------------------------------------------------------------------

#[test]
fn exit_3_for_a_store_that_cannot_be_created() {
    let c = contest();
    fs::write(c.path().join("blocked"), "a file, not a folder").unwrap();
    let manifest = c.path().join("contest.toml");
    let text = fs::read_to_string(&manifest).unwrap();
    fs::write(
        &manifest,
        text.replacen("[contest]\n", "[contest]\nstore = \"blocked/cache\"\n", 1),
    )
    .unwrap();
    for args in [&["plan"][..], &["run"], &["scores"]] {
        let out = c.mccbuild(args);
        assert_eq!(code(&out), Some(3), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains("blocked"), "{}", stderr(&out));
    }
}

/// `watch` cannot watch the store's files: the system grants it no inotify instance. The limit
/// is set to 0 in a user namespace of the test's own (`/proc/sys/user/max_inotify_instances`
/// is per user namespace: the machine's limit is untouched).
#[test]
fn exit_3_when_watch_cannot_watch_the_store() {
    let c = contest();
    assert_eq!(code(&c.mccbuild(&["plan"])), Some(0));
    let script = format!(
        "echo 0 > /proc/sys/user/max_inotify_instances && exec {} watch --updates 1",
        env!("CARGO_BIN_EXE_mccbuild")
    );
    let out = Command::new("timeout")
        .args([
            "60",
            "unshare",
            "--user",
            "--map-root-user",
            "sh",
            "-c",
            &script,
        ])
        .current_dir(c.path())
        .output()
        .expect("unshare runs");
    let err = stderr(&out);
    if err.contains("unshare failed") {
        skip(&format!("no user namespaces here: {err}"));
        return;
    }
    assert_eq!(code(&out), Some(3), "{err}");
    assert!(err.contains("cannot watch files"), "{err}");
}

#[test]
fn exit_3_for_a_store_of_another_format() {
    let c = contest();
    fs::create_dir_all(c.path().join("cache")).unwrap();
    fs::write(c.path().join("cache/STORE"), "mccbuild store 99\n").unwrap();
    for args in [
        &["plan"][..],
        &["scores"],
        &["run"],
        &["watch", "--updates", "1"],
    ] {
        let out = c.mccbuild(args);
        assert_eq!(code(&out), Some(3), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains("another format"), "{}", stderr(&out));
    }
}

#[test]
fn exit_3_for_a_damaged_record_an_export_needs() {
    let c = contest();
    assert_eq!(code(&c.mccbuild(&["run"])), Some(0));
    let record = glob::glob(&format!("{}/cache/runs/*/*.json", c.path().display()))
        .unwrap()
        .flatten()
        .next()
        .unwrap();
    fs::write(&record, "{\"format\": 1, \"key\": tru").unwrap();
    let out = c.mccbuild(&["export", "--json", "-"]);
    assert_eq!(code(&out), Some(3), "{}", stderr(&out));
}

/// A store on a read-only file system, for real: the contest's `cache` is bind-mounted
/// read-only in a mount namespace of its own (root only: root writes through permissions).
#[test]
fn exit_3_when_a_command_that_records_finds_the_store_read_only() {
    if !is_root() {
        skip("a read-only store needs a read-only mount, which needs root");
        return;
    }
    let c = contest();
    // A results file for `import`, and the store made (a plan creates it).
    fs::write(
        c.path().join("raw.csv"),
        "tool,Input,Examination,results\na,Philosophers-PT-000002,ReachabilityDeadlock,T\n",
    )
    .unwrap();
    let manifest = c.path().join("contest.toml");
    let text = fs::read_to_string(&manifest).unwrap().replacen(
        "[executor]",
        "results = [\"raw.csv\"]\n\n[executor]",
        1,
    );
    fs::write(&manifest, text).unwrap();
    assert_eq!(code(&c.mccbuild(&["plan"])), Some(0));
    for args in ["run", "import raw.csv"] {
        let script = format!(
            "mount --bind cache cache && mount -o remount,bind,ro cache && exec {} {args}",
            env!("CARGO_BIN_EXE_mccbuild")
        );
        let out = Command::new("unshare")
            .args(["--mount", "--propagation", "private", "sh", "-c", &script])
            .current_dir(c.path())
            .output()
            .expect("unshare runs");
        assert_eq!(code(&out), Some(3), "{args}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("cannot be written"),
            "{args}: {}",
            stderr(&out)
        );
    }
    // Nothing was run or imported: the runs are still to do.
    let plan = json(&c.mccbuild(&["plan", "--json"]));
    assert_eq!(plan["cached"], 0, "{plan}");
}

// 4 -------------------------------------------------------------------------------------------

#[test]
fn exit_4_when_an_export_cannot_be_written() {
    let c = contest();
    assert_eq!(code(&c.mccbuild(&["run"])), Some(0));
    fs::write(c.path().join("blocked"), "a file, not a folder").unwrap();
    let out = c.mccbuild(&["export", "--dir", "blocked/out"]);
    assert_eq!(code(&out), Some(4), "{}", stderr(&out));
}

#[test]
fn exit_4_when_the_report_cannot_be_written() {
    let c = contest();
    assert_eq!(code(&c.mccbuild(&["run"])), Some(0));
    for out_dir in ["/proc/mccbuild-report", "blocked/report"] {
        fs::write(c.path().join("blocked"), "a file, not a folder").unwrap();
        let out = c.mccbuild(&["report", "--out", out_dir]);
        assert_eq!(code(&out), Some(4), "{out_dir}: {}", stderr(&out));
        // With the exports too: the first output that cannot be written says so.
        let out = c.mccbuild(&["report", "--exports", "--out", out_dir]);
        assert_eq!(code(&out), Some(4), "{out_dir}: {}", stderr(&out));
    }
}

#[test]
fn exit_4_when_standard_output_cannot_be_written() {
    let c = contest();
    assert_eq!(code(&c.mccbuild(&["run"])), Some(0));
    for args in [
        &["scores", "--json"][..],
        &["plan"],
        &["export", "--csv", "-"],
    ] {
        let full = fs::File::options().write(true).open("/dev/full").unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_mccbuild"))
            .args(args)
            .current_dir(c.path())
            .stdout(Stdio::from(full))
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        assert_eq!(code(&out), Some(4), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains("standard output"), "{}", stderr(&out));
    }
}

#[test]
fn a_closed_pipe_ends_quietly() {
    let c = contest();
    assert_eq!(code(&c.mccbuild(&["run"])), Some(0));
    let mut child = Command::new(env!("CARGO_BIN_EXE_mccbuild"))
        .args(["scores", "--json"])
        .current_dir(c.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert!(stderr(&out).is_empty(), "{}", stderr(&out));
}

// 5 -------------------------------------------------------------------------------------------

/// docs/cli.md, "Partial results": one record of a complete store deleted, `scores` (text and
/// JSON), `export` and `report` each say so with the count and what completes them, every time
/// (the second call answers from the results cache), and exit 5; after `run` makes the run
/// again, each is silent and exits 0.
#[test]
fn exit_5_when_the_results_are_partial_and_each_output_says_so() {
    let mut c = contest();
    c.scripted_tool("b", "examinations = [\"StateSpace\"]");
    c.answer("b", "Philosophers-PT-000002", "StateSpace", SS);
    c.write("time_s = 10\nmemory_mb = 512");
    assert_eq!(code(&c.mccbuild(&["run"])), Some(0));
    let key = c.record("a", "Philosophers-PT-000002", "StateSpace")["key"]
        .as_str()
        .unwrap()
        .to_string();
    fs::remove_file(c.loose_path(&key)).unwrap();
    let said = "partial results: 1 of the 2 planned runs is not in the store";
    let site = c.path().join("site");
    let site_arg = site.to_str().unwrap();
    for round in ["computed", "cached"] {
        let out = c.mccbuild(&["scores"]);
        assert_eq!(code(&out), Some(5), "{round}: {}", stderr(&out));
        assert!(stdout(&out).contains(said), "{round}: {}", stdout(&out));
        assert!(stdout(&out).contains("`mccbuild run`"), "{}", stdout(&out));
        assert!(stderr(&out).contains(said), "{round}: {}", stderr(&out));
        for args in [&["scores", "--json"][..], &["export", "--json", "-"]] {
            let out = c.mccbuild(args);
            assert_eq!(code(&out), Some(5), "{round} {args:?}: {}", stderr(&out));
            let partial = &json(&out)["partial"];
            assert_eq!(partial["missing_runs"], 1, "{round} {args:?}: {partial}");
            assert_eq!(partial["planned_runs"], 2, "{partial}");
            assert!(partial["help"].as_str().unwrap().contains("`mccbuild run`"));
            assert!(stderr(&out).contains(said), "{args:?}: {}", stderr(&out));
        }
        let out = c.mccbuild(&["report", "--out", site_arg]);
        assert_eq!(code(&out), Some(5), "{round}: {}", stderr(&out));
        let index = fs::read_to_string(site.join("index.html")).unwrap();
        assert!(index.contains(said), "{round}: the site does not say it");
        assert!(stderr(&out).contains(said), "{}", stderr(&out));
    }
    assert_eq!(code(&c.mccbuild(&["run"])), Some(0));
    for args in [
        &["scores"][..],
        &["scores", "--json"],
        &["export", "--json", "-"],
        &["report", "--out", site_arg],
    ] {
        let out = c.mccbuild(args);
        assert_eq!(code(&out), Some(0), "{args:?}: {}", stderr(&out));
        let all = stdout(&out) + &stderr(&out);
        assert!(!all.contains("partial"), "{args:?}: {all}");
    }
    let index = fs::read_to_string(site.join("index.html")).unwrap();
    assert!(!index.contains("partial results"));
}

// 130 -----------------------------------------------------------------------------------------

#[test]
fn exit_130_when_a_run_is_interrupted() {
    let mut c = contest();
    c.script_tool(
        "sleeper",
        "#!/bin/sh\nsleep 4242\necho 'STATE_SPACE STATES 9'\n",
        "examinations = [\"StateSpace\"]",
    );
    c.write("time_s = 100\nmemory_mb = 512");
    let child = Command::new(env!("CARGO_BIN_EXE_mccbuild"))
        .args(["run", "--tool", "sleeper"])
        .current_dir(c.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Interrupt once the run has started (its sleep is in the process table).
    let started = (0..200).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(100));
        Command::new("pgrep")
            .args(["-f", "sleep 4242"])
            .output()
            .is_ok_and(|o| o.status.success())
    });
    assert!(started, "the sleeper's run did not start");
    // SAFETY: a signal to our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(code(&out), Some(130), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("interrupted"), "{err}");
    // The stopped run is said to be interrupted, not to have failed.
    assert!(
        err.contains("sleeper Philosophers-PT-000002 StateSpace: interrupted"),
        "{err}"
    );
    assert!(
        !err.contains("failed:") && !err.contains("cancelled"),
        "{err}"
    );
    // Not recorded: the run is still to do.
    assert_eq!(
        json(&c.mccbuild(&["plan", "--json", "--tool", "sleeper"]))["to_run"],
        1
    );
}
