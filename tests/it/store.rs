//! The store's guarantees through the `mccbuild` binary (docs/cache.md): self-verifying records,
//! cached views keyed by content.

use std::fs;
use std::path::PathBuf;

use crate::common::*;

const SS: &str = "STATE_SPACE STATES 9 TECHNIQUES EXPLICIT\nSTATE_SPACE TRANSITIONS 14 TECHNIQUES EXPLICIT\nSTATE_SPACE MAX_TOKEN_IN_PLACE 1 TECHNIQUES EXPLICIT\nSTATE_SPACE MAX_TOKEN_PER_MARKING 4 TECHNIQUES EXPLICIT\n";

/// Three scripted tools that agree on StateSpace for two instances.
fn three_tools() -> TestContest {
    let mut c = TestContest::new();
    c.copy_demo_instance("Philosophers-PT-000002");
    c.copy_demo_instance("Philosophers-PT-000003");
    c.model("Philosophers", "known", &["models/Philosophers-PT-*"]);
    for tool in ["a", "b", "c"] {
        c.scripted_tool(tool, "examinations = [\"StateSpace\"]");
        for instance in ["Philosophers-PT-000002", "Philosophers-PT-000003"] {
            c.answer(tool, instance, "StateSpace", SS);
        }
    }
    c.write("time_s = 10\nmemory_mb = 512");
    c
}

fn record_path(c: &TestContest, tool: &str, instance: &str) -> PathBuf {
    let key = c.record(tool, instance, "StateSpace")["key"]
        .as_str()
        .unwrap()
        .to_string();
    c.loose_path(&key)
}

/// Writes `bytes` into an existing file in place (same inode, the shard folder's time unchanged),
/// as an editor saving in place or a failing disk would.
fn overwrite_in_place(path: &PathBuf, bytes: &[u8]) {
    use std::io::Write;
    let mut f = fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(path)
        .unwrap();
    f.write_all(bytes).unwrap();
}

/// b's value of STATES on one instance, as `scores --json` shows it (None: b's answer not used).
/// Scores without some of the runs are partial: exit 5 (docs/cli.md, "Partial results").
fn b_states(c: &TestContest, instance: &str) -> Option<String> {
    let out = c.mccbuild(&["scores", "--json"]);
    assert_results(&out);
    assert_eq!(
        json(&out)["partial"].is_object(),
        out.status.code() == Some(5)
    );
    json(&out)["values"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["instance"] == instance && v["id"] == "STATES")
        .and_then(|v| v["answers"]["b"].as_str().map(str::to_string))
}

fn no_advice_to_delete(text: &str) {
    for word in ["delete", "remove", "rm "] {
        assert!(
            !text.to_lowercase().contains(word),
            "advises `{word}`: {text}"
        );
    }
}

#[test]
fn a_record_truncated_in_place_is_reported_by_every_command_and_rerun() {
    let c = three_tools();
    assert!(c.mccbuild(&["run"]).status.success());
    // Let the shard folders' times settle, so that only the records' own stamps can tell.
    std::thread::sleep(std::time::Duration::from_millis(2100));
    assert!(c.mccbuild(&["plan", "--json"]).status.success());
    let path = record_path(&c, "b", "Philosophers-PT-000002");
    let good = fs::read(&path).unwrap();
    overwrite_in_place(&path, &good[..good.len() / 2]);
    let named = path.display().to_string();
    for args in [
        &["plan", "--json"][..],
        &["scores"][..],
        &["scores", "--json"][..],
        &["explain", "--tool", "b", "--category", "StateSpace"][..],
    ] {
        let out = c.mccbuild(args);
        let err = stderr(&out);
        assert!(
            err.contains("damaged run record") && err.contains(&named),
            "{args:?}: {err}"
        );
        no_advice_to_delete(&err);
    }
    let plan = json(&c.mccbuild(&["plan", "--json"]));
    assert_eq!(plan["to_run"], 1, "{plan}");
    assert_eq!(b_states(&c, "Philosophers-PT-000002"), None, "never scored");
    let out = c.mccbuild(&["run", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        json(&out),
        serde_json::json!({"executed": 1, "cached": 5, "failed": 0})
    );
    // The new record replaced it; nothing is said any more.
    let out = c.mccbuild(&["scores"]);
    assert!(!stderr(&out).contains("damaged"), "{}", stderr(&out));
    assert_eq!(b_states(&c, "Philosophers-PT-000002").as_deref(), Some("9"));
}

#[test]
fn an_answer_edited_into_valid_json_is_never_scored_and_is_rerun() {
    let c = three_tools();
    assert!(c.mccbuild(&["run"]).status.success());
    assert_eq!(b_states(&c, "Philosophers-PT-000003").as_deref(), Some("9"));
    let path = record_path(&c, "b", "Philosophers-PT-000003");
    let text = fs::read_to_string(&path).unwrap();
    let edited = text.replacen("\"value\":\"9\"", "\"value\":\"8\"", 1);
    assert_ne!(edited, text);
    serde_json::from_str::<serde_json::Value>(&edited).expect("still valid JSON");
    overwrite_in_place(&path, edited.as_bytes());
    // Nor after the index is rebuilt from the records.
    fs::write(c.path().join("cache/index.bin"), b"garbage").unwrap();
    let out = c.mccbuild(&["scores", "--json"]);
    let err = stderr(&out);
    assert!(
        err.contains(&path.display().to_string()) && err.contains("does not match its digest"),
        "{err}"
    );
    no_advice_to_delete(&err);
    assert_eq!(b_states(&c, "Philosophers-PT-000003"), None);
    let out = c.mccbuild(&["run", "--json"]);
    assert_eq!(json(&out)["executed"], 1, "{}", stderr(&out));
    assert_eq!(b_states(&c, "Philosophers-PT-000003").as_deref(), Some("9"));
}

#[test]
fn a_rebuilt_index_is_written_back_by_a_reading_command() {
    let c = three_tools();
    assert!(c.mccbuild(&["run"]).status.success());
    let index = c.path().join("cache/index.bin");
    fs::write(&index, b"garbage").unwrap();
    let out = c.mccbuild(&["scores"]);
    assert!(stderr(&out).contains("rebuilding it from the records"));
    no_advice_to_delete(&stderr(&out));
    assert_ne!(fs::read(&index).unwrap(), b"garbage");
    let out = c.mccbuild(&["plan", "--json"]);
    assert!(!stderr(&out).contains("rebuilding"), "{}", stderr(&out));
}

/// Replaces a record by another valid record of the same run (as a rerun of it, or a record
/// copied from another store, would): `change` edits its JSON, the digest is made anew.
fn replace_with_valid_record(path: &PathBuf, change: impl Fn(&mut serde_json::Value)) {
    let mut record: serde_json::Value = serde_json::from_slice(&fs::read(path).unwrap()).unwrap();
    record.as_object_mut().unwrap().remove("digest");
    change(&mut record);
    let mut body = serde_json::to_vec(&record).unwrap();
    let digest = blake3::hash(&body).to_hex().to_string();
    body.pop();
    body.extend_from_slice(format!(",\"digest\":\"{digest}\"}}").as_bytes());
    let tmp = path.with_extension("tmp");
    fs::write(&tmp, body).unwrap();
    fs::rename(&tmp, path).unwrap();
}

#[test]
fn a_run_redone_with_another_outcome_changes_the_printed_podium() {
    let c = three_tools();
    assert!(c.mccbuild(&["run"]).status.success());
    let before = c.mccbuild(&["scores"]);
    // b's runs redone: this time b says DO_NOT_COMPETE, so it leaves the StateSpace podium.
    for instance in ["Philosophers-PT-000002", "Philosophers-PT-000003"] {
        replace_with_valid_record(&record_path(&c, "b", instance), |r| {
            r["verdict"] = "do_not_compete".into();
            r["answers"] = serde_json::json!([]);
        });
    }
    let cached = c.mccbuild(&["scores"]);
    assert!(cached.status.success(), "{}", stderr(&cached));
    let scores = json(&c.mccbuild(&["scores", "--json"]));
    let podium: Vec<String> = scores["podiums"]["StateSpace"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_string())
        .collect();
    assert_eq!(podium, ["a", "c"], "{scores}");
    assert_ne!(stdout(&before), stdout(&cached), "the podium changed");
    // What `scores` printed is what computing afresh prints (every kept score forgotten).
    c.forget_scores();
    let fresh = c.mccbuild(&["scores"]);
    assert_eq!(stdout(&cached), stdout(&fresh));
    // And `run`, which prints the podiums from the same cache, agrees.
    let run = c.mccbuild(&["run"]);
    assert_eq!(stdout(&run), stdout(&fresh));
}

/// docs/cache.md, "Remembered scores": after a record changed, the next command computes only
/// that record's model examination (the others' scores are remembered) and prints what a fresh
/// computation prints; a damaged memo is not used (everything is computed, the same podiums).
#[test]
fn remembered_scores_compute_only_what_changed_and_a_damaged_memo_is_computed_again() {
    let mut c = TestContest::new();
    for instance in [
        "Philosophers-PT-000002",
        "Philosophers-PT-000003",
        "TokenRing-PT-4",
    ] {
        c.copy_demo_instance(instance);
    }
    c.model("Philosophers", "known", &["models/Philosophers-PT-*"]);
    c.model("TokenRing", "known", &["models/TokenRing-PT-4"]);
    let deadlock = "FORMULA ReachabilityDeadlock FALSE TECHNIQUES EXPLICIT\n";
    for tool in ["a", "b", "c"] {
        c.scripted_tool(
            tool,
            "examinations = [\"StateSpace\", \"ReachabilityDeadlock\"]",
        );
        for instance in [
            "Philosophers-PT-000002",
            "Philosophers-PT-000003",
            "TokenRing-PT-4",
        ] {
            c.answer(tool, instance, "StateSpace", SS);
            c.answer(tool, instance, "ReachabilityDeadlock", deadlock);
        }
    }
    c.write("time_s = 10\nmemory_mb = 512");
    let run = c.mccbuild(&["run"]);
    assert!(run.status.success(), "{}", stderr(&run));
    let memo: Vec<PathBuf> = c.meta_files("scores-");
    assert_eq!(memo.len(), 1, "the remembered scores are kept: {memo:?}");
    let said = |out: &std::process::Output| {
        stderr(out)
            .lines()
            .find(|l| l.starts_with("timing: remembered scores: ") && l.contains("computed"))
            .unwrap_or_else(|| panic!("{}", stderr(out)))
            .to_string()
    };

    // b's deadlock record on TokenRing redone with another answer: one model examination of four.
    let key = c.record("b", "TokenRing-PT-4", "ReachabilityDeadlock")["key"]
        .as_str()
        .unwrap()
        .to_string();
    let path = c.loose_path(&key);
    replace_with_valid_record(&path, |r| {
        r["answers"][0]["value"] = "TRUE".into();
    });
    let (after, _) = mccbuild_timed(c.path(), &["scores"]);
    assert_eq!(
        said(&after),
        "timing: remembered scores: 3 model examinations remembered, 1 computed, 0 computed again (their decisions moved)"
    );
    c.forget_scores();
    let (fresh, _) = mccbuild_timed(c.path(), &["scores"]);
    assert_eq!(
        stdout(&after),
        stdout(&fresh),
        "what a fresh computation prints"
    );
    assert!(said(&fresh).contains("0 model examinations remembered, 4 computed"));

    // The memo damaged (a byte flipped): not used, the same podiums.
    let mut bytes = fs::read(&memo[0]).unwrap();
    let at = bytes.len() / 2;
    bytes[at] ^= 1;
    fs::write(&memo[0], &bytes).unwrap();
    fs::remove_dir_all(c.path().join("cache/results")).unwrap();
    let (damaged, _) = mccbuild_timed(c.path(), &["scores"]);
    assert!(said(&damaged).contains("0 model examinations remembered, 4 computed"));
    assert_eq!(stdout(&damaged), stdout(&fresh));
}

/// Three tools that each take 0.6 s per run: 6 runs, 2 at a time.
fn slow_tools() -> TestContest {
    let mut c = TestContest::new();
    c.copy_demo_instance("Philosophers-PT-000002");
    c.copy_demo_instance("Philosophers-PT-000003");
    c.model("Philosophers", "known", &["models/Philosophers-PT-*"]);
    for tool in ["a", "b", "c"] {
        c.script_tool(
            tool,
            &format!(
                "#!/bin/sh\nsleep 0.6\nprintf '{}'\n",
                SS.replace('\n', "\\n")
            ),
            "examinations = [\"StateSpace\"]",
        );
    }
    c.write("time_s = 10\nmemory_mb = 512");
    c
}

#[test]
fn two_runs_on_one_store_execute_each_run_once() {
    let c = slow_tools();
    let spawn = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_mccbuild"))
            .args(args)
            .current_dir(c.path())
            .env_remove("MCCBUILD_SANDBOX")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let first = spawn(&["run", "--json"]);
    // Wait until the first holds the store's lock (it writes who it is into it).
    let lock = c.path().join("cache/lock");
    let t0 = std::time::Instant::now();
    while !fs::read_to_string(&lock).is_ok_and(|t| t.contains("pid")) {
        assert!(
            t0.elapsed().as_secs() < 30,
            "the first run never took the lock"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let second = spawn(&["run", "--json"]);
    // Refusing instead of waiting: exit 3, saying who holds the store.
    let refused = c.mccbuild(&["run", "--json", "--no-wait"]);
    assert_eq!(refused.status.code(), Some(3), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("is busy") && stderr(&refused).contains("mccbuild run"),
        "{}",
        stderr(&refused)
    );
    // Readers are not held up.
    let t = std::time::Instant::now();
    let scores = c.mccbuild(&["scores", "--json"]);
    // Scored while the runs are under way: partial, exit 5 (docs/cli.md, "Partial results").
    assert_results(&scores);
    assert!(
        t.elapsed().as_secs_f64() < 1.5,
        "scores waited {:?}",
        t.elapsed()
    );
    let first = first.wait_with_output().unwrap();
    let second = second.wait_with_output().unwrap();
    assert!(first.status.success(), "{}", stderr(&first));
    assert!(second.status.success(), "{}", stderr(&second));
    assert!(
        stderr(&second).contains("waiting for the store"),
        "{}",
        stderr(&second)
    );
    let (a, b) = (json(&first), json(&second));
    assert_eq!(
        a,
        serde_json::json!({"executed": 6, "cached": 0, "failed": 0})
    );
    assert_eq!(
        b,
        serde_json::json!({"executed": 0, "cached": 6, "failed": 0})
    );
    assert_eq!(c.records().len(), 6);
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Runs `script` with sh in the contest's folder, in a mount namespace of its own (so that a
/// tmpfs mounted on `cache` there vanishes with it).
fn in_own_mounts(c: &TestContest, script: &str) -> std::process::Output {
    std::process::Command::new("unshare")
        .args(["--mount", "--propagation", "private", "sh", "-c", script])
        .current_dir(c.path())
        .env("BIN", env!("CARGO_BIN_EXE_mccbuild"))
        .env_remove("MCCBUILD_SANDBOX")
        .output()
        .expect("unshare runs")
}

#[test]
fn a_full_store_is_refused_before_any_run() {
    if !is_root() {
        mccbuild_testkit::skip("a full store needs a small tmpfs mounted, which needs root");
        return;
    }
    let c = slow_tools();
    let out = in_own_mounts(
        &c,
        "mkdir -p cache && mount -t tmpfs -o size=4M tmpfs cache && $BIN plan >/dev/null && (dd if=/dev/zero of=cache/fill bs=64k 2>/dev/null; true) && $BIN run --json; echo \"exit $?\"; find cache/runs -name '*.json' | wc -l",
    );
    let (out_text, err) = (stdout(&out), stderr(&out));
    assert!(out_text.contains("exit 3\n0\n"), "{out_text}{err}");
    assert!(
        err.contains("has no room") && err.contains("make room"),
        "{err}"
    );
    no_advice_to_delete(&err);
}

#[test]
fn a_store_that_fills_up_stops_the_runs_at_the_first_record_it_cannot_write() {
    if !is_root() {
        mccbuild_testkit::skip(
            "a store that fills up needs a small tmpfs mounted, which needs root",
        );
        return;
    }
    let c = slow_tools();
    // One run at a time; once the first record is there, the file system is filled.
    let out = in_own_mounts(
        &c,
        "mkdir -p cache && mount -t tmpfs -o size=24M tmpfs cache || exit 99
         $BIN run --json --jobs 1 --progress json & pid=$!
         while [ -z \"$(find cache/runs -name '*.json' 2>/dev/null)\" ]; do sleep 0.05; done
         dd if=/dev/zero of=cache/fill bs=64k 2>/dev/null
         wait $pid; echo \"exit $?\"; find cache/runs -name '*.json' | wc -l",
    );
    let (out_text, err) = (stdout(&out), stderr(&out));
    assert!(out_text.contains("exit 3\n1\n"), "{out_text}{err}");
    assert!(
        err.contains("cannot write the run record") && err.contains("no more runs were started"),
        "{err}"
    );
    // One run recorded, the second one not: the other four were not carried out (jobs = 1).
    // Carried out: a's run (recorded) and b's (its record could not be written); a run a worker
    // took up at the moment of the stop is interrupted before anything is recorded.
    let carried_out = err
        .lines()
        .filter(|l| l.contains("\"event\":\"run_finished\"") && !l.contains("\"interrupted\":true"))
        .count();
    assert_eq!(carried_out, 2, "{err}");
    no_advice_to_delete(&err);
}

fn mccbuild_packing(c: &TestContest, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_mccbuild"))
        .args(args)
        .current_dir(c.path())
        .env_remove("MCCBUILD_SANDBOX")
        .env("MCCBUILD_PACK_AFTER", "1")
        .output()
        .expect("mccbuild runs")
}

/// docs/cache.md, "Packs": `run` packs its loose records; every command uses them as before,
/// verifies them as before (a packed record edited in place is reported by the pack's path, never
/// scored, and its run alone is done again), and the no-op stats the pack, not each record.
#[test]
fn packed_records_are_used_and_verified_by_every_command() {
    let c = three_tools();
    assert!(c.mccbuild(&["run"]).status.success());
    let before = c.mccbuild(&["scores", "--json"]);
    // A no-op run packs them.
    let out = mccbuild_packing(&c, &["run", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("packed 6 loose run records into"),
        "{}",
        stderr(&out)
    );
    let pack = c.path().join("cache/packs/00000001.jsonl");
    assert_eq!(fs::read_to_string(&pack).unwrap().lines().count(), 6);
    let loose: usize = fs::read_dir(c.path().join("cache/runs"))
        .unwrap()
        .map(|s| fs::read_dir(s.unwrap().path()).unwrap().count())
        .sum();
    assert_eq!(loose, 0, "the loose files are gone");
    // Every command reads the packed records: the same scores as from loose ones.
    let plan = json(&c.mccbuild(&["plan", "--json"]));
    assert_eq!(plan["to_run"], 0, "{plan}");
    let scores = c.mccbuild(&["scores", "--json"]);
    assert!(scores.status.success(), "{}", stderr(&scores));
    assert_eq!(json(&scores)["scores"], json(&before)["scores"]);
    assert_eq!(b_states(&c, "Philosophers-PT-000003").as_deref(), Some("9"));
    let explain = c.mccbuild(&["explain", "--tool", "b", "--category", "StateSpace"]);
    assert!(explain.status.success(), "{}", stderr(&explain));
    let export = c.mccbuild(&["export", "--json", "-"]);
    assert!(export.status.success(), "{}", stderr(&export));
    // An answer edited inside the pack, in place, the line still valid JSON of the same size.
    std::thread::sleep(std::time::Duration::from_millis(2100));
    let text = fs::read_to_string(&pack).unwrap();
    let b3 = c.record("b", "Philosophers-PT-000003", "StateSpace");
    let key = b3["key"].as_str().unwrap().to_string();
    let edited: String = text
        .lines()
        .map(|l| {
            if l.contains(&key) {
                l.replacen("\"value\":\"9\"", "\"value\":\"8\"", 1)
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n";
    assert_ne!(edited, text);
    overwrite_in_place(&pack, edited.as_bytes());
    for args in [
        &["plan", "--json"][..],
        &["scores"][..],
        &["explain", "--tool", "b", "--category", "StateSpace"][..],
    ] {
        let out = c.mccbuild(args);
        let err = stderr(&out);
        assert!(
            err.contains("damaged run record")
                && err.contains(&pack.display().to_string())
                && err.contains(&key)
                && err.contains("does not match its digest"),
            "{args:?}: {err}"
        );
        no_advice_to_delete(&err);
    }
    assert_eq!(json(&c.mccbuild(&["plan", "--json"]))["to_run"], 1);
    assert_eq!(b_states(&c, "Philosophers-PT-000003"), None, "never scored");
    let export = c.mccbuild(&["export", "--json", "-"]);
    assert_eq!(export.status.code(), Some(3), "{}", stderr(&export));
    let out = c.mccbuild(&["run", "--json"]);
    assert_eq!(
        json(&out),
        serde_json::json!({"executed": 1, "cached": 5, "failed": 0}),
        "{}",
        stderr(&out)
    );
    let out = c.mccbuild(&["scores"]);
    assert!(!stderr(&out).contains("damaged"), "{}", stderr(&out));
    assert_eq!(b_states(&c, "Philosophers-PT-000003").as_deref(), Some("9"));
    // The new loose record goes into the next pack; nothing is lost or said twice.
    let out = mccbuild_packing(&c, &["run", "--json"]);
    assert!(
        stderr(&out).contains("packed 1 loose run record into"),
        "{}",
        stderr(&out)
    );
    assert!(c.path().join("cache/packs/00000002.jsonl").exists());
    let out = c.mccbuild(&["scores"]);
    assert!(!stderr(&out).contains("damaged"), "{}", stderr(&out));
    assert_eq!(b_states(&c, "Philosophers-PT-000003").as_deref(), Some("9"));
}

/// How many times each run's record lies in the store: its loose file and every line of every
/// pack that names it (sound or not).
fn copies_of_each_run(c: &TestContest) -> std::collections::BTreeMap<String, usize> {
    let mut copies = std::collections::BTreeMap::new();
    let key_of = |bytes: &[u8]| -> Option<String> {
        let v: serde_json::Value = serde_json::from_slice(bytes).ok()?;
        v["key"].as_str().map(str::to_string)
    };
    let mut files: Vec<PathBuf> = Vec::new();
    for shard in fs::read_dir(c.path().join("cache/runs")).unwrap().flatten() {
        files.extend(
            fs::read_dir(shard.path())
                .unwrap()
                .flatten()
                .map(|e| e.path()),
        );
    }
    for f in files {
        let key = key_of(&fs::read(&f).unwrap()).expect("a loose record");
        *copies.entry(key).or_insert(0) += 1;
    }
    for pack in fs::read_dir(c.path().join("cache/packs"))
        .unwrap()
        .flatten()
    {
        for line in fs::read(pack.path()).unwrap().split(|&b| b == b'\n') {
            if !line.is_empty() {
                let key = key_of(line).unwrap_or_else(|| "(unreadable)".into());
                *copies.entry(key).or_insert(0) += 1;
            }
        }
    }
    copies
}

/// docs/cache.md, "Packs": a pack with one character of a key flipped and cut short in the middle
/// of its last line: every command reports the damage, `run` does the two runs again and sets
/// the damaged lines aside; from then on `plan`, `scores` and `export` say nothing of it (also
/// after the index is rebuilt), `export` exits 0, and every run lies in the store exactly once.
#[test]
fn damaged_pack_lines_stop_counting_once_run_has_done_their_runs_again() {
    let c = three_tools();
    assert!(c.mccbuild(&["run"]).status.success());
    assert!(mccbuild_packing(&c, &["run"]).status.success());
    let pack = c.path().join("cache/packs/00000001.jsonl");
    let text = fs::read(&pack).unwrap();
    let mut lines: Vec<Vec<u8>> = text.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
    assert_eq!(lines.len(), 7, "6 lines and the end");
    // One character of the second line's key flipped.
    let at = lines[1]
        .windows(7)
        .position(|w| w == b"\"key\":\"")
        .unwrap()
        + 7;
    lines[1][at] = if lines[1][at] == b'0' { b'1' } else { b'0' };
    let mut damaged = lines.join(&b'\n');
    // Cut in the middle of the last line.
    let last = damaged[..damaged.len() - 1]
        .iter()
        .rposition(|&b| b == b'\n')
        .unwrap();
    damaged.truncate(last + 1 + (damaged.len() - last) / 2);
    fs::write(&pack, &damaged).unwrap();
    let named = pack.display().to_string();
    let out = c.mccbuild(&["plan", "--json"]);
    assert!(stderr(&out).contains(&named), "{}", stderr(&out));
    assert_eq!(json(&out)["to_run"], 2, "{}", stderr(&out));
    let out = c.mccbuild(&["run", "--json"]);
    assert_eq!(json(&out)["executed"], 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("set aside 2 damaged lines"),
        "{}",
        stderr(&out)
    );
    for rebuilt in [false, true] {
        if rebuilt {
            fs::remove_file(c.path().join("cache/index.bin")).unwrap();
        }
        for args in [
            &["plan", "--json"][..],
            &["scores"],
            &["export", "--json", "-"],
        ] {
            let out = c.mccbuild(args);
            assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
            let err = stderr(&out);
            assert!(
                !err.contains("damaged") && !err.contains(&named),
                "{args:?}: {err}"
            );
        }
        assert_eq!(json(&c.mccbuild(&["plan", "--json"]))["to_run"], 0);
    }
    let copies = copies_of_each_run(&c);
    assert_eq!(copies.len(), 6, "{copies:?}");
    assert!(copies.values().all(|&n| n == 1), "{copies:?}");
    // The damaged bytes are kept aside, never read as records.
    let aside = fs::read(c.path().join("cache/damaged/00000001.jsonl")).unwrap();
    assert_eq!(aside.iter().filter(|&&b| b == b'\n').count(), 2);
}

/// `n` more valid loose records in the store: copies of `template` under new keys (records of
/// runs this contest does not plan: stored and packed all the same).
fn add_loose_records(c: &TestContest, template: &PathBuf, n: usize, seed: u64) {
    let base: serde_json::Value = serde_json::from_slice(&fs::read(template).unwrap()).unwrap();
    for i in 0..n {
        let key = blake3::hash(format!("{seed}-{i}").as_bytes())
            .to_hex()
            .to_string();
        let path = c.loose_path(&key);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, serde_json::to_vec(&base).unwrap()).unwrap();
        replace_with_valid_record(&path, |r| r["key"] = key.clone().into());
    }
}

fn stored_keys(c: &TestContest) -> std::collections::BTreeSet<String> {
    c.records()
        .iter()
        .map(|r| r["key"].as_str().unwrap().to_string())
        .collect()
}

fn count_entries(dir: &std::path::Path) -> usize {
    fs::read_dir(dir).map_or(0, |l| l.count())
}

fn count_packs(dir: &std::path::Path) -> usize {
    fs::read_dir(dir).map_or(0, |l| {
        l.filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.file_name().to_string_lossy().ends_with(".jsonl"))
        })
        .count()
    })
}

fn loose_count(c: &TestContest) -> usize {
    fs::read_dir(c.path().join("cache/runs"))
        .unwrap()
        .map(|s| count_entries(&s.unwrap().path()))
        .sum()
}

/// docs/cache.md, "Packs": `kill -9` of `mccbuild run` at random moments of its packing loses
/// no record and damages none; the next command sees every record and says nothing; the next
/// packing finishes the work (no loose copy, no temporary file, no marker left).
#[test]
fn kill_9_during_packing_loses_no_record() {
    let c = three_tools();
    assert!(c.mccbuild(&["run"]).status.success());
    let template = record_path(&c, "a", "Philosophers-PT-000002");
    let template_copy = c.path().join("template.json");
    fs::copy(&template, &template_copy).unwrap();
    let packs_dir = c.path().join("cache/packs");
    let marker = packs_dir.join("PACKING");
    let mut seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    eprintln!("seed {seed}");
    let (mut packing_took, mut before_pack, mut after_pack) = (None, 0, 0);
    // Eight rounds, and up to six more while too few kills landed inside a packing (a load
    // spike during the measured one makes it look longer than the others).
    for round in 0..14u64 {
        if round >= 8 && before_pack + after_pack >= 4 && after_pack >= 1 {
            break;
        }
        add_loose_records(&c, &template_copy, 200, seed.wrapping_add(round));
        let expected = stored_keys(&c);
        let packs_before = count_packs(&packs_dir);
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_mccbuild"))
            .arg("run")
            .current_dir(c.path())
            .env_remove("MCCBUILD_SANDBOX")
            .env("MCCBUILD_PACK_AFTER", "1")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let started = std::time::Instant::now();
        while !marker.exists()
            && child.try_wait().unwrap().is_none()
            && started.elapsed() < std::time::Duration::from_secs(30)
        {
            std::thread::sleep(std::time::Duration::from_micros(100));
        }
        let packing = std::time::Instant::now();
        match packing_took {
            // The first round measures how long a packing of 200 records takes here: from its
            // marker's appearance to its removal (not to the process's end, which prints the
            // podiums after it).
            None => {
                while marker.exists() && child.try_wait().unwrap().is_none() {
                    std::thread::sleep(std::time::Duration::from_micros(100));
                }
                packing_took = Some(packing.elapsed());
                assert!(child.wait().unwrap().success());
                continue;
            }
            // The others are killed at a random moment of it.
            Some(took) => {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                // Within its first half: on a loaded machine a packing may take half as long
                // as the one measured.
                let at = took.mul_f64(0.5 * (seed >> 11) as f64 / (1u64 << 53) as f64);
                std::thread::sleep(at.saturating_sub(packing.elapsed()));
                let _ = child.kill();
                child.wait().unwrap();
            }
        }
        let (loose, packs) = (loose_count(&c), count_entries(&packs_dir));
        if marker.exists() && count_packs(&packs_dir) == packs_before {
            before_pack += 1; // the marker (and maybe a temporary file): no new pack yet
        } else if marker.exists() {
            after_pack += 1; // the new pack there, the loose copies not all removed
        } else if let Some(took) = &mut packing_took {
            // Killed after the packing ended: aim earlier from now on.
            *took = took.mul_f64(0.7);
        }
        eprintln!("round {round}: killed with {loose} loose files, {packs} entries in packs/");
        // Every record is there, whole (each file and each pack line parses).
        assert_eq!(stored_keys(&c), expected, "round {round}");
        let out = c.mccbuild(&["plan", "--json"]);
        let err = stderr(&out);
        assert!(!err.contains("damaged"), "round {round}: {err}");
        assert_eq!(json(&out)["to_run"], 0, "round {round}: {err}");
        // The next packing finishes the work: every record packed, nothing left behind.
        let out = mccbuild_packing(&c, &["run"]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(stored_keys(&c), expected, "round {round}");
        assert_eq!(loose_count(&c), 0, "round {round}");
        let mut names: Vec<String> = fs::read_dir(&packs_dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.retain(|n| !n.ends_with(".jsonl"));
        assert!(names.is_empty(), "round {round}: left in packs/: {names:?}");
    }
    eprintln!(
        "{packing_took:?} a packing; killed {before_pack} times before its pack was in place, {after_pack} times after"
    );
    assert!(
        before_pack + after_pack >= 4 && after_pack >= 1,
        "killed {before_pack} times before the pack was in place, {after_pack} after: too few to tell"
    );
    // Rebuilt from the packs alone: the same records.
    let expected = stored_keys(&c);
    assert_eq!(expected.len(), 6 + 8 * 200);
    fs::remove_file(c.path().join("cache/index.bin")).unwrap();
    let out = c.mccbuild(&["plan", "--json"]);
    assert_eq!(json(&out)["to_run"], 0, "{}", stderr(&out));
    assert!(!stderr(&out).contains("damaged"), "{}", stderr(&out));
}

/// docs/cli.md: a packing that cannot write its pack (its file system full) leaves every record
/// as it was, with a warning; the runs' exit code stands and the next command sees every run.
#[test]
fn a_packing_on_a_full_disk_loses_nothing() {
    if !is_root() {
        mccbuild_testkit::skip("a full packs folder needs a small tmpfs mounted, which needs root");
        return;
    }
    let c = three_tools();
    assert!(c.mccbuild(&["run"]).status.success());
    let before = stored_keys(&c);
    // packs/ on a tmpfs of two pages: room for the marker, not for a pack of six records.
    let out = in_own_mounts(
        &c,
        "mkdir -p cache/packs && mount -t tmpfs -o size=8k tmpfs cache/packs || exit 99
         MCCBUILD_PACK_AFTER=1 $BIN run --json; echo \"exit $?\"
         $BIN plan --json",
    );
    let (out_text, err) = (stdout(&out), stderr(&out));
    assert!(out_text.contains("exit 0\n"), "{out_text}{err}");
    assert!(
        err.contains("could not pack the loose run records") && err.contains("nothing is lost"),
        "{err}"
    );
    assert!(out_text.contains("\"to_run\":0"), "{out_text}{err}");
    assert!(!err.contains("damaged"), "{err}");
    assert_eq!(stored_keys(&c), before);
    assert_eq!(loose_count(&c), 6);
    let plan = json(&c.mccbuild(&["plan", "--json"]));
    assert_eq!(plan["to_run"], 0, "{plan}");
}

/// `plan --json`: its counts, and whether the plan was made from the files.
fn plan_timed(c: &TestContest) -> (serde_json::Value, bool) {
    let (out, made) = mccbuild_timed(c.path(), &["plan", "--json"]);
    (json(&out), made)
}

/// Runs what is to run, then lets the inputs age past the two seconds under which their
/// stamps are not trusted, and has the plan made and kept.
fn run_and_keep_the_plan(c: &TestContest) {
    assert!(c.mccbuild(&["run"]).status.success());
    std::thread::sleep(std::time::Duration::from_millis(2100));
    assert!(
        plan_timed(c).1,
        "the plan is made (and kept) after a change"
    );
    let (plan, made) = plan_timed(c);
    assert!(!made, "the next command takes the plan from its snapshot");
    assert_eq!(plan["to_run"], 0, "{plan}");
}

/// The plan snapshot (docs/cache.md, "The plan snapshot") is keyed by the files the run keys
/// are made of: a file added to a tool's folder gives each of its runs a new key, an instance's
/// formula file edited gives the runs on that instance new keys (a run sees the whole instance
/// folder) and leaves the other instance's alone, each seen by the very next command.
#[test]
fn the_plan_snapshot_follows_every_edit_of_a_tool_or_an_instance() {
    let mut c = TestContest::new();
    c.copy_demo_instance("Deadlock-PT-1");
    c.copy_demo_instance("TokenRing-PT-4");
    c.model("Deadlock", "known", &["models/Deadlock-PT-1"]);
    c.model("TokenRing", "known", &["models/TokenRing-PT-4"]);
    let tool = c.scripted_tool(
        "a",
        "examinations = [\"StateSpace\", \"UpperBounds\", \"ReachabilityCardinality\"]",
    );
    c.write("time_s = 10\nmemory_mb = 512");
    run_and_keep_the_plan(&c);
    fs::write(
        tool.join("answers/notes.txt"),
        "a new file in the tool's folder",
    )
    .unwrap();
    let (plan, made) = plan_timed(&c);
    assert!(made);
    assert_eq!(plan["to_run"], 6, "{plan}");
    run_and_keep_the_plan(&c);
    let formula = c.path().join("models/Deadlock-PT-1/UpperBounds.xml");
    let text = fs::read_to_string(&formula).unwrap();
    fs::write(&formula, text.replace("UpperBounds-00", "UpperBounds-99")).unwrap();
    let (plan, made) = plan_timed(&c);
    assert!(made);
    assert_eq!(plan["to_run"], 3, "the runs on Deadlock-PT-1: {plan}");
}
