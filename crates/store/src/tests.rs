//! The store's tests: opening (format, marker, upgrade), records written, read back and
//! verified; and [`sample_record`], the record other tests store.

use std::fs;

use mccbuild_core::protocol::Answer;
use mccbuild_core::{CapturedOutput, Measurement, Response, RunKey, Termination, Value};
use mccbuild_rules::edition::Limits;

use crate::{RECORD_FORMAT, RunRecord, STORE_FORMAT, Store, encode_record, verify_digest};

pub fn sample_record(key: RunKey) -> RunRecord {
    RunRecord {
        format: RECORD_FORMAT,
        key,
        mccbuild_version: "test".into(),
        tool: "explorer".into(),
        instance: "Philosophers-PT-000002".into(),
        examination: "StateSpace".into(),
        executor: [("kind".to_string(), "local".to_string())].into(),
        limits: Limits {
            time_s: 60,
            memory_mb: 1024,
            time: Default::default(),
        },
        started_at: "2026-11-22T00:00:00Z".into(),
        finished_at: "2026-11-22T00:00:01Z".into(),
        measurement: Measurement {
            termination: Termination::Exit { code: 0 },
            cpu_time_s: 0.5,
            wall_time_s: 0.6,
            peak_memory_bytes: 1 << 20,
        },
        method: "test".into(),
        cores: vec![0],
        host: "h".into(),
        response: Response::Answered,
        answers: vec![Answer {
            id: "STATES".into(),
            position: 0,
            value: Value::Int(6),
            techniques: vec!["EXPLICIT".into()],
        }],
        diagnostics: vec![],
        stdout: CapturedOutput {
            text: "STATE_SPACE STATES 6\n".into(),
            bytes: 21,
            truncated: false,
        },
        stderr: CapturedOutput::default(),
        vm: None,
        slurm: None,
        machine: None,
    }
}

#[test]
fn records_with_and_without_vm_load() {
    // Records written before `vm` existed have no such field.
    let plain = serde_json::to_value(sample_record(RunKey([4; 32]))).unwrap();
    assert!(plain.get("vm").is_none());
    let back: RunRecord = serde_json::from_value(plain).unwrap();
    assert_eq!(back.vm, None);
    let mut in_vm = sample_record(RunKey([5; 32]));
    in_vm.measurement.termination = Termination::GuestPanic;
    in_vm.vm = Some(crate::VmInfo {
        accel: "tcg".into(),
        guest: "kernel".into(),
        cpu_model: "Westmere".into(),
        memory_mb: 2048,
        vcpus: 1,
        qemu_cpu_time_s: 8.5,
        vm_wall_time_s: 12.0,
        note: String::new(),
        console: "Kernel panic".into(),
    });
    let text = serde_json::to_string(&in_vm).unwrap();
    assert!(text.contains("\"guest_panic\"") && text.contains("\"qemu_cpu_time_s\""));
    assert_eq!(serde_json::from_str::<RunRecord>(&text).unwrap(), in_vm);
}

#[test]
fn put_then_get_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let key = RunKey([3; 32]);
    assert_eq!(store.get(&key).unwrap(), None);
    let record = sample_record(key);
    store.put(&record).unwrap();
    assert_eq!(store.get(&key).unwrap(), Some(record));
    // No temporary file is left behind.
    let shard = store.record_path(&key).parent().unwrap().to_path_buf();
    assert_eq!(fs::read_dir(shard).unwrap().count(), 1);
}

#[test]
fn corrupt_and_foreign_records_are_errors_not_panics() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let key = RunKey([4; 32]);
    let path = store.record_path(&key);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(&path, b"{\"format\": 1, \"key\": tru").unwrap();
    assert!(
        store
            .get(&key)
            .unwrap_err()
            .reason
            .contains("not a run record")
    );
    fs::write(&path, b"{\"format\": 99}").unwrap();
    assert!(
        store
            .get(&key)
            .unwrap_err()
            .reason
            .contains("record format 99")
    );
    let other = sample_record(RunKey([5; 32]));
    fs::write(&path, encode_record(&other).unwrap().0).unwrap();
    assert!(store.get(&key).unwrap_err().reason.contains("instead"));
}

#[test]
fn a_record_verifies_itself() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let key = RunKey([6; 32]);
    let digest = store.put(&sample_record(key)).unwrap();
    let path = store.record_path(&key);
    let good = fs::read(&path).unwrap();
    assert_eq!(verify_digest(&good), Ok(digest));
    assert!(
        good.ends_with(
            format!("\"digest\":\"{}\"}}", mccbuild_core::digest::hex(&digest)).as_bytes()
        )
    );
    // An answer changed, the file still valid JSON of the same length.
    let text = String::from_utf8(good.clone()).unwrap();
    let edited = text.replacen("\"value\":\"6\"", "\"value\":\"7\"", 1);
    assert_ne!(edited, text);
    serde_json::from_str::<serde_json::Value>(&edited).unwrap();
    fs::write(&path, &edited).unwrap();
    let err = store.get(&key).unwrap_err();
    assert!(err.reason.contains("does not match its digest"), "{err}");
    // Truncated.
    fs::write(&path, &good[..good.len() - 10]).unwrap();
    assert!(store.get(&key).is_err());
    fs::write(&path, &good[..good.len() / 2]).unwrap();
    assert!(store.get(&key).is_err());
    // The digest's hex in upper case: the same number, another file.
    let upper = text.replace(
        &mccbuild_core::digest::hex(&digest),
        &mccbuild_core::digest::hex(&digest).to_uppercase(),
    );
    fs::write(&path, &upper).unwrap();
    assert!(store.get(&key).is_err());
    // Without its digest (a record of format 2 written by hand).
    fs::write(&path, serde_json::to_vec(&sample_record(key)).unwrap()).unwrap();
    assert!(
        store
            .get(&key)
            .unwrap_err()
            .reason
            .contains("digest is missing")
    );
    fs::write(&path, &good).unwrap();
    assert_eq!(store.get_verified(&key).unwrap().unwrap().1, digest);
}

#[test]
fn a_format_1_store_is_upgraded_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (RunKey([7; 32]), RunKey([8; 32]));
    fs::write(dir.path().join("STORE"), "mccbuild store 1\n").unwrap();
    let mut old = sample_record(a);
    old.format = 1;
    let path_a = dir.path().join("runs/07").join(format!("{}.json", a.hex()));
    let path_b = dir.path().join("runs/08").join(format!("{}.json", b.hex()));
    fs::create_dir_all(path_a.parent().unwrap()).unwrap();
    fs::create_dir_all(path_b.parent().unwrap()).unwrap();
    fs::write(&path_a, serde_json::to_vec(&old).unwrap()).unwrap();
    fs::write(&path_b, b"{\"format\": 1, \"key\": tru").unwrap();
    let store = Store::open(dir.path()).unwrap();
    assert!(store.notes[0].contains("1 records now carry a content digest"));
    let upgraded = store.get(&a).unwrap().unwrap();
    assert_eq!(upgraded.format, RECORD_FORMAT);
    assert_eq!(upgraded.answers, old.answers);
    // The damaged one is left as it was (reported, rerun), never removed.
    assert_eq!(fs::read(&path_b).unwrap(), b"{\"format\": 1, \"key\": tru");
    assert_eq!(
        fs::read_to_string(dir.path().join("STORE")).unwrap(),
        format!("mccbuild store {STORE_FORMAT}\n")
    );
    assert!(Store::open(dir.path()).unwrap().notes.is_empty());
}

#[test]
fn a_damaged_marker_is_named_and_nothing_advises_removing() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("STORE"), "\u{0}garbage\n").unwrap();
    let message = Store::open(dir.path()).unwrap_err().to_string();
    assert!(
        message.contains("damaged") && message.contains("write the line"),
        "{message}"
    );
    assert!(
        !message.contains("remove") && !message.contains("delete"),
        "{message}"
    );
    fs::write(dir.path().join("STORE"), "mccbuild store 999\n").unwrap();
    let message = Store::open(dir.path()).unwrap_err().to_string();
    assert!(
        !message.contains("remove") && !message.contains("delete"),
        "{message}"
    );
}

/// A marker of binary garbage is shown escaped and shortened, never echoed raw to a terminal.
#[test]
fn a_garbled_marker_is_shown_escaped_and_shortened() {
    let dir = tempfile::tempdir().unwrap();
    let mut garbage = b"\x1b[2J\x00\xff\xfe".to_vec();
    garbage.extend((0u8..=255).cycle().take(4000));
    fs::write(dir.path().join("STORE"), &garbage).unwrap();
    let message = Store::open(dir.path()).unwrap_err().to_string();
    assert!(
        message.chars().all(|c| !c.is_control() && c.is_ascii()),
        "{message:?}"
    );
    assert!(
        message.contains("holds `\\x1b[2J\\x00\\xff\\xfe"),
        "{message}"
    );
    assert!(message.contains("... (4007 bytes)`"), "{message}");
    assert!(message.len() < 600, "{message}");
}

#[test]
fn a_store_of_another_format_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("STORE"), "mccbuild store 999\n").unwrap();
    assert!(
        Store::open(dir.path())
            .unwrap_err()
            .to_string()
            .contains("another format")
    );
}

#[test]
fn a_machine_is_read_from_the_kernels_files() {
    let cpuinfo = "processor\t: 0\nmodel name\t: AMD EPYC 7B13\nflags\t\t: fpu\n\nprocessor\t: 1\nmodel name\t: AMD EPYC 7B13\n";
    let meminfo = "MemTotal:       24601360 kB\nMemFree:         1000 kB\n";
    let m = crate::Machine::from_proc(cpuinfo, meminfo, "6.1.0-28-amd64\n");
    assert_eq!(m.cpu_model, "AMD EPYC 7B13");
    assert_eq!(m.cpus, 2);
    assert_eq!(m.memory_mb, 24024);
    assert_eq!(m.kernel, "6.1.0-28-amd64");
    // Nothing readable: empty facts, not a panic.
    assert_eq!(crate::Machine::from_proc("", "", "").cpus, 0);
}
