//! `mccbuild watch`: records written into the store of a running watch one by one (as any
//! executor writes them), after each of which the published scores equal those of a fresh
//! `mccbuild scores`; a half-written record, a burst, an invalid manifest.

mod common;

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use common::*;

const SS: &str = "STATE_SPACE STATES 9 TECHNIQUES EXPLICIT\nSTATE_SPACE TRANSITIONS 22 TECHNIQUES EXPLICIT\nSTATE_SPACE MAX_TOKEN_IN_PLACE 1 TECHNIQUES EXPLICIT\nSTATE_SPACE MAX_TOKEN_PER_MARKING 2 TECHNIQUES EXPLICIT\n";

struct Watch {
    child: Child,
    lines: mpsc::Receiver<String>,
}

impl Watch {
    fn start(dir: &Path) -> Watch {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mccbuild"))
            .args(["watch", "--json"])
            .current_dir(dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("mccbuild watch starts");
        let (tx, lines) = mpsc::channel();
        let out = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(out).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        Watch { child, lines }
    }

    /// The next published update (fails after 20 s).
    fn next(&self) -> serde_json::Value {
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(20))
            .expect("an update within 20 s");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON: {e}: {line}"))
    }

    /// No update for a while.
    fn quiet(&self, ms: u64) -> Option<String> {
        self.lines.recv_timeout(Duration::from_millis(ms)).ok()
    }
}

impl Watch {
    /// Stops it; returns what it printed on stderr.
    fn stop(mut self) -> String {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let mut err = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            let _ = std::io::Read::read_to_string(&mut e, &mut err);
        }
        err
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The parts of `scores --json` that watch publishes.
fn published(v: &serde_json::Value) -> serde_json::Value {
    serde_json::json!({"confidence": v["confidence"], "scores": v["scores"], "podiums": v["podiums"], "standings": v["standings"], "awards": v["awards"]})
}

fn fresh_scores(c: &TestContest) -> serde_json::Value {
    let out = c.mccbuild(&["scores", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    published(&json(&out))
}

/// A contest whose runs are done, with every record then moved out of the store (the index
/// removed): `records` lists them, to be put back one by one.
fn contest_with_held_records() -> (TestContest, Vec<(PathBuf, PathBuf)>) {
    let mut c = TestContest::new();
    c.copy_demo_instance("Philosophers-PT-000002");
    c.copy_demo_instance("Philosophers-PT-000003");
    c.model("Philosophers", "known", &["models/Philosophers-PT-*"]);
    for tool in ["a", "b", "c", "d"] {
        c.scripted_tool(
            tool,
            "examinations = [\"StateSpace\", \"ReachabilityDeadlock\"]",
        );
        for instance in ["Philosophers-PT-000002", "Philosophers-PT-000003"] {
            // d counts states wrongly on one instance: Confidence and podium move.
            let ss = if tool == "d" && instance.ends_with('3') {
                SS.replace("STATES 9", "STATES 10")
            } else {
                SS.to_string()
            };
            c.answer(tool, instance, "StateSpace", &ss);
            let deadlock = if tool == "c" { "TRUE" } else { "FALSE" };
            c.answer(
                tool,
                instance,
                "ReachabilityDeadlock",
                &format!("FORMULA ReachabilityDeadlock {deadlock} TECHNIQUES EXPLICIT\n"),
            );
        }
    }
    c.write("time_s = 10\nmemory_mb = 512");
    let run = c.mccbuild(&["run", "--json"]);
    assert!(run.status.success(), "{}", stderr(&run));
    let held = c.path().join("held");
    std::fs::create_dir_all(&held).unwrap();
    let mut records = Vec::new();
    for shard in std::fs::read_dir(c.path().join("cache/runs")).unwrap() {
        for record in std::fs::read_dir(shard.unwrap().path()).unwrap() {
            let path = record.unwrap().path();
            let aside = held.join(path.file_name().unwrap());
            std::fs::rename(&path, &aside).unwrap();
            records.push((aside, path));
        }
    }
    records.sort();
    let _ = std::fs::remove_file(c.path().join("cache/index.bin"));
    assert_eq!(records.len(), 16);
    (c, records)
}

#[test]
fn records_arriving_one_by_one_keep_the_published_scores_equal_to_a_fresh_computation() {
    let (c, records) = contest_with_held_records();
    let watch = Watch::start(c.path());
    let start = watch.next();
    assert_eq!(start["cause"], "start");
    assert_eq!(published(&start["scores"]), fresh_scores(&c));
    let mut podium_changes = 0;
    for (i, (aside, path)) in records.iter().enumerate() {
        std::fs::rename(aside, path).unwrap();
        let update = watch.next();
        assert_eq!(update["cause"], "records", "{update}");
        assert_eq!(update["records"], 1);
        assert_eq!(
            published(&update["scores"]),
            fresh_scores(&c),
            "after record {i}"
        );
        // The event log: one record re-executes the queries of its own group (one model, one
        // examination) and the contest-wide sums, nothing else.
        let queries = update["queries"].as_object().unwrap();
        assert_eq!(queries["value_groups"], 1, "{update}");
        assert_eq!(
            queries
                .get("exam_scores")
                .and_then(|v| v.as_u64())
                .unwrap_or(0),
            1,
            "{update}"
        );
        assert!(
            queries
                .get("trusted_values")
                .and_then(|v| v.as_u64())
                .unwrap_or(0)
                <= 1,
            "{update}"
        );
        assert!(!queries.contains_key("weights"), "{update}");
        podium_changes += update["podium_changes"].as_object().unwrap().len();
        assert!(update["latency_ms"].as_f64().is_some());
    }
    assert!(podium_changes > 0, "podiums changed as records arrived");
}

#[test]
fn an_unchanged_trusted_value_stops_the_wave() {
    let (c, records) = contest_with_held_records();
    // All records but one of tool a's StateSpace: the value a's record brings agrees with b, c, d.
    let watch = Watch::start(c.path());
    watch.next();
    let mut last = None;
    for (aside, path) in &records {
        std::fs::rename(aside, path).unwrap();
        last = Some(watch.next());
    }
    // Remove one record and put it back: the trusted values of its group are recomputed, but
    // equal to before (the other tools still agree), so other groups are not re-decided and
    // the published scores are those of before.
    let (aside, path) = &records[0];
    let before = published(&last.unwrap()["scores"]);
    std::fs::rename(path, aside).unwrap();
    let removed = watch.next();
    assert_eq!(removed["records"], 1);
    std::fs::rename(aside, path).unwrap();
    let back = watch.next();
    assert_eq!(published(&back["scores"]), before);
    assert_eq!(published(&back["scores"]), fresh_scores(&c));
    let queries = back["queries"].as_object().unwrap();
    assert!(
        queries
            .get("trusted_values")
            .and_then(|v| v.as_u64())
            .unwrap_or(0)
            <= 1,
        "{back}"
    );
}

#[test]
fn half_written_records_bursts_and_an_invalid_manifest() {
    let (c, records) = contest_with_held_records();
    let watch = Watch::start(c.path());
    watch.next();
    // A record written in two halves by a writer that does not rename atomically: no update
    // from the first half, the whole record applied after the second.
    let (aside, path) = &records[0];
    let bytes = std::fs::read(aside).unwrap();
    std::fs::write(path, &bytes[..bytes.len() / 2]).unwrap();
    assert!(watch.quiet(1500).is_none(), "half a record is not applied");
    std::fs::write(path, &bytes).unwrap();
    std::fs::remove_file(aside).unwrap();
    let update = watch.next();
    assert_eq!(update["records"], 1, "{update}");
    assert_eq!(published(&update["scores"]), fresh_scores(&c));

    // A burst: the other 15 records at once are applied in fewer updates than records.
    for (aside, path) in &records[1..] {
        std::fs::rename(aside, path).unwrap();
    }
    let mut applied = 0;
    let mut updates = 0;
    let mut last = serde_json::Value::Null;
    while applied < 15 {
        last = watch.next();
        applied += last["records"].as_u64().unwrap();
        updates += 1;
    }
    assert_eq!(applied, 15);
    assert!(updates < 15, "{updates} updates for 15 records");
    assert_eq!(published(&last["scores"]), fresh_scores(&c));

    // The manifest edited into an invalid state: the error is shown, the last good state kept;
    // fixed again: re-planned.
    let manifest = c.path().join("contest.toml");
    let good = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(&manifest, format!("{good}\n[contest2]\nbroken = true\n")).unwrap();
    assert!(
        watch.quiet(1500).is_none(),
        "no update from an invalid manifest"
    );
    std::fs::write(
        &manifest,
        good.replace("name = \"Test\"", "name = \"Test again\""),
    )
    .unwrap();
    let replan = watch.next();
    assert_eq!(replan["cause"], "replan", "{replan}");
    assert_eq!(replan["scores"]["contest"], "Test again");
    assert_eq!(published(&replan["scores"]), fresh_scores(&c));
    let err = watch.stop();
    assert!(
        err.contains("keeping the last good state") && err.contains("contest2"),
        "{err}"
    );
}
