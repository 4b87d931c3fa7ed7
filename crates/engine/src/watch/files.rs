//! The files `watch` watches (inotify, through the `notify` crate: [`Watching`]), and which of
//! their changes are changes of the plan's inputs.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use notify::{RecursiveMode, Watcher};

use mccbuild_store::StoreError;

use crate::session::Session;

/// The files watched (inotify), re-aimed when a re-plan changes them.
pub(super) struct Watching {
    watcher: notify::RecommendedWatcher,
    events: mpsc::Receiver<notify::Result<notify::Event>>,
    watched: Vec<(PathBuf, RecursiveMode)>,
    inputs: Vec<PathBuf>,
    /// The manifest and the rules file (absolute): an edit of these may keep the plan.
    contest_files: Vec<PathBuf>,
    /// Events may have been lost (the queue overflowed): the store is reconciled in full.
    pub(super) lost: std::sync::atomic::AtomicBool,
    store_root: PathBuf,
}

/// Which inputs of the plan changed, in increasing order of what they cost.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum InputChange {
    None,
    /// Only the manifest or the rules file: may keep the plan.
    Contest,
    /// A tool's folder or a results file: re-plan.
    Other,
}

impl Watching {
    pub(super) fn start(session: &Session) -> Result<Watching, StoreError> {
        let (tx, events) = mpsc::channel::<notify::Result<notify::Event>>();
        let watcher = notify::recommended_watcher(tx).map_err(|e| StoreError::Read {
            path: session.store.root().join("runs"),
            source: std::io::Error::other(format!("cannot watch files: {e}")),
        })?;
        let mut watching = Watching {
            watcher,
            events,
            watched: Vec::new(),
            inputs: Vec::new(),
            contest_files: Vec::new(),
            lost: Default::default(),
            store_root: PathBuf::new(),
        };
        watching.aim(session, true);
        Ok(watching)
    }

    /// Watches what `session` depends on (instead of what was watched before).
    pub(super) fn aim(&mut self, session: &Session, warn: bool) {
        for (path, _) in &self.watched {
            let _ = self.watcher.unwatch(path);
        }
        (self.watched, self.inputs) = watch_paths(session);
        self.contest_files = vec![
            absolute(&session.plan.contest.manifest_path),
            absolute(&session.plan.contest.rules_path),
        ];
        self.store_root = absolute(session.store.root());
        for (path, mode) in &self.watched {
            if let Err(e) = self.watcher.watch(path, *mode) {
                if warn {
                    eprintln!(
                        "warning: cannot watch {}: {e}; its changes are not noticed",
                        path.display()
                    );
                }
            }
        }
    }

    /// Waits for changes (at most a second): the changes seen, whether the wait timed out or
    /// events may have been lost (the store is to be reconciled in full then), and which inputs
    /// of the plan changed. Reads (mccbuild's own, among others) are not changes.
    pub(super) fn next(&self) -> (Vec<notify::Event>, bool, InputChange) {
        let first = self.events.recv_timeout(Duration::from_secs(1));
        let mut timed_out = first.is_err();
        let mut events: Vec<notify::Event> = Vec::new();
        for event in first
            .into_iter()
            .chain(std::iter::from_fn(|| self.events.try_recv().ok()))
        {
            match event {
                Ok(e) if e.need_rescan() => {
                    self.lost.store(true, std::sync::atomic::Ordering::Relaxed);
                }
                Ok(e) if is_change(&e.kind) => events.push(e),
                Ok(_) => {}
                // The watcher's own error (e.g. the queue overflowed): look at everything.
                Err(_) => self.lost.store(true, std::sync::atomic::Ordering::Relaxed),
            }
        }
        timed_out |= self.lost.load(std::sync::atomic::Ordering::Relaxed);
        if std::env::var_os("MCCBUILD_WATCH_DEBUG").is_some() {
            for e in &events {
                eprintln!("event {:?} {:?}", e.kind, e.paths);
            }
        }
        let mut change = InputChange::None;
        for p in events.iter().flat_map(|e| &e.paths) {
            if is_input(p, &self.store_root, &self.inputs) {
                change = change.max(if self.contest_files.iter().any(|f| p == f) {
                    InputChange::Contest
                } else {
                    InputChange::Other
                });
            }
        }
        (events, timed_out, change)
    }

    /// Lets a burst of editor writes settle: waits until no change came for 25 ms (at most
    /// 300 ms), dropping the events (a record among them makes the next look at the store a
    /// full one); says whether an input other than the manifest and the rules file changed
    /// meanwhile.
    pub(super) fn settle(&self) -> bool {
        let start = Instant::now();
        let mut other = false;
        while start.elapsed() < Duration::from_millis(300) {
            match self.events.recv_timeout(Duration::from_millis(25)) {
                Ok(Ok(e)) if is_change(&e.kind) => {
                    other |= e.paths.iter().any(|p| {
                        is_input(p, &self.store_root, &self.inputs)
                            && !self.contest_files.iter().any(|f| p == f)
                    });
                    // A record among the dropped events: the store is looked at in full.
                    if e.paths.iter().any(|p| p.starts_with(&self.store_root)) {
                        self.lost.store(true, std::sync::atomic::Ordering::Relaxed);
                    }
                }
                Ok(_) => {}
                Err(_) => break,
            }
        }
        other
    }
}

/// What the watcher looks at: the store's runs, the manifest's folder (the manifest itself and
/// results files), the rules file, the tools' folders.
fn watch_paths(session: &Session) -> (Vec<(PathBuf, RecursiveMode)>, Vec<PathBuf>) {
    let contest = &session.plan.contest;
    let runs = session.store.root().join("runs");
    let _ = std::fs::create_dir_all(&runs);
    let mut inputs = vec![
        absolute(&contest.manifest_path),
        absolute(&contest.rules_path),
    ];
    for file in &contest.results {
        inputs.push(absolute(file));
    }
    let mut paths = vec![(runs, RecursiveMode::Recursive)];
    if let Some(dir) = contest.manifest_path.parent() {
        paths.push((dir.to_path_buf(), RecursiveMode::NonRecursive));
    }
    if let Some(dir) = contest.rules_path.parent() {
        paths.push((dir.to_path_buf(), RecursiveMode::NonRecursive));
    }
    for tool in &contest.tools {
        if let Some(dir) = &tool.dir {
            paths.push((dir.clone(), RecursiveMode::Recursive));
            inputs.push(absolute(dir));
        }
    }
    (paths, inputs)
}

/// A file or folder was created, written, renamed or removed (not read, not only touched).
pub(super) fn is_change(kind: &notify::EventKind) -> bool {
    use notify::event::{EventKind, ModifyKind};
    match kind {
        EventKind::Create(_) | EventKind::Remove(_) => true,
        EventKind::Modify(ModifyKind::Metadata(_)) => false,
        EventKind::Modify(_) => true,
        _ => false,
    }
}

fn absolute(path: &Path) -> PathBuf {
    std::fs::canonicalize(path)
        .unwrap_or_else(|_| std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf()))
}

/// Whether a changed path is an input of the plan (the manifest, the rules, a file under a
/// tool's folder) rather than something mccbuild writes itself (anything under the store, e.g.
/// records, the index, the digest cache, setups' products).
pub(super) fn is_input(path: &Path, store_root: &Path, inputs: &[PathBuf]) -> bool {
    !path.starts_with(store_root) && inputs.iter().any(|i| path == i || path.starts_with(i))
}
