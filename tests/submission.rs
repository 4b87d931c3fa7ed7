//! Real MCC submissions run unchanged (issue 15): BK_TOOL from the manifest's `bk_tool`, the
//! edition's time limit (wall-clock as BenchKit, CPU time as SV-COMP), a writable BK_BIN_PATH
//! per run, the unprivileged user `mcc`, selective reruns. Everything through the real binary.
//! Tests that need root, cgroups and namespaces skip (or fail under CI=true) without them.

mod common;

use std::fs;
use std::path::Path;

use common::*;

/// Whether runs are sandboxed here as the MCC's VM is approached (root, cgroups, namespaces).
fn isolated() -> bool {
    let out = mccbuild_in(Path::new(REPO), &["sandbox", "--json", "--", "/bin/true"]);
    if !out.status.success() {
        skip(&format!(
            "mccbuild sandbox cannot run here: {}",
            stderr(&out)
        ));
        return false;
    }
    let sandbox = json(&out)["sandbox"].as_str().unwrap_or("").to_string();
    if sandbox != "cgroup+namespaces" {
        skip(&format!(
            "runs are not isolated here (sandbox {sandbox}): needs root, cgroups and namespaces"
        ));
        return false;
    }
    true
}

fn executed(out: &std::process::Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "mccbuild failed: {}\n{}",
        stdout(out),
        stderr(out)
    );
    json(out)
}

/// Two variants of one submission share a folder and an entry dispatching on BK_TOOL, as real
/// MCC images do; `bk_tool` is part of the run key.
#[test]
fn bk_tool_is_the_manifests_and_dispatches_variants() {
    let mut c = TestContest::new();
    c.copy_demo_instance("Philosophers-PT-000002");
    c.model("Philosophers", "known", &["models/Philosophers-PT-000002"]);
    let dir = c.path().join("tools/shared");
    fs::create_dir_all(&dir).unwrap();
    write_exec(
        &dir.join("BenchKit_head.sh"),
        "#!/bin/bash\ncase \"$BK_TOOL\" in\n\
         fast) echo 'FORMULA ReachabilityDeadlock TRUE TECHNIQUES EXPLICIT' ;;\n\
         slow) echo 'FORMULA ReachabilityDeadlock FALSE TECHNIQUES EXPLICIT' ;;\n\
         *) echo \"Unrecognized BK_TOOL $BK_TOOL\" >&2 ;;\nesac\n",
    );
    let tool = |name: &str, bk: &str| {
        format!(
            "[[tool]]\nname = \"{name}\"\ndir = \"tools/shared\"\n{bk}examinations = [\"ReachabilityDeadlock\"]\n"
        )
    };
    c.tools.push(tool("v1", "bk_tool = \"fast\"\n"));
    c.tools.push(tool("v2", "bk_tool = \"slow\"\n"));
    c.tools.push(tool("plain", ""));
    c.write("time_s = 20");
    assert_eq!(executed(&c.mccbuild(&["run", "--json"]))["executed"], 3);
    let answer = |c: &TestContest, tool: &str| {
        c.record(tool, "Philosophers-PT-000002", "ReachabilityDeadlock")["answers"].clone()
    };
    assert_eq!(answer(&c, "v1")[0]["value"], "TRUE", "{}", answer(&c, "v1"));
    assert_eq!(
        answer(&c, "v2")[0]["value"],
        "FALSE",
        "{}",
        answer(&c, "v2")
    );
    let plain = c.record("plain", "Philosophers-PT-000002", "ReachabilityDeadlock");
    assert!(
        plain["stderr"]["text"]
            .as_str()
            .unwrap()
            .contains("Unrecognized BK_TOOL plain"),
        "{plain}"
    );
    // Another bk_tool for v2: its runs are redone, the others' are not.
    c.tools[1] = tool("v2", "bk_tool = \"fast\"\n");
    c.write("time_s = 20");
    let again = executed(&c.mccbuild(&["run", "--json"]));
    assert_eq!(
        (again["executed"].clone(), again["cached"].clone()),
        (1.into(), 2.into())
    );
    // The store keeps the old record beside the new one (another key): the new one says TRUE.
    let v2: Vec<String> = c
        .records()
        .into_iter()
        .filter(|r| r["tool"] == "v2")
        .map(|r| r["answers"][0]["value"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(v2.len(), 2);
    assert!(v2.contains(&"TRUE".to_string()), "{v2:?}");
}
