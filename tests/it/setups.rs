//! Tools' setups under faults: `kill -9` of mccbuild in the middle of a setup (the setup dies
//! with it, the next `run` sets up again from nothing, and the products hold one setup's work),
//! and SIGTERM or SIGINT during a long setup (mccbuild stops at once and says "interrupted").
//! docs/cache.md, "Tool setups". Needs no root: setups run outside the sandbox.

use std::fs;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::*;

/// A contest on the demo's smallest instance with one tool `t` whose setup is `setup` (a
/// script, `setup.sh`) and which answers DO_NOT_COMPETE to StateSpace.
fn contest_with_setup(setup: &str) -> TestContest {
    let mut c = TestContest::new();
    c.copy_demo_instance("Philosophers-PT-000002");
    c.model("Philosophers", "known", &["models/Philosophers-PT-000002"]);
    let dir = c.script_tool(
        "t",
        "#!/bin/sh\necho DO_NOT_COMPETE\n",
        "setup = \"./setup.sh\"\nexaminations = [\"StateSpace\"]",
    );
    write_exec(&dir.join("setup.sh"), setup);
    c.write("time_s = 30\nmemory_mb = 256");
    c
}

/// `mccbuild run` started in the contest, in a process group of its own (as a shell's job: a
/// terminal's Ctrl-C goes to that group).
fn start_run(c: &TestContest, output: Stdio) -> Child {
    Command::new(env!("CARGO_BIN_EXE_mccbuild"))
        .arg("run")
        .current_dir(c.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(output)
        .process_group(0)
        .spawn()
        .expect("mccbuild starts")
}

/// Waits until `done` holds, at most `patience`; whether it did.
fn wait_for(patience: Duration, mut done: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < patience {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    done()
}

/// The folders of `cache/tools/<digest>/` matching `prefix` (e.g. `attempt-`).
fn in_tools(c: &TestContest, prefix: &str) -> Vec<PathBuf> {
    let tools = c.path().join("cache").join("tools");
    fs::read_dir(&tools)
        .into_iter()
        .flatten()
        .flatten()
        .flat_map(|d| fs::read_dir(d.path()).into_iter().flatten().flatten())
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(prefix))
        })
        .collect()
}

fn lines(path: &Path) -> Vec<String> {
    fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

/// `kill -9` of mccbuild while a setup writes its products line by line: the setup dies with
/// it (no process of it left), the next `run` sets up again from nothing, and the products the
/// runs get hold the five lines of one setup only.
#[test]
fn a_setup_killed_with_mccbuild_dies_and_the_next_run_sets_up_from_nothing() {
    let c = contest_with_setup(
        "#!/bin/sh\nfor i in 1 2 3 4 5; do\n  echo \"line $i of setup $$\" >> \"$BK_BIN_PATH/products\"\n  sleep 0.3\ndone\n",
    );
    let mut first = start_run(&c, Stdio::null());
    let written = |c: &TestContest| {
        in_tools(c, "attempt-")
            .iter()
            .map(|a| lines(&a.join("bin").join("products")).len())
            .max()
            .unwrap_or(0)
    };
    assert!(
        wait_for(Duration::from_secs(30), || written(&c) >= 2),
        "the setup never wrote its second line"
    );
    first.kill().unwrap();
    first.wait().unwrap();
    let killed_at = Instant::now();
    let gone = wait_for(Duration::from_secs(3), || {
        setup_processes(c.path()).is_empty()
    });
    assert!(
        gone,
        "the setup outlived its mccbuild: {:?}",
        setup_processes(c.path())
    );
    eprintln!(
        "the setup's processes were gone {:?} after mccbuild's kill",
        killed_at.elapsed()
    );
    assert!(
        !c.path().join("cache/tools").read_dir().unwrap().any(|d| d
            .unwrap()
            .path()
            .join("bin")
            .exists()),
        "a half-made setup is never in place"
    );

    let out = c.mccbuild(&["run", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(json(&out)["executed"], 1, "{}", stderr(&out));
    assert_eq!(in_tools(&c, "attempt-"), Vec::<PathBuf>::new());
    let bins = in_tools(&c, "bin");
    assert_eq!(bins.len(), 1, "{bins:?}");
    let products = lines(&bins[0].join("products"));
    assert_eq!(products.len(), 5, "one setup's lines: {products:?}");
    let setups: std::collections::BTreeSet<&str> = products
        .iter()
        .filter_map(|l| l.rsplit_once(' ').map(|(_, pid)| pid))
        .collect();
    assert_eq!(setups.len(), 1, "lines of two setups: {products:?}");
    assert!(setup_processes(c.path()).is_empty());
}

/// SIGTERM (to mccbuild) and SIGINT (to its process group, as a terminal's Ctrl-C) during a
/// setup that would take 30 s: mccbuild stops within 2 s, exits 130, says "interrupted" and
/// not that the setup failed, and leaves no process of the setup.
#[test]
fn sigterm_or_ctrl_c_during_a_setup_stops_at_once_and_says_interrupted() {
    let c = contest_with_setup("#!/bin/sh\necho setting up\nsleep 30\necho never\n");
    for (name, signal, to_group) in [
        ("SIGTERM", libc::SIGTERM, false),
        ("SIGINT", libc::SIGINT, true),
    ] {
        let child = start_run(&c, Stdio::piped());
        assert!(
            wait_for(Duration::from_secs(30), || !setup_processes(c.path())
                .is_empty()),
            "{name}: the setup never started"
        );
        let pid = child.id() as i32;
        let sent = Instant::now();
        // SAFETY: signals to our own child (not reaped) or to its own process group.
        unsafe { libc::kill(if to_group { -pid } else { pid }, signal) };
        let out = child.wait_with_output().unwrap();
        let took = sent.elapsed();
        let err = stderr(&out);
        eprintln!("{name}: mccbuild exited {took:?} after the signal");
        assert!(
            took < Duration::from_secs(2),
            "{name}: exited after {took:?}: {err}"
        );
        assert_eq!(out.status.code(), Some(130), "{name}: {err}");
        assert!(err.contains("interrupted"), "{name}: {err}");
        assert!(!err.contains("failed"), "{name}: {err}");
        assert!(
            wait_for(Duration::from_secs(1), || setup_processes(c.path())
                .is_empty()),
            "{name}: setup processes left: {:?}",
            setup_processes(c.path())
        );
        assert_eq!(in_tools(&c, "attempt-"), Vec::<PathBuf>::new(), "{name}");
        assert_eq!(in_tools(&c, "bin"), Vec::<PathBuf>::new(), "{name}");
    }
}
