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

/// A results row on a declared instance reads its values by position into the formula file's
/// ids: those ids are part of the row's reading, so its run key changes with them (another id
/// in the file, the same row) and with nothing else that stays the same.
#[test]
fn an_imported_rows_key_changes_with_the_value_ids_of_its_declared_instance() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = tempfile::tempdir().expect("a temporary folder");
    let instance = dir.path().join("Deadlock-PT-1");
    std::fs::create_dir(&instance).expect("the instance's folder");
    for entry in std::fs::read_dir(root.join("models/Deadlock-PT-1")).expect("the demo instance") {
        let entry = entry.expect("a file of the demo instance");
        std::fs::copy(entry.path(), instance.join(entry.file_name())).expect("copied");
    }
    // A tool of the contest's own takes part in the examination: its runs make the declared
    // instance's examination instance, with the formula file's ids, that the row joins.
    std::fs::create_dir(dir.path().join("mine")).expect("the tool's folder");
    let entry = dir.path().join("mine/BenchKit_head.sh");
    std::fs::write(&entry, "#!/bin/sh\n").expect("its entry");
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&entry, std::fs::Permissions::from_mode(0o755)).expect("executable");
    std::fs::write(
        dir.path().join("contest.toml"),
        format!(
            "[contest]\nname = \"t\"\nrules = \"{}\"\nresults = [\"results.csv\"]\n\n\
             [[model]]\nname = \"Deadlock\"\ninstances = [\"Deadlock-PT-1\"]\n\n\
             [[tool]]\nname = \"mine\"\ndir = \"mine\"\n\
             examinations = [\"ReachabilityCardinality\"]\n\n\
             [[tool]]\nname = \"a\"\n",
            root.join("rules/mcc-2026.toml").display()
        ),
    )
    .expect("the manifest");
    std::fs::write(
        dir.path().join("results.csv"),
        "tool,Input,Examination,nb cores,time flag,memory flag,results,techniques,\
         max memory (MB),CPU (ms),Time (ms),i/o wait (ms),Status,run id,\
         flags:bonus:scores:mask,estimated result,# tools computing estimated results\n\
         a,Deadlock-PT-1,ReachabilityCardinality,1,0,0,T???????????????,,10,1000,1100,0,normal,1,,,\n",
    )
    .expect("the results file");
    let imported_key = || {
        let contest = Contest::load(&dir.path().join("contest.toml")).expect("the contest");
        let plan = Plan::build(
            contest,
            &[("kind".to_string(), "test".to_string())],
            &mut DigestCache::in_memory(),
            ArchiveLimits::default(),
        )
        .expect("the contest plans");
        let imported: Vec<&Run> = plan
            .runs
            .iter()
            .filter(|r| matches!(r.origin, RunOrigin::Imported { .. }))
            .collect();
        assert_eq!(imported.len(), 1, "one row, one imported run");
        let ei = &plan.exam_instances[imported[0].exam_instance];
        assert!(
            ei.ids.len() > 1,
            "the row joins the declared instance's ids"
        );
        (imported[0].key, ei.ids.join(" "))
    };
    let (before, ids_before) = imported_key();
    assert_eq!(imported_key().0, before, "the same files, the same key");

    let formulas = instance.join("ReachabilityCardinality.xml");
    let text = std::fs::read_to_string(&formulas).expect("the formula file");
    let renamed = text.replace(
        "Deadlock-PT-1-ReachabilityCardinality-2026-15",
        "Deadlock-PT-1-ReachabilityCardinality-2023-15",
    );
    assert_ne!(renamed, text, "the demo's formula file has that id");
    std::fs::write(&formulas, renamed).expect("the formula file rewritten");
    let (after, ids_after) = imported_key();
    assert_ne!(ids_after, ids_before);
    assert_ne!(
        after, before,
        "another id in the file, another key for the same row"
    );
}
