//! Why: `mccbuild explain` (one value, or one tool's score in one category) and `mccbuild
//! confidence` (the reliability table of the MCC 2015 report, Table 3). Everything here is read
//! from the scoring database; nothing is computed twice: the rule functions explain themselves
//! through the same queries that score.

use mccbuild_core::names::did_you_mean;
use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use mccbuild_plan::Plan;
use mccbuild_rules::confidence::agreed_value;
use mccbuild_rules::edition::TrustKind;
use mccbuild_rules::exact::{Exact, decimal, fraction, serde_exact, zero};
use mccbuild_rules::podium::{category_total, weighted_points};
use mccbuild_rules::points::score_value;
use mccbuild_rules::trusted::{Decision, TrustCase, trusted_alone, value_weights};
use mccbuild_rules::votes::votes;

use crate::database::{Handles, ScoringDb};
use crate::db::{
    ContestData, category_entries, confidence_tally, tool_confidence, undecided_values,
    vote_decisions,
};
use crate::scores::basis_name;
use mccbuild_rules::reference::{Judgement, judge};

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct AnswerRow {
    pub tool: String,
    pub value: String,
    /// The tool's Confidence (E-2.2); none in ground-truth contests.
    #[serde(serialize_with = "serde_exact::option_as_f64")]
    pub confidence: Option<Exact>,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct WeightRow {
    pub value: String,
    /// Total Confidence of the tools that gave it.
    #[serde(serialize_with = "serde_exact::as_f64")]
    pub weight: Exact,
    /// The same, exactly (a fraction).
    pub weight_exact: String,
    pub tools: usize,
}

/// `mccbuild explain --value`.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ValueExplanation {
    pub instance: String,
    pub examination: String,
    pub id: String,
    pub answers: Vec<AnswerRow>,
    /// Tools that took part in the examination but gave no value for this one.
    pub not_computed: Vec<String>,
    /// E-2.2: the value is in the set V that Confidence is measured on, with this value.
    pub confidence_set: Option<String>,
    /// The situation of E-3.1 that decided (`unanimity`, `weighted-majority`, ...).
    pub case: String,
    pub weights: Vec<WeightRow>,
    pub trusted: Option<String>,
    /// The decision in words, with its rule.
    pub reason: String,
    /// What the trusted value is: `vote`, `ground-truth` or `reference`.
    pub basis: String,
    /// With `[reference]`: the reference answer, the vote beside it, each answer judged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reference: Option<ValueReference>,
}

/// One value against the contest's reference answers.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ValueReference {
    /// The reference: its form and path.
    pub answers: String,
    /// The reference answer (`None`: the reference does not know it).
    pub value: Option<String>,
    /// The vote's trusted value (E-3.1), and the situation that decided it.
    pub vote: Option<String>,
    pub vote_case: String,
    /// Each answer: right, wrong or unknown against the reference.
    pub judgements: BTreeMap<String, Judgement>,
}

/// Why an explanation cannot be given: what was asked for is not in the contest.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExplainError {
    #[error("no examination `{examination}` in {edition}{hint}")]
    NoExamination {
        examination: String,
        edition: String,
        hint: String,
    },
    #[error("no examination {examination} on instance `{instance}` in this contest")]
    NotPlanned {
        instance: String,
        examination: String,
    },
    #[error("no value `{id}` in {examination} of {instance} (its ids are like: {some})")]
    NoValue {
        id: String,
        examination: String,
        instance: String,
        some: String,
    },
    #[error("no tool `{tool}` in this contest{hint}")]
    NoTool { tool: String, hint: String },
    #[error("no category `{category}` in {edition}{hint}")]
    NoCategory {
        category: String,
        edition: String,
        hint: String,
    },
}

/// Explains one value: `instance`, `examination`, `id` (a formula id, the examination's name for
/// a global property, STATES/TRANSITIONS/... for StateSpace).
pub fn explain_value(
    plan: &Plan,
    db: &ScoringDb,
    handles: &Handles,
    instance: &str,
    examination: &str,
    id: &str,
) -> Result<ValueExplanation, ExplainError> {
    let edition = &plan.contest.edition;
    let (e, index) = locate_value(plan, instance, examination, id)?;
    let tools = &plan.contest.tools;
    let tool_data = handles.contest.tool_data(db);
    let ground_truth = edition.info.trust == TrustKind::GroundTruth;
    let confidence = |t: u32| tool_confidence(db, tool_data[t as usize]).clone();
    let answers_given = handles.value_answers(db, e).value(index);
    let answers: Vec<AnswerRow> = answers_given
        .iter()
        .map(|(t, v)| AnswerRow {
            tool: tools[*t as usize].name.clone(),
            value: v.to_string(),
            confidence: (!ground_truth).then(|| confidence(*t)),
        })
        .collect();
    let answered: BTreeSet<u32> = answers_given.iter().map(|(t, _)| *t).collect();
    let not_computed = handles
        .exam_scores(db, e)
        .iter()
        .filter(|s| !answered.contains(&s.tool))
        .map(|s| tools[s.tool as usize].name.clone())
        .collect();
    let decision = &handles.decisions(db, e)[index];
    // E-2.2 and E-3.1 count the votes: every answer, or one per family (`[confidence] votes`).
    let cast = votes(answers_given, crate::db::voters(db, handles.contest));
    let cast_rows: Vec<AnswerRow> = cast
        .iter()
        .map(|(t, v)| AnswerRow {
            tool: tools[*t as usize].name.clone(),
            value: v.to_string(),
            confidence: (!ground_truth).then(|| confidence(*t)),
        })
        .collect();
    let weights: Vec<WeightRow> = if ground_truth {
        Vec::new()
    } else {
        value_weights(&cast, confidence)
            .into_iter()
            .map(|(v, w, n)| WeightRow {
                value: v.to_string(),
                weight_exact: fraction(&w),
                weight: w,
                tools: n,
            })
            .collect()
    };
    let trusted = decision.value.as_ref().map(|v| v.to_string());
    let mut reason = reason(plan, decision, &cast, &cast_rows, &weights, &confidence);
    if decision.case == TrustCase::Organisers {
        // What the vote (or the reference) alone gives, beside the organisers' value.
        let (i, j) = handles.exam_instances[e];
        let undecided = &undecided_values(db, handles.examinations[i])[j][index];
        let without = self::reason(plan, undecided, &cast, &cast_rows, &weights, &confidence);
        reason = format!("{reason}; without it, {without}");
    }
    Ok(ValueExplanation {
        instance: instance.to_string(),
        examination: examination.to_string(),
        id: id.to_string(),
        answers,
        not_computed,
        confidence_set: agreed_value(&cast, &edition.confidence).map(|v| v.to_string()),
        case: decision.case.name().to_string(),
        weights,
        trusted,
        reason,
        basis: basis_name(plan, handles.contest.basis(db)).to_string(),
        reference: plan.reference.as_ref().map(|r| {
            let (i, j) = handles.exam_instances[e];
            let m = handles.examinations[i];
            let given = m.reference(db)[j]
                .as_ref()
                .and_then(|g| g.get(index).cloned())
                .flatten();
            let vote = &vote_decisions(db, m)[j][index];
            ValueReference {
                answers: r.describe(),
                value: given.as_ref().map(|v| v.to_string()),
                vote: vote.value.as_ref().map(|v| v.to_string()),
                vote_case: vote.case.name().to_string(),
                judgements: answers_given
                    .iter()
                    .map(|(t, v)| {
                        (
                            tools[*t as usize].name.clone(),
                            judge(Some(v), given.as_ref()),
                        )
                    })
                    .collect(),
            }
        }),
    })
}

/// The examination instance (index into the plan's) and the value's index there.
fn locate_value(
    plan: &Plan,
    instance: &str,
    examination: &str,
    id: &str,
) -> Result<(usize, usize), ExplainError> {
    let edition = &plan.contest.edition;
    let exam = edition
        .examination(examination)
        .ok_or_else(|| ExplainError::NoExamination {
            examination: examination.to_string(),
            edition: edition.info.name.clone(),
            hint: did_you_mean(
                examination,
                edition.examinations.iter().map(|e| e.name.as_str()),
                "examinations",
            ),
        })?;
    let e = plan
        .exam_instances
        .iter()
        .position(|ei| plan.instances[ei.instance].name == instance && ei.exam == exam)
        .ok_or_else(|| ExplainError::NotPlanned {
            instance: instance.to_string(),
            examination: examination.to_string(),
        })?;
    let ids = &plan.exam_instances[e].ids;
    let index = ids
        .iter()
        .position(|v| &**v == id)
        .ok_or_else(|| ExplainError::NoValue {
            id: id.to_string(),
            examination: examination.to_string(),
            instance: instance.to_string(),
            some: ids
                .iter()
                .take(4)
                .map(|v| &**v)
                .collect::<Vec<_>>()
                .join(", "),
        })?;
    Ok((e, index))
}

/// The decision in words, with the situation of E-3.1 that made it (numbered as in the rules
/// text), the numbers it compared, and the rule functions' verdicts on them.
fn reason(
    plan: &Plan,
    decision: &Decision,
    answers_given: &[(u32, mccbuild_core::Value)],
    answers: &[AnswerRow],
    weights: &[WeightRow],
    confidence: &dyn Fn(u32) -> Exact,
) -> String {
    let shown6 = |x: &Exact| decimal(x, 6);
    let rules = &plan.contest.edition.trusted;
    let shown = decision
        .value
        .as_ref()
        .map_or_else(|| "unknown".to_string(), |v| v.to_string());
    let situation = |case: TrustCase| match case.situation() {
        Some(1) => "first situation",
        Some(2) => "second situation",
        Some(3) => "third situation",
        Some(4) => "fourth situation",
        _ => "fifth situation",
    };
    let rule = format!("E-3.1, {}", situation(decision.case));
    match decision.case {
        TrustCase::NoAnswer => {
            format!("{rule}: no tool provides any value; the trusted value is unknown")
        }
        TrustCase::SingleTool => {
            let c = confidence(answers_given[0].0);
            format!(
                "{rule}: only {} provides a value; its Confidence {} ({}) is {} the threshold {}: {shown}",
                answers[0].tool,
                shown6(&c),
                fraction(&c),
                if trusted_alone(&c, rules) {
                    "at or above"
                } else {
                    "below"
                },
                fraction(&rules.single_tool_threshold)
            )
        }
        TrustCase::Unanimity => format!("{rule}: all {} tools agree: {shown}", answers_given.len()),
        TrustCase::TwoTools => format!(
            "{rule}: only two tools provide different values; {} (Confidence {}) against {} (Confidence {}): {}",
            answers[0].tool,
            shown6(&confidence(answers_given[0].0)),
            answers[1].tool,
            shown6(&confidence(answers_given[1].0)),
            if decision.value.is_some() {
                format!("the higher Confidence wins: {shown}")
            } else {
                "equal Confidence: unknown".into()
            }
        ),
        TrustCase::WeightedMajority => {
            let total: Exact = weights.iter().fold(zero(), |t, w| t + &w.weight);
            let best = weights.iter().max_by(|a, b| a.weight.cmp(&b.weight));
            match (best, &decision.value) {
                (Some(b), Some(_)) => format!(
                    "{rule} (weighted majority, {:?}): {} weighs {} ({}) of a total {} ({}): {shown}",
                    rules.weighted_majority,
                    b.value,
                    shown6(&b.weight),
                    fraction(&b.weight),
                    shown6(&total),
                    fraction(&total)
                ),
                _ => format!(
                    "{rule} (weighted majority, {:?}): no value has the majority of the total weight {} ({}): unknown",
                    rules.weighted_majority,
                    shown6(&total),
                    fraction(&total)
                ),
            }
        }
        TrustCase::GroundTruth => {
            format!("the expected answer given with the task (ground truth): {shown}")
        }
        TrustCase::Organisers => match &plan.corrections {
            Some(c) => format!(
                "decided by the organisers (E-6.3, {}): {shown}",
                c.path.display()
            ),
            None => format!("decided by the organisers (E-6.3): {shown}"),
        },
        TrustCase::Reference => match &plan.reference {
            Some(r) => format!("scored against the reference ({}): {shown}", r.describe()),
            None => format!("scored against the reference: {shown}"),
        },
    }
}

/// One examination of one instance in a tool's category score.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct EntryRow {
    pub instance: String,
    pub examination: String,
    pub right: u32,
    pub wrong: u32,
    /// E-4.1: points of one right value here.
    #[serde(serialize_with = "serde_exact::as_f64")]
    pub score_value: Exact,
    #[serde(serialize_with = "serde_exact::as_f64")]
    pub earned: Exact,
    #[serde(serialize_with = "serde_exact::as_f64")]
    pub penalty: Exact,
    /// `earned - penalty`.
    #[serde(serialize_with = "serde_exact::as_f64")]
    pub points: Exact,
    /// E-4.4: the instance's share of its model's weight.
    #[serde(serialize_with = "serde_exact::as_f64")]
    pub instance_weight: Exact,
    /// E-4.4: the multiplier of its model's kind in this category.
    #[serde(serialize_with = "serde_exact::as_f64")]
    pub kind_multiplier: Exact,
    /// `points x instance_weight x kind_multiplier`: what the entry adds to the score.
    #[serde(serialize_with = "serde_exact::as_f64")]
    pub weighted: Exact,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ModelRow {
    pub model: String,
    pub kind: String,
    pub instances: usize,
    #[serde(serialize_with = "serde_exact::as_f64")]
    pub weighted: Exact,
    pub entries: Vec<EntryRow>,
}

/// `mccbuild explain --tool T --category C`.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ToolExplanation {
    pub tool: String,
    pub category: String,
    #[serde(serialize_with = "serde_exact::as_f64")]
    pub score: Exact,
    /// The same, exactly: the podium's total as a fraction.
    pub score_exact: String,
    pub models: Vec<ModelRow>,
}

/// Explains a tool's score in a category: its points per model, instance and examination, with
/// penalties, normalisation and multipliers. The score is the podium's: the same entries, summed
/// by the same rule function in the same order (E-4.6).
pub fn explain_tool(
    plan: &Plan,
    db: &ScoringDb,
    handles: &Handles,
    tool: &str,
    category: &str,
) -> Result<ToolExplanation, ExplainError> {
    let edition = &plan.contest.edition;
    let t = plan
        .contest
        .tool(tool)
        .ok_or_else(|| ExplainError::NoTool {
            tool: tool.to_string(),
            hint: did_you_mean(
                tool,
                plan.contest.tools.iter().map(|t| t.name.as_str()),
                "tools",
            ),
        })? as u32;
    let c = edition
        .category(category)
        .ok_or_else(|| ExplainError::NoCategory {
            category: category.to_string(),
            edition: edition.info.name.clone(),
            hint: did_you_mean(
                category,
                edition.categories.iter().map(|c| c.name.as_str()),
                "categories",
            ),
        })?;
    let mut models: BTreeMap<usize, ModelRow> = BTreeMap::new();
    for (e, ei) in plan.exam_instances.iter().enumerate() {
        let w = handles.weight(db, e);
        if w.category != c {
            continue;
        }
        let Some(s) = handles.exam_scores(db, e).iter().find(|s| s.tool == t) else {
            continue;
        };
        let instance = &plan.instances[ei.instance];
        let model = &plan.models[instance.model];
        let row = models.entry(instance.model).or_insert_with(|| ModelRow {
            model: model.name.clone(),
            kind: edition.model_kinds[model.kind].name.clone(),
            instances: model.instances.len(),
            weighted: zero(),
            entries: Vec::new(),
        });
        row.entries.push(EntryRow {
            instance: instance.name.clone(),
            examination: edition.examinations[ei.exam].name.clone(),
            right: s.score.right,
            wrong: s.score.wrong,
            score_value: score_value(&edition.scoring, ei.scored),
            earned: s.score.earned.clone(),
            penalty: s.score.penalty.clone(),
            points: s.score.points.clone(),
            instance_weight: w.instance.clone(),
            kind_multiplier: w.kind.clone(),
            weighted: weighted_points(&s.score.points, w),
        });
    }
    for row in models.values_mut() {
        row.weighted = category_total(row.entries.iter().map(|e| e.weighted.clone()));
    }
    let score = tool_category_total(db, handles.contest, c, t);
    Ok(ToolExplanation {
        tool: tool.to_string(),
        category: category.to_string(),
        score_exact: fraction(&score),
        score,
        models: models.into_values().collect(),
    })
}

/// Rule E-4.6: one tool's total in one category, from the same entries, in the same order and
/// by the same rule function as [`crate::db::category_scores`]: the podium's number.
pub fn tool_category_total(
    db: &dyn salsa::Database,
    contest: ContestData,
    category: usize,
    tool: u32,
) -> Exact {
    category_total(
        category_entries(db, contest)
            .filter(|x| x.category == category && x.tool == tool)
            .map(|x| x.weighted),
    )
}

/// One line of the reliability table (MCC 2015 report, Table 3).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ConfidenceRow {
    pub tool: String,
    /// E-2.2: correct / selected (or / |V|, as the rules file says).
    #[serde(serialize_with = "serde_exact::as_f64")]
    pub rate: Exact,
    /// Values of V the tool answered with V's value.
    pub correct: u64,
    /// Values of V the tool answered.
    pub selected: u64,
    /// Examinations in which the tool answered at least one value on at least one instance.
    pub examinations: usize,
}

/// The reliability table.
pub fn confidence_table(plan: &Plan, db: &ScoringDb, handles: &Handles) -> Vec<ConfidenceRow> {
    let mut entered: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); plan.contest.tools.len()];
    for (e, ei) in plan.exam_instances.iter().enumerate() {
        for t in tools_answering(db, handles, e) {
            entered[t].insert(ei.exam);
        }
    }
    confidence_rows(plan, db, handles, |t| entered[t].len())
}

/// The tools that answered at least one value of examination instance `e` (with repeats).
pub fn tools_answering<'db>(
    db: &'db ScoringDb,
    handles: &Handles,
    e: usize,
) -> impl Iterator<Item = usize> + 'db + use<'db> {
    handles
        .value_answers(db, e)
        .iter()
        .flatten()
        .map(|(t, _)| *t as usize)
}

/// The reliability table, given in how many examinations each tool answered (by tool index).
pub fn confidence_rows(
    plan: &Plan,
    db: &ScoringDb,
    handles: &Handles,
    examinations: impl Fn(usize) -> usize,
) -> Vec<ConfidenceRow> {
    let tally = confidence_tally(db, handles.contest);
    let tool_data = handles.contest.tool_data(db);
    let mut rows: Vec<ConfidenceRow> = plan
        .contest
        .tools
        .iter()
        .enumerate()
        .map(|(i, tool)| {
            let t = tally.tool(i as u32);
            ConfidenceRow {
                tool: tool.name.clone(),
                rate: tool_confidence(db, tool_data[i]).clone(),
                correct: t.correct,
                selected: t.selected,
                examinations: examinations(i),
            }
        })
        .collect();
    rows.sort_by(|a, b| a.tool.cmp(&b.tool));
    rows
}
