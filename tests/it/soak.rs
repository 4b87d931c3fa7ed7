//! Faults injected into `mccbuild run`: random `kill -9` and SIGHUP with slow and
//! CPU-bound tools in flight (and, in the first rounds, a tool's setup), a closed output pipe (`mccbuild run 2>&1 | head -1`), and a tool
//! that signals itself. Asserts what docs/execution.md promises: no record lost or torn, no run
//! killed by the infrastructure recorded, no tool process alive 5 s after mccbuild's death, no
//! working folder or cgroup of a dead mccbuild left after the next start, and a rerun of exactly
//! the missing runs. Needs root (cgroups and namespaces): CI has it; elsewhere it skips with a
//! printed reason.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::*;

/// Whether `mccbuild sandbox` isolates here (root, cgroups, namespaces).
fn isolated() -> bool {
    let out = mccbuild_in(Path::new(REPO), &["sandbox", "--json", "--", "/bin/true"]);
    let sandbox = if out.status.success() {
        json(&out)["sandbox"].as_str().unwrap_or("").to_string()
    } else {
        stderr(&out)
    };
    if sandbox != "cgroup+namespaces" {
        skip(&format!(
            "runs are not isolated here ({sandbox}): needs root, cgroups and namespaces"
        ));
        return false;
    }
    true
}

/// The six examinations that need no formula file.
const EXAMS: [&str; 6] = [
    "StateSpace",
    "ReachabilityDeadlock",
    "QuasiLiveness",
    "StableMarking",
    "Liveness",
    "OneSafe",
];

fn exam_list() -> String {
    let list: Vec<String> = EXAMS.iter().map(|e| format!("\"{e}\"")).collect();
    format!("examinations = [{}]", list.join(", "))
}

/// A contest on the demo's smallest instance with the given (name, script) tools.
fn contest(tools: &[(&str, &str)], limits: &str) -> TestContest {
    let mut c = TestContest::new();
    c.copy_demo_instance("Philosophers-PT-000002");
    c.model("Philosophers", "known", &["models/Philosophers-PT-000002"]);
    for (name, script) in tools {
        c.script_tool(name, script, &exam_list());
    }
    c.write(limits);
    c
}

/// `mccbuild <args>` in the contest, its core reservations in `locks` (docs/execution.md): a
/// folder of the test's own, shared by the mccbuild processes of one test (the two contests of
/// `two_contests_at_once_never_share_a_core` must see each other's) but not by the other
/// programs of the machine, whose contests would make these runs wait for their cores (for
/// seconds, on a machine where other contests run: the runs were then not in flight when the
/// tests signal mccbuild).
fn mccbuild_command(c: &TestContest, locks: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mccbuild"));
    command
        .args(args)
        .current_dir(c.path())
        .env_remove("MCCBUILD_SANDBOX")
        .env("MCCBUILD_CORE_LOCKS", locks)
        // Every `run` that ends packs the loose records (docs/cache.md, "Packs"): the kills
        // land on packings too, and the records must survive them as well.
        .env("MCCBUILD_PACK_AFTER", "1");
    command
}

fn start_run(c: &TestContest, locks: &Path, args: &[&str]) -> Child {
    mccbuild_command(c, locks, &[&["run"], args].concat())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("mccbuild starts")
}

/// The `mccbuild` folders of this process's cgroups (where mccbuild makes its runs' groups).
fn cgroup_folders() -> Vec<PathBuf> {
    let text = fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let mut found = Vec::new();
    for line in text.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next(), parts.next(), parts.next());
        let (Some(controllers), Some(path)) = (controllers, path) else {
            continue;
        };
        let path = path.trim_start_matches('/');
        let roots: Vec<PathBuf> = if controllers.is_empty() {
            vec!["/sys/fs/cgroup/unified".into(), "/sys/fs/cgroup".into()]
        } else {
            vec![Path::new("/sys/fs/cgroup").join(controllers)]
        };
        for root in roots {
            let dir = root.join(path).join("mccbuild");
            if dir.is_dir() {
                found.push(dir);
            }
        }
    }
    found
}

/// Working folders and cgroups left by the mccbuild process `pid`.
fn leftovers_of(pid: u32) -> Vec<PathBuf> {
    // An owner tag is one `-`-separated part `<pid>.<start>`, both numbers (crates/exec's
    // owner.rs); a file named `...-contest-2023.json` is not one.
    let owned_by_pid = |name: &str| {
        name.split('-').any(|part| {
            part.split_once('.').is_some_and(|(p, start)| {
                p == pid.to_string()
                    && !start.is_empty()
                    && start.bytes().all(|b| b.is_ascii_digit())
            })
        })
    };
    let mut left = Vec::new();
    let mut look = |dir: &Path| {
        for entry in fs::read_dir(dir).into_iter().flatten().flatten() {
            if owned_by_pid(&entry.file_name().to_string_lossy()) {
                left.push(entry.path());
            }
        }
    };
    look(&std::env::temp_dir());
    for dir in cgroup_folders() {
        look(&dir);
    }
    left
}

/// Every record file of the store parses (none torn); their keys.
fn record_keys(c: &TestContest) -> Vec<String> {
    let mut keys: Vec<String> = c
        .records()
        .iter()
        .map(|r| {
            assert_eq!(
                r["termination"]["reason"], "exit",
                "only runs that ended by themselves are recorded: {r}"
            );
            format!("{}/{}/{}", r["tool"], r["instance"], r["examination"])
        })
        .collect();
    keys.sort();
    keys
}

/// The live processes of the runs of the mccbuild process `pid`: the members of its runs'
/// cgroups (the waiter, the init and the tool of each run and all the tool started: nothing
/// leaves a cgroup without a capability the runs do not have) and, should anything have left
/// them, every process whose environment names one of its runs' folders (HOME, TMPDIR and the
/// BK_* folders of each run are in `mccbuild-<key>-<pid>.<start>-<n>`). Not the environment of
/// the contest: since BK_BIN_PATH is the run's own folder, no run's environment names it.
fn run_processes_of(pid: u32) -> Vec<String> {
    let mut members: Vec<String> = leftovers_of(pid)
        .iter()
        .filter(|p| !p.starts_with(std::env::temp_dir()))
        .filter_map(|dir| fs::read_to_string(dir.join("cgroup.procs")).ok())
        .flat_map(|procs| procs.lines().map(str::to_string).collect::<Vec<_>>())
        .collect();
    let folder = format!("-{pid}.");
    let me = std::process::id().to_string();
    for entry in fs::read_dir("/proc").unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.chars().all(|c| c.is_ascii_digit()) || name == me {
            continue;
        }
        if let Ok(env) = fs::read(entry.path().join("environ")) {
            if env
                .split(|b| *b == 0)
                .map(String::from_utf8_lossy)
                .any(|var| var.contains("/mccbuild-") && var.contains(&folder))
            {
                members.push(name);
            }
        }
    }
    members.sort();
    members.dedup();
    members
        .into_iter()
        .filter(|pid| !dead(pid))
        .map(|pid| {
            let stat = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let status = fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
            let pending: Vec<&str> = status
                .lines()
                .filter(|l| l.starts_with("SigPnd") || l.starts_with("ShdPnd"))
                .collect();
            let wchan = fs::read_to_string(format!("/proc/{pid}/wchan")).unwrap_or_default();
            format!("{pid}: {} {pending:?} wchan {wchan}", stat.trim())
        })
        .collect()
}

/// Waits until no process of the runs of the mccbuild process `pid` is alive, at most
/// `patience`: what is left then, and how long it took.
fn wait_runs_gone(pid: u32, patience: Duration) -> (Vec<String>, Duration) {
    let start = Instant::now();
    loop {
        let left = run_processes_of(pid);
        if left.is_empty() || start.elapsed() >= patience {
            return (left, start.elapsed());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Polls `left` until it is empty, at most `patience`: what is left then.
fn wait_for_none(patience: Duration, left: impl Fn() -> Vec<String>) -> Vec<String> {
    let start = Instant::now();
    loop {
        let now = left();
        if now.is_empty() || start.elapsed() >= patience {
            return now;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A process that has ended (a zombie, or gone): it stays listed in its cgroups until its new
/// parent reaps it, which the machine's process 1 may do only from time to time (here a
/// `process_api` that reaps every few seconds). It uses no CPU and holds no memory: not alive.
fn dead(pid: &str) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state is the first field after the command's closing parenthesis.
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with(['Z', 'X'])),
        Err(_) => true,
    }
}

/// The tests of this file one at a time: they kill, time and count processes.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// Tiny pseudo-random numbers (xorshift), seeded from the clock and printed for a replay.
struct Rng(u64);
impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

#[test]
fn random_kills_of_run_lose_nothing_and_leave_nothing() {
    let _serial = serial();
    if !isolated() {
        return;
    }
    let locks = tempfile::tempdir().unwrap();
    let slow = "#!/bin/sh\nsleep 1.5\necho DO_NOT_COMPETE\n";
    let busy =
        "#!/bin/sh\ni=0\nwhile [ $i -lt 150000 ]; do i=$((i+1)); done\necho DO_NOT_COMPETE\n";
    let mut c = contest(
        &[
            ("slow1", slow),
            ("slow2", slow),
            ("slow3", slow),
            ("busy1", busy),
            ("busy2", busy),
            ("busy3", busy),
        ],
        "time_s = 20\nmemory_mb = 256",
    );
    // A tool whose setup writes five lines 0.25 s apart: the first rounds kill it mid-setup.
    let built = c.script_tool(
        "built",
        "#!/bin/sh\necho DO_NOT_COMPETE\n",
        &format!("setup = \"./setup.sh\"\n{}", exam_list()),
    );
    write_exec(
        &built.join("setup.sh"),
        "#!/bin/sh\nfor i in 1 2 3 4 5; do\n  echo \"line $i of setup $$\" >> \"$BK_BIN_PATH/products\"\n  sleep 0.25\ndone\n",
    );
    c.write("time_s = 20\nmemory_mb = 256");
    let setup_writing = |c: &TestContest| {
        fs::read_dir(c.path().join("cache/tools"))
            .into_iter()
            .flatten()
            .flatten()
            .flat_map(|d| fs::read_dir(d.path()).into_iter().flatten().flatten())
            .any(|a| {
                a.file_name().to_string_lossy().starts_with("attempt-")
                    && a.path().join("bin/products").exists()
            })
    };
    let total = 7 * EXAMS.len();
    let seed = std::env::var("MCCBUILD_SOAK_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
                | 1
        });
    eprintln!("soak seed {seed} (MCCBUILD_SOAK_SEED={seed} replays it)");
    let mut rng = Rng(seed);
    let mut killed: Vec<u32> = Vec::new();
    let mut recorded = record_keys(&c);
    let (mut kills, mut hangups) = (0, 0);
    let mut slowest = Duration::ZERO;
    let mut in_flight = 0;
    let mut in_setup = 0;
    for round in 0..22 {
        let mut child = start_run(&c, locks.path(), &["--jobs", "2"]);
        let pid = child.id();
        let started = Instant::now();
        if round < 3 {
            // While the setup writes its products (it starts again from nothing each time).
            while !setup_writing(&c)
                && started.elapsed() < Duration::from_secs(15)
                && child.try_wait().unwrap().is_none()
            {
                std::thread::sleep(Duration::from_millis(10));
            }
            std::thread::sleep(Duration::from_millis(rng.below(800)));
        } else if rng.below(4) == 0 {
            // Early, while mccbuild starts (before its handlers, its first runs).
            std::thread::sleep(Duration::from_millis(100 + rng.below(900)));
        } else {
            // Once runs are in flight (mccbuild may take seconds to start on a loaded
            // machine), at a random moment of their lives.
            while run_processes_of(pid).is_empty()
                && started.elapsed() < Duration::from_secs(15)
                && child.try_wait().unwrap().is_none()
            {
                std::thread::sleep(Duration::from_millis(20));
            }
            std::thread::sleep(Duration::from_millis(rng.below(2000)));
        }
        let hangup = rng.below(2) == 0;
        // Runs are in flight when the signal comes (else the round proves little).
        if !run_processes_of(pid).is_empty() {
            in_flight += 1;
        }
        if !setup_processes(c.path()).is_empty() {
            in_setup += 1;
        }
        // Not to a child already reaped (finished: its PID may be reused).
        let signalled = child.try_wait().unwrap().is_none();
        if signalled {
            // SAFETY: a signal to our own child, not reaped yet (at worst a zombie).
            unsafe {
                libc::kill(
                    pid as i32,
                    if hangup { libc::SIGHUP } else { libc::SIGKILL },
                )
            };
        }
        let status = child.wait().unwrap();
        if !signalled {
            assert!(status.success(), "round {round}: {status:?}");
        } else if hangup {
            hangups += 1;
            // Interrupted (130), finished before the signal came (0), or still starting (no
            // handler yet, no run started: killed by SIGHUP).
            use std::os::unix::process::ExitStatusExt;
            assert!(
                matches!(status.code(), Some(130) | Some(0))
                    || status.signal() == Some(libc::SIGHUP),
                "round {round}: SIGHUP gave {status:?}"
            );
        } else {
            kills += 1;
        }
        killed.push(pid);
        let (left, took) = wait_runs_gone(pid, Duration::from_secs(5));
        slowest = slowest.max(took);
        assert!(
            left.is_empty(),
            "round {round} ({}): tool processes alive 5 s after mccbuild's death: {left:?}",
            if hangup { "SIGHUP" } else { "kill -9" }
        );
        let setup_left = wait_for_none(Duration::from_secs(5), || setup_processes(c.path()));
        assert!(
            setup_left.is_empty(),
            "round {round}: setup processes alive 5 s after mccbuild's death: {setup_left:?}"
        );
        let now = record_keys(&c);
        for key in &recorded {
            assert!(now.contains(key), "round {round}: record {key} lost");
        }
        recorded = now;
    }
    eprintln!(
        "{kills} kill -9 and {hangups} SIGHUP, {in_flight} with runs in flight, {in_setup} \
         during the setup; the runs' processes were gone {slowest:?} after the signal at the slowest; {} of {total} runs \
         recorded before the last run",
        recorded.len()
    );
    assert!(kills + hangups >= 20, "signals sent: {kills} + {hangups}");
    assert!(
        in_flight >= 11,
        "runs were in flight at only {in_flight} of 22 signals: the soak proves little"
    );
    // The next run does exactly the missing runs, and reclaims what the dead left.
    let out = mccbuild_command(&c, locks.path(), &["run", "--json", "--jobs", "2"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let outcome = json(&out);
    assert_eq!(
        outcome["executed"].as_u64(),
        Some((total - recorded.len()) as u64),
        "{outcome}"
    );
    assert_eq!(
        outcome["cached"].as_u64(),
        Some(recorded.len() as u64),
        "{outcome}"
    );
    assert_eq!(record_keys(&c).len(), total);
    assert!(
        in_setup >= 2,
        "only {in_setup} signals came during the setup"
    );
    // The setup's products are those of one setup, whole.
    let products: Vec<String> = fs::read_dir(c.path().join("cache/tools"))
        .unwrap()
        .flatten()
        .filter_map(|d| fs::read_to_string(d.path().join("bin/products")).ok())
        .flat_map(|t| t.lines().map(str::to_string).collect::<Vec<_>>())
        .collect();
    assert_eq!(products.len(), 5, "{products:?}");
    assert!(
        products
            .iter()
            .all(|l| l.rsplit(' ').next() == products[0].rsplit(' ').next()),
        "lines of two setups: {products:?}"
    );
    for pid in killed {
        assert_eq!(leftovers_of(pid), Vec::<PathBuf>::new(), "left by {pid}");
    }
}

/// `mccbuild run 2>&1 | head -1`: when `head` goes, the runs in flight are stopped at once (not
/// at the next line mccbuild writes), not recorded, and cleaned up.
#[test]
fn a_closed_output_pipe_stops_the_runs_like_sigterm() {
    let _serial = serial();
    if !isolated() {
        return;
    }
    let locks = tempfile::tempdir().unwrap();
    let c = contest(
        &[("sleeper", "#!/bin/sh\nsleep 60\necho DO_NOT_COMPETE\n")],
        "time_s = 100\nmemory_mb = 256",
    );
    // The test is the reader (`head -1`): it takes the first line, keeps the pipe open until
    // the runs are in flight (however long mccbuild takes to start them on a loaded machine),
    // then goes.
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills two fds, owned from here on.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    // SAFETY: the two descriptors pipe2 just made, owned by nothing else.
    let (reader, writer) = unsafe {
        use std::os::fd::{FromRawFd, OwnedFd};
        (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1]))
    };
    let started = Instant::now();
    let mut run = mccbuild_command(&c, locks.path(), &["run", "--jobs", "2"])
        .stdin(Stdio::null())
        .stdout(Stdio::from(writer.try_clone().unwrap()))
        .stderr(Stdio::from(writer))
        .spawn()
        .unwrap();
    let mut reader = fs::File::from(reader);
    let mut first_line = Vec::new();
    let mut byte = [0u8];
    while first_line.last() != Some(&b'\n') {
        use std::io::Read;
        match reader.read(&mut byte).unwrap() {
            0 => panic!("mccbuild ended before its first line"),
            _ => first_line.push(byte[0]),
        }
    }
    while run_processes_of(run.id()).is_empty() && started.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        !run_processes_of(run.id()).is_empty(),
        "the runs are in flight when the pipe closes"
    );
    drop(reader);
    let closed = Instant::now();
    let status = loop {
        if let Some(status) = run.try_wait().unwrap() {
            break status;
        }
        if closed.elapsed() > Duration::from_secs(30) {
            let _ = run.kill();
            panic!("mccbuild kept running its runs after its output pipe closed");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(130), "interrupted");
    assert!(
        closed.elapsed() < Duration::from_secs(5),
        "stopped when the pipe closed, not at the next line: {:?}",
        closed.elapsed()
    );
    assert_eq!(
        wait_runs_gone(run.id(), Duration::from_secs(5)).0,
        Vec::<String>::new()
    );
    assert!(c.records().is_empty(), "runs stopped are not recorded");
    assert_eq!(leftovers_of(run.id()), Vec::<PathBuf>::new());
}

/// A tool whose watchdog kills it (`kill -TERM $$`, `kill -9 $$`) dies at once, as on the
/// MCC's VMs, and its record says so: a signal, not a CPU time-out at the limit.
#[test]
fn a_tool_signalling_itself_dies_at_once() {
    let _serial = serial();
    if !isolated() {
        return;
    }
    let locks = tempfile::tempdir().unwrap();
    let script = r#"#!/bin/sh
case "$BK_EXAMINATION" in
StateSpace) (sleep 1; kill -TERM $$) & ;;
ReachabilityDeadlock) (sleep 1; kill -9 $$) & ;;
QuasiLiveness) trap 'echo GOT TERM; exit 3' TERM; (sleep 1; kill -TERM $$) & ;;
*) echo DO_NOT_COMPETE; exit 0 ;;
esac
while :; do :; done
"#;
    let c = contest(&[("watchdog", script)], "time_s = 20\nmemory_mb = 256");
    let started = Instant::now();
    let out = mccbuild_command(&c, locks.path(), &["run", "--jobs", "2"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
    for (exam, termination) in [
        (
            "StateSpace",
            serde_json::json!({"reason": "signal", "signal": 15}),
        ),
        (
            "ReachabilityDeadlock",
            serde_json::json!({"reason": "signal", "signal": 9}),
        ),
        (
            "QuasiLiveness",
            serde_json::json!({"reason": "exit", "code": 3}),
        ),
    ] {
        let r = c.record("watchdog", "Philosophers-PT-000002", exam);
        assert_eq!(r["termination"], termination, "{exam}: {r}");
        let wall = r["wall_time_s"].as_f64().unwrap();
        assert!((0.9..5.0).contains(&wall), "{exam}: ended at ~1 s: {wall}");
        let cpu = r["cpu_time_s"].as_f64().unwrap();
        assert!(cpu < 5.0, "{exam}: not a CPU time-out: {cpu}");
    }
    let r = c.record("watchdog", "Philosophers-PT-000002", "QuasiLiveness");
    assert!(
        r["stdout"]["text"].as_str().unwrap().contains("GOT TERM"),
        "{r}"
    );
}

/// Two contests on different stores, run at once: no two of their runs ever use one core at the
/// same time (rule E-5.5 across mccbuild processes: cores are reserved machine-wide).
#[test]
fn two_contests_at_once_never_share_a_core() {
    let _serial = serial();
    if !isolated() {
        return;
    }
    let locks = tempfile::tempdir().unwrap();
    let script = "#!/bin/sh\necho \"FROM $(date +%s.%N)\"\nsleep 0.7\necho \"TO $(date +%s.%N)\"\necho DO_NOT_COMPETE\n";
    let a = contest(&[("a", script)], "time_s = 20\nmemory_mb = 256");
    let b = contest(&[("b", script)], "time_s = 20\nmemory_mb = 256");
    let runs: Vec<Child> = [&a, &b]
        .iter()
        .map(|c| start_run(c, locks.path(), &["--jobs", "2"]))
        .collect();
    for mut run in runs {
        assert!(run.wait().unwrap().success());
    }
    // (contest, cores, from, to) of every run.
    let mut spans = Vec::new();
    for (name, c) in [("a", &a), ("b", &b)] {
        for r in c.records() {
            let text = r["stdout"]["text"].as_str().unwrap().to_string();
            let time = |tag: &str| -> f64 {
                text.lines()
                    .find_map(|l| l.strip_prefix(tag))
                    .and_then(|t| t.trim().parse().ok())
                    .unwrap_or_else(|| panic!("{r}"))
            };
            let cores: Vec<u64> = r["cores"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c.as_u64().unwrap())
                .collect();
            spans.push((name, cores, time("FROM "), time("TO ")));
        }
    }
    assert_eq!(spans.len(), 2 * EXAMS.len());
    for x in &spans {
        for y in &spans {
            if x.0 != y.0 && x.1.iter().any(|c| y.1.contains(c)) {
                assert!(
                    x.3 <= y.2 || y.3 <= x.2,
                    "runs of two contests on one core at once: {x:?} {y:?}"
                );
            }
        }
    }
}

/// docs/execution.md, "Sandboxes": in the fallback (no cgroups) a tool's process that outlives
/// a `kill -9` of mccbuild (here a busy loop in the background) is ended by its CPU-time
/// backstop, also under a wall-clock limit (`time = "wall"`, the MCC's editions): the limit
/// times the run's cores, plus 1 s (here 2 s x 1 core + 1 s), not 136 years.
#[test]
fn the_fallback_backstop_ends_an_orphan_under_a_wall_clock_limit() {
    let _serial = serial();
    let locks = tempfile::tempdir().unwrap();
    let pid_file = locks.path().join("busy.pid");
    let mut c = TestContest::new();
    c.copy_demo_instance("Philosophers-PT-000002");
    c.model("Philosophers", "known", &["models/Philosophers-PT-000002"]);
    c.script_tool(
        "orphaner",
        &format!(
            "#!/bin/sh\n( while :; do :; done ) &\necho $! > {}\nsleep 30\necho DO_NOT_COMPETE\n",
            pid_file.display()
        ),
        "examinations = [\"StateSpace\"]\nuser = \"root\"",
    );
    // The edition (MCC 2026) limits the wall clock: `time = "wall"`.
    c.write("time_s = 2\nmemory_mb = 256");
    let mut run = mccbuild_command(&c, locks.path(), &["run"])
        .env("MCCBUILD_SANDBOX", "fallback")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let busy = loop {
        if let Some(pid) = fs::read_to_string(&pid_file)
            .ok()
            .and_then(|t| t.trim().parse::<i32>().ok())
        {
            break pid;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30) && run.try_wait().unwrap().is_none(),
            "the tool never started its busy loop"
        );
        std::thread::sleep(Duration::from_millis(5));
    };
    run.kill().unwrap();
    run.wait().unwrap();
    let killed = Instant::now();
    let alive = |pid: i32| !dead(&pid.to_string());
    assert!(
        alive(busy),
        "the busy loop outlives mccbuild (else this proves nothing)"
    );
    let cpu_s = |pid: i32| {
        let stat = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let fields: Vec<&str> = stat
            .rsplit_once(')')
            .map_or(vec![], |(_, rest)| rest.split_whitespace().collect());
        // utime and stime: fields 14 and 15, the 12th and 13th after the command.
        let ticks: u64 = fields
            .iter()
            .skip(11)
            .take(2)
            .filter_map(|f| f.parse::<u64>().ok())
            .sum();
        ticks as f64 / 100.0
    };
    let mut last_cpu = 0.0;
    while alive(busy) && killed.elapsed() < Duration::from_secs(90) {
        last_cpu = cpu_s(busy);
        std::thread::sleep(Duration::from_millis(50));
    }
    let left = alive(busy);
    if left {
        // SAFETY: a signal to the test's own orphan (alive: checked just above).
        unsafe { libc::kill(busy, libc::SIGKILL) };
    }
    eprintln!(
        "the orphan ended {:?} after mccbuild's death, at {last_cpu:.2} s of CPU",
        killed.elapsed()
    );
    assert!(
        !left,
        "the orphan ran on past its backstop ({last_cpu:.2} s of CPU)"
    );
    assert!(last_cpu <= 2.0 * 1.0 + 1.0 + 5.0, "{last_cpu} s of CPU");
}
