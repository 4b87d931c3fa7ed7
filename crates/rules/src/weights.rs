//! Rule E-4.4: how much each instance weighs (normalisation by model size, model kinds).

use crate::edition::{CategoryId, Edition, KindWeight, ModelKind, ModelWeight, ScoringRules};

/// Rule E-4.4's factors of one examination of one instance.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Weight {
    /// Normalisation: the instance's share of its model's weight.
    pub instance: f64,
    /// The multiplier of its model's kind in its category.
    pub kind: f64,
    pub category: CategoryId,
}

impl Weight {
    /// What the instance's points are multiplied by.
    pub fn factor(&self) -> f64 {
        self.instance * self.kind
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
    exam_instances: impl IntoIterator<Item = (CategoryId, usize, f64)>,
) -> Vec<Vec<f64>> {
    let mut attainable = vec![vec![0.0; kinds]; categories];
    for (category, kind, instance_weight) in exam_instances {
        attainable[category][kind] += rules.points_per_examination * instance_weight;
    }
    attainable
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

#[cfg(test)]
mod tests {
    use super::*;

    fn rules() -> ScoringRules {
        ScoringRules::mcc_2026()
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
    fn attainable_points_add_each_instances_full_points_by_category_and_kind() {
        // Category 0: a known instance of weight 1 and one of weight 0.5, a surprise one of
        // weight 1: known 16 x 1 + 16 x 0.5 = 24, surprise 16. Category 1: one known, 16 x 0.25.
        let a = attainable_points(
            &rules(),
            2,
            2,
            [(0, 0, 1.0), (0, 0, 0.5), (0, 1, 1.0), (1, 0, 0.25)],
        );
        assert_eq!(a, vec![vec![16.0 + 8.0, 16.0], vec![4.0, 0.0]]);
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
}
