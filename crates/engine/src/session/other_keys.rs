//! Why a store holding a contest's tools, instances and examinations has none (or few) of its
//! runs: its records were made under other key ingredients (another edition's limits or time
//! kind, another executor, changed tool or instance files). A few records are read and
//! compared with the planned run of the same tool, instance and examination; the message
//! names the ingredient that differs and what to do.

use std::collections::{BTreeMap, HashMap};

use mccbuild_plan::key::executor_for_tool;
use mccbuild_plan::{Plan, RunOrigin};
use mccbuild_rules::edition::Limits;
use mccbuild_store::{Index, Store};

use crate::progress::count;

/// How many records are read at most to find one of the contest's tools, instances and
/// examinations.
const SAMPLE: usize = 64;

/// The warning for a plan of which fewer than half of the runs are stored while the store
/// holds other records of its tools on its instances and examinations; `None` otherwise.
/// `executing`: for a command that executes the missing runs, a record differing only in what
/// it does not show (tool files, instance files, the reading of answers) is no news.
pub(super) fn other_keys_warning(
    plan: &Plan,
    store: &Store,
    index: &Index,
    stored: &[bool],
    executor: &[(String, String)],
    executing: bool,
) -> Option<String> {
    let planned = plan.runs.len();
    let found = stored.iter().filter(|s| **s).count();
    if planned == 0 || found * 2 >= planned || index.len() <= found {
        return None;
    }
    // The runs not stored, by (tool, instance, examination).
    let mut missing: HashMap<(&str, &str, &str), usize> = HashMap::new();
    for (i, run) in plan.runs.iter().enumerate().filter(|(i, _)| !stored[*i]) {
        let ei = &plan.exam_instances[run.exam_instance];
        missing.insert(
            (
                plan.tools[run.tool].name.as_str(),
                plan.instances[ei.instance].name.as_str(),
                plan.contest.edition.examinations[ei.exam].name.as_str(),
            ),
            i,
        );
    }
    for key in index.some_keys(SAMPLE) {
        let Ok(Some((record, _))) = index.read(store, &key) else {
            continue;
        };
        let triple = (
            record.tool.as_str(),
            record.instance.as_str(),
            record.examination.as_str(),
        );
        let Some(&i) = missing.get(&triple) else {
            continue;
        };
        let run = &plan.runs[i];
        let imported = matches!(run.origin, RunOrigin::Imported { .. });
        let expected: BTreeMap<String, String> = match imported {
            true => [("kind".to_string(), "import".to_string())].into(),
            false => executor_for_tool(executor, triple.0).into_iter().collect(),
        };
        let mut differs = limits_differ(&record.limits, &run.limits);
        if record.executor != expected {
            differs.push(format!(
                "the executor (stored: {}; planned: {})",
                pairs(&record.executor),
                pairs(&expected)
            ));
        }
        if differs.is_empty() && executing {
            return None;
        }
        let what = match differs.is_empty() {
            true => "the tool's files, the instance's files or how the edition reads the \
                     examination's answers (its value ids): the records show the same limits \
                     and executor"
                .to_string(),
            false => differs.join("; "),
        };
        let todo = match imported {
            true => format!(
                "The records were imported under other rules: `mccbuild import --manifest {} FILE` \
                 records the results files' rows under this contest's keys",
                plan.contest.manifest_path.display()
            ),
            false => "`mccbuild run` executes the runs under this contest's settings; to use the \
                      stored records instead, make the contest's settings those they were made \
                      under"
                .to_string(),
        };
        return Some(format!(
            "{found} of the {} are in the store, which holds {} more, among them runs of this \
             contest's tools on its instances and examinations under other keys (e.g. {} on {}, \
             {}): a run's key holds what can change its result (docs/cache.md), and here {what} \
             differs. {todo}",
            count(planned, "planned run", "planned runs"),
            count(index.len() - found, "record", "records"),
            triple.0,
            triple.1,
            triple.2,
        ));
    }
    None
}

/// The limits that differ between a stored record's and a planned run's, each as words.
fn limits_differ(stored: &Limits, planned: &Limits) -> Vec<String> {
    let mut out = Vec::new();
    if stored.time != planned.time {
        out.push(format!(
            "the time kind (`[limits] time`; stored: {}, planned: {})",
            stored.time.name(),
            planned.time.name()
        ));
    }
    if stored.time_s != planned.time_s {
        out.push(format!(
            "the time limit (stored: {} s, planned: {} s)",
            stored.time_s, planned.time_s
        ));
    }
    if stored.memory_mb != planned.memory_mb {
        out.push(format!(
            "the memory limit (stored: {} MB, planned: {} MB)",
            stored.memory_mb, planned.memory_mb
        ));
    }
    out
}

fn pairs(map: &BTreeMap<String, String>) -> String {
    let words: Vec<String> = map.iter().map(|(k, v)| format!("{k}={v}")).collect();
    words.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use mccbuild_rules::edition::TimeLimit;

    #[test]
    fn each_limit_that_differs_is_named() {
        let a = Limits {
            time_s: 3600,
            memory_mb: 16384,
            time: TimeLimit::Cpu,
        };
        assert!(limits_differ(&a, &a).is_empty());
        let b = Limits {
            time: TimeLimit::Wall,
            memory_mb: 8192,
            ..a
        };
        let words = limits_differ(&a, &b);
        assert_eq!(words.len(), 2, "{words:?}");
        assert!(words[0].contains("stored: cpu, planned: wall"), "{words:?}");
        assert!(words[1].contains("16384 MB"), "{words:?}");
    }
}
