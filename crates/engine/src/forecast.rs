//! The runs' expected times from the store, and the contest's forecast on a cluster
//! (`mccbuild plan --forecast`): each model's job (rule E-5.1) with its runs longest first on
//! its slots, the jobs longest first on the nodes ([`mccbuild_exec::forecast`]). The Slurm
//! executor submits in the same order.

use std::collections::HashMap;

use mccbuild_exec::forecast::{ForecastError, job_duration, longest_first, schedule};
use mccbuild_rules::execution::machine_groups;
use serde::Serialize;

use crate::session::Session;

/// The expected wall-clock seconds of some runs, and where each came from.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunTimes {
    /// Per run asked about, in the order asked.
    pub seconds: Vec<f64>,
    /// Runs whose record is in the store: their own time.
    pub stored: usize,
    /// Runs not in the store: the median of the stored runs of the same tool and examination.
    pub estimated: usize,
    /// Runs not in the store whose tool and examination have no stored run: counted as 0 s.
    pub unknown: usize,
}

/// One model's job in a forecast, in submission order.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ForecastJob {
    pub model: String,
    pub runs: usize,
    pub cpus: u32,
    /// Runs the job runs at a time.
    pub slots: usize,
    /// Its expected duration.
    pub seconds: f64,
    /// When it starts, from the contest's start, and on which node (1-based).
    pub start_s: f64,
    pub node: usize,
}

/// `mccbuild plan --forecast`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Forecast {
    pub nodes: usize,
    /// Cores of each node.
    pub cores: u32,
    /// Seconds added to each run (Slurm's and mccbuild's cost per run).
    pub run_overhead_s: f64,
    /// Seconds added to each job (its start before its first run and end after its last).
    pub job_overhead_s: f64,
    pub makespan_s: f64,
    pub runs: usize,
    pub stored: usize,
    pub estimated: usize,
    pub unknown: usize,
    /// The models' jobs in the order to submit them (longest first).
    pub jobs: Vec<ForecastJob>,
}

/// The median of some times (the mean of the middle two for an even count).
fn median(times: &mut [f64]) -> Option<f64> {
    if times.is_empty() {
        return None;
    }
    times.sort_by(|a, b| a.total_cmp(b));
    let n = times.len();
    Some(if n % 2 == 1 {
        times[n / 2]
    } else {
        (times[n / 2 - 1] + times[n / 2]) / 2.0
    })
}

/// A model's job: its runs (plan indices) longest first, their times, CPUs and slots.
pub(crate) struct PlannedJob {
    pub model: usize,
    pub runs: Vec<usize>,
    pub seconds: Vec<f64>,
    pub cpus: u32,
    pub slots: usize,
}

impl PlannedJob {
    pub fn duration(&self) -> f64 {
        job_duration(&self.seconds, self.slots)
    }
}

impl Session {
    /// The expected wall-clock seconds of `runs`: a stored run's own; otherwise the median of
    /// the stored runs of its tool and examination; otherwise 0 (unknown).
    pub fn expected_times(&self, runs: &[usize]) -> RunTimes {
        let group = |i: usize| {
            let run = &self.plan.runs[i];
            (run.tool, self.plan.exam_instances[run.exam_instance].exam)
        };
        let own = |i: usize| {
            self.stored[i]
                .then(|| self.index.get(&self.plan.runs[i].key))
                .flatten()
                .map(|s| s.measurement.wall_time_s)
        };
        let mut history: HashMap<_, Vec<f64>> = HashMap::new();
        for &i in runs {
            if own(i).is_none() {
                history.entry(group(i)).or_default();
            }
        }
        if !history.is_empty() {
            for i in 0..self.plan.runs.len() {
                if let (Some(times), Some(t)) = (history.get_mut(&group(i)), own(i)) {
                    times.push(t);
                }
            }
        }
        let medians: HashMap<_, Option<f64>> = history
            .into_iter()
            .map(|(g, mut times)| (g, median(&mut times)))
            .collect();
        let mut out = RunTimes::default();
        for &i in runs {
            let seconds = match own(i) {
                Some(t) => {
                    out.stored += 1;
                    t
                }
                None => match medians.get(&group(i)).copied().flatten() {
                    Some(t) => {
                        out.estimated += 1;
                        t
                    }
                    None => {
                        out.unknown += 1;
                        0.0
                    }
                },
            };
            out.seconds.push(seconds);
        }
        out
    }

    /// The models' jobs of `runs` (rule E-5.1), longest first, each with its runs longest first
    /// (as the Slurm executor submits them), from `times` (one per run of `runs`), plus
    /// `overhead` seconds per run.
    pub(crate) fn planned_jobs(
        &self,
        runs: &[usize],
        times: &[f64],
        jobs: usize,
        overhead: f64,
    ) -> Vec<PlannedJob> {
        let contest = &self.plan.contest;
        let by_model = machine_groups(
            runs.iter()
                .zip(times)
                .map(|(&i, &t)| (self.plan.instance_of(&self.plan.runs[i]).model, (i, t))),
        );
        let mut planned: Vec<PlannedJob> = by_model
            .into_iter()
            .map(|(model, runs)| {
                let seconds: Vec<f64> = runs.iter().map(|r| r.1 + overhead).collect();
                let order = longest_first(&seconds);
                let most = runs
                    .iter()
                    .map(|r| contest.tools[self.plan.runs[r.0].tool].cores)
                    .max()
                    .unwrap_or(1)
                    .max(1);
                let cpus = contest
                    .executor
                    .slurm
                    .cpus_per_job
                    .unwrap_or_else(|| most.saturating_mul(jobs.max(1) as u32));
                PlannedJob {
                    model,
                    runs: order.iter().map(|&k| runs[k].0).collect(),
                    seconds: order.iter().map(|&k| seconds[k]).collect(),
                    cpus,
                    slots: (cpus / most).max(1) as usize,
                }
            })
            .collect();
        let durations: Vec<f64> = planned.iter().map(PlannedJob::duration).collect();
        let order = longest_first(&durations);
        let mut slots: Vec<Option<PlannedJob>> = planned.drain(..).map(Some).collect();
        order.iter().filter_map(|&k| slots[k].take()).collect()
    }

    /// The forecast of `selection` on `nodes` nodes of `cores` cores (default: the CPUs of the
    /// largest job, so one job per node at a time), `jobs` runs at a time per job (as `run
    /// --jobs`), with `overhead.0` seconds added to each run and `overhead.1` to each job.
    pub fn forecast(
        &self,
        selection: &[usize],
        nodes: usize,
        cores: Option<u32>,
        jobs: usize,
        (overhead, job_overhead): (f64, f64),
    ) -> Result<Forecast, ForecastError> {
        let times = self.expected_times(selection);
        let planned = self.planned_jobs(selection, &times.seconds, jobs, overhead);
        let cores = cores.unwrap_or_else(|| planned.iter().map(|j| j.cpus).max().unwrap_or(1));
        let loads: Vec<(f64, u32)> = planned
            .iter()
            .map(|j| (j.duration() + job_overhead, j.cpus))
            .collect();
        let order: Vec<usize> = (0..loads.len()).collect();
        let placed = schedule(&loads, &order, nodes, cores)?;
        Ok(Forecast {
            nodes,
            cores,
            run_overhead_s: overhead,
            job_overhead_s: job_overhead,
            makespan_s: placed.makespan,
            runs: selection.len(),
            stored: times.stored,
            estimated: times.estimated,
            unknown: times.unknown,
            jobs: planned
                .iter()
                .zip(&placed.jobs)
                .map(|(j, p)| ForecastJob {
                    model: self.plan.models[j.model].name.clone(),
                    runs: j.runs.len(),
                    cpus: j.cpus,
                    slots: j.slots,
                    seconds: p.end - p.start,
                    start_s: p.start,
                    node: p.node + 1,
                })
                .collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::median;

    #[test]
    fn the_median_of_odd_and_even_counts() {
        assert_eq!(median(&mut []), None);
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), Some(2.5));
    }
}
