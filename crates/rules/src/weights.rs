//! Rule E-4.4: how much each instance weighs (normalisation by model size, model kinds).

use crate::edition::{
    CategoryId, Edition, KindWeight, ModelGrouping, ModelKind, ModelWeight, ScoringRules,
    WeightScale,
};
use crate::exact::{Exact, count, one, zero};

/// Rule E-4.4's factors of one examination of one instance (exact fractions).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Weight {
    /// Normalisation: the instance's share of its model's weight.
    pub instance: Exact,
    /// The multiplier of its model's kind in its category.
    pub kind: Exact,
    pub category: CategoryId,
}

impl Weight {
    /// What the instance's points are multiplied by.
    pub fn factor(&self) -> Exact {
        &self.instance * &self.kind
    }
}

/// Rule E-4.4, model kinds: "“known” models are the models gathered from the community since
/// the beginning of the contest [...] “surprise” models are models gathered for 2026 from the
/// community." A model's kind: the one the manifest gives; otherwise the edition's kind for new
/// models (`new_models = true`) when one of its instances carries the `NewModel` marker;
/// otherwise the edition's first kind.
pub fn model_kind(edition: &Edition, given: Option<usize>, marked_new: bool) -> usize {
    match (given, edition.new_model_kind) {
        (Some(kind), _) => kind,
        (None, Some(new)) if marked_new => new,
        (None, _) => edition.default_model_kind,
    }
}

/// Rule E-4.4: the points each model kind could attain in each category (`[category][kind]`),
/// what a share-of multiplier balances: every examination of every instance at its full points
/// (`points_per_examination`, E-4.1), normalised by the instance's weight. `exam_instances`
/// gives each examination instance's category, model kind and instance weight; the sums are
/// made in that order.
pub fn attainable_points(
    rules: &ScoringRules,
    categories: usize,
    kinds: usize,
    exam_instances: impl IntoIterator<Item = (CategoryId, usize, Exact)>,
) -> Vec<Vec<Exact>> {
    let mut attainable = vec![vec![zero(); kinds]; categories];
    for (category, kind, instance_weight) in exam_instances {
        attainable[category][kind] += &rules.points_per_examination * instance_weight;
    }
    attainable
}

/// Rule E-4.4, normalisation: the weight of each instance of a model with `instances` instances,
/// when the model with the most instances has `largest`. With `model_weight = "linear"` a model
/// of n instances weighs `1 + (ratio - 1)(n - 1)/(N - 1)` one-instance models in total (so the
/// largest weighs exactly `max_model_ratio` = 2 times a single-instance model, as E-4.4 bounds
/// it), shared equally by its instances.
pub fn instance_weight(rules: &ScoringRules, instances: usize, largest: usize) -> Exact {
    match rules.model_weight {
        ModelWeight::None => one(),
        ModelWeight::Linear => {
            if instances == 0 {
                return zero();
            }
            let model = if largest <= 1 {
                one()
            } else {
                one() + (&rules.max_model_ratio - one()) * count(instances - 1) / count(largest - 1)
            };
            model / count(instances)
        }
    }
}

/// Rule E-4.4, the global scale of instance weights (`weight_scale`): what every instance weight
/// is multiplied by. It changes no rank (every score is multiplied by it), only the figures: the
/// published MCC 2024 scores are matched when a one-instance known model's instance weighs
/// n_known / (2 m_known) (1678 / (2 x 132) = 839/132 for 2024), `known_instances` instances in
/// `known_models` known models.
pub fn weight_scale(rules: &ScoringRules, known_models: usize, known_instances: usize) -> Exact {
    match &rules.weight_scale {
        WeightScale::One => one(),
        WeightScale::HalfMeanKnown if known_models == 0 => one(),
        WeightScale::HalfMeanKnown => count(known_instances) / count(2 * known_models),
        WeightScale::Fixed(x) => x.clone(),
    }
}

/// Rule E-4.4, model kinds: the multiplier of each kind in one category, given the points each
/// kind could attain there (`attainable[k]`: the sum of the normalised maximum points of its
/// instances). A fixed multiplier is used as is (2023: surprise x10; 2015: x1, x2, x3). A share
/// (2026: "the total score for all instances of such models weight half the score for all the
/// instances of known models") gives the multiplier m with
/// `m * attainable[kind] = share * multiplier(of) * attainable[of]`; when either side is empty the
/// multiplier is 1 (there is nothing to balance).
pub fn kind_multipliers(kinds: &[ModelKind], attainable: &[Exact]) -> Vec<Exact> {
    let fixed = |k: usize| match &kinds[k].weight {
        KindWeight::Multiplier(m) => m.clone(),
        KindWeight::ShareOf { .. } => one(),
    };
    (0..kinds.len())
        .map(|k| match &kinds[k].weight {
            KindWeight::Multiplier(m) => m.clone(),
            KindWeight::ShareOf { of, share } => {
                let own = attainable.get(k).cloned().unwrap_or_else(zero);
                let other = attainable.get(*of).cloned().unwrap_or_else(zero) * fixed(*of);
                if own > zero() && other > zero() {
                    share * other / own
                } else {
                    one()
                }
            }
        })
        .collect()
}

/// Rule E-4.4: the model an MCC instance `<Model>-<COL|PT>-<parameters>` belongs to for the
/// weights ("the model with the largest number of instances cannot weight more than x2 a model
/// providing only one instance"): `<Model>` when the edition pools a model's COL and PT
/// instances (`model_grouping = "family"`), `<Model>-COL` or `<Model>-PT` when it keeps them
/// apart (`"family-type"`). None for a name that does not follow the MCC naming.
pub fn model_of(instance: &str, grouping: ModelGrouping) -> Option<&str> {
    let (at, sep) = ["-PT-", "-COL-"]
        .iter()
        .filter_map(|sep| instance.find(sep).map(|i| (i, sep)))
        .min()?;
    if at == 0 {
        return None;
    }
    Some(match grouping {
        ModelGrouping::Family => &instance[..at],
        ModelGrouping::FamilyType => &instance[..at + sep.len() - 1],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exact::{int, ratio};

    fn rules() -> ScoringRules {
        ScoringRules::mcc_2026()
    }

    #[test]
    fn instance_weights_golden() {
        // Largest model: 11 instances. A one-instance model weighs 1; the 11-instance model
        // weighs 2 in total (2/11 per instance); a 6-instance model 1 + 5/10 = 3/2 (1/4 each);
        // a 3-instance model 1 + 2/10 = 6/5 (2/5 each).
        assert_eq!(instance_weight(&rules(), 1, 11), int(1));
        assert_eq!(instance_weight(&rules(), 11, 11), ratio(2, 11));
        assert_eq!(instance_weight(&rules(), 6, 11), ratio(1, 4));
        assert_eq!(instance_weight(&rules(), 3, 11), ratio(2, 5));
        // All models have one instance: every instance weighs 1.
        assert_eq!(instance_weight(&rules(), 1, 1), int(1));
        let none = ScoringRules {
            model_weight: ModelWeight::None,
            ..rules()
        };
        assert_eq!(instance_weight(&none, 6, 11), int(1));
    }

    #[test]
    fn weight_scale_golden() {
        // MCC 2024: 1678 instances of 132 known models: 1678 / 264 = 839/132.
        let half = ScoringRules {
            weight_scale: WeightScale::HalfMeanKnown,
            ..rules()
        };
        assert_eq!(weight_scale(&half, 132, 1678), ratio(839, 132));
        assert_eq!(weight_scale(&half, 0, 0), int(1));
        assert_eq!(weight_scale(&rules(), 132, 1678), int(1));
        let fixed = ScoringRules {
            weight_scale: WeightScale::Fixed(ratio(839, 132)),
            ..rules()
        };
        assert_eq!(weight_scale(&fixed, 1, 1), ratio(839, 132));
    }

    #[test]
    fn attainable_points_add_each_instances_full_points_by_category_and_kind() {
        // Category 0: a known instance of weight 1 and one of weight 0.5, a surprise one of
        // weight 1: known 16 x 1 + 16 x 0.5 = 24, surprise 16. Category 1: one known, 16 x 0.25.
        let a = attainable_points(
            &rules(),
            2,
            2,
            [
                (0, 0, int(1)),
                (0, 0, ratio(1, 2)),
                (0, 1, int(1)),
                (1, 0, ratio(1, 4)),
            ],
        );
        assert_eq!(a, vec![vec![int(16 + 8), int(16)], vec![int(4), int(0)]]);
    }

    #[test]
    fn kind_multipliers_golden() {
        let kinds = vec![
            ModelKind {
                name: "known".into(),
                weight: KindWeight::Multiplier(int(1)),
            },
            ModelKind {
                name: "surprise".into(),
                weight: KindWeight::ShareOf {
                    of: 0,
                    share: ratio(1, 2),
                },
            },
        ];
        // Known instances could earn 160 points, surprise ones 40: m = 0.5 * 160 / 40 = 2, so
        // surprise instances weigh 80 in total, half of 160.
        let m = |known: i64, surprise: i64| kind_multipliers(&kinds, &[int(known), int(surprise)]);
        assert_eq!(m(160, 40), vec![int(1), int(2)]);
        // Known 160, surprise 48: m = 1/2 x 160 / 48 = 5/3 exactly.
        assert_eq!(m(160, 48), vec![int(1), ratio(5, 3)]);
        // No surprise instance, or no known one: nothing to balance.
        assert_eq!(m(160, 0), vec![int(1), int(1)]);
        assert_eq!(m(0, 40), vec![int(1), int(1)]);
        // 2023: a fixed x10.
        let fixed = vec![
            ModelKind {
                name: "known".into(),
                weight: KindWeight::Multiplier(int(1)),
            },
            ModelKind {
                name: "surprise".into(),
                weight: KindWeight::Multiplier(int(10)),
            },
        ];
        assert_eq!(
            kind_multipliers(&fixed, &[int(160), int(40)]),
            vec![int(1), int(10)]
        );
    }

    #[test]
    fn model_of_pools_or_separates_col_and_pt() {
        use ModelGrouping::{Family, FamilyType};
        assert_eq!(
            model_of("Philosophers-PT-000005", Family),
            Some("Philosophers")
        );
        assert_eq!(
            model_of("Philosophers-COL-000005", Family),
            Some("Philosophers")
        );
        assert_eq!(
            model_of("Philosophers-PT-000005", FamilyType),
            Some("Philosophers-PT")
        );
        assert_eq!(
            model_of("Philosophers-COL-000005", FamilyType),
            Some("Philosophers-COL")
        );
        assert_eq!(model_of("ASLink-PT-01a", Family), Some("ASLink"));
        // The first separator decides: a model name never contains -PT- or -COL-.
        assert_eq!(model_of("A-COL-x-PT-1", FamilyType), Some("A-COL"));
        assert_eq!(model_of("NoNaming", Family), None);
        assert_eq!(model_of("-PT-1", Family), None);
    }
}
