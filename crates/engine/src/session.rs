//! One invocation's view of a contest: the plan, the store and its index, the executor.
//!
//! [`Session::open`] reads the manifest and rules, plans every run and looks each up in the
//! store ([`open`]); [`Session::execute`] ([`crate::execute`]) runs what is missing and records
//! it; [`Session::scoring`] builds the scoring database from the records. Which runs a command
//! is about ([`select`]), which are stored and the podium report ([`records`]), the remembered
//! no-op ([`recall`]), what this machine cannot run ([`machine`]) and importing results files
//! ([`import`]) each have their module.

mod import;
mod machine;
mod open;
mod other_keys;
mod recall;
mod records;
mod select;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use mccbuild_core::Outcome;
use mccbuild_core::diag::Problems;
use mccbuild_core::digest::Digest;
use mccbuild_core::timing::phase;
use mccbuild_exec::RunExecutor;
use mccbuild_plan::manifest::Contest;
use mccbuild_plan::{Plan, RunOrigin};
use mccbuild_scoring::db::{Handles, ScoringDb};
use mccbuild_scoring::inputs::build_scoring;
use mccbuild_store::{CorruptRecord, Index, LockWait, Store, StoreLock};
use serde::Serialize;

use crate::error::OpenError;
use crate::progress::count;

pub use import::{ImportSummary, imported_record};
pub use machine::machine_problems_of;
pub use recall::{Noop, Opening};

use records::RecordDigests;

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
    /// here ([`OpenError::Input`]), as does a store that cannot be used ([`OpenError::Store`]); problems
    /// with single instances are in `plan.problems`.
    pub fn open(manifest: &Path) -> Result<Session, OpenError> {
        Session::open_with(manifest, None, true)
    }

    /// [`Session::open`] for a command that executes runs: it takes the store's execution lock
    /// (waiting for, or refusing, another such command) before it reads which runs are stored.
    pub fn open_executing(
        manifest: &Path,
        wait: LockWait,
        command: &str,
    ) -> Result<Session, OpenError> {
        Session::open_with(manifest, Some((wait, command)), true)
    }

    /// [`Session::open_executing_and_warn`] for `import`, with the plan made from the results
    /// files whatever its snapshot (the snapshot keeps the rows' runs, not the rows).
    pub fn open_for_import(manifest: &Path) -> Result<Session, OpenError> {
        Session::open_with(manifest, Some((LockWait::Wait, "mccbuild import")), false)
            .map(Session::warn)
    }

    fn open_with(
        manifest: &Path,
        lock: Option<(LockWait, &str)>,
        use_snapshot: bool,
    ) -> Result<Session, OpenError> {
        let _t = phase("opened");
        let (contest, store, lock) = begin(manifest, lock, None)?;
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
    ) -> Result<Opening, OpenError> {
        let t = phase("opened");
        let (contest, store, lock) = begin(manifest, lock, None)?;
        let (recalled, taken) = recall::recall(&contest, &store, podium);
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
    pub fn open_and_warn(manifest: &Path) -> Result<Session, OpenError> {
        Session::open_with(manifest, None, true).map(Session::warn)
    }

    /// [`Session::open_executing`], then the warnings said on standard error.
    /// The names of `filter` are checked before the store is waited for: a mistyped `--tool`
    /// is said at once, whoever holds the store.
    pub fn open_executing_and_warn(
        manifest: &Path,
        wait: LockWait,
        command: &str,
        filter: &Filter,
    ) -> Result<Session, OpenError> {
        let _t = phase("opened");
        let (contest, store, lock) = begin(manifest, Some((wait, command)), Some(filter))?;
        Session::open_begun(contest, store, lock, true, None).map(Session::warn)
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

    /// Where planned run `i`'s record lies, as messages name it: its loose file, or its pack
    /// (`mccbuild_store::Index::record_location`). `scores --wrong`, `explain` and `qualify`
    /// name a run's record so.
    pub fn record_path(&self, i: usize) -> String {
        self.index
            .record_location(&self.store, &self.plan.runs[i].key)
            .display()
            .to_string()
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

    /// A Slurm step's rerun (`exec-run KEY:DIGEST`): planned run `i` is executed again while
    /// its stored record is still the one with `digest` it replaces (a job resubmitted after
    /// the new record was written skips it).
    pub fn redo_if_stored_as(&mut self, i: usize, digest: Digest) {
        if self.index.digest(&self.plan.runs[i].key) == Some(digest) {
            self.redo.insert(i, digest);
        }
    }

    /// Whether planned run `i` is to be executed: not in the store, or marked to be redone.
    pub fn is_to_execute(&self, i: usize) -> bool {
        !self.stored[i] || self.redo.contains_key(&i)
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

    /// Per tool, the answer parser's diagnostics of the runs just executed (`executed`: the runs that
    /// were not in the store before): how many runs have some, and the first few, each with its run.
    pub fn diagnostics_summary(&self, executed: &[usize]) -> String {
        const SHOWN: usize = 3;
        let plan = &self.plan;
        let found = self.diagnostics_of(executed.iter().copied());
        let mut by_tool: BTreeMap<usize, Vec<(usize, &Vec<String>)>> = BTreeMap::new();
        for (&i, diagnostics) in &found {
            by_tool
                .entry(plan.runs[i].tool)
                .or_default()
                .push((i, diagnostics));
        }
        let mut out = String::new();
        for (tool, runs) in by_tool {
            let total: usize = runs.iter().map(|(_, d)| d.len()).sum();
            let _ = writeln!(
                out,
                "{}: {total} answer-parser diagnostic{} in {} of the runs just executed:",
                plan.contest.tools[tool].name,
                if total == 1 { "" } else { "s" },
                runs.len()
            );
            let mut shown = 0;
            'runs: for (i, diagnostics) in &runs {
                let run = &plan.runs[*i];
                for d in diagnostics.iter() {
                    if shown == SHOWN {
                        break 'runs;
                    }
                    let _ = writeln!(
                        out,
                        "  {} {}: {d}",
                        plan.instance_of(run).name,
                        plan.exam_name(run)
                    );
                    shown += 1;
                }
            }
            if total > shown {
                let _ = writeln!(
                    out,
                    "  ... and {} more (`mccbuild explain --instance I --examination E --id ID` shows a value's, the report's tool page lists them all)",
                    total - shown
                );
            }
        }
        out
    }

    /// What the results site reads of the records of `runs` (the executed ones: an imported
    /// run's record holds nothing more than its summary), each record read once.
    pub fn record_notes(
        &self,
        runs: impl IntoIterator<Item = usize>,
    ) -> mccbuild_output::report::RecordNotes {
        let mut notes = mccbuild_output::report::RecordNotes::default();
        for i in runs {
            if self.plan.runs[i].origin != RunOrigin::Executed {
                continue;
            }
            if let Ok(Some((record, digest))) = self.index.read(&self.store, &self.plan.runs[i].key)
            {
                notes.add(&self.plan, i, record, &digest);
            }
        }
        notes
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
                    count(outcome.records, "loose run record", "loose run records"),
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

    /// Sets aside the damaged lines of the store's packs (docs/cache.md, "Packs"), for a command
    /// that holds the store's execution lock and has recorded its runs: from then on they are no
    /// longer reported (a run whose only record was damaged is a missing run, done by the next
    /// `mccbuild run`). One that fails leaves the packs as they were: a warning, nothing lost.
    pub fn set_aside_damaged_lines(&mut self) {
        if self.lock.is_none() {
            return;
        }
        match self.index.set_aside_damage(&self.store) {
            Ok(aside) if !aside.from.is_empty() => {
                let shown = |paths: &[std::path::PathBuf]| {
                    paths
                        .iter()
                        .map(|p| p.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                eprintln!(
                    "set aside {} of {} in {}: no longer read or reported (kept for inspection only); a run left without a record is done by the next `mccbuild run` (`mccbuild plan` counts them)",
                    count(aside.lines, "damaged line", "damaged lines"),
                    shown(&aside.from),
                    shown(&aside.kept_in),
                );
            }
            Ok(_) => {}
            Err(e) => eprintln!(
                "warning: could not set aside the damaged lines of the packs of {}: {e}; they stay as they are (nothing is lost; the next `mccbuild run` tries again)",
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
    filter: Option<&Filter>,
) -> Result<(Contest, Store, Option<StoreLock>), OpenError> {
    let t = phase("manifest and rules");
    let contest = Contest::load(manifest)?;
    drop(t);
    if let Some(filter) = filter {
        select::check_names(&contest, filter)?;
    }
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
