//! The fingerprint of a plan: one digest of everything it is made from (the contest as loaded,
//! the executor's key ingredients, the archive limits and the stamps of every file and folder
//! the plan reads), and the stamps of the answers every command reads besides it.

use std::fs;
use std::path::{Path, PathBuf};

use mccbuild_core::digest::Digest;

use super::layout::SNAPSHOT;
use crate::archive::ArchiveLimits;
use crate::manifest::{Contest, InstanceSource};

/// Where dpkg keeps what is installed (rewritten by every install, upgrade and removal).
pub(super) const DPKG_STATUS: &str = "/var/lib/dpkg/status";
/// Where dpkg keeps what an interrupted run of it changed, not yet in its status file.
const DPKG_UPDATES: &str = "/var/lib/dpkg/updates";

/// What a plan was made from, as one digest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fingerprint {
    pub digest: Digest,
    /// Some stamp is too fresh to be trusted: the plan made now must not be kept.
    pub racy: bool,
}

impl Fingerprint {
    /// The fingerprint of the plan `contest` would get with this executor, these archive limits
    /// and the binary at `exe`, from the files as they are now.
    pub fn of(
        contest: &Contest,
        executor: &[(String, String)],
        archive_limits: ArchiveLimits,
        exe: &Path,
    ) -> Fingerprint {
        Fingerprint::with_stamps(
            contest,
            executor,
            archive_limits,
            &Fingerprint::stamps(contest, exe),
        )
    }

    /// The stat calls of [`Fingerprint::of`]: the stamps of the binary at `exe` and of every
    /// file and folder the plan of `contest` reads, as one fingerprint (taken beside the
    /// making of the executor, whose key ingredients [`Fingerprint::with_stamps`] adds).
    pub fn stamps(contest: &Contest, exe: &Path) -> Fingerprint {
        let mut walk = Walk {
            hasher: blake3::Hasher::new(),
            racy: false,
        };
        walk.entry(exe, false);
        for (path, deep) in read_by_plan(contest) {
            walk.entry(&path, deep);
        }
        Fingerprint {
            digest: *walk.hasher.finalize().as_bytes(),
            racy: walk.racy,
        }
    }

    /// [`Fingerprint::of`] from the [`Fingerprint::stamps`] taken for `contest`.
    pub fn with_stamps(
        contest: &Contest,
        executor: &[(String, String)],
        archive_limits: ArchiveLimits,
        stamps: &Fingerprint,
    ) -> Fingerprint {
        let mut walk = Walk {
            hasher: blake3::Hasher::new(),
            racy: stamps.racy,
        };
        walk.text(
            "schema",
            &format!("mccbuild plan snapshot {}", SNAPSHOT.version),
        );
        walk.text("contest", &format!("{contest:?}"));
        walk.text("executor", &format!("{executor:?}"));
        walk.text("archive limits", &format!("{archive_limits:?}"));
        walk.hasher.update(&stamps.digest);
        Fingerprint {
            digest: *walk.hasher.finalize().as_bytes(),
            racy: walk.racy,
        }
    }
}

/// The stamps of what [`Plan::with_answers_given`] reads besides the snapshot's plan: the
/// reference answers (a file, or a folder read whole) and the organisers' corrections. Not part
/// of the snapshot's fingerprint (every command reads them again); the remembered no-op, which
/// does not, is keyed by it (docs/cache.md, "The remembered no-op").
///
/// [`Plan::with_answers_given`]: crate::Plan::with_answers_given
pub fn answers_fingerprint(contest: &Contest) -> Fingerprint {
    let mut walk = Walk {
        hasher: blake3::Hasher::new(),
        racy: false,
    };
    walk.text("schema", "mccbuild answers given 1");
    if let Some(reference) = &contest.reference {
        walk.entry(&reference.answers, true);
    }
    if let Some(corrections) = &contest.corrections {
        walk.entry(corrections, false);
    }
    Fingerprint {
        digest: *walk.hasher.finalize().as_bytes(),
        racy: walk.racy,
    }
}

/// What the plan reads beyond the contest itself, each with whether it is a folder read whole:
/// the results files, the tools' folders, dpkg's database when a tool names `host_packages`,
/// the instances' folders and archives.
pub(super) fn read_by_plan(contest: &Contest) -> Vec<(PathBuf, bool)> {
    let mut paths: Vec<(PathBuf, bool)> = Vec::new();
    paths.extend(contest.results.iter().map(|p| (p.clone(), false)));
    paths.extend(
        contest
            .tools
            .iter()
            .filter_map(|t| Some((t.dir.clone()?, true))),
    );
    if contest.tools.iter().any(|t| !t.host_packages.is_empty()) {
        paths.push((PathBuf::from(DPKG_STATUS), false));
        paths.push((PathBuf::from(DPKG_UPDATES), true));
    }
    for model in &contest.models {
        for instance in &model.instances {
            match &instance.source {
                InstanceSource::Folder(dir) => paths.push((dir.clone(), true)),
                InstanceSource::Archive(file) => paths.push((file.clone(), false)),
                InstanceSource::Imported(_) => {}
            }
        }
    }
    paths
}

struct Walk {
    hasher: blake3::Hasher,
    racy: bool,
}

impl Walk {
    fn text(&mut self, what: &str, text: &str) {
        for part in [what.as_bytes(), text.as_bytes()] {
            self.hasher.update(&(part.len() as u64).to_le_bytes());
            self.hasher.update(part);
        }
    }

    /// `path`'s stamp (following a symbolic link; a path that cannot be read is hashed as such)
    /// and, for a folder when `deep`, every entry under it (symbolic links not followed into
    /// folders, as the plan's own readers do not follow them).
    fn entry(&mut self, path: &Path, deep: bool) {
        self.text("path", &path.to_string_lossy());
        match fs::metadata(path) {
            Ok(meta) => {
                self.stamp(&meta);
                if deep && meta.is_dir() {
                    self.folder(path);
                }
            }
            Err(e) => self.text("unreadable", &format!("{:?}", e.kind())),
        }
    }

    fn folder(&mut self, dir: &Path) {
        let mut names: Vec<PathBuf> = match fs::read_dir(dir) {
            Ok(entries) => entries.filter_map(|e| e.ok().map(|e| e.path())).collect(),
            Err(e) => return self.text("unlistable", &format!("{:?}", e.kind())),
        };
        names.sort();
        for path in names {
            self.text("path", &path.to_string_lossy());
            let Ok(meta) = fs::symlink_metadata(&path) else {
                self.text("unreadable", "");
                continue;
            };
            if meta.file_type().is_symlink() {
                let target = fs::read_link(&path).unwrap_or_default();
                self.text("symlink", &target.to_string_lossy());
                self.stamp(&meta);
                // What it points to may change without the link changing.
                match fs::metadata(&path) {
                    Ok(target) => self.stamp(&target),
                    Err(e) => self.text("dangling", &format!("{:?}", e.kind())),
                }
            } else {
                self.stamp(&meta);
                if meta.is_dir() {
                    self.folder(&path);
                }
            }
        }
    }

    fn stamp(&mut self, meta: &fs::Metadata) {
        let stamp = mccbuild_core::stamp::FileStamp::of(meta);
        self.racy |= stamp.is_racy();
        stamp.hash_into(&mut self.hasher);
    }
}
