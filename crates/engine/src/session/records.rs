//! Which planned runs are stored, with their records' content digests and the results key
//! hashed on the way; the podium report, from the results cache when that key is unchanged.

use mccbuild_core::digest::Digest;
use mccbuild_core::timing::phase;
use mccbuild_plan::Plan;
use mccbuild_scoring::memo;
use mccbuild_scoring::scores::{Partial, ScoresReport, scores_report};
use mccbuild_store::Index;

use super::Session;

impl Session {
    /// The podium report (no values), from the results cache when nothing it depends on changed;
    /// it says whether it is partial (planned runs missing from the store) either way.
    pub fn podium_report(&self) -> ScoresReport {
        let mut report = self.podium_report_of_records();
        report.partial = self.partial();
        report
    }

    /// Whether results computed now would be partial: the planned runs without a record in the
    /// store as the index says now (docs/cli.md, "Partial results").
    pub fn partial(&self) -> Option<Partial> {
        let missing = self.record_digests().iter().filter(|d| d.is_none()).count();
        Partial::of(missing, self.plan.runs.len())
    }

    /// [`Session::partial`] counted by looking each planned run up in the index (for `watch`,
    /// whose index changes with every update: no record digests or results key hashed).
    pub fn partial_in_index(&self) -> Option<Partial> {
        let missing = self
            .plan
            .runs
            .iter()
            .filter(|r| !self.index.contains(&r.key))
            .count();
        Partial::of(missing, self.plan.runs.len())
    }

    fn podium_report_of_records(&self) -> ScoresReport {
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
}

/// Per planned run's record, as an index said at one of its versions ([`Index::version`]).
pub(super) struct RecordDigests {
    pub(super) version: u64,
    /// Per planned run: its record's content digest (`None`: not stored).
    pub(super) digests: std::sync::Arc<Vec<Option<Digest>>>,
    /// The digests of the parts of the runs in the results key ([`crate::results_cache`]).
    pub(super) parts: Vec<Digest>,
    /// The results key of the plan with these records, once computed.
    pub(super) results_key: Option<Digest>,
}

impl RecordDigests {
    /// The results key of `plan` with these records, computed once.
    pub(super) fn results_key(&mut self, plan: &Plan, binary: &Digest) -> Digest {
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
pub(super) fn stored_runs(plan: &Plan, index: &Index) -> (Vec<bool>, RecordDigests) {
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
