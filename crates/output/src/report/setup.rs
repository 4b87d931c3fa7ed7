//! The setup the results rest on, as the site states it: the edition, the limits and which
//! time they limit, the executor and its sandbox, the machines the runs ran on, the dates of the
//! first and last run, mccbuild's version, each tool's identity, the basis of the trusted
//! values. The plan gives the declared part; the run records (their [`RunFacts`]) the observed
//! part: a fact no record holds is said to be "not recorded", never guessed.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use maud::{Markup, html};
use mccbuild_rules::edition::TimeLimit;
use mccbuild_store::{Machine, RunRecord};

use super::ReportData;

/// What the setup block reads of one run's record.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct RunFacts {
    pub host: String,
    /// The machine as the record states it (None: the record does not say).
    pub machine: Option<Machine>,
    /// The virtual machine the run ran in (QEMU), in words.
    pub vm: Option<String>,
    /// The executor's ingredients (`kind=local, sandbox=...`).
    pub executor: String,
    pub started_at: String,
    pub finished_at: String,
    pub mccbuild_version: String,
}

impl RunFacts {
    pub fn of(record: &RunRecord) -> RunFacts {
        RunFacts {
            host: record.host.clone(),
            machine: record.machine.clone(),
            vm: record.vm.as_ref().map(|vm| {
                format!(
                    "VM ({}, {} guest): CPU {}, {} vCPU{}, {} MB",
                    vm.accel,
                    vm.guest,
                    vm.cpu_model,
                    vm.vcpus,
                    if vm.vcpus == 1 { "" } else { "s" },
                    vm.memory_mb
                )
            }),
            executor: record
                .executor
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(", "),
            started_at: record.started_at.clone(),
            finished_at: record.finished_at.clone(),
            mccbuild_version: record.mccbuild_version.clone(),
        }
    }
}

/// The observed part of the setup: the facts of the records of the plan's runs, gathered.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Observed {
    /// Records read.
    pub records: usize,
    /// Per host: its machines in words (one, unless it changed between runs) and its runs.
    pub hosts: BTreeMap<String, (BTreeSet<String>, usize)>,
    /// Per executor (its ingredients in words): runs.
    pub executors: BTreeMap<String, usize>,
    /// The earliest start and the latest end (RFC 3339, UTC: they compare as texts).
    pub first: Option<String>,
    pub last: Option<String>,
    /// The versions of mccbuild that made the records.
    pub versions: BTreeSet<String>,
}

/// A machine in words, or "not recorded".
pub fn machine_words(machine: Option<&Machine>) -> String {
    match machine {
        Some(m) => format!(
            "{}, {} CPU{}, {} MB, Linux {}",
            if m.cpu_model.is_empty() {
                "CPU model not recorded"
            } else {
                &m.cpu_model
            },
            m.cpus,
            if m.cpus == 1 { "" } else { "s" },
            m.memory_mb,
            m.kernel
        ),
        None => "machine not recorded".to_string(),
    }
}

impl Observed {
    pub fn of<'a>(facts: impl IntoIterator<Item = &'a RunFacts>) -> Observed {
        let mut o = Observed::default();
        for f in facts {
            o.records += 1;
            let host = o.hosts.entry(f.host.clone()).or_default();
            host.0.insert(match &f.vm {
                Some(vm) => format!("{vm}; host: {}", machine_words(f.machine.as_ref())),
                None => machine_words(f.machine.as_ref()),
            });
            host.1 += 1;
            *o.executors.entry(f.executor.clone()).or_default() += 1;
            if o.first.as_ref().is_none_or(|x| f.started_at < *x) {
                o.first = Some(f.started_at.clone());
            }
            if o.last.as_ref().is_none_or(|x| f.finished_at > *x) {
                o.last = Some(f.finished_at.clone());
            }
            o.versions.insert(f.mccbuild_version.clone());
        }
        o
    }
}

/// A tool's version string, where it gives one: the first line of `VERSION` in its folder
/// (at most 80 characters; the file is part of the tool's digest like every other).
pub fn tool_version(dir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(dir.join("VERSION")).ok()?;
    let line: String = text.lines().next()?.trim().chars().take(80).collect();
    (!line.is_empty()).then_some(line)
}

fn time_kind(t: TimeLimit) -> &'static str {
    match t {
        TimeLimit::Cpu => "CPU time",
        TimeLimit::Wall => "wall-clock time",
        TimeLimit::Both => "CPU and wall-clock time",
    }
}

/// The limits of the plan's runs in words, per examination where they differ: (examinations,
/// limits), one row for all when they are the same. Computed once per site
/// ([`ReportData::limits`]): it reads every run.
pub fn limits_of(plan: &mccbuild_plan::Plan) -> Vec<(String, String)> {
    let edition = &plan.contest.edition;
    let mut distinct: BTreeMap<usize, Vec<mccbuild_rules::edition::Limits>> = BTreeMap::new();
    for run in &plan.runs {
        let seen = distinct
            .entry(plan.exam_instances[run.exam_instance].exam)
            .or_default();
        if !seen.contains(&run.limits) {
            seen.push(run.limits);
        }
    }
    let by_exam: BTreeMap<usize, BTreeSet<String>> = distinct
        .into_iter()
        .map(|(x, ls)| {
            let words = ls
                .iter()
                .map(|l| {
                    format!(
                        "{} s of {}, {} MB",
                        l.time_s,
                        time_kind(l.time),
                        l.memory_mb
                    )
                })
                .collect();
            (x, words)
        })
        .collect();
    let words = |s: &BTreeSet<String>| s.iter().cloned().collect::<Vec<_>>().join("; ");
    let distinct: BTreeSet<String> = by_exam.values().map(words).collect();
    match distinct.len() {
        0 => vec![("all examinations".into(), "no run planned".into())],
        1 => vec![(
            "all examinations".into(),
            distinct.into_iter().next().unwrap_or_default(),
        )],
        _ => by_exam
            .iter()
            .map(|(x, s)| (edition.examinations[*x].name.clone(), words(s)))
            .collect(),
    }
}

/// The limits in a few words, for the footer.
fn limits_short(data: &ReportData<'_>) -> String {
    match data.limits.as_slice() {
        [(_, one)] => one.clone(),
        _ => "per examination (see the setup)".to_string(),
    }
}

fn basis_words(basis: &str) -> &'static str {
    match basis {
        "reference" => "the reference answers",
        "ground-truth" => "the truth given with each task",
        _ => "the vote (E-3.1)",
    }
}

fn executor_declared(data: &ReportData<'_>) -> String {
    let e = &data.plan.contest.executor;
    let plural = if e.jobs == 1 { "" } else { "s" };
    format!("{} ({} job{plural} at once)", e.kind.name(), e.jobs)
}

/// The footer of every page: what does not change with each record (a live site re-renders a
/// page when what it shows changes), and a link to the whole setup on the index.
pub fn footer(data: &ReportData<'_>) -> Markup {
    html! {
        (data.scores.contest) " · rules: " (data.scores.edition)
        " · limits: " (limits_short(data))
        " · executor: " (executor_declared(data))
        " · trusted values: " (basis_words(&data.scores.basis))
        " · made by mccbuild " (env!("CARGO_PKG_VERSION"))
        " · " a href="index.html#setup" { "the whole setup" }
    }
}

/// The setup block of the index.
pub fn block(data: &ReportData<'_>) -> Markup {
    let plan = data.plan;
    let o = &data.observed;
    let executed = plan
        .runs
        .iter()
        .filter(|r| r.origin == mccbuild_plan::RunOrigin::Executed)
        .count();
    let imported = plan.runs.len() - executed;
    html! {
        h2 id="setup" { "Setup" }
        table.setup {
            tr { th { "edition" } td { (plan.contest.edition.info.name) } }
            @for (exams, words) in data.limits.iter() {
                tr { th { "limits: " (exams) } td { (words) } }
            }
            tr { th { "executor (declared)" } td { (executor_declared(data)) } }
            @if o.executors.is_empty() {
                tr { th { "executors (recorded)" } td { "not recorded (no run record read)" } }
            }
            @for (executor, runs) in &o.executors {
                tr { th { "executor (recorded)" } td.mono { (executor) } td.n { (runs) " runs" } }
            }
            @if o.hosts.is_empty() {
                tr { th { "machines" } td { "not recorded (no run record read)" } }
            }
            @for (host, (machines, runs)) in &o.hosts {
                @for m in machines {
                    tr { th { "machine " (host) } td { (m) } td.n { (runs) " runs" } }
                }
            }
            tr { th { "first run started" } td { (o.first.as_deref().unwrap_or("not recorded")) } }
            tr { th { "last run finished" } td { (o.last.as_deref().unwrap_or("not recorded")) } }
            tr { th { "runs" } td { (executed) " executed (" (o.records) " recorded), " (imported) " imported from results files" } }
            tr { th { "mccbuild" } td { "this report: " (env!("CARGO_PKG_VERSION"))
                @if !o.versions.is_empty() { "; the records: " (o.versions.iter().cloned().collect::<Vec<_>>().join(", ")) } } }
            tr { th { "trusted values" } td { (basis_words(&data.scores.basis)) } }
            @for (t, tool) in plan.contest.tools.iter().enumerate() {
                @let id = &plan.tools[t];
                tr {
                    th { "tool " (tool.name) }
                    td {
                        @if tool.dir.is_some() {
                            "files " span.mono { (mccbuild_core::digest::hex(&id.files)[..16]) }
                            @if !id.host.is_empty() { "; host packages " span.mono { (id.host.replace('\n', ", ")) } }
                            "; version: " (data.tool_versions.get(t).cloned().flatten().unwrap_or_else(|| "none given (no VERSION file)".to_string()))
                        } @else { "imported from results files" }
                    }
                }
            }
        }
    }
}
