//! `mccbuild qualify`'s checks: the MCC's qualification phase. Each tool runs every examination
//! it takes part in on the first instance of each known model (through the normal plan, store
//! and executor: the runs are cached like any other), then every run is checked against the
//! protocol (`mccbuild_core::conformance`). A tool qualifies when no run has a fault; each fault
//! is named under the run that shows it, with how to reproduce that run by hand. The report, its
//! text and its page are `mccbuild_output::qualify`'s.

use std::collections::BTreeMap;

use mccbuild_core::conformance::{Check, RunOutput, check_run};
use mccbuild_core::protocol::Expected;
use mccbuild_core::{Response, hex};
use mccbuild_output::qualify::{FaultyRun, Problem, QualifyReport, RunLine, ToolVerdict};
use mccbuild_plan::RunOrigin;
use mccbuild_plan::manifest::InstanceSource;
use mccbuild_rules::edition::TimeLimit;

use crate::error::SelectError;
use crate::session::{Filter, Session};

/// The runs of the qualification: each tool, each examination it takes part in, the first
/// instance of each model that is not new (the edition's new-model kind: `surprise`), narrowed
/// by `filter`. Runs imported from results files are not the tool's own runs: left out.
pub fn qualification_runs(session: &Session, filter: &Filter) -> Result<Vec<usize>, SelectError> {
    let plan = &session.plan;
    let new_kind = plan.contest.edition.new_model_kind;
    let first_instances: Vec<usize> = plan
        .models
        .iter()
        .filter(|m| Some(m.kind) != new_kind)
        .filter_map(|m| m.instances.first().copied())
        .collect();
    Ok(session
        .select(filter)?
        .into_iter()
        .filter(|&i| {
            let run = &plan.runs[i];
            run.origin == RunOrigin::Executed
                && first_instances.contains(&plan.exam_instances[run.exam_instance].instance)
        })
        .collect())
}

/// Every run of `selection` checked against the protocol (`mccbuild_core::conformance`), by
/// tool: a tool qualifies when none of its runs has a fault.
pub fn check_runs(session: &Session, selection: &[usize]) -> QualifyReport {
    let plan = &session.plan;
    let mut tools: BTreeMap<String, ToolVerdict> = BTreeMap::new();
    for &i in selection {
        let run = &plan.runs[i];
        let tool = &plan.contest.tools[run.tool];
        let ei = &plan.exam_instances[run.exam_instance];
        let exam = &plan.contest.edition.examinations[ei.exam];
        let instance = &plan.instances[ei.instance];
        let verdict = tools.entry(tool.name.clone()).or_default();
        verdict.runs += 1;
        let faulty = |problems: Vec<Problem>| FaultyRun {
            instance: instance.name.clone(),
            examination: exam.name.clone(),
            key: run.key.hex(),
            record: session
                .index
                .record_location(&session.store, &run.key)
                .display()
                .to_string(),
            reproduce: reproduce(session, i),
            problems,
        };
        let record = match session.index.read(&session.store, &run.key) {
            Ok(Some((record, _))) => record,
            Ok(None) => {
                verdict.faulty_runs.push(faulty(vec![Problem {
                    check: Check::NotRun,
                    detail: "the run could not be carried out (see the messages above)".into(),
                }]));
                continue;
            }
            Err(corrupt) => {
                verdict.faulty_runs.push(faulty(vec![Problem {
                    check: Check::NotRun,
                    detail: format!("its record cannot be read: {}", corrupt.reason),
                }]));
                continue;
            }
        };
        match record.response {
            Response::Answered => verdict.answered += 1,
            Response::CannotCompute => verdict.cannot_compute += 1,
            Response::DoNotCompete => verdict.do_not_compete += 1,
        }
        let m = record.measurement;
        verdict.cpu_time_s += m.cpu_time_s;
        verdict.max_peak_memory_mb = verdict.max_peak_memory_mb.max(m.peak_memory_mb());
        verdict.run_list.push(RunLine {
            instance: instance.name.clone(),
            examination: exam.name.clone(),
            outcome: record.describe(),
            termination: m.termination,
            cpu_time_s: m.cpu_time_s,
            wall_time_s: m.wall_time_s,
            peak_memory_mb: m.peak_memory_mb(),
        });
        let findings = check_run(
            RunOutput {
                stdout: &record.stdout.text,
                stdout_complete: !record.stdout.truncated,
                stderr: &record.stderr.text,
                termination: m.termination,
                response: record.response,
            },
            Expected {
                examination: &exam.name,
                instance: &instance.name,
                form: exam.answers,
                kind: exam.value,
                ids: &ei.ids,
            },
        );
        if !findings.is_empty() {
            verdict.faulty_runs.push(faulty(
                findings
                    .into_iter()
                    .map(|f| Problem {
                        check: f.check,
                        detail: f.detail,
                    })
                    .collect(),
            ));
        }
    }
    for verdict in tools.values_mut() {
        verdict.problems = verdict.faulty_runs.iter().map(|r| r.problems.len()).sum();
        verdict.qualified = verdict.problems == 0;
    }
    QualifyReport { tools }
}

/// A shell command that runs the tool on the instance as the run did: in a scratch copy of the
/// instance, as the run's user, with the run's environment only (BenchKit's variables, BK_TOOL
/// and BK_BIN_PATH as the run had them, the run's PATH, HOME, TMPDIR and LANG), and its time
/// limit (`timeout` for wall-clock time, `prlimit --cpu` for CPU time, with the run's safety
/// net of 2 x + 30 s of wall-clock time). Outside the sandbox: no isolation, and the memory limit
/// is only told to the tool (BK_MEMORY_CONFINEMENT), not enforced.
fn reproduce(session: &Session, i: usize) -> String {
    let plan = &session.plan;
    let run = &plan.runs[i];
    let tool = &plan.contest.tools[run.tool];
    let instance = plan.instance_of(run);
    let tool_dir = tool.dir.clone().unwrap_or_default();
    let bin_path = if tool.setup.is_some() {
        session
            .store
            .tools_dir()
            .join(hex(&plan.tools[run.tool].setup_digest()))
            .join("bin")
    } else {
        tool_dir.clone()
    };
    let unpack = match &instance.source {
        InstanceSource::Archive(path) => {
            format!(
                "tar -xzf {} --strip-components=1",
                quote(&path.display().to_string())
            )
        }
        other => format!("cp -r {}/. .", quote(&other.path().display().to_string())),
    };
    // The run's user, where mccbuild changes users (it runs as root): the scratch folder is
    // theirs.
    let (own, as_user) = match mccbuild_exec::run_user::resolve(tool.user) {
        Ok(Some(_)) => (
            format!(" && chown -R {0}: .", tool.user.name()),
            format!("runuser -u {} -- ", tool.user.name()),
        ),
        _ => (String::new(), String::new()),
    };
    let t = run.limits.time_s;
    let limit = match run.limits.time {
        TimeLimit::Wall => format!("timeout -s KILL {t} "),
        TimeLimit::Cpu => format!("timeout -s KILL {} prlimit --cpu={t} ", 2 * t + 30),
        TimeLimit::Both => format!("timeout -s KILL {t} prlimit --cpu={t} "),
    };
    format!(
        "cd \"$(mktemp -d)\" && {unpack} && mkdir -p home tmp result{own} && {as_user}env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=\"$PWD/home\" TMPDIR=\"$PWD/tmp\" LANG=C.UTF-8 BK_INPUT={} BK_EXAMINATION={} BK_TOOL={} BK_TIME_CONFINEMENT={t} BK_MEMORY_CONFINEMENT={} BK_BIN_PATH={}/ BK_LOG_FILE=\"$PWD/BenchKit.log\" BK_RESULT_DIR=\"$PWD/result\" {limit}{}",
        quote(&instance.name),
        quote(plan.exam_name(run)),
        quote(&tool.bk_tool),
        run.limits.memory_mb,
        quote(&bin_path.display().to_string()),
        quote(&tool_dir.join(&tool.entry).display().to_string()),
    )
}

/// A word for sh: as is when it is plain, else in single quotes.
fn quote(word: &str) -> String {
    if !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+=:,".contains(&b))
    {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}
