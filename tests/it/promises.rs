//! Promises of docs/cache.md and docs/execution.md that no other suite proved, each through the
//! real binary; the pages name these tests (tests/it/docs.rs checks that the names exist).

use std::path::Path;

use crate::common::*;

const PHIL: &str = "Philosophers-PT-000002";

/// A contest of one demo instance and one tool answering UpperBounds.
fn one_run_contest(kind: &str, model: &str) -> TestContest {
    let mut c = TestContest::new();
    c.copy_demo_instance(PHIL);
    c.model(model, kind, &[&format!("models/{PHIL}")]);
    c.scripted_tool("t", "examinations = [\"UpperBounds\"]");
    c.answer(
        "t",
        PHIL,
        "UpperBounds",
        "FORMULA Philosophers-PT-000002-UpperBounds-00 2\n",
    );
    c
}

fn to_run(c: &TestContest) -> u64 {
    let plan = c.mccbuild(&["plan", "--json"]);
    json(&plan)["to_run"].as_u64().unwrap()
}

/// docs/execution.md, "The BenchKit protocol": a clean environment (PATH, HOME, TMPDIR,
/// LANG=C.UTF-8 and the BK_* values), an empty stdin, a working folder of the run's own in the
/// temporary folder, removed afterwards.
#[test]
fn a_run_sees_a_clean_environment_and_an_empty_stdin_in_a_folder_removed_afterwards() {
    let mut c = TestContest::new();
    c.copy_demo_instance(PHIL);
    c.model("Philosophers", "known", &[&format!("models/{PHIL}")]);
    c.script_tool(
        "env",
        "#!/bin/sh\nenv | cut -d= -f1 | sort | tr '\\n' ' ' >&2; echo >&2\n\
         echo \"LANG=$LANG HOME=$HOME TMPDIR=$TMPDIR\" >&2\n\
         echo \"STDIN $(cat | wc -c)\" >&2\necho \"PWD $(pwd)\" >&2\necho DO_NOT_COMPETE\n",
        "examinations = [\"UpperBounds\"]",
    );
    c.write("time_s = 20\nmemory_mb = 512");
    let tmp = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mccbuild"))
        .args(["run"])
        .current_dir(c.path())
        .env_remove("MCCBUILD_SANDBOX")
        .env("TMPDIR", tmp.path())
        .env("SECRET_OF_THE_HOST", "x")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let err = c.record("env", PHIL, "UpperBounds")["stderr"]["text"]
        .as_str()
        .unwrap()
        .to_string();
    let mut lines = err.lines();
    let names: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    for name in &names {
        assert!(
            [
                "PATH", "HOME", "TMPDIR", "LANG", "PWD", "SHLVL", "_", "OLDPWD"
            ]
            .contains(name)
                || name.starts_with("BK_"),
            "{name} in the run's environment: {err}"
        );
    }
    for name in ["PATH", "HOME", "TMPDIR", "LANG", "BK_INPUT", "BK_LOG_FILE"] {
        assert!(names.contains(&name), "{name} missing: {err}");
    }
    let pwd = err
        .lines()
        .find_map(|l| l.strip_prefix("PWD "))
        .unwrap()
        .to_string();
    let run_folder = Path::new(&pwd).parent().unwrap();
    assert!(
        run_folder.starts_with(tmp.path()),
        "the run's folder {pwd} is in TMPDIR {}",
        tmp.path().display()
    );
    assert!(lines.next().unwrap().starts_with(&format!(
        "LANG=C.UTF-8 HOME={0}/home TMPDIR={0}/tmp",
        run_folder.display()
    )));
    assert!(err.contains("STDIN 0\n"), "{err}");
    assert!(!run_folder.exists(), "{} is removed", run_folder.display());
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .filter(|n| {
            n.to_string_lossy().starts_with("mccbuild-") && n.to_string_lossy() != "mccbuild-cores"
        })
        .collect();
    assert!(left.is_empty(), "left in TMPDIR: {left:?}");
}

/// docs/cache.md, "Hashing large inputs once": losing the digest cache only costs rehashing.
#[test]
fn losing_the_digest_cache_only_costs_rehashing() {
    let c = one_run_contest("known", "Philosophers");
    c.write("time_s = 20\nmemory_mb = 512");
    assert!(c.mccbuild(&["run"]).status.success());
    let digests = c.path().join("cache/meta/digests.bin");
    assert!(digests.exists());
    std::fs::remove_file(&digests).unwrap();
    let out = c.mccbuild(&["run", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(json(&out)["executed"], 0, "{}", stderr(&out));
    assert!(digests.exists(), "the digest cache is written again");
    // A damaged one too.
    std::fs::write(&digests, b"not a digest cache").unwrap();
    let out = c.mccbuild(&["run", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(json(&out)["executed"], 0, "{}", stderr(&out));
}

/// docs/cache.md, "Not in the key": a model's kind and the model an instance belongs to change
/// scores, not runs (UpperBounds never shows the verdict file, so the kind changes no content).
#[test]
fn a_models_kind_and_name_are_not_in_the_key() {
    let c = one_run_contest("known", "Philosophers");
    c.write("time_s = 20\nmemory_mb = 512");
    assert!(c.mccbuild(&["run"]).status.success());
    assert_eq!(to_run(&c), 0);
    let mut moved = one_run_contest("surprise", "Another");
    // The same folder: rewrite the manifest of `c` with the other model.
    moved.dir = c.dir;
    moved.write("time_s = 20\nmemory_mb = 512");
    assert_eq!(to_run(&moved), 0, "a model's kind and name rerun nothing");
}

/// docs/cache.md, "Cached results": the 20 most recent reports are kept.
#[test]
fn the_twenty_most_recent_results_reports_are_kept() {
    let mut c = one_run_contest("known", "Philosophers");
    c.write("time_s = 20\nmemory_mb = 512");
    assert!(c.mccbuild(&["run"]).status.success());
    let base = c.tools[0].clone();
    let results = c.path().join("cache/results");
    for n in 0..23 {
        // A tool's family is in the results' key (scores), not in the run's.
        c.tools[0] = format!("{base}family = \"f{n}\"\n");
        c.write("time_s = 20\nmemory_mb = 512");
        let out = c.mccbuild(&["scores"]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(to_run(&c), 0);
    }
    let reports = std::fs::read_dir(&results).unwrap().count();
    assert_eq!(reports, 20, "reports kept in {}", results.display());
}

/// docs/cache.md, "Cached results": a podium report is renamed into place without a sync; one
/// cut short (as a crash can leave it) does not parse: `run` and `scores` compute the podiums
/// again, print the same, and keep the report whole again.
#[test]
fn a_cached_podium_report_cut_short_is_computed_again() {
    let c = one_run_contest("known", "Philosophers");
    c.write("time_s = 20\nmemory_mb = 512");
    let first = c.mccbuild(&["run"]);
    assert!(first.status.success(), "{}", stderr(&first));
    let reports: Vec<std::path::PathBuf> = std::fs::read_dir(c.path().join("cache/results"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(reports.len(), 1, "{reports:?}");
    let whole = std::fs::read(&reports[0]).unwrap();
    for command in ["run", "scores"] {
        let before = c.mccbuild(&[command]);
        assert!(before.status.success(), "{}", stderr(&before));
        std::fs::write(&reports[0], &whole[..whole.len() / 2]).unwrap();
        let after = c.mccbuild(&[command]);
        assert!(after.status.success(), "{}", stderr(&after));
        assert_eq!(stdout(&after), stdout(&before), "`{command}` after the cut");
        assert_eq!(
            std::fs::read(&reports[0]).unwrap(),
            whole,
            "the report computed again is kept whole"
        );
    }
}

/// docs/execution.md, "Sandboxes": `MCCBUILD_SANDBOX=fallback` forces the fallback; its records
/// say so, and its runs have other keys than the cgroup runs (the same contest runs again).
#[test]
fn the_fallback_is_recorded_and_keyed_apart_from_cgroup_runs() {
    let c = one_run_contest("known", "Philosophers");
    c.write("time_s = 20\nmemory_mb = 512");
    let fallback = std::process::Command::new(env!("CARGO_BIN_EXE_mccbuild"))
        .args(["run", "--json"])
        .current_dir(c.path())
        .env("MCCBUILD_SANDBOX", "fallback")
        .output()
        .unwrap();
    assert!(fallback.status.success(), "{}", stderr(&fallback));
    assert_eq!(json(&fallback)["executed"], 1);
    let rec = c.record("t", PHIL, "UpperBounds");
    assert_eq!(rec["measurement"], "fallback", "{rec}");
    assert_eq!(rec["executor"]["sandbox"], "fallback", "{rec}");
    let default = c.mccbuild(&["run", "--json"]);
    if !is_root() {
        skip("cgroups need root: the default sandbox is the fallback here too");
        return;
    }
    assert_eq!(json(&default)["executed"], 1, "{}", stderr(&default));
    assert_eq!(c.records().len(), 2);
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"))
}

/// The sandbox of the run records of `c`, or None (with a skip) when runs are not isolated here.
fn isolated(c: &TestContest, tool: &str) -> bool {
    let rec = c.record(tool, PHIL, "UpperBounds");
    if rec["executor"]["sandbox"] != "cgroup+namespaces" {
        skip(&format!(
            "runs are not isolated by namespaces here (sandbox {}): they need root and cgroups",
            rec["executor"]["sandbox"]
        ));
        return false;
    }
    true
}

/// docs/execution.md, "Isolation": `/dev` holds only null, zero, full, random, urandom and tty
/// (with the links fd, stdin, stdout, stderr and the private shm), and the tool has no capability, cannot regain one (`no_new_privs`) and
/// cannot mount anything.
#[test]
fn a_run_has_no_capabilities_and_only_a_few_devices() {
    let mut c = TestContest::new();
    c.copy_demo_instance(PHIL);
    c.model("Philosophers", "known", &[&format!("models/{PHIL}")]);
    c.script_tool(
        "caps",
        "#!/bin/sh\necho \"DEV $(ls /dev | tr '\\n' ' ')\" >&2\n\
         grep -E '^(CapEff|CapBnd|CapPrm|NoNewPrivs):' /proc/self/status >&2\n\
         if mount -t tmpfs none \"$HOME\" 2>/dev/null; then echo MOUNTED >&2; else echo 'MOUNT REFUSED' >&2; fi\n\
         echo \"UID $(id -u)\" >&2\necho DO_NOT_COMPETE\n",
        "examinations = [\"UpperBounds\"]",
    );
    c.write("time_s = 20\nmemory_mb = 512");
    let out = c.mccbuild(&["run"]);
    assert!(out.status.success(), "{}", stderr(&out));
    if !isolated(&c, "caps") {
        return;
    }
    let err = c.record("caps", PHIL, "UpperBounds")["stderr"]["text"]
        .as_str()
        .unwrap()
        .to_string();
    let devices: Vec<&str> = err
        .lines()
        .find_map(|l| l.strip_prefix("DEV "))
        .unwrap()
        .split_whitespace()
        .collect();
    let mut expected = vec![
        "fd", "full", "null", "random", "stderr", "stdin", "stdout", "tty", "urandom", "zero",
    ];
    let mut seen: Vec<&str> = devices.iter().copied().filter(|d| *d != "shm").collect();
    seen.sort();
    expected.sort();
    assert_eq!(seen, expected, "{err}");
    for line in [
        "CapEff:\t0000000000000000",
        "CapBnd:\t0000000000000000",
        "CapPrm:\t0000000000000000",
        "NoNewPrivs:\t1",
    ] {
        assert!(err.contains(line), "{line} missing: {err}");
    }
    assert!(err.contains("MOUNT REFUSED"), "{err}");
    // The run's user: `mcc` by default (docs/execution.md), never root.
    assert!(!err.contains("UID 0\n"), "{err}");
}

/// docs/execution.md, "The run's init": process 1 of the run's PID namespace forwards SIGTERM
/// (as Slurm's scancel sends it to every process of a step) to the tool, which is process 2 and
/// ends as its handler says; the record says how the tool ended.
#[test]
fn the_runs_init_forwards_sigterm_to_the_tool() {
    let mut c = TestContest::new();
    c.copy_demo_instance(PHIL);
    c.model("Philosophers", "known", &[&format!("models/{PHIL}")]);
    let dir = c.script_tool(
        "sig",
        "#!/bin/sh\ntrap 'echo \"GOT TERM AS $$\" >&2; echo DO_NOT_COMPETE; exit 7' TERM\n\
         echo \"STARTED $$ $PPID\" >&2\nwhile :; do sleep 0.1; done\n",
        "examinations = [\"UpperBounds\"]",
    );
    let entry = dir.join("BenchKit_head.sh").display().to_string();
    c.write("time_s = 30\nmemory_mb = 512");
    let mut run = std::process::Command::new(env!("CARGO_BIN_EXE_mccbuild"))
        .args(["run"])
        .current_dir(c.path())
        .env_remove("MCCBUILD_SANDBOX")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // The tool's process on the host: the one executing this test's own entry script.
    let started = std::time::Instant::now();
    let tool = loop {
        let found = std::fs::read_dir("/proc").unwrap().flatten().find_map(|e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            let cmdline = std::fs::read(e.path().join("cmdline")).ok()?;
            String::from_utf8_lossy(&cmdline)
                .contains(&entry)
                .then_some(pid)
        });
        if let Some(pid) = found {
            break pid;
        }
        assert!(started.elapsed().as_secs() < 20, "the tool never started");
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let status = std::fs::read_to_string(format!("/proc/{tool}/status")).unwrap();
    let parent: u32 = status
        .lines()
        .find_map(|l| l.strip_prefix("PPid:"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let comm = std::fs::read_to_string(format!("/proc/{parent}/comm")).unwrap_or_default();
    if comm.trim() != "mccbuild-init" {
        let _ = run.wait();
        if isolated(&c, "sig") {
            panic!("the tool's parent is {comm:?}, not the run's init");
        }
        return;
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    let kill = std::process::Command::new("kill")
        .args(["-TERM", &parent.to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    assert!(run.wait().unwrap().success());
    let rec = c.record("sig", PHIL, "UpperBounds");
    let err = rec["stderr"]["text"].as_str().unwrap();
    assert!(
        err.contains("STARTED 2 1"),
        "the tool is process 2 under init: {err}"
    );
    assert!(err.contains("GOT TERM AS 2"), "{err}");
    assert_eq!(rec["termination"]["reason"], "exit", "{rec}");
    assert_eq!(rec["termination"]["code"], 7, "{rec}");
    assert!(rec["wall_time_s"].as_f64().unwrap() < 20.0, "{rec}");
}

/// docs/cache.md, "Cached results": `scores` prints the cached podium report and `scores --json`
/// the JSON it printed before for the same results key (and value ids). Whatever is planted
/// under the key of the current state shows in both; a changed record is another key, so new
/// JSON, computed; a damaged cached JSON fails its digest and is computed again.
#[test]
fn scores_and_scores_json_read_what_is_cached_under_the_results_key() {
    let mut c = one_run_contest("known", "Philosophers");
    c.scripted_tool("u", "examinations = [\"UpperBounds\"]");
    c.answer(
        "u",
        PHIL,
        "UpperBounds",
        "FORMULA Philosophers-PT-000002-UpperBounds-00 2\n",
    );
    c.write("time_s = 20\nmemory_mb = 512");
    assert!(c.mccbuild(&["run"]).status.success());
    let root = c.path().to_path_buf();
    let listing = |dir: &str| -> Vec<std::path::PathBuf> {
        let mut v: Vec<_> = std::fs::read_dir(root.join(dir))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        v.sort();
        v
    };
    let podium = stdout(&c.mccbuild(&["scores"]));
    let computed = stdout(&c.mccbuild(&["scores", "--json"]));
    let (before, before_json) = (listing("cache/results"), listing("cache/scores-json"));
    assert_eq!((before.len(), before_json.len()), (1, 1));
    assert_eq!(
        stdout(&c.mccbuild(&["scores", "--json"])),
        computed,
        "the cached JSON is what was computed"
    );
    // Another state: `u` a reference tool (not on the podium).
    let competing = c.tools[1].clone();
    c.tools[1] = format!("{competing}kind = \"reference\"\n");
    c.write("time_s = 20\nmemory_mb = 512");
    let other_podium = stdout(&c.mccbuild(&["scores"]));
    let other_computed = stdout(&c.mccbuild(&["scores", "--json"]));
    assert_ne!(podium, other_podium, "the two states print other podiums");
    assert_ne!(computed, other_computed, "and other JSON");
    let other = listing("cache/results")
        .into_iter()
        .find(|p| !before.contains(p))
        .unwrap();
    let other_json = listing("cache/scores-json")
        .into_iter()
        .find(|p| !before_json.contains(p))
        .unwrap();
    // Back to the first state, with the other state's outputs planted under its keys.
    c.tools[1] = competing;
    c.write("time_s = 20\nmemory_mb = 512");
    std::fs::copy(&other, &before[0]).unwrap();
    std::fs::copy(&other_json, &before_json[0]).unwrap();
    assert_eq!(
        stdout(&c.mccbuild(&["scores"])),
        other_podium,
        "`scores` prints the cached report"
    );
    assert_eq!(
        stdout(&c.mccbuild(&["scores", "--json"])),
        other_computed,
        "`scores --json` prints the cached JSON"
    );
    // A damaged entry (one byte of the JSON changed) is not printed: computed again.
    let mut bytes = std::fs::read(&before_json[0]).unwrap();
    bytes[1] ^= 1;
    std::fs::write(&before_json[0], &bytes).unwrap();
    assert_eq!(
        stdout(&c.mccbuild(&["scores", "--json"])),
        computed,
        "a damaged cached JSON is computed again"
    );
    // A changed record: another key, new JSON (the tool's answer is another value).
    let key = c.record("u", PHIL, "UpperBounds")["key"]
        .as_str()
        .unwrap()
        .to_string();
    let path = c.loose_path(&key);
    // The record rewritten with another answer, its digest made anew (a valid record).
    let mut record: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    record.as_object_mut().unwrap().remove("digest");
    record["answers"][0]["value"] = "3".into();
    let mut body = serde_json::to_vec(&record).unwrap();
    let digest = blake3::hash(&body).to_hex().to_string();
    body.pop();
    body.extend_from_slice(format!(",\"digest\":\"{digest}\"}}").as_bytes());
    std::fs::write(path.with_extension("tmp"), body).unwrap();
    std::fs::rename(path.with_extension("tmp"), &path).unwrap();
    let changed = stdout(&c.mccbuild(&["scores", "--json"]));
    assert_ne!(changed, computed, "a changed record gives new JSON");
    assert!(changed.contains(r#""u":"3""#), "{changed}");
    assert_eq!(listing("cache/scores-json").len(), 2, "two outputs kept");
}

/// docs/cache.md, "The store": `progress.jsonl` holds the events of the store's last execution,
/// the very lines `run --progress=json` prints (one source, several reporters), whatever the
/// terminal shows; a run that executes nothing leaves it as it is.
#[test]
fn the_store_keeps_the_events_of_its_last_execution() {
    let mut c = one_run_contest("known", "Philosophers");
    c.scripted_tool("u", "examinations = [\"UpperBounds\"]");
    c.write("time_s = 20\nmemory_mb = 512");
    let log = c.path().join("cache/progress.jsonl");
    let out = c.mccbuild(&["run", "--tool", "t", "--progress", "json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let printed: Vec<String> = stderr(&out)
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(String::from)
        .collect();
    let kept = std::fs::read_to_string(&log).unwrap();
    assert_eq!(kept.lines().collect::<Vec<_>>(), printed, "the same lines");
    let events: Vec<serde_json::Value> = kept
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let names: Vec<&str> = events
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["started", "run_started", "run_finished", "finished"],
        "{kept}"
    );
    assert_eq!(events[3]["done"], 1);
    assert_eq!(events[3]["total"], 1);
    // Plain progress on stderr: the store's copy is JSON all the same, of this execution.
    let out = c.mccbuild(&["run", "--progress", "plain"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let kept = std::fs::read_to_string(&log).unwrap();
    let last: serde_json::Value = serde_json::from_str(kept.lines().last().unwrap()).unwrap();
    assert_eq!(last["event"], "finished", "{kept}");
    assert_eq!(last["done"], 1);
    assert!(kept.contains("\"run\":\"u "), "the run of u: {kept}");
    // Nothing to execute: the log of the last execution stays.
    let out = c.mccbuild(&["run"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&log).unwrap(), kept);
}
