//! Hostile tools: each misbehaviour is contained and classified, and
//! neither the host nor the next run is affected. One contest, one hostile tool whose behaviour
//! depends on the examination, and one well-behaved tool on the same instance whose answers must
//! come out right around it. Needs root (cgroups and namespaces): CI has it; elsewhere it skips
//! with a printed reason.

use std::fs;
use std::net::TcpListener;
use std::path::Path;
use std::time::Duration;

use crate::common::*;

/// Whether `mccbuild sandbox` isolates here (root, cgroups, namespaces).
fn isolated() -> bool {
    let out = mccbuild_in(Path::new(REPO), &["sandbox", "--json", "--", "/bin/true"]);
    if !out.status.success() {
        skip(&format!(
            "mccbuild sandbox cannot run here: {}",
            stderr(&out)
        ));
        return false;
    }
    let sandbox = json(&out)["sandbox"].as_str().unwrap_or("").to_string();
    if sandbox != "cgroup+namespaces" {
        skip(&format!(
            "runs are not isolated here (sandbox {sandbox}): needs root, cgroups and namespaces"
        ));
        return false;
    }
    true
}

/// Processes of the host whose command line holds `token`.
fn processes_with(token: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(cmdline) = fs::read(entry.path().join("cmdline")) {
            let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            if text.contains(token) {
                found.push(format!("{}: {text}", entry.file_name().to_string_lossy()));
            }
        }
    }
    found
}

#[test]
fn hostile_tools_are_contained_and_classified() {
    if !isolated() {
        return;
    }
    let mut c = TestContest::new();
    let instance = c.copy_demo_instance("Philosophers-PT-000002");
    c.model("Philosophers", "known", &["models/Philosophers-PT-000002"]);
    let token = format!("{}", 1000 + std::process::id() % 8000);
    let orphan_time = format!("3{token}.5"); // `sleep 3<token>.5`: findable on the host
    let host_tmp_file = std::env::temp_dir().join(format!("mccbuild-hostile-{token}"));
    let project_file = c.path().join(format!("escape-{token}"));
    let other_run = std::env::temp_dir().join(format!("mccbuild-other-run-{token}"));
    fs::create_dir_all(&other_run).unwrap();
    fs::write(other_run.join("secret"), "another run's file").unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let source_verdict = instance.join("GenericPropertiesVerdict.xml");
    assert!(
        source_verdict.exists(),
        "the demo instance has a verdict file"
    );

    let script = format!(
        r#"#!/bin/sh
case "$BK_EXAMINATION" in
StateSpace) # fork bomb, the main process staying busy
    b() {{ b | b & }}; b; while :; do :; done ;;
OneSafe) # memory hog: tail keeps a line of /dev/zero, which never ends
    tail /dev/zero ;;
QuasiLiveness) # 1 GB of output
    head -c 1000000000 /dev/zero | tr '\0' x ;;
StableMarking) # an orphan that keeps running after the tool exits
    (sleep {orphan_time} &) ; echo "ORPHAN LEFT"; exit 0 ;;
Liveness) # ignores SIGTERM, and burns CPU
    trap '' TERM INT; while :; do :; done ;;
ReachabilityDeadlock) # M-9 hides the verdict file here: look for it anyway
    for f in GenericPropertiesVerdict.xml "{source_verdict}"; do
        if [ -r "$f" ]; then echo "READ $f"; else echo "NO $f"; fi
    done ;;
ReachabilityCardinality) # the network: the host's loopback and the outside
    bash -c 'echo hi > /dev/tcp/127.0.0.1/{port}' 2>/dev/null && echo "LOOPBACK CONNECTED" || echo "LOOPBACK REFUSED"
    bash -c 'echo hi > /dev/tcp/1.1.1.1/53' 2>/dev/null && echo "OUTSIDE CONNECTED" || echo "OUTSIDE UNREACHABLE" ;;
ReachabilityFireability) # writes outside its folder
    for f in "{project_file}" "{host_tmp_file}" /etc/mccbuild-escape-{token} "$BK_RESULT_DIR/../../mccbuild-escape-{token}"; do
        if echo escaped > "$f" 2>/dev/null; then echo "WROTE $f"; else echo "REFUSED $f"; fi
    done ;;
CTLCardinality) # another run's folder, and other processes
    if cat "{other_run}/secret" 2>/dev/null; then echo "READ OTHER RUN"; else echo "NO OTHER RUN"; fi
    echo "PROCESSES $(ls -d /proc/[0-9]* | wc -l)"
    echo "MY PID $$ AFTER $(cat /proc/1/comm)" ;;
esac
"#,
        source_verdict = source_verdict.display(),
        project_file = project_file.display(),
        host_tmp_file = host_tmp_file.display(),
        other_run = other_run.display(),
    );
    let hostile_exams = [
        "StateSpace",
        "OneSafe",
        "QuasiLiveness",
        "StableMarking",
        "Liveness",
        "ReachabilityDeadlock",
        "ReachabilityCardinality",
        "ReachabilityFireability",
        "CTLCardinality",
    ];
    let exam_list = hostile_exams
        .iter()
        .map(|e| format!("\"{e}\""))
        .collect::<Vec<_>>()
        .join(", ");
    c.script_tool("hostile", &script, &format!("examinations = [{exam_list}]"));
    c.scripted_tool("good", &format!("examinations = [{exam_list}]"));
    for exam in hostile_exams {
        let answer = match exam {
            "StateSpace" => "STATE_SPACE STATES 22 TECHNIQUES EXPLICIT\n".to_string(),
            e if e.starts_with("Reachability") && e != "ReachabilityDeadlock"
                || e.starts_with("CTL") =>
            {
                format!("FORMULA Philosophers-PT-000002-{e}-2026-00 TRUE TECHNIQUES EXPLICIT\n")
            }
            e => format!("FORMULA {e} TRUE TECHNIQUES EXPLICIT\n"),
        };
        c.answer("good", "Philosophers-PT-000002", exam, &answer);
    }
    c.write("time_s = 4\nmemory_mb = 512\ntime = \"cpu\"");
    let out = c.mccbuild(&["run", "--json"]);
    assert!(
        out.status.success(),
        "every run is recorded, whatever the tool did: {}",
        stderr(&out)
    );

    let rec = |exam: &str| c.record("hostile", "Philosophers-PT-000002", exam);
    let reason = |exam: &str| {
        rec(exam)["termination"]["reason"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let text = |exam: &str| rec(exam)["stdout"]["text"].as_str().unwrap().to_string();

    // Fork bomb: contained by the pids limit, stopped at a limit, nothing left. When a fork of
    // the main shell itself meets the pids limit, dash ends with "Cannot fork" (exit 2) before
    // any limit: contained all the same (seen once in CI on a loaded machine).
    let bomb = rec("StateSpace");
    let ended_by_pids_limit = reason("StateSpace") == "exit"
        && bomb["termination"]["code"] != 0
        && bomb["stderr"]["text"]
            .as_str()
            .unwrap_or_default()
            .contains("Cannot fork");
    assert!(
        ["cpu_limit", "memory_limit"].contains(&reason("StateSpace").as_str())
            || ended_by_pids_limit,
        "fork bomb: {bomb}"
    );
    // It hit the pids limit ("Cannot fork") or the memory limit first: either way within it.
    let bomb_peak = rec("StateSpace")["peak_memory_bytes"].as_u64().unwrap();
    assert!(bomb_peak <= 512 << 20, "{bomb_peak}");
    // Memory hog: the memory limit of the tree.
    assert_eq!(reason("OneSafe"), "memory_limit", "{}", rec("OneSafe"));
    let peak = rec("OneSafe")["peak_memory_bytes"].as_u64().unwrap();
    assert!(peak > 400 << 20 && peak <= 530 << 20, "peak {peak}");
    // Output flood: stopped at the output limit, the record keeps head and tail only.
    assert_eq!(reason("QuasiLiveness"), "output_limit");
    assert_eq!(rec("QuasiLiveness")["stdout"]["truncated"], true);
    assert!(text("QuasiLiveness").len() < 100_000);
    // Orphan: the tool's answer counts, the orphan is killed with the tree.
    assert_eq!(reason("StableMarking"), "exit");
    assert!(text("StableMarking").contains("ORPHAN LEFT"));
    // SIGTERM ignored: the tree is killed with SIGKILL at the CPU limit.
    assert_eq!(reason("Liveness"), "cpu_limit");
    let cpu = rec("Liveness")["cpu_time_s"].as_f64().unwrap();
    assert!(
        (4.0..4.6).contains(&cpu),
        "killed at the limit, not later: {cpu}"
    );
    // M-9: the verdict file is nowhere to be read.
    let verdict = text("ReachabilityDeadlock");
    assert!(!verdict.contains("READ"), "{verdict}");
    assert_eq!(verdict.matches("NO ").count(), 2, "{verdict}");
    // Network: neither the host's loopback nor the outside.
    let net = text("ReachabilityCardinality");
    assert!(
        net.contains("LOOPBACK REFUSED") && net.contains("OUTSIDE UNREACHABLE"),
        "{net}"
    );
    assert!(
        listener.accept().is_err(),
        "the host's listener got no connection"
    );
    // Writes outside the run's folder: refused, or (its private /tmp) invisible to the host.
    let writes = text("ReachabilityFireability");
    // (The test's project is under /tmp, so the run wrote it in its private /tmp.)
    assert!(
        writes.contains(&format!("REFUSED /etc/mccbuild-escape-{token}")),
        "{writes}"
    );
    assert!(!project_file.exists());
    assert!(!host_tmp_file.exists(), "the run's /tmp is its own");
    assert!(!Path::new(&format!("/etc/mccbuild-escape-{token}")).exists());
    assert!(
        !std::env::temp_dir()
            .join(format!("mccbuild-escape-{token}"))
            .exists()
    );
    // Another run's folder and the host's processes are out of sight.
    let other = text("CTLCardinality");
    assert!(other.contains("NO OTHER RUN"), "{other}");
    let processes: usize = other
        .lines()
        .find_map(|l| l.strip_prefix("PROCESSES "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("{other}"));
    assert!(processes <= 5, "only its own processes: {processes}");
    // The tool is the child of the run's init (process 1 of its PID namespace).
    assert!(other.contains("MY PID 2 AFTER mccbuild-init"), "{other}");

    // Nothing the hostile tool started survives, on the host.
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(processes_with(&orphan_time), Vec::<String>::new());
    // No run was taken for the tool's failure of another: the good tool answered every time.
    for exam in hostile_exams {
        let good = c.record("good", "Philosophers-PT-000002", exam);
        assert_eq!(good["termination"]["reason"], "exit", "{exam}: {good}");
        assert_eq!(good["verdict"], "answered", "{exam}: {good}");
    }
    // And the next run after all this is unaffected: a rerun of the good tool alone.
    fs::write(
        c.path()
            .join("tools/good/answers/Philosophers-PT-000002/StateSpace"),
        "STATE_SPACE STATES 22 TECHNIQUES EXPLICIT\n",
    )
    .unwrap();
    let out = c.mccbuild(&["run", "--tool", "good"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let good = c.record("good", "Philosophers-PT-000002", "StateSpace");
    assert_eq!(good["verdict"], "answered");
    let _ = fs::remove_dir_all(&other_run);
}

#[test]
fn the_sandbox_command_kills_orphans_and_enforces_limits() {
    if !isolated() {
        return;
    }
    // 1 s of CPU in a child after its parent exits: counted, and waited for.
    let out = mccbuild_in(
        Path::new(REPO),
        &[
            "sandbox",
            "--json",
            "--time",
            "10",
            "--",
            "sh",
            "-c",
            "(timeout 1 sh -c 'while :; do :; done' &) ; exit 3",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let j = json(&out);
    assert_eq!(j["termination"]["reason"], "exit");
    assert_eq!(j["termination"]["code"], 3);
    // The orphan is killed when the main process exits (runs end with their main process),
    // so what is counted is what ran before.
    let cpu = j["cpu_time_s"].as_f64().unwrap();
    assert!(cpu < 1.2, "{cpu}");
    // A CPU-time limit below a second, and a bad core.
    let out = mccbuild_in(
        Path::new(REPO),
        &[
            "sandbox",
            "--time",
            "0.5",
            "--",
            "sh",
            "-c",
            "while :; do :; done",
        ],
    );
    assert!(
        stdout(&out).contains("termination=cpu_limit"),
        "{}",
        stdout(&out)
    );
    let out = mccbuild_in(
        Path::new(REPO),
        &["sandbox", "--cores", "999", "--", "true"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("core 999"), "{}", stderr(&out));
}

/// The run's first process is process 1 of its PID namespace (the run's init, no other process
/// of mccbuild between) and, like the tool, is in the run's own groups of every cgroup hierarchy
/// mccbuild uses (the v2 group from its clone, the v1 groups before it forks the tool) and on
/// the run's core; the tool's own way of ending (a signal) is the run's.
#[test]
fn the_runs_init_and_tool_are_in_its_cgroups_and_on_its_core() {
    if !isolated() {
        return;
    }
    let out = mccbuild_in(
        Path::new(REPO),
        &[
            "sandbox",
            "--json",
            "--cores",
            "0",
            "--",
            "sh",
            "-c",
            "for p in self 1; do echo \"== $p $(cat /proc/$p/comm)\"; cat /proc/$p/cgroup; \
             grep Cpus_allowed_list /proc/$p/status; done; kill -USR1 $$",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let j = json(&out);
    let text = j["stdout"]["text"].as_str().unwrap().to_string();
    assert_eq!(
        j["termination"]["reason"], "signal",
        "{text}\n{}",
        j["termination"]
    );
    assert_eq!(j["termination"]["signal"], 10, "{text}");
    let blocks: Vec<&str> = text.split("== ").filter(|b| !b.is_empty()).collect();
    assert_eq!(blocks.len(), 2, "{text}");
    assert!(blocks[1].starts_with("1 mccbuild-init"), "{text}");
    // Which hierarchies mccbuild itself uses: those with a `mccbuild` folder in its own group.
    let own = fs::read_to_string("/proc/self/cgroup").unwrap();
    for block in blocks {
        assert!(
            block.contains("Cpus_allowed_list:\t0\n"),
            "not pinned to core 0:\n{block}"
        );
        for line in own.lines() {
            let mut parts = line.splitn(3, ':');
            let (id, controllers) = (parts.next().unwrap(), parts.next().unwrap());
            let used = match controllers {
                "" => {
                    Path::new("/sys/fs/cgroup/unified/mccbuild").is_dir()
                        || Path::new("/sys/fs/cgroup/mccbuild").is_dir()
                }
                c if c.split(',').any(|c| c == "memory" || c == "pids") => true,
                _ => false,
            };
            if !used {
                continue;
            }
            let prefix = format!("{id}:{controllers}:");
            let theirs = block
                .lines()
                .find(|l| l.starts_with(&prefix))
                .unwrap_or_else(|| panic!("no {prefix} line:\n{block}"));
            assert!(
                theirs.contains("/mccbuild/sandbox-"),
                "outside the run's group ({prefix}):\n{block}"
            );
        }
    }
}

/// The tool starts as on a plain Linux, whatever the run's init does with signals: nothing
/// blocked (the init blocks the signals it forwards and takes them with `sigwaitinfo`; the
/// tool's process, cloned from it as `vfork` does, restores the mask before it executes the
/// tool; what mccbuild's own parent ignored stays ignored, as on any Linux), an ordinary child
/// of the init (process 2).
#[test]
fn the_tool_starts_with_no_signal_blocked_as_process_2() {
    if !isolated() {
        return;
    }
    let out = mccbuild_in(
        Path::new(REPO),
        &[
            "sandbox",
            "--json",
            "--",
            "sh",
            "-c",
            "exec grep -E '^(Pid|PPid|SigBlk)' /proc/self/status",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let j = json(&out);
    let text = j["stdout"]["text"].as_str().unwrap();
    assert_eq!(
        text, "Pid:\t2\nPPid:\t1\nSigBlk:\t0000000000000000\n",
        "{}",
        j
    );
}

/// A memory limit below what the run's process uses before its tool even starts (0 MB here)
/// ends the run as `memory_limit`, a result like any run that hits its limit, not an
/// infrastructure failure (the limit is set once the process is in its groups).
#[test]
fn a_memory_limit_below_the_runs_start_is_a_memory_limit() {
    if !isolated() {
        return;
    }
    let out = mccbuild_in(
        Path::new(REPO),
        &["sandbox", "--json", "--memory", "0", "--", "/bin/true"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(json(&out)["termination"]["reason"], "memory_limit");
}

/// `mccbuild sandbox` reclaims what dead mccbuild processes left, as every command that runs
/// something does: here a working folder and a run's cgroups (memory and v2) of a process that
/// no longer exists are gone after one command (the reclaiming starts once the command's tool
/// executes, and ends before mccbuild does); a live owner's are kept.
#[test]
fn a_sandbox_command_reclaims_what_dead_mccbuild_processes_left() {
    if !isolated() {
        return;
    }
    let own_memory = fs::read_to_string("/proc/self/cgroup")
        .unwrap()
        .lines()
        .find_map(|l| l.split_once(":memory:").map(|(_, p)| p.to_string()))
        .unwrap();
    let dead = "0123456789abcdef-999999999.5-0";
    let live = format!("0123456789abcdef-{}.{}-0", std::process::id(), own_start());
    let tmp = std::env::temp_dir();
    let mut made = Vec::new();
    for name in [dead, live.as_str()] {
        let folder = tmp.join(format!("mccbuild-{name}"));
        fs::create_dir_all(folder.join("home")).unwrap();
        made.push(folder);
        for hierarchy in [
            format!("/sys/fs/cgroup/memory{own_memory}/mccbuild"),
            "/sys/fs/cgroup/unified/mccbuild".to_string(),
        ] {
            let group = Path::new(&hierarchy).join(name);
            if Path::new(&hierarchy).is_dir() {
                fs::create_dir_all(&group).unwrap();
                made.push(group);
            }
        }
    }
    let out = mccbuild_in(Path::new(REPO), &["sandbox", "--json", "--", "/bin/true"]);
    assert!(out.status.success(), "{}", stderr(&out));
    for path in &made {
        let is_dead = path.to_string_lossy().contains(dead);
        assert_eq!(path.exists(), !is_dead, "{}", path.display());
    }
    for path in made.iter().rev() {
        let _ = fs::remove_dir(path.join("home"));
        let _ = fs::remove_dir(path);
    }
}

/// This process's start time (field 22 of /proc/self/stat), as mccbuild tags its folders.
fn own_start() -> u64 {
    let stat = fs::read_to_string("/proc/self/stat").unwrap();
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    rest.split_whitespace().nth(19).unwrap().parse().unwrap()
}

/// A command given by its path is run from there, its folder shown read-only, even under /tmp
/// (which the sandbox replaces by a private one): from a checkout in /tmp, scripts/bench-sandbox
/// runs its workload from target/. A command in /tmp itself cannot be shown without showing the
/// host's /tmp: the sandbox says so (exit 1).
#[test]
fn a_command_given_by_its_path_runs_from_there_or_the_sandbox_says_why_not() {
    if !isolated() {
        return;
    }
    let dir = tempfile::Builder::new()
        .prefix("mccbuild-sandbox-command-")
        .tempdir_in("/tmp")
        .unwrap();
    let command = dir.path().join("hello");
    write_exec(
        &command,
        "#!/bin/sh\necho \"hello from $(basename \"$0\")\"\n",
    );
    let command = command.to_string_lossy().into_owned();
    let out = mccbuild_in(Path::new(REPO), &["sandbox", "--json", "--", &command]);
    assert!(out.status.success(), "{}", stderr(&out));
    let j = json(&out);
    assert_eq!(j["termination"]["code"], 0, "{j}");
    assert!(
        j["stdout"]["text"]
            .as_str()
            .unwrap()
            .contains("hello from hello"),
        "{j}"
    );
    // In /tmp itself: refused, with the reason.
    let in_tmp = format!("/tmp/mccbuild-sandbox-command-{}", std::process::id());
    write_exec(Path::new(&in_tmp), "#!/bin/sh\necho hi\n");
    let out = mccbuild_in(Path::new(REPO), &["sandbox", "--", &in_tmp]);
    let _ = fs::remove_file(&in_tmp);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("private") && stderr(&out).contains(&in_tmp),
        "{}",
        stderr(&out)
    );
}

/// docs/execution.md: a command that executes nothing reclaims nothing and says nothing of it;
/// one that executes a run reclaims what dead mccbuild processes left and says so once, after
/// its runs. A dead owner's working folder in a temporary folder of the test's own (`TMPDIR`:
/// no other mccbuild on the machine reclaims it meanwhile).
#[test]
fn commands_that_execute_nothing_reclaim_nothing() {
    let mut c = TestContest::new();
    c.copy_demo_instance("Philosophers-PT-000002");
    c.model("Philosophers", "known", &["models/Philosophers-PT-000002"]);
    c.scripted_tool("a", "examinations = [\"StateSpace\"]");
    c.answer(
        "a",
        "Philosophers-PT-000002",
        "StateSpace",
        "STATE_SPACE STATES 9\nSTATE_SPACE TRANSITIONS 24\nSTATE_SPACE MAX_TOKEN_IN_PLACE 1\nSTATE_SPACE MAX_TOKEN_PER_MARKING 3\n",
    );
    c.write("time_s = 10\nmemory_mb = 512");
    assert!(c.mccbuild(&["run"]).status.success());
    let tmp = tempfile::tempdir().unwrap();
    let dead = tmp.path().join("mccbuild-0123456789abcdef-999999999.5-0");
    fs::create_dir_all(dead.join("home")).unwrap();
    let in_tmp = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_mccbuild"))
            .args(args)
            .current_dir(c.path())
            .env_remove("MCCBUILD_SANDBOX")
            .env("TMPDIR", tmp.path())
            .output()
            .unwrap()
    };
    let site = c.path().join("site");
    for args in [
        &["check"][..],
        &["plan"],
        &["run"],
        &["scores"],
        &["explain", "--tool", "a", "--category", "StateSpace"],
        &["report", "--out", site.to_str().unwrap()],
        &["export", "--json", "-"],
    ] {
        let out = in_tmp(args);
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        assert!(dead.exists(), "{args:?} reclaimed a folder");
        assert!(
            !stderr(&out).contains("removed"),
            "{args:?}: {}",
            stderr(&out)
        );
    }
    // A run executed: the folder goes, said once, after the runs' summary.
    fs::remove_dir_all(c.path().join("cache")).unwrap();
    let out = in_tmp(&["run"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!dead.exists());
    let err = stderr(&out);
    let note = "note: removed 1 working folder left by mccbuild processes that died";
    assert_eq!(err.matches(note).count(), 1, "{err}");
    assert!(err.find(note) > err.find("1 executed"), "{err}");
}
