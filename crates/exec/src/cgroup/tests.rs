//! The run's groups with a thread moving in and out, and the host's mount table read.

use std::fs;
use std::path::PathBuf;
use std::time::Duration;

use super::support::mount_point;
use super::*;

/// The groups of `/proc/<who>/cgroup` (hierarchy id and controllers -> path), v1 only.
fn v1_groups(who: &str) -> Vec<String> {
    fs::read_to_string(format!("/proc/{who}/cgroup"))
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with("0::"))
        .map(str::to_string)
        .collect()
}

/// A thread that entered a run's cgroup v1 groups forks a process born in them (memory and
/// pids: what a run's limits and measurements are), then leaves alone: it is back in
/// mccbuild's own groups, the process stays, and the other threads never moved. The run's
/// groups then hold the process alone (`tasks`), so that they can be emptied and removed.
#[test]
fn a_thread_in_a_runs_groups_forks_into_them_and_leaves_alone() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        mccbuild_testkit::skip("cgroups need root");
        return;
    }
    let support = CgroupSupport::detect();
    if support.v1_memory.is_none() || support.v1_pids.is_none() {
        mccbuild_testkit::skip("no cgroup v1 memory and pids hierarchies here");
        return;
    }
    let name = format!("test-{}-thread", crate::owner::tag());
    let group = support.create(&name).unwrap();
    let own = v1_groups("thread-self");
    let (child, inside, after) = std::thread::scope(|scope| {
        scope
            .spawn(|| {
                let placed = group.enter_v1_as_thread().unwrap();
                let inside = v1_groups("thread-self");
                let child = std::process::Command::new("sleep")
                    .arg("5")
                    .spawn()
                    .unwrap();
                placed.leave().unwrap();
                (child, inside, v1_groups("thread-self"))
            })
            .join()
            .unwrap()
    });
    let mut child = child;
    let theirs = v1_groups(&child.id().to_string());
    let _ = child.kill();
    let _ = child.wait();
    for groups in [&inside, &theirs] {
        let runs: Vec<&String> = groups.iter().filter(|l| l.contains(&name)).collect();
        assert_eq!(runs.len(), 2, "memory and pids: {groups:?}");
    }
    assert_eq!(after, own, "the thread is back where it was");
    assert_eq!(v1_groups("self"), own, "the main thread never moved");
    assert!(group.kill_all(Duration::from_secs(5)));
    for dir in group.v1_dirs() {
        let tasks = fs::read_to_string(dir.join("tasks")).unwrap();
        assert_eq!(tasks, "", "{} holds no thread of mccbuild", dir.display());
    }
    group.remove();
    assert!(group.dirs().all(|d| !d.exists()), "removed");
}

#[test]
fn mount_points_are_read_from_mountinfo() {
    let info = "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n\
                35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n\
                41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
    assert_eq!(
        mount_point(info, "cgroup", Some("memory")),
        Some(PathBuf::from("/sys/fs/cgroup/memory"))
    );
    assert_eq!(mount_point(info, "cgroup", Some("pids")), None);
    assert_eq!(
        mount_point(info, "cgroup2", None),
        Some(PathBuf::from("/sys/fs/cgroup/unified"))
    );
    // A bind mount of a subfolder is not a hierarchy's root.
    let bind = "50 31 0:32 /sub /mnt/mem rw - cgroup cgroup rw,memory\n";
    assert_eq!(mount_point(bind, "cgroup", Some("memory")), None);
}
