//! Which planned runs a command is about (`--tool`, `--model`, `--examination`), and `plan`'s
//! counts of them.

use mccbuild_plan::plan::LeftOut;

use super::{Counts, Filter, PlanSummary, Session};
use crate::error::SelectError;

impl Session {
    /// Indices of the plan's runs that pass `filter`.
    pub fn select(&self, filter: &Filter) -> Result<Vec<usize>, SelectError> {
        let contest = &self.plan.contest;
        for t in &filter.tools {
            if contest.tool(t).is_none() {
                return Err(SelectError::NoTool {
                    tool: t.clone(),
                    manifest: contest.manifest_path.clone(),
                });
            }
        }
        for m in &filter.models {
            if !self.plan.models.iter().any(|pm| &pm.name == m) {
                return Err(SelectError::NoModel {
                    model: m.clone(),
                    manifest: contest.manifest_path.clone(),
                });
            }
        }
        for e in &filter.examinations {
            if contest.edition.examination(e).is_none() && contest.edition.category(e).is_none() {
                return Err(SelectError::NoExamination {
                    examination: e.clone(),
                    edition: contest.edition.info.name.clone(),
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
