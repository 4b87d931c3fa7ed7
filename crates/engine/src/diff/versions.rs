//! `mccbuild diff --tool T`: tool T as its folder is now against an earlier version of it
//! whose runs the store holds, with no second tool entry. Each version whose runs were executed
//! is noted in the store with its identity (`crate::versions`); the keys its runs had are made
//! again from it and the contest's instances (`Plan::version_keys`), and looked up in the store.
//! The old version's answers and scores are the contest's with T's runs read from the old
//! version's records (a second scoring database over the same plan), so each score is what
//! `scores` said when that version was current (the other tools as they are now); every value
//! is judged against the trusted values of the contest now. Nothing is executed.

use std::collections::BTreeMap;

use mccbuild_core::RunKey;
use mccbuild_output::diff::{DiffReport, Side};
use mccbuild_output::versions::VersionInfo;
use mccbuild_plan::Plan;
use mccbuild_plan::digest_cache::DigestCache;
use mccbuild_plan::key::ToolIdentity;
use mccbuild_scoring::db::ScoringDb;
use mccbuild_scoring::inputs::build_scoring;
use mccbuild_scoring::scores::scores_report;

use super::{DiffOptions, Pair, compare};
use crate::error::DiffError;
use crate::session::Session;
use crate::versions::versions_of;

/// Which earlier version `diff --tool` compares with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Against {
    /// The version whose runs were last executed before the current one's (the default).
    Previous,
    /// `--against`: a digest or git revision (or a prefix of one, at least 4 characters), or a
    /// date (`YYYY-MM-DD`: the version current at the end of that day; or an RFC 3339 time).
    Named(String),
}

/// One version of a tool: how it is shown, and the keys of its runs by instance and examination.
struct Known {
    info: VersionInfo,
    keys: BTreeMap<(String, String), RunKey>,
}

/// The versions of tool `tool` (the oldest first, the current one among them), each with the
/// keys of its runs: the tool's index in the plan and the versions.
fn known_versions(session: &Session, tool: &str) -> Result<(usize, Vec<Known>), DiffError> {
    let plan = &session.plan;
    let t = plan
        .contest
        .tools
        .iter()
        .position(|x| x.name == tool)
        .ok_or_else(|| DiffError::NoTool {
            tool: tool.to_string(),
            manifest: plan.contest.manifest_path.clone(),
            hint: mccbuild_core::names::did_you_mean(
                tool,
                plan.contest.tools.iter().map(|t| t.name.as_str()),
                "tools",
            ),
        })?;
    if plan.contest.tools[t].dir.is_none() {
        return Err(DiffError::NoFolder {
            tool: tool.to_string(),
        });
    }
    let current: &ToolIdentity = &plan.tools[t];
    let noted = versions_of(&session.store, tool);
    let earlier: Vec<ToolIdentity> = noted
        .iter()
        .filter(|v| v.identity != *current)
        .map(|v| v.identity.clone())
        .collect();
    let mut cache = DigestCache::load(&session.store.meta_dir().join("digests.bin"));
    let mut earlier_keys = Plan::version_keys(
        &plan.contest,
        t,
        &earlier,
        &session.executor.key_ingredients(),
        &mut cache,
    )
    .map_err(DiffError::Plan)?
    .into_iter();
    let mut current_keys = BTreeMap::new();
    for run in plan.runs.iter().filter(|r| r.tool == t) {
        let ei = &plan.exam_instances[run.exam_instance];
        let name = (
            plan.instances[ei.instance].name.clone(),
            plan.contest.edition.examinations[ei.exam].name.clone(),
        );
        current_keys.insert(name, run.key);
    }
    let info = |identity: &ToolIdentity, keys: &BTreeMap<(String, String), RunKey>| VersionInfo {
        digest: mccbuild_core::hex(&identity.digest()),
        files: mccbuild_core::hex(&identity.files),
        runs: keys.values().filter(|k| session.index.contains(k)).count(),
        current: identity == current,
        ..VersionInfo::default()
    };
    let mut known = Vec::new();
    let mut current_noted = false;
    for v in &noted {
        let keys = if v.identity == *current {
            current_noted = true;
            current_keys.clone()
        } else {
            earlier_keys.next().unwrap_or_default()
        };
        known.push(Known {
            info: VersionInfo {
                first_run: Some(v.first_run.clone()),
                last_run: Some(v.last_run.clone()),
                git: v.git.clone(),
                ..info(&v.identity, &keys)
            },
            keys,
        });
    }
    if !current_noted {
        known.push(Known {
            info: info(current, &current_keys),
            keys: current_keys,
        });
    }
    Ok((t, known))
}

/// The versions of tool `tool` the store knows, the oldest first (`diff --tool T --list`).
pub fn tool_versions(session: &Session, tool: &str) -> Result<Vec<VersionInfo>, DiffError> {
    Ok(known_versions(session, tool)?
        .1
        .into_iter()
        .map(|k| k.info)
        .collect())
}

/// Which version `against` names among `known` (never the current one).
fn pick<'a>(
    known: &'a [Known],
    tool: &str,
    against: &Against,
    store: &std::path::Path,
    git_dir: Option<&std::path::Path>,
) -> Result<&'a Known, DiffError> {
    let earlier = known.iter().filter(|k| !k.info.current);
    let missing = |why: String, name: &str| DiffError::NoSuchVersion {
        tool: tool.to_string(),
        against: name.to_string(),
        why,
    };
    match against {
        Against::Previous => earlier
            .filter(|k| k.info.runs > 0)
            .max_by(|a, b| a.info.last_run.cmp(&b.info.last_run))
            .ok_or_else(|| DiffError::NoEarlierVersion {
                tool: tool.to_string(),
                store: store.to_path_buf(),
            }),
        Against::Named(name) if is_date(name) => {
            let bound = if name.len() == 10 {
                format!("{name}T23:59:59.999Z")
            } else {
                name.clone()
            };
            earlier
                .filter(|k| k.info.first_run.as_deref().is_some_and(|f| *f <= *bound))
                .max_by(|a, b| a.info.first_run.cmp(&b.info.first_run))
                .ok_or_else(|| missing(format!("no earlier version ran by {bound}"), name))
        }
        Against::Named(name) => {
            let wanted = name.to_ascii_lowercase();
            if wanted.len() < 4 {
                return Err(missing("give at least 4 characters".into(), name));
            }
            // A git name (`HEAD~1`, a tag, a branch) in the tool's work tree, as a revision.
            let resolved = git_dir.and_then(|dir| resolve_revision(dir, name));
            let matches: Vec<&Known> = earlier
                .filter(|k| {
                    let git = k.info.git.as_deref().unwrap_or("");
                    k.info.digest.starts_with(&wanted)
                        || k.info.files.starts_with(&wanted)
                        || git.starts_with(&wanted)
                        || resolved.as_deref().is_some_and(|r| git.starts_with(r))
                })
                .collect();
            // A clean version at exactly the revision named comes before one with changes.
            let exact: Vec<&Known> = matches
                .iter()
                .copied()
                .filter(|k| {
                    let git = k.info.git.as_deref();
                    git == Some(wanted.as_str())
                        || (resolved.is_some() && git == resolved.as_deref())
                })
                .collect();
            let matches = if matches.len() > 1 && exact.len() == 1 {
                exact
            } else {
                matches
            };
            match matches.as_slice() {
                [one] => Ok(one),
                [] => Err(missing("no earlier version matches".into(), name)),
                many => Err(missing(
                    format!(
                        "{} versions match ({})",
                        many.len(),
                        many.iter()
                            .map(|k| k.info.short().to_string())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                    name,
                )),
            }
        }
    }
}

/// Whether `text` is a date (`YYYY-MM-DD`) or begins like an RFC 3339 time.
fn is_date(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() >= 10
        && b[..10].iter().enumerate().all(|(i, c)| {
            if i == 4 || i == 7 {
                *c == b'-'
            } else {
                c.is_ascii_digit()
            }
        })
}

/// The full hash of git revision `name` in the work tree of `dir`.
fn resolve_revision(dir: &std::path::Path, name: &str) -> Option<String> {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["rev-parse", "--verify", "--quiet", "--end-of-options"])
        .arg(format!("{name}^{{commit}}"))
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The comparison of tool `tool` as it is now with an earlier version of it (`against`).
pub fn diff_versions(
    session: &Session,
    tool: &str,
    against: &Against,
    options: DiffOptions,
) -> Result<DiffReport, DiffError> {
    let plan = &session.plan;
    let (t, known) = known_versions(session, tool)?;
    let old = pick(
        &known,
        tool,
        against,
        session.store.root(),
        plan.contest.tools[t].dir.as_deref(),
    )?;
    let current = known
        .iter()
        .find(|k| k.info.current)
        .map(|k| k.info.clone());
    // Per examination instance, the old version's run and the current one's; and, for the
    // old version's scoring, each current key read as the old version's.
    let mut runs: BTreeMap<usize, Pair> = BTreeMap::new();
    let mut as_old: BTreeMap<RunKey, RunKey> = BTreeMap::new();
    for run in plan.runs.iter().filter(|r| r.tool == t) {
        let ei = &plan.exam_instances[run.exam_instance];
        let name = (
            plan.instances[ei.instance].name.clone(),
            plan.contest.edition.examinations[ei.exam].name.clone(),
        );
        let old_key = old.keys.get(&name).copied();
        if let Some(k) = old_key {
            as_old.insert(run.key, k);
        }
        runs.insert(
            run.exam_instance,
            Pair {
                old: old_key,
                new: Some(run.key),
                limits: Some(run.limits),
            },
        );
    }
    let (db, handles) = session.scoring();
    let now = serde_json::to_value(scores_report(plan, &db, &handles, true)).unwrap_or_default();
    let (db, handles) = build_scoring(ScoringDb::default(), plan, |key| {
        session.index.get(as_old.get(key).unwrap_or(key))
    });
    let then = serde_json::to_value(scores_report(plan, &db, &handles, true)).unwrap_or_default();
    let sides = (
        Side {
            tool: tool.to_string(),
            version: Some(old.info.clone()),
        },
        Side {
            tool: tool.to_string(),
            version: current,
        },
    );
    Ok(compare(
        session,
        &runs,
        (&then, tool),
        (&now, tool),
        sides,
        options,
    ))
}

#[cfg(test)]
mod tests {
    use super::is_date;

    #[test]
    fn dates_are_told_from_digests() {
        assert!(is_date("2026-12-07"));
        assert!(is_date("2026-12-07T10:00:00Z"));
        assert!(!is_date("2026120712"));
        assert!(!is_date("deadbeef"));
        assert!(!is_date("2026-12-0"));
    }
}
