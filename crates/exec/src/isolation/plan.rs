//! The isolation plan: what one run sees of the file system, a pure function of the run's
//! paths and the host's mounts, computed in mccbuild before the run's process is cloned.

use std::path::{Path, PathBuf};

use super::host_mounts::HostMounts;

/// Folders every run gets fresh and private (tmpfs, world-writable with the sticky bit).
pub const PRIVATE_TMP: [&str; 3] = ["/tmp", "/var/tmp", "/dev/shm"];

/// How a folder is covered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cover {
    /// A fresh writable tmpfs for the run alone (mode 1777).
    PrivateTmp,
    /// An empty read-only folder: what was there is invisible.
    Empty,
    /// `/dev` with only null, zero, full, random, urandom and tty.
    Dev,
}

/// What one run sees of the file system.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IsolationPlan {
    /// How the host's mounts are made read-only (one by one: all but /proc and /dev and what is
    /// under them, which are replaced; the whole tree: those too, before they are replaced).
    pub read_only: HostMounts,
    /// Folders covered by a fresh tmpfs.
    pub cover: Vec<(PathBuf, Cover)>,
    /// Folders bound back at their own path over what is covered: (path, writable).
    pub expose: Vec<(PathBuf, bool)>,
    /// Folders made fresh and empty in the run's private /tmp (the request's `fresh`), parents
    /// first.
    pub fresh: Vec<PathBuf>,
}

/// What a run needs, for [`IsolationPlan::new`].
pub struct IsolationRequest<'a> {
    /// The run's own folder (working directory, HOME, TMPDIR, results): writable.
    pub run_dir: &'a Path,
    /// The tool's folder and its setup products: read-only.
    pub read_only: Vec<&'a Path>,
    /// Folders whose content the run must not see (project, store, instance sources, other runs).
    pub hidden: Vec<&'a Path>,
    /// Folders made fresh in the run's private /tmp instead of being bound from the host, for a
    /// run that needs nothing of its folder from the host and leaves nothing there (`mccbuild
    /// sandbox`): its folder and what is in it. Each must be inside a private /tmp
    /// ([`in_private_tmp`]). When the run's folder is one of them it is not bound.
    pub fresh: Vec<&'a Path>,
}

/// Whether `path` lies in a folder every isolated run gets fresh and private ([`PRIVATE_TMP`]),
/// so that a run can have it made there instead of on the host (`exists`: the host's folders).
pub fn in_private_tmp(path: &Path, exists: impl Fn(&Path) -> bool) -> bool {
    PRIVATE_TMP
        .iter()
        .map(Path::new)
        .any(|tmp| path != tmp && path.starts_with(tmp) && (tmp.starts_with("/dev") || exists(tmp)))
}

impl IsolationPlan {
    /// Plans a run's view (`exists` tells which folders there are to cover).
    pub fn new(
        request: &IsolationRequest,
        host: &HostMounts,
        exists: impl Fn(&Path) -> bool,
    ) -> IsolationPlan {
        let under = |p: &Path, top: &str| p.starts_with(top);
        let read_only = match host {
            HostMounts::Tree => HostMounts::Tree,
            HostMounts::Each(mounts) => HostMounts::Each(
                mounts
                    .iter()
                    .filter(|m| !under(&m.point, "/proc") && !under(&m.point, "/dev"))
                    .cloned()
                    .collect(),
            ),
        };

        let fresh: Vec<PathBuf> = request.fresh.iter().map(|p| p.to_path_buf()).collect();
        let mut expose: Vec<(PathBuf, bool)> = Vec::new();
        if !fresh.iter().any(|f| f == request.run_dir) {
            expose.push((request.run_dir.to_path_buf(), true));
        }
        for p in &request.read_only {
            if !expose.iter().any(|(e, _)| e == p) {
                expose.push((p.to_path_buf(), false));
            }
        }

        let mut cover: Vec<(PathBuf, Cover)> = vec![(PathBuf::from("/dev"), Cover::Dev)];
        for tmp in PRIVATE_TMP.iter().map(Path::new) {
            // /dev/shm is made in the fresh /dev; the others only where the host has them.
            if tmp.starts_with("/dev") || exists(tmp) {
                cover.push((tmp.to_path_buf(), Cover::PrivateTmp));
            }
        }
        for hidden in &request.hidden {
            let hidden = *hidden;
            if hidden != Path::new("/") && exists(hidden) && !cover.iter().any(|(c, _)| c == hidden)
            {
                cover.push((hidden.to_path_buf(), Cover::Empty));
            }
        }
        // Covering inside a cover is pointless unless an exposed folder lies in between.
        let inside = |p: &Path, q: &Path| p != q && p.starts_with(q);
        let covers = cover.clone();
        cover.retain(|(c, kind)| {
            *kind != Cover::Empty
                || !covers.iter().any(|(outer, _)| {
                    inside(c, outer)
                        && !expose
                            .iter()
                            .any(|(e, _)| (inside(e, outer) || e == outer) && c.starts_with(e))
                })
        });
        // An exposed folder inside another exposed folder of the same mode is already there.
        let exposed = expose.clone();
        expose.retain(|(e, w)| !exposed.iter().any(|(o, ow)| ow == w && inside(e, o)));
        IsolationPlan {
            read_only,
            cover,
            expose,
            fresh,
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::isolation::host_mounts::{host_mounts, tests::MOUNTINFO};

    /// A request for `run` with these read-only and hidden paths (shared with the prepared
    /// steps' tests).
    pub(in crate::isolation) fn request<'a>(
        run: &'a Path,
        ro: Vec<&'a Path>,
        hidden: Vec<&'a Path>,
    ) -> IsolationRequest<'a> {
        IsolationRequest {
            run_dir: run,
            read_only: ro,
            hidden,
            fresh: Vec::new(),
        }
    }

    fn covers(plan: &IsolationPlan) -> Vec<(&str, Cover)> {
        plan.cover
            .iter()
            .map(|(p, k)| (p.to_str().unwrap(), *k))
            .collect()
    }

    #[test]
    fn host_mounts_are_read_only_except_proc_and_dev() {
        let run = Path::new("/tmp/mccbuild-x");
        let plan = IsolationPlan::new(
            &request(run, vec![], vec![]),
            &HostMounts::Each(host_mounts(MOUNTINFO)),
            |_| true,
        );
        let HostMounts::Each(mounts) = &plan.read_only else {
            panic!("one by one: {:?}", plan.read_only)
        };
        let points: Vec<&Path> = mounts.iter().map(|m| m.point.as_path()).collect();
        assert_eq!(
            points,
            vec![
                Path::new("/"),
                Path::new("/sys"),
                Path::new("/mnt/with space")
            ]
        );
    }

    #[test]
    fn project_and_store_are_covered_and_the_tool_bound_back() {
        let run = Path::new("/tmp/mccbuild-x");
        let tool = Path::new("/work/proj/tools/t");
        let bin = Path::new("/work/proj/cache/tools/abc/bin");
        let plan = IsolationPlan::new(
            &request(
                run,
                vec![tool, bin],
                vec![
                    Path::new("/work/proj"),
                    Path::new("/work/proj/cache"),
                    Path::new("/data/inputs"),
                    Path::new("/tmp"),
                ],
            ),
            &HostMounts::Each(Vec::new()),
            |_| true,
        );
        // The store's cover is inside the project's with nothing exposed in between: dropped;
        // /tmp is a private tmp already.
        assert_eq!(
            covers(&plan),
            vec![
                ("/dev", Cover::Dev),
                ("/tmp", Cover::PrivateTmp),
                ("/var/tmp", Cover::PrivateTmp),
                ("/dev/shm", Cover::PrivateTmp),
                ("/work/proj", Cover::Empty),
                ("/data/inputs", Cover::Empty),
            ]
        );
        assert_eq!(
            plan.expose,
            vec![
                (run.to_path_buf(), true),
                (tool.to_path_buf(), false),
                (bin.to_path_buf(), false)
            ]
        );
    }

    #[test]
    fn a_cover_below_an_exposed_folder_is_kept() {
        // The store inside the tool's folder: the tool is bound back, the store covered again.
        let run = Path::new("/tmp/mccbuild-x");
        let tool = Path::new("/p/tools/t");
        let plan = IsolationPlan::new(
            &request(
                run,
                vec![tool],
                vec![Path::new("/p"), Path::new("/p/tools/t/cache")],
            ),
            &HostMounts::Each(Vec::new()),
            |_| true,
        );
        assert!(covers(&plan).contains(&("/p/tools/t/cache", Cover::Empty)));
    }

    #[test]
    fn missing_folders_are_not_covered() {
        let run = Path::new("/tmp/mccbuild-x");
        let plan = IsolationPlan::new(
            &request(run, vec![], vec![Path::new("/nowhere")]),
            &HostMounts::Each(Vec::new()),
            |p| p != Path::new("/nowhere") && p != Path::new("/var/tmp"),
        );
        assert_eq!(
            covers(&plan),
            vec![
                ("/dev", Cover::Dev),
                ("/tmp", Cover::PrivateTmp),
                ("/dev/shm", Cover::PrivateTmp)
            ]
        );
    }
}
