//! The MCC 2025 edition re-enacted through Slurm (scripts/reenact-mcc2025): about 3,000 runs of
//! the stand-ins of its six tools on real 2025 inputs, through a private cluster of three nodes
//! with `steps = "model"`, give exactly the import replay's scores; the runs of each model on
//! one node (rule E-5.1), the keys of the local sandbox, and a second `run` submits only what the
//! first left.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

use super::Cluster;
use super::orchestrator::submitted_models;
use crate::common::*;

fn reenact(cluster: &Cluster, args: &[&str]) -> std::process::Output {
    cluster
        .command("python3")
        .arg(Path::new(REPO).join("scripts/reenact-mcc2025"))
        .args(args)
        .args(["--mccbuild", env!("CARGO_BIN_EXE_mccbuild")])
        .output()
        .expect("python3 runs")
}

#[test]
fn the_2025_edition_reenacted_through_slurm_scores_as_the_import_replay() {
    if mcc_data().is_none() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let Some(cluster) = Cluster::start(tmp.path()) else {
        return;
    };
    let dir = tmp.path().join("reenact");
    let d = dir.to_str().unwrap();
    let out = reenact(
        &cluster,
        &[
            "--out",
            d,
            "--runs",
            "3000",
            "--executor",
            "slurm",
            "--steps",
            "model",
        ],
    );
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let info: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(dir.join("reenact.json")).unwrap()).unwrap();
    let planned = info["runs"].as_u64().unwrap();
    assert!((2900..3200).contains(&planned), "{info}");

    // One model first; then the rest: only what no record holds is submitted.
    let first_instance = info["instances"][0].as_str().unwrap();
    let first = first_instance.split('-').next().unwrap();
    let one = cluster.mccbuild(&dir, &["run", "--json", "--model", first]);
    assert!(one.status.success(), "{}", stderr(&one));
    let done = json(&one)["executed"].as_u64().unwrap();
    assert!(done > 0, "{}", stderr(&one));
    let all = cluster.mccbuild(&dir, &["run", "--json"]);
    let log = stderr(&all);
    assert!(all.status.success(), "{log}");
    let counts = json(&all);
    assert_eq!(counts["failed"], 0, "{log}");
    assert_eq!(counts["cached"].as_u64(), Some(done), "{counts}");
    assert_eq!(
        counts["executed"].as_u64().unwrap() + done,
        planned,
        "{counts}"
    );
    assert!(
        !submitted_models(&log).iter().any(|m| m == first),
        "{first} submitted again: {log}"
    );

    // The scores are the import replay's, exactly (every value, score, standing, Confidence).
    let out = reenact(&cluster, &["--compare", d]);
    let said = stdout(&out);
    assert!(
        out.status.success() && said.contains("EQUAL"),
        "{said}{}",
        stderr(&out)
    );

    // Rule E-5.1: each model's runs on one node, the models over all three; every record with
    // its Slurm step and the local sandbox's key.
    let records = store_records(&dir.join("cache"));
    assert_eq!(records.len() as u64, planned);
    let mut nodes_of: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for r in &records {
        assert_eq!(r["executor"]["kind"], "local", "{r}");
        assert_eq!(r["slurm"]["node"], r["host"], "{r}");
        let instance = r["instance"].as_str().unwrap();
        nodes_of
            .entry(instance.split('-').next().unwrap().to_string())
            .or_default()
            .insert(r["host"].as_str().unwrap().to_string());
    }
    for (model, nodes) in &nodes_of {
        assert_eq!(nodes.len(), 1, "model {model} ran on {nodes:?}");
    }
    let used: BTreeSet<&String> = nodes_of.values().flatten().collect();
    assert_eq!(used.len(), 3, "{nodes_of:?}");
}
