//! The remembered no-op (docs/cache.md, "The remembered no-op") through the `mccbuild` binary:
//! it says what the full command says, and every change that must be seen is seen by the very
//! next command: records removed, damaged, added or replaced (loose and packed), a pack
//! rewritten or added, the index rebuilt, a tool, an instance, the manifest or the rules edited, the
//! binary changed, a `run` that waited for another's records.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::*;

const SS: &str = "STATE_SPACE STATES 9 TECHNIQUES EXPLICIT\nSTATE_SPACE TRANSITIONS 14 TECHNIQUES EXPLICIT\nSTATE_SPACE MAX_TOKEN_IN_PLACE 1 TECHNIQUES EXPLICIT\nSTATE_SPACE MAX_TOKEN_PER_MARKING 4 TECHNIQUES EXPLICIT\n";
const INSTANCES: [&str; 2] = ["Philosophers-PT-000002", "Philosophers-PT-000003"];

/// Two scripted tools answering StateSpace on two instances, the rules a copy in the contest's
/// folder (so that a test can edit them).
fn contest() -> TestContest {
    let mut c = TestContest::new();
    for instance in INSTANCES {
        c.copy_demo_instance(instance);
    }
    c.model("Philosophers", "known", &["models/Philosophers-PT-*"]);
    for tool in ["a", "b"] {
        c.scripted_tool(tool, "examinations = [\"StateSpace\"]");
        for instance in INSTANCES {
            c.answer(tool, instance, "StateSpace", SS);
        }
    }
    write_manifest(&c, "time_s = 10\nmemory_mb = 512");
    c
}

fn write_manifest(c: &TestContest, limits: &str) {
    let rules = c.path().join("rules.toml");
    if !rules.exists() {
        fs::copy(Path::new(REPO).join("rules/mcc-2026.toml"), &rules).unwrap();
    }
    c.write(limits);
    let manifest = c.path().join("contest.toml");
    let text = fs::read_to_string(&manifest).unwrap().replace(
        &format!("{REPO}/rules/mcc-2026.toml"),
        &rules.display().to_string(),
    );
    fs::write(&manifest, text).unwrap();
}

/// `args` run by the binary at `bin` in the contest's folder with the phase timings on: the
/// output (the timing lines left out of its stderr) and whether the no-op was remembered.
fn with(bin: &Path, c: &TestContest, args: &[&str], env: &[(&str, &str)]) -> (Output, bool) {
    let mut out = Command::new(bin)
        .args(args)
        .current_dir(c.path())
        .env_remove("MCCBUILD_SANDBOX")
        .env("MCCBUILD_TIMINGS", "1")
        .envs(env.iter().copied())
        .output()
        .expect("mccbuild runs");
    let err = stderr(&out);
    let remembered = err
        .lines()
        .any(|l| l.starts_with("timing: no-op: remembered"));
    out.stderr = err
        .lines()
        .filter(|l| !l.starts_with("timing: "))
        .map(|l| format!("{l}\n"))
        .collect::<String>()
        .into_bytes();
    (out, remembered)
}

fn timed(c: &TestContest, args: &[&str]) -> (Output, bool) {
    with(Path::new(env!("CARGO_BIN_EXE_mccbuild")), c, args, &[])
}

/// `plan --json`: the counts, and whether they were remembered.
fn plan(c: &TestContest) -> (serde_json::Value, bool, String) {
    let (out, remembered) = timed(c, &["plan", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    (json(&out), remembered, stderr(&out))
}

/// Lets every stamp age past the two seconds under which it is not trusted.
fn settle() {
    std::thread::sleep(std::time::Duration::from_millis(2100));
}

/// Runs what is to run (with `env`) and has the no-op remembered: commands two seconds apart
/// until one answers from it (the stamps of what a command just wrote are not trusted for two
/// seconds; the first command after a `run` that executed something writes the index again
/// with the shard folders' times it can now trust, itself trusted two seconds later).
fn remembered_after(c: &TestContest, env: &[(&str, &str)]) {
    let bin = Path::new(env!("CARGO_BIN_EXE_mccbuild"));
    let (out, _) = with(bin, c, &["run"], env);
    assert!(out.status.success(), "{}", stderr(&out));
    for _ in 0..4 {
        // The command that remembers it, then the one that answers from it.
        for _ in 0..2 {
            let (plan_json, remembered, _) = plan(c);
            assert_eq!(plan_json["to_run"], 0, "{plan_json}");
            if remembered {
                assert_eq!(plan_json["runs"], 4, "{plan_json}");
                return;
            }
        }
        settle();
    }
    panic!("the no-op is not remembered");
}

fn kept_and_recalled(c: &TestContest) {
    remembered_after(c, &[]);
}

/// The record of `tool`'s StateSpace run on `instance` (loose), by its key.
fn record_path(c: &TestContest, tool: &str, instance: &str) -> PathBuf {
    let key = c.record(tool, instance, "StateSpace")["key"]
        .as_str()
        .unwrap()
        .to_string();
    c.loose_path(&key)
}

/// Writes `bytes` into an existing file in place (same inode; its folder's time unchanged).
fn overwrite_in_place(path: &Path, bytes: &[u8]) {
    use std::io::Write;
    let mut f = fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(path)
        .unwrap();
    f.write_all(bytes).unwrap();
}

fn without_timings(out: &Output) -> (String, String) {
    (stdout(out), stderr(out))
}

#[test]
fn a_remembered_no_op_says_what_the_full_command_says() {
    let c = contest();
    kept_and_recalled(&c);
    let memo: Vec<PathBuf> = c.meta_files("noop-");
    assert_eq!(memo.len(), 1, "{memo:?}");
    for args in [
        &["run"][..],
        &["run", "--json"],
        &["plan"],
        &["plan", "--json"],
    ] {
        let (fast, remembered) = timed(&c, args);
        assert!(remembered, "{args:?} answers from the remembered no-op");
        assert!(fast.status.success(), "{}", stderr(&fast));
        fs::remove_file(&memo[0]).unwrap();
        let (full, remembered) = timed(&c, args);
        assert!(!remembered);
        assert!(full.status.success(), "{}", stderr(&full));
        assert_eq!(
            without_timings(&fast),
            without_timings(&full),
            "{args:?}: the remembered no-op and the full command differ"
        );
        assert!(memo[0].exists(), "the full command remembers it again");
    }
    assert!(
        stdout(&timed(&c, &["run"]).0).contains("StateSpace"),
        "the podium is printed"
    );
    // A command about part of the contest is not the remembered no-op.
    let (out, remembered) = timed(&c, &["plan", "--json", "--tool", "a"]);
    assert!(!remembered);
    assert_eq!(json(&out)["runs"], 2);
    // Nor is a damaged memo used (it is replaced).
    let bytes = fs::read(&memo[0]).unwrap();
    let mut damaged = bytes.clone();
    let at = damaged.len() - 3;
    damaged[at] ^= 0x01;
    fs::write(&memo[0], &damaged).unwrap();
    let (plan_json, remembered, _) = plan(&c);
    assert!(!remembered, "a damaged memo is not used");
    assert_eq!(plan_json["to_run"], 0);
}

#[test]
fn loose_records_removed_damaged_added_or_replaced_are_seen_by_the_next_command() {
    let c = contest();
    kept_and_recalled(&c);
    // Damaged in place: same inode, same folder time; only the record's own stamp moved.
    let path = record_path(&c, "a", INSTANCES[0]);
    let bytes = fs::read(&path).unwrap();
    overwrite_in_place(&path, &bytes[..bytes.len() / 2]);
    let (plan_json, remembered, err) = plan(&c);
    assert!(!remembered, "a damaged record");
    assert_eq!(plan_json["to_run"], 1, "{plan_json}");
    assert!(err.contains("damaged run record"), "{err}");
    kept_and_recalled(&c);
    // Removed.
    fs::remove_file(record_path(&c, "b", INSTANCES[1])).unwrap();
    let (plan_json, remembered, _) = plan(&c);
    assert!(!remembered, "a removed record");
    assert_eq!(plan_json["to_run"], 1, "{plan_json}");
    kept_and_recalled(&c);
    // Added: a file that is not a valid record of its name is read and reported.
    let path = record_path(&c, "a", INSTANCES[1]);
    let stranger = path.with_file_name(format!("{}.json", "ab".repeat(32)));
    fs::create_dir_all(stranger.parent().unwrap()).unwrap();
    fs::write(&stranger, fs::read(&path).unwrap()).unwrap();
    let (plan_json, remembered, err) = plan(&c);
    assert!(!remembered, "a record added");
    assert_eq!(plan_json["to_run"], 0, "{plan_json}");
    assert!(err.contains("damaged run record"), "{err}");
    fs::remove_file(&stranger).unwrap();
    kept_and_recalled(&c);
    // Replaced by another valid record of its run (a rerun's, saying DO_NOT_COMPETE): the
    // next `run` prints the new podium, as a fresh computation does.
    let (before, _) = timed(&c, &["run"]);
    for instance in INSTANCES {
        replace_with_valid_record(&record_path(&c, "b", instance), |r| {
            r["verdict"] = "do_not_compete".into();
            r["answers"] = serde_json::json!([]);
        });
    }
    let (after, remembered) = timed(&c, &["run"]);
    assert!(!remembered, "records replaced");
    assert_ne!(stdout(&before), stdout(&after), "b left the podium");
    c.forget_scores();
    let (fresh, _) = timed(&c, &["run"]);
    assert_eq!(stdout(&after), stdout(&fresh));
}

/// A record replaced by another valid record of the same run (atomically, as a rerun does).
fn replace_with_valid_record(path: &Path, change: impl Fn(&mut serde_json::Value)) {
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

fn the_pack(c: &TestContest) -> PathBuf {
    let packs: Vec<PathBuf> = fs::read_dir(c.path().join("cache/packs"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    assert_eq!(packs.len(), 1, "{packs:?}");
    packs[0].clone()
}

#[test]
fn packed_records_a_rewritten_pack_and_a_rebuilt_index_are_seen_by_the_next_command() {
    let c = contest();
    let packing = [("MCCBUILD_PACK_AFTER", "1")];
    remembered_after(&c, &packing);
    let pack = the_pack(&c);
    // Rewritten with the same bytes (another file renamed over it): read again, nothing lost.
    let bytes = fs::read(&pack).unwrap();
    let tmp = pack.with_extension("tmp");
    fs::write(&tmp, &bytes).unwrap();
    fs::rename(&tmp, &pack).unwrap();
    let (plan_json, remembered, _) = plan(&c);
    assert!(!remembered, "a pack rewritten");
    assert_eq!(plan_json["to_run"], 0, "{plan_json}");
    remembered_after(&c, &packing);
    // The index rebuilt from the records.
    fs::remove_file(c.path().join("cache/index.bin")).unwrap();
    let (plan_json, remembered, err) = plan(&c);
    assert!(!remembered, "the index rebuilt");
    assert_eq!(plan_json["to_run"], 0, "{plan_json}");
    assert!(err.contains("is missing: rebuilt"), "{err}");
    remembered_after(&c, &packing);
    // A packed record damaged in place: reported, its run to be done again.
    let text = String::from_utf8(bytes.clone()).unwrap();
    let damaged = text.replacen("\"STATES\"", "\"STATEZ\"", 1);
    assert_ne!(damaged, text);
    overwrite_in_place(&pack, damaged.as_bytes());
    let (plan_json, remembered, err) = plan(&c);
    assert!(!remembered, "a packed record damaged");
    assert_eq!(plan_json["to_run"], 1, "{plan_json}");
    assert!(err.contains(&pack.display().to_string()), "{err}");
    remembered_after(&c, &packing);
    // Packs removed: their runs are no longer stored.
    fs::remove_dir_all(c.path().join("cache/packs")).unwrap();
    let (plan_json, remembered, _) = plan(&c);
    assert!(!remembered, "the packs removed");
    assert_ne!(plan_json["to_run"], 0, "{plan_json}");
    // A pack added (a copy of the one the runs done again went to, as a store merged from
    // another would bring): read.
    remembered_after(&c, &packing);
    let pack = the_pack(&c);
    fs::copy(&pack, pack.with_file_name("00000099.jsonl")).unwrap();
    let (plan_json, remembered, _) = plan(&c);
    assert!(!remembered, "a pack added");
    assert_eq!(plan_json["to_run"], 0, "{plan_json}");
}

#[test]
fn every_input_of_the_plan_and_the_binary_are_seen_by_the_next_command() {
    let c = contest();
    kept_and_recalled(&c);
    // A tool's file.
    fs::write(c.path().join("tools/a/notes.txt"), "a new file").unwrap();
    let (plan_json, remembered, _) = plan(&c);
    assert!(!remembered, "a tool's file");
    assert_eq!(plan_json["to_run"], 2, "a's runs: {plan_json}");
    kept_and_recalled(&c);
    // An instance's file.
    fs::write(
        c.path().join("models").join(INSTANCES[0]).join("extra"),
        "x",
    )
    .unwrap();
    let (plan_json, remembered, _) = plan(&c);
    assert!(!remembered, "an instance's file");
    assert_eq!(plan_json["to_run"], 2, "the runs on it: {plan_json}");
    kept_and_recalled(&c);
    // The manifest.
    write_manifest(&c, "time_s = 11\nmemory_mb = 512");
    let (plan_json, remembered, _) = plan(&c);
    assert!(!remembered, "the manifest");
    assert_eq!(plan_json["to_run"], 4, "{plan_json}");
    kept_and_recalled(&c);
    // The rules (a change that redoes no run but may change every score).
    let rules = c.path().join("rules.toml");
    let text = fs::read_to_string(&rules).unwrap();
    fs::write(&rules, format!("{text}\n# edited\n")).unwrap();
    let (out, remembered) = timed(&c, &["run"]);
    assert!(!remembered, "the rules");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("0 executed, 4 cached"),
        "{}",
        stderr(&out)
    );
    // The binary: another one is not the one that remembered, nor is it once it changed.
    settle();
    let bin = c.path().join("bin/mccbuild");
    fs::create_dir_all(bin.parent().unwrap()).unwrap();
    fs::copy(env!("CARGO_BIN_EXE_mccbuild"), &bin).unwrap();
    assert!(
        !with(&bin, &c, &["plan", "--json"], &[]).1,
        "another binary"
    );
    settle();
    assert!(!with(&bin, &c, &["plan", "--json"], &[]).1);
    assert!(with(&bin, &c, &["plan", "--json"], &[]).1, "kept for it");
    fs::copy(env!("CARGO_BIN_EXE_mccbuild"), &bin).unwrap();
    assert!(
        !with(&bin, &c, &["plan", "--json"], &[]).1,
        "the binary changed"
    );
}

/// A `run` that waited for another `run` to end does not answer from what was remembered
/// before that one wrote its records: it prints the podium of the records as they are.
#[test]
fn a_run_that_waited_for_another_sees_its_records() {
    let mut c = TestContest::new();
    for instance in INSTANCES {
        c.copy_demo_instance(instance);
    }
    c.model("Philosophers", "known", &["models/Philosophers-PT-*"]);
    // b answers slowly, and, once told to (a file of the host it sees), differently: it
    // leaves the podium.
    let host = host_software_dir();
    let quits = host.path().join("b-quits");
    c.scripted_tool("a", "examinations = [\"StateSpace\"]");
    c.script_tool(
        "b",
        &format!(
            "#!/bin/sh\nsleep 0.8\nif [ -f {} ]; then echo DO_NOT_COMPETE; else printf '{}'; fi\n",
            quits.display(),
            SS.replace('\n', "\\n")
        ),
        "examinations = [\"StateSpace\"]",
    );
    for instance in INSTANCES {
        c.answer("a", instance, "StateSpace", SS);
    }
    write_manifest(&c, "time_s = 10\nmemory_mb = 512");
    kept_and_recalled(&c);
    let (before, _) = timed(&c, &["run"]);
    fs::write(&quits, "").unwrap();
    let spawn = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_mccbuild"))
            .args(args)
            .current_dir(c.path())
            .env_remove("MCCBUILD_SANDBOX")
            .env("MCCBUILD_TIMINGS", "1")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let first = spawn(&["run", "--rerun", "--tool", "b"]);
    std::thread::sleep(std::time::Duration::from_millis(400));
    let second = spawn(&["run"]);
    let first = first.wait_with_output().unwrap();
    let second = second.wait_with_output().unwrap();
    assert!(first.status.success(), "{}", stderr(&first));
    assert!(second.status.success(), "{}", stderr(&second));
    assert!(
        stderr(&second).contains("waiting for the store"),
        "{}",
        stderr(&second)
    );
    assert!(
        !stderr(&second).contains("timing: no-op: remembered"),
        "{}",
        stderr(&second)
    );
    assert_ne!(stdout(&before), stdout(&second), "b left the podium");
    c.forget_scores();
    assert_eq!(stdout(&second), stdout(&timed(&c, &["run"]).0));
}
