//! `mccbuild watch`: one long-lived process that keeps the scoring database and applies each
//! change as it happens. A run record appearing in (or leaving) the store, whoever wrote it, is
//! an input change of the salsa database: only the queries that depend on it re-execute. An edit
//! of the manifest, the rules or a tool re-plans (a new plan: new keys, a new database), keeping
//! the last good state while the manifest is invalid; with `--run` the runs a change makes
//! necessary are executed by a `mccbuild run` child, whose records then arrive like any other.
//!
//! Changes are noticed through inotify (the `notify` crate) and, as a safety net, a rescan every
//! second; bursts are coalesced (all records present when an update starts go into it).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime};

use notify::{RecursiveMode, Watcher};
use serde::Serialize;

use crate::db::{podiums, Handles, RunRef, ScoringDb};
use crate::key::RunKey;
use crate::results::{scores_report, ScoresReport};
use crate::session::{run_inputs, Session};
use crate::store::index::LoadReport;

/// What `mccbuild watch` is asked to do.
pub struct WatchOptions {
    pub manifest: PathBuf,
    /// Execute the runs a change makes necessary.
    pub run: bool,
    /// Serve the report, updated live, on this address.
    pub serve: Option<String>,
    /// One JSON object per line on stdout for each update.
    pub json: bool,
    /// Stop after this many updates (tests and benchmarks); None: until interrupted.
    pub updates: Option<u64>,
}

/// One published update.
#[derive(Debug, Serialize)]
pub struct Update {
    pub update: u64,
    /// Why: "start", "records" or "replan".
    pub cause: &'static str,
    /// Run records applied (appeared or disappeared).
    pub records: usize,
    /// Applying them and re-scoring, in this process.
    pub compute_ms: f64,
    /// From the moment the newest applied record appeared in the store (its inode change time)
    /// to the new scores: noticing it, reading it, applying it, re-scoring.
    pub latency_ms: Option<f64>,
    /// The salsa queries that re-executed, by name.
    pub queries: BTreeMap<String, usize>,
    /// Categories whose podium changed: (before, after).
    pub podium_changes: BTreeMap<String, (Vec<String>, Vec<String>)>,
    pub scores: ScoresReport,
}

/// The watched contest: a session and its scoring database.
struct State {
    session: Session,
    db: ScoringDb,
    handles: Handles,
    runs: HashMap<RunKey, RunRef>,
    scores: ScoresReport,
}

impl State {
    fn open(manifest: &Path) -> Result<State, String> {
        let session = Session::open(manifest).map_err(|e| match e {
            crate::session::OpenError::Input(problems) => problems.to_string(),
            crate::session::OpenError::Store(message) => message,
        })?;
        let (db, handles) = session.scoring_logged();
        let runs: HashMap<RunKey, RunRef> = session
            .plan
            .runs
            .iter()
            .zip(crate::session::run_refs(&session.plan, &handles))
            .map(|(run, r)| (run.key, r))
            .collect();
        let scores = scores_report(&session.plan, &db, &handles, false);
        Ok(State {
            session,
            db,
            handles,
            runs,
            scores,
        })
    }

    /// Applies the records that appeared or disappeared since the last look; returns how many
    /// concern this plan and the write time of the newest.
    fn apply_store_changes(
        &mut self,
        pending_corrupt: &mut HashMap<PathBuf, Instant>,
    ) -> (usize, Option<SystemTime>) {
        let mut report = LoadReport::default();
        self.session
            .index
            .reconcile(&self.session.store, &mut report);
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
        for key in report.changed {
            let Some(&run) = self.runs.get(&key) else {
                continue;
            };
            pending_corrupt.remove(&self.session.store.record_path(&key));
            let (answers, competes, perf) = run_inputs(self.session.index.get(&key));
            self.db.set_answers(run, answers);
            self.db.set_competes(run, competes);
            self.db.set_perf(run, perf);
            applied += 1;
            // When the record appeared: its inode's change time (set by the write, and by the
            // rename that atomic writers end with; a record moved in keeps its old mtime).
            if let Ok(meta) = std::fs::metadata(self.session.store.record_path(&key)) {
                use std::os::unix::fs::MetadataExt;
                let t = SystemTime::UNIX_EPOCH
                    + Duration::new(
                        meta.ctime().max(0) as u64,
                        meta.ctime_nsec().clamp(0, 999_999_999) as u32,
                    );
                newest = newest.max(Some(t));
            }
        }
        (applied, newest)
    }

    fn missing_runs(&self) -> usize {
        self.session
            .plan
            .runs
            .iter()
            .filter(|r| {
                r.origin == crate::plan::RunOrigin::Executed && !self.session.index.contains(&r.key)
            })
            .count()
    }
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

/// Runs the watch loop; returns the process's exit code.
pub fn watch(options: WatchOptions) -> i32 {
    let mut state = match State::open(&options.manifest) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return crate::cli::exit::INVALID_INPUT;
        }
    };
    let server = match &options.serve {
        Some(addr) => match crate::serve::Server::start(addr) {
            Ok(server) => {
                eprintln!("serving the report on http://{}/", server.addr());
                Some(server)
            }
            Err(e) => {
                eprintln!("error: cannot serve on {addr}: {e}");
                return crate::cli::exit::INVALID_INPUT;
            }
        },
        None => None,
    };
    let (tx, rx) = mpsc::channel::<notify::Result<notify::Event>>();
    let mut watcher = match notify::recommended_watcher(tx) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("error: cannot watch files: {e}");
            return crate::cli::exit::STORE_ERROR;
        }
    };
    let (mut watched, mut inputs) = watch_paths(&state.session);
    for (path, mode) in &watched {
        if let Err(e) = watcher.watch(path, *mode) {
            eprintln!(
                "warning: cannot watch {}: {e}; its changes are not noticed",
                path.display()
            );
        }
    }
    let mut store_root = absolute(state.session.store.root());
    let mut child: Option<std::process::Child> = None;
    // A re-plan with runs to do while a `mccbuild run` is still going: start another after it.
    let mut run_wanted = false;
    let mut pending_corrupt: HashMap<PathBuf, Instant> = HashMap::new();
    let mut update_no = 0u64;
    let publish = |state: &State, update: Update, server: &Option<crate::serve::Server>| {
        if options.json {
            println!("{}", serde_json::to_string(&update).unwrap_or_default());
        } else {
            println!(
                "update {}: {} ({} records, {:.1} ms{})",
                update.update,
                update.cause,
                update.records,
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
        if let Some(server) = server {
            let data = crate::report::ReportData::gather(
                &state.session.plan,
                &state.db,
                &state.handles,
                |k| state.session.index.get(k),
            );
            server.publish(crate::report::render(&data), &state.scores);
        }
    };
    let start = Update {
        update: 0,
        cause: "start",
        records: 0,
        compute_ms: 0.0,
        latency_ms: None,
        queries: BTreeMap::new(),
        podium_changes: BTreeMap::new(),
        scores: state.scores.clone(),
    };
    let _ = state.db.take_executed();
    publish(&state, start, &server);
    if options.run {
        child = spawn_run(&options.manifest, state.missing_runs());
    }
    loop {
        if options.updates.is_some_and(|n| update_no >= n) {
            break;
        }
        // Wait for a change (or the one-second rescan), then take every event already there.
        // Only changes count: reads (mccbuild's own, among others) are not events to act on.
        let first = rx.recv_timeout(Duration::from_secs(1));
        let timed_out = first.is_err();
        let mut events: Vec<notify::Event> = Vec::new();
        for e in first
            .into_iter()
            .chain(std::iter::from_fn(|| rx.try_recv().ok()))
            .flatten()
        {
            if is_change(&e.kind) {
                events.push(e);
            }
        }
        if events.is_empty() && !timed_out {
            continue;
        }
        let inputs_changed = events
            .iter()
            .flat_map(|e| &e.paths)
            .any(|p| is_input(p, &store_root, &inputs));
        if std::env::var_os("MCCBUILD_WATCH_DEBUG").is_some() {
            for e in &events {
                eprintln!("event {:?} {:?}", e.kind, e.paths);
            }
        }
        if let Some(c) = &mut child {
            if let Ok(Some(_)) = c.try_wait() {
                child = None;
            }
        }
        if run_wanted && child.is_none() {
            run_wanted = false;
            child = spawn_run(&options.manifest, state.missing_runs());
        }
        if inputs_changed {
            // Editors write in several steps: let the burst settle.
            std::thread::sleep(Duration::from_millis(150));
            while rx.try_recv().is_ok() {}
            let t = Instant::now();
            match State::open(&options.manifest) {
                Ok(new) => {
                    for (path, _) in &watched {
                        let _ = watcher.unwatch(path);
                    }
                    (watched, inputs) = watch_paths(&new.session);
                    store_root = absolute(new.session.store.root());
                    for (path, mode) in &watched {
                        let _ = watcher.watch(path, *mode);
                    }
                    let before = std::mem::replace(&mut state, new);
                    update_no += 1;
                    let _ = state.db.take_executed();
                    let update = Update {
                        update: update_no,
                        cause: "replan",
                        records: 0,
                        compute_ms: t.elapsed().as_secs_f64() * 1e3,
                        latency_ms: None,
                        queries: BTreeMap::new(),
                        podium_changes: podium_changes(&before.scores, &state.scores),
                        scores: state.scores.clone(),
                    };
                    if !options.json {
                        eprintln!(
                            "re-planned: {} runs, {} to run",
                            state.session.plan.runs.len(),
                            state.missing_runs()
                        );
                    }
                    publish(&state, update, &server);
                    run_wanted = options.run;
                }
                Err(e) => eprintln!("error (keeping the last good state): {e}"),
            }
            continue;
        }
        let t = Instant::now();
        state.db.start_logging();
        let (records, newest) = state.apply_store_changes(&mut pending_corrupt);
        if records == 0 {
            let _ = state.db.take_executed();
            continue;
        }
        let applied_ms = t.elapsed().as_secs_f64() * 1e3;
        // Many records at once: their groups are recomputed on all cores. One record touches one
        // group: spreading the verification over threads costs more than it saves.
        if records > 32 {
            state.db.refresh(&state.handles);
        }
        let _ = podiums(&state.db, state.handles.contest);
        let scored_ms = t.elapsed().as_secs_f64() * 1e3;
        let scores = crate::results::scores_report_of_current(
            &state.session.plan,
            &state.db,
            &state.handles,
        );
        let compute_ms = t.elapsed().as_secs_f64() * 1e3;
        if std::env::var_os("MCCBUILD_WATCH_DEBUG").is_some() {
            eprintln!(
                "timing: read and applied {applied_ms:.1} ms, podiums {:.1} ms, report {:.1} ms",
                scored_ms - applied_ms,
                compute_ms - scored_ms
            );
        }
        let latency_ms = newest
            .and_then(|n| SystemTime::now().duration_since(n).ok())
            .map(|d| d.as_secs_f64() * 1e3);
        let queries = counts(state.db.take_executed());
        update_no += 1;
        let update = Update {
            update: update_no,
            cause: "records",
            records,
            compute_ms,
            latency_ms,
            queries,
            podium_changes: podium_changes(&state.scores, &scores),
            scores: scores.clone(),
        };
        state.scores = scores;
        publish(&state, update, &server);
    }
    if let Some(mut c) = child {
        let _ = c.wait();
    }
    crate::cli::exit::OK
}

/// Starts `mccbuild run` for the runs a change made necessary.
fn spawn_run(manifest: &Path, missing: usize) -> Option<std::process::Child> {
    if missing == 0 {
        return None;
    }
    eprintln!("running {missing} runs (their records are applied as they arrive)");
    let exe = std::env::current_exe().ok()?;
    std::process::Command::new(exe)
        .args(["run", "--json", "--manifest"])
        .arg(manifest)
        .stdout(std::process::Stdio::null())
        .spawn()
        .map_err(|e| eprintln!("error: cannot start mccbuild run: {e}"))
        .ok()
}
