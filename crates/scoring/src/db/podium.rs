//! Queries of the whole contest, E-4.5 and E-4.6: each category's podium and awards, and the
//! wins the awards count per weight group.

use mccbuild_rules::confidence::ToolIdx;
use mccbuild_rules::edition::{AwardAggregate, CategoryId, TieBreak};
use mccbuild_rules::exact::Exact;
use mccbuild_rules::podium::{self, Awards, Entrant, Standing, Wins};

use super::{ContestData, category_totals, edition_shape, exam_scores, weight_groups};

/// The tools ranked on one category's podium (E-4.5's wins are counted among them).
#[salsa::interned(debug)]
pub struct Ranked<'db> {
    contest: ContestData,
    #[returns(ref)]
    tools: Vec<ToolIdx>,
}

/// E-4.5's wins among the `ranked` tools over the examination instances of one weight group's
/// model examinations (all of one category; from E-4.3's measurements of the runs that completed
/// each). A query of its own: a new record counts its group's wins again, and the podiums add the
/// other groups' as they were (the wins were counted over every examination instance of the
/// category on every re-score: 15-17 % of it, docs/BENCHMARKS.md). Per group rather than per
/// model examination: ~1,300 more memos to verify after each record cost more than counting one
/// group's.
#[salsa::tracked(returns(ref))]
pub fn group_wins<'db>(
    db: &'db dyn salsa::Database,
    contest: ContestData,
    group: u32,
    ranked: Ranked<'db>,
) -> Wins {
    let examinations = contest.examinations(db);
    let completed = weight_groups(db, contest).members[group as usize]
        .iter()
        .flat_map(|&i| exam_scores(db, examinations[i]).completed.iter());
    podium::count_wins(ranked.tools(db), completed)
}

/// One category's podium and awards.
#[derive(Clone, Debug, PartialEq)]
pub struct Podium {
    pub category: CategoryId,
    pub standings: Vec<Standing>,
    pub awards: Awards,
}

/// Rules E-4.5 and E-4.6: in each category, the tools that took part in it.
#[salsa::tracked(returns(ref))]
pub fn podiums(db: &dyn salsa::Database, contest: ContestData) -> Vec<Podium> {
    (0..edition_shape(db, contest).categories)
        .map(|c| category_podium(db, contest, c as u32).clone())
        .collect()
}

/// Rules E-4.5 and E-4.6 in one category (a query per category: a record ranks the category of
/// its model examination again, the others' podiums are verified).
#[salsa::tracked(returns(ref))]
pub fn category_podium(db: &dyn salsa::Database, contest: ContestData, category: u32) -> Podium {
    let edition = edition_shape(db, contest);
    let tools = contest.tools(db);
    let totals = category_totals(db, contest, category);
    let category = category as usize;
    let entrants: Vec<Entrant<'_>> = tools
        .iter()
        .enumerate()
        .filter(|(i, _)| totals.participating[*i])
        .map(|(i, t)| Entrant {
            tool: i as ToolIdx,
            name: &t.name,
            family: &t.family,
            competing: t.competing,
        })
        .collect();
    let success_cpu: Vec<Exact> = totals.performance.iter().map(|p| p.cpu_s.clone()).collect();
    let tie_break =
        (edition.ranking.tie_break == TieBreak::SuccessCpuTime).then_some(&success_cpu[..]);
    let standings = podium::podium(
        &entrants,
        &totals.scores,
        tie_break,
        edition.ranking.medal_needs_positive_score,
        edition.ranking.shared_ranks,
    );
    let awards = if !edition.awards.enabled {
        Awards::default()
    } else if edition.awards.aggregate == AwardAggregate::Wins {
        let ranked = podium::ranked_tools(&standings);
        let key = Ranked::new(db, contest, ranked.clone());
        let groups = weight_groups(db, contest);
        let wins: Vec<&Wins> = (0..groups.weights.len())
            .filter(|&g| groups.weights[g].category == category)
            .map(|g| group_wins(db, contest, g as u32, key))
            .collect();
        podium::award_ties(podium::awards_of_wins(&ranked, wins), edition.awards.ties)
    } else {
        podium::award_ties(
            podium::awards(&standings, &totals.performance, edition.awards.aggregate),
            edition.awards.ties,
        )
    };
    Podium {
        category,
        standings,
        awards,
    }
}
