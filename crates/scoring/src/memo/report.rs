//! The podium report from remembered scores: the database built with the remembered model
//! examinations' results and the others' runs, remembered ones whose decisions moved revived
//! with their runs, the report summed by the same queries as always, and the memo of this state.

use std::collections::HashMap;
use std::sync::Arc;

use mccbuild_core::RunKey;
use mccbuild_core::digest::Digest;
use mccbuild_core::timing::phase;
use mccbuild_plan::Plan;
use mccbuild_store::Summary;

use super::{Memo, MemoUse, Remembered, examination_digest, global_digest};
use crate::database::{RunInputs, ScoringDb};
use crate::db::{ModelExamination, agreement, exam_scores};
use crate::inputs::{contest_inputs, run_inputs};
use crate::scores::{ScoresReport, scores_report};

/// The contest's podium report, from the memo where it holds and from the runs elsewhere (the
/// same report as [`scores_report`] of a database built from every run: the same queries sum
/// it), and the memo of this state. `records`: each planned run's record digest (None: not
/// stored); `summary`: a stored run's summary, read only for the model examinations computed.
/// The plan must have no `[reference]` ([`applies`](super::applies)).
pub fn podium_report<'a>(
    plan: &Plan,
    records: &[Option<Digest>],
    summary: impl Fn(&RunKey) -> Option<&'a Summary>,
    memo: &Memo,
    binary: &Digest,
) -> (ScoresReport, Memo, MemoUse) {
    let global = global_digest(plan, binary);
    let t = phase("remembered scores: digests");
    let shape = Examinations::of(plan);
    let digests = shape.digests(&global, plan, records);
    drop(t);
    let usable = memo.global == global;
    let kept: Vec<Option<Arc<Remembered>>> = digests
        .iter()
        .map(|d| usable.then(|| memo.entries.get(d).cloned()).flatten())
        .collect();
    let mut uses = MemoUse {
        remembered: kept.iter().filter(|k| k.is_some()).count(),
        computed: kept.iter().filter(|k| k.is_none()).count(),
        revived: 0,
    };
    // A run's inputs: from its summary, or none for a run of a remembered model examination.
    let runs = |e: usize, given: bool| -> Vec<RunInputs> {
        shape.runs_of[e]
            .iter()
            .map(|&r| {
                let run = &plan.runs[r];
                let (answers, competes, measurement) = match given {
                    true => run_inputs(summary(&run.key)),
                    false => run_inputs(None),
                };
                RunInputs {
                    tool: run.tool as u32,
                    competes,
                    answers,
                    measurement,
                }
            })
            .collect()
    };
    let (mut db, handles) = build(plan, &shape, &kept, &runs);
    // Remembered model examinations whose decisions moved get their runs; that changes no tally
    // (the same answers), hence no decision: one round, and a second finds none.
    loop {
        let stale = db.stale_remembered();
        if stale.is_empty() {
            break;
        }
        let _t = phase("remembered scores: revived");
        uses.revived += stale.len();
        uses.remembered -= stale.len();
        let mut changes = db.change();
        for m in stale {
            if let Some(k) = handles.examinations.iter().position(|x| *x == m) {
                let members = &shape.order[k].1;
                changes.revive(m, members.iter().map(|&e| runs(e, true)).collect());
            }
        }
    }
    let t = phase("remembered scores: report");
    let report = scores_report(plan, &db, &handles, false);
    drop(t);
    let t = phase("remembered scores: kept");
    // What was remembered and still holds is kept as it is; the rest is taken from the database.
    let mut fresh = Vec::new();
    let entries = handles
        .examinations
        .iter()
        .zip(&digests)
        .zip(kept)
        .map(|((m, digest), kept)| {
            let entry = match kept {
                Some(r) if m.remembered(&db).is_some() => r,
                _ => {
                    fresh.push(*digest);
                    Arc::new(remember(&db, *m))
                }
            };
            (*digest, entry)
        })
        .collect();
    drop(t);
    // Freed beside what the command does next (printing, saving).
    mccbuild_core::drop_beside(db);
    let memo = Memo {
        global,
        entries,
        file: memo.file.filter(|_| usable),
        fresh,
    };
    (report, memo, uses)
}

/// A plan's model examinations as the scoring database groups them: by model and examination,
/// in order of first appearance (so the `k`-th is the database's `k`-th).
struct Examinations {
    /// Per examination instance of the plan, its planned runs (indices into the plan's runs).
    runs_of: Vec<Vec<usize>>,
    /// Per model examination: (model, examination), and its examination instances.
    order: Vec<((u32, u32), Vec<usize>)>,
}

impl Examinations {
    fn of(plan: &Plan) -> Examinations {
        let mut runs_of: Vec<Vec<usize>> = vec![Vec::new(); plan.exam_instances.len()];
        for (i, run) in plan.runs.iter().enumerate() {
            runs_of[run.exam_instance].push(i);
        }
        let mut order: Vec<((u32, u32), Vec<usize>)> = Vec::new();
        let mut at: HashMap<(u32, u32), usize> = HashMap::new();
        for (e, ei) in plan.exam_instances.iter().enumerate() {
            let me = (plan.instances[ei.instance].model as u32, ei.exam as u32);
            let i = *at.entry(me).or_insert_with(|| {
                order.push((me, Vec::new()));
                order.len() - 1
            });
            order[i].1.push(e);
        }
        Examinations { runs_of, order }
    }

    /// Each model examination's digest ([`examination_digest`]), on every core.
    fn digests(&self, global: &Digest, plan: &Plan, records: &[Option<Digest>]) -> Vec<Digest> {
        use rayon::prelude::*;
        self.order
            .par_iter()
            .map(|(_, members)| examination_digest(global, plan, members, &self.runs_of, records))
            .collect()
    }
}

/// The scoring database of a plan whose model examinations are remembered (`kept`) or given
/// their runs (`runs(e, true)`), settled.
fn build(
    plan: &Plan,
    shape: &Examinations,
    kept: &[Option<Arc<Remembered>>],
    runs: &dyn Fn(usize, bool) -> Vec<RunInputs>,
) -> (ScoringDb, crate::database::Handles) {
    let t = phase("remembered scores: salsa inputs");
    let mut given = vec![false; plan.exam_instances.len()];
    let mut remembered = HashMap::new();
    for ((me, members), k) in shape.order.iter().zip(kept) {
        match k {
            Some(r) => {
                remembered.insert(*me, r.clone());
            }
            None => members.iter().for_each(|&e| given[e] = true),
        }
    }
    let inputs = contest_inputs(plan, |e| runs(e, given[e]), remembered);
    drop(t);
    let _t = phase("remembered scores: database built and settled");
    let mut db = ScoringDb::default();
    let handles = db.build(inputs);
    debug_assert!(
        shape
            .order
            .iter()
            .enumerate()
            .all(|(k, (_, members))| handles.exam_instances[members[0]].0 == k)
    );
    (db, handles)
}

/// What to remember of a model examination whose scores are up to date.
fn remember(db: &ScoringDb, m: ModelExamination) -> Remembered {
    let agreement = agreement(db, m).clone();
    let tools = m.contest(db).tool_data(db);
    let alone = agreement
        .needs
        .alone
        .iter()
        .map(|t| tools.get(*t as usize).is_some_and(|tool| tool.alone(db)))
        .collect();
    let scores = exam_scores(db, m);
    Remembered {
        agreement,
        alone,
        decided: m.decided(db).to_vec(),
        totals: scores.totals.clone(),
        completed: scores.completed.clone(),
    }
}
