//! `mccbuild run`: executes the runs that are not in the store, records them, prints the
//! podiums; with `--diff`, instead, each changed tool against its previous version
//! (`super::diff`), the tool developer's one command after a change.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::Ordering;

use mccbuild_output::terminal::{TermStyle, podium_text_styled};

use mccbuild_core::Outcome;
use mccbuild_plan::manifest::ExecutorKind;
use mccbuild_store::LockWait;

use mccbuild_engine::execute::ExecSummary;
use mccbuild_engine::progress::{CliProgress, ProgressFormat, Tee, count};
use mccbuild_engine::session::{Filter, Noop, Opening, Session, machine_problems_of};

use mccbuild_engine::diff::{Against, DiffOptions, diff_versions};
use mccbuild_engine::error::DiffError;
use mccbuild_output::diff::diff_text_fitted;

use crate::cli::JudgeArgs;
use crate::error::Error;

#[expect(clippy::too_many_arguments)]
pub fn run(
    manifest: &Path,
    filter: &Filter,
    rerun: Option<&[Outcome]>,
    jobs: Option<usize>,
    json: bool,
    progress: ProgressFormat,
    no_wait: bool,
    diff: Option<&JudgeArgs>,
) -> Result<(), Error> {
    let wait = if no_wait {
        LockWait::Refuse
    } else {
        LockWait::Wait
    };
    let mut session = if filter.is_empty() && rerun.is_none() && diff.is_none() {
        match Session::open_or_recall(manifest, Some((wait, "mccbuild run")), !json)? {
            // Packing is due: the full command packs.
            Opening::Noop(noop)
                if mccbuild_store::pack::pack_after()
                    .is_some_and(|min| noop.remembered.loose >= min.max(1)) =>
            {
                (*noop).into_session()?
            }
            Opening::Noop(noop) => return remembered_noop(&noop, json),
            Opening::Session(session) => *session,
        }
    } else {
        Session::open_executing_and_warn(manifest, wait, "mccbuild run", filter)?
    };
    session.warn_instance_problems();
    for p in &session.machine_problems().0 {
        eprintln!("warning: {p}");
    }
    let mut selection = session.select(filter)?;
    if let Some(note) = session.empty_selection_note(filter, &selection) {
        eprintln!("note: {note}");
    }
    if let Some(outcomes) = rerun {
        selection = select_reruns(&mut session, &selection, outcomes);
    }
    session.store.check_writable()?;
    let jobs = jobs.unwrap_or(session.plan.contest.executor.jobs);
    let cancel = crate::signals::cancel_on_interrupt()?;
    let missing: Vec<usize> = selection
        .iter()
        .copied()
        .filter(|&i| session.is_to_execute(i))
        .collect();
    let mut shown = CliProgress::with_format(progress);
    // The store keeps the events of its last execution (docs/cache.md, `progress.jsonl`).
    // A no-op run leaves it as it is; a log that cannot be created only loses the log.
    let log = (!missing.is_empty())
        .then(|| std::fs::File::create(session.store.root().join("progress.jsonl")).ok())
        .flatten();
    let outcome = match log {
        Some(log) => {
            let mut kept = CliProgress::json_into(log);
            let mut both = Tee(&mut shown, &mut kept);
            session.execute(&selection, jobs, &mut both, &cancel)
        }
        _ => session.execute(&selection, jobs, &mut shown, &cancel),
    };
    outcome.record_error()?;
    if cancel.load(Ordering::SeqCst) {
        crate::signals::say(&format!(
            "interrupted: {} recorded; runs in flight were stopped and not recorded",
            count(outcome.executed, "run", "runs")
        ));
        if json {
            // Scripts get the counts whatever happened.
            let mut summary = serde_json::to_value(&outcome).unwrap_or_default();
            summary["interrupted"] = true.into();
            super::print_json(&summary)?;
        }
        return Err(Error::Interrupted);
    }
    session.set_aside_damaged_lines();
    session.pack_records();
    eprint!("{}", session.diagnostics_summary(&missing));
    let left_out = session.left_out(filter);
    if let Some(judge) = diff {
        crate::signals::say(&format!(
            "{} executed, {} cached, {} failed",
            outcome.executed, outcome.cached, outcome.failed
        ));
        let compared = compare_changed(&session, filter, &missing, judge, json);
        let left_out = left_out.len();
        session.end_of_command();
        // The runs' own failures first; then what the comparison found.
        return match (outcome.failed, left_out) {
            (0, 0) => compared,
            (0, n) => Err(Error::LeftOut(n)),
            (n, _) => Err(Error::RunsFailed(n)),
        };
    }
    if json {
        let mut summary = serde_json::to_value(&outcome).unwrap_or_default();
        if !left_out.is_empty() {
            summary["left_out"] = left_out
                .iter()
                .map(|l| {
                    serde_json::json!({
                        "model": l.model, "instance": l.instance, "examination": l.examination
                    })
                })
                .collect();
        }
        super::print_json(&summary)?;
    } else {
        crate::signals::say(&format!(
            "{} executed{}, {} cached, {} failed",
            outcome.executed,
            adopted_text(&outcome),
            outcome.cached,
            outcome.failed
        ));
        let report = session.podium_report();
        super::print_out(&podium_text_styled(
            &session.plan,
            &report,
            TermStyle::detect(),
        ))?;
    }
    let left_out = left_out.len();
    session.end_of_command();
    match (outcome.failed, left_out) {
        (0, 0) => Ok(()),
        (0, n) => Err(Error::LeftOut(n)),
        (n, _) => Err(Error::RunsFailed(n)),
    }
}

/// `, 67 recorded by jobs submitted earlier` when jobs of an earlier `run` were adopted.
fn adopted_text(outcome: &ExecSummary) -> String {
    match outcome.adopted {
        0 => String::new(),
        n => format!(", {n} recorded by jobs submitted earlier"),
    }
}

/// `mccbuild run --follow`: follows this Slurm contest's jobs still queued or running, until
/// they end, and submits nothing (docs/cli.md). Takes no lock: the `mccbuild run` that submits
/// may be running in another terminal.
pub fn follow(
    manifest: &Path,
    filter: &Filter,
    jobs: Option<usize>,
    json: bool,
    progress: ProgressFormat,
) -> Result<(), Error> {
    let mut session = Session::open_and_warn(manifest)?;
    if session.plan.contest.executor.kind != ExecutorKind::Slurm {
        return Err(Error::FollowNotSlurm {
            manifest: manifest.to_path_buf(),
        });
    }
    let selection = session.select(filter)?;
    let jobs = jobs.unwrap_or(session.plan.contest.executor.jobs);
    let cancel = crate::signals::cancel_on_interrupt()?;
    let mut shown = CliProgress::with_format(progress);
    let outcome = session.follow(&selection, jobs, &mut shown, &cancel);
    let interrupted = cancel.load(Ordering::SeqCst);
    if json {
        let mut summary = serde_json::to_value(&outcome).unwrap_or_default();
        if interrupted {
            summary["interrupted"] = true.into();
        }
        super::print_json(&summary)?;
    } else {
        crate::signals::say(&format!(
            "followed: {} recorded by the contest's jobs, {} cached, {} left to run, {} failed",
            outcome.adopted, outcome.cached, outcome.left, outcome.failed
        ));
    }
    if interrupted {
        crate::signals::say("stopped following; the jobs go on (nothing was cancelled)");
        return Err(Error::Interrupted);
    }
    match outcome.failed {
        0 => Ok(()),
        n => Err(Error::RunsFailed(n)),
    }
}

/// A no-op `run` remembered (docs/cache.md, "The remembered no-op"): every planned run is
/// stored, so what the full command would say is said without the plan or the index.
fn remembered_noop(noop: &Noop, json: bool) -> Result<(), Error> {
    for p in &machine_problems_of(&noop.contest).0 {
        eprintln!("warning: {p}");
    }
    noop.store.check_writable()?;
    let cached = noop.remembered.runs;
    if json {
        // As the full command writes it (through a JSON value: its keys in order).
        let summary = ExecSummary {
            cached,
            ..ExecSummary::default()
        };
        return super::print_json(&serde_json::to_value(&summary).unwrap_or_default());
    }
    crate::signals::say(&format!("0 executed, {cached} cached, 0 failed"));
    super::print_out(&noop.podium_text(TermStyle::detect()).unwrap_or_default())
}

/// `run --rerun`: of the selected runs, those of the store with one of `outcomes` (any if
/// empty) are marked to be executed again, and only they are executed; says how many, and how
/// many selected runs are not in the store (plain `mccbuild run` executes those).
fn select_reruns(session: &mut Session, selection: &[usize], outcomes: &[Outcome]) -> Vec<usize> {
    let redo = session.mark_for_rerun(selection, outcomes);
    let what = if outcomes.is_empty() {
        String::new()
    } else {
        let titles: Vec<&str> = outcomes.iter().map(|o| o.title()).collect();
        format!(" ({})", titles.join(", "))
    };
    crate::signals::say(&format!(
        "rerun: {}{what} of the store to execute again; each record stays until its new one replaces it",
        count(redo.len(), "run", "runs")
    ));
    let absent = selection.iter().filter(|&&i| !session.is_stored(i)).count();
    if absent > 0 {
        crate::signals::say(&format!(
            "rerun: {} of the selection not in the store left out (`mccbuild run` without --rerun executes them)",
            count(absent, "run", "runs")
        ));
    }
    redo
}

/// `run --diff`: each tool of the filter's `--tool`s (or each tool with runs in `executed`)
/// against its previous version in the store, printed as `diff --tool` prints it (JSON: one
/// object by tool); a tool with no earlier version is said on stderr. Fails as `diff
/// --fail-on` does when a comparison finds a regression the judge names.
fn compare_changed(
    session: &Session,
    filter: &Filter,
    executed: &[usize],
    judge: &JudgeArgs,
    json: bool,
) -> Result<(), Error> {
    let plan = &session.plan;
    let mut tools: Vec<String> = if filter.tools.is_empty() {
        let mut changed: Vec<usize> = executed.iter().map(|&i| plan.runs[i].tool).collect();
        changed.sort_unstable();
        changed.dedup();
        changed
            .into_iter()
            .map(|t| plan.contest.tools[t].name.clone())
            .collect()
    } else {
        filter.tools.clone()
    };
    tools.dedup();
    let options = DiffOptions {
        slower_factor: judge.slower,
    };
    let mut reports = BTreeMap::new();
    for tool in &tools {
        match diff_versions(session, tool, &Against::Previous, options) {
            Ok(report) => {
                reports.insert(tool.clone(), report);
            }
            Err(DiffError::NoEarlierVersion { .. }) => crate::signals::say(&format!(
                "{tool}: no earlier version in the store to compare with (the next change will be compared with this one)"
            )),
            Err(e) => return Err(e.into()),
        }
    }
    if tools.is_empty() {
        crate::signals::say("nothing executed: no tool changed, nothing to compare");
    }
    if json {
        super::print_json(&reports)?;
    }
    let mut found = Vec::new();
    for (tool, report) in &reports {
        if !json {
            super::print_out(&diff_text_fitted(report, TermStyle::detect().width))?;
        }
        if let Err(Error::Regressions(what)) = super::diff::judged(report, judge) {
            found.push(format!("{tool}: {what}"));
        }
    }
    if found.is_empty() {
        Ok(())
    } else {
        Err(Error::Regressions(found.join("; ")))
    }
}
