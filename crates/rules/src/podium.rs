//! Rules E-4.5 and E-4.6: category totals, podiums (ranks, best variant, reference tools,
//! tie-breaks, medals) and the fastest-tool and least-memory awards.

use serde::Serialize;

use crate::confidence::ToolIdx;
use crate::edition::AwardAggregate;
use crate::exact::{count, from_f64_exact, serde_exact, zero, Exact};
use crate::weights::Weight;

/// Rule E-4.6: what one examination of one instance adds to a tool's total in its category:
/// its points (E-4.2) weighted as E-4.4 says.
pub fn weighted_points(points: &Exact, weight: &Weight) -> Exact {
    points * weight.factor()
}

/// Rule E-4.6: "For each category, and for each tool, a total score is computed as the sum of
/// all the examination scores of the tool in the examinations enclosed in this category": the
/// weighted points, summed exactly (so that every total of a tool, on a podium or in an
/// explanation, is the same number, whatever the order, and equal totals are equal).
pub fn category_total(weighted: impl IntoIterator<Item = Exact>) -> Exact {
    weighted
        .into_iter()
        .fold(zero(), |total, points| total + points)
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
/// to the first three ranks, to tools with a positive score (a tool that earned nothing is not
/// a medallist). Ties share a rank and its medal, unless `tie_break` (lower is better: SV-COMP's
/// success CPU time) orders them. Scores and tie-breaks are exact: equal means equal.
pub fn podium(
    entrants: &[Entrant<'_>],
    scores: &[Exact],
    tie_break: Option<&[Exact]>,
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
                    last = Some((key, ranked));
                    ranked
                }
            }
        });
        let medal = rank.filter(|&r| r <= 3 && *s > nothing).map(|r| r as u8);
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
            AwardAggregate::Mean => {
                let n = count(self.completed.max(1) as usize);
                (&self.cpu_s / &n, &self.peak_memory_mb / &n)
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
    let mut fastest: Option<(ToolIdx, Exact)> = None;
    let mut least: Option<(ToolIdx, Exact)> = None;
    for s in standings.iter().filter(|s| s.rank.is_some()) {
        let Some(p) = performance.get(s.tool as usize).filter(|p| p.completed > 0) else {
            continue;
        };
        let (cpu, mem) = p.aggregate(how);
        if fastest.as_ref().is_none_or(|(_, best)| cpu < *best) {
            fastest = Some((s.tool, cpu));
        }
        if least.as_ref().is_none_or(|(_, best)| mem < *best) {
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
        assert_eq!(category_total(std::iter::empty()), int(0));
        // The case: 6 x 16 x 1/3 = 32 = 16 + 16, exactly (floats give
        // 31.999999999999996 for the first).
        let thirds =
            category_total((0..6).map(|_| weighted_points(&int(16), &w(ratio(1, 3), int(1)))));
        assert_eq!(thirds, category_total([int(16), int(16)]));
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

    #[test]
    fn podium_best_variant_and_reference_tools() {
        // Scores: gold2025 (reference) 500, tapaal-par 400, tapaal-seq 350, lola 300, smpt 300,
        // zero 0. Ranked: tapaal-par 1 (gold), lola 2 and smpt 2 (tie: both silver, sorted by
        // name), zero 4 (no medal: rank 4 and no points). tapaal-seq is the family's second
        // variant: shown, unranked. gold2025 is a reference tool: shown first, unranked.
        let scores = ints(&[300, 350, 400, 500, 300, 0]);
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
        let scores = ints(&[300, 350, 400, 500, 300, 0]);
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
