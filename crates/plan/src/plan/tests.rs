//! Tests of the plan.

use std::sync::Arc;

use super::*;
use crate::digest_cache::DigestCache;
use crate::instance::{ArchiveLimits, InstanceFacts, instance_facts};
use crate::key::{KeyInputs, reading, run_key};
use crate::manifest::Contest;

/// The plan fills its keys on several threads from one task digest per examination
/// instance: each must be the key `run_key` computes from that run's own ingredients.
#[test]
fn every_planned_key_is_the_run_key_of_its_run() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let contest = Contest::load(&root.join("contest.toml")).expect("the demo contest");
    let executor = vec![("kind".to_string(), "test".to_string())];
    let plan = Plan::build(
        contest,
        &executor,
        &mut DigestCache::in_memory(),
        ArchiveLimits::default(),
    )
    .expect("the demo plans");
    assert!(plan.runs.len() > 50, "{} runs", plan.runs.len());
    let edition = &plan.contest.edition;
    // Each instance's facts read again, as the plan read them.
    let facts: Vec<Arc<InstanceFacts>> = plan
        .instances
        .iter()
        .map(|i| {
            instance_facts(
                &i.name,
                &i.source,
                &mut DigestCache::in_memory(),
                ArchiveLimits::default(),
            )
            .expect("the demo's instances read")
        })
        .collect();
    for run in &plan.runs {
        let ei = &plan.exam_instances[run.exam_instance];
        let instance = &plan.instances[ei.instance];
        let exam = &edition.examinations[ei.exam];
        let hidden: Vec<&str> = run.hidden.iter().map(String::as_str).collect();
        let tool = &plan.tools[run.tool];
        let direct = run_key(&KeyInputs {
            tool,
            instance: &instance.name,
            instance_content: &facts[ei.instance].visible_digest(&hidden),
            examination: &exam.name,
            reading: &reading(exam),
            limits: run.limits,
            executor: &crate::key::executor_for_tool(&executor, &tool.name),
        });
        assert_eq!(run.key, direct, "{} {}", instance.name, exam.name);
    }
}
