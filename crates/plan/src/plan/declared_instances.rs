//! The manifest's models and their instances, inspected: each instance's facts read (through
//! the digest cache), a broken one left out, each model's kind resolved (E-4.4).

use std::sync::Arc;

use mccbuild_core::diag::{Problem, Problems};
use mccbuild_rules::weights::model_kind;

use super::{LeftOut, PlannedInstance, PlannedModel};
use crate::digest_cache::DigestCache;
use crate::instance::{ArchiveLimits, InstanceFacts, instance_facts};
use crate::manifest::{Contest, ModelKindDecl};

/// The models of the manifest and their instances (inspected: a broken one is left out, an
/// instance with a broken model file is a problem but planned), each model's kind resolved, and
/// each instance's facts.
pub(super) fn declared_instances(
    contest: &Contest,
    cache: &mut DigestCache,
    archive_limits: ArchiveLimits,
    problems: &mut Problems,
    left_out: &mut Vec<LeftOut>,
) -> (
    Vec<PlannedModel>,
    Vec<PlannedInstance>,
    Vec<Arc<InstanceFacts>>,
) {
    let edition = &contest.edition;
    let model_file = &edition.instances.model_file;
    let mut models = Vec::new();
    let mut instances: Vec<PlannedInstance> = Vec::new();
    let mut all_facts: Vec<Arc<InstanceFacts>> = Vec::new();
    for (m, model) in contest.models.iter().enumerate() {
        let mut planned = Vec::new();
        let mut any_new = false;
        for decl in &model.instances {
            match instance_facts(&decl.name, &decl.source, cache, archive_limits) {
                Ok(facts) => {
                    let fix = "tools will be run on it anyway; fix or remove the instance";
                    if !facts.has_file(model_file) {
                        problems.push(
                            Problem::new(
                                decl.source.path(),
                                format!("the instance has no {model_file}"),
                            )
                            .help(fix),
                        );
                    } else if let (Err(e), true) = (&facts.net, model_file.ends_with(".pnml")) {
                        problems.push(
                            Problem::new(decl.source.path().join(model_file), e.message.clone())
                                .at(e.location)
                                .help(fix),
                        );
                    }
                    any_new |= facts.new_model;
                    planned.push(instances.len());
                    instances.push(PlannedInstance {
                        name: decl.name.clone(),
                        model: m,
                        source: decl.source.clone(),
                    });
                    all_facts.push(facts);
                }
                Err(e) => {
                    let (at, what) = e.placed();
                    problems.push(
                        Problem::new(at.unwrap_or(decl.source.path()), what)
                            .help("this instance is left out of the contest until it is fixed"),
                    );
                    left_out.push(LeftOut {
                        model: model.name.clone(),
                        instance: decl.name.clone(),
                        examination: None,
                    });
                }
            }
        }
        let given = match model.kind {
            ModelKindDecl::Given(kind) => Some(kind),
            ModelKindDecl::FromMarker => None,
        };
        models.push(PlannedModel {
            name: model.name.clone(),
            kind: model_kind(edition, given, any_new),
            instances: planned,
        });
    }
    (models, instances, all_facts)
}
