//! What a person sees: every option described in `--help` and in docs/cli.md, checks
//! that come before `run` fails, progress that tells the truth.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;
use std::time::Duration;

use crate::common::*;
use clap::CommandFactory;

/// The non-hidden long options of a clap command, without help and version.
fn long_options(cmd: &clap::Command) -> Vec<(String, bool)> {
    cmd.get_arguments()
        .filter(|a| !a.is_hide_set())
        .filter_map(|a| {
            let long = a.get_long()?;
            (long != "help" && long != "version")
                .then(|| (long.to_string(), a.get_help().is_some()))
        })
        .collect()
}

/// docs/cli.md's sections: `## mccbuild <command> <synopsis>` -> (command, the options of the
/// synopsis line).
fn documented_commands() -> Vec<(String, BTreeSet<String>)> {
    let text = fs::read_to_string(format!("{REPO}/docs/cli.md")).unwrap();
    text.lines()
        .filter_map(|l| l.strip_prefix("## mccbuild "))
        .map(|l| {
            let name = l.split_whitespace().next().unwrap_or("").to_string();
            let options = l
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                .filter_map(|w| w.strip_prefix("--"))
                .filter(|w| !w.is_empty())
                .map(str::to_string)
                .collect();
            (name, options)
        })
        .collect()
}

#[test]
fn every_option_and_command_has_help_and_a_section_in_docs_cli_md() {
    let cli = mccbuild::cli::Cli::command();
    let documented = documented_commands();
    let mut missing = Vec::new();
    for sub in cli.get_subcommands() {
        let name = sub.get_name();
        if sub.get_about().is_none() && !sub.is_hide_set() {
            missing.push(format!("`{name}` has no description in --help"));
        }
        for (long, has_help) in long_options(sub) {
            if !has_help {
                missing.push(format!("`{name} --{long}` has no description in --help"));
            }
        }
        match documented.iter().find(|(d, _)| d == name) {
            None => missing.push(format!(
                "docs/cli.md has no section `## mccbuild {name} ...`"
            )),
            Some((_, options)) => {
                let real: BTreeSet<String> = long_options(sub)
                    .into_iter()
                    .map(|(l, _)| l)
                    .filter(|l| l != "manifest")
                    .collect();
                for gone in options.difference(&real) {
                    missing.push(format!(
                        "docs/cli.md documents `{name} --{gone}`, which does not exist"
                    ));
                }
                for undocumented in real.difference(options) {
                    missing.push(format!(
                        "docs/cli.md's `## mccbuild {name}` line lacks `--{undocumented}`"
                    ));
                }
            }
        }
        // The binary's own --help shows each option with (the start of) its description.
        let help = stdout(&mccbuild_in(std::path::Path::new(REPO), &[name, "--help"]));
        for arg in sub
            .get_arguments()
            .filter(|a| !a.is_hide_set() && a.get_long().is_some())
        {
            let Some(text) = arg.get_help() else { continue };
            let start: Vec<String> = text
                .to_string()
                .split_whitespace()
                .take(3)
                .map(str::to_string)
                .collect();
            if !help.contains(&start.join(" ")) {
                missing.push(format!(
                    "`mccbuild {name} --help` does not describe --{}",
                    arg.get_long().unwrap_or_default()
                ));
            }
        }
    }
    for (name, _) in &documented {
        if cli.find_subcommand(name).is_none() {
            missing.push(format!(
                "docs/cli.md documents `mccbuild {name}`, which does not exist"
            ));
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

#[test]
fn the_pages_the_code_points_to_exist() {
    for page in [
        "docs/import.md",
        "docs/cli.md",
        "docs/manifest.md",
        "docs/cache.md",
        "docs/execution.md",
    ] {
        assert!(std::path::Path::new(REPO).join(page).exists(), "{page}");
    }
    let manifest = fs::read_to_string(format!("{REPO}/docs/manifest.md")).unwrap();
    assert!(
        manifest.contains("# results = "),
        "docs/manifest.md documents `results`"
    );
}

/// One instance, one scripted tool `a` (with `extra` in its [[tool]]).
fn one_tool(extra: &str, limits: &str) -> TestContest {
    let mut c = TestContest::new();
    c.copy_demo_instance("Philosophers-PT-000002");
    c.model("Philosophers", "known", &["models/Philosophers-PT-000002"]);
    c.scripted_tool("a", extra);
    c.write(limits);
    c
}

/// mccbuild with this process's affinity narrowed to one core (`taskset -c 0`): the machine
/// gives mccbuild 1 core whatever it has.
fn on_one_core(c: &TestContest, args: &[&str]) -> std::process::Output {
    std::process::Command::new("taskset")
        .args(["-c", "0", env!("CARGO_BIN_EXE_mccbuild")])
        .args(args)
        .current_dir(c.path())
        .env_remove("MCCBUILD_SANDBOX")
        .output()
        .expect("taskset runs mccbuild")
}

#[test]
fn check_refuses_a_tool_needing_more_cores_than_the_machine_gives() {
    let c = one_tool(
        "cores = 4\nexaminations = [\"StateSpace\"]",
        "time_s = 10\nmemory_mb = 512",
    );
    let check = on_one_core(&c, &["check"]);
    assert_eq!(check.status.code(), Some(2), "{}", stderr(&check));
    let err = stderr(&check);
    assert!(
        err.contains("contest.toml:")
            && err.contains("tool `a`: cores = 4 but this machine gives mccbuild 1"),
        "{err}"
    );
    // The line of `cores = 4`.
    let text = fs::read_to_string(c.path().join("contest.toml")).unwrap();
    let line = text
        .lines()
        .position(|l| l.starts_with("cores = 4"))
        .unwrap()
        + 1;
    assert!(err.contains(&format!("contest.toml:{line}:1:")), "{err}");
    // `run` says so before its runs fail.
    let run = on_one_core(&c, &["run", "--json"]);
    assert!(
        stderr(&run).contains("warning:") && stderr(&run).contains("cores = 4"),
        "{}",
        stderr(&run)
    );
    assert_eq!(run.status.code(), Some(1));
}

#[test]
fn check_refuses_a_memory_limit_no_tool_can_start_in() {
    let c = one_tool("", "time_s = 10\nmemory_mb = 1");
    let check = c.mccbuild(&["check"]);
    assert_eq!(check.status.code(), Some(2), "{}", stderr(&check));
    assert!(
        stderr(&check).contains("memory_mb = 1: no tool can start"),
        "{}",
        stderr(&check)
    );
    assert_eq!(c.mccbuild(&["run"]).status.code(), Some(2));
}

#[test]
fn an_empty_examination_list_is_a_warning_of_check_and_run() {
    let c = one_tool("examinations = []", "time_s = 10\nmemory_mb = 512");
    let check = c.mccbuild(&["check"]);
    assert!(check.status.success(), "{}", stderr(&check));
    assert!(
        stderr(&check).contains("warning: tool `a` enters no examination (`examinations = []`"),
        "{}",
        stderr(&check)
    );
    assert!(
        stdout(&check).contains(": 1 model, 1 instance, 1 tool, 0 runs"),
        "{}",
        stdout(&check)
    );
    let plan = c.mccbuild(&["plan", "--json"]);
    assert!(
        stderr(&plan).contains("enters no examination"),
        "{}",
        stderr(&plan)
    );
}

#[test]
fn jobs_0_on_the_command_line_is_refused_as_in_the_manifest() {
    let c = one_tool("", "time_s = 10\nmemory_mb = 512");
    let run = c.mccbuild(&["run", "--jobs", "0"]);
    assert_eq!(run.status.code(), Some(2));
    assert!(
        stderr(&run).contains("must be at least 1"),
        "{}",
        stderr(&run)
    );
    assert!(c.records().is_empty());
    let manifest = c.path().join("contest.toml");
    let text = fs::read_to_string(&manifest)
        .unwrap()
        .replace("jobs = 2", "jobs = 0");
    fs::write(&manifest, text).unwrap();
    let check = c.mccbuild(&["check"]);
    assert_eq!(check.status.code(), Some(2));
    assert!(
        stderr(&check).contains("jobs must be at least 1"),
        "{}",
        stderr(&check)
    );
}

#[test]
fn explain_names_an_unknown_instance() {
    let c = one_tool("", "time_s = 10\nmemory_mb = 512");
    let out = c.mccbuild(&[
        "explain",
        "--instance",
        "Nope",
        "--examination",
        "StateSpace",
        "--id",
        "STATES",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("no instance `Nope`"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_missing_index_is_rebuilt_with_a_warning() {
    let c = one_tool(
        "examinations = [\"StateSpace\"]",
        "time_s = 10\nmemory_mb = 512",
    );
    c.answer(
        "a",
        "Philosophers-PT-000002",
        "StateSpace",
        "STATE_SPACE STATES 9 TECHNIQUES EXPLICIT\n",
    );
    assert!(c.mccbuild(&["run"]).status.success());
    let first = c.mccbuild(&["plan", "--json"]);
    assert!(!stderr(&first).contains("index"), "{}", stderr(&first));
    fs::remove_file(c.path().join("cache/index.bin")).unwrap();
    let out = c.mccbuild(&["plan", "--json"]);
    assert!(
        stderr(&out).contains("index.bin is missing: rebuilt from the 1 record of the store"),
        "{}",
        stderr(&out)
    );
    assert_eq!(json(&out)["cached"], 1);
}

/// mccbuild in `c` with extra environment, under `taskset -c cores`.
fn mccbuild_with(
    c: &TestContest,
    cores: &str,
    env: &[(&str, &str)],
    args: &[&str],
) -> std::process::Command {
    let mut cmd = std::process::Command::new("taskset");
    cmd.args(["-c", cores, env!("CARGO_BIN_EXE_mccbuild")])
        .args(args)
        .current_dir(c.path())
        .env_remove("MCCBUILD_SANDBOX");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

fn json_lines(text: &str) -> Vec<serde_json::Value> {
    text.lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

const SLOW: &str = "#!/bin/sh\nsleep 1\necho STATE_SPACE STATES 9 TECHNIQUES EXPLICIT\n";

#[test]
fn the_running_count_comes_back_after_infrastructure_failures() {
    // `a` is slow; `b` needs 4 cores on a machine that gives 2: each of its runs is an
    // infrastructure failure, reported while runs of `a` are running.
    let mut c = TestContest::new();
    for i in ["Philosophers-PT-000002", "Philosophers-PT-000003"] {
        c.copy_demo_instance(i);
    }
    c.model("Philosophers", "known", &["models/Philosophers-PT-*"]);
    c.script_tool("a", SLOW, "examinations = [\"StateSpace\"]");
    c.script_tool("b", SLOW, "cores = 4\nexaminations = [\"StateSpace\"]");
    c.write("time_s = 10\nmemory_mb = 512");
    // Its own core reservations (docs/execution.md): the other tests of this file run mccbuild
    // at the same time, and would make this one's runs wait for their cores.
    let core_locks = tempfile::tempdir().unwrap();
    let out = mccbuild_with(
        &c,
        "0,1",
        &[("MCCBUILD_CORE_LOCKS", core_locks.path().to_str().unwrap())],
        &["run", "--jobs", "2", "--progress", "json", "--json"],
    )
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let events = json_lines(&stderr(&out));
    let mut running = std::collections::BTreeSet::new();
    let (mut failures, mut most) = (0, 0);
    for e in &events {
        let run = e["run"].as_str().unwrap_or("").to_string();
        match e["event"].as_str().unwrap() {
            "run_started" => {
                running.insert(run);
            }
            "run_finished" => {
                running.remove(&run);
                if e["outcome"]
                    .as_str()
                    .unwrap()
                    .contains("infrastructure failure")
                {
                    failures += 1;
                }
            }
            _ => {}
        }
        most = most.max(running.len());
        assert_eq!(e["running"], running.len(), "at {e}\n{}", stderr(&out));
    }
    assert_eq!(failures, 2, "{}", stderr(&out));
    assert_eq!(most, 2, "{}", stderr(&out));
    let last = events.last().unwrap();
    assert_eq!(
        (
            last["event"].as_str(),
            last["done"].as_u64(),
            last["running"].as_u64(),
            last["failed"].as_u64()
        ),
        (Some("finished"), Some(4), Some(0), Some(2))
    );
    assert_eq!(
        json(&out),
        serde_json::json!({"executed": 2, "cached": 0, "failed": 2})
    );
}

#[test]
fn without_a_terminal_progress_is_plain_periodic_lines_with_the_right_plurals() {
    let mut c = TestContest::new();
    c.copy_demo_instance("Philosophers-PT-000002");
    c.model("Philosophers", "known", &["models/Philosophers-PT-000002"]);
    c.script_tool(
        "t",
        SLOW,
        "examinations = [\"StateSpace\"]\nsetup = \"echo compiling; sleep 1; echo linked the binary; sleep 0.5\"",
    );
    c.write("time_s = 10\nmemory_mb = 512");
    let out = mccbuild_with(
        &c,
        "0,1",
        &[("MCCBUILD_PROGRESS_EVERY_MS", "300")],
        &["run"],
    )
    .output()
    .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    // Setup: its log, its elapsed time and the last line of its log, then done.
    assert!(
        err.contains("setting up tool t (once per version of the tool; log: "),
        "{err}"
    );
    assert!(
        err.contains("setting up tool t: 1s · linked the binary")
            || err.contains("setting up tool t: 0s · compiling"),
        "{err}"
    );
    assert!(err.contains("set up tool t in "), "{err}");
    // Runs: the count with its noun, periodic lines while the run runs, a last line.
    assert!(err.contains("executing 1 run\n"), "{err}");
    assert!(
        err.contains("[0/1 run] 1 running · 0 queued · 0 failed · ETA estimating"),
        "{err}"
    );
    assert!(
        err.contains("[1/1 run] 0 running · 0 queued · 0 failed · ETA 0s"),
        "{err}"
    );
    assert!(
        !err.contains(" 1 runs") && !err.contains(" 1 answers"),
        "{err}"
    );
}

#[test]
fn a_failed_setup_says_so_with_the_end_of_its_log() {
    let mut c = TestContest::new();
    c.copy_demo_instance("Philosophers-PT-000002");
    c.model("Philosophers", "known", &["models/Philosophers-PT-000002"]);
    c.script_tool(
        "t",
        SLOW,
        "examinations = [\"StateSpace\"]\nsetup = \"echo cc: no such compiler; exit 3\"",
    );
    c.write("time_s = 10\nmemory_mb = 512");
    let out = c.mccbuild(&["run", "--progress", "json"]);
    assert_eq!(out.status.code(), Some(1));
    let events = json_lines(&stderr(&out));
    let done = events
        .iter()
        .find(|e| e["event"] == "setup_finished")
        .expect("setup_finished");
    assert_eq!(
        (done["tool"].as_str(), done["ok"].as_bool()),
        (Some("t"), Some(false)),
        "{done}"
    );
    let plain = c.mccbuild(&["run"]);
    assert!(
        stderr(&plain).contains("setup of tool t failed after 0s: cc: no such compiler (log: "),
        "{}",
        stderr(&plain)
    );
    assert!(
        stderr(&plain).contains("1 run could not be carried out"),
        "{}",
        stderr(&plain)
    );
}

#[test]
fn the_eta_comes_from_the_runs_of_the_same_tool_and_examination() {
    let mut c = TestContest::new();
    for i in ["Philosophers-PT-000002", "Philosophers-PT-000003"] {
        c.copy_demo_instance(i);
    }
    c.model("Philosophers", "known", &["models/Philosophers-PT-*"]);
    c.script_tool("t", SLOW, "examinations = [\"StateSpace\"]");
    c.write("time_s = 10\nmemory_mb = 512");
    let first = c.mccbuild(&["run", "--jobs", "1", "--progress", "json"]);
    let events = json_lines(&stderr(&first));
    let started = events.iter().find(|e| e["event"] == "started").unwrap();
    assert!(started.get("eta_s").is_none(), "no history: {started}");
    let after_one = events
        .iter()
        .find(|e| e["event"] == "run_finished")
        .unwrap();
    let eta = after_one["eta_s"].as_f64().unwrap();
    assert!(
        (0.8..3.0).contains(&eta),
        "one more run of about 1 s: {after_one}"
    );
    let range = after_one["eta_range_s"].as_array().unwrap();
    assert!(
        range[0].as_f64().unwrap() <= eta && eta <= range[1].as_f64().unwrap(),
        "{after_one}"
    );
    // One record lost: the other run of the tool and examination in the store is its history.
    let runs = c.path().join("cache/runs");
    let record = fs::read_dir(&runs)
        .unwrap()
        .flatten()
        .flat_map(|s| fs::read_dir(s.path()).unwrap().flatten())
        .find(|f| f.path().extension().is_some_and(|e| e == "json"))
        .unwrap();
    fs::remove_file(record.path()).unwrap();
    let again = c.mccbuild(&["run", "--jobs", "1", "--progress", "json"]);
    let events = json_lines(&stderr(&again));
    let started = events.iter().find(|e| e["event"] == "started").unwrap();
    assert_eq!(started["total"], 1, "{}", stderr(&again));
    let eta = started["eta_s"]
        .as_f64()
        .unwrap_or_else(|| panic!("history: {started}"));
    assert!((0.8..3.0).contains(&eta), "{started}");
}

fn interrupted_run_prints_its_json_summary(signal: i32) {
    let mut c = TestContest::new();
    c.copy_demo_instance("Philosophers-PT-000002");
    c.model("Philosophers", "known", &["models/Philosophers-PT-000002"]);
    c.script_tool(
        "t",
        "#!/bin/sh\nsleep 30\n",
        "examinations = [\"StateSpace\"]",
    );
    c.write("time_s = 60\nmemory_mb = 512");
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_mccbuild"))
        .args(["run", "--json"])
        .current_dir(c.path())
        .env_remove("MCCBUILD_SANDBOX")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    // SAFETY: a signal to the child we started.
    unsafe { libc::kill(child.id() as i32, signal) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert_eq!(
        json(&out),
        serde_json::json!({"executed": 0, "cached": 0, "failed": 0, "interrupted": true}),
        "{}",
        stderr(&out)
    );
}

#[test]
fn run_json_prints_its_summary_when_interrupted_by_sigint() {
    interrupted_run_prints_its_json_summary(libc::SIGINT);
}

#[test]
fn run_json_prints_its_summary_when_interrupted_by_sigterm() {
    interrupted_run_prints_its_json_summary(libc::SIGTERM);
}

#[test]
fn watch_updates_1_returns_on_an_idle_store() {
    let c = one_tool(
        "examinations = [\"StateSpace\"]",
        "time_s = 10\nmemory_mb = 512",
    );
    let started = std::time::Instant::now();
    let out = std::process::Command::new("timeout")
        .args([
            "20",
            env!("CARGO_BIN_EXE_mccbuild"),
            "watch",
            "--updates",
            "1",
            "--json",
        ])
        .current_dir(c.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    let updates = json_lines(&stdout(&out));
    assert_eq!(updates.len(), 1, "{}", stdout(&out));
    assert_eq!(
        (updates[0]["update"].as_u64(), updates[0]["cause"].as_str()),
        (Some(0), Some("start"))
    );
}

#[test]
fn watch_started_in_the_background_of_a_script_stops_on_sigint() {
    let c = one_tool(
        "examinations = [\"StateSpace\"]",
        "time_s = 10\nmemory_mb = 512",
    );
    // A non-interactive shell starts background commands with SIGINT ignored.
    let script = format!(
        "'{}' watch --json > watch.out 2> watch.err & pid=$!\nsleep 2\nkill -INT $pid\nwait $pid\necho \"exit $?\"",
        env!("CARGO_BIN_EXE_mccbuild")
    );
    let out = std::process::Command::new("timeout")
        .args(["30", "sh", "-c", &script])
        .current_dir(c.path())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "the script timed out: watch ignored SIGINT"
    );
    assert_eq!(
        stdout(&out).trim(),
        "exit 130",
        "{}",
        fs::read_to_string(c.path().join("watch.err")).unwrap_or_default()
    );
    assert!(
        fs::read_to_string(c.path().join("watch.out"))
            .unwrap()
            .contains("\"cause\":\"start\"")
    );
}

/// A mistyped name on the command line gets the nearest valid one and the list of valid ones:
/// `--tool`, `--examination` (and categories), `explain`'s `--category`; and a command that waits
/// for the store says it before it waits (`--no-wait` on a busy store: the name, not "busy").
#[test]
fn mistyped_names_get_did_you_mean_before_the_store_is_waited_for() {
    let demo = format!("{REPO}/contest.toml");
    let plan = mccbuild_in(
        Path::new(REPO),
        &["plan", "--manifest", &demo, "--tool", "explorr"],
    );
    assert_eq!(plan.status.code(), Some(2), "{}", stderr(&plan));
    assert!(
        stderr(&plan).contains("no tool `explorr`")
            && stderr(&plan).contains("did you mean `explorer`?")
            && stderr(&plan).contains("(tools: explorer, pm4py, snakes"),
        "{}",
        stderr(&plan)
    );
    let plan = mccbuild_in(
        Path::new(REPO),
        &["plan", "--manifest", &demo, "--examination", "ctl"],
    );
    assert!(
        stderr(&plan).contains("did you mean `CTL`?"),
        "{}",
        stderr(&plan)
    );
    let explain = mccbuild_in(
        Path::new(REPO),
        &[
            "explain",
            "--manifest",
            &demo,
            "--tool",
            "explorer",
            "--category",
            "ctl",
        ],
    );
    assert_eq!(explain.status.code(), Some(2), "{}", stderr(&explain));
    assert!(
        stderr(&explain).contains("no category `ctl`")
            && stderr(&explain).contains("did you mean `CTL`?")
            && stderr(&explain).contains("categories: StateSpace"),
        "{}",
        stderr(&explain)
    );

    // A busy store: another process holds its execution lock (an flock on cache/lock).
    let mut c = TestContest::new();
    c.copy_demo_instance("Philosophers-PT-000002");
    c.model("Philosophers", "known", &["models/Philosophers-PT-000002"]);
    c.scripted_tool("a", "examinations = [\"StateSpace\"]");
    c.write("time_s = 10\nmemory_mb = 512");
    fs::create_dir_all(c.path().join("cache")).unwrap();
    let mut holder = std::process::Command::new("flock")
        .args(["cache/lock", "sleep", "30"])
        .current_dir(c.path())
        .spawn()
        .expect("flock runs");
    std::thread::sleep(std::time::Duration::from_millis(300));
    let busy = c.mccbuild(&["run", "--no-wait", "--tool", "b"]);
    let typo = c.mccbuild(&["run", "--no-wait", "--tool", "aa"]);
    let really_busy = c.mccbuild(&["run", "--no-wait", "--tool", "a"]);
    let _ = holder.kill();
    let _ = holder.wait();
    assert_eq!(busy.status.code(), Some(2), "{}", stderr(&busy));
    assert!(
        stderr(&busy).contains("no tool `b`") && stderr(&busy).contains("(tools: a)"),
        "{}",
        stderr(&busy)
    );
    assert!(
        stderr(&typo).contains("did you mean `a`?"),
        "{}",
        stderr(&typo)
    );
    // The lock is held for real: a right name is refused as busy.
    assert_eq!(
        really_busy.status.code(),
        Some(3),
        "{}",
        stderr(&really_busy)
    );
}

/// A selection of names the contest has but that has no run says why instead of nothing:
/// the demo's pm4py takes no part in CTL.
#[test]
fn an_empty_selection_says_which_tool_takes_no_part_in_what() {
    let demo = format!("{REPO}/contest.toml");
    let plan = mccbuild_in(
        Path::new(REPO),
        &[
            "plan",
            "--manifest",
            &demo,
            "--tool",
            "pm4py",
            "--examination",
            "CTL",
        ],
    );
    assert!(plan.status.success(), "{}", stderr(&plan));
    assert!(stdout(&plan).starts_with("0 runs"), "{}", stdout(&plan));
    assert!(
        stderr(&plan).contains("pm4py does not take part in CTL")
            && stderr(&plan).contains("it takes part in: StateSpace"),
        "{}",
        stderr(&plan)
    );
}

/// `mccbuild sandbox` reserves its core machine-wide as runs do: with the first core held by a
/// run (an flock on its reservation file), it takes another one, or waits for it on a machine
/// of one core; its `--memory` is in MiB (its help says so, runexec's counts bytes).
#[test]
fn sandbox_respects_the_cores_runs_hold_and_says_mib() {
    let help = stdout(&mccbuild_in(Path::new(REPO), &["sandbox", "--help"]));
    assert!(
        help.contains("in MiB") && help.contains("runexec"),
        "{help}"
    );
    let locks = tempfile::tempdir().unwrap();
    let sandbox = || {
        std::process::Command::new(env!("CARGO_BIN_EXE_mccbuild"))
            .args(["sandbox", "--json", "--", "/bin/true"])
            .env("MCCBUILD_CORE_LOCKS", locks.path())
            .env_remove("MCCBUILD_SANDBOX")
            .output()
            .unwrap()
    };
    let free = sandbox();
    if !free.status.success() {
        return skip(&format!(
            "mccbuild sandbox cannot run here: {}",
            stderr(&free)
        ));
    }
    let first = json(&free)["cores"][0].as_u64().unwrap();
    let mut holder = std::process::Command::new("flock")
        .arg(locks.path().join(format!("core-{first}.lock")))
        .args(["sleep", "2"])
        .spawn()
        .expect("flock runs");
    std::thread::sleep(Duration::from_millis(300));
    let t = std::time::Instant::now();
    let held = sandbox();
    let waited = t.elapsed();
    let _ = holder.wait();
    assert!(held.status.success(), "{}", stderr(&held));
    let core = json(&held)["cores"][0].as_u64().unwrap();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cores > 1 {
        assert_ne!(core, first, "ran on the core a run holds");
    } else {
        assert!(waited >= Duration::from_millis(1500), "{waited:?}");
        assert!(
            stderr(&held).contains("waiting for a core"),
            "{}",
            stderr(&held)
        );
    }
}

/// Text as a terminal shows it: ANSI escape sequences (colours, cursor moves) left out.
fn visible(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            if chars.peek() == Some(&'[') {
                chars.next();
                for d in chars.by_ref() {
                    if ('@'..='~').contains(&d) {
                        break;
                    }
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}

/// On a terminal of 60 columns the progress bar is one line: `run` under a pseudo-terminal
/// (util-linux's `script`, `stty cols 60`), two runs of a second each; every line the bar drew
/// is at most 60 characters. About 2 s.
#[test]
fn the_progress_bar_fits_a_narrow_terminal() {
    if std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_err()
    {
        return skip("util-linux's `script` is not installed (no pseudo-terminal to test in)");
    }
    let mut c = TestContest::new();
    c.copy_demo_instance("Philosophers-PT-000002");
    c.model("Philosophers", "known", &["models/Philosophers-PT-000002"]);
    for tool in ["a", "b"] {
        c.script_tool(
            tool,
            "#!/bin/sh\nsleep 1\necho CANNOT_COMPUTE\n",
            "examinations = [\"StateSpace\"]",
        );
    }
    c.write("time_s = 10\nmemory_mb = 512");
    let command = format!(
        "stty cols 60 rows 24; exec {} run --progress auto",
        env!("CARGO_BIN_EXE_mccbuild")
    );
    // Cores of its own: a test running beside it and holding this machine's cores would put a
    // "waiting for 1 core held by ..." message line above the bar. indicatif draws a message
    // longer than the terminal by padding its last row to the width, with no line break before
    // the bar, which this line-splitting cannot tell apart from a wrapped bar.
    let locks = tempfile::tempdir().unwrap();
    let out = std::process::Command::new("script")
        .args(["-qfec", &command, "/dev/null"])
        .current_dir(c.path())
        .env("MCCBUILD_CORE_LOCKS", locks.path())
        .env_remove("MCCBUILD_SANDBOX")
        .output()
        .unwrap();
    let screen = visible(&String::from_utf8_lossy(&out.stdout));
    let bars: Vec<&str> = screen
        .split(['\r', '\n'])
        .filter(|l| l.contains(" running · "))
        .collect();
    assert!(!bars.is_empty(), "no progress bar drawn:\n{screen}");
    for line in bars {
        assert!(
            line.chars().count() <= 60,
            "{} columns: {line}",
            line.chars().count()
        );
    }
}

/// `plan --forecast`: each model's runs in one job (rule E-5.1, 2 at a time: `jobs = 2`), the
/// jobs longest first on the nodes, from the stored runs' wall-clock times; a model not run
/// yet takes the median of its tool and examination. The expected makespan is worked out here
/// from the records.
#[test]
fn the_forecast_puts_each_model_on_one_node_longest_job_first() {
    let mut c = TestContest::new();
    for (model, instance) in [
        ("Deadlock", "Deadlock-PT-1"),
        ("TokenRing", "TokenRing-PT-4"),
        ("ProdCons", "ProdCons-PT-2"),
    ] {
        c.copy_demo_instance(instance);
        c.model(model, "known", &[&format!("models/{instance}")]);
    }
    c.script_tool(
        "t",
        "#!/bin/sh\ncase $BK_EXAMINATION in StateSpace) sleep 0.4 ;; *) sleep 0.1 ;; esac\necho 'STATE_SPACE STATES 1 TECHNIQUES X'\n",
        "examinations = [\"StateSpace\", \"OneSafe\"]",
    );
    c.write("time_s = 10\nmemory_mb = 512");
    let out = c.mccbuild(&[
        "run",
        "--json",
        "--model",
        "Deadlock",
        "--model",
        "TokenRing",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let mut wall: BTreeMap<(String, String), f64> = BTreeMap::new();
    for r in c.records() {
        wall.insert(
            (
                r["instance"].as_str().unwrap().to_string(),
                r["examination"].as_str().unwrap().to_string(),
            ),
            r["wall_time_s"].as_f64().unwrap(),
        );
    }
    let t = |i: &str, e: &str| wall[&(i.to_string(), e.to_string())];
    // Two runs at a time: a job lasts as long as its longer run.
    let mut jobs = vec![
        (
            "Deadlock",
            t("Deadlock-PT-1", "StateSpace").max(t("Deadlock-PT-1", "OneSafe")),
        ),
        (
            "TokenRing",
            t("TokenRing-PT-4", "StateSpace").max(t("TokenRing-PT-4", "OneSafe")),
        ),
        (
            "ProdCons",
            ((t("Deadlock-PT-1", "StateSpace") + t("TokenRing-PT-4", "StateSpace")) / 2.0)
                .max((t("Deadlock-PT-1", "OneSafe") + t("TokenRing-PT-4", "OneSafe")) / 2.0),
        ),
    ];
    jobs.sort_by(|a, b| b.1.total_cmp(&a.1));
    let forecast = |extra: &[&str]| {
        let out =
            c.mccbuild(&[&["plan", "--forecast", "--nodes", "2", "--json"][..], extra].concat());
        assert!(out.status.success(), "{}", stderr(&out));
        json(&out)
    };
    // Nodes of 2 cores: one job each. The longest alone on one node, the other two after
    // each other on the second.
    let f = forecast(&["--cores", "2"]);
    let close = |a: &serde_json::Value, b: f64| (a.as_f64().unwrap() - b).abs() < 1e-6;
    assert!(
        close(&f["makespan_s"], jobs[0].1.max(jobs[1].1 + jobs[2].1)),
        "{f} {jobs:?}"
    );
    let order: Vec<&str> = f["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["model"].as_str().unwrap())
        .collect();
    assert_eq!(order, jobs.iter().map(|j| j.0).collect::<Vec<_>>(), "{f}");
    assert_eq!(
        (&f["runs"], &f["stored"], &f["estimated"], &f["unknown"]),
        (&6.into(), &4.into(), &2.into(), &0.into()),
        "{f}"
    );
    assert_eq!(f["jobs"][2]["start_s"], f["jobs"][1]["seconds"], "{f}");
    // Nodes of 4 cores: two jobs each, all three at once.
    let f = forecast(&["--cores", "4"]);
    assert!(close(&f["makespan_s"], jobs[0].1), "{f}");
    // 1 s more per run: a job's two runs run side by side, so the job takes 1 s more.
    let f = forecast(&["--cores", "4", "--run-overhead", "1"]);
    assert!(close(&f["makespan_s"], jobs[0].1 + 1.0), "{f}");
    // 1 s more per job: on nodes of 2 cores, the second node's two jobs pay it twice.
    let f = forecast(&["--cores", "2", "--job-overhead", "1"]);
    assert!(
        close(
            &f["makespan_s"],
            (jobs[0].1 + 1.0).max(jobs[1].1 + jobs[2].1 + 2.0)
        ),
        "{f} {jobs:?}"
    );
    assert_eq!(f["jobs"][2]["start_s"], f["jobs"][1]["seconds"], "{f}");
    // The text says where the times come from; a job larger than a node is refused.
    let out = c.mccbuild(&["plan", "--forecast", "--nodes", "2"]);
    let text = stdout(&out);
    assert!(
        text.contains("makespan") && text.contains("2 estimated"),
        "{text}"
    );
    let out = c.mccbuild(&["plan", "--forecast", "--nodes", "2", "--cores", "1"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("asks for 2 CPUs, more than a node's 1 cores"),
        "{}",
        stderr(&out)
    );
}

/// Two real contests competing for one core (both under `taskset -c 0`, their core reservations
/// in one folder of their own): the second, started while the first runs, says who holds the
/// core (the first's pid, its contest folder, since when) in its progress events (its store's
/// `progress.jsonl`) and on its plain progress lines, and gets the core in turn: its first run
/// starts before the first contest's second run, although the first contest asks for the core
/// again the moment its run ends (first come, first served; the first contest then waits
/// behind it).
#[test]
fn a_contest_waiting_for_cores_says_who_holds_them_and_gets_them_in_turn() {
    let locks = tempfile::tempdir().unwrap();
    let contest = || {
        let mut c = TestContest::new();
        for i in ["Philosophers-PT-000002", "Philosophers-PT-000003"] {
            c.copy_demo_instance(i);
        }
        c.model("Philosophers", "known", &["models/Philosophers-PT-*"]);
        c.script_tool(
            "t",
            "#!/bin/sh\nsleep 1.5\necho STATE_SPACE STATES 9 TECHNIQUES EXPLICIT\n",
            "examinations = [\"StateSpace\"]",
        );
        c.write("time_s = 10\nmemory_mb = 512");
        c
    };
    let (a, b) = (contest(), contest());
    let env = [
        ("MCCBUILD_CORE_LOCKS", locks.path().to_str().unwrap()),
        ("MCCBUILD_PROGRESS_EVERY_MS", "200"),
    ];
    let mut first = mccbuild_with(&a, "0", &env, &["run", "--progress", "plain"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // The second contest starts once the first one's first run runs.
    let log = a.path().join("cache/progress.jsonl");
    let start = std::time::Instant::now();
    while !fs::read_to_string(&log).is_ok_and(|t| t.contains("\"run_started\"")) {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(60),
            "the first contest's run never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let second = mccbuild_with(&b, "0", &env, &["run", "--progress", "plain"])
        .output()
        .unwrap();
    assert!(first.wait().unwrap().success());
    assert!(second.status.success(), "{}", stderr(&second));

    // Who holds the core: in the store's events, and on the plain lines.
    let events = json_lines(&fs::read_to_string(b.path().join("cache/progress.jsonl")).unwrap());
    let waiting = events
        .iter()
        .find(|e| e["event"] == "waiting")
        .unwrap_or_else(|| panic!("no waiting event: {events:?}"));
    let held = &waiting["held"][0];
    assert_eq!(held["core"], 0, "{waiting}");
    assert_eq!(held["pid"], first.id(), "{waiting}");
    let folder = |c: &TestContest| c.path().canonicalize().unwrap();
    assert_eq!(
        Path::new(held["contest"].as_str().unwrap())
            .canonicalize()
            .unwrap(),
        folder(&a),
        "{waiting}"
    );
    assert!(held["since"].as_str().unwrap().ends_with('Z'), "{waiting}");
    let err = stderr(&second);
    assert!(
        err.contains(&format!(
            "waiting for 1 core held by another contest: core 0: pid {} (",
            first.id()
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!("waiting: core 0 pid {} since ", first.id())),
        "{err}"
    );

    // In turn: the second contest's first run starts before the first contest's second one.
    let starts = |c: &TestContest| -> Vec<String> {
        let mut s: Vec<String> = c
            .records()
            .iter()
            .map(|r| r["started_at"].as_str().unwrap().to_string())
            .collect();
        s.sort();
        s
    };
    let (sa, sb) = (starts(&a), starts(&b));
    assert_eq!((sa.len(), sb.len()), (2, 2));
    assert!(
        sb[0] < sa[1],
        "the second contest waited for the first to finish: first {sa:?}, second {sb:?}"
    );
}
