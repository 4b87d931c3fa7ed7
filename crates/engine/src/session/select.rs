//! Which planned runs a command is about (`--tool`, `--model`, `--examination`), and `plan`'s
//! counts of them.

use mccbuild_core::names::did_you_mean;
use mccbuild_plan::manifest::Contest;
use mccbuild_plan::plan::LeftOut;

use super::{Counts, Filter, PlanSummary, Session};
use crate::error::SelectError;

/// The tools and the examinations or categories of `filter` that `contest` does not have, with
/// the nearest valid name and the list of them. Known from the manifest and the rules alone:
/// checked before a command waits for the store (the models need the plan: [`Session::select`]).
pub fn check_names(contest: &Contest, filter: &Filter) -> Result<(), SelectError> {
    for t in &filter.tools {
        if contest.tool(t).is_none() {
            return Err(SelectError::NoTool {
                tool: t.clone(),
                manifest: contest.manifest_path.clone(),
                hint: did_you_mean(t, contest.tools.iter().map(|t| t.name.as_str()), "tools"),
            });
        }
    }
    let edition = &contest.edition;
    for e in &filter.examinations {
        if edition.examination(e).is_none() && edition.category(e).is_none() {
            let names = edition.examinations.iter().map(|x| x.name.as_str());
            let names = names.chain(edition.categories.iter().map(|c| c.name.as_str()));
            return Err(SelectError::NoExamination {
                examination: e.clone(),
                edition: edition.info.name.clone(),
                hint: did_you_mean(e, names, "examinations and categories"),
            });
        }
    }
    Ok(())
}

impl Session {
    /// Indices of the plan's runs that pass `filter`.
    pub fn select(&self, filter: &Filter) -> Result<Vec<usize>, SelectError> {
        let contest = &self.plan.contest;
        check_names(contest, filter)?;
        for m in &filter.models {
            if !self.plan.models.iter().any(|pm| &pm.name == m) {
                return Err(SelectError::NoModel {
                    model: m.clone(),
                    manifest: contest.manifest_path.clone(),
                    hint: did_you_mean(
                        m,
                        self.plan.models.iter().map(|m| m.name.as_str()),
                        "models",
                    ),
                });
            }
        }
        if filter.is_empty() {
            return Ok((0..self.plan.runs.len()).collect());
        }
        let edition = &contest.edition;
        Ok(self
            .plan
            .runs
            .iter()
            .enumerate()
            .filter(|(_, run)| {
                let ei = &self.plan.exam_instances[run.exam_instance];
                let exam = &edition.examinations[ei.exam];
                let model = &self.plan.models[self.plan.instances[ei.instance].model].name;
                (filter.tools.is_empty() || filter.tools.contains(&contest.tools[run.tool].name))
                    && (filter.models.is_empty() || filter.models.contains(model))
                    && (filter.examinations.is_empty()
                        || filter.examinations.iter().any(|e| {
                            *e == exam.name || *e == edition.categories[exam.category].name
                        }))
            })
            .map(|(i, _)| i)
            .collect())
    }

    /// Why a filter that names only what the contest has selects no run, in words (`None` when
    /// the selection is not empty or there is no filter): a named tool that takes part in none
    /// of the named examinations or categories, with those it takes part in.
    pub fn empty_selection_note(&self, filter: &Filter, selection: &[usize]) -> Option<String> {
        if !selection.is_empty() || filter.is_empty() {
            return None;
        }
        let contest = &self.plan.contest;
        let edition = &contest.edition;
        let named = |exam: usize| {
            let x = &edition.examinations[exam];
            filter.examinations.is_empty()
                || filter
                    .examinations
                    .iter()
                    .any(|e| *e == x.name || *e == edition.categories[x.category].name)
        };
        let mut absent = Vec::new();
        for t in &filter.tools {
            let Some(tool) = contest.tool(t).map(|i| &contest.tools[i]) else {
                continue;
            };
            if !tool.examinations.iter().any(|&x| named(x)) {
                let takes: Vec<&str> = tool
                    .examinations
                    .iter()
                    .map(|&x| edition.examinations[x].name.as_str())
                    .collect();
                absent.push(format!(
                    "{t} does not take part in {} (it takes part in: {}; its `examinations` in {})",
                    filter.examinations.join(", "),
                    match takes.is_empty() {
                        true => "nothing".to_string(),
                        false => takes.join(", "),
                    },
                    contest.manifest_path.display()
                ));
            }
        }
        Some(match absent.is_empty() {
            true => "the selection has no run: no instance of the named models has the named \
                     examinations for the named tools (`mccbuild plan --json` lists the runs)"
                .to_string(),
            false => format!("the selection has no run: {}", absent.join("; ")),
        })
    }

    /// `mccbuild plan`'s counts of `selection`: in all and by tool, stored and to run.
    pub fn summary(&self, selection: &[usize]) -> PlanSummary {
        // Counted by tool number, then named.
        let mut by_tool = vec![Counts::default(); self.plan.contest.tools.len()];
        for &i in selection {
            let counts = &mut by_tool[self.plan.runs[i].tool];
            counts.runs += 1;
            match self.is_stored(i) {
                true => counts.cached += 1,
                false => counts.to_run += 1,
            }
        }
        let mut summary = PlanSummary::default();
        for (tool, counts) in self.plan.contest.tools.iter().zip(by_tool) {
            summary.runs += counts.runs;
            summary.cached += counts.cached;
            summary.to_run += counts.to_run;
            let listed = summary.by_tool.entry(tool.name.clone()).or_default();
            listed.runs += counts.runs;
            listed.cached += counts.cached;
            listed.to_run += counts.to_run;
        }
        summary
    }

    /// What the plan left out (problems with instances' files) among what `filter` asks for.
    pub fn left_out(&self, filter: &Filter) -> Vec<&LeftOut> {
        let contest = &self.plan.contest;
        let edition = &contest.edition;
        self.plan
            .left_out
            .iter()
            .filter(|l| filter.models.is_empty() || filter.models.contains(&l.model))
            .filter(|l| {
                let Some(exam) = l
                    .examination
                    .as_deref()
                    .and_then(|e| edition.examination(e))
                else {
                    return true;
                };
                let category = &edition.categories[edition.examinations[exam].category].name;
                (filter.examinations.is_empty()
                    || filter
                        .examinations
                        .iter()
                        .any(|e| *e == l.examination.as_deref().unwrap_or("") || e == category))
                    && (filter.tools.is_empty()
                        || filter.tools.iter().any(|t| {
                            contest.tool(t).is_some_and(|tool| {
                                contest.tools[tool].examinations.contains(&exam)
                            })
                        }))
            })
            .collect()
    }
}
