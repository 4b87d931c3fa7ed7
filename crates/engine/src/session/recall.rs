//! The remembered no-op of a session (docs/cache.md, "The remembered no-op"): recalled in place
//! of opening the session when nothing it rests on changed, and remembered when a session finds
//! every planned run stored.

use std::collections::BTreeMap;

use mccbuild_core::diag::Problems;
use mccbuild_core::digest::Digest;
use mccbuild_core::timing::phase;
use mccbuild_plan::Plan;
use mccbuild_plan::digest_cache::DigestCache;
use mccbuild_plan::manifest::{Contest, ExecutorKind};
use mccbuild_scoring::scores::ScoresReport;
use mccbuild_store::{Index, Store, StoreLock};

use super::open::{Fingerprints, Taken};
use super::records::RecordDigests;
use super::{Counts, PlanSummary, Session};
use crate::error::OpenError;

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
    pub(super) taken: Option<Taken>,
}

impl Noop {
    /// The session in full, for a command that needs more than the no-op (the store's lock
    /// kept), its warnings said.
    pub fn into_session(self) -> Result<Session, OpenError> {
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
pub(super) fn recall(
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

/// Remembers that every planned run is stored (docs/cache.md, "The remembered no-op"), when
/// it is, the plan has no problems and nothing left out, and the index rests on stamps old
/// enough to be trusted ([`Index::footing`]); a no-op already remembered under the same key
/// is left as it is. A store that cannot be written only costs the full no-op next time.
pub(super) fn remember_noop(
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
