//! Queries of the whole contest, E-4.4: what the contest-wide queries read of the edition, each
//! examination instance's weight factors, and the model examinations grouped by weight.

use mccbuild_rules::edition::{AwardRules, CategoryId, ModelKind, RankingRules};
use mccbuild_rules::exact::{Exact, Sum};
use mccbuild_rules::weights::{
    Weight, attainable_points, instance_weight, kind_multipliers, weight_scale,
};

use super::ContestData;

/// What the contest-wide queries read of the edition besides `[scoring]`: the categories, the model
/// kinds (E-4.4), the ranking and awards (E-4.5). A firewall: an edit of another rule (a threshold)
/// leaves it equal, and [`weights`], [`category_scores`](super::category_scores) and
/// [`podiums`](super::podiums) are not recomputed for that.
#[derive(Clone, Debug, PartialEq)]
pub struct EditionShape {
    pub categories: usize,
    /// The category of each examination.
    pub exam_category: Vec<CategoryId>,
    pub model_kinds: Vec<ModelKind>,
    pub default_model_kind: usize,
    pub ranking: RankingRules,
    pub awards: AwardRules,
}

#[salsa::tracked(returns(ref))]
pub fn edition_shape(db: &dyn salsa::Database, contest: ContestData) -> EditionShape {
    let edition = contest.edition(db);
    EditionShape {
        categories: edition.categories.len(),
        exam_category: edition.examinations.iter().map(|x| x.category).collect(),
        model_kinds: edition.model_kinds.clone(),
        default_model_kind: edition.default_model_kind,
        ranking: edition.ranking.clone(),
        awards: edition.awards.clone(),
    }
}

/// Rule E-4.4's factors of each examination instance of each model examination
/// (`[model examination][examination instance]`): the instance's weight within its model and
/// its model kind's multiplier in the examination's category.
#[salsa::tracked(returns(ref))]
pub fn weights(db: &dyn salsa::Database, contest: ContestData) -> Vec<Vec<Weight>> {
    let edition = edition_shape(db, contest);
    let scoring = contest.scoring_rules(db);
    let models = contest.models(db);
    let examinations = contest.examinations(db);
    let largest = models.iter().map(|m| m.instances).max().unwrap_or(1);
    let known = models
        .iter()
        .filter(|m| m.kind == edition.default_model_kind);
    let scale = weight_scale(
        scoring,
        known.clone().count(),
        known.map(|m| m.instances).sum(),
    );
    let model_weights: Vec<Exact> = models
        .iter()
        .map(|m| instance_weight(scoring, m.instances, largest) * &scale)
        .collect();
    let weight_of = |model: u32| model_weights[model as usize].clone();
    // The category, model kind and instance weight of every examination instance, in order.
    let shape = || {
        examinations.iter().flat_map(|m| {
            let model = m.model(db);
            m.exam_instances(db).iter().map(move |ei| {
                let category = edition.exam_category[ei.exam as usize];
                (category, models[model as usize].kind, weight_of(model))
            })
        })
    };
    let attainable = attainable_points(
        scoring,
        edition.categories,
        edition.model_kinds.len(),
        shape(),
    );
    let multipliers: Vec<Vec<Exact>> = attainable
        .iter()
        .map(|a| kind_multipliers(&edition.model_kinds, a))
        .collect();
    examinations
        .iter()
        .map(|m| {
            let model = m.model(db);
            let kind = models[model as usize].kind;
            m.exam_instances(db)
                .iter()
                .map(|ei| {
                    let category = edition.exam_category[ei.exam as usize];
                    Weight {
                        instance: weight_of(model),
                        kind: multipliers[category][kind].clone(),
                        category,
                    }
                })
                .collect()
        })
        .collect()
}

/// E-4.4's weights grouped: the model examinations whose examination instances share a
/// category and both weight factors (many models share them: same number of instances, same
/// kind). It depends on the contest's shape only, so it is computed once: a re-score sums each
/// group's points by index instead of hashing fractions again (hashing a big fraction expands it
/// into a continued fraction: it dominated the re-score after one run).
#[derive(Clone, Debug, PartialEq)]
pub struct WeightGroups {
    /// Per model examination, its group (None: it has no examination instance).
    pub of: Vec<Option<usize>>,
    /// Each group's weight (its category included).
    pub weights: Vec<Weight>,
    /// Each group's E-4.4 factor (`Weight::factor`), in machine words if it fits.
    pub factors: Vec<Sum>,
    /// Each group's model examinations (indices into the contest's), in order.
    pub members: Vec<Vec<usize>>,
}

#[salsa::tracked(returns(ref))]
pub fn weight_groups(db: &dyn salsa::Database, contest: ContestData) -> WeightGroups {
    let mut index: std::collections::HashMap<(CategoryId, &Exact, &Exact), usize> =
        std::collections::HashMap::new();
    let mut groups = WeightGroups {
        of: Vec::new(),
        weights: Vec::new(),
        factors: Vec::new(),
        members: Vec::new(),
    };
    for w in weights(db, contest) {
        let group = w.first().map(|weight| {
            *index
                .entry((weight.category, &weight.instance, &weight.kind))
                .or_insert_with(|| {
                    groups.weights.push(weight.clone());
                    groups.factors.push(Sum::from(weight.factor()));
                    groups.members.push(Vec::new());
                    groups.weights.len() - 1
                })
        });
        if let Some(g) = group {
            groups.members[g].push(groups.of.len());
        }
        groups.of.push(group);
    }
    groups
}
