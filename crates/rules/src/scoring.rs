//! Rule E-4: points, normalisation, podiums and awards.

use serde::Serialize;

use crate::confidence::ToolIdx;
use crate::edition::{
    AwardAggregate, KindWeight, ModelKind, ModelWeight, ScoringRules, WrongValue,
};
use mccbuild_core::value::Value;

/// Rule E-4.1: ScoreValue, the points of one right value of an examination with `values` values
/// ("the total number of points a tool can receive from an examination being 16").
pub fn score_value(rules: &ScoringRules, values: usize) -> f64 {
    if values == 0 {
        0.0
    } else {
        rules.points_per_examination / values as f64
    }
}

/// Rule E-4.1: PenaltyValue, "worth twice the points when a tool has provided the correct value".
pub fn penalty_value(rules: &ScoringRules, score_value: f64) -> f64 {
    rules.penalty_factor * score_value
}

/// A tool's result on one examination of one instance.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct ExamScore {
    /// `earned - penalty`.
    pub points: f64,
    /// Points of the right values (ScoreValue each, or the score table's `correct`).
    pub earned: f64,
    /// Points lost: PenaltyValue per wrong value (or the table's `wrong`, negated), or, under
    /// 2015's rule, everything earned when one value is wrong.
    pub penalty: f64,
    /// Values answered with the trusted value.
    pub right: u32,
    /// Values answered with another value than the trusted one.
    pub wrong: u32,
    /// Rule E-4.3: the tool computed every trusted value of the examination (and there was at
    /// least one); only then are its time and memory reported.
    pub complete: bool,
}

/// Rules E-4.2 and E-4.3: the score of one tool on one examination of one instance.
///
/// `answers` are the tool's values by value index; `trusted` the trusted value of each index
/// (`None`: unknown); the first `scored` values earn points (the others, 2023's extra
/// StateSpace values, only count for completeness). A right value earns ScoreValue, a wrong one
/// costs PenaltyValue, values not computed or without trusted value count 0; the examination's
/// score is the sum. Under `wrong_value = "lose-examination"` (MCC 2015) one wrong value makes
/// the whole examination 0. With a score table (SV-COMP 2012), each answer earns its row's
/// points, right or wrong. `right`, `wrong` and `complete` are over all values (E-4.3: "the 4
/// values for StateSpace").
pub fn examination_score<'a>(
    answers: impl IntoIterator<Item = (usize, &'a Value)>,
    trusted: &[Option<Value>],
    scored: usize,
    rules: &ScoringRules,
) -> ExamScore {
    let value_points = score_value(rules, scored);
    let mut score = ExamScore::default();
    let (mut scored_right, mut scored_wrong) = (0u32, 0u32);
    let (mut table_earned, mut table_lost) = (0.0, 0.0);
    for (index, value) in answers {
        let row = rules
            .table
            .iter()
            .find(|r| &r.answer == value)
            .filter(|_| index < scored);
        match trusted.get(index) {
            Some(Some(reference)) if reference == value => {
                score.right += 1;
                scored_right += (index < scored) as u32;
                table_earned += row.map_or(0.0, |r| r.correct);
            }
            Some(Some(_)) => {
                score.wrong += 1;
                scored_wrong += (index < scored) as u32;
                table_lost -= row.map_or(0.0, |r| r.wrong);
            }
            _ => {}
        }
    }
    (score.earned, score.penalty) = if !rules.table.is_empty() {
        (table_earned, table_lost)
    } else {
        let earned = scored_right as f64 * value_points;
        match rules.wrong_value {
            WrongValue::Penalty => (
                earned,
                scored_wrong as f64 * penalty_value(rules, value_points),
            ),
            WrongValue::LoseExamination if scored_wrong > 0 => (earned, earned),
            WrongValue::LoseExamination => (earned, 0.0),
        }
    };
    score.points = score.earned - score.penalty;
    let known = trusted.iter().filter(|t| t.is_some()).count() as u32;
    score.complete = known > 0 && score.right == known;
    score
}

/// Rule E-4.4, normalisation: the weight of each instance of a model with `instances` instances,
/// when the model with the most instances has `largest`. With `model_weight = "linear"` a model
/// of n instances weighs `1 + (ratio - 1)(n - 1)/(N - 1)` one-instance models in total (so the
/// largest weighs exactly `max_model_ratio` = 2 times a single-instance model, as E-4.4 bounds
/// it), shared equally by its instances.
pub fn instance_weight(rules: &ScoringRules, instances: usize, largest: usize) -> f64 {
    match rules.model_weight {
        ModelWeight::None => 1.0,
        ModelWeight::Linear => {
            if instances == 0 {
                return 0.0;
            }
            let model = if largest <= 1 {
                1.0
            } else {
                1.0 + (rules.max_model_ratio - 1.0) * (instances - 1) as f64 / (largest - 1) as f64
            };
            model / instances as f64
        }
    }
}

/// Rule E-4.4, model kinds: the multiplier of each kind in one category, given the points each
/// kind could attain there (`attainable[k]`: the sum of the normalised maximum points of its
/// instances). A fixed multiplier is used as is (2023: surprise x10; 2015: x1, x2, x3). A share
/// (2026: "the total score for all instances of such models weight half the score for all the
/// instances of known models") gives the multiplier m with
/// `m * attainable[kind] = share * multiplier(of) * attainable[of]`; when either side is empty the
/// multiplier is 1 (there is nothing to balance).
pub fn kind_multipliers(kinds: &[ModelKind], attainable: &[f64]) -> Vec<f64> {
    let fixed = |k: usize| match kinds[k].weight {
        KindWeight::Multiplier(m) => m,
        KindWeight::ShareOf { .. } => 1.0,
    };
    (0..kinds.len())
        .map(|k| match kinds[k].weight {
            KindWeight::Multiplier(m) => m,
            KindWeight::ShareOf { of, share } => {
                let own = attainable.get(k).copied().unwrap_or(0.0);
                let other = attainable.get(of).copied().unwrap_or(0.0) * fixed(of);
                if own > 0.0 && other > 0.0 {
                    share * other / own
                } else {
                    1.0
                }
            }
        })
        .collect()
}

/// What the podium needs to know of a tool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entrant<'a> {
    pub tool: ToolIdx,
    pub name: &'a str,
    pub family: &'a str,
    /// Rule T-2: competing tools can win medals, reference tools are shown beside them.
    pub competing: bool,
}

/// One line of a category's podium table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Standing {
    pub tool: ToolIdx,
    pub score: f64,
    /// 1-based rank among the ranked entries (equal scores share a rank); `None` for entries
    /// shown for information only (reference tools, other variants of a family).
    pub rank: Option<u32>,
    /// 1 gold, 2 silver, 3 bronze.
    pub medal: Option<u8>,
    pub competing: bool,
    /// Rule E-4.6: the best variant of its family in this category.
    pub best_of_family: bool,
}

/// Rules E-4.5 and E-4.6: the podium of one category. Tools are ranked by their total score in
/// the category; of several variants of one tool (a family) only the best one is ranked, the
/// others are displayed for information; reference tools are displayed but never ranked. Medals go
/// to the first three ranks, to tools with a positive score (a tool that earned nothing is not
/// a medallist). Ties share a rank and its medal, unless `tie_break` (lower is better: SV-COMP's
/// success CPU time) orders them.
pub fn podium(
    entrants: &[Entrant<'_>],
    scores: &[f64],
    tie_break: Option<&[f64]>,
) -> Vec<Standing> {
    let mut order: Vec<usize> = (0..entrants.len()).collect();
    let score = |i: usize| {
        scores
            .get(entrants[i].tool as usize)
            .copied()
            .unwrap_or(0.0)
    };
    let secondary = |i: usize| {
        tie_break
            .and_then(|t| t.get(entrants[i].tool as usize).copied())
            .unwrap_or(0.0)
    };
    order.sort_by(|&a, &b| {
        score(b)
            .total_cmp(&score(a))
            .then_with(|| secondary(a).total_cmp(&secondary(b)))
            .then_with(|| entrants[a].name.cmp(entrants[b].name))
    });
    let mut seen_families: Vec<&str> = Vec::new();
    let mut standings = Vec::with_capacity(order.len());
    let mut ranked = 0u32;
    let mut last: Option<((f64, f64), u32)> = None;
    for i in order {
        let e = &entrants[i];
        let best_of_family = e.competing && !seen_families.contains(&e.family);
        if best_of_family {
            seen_families.push(e.family);
        }
        let s = score(i);
        let key = (s, secondary(i));
        let rank = best_of_family.then(|| {
            ranked += 1;
            match last {
                Some((previous, rank)) if previous == key => rank,
                _ => {
                    last = Some((key, ranked));
                    ranked
                }
            }
        });
        let medal = rank.filter(|&r| r <= 3 && s > 0.0).map(|r| r as u8);
        standings.push(Standing {
            tool: e.tool,
            score: s,
            rank,
            medal,
            competing: e.competing,
            best_of_family,
        });
    }
    standings
}

/// A tool's time and memory over the examinations it completed (rule E-4.3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Performance {
    pub completed: u32,
    pub cpu_s: f64,
    pub peak_memory_mb: f64,
}

impl Performance {
    pub fn add(&mut self, cpu_s: f64, peak_memory_mb: f64) {
        self.completed += 1;
        self.cpu_s += cpu_s;
        self.peak_memory_mb += peak_memory_mb;
    }

    pub fn merge(&mut self, other: &Performance) {
        self.completed += other.completed;
        self.cpu_s += other.cpu_s;
        self.peak_memory_mb += other.peak_memory_mb;
    }

    fn aggregate(&self, how: AwardAggregate) -> (f64, f64) {
        match how {
            AwardAggregate::Sum => (self.cpu_s, self.peak_memory_mb),
            AwardAggregate::Mean => {
                let n = self.completed.max(1) as f64;
                (self.cpu_s / n, self.peak_memory_mb / n)
            }
        }
    }
}

/// The two awards of a podium.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Awards {
    pub fastest: Option<ToolIdx>,
    pub least_memory: Option<ToolIdx>,
}

/// Rule E-4.5: "a fastest tool award is provided for the fastest tool and the less memory award
/// is provided for the tool requiring the smallest amount of memory. Such awards are computed,
/// for each tool, based on the examinations for which all the values have been provided."
/// Among the tools ranked on the podium (competing, best of family) that completed at least one
/// examination, the lowest CPU time and the lowest peak memory, aggregated as the rules file
/// says (ties go to the better-ranked tool).
pub fn awards(standings: &[Standing], performance: &[Performance], how: AwardAggregate) -> Awards {
    let mut fastest: Option<(ToolIdx, f64)> = None;
    let mut least: Option<(ToolIdx, f64)> = None;
    for s in standings.iter().filter(|s| s.rank.is_some()) {
        let Some(p) = performance.get(s.tool as usize).filter(|p| p.completed > 0) else {
            continue;
        };
        let (cpu, mem) = p.aggregate(how);
        if fastest.is_none_or(|(_, best)| cpu < best) {
            fastest = Some((s.tool, cpu));
        }
        if least.is_none_or(|(_, best)| mem < best) {
            least = Some((s.tool, mem));
        }
    }
    Awards {
        fastest: fastest.map(|(t, _)| t),
        least_memory: least.map(|(t, _)| t),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules() -> ScoringRules {
        ScoringRules {
            points_per_examination: 16.0,
            penalty_factor: 2.0,
            wrong_value: WrongValue::Penalty,
            model_weight: ModelWeight::Linear,
            max_model_ratio: 2.0,
            table: Vec::new(),
        }
    }

    #[test]
    fn score_table_of_svcomp_2012() {
        // SV-COMP 2012: SAFE correct +2, SAFE incorrect -4, UNSAFE correct +1, UNSAFE incorrect
        // -2, UNKNOWN 0. One task per run (one value).
        let table = ScoringRules {
            table: vec![
                crate::edition::ScoreRow {
                    answer: b(true),
                    correct: 2.0,
                    wrong: -4.0,
                },
                crate::edition::ScoreRow {
                    answer: b(false),
                    correct: 1.0,
                    wrong: -2.0,
                },
            ],
            model_weight: ModelWeight::None,
            ..rules()
        };
        let safe = [Some(b(true))];
        let unsafe_ = [Some(b(false))];
        let score = |answer: Option<bool>, truth: &[Option<Value>]| {
            let a: Vec<(usize, Value)> = answer.map(|v| (0, b(v))).into_iter().collect();
            examination_score(a.iter().map(|(i, v)| (*i, v)), truth, 1, &table).points
        };
        assert_eq!(score(Some(true), &safe), 2.0);
        assert_eq!(score(Some(true), &unsafe_), -4.0);
        assert_eq!(score(Some(false), &unsafe_), 1.0);
        assert_eq!(score(Some(false), &safe), -2.0);
        assert_eq!(score(None, &safe), 0.0);
    }

    #[test]
    fn ties_broken_by_success_cpu_time() {
        // SV-COMP: equal sums of points are sub-ranked by success CPU time, lower first.
        let e = vec![
            Entrant {
                tool: 0,
                name: "a",
                family: "a",
                competing: true,
            },
            Entrant {
                tool: 1,
                name: "b",
                family: "b",
                competing: true,
            },
            Entrant {
                tool: 2,
                name: "c",
                family: "c",
                competing: true,
            },
        ];
        let scores = [10.0, 10.0, 3.0];
        let cpu = [50.0, 20.0, 1.0];
        let ranks: Vec<(u32, Option<u32>)> = podium(&e, &scores, Some(&cpu))
            .iter()
            .map(|s| (s.tool, s.rank))
            .collect();
        assert_eq!(ranks, vec![(1, Some(1)), (0, Some(2)), (2, Some(3))]);
        let shared: Vec<(u32, Option<u32>)> = podium(&e, &scores, None)
            .iter()
            .map(|s| (s.tool, s.rank))
            .collect();
        assert_eq!(shared, vec![(0, Some(1)), (1, Some(1)), (2, Some(3))]);
    }

    fn b(v: bool) -> Value {
        Value::Bool(v)
    }

    #[test]
    fn score_and_penalty_values() {
        // E-4.1: 16 points spread over the values.
        assert_eq!(score_value(&rules(), 16), 1.0);
        assert_eq!(score_value(&rules(), 4), 4.0); // StateSpace
        assert_eq!(score_value(&rules(), 1), 16.0); // a global property
        assert_eq!(penalty_value(&rules(), 4.0), 8.0);
    }

    #[test]
    fn examination_score_golden() {
        // 16 formulas: trusted values known for 0..14, unknown for 14 and 15.
        // The tool answers 0..10 right (10 x 1 = 10), 10 and 11 wrong (2 x -2 = -4),
        // 14 (unknown: 0), and nothing for 12, 13, 15.  Score: 10 - 4 = 6.
        let mut trusted: Vec<Option<Value>> = (0..14).map(|i| Some(b(i % 2 == 0))).collect();
        trusted.extend([None, None]);
        let answers: Vec<(usize, Value)> = (0..10)
            .map(|i| (i, b(i % 2 == 0)))
            .chain([(10, b(false)), (11, b(true)), (14, b(true))])
            .collect();
        let s = examination_score(
            answers.iter().map(|(i, v)| (*i, v)),
            &trusted,
            trusted.len(),
            &rules(),
        );
        assert_eq!(
            s,
            ExamScore {
                points: 6.0,
                earned: 10.0,
                penalty: 4.0,
                right: 10,
                wrong: 2,
                complete: false
            }
        );
        // 2015: one wrong value loses the examination on this instance.
        let r2015 = ScoringRules {
            wrong_value: WrongValue::LoseExamination,
            ..rules()
        };
        assert_eq!(
            examination_score(
                answers.iter().map(|(i, v)| (*i, v)),
                &trusted,
                trusted.len(),
                &r2015
            )
            .points,
            0.0
        );
    }

    #[test]
    fn unscored_values_count_for_completeness_not_points() {
        // 2023 StateSpace: 4 values, only STATES (the first) scored: ScoreValue 16 / 1 = 16.
        // Right STATES, wrong TRANSITIONS: 16 points, no penalty; not complete (E-4.3 needs the
        // 4 values).
        let trusted = vec![
            Some(Value::Int(6)),
            Some(Value::Int(8)),
            Some(Value::Int(1)),
            Some(Value::Int(4)),
        ];
        let answers = [
            (0, Value::Int(6)),
            (1, Value::Int(9)),
            (2, Value::Int(1)),
            (3, Value::Int(4)),
        ];
        let s = examination_score(answers.iter().map(|(i, v)| (*i, v)), &trusted, 1, &rules());
        assert_eq!(
            s,
            ExamScore {
                points: 16.0,
                earned: 16.0,
                penalty: 0.0,
                right: 3,
                wrong: 1,
                complete: false
            }
        );
        // STATES only: 16 points, not complete either.
        let s = examination_score(std::iter::once((0, &Value::Int(6))), &trusted, 1, &rules());
        assert_eq!(
            s,
            ExamScore {
                points: 16.0,
                earned: 16.0,
                penalty: 0.0,
                right: 1,
                wrong: 0,
                complete: false
            }
        );
    }

    #[test]
    fn completeness_counts_trusted_values_only() {
        // StateSpace: TRANSITIONS unknown; the tool gives the 3 trusted ones right: complete,
        // 3 x 4 = 12 points.
        let trusted = vec![
            Some(Value::Int(6)),
            None,
            Some(Value::Int(1)),
            Some(Value::Int(4)),
        ];
        let answers = [(0, Value::Int(6)), (2, Value::Int(1)), (3, Value::Int(4))];
        let s = examination_score(
            answers.iter().map(|(i, v)| (*i, v)),
            &trusted,
            trusted.len(),
            &rules(),
        );
        assert_eq!(
            s,
            ExamScore {
                points: 12.0,
                earned: 12.0,
                penalty: 0.0,
                right: 3,
                wrong: 0,
                complete: true
            }
        );
        // Nothing trusted: never complete.
        let none = vec![None; 4];
        assert!(
            !examination_score(answers.iter().map(|(i, v)| (*i, v)), &none, 4, &rules()).complete
        );
    }

    #[test]
    fn instance_weights_golden() {
        // Largest model: 11 instances. A one-instance model weighs 1; the 11-instance model
        // weighs 2 in total (2/11 per instance); a 6-instance model 1 + 5/10 = 1.5 (0.25 each).
        assert_eq!(instance_weight(&rules(), 1, 11), 1.0);
        assert!((instance_weight(&rules(), 11, 11) * 11.0 - 2.0).abs() < 1e-12);
        assert!((instance_weight(&rules(), 6, 11) - 0.25).abs() < 1e-12);
        // All models have one instance: every instance weighs 1.
        assert_eq!(instance_weight(&rules(), 1, 1), 1.0);
        let none = ScoringRules {
            model_weight: ModelWeight::None,
            ..rules()
        };
        assert_eq!(instance_weight(&none, 6, 11), 1.0);
    }

    #[test]
    fn kind_multipliers_golden() {
        let kinds = vec![
            ModelKind {
                name: "known".into(),
                weight: KindWeight::Multiplier(1.0),
            },
            ModelKind {
                name: "surprise".into(),
                weight: KindWeight::ShareOf { of: 0, share: 0.5 },
            },
        ];
        // Known instances could earn 160 points, surprise ones 40: m = 0.5 * 160 / 40 = 2, so
        // surprise instances weigh 80 in total, half of 160.
        assert_eq!(kind_multipliers(&kinds, &[160.0, 40.0]), vec![1.0, 2.0]);
        // No surprise instance, or no known one: nothing to balance.
        assert_eq!(kind_multipliers(&kinds, &[160.0, 0.0]), vec![1.0, 1.0]);
        assert_eq!(kind_multipliers(&kinds, &[0.0, 40.0]), vec![1.0, 1.0]);
        // 2023: a fixed x10.
        let fixed = vec![
            ModelKind {
                name: "known".into(),
                weight: KindWeight::Multiplier(1.0),
            },
            ModelKind {
                name: "surprise".into(),
                weight: KindWeight::Multiplier(10.0),
            },
        ];
        assert_eq!(kind_multipliers(&fixed, &[160.0, 40.0]), vec![1.0, 10.0]);
    }

    fn entrants() -> Vec<Entrant<'static>> {
        vec![
            Entrant {
                tool: 0,
                name: "lola",
                family: "lola",
                competing: true,
            },
            Entrant {
                tool: 1,
                name: "tapaal-seq",
                family: "tapaal",
                competing: true,
            },
            Entrant {
                tool: 2,
                name: "tapaal-par",
                family: "tapaal",
                competing: true,
            },
            Entrant {
                tool: 3,
                name: "gold2025",
                family: "gold2025",
                competing: false,
            },
            Entrant {
                tool: 4,
                name: "smpt",
                family: "smpt",
                competing: true,
            },
            Entrant {
                tool: 5,
                name: "zero",
                family: "zero",
                competing: true,
            },
        ]
    }

    #[test]
    fn podium_best_variant_and_reference_tools() {
        // Scores: gold2025 (reference) 500, tapaal-par 400, tapaal-seq 350, lola 300, smpt 300,
        // zero 0. Ranked: tapaal-par 1 (gold), lola 2 and smpt 2 (tie: both silver, sorted by
        // name), zero 4 (no medal: rank 4 and no points). tapaal-seq is the family's second
        // variant: shown, unranked. gold2025 is a reference tool: shown first, unranked.
        let scores = [300.0, 350.0, 400.0, 500.0, 300.0, 0.0];
        let p = podium(&entrants(), &scores, None);
        let summary: Vec<(u32, Option<u32>, Option<u8>)> =
            p.iter().map(|s| (s.tool, s.rank, s.medal)).collect();
        assert_eq!(
            summary,
            vec![
                (3, None, None),
                (2, Some(1), Some(1)),
                (1, None, None),
                (0, Some(2), Some(2)),
                (4, Some(2), Some(2)),
                (5, Some(4), None)
            ]
        );
    }

    #[test]
    fn awards_among_ranked_tools_on_completed_examinations() {
        let scores = [300.0, 350.0, 400.0, 500.0, 300.0, 0.0];
        let standings = podium(&entrants(), &scores, None);
        let mut perf = vec![Performance::default(); 6];
        perf[0].add(10.0, 100.0); // lola: mean 10 s, 100 MB
        perf[0].add(30.0, 300.0); //       -> mean 20 s, 200 MB
        perf[2].add(15.0, 50.0); // tapaal-par: 15 s, 50 MB
        perf[3].add(1.0, 1.0); // reference tool: never awarded
        perf[1].add(0.5, 0.5); // tapaal-seq: not the ranked variant
        let a = awards(&standings, &perf, AwardAggregate::Mean);
        assert_eq!(
            a,
            Awards {
                fastest: Some(2),
                least_memory: Some(2)
            }
        );
        // Summed, lola totals 40 s and 400 MB: tapaal-par still wins both.
        let a = awards(&standings, &perf, AwardAggregate::Sum);
        assert_eq!(
            a,
            Awards {
                fastest: Some(2),
                least_memory: Some(2)
            }
        );
        perf[4].add(5.0, 500.0); // smpt: fastest, not least memory
        let a = awards(&standings, &perf, AwardAggregate::Mean);
        assert_eq!(
            a,
            Awards {
                fastest: Some(4),
                least_memory: Some(2)
            }
        );
    }
}
