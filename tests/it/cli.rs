//! The `mccbuild` binary end to end, in temporary folders, with scripted tools.

use std::fs;

use crate::common::*;

const SS: &str = "STATE_SPACE STATES 9 TECHNIQUES EXPLICIT\nSTATE_SPACE TRANSITIONS 14 TECHNIQUES EXPLICIT\nSTATE_SPACE MAX_TOKEN_IN_PLACE 1 TECHNIQUES EXPLICIT\nSTATE_SPACE MAX_TOKEN_PER_MARKING 4 TECHNIQUES EXPLICIT\n";

/// Three scripted tools that agree on StateSpace for two instances; `a` also answers
/// ReachabilityDeadlock.
fn three_tools() -> TestContest {
    let mut c = TestContest::new();
    c.copy_demo_instance("Philosophers-PT-000002");
    c.copy_demo_instance("Philosophers-PT-000003");
    c.model("Philosophers", "known", &["models/Philosophers-PT-*"]);
    for tool in ["a", "b", "c"] {
        c.scripted_tool(
            tool,
            "examinations = [\"StateSpace\", \"ReachabilityDeadlock\"]",
        );
        for instance in ["Philosophers-PT-000002", "Philosophers-PT-000003"] {
            c.answer(tool, instance, "StateSpace", SS);
        }
    }
    c.answer(
        "a",
        "Philosophers-PT-000002",
        "ReachabilityDeadlock",
        "FORMULA ReachabilityDeadlock FALSE TECHNIQUES EXPLICIT\n",
    );
    c.write("time_s = 10\nmemory_mb = 512");
    c
}

#[test]
fn second_run_executes_nothing_and_prints_the_same_podiums() {
    let c = three_tools();
    let first = c.mccbuild(&["run"]);
    assert!(first.status.success(), "{}", stderr(&first));
    assert!(stdout(&first).contains("StateSpace"), "{}", stdout(&first));
    let second = c.mccbuild(&["run"]);
    assert!(second.status.success());
    assert_eq!(stdout(&first), stdout(&second));
    assert!(
        stderr(&second).contains("0 executed, 12 cached, 0 failed"),
        "{}",
        stderr(&second)
    );
    let json_run = c.mccbuild(&["run", "--json"]);
    assert_eq!(
        json(&json_run),
        serde_json::json!({"executed": 0, "cached": 12, "failed": 0})
    );
}

#[test]
fn plan_json_counts_runs_by_tool() {
    let c = three_tools();
    let plan = json(&c.mccbuild(&["plan", "--json"]));
    // 3 tools x 2 instances x 2 examinations.
    assert_eq!(plan["runs"], 12);
    assert_eq!(plan["cached"], 0);
    assert_eq!(plan["to_run"], 12);
    assert_eq!(
        plan["by_tool"]["a"],
        serde_json::json!({"runs": 4, "cached": 0, "to_run": 4})
    );
}

#[test]
fn changing_one_file_of_one_tool_reruns_exactly_that_tool() {
    let c = three_tools();
    assert!(c.mccbuild(&["run"]).status.success());
    fs::write(
        c.path().join("tools/b/README"),
        "a new file in b's folder\n",
    )
    .unwrap();
    let plan = json(&c.mccbuild(&["plan", "--json"]));
    assert_eq!(plan["to_run"], 4);
    assert_eq!(plan["by_tool"]["b"]["to_run"], 4);
    assert_eq!(plan["by_tool"]["a"]["to_run"], 0);
    assert_eq!(plan["by_tool"]["c"]["to_run"], 0);
    let run = json(&c.mccbuild(&["run", "--json"]));
    assert_eq!(
        run,
        serde_json::json!({"executed": 4, "cached": 8, "failed": 0})
    );
}

#[test]
fn changing_one_instance_reruns_exactly_its_runs() {
    let c = three_tools();
    assert!(c.mccbuild(&["run"]).status.success());
    let model = c.path().join("models/Philosophers-PT-000003/model.pnml");
    let text = fs::read_to_string(&model).unwrap();
    fs::write(&model, text.replacen("<pnml", "<!-- edited -->\n<pnml", 1)).unwrap();
    let plan = json(&c.mccbuild(&["plan", "--json"]));
    // The 3 tools' 2 examinations of that instance.
    assert_eq!(plan["to_run"], 6);
    for tool in ["a", "b", "c"] {
        assert_eq!(plan["by_tool"][tool]["to_run"], 2);
    }
}

#[test]
fn irrelevant_changes_do_not_rerun_anything() {
    let c = three_tools();
    assert!(c.mccbuild(&["run"]).status.success());
    // Touching files, reordering tools and changing a tool's kind or family change no key.
    let script = c.path().join("tools/a/BenchKit_head.sh");
    let f = fs::File::options().write(true).open(&script).unwrap();
    f.set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(100))
        .unwrap();
    let manifest = c.path().join("contest.toml");
    let text = fs::read_to_string(&manifest).unwrap();
    let (head, tools) = text.split_at(text.find("[[tool]]").unwrap());
    let mut blocks: Vec<&str> = tools
        .split("[[tool]]")
        .filter(|b| !b.trim().is_empty())
        .collect();
    blocks.reverse();
    let reordered = format!(
        "{head}{}",
        blocks
            .iter()
            .map(|b| format!("[[tool]]{b}"))
            .collect::<String>()
    );
    let reordered = reordered.replacen(
        "name = \"c\"\n",
        "name = \"c\"\nkind = \"reference\"\nfamily = \"other\"\n",
        1,
    );
    fs::write(&manifest, reordered).unwrap();
    let plan = json(&c.mccbuild(&["plan", "--json"]));
    assert_eq!(plan["to_run"], 0, "{plan}");
}

#[test]
fn scores_json_has_confidence_scores_podiums_and_values() {
    let c = three_tools();
    assert!(c.mccbuild(&["run"]).status.success());
    let scores = json(&c.mccbuild(&["scores", "--json"]));
    assert_eq!(scores["edition"], "MCC 2026");
    // 8 values, each agreed by 3 tools: everyone's Confidence is 1.
    for tool in ["a", "b", "c"] {
        assert_eq!(scores["confidence"][tool], 1.0);
    }
    // Two instances of one model (the largest): each weighs 2/2 = 1; 16 points per instance.
    assert_eq!(scores["scores"]["StateSpace"]["a"], 32.0);
    // ReachabilityDeadlock: only `a` answered, Confidence 1 >= 0.997: trusted; 16 points.
    assert_eq!(scores["scores"]["GlobalProperties"]["a"], 16.0);
    // b and c said DO_NOT_COMPETE there: they do not take part, they are not on that podium.
    assert_eq!(
        scores["podiums"]["GlobalProperties"],
        serde_json::json!(["a"])
    );
    assert_eq!(scores["podiums"]["StateSpace"].as_array().unwrap().len(), 3);
    assert_eq!(
        scores["standings"]["GlobalProperties"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    let values = scores["values"].as_array().unwrap();
    let states = values
        .iter()
        .find(|v| v["instance"] == "Philosophers-PT-000002" && v["id"] == "STATES")
        .unwrap();
    assert_eq!(states["trusted"], "9");
    assert_eq!(
        states["answers"],
        serde_json::json!({"a": "9", "b": "9", "c": "9"})
    );
    let rd = values
        .iter()
        .find(|v| v["instance"] == "Philosophers-PT-000003" && v["id"] == "ReachabilityDeadlock")
        .unwrap();
    assert_eq!(rd["trusted"], serde_json::Value::Null);
}

#[test]
fn a_corrupt_record_is_reported_and_rerun() {
    let c = three_tools();
    assert!(c.mccbuild(&["run"]).status.success());
    let record = c.record("b", "Philosophers-PT-000002", "StateSpace");
    let key = record["key"].as_str().unwrap().to_string();
    let path = c.loose_path(&key);
    // Damage it and remove the index, as a disk or a user might.
    fs::write(&path, b"{\"format\": 1, \"key\": \"tru").unwrap();
    fs::remove_file(c.path().join("cache/index.bin")).unwrap();
    let out = c.mccbuild(&["run", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("damaged run record") && stderr(&out).contains(&key),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        json(&out),
        serde_json::json!({"executed": 1, "cached": 11, "failed": 0})
    );
    // The rerun replaced it with a good record.
    assert_eq!(
        c.record("b", "Philosophers-PT-000002", "StateSpace")["answers"]
            .as_array()
            .unwrap()
            .len(),
        4
    );
}

#[test]
fn a_lost_index_is_rebuilt_from_the_records() {
    let c = three_tools();
    assert!(c.mccbuild(&["run"]).status.success());
    fs::write(c.path().join("cache/index.bin"), b"garbage").unwrap();
    let out = c.mccbuild(&["run", "--json"]);
    assert!(
        stderr(&out).contains("rebuilding it from the records"),
        "{}",
        stderr(&out)
    );
    assert_eq!(json(&out)["executed"], 0);
}

#[test]
fn check_reports_an_unknown_manifest_key_with_its_line() {
    let c = three_tools();
    let manifest = c.path().join("contest.toml");
    let text = fs::read_to_string(&manifest)
        .unwrap()
        .replacen("jobs = 2", "jobs = 2\njbos = 3", 1);
    fs::write(&manifest, &text).unwrap();
    let out = c.mccbuild(&["check"]);
    assert_eq!(out.status.code(), Some(2));
    let line = text.lines().position(|l| l.starts_with("jbos")).unwrap() + 1;
    let err = stderr(&out);
    assert!(err.contains(&format!("contest.toml:{line}:")), "{err}");
    assert!(err.contains("jbos"), "{err}");
}

#[test]
fn check_reports_every_problem_at_once() {
    let mut c = TestContest::new();
    c.copy_demo_instance("Philosophers-PT-000002");
    c.model(
        "Philosophers",
        "known",
        &["models/Philosophers-PT-000002", "models/Nope-PT-1"],
    );
    c.model("Other", "unknown-kind", &["models/*-COL-*"]);
    let dir = c.scripted_tool("a", "");
    fs::set_permissions(
        dir.join("BenchKit_head.sh"),
        std::os::unix::fs::PermissionsExt::from_mode(0o644),
    )
    .unwrap();
    c.scripted_tool("b", "examinations = [\"StateSpaec\"]\ncores = 3");
    c.write("time_s = 10");
    let out = c.mccbuild(&["check"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    for expected in [
        "models/Nope-PT-1 does not exist",
        "unknown kind `unknown-kind`",
        "matches no instance folder",
        "is not an executable file",
        "chmod +x",
        "unknown examination `StateSpaec`",
        "cores = 3",
        "6 problems found",
    ] {
        assert!(err.contains(expected), "missing `{expected}` in:\n{err}");
    }
    // The whole report, in its order, each problem with its place and its fix.
    output_settings(c.path()).bind(|| insta::assert_snapshot!("check_of_six_problems", err));
}

#[test]
fn a_model_that_is_not_xml_is_an_error_for_check_and_an_outcome_for_run() {
    let mut c = TestContest::new();
    let inst = c.copy_demo_instance("Philosophers-PT-000002");
    fs::write(inst.join("model.pnml"), "this is not XML at all\n").unwrap();
    c.model("Philosophers", "known", &["models/Philosophers-PT-000002"]);
    c.script_tool("reader", "#!/bin/sh\nhead -c 100 model.pnml | grep -q '<pnml' || { echo 'model.pnml is not PNML' >&2; echo CANNOT_COMPUTE; exit 1; }\n", "examinations = [\"StateSpace\"]");
    c.write("time_s = 10");
    let out = c.mccbuild(&["check"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("model.pnml is not")
            && stderr(&out).contains("Philosophers-PT-000002"),
        "{}",
        stderr(&out)
    );
    let out = c.mccbuild(&["run", "--json"]);
    assert!(
        stderr(&out).contains("warning: ") && stderr(&out).contains("model.pnml is not"),
        "{}",
        stderr(&out)
    );
    assert_eq!(json(&out)["executed"], 1);
    let record = c.record("reader", "Philosophers-PT-000002", "StateSpace");
    assert_eq!(record["verdict"], "cannot_compute");
    assert_eq!(
        record["termination"],
        serde_json::json!({"reason": "exit", "code": 1})
    );
    assert!(
        record["stderr"]["text"]
            .as_str()
            .unwrap()
            .contains("not PNML")
    );
}

#[test]
fn an_archive_escaping_its_folder_is_refused_and_nothing_is_written_outside() {
    let mut c = TestContest::new();
    fs::create_dir_all(c.path().join("inputs")).unwrap();
    // Build X-PT-1.tgz by hand with an entry `X-PT-1/../../evil`.
    let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::fast(),
    ));
    for (path, content) in [
        ("X-PT-1/model.pnml", b"<pnml/>".as_slice()),
        ("X-PT-1/../../evil", b"gotcha".as_slice()),
    ] {
        let mut header = tar::Header::new_gnu();
        header.as_gnu_mut().unwrap().name[..path.len()].copy_from_slice(path.as_bytes());
        header.set_size(content.len() as u64);
        header.set_mode(0o644);
        header.set_entry_type(tar::EntryType::Regular);
        header.set_cksum();
        builder.append(&header, content).unwrap();
    }
    fs::write(
        c.path().join("inputs/X-PT-1.tgz"),
        builder.into_inner().unwrap().finish().unwrap(),
    )
    .unwrap();
    c.model("X", "known", &["inputs/X-PT-1.tgz"]);
    c.scripted_tool("a", "");
    c.write("time_s = 10");
    let out = c.mccbuild(&["check"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("escapes the instance folder"),
        "{}",
        stderr(&out)
    );
    let out = c.mccbuild(&["run", "--json"]);
    assert!(
        stderr(&out).contains("left out of the contest"),
        "{}",
        stderr(&out)
    );
    assert_eq!(json(&out)["executed"], 0);
    assert!(!c.path().join("evil").exists() && !c.path().parent().unwrap().join("evil").exists());
}

#[test]
fn ten_megabytes_of_garbage_then_answers() {
    let mut c = TestContest::new();
    c.copy_demo_instance("Philosophers-PT-000002");
    c.model("Philosophers", "known", &["models/Philosophers-PT-000002"]);
    c.script_tool(
        "noisy",
        "#!/bin/sh\nhead -c 10000000 /dev/urandom\necho\necho 'STATE_SPACE STATES 9 TECHNIQUES EXPLICIT'\n",
        "examinations = [\"StateSpace\"]",
    );
    c.write("time_s = 20");
    let out = c.mccbuild(&["run", "--json"]);
    assert_eq!(json(&out)["executed"], 1, "{}", stderr(&out));
    let record = c.record("noisy", "Philosophers-PT-000002", "StateSpace");
    assert_eq!(record["verdict"], "answered");
    assert_eq!(record["answers"][0]["value"], "9");
    assert_eq!(record["stdout"]["truncated"], true);
    assert!(record["stdout"]["bytes"].as_u64().unwrap() > 10_000_000);
    assert!(record["stdout"]["text"].as_str().unwrap().len() < 200_000);
}

#[test]
fn a_tool_that_never_stops_is_killed_at_the_cpu_limit() {
    let mut c = TestContest::new();
    c.copy_demo_instance("Philosophers-PT-000002");
    c.model("Philosophers", "known", &["models/Philosophers-PT-000002"]);
    // A child burns the CPU while the main process waits: the limit is on the whole tree.
    c.script_tool(
        "loop",
        "#!/bin/sh\necho 'STATE_SPACE STATES 9'\nsh -c 'while :; do :; done' &\nwait\n",
        "examinations = [\"StateSpace\"]",
    );
    // The CPU time is limited (the MCC editions limit the wall clock, as BenchKit does).
    c.write("time_s = 1\ntime = \"cpu\"");
    let out = c.mccbuild(&["run", "--json"]);
    assert_eq!(json(&out)["executed"], 1, "{}", stderr(&out));
    let record = c.record("loop", "Philosophers-PT-000002", "StateSpace");
    assert_eq!(record["termination"]["reason"], "cpu_limit");
    let cpu = record["cpu_time_s"].as_f64().unwrap();
    assert!((1.0..1.5).contains(&cpu), "cpu {cpu}");
    // E-5.1: what was printed before the limit still counts.
    assert_eq!(record["answers"][0]["value"], "9");
}

#[test]
fn verdict_file_is_hidden_where_rule_m9_says() {
    let mut c = TestContest::new();
    c.copy_demo_instance("Philosophers-PT-000002");
    // A surprise model with a verdict file (the demo's surprise model has none: add one).
    let surprise = c.copy_demo_instance("ProdCons-PT-2");
    fs::copy(
        surprise
            .parent()
            .unwrap()
            .join("Philosophers-PT-000002/GenericPropertiesVerdict.xml"),
        surprise.join("GenericPropertiesVerdict.xml"),
    )
    .unwrap();
    c.model("Philosophers", "known", &["models/Philosophers-PT-000002"]);
    c.model("ProdCons", "surprise", &["models/ProdCons-PT-2"]);
    c.script_tool("looker", "#!/bin/sh\nif [ -e GenericPropertiesVerdict.xml ]; then echo 'SEES VERDICT' >&2; else echo 'NO VERDICT' >&2; fi\necho DO_NOT_COMPETE\n", "examinations = [\"StateSpace\", \"UpperBounds\", \"ReachabilityDeadlock\", \"ReachabilityCardinality\"]");
    c.write("time_s = 10");
    assert!(c.mccbuild(&["run"]).status.success());
    let sees = |instance: &str, exam: &str| {
        c.record("looker", instance, exam)["stderr"]["text"]
            .as_str()
            .unwrap()
            .contains("SEES VERDICT")
    };
    assert!(sees("Philosophers-PT-000002", "StateSpace"));
    assert!(sees("Philosophers-PT-000002", "ReachabilityCardinality"));
    assert!(!sees("Philosophers-PT-000002", "UpperBounds"));
    assert!(!sees("Philosophers-PT-000002", "ReachabilityDeadlock"));
    for exam in [
        "StateSpace",
        "UpperBounds",
        "ReachabilityDeadlock",
        "ReachabilityCardinality",
    ] {
        assert!(!sees("ProdCons-PT-2", exam), "surprise model, {exam}");
    }
}

#[test]
fn benchkit_environment_is_set() {
    let mut c = TestContest::new();
    c.copy_demo_instance("Philosophers-PT-000002");
    c.model("Philosophers", "known", &["models/Philosophers-PT-000002"]);
    c.script_tool(
        "env",
        "#!/bin/sh\nenv | grep '^BK_' | sort >&2\npwd >&2\n[ -w \"$BK_RESULT_DIR\" ] && echo 'RESULT DIR WRITABLE' >&2\necho DO_NOT_COMPETE\n",
        "examinations = [\"UpperBounds\"]",
    );
    c.write("time_s = 123\nmemory_mb = 456");
    assert!(c.mccbuild(&["run"]).status.success());
    let err = c.record("env", "Philosophers-PT-000002", "UpperBounds")["stderr"]["text"]
        .as_str()
        .unwrap()
        .to_string();
    for expected in [
        "BK_EXAMINATION=UpperBounds",
        "BK_INPUT=Philosophers-PT-000002",
        "BK_TOOL=env",
        "BK_TIME_CONFINEMENT=123",
        "BK_MEMORY_CONFINEMENT=456",
        "BK_BIN_PATH=",
        "BK_LOG_FILE=",
        "BK_RESULT_DIR=",
        "/Philosophers-PT-000002\n",
        "RESULT DIR WRITABLE",
    ] {
        assert!(err.contains(expected), "missing {expected} in {err}");
    }
}

#[test]
fn a_failing_setup_fails_that_tools_runs_without_recording_them() {
    let c = {
        let mut c = TestContest::new();
        c.copy_demo_instance("Philosophers-PT-000002");
        c.model("Philosophers", "known", &["models/Philosophers-PT-000002"]);
        c.scripted_tool("ok", "examinations = [\"StateSpace\"]");
        c.scripted_tool(
            "broken",
            "examinations = [\"StateSpace\"]\nsetup = \"echo building; exit 3\"",
        );
        c.answer("ok", "Philosophers-PT-000002", "StateSpace", SS);
        c.write("time_s = 10");
        c
    };
    let out = c.mccbuild(&["run", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        json(&out),
        serde_json::json!({"executed": 1, "cached": 0, "failed": 1})
    );
    assert!(
        stderr(&out).contains("the setup of tool `broken` failed")
            && stderr(&out).contains("| building"),
        "{}",
        stderr(&out)
    );
    // Not recorded: next time it is tried again.
    assert_eq!(
        json(&c.mccbuild(&["plan", "--json"]))["by_tool"]["broken"]["to_run"],
        1
    );
}

#[test]
fn setup_runs_once_per_tool_identity_and_products_live_in_the_store() {
    let mut c = TestContest::new();
    c.copy_demo_instance("Philosophers-PT-000002");
    c.model("Philosophers", "known", &["models/Philosophers-PT-000002"]);
    c.script_tool(
        "built",
        "#!/bin/sh\nexec \"$BK_BIN_PATH/answer.sh\"\n",
        "examinations = [\"StateSpace\"]\nsetup = \"printf '#!/bin/sh\\\\necho STATE_SPACE STATES 9\\\\n' > \\\"$BK_BIN_PATH/answer.sh\\\" && chmod +x \\\"$BK_BIN_PATH/answer.sh\\\" && echo x >> \\\"$MCC_TOOL_DIR/../../setups\\\"\"",
    );
    c.write("time_s = 10");
    let out = c.mccbuild(&["run", "--json"]);
    assert_eq!(json(&out)["executed"], 1, "{}", stderr(&out));
    assert_eq!(
        c.record("built", "Philosophers-PT-000002", "StateSpace")["answers"][0]["value"],
        "9"
    );
    assert!(!c.path().join("tools/built/answer.sh").exists());
    // Another examination of the same tool: no new setup.
    let manifest = c.path().join("contest.toml");
    let text = fs::read_to_string(&manifest).unwrap().replace(
        "examinations = [\"StateSpace\"]",
        "examinations = [\"StateSpace\", \"OneSafe\"]",
    );
    fs::write(&manifest, text).unwrap();
    let out = c.mccbuild(&["run", "--json"]);
    assert_eq!(json(&out)["executed"], 1, "{}", stderr(&out));
    // Each setup adds a line to `setups` in the contest's folder (outside the tool's folder,
    // whose files are the tool's identity).
    assert_eq!(fs::read_to_string(c.path().join("setups")).unwrap(), "x\n");
    let products: Vec<_> = glob::glob(&format!("{}/cache/tools/*/bin", c.path().display()))
        .unwrap()
        .flatten()
        .collect();
    assert_eq!(products.len(), 1, "the products live in the store");
}

#[test]
fn two_processes_running_the_same_key_at_once_keep_their_measures_apart() {
    // Same tool, instance and examination in two contest folders: the same run key, executed by
    // two mccbuild processes at the same time (regression: their cgroups had the same name).
    let make = || {
        let mut c = TestContest::new();
        c.copy_demo_instance("Philosophers-PT-000002");
        c.model("Philosophers", "known", &["models/Philosophers-PT-000002"]);
        c.script_tool("burn", "#!/bin/sh\ni=0; while [ $i -lt 300000 ]; do i=$((i+1)); done\necho 'STATE_SPACE STATES 9'\n", "examinations = [\"StateSpace\"]");
        c.write("time_s = 20");
        c
    };
    let (a, b) = (make(), make());
    let spawn = |c: &TestContest| {
        std::process::Command::new(env!("CARGO_BIN_EXE_mccbuild"))
            .args(["run", "--json"])
            .current_dir(c.path())
            .output()
            .unwrap()
    };
    let (ra, rb) = std::thread::scope(|s| {
        let ha = s.spawn(|| spawn(&a));
        let hb = s.spawn(|| spawn(&b));
        (ha.join().unwrap(), hb.join().unwrap())
    });
    assert_eq!(json(&ra)["executed"], 1, "{}", stderr(&ra));
    assert_eq!(json(&rb)["executed"], 1, "{}", stderr(&rb));
    let (ka, kb) = (
        a.record("burn", "Philosophers-PT-000002", "StateSpace"),
        b.record("burn", "Philosophers-PT-000002", "StateSpace"),
    );
    assert_eq!(ka["key"], kb["key"]);
    let (ca, cb) = (
        ka["cpu_time_s"].as_f64().unwrap(),
        kb["cpu_time_s"].as_f64().unwrap(),
    );
    // Each run measured its own tree: the same work, within a factor of 2 (not 0, not double).
    assert!(
        ca > 0.05 && cb > 0.05 && ca / cb < 2.0 && cb / ca < 2.0,
        "{ca} vs {cb}"
    );
}

#[test]
fn a_store_of_another_format_is_exit_code_3() {
    let c = three_tools();
    std::fs::create_dir_all(c.path().join("cache")).unwrap();
    std::fs::write(c.path().join("cache/STORE"), "mccbuild store 99\n").unwrap();
    let out = c.mccbuild(&["plan"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(stderr(&out).contains("another format"), "{}", stderr(&out));
}

/// A verification task (SV-COMP edition): a folder with program.c and expected_verdict.
fn svcomp_task(c: &TestContest, name: &str, verdict: &str) {
    let dir = c.path().join("tasks").join(name);
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("program.c"), "int main(void) { return 0; }\n").unwrap();
    fs::write(dir.join("expected_verdict"), verdict).unwrap();
}

#[test]
fn the_expected_answer_of_a_ground_truth_contest_is_hidden_and_not_in_the_key() {
    let mut c = TestContest::new();
    svcomp_task(&c, "t1", "SAFE\n");
    c.model("Tasks", "known", &["tasks/t1"]);
    // A cheater prints the expected verdict if it can see it.
    c.script_tool(
        "cheater",
        "#!/bin/sh\nif [ -e expected_verdict ]; then cat expected_verdict; else echo UNKNOWN; fi\n",
        "",
    );
    c.write("time_s = 10");
    let manifest = c.path().join("contest.toml");
    let text = fs::read_to_string(&manifest)
        .unwrap()
        .replace("rules/mcc-2026.toml", "rules/svcomp-2012.toml");
    fs::write(&manifest, text).unwrap();
    let out = c.mccbuild(&["run", "--json"]);
    assert_eq!(json(&out)["executed"], 1, "{}", stderr(&out));
    assert_eq!(
        c.record("cheater", "t1", "ReachSafety")["verdict"],
        "cannot_compute"
    );
    // Correcting the expected verdict changes the scores, not the runs.
    fs::write(c.path().join("tasks/t1/expected_verdict"), "UNSAFE\n").unwrap();
    assert_eq!(json(&c.mccbuild(&["plan", "--json"]))["to_run"], 0);
    let scores = json(&c.mccbuild(&["scores", "--json"]));
    assert_eq!(scores["values"][0]["trusted"], "FALSE");
    assert_eq!(scores["values"][0]["case"], "ground-truth");
    assert_eq!(scores["confidence"], serde_json::json!({}));
}

#[test]
fn check_validates_rules_files_with_the_line_of_each_problem() {
    let all: Vec<String> = ["mcc-2026", "mcc-2023", "mcc-2015", "svcomp-2012"]
        .iter()
        .map(|e| format!("{REPO}/rules/{e}.toml"))
        .collect();
    let mut args = vec!["check"];
    for f in &all {
        args.push("--rules");
        args.push(f);
    }
    let out = mccbuild_in(std::path::Path::new(REPO), &args);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out)
            .lines()
            .filter(|l| l.starts_with("ok: "))
            .count(),
        4
    );
    // A broken edition: a typo in a key and an unknown category.
    let dir = tempfile::tempdir().unwrap();
    let text = fs::read_to_string(format!("{REPO}/rules/mcc-2026.toml")).unwrap();
    let broken = text.replacen("penalty_factor = 2", "penalty_factr = 2", 1);
    let path = dir.path().join("broken.toml");
    fs::write(&path, &broken).unwrap();
    let out = mccbuild_in(dir.path(), &["check", "--rules", "broken.toml"]);
    assert_eq!(out.status.code(), Some(2));
    let line = broken
        .lines()
        .position(|l| l.starts_with("penalty_factr"))
        .unwrap()
        + 1;
    assert!(
        stderr(&out).contains(&format!("broken.toml:{line}:"))
            && stderr(&out).contains("penalty_factr"),
        "{}",
        stderr(&out)
    );
    let unknown = text.replacen("category = \"CTL\"", "category = \"CTLL\"", 1);
    fs::write(&path, &unknown).unwrap();
    let out = mccbuild_in(dir.path(), &["check", "--rules", "broken.toml"]);
    let line = unknown
        .lines()
        .position(|l| l.contains("\"CTLL\""))
        .unwrap()
        + 1;
    assert!(
        stderr(&out).contains(&format!("broken.toml:{line}:"))
            && stderr(&out).contains("unknown category `CTLL`"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn podium_tables_respect_no_color_and_narrow_terminals() {
    let mut c = three_tools();
    c.scripted_tool(
        "a-tool-with-a-rather-long-name",
        "examinations = [\"StateSpace\"]",
    );
    for instance in ["Philosophers-PT-000002", "Philosophers-PT-000003"] {
        c.answer("a-tool-with-a-rather-long-name", instance, "StateSpace", SS);
    }
    c.write("time_s = 10\nmemory_mb = 512");
    assert!(c.mccbuild(&["run"]).status.success());
    let scores = |env: &[(&str, &str)]| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_mccbuild"));
        cmd.arg("scores")
            .current_dir(c.path())
            .env_remove("NO_COLOR")
            .env_remove("COLUMNS")
            .env_remove("CLICOLOR_FORCE");
        for (k, v) in env {
            cmd.env(k, v);
        }
        stdout(&cmd.output().unwrap())
    };
    // Not a terminal: plain, full names.
    let plain = scores(&[]);
    assert!(
        !plain.contains('\x1b') && plain.contains("a-tool-with-a-rather-long-name"),
        "{plain}"
    );
    // Colour when forced, none when NO_COLOR is set as well.
    assert!(scores(&[("CLICOLOR_FORCE", "1")]).contains("\x1b[1;33mgold"));
    assert!(!scores(&[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")]).contains('\x1b'));
    // 32 columns: every line fits, the long name is shortened, the scores are all there.
    let narrow = scores(&[("COLUMNS", "32")]);
    for line in narrow.lines() {
        assert!(
            line.chars().count() <= 32,
            "{line:?} is wider than 32 columns:\n{narrow}"
        );
    }
    assert!(
        narrow.contains("a-tool-w") && narrow.contains('~'),
        "{narrow}"
    );
    assert_eq!(
        narrow.matches("gold").count(),
        plain.matches("gold").count()
    );
}
