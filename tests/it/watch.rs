//! `mccbuild watch`: records written into the store of a running watch one by one (as any
//! executor writes them), after each of which the published scores equal those of a fresh
//! `mccbuild scores`; a half-written record, a burst, an invalid manifest.

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use crate::common::*;

const SS: &str = "STATE_SPACE STATES 9 TECHNIQUES EXPLICIT\nSTATE_SPACE TRANSITIONS 22 TECHNIQUES EXPLICIT\nSTATE_SPACE MAX_TOKEN_IN_PLACE 1 TECHNIQUES EXPLICIT\nSTATE_SPACE MAX_TOKEN_PER_MARKING 2 TECHNIQUES EXPLICIT\n";

struct Watch {
    child: Child,
    lines: mpsc::Receiver<String>,
    errors: mpsc::Receiver<String>,
}

/// The lines of a child's pipe, as they come.
fn lines_of(pipe: impl std::io::Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(pipe).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    lines
}

impl Watch {
    fn start(dir: &Path) -> Watch {
        Watch::start_with(dir, &[])
    }

    /// `mccbuild watch --json` with more arguments.
    fn start_with(dir: &Path, args: &[&str]) -> Watch {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mccbuild"))
            .args(["watch", "--json"])
            .args(args)
            .current_dir(dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("mccbuild watch starts");
        let lines = lines_of(child.stdout.take().unwrap());
        let errors = lines_of(child.stderr.take().unwrap());
        Watch {
            child,
            lines,
            errors,
        }
    }

    /// The next published update (fails after 20 s).
    fn next(&self) -> serde_json::Value {
        self.next_within(20)
    }

    fn next_within(&self, seconds: u64) -> serde_json::Value {
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(seconds))
            .unwrap_or_else(|_| panic!("an update within {seconds} s"));
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON: {e}: {line}"))
    }

    /// No update for a while.
    fn quiet(&self, ms: u64) -> Option<String> {
        self.lines.recv_timeout(Duration::from_millis(ms)).ok()
    }

    /// The next line on stderr that starts with `prefix`, without it.
    fn said(&self, prefix: &str) -> String {
        loop {
            let line = self
                .errors
                .recv_timeout(Duration::from_secs(20))
                .expect("watch says it");
            if let Some(rest) = line.strip_prefix(prefix) {
                return rest.to_string();
            }
        }
    }

    /// Stops it; returns what it printed on stderr.
    fn stop(mut self) -> String {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.errors.try_iter().collect::<Vec<_>>().join("\n")
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
    assert_results(&out);
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
    assert_eq!(start["scores"]["partial"]["missing_runs"], 16, "{start}");
    let mut podium_changes = 0;
    for (i, (aside, path)) in records.iter().enumerate() {
        std::fs::rename(aside, path).unwrap();
        let update = watch.next();
        assert_eq!(update["cause"], "records", "{update}");
        assert_eq!(update["records"], 1);
        // Partial until the last record is back (docs/cli.md, "Partial results").
        match records.len() - 1 - i {
            0 => assert!(update["scores"].get("partial").is_none(), "{update}"),
            missing => assert_eq!(update["scores"]["partial"]["missing_runs"], missing),
        }
        assert_eq!(
            published(&update["scores"]),
            fresh_scores(&c),
            "after record {i}"
        );
        // The event log: one record re-executes the answers of its own group (one model, one
        // examination) and the contest-wide sums. Another group is re-decided only through a
        // contested decision, when the record moved a tool's Confidence (E-3.1): its trusted
        // values and scores re-execute only then, at most once per decision re-executed.
        let queries = update["queries"].as_object().unwrap();
        let count = |name: &str| queries.get(name).and_then(|v| v.as_u64()).unwrap_or(0);
        assert_eq!(count("agreement"), 1, "{update}");
        let decisions = count("contested_decision");
        assert!(count("exam_scores") >= 1, "{update}");
        assert!(count("exam_scores") <= 1 + decisions, "{update}");
        assert!(count("trusted_values") <= 1 + decisions, "{update}");
        if count("tool_confidence") == 0 {
            // No Confidence to move: the record's own group only.
            assert_eq!(count("exam_scores"), 1, "{update}");
        }
        assert!(!queries.contains_key("weights"), "{update}");
        podium_changes += update["podium_changes"].as_object().unwrap().len();
        assert!(update["latency_ms"].as_f64().is_some());
    }
    assert!(podium_changes > 0, "podiums changed as records arrived");
}

/// The files of a site folder and its subfolders (the run pages): name -> (inode, content). A file written again (atomically, by
/// rename) has a new inode.
fn site_files(dir: &Path) -> std::collections::BTreeMap<String, (u64, Vec<u8>)> {
    use std::os::unix::fs::MetadataExt;
    files_under(dir)
        .into_iter()
        .filter(|f| !f.file_name().unwrap().to_string_lossy().starts_with('.'))
        .map(|f| {
            let path = dir.join(&f);
            let inode = std::fs::metadata(&path).unwrap().ino();
            (
                f.to_string_lossy().into_owned(),
                (inode, std::fs::read(path).unwrap()),
            )
        })
        .collect()
}

/// A GET on the served site: the body.
fn get(addr: &str, path: &str) -> String {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    write!(s, "GET /{path} HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let mut response = String::new();
    s.read_to_string(&mut response).unwrap();
    response
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_string())
        .unwrap_or_default()
}

#[test]
fn the_live_site_equals_a_fresh_report_after_each_record_and_only_changed_pages_are_rewritten() {
    let (c, records) = contest_with_held_records();
    let site = c.path().join("live-site");
    let watch = Watch::start_with(
        c.path(),
        &["--serve", "127.0.0.1:0", "--out", site.to_str().unwrap()],
    );
    let addr = watch
        .said("serving the report on ")
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string();
    let start = watch.next();
    let pages = start["site"]["pages"].as_u64().unwrap();
    assert_eq!(start["site"]["rendered"].as_u64(), Some(pages), "{start}");
    let fresh = c.path().join("fresh");
    let mut rewritten_in_all = 0;
    for (i, (aside, path)) in records.iter().enumerate() {
        let before = site_files(&site);
        std::fs::rename(aside, path).unwrap();
        let update = watch.next();
        assert_eq!(update["cause"], "records", "{update}");
        let after = site_files(&site);
        // Byte for byte what `mccbuild report` writes from the same store, file for file.
        let out = c.mccbuild(&["report", "--out", fresh.to_str().unwrap()]);
        assert_results(&out);
        let report = site_files(&fresh);
        assert_eq!(
            after.keys().collect::<Vec<_>>(),
            report.keys().collect::<Vec<_>>(),
            "after record {i}"
        );
        for (name, (_, text)) in &report {
            assert!(
                after[name].1 == *text,
                "after record {i}: {name} differs from a fresh report's"
            );
        }
        // Only the pages whose inputs changed were written again, as the update says; the
        // pages that depend on the plan alone never are.
        let rewritten: Vec<&String> = after
            .iter()
            .filter(|(name, (inode, _))| before.get(*name).is_none_or(|b| b.0 != *inode))
            .map(|(name, _)| name)
            .collect();
        assert_eq!(
            Some(rewritten.len() as u64),
            update["site"]["rendered"].as_u64(),
            "after record {i}: {rewritten:?} {update}"
        );
        for plan_only in ["style.css", "examinations.html", "models.html"] {
            assert!(!rewritten.contains(&&plan_only.to_string()), "{plan_only}");
        }
        assert!(
            rewritten.contains(&&"index.html".to_string()),
            "{rewritten:?}"
        );
        rewritten_in_all += rewritten.len();
        // The served page is the written one, with its reload script.
        let served = get(&addr, "index.html");
        let (head, rest) = served.split_once("<script>").expect("the reload script");
        let (_, tail) = rest.split_once("</script>").unwrap();
        assert_eq!(
            format!("{head}{tail}").as_bytes(),
            &after["index.html"].1[..],
            "after record {i}"
        );
    }
    // Every record here moves a Confidence (one model, four tools in each examination), which
    // re-decides values across the site; still, pages whose inputs stayed were kept.
    let content_pages = (pages - 3) * records.len() as u64;
    assert!(
        (rewritten_in_all as u64) < content_pages,
        "{rewritten_in_all} of {content_pages} pages rewritten"
    );
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
    // fixed again with another name (the same runs): re-scored without re-planning; a limit
    // edited (in every run's key): re-planned.
    let manifest = c.path().join("contest.toml");
    let good = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(&manifest, format!("{good}\n[contest2]\nbroken = true\n")).unwrap();
    assert!(
        watch.quiet(1500).is_none(),
        "no update from an invalid manifest"
    );
    let renamed = good.replace("name = \"Test\"", "name = \"Test again\"");
    std::fs::write(&manifest, &renamed).unwrap();
    let rescored = watch.next();
    assert_eq!(rescored["cause"], "rules", "{rescored}");
    assert_eq!(rescored["scores"]["contest"], "Test again");
    assert_eq!(published(&rescored["scores"]), fresh_scores(&c));
    std::fs::write(&manifest, renamed.replace("time_s = 10", "time_s = 11")).unwrap();
    let replan = watch.next();
    assert_eq!(replan["cause"], "replan", "{replan}");
    assert_eq!(published(&replan["scores"]), fresh_scores(&c));
    let err = watch.stop();
    assert!(
        err.contains("keeping the last good state") && err.contains("contest2"),
        "{err}"
    );
}

/// A record replaced by another of the same run (a rerun whose answers differ: same key, new
/// content) is noticed by its content, read alone, and re-scored: the published scores are a
/// fresh computation's.
#[test]
fn a_record_replaced_by_new_content_is_noticed() {
    let (c, records) = contest_with_held_records();
    for (aside, path) in &records {
        std::fs::rename(aside, path).unwrap();
    }
    let watch = Watch::start(c.path());
    let start = watch.next();
    assert!(start["scores"]["confidence"]["d"].as_f64().unwrap() < 1.0);
    // d's wrong STATES (10 on instance 3) corrected in place, as its rerun would write it.
    let store = mccbuild_store::Store::open(&c.path().join("cache")).unwrap();
    let (path, mut record) = records
        .iter()
        .find_map(|(_, path)| {
            let text = std::fs::read_to_string(path).unwrap();
            let v: serde_json::Value = serde_json::from_str(&text).unwrap();
            let key = mccbuild_core::RunKey::from_hex(v["key"].as_str()?)?;
            let record = store.get(&key).unwrap()?;
            (record.tool == "d"
                && record.instance.ends_with('3')
                && record.examination == "StateSpace")
                .then_some((path.clone(), record))
        })
        .expect("d's StateSpace record of instance 3");
    let states = record
        .answers
        .iter_mut()
        .find(|a| &*a.id == "STATES")
        .unwrap();
    assert_eq!(states.value, mccbuild_core::Value::Int(10));
    states.value = mccbuild_core::Value::Int(9);
    store.put(&record).unwrap();
    assert!(path.exists());
    let update = watch.next();
    assert_eq!(update["cause"], "records", "{update}");
    assert_eq!(update["records"], 1, "{update}");
    assert_eq!(update["scores"]["confidence"]["d"], 1.0, "{update}");
    assert_eq!(published(&update["scores"]), fresh_scores(&c));
}

/// A record written into a shard folder that did not exist when watch started (a packed store
/// has none left, `mccbuild import` never makes them): the folder and the record appear at once,
/// before the watcher can watch the new folder, and the record is still applied within a second
/// or two (not by the full look at the store, every 30 s).
#[test]
fn a_record_in_a_new_shard_folder_is_noticed_at_once() {
    let (c, records) = contest_with_held_records();
    let (aside, path) = &records[0];
    for (aside, path) in &records[1..] {
        std::fs::rename(aside, path).unwrap();
    }
    let shard = path.parent().unwrap();
    if std::fs::read_dir(shard).unwrap().next().is_none() {
        std::fs::remove_dir(shard).unwrap();
    }
    assert!(
        !shard.exists(),
        "the first record's shard folder holds no other record"
    );
    let watch = Watch::start(c.path());
    let start = watch.next();
    assert_eq!(start["cause"], "start");
    // As an executor writes a record: the shard folder made, then the record renamed into it.
    std::fs::create_dir_all(shard).unwrap();
    std::fs::rename(aside, path).unwrap();
    let update = watch.next_within(10);
    assert_eq!(update["cause"], "records", "{update}");
    assert_eq!(update["records"], 1, "{update}");
    assert!(
        update["latency_ms"].as_f64().unwrap() < 10_000.0,
        "noticed at once, not by the look every 30 s: {update}"
    );
    assert_eq!(published(&update["scores"]), fresh_scores(&c));
}

/// `mccbuild run` packing the loose records while watch runs (docs/cache.md, "Packs": the pack
/// is in place before the loose files go): every run stays counted, whatever watch publishes
/// is the scores of all the runs.
#[test]
fn a_packing_run_keeps_every_run_in_the_published_scores() {
    let (c, records) = contest_with_held_records();
    for (aside, path) in &records {
        std::fs::rename(aside, path).unwrap();
    }
    let watch = Watch::start(c.path());
    let start = watch.next();
    let before = fresh_scores(&c);
    assert_eq!(published(&start["scores"]), before);
    let out = Command::new(env!("CARGO_BIN_EXE_mccbuild"))
        .arg("run")
        .current_dir(c.path())
        .env("MCCBUILD_PACK_AFTER", "1")
        .output()
        .unwrap();
    assert!(
        stderr(&out).contains("packed 16 loose run records"),
        "{}",
        stderr(&out)
    );
    assert!(records.iter().all(|(_, path)| !path.exists()));
    let mut updates = 0;
    while let Some(line) = watch.quiet(3000) {
        let update: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(published(&update["scores"]), before, "{update}");
        updates += 1;
    }
    assert_eq!(fresh_scores(&c), before);
    let err = watch.stop();
    assert!(!err.contains("damaged"), "{err}");
    eprintln!("{updates} updates published while the records were packed");
}

/// An edit of a scoring rule in the rules file (E-2.2's set) is applied through the scoring
/// database's inputs: no re-plan, and the published scores are
/// those a fresh `mccbuild scores` computes with the edited rules. An edit of the rules that
/// changes the runs (a time limit) re-plans.
#[test]
fn a_rules_edit_is_rescored_without_replanning() {
    let (c, records) = contest_with_held_records();
    for (aside, path) in &records {
        std::fs::rename(aside, path).unwrap();
    }
    let rules = c.path().join("rules.toml");
    std::fs::copy(Path::new(REPO).join("rules/mcc-2026.toml"), &rules).unwrap();
    let manifest = c.path().join("contest.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    let from = format!("rules = \"{REPO}/rules/mcc-2026.toml\"");
    assert!(text.contains(&from), "{text}");
    std::fs::write(&manifest, text.replace(&from, "rules = \"rules.toml\"")).unwrap();
    let watch = Watch::start(c.path());
    let start = watch.next();
    assert_eq!(published(&start["scores"]), fresh_scores(&c));

    // V (E-2.2) becomes the values all four tools agree on: c's wrong deadlocks (a, b, d
    // agree) leave V, and c's Confidence goes up to 1.
    let original = std::fs::read_to_string(&rules).unwrap();
    assert!(original.contains("min_agreeing = 3"));
    std::fs::write(
        &rules,
        original.replace("min_agreeing = 3", "min_agreeing = 4"),
    )
    .unwrap();
    let update = watch.next();
    assert_eq!(update["cause"], "rules", "{update}");
    let queries = update["queries"].as_object().unwrap();
    assert!(queries.contains_key("agreement"), "{update}");
    assert_ne!(
        start["scores"]["confidence"]["c"],
        update["scores"]["confidence"]["c"]
    );
    assert_eq!(update["scores"]["confidence"]["c"], 1.0);
    assert_eq!(published(&update["scores"]), fresh_scores(&c));

    // The edition's default time limit is in no run's key here (the manifest overrides it), but
    // limits are planning settings: re-planned.
    std::fs::write(
        &rules,
        original.replacen("time_s = 3600", "time_s = 3000", 1),
    )
    .unwrap();
    let replan = watch.next();
    assert_eq!(replan["cause"], "replan", "{replan}");
    assert_eq!(published(&replan["scores"]), fresh_scores(&c));
}

/// A minimal Chrome DevTools Protocol client over the browser's WebSocket.
struct Cdp {
    ws: tungstenite::WebSocket<tungstenite::stream::MaybeTlsStream<std::net::TcpStream>>,
    next_id: u64,
    /// Console errors and uncaught exceptions seen so far.
    errors: Vec<String>,
}

impl Cdp {
    fn call(
        &mut self,
        session: Option<&str>,
        method: &str,
        params: serde_json::Value,
    ) -> serde_json::Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut msg = serde_json::json!({"id": id, "method": method, "params": params});
        if let Some(s) = session {
            msg["sessionId"] = serde_json::json!(s);
        }
        self.ws
            .send(tungstenite::Message::text(msg.to_string()))
            .expect("CDP send");
        loop {
            let text = match self.ws.read().expect("CDP read") {
                tungstenite::Message::Text(t) => t.to_string(),
                _ => continue,
            };
            let v: serde_json::Value = serde_json::from_str(&text).expect("CDP JSON");
            match v["method"].as_str() {
                Some("Runtime.exceptionThrown") => self.errors.push(v["params"].to_string()),
                Some("Runtime.consoleAPICalled") if v["params"]["type"] == "error" => {
                    self.errors.push(v["params"].to_string())
                }
                Some("Log.entryAdded") if v["params"]["entry"]["level"] == "error" => {
                    self.errors.push(v["params"].to_string())
                }
                _ => {}
            }
            if v["id"] == id {
                assert!(v.get("error").is_none(), "{method}: {v}");
                return v["result"].clone();
            }
        }
    }
}

#[test]
fn the_served_page_shows_a_podium_change_after_a_record_arrives() {
    let Some(chromium) = chromium() else {
        skip("chromium is not installed (apt install chromium)");
        return;
    };
    let (c, records) = contest_with_held_records();
    let watch = Watch::start_with(c.path(), &["--serve", "127.0.0.1:0"]);
    let addr = watch
        .said("serving the report on ")
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string();
    watch.next();

    let profile = tempfile::tempdir().unwrap();
    let mut browser = Command::new(&chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--remote-debugging-port=0",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("about:blank")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut ws_url = None;
    for line in std::io::BufReader::new(browser.stderr.take().unwrap())
        .lines()
        .map_while(Result::ok)
    {
        if let Some(i) = line.find("ws://") {
            ws_url = Some(line[i..].trim().to_string());
            break;
        }
    }
    // Whatever happens, the browser and the watch are stopped.
    struct Kill(Vec<Child>);
    impl Drop for Kill {
        fn drop(&mut self) {
            for c in &mut self.0 {
                let _ = c.kill();
                let _ = c.wait();
            }
        }
    }
    let _guard = Kill(vec![browser]);
    let ws_url = ws_url.expect("DevTools listening on ws://...");
    let (ws, _) = tungstenite::connect(ws_url.as_str()).expect("CDP connects");
    if let tungstenite::stream::MaybeTlsStream::Plain(s) = ws.get_ref() {
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    }
    let mut cdp = Cdp {
        ws,
        next_id: 0,
        errors: Vec::new(),
    };
    let target = cdp.call(
        None,
        "Target.createTarget",
        serde_json::json!({"url": "about:blank"}),
    );
    let attached = cdp.call(
        None,
        "Target.attachToTarget",
        serde_json::json!({"targetId": target["targetId"], "flatten": true}),
    );
    let session = attached["sessionId"].as_str().unwrap().to_string();
    cdp.call(Some(&session), "Runtime.enable", serde_json::json!({}));
    cdp.call(Some(&session), "Log.enable", serde_json::json!({}));
    cdp.call(Some(&session), "Page.enable", serde_json::json!({}));
    cdp.call(
        Some(&session),
        "Page.navigate",
        serde_json::json!({"url": format!("http://{addr}/index.html")}),
    );
    // The StateSpace podium as the page shows it: its rows' text.
    let podium = "(function(){var h=[...document.querySelectorAll('h2')].find(e=>e.textContent==='StateSpace');\
                  if(!h)return 'loading';var t=h.nextElementSibling;return t&&t.tagName==='TABLE'?t.innerText:t?t.innerText:'';})()";
    let mut eval = |cdp: &mut Cdp| {
        cdp.call(
            Some(&session),
            "Runtime.evaluate",
            serde_json::json!({"expression": podium, "returnByValue": true}),
        )["result"]["value"]
            .as_str()
            .unwrap_or("")
            .to_string()
    };
    let wait_for =
        |cdp: &mut Cdp, eval: &mut dyn FnMut(&mut Cdp) -> String, what: &dyn Fn(&str) -> bool| {
            for _ in 0..100 {
                let text = eval(cdp);
                if what(&text) {
                    return text;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            let href = cdp.call(None, "Target.getTargets", serde_json::json!({}));
            panic!(
                "the page never showed it; last: {:?}; targets: {href}",
                eval(cdp)
            );
        };
    let before = wait_for(&mut cdp, &mut eval, &|t| t != "loading" && !t.is_empty());
    assert!(before.contains("No tool took part"), "{before}");
    // One StateSpace record arrives: the page reloads itself and shows a podium with that tool.
    let (aside, path) = records
        .iter()
        .find(|(a, _)| {
            std::fs::read_to_string(a)
                .unwrap()
                .contains("\"StateSpace\"")
        })
        .expect("a StateSpace record");
    std::fs::rename(aside, path).unwrap();
    let after = wait_for(&mut cdp, &mut eval, &|t| {
        t.contains("rank") && t.contains("competing")
    });
    assert!(!after.contains("No tool took part"), "{after}");
    assert!(cdp.errors.is_empty(), "console errors: {:?}", cdp.errors);
    let shot = cdp.call(
        Some(&session),
        "Page.captureScreenshot",
        serde_json::json!({"format": "png"}),
    );
    let png = std::path::Path::new(REPO).join("target/report-screenshots/watch-live.png");
    std::fs::create_dir_all(png.parent().unwrap()).unwrap();
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(shot["data"].as_str().unwrap())
        .expect("base64 PNG");
    std::fs::write(&png, bytes).unwrap();
    eprintln!("screenshot: {}", png.display());
}

#[test]
fn watch_run_executes_what_a_change_makes_necessary() {
    let (c, records) = contest_with_held_records();
    // The records are gone: with --run, watch starts `mccbuild run` for the 16 runs, and their
    // records arrive as updates until the scores are those of the whole contest.
    for (aside, _) in &records {
        std::fs::remove_file(aside).unwrap();
    }
    let watch = Watch::start_with(c.path(), &["--run"]);
    let mut applied = 0;
    while applied < 16 {
        applied += watch.next_within(60)["records"].as_u64().unwrap();
    }
    assert_eq!(applied, 16);
    // A tool's answer file edited: a tool change re-plans and reruns that tool's 4 runs.
    c.answer(
        "a",
        "Philosophers-PT-000002",
        "StateSpace",
        &SS.replace("TRANSITIONS 22", "TRANSITIONS 23"),
    );
    let mut replanned = false;
    let mut rerun = 0;
    while !replanned || rerun < 4 {
        let update = watch.next_within(60);
        replanned |= update["cause"] == "replan";
        if replanned {
            rerun += update["records"].as_u64().unwrap();
        }
    }
    assert_eq!(rerun, 4);
    drop(watch);
    let scores = c.mccbuild(&["scores", "--json"]);
    assert_eq!(
        json(&scores)["confidence"]["a"].as_f64().map(|x| x < 1.0),
        Some(true),
        "a now disagrees on TRANSITIONS"
    );
}
