//! One invocation's view of a contest: the plan, the store and its index, the executor.
//!
//! [`Session::open`] reads the manifest and rules, plans every run and looks each up in the
//! store; [`Session::execute`] (src/execute.rs) runs what is missing and records it;
//! [`Session::scoring`] builds the scoring database from the records.

use std::collections::BTreeMap;
use std::path::Path;

use mccbuild_core::diag::{Location, Problem, Problems};
use mccbuild_core::digest::Digest;
use mccbuild_core::timing::phase;
use mccbuild_core::Outcome;
use mccbuild_exec::local::{LocalExecutor, LocalSettings};
use mccbuild_exec::qemu::QemuExecutor;
use mccbuild_exec::RunExecutor;
use mccbuild_plan::digest_cache::DigestCache;
use mccbuild_plan::instance::ArchiveLimits;
use mccbuild_plan::manifest::{Contest, ExecutorKind};
use mccbuild_plan::snapshot::{self, Fingerprint};
use mccbuild_plan::{Plan, RunOrigin};
use mccbuild_scoring::db::{Handles, ScoringDb};
use mccbuild_scoring::inputs::build_scoring;
use mccbuild_scoring::memo;
use mccbuild_scoring::scores::{scores_report, ScoresReport};
use mccbuild_store::index::LoadReport;
use mccbuild_store::{CorruptRecord, Index, LockWait, Store, StoreLock};
use serde::Serialize;

use crate::error::Error;

pub struct Session {
    pub plan: Plan,
    pub store: Store,
    pub index: Index,
    pub executor: Box<dyn RunExecutor>,
    /// Records found damaged while loading (their runs are to be done again).
    pub corrupt: Vec<CorruptRecord>,
    /// The store's execution lock, for commands that execute runs (held until the session ends).
    pub lock: Option<StoreLock>,
    /// Things the user should know that do not stop the command.
    pub warnings: Vec<String>,
    /// Digest of the running mccbuild binary (part of the results key).
    pub binary: Digest,
    /// Per planned run: whether its record is in the store.
    pub(crate) stored: Vec<bool>,
    /// Per planned run, its record's content digest as the index said when the session opened
    /// (or when [`Session::record_digests`] last looked), and the results key of those: found
    /// once, used by whoever needs them while the index is unchanged.
    records: std::sync::Mutex<RecordDigests>,
    /// Runs in the store to execute again (`run --rerun`), with the digest of the record each
    /// replaces: that record stays, and counts, until the new one is written.
    pub(crate) redo: BTreeMap<usize, Digest>,
}

/// Counts for `mccbuild plan`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub runs: usize,
    pub cached: usize,
    pub to_run: usize,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PlanSummary {
    pub runs: usize,
    pub cached: usize,
    pub to_run: usize,
    pub by_tool: BTreeMap<String, Counts>,
}

/// Which runs a command is about (`--tool`, `--model`, `--examination`).
#[derive(Clone, Debug, Default)]
pub struct Filter {
    pub tools: Vec<String>,
    pub models: Vec<String>,
    pub examinations: Vec<String>,
}

impl Filter {
    /// Whether it lets every run through.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty() && self.models.is_empty() && self.examinations.is_empty()
    }
}

impl Session {
    /// Loads the contest, plans it, opens the store. Problems with the manifest or rules stop
    /// here ([`Error::Input`]), as does a store that cannot be used ([`Error::Store`]); problems
    /// with single instances are in `plan.problems`.
    pub fn open(manifest: &Path) -> Result<Session, Error> {
        Session::open_with(manifest, None, true)
    }

    /// [`Session::open`] for a command that executes runs: it takes the store's execution lock
    /// (waiting for, or refusing, another such command) before it reads which runs are stored.
    pub fn open_executing(
        manifest: &Path,
        wait: LockWait,
        command: &str,
    ) -> Result<Session, Error> {
        Session::open_with(manifest, Some((wait, command)), true)
    }

    /// [`Session::open_executing_and_warn`] for `import`, with the plan made from the results
    /// files whatever its snapshot (the snapshot keeps the rows' runs, not the rows).
    pub fn open_for_import(manifest: &Path) -> Result<Session, Error> {
        Session::open_with(manifest, Some((LockWait::Wait, "mccbuild import")), false)
            .map(Session::warn)
    }

    fn open_with(
        manifest: &Path,
        lock: Option<(LockWait, &str)>,
        use_snapshot: bool,
    ) -> Result<Session, Error> {
        let _t = phase("opened");
        let (contest, store, lock) = begin(manifest, lock)?;
        Session::open_begun(contest, store, lock, use_snapshot, None)
    }

    /// For `run` and `plan` without a filter: the no-op remembered for the contest at
    /// `manifest` when nothing it rests on changed (docs/cache.md, "The remembered no-op"; with
    /// `podium`, only when the podium report it names is in the results cache), otherwise the
    /// session opened (and its warnings said) as [`Session::open_and_warn`] or, with `lock`,
    /// [`Session::open_executing_and_warn`] would.
    pub fn open_or_recall(
        manifest: &Path,
        lock: Option<(LockWait, &str)>,
        podium: bool,
    ) -> Result<Opening, Error> {
        let t = phase("opened");
        let (contest, store, lock) = begin(manifest, lock)?;
        let (recalled, taken) = recall(&contest, &store, podium);
        if let Some(remembered) = recalled {
            let report = match podium {
                true => crate::results_cache::load(&store, &remembered.results),
                false => None,
            };
            if report.is_some() || !podium {
                return Ok(Opening::Noop(Box::new(Noop {
                    contest,
                    store,
                    lock,
                    remembered,
                    report,
                    taken,
                })));
            }
        }
        // The fingerprints taken to recall the no-op are those the plan snapshot is read under.
        let session = Session::open_begun(contest, store, lock, true, taken);
        drop(t);
        session
            .map(Session::warn)
            .map(|s| Opening::Session(Box::new(s)))
    }

    fn open_begun(
        contest: Contest,
        store: Store,
        lock: Option<StoreLock>,
        use_snapshot: bool,
        known: Option<Taken>,
    ) -> Result<Session, Error> {
        let had_index = store.index_path().exists();
        let mut warnings: Vec<String> = Vec::new();
        // The index (every record stat'ed, changed ones verified) loads beside the plan.
        let index_loading = {
            let store = store.clone();
            std::thread::spawn(move || Index::load(&store))
        };
        let (plan, executor, binary, fingerprints) =
            plan_of(contest, &store, use_snapshot, known, &mut warnings)?;
        let t = phase("index load");
        let (mut index, loaded) = index_loading.join().unwrap_or_else(|_| {
            let mut index = Index::load(&store);
            index.1.index_problem = Some("the index could not be loaded in parallel".into());
            index
        });
        drop(t);
        warnings.extend(store.notes.iter().cloned());
        warnings.extend(loaded.index_problem.iter().cloned());
        if !had_index && !index.is_empty() {
            // docs/cache.md: a missing index is rebuilt from the records, with a warning.
            warnings.push(format!(
                "{} is missing: rebuilt from the {} of the store",
                store.index_path().display(),
                crate::progress::count(index.len(), "record", "records")
            ));
        }
        for tool in &plan.contest.tools {
            if tool.dir.is_some() && tool.examinations.is_empty() {
                warnings.push(format!(
                    "tool `{}` enters no examination (`examinations = []` in {}): it has no runs; \
                     name examinations, categories or \"all\"",
                    tool.name,
                    plan.contest.manifest_path.display()
                ));
            }
        }
        warnings.extend(loaded.corrupt.iter().map(|c| {
            format!(
                "damaged run record {}: {}; it is not used, its run is to be done again (by `mccbuild run`, whose new record replaces it)",
                c.path.display(),
                c.reason
            )
        }));
        // What loading learnt (a rebuilt index, records verified again) is written back, so
        // that the next command does not redo it; a store that cannot be written only costs
        // that time again.
        if index.is_dirty() {
            let _t = phase("index save");
            let _ = index.save_learnt(&store);
        }
        let LoadReport { corrupt, .. } = loaded;
        let t = phase("stored runs");
        let (stored, mut records) = stored_runs(&plan, &index);
        drop(t);
        if let Some(fingerprints) =
            fingerprints.filter(|_| warnings.is_empty() && corrupt.is_empty())
        {
            remember_noop(
                &plan,
                &store,
                &index,
                &stored,
                &mut records,
                &binary,
                &fingerprints,
            );
        }
        Ok(Session {
            plan,
            store,
            index,
            executor,
            lock,
            corrupt,
            warnings,
            binary,
            stored,
            records: std::sync::Mutex::new(records),
            redo: BTreeMap::new(),
        })
    }

    /// Ends the session of a command that exits next: the executor (which cleans up after its
    /// runs) and the store's lock go as usual; the plan, the index and the looked-up records
    /// are left to the process's exit instead of being freed one allocation at a time (~17 ms
    /// at 299,988 runs, after the podiums are printed).
    pub fn end_of_command(self) {
        let Session {
            plan,
            index,
            records,
            stored,
            executor,
            lock,
            ..
        } = self;
        drop(executor);
        drop(lock);
        std::mem::forget((plan, index, records, stored));
    }

    /// [`Session::open`], then the warnings said on standard error.
    pub fn open_and_warn(manifest: &Path) -> Result<Session, Error> {
        Session::open_with(manifest, None, true).map(Session::warn)
    }

    /// [`Session::open_executing`], then the warnings said on standard error.
    pub fn open_executing_and_warn(
        manifest: &Path,
        wait: LockWait,
        command: &str,
    ) -> Result<Session, Error> {
        Session::open_with(manifest, Some((wait, command)), true).map(Session::warn)
    }

    fn warn(session: Session) -> Session {
        for w in &session.warnings {
            eprintln!("warning: {w}");
        }
        session
    }

    /// Problems with single instances, said as warnings (the commands that run, score or export
    /// go on without those instances' runs; `check` refuses them).
    pub fn warn_instance_problems(&self) {
        for p in &self.plan.problems.0 {
            eprintln!("warning: {p}");
        }
    }

    /// What `run` would fail on with this machine, though the manifest is valid: a tool needing
    /// more cores than this machine gives mccbuild (each of its runs would be an infrastructure
    /// failure). Errors for `check`, warnings for `run`. Not for Slurm (the nodes count).
    pub fn machine_problems(&self) -> Problems {
        machine_problems_of(&self.plan.contest)
    }

    /// Whether planned run `i` is in the store.
    pub fn is_stored(&self, i: usize) -> bool {
        self.stored[i]
    }

    /// `mccbuild run --rerun`: of `selection`, the executed runs in the store whose outcome is one
    /// of `outcomes` (any outcome if empty), marked to be executed again. Their records stay in
    /// the store (and in the scores) until the new ones replace them.
    pub fn mark_for_rerun(&mut self, selection: &[usize], outcomes: &[Outcome]) -> Vec<usize> {
        let mut marked = Vec::new();
        for &i in selection {
            let run = &self.plan.runs[i];
            if !self.stored[i] || run.origin != RunOrigin::Executed {
                continue;
            }
            let (Some(summary), Some(digest)) =
                (self.index.get(&run.key), self.index.digest(&run.key))
            else {
                continue;
            };
            if outcomes.is_empty() || outcomes.contains(&summary.outcome()) {
                self.redo.insert(i, digest);
                marked.push(i);
            }
        }
        marked
    }

    /// Whether planned run `i` is to be executed: not in the store, or marked to be redone.
    pub fn is_to_execute(&self, i: usize) -> bool {
        !self.stored[i] || self.redo.contains_key(&i)
    }

    /// Indices of the plan's runs that pass `filter`.
    pub fn select(&self, filter: &Filter) -> Result<Vec<usize>, Error> {
        let contest = &self.plan.contest;
        for t in &filter.tools {
            if contest.tool(t).is_none() {
                return Err(Error::Usage(format!(
                    "no tool `{t}` in {}",
                    contest.manifest_path.display()
                )));
            }
        }
        for m in &filter.models {
            if !self.plan.models.iter().any(|pm| &pm.name == m) {
                return Err(Error::Usage(format!(
                    "no model `{m}` in {}",
                    contest.manifest_path.display()
                )));
            }
        }
        for e in &filter.examinations {
            if contest.edition.examination(e).is_none() && contest.edition.category(e).is_none() {
                return Err(Error::Usage(format!(
                    "no examination or category `{e}` in {}",
                    contest.edition.info.name
                )));
            }
        }
        if filter.is_empty() {
            return Ok((0..self.plan.runs.len()).collect());
        }
        let edition = &contest.edition;
        Ok(self
            .plan
            .runs
            .iter()
            .enumerate()
            .filter(|(_, run)| {
                let ei = &self.plan.exam_instances[run.exam_instance];
                let exam = &edition.examinations[ei.exam];
                let model = &self.plan.models[self.plan.instances[ei.instance].model].name;
                (filter.tools.is_empty() || filter.tools.contains(&contest.tools[run.tool].name))
                    && (filter.models.is_empty() || filter.models.contains(model))
                    && (filter.examinations.is_empty()
                        || filter.examinations.iter().any(|e| {
                            *e == exam.name || *e == edition.categories[exam.category].name
                        }))
            })
            .map(|(i, _)| i)
            .collect())
    }

    pub fn summary(&self, selection: &[usize]) -> PlanSummary {
        // Counted by tool number, then named.
        let mut by_tool = vec![Counts::default(); self.plan.contest.tools.len()];
        for &i in selection {
            let counts = &mut by_tool[self.plan.runs[i].tool];
            counts.runs += 1;
            match self.is_stored(i) {
                true => counts.cached += 1,
                false => counts.to_run += 1,
            }
        }
        let mut summary = PlanSummary::default();
        for (tool, counts) in self.plan.contest.tools.iter().zip(by_tool) {
            summary.runs += counts.runs;
            summary.cached += counts.cached;
            summary.to_run += counts.to_run;
            let listed = summary.by_tool.entry(tool.name.clone()).or_default();
            listed.runs += counts.runs;
            listed.cached += counts.cached;
            listed.to_run += counts.to_run;
        }
        summary
    }

    /// The podium report (no values), from the results cache when nothing it depends on changed.
    pub fn podium_report(&self) -> ScoresReport {
        let _t = phase("results");
        let key = self.results_key();
        if let Some(report) = crate::results_cache::load(&self.store, &key) {
            return report;
        }
        let report = if memo::applies(&self.plan) {
            // The scores of the model examinations whose inputs did not change are remembered
            // (docs/cache.md, "Remembered scores"): only the others are read and scored.
            let path = memo::memo_path(&self.store.meta_dir(), &self.plan.contest.manifest_path);
            let global = memo::global_digest(&self.plan, &self.binary);
            let kept = memo::Memo::read(&path, &global);
            let records = self.record_digests();
            let (report, memo, uses) = memo::podium_report(
                &self.plan,
                &records,
                |key| self.index.get(key),
                &kept,
                &self.binary,
            );
            if std::env::var_os("MCCBUILD_TIMINGS").is_some() {
                eprintln!(
                    "timing: remembered scores: {} model examinations remembered, {} computed, {} computed again (their decisions moved)",
                    uses.remembered, uses.computed, uses.revived
                );
            }
            // A memo that cannot be written only costs the scoring next time.
            if uses.computed + uses.revived > 0 {
                let _ = memo.write(&path);
            }
            mccbuild_core::drop_beside((memo, kept));
            report
        } else {
            let (db, handles) = self.scoring();
            scores_report(&self.plan, &db, &handles, false)
        };
        // A cache that cannot be written only costs time next time.
        let _t = phase("results saved");
        let _ = crate::results_cache::save(&self.store, &key, &report);
        report
    }

    /// The key of the results of the plan with the index as it is now (runs recorded by this
    /// command included): docs/cache.md, "Cached results".
    pub fn results_key(&self) -> Digest {
        self.current_records().results_key(&self.plan, &self.binary)
    }

    /// Per planned run, its record's content digest (`None`: not stored), as the index says
    /// now: looked up when the session opened, and again only after the index changed.
    pub fn record_digests(&self) -> std::sync::Arc<Vec<Option<Digest>>> {
        self.current_records().digests.clone()
    }

    /// The record digests of the index as it is now (looked up again if it changed since).
    fn current_records(&self) -> std::sync::MutexGuard<'_, RecordDigests> {
        let mut records = self.records.lock().unwrap_or_else(|e| e.into_inner());
        if records.version != self.index.version() {
            let _t = phase("stored runs");
            *records = stored_runs(&self.plan, &self.index).1;
        }
        records
    }

    /// The answer parser's diagnostics of the given planned runs that are in the store's index
    /// (as it is now: `watch` updates it as records arrive) and were executed (imported runs
    /// have none), by run index; runs without diagnostics are left out. Reads each record: for
    /// the runs a command is about, not a whole edition's store.
    pub fn diagnostics_of(
        &self,
        runs: impl IntoIterator<Item = usize>,
    ) -> BTreeMap<usize, Vec<String>> {
        runs.into_iter()
            .filter(|&i| self.plan.runs[i].origin == RunOrigin::Executed)
            .filter_map(|i| {
                let (record, _) = self
                    .index
                    .read(&self.store, &self.plan.runs[i].key)
                    .ok()??;
                (!record.diagnostics.is_empty()).then_some((i, record.diagnostics))
            })
            .collect()
    }

    /// Packs the store's loose records into segment files once there are enough of them
    /// (docs/cache.md, "Packs"), for a command that holds the store's execution lock. A packing
    /// that fails leaves every record where it was: a warning, nothing lost.
    pub fn pack_records(&mut self) {
        let Some(min) = mccbuild_store::pack::pack_after() else {
            return;
        };
        if self.lock.is_none() {
            return;
        }
        let _t = phase("pack loose records");
        match self.index.pack(&self.store, min) {
            Ok(outcome) if outcome.records > 0 => {
                let packs: Vec<String> = outcome
                    .packs
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect();
                eprintln!(
                    "packed {} into {}",
                    crate::progress::count(outcome.records, "loose run record", "loose run records"),
                    packs.join(", ")
                );
            }
            Ok(_) => {}
            Err(e) => eprintln!(
                "warning: could not pack the loose run records of {}: {e}; they stay as they are (nothing is lost; the next `mccbuild run` tries again)",
                self.store.root().display()
            ),
        }
    }

    /// Builds the scoring database from the records of the plan's runs.
    pub fn scoring(&self) -> (ScoringDb, Handles) {
        let _t = phase("salsa inputs");
        build_scoring(ScoringDb::default(), &self.plan, |key| self.index.get(key))
    }

    /// As [`Session::scoring`], with a database that can log the queries it executes.
    pub fn scoring_logged(&self) -> (ScoringDb, Handles) {
        build_scoring(ScoringDb::with_log(), &self.plan, |key| self.index.get(key))
    }
}

/// What every opening starts with: the contest loaded, its store opened and, for a command that
/// executes runs, the store's execution lock taken (waiting for, or refusing, another such
/// command) before anything says which runs are stored.
fn begin(
    manifest: &Path,
    lock: Option<(LockWait, &str)>,
) -> Result<(Contest, Store, Option<StoreLock>), Error> {
    let t = phase("manifest and rules");
    let contest = Contest::load(manifest)?;
    drop(t);
    let store = Store::open(&contest.store)?;
    let lock = match lock {
        None => None,
        Some((wait, command)) => Some(store.lock_for_execution(wait, command, |holder| {
            eprintln!(
                "waiting for the store {}: another mccbuild executes runs there ({holder}); this one starts when it ends (`--no-wait` refuses instead)",
                store.root().display()
            )
        })?),
    };
    Ok((contest, store, lock))
}

/// A session, or the no-op remembered in its place ([`Session::open_or_recall`]).
pub enum Opening {
    Noop(Box<Noop>),
    Session(Box<Session>),
}

/// A no-op remembered (docs/cache.md, "The remembered no-op"): every planned run of the contest
/// is stored, and what that comes to.
pub struct Noop {
    pub contest: Contest,
    pub store: Store,
    /// The store's execution lock, for `run` (held until the command ends).
    pub lock: Option<StoreLock>,
    pub remembered: crate::noop::Remembered,
    /// The cached podium report it names, when asked for.
    pub report: Option<ScoresReport>,
    /// The fingerprints it was recalled under.
    taken: Option<Taken>,
}

impl Noop {
    /// The session in full, for a command that needs more than the no-op (the store's lock
    /// kept), its warnings said.
    pub fn into_session(self) -> Result<Session, Error> {
        Session::open_begun(self.contest, self.store, self.lock, true, self.taken)
            .map(Session::warn)
    }

    /// `mccbuild plan`'s counts: every run stored.
    pub fn summary(&self) -> PlanSummary {
        let mut summary = PlanSummary {
            runs: self.remembered.runs,
            cached: self.remembered.runs,
            to_run: 0,
            by_tool: BTreeMap::new(),
        };
        for (tool, runs) in &self.remembered.by_tool {
            summary.by_tool.insert(
                tool.clone(),
                Counts {
                    runs: *runs,
                    cached: *runs,
                    to_run: 0,
                },
            );
        }
        summary
    }

    /// The contest's podiums for a terminal (the remembered report; the tables need the
    /// contest's edition only).
    pub fn podium_text(&self, style: mccbuild_output::terminal::TermStyle) -> Option<String> {
        let report = self.report.as_ref()?;
        // A plan of no runs: what the podium tables read of a plan is its contest.
        let plan = Plan {
            contest: self.contest.clone(),
            imported: None,
            tools: Vec::new(),
            models: Vec::new(),
            instances: Vec::new(),
            exam_instances: Vec::new(),
            runs: Vec::new(),
            problems: Problems::default(),
            reference: None,
            corrections: None,
            left_out: Vec::new(),
        };
        Some(mccbuild_output::terminal::podium_text_styled(
            &plan, report, style,
        ))
    }
}

/// The no-op remembered for `contest` if it is keyed by the files as they are now: the plan's
/// fingerprint, the answers' stamps and the store files' stamps give its key (docs/cache.md,
/// "The remembered no-op"); none of them too fresh to be trusted. With `podium`, only when the
/// podium report it names is in the results cache. Also the executor and fingerprints it took,
/// when it took them (for the session opened when it was no hit: its plan snapshot is read
/// under them). What costs least is looked at first: the store files' stamps and the report's
/// presence before the executor and the plan's fingerprint, which a memo that cannot hold does
/// not take (the session takes them beside the snapshot's reading).
fn recall(
    contest: &Contest,
    store: &Store,
    podium: bool,
) -> (Option<crate::noop::Remembered>, Option<Taken>) {
    if contest.executor.kind == ExecutorKind::Qemu || !store.notes.is_empty() {
        return (None, None);
    }
    let _t = phase("no-op: recall");
    let path = crate::noop::path(&store.meta_dir(), &contest.manifest_path);
    let Some(memo) = crate::noop::read(&path) else {
        return (None, None);
    };
    let (files, racy) = mccbuild_store::index::stamps_digest(store.root(), &memo.store_files);
    if racy || files != memo.store_digest {
        return (None, None);
    }
    if podium && !crate::results_cache::path(store, &memo.remembered.results).exists() {
        return (None, None);
    }
    let Ok(taken) = Taken::of(contest, &mut DigestCache::in_memory()) else {
        return (None, None);
    };
    let hit = !taken.plan.racy
        && !taken.answers.racy
        && crate::noop::key(&taken.plan.digest, &taken.answers.digest, &files) == memo.key;
    let remembered = hit.then(|| {
        let _t = phase("no-op: remembered");
        memo.remembered
    });
    (remembered, Some(taken))
}

/// [`Session::machine_problems`] of a contest.
pub fn machine_problems_of(contest: &Contest) -> Problems {
    let mut problems = Problems::default();
    if contest.executor.kind == ExecutorKind::Slurm {
        return problems;
    }
    let cores = mccbuild_exec::pool::available_cores().len();
    for tool in &contest.tools {
        if tool.dir.is_some() && tool.cores as usize > cores {
            problems.push(
                    Problem::new(
                        &contest.manifest_path,
                        format!(
                            "tool `{}`: cores = {} but this machine gives mccbuild {cores} (rules E-5.3/E-5.4): each of its runs would fail",
                            tool.name, tool.cores
                        ),
                    )
                    .at(line_of_tool_key(&contest.manifest_path, &tool.name, "cores"))
                    .help("run on a machine with enough cores, or with the Slurm executor (docs/execution.md)"),
                );
        }
    }
    problems
}

/// Per planned run's record, as an index said at one of its versions ([`Index::version`]).
struct RecordDigests {
    version: u64,
    /// Per planned run: its record's content digest (`None`: not stored).
    digests: std::sync::Arc<Vec<Option<Digest>>>,
    /// The digests of the parts of the runs in the results key (src/results_cache.rs).
    parts: Vec<Digest>,
    /// The results key of the plan with these records, once computed.
    results_key: Option<Digest>,
}

impl RecordDigests {
    /// The results key of `plan` with these records, computed once.
    fn results_key(&mut self, plan: &Plan, binary: &Digest) -> Digest {
        *self.results_key.get_or_insert_with(|| {
            let _t = phase("results key");
            crate::results_cache::results_key_of_parts(plan, &self.parts, binary)
        })
    }
}

/// Per planned run: whether it is stored, and its record's content digest, as `index` says
/// now; with the parts of the results key hashed on the way. One pass over the runs in parts
/// of [`crate::results_cache::RUNS_PER_PART`], the parts shared among the cores, each part's
/// lookups made together ([`Index::lookup_each`]: 300,000 lookups in a table of tens of
/// megabytes).
fn stored_runs(plan: &Plan, index: &Index) -> (Vec<bool>, RecordDigests) {
    use crate::results_cache::{PartHasher, RUNS_PER_PART};
    let n = plan.runs.len();
    let mut stored = vec![false; n];
    let mut digests: Vec<Option<Digest>> = vec![None; n];
    let mut parts = vec![[0u8; 32]; n.div_ceil(RUNS_PER_PART)];
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, parts.len().max(1));
    // Each thread takes every `threads`-th part.
    let mut shares: Vec<Vec<_>> = (0..threads).map(|_| Vec::new()).collect();
    for (p, ((part, stored), digests)) in parts
        .iter_mut()
        .zip(stored.chunks_mut(RUNS_PER_PART))
        .zip(digests.chunks_mut(RUNS_PER_PART))
        .enumerate()
    {
        shares[p % threads].push((
            &plan.runs[p * RUNS_PER_PART..][..stored.len()],
            part,
            stored,
            digests,
        ));
    }
    std::thread::scope(|scope| {
        for share in shares {
            scope.spawn(move || {
                for (runs, part, stored, digests) in share {
                    let mut hasher = PartHasher::default();
                    index.lookup_each(
                        runs.len(),
                        |i| &runs[i].key,
                        |i, found| {
                            if let Some(found) = found {
                                stored[i] = true;
                                digests[i] = found;
                            }
                            hasher.add(&runs[i], digests[i].as_ref());
                        },
                    );
                    *part = hasher.finish();
                }
            });
        }
    });
    let records = RecordDigests {
        version: index.version(),
        digests: std::sync::Arc::new(digests),
        parts,
        results_key: None,
    };
    (stored, records)
}

/// The contest's plan, its executor and the digest of the running binary: from the plan
/// snapshot when nothing the plan is made from has changed (crates/plan/src/snapshot.rs),
/// otherwise made (with the digest cache) and kept for the next command.
fn plan_of(
    contest: Contest,
    store: &Store,
    use_snapshot: bool,
    known: Option<Taken>,
    warnings: &mut Vec<String>,
) -> Result<Planned, Error> {
    let digests = store.meta_dir().join("digests.bin");
    // The guest's files are key ingredients of a QEMU contest, digested through the cache; the
    // other executors need it only when the plan is made.
    let qemu = contest.executor.kind == ExecutorKind::Qemu;
    let t = phase("digest cache load");
    let mut cache = qemu.then(|| DigestCache::load(&digests));
    drop(t);
    let snapshot_path = snapshot::snapshot_path(&store.meta_dir(), &contest.manifest_path);
    // The executor (its probes of the machine) and the fingerprints (stat calls) are made while
    // the snapshot is read (or were by `recall`), the fingerprints before the answers are read
    // (as the fingerprint before the plan's files).
    let taking = |contest: &Contest| match known {
        Some(known) => Ok(known),
        None => {
            let _t = phase("plan snapshot: executor and fingerprint");
            Taken::of(contest, cache.get_or_insert_with(DigestCache::in_memory))
        }
    };
    let t = phase("plan snapshot");
    let (taken, loaded) = match use_snapshot {
        true => {
            let mut taken = None;
            let (_, loaded) = snapshot::load(&snapshot_path, contest, |contest| {
                let now = taking(contest);
                let plan = now.as_ref().ok().map(|t| t.plan.clone());
                taken = Some(now);
                plan
            });
            (taken.expect("the fingerprints are taken"), loaded)
        }
        false => (taking(&contest), Err(Box::new(contest))),
    };
    drop(t);
    let Taken {
        plan: fingerprint,
        answers,
        executor,
    } = taken?;
    // What a remembered no-op of this plan would be keyed by (docs/cache.md, "The remembered
    // no-op"): nothing is remembered for a QEMU contest (its guest's digests are not in the
    // fingerprint's stamps) or while a stamp is too fresh.
    let fingerprints =
        (use_snapshot && !qemu && !fingerprint.racy && !answers.racy).then_some(Fingerprints {
            plan: fingerprint.digest,
            answers: answers.digest,
        });
    let (plan, binary) = match loaded {
        Ok(hit) => {
            if let Some(mut cache) = cache.filter(|_| qemu) {
                save_digests(&mut cache, warnings);
            }
            hit
        }
        Err(contest) => {
            let mut cache = match cache {
                Some(cache) if qemu => cache,
                _ => {
                    let _t = phase("digest cache load");
                    DigestCache::load(&digests)
                }
            };
            let t = phase("plan");
            let declared_tools = contest.tools.len();
            let ingredients = executor.key_ingredients();
            let limits = ArchiveLimits::default();
            let plan = Plan::build_runs(*contest, &ingredients, &mut cache, limits)?;
            drop(t);
            let exe = std::env::current_exe().unwrap_or_default();
            let binary = cache.file_digest(&exe).unwrap_or([0; 32]);
            save_digests(&mut cache, warnings);
            // A store that cannot be written only costs the making of the plan again.
            let _ = snapshot::save(&snapshot_path, &fingerprint, &plan, declared_tools, binary);
            (plan, binary)
        }
    };
    Ok((plan.with_answers_given()?, executor, binary, fingerprints))
}

/// What [`plan_of`] gives: the plan, its executor, the binary's digest, and what a remembered
/// no-op of it would be keyed by (`None`: not to be remembered).
type Planned = (Plan, Box<dyn RunExecutor>, Digest, Option<Fingerprints>);

/// A contest's executor, and the fingerprints of its plan and of the answers every command
/// reads besides it (crates/plan/src/snapshot.rs), from the files as they were when taken.
pub struct Taken {
    plan: Fingerprint,
    answers: Fingerprint,
    executor: Box<dyn RunExecutor>,
}

impl Taken {
    /// The executor of `contest` (which probes the machine: its sandbox is a key ingredient)
    /// and the fingerprints now.
    fn of(contest: &Contest, cache: &mut DigestCache) -> Result<Taken, Error> {
        let exe = std::env::current_exe().unwrap_or_default();
        // The stat calls beside the executor's probes.
        let (stamps, answers, executor) = std::thread::scope(|scope| {
            let stamping = scope.spawn(|| {
                (
                    Fingerprint::stamps(contest, &exe),
                    snapshot::answers_fingerprint(contest),
                )
            });
            let executor = executor_for(contest, cache);
            let (stamps, answers) = stamping
                .join()
                .unwrap_or_else(|e| std::panic::resume_unwind(e));
            (stamps, answers, executor)
        });
        let executor = executor?;
        Ok(Taken {
            plan: Fingerprint::with_stamps(
                contest,
                &executor.key_ingredients(),
                ArchiveLimits::default(),
                &stamps,
            ),
            answers,
            executor,
        })
    }
}

/// The digests a remembered no-op is keyed by besides the store's stamps.
struct Fingerprints {
    plan: Digest,
    answers: Digest,
}

/// Remembers that every planned run is stored (docs/cache.md, "The remembered no-op"), when
/// it is, the plan has no problems and nothing left out, and the index rests on stamps old
/// enough to be trusted ([`Index::footing`]); a no-op already remembered under the same key
/// is left as it is. A store that cannot be written only costs the full no-op next time.
fn remember_noop(
    plan: &Plan,
    store: &Store,
    index: &Index,
    stored: &[bool],
    records: &mut RecordDigests,
    binary: &Digest,
    fingerprints: &Fingerprints,
) {
    if !plan.problems.0.is_empty() || !plan.left_out.is_empty() || stored.contains(&false) {
        return;
    }
    let _t = phase("no-op: remember");
    let Some(footing) = index.footing(store) else {
        return;
    };
    let key = crate::noop::key(&fingerprints.plan, &fingerprints.answers, &footing.digest);
    let path = crate::noop::path(&store.meta_dir(), &plan.contest.manifest_path);
    if crate::noop::key_at(&path) == Some(key) {
        return;
    }
    let mut by_tool: Vec<(String, usize)> = plan
        .contest
        .tools
        .iter()
        .map(|t| (t.name.clone(), 0))
        .collect();
    for run in &plan.runs {
        by_tool[run.tool].1 += 1;
    }
    let remembered = crate::noop::Remembered {
        runs: plan.runs.len(),
        by_tool,
        results: records.results_key(plan, binary),
        loose: index.loose_records(),
    };
    let _ = std::fs::create_dir_all(store.meta_dir());
    let _ = crate::noop::write(&path, &key, footing.paths, &footing.digest, remembered);
}

fn save_digests(cache: &mut DigestCache, warnings: &mut Vec<String>) {
    if let Err(e) = cache.save() {
        warnings.push(format!("could not save the digest cache: {e}"));
    }
}

/// The executor of a contest's runs. A Slurm step runs each run in the local sandbox, so a run's
/// key holds that sandbox's ingredients: the scheduler does not change a result (docs/cache.md),
/// and a contest moved between local and Slurm reuses its records.
fn executor_for(contest: &Contest, cache: &mut DigestCache) -> Result<Box<dyn RunExecutor>, Error> {
    Ok(match contest.executor.kind {
        ExecutorKind::Local | ExecutorKind::Slurm => Box::new(LocalExecutor::new(LocalSettings {
            // Runs see neither the project nor the store (only their tool is bound back).
            hidden: vec![contest.root.clone(), contest.store.clone()],
            ..LocalSettings::default()
        })),
        ExecutorKind::Qemu => Box::new(QemuExecutor::new(contest, cache).map_err(|e| {
            Error::Input(
                Problem::new(&contest.manifest_path, e.to_string())
                    .help("see docs/execution.md, \"QEMU executor\"")
                    .into(),
            )
        })?),
    })
}

/// Where `key` of the `[[tool]]` named `tool` is in the manifest (for diagnostics made after
/// the manifest was read): the first line starting with `key` after the tool's `name` line.
fn line_of_tool_key(manifest: &Path, tool: &str, key: &str) -> Option<Location> {
    let text = std::fs::read_to_string(manifest).ok()?;
    let mut in_tool = false;
    for (n, line) in text.lines().enumerate() {
        let t = line.trim_start();
        if t.starts_with('[') {
            in_tool = false;
        }
        if t.starts_with("name") && t.contains(&format!("\"{tool}\"")) {
            in_tool = true;
        }
        if in_tool && t.starts_with(key) && t[key.len()..].trim_start().starts_with('=') {
            return Some(Location {
                line: n + 1,
                column: line.len() - t.len() + 1,
            });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use mccbuild_core::{CapturedOutput, Measurement, Response, Termination};
    use mccbuild_store::{RunRecord, RECORD_FORMAT};

    /// A record of `run` (its answers do not matter here).
    fn record_of(plan: &Plan, run: &mccbuild_plan::Run) -> RunRecord {
        RunRecord {
            format: RECORD_FORMAT,
            key: run.key,
            mccbuild_version: "test".into(),
            tool: plan.contest.tools[run.tool].name.clone(),
            instance: plan.instance_of(run).name.clone(),
            examination: plan.exam_name(run).to_string(),
            executor: [("kind".to_string(), "local".to_string())].into(),
            limits: run.limits,
            started_at: "2026-11-22T00:00:00Z".into(),
            finished_at: "2026-11-22T00:00:01Z".into(),
            measurement: Measurement {
                termination: Termination::Exit { code: 0 },
                cpu_time_s: 0.5,
                wall_time_s: 0.6,
                peak_memory_bytes: 1 << 20,
            },
            method: "test".into(),
            cores: vec![0],
            host: "h".into(),
            response: Response::CannotCompute,
            answers: Vec::new(),
            diagnostics: Vec::new(),
            stdout: CapturedOutput::default(),
            stderr: CapturedOutput::default(),
            vm: None,
            slurm: None,
        }
    }

    /// The pass that finds which runs are stored also hashes the results key's parts: it says
    /// what one lookup per run says, and its key is the key of the digests it found; it is done
    /// again when the index changed.
    #[test]
    fn stored_runs_agree_with_lookups_and_give_the_results_key() {
        // More runs than two parts of the results key: the demo's, with other keys.
        let plan = crate::results_cache::tests::demo_plan_past_two_parts();
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        // Two runs in three stored.
        let records: Vec<RunRecord> = plan
            .runs
            .iter()
            .enumerate()
            .filter(|(i, _)| i % 3 != 0)
            .map(|(_, run)| record_of(&plan, run))
            .collect();
        let (mut index, _) = Index::load(&store);
        index.put_packed(&store, &records).unwrap();
        let (mut index, _) = Index::load(&store);
        let check = |index: &Index| {
            let (stored, records) = stored_runs(&plan, index);
            for (i, run) in plan.runs.iter().enumerate() {
                let found = index.lookup(&run.key);
                assert_eq!(stored[i], found.is_some(), "run {i}");
                assert_eq!(records.digests[i], found.flatten(), "run {i}");
            }
            let binary = [5; 32];
            let mut records = records;
            assert_eq!(
                records.results_key(&plan, &binary),
                crate::results_cache::results_key(&plan, &records.digests, &binary)
            );
            assert_eq!(records.version, index.version());
            records.results_key(&plan, &binary)
        };
        let before = check(&index);
        assert_eq!(
            stored_runs(&plan, &index).0.iter().filter(|s| **s).count(),
            records.len()
        );
        // A run stored since: another key.
        let new = record_of(&plan, &plan.runs[0]);
        index.insert(new.key, mccbuild_store::Summary::of(&new), [8; 32]);
        assert_ne!(check(&index), before);
    }
}
