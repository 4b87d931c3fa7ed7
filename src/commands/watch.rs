//! `mccbuild watch`: one long-lived process that keeps the scoring database and applies each
//! change as it happens. A run record appearing in (or leaving) the store, whoever wrote it, is
//! an input change of the salsa database: only the queries that depend on it re-execute. An edit
//! of the manifest or the rules that plans the same runs (a scoring rule such as E-3.1's
//! threshold, a tool's kind or family: [`Contest::same_plan_as`]) is applied through the
//! edition's input setters, re-scoring only what reads the changed rule; any other edit of the
//! manifest or the rules, and an edit of a tool or a results file, re-plans (a new plan: new
//! keys, a new database). The last good state is kept while the manifest is invalid; with `--run`
//! the runs a change makes necessary are executed by a `mccbuild run` child, whose records then
//! arrive like any other.
//!
//! Changes are noticed through inotify (the `notify` crate): a record event reads that record
//! only (the store's whole reconciliation, which checks every record file's stamp, costs ~0.5 s
//! at an edition's scale). As a safety net the store is reconciled in full every 30 s, and at
//! once when the kernel's event queue overflowed; bursts are coalesced (all records present
//! when an update starts go into it).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime};

use notify::{RecursiveMode, Watcher};
use serde::Serialize;

use mccbuild_core::RunKey;
use mccbuild_plan::manifest::Contest;
use mccbuild_plan::RunOrigin;
use mccbuild_scoring::db::{podiums, Handles, RunRef, ScoringDb};
use mccbuild_scoring::inputs::{run_inputs, run_refs, tool_infos};
use mccbuild_scoring::scores::{scores_report, scores_report_of_current, ScoresReport};
use mccbuild_store::index::LoadReport;
use mccbuild_store::StoreError;

use mccbuild_output::report::live::LiveSite;
use mccbuild_output::report::{write_files, ReportData};

use crate::error::Error;
use crate::serve::Server;
use crate::session::Session;

/// What `mccbuild watch` is asked to do.
pub struct WatchOptions {
    pub manifest: PathBuf,
    /// Execute the runs a change makes necessary.
    pub run: bool,
    /// Serve the report, updated live, on this address.
    pub serve: Option<String>,
    /// Keep the report written in this folder, as `mccbuild report --out` writes it: after an
    /// update, only the pages that changed are written again.
    pub out: Option<PathBuf>,
    /// One JSON object per line on stdout for each update.
    pub json: bool,
    /// Stop after this many updates (tests and benchmarks); None: until interrupted.
    pub updates: Option<u64>,
}

/// One published update.
#[derive(Debug, Serialize)]
pub struct Update {
    pub update: u64,
    /// Why: "start", "records", "rules" (an edit of the manifest or the rules that plans the
    /// same runs: re-scored through the scoring database's inputs) or "replan".
    pub cause: &'static str,
    /// Run records applied (appeared or disappeared).
    pub records: usize,
    /// Applying them and re-scoring, in this process.
    pub compute_ms: f64,
    /// From the moment the newest applied record appeared in the store (its inode change time),
    /// or the edited manifest or rules file was written, to the new scores: noticing it,
    /// reading it, applying it, re-scoring.
    pub latency_ms: Option<f64>,
    /// The salsa queries that re-executed, by name.
    pub queries: BTreeMap<String, usize>,
    /// Categories whose podium changed: (before, after).
    pub podium_changes: BTreeMap<String, (Vec<String>, Vec<String>)>,
    /// The results site's update (with `--serve` or `--out`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub site: Option<SiteUpdate>,
    pub scores: ScoresReport,
}

/// What an update did to the results site.
#[derive(Debug, Serialize)]
pub struct SiteUpdate {
    /// Pages (and the style sheet) rendered again: those whose inputs changed.
    pub rendered: usize,
    /// Charts drawn on them.
    pub charts: usize,
    /// Files of the site in all.
    pub pages: usize,
    /// Gathering what changed, rendering, writing (`--out`) and publishing, in this process.
    pub ms: f64,
}

/// The watched contest: a session and its scoring database.
struct State {
    session: Session,
    /// The manifest as read (before the plan adds the tools of results files), when it is the
    /// one the plan was made from: what an edit is compared with. None: any edit re-plans.
    loaded: Option<Contest>,
    db: ScoringDb,
    handles: Handles,
    /// Each planned run's handle and index in the plan.
    runs: HashMap<RunKey, (RunRef, usize)>,
    scores: ScoresReport,
    /// The runs (indices into the plan) whose record changed since the site was last updated.
    changed_runs: Vec<usize>,
    /// The model examinations whose trusted values or scores salsa recomputed since then (None:
    /// not known).
    recomputed: Option<Vec<usize>>,
    /// Model examinations by salsa id.
    examination_ids: HashMap<salsa::Id, usize>,
}

impl State {
    fn open(manifest: &Path) -> Result<State, Error> {
        let session = Session::open(manifest)?;
        let (db, handles) = session.scoring_logged();
        let runs: HashMap<RunKey, (RunRef, usize)> = session
            .plan
            .runs
            .iter()
            .zip(run_refs(&session.plan, &handles))
            .enumerate()
            .map(|(i, (run, r))| (run.key, (r, i)))
            .collect();
        let scores = scores_report(&session.plan, &db, &handles, false);
        // Read again to keep it: if it changed since the plan read it, the plan's contest
        // differs from it and an edit will re-plan.
        let loaded = Contest::load(manifest)
            .ok()
            .filter(|c| planned_from(c, &session.plan.contest));
        let examination_ids = handles.examination_ids();
        Ok(State {
            session,
            loaded,
            db,
            handles,
            runs,
            scores,
            changed_runs: Vec::new(),
            recomputed: Some(Vec::new()),
            examination_ids,
        })
    }

    /// The records among `paths` (and those found damaged before, looked at again): each read
    /// and verified, and put in (or taken out of) the index when its content changed.
    fn look_at_records(
        &mut self,
        paths: &[PathBuf],
        pending_corrupt: &HashMap<PathBuf, Instant>,
    ) -> LoadReport {
        let mut report = LoadReport::default();
        let runs = self.session.store.root().join("runs");
        // A shard folder named by an event (made, or renamed in): its records are looked at too.
        // A record renamed into a folder made a moment before comes before the watcher watches
        // that folder, so no event names the record itself (inotify's watches are per folder).
        let in_new_folders: Vec<PathBuf> = paths
            .iter()
            .filter(|p| p.parent() == Some(runs.as_path()))
            .filter_map(|shard| std::fs::read_dir(shard).ok())
            .flat_map(|entries| entries.flatten().map(|e| e.path()))
            .collect();
        let mut keys: Vec<RunKey> = paths
            .iter()
            .chain(&in_new_folders)
            .chain(pending_corrupt.keys())
            .filter(|p| p.parent().and_then(Path::parent) == Some(runs.as_path()))
            .filter_map(|p| {
                p.file_name()?
                    .to_str()?
                    .strip_suffix(".json")
                    .and_then(RunKey::from_hex)
            })
            .collect();
        keys.sort_unstable();
        keys.dedup();
        let index = &mut self.session.index;
        let mut gone = false;
        for key in keys {
            match self.session.store.get_verified(&key) {
                Ok(Some((record, digest))) => {
                    if index.digest(&key) != Some(digest) {
                        index.insert(key, mccbuild_store::Summary::of(&record), digest);
                        report.changed.push(key);
                    }
                }
                Ok(None) => gone |= index.contains(&key),
                Err(corrupt) => report.corrupt.push(corrupt),
            }
        }
        // A stored run's loose file gone: removed, or packed by a `mccbuild run` (which writes
        // the pack before it removes the loose files, docs/cache.md "Packs"). The store
        // reconciled in full tells which: the packs first, then the shard folders.
        if gone {
            index.reconcile(&self.session.store, &mut report);
        }
        report
    }

    /// Applies the records that appeared or disappeared: those named by `paths` (inotify's
    /// events), or every change since the last look when `paths` is None (the store reconciled
    /// in full). Returns how many concern this plan and the write time of the newest.
    fn apply_store_changes(
        &mut self,
        paths: Option<&[PathBuf]>,
        pending_corrupt: &mut HashMap<PathBuf, Instant>,
    ) -> (usize, Option<SystemTime>) {
        let report = match paths {
            Some(paths) => self.look_at_records(paths, pending_corrupt),
            None => {
                let mut report = LoadReport::default();
                self.session
                    .index
                    .reconcile(&self.session.store, &mut report);
                report
            }
        };
        // A record that does not parse may be half-written by a writer that does not rename
        // atomically: it is looked at again; reported if it stays broken.
        for c in report.corrupt {
            let first = *pending_corrupt
                .entry(c.path.clone())
                .or_insert_with(Instant::now);
            if first.elapsed() > Duration::from_secs(2) {
                eprintln!(
                    "warning: damaged run record {}: {}; its run will be done again",
                    c.path.display(),
                    c.reason
                );
                pending_corrupt.insert(c.path, Instant::now() + Duration::from_secs(3600));
            }
        }
        let mut applied = 0;
        let mut newest: Option<SystemTime> = None;
        // Applied together: the decisions the trusted values read are settled once, at the end.
        let mut changes = self.db.change();
        for key in report.changed {
            let Some(&(run, index)) = self.runs.get(&key) else {
                continue;
            };
            self.changed_runs.push(index);
            pending_corrupt.remove(&self.session.store.record_path(&key));
            let (answers, competes, measurement) = run_inputs(self.session.index.get(&key));
            changes.set_answers(run, answers);
            changes.set_competes(run, competes);
            changes.set_measurement(run, measurement);
            applied += 1;
            // When the record appeared: its inode's change time (set by the write, and by the
            // rename that atomic writers end with; a record moved in keeps its old mtime).
            if let Ok(meta) = std::fs::metadata(self.session.store.record_path(&key)) {
                newest = newest.max(Some(change_time(&meta)));
            }
        }
        drop(changes);
        (applied, newest)
    }

    /// Applies an edit of the manifest or the rules that plans the same runs (a scoring rule, a
    /// tool's kind or family) through the scoring database's input setters, and re-scores.
    /// None: the edit changes the plan (or the manifest read at the start is not known): re-plan.
    /// An invalid manifest or rules file is an error (the last good state is kept).
    fn apply_contest_edit(
        &mut self,
        manifest: &Path,
        number: u64,
    ) -> Result<Option<Update>, Error> {
        let t = Instant::now();
        let new = Contest::load(manifest)?;
        let Some(loaded) = &self.loaded else {
            return Ok(None);
        };
        if !loaded.same_plan_as(&new) {
            return Ok(None);
        }
        // The plan's contest: the manifest's, then the tools that only results files name.
        let mut contest = new.clone();
        contest
            .tools
            .extend_from_slice(&self.session.plan.contest.tools[loaded.tools.len()..]);
        self.db.start_logging();
        let mut changes = self.db.change();
        changes.set_edition(&self.handles, contest.edition.clone());
        changes.set_tools(&self.handles, tool_infos(&contest));
        drop(changes);
        self.session.plan.contest = contest;
        self.loaded = Some(new);
        let _ = podiums(&self.db, self.handles.contest);
        let scores = scores_report_of_current(&self.session.plan, &self.db, &self.handles);
        let compute_ms = t.elapsed().as_secs_f64() * 1e3;
        let written = [
            &self.session.plan.contest.manifest_path,
            &self.session.plan.contest.rules_path,
        ]
        .into_iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| change_time(&m))
        .max();
        let update = Update {
            update: number,
            cause: "rules",
            records: 0,
            compute_ms,
            latency_ms: since(written),
            queries: counts(self.db.take_executed()),
            podium_changes: podium_changes(&self.scores, &scores),
            site: None,
            scores: scores.clone(),
        };
        self.scores = scores;
        Ok(Some(update))
    }

    /// The queries executed since the last call, by name; notes the model examinations whose
    /// trusted values or scores were recomputed (for the site).
    fn executed(&mut self) -> Vec<String> {
        let Some(executed) = self.db.executed_with_ids() else {
            self.recomputed = None;
            return Vec::new();
        };
        let mut names = Vec::with_capacity(executed.len());
        for (name, id) in executed {
            // `exam_scores` decides the trusted values too (`trusted_values` reads its result).
            if name == "exam_scores" {
                match (&mut self.recomputed, self.examination_ids.get(&id)) {
                    (Some(r), Some(&i)) => r.push(i),
                    _ => self.recomputed = None,
                }
            }
            names.push(name);
        }
        names
    }

    fn missing_runs(&self) -> usize {
        self.session
            .plan
            .runs
            .iter()
            .filter(|r| r.origin == RunOrigin::Executed && !self.session.index.contains(&r.key))
            .count()
    }
}

/// Whether `loaded` (a manifest as read) is what `planned` (a plan's contest) was made from: the
/// same, but for the tools the plan added after the manifest's (those only results files name).
fn planned_from(loaded: &Contest, planned: &Contest) -> bool {
    if loaded.tools.len() > planned.tools.len() {
        return false;
    }
    let mut prefix = planned.clone();
    prefix.tools.truncate(loaded.tools.len());
    prefix == *loaded
}

/// A file's inode change time (set by a write, and by the rename that atomic writers end with).
fn change_time(meta: &std::fs::Metadata) -> SystemTime {
    use std::os::unix::fs::MetadataExt;
    SystemTime::UNIX_EPOCH
        + Duration::new(
            meta.ctime().max(0) as u64,
            meta.ctime_nsec().clamp(0, 999_999_999) as u32,
        )
}

/// Milliseconds from `t` to now.
fn since(t: Option<SystemTime>) -> Option<f64> {
    t.and_then(|t| SystemTime::now().duration_since(t).ok())
        .map(|d| d.as_secs_f64() * 1e3)
}

fn podium_changes(
    before: &ScoresReport,
    after: &ScoresReport,
) -> BTreeMap<String, (Vec<String>, Vec<String>)> {
    let mut changes = BTreeMap::new();
    for (category, now) in &after.podiums {
        let was = before.podiums.get(category).cloned().unwrap_or_default();
        if &was != now {
            changes.insert(category.clone(), (was, now.clone()));
        }
    }
    changes
}

fn counts(names: Vec<String>) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for n in names {
        *counts.entry(n).or_insert(0) += 1;
    }
    counts
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
fn is_change(kind: &notify::EventKind) -> bool {
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
fn is_input(path: &Path, store_root: &Path, inputs: &[PathBuf]) -> bool {
    !path.starts_with(store_root) && inputs.iter().any(|i| path == i || path.starts_with(i))
}

impl State {
    /// Applies the records that arrived (or left) and re-scores: the update to publish, if
    /// any record of this plan changed. `paths`: as for [`State::apply_store_changes`].
    fn update_from_records(
        &mut self,
        number: u64,
        paths: Option<&[PathBuf]>,
        pending_corrupt: &mut HashMap<PathBuf, Instant>,
    ) -> Option<Update> {
        let t = Instant::now();
        self.db.start_logging();
        let (records, newest) = self.apply_store_changes(paths, pending_corrupt);
        if records == 0 {
            let _ = self.executed();
            return None;
        }
        let applied_ms = t.elapsed().as_secs_f64() * 1e3;
        // Many records at once: their groups are recomputed on all cores. One record touches one
        // group: spreading the verification over threads costs more than it saves.
        if records > 32 {
            self.db.refresh(&self.handles);
        }
        let _ = podiums(&self.db, self.handles.contest);
        let scored_ms = t.elapsed().as_secs_f64() * 1e3;
        let scores = scores_report_of_current(&self.session.plan, &self.db, &self.handles);
        let compute_ms = t.elapsed().as_secs_f64() * 1e3;
        if std::env::var_os("MCCBUILD_WATCH_DEBUG").is_some() {
            eprintln!(
                "timing: read and applied {applied_ms:.1} ms, podiums {:.1} ms, report {:.1} ms",
                scored_ms - applied_ms,
                compute_ms - scored_ms
            );
        }
        let latency_ms = since(newest);
        let update = Update {
            update: number,
            cause: "records",
            records,
            compute_ms,
            latency_ms,
            queries: counts(self.executed()),
            podium_changes: podium_changes(&self.scores, &scores),
            site: None,
            scores: scores.clone(),
        };
        self.scores = scores;
        Some(update)
    }
}

/// Where updates go: standard output (lines or JSON), the served site and the site's folder.
struct Publisher {
    json: bool,
    server: Option<Server>,
    out: Option<PathBuf>,
    /// The site as last rendered (with `--serve` or `--out`); None until the first update and
    /// after a re-plan or a rules edit (a new site is rendered whole).
    site: Option<LiveSite>,
}

impl Publisher {
    fn publish(&mut self, state: &mut State, mut update: Update) -> Result<(), Error> {
        if self.server.is_some() || self.out.is_some() {
            update.site = Some(self.update_site(state, update.cause == "records")?);
        } else {
            state.changed_runs.clear();
            state.recomputed = Some(Vec::new());
        }
        if self.json {
            println!("{}", serde_json::to_string(&update).unwrap_or_default());
        } else {
            println!(
                "update {}: {} ({}, {:.1} ms{})",
                update.update,
                update.cause,
                crate::progress::count(update.records, "record", "records"),
                update.compute_ms,
                update
                    .latency_ms
                    .map(|l| format!(", {l:.1} ms after the record"))
                    .unwrap_or_default()
            );
            for (category, (was, now)) in &update.podium_changes {
                println!("  {category}: {} -> {}", was.join(", "), now.join(", "));
            }
        }
        Ok(())
    }

    /// Renders the pages whose inputs changed (after records only: any other update renders a
    /// new site whole), writes them into `--out`'s folder and serves them.
    fn update_site(&mut self, state: &mut State, records: bool) -> Result<SiteUpdate, Error> {
        let t = Instant::now();
        let changed_runs = std::mem::take(&mut state.changed_runs);
        let mut recomputed = state.recomputed.replace(Vec::new());
        if let Some(r) = &mut recomputed {
            r.sort_unstable();
            r.dedup();
        }
        let session = &state.session;
        let (change, all) = match (&mut self.site, records) {
            (Some(site), true) => {
                let diagnostics = session.diagnostics_of(changed_runs.iter().copied());
                let change = site.update(
                    &session.plan,
                    &state.db,
                    &state.handles,
                    state.scores.clone(),
                    &changed_runs,
                    recomputed.as_deref(),
                    |k| session.index.get(k),
                    diagnostics,
                );
                (change, false)
            }
            _ => {
                let mut data = ReportData::gather(&session.plan, &state.db, &state.handles, |k| {
                    session.index.get(k)
                });
                data.diagnostics = session.diagnostics_of(0..session.plan.runs.len());
                let (site, change) = LiveSite::new(data, &state.db, &state.handles);
                self.site = Some(site);
                (change, true)
            }
        };
        let rendered = t.elapsed();
        if let Some(server) = &self.server {
            server.publish(&change.changed, all, &state.scores);
        }
        if let Some(dir) = &self.out {
            write_files(dir, &change.changed).map_err(|e| Error::Output {
                path: e.path,
                source: e.source,
            })?;
        }
        if std::env::var_os("MCCBUILD_WATCH_DEBUG").is_some() {
            let phases: Vec<String> = change
                .phases
                .iter()
                .map(|(what, ms)| format!("{what} {ms:.1} ms"))
                .chain(
                    change
                        .rendered
                        .iter()
                        .map(|(page, ms)| format!("{page} {ms:.1} ms")),
                )
                .collect();
            eprintln!(
                "timing: site: {}; published and written {:.1} ms (site {:.1} ms in all)",
                phases.join(", "),
                (t.elapsed() - rendered).as_secs_f64() * 1e3,
                t.elapsed().as_secs_f64() * 1e3,
            );
        }
        Ok(SiteUpdate {
            rendered: change.changed.len(),
            charts: change.charts,
            pages: change.pages,
            ms: t.elapsed().as_secs_f64() * 1e3,
        })
    }
}

/// The files watched (inotify), re-aimed when a re-plan changes them.
struct Watching {
    watcher: notify::RecommendedWatcher,
    events: mpsc::Receiver<notify::Result<notify::Event>>,
    watched: Vec<(PathBuf, RecursiveMode)>,
    inputs: Vec<PathBuf>,
    /// The manifest and the rules file (absolute): an edit of these may keep the plan.
    contest_files: Vec<PathBuf>,
    /// Events may have been lost (the queue overflowed): the store is reconciled in full.
    lost: std::sync::atomic::AtomicBool,
    store_root: PathBuf,
}

/// Which inputs of the plan changed, in increasing order of what they cost.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum InputChange {
    None,
    /// Only the manifest or the rules file: may keep the plan.
    Contest,
    /// A tool's folder or a results file: re-plan.
    Other,
}

impl Watching {
    fn start(session: &Session) -> Result<Watching, Error> {
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
    fn aim(&mut self, session: &Session, warn: bool) {
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
    fn next(&self) -> (Vec<notify::Event>, bool, InputChange) {
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
    fn settle(&self) -> bool {
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

/// The `mccbuild run` child of `watch --run`.
struct Runner {
    manifest: PathBuf,
    enabled: bool,
    child: Option<std::process::Child>,
    /// A re-plan with runs to do while a child is still going: start another after it.
    wanted: bool,
}

impl Runner {
    /// Starts a child for the missing runs when one is wanted and none is going.
    fn poll(&mut self, missing: impl FnOnce() -> usize) {
        if let Some(c) = &mut self.child {
            if let Ok(Some(_)) = c.try_wait() {
                self.child = None;
            }
        }
        if self.wanted && self.child.is_none() {
            self.wanted = false;
            self.child = spawn_run(&self.manifest, missing());
        }
    }
}

/// How often the store is reconciled in full (every record file's stamp checked), as a safety
/// net under inotify.
const FULL_RECONCILE: Duration = Duration::from_secs(30);

/// Runs the watch loop until `--updates` updates were published (or forever).
pub fn watch(options: WatchOptions) -> Result<(), Error> {
    let mut state = State::open(&options.manifest)?;
    let server = match &options.serve {
        Some(addr) => {
            let server = Server::start(addr)
                .map_err(|e| Error::Usage(format!("cannot serve on {addr}: {e}")))?;
            eprintln!("serving the report on http://{}/", server.addr());
            Some(server)
        }
        None => None,
    };
    let mut publisher = Publisher {
        json: options.json,
        server,
        out: options.out.clone(),
        site: None,
    };
    let mut watching = Watching::start(&state.session)?;
    let mut runner = Runner {
        manifest: options.manifest.clone(),
        enabled: options.run,
        child: None,
        wanted: options.run,
    };
    // Installed, not inherited: a watch started in the background of a script inherits SIGINT
    // ignored, and must still stop on Ctrl-C or `kill -INT`.
    let cancel = crate::signals::cancel_on_interrupt()
        .map_err(|e| Error::NotStarted(format!("cannot handle signals: {e}")))?;
    let mut pending_corrupt: HashMap<PathBuf, Instant> = HashMap::new();
    let mut number = 0u64;
    let mut reconciled = Instant::now();
    let _ = state.db.take_executed();
    let start = Update::start(&state.scores);
    publisher.publish(&mut state, start)?;
    runner.poll(|| state.missing_runs());
    // The start is update 0: `--updates N` stops after it and N - 1 more.
    while options.updates.is_none_or(|n| number + 1 < n) {
        if cancel.load(std::sync::atomic::Ordering::SeqCst) {
            if let Some(mut c) = runner.child.take() {
                // SAFETY: a signal to our own child.
                unsafe { libc::kill(c.id() as i32, libc::SIGINT) };
                let _ = c.wait();
            }
            return Err(Error::Interrupted);
        }
        let (events, timed_out, inputs_changed) = watching.next();
        if events.is_empty() && !timed_out {
            continue;
        }
        runner.poll(|| state.missing_runs());
        if inputs_changed != InputChange::None {
            let other = watching.settle() || inputs_changed == InputChange::Other;
            if !other {
                match state.apply_contest_edit(&options.manifest, number + 1) {
                    Ok(Some(update)) => {
                        number += 1;
                        if !options.json {
                            eprintln!("re-scored: the edit plans the same runs");
                        }
                        publish_or_warn(&mut publisher, &mut state, update);
                        continue;
                    }
                    Ok(None) => {}
                    Err(e) => {
                        eprintln!("error (keeping the last good state): {e}");
                        continue;
                    }
                }
            }
            let t = Instant::now();
            match State::open(&options.manifest) {
                Ok(new) => {
                    watching.aim(&new.session, false);
                    let before = std::mem::replace(&mut state, new);
                    number += 1;
                    let _ = state.db.take_executed();
                    let update = Update::replan(number, t, &before.scores, &state.scores);
                    if !options.json {
                        eprintln!(
                            "re-planned: {} runs, {} to run",
                            state.session.plan.runs.len(),
                            state.missing_runs()
                        );
                    }
                    publisher.site = None;
                    publish_or_warn(&mut publisher, &mut state, update);
                    runner.wanted = runner.enabled;
                }
                Err(e) => eprintln!("error (keeping the last good state): {e}"),
            }
            continue;
        }
        // The store in full every 30 s and after lost events; otherwise the records named.
        let full = (timed_out && reconciled.elapsed() > FULL_RECONCILE)
            || watching
                .lost
                .swap(false, std::sync::atomic::Ordering::Relaxed);
        let paths: Vec<PathBuf> = events.into_iter().flat_map(|e| e.paths).collect();
        if full {
            reconciled = Instant::now();
        }
        let paths = (!full).then_some(&paths[..]);
        if let Some(update) = state.update_from_records(number + 1, paths, &mut pending_corrupt) {
            number += 1;
            publish_or_warn(&mut publisher, &mut state, update);
        }
    }
    if let Some(mut c) = runner.child {
        let _ = c.wait();
    }
    Ok(())
}

/// Publishes an update; a site that cannot be written is reported, and rendered whole at the
/// next update (the watch goes on).
fn publish_or_warn(publisher: &mut Publisher, state: &mut State, update: Update) {
    if let Err(e) = publisher.publish(state, update) {
        eprintln!("error: {e}");
        publisher.site = None;
    }
}

impl Update {
    fn start(scores: &ScoresReport) -> Update {
        Update {
            update: 0,
            cause: "start",
            records: 0,
            compute_ms: 0.0,
            latency_ms: None,
            queries: BTreeMap::new(),
            podium_changes: BTreeMap::new(),
            site: None,
            scores: scores.clone(),
        }
    }

    fn replan(
        number: u64,
        started: Instant,
        before: &ScoresReport,
        after: &ScoresReport,
    ) -> Update {
        Update {
            update: number,
            cause: "replan",
            records: 0,
            compute_ms: started.elapsed().as_secs_f64() * 1e3,
            latency_ms: None,
            queries: BTreeMap::new(),
            podium_changes: podium_changes(before, after),
            site: None,
            scores: after.clone(),
        }
    }
}

/// Starts `mccbuild run` for the runs a change made necessary.
fn spawn_run(manifest: &Path, missing: usize) -> Option<std::process::Child> {
    if missing == 0 {
        return None;
    }
    eprintln!(
        "running {} (their records are applied as they arrive)",
        crate::progress::count(missing, "run", "runs")
    );
    let exe = std::env::current_exe().ok()?;
    std::process::Command::new(exe)
        .args(["run", "--json", "--manifest"])
        .arg(manifest)
        .stdout(std::process::Stdio::null())
        .spawn()
        .map_err(|e| eprintln!("error: cannot start mccbuild run: {e}"))
        .ok()
}
