//! The watched contest ([`State`]): a session and its scoring database, to which records that
//! appear or leave and edits of the manifest or the rules are applied as input changes.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use mccbuild_core::RunKey;
use mccbuild_plan::RunOrigin;
use mccbuild_plan::manifest::Contest;
use mccbuild_scoring::db::{Handles, RunRef, ScoringDb, podiums};
use mccbuild_scoring::inputs::{run_inputs, run_refs, tool_infos};
use mccbuild_scoring::scores::{ScoresReport, scores_report, scores_report_of_current};
use mccbuild_store::index::LoadReport;

use super::update::{Update, change_time, counts, podium_changes, since};
use crate::error::OpenError;
use crate::session::Session;

/// The watched contest: a session and its scoring database.
pub(super) struct State {
    pub(super) session: Session,
    /// The manifest as read (before the plan adds the tools of results files), when it is the
    /// one the plan was made from: what an edit is compared with. None: any edit re-plans.
    pub(super) loaded: Option<Contest>,
    pub(super) db: ScoringDb,
    pub(super) handles: Handles,
    /// Each planned run's handle and index in the plan.
    pub(super) runs: HashMap<RunKey, (RunRef, usize)>,
    pub(super) scores: ScoresReport,
    /// The runs (indices into the plan) whose record changed since the site was last updated.
    pub(super) changed_runs: Vec<usize>,
    /// The model examinations whose trusted values or scores salsa recomputed since then (None:
    /// not known).
    pub(super) recomputed: Option<Vec<usize>>,
    /// Model examinations by salsa id.
    pub(super) examination_ids: HashMap<salsa::Id, usize>,
}

impl State {
    pub(super) fn open(manifest: &Path) -> Result<State, OpenError> {
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
        let mut scores = scores_report(&session.plan, &db, &handles, false);
        scores.partial = session.partial_in_index();
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
    pub(super) fn apply_contest_edit(
        &mut self,
        manifest: &Path,
        number: u64,
    ) -> Result<Option<Update>, OpenError> {
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
        let mut scores = scores_report_of_current(&self.session.plan, &self.db, &self.handles);
        // The same runs planned, the same records: as partial as before.
        scores.partial = self.scores.partial.clone();
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

    pub(super) fn missing_runs(&self) -> usize {
        self.session
            .plan
            .runs
            .iter()
            .filter(|r| r.origin == RunOrigin::Executed && !self.session.index.contains(&r.key))
            .count()
    }
}

impl State {
    /// Applies the records that arrived (or left) and re-scores: the update to publish, if
    /// any record of this plan changed. `paths`: as for [`State::apply_store_changes`].
    pub(super) fn update_from_records(
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
        let mut scores = scores_report_of_current(&self.session.plan, &self.db, &self.handles);
        scores.partial = self.session.partial_in_index();
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
