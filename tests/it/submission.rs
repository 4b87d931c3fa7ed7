//! Real MCC submissions run unchanged: BK_TOOL from the manifest's `bk_tool`, the
//! edition's time limit (wall-clock as BenchKit, CPU time as SV-COMP), a writable BK_BIN_PATH
//! per run, the unprivileged user `mcc`, selective reruns. Everything through the real binary.
//! Tests that need root, cgroups and namespaces skip (or fail under CI=true) without them.

use std::fs;
use std::path::Path;

use crate::common::*;

fn executed(out: &std::process::Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "mccbuild failed: {}\n{}",
        stdout(out),
        stderr(out)
    );
    json(out)
}

/// Two variants of one submission share a folder and an entry dispatching on BK_TOOL, as real
/// MCC images do; `bk_tool` is part of the run key.
#[test]
fn bk_tool_is_the_manifests_and_dispatches_variants() {
    let mut c = TestContest::new();
    c.copy_demo_instance("Philosophers-PT-000002");
    c.model("Philosophers", "known", &["models/Philosophers-PT-000002"]);
    let dir = c.path().join("tools/shared");
    fs::create_dir_all(&dir).unwrap();
    write_exec(
        &dir.join("BenchKit_head.sh"),
        "#!/bin/bash\ncase \"$BK_TOOL\" in\n\
         fast) echo 'FORMULA ReachabilityDeadlock TRUE TECHNIQUES EXPLICIT' ;;\n\
         slow) echo 'FORMULA ReachabilityDeadlock FALSE TECHNIQUES EXPLICIT' ;;\n\
         *) echo \"Unrecognized BK_TOOL $BK_TOOL\" >&2 ;;\nesac\n",
    );
    let tool = |name: &str, bk: &str| {
        format!(
            "[[tool]]\nname = \"{name}\"\ndir = \"tools/shared\"\n{bk}examinations = [\"ReachabilityDeadlock\"]\n"
        )
    };
    c.tools.push(tool("v1", "bk_tool = \"fast\"\n"));
    c.tools.push(tool("v2", "bk_tool = \"slow\"\n"));
    c.tools.push(tool("plain", ""));
    c.write("time_s = 20");
    assert_eq!(executed(&c.mccbuild(&["run", "--json"]))["executed"], 3);
    let answer = |c: &TestContest, tool: &str| {
        c.record(tool, "Philosophers-PT-000002", "ReachabilityDeadlock")["answers"].clone()
    };
    assert_eq!(answer(&c, "v1")[0]["value"], "TRUE", "{}", answer(&c, "v1"));
    assert_eq!(
        answer(&c, "v2")[0]["value"],
        "FALSE",
        "{}",
        answer(&c, "v2")
    );
    let plain = c.record("plain", "Philosophers-PT-000002", "ReachabilityDeadlock");
    assert!(
        plain["stderr"]["text"]
            .as_str()
            .unwrap()
            .contains("Unrecognized BK_TOOL plain"),
        "{plain}"
    );
    // Another bk_tool for v2: its runs are redone, the others' are not.
    c.tools[1] = tool("v2", "bk_tool = \"fast\"\n");
    c.write("time_s = 20");
    let again = executed(&c.mccbuild(&["run", "--json"]));
    assert_eq!(
        (again["executed"].clone(), again["cached"].clone()),
        (1.into(), 2.into())
    );
    // The store keeps the old record beside the new one (another key): the new one says TRUE.
    let v2: Vec<String> = c
        .records()
        .into_iter()
        .filter(|r| r["tool"] == "v2")
        .map(|r| r["answers"][0]["value"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(v2.len(), 2);
    assert!(v2.contains(&"TRUE".to_string()), "{v2:?}");
}

/// A tool on 2 cores that burns both and budgets `budget_sixths`/6 of BK_TIME_CONFINEMENT by the
/// clock (5: 50 s of 60 s as a real submission budgets, at 10 s of 12 s), printing its answer at the end.
const CLOCK_BUDGET_TOOL: &str = r#"#!/bin/bash
budget_us=$((BK_TIME_CONFINEMENT * 1000000 * $(cat "$(dirname "$0")/budget_sixths") / 6))
start=${EPOCHREALTIME/./}
end=$((start + budget_us))
burn() { while (( ${EPOCHREALTIME/./} < end )); do :; done; }
burn & burn &
wait
echo "clock budget spent: $(( (${EPOCHREALTIME/./} - start) / 1000 )) ms" >&2
echo "FORMULA ReachabilityDeadlock TRUE TECHNIQUES EXPLICIT"
echo SAFE
"#;

/// The edition's time limit (E-5.1; `[limits] time`), through the binary: under MCC 2026 (the
/// wall clock, as BenchKit's `timeout`) the 2-core tool spends 10 s of clock, about 20 s of
/// CPU, and answers; under SV-COMP 2012 (CPU time) the same tool is killed when its tree has
/// used 12 s of CPU, about 6 s of clock. CPU time and memory are measured either way.
#[test]
fn the_time_limit_is_the_editions_wall_clock_for_the_mcc_cpu_for_svcomp() {
    if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        skip("the test needs 2 cores (a tool on 2 cores)");
        return;
    }
    let c = TestContest::new();
    // One MCC instance and one SV-COMP task, one contest each, the same tool on 2 cores.
    copy_dir(
        &Path::new(REPO).join("models/Deadlock-PT-1"),
        &c.path().join("mcc/models/Deadlock-PT-1"),
    );
    copy_dir(
        &Path::new(REPO).join("examples/svcomp-2012/tasks/Loops-count"),
        &c.path().join("svcomp/tasks/Loops-count"),
    );
    for (contest, rules, instances, exam) in [
        (
            "mcc",
            "mcc-2026.toml",
            "models/Deadlock-PT-1",
            "ReachabilityDeadlock",
        ),
        (
            "svcomp",
            "svcomp-2012.toml",
            "tasks/Loops-count",
            "ReachSafety",
        ),
    ] {
        let dir = c.path().join(contest);
        write_exec(
            &{
                fs::create_dir_all(dir.join("tools/clock")).unwrap();
                dir.join("tools/clock/BenchKit_head.sh")
            },
            CLOCK_BUDGET_TOOL,
        );
        // Under SV-COMP the tool budgets 3 x the limit, so that its 2 cores reach the CPU limit
        // even on a loaded machine (the kill must come from the CPU limit, not its budget).
        let sixths = if contest == "mcc" { "5" } else { "18" };
        fs::write(dir.join("tools/clock/budget_sixths"), sixths).unwrap();
        fs::write(
            dir.join("contest.toml"),
            format!(
                "[contest]\nname = \"{contest}\"\nrules = \"{REPO}/rules/{rules}\"\n\n\
                 [executor]\njobs = 1\n\n[limits]\ntime_s = 12\nmemory_mb = 1024\ncores = [1, 2, 4]\n\n\
                 [[model]]\nname = \"M\"\ninstances = [\"{instances}\"]\n\n\
                 [[tool]]\nname = \"clock\"\ndir = \"tools/clock\"\ncores = 2\nexaminations = [\"{exam}\"]\n"
            ),
        )
        .unwrap();
    }
    let record = |contest: &str| {
        let out = mccbuild_in(&c.path().join(contest), &["run", "--json"]);
        assert_eq!(executed(&out)["executed"], 1, "{}", stderr(&out));
        let runs = c.path().join(contest).join("cache/runs");
        let mut found = Vec::new();
        for shard in fs::read_dir(runs).unwrap().flatten() {
            for f in fs::read_dir(shard.path()).unwrap().flatten() {
                if f.path().extension().is_some_and(|e| e == "json") {
                    found.push(
                        serde_json::from_slice::<serde_json::Value>(&fs::read(f.path()).unwrap())
                            .unwrap(),
                    );
                }
            }
        }
        assert_eq!(found.len(), 1);
        found.remove(0)
    };

    let mcc = record("mcc");
    assert_eq!(mcc["termination"]["reason"], "exit", "{mcc}");
    assert_eq!(mcc["limits"]["time"], "wall", "{mcc}");
    assert_eq!(mcc["answers"][0]["value"], "TRUE", "{mcc}");
    let wall = mcc["wall_time_s"].as_f64().unwrap();
    let cpu = mcc["cpu_time_s"].as_f64().unwrap();
    assert!((10.0..12.0).contains(&wall), "wall {wall}");
    // Measured, not limited: on an idle machine about 20 s (both cores for 10 s), more than the
    // 12 s limit; other processes on the machine can take some of the cores.
    assert!(
        cpu > 1.0 && cpu <= 2.0 * wall + 0.5,
        "cpu {cpu}, wall {wall}"
    );
    eprintln!("MCC 2026: wall {wall:.2} s, CPU {cpu:.2} s, not killed");
    assert!(mcc["peak_memory_bytes"].as_u64().unwrap() > 0, "{mcc}");

    let sv = record("svcomp");
    assert_eq!(sv["termination"]["reason"], "cpu_limit", "{sv}");
    assert!(
        sv["limits"].get("time").is_none(),
        "CPU-limited: as before {sv}"
    );
    let wall = sv["wall_time_s"].as_f64().unwrap();
    let cpu = sv["cpu_time_s"].as_f64().unwrap();
    assert!((12.0..13.5).contains(&cpu), "cpu {cpu}");
    // About 6 s on an idle machine; before the tool's own budget (36 s) in any case.
    assert!(wall < 36.0, "wall {wall}");
    eprintln!("SV-COMP 2012: wall {wall:.2} s, CPU {cpu:.2} s, killed at the CPU limit");
    assert!(
        sv["answers"].as_array().is_none_or(|a| a.is_empty()),
        "{sv}"
    );
}

/// BK_BIN_PATH is writable in each run, as `/home/mcc/BenchKit/bin/` on the MCC's VM (TAPAAL's
/// script: `mkdir $BK_BIN_PATH/tmp`), and private to the run: the next run does not see what
/// the previous one wrote, and neither the setup's products nor the tool's folder change.
#[test]
fn bk_bin_path_is_writable_and_private_to_each_run() {
    let mut c = TestContest::new();
    c.copy_demo_instance("Philosophers-PT-000002");
    c.model("Philosophers", "known", &["models/Philosophers-PT-000002"]);
    let script = r#"#!/bin/bash
[ -e "${BK_BIN_PATH}tmp/left-by-a-run" ] && echo "SAW ANOTHER RUN'S FILE" >&2
mkdir -p "${BK_BIN_PATH}tmp" && echo "$BK_EXAMINATION" > "${BK_BIN_PATH}tmp/left-by-a-run" \
    || { echo "CANNOT WRITE BK_BIN_PATH" >&2; exit 1; }
[ -f "${BK_BIN_PATH}product" ] && echo "PRODUCT SEEN" >&2
echo "FORMULA $BK_EXAMINATION TRUE TECHNIQUES EXPLICIT"
"#;
    let exams = "examinations = [\"ReachabilityDeadlock\", \"OneSafe\", \"Liveness\"]";
    let built = c.script_tool(
        "built",
        script,
        &format!("{exams}\nsetup = \"echo built > \\\"$BK_BIN_PATH/product\\\"\""),
    );
    let plain = c.script_tool("plain", script, exams);
    c.write("time_s = 20");
    let out = c.mccbuild(&["run", "--json", "--jobs", "1"]);
    assert_eq!(executed(&out)["executed"], 6, "{}", stderr(&out));
    for tool in ["built", "plain"] {
        for exam in ["ReachabilityDeadlock", "OneSafe", "Liveness"] {
            let r = c.record(tool, "Philosophers-PT-000002", exam);
            let err = r["stderr"]["text"].as_str().unwrap();
            assert!(!err.contains("CANNOT WRITE"), "{tool} {exam}: {r}");
            assert!(!err.contains("SAW ANOTHER"), "{tool} {exam}: {r}");
            assert_eq!(err.contains("PRODUCT SEEN"), tool == "built", "{r}");
            assert_eq!(r["answers"][0]["value"], "TRUE", "{r}");
        }
    }
    // Nothing was written into the tool's folder or the setup's products.
    assert!(!built.join("tmp").exists() && !plain.join("tmp").exists());
    let products: Vec<_> = fs::read_dir(c.path().join("cache/tools"))
        .unwrap()
        .flatten()
        .map(|d| d.path().join("bin"))
        .filter(|b| b.is_dir())
        .collect();
    assert_eq!(products.len(), 1, "{products:?}");
    let names: Vec<String> = fs::read_dir(&products[0])
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["product"]);
}

/// BenchKit runs tools as the user `mcc`: so do runs by default (the user created if missing),
/// as root only where the manifest says `user = "root"` (in the key). As `mcc`, `tar x` of a
/// real MCC archive (files of uid 1001) works; root without capabilities cannot give the files
/// their owner ("Cannot change ownership").
#[test]
fn runs_execute_as_mcc_and_extract_an_mcc_archive_unless_the_manifest_says_root() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        skip("changing users needs root (mccbuild as root, as BenchKit's VM)");
        return;
    }
    let Some(data) = mcc_data() else { return };
    let mut c = TestContest::new();
    c.copy_demo_instance("Philosophers-PT-000002");
    c.model("Philosophers", "known", &["models/Philosophers-PT-000002"]);
    let script = r#"#!/bin/bash
echo "uid=$(id -u) user=$(id -un) home-writable=$([ -w "$HOME" ] && echo yes) cwd-writable=$([ -w . ] && echo yes)" >&2
if tar xzf "$(dirname "$0")/archive.tgz" 2>>"$BK_RESULT_DIR/tar.err"; then
    echo "FORMULA $BK_EXAMINATION TRUE TECHNIQUES EXPLICIT"
else
    cat "$BK_RESULT_DIR/tar.err" >&2
    echo CANNOT_COMPUTE
fi
"#;
    for (tool, toml) in [("default", ""), ("asroot", "user = \"root\"")] {
        let dir = c.script_tool(
            tool,
            script,
            &format!("examinations = [\"ReachabilityDeadlock\"]\n{toml}"),
        );
        fs::copy(
            data.join("INPUTS/PGCD-COL-D02N006.tgz"),
            dir.join("archive.tgz"),
        )
        .unwrap();
    }
    c.write("time_s = 60");
    let out = c.mccbuild(&["run", "--json"]);
    assert_eq!(executed(&out)["executed"], 2, "{}", stderr(&out));
    let seen = |tool: &str| {
        let r = c.record(tool, "Philosophers-PT-000002", "ReachabilityDeadlock");
        (
            r["stderr"]["text"].as_str().unwrap().to_string(),
            r["answers"].as_array().unwrap().len(),
        )
    };
    let (err, answers) = seen("default");
    assert!(
        err.contains("user=mcc home-writable=yes cwd-writable=yes") && !err.contains("uid=0 "),
        "{err}"
    );
    assert_eq!(answers, 1, "the archive is extracted: {err}");
    let (err, answers) = seen("asroot");
    assert!(err.contains("uid=0 user=root"), "{err}");
    assert!(err.contains("Cannot change ownership"), "{err}");
    assert_eq!(answers, 0);
}

/// A real submission under the local executor: the test submission of tests/submission-tool (a
/// bash entry dispatching on BK_TOOL, temporary files under $BK_BIN_PATH/tmp, GNU parallel
/// running two strategies, a clock budget from BK_TIME_CONFINEMENT, /usr/bin/time, ulimit -v, a
/// background heartbeat) answers all 13 examinations of Philosophers-PT-000002 with the values of
/// tests/golden/demo-models.csv, in both of its variants, as the user `mcc`. tests/it/qemu.rs and
/// tests/it/slurm.rs run the same folder, unchanged, under their executors.
#[test]
fn the_test_submission_answers_every_examination_right_locally() {
    let dir = tempfile::tempdir().unwrap();
    let exams = ALL_EXAMINATIONS;
    submission_contest(
        dir.path(),
        "[executor]\nkind = \"local\"\njobs = 2",
        60,
        &[
            ("submission", "portfolio"),
            ("submission-seq", "sequential"),
        ],
        &exams,
    );
    let out = mccbuild_in(dir.path(), &["run", "--json"]);
    assert_eq!(executed(&out)["executed"], 26, "{}", stderr(&out));
    let records = store_records(&dir.path().join("store"));
    assert_eq!(records.len(), 26);
    let mut values = 0;
    for r in &records {
        let bk_tool = if r["tool"] == "submission" {
            "portfolio"
        } else {
            "sequential"
        };
        values += assert_submission_run(r, bk_tool);
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            let err = r["stderr"]["text"].as_str().unwrap();
            assert!(err.contains("user mcc ("), "{err}");
        }
    }
    // Every golden value of the instance, twice.
    let golden: usize = exams
        .iter()
        .map(|e| golden_answers(SUBMISSION_INSTANCE, e).len())
        .sum();
    assert_eq!(values, 2 * golden);
    assert!(golden > 90, "{golden}");
}
