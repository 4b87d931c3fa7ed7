//! How long a contest takes on a cluster, and in which order to submit its models: pure
//! functions over the runs' expected times, used by `mccbuild plan --forecast` and by the Slurm
//! executor's submission order.
//!
//! The model of execution is the Slurm executor's (docs/execution.md): rule E-5.1 puts all runs
//! of a model in one job on one node; a job asks for `cpus` cores and runs its runs in its key
//! list's order, `slots` at a time (each next run as soon as one ends); a node runs as many
//! jobs at once as its cores hold; a job waiting for cores starts as soon as some node has them
//! (queued jobs in submission order, a later one first when only it fits).

use std::cmp::Ordering;

/// One model's job for the forecast.
#[derive(Clone, Debug, PartialEq)]
pub struct JobLoad {
    /// The expected wall-clock seconds of its runs, in the order the job runs them.
    pub runs: Vec<f64>,
    /// Runs at a time (the job's CPUs over the most cores one of its runs takes).
    pub slots: usize,
    /// CPUs the job asks for.
    pub cpus: u32,
}

/// Where and when a job runs in a [`Schedule`].
#[derive(Clone, Debug, PartialEq)]
pub struct Placed {
    pub start: f64,
    pub end: f64,
    /// The node's index (0-based).
    pub node: usize,
}

/// The forecast: each job's place (in the jobs' order as given) and the makespan.
#[derive(Clone, Debug, PartialEq)]
pub struct Schedule {
    pub jobs: Vec<Placed>,
    pub makespan: f64,
}

/// Why jobs cannot be scheduled.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ForecastError {
    #[error("no node to run on (the cluster has 0 nodes or 0 cores)")]
    NoNode,
    #[error("job {job} asks for {cpus} CPUs, more than a node's {cores} cores")]
    TooBig { job: usize, cpus: u32, cores: u32 },
}

/// The order in which the runs of one job are best run: longest first (LPT), the order kept
/// among equal times. Returns indices into `runs`.
pub fn longest_first(runs: &[f64]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..runs.len()).collect();
    order.sort_by(|&a, &b| runs[b].partial_cmp(&runs[a]).unwrap_or(Ordering::Equal));
    order
}

/// How long a job takes: its runs in their order, each started on the first of `slots` to be
/// free (as the job's batch script starts them).
pub fn job_duration(runs: &[f64], slots: usize) -> f64 {
    let mut free = vec![0.0_f64; slots.max(1)];
    for &t in runs {
        let first = first_free(&free);
        free[first] += t.max(0.0);
    }
    free.iter().copied().fold(0.0, f64::max)
}

fn first_free(free: &[f64]) -> usize {
    let mut best = 0;
    for (i, &f) in free.iter().enumerate() {
        if f < free[best] {
            best = i;
        }
    }
    best
}

/// The order to submit jobs of these durations in: longest first (LPT), the given order kept
/// among equal durations. A long job submitted last would end the contest alone.
pub fn submission_order(durations: &[f64]) -> Vec<usize> {
    longest_first(durations)
}

/// The schedule of jobs (each `(duration, cpus)`) submitted in `order` on `nodes` nodes of
/// `cores` cores each: at each moment, the queued jobs are started in order on the first node
/// with enough free cores (a later job starts first when only it fits), and time moves to the
/// next job's end. The positions in the result are those of `jobs`.
pub fn schedule(
    jobs: &[(f64, u32)],
    order: &[usize],
    nodes: usize,
    cores: u32,
) -> Result<Schedule, ForecastError> {
    if nodes == 0 || cores == 0 {
        return Err(ForecastError::NoNode);
    }
    if let Some(&job) = order.iter().find(|&&j| jobs[j].1 > cores) {
        return Err(ForecastError::TooBig {
            job,
            cpus: jobs[job].1,
            cores,
        });
    }
    let mut placed: Vec<Option<Placed>> = vec![None; jobs.len()];
    let mut free = vec![cores; nodes];
    // Jobs running: (end, node, cpus).
    let mut running: Vec<(f64, usize, u32)> = Vec::new();
    let mut queue: Vec<usize> = order.to_vec();
    let mut now = 0.0_f64;
    let mut makespan = 0.0_f64;
    while !queue.is_empty() {
        queue.retain(|&j| {
            let (duration, cpus) = jobs[j];
            match free.iter().position(|&f| f >= cpus) {
                Some(node) => {
                    free[node] -= cpus;
                    let end = now + duration.max(0.0);
                    running.push((end, node, cpus));
                    makespan = makespan.max(end);
                    placed[j] = Some(Placed {
                        start: now,
                        end,
                        node,
                    });
                    false
                }
                None => true,
            }
        });
        if queue.is_empty() {
            break;
        }
        // The next end frees cores (some job runs: every job fits an empty node).
        if running.is_empty() {
            break;
        }
        let next = running.iter().map(|r| r.0).fold(f64::INFINITY, f64::min);
        now = next;
        running.retain(|&(end, node, cpus)| {
            if end <= now {
                free[node] += cpus;
                false
            } else {
                true
            }
        });
    }
    Ok(Schedule {
        jobs: placed
            .into_iter()
            .map(|p| {
                p.unwrap_or(Placed {
                    start: 0.0,
                    end: 0.0,
                    node: 0,
                })
            })
            .collect(),
        makespan,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_runs_its_runs_in_order_on_its_slots() {
        // Runs 3, 1, 1, 1 on 2 slots: slot A takes 3; slot B takes 1, 1, 1 (ends at 3).
        assert_eq!(job_duration(&[3.0, 1.0, 1.0, 1.0], 2), 3.0);
        // In the order 1, 1, 1, 3: A 1 (0-1), B 1 (0-1), A 1 (1-2), B 3 (1-4): 4.
        assert_eq!(job_duration(&[1.0, 1.0, 1.0, 3.0], 2), 4.0);
        // One slot: the sum; no runs: 0; 0 slots taken as 1.
        assert_eq!(job_duration(&[2.0, 0.5], 1), 2.5);
        assert_eq!(job_duration(&[], 4), 0.0);
        assert_eq!(job_duration(&[2.0, 0.5], 0), 2.5);
    }

    #[test]
    fn longest_first_keeps_the_order_among_equals() {
        assert_eq!(longest_first(&[1.0, 3.0, 2.0, 3.0]), vec![1, 3, 2, 0]);
        assert_eq!(submission_order(&[]), Vec::<usize>::new());
    }

    #[test]
    fn longest_first_on_two_nodes_beats_the_given_order() {
        // Jobs of 2, 2, 4 (1 CPU each) on 2 nodes of 1 core.
        let jobs = [(2.0, 1), (2.0, 1), (4.0, 1)];
        // As given: node 0 runs 2 then 4 (ends at 6), node 1 runs 2: makespan 6.
        let given = schedule(&jobs, &[0, 1, 2], 2, 1).unwrap();
        assert_eq!(given.makespan, 6.0);
        assert_eq!(
            given.jobs[2],
            Placed {
                start: 2.0,
                end: 6.0,
                node: 0
            }
        );
        // Longest first: 4 on node 0; 2 then 2 on node 1: makespan 4.
        let order = submission_order(&[2.0, 2.0, 4.0]);
        assert_eq!(order, vec![2, 0, 1]);
        let lpt = schedule(&jobs, &order, 2, 1).unwrap();
        assert_eq!(lpt.makespan, 4.0);
        assert_eq!(lpt.jobs[1].start, 2.0);
        assert_eq!(lpt.jobs[1].node, 1);
    }

    #[test]
    fn a_node_runs_as_many_jobs_as_its_cores_hold_and_a_small_job_goes_first() {
        // One node of 4 cores; jobs: A 3 s on 2 CPUs, B 5 s on 4 CPUs, C 1 s on 2 CPUs, in
        // that order. At 0: A starts (2 left), B does not fit, C fits and starts (0 left).
        // At 1 C ends (2 free: B still waits), at 3 A ends (4 free): B runs 3-8.
        let jobs = [(3.0, 2), (5.0, 4), (1.0, 2)];
        let s = schedule(&jobs, &[0, 1, 2], 1, 4).unwrap();
        assert_eq!(
            (s.jobs[0].start, s.jobs[1].start, s.jobs[2].start),
            (0.0, 3.0, 0.0)
        );
        assert_eq!(s.makespan, 8.0);
    }

    #[test]
    fn jobs_that_fit_no_node_are_refused() {
        assert_eq!(
            schedule(&[(1.0, 8)], &[0], 2, 4),
            Err(ForecastError::TooBig {
                job: 0,
                cpus: 8,
                cores: 4
            })
        );
        assert_eq!(
            schedule(&[(1.0, 1)], &[0], 0, 4),
            Err(ForecastError::NoNode)
        );
        // Nothing to run: makespan 0.
        assert_eq!(schedule(&[], &[], 3, 4).unwrap().makespan, 0.0);
    }
}
