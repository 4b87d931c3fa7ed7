//! The settings a rules file may leave out, and what they are then: the values behind the
//! schema's `#[serde(default = ...)]` and the sections' `Default`s (a section left out is its
//! default as a whole). Also the MCC 2026 scoring settings the rules' unit tests start from.

use super::schema::{
    AwardAggregate, AwardRules, AwardTies, InstanceRules, VerdictFileRules, VmRules,
};
#[cfg(test)]
use super::schema::{ModelGrouping, ModelWeight, ScoringRules, WeightScale, WrongValue};
use crate::exact::Exact;

impl Default for VmRules {
    fn default() -> Self {
        VmRules {
            cpu_model: westmere(),
        }
    }
}

/// `[vm] cpu_model` left out.
pub(super) fn westmere() -> String {
    "Westmere".to_string()
}

/// `[scoring] max_model_ratio` left out: E-4.4's "x2".
pub(super) fn default_max_model_ratio() -> Exact {
    crate::exact::int(2)
}

impl Default for AwardRules {
    fn default() -> Self {
        AwardRules {
            enabled: true,
            aggregate: AwardAggregate::default(),
            ties: AwardTies::default(),
        }
    }
}

/// `[instances] model_file` left out: the MCC's model file.
pub(super) fn default_model_file() -> String {
    "model.pnml".to_string()
}

impl Default for InstanceRules {
    fn default() -> Self {
        InstanceRules {
            model_file: default_model_file(),
        }
    }
}

/// `[verdict_files] file` left out: the MCC's verdict file.
pub(super) fn default_verdict_file() -> String {
    "GenericPropertiesVerdict.xml".to_string()
}

impl Default for VerdictFileRules {
    fn default() -> Self {
        VerdictFileRules {
            file: default_verdict_file(),
            hidden_for_model_kinds: Vec::new(),
        }
    }
}

/// A flag that is on unless the file says otherwise.
pub(super) fn yes() -> bool {
    true
}

#[cfg(test)]
impl ScoringRules {
    /// The MCC 2026 settings (`rules/mcc-2026.toml`), for the rules' unit tests.
    pub(crate) fn mcc_2026() -> ScoringRules {
        ScoringRules {
            points_per_examination: crate::exact::int(16),
            penalty_factor: crate::exact::int(2),
            wrong_value: WrongValue::Penalty,
            model_weight: ModelWeight::Linear,
            max_model_ratio: crate::exact::int(2),
            weight_scale: WeightScale::One,
            model_grouping: ModelGrouping::Family,
            table: Vec::new(),
        }
    }
}
