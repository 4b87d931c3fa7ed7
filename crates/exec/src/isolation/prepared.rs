//! The plan made ready to apply: the steps of building the run's view in order, every path
//! a C string, made in mccbuild before the clone, so that applying them (`enter`) allocates
//! nothing.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::host_mounts::HostMounts;
use super::namespaces::PendingNamespaces;
use super::plan::{Cover, IsolationPlan};

fn depth(p: &Path) -> usize {
    p.components().count()
}

fn cstring(p: &Path) -> io::Result<CString> {
    CString::new(p.as_os_str().as_bytes())
        .map_err(|_| io::Error::other(format!("path {} holds a NUL byte", p.display())))
}

/// One step of [`Prepared::enter`], in order.
pub(super) enum Step {
    /// Make every mount of the run's namespace read-only, in one system call.
    ReadOnlyTree,
    /// Remount a host mount read-only, keeping its flags.
    ReadOnly { point: CString, flags: u64 },
    /// Open a folder to bind back later (before anything covers it) as fd `slot`.
    Open { path: CString, slot: i32 },
    /// Mount a fresh tmpfs.
    Cover { path: CString, kind: Cover },
    /// Create a mount point inside a cover (parents come first).
    Mkdir { path: CString },
    /// Bind fd `slot` (as `/proc/self/fd/<slot>`) at `path`, with what is mounted below it.
    Bind {
        source: CString,
        path: CString,
        writable: bool,
        /// Writable below too: the host was made read-only as a whole tree, the run's own
        /// mounts in its folder (its BK_BIN_PATH overlay) with it.
        writable_below: bool,
        slot: i32,
    },
    /// Make a cover read-only once its mount points are made.
    Seal { path: CString },
}

/// An [`IsolationPlan`] ready to apply between fork and exec.
pub struct Prepared {
    pub(super) steps: Vec<Step>,
    pub(super) cwd: CString,
    /// The user (uid, gid) the tool runs as; None: user 0 without capabilities.
    pub(super) user: Option<(u32, u32)>,
    /// Network and IPC namespaces being made beforehand ([`Namespaces::prepare`]), handed to
    /// the run's first process at its gate (see `spawn`); None, or if making them failed: the
    /// process makes its own.
    pub(super) namespaces: Option<PendingNamespaces>,
}

/// File descriptors used for the folders to bind back (high, so they clash with nothing).
const FIRST_SLOT: i32 = 900;

impl Prepared {
    pub fn new(plan: &IsolationPlan, cwd: &Path) -> io::Result<Prepared> {
        let mut steps = Vec::new();
        match &plan.read_only {
            HostMounts::Tree => steps.push(Step::ReadOnlyTree),
            HostMounts::Each(mounts) => {
                for m in mounts {
                    steps.push(Step::ReadOnly {
                        point: cstring(&m.point)?,
                        flags: m.flags,
                    });
                }
            }
        }
        let mut expose = plan.expose.clone();
        expose.sort_by_key(|(p, _)| depth(p));
        for (i, (path, _)) in expose.iter().enumerate() {
            steps.push(Step::Open {
                path: cstring(path)?,
                slot: FIRST_SLOT + i as i32,
            });
        }
        // Shallower first: a cover hides what is below it, a bind is then made inside it.
        enum Op<'a> {
            Cover(&'a Path, Cover),
            Bind(&'a Path, bool, i32),
        }
        let mut ops: Vec<(usize, u8, Op)> = Vec::new();
        for (path, kind) in &plan.cover {
            ops.push((depth(path), 0, Op::Cover(path, *kind)));
        }
        for (i, (path, writable)) in expose.iter().enumerate() {
            ops.push((
                depth(path),
                1,
                Op::Bind(path, *writable, FIRST_SLOT + i as i32),
            ));
        }
        ops.sort_by_key(|(d, kind, _)| (*d, *kind));
        for (_, _, op) in &ops {
            let (Op::Cover(path, _) | Op::Bind(path, _, _)) = op;
            for folder in ancestors_top_down(path).iter().chain([&path.to_path_buf()]) {
                steps.push(Step::Mkdir {
                    path: cstring(folder)?,
                });
            }
            match op {
                Op::Cover(path, kind) => steps.push(Step::Cover {
                    path: cstring(path)?,
                    kind: *kind,
                }),
                Op::Bind(path, writable, slot) => steps.push(Step::Bind {
                    source: CString::new(format!("/proc/self/fd/{slot}"))
                        .expect("no NUL in a number"),
                    path: cstring(path)?,
                    writable: *writable,
                    writable_below: *writable && plan.read_only == HostMounts::Tree,
                    slot: *slot,
                }),
            }
        }
        // In a private /tmp, which is covered by then (and never sealed).
        for path in &plan.fresh {
            for folder in ancestors_top_down(path).iter().chain([path]) {
                steps.push(Step::Mkdir {
                    path: cstring(folder)?,
                });
            }
        }
        for (path, kind) in &plan.cover {
            if *kind != Cover::PrivateTmp {
                steps.push(Step::Seal {
                    path: cstring(path)?,
                });
            }
        }
        Ok(Prepared {
            steps,
            cwd: cstring(cwd)?,
            user: None,
            namespaces: None,
        })
    }

    /// The run enters these network and IPC namespaces (being made) instead of making its own.
    pub fn with_namespaces(mut self, namespaces: Option<PendingNamespaces>) -> Prepared {
        self.namespaces = namespaces;
        self
    }

    /// The tool runs as this user (uid, gid; its only group) instead of user 0.
    pub fn run_as(mut self, user: Option<(u32, u32)>) -> Prepared {
        self.user = user;
        self
    }

    /// The namespaces being made for the run, for the spawner (which hands them over at the
    /// gate).
    pub(crate) fn take_namespaces(&mut self) -> Option<PendingNamespaces> {
        self.namespaces.take()
    }
}

/// The ancestors of `path` from `/` down, excluding `/` and `path` itself.
fn ancestors_top_down(path: &Path) -> Vec<PathBuf> {
    let mut list: Vec<PathBuf> = path
        .ancestors()
        .skip(1)
        .filter(|p| *p != Path::new("/") && !p.as_os_str().is_empty())
        .map(Path::to_path_buf)
        .collect();
    list.reverse();
    list
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isolation::plan::tests::request;
    use crate::isolation::{HostMounts, in_private_tmp};

    /// Where the kernel has `mount_setattr`, the whole tree is made read-only in one step,
    /// first (before anything is covered or bound back), and no mount one by one.
    #[test]
    fn the_whole_tree_is_made_read_only_first_in_one_step() {
        let run = Path::new("/tmp/mccbuild-x");
        let tool = Path::new("/p/tools/t");
        let plan = IsolationPlan::new(
            &request(run, vec![tool], vec![Path::new("/p")]),
            &HostMounts::Tree,
            |_| true,
        );
        assert_eq!(plan.read_only, HostMounts::Tree);
        let prepared = Prepared::new(&plan, run).unwrap();
        assert!(matches!(prepared.steps[0], Step::ReadOnlyTree));
        let trees = prepared
            .steps
            .iter()
            .filter(|s| matches!(s, Step::ReadOnlyTree))
            .count();
        assert_eq!(trees, 1);
        assert!(
            !prepared
                .steps
                .iter()
                .any(|s| matches!(s, Step::ReadOnly { .. }))
        );
        let writable_below = |p: &str| {
            prepared.steps.iter().any(|s| {
                matches!(s, Step::Bind { path, writable_below: true, .. }
                    if path.as_bytes() == p.as_bytes())
            })
        };
        assert!(
            writable_below("/tmp/mccbuild-x"),
            "the run's own mounts stay writable"
        );
        assert!(!writable_below("/p/tools/t"), "the tool's are read-only");
        // This machine's kernel (6.x) has it.
        assert_eq!(HostMounts::of_this_host().unwrap(), HostMounts::Tree);
    }

    #[test]
    fn a_fresh_run_folder_is_made_in_the_private_tmp_not_bound() {
        let run = Path::new("/tmp/mccbuild-sandbox-x");
        let home = run.join("home");
        let tool = Path::new("/opt/t");
        let mut req = request(run, vec![tool], vec![]);
        req.fresh = vec![run, &home];
        let plan = IsolationPlan::new(&req, &HostMounts::Each(Vec::new()), |_| true);
        assert_eq!(plan.expose, vec![(tool.to_path_buf(), false)]);
        assert_eq!(plan.fresh, vec![run.to_path_buf(), home.clone()]);
        let prepared = Prepared::new(&plan, run).unwrap();
        let at = |want: &dyn Fn(&Step) -> bool| prepared.steps.iter().position(want).unwrap();
        let is = |s: &CString, p: &str| s.as_bytes() == p.as_bytes();
        let cover_tmp = at(&|s| matches!(s, Step::Cover { path, .. } if is(path, "/tmp")));
        let make_home =
            at(&|s| matches!(s, Step::Mkdir { path } if is(path, "/tmp/mccbuild-sandbox-x/home")));
        assert!(cover_tmp < make_home);
        assert!(
            !prepared.steps.iter().any(
                |s| matches!(s, Step::Bind { path, .. } if is(path, "/tmp/mccbuild-sandbox-x"))
            )
        );
        assert!(in_private_tmp(run, |_| true));
        assert!(!in_private_tmp(Path::new("/tmp"), |_| true));
        assert!(!in_private_tmp(Path::new("/scratch/x"), |_| true));
        assert!(!in_private_tmp(Path::new("/var/tmp/x"), |p| p != Path::new("/var/tmp")));
    }

    #[test]
    fn steps_cover_before_binding_inside_and_seal_last() {
        let run = Path::new("/tmp/mccbuild-x");
        let tool = Path::new("/p/tools/t");
        let plan = IsolationPlan::new(
            &request(run, vec![tool], vec![Path::new("/p")]),
            &HostMounts::Each(Vec::new()),
            |_| true,
        );
        let prepared = Prepared::new(&plan, &run.join("inst")).unwrap();
        let at = |want: &dyn Fn(&Step) -> bool| prepared.steps.iter().position(want).unwrap();
        let is = |s: &CString, p: &str| s.as_bytes() == p.as_bytes();
        let open_run = at(&|s| matches!(s, Step::Open { path, .. } if is(path, "/tmp/mccbuild-x")));
        let cover_tmp = at(&|s| matches!(s, Step::Cover { path, .. } if is(path, "/tmp")));
        let bind_run = at(&|s| matches!(s, Step::Bind { path, .. } if is(path, "/tmp/mccbuild-x")));
        let cover_p = at(&|s| matches!(s, Step::Cover { path, .. } if is(path, "/p")));
        let mkdir_tools = at(&|s| matches!(s, Step::Mkdir { path } if is(path, "/p/tools")));
        let bind_tool = at(&|s| matches!(s, Step::Bind { path, .. } if is(path, "/p/tools/t")));
        let seal_p = at(&|s| matches!(s, Step::Seal { path } if is(path, "/p")));
        assert!(open_run < cover_tmp && cover_tmp < bind_run);
        assert!(cover_p < mkdir_tools && mkdir_tools < bind_tool && bind_tool < seal_p);
    }
}
