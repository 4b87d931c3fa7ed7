//! Reading what the exports hold, once: the scores report with its values, every stored run
//! (its summary from the store's index, its techniques from its record), the trusted values of
//! each examination instance and how each was decided.

use std::collections::BTreeMap;

use rayon::prelude::*;

use mccbuild_core::{Outcome, Value};
use mccbuild_plan::{Plan, RunOrigin};
use mccbuild_rules::confidence::distinct_values;
use mccbuild_rules::edition::TrustKind;
use mccbuild_rules::exact::{Exact, decimal, fraction};
use mccbuild_rules::trusted::TrustCase;
use mccbuild_scoring::db::{Handles, ScoringDb};
use mccbuild_scoring::scores::{Partial, scores_report};

use super::csv::{Estimated, mask, row_results, vector};
use super::verdicts::{verdict_explanation, verdict_reference, verdict_value};
use super::{Export, ExportError, ModelVerdicts, Origin, RunEntry, StoredRuns, VerdictEntry};

/// Reads what the exports hold: the scores report with its values, every stored run (its
/// summary from the index, its techniques from its record), the trusted values.
pub fn collect(
    stored_runs: &StoredRuns<'_>,
    db: &ScoringDb,
    handles: &Handles,
) -> Result<Export, ExportError> {
    let plan = stored_runs.plan;
    let mut report = scores_report(plan, db, handles, true);
    // Exports are published: the reference named without this machine's paths.
    if let (Some(r), Some(reference)) = (report.reference.as_mut(), plan.reference.as_ref()) {
        r.answers = reference.describe_published(&plan.contest.root);
    }
    let results: Vec<ExamInstanceResults> = (0..plan.exam_instances.len())
        .map(|e| ExamInstanceResults::of(plan, db, handles, e))
        .collect();
    let stored: Vec<usize> = (0..plan.runs.len())
        .filter(|&i| stored_runs.index.contains(&plan.runs[i].key))
        .collect();
    let techniques = techniques(stored_runs, &stored)?;
    let runs = stored
        .iter()
        .zip(techniques)
        .map(|(&i, techniques)| run_entry(stored_runs, &results, i, techniques))
        .collect::<Result<Vec<_>, _>>()?;
    let mut by_instance: Vec<Vec<usize>> = vec![Vec::new(); plan.instances.len()];
    for (e, ei) in plan.exam_instances.iter().enumerate() {
        by_instance[ei.instance].push(e);
    }
    let verdicts = plan
        .models
        .iter()
        .map(|model| model_verdicts(plan, &results, &by_instance, model))
        .collect();
    report.partial = Partial::of(plan.runs.len() - stored.len(), plan.runs.len());
    Ok(Export {
        report,
        runs,
        verdicts,
        not_stored: plan.runs.len() - stored.len(),
        estimated: results.into_iter().map(|r| r.estimated).collect(),
    })
}

/// What the exports say of one examination instance: its trusted values (E-3.1), the CSV's
/// estimated result, each tool's points, and per value how it was decided.
struct ExamInstanceResults {
    trusted: Vec<Option<Value>>,
    estimated: Estimated,
    /// Per tool taking part, its points (E-4.2).
    points: BTreeMap<u32, Exact>,
    /// Per value: the case of E-3.1, how many tools gave the trusted value, how many computed it.
    decided: Vec<(TrustCase, usize, usize)>,
}

impl ExamInstanceResults {
    fn of(plan: &Plan, db: &ScoringDb, handles: &Handles, e: usize) -> ExamInstanceResults {
        let ei = &plan.exam_instances[e];
        let kind = plan.contest.edition.examinations[ei.exam].value;
        let decisions = handles.decisions(db, e);
        let answers = handles.value_answers(db, e);
        let trusted: Vec<Option<Value>> = decisions.iter().map(|d| d.value.clone()).collect();
        let decided: Vec<(TrustCase, usize, usize)> = (0..ei.ids.len())
            .map(|v| {
                let given = if v < answers.len() {
                    answers.value(v)
                } else {
                    &[]
                };
                let trusted = trusted.get(v).and_then(Option::as_ref);
                let agreeing = trusted.map_or(0, |t| {
                    distinct_values(given)
                        .iter()
                        .find(|d| d.value == t)
                        .map_or(0, |d| d.count)
                });
                let case = decisions.get(v).map_or(TrustCase::NoAnswer, |d| d.case);
                (case, agreeing, given.len())
            })
            .collect();
        let computing: Vec<String> = trusted
            .iter()
            .enumerate()
            .map(|(v, t)| match t {
                Some(_) if v < answers.len() => decided[v].1.to_string(),
                _ => "0".to_string(),
            })
            .collect();
        let estimated = Estimated {
            vector: vector(
                kind,
                &trusted.iter().map(Option::as_ref).collect::<Vec<_>>(),
            ),
            computing: computing.join(" "),
        };
        let points = handles
            .exam_scores(db, e)
            .iter()
            .map(|s| (s.tool, s.score.points.clone()))
            .collect();
        ExamInstanceResults {
            trusted,
            estimated,
            points,
            decided,
        }
    }
}

/// The techniques each stored run named, each once, in order of appearance (from their
/// records, read in parallel).
fn techniques(
    stored_runs: &StoredRuns<'_>,
    stored: &[usize],
) -> Result<Vec<Vec<String>>, ExportError> {
    let (plan, store, index) = (stored_runs.plan, stored_runs.store, stored_runs.index);
    stored
        .par_iter()
        .map(|&i| {
            let key = &plan.runs[i].key;
            match index.read(store, key) {
                Ok(Some((record, _))) => {
                    let mut seen: Vec<String> = Vec::new();
                    for t in record.answers.iter().flat_map(|a| a.techniques.iter()) {
                        if !seen.contains(t) {
                            seen.push(t.clone());
                        }
                    }
                    Ok(seen)
                }
                Ok(None) => Err(ExportError::Record {
                    path: index.record_location(store, key),
                    reason: "it is not in the store's index".to_string(),
                }),
                Err(c) => Err(ExportError::Record {
                    path: c.path,
                    reason: c.reason,
                }),
            }
        })
        .collect()
}

/// The export's entry of stored run `i`.
fn run_entry(
    stored_runs: &StoredRuns<'_>,
    results: &[ExamInstanceResults],
    i: usize,
    techniques: Vec<String>,
) -> Result<RunEntry, ExportError> {
    let plan = stored_runs.plan;
    let run = &plan.runs[i];
    let summary = stored_runs
        .index
        .get(&run.key)
        .ok_or_else(|| ExportError::Record {
            path: stored_runs
                .index
                .record_location(stored_runs.store, &run.key),
            reason: "it is not in the store's index".to_string(),
        })?;
    let ei = &plan.exam_instances[run.exam_instance];
    let exam = &plan.contest.edition.examinations[ei.exam];
    let instance = &plan.instances[ei.instance];
    let tool = &plan.contest.tools[run.tool];
    let mut by_position: Vec<Option<&Value>> = vec![None; ei.ids.len()];
    for (position, value) in summary.answers.iter() {
        if let Some(slot) = by_position.get_mut(*position as usize) {
            *slot = Some(value);
        }
    }
    let result = &results[run.exam_instance];
    let trusted: Vec<Option<&Value>> = result.trusted.iter().map(Option::as_ref).collect();
    let origin = match run.origin {
        RunOrigin::Executed => Origin::Executed,
        RunOrigin::Imported { file, line, .. } => Origin::Imported {
            file: plan.contest.results[file].display().to_string(),
            line,
        },
    };
    Ok(RunEntry {
        tool: tool.name.clone(),
        instance: instance.name.clone(),
        model: plan.models[instance.model].name.clone(),
        examination: exam.name.clone(),
        key: run.key.hex(),
        origin,
        response: summary.response,
        outcome: Outcome::describe(
            summary.response,
            summary.measurement.termination,
            summary.answers.len(),
        ),
        measurement: summary.measurement,
        cores: tool.cores,
        techniques,
        ids: ei.ids.iter().map(|id| id.to_string()).collect(),
        answers: ei
            .ids
            .iter()
            .zip(&by_position)
            .filter_map(|(id, v)| v.map(|v| (id.to_string(), v.to_string())))
            .collect(),
        mask: mask(&by_position, &trusted),
        points: result.points.get(&(run.tool as u32)).map(round),
        points_exact: result.points.get(&(run.tool as u32)).map(fraction),
        results: row_results(summary.outcome(), exam.value, &by_position),
        exam_instance: run.exam_instance,
    })
}

/// A model's verdicts: its instances in order, their examinations in order, their values.
fn model_verdicts(
    plan: &Plan,
    results: &[ExamInstanceResults],
    by_instance: &[Vec<usize>],
    model: &mccbuild_plan::PlannedModel,
) -> ModelVerdicts {
    let edition = &plan.contest.edition;
    let ground_truth = edition.info.trust == TrustKind::GroundTruth;
    let mut entries = Vec::new();
    for &i in &model.instances {
        for &e in &by_instance[i] {
            let ei = &plan.exam_instances[e];
            let exam = &edition.examinations[ei.exam];
            for (v, id) in ei.ids.iter().enumerate() {
                let (category, reference) = verdict_reference(&exam.name, id);
                let value = results[e].trusted.get(v).and_then(Option::as_ref);
                let (case, agreeing, computed) = results[e].decided[v];
                entries.push(VerdictEntry {
                    instance: plan.instances[i].name.clone(),
                    category,
                    reference,
                    value: verdict_value(value),
                    explanation: verdict_explanation(
                        value.is_some(),
                        ground_truth,
                        case,
                        agreeing,
                        computed,
                    ),
                });
            }
        }
    }
    ModelVerdicts {
        model: model.name.clone(),
        verdicts: entries,
    }
}

/// Scores are exact fractions; as in `mccbuild scores`, six decimals, rounded once.
fn round(x: &Exact) -> f64 {
    decimal(x, 6).parse().unwrap_or(f64::NAN)
}
