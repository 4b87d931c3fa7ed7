//! Rules E-4.5 and E-4.6: category totals, podiums (ranks, best variant, reference tools,
//! tie-breaks, medals) and the fastest-tool and least-memory awards.

use serde::Serialize;

use crate::confidence::ToolIdx;
use crate::edition::{AwardAggregate, AwardTies, SharedRanks};
use crate::exact::{Exact, Sum, count, from_f64_exact, serde_exact, zero};
use crate::weights::Weight;

/// Rule E-4.6: what one examination of one instance adds to a tool's total in its category:
/// its points (E-4.2) weighted as E-4.4 says.
pub fn weighted_points(points: &Exact, weight: &Weight) -> Exact {
    points * weight.factor()
}

/// [`weighted_points`] of points summed over examination instances of one weight (E-4.4's
/// factor, `weight.factor()`: the weighting is linear, so weighting the sum is summing the
/// weighted points), in machine words while they fit: the scoring database weights each tool's
/// points once per weight group.
pub fn weighted_sum(points: &Sum, factor: &Sum) -> Sum {
    points.times(factor)
}

/// Rule E-4.6: "For each category, and for each tool, a total score is computed as the sum of
/// all the examination scores of the tool in the examinations enclosed in this category": the
/// weighted points, summed exactly (so that every total of a tool, on a podium or in an
/// explanation, is the same number, whatever the order, and equal totals are equal); in
/// machine words while the sum fits ([`Sum`]), with big integers past that.
pub fn category_total(weighted: impl IntoIterator<Item = impl Into<Sum>>) -> Exact {
    let mut total = Sum::default();
    for points in weighted {
        total.merge(&points.into());
    }
    total.value()
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
    #[serde(with = "serde_exact")]
    pub score: Exact,
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
/// to the first three ranks, whatever the score (the texts set no minimum), or only to tools with
/// a positive score when `medal_needs_positive_score` (`[ranking]`, see
/// [`crate::edition::RankingRules`]). Ties share a rank and its medal, unless `tie_break` (lower
/// is better: SV-COMP's success CPU time) orders them; the rank after a shared one is the next
/// position (1, 1, 3) or the next rank (1, 1, 2), as `shared` says ([`SharedRanks`]). Scores
/// and tie-breaks are exact: equal means equal.
pub fn podium(
    entrants: &[Entrant<'_>],
    scores: &[Exact],
    tie_break: Option<&[Exact]>,
    medal_needs_positive_score: bool,
    shared: SharedRanks,
) -> Vec<Standing> {
    let mut order: Vec<usize> = (0..entrants.len()).collect();
    let nothing = zero();
    let score = |i: usize| scores.get(entrants[i].tool as usize).unwrap_or(&nothing);
    let secondary = |i: usize| {
        tie_break
            .and_then(|t| t.get(entrants[i].tool as usize))
            .unwrap_or(&nothing)
    };
    order.sort_by(|&a, &b| {
        score(b)
            .cmp(score(a))
            .then_with(|| secondary(a).cmp(secondary(b)))
            .then_with(|| entrants[a].name.cmp(entrants[b].name))
    });
    let mut seen_families: Vec<&str> = Vec::new();
    let mut standings = Vec::with_capacity(order.len());
    let mut ranked = 0u32;
    let mut last: Option<((&Exact, &Exact), u32)> = None;
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
                    let rank = match (shared, last) {
                        (SharedRanks::Dense, Some((_, rank))) => rank + 1,
                        (SharedRanks::Dense, None) => 1,
                        (SharedRanks::Skip, _) => ranked,
                    };
                    last = Some((key, rank));
                    rank
                }
            }
        });
        let medal = rank
            .filter(|&r| r <= 3 && (!medal_needs_positive_score || *s > nothing))
            .map(|r| r as u8);
        standings.push(Standing {
            tool: e.tool,
            score: s.clone(),
            rank,
            medal,
            competing: e.competing,
            best_of_family,
        });
    }
    standings
}

/// A tool's time and memory over the examinations it completed (rule E-4.3): exact sums of the
/// measured floats (each float's exact value), so that the order of addition changes nothing.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Performance {
    pub completed: u32,
    #[serde(with = "serde_exact")]
    pub cpu_s: Exact,
    #[serde(with = "serde_exact")]
    pub peak_memory_mb: Exact,
}

impl Performance {
    pub fn add(&mut self, cpu_s: f64, peak_memory_mb: f64) {
        self.completed += 1;
        self.cpu_s += from_f64_exact(cpu_s);
        self.peak_memory_mb += from_f64_exact(peak_memory_mb);
    }

    pub fn merge(&mut self, other: &Performance) {
        self.completed += other.completed;
        self.cpu_s += &other.cpu_s;
        self.peak_memory_mb += &other.peak_memory_mb;
    }

    fn aggregate(&self, how: AwardAggregate) -> (Exact, Exact) {
        match how {
            AwardAggregate::Sum => (self.cpu_s.clone(), self.peak_memory_mb.clone()),
            // `awards_by_wins` decides these awards; over one tool's own examinations a win
            // count has no meaning, and the mean is what the aggregate falls back to.
            AwardAggregate::Mean | AwardAggregate::Wins => {
                let n = count(self.completed.max(1) as usize);
                (&self.cpu_s / &n, &self.peak_memory_mb / &n)
            }
        }
    }
}

/// The two awards of a podium: their holders in podium order. [`awards`] and
/// [`awards_of_wins`] give every tool tied for an award; [`award_ties`] then keeps one or all,
/// as the edition says (none: nobody qualifies).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Awards {
    pub fastest: Vec<ToolIdx>,
    pub least_memory: Vec<ToolIdx>,
}

/// Rule E-4.5, equal merit (`[awards] ties`): "a fastest tool award is provided for the fastest
/// tool", and the text says nothing of two tools equally fast. `rank`: the award goes to the
/// better-ranked of the tied tools, and at equal rank to the first in podium order (by name):
/// one holder. `shared`: every tied tool holds it. `tied` lists the tied tools in podium order.
pub fn award_ties(tied: Awards, ties: AwardTies) -> Awards {
    match ties {
        AwardTies::Shared => tied,
        AwardTies::Rank => Awards {
            fastest: tied.fastest.into_iter().take(1).collect(),
            least_memory: tied.least_memory.into_iter().take(1).collect(),
        },
    }
}

/// Rule E-4.5: "a fastest tool award is provided for the fastest tool and the less memory award
/// is provided for the tool requiring the smallest amount of memory. Such awards are computed,
/// for each tool, based on the examinations for which all the values have been provided."
/// Among the tools ranked on the podium (competing, best of family) that completed at least one
/// examination, the lowest CPU time and the lowest peak memory, aggregated as the rules file
/// says: every tool tied at the lowest, in podium order ([`award_ties`] settles ties).
pub fn awards(standings: &[Standing], performance: &[Performance], how: AwardAggregate) -> Awards {
    let mut cpu: Vec<(ToolIdx, Exact)> = Vec::new();
    let mut mem: Vec<(ToolIdx, Exact)> = Vec::new();
    for s in standings.iter().filter(|s| s.rank.is_some()) {
        let Some(p) = performance.get(s.tool as usize).filter(|p| p.completed > 0) else {
            continue;
        };
        let (c, m) = p.aggregate(how);
        cpu.push((s.tool, c));
        mem.push((s.tool, m));
    }
    Awards {
        fastest: lowest(&cpu),
        least_memory: lowest(&mem),
    }
}

/// The tools with the lowest measure, in the order given.
fn lowest(measures: &[(ToolIdx, Exact)]) -> Vec<ToolIdx> {
    let Some(best) = measures.iter().map(|(_, m)| m).min() else {
        return Vec::new();
    };
    measures
        .iter()
        .filter(|(_, m)| m == best)
        .map(|(t, _)| *t)
        .collect()
}

/// One tool's measurement on one examination instance it completed (E-4.3: all its values
/// provided and right).
#[derive(Clone, Debug, PartialEq)]
pub struct Completed {
    pub tool: ToolIdx,
    pub cpu_s: f64,
    pub peak_memory_mb: f64,
}

/// Rule E-4.5 read as per-examination wins (`[awards] aggregate = "wins"`): "a fastest tool
/// award is provided for the fastest tool and the less memory award is provided for the tool
/// requiring the smallest amount of memory. Such awards are computed, for each tool, based on the
/// examinations for which all the values have been provided." In each examination instance
/// (`completed`: one list per examination instance of the category), among the tools ranked on
/// the podium that completed it, the lowest CPU time wins it (and the lowest peak memory wins it
/// for memory); k tools tied share it, 1/k each, exactly. The award goes to the tool with the
/// most wins; equal wins are settled by [`award_ties`]. A tool that completes one more
/// examination can only gain wins, so solving less is never rewarded (as a mean over each
/// tool's own examinations may).
pub fn awards_by_wins(
    standings: &[Standing],
    completed: impl IntoIterator<Item = impl AsRef<[Completed]>>,
) -> Awards {
    let ranked = ranked_tools(standings);
    awards_of_wins(&ranked, [&count_wins(&ranked, completed)])
}

/// The tools ranked on a podium, in podium order: those E-4.5's wins are counted among.
pub fn ranked_tools(standings: &[Standing]) -> Vec<ToolIdx> {
    standings
        .iter()
        .filter(|s| s.rank.is_some())
        .map(|s| s.tool)
        .collect()
}

/// E-4.5's wins (see [`awards_by_wins`]) counted over some examination instances, among the tools
/// `ranked`: per ranked tool (its position there), how many of them it won shared by k tools.
/// Counted per part of a category (a model examination) and added by [`awards_of_wins`]: the
/// same awards as counting over the whole category at once (counts add up).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Wins {
    /// `(position in ranked, k, count)`, sorted, each count > 0: CPU time.
    pub time: Vec<(u32, u32, u64)>,
    /// The same for peak memory.
    pub memory: Vec<(u32, u32, u64)>,
}

/// The wins of each tool of `ranked` over the examination instances `completed` (one list per
/// examination instance: the runs that completed it).
pub fn count_wins(
    ranked: &[ToolIdx],
    completed: impl IntoIterator<Item = impl AsRef<[Completed]>>,
) -> Wins {
    // Per ranked tool, how many examination instances it won shared by k tools (index k): the
    // wins are summed as fractions once at the end, exactly (sum of count / k), instead of
    // adding 1/k fractions per examination instance.
    let mut time_wins: Vec<Vec<u64>> = vec![vec![0; ranked.len() + 1]; ranked.len()];
    let mut memory_wins: Vec<Vec<u64>> = vec![vec![0; ranked.len() + 1]; ranked.len()];
    // Each tool's position in `ranked`, by tool index.
    let mut at_rank: Vec<Option<usize>> = Vec::new();
    for (at, tool) in ranked.iter().enumerate() {
        let t = *tool as usize;
        if at_rank.len() <= t {
            at_rank.resize(t + 1, None);
        }
        at_rank[t] = Some(at);
    }
    let mut times = Vec::new();
    let mut memories = Vec::new();
    for runs in completed {
        // The ranked tools that completed it: (position in `ranked`, measure). Measures are
        // compared as the floats they are: two finite floats compare as their exact values.
        times.clear();
        memories.clear();
        for c in runs.as_ref() {
            if let Some(&Some(at)) = at_rank.get(c.tool as usize) {
                times.push((at, c.cpu_s));
                memories.push((at, c.peak_memory_mb));
            }
        }
        share_win(&times, &mut time_wins);
        share_win(&memories, &mut memory_wins);
    }
    let sparse = |wins: Vec<Vec<u64>>| -> Vec<(u32, u32, u64)> {
        wins.into_iter()
            .enumerate()
            .flat_map(|(at, by_k)| {
                by_k.into_iter()
                    .enumerate()
                    .filter(|(_, n)| *n > 0)
                    .map(move |(k, n)| (at as u32, k as u32, n))
            })
            .collect()
    };
    Wins {
        time: sparse(time_wins),
        memory: sparse(memory_wins),
    }
}

/// Rule E-4.5 read as per-examination wins: the awards of the wins counted by [`count_wins`] (with
/// the same `ranked`) over the parts of a category.
pub fn awards_of_wins<'a>(ranked: &[ToolIdx], parts: impl IntoIterator<Item = &'a Wins>) -> Awards {
    let mut time_wins: Vec<Vec<u64>> = vec![vec![0; ranked.len() + 1]; ranked.len()];
    let mut memory_wins: Vec<Vec<u64>> = vec![vec![0; ranked.len() + 1]; ranked.len()];
    for part in parts {
        for (all, wins) in [
            (&mut time_wins, &part.time),
            (&mut memory_wins, &part.memory),
        ] {
            for &(at, k, n) in wins {
                all[at as usize][k as usize] += n;
            }
        }
    }
    let exact = |wins: Vec<Vec<u64>>| -> Vec<Exact> {
        wins.into_iter()
            .map(|by_k| {
                by_k.iter()
                    .enumerate()
                    .filter(|(_, n)| **n > 0)
                    .fold(zero(), |sum, (k, n)| {
                        sum + Exact::new((*n).into(), k.into())
                    })
            })
            .collect()
    };
    Awards {
        fastest: most_wins(ranked, &exact(time_wins)),
        least_memory: most_wins(ranked, &exact(memory_wins)),
    }
}

/// One examination instance's win, shared equally among the entries with the lowest measure
/// (`wins[tool][k]` counts the wins shared by k tools). A measure that is not a finite number
/// (records never hold one: JSON has none) wins nothing.
fn share_win(entries: &[(usize, f64)], wins: &mut [Vec<u64>]) {
    let Some(best) = entries
        .iter()
        .map(|(_, m)| *m)
        .filter(|m| m.is_finite())
        .min_by(f64::total_cmp)
    else {
        return;
    };
    let k = entries.iter().filter(|(_, m)| *m == best).count();
    for (at, m) in entries {
        if *m == best {
            wins[*at][k] += 1;
        }
    }
}

/// The tools with the most wins, in podium order (none without a win).
fn most_wins(ranked: &[ToolIdx], wins: &[Exact]) -> Vec<ToolIdx> {
    let Some(best) = wins.iter().filter(|w| **w > zero()).max() else {
        return Vec::new();
    };
    ranked
        .iter()
        .zip(wins)
        .filter(|(_, w)| *w == best)
        .map(|(t, _)| *t)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exact::{int, ratio};

    fn ints(xs: &[i64]) -> Vec<Exact> {
        xs.iter().map(|x| int(*x)).collect()
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
    fn category_totals_add_weighted_points_in_order() {
        // Two entries: 12 points x (1/2 x 2) = 12, and -4 x (1 x 1) = -4: total 8.
        let w = |instance, kind| Weight {
            instance,
            kind,
            category: 0,
        };
        let entries = [
            (int(12), w(ratio(1, 2), int(2))),
            (int(-4), w(int(1), int(1))),
        ];
        let total = category_total(entries.iter().map(|(p, w)| weighted_points(p, w)));
        assert_eq!(total, int(8));
        assert_eq!(category_total(std::iter::empty::<Exact>()), int(0));
        // Floats got this wrong: 6 x 16 x 1/3 = 32 = 16 + 16, exactly (floats give
        // 31.999999999999996 for the first).
        let thirds =
            category_total((0..6).map(|_| weighted_points(&int(16), &w(ratio(1, 3), int(1)))));
        assert_eq!(thirds, category_total([int(16), int(16)]));
        // Weighting a sum of points is summing the weighted points: 16/3 + 8 at 2/5 x 3/7.
        let weight = w(ratio(2, 5), ratio(3, 7));
        let mut points = Sum::default();
        points.add(&ratio(16, 3));
        points.add(&int(8));
        let factor = Sum::from(weight.factor());
        assert_eq!(
            category_total([weighted_sum(&points, &factor)]),
            category_total([
                weighted_points(&ratio(16, 3), &weight),
                weighted_points(&int(8), &weight)
            ])
        );
        // (16/3 + 8) x 6/35 = 40/3 x 6/35 = 16/7.
        assert_eq!(weighted_sum(&points, &factor).value(), ratio(16, 7));
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
        let scores = ints(&[10, 10, 3]);
        let cpu = ints(&[50, 20, 1]);
        let ranks: Vec<(u32, Option<u32>)> =
            podium(&e, &scores, Some(&cpu), false, SharedRanks::Skip)
                .iter()
                .map(|s| (s.tool, s.rank))
                .collect();
        assert_eq!(ranks, vec![(1, Some(1)), (0, Some(2)), (2, Some(3))]);
        let shared: Vec<(u32, Option<u32>)> = podium(&e, &scores, None, false, SharedRanks::Skip)
            .iter()
            .map(|s| (s.tool, s.rank))
            .collect();
        assert_eq!(shared, vec![(0, Some(1)), (1, Some(1)), (2, Some(3))]);
    }

    /// E-4.6 says nothing of equal totals: they share a rank in both readings of
    /// `[ranking] shared_ranks`; the next tool is third with `skip` (1, 1, 3: two golds, no
    /// silver, a bronze) and second with `dense` (1, 1, 2, 3: two golds, a silver, a bronze).
    #[test]
    fn equal_totals_share_a_rank_and_the_next_rank_is_skipped_or_not_as_the_edition_says() {
        let e: Vec<Entrant> = ["a", "b", "c", "d"]
            .iter()
            .enumerate()
            .map(|(i, name)| Entrant {
                tool: i as u32,
                name,
                family: name,
                competing: true,
            })
            .collect();
        let scores = ints(&[10, 10, 7, 5]);
        let ranks = |shared| -> Vec<(u32, Option<u32>, Option<u8>)> {
            podium(&e, &scores, None, false, shared)
                .iter()
                .map(|s| (s.tool, s.rank, s.medal))
                .collect()
        };
        assert_eq!(
            ranks(SharedRanks::Skip),
            [
                (0, Some(1), Some(1)),
                (1, Some(1), Some(1)),
                (2, Some(3), Some(3)),
                (3, Some(4), None)
            ]
        );
        assert_eq!(
            ranks(SharedRanks::Dense),
            [
                (0, Some(1), Some(1)),
                (1, Some(1), Some(1)),
                (2, Some(2), Some(2)),
                (3, Some(3), Some(3))
            ]
        );
    }

    /// E-4.6 sets no minimum score for a medal: ranks 1 to 3 get gold, silver and bronze even
    /// at 0 or below (the MCC editions); `medal_needs_positive_score` (SV-COMP 2012's file)
    /// keeps medals for scores above 0.
    #[test]
    fn medals_go_to_the_three_best_ranks_whatever_the_score_unless_the_edition_says() {
        // lola -5, tapaal-seq 0 (its family's only ranked variant: tapaal-par is at -10),
        // smpt 3, zero -1; gold2025 is a reference tool, unranked.
        let scores = ints(&[-5, 0, -10, 100, 3, -1]);
        let medals = |positive: bool| -> Vec<(u32, Option<u32>, Option<u8>)> {
            podium(&entrants(), &scores, None, positive, SharedRanks::Skip)
                .iter()
                .filter(|s| s.rank.is_some())
                .map(|s| (s.tool, s.rank, s.medal))
                .collect()
        };
        // smpt 3 > tapaal-seq 0 > zero -1 > lola -5.
        assert_eq!(
            medals(false),
            vec![
                (4, Some(1), Some(1)),
                (1, Some(2), Some(2)),
                (5, Some(3), Some(3)),
                (0, Some(4), None)
            ]
        );
        assert_eq!(
            medals(true),
            vec![
                (4, Some(1), Some(1)),
                (1, Some(2), None),
                (5, Some(3), None),
                (0, Some(4), None)
            ]
        );
    }

    #[test]
    fn podium_best_variant_and_reference_tools() {
        // Scores: gold2025 (reference) 500, tapaal-par 400, tapaal-seq 350, lola 300, smpt 300,
        // zero 0. Ranked: tapaal-par 1 (gold), lola 2 and smpt 2 (tie: both silver, sorted by
        // name), zero 4 (no medal: rank 4 and no points). tapaal-seq is the family's second
        // variant: shown, unranked. gold2025 is a reference tool: shown first, unranked.
        let scores = ints(&[300, 350, 400, 500, 300, 0]);
        let p = podium(&entrants(), &scores, None, true, SharedRanks::Skip);
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

    fn run(tool: ToolIdx, cpu_s: f64, peak_memory_mb: f64) -> Completed {
        Completed {
            tool,
            cpu_s,
            peak_memory_mb,
        }
    }

    /// The case of the 2024 replay's easy and hard examinations: lola (0) completes one easy examination in 0.44 s; smpt (4) completes
    /// it in 0.11 s and two hard ones. The mean over each tool's own completions: lola 0.44 s,
    /// smpt (0.11 + 900 + 700) / 3 = 533.37 s -> lola, which solved less. Wins: the easy one
    /// smpt (0.11 < 0.44), the hard ones smpt alone -> smpt 3, lola 0 -> smpt.
    #[test]
    fn awards_by_wins_never_reward_solving_less() {
        let scores = ints(&[300, 350, 400, 500, 300, 0]);
        let standings = podium(&entrants(), &scores, None, true, SharedRanks::Skip);
        let exams = vec![
            vec![run(0, 0.44, 10.0), run(4, 0.11, 20.0)],
            vec![run(4, 900.0, 4000.0)],
            vec![run(4, 700.0, 3000.0)],
        ];
        let a = awards_by_wins(&standings, &exams);
        assert_eq!(a.fastest, vec![4]);
        // Memory: easy lola 10 < smpt 20 -> lola 1; hard ones smpt 2 -> smpt.
        assert_eq!(a.least_memory, vec![4]);
        let mut perf = vec![Performance::default(); 6];
        perf[0].add(0.44, 10.0);
        for (cpu, mem) in [(0.11, 20.0), (900.0, 4000.0), (700.0, 3000.0)] {
            perf[4].add(cpu, mem);
        }
        assert_eq!(
            awards(&standings, &perf, AwardAggregate::Mean),
            Awards {
                fastest: vec![0],
                least_memory: vec![0]
            }
        );
    }

    /// An exact tie shares an examination's win (1/2 each); equal win totals go to the
    /// better-ranked tool; unranked tools (reference tool 3, variant 1) neither win nor block
    /// a win; an examination no ranked tool completed gives no win.
    #[test]
    fn awards_by_wins_ties_and_unranked_tools() {
        let scores = ints(&[300, 350, 400, 500, 300, 0]);
        // Ranks: tapaal-par (2) 1st, lola (0) and smpt (4) 2nd (tied).
        let standings = podium(&entrants(), &scores, None, true, SharedRanks::Skip);
        let exams = vec![
            // lola and smpt tie at 1 s: 1/2 each; the reference tool, faster, is not ranked.
            vec![run(0, 1.0, 5.0), run(4, 1.0, 5.0), run(3, 0.1, 0.1)],
            // tapaal-seq (a variant, unranked) only: nobody wins.
            vec![run(1, 0.1, 0.1)],
            // smpt alone: 1 -> smpt 3/2, lola 1/2.
            vec![run(4, 9.0, 9.0)],
        ];
        let a = awards_by_wins(&standings, &exams);
        assert_eq!(a.fastest, vec![4]);
        assert_eq!(a.least_memory, vec![4]);
        // Without the third examination lola and smpt have 1/2 each: both are tied, in podium
        // order (rank 2 both, equal scores: by name).
        let a = awards_by_wins(&standings, &exams[..2]);
        assert_eq!(a.fastest, vec![0, 4]);
        // `ties = "rank"`: lola, the first in podium order; `shared`: both.
        assert_eq!(award_ties(a.clone(), AwardTies::Rank).fastest, vec![0]);
        assert_eq!(award_ties(a, AwardTies::Shared).fastest, vec![0, 4]);
        assert_eq!(awards_by_wins(&standings, &exams[1..2]), Awards::default());
    }

    /// Wins counted per part (a model examination each) and added give the counts, hence the
    /// awards, of the whole: every split of these examinations, every prefix of them.
    #[test]
    fn wins_counted_in_parts_add_up_to_the_wins_of_the_whole() {
        let scores = ints(&[300, 350, 400, 500, 300, 0]);
        let standings = podium(&entrants(), &scores, None, true, SharedRanks::Skip);
        let ranked = ranked_tools(&standings);
        let exams = [
            vec![run(0, 1.0, 5.0), run(4, 1.0, 5.0), run(3, 0.1, 0.1)],
            vec![run(1, 0.1, 0.1)],
            vec![run(4, 9.0, 9.0)],
            vec![run(0, 2.0, 1.0), run(2, 3.0, 1.0), run(4, 2.0, 7.0)],
            vec![run(2, 0.5, 2.0), run(0, 0.5, 2.0), run(4, 0.5, 2.0)],
            vec![],
        ];
        for len in 0..=exams.len() {
            let whole = count_wins(&ranked, &exams[..len]);
            for split in 0..=len {
                let parts = [
                    count_wins(&ranked, &exams[..split]),
                    count_wins(&ranked, &exams[split..len]),
                ];
                assert_eq!(
                    awards_of_wins(&ranked, &parts),
                    awards_of_wins(&ranked, [&whole])
                );
                assert_eq!(
                    awards_of_wins(&ranked, &parts),
                    awards_by_wins(&standings, &exams[..len])
                );
                // The counts themselves add up.
                let mut added: std::collections::BTreeMap<(u32, u32), u64> = Default::default();
                for (at, k, n) in parts.iter().flat_map(|p| &p.time) {
                    *added.entry((*at, *k)).or_default() += n;
                }
                let whole_time: std::collections::BTreeMap<(u32, u32), u64> = whole
                    .time
                    .iter()
                    .map(|(at, k, n)| ((*at, *k), *n))
                    .collect();
                assert_eq!(added, whole_time);
            }
        }
    }

    #[test]
    fn awards_among_ranked_tools_on_completed_examinations() {
        let scores = ints(&[300, 350, 400, 500, 300, 0]);
        let standings = podium(&entrants(), &scores, None, true, SharedRanks::Skip);
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
                fastest: vec![2],
                least_memory: vec![2]
            }
        );
        // Summed, lola totals 40 s and 400 MB: tapaal-par still wins both.
        let a = awards(&standings, &perf, AwardAggregate::Sum);
        assert_eq!(
            a,
            Awards {
                fastest: vec![2],
                least_memory: vec![2]
            }
        );
        perf[4].add(5.0, 500.0); // smpt: fastest, not least memory
        let a = awards(&standings, &perf, AwardAggregate::Mean);
        assert_eq!(
            a,
            Awards {
                fastest: vec![4],
                least_memory: vec![2]
            }
        );
    }
}
