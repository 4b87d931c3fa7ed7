//! The disputes page (`disputes.html`), for the organisers (rule E-6.3: they are "competent to
//! solve the problems they might encounter"): every contested value (tools that computed it
//! gave different answers) and every value they decided (`[contest] corrections`), each with
//! every tool's answer and Confidence, the decision and the situation of E-3.1 (or E-6.3) that
//! made it, and the lines of the corrections file that would decide it for each answer.
//!
//! The values are sorted by their stake ([`stake`]): how many points a change of the decision
//! moves between the tools.

use std::collections::BTreeSet;

use maud::{Markup, html};
use mccbuild_rules::exact::{Exact, count, decimal};
use mccbuild_rules::points::{penalty_value, score_value};
use mccbuild_scoring::db::{Handles, ScoringDb};
use mccbuild_scoring::scores::{ValueRow, exam_instance_rows};

use super::ReportData;

/// One disputed value, with its stake.
#[derive(Clone, Debug)]
pub struct Dispute {
    pub row: ValueRow,
    pub stake: Exact,
    /// The distinct answers the tools gave, in order.
    pub answers: Vec<String>,
}

/// The stake of a value: the points a change of its decision moves, `answering × (ScoreValue +
/// PenaltyValue)` of its examination instance (E-4.1, before the weights of E-4.4). A decision
/// judges each tool that computed the value right (it earns ScoreValue) or wrong (it takes
/// PenaltyValue); deciding for another answer turns each of them from one to the other, or,
/// deciding "unknown", takes their points or penalties away. The more tools answered and the
/// fewer values the examination instance has, the more the decision moves the podiums.
pub fn stake(
    rules: &mccbuild_rules::edition::ScoringRules,
    scored_values: usize,
    answering: usize,
) -> Exact {
    let score = score_value(rules, scored_values);
    let penalty = penalty_value(rules, &score);
    count(answering) * (score + penalty)
}

/// The disputed values of the contest: contested or decided by the organisers, sorted by stake
/// (largest first), then by instance, examination and id. `runs` and `runs_of` as
/// [`ReportData`] has them.
pub fn disputes(
    plan: &mccbuild_plan::Plan,
    db: &ScoringDb,
    handles: &Handles,
    runs: &[super::RunView],
    runs_of: &[Vec<usize>],
) -> Vec<Dispute> {
    // On every core (the scoring database is cloned for each: salsa answers a query another
    // thread computes once); the order of the rows is set by the sort below.
    use rayon::prelude::*;
    let mut out: Vec<Dispute> = plan
        .exam_instances
        .par_iter()
        .enumerate()
        .map_with(db.clone(), |db, (e, ei)| {
            let mut out = Vec::new();
            // A first look at the runs' answers: is any value of this examination instance
            // answered differently (or decided by the organisers)? Only then are its rows made.
            let mut contested = ei.corrections.is_some();
            if !contested {
                let mut seen: Vec<Option<&mccbuild_core::Value>> = vec![None; ei.ids.len()];
                'runs: for &r in &runs_of[e] {
                    for (p, v) in runs[r].answers.iter() {
                        match seen.get_mut(*p as usize) {
                            Some(slot @ None) => *slot = Some(v),
                            Some(Some(w)) if *w != v => {
                                contested = true;
                                break 'runs;
                            }
                            _ => {}
                        }
                    }
                }
            }
            if !contested {
                return out;
            }
            for row in exam_instance_rows(plan, db, handles, e) {
                let answers: Vec<String> = row
                    .answers
                    .values()
                    .cloned()
                    .collect::<BTreeSet<_>>()
                    .into_iter()
                    .collect();
                if answers.len() < 2 && row.case != "organisers" {
                    continue;
                }
                out.push(Dispute {
                    stake: stake(&plan.contest.edition.scoring, ei.scored, row.answers.len()),
                    row,
                    answers,
                });
            }
            out
        })
        .flatten()
        .collect();
    out.sort_by(|a, b| {
        b.stake.cmp(&a.stake).then_with(|| {
            (&a.row.instance, &a.row.examination, &a.row.id).cmp(&(
                &b.row.instance,
                &b.row.examination,
                &b.row.id,
            ))
        })
    });
    out
}

/// A field of the corrections CSV, quoted where it must be.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The line of the corrections file that decides `row` for `value`.
pub fn correction_line(row: &ValueRow, value: &str) -> String {
    [&row.instance, &row.examination, &row.id, value]
        .iter()
        .map(|f| csv_field(f))
        .collect::<Vec<_>>()
        .join(",")
}

/// The page.
pub fn page(data: &ReportData<'_>) -> Markup {
    let disputes = &data.disputes;
    let corrections = data.plan.corrections.is_some();
    html! {
        p { "Every value the tools gave different answers for, and every value the organisers decided (rule E-6.3, "
            code { "[contest] corrections" } "), with each tool's answer and Confidence (E-2.2), the decision and the situation that made it. "
            "Sorted by stake: the points a change of the decision moves between the tools, "
            "the tools that computed the value × (ScoreValue + PenaltyValue) of its examination (E-4.1, before the weights of E-4.4)." }
        p { (disputes.len()) " values: " (disputes.iter().filter(|d| d.row.case == "organisers").count()) " decided by the organisers, "
            (disputes.iter().filter(|d| d.answers.len() >= 2).count()) " contested." }
        @if !corrections {
            p { "To decide a value, add a corrections file to the contest (" code { "corrections = \"corrections.csv\"" } " in "
                code { "[contest]" } ") whose first line is " code { "instance,examination,id,value" } ", then the line given with the value." }
        } @else {
            p { "To decide a value, add the line given with it to the contest's corrections file." }
        }
        table.data.disputes {
            tr { th { "stake" } th { "instance" } th { "examination" } th { "value" } th { "answers (tool: answer, Confidence)" } th { "decision" } th { "decided by" } th { "to decide it, add" } }
            @for d in disputes {
                @let organisers = d.row.case == "organisers";
                tr class=[organisers.then_some("organisers")] {
                    td.n { (decimal(&d.stake, 2)) }
                    td { (d.row.instance) }
                    td { (d.row.examination) }
                    td.mono { (d.row.id) }
                    td {
                        @for (tool, answer) in &d.row.answers {
                            span.mono class=[(d.row.trusted.as_deref().is_some_and(|t| t != answer)).then_some("warn")] { (tool) ": " (answer) }
                            @if let Some(c) = data.scores.confidence.get(tool) { " (" (format!("{c:.3}")) ")" }
                            br;
                        }
                    }
                    td.mono { (d.row.trusted.as_deref().unwrap_or("unknown")) }
                    td {
                        @if organisers {
                            b { "the organisers (E-6.3)" }
                            @if let Some(u) = &d.row.undecided { br; small { "without them: " (u.trusted.as_deref().unwrap_or("unknown")) " (" (u.case) ")" } }
                        } @else { (d.row.case) " (E-3.1)" }
                    }
                    td.mono {
                        @for value in &d.answers {
                            @if d.row.trusted.as_deref() != Some(value.as_str()) || !organisers { (correction_line(&d.row, value)) br; }
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stake_is_the_points_a_change_of_decision_moves() {
        // MCC 2026: 16 points per examination, penalty twice the score value. StateSpace (4
        // values): ScoreValue 4, PenaltyValue 8; three tools answered: 3 x 12 = 36.
        let edition = mccbuild_rules::edition::Edition::load(std::path::Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../rules/mcc-2026.toml"
        )))
        .expect("the 2026 edition");
        assert_eq!(decimal(&stake(&edition.scoring, 4, 3), 0), "36");
        // A global property (1 value): 16 + 32, two tools: 96.
        assert_eq!(decimal(&stake(&edition.scoring, 1, 2), 0), "96");
        assert!(stake(&edition.scoring, 16, 2) < stake(&edition.scoring, 4, 2));
    }

    #[test]
    fn correction_lines_are_csv() {
        let row = ValueRow {
            instance: "A-PT-1".into(),
            examination: "UpperBounds".into(),
            id: "A-PT-1-UpperBounds-03".into(),
            trusted: None,
            case: "two-tools".into(),
            answers: Default::default(),
            undecided: None,
        };
        assert_eq!(
            correction_line(&row, "+inf"),
            "A-PT-1,UpperBounds,A-PT-1-UpperBounds-03,+inf"
        );
        assert_eq!(csv_field("a,b"), "\"a,b\"");
    }
}
