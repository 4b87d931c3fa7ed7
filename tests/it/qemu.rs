//! The QEMU executor end to end (docs/execution.md, "QEMU executor"): the real `mccbuild`
//! binary runs contests whose runs boot the kernel-kind guest of scripts/guest-kernel (TCG here;
//! KVM where a probe boot shows it works). Without qemu-system-x86_64 the tests skip, and fail
//! in CI. Each test checks that no QEMU process of its mccbuild is left.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

use crate::common::*;

/// The kernel-kind guest (built once per test process by scripts/guest-kernel, which returns
/// at once when it is up to date), or None when QEMU or the guest cannot be had.
fn guest() -> Option<&'static (PathBuf, PathBuf)> {
    static GUEST: OnceLock<Result<(PathBuf, PathBuf), String>> = OnceLock::new();
    let built = GUEST.get_or_init(|| {
        let qemu = Command::new("qemu-system-x86_64").arg("--version").output();
        if !qemu.is_ok_and(|o| o.status.success()) {
            return Err(
                "qemu-system-x86_64 is not installed (.ci/run installs it from bookworm-backports)"
                    .into(),
            );
        }
        let dir = Path::new(REPO).join("target/qemu-guest");
        let out = Command::new(Path::new(REPO).join("scripts/guest-kernel"))
            .arg(&dir)
            .output()
            .map_err(|e| format!("cannot run scripts/guest-kernel: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "scripts/guest-kernel failed: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        Ok((dir.join("vmlinux"), dir.join("initrd.gz")))
    });
    match built {
        Ok(g) => Some(g),
        Err(reason) => {
            skip(reason);
            None
        }
    }
}

/// `[executor]` for the kernel-kind guest.
fn qemu_executor(extra: &str) -> String {
    let (kernel, initrd) = guest().expect("guest checked first");
    format!(
        "[executor]\nkind = \"qemu\"\njobs = 2\n\n[executor.qemu]\nkernel = \"{}\"\ninitrd = \"{}\"\n{extra}\n",
        kernel.display(),
        initrd.display()
    )
}

/// Runs mccbuild in `dir`; afterwards no QEMU process started by it may be alive (its VMs'
/// command lines name their run folders `mccbuild-vm-<key>-<mccbuild's pid>-<n>`).
fn mccbuild_checked(dir: &Path, args: &[&str]) -> Output {
    let child = Command::new(env!("CARGO_BIN_EXE_mccbuild"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("mccbuild runs");
    let pid = child.id();
    let out = child.wait_with_output().expect("mccbuild ends");
    let marker = format!("-{pid}-");
    let mut stray = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmdline.contains("qemu-system")
            && cmdline.contains("mccbuild-vm-")
            && cmdline.contains(&marker)
        {
            stray.push(format!(
                "{}: {cmdline}",
                entry.file_name().to_string_lossy()
            ));
        }
    }
    assert!(
        stray.is_empty(),
        "QEMU processes left by mccbuild {pid}: {stray:?}"
    );
    out
}

fn rules() -> String {
    format!("{REPO}/rules/mcc-2026.toml")
}

/// A contest of one script tool on one demo instance, in the kernel-kind guest.
fn script_contest(script: &str, limits: &str, qemu_extra: &str) -> TestContest {
    let c = TestContest::new();
    copy_dir(
        &Path::new(REPO).join("models/Deadlock-PT-1"),
        &c.path().join("models/Deadlock-PT-1"),
    );
    write_exec_dir(&c.path().join("tools/t/BenchKit_head.sh"), script);
    std::fs::write(
        c.path().join("contest.toml"),
        format!(
            "[contest]\nname = \"vm\"\nrules = \"{}\"\n\n{}\n[limits]\n{limits}\n\n[[model]]\nname = \"Deadlock\"\ninstances = [\"models/Deadlock-PT-1\"]\n\n[[tool]]\nname = \"t\"\ndir = \"tools/t\"\nexaminations = [\"ReachabilityDeadlock\"]\n",
            rules(),
            qemu_executor(qemu_extra)
        ),
    )
    .unwrap();
    c
}

fn write_exec_dir(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    write_exec(path, text);
}

fn only_record(c: &TestContest) -> serde_json::Value {
    let records = c.records();
    assert_eq!(records.len(), 1, "{records:?}");
    records.into_iter().next().unwrap()
}

#[test]
fn the_demo_explorer_in_the_kernel_guest_gives_the_local_answers_once() {
    // The numbers of the state space, a verdict without formulas, bounds and CTL verdicts.
    const EXAMS: &str =
        "\"StateSpace\", \"ReachabilityDeadlock\", \"UpperBounds\", \"CTLFireability\"";
    if guest().is_none() {
        return;
    }
    // The demo's instances and explorer, against the repository's store (the explorer's setup
    // is shared with the demo test and `mccbuild run`), once locally and once in VMs.
    let dir = tempfile::tempdir().unwrap();
    let manifest = |executor: &str| {
        format!(
            "[contest]\nname = \"demo in VMs\"\nrules = \"{rules}\"\nstore = \"{REPO}/cache\"\n\n{executor}\n[limits]\ntime_s = 60\nmemory_mb = 2048\n\n[[model]]\nname = \"Philosophers\"\ninstances = [\"{REPO}/models/Philosophers-PT-000003\"]\n\n[[model]]\nname = \"Deadlock\"\ninstances = [\"{REPO}/models/Deadlock-PT-1\"]\n\n[[model]]\nname = \"ProdCons\"\nkind = \"surprise\"\ninstances = [\"{REPO}/models/ProdCons-PT-2\"]\n\n[[tool]]\nname = \"explorer\"\ndir = \"{REPO}/tools/explorer\"\nsetup = \"./setup.sh\"\nexaminations = [{EXAMS}]\n",
            rules = rules()
        )
    };
    let local = dir.path().join("local.toml");
    let vm = dir.path().join("vm.toml");
    std::fs::write(&local, manifest("[executor]\nkind = \"local\"\njobs = 2\n")).unwrap();
    std::fs::write(&vm, manifest(&qemu_executor(""))).unwrap();
    let run = |manifest: &Path| {
        // Four examinations, one of each form of answer, on three of the demo's six instances
        // (a known model, the deadlocking one, the surprise one): 12 runs, each instance's disk
        // holding all its formula files. Each VM run boots a kernel under TCG; more runs would
        // test the explorer again, not the executor (the test submission answers all 13
        // examinations in the guest: `the_test_submission_gives_the_golden_answers_in_the_kernel_guest`).
        let args = ["run", "--json", "--manifest", manifest.to_str().unwrap()];
        let out = mccbuild_checked(dir.path(), &args);
        assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
        json(&out)
    };
    let total = |counts: &serde_json::Value| {
        counts["executed"].as_u64().unwrap() + counts["cached"].as_u64().unwrap()
    };
    let local_counts = run(&local);
    assert_eq!(local_counts["failed"], 0, "{local_counts}");
    let runs = total(&local_counts);
    assert_eq!(
        runs, 12,
        "the explorer's 4 examinations on three instances: {local_counts}"
    );
    let first = run(&vm);
    assert_eq!(first["failed"], 0, "{first}");
    assert_eq!(total(&first), runs, "{first}");
    let second = run(&vm);
    assert_eq!(
        second["executed"], 0,
        "a second run executes nothing: {second}"
    );
    assert_eq!(second["cached"], runs);

    // The VM runs are in the store under their own keys, with the same answers.
    let records = |manifest: &Path| -> BTreeMap<(String, String), serde_json::Value> {
        let mut out = BTreeMap::new();
        for shard in std::fs::read_dir(Path::new(REPO).join("cache/runs"))
            .unwrap()
            .flatten()
        {
            for f in std::fs::read_dir(shard.path()).unwrap().flatten() {
                let Ok(bytes) = std::fs::read(f.path()) else {
                    continue;
                };
                let Ok(r) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
                    continue;
                };
                let is_vm = r["executor"]["kind"] == "qemu";
                let wanted = if manifest == vm {
                    is_vm
                } else {
                    r["executor"]["kind"] == "local"
                };
                let instance = r["instance"].as_str().unwrap_or_default();
                let chosen = ["Philosophers-PT-000003", "Deadlock-PT-1", "ProdCons-PT-2"]
                    .iter()
                    .any(|name| instance.ends_with(name));
                if r["tool"] == "explorer"
                    && wanted
                    && chosen
                    && EXAMS.contains(&format!("\"{}\"", r["examination"].as_str().unwrap_or("")))
                    && r["limits"]["time_s"] == 60
                    && (!is_vm || r["executor"]["kernel"].is_string())
                {
                    out.insert(
                        (
                            r["instance"].as_str().unwrap().to_string(),
                            r["examination"].as_str().unwrap().to_string(),
                        ),
                        r,
                    );
                }
            }
        }
        out
    };
    let in_vm = records(&vm);
    let locally = records(&local);
    assert!(
        in_vm.len() as u64 >= runs && locally.len() as u64 >= runs,
        "{} {}",
        in_vm.len(),
        locally.len()
    );
    let mut compared = 0;
    for (what, l) in &locally {
        let v = &in_vm[what];
        assert_ne!(v["key"], l["key"], "{what:?}: a VM run has its own key");
        assert_eq!(
            v["answers"], l["answers"],
            "{what:?}: the VM's answers are the local ones"
        );
        assert_eq!(v["verdict"], l["verdict"], "{what:?}");
        assert_eq!(v["measurement"], "guest-cgroup-v2");
        assert!(["tcg", "kvm"].contains(&v["vm"]["accel"].as_str().unwrap()));
        assert_eq!(v["vm"]["accel"], v["executor"]["accel"]);
        assert_eq!(v["vm"]["cpu_model"], "Westmere");
        assert_eq!(v["vm"]["memory_mb"], 2048);
        assert!(v["vm"]["qemu_cpu_time_s"].as_f64().unwrap() > 0.0);
        assert!(v["peak_memory_bytes"].as_u64().unwrap() > 0);
        compared += 1;
    }
    assert!(compared as u64 >= runs);
    // Answers were given (not only CANNOT_COMPUTE): the explorer answers each of these runs.
    let answered = in_vm
        .values()
        .filter(|r| r["verdict"] == "answered")
        .count();
    assert_eq!(answered as u64, runs, "runs answered in VMs");
}

#[test]
fn a_guest_that_never_finishes_is_killed_at_the_wall_clock_limit() {
    if guest().is_none() {
        return;
    }
    // The CPU limit is not tiny: under TCG the shell's start costs guest CPU time.
    let c = script_contest(
        "#!/bin/sh\necho started\nexec sleep 100000\n",
        // A CPU limit: the VM's own wall-clock safety net is what this test is about (under
        // `time = "wall"` the host tells the guest's runner to stop the tool).
        "time_s = 3\nmemory_mb = 512\ntime = \"cpu\"",
        // It only adds to the VM's deadline (the kernel guest has no boot to wait for).
        "boot_timeout_s = 1",
    );
    let out = mccbuild_checked(c.path(), &["run", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let r = only_record(&c);
    assert_eq!(r["termination"]["reason"], "wall_limit", "{r}");
    assert!(
        r["vm"]["note"]
            .as_str()
            .unwrap()
            .contains("wall-clock limit"),
        "{r}"
    );
    assert!(
        r["measurement"].as_str().unwrap().starts_with("none"),
        "{r}"
    );
    // Not before the limit: 2 x 3 s + 30 s + 1 s (the VM's wall time, as recorded).
    assert!(r["vm"]["vm_wall_time_s"].as_f64().unwrap() >= 37.0, "{r}");
}

/// The tool's wall time and the wall-clock limit are the host's, whatever the guest's clock
/// does: here the guest's kernel is told a TSC rate several times too low (what its own
/// calibration can find on a loaded host), so its clocks run several times too fast. The tool
/// prints the guest's uptime as it goes: its clock counts far more than the host's limit, yet
/// the tool is stopped at the limit by the host's clock, and the record's wall time is the
/// host's (a guest that measured or enforced by its own clock stops it after `time_s` of its
/// clock, a fraction of that).
#[test]
fn the_wall_time_and_the_wall_clock_limit_are_the_hosts_when_the_guests_clock_runs_fast() {
    if guest().is_none() {
        return;
    }
    let c = script_contest(
        "#!/bin/sh\necho 'FORMULA ReachabilityDeadlock TRUE TECHNIQUES EXPLICIT'\n\
         while :; do read -r up _ < /proc/uptime; echo \"up $up\"; sleep 0.5; done\n",
        "time_s = 4\nmemory_mb = 512\ntime = \"wall\"",
        "kernel_args = \"tsc_early_khz=300000\"",
    );
    let out = mccbuild_checked(c.path(), &["run", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let r = only_record(&c);
    assert_eq!(r["termination"]["reason"], "wall_limit", "{r}");
    assert_eq!(r["measurement"], "guest-cgroup-v2", "{r}");
    assert!(
        r["vm"]["note"].is_null(),
        "stopped by the runner, not the VM killed: {r}"
    );
    let wall = r["wall_time_s"].as_f64().unwrap();
    assert!(
        (4.0..8.0).contains(&wall),
        "the host's wall time: {wall} s; {r}"
    );
    let ups: Vec<f64> = r["stdout"]["text"]
        .as_str()
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_prefix("up ")?.parse().ok())
        .collect();
    let guest_seconds = ups.last().unwrap_or(&0.0) - ups.first().unwrap_or(&0.0);
    assert!(
        guest_seconds > 2.0 * wall,
        "the tool ran {guest_seconds} s of the guest's clock in {wall} s of the host's; with the \
         guest's clock this fast it must have counted more: {r}"
    );
    // The answer printed before the limit counts (E-5.1).
    assert_eq!(r["verdict"], "answered", "{r}");
}

/// The CPU limit inside the guest; then, on the same contest (one VM boot for both checks),
/// `the_guests_kernel_is_in_the_run_key_by_its_content`.
#[test]
fn a_tool_over_its_cpu_limit_is_killed_inside_the_guest() {
    if guest().is_none() {
        return;
    }
    let c = script_contest(
        "#!/bin/sh\necho 'FORMULA ReachabilityDeadlock TRUE TECHNIQUES EXPLICIT'\nwhile :; do :; done\n",
        "time_s = 2\nmemory_mb = 512\ntime = \"cpu\"",
        "",
    );
    let out = mccbuild_checked(c.path(), &["run", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(json(&out)["executed"], 1, "{}", stdout(&out));
    let r = only_record(&c);
    assert_eq!(r["termination"]["reason"], "cpu_limit", "{r}");
    let cpu = r["cpu_time_s"].as_f64().unwrap();
    assert!((2.0..4.0).contains(&cpu), "CPU time {cpu}");
    assert_eq!(r["measurement"], "guest-cgroup-v2");
    // The answer printed before the limit still counts (E-5.1).
    assert_eq!(r["verdict"], "answered", "{r}");
    the_guests_kernel_is_in_the_run_key_by_its_content(&c);
}

/// The guest's kernel is in the run key by its content (scripts/guest-kernel builds it; another
/// build or Debian's kernel is another key): the same bytes at another path keep the contest's
/// one run, one byte more runs it again.
fn the_guests_kernel_is_in_the_run_key_by_its_content(c: &TestContest) {
    let manifest = c.path().join("contest.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    let (kernel, _) = guest().unwrap();
    let copy = c.path().join("vmlinux-copy");
    std::fs::copy(kernel, &copy).unwrap();
    std::fs::write(
        &manifest,
        text.replace(&kernel.display().to_string(), &copy.display().to_string()),
    )
    .unwrap();
    let plan = |c: &TestContest| {
        let out = c.mccbuild(&["plan", "--json"]);
        assert!(out.status.success(), "{}", stderr(&out));
        json(&out)
    };
    let same = plan(c);
    assert_eq!(
        (same["cached"].as_u64(), same["to_run"].as_u64()),
        (Some(1), Some(0)),
        "{same}"
    );
    let mut bytes = std::fs::read(&copy).unwrap();
    bytes.push(0);
    std::fs::write(&copy, bytes).unwrap();
    let other = plan(c);
    assert_eq!(
        (other["cached"].as_u64(), other["to_run"].as_u64()),
        (Some(0), Some(1)),
        "{other}"
    );
}

#[test]
fn a_guest_whose_kernel_panics_is_recorded_as_such() {
    if guest().is_none() {
        return;
    }
    let c = script_contest(
        "#!/bin/sh\necho before the crash\necho c > /proc/sysrq-trigger\nsleep 60\n",
        "time_s = 10\nmemory_mb = 512",
        "",
    );
    // Only root can crash the kernel through sysrq: the tool says `user = "root"` (runs are
    // BenchKit's unprivileged `mcc` by default).
    let manifest = c.path().join("contest.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(
        &manifest,
        text.replace(
            "dir = \"tools/t\"\n",
            "dir = \"tools/t\"\nuser = \"root\"\n",
        ),
    )
    .unwrap();
    let out = mccbuild_checked(c.path(), &["run", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let r = only_record(&c);
    assert_eq!(r["termination"]["reason"], "guest_panic", "{r}");
    assert!(
        r["vm"]["console"]
            .as_str()
            .unwrap()
            .contains("Kernel panic"),
        "{r}"
    );
    assert!(
        r["stdout"]["text"]
            .as_str()
            .unwrap()
            .contains("before the crash"),
        "{r}"
    );
    // `scores` reads the record (a panic is no answer).
    let scores = c.mccbuild(&["scores", "--json"]);
    assert_results(&scores);
}

#[test]
fn a_guest_that_does_not_exist_is_a_clear_error_and_nothing_is_recorded() {
    if guest().is_none() {
        return;
    }
    let c = script_contest(
        "#!/bin/sh\necho DO_NOT_COMPETE\n",
        "time_s = 10\nmemory_mb = 512",
        "",
    );
    let manifest = c.path().join("contest.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    let (kernel, _) = guest().unwrap();
    std::fs::write(
        &manifest,
        text.replace(&kernel.display().to_string(), "guests/missing-vmlinux"),
    )
    .unwrap();
    let out = mccbuild_checked(c.path(), &["run", "--json"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("guests/missing-vmlinux") && err.contains("does not exist"),
        "{err}"
    );
    assert!(err.contains("scripts/guest-kernel"), "{err}");
    assert!(err.contains("contest.toml"), "{err}");
    assert!(c.records().is_empty());

    // The image kind: the tool's image is named, with the script that builds one.
    std::fs::write(
        &manifest,
        text.replace(
            "[executor.qemu]\n",
            "[executor.qemu]\nguest = \"image\"\nimages = { t = \"images/t.qcow2\" }\n",
        ),
    )
    .unwrap();
    let out = mccbuild_checked(c.path(), &["run", "--json"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("images/t.qcow2") && err.contains("scripts/guest-image"),
        "{err}"
    );
    assert!(c.records().is_empty());
}

#[test]
fn bad_qemu_settings_name_the_field() {
    let c = script_contest_plain(
        "[executor]\nkind = \"qemu\"\n[executor.qemu]\naccel = \"fast\"\nguest = \"cloud\"\n",
    );
    let out = c.mccbuild(&["check"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("accel = \"fast\"") && err.contains("auto, kvm, tcg"),
        "{err}"
    );
    assert!(
        err.contains("guest = \"cloud\"") && err.contains("kernel, image"),
        "{err}"
    );
    let c = script_contest_plain("[executor]\nkind = \"qemu\"\n[executor.qemu]\nmemory = 3\n");
    let err = stderr(&c.mccbuild(&["check"]));
    assert!(err.contains("memory"), "{err}");
    let c = script_contest_plain(
        "[executor]\nkind = \"qemu\"\n[executor.qemu]\nkernel_args = \"loglevel=7\\nquiet\"\n",
    );
    let err = stderr(&c.mccbuild(&["check"]));
    assert!(
        err.contains("kernel_args") && err.contains("control character"),
        "{err}"
    );
}

/// A contest with a given `[executor]` text and no guest needed.
fn script_contest_plain(executor: &str) -> TestContest {
    let c = TestContest::new();
    copy_dir(
        &Path::new(REPO).join("models/Deadlock-PT-1"),
        &c.path().join("models/Deadlock-PT-1"),
    );
    write_exec_dir(
        &c.path().join("tools/t/BenchKit_head.sh"),
        "#!/bin/sh\necho DO_NOT_COMPETE\n",
    );
    std::fs::write(
        c.path().join("contest.toml"),
        format!(
            "[contest]\nname = \"vm\"\nrules = \"{}\"\n\n{executor}\n[[model]]\nname = \"Deadlock\"\ninstances = [\"models/Deadlock-PT-1\"]\n\n[[tool]]\nname = \"t\"\ndir = \"tools/t\"\n",
            rules()
        ),
    )
    .unwrap();
    c
}

/// The image kind end to end: the explorer inside a BenchKit-style image built by
/// scripts/guest-image (debootstrap), booted through its BIOS, driven over ssh. Building the
/// image takes minutes (debootstrap, the explorer's build): scripts/test builds it beside other
/// suites before this one; the test builds it itself in CI and with `MCCBUILD_BUILD_IMAGE=1`
/// (scripts/guest-image returns at once when it is up to date); elsewhere, without the image, it
/// is a skip (see crates/testkit).
#[test]
fn the_explorer_in_a_debootstrap_image_gives_the_hand_computed_answers() {
    if guest().is_none() {
        return;
    }
    let dir = Path::new(REPO).join("target/qemu-guest");
    let image = dir.join("mcc-image.qcow2");
    if mccbuild_testkit::in_ci() || std::env::var("MCCBUILD_BUILD_IMAGE").is_ok_and(|v| v == "1") {
        let out = Command::new(Path::new(REPO).join("scripts/guest-image"))
            .arg(&dir)
            .output()
            .expect("scripts/guest-image runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    if !image.is_file() {
        skip(&format!(
            "no image {}: run scripts/guest-image (minutes), or set MCCBUILD_BUILD_IMAGE=1",
            image.display()
        ));
        return;
    }
    let c = TestContest::new();
    copy_dir(
        &Path::new(REPO).join("models/Deadlock-PT-1"),
        &c.path().join("models/Deadlock-PT-1"),
    );
    std::fs::write(
        c.path().join("contest.toml"),
        format!(
            "[contest]\nname = \"image\"\nrules = \"{}\"\n\n[executor]\nkind = \"qemu\"\njobs = 2\n\n[executor.qemu]\nguest = \"image\"\nimage = \"{}\"\nboot_timeout_s = 300\n\n[limits]\ntime_s = 60\nmemory_mb = 1024\n\n[[model]]\nname = \"Deadlock\"\ninstances = [\"models/Deadlock-PT-1\"]\n\n[[tool]]\nname = \"explorer\"\ndir = \"{REPO}/tools/explorer\"\nexaminations = [\"StateSpace\"]\n",
            rules(),
            image.display()
        ),
    )
    .unwrap();
    let out = mccbuild_checked(c.path(), &["run", "--json"]);
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    assert_eq!(json(&out)["executed"], 1, "{}", stderr(&out));
    let golden =
        std::fs::read_to_string(Path::new(REPO).join("tests/golden/demo-models.csv")).unwrap();
    // One run: each boots the image through its BIOS and systemd (78-124 s under TCG here).
    let exam = "StateSpace";
    let r = c.record("explorer", "Deadlock-PT-1", exam);
    assert_eq!(
        r["termination"],
        serde_json::json!({"reason": "exit", "code": 0}),
        "{r}"
    );
    assert_eq!(r["vm"]["guest"], "image");
    assert_eq!(r["measurement"], "guest-cgroup-v2");
    assert!(r["executor"]["tool:explorer:image"].is_string(), "{r}");
    let mut expected = 0;
    for line in golden
        .lines()
        .filter(|l| l.starts_with(&format!("Deadlock-PT-1,{exam},")))
    {
        let f: Vec<&str> = line.split(',').collect();
        let answer = r["answers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["id"] == f[2])
            .unwrap_or_else(|| panic!("no answer {} in {r}", f[2]));
        assert_eq!(answer["value"].to_string().trim_matches('"'), f[3], "{r}");
        expected += 1;
    }
    assert!(expected > 0);
    let again = mccbuild_checked(c.path(), &["run", "--json"]);
    assert_eq!(json(&again)["executed"], 0);
}

/// Real submissions in the kernel guest: tools run as BenchKit's unprivileged `mcc` (`id -u` is not 0),
/// as root only where the manifest says `user = "root"`; BK_BIN_PATH is writable (an overlay in
/// the guest over the read-only share), and the run's home and working directory are its own.
#[test]
fn the_kernel_guest_runs_tools_as_mcc_unless_the_manifest_says_root() {
    if guest().is_none() {
        return;
    }
    let c = script_contest(
        "#!/bin/sh\necho \"uid=$(id -u) user=$(id -un)\" >&2\n\
         mkdir -p \"${BK_BIN_PATH}tmp\" && echo x > \"${BK_BIN_PATH}tmp/f\" && echo bin-writable >&2\n\
         [ -w \"$HOME\" ] && [ -w . ] && echo home-cwd-writable >&2\n\
         echo 'FORMULA ReachabilityDeadlock FALSE TECHNIQUES EXPLICIT'\n",
        "time_s = 30\nmemory_mb = 512",
        "",
    );
    let manifest = c.path().join("contest.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(
        &manifest,
        format!(
            "{text}\n[[tool]]\nname = \"asroot\"\ndir = \"tools/t\"\nuser = \"root\"\nexaminations = [\"ReachabilityDeadlock\"]\n"
        ),
    )
    .unwrap();
    let out = mccbuild_checked(c.path(), &["run", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(json(&out)["executed"], 2, "{}", stderr(&out));
    for (tool, who) in [("t", "user=mcc"), ("asroot", "uid=0 user=root")] {
        let r = c.record(tool, "Deadlock-PT-1", "ReachabilityDeadlock");
        let err = r["stderr"]["text"].as_str().unwrap();
        assert!(err.contains(who), "{tool}: {err}");
        if tool == "t" {
            assert!(!err.contains("uid=0 "), "{err}");
        }
        assert!(err.contains("bin-writable"), "{tool}: {err}");
        assert!(err.contains("home-cwd-writable"), "{tool}: {err}");
        assert_eq!(r["answers"][0]["value"], "FALSE", "{r}");
    }
    // The shared tool folder was not written through (the overlay's upper layer is the guest's).
    assert!(!c.path().join("tools/t/tmp").exists());
}

/// A real submission under the QEMU executor (kernel guest): the test submission of
/// tests/submission-tool, unchanged (GNU parallel, /usr/bin/time, timeout and bash are the
/// host's /usr, shared read-only with the guest), answers all 13 examinations of
/// Philosophers-PT-000002 with the golden values, as `mcc`: every examination it supports, as
/// under the local (tests/it/submission.rs) and Slurm (tests/it/slurm.rs) executors. One variant only
/// (each run boots a VM under TCG; the local test runs both).
#[test]
fn the_test_submission_gives_the_golden_answers_in_the_kernel_guest() {
    if guest().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    submission_contest(
        dir.path(),
        &qemu_executor(""),
        // Perl (GNU parallel) and bash start slowly under TCG: ~30 s of a VM's clock here.
        180,
        &[("submission", "portfolio")],
        &ALL_EXAMINATIONS,
    );
    let out = mccbuild_checked(dir.path(), &["run", "--json"]);
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    assert_eq!(json(&out)["executed"], 13, "{}", stderr(&out));
    let records = store_records(&dir.path().join("store"));
    assert_eq!(records.len(), 13);
    for r in &records {
        assert_eq!(r["executor"]["kind"], "qemu", "{r}");
        assert_eq!(r["measurement"], "guest-cgroup-v2");
        assert_submission_run(r, "portfolio");
        let err = r["stderr"]["text"].as_str().unwrap();
        assert!(err.contains("user mcc (") && !err.contains("(0)"), "{err}");
        assert!(
            err.contains("temporary files in /home/mcc/BenchKit-bin/tmp/"),
            "{err}"
        );
    }
}
