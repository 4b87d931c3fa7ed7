//! The session's own tests: the pass that finds the stored runs.

use super::records::stored_runs;
use super::*;
use mccbuild_core::{CapturedOutput, Measurement, Response, Termination};
use mccbuild_store::{RECORD_FORMAT, RunRecord};

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
        machine: None,
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
