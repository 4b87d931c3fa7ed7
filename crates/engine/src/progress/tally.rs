//! The truth of an execution as its events tell it ([`Tally`]: runs done, the runs really
//! running, failures) and the ETA from the runs' own history ([`Eta`]).

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

/// How often a run's end computes the ETA again.
const ETA_EVERY: Duration = Duration::from_secs(1);

use super::{RunInfo, count};

/// What one group of runs (a tool on an examination) takes, smoothed.
#[derive(Clone, Copy, Debug)]
struct Estimate {
    /// Exponentially smoothed wall-clock seconds (recent runs weigh 30%).
    mean: f64,
    min: f64,
    max: f64,
    samples: usize,
}

impl Estimate {
    fn add(&mut self, seconds: f64) {
        if self.samples == 0 {
            *self = Estimate {
                mean: seconds,
                min: seconds,
                max: seconds,
                samples: 1,
            };
        } else {
            self.mean = 0.3 * seconds + 0.7 * self.mean;
            self.min = self.min.min(seconds);
            self.max = self.max.max(seconds);
            self.samples += 1;
        }
    }

    fn of(samples: &[f64]) -> Option<Estimate> {
        let mut e = Estimate {
            mean: 0.0,
            min: 0.0,
            max: 0.0,
            samples: 0,
        };
        for &s in samples {
            e.add(s);
        }
        (e.samples > 0).then_some(e)
    }
}

/// The ETA: seconds left, and a range when the estimate is unsure.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Eta {
    pub seconds: f64,
    pub low: f64,
    pub high: f64,
}

impl Eta {
    /// `1m20s`, or `40s–2m10s` when the range is wide (few runs seen, or times that vary).
    pub fn text(&self) -> String {
        if self.high - self.low > 0.3 * self.seconds.max(1.0) {
            format!("{}–{}", duration(self.low), duration(self.high))
        } else {
            duration(self.seconds)
        }
    }
}

/// `45s`, `3m05s`, `1h02m`.
pub fn duration(seconds: f64) -> String {
    let s = seconds.max(0.0).round() as u64;
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

/// The truth of an execution, as its events tell it.
#[derive(Debug, Default)]
pub struct Tally {
    pub total: usize,
    pub done: usize,
    pub failed: usize,
    /// The runs started and not finished, with when they started.
    running: BTreeMap<String, Instant>,
    /// Label -> group of each planned run not finished.
    pending: HashMap<String, String>,
    estimates: HashMap<String, Estimate>,
    /// Most runs seen running at once (the parallelism the ETA divides by).
    width: usize,
    /// The last ETA computed, and when (shown counting down between runs).
    pub(super) eta: Option<(Eta, Instant)>,
    /// While no run of this process runs because another process holds the cores: who holds
    /// them (short, for the bar and the plain line); cleared when a run starts.
    pub(super) waiting: Option<String>,
}

impl Tally {
    pub fn running(&self) -> usize {
        self.running.len()
    }

    /// The runs neither finished nor running: waiting for a core here, for their Slurm job to
    /// get a node, or for their turn in their job.
    pub fn queued(&self) -> usize {
        self.total.saturating_sub(self.done + self.running())
    }

    pub(super) fn planned(&mut self, runs: &[RunInfo]) {
        for run in runs {
            self.pending.insert(run.label.clone(), run.group.clone());
            if let Some(e) = Estimate::of(&run.history) {
                self.estimates.entry(run.group.clone()).or_insert(e);
            }
        }
    }

    pub(super) fn run_started(&mut self, label: &str) {
        self.waiting = None;
        self.running.insert(label.to_string(), Instant::now());
        self.width = self.width.max(self.running.len());
    }

    pub(super) fn run_finished(&mut self, label: &str, failed: bool) {
        let started = self.running.remove(label);
        let group = self.pending.remove(label);
        self.done += 1;
        if failed {
            self.failed += 1;
        } else if let (Some(started), Some(group)) = (started, group) {
            let seconds = started.elapsed().as_secs_f64();
            match self.estimates.get_mut(&group) {
                Some(e) => e.add(seconds),
                None => {
                    self.estimates
                        .insert(group, Estimate::of(&[seconds]).expect("one"));
                }
            }
        }
        // Each computation walks every pending run: once per run's end, a contest's ETAs would
        // cost the square of its runs (30,000 runs: minutes of CPU, records read late). The ETA
        // is for display: at most one computation a second.
        if self.eta.is_none_or(|(_, at)| at.elapsed() >= ETA_EVERY) || self.pending.is_empty() {
            self.eta = self.compute_eta().map(|e| (e, Instant::now()));
        }
    }

    pub(super) fn run_requeued(&mut self, label: &str) {
        self.running.remove(label);
    }

    /// Seconds left: every run not finished at its group's estimate (the runs running less what
    /// they have run), over the parallelism seen. None before any run's time is known.
    pub(super) fn compute_eta(&self) -> Option<Eta> {
        if self.pending.is_empty() {
            return Some(Eta {
                seconds: 0.0,
                low: 0.0,
                high: 0.0,
            });
        }
        let all: Vec<&Estimate> = self.estimates.values().collect();
        if all.is_empty() {
            return None;
        }
        let n = all.len() as f64;
        let fallback = Estimate {
            mean: all.iter().map(|e| e.mean).sum::<f64>() / n,
            min: all.iter().map(|e| e.min).fold(f64::INFINITY, f64::min),
            max: all.iter().map(|e| e.max).fold(0.0, f64::max),
            samples: 0,
        };
        // Runs running longer than their group's estimate say the estimate is low: their
        // group's pending runs take at least that long.
        let mut overdue: HashMap<&str, f64> = HashMap::new();
        for (label, started) in &self.running {
            if let Some(group) = self.pending.get(label) {
                let ran = started.elapsed().as_secs_f64();
                let mean = self.estimates.get(group).unwrap_or(&fallback).mean;
                if ran > mean {
                    let o = overdue.entry(group.as_str()).or_insert(0.0);
                    *o = o.max(ran);
                }
            }
        }
        let (mut mid, mut low, mut high) = (0.0, 0.0, 0.0);
        for (label, group) in &self.pending {
            let e = self.estimates.get(group).unwrap_or(&fallback);
            // Few samples: the range is what the group (or all runs) took at most.
            let (lo, hi) = if e.samples >= 3 {
                (e.min, e.max)
            } else {
                (e.min.min(fallback.min), e.max.max(fallback.max) * 1.5)
            };
            let late = overdue.get(group.as_str()).copied().unwrap_or(0.0);
            let (mean, hi) = (e.mean.max(late), hi.max(2.0 * late));
            match self.running.get(label) {
                // Running: what is left of it; past its estimate, about as long again.
                Some(t) => {
                    let ran = t.elapsed().as_secs_f64();
                    mid += if ran < mean { mean - ran } else { ran };
                    low += (lo - ran).max(0.0);
                    high += (hi - ran).max(ran);
                }
                None => {
                    mid += mean;
                    low += lo;
                    high += hi;
                }
            }
        }
        let width = self.width.max(1) as f64;
        Some(Eta {
            seconds: mid / width,
            low: low / width,
            high: high / width,
        })
    }

    /// The ETA now: computed afresh (the runs running have run longer since), or, for very
    /// large executions, the last one computed at a run's end, counted down since.
    pub fn eta_now(&self) -> Option<Eta> {
        let (eta, at) = self.eta?;
        if self.pending.len() <= 20_000 {
            return self.compute_eta();
        }
        let since = at.elapsed().as_secs_f64();
        Some(Eta {
            seconds: (eta.seconds - since).max(0.0),
            low: (eta.low - since).max(0.0),
            high: (eta.high - since).max(0.0),
        })
    }

    pub(super) fn eta_text(&self) -> String {
        match self.eta_now() {
            Some(eta) => format!("ETA {}", eta.text()),
            None => "ETA estimating".into(),
        }
    }

    /// `[12/144 runs] 2 running · 130 queued · 0 failed · ETA 1m20s`
    pub fn line(&self) -> String {
        if let (Some(waiting), 0) = (&self.waiting, self.running()) {
            return format!(
                "[{}/{}] {waiting} · {}",
                self.done,
                count(self.total, "run", "runs"),
                self.eta_text()
            );
        }
        format!(
            "[{}/{}] {} running · {} queued · {} failed · {}",
            self.done,
            count(self.total, "run", "runs"),
            self.running(),
            self.queued(),
            self.failed,
            self.eta_text()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plurals_and_durations() {
        assert_eq!(count(1, "run", "runs"), "1 run");
        assert_eq!(count(2, "answer", "answers"), "2 answers");
        assert_eq!(duration(5.4), "5s");
        assert_eq!(duration(80.0), "1m20s");
        assert_eq!(duration(3720.0), "1h02m");
    }

    #[test]
    fn a_run_finished_without_being_started_does_not_hide_those_running() {
        let mut t = Tally::default();
        t.run_started("a");
        t.run_started("b");
        t.total = 5;
        t.run_finished("c", true); // an infrastructure failure: never started
        assert_eq!((t.running(), t.queued()), (2, 2));
        t.run_finished("a", false);
        assert_eq!((t.running(), t.queued()), (1, 2));
        assert!(
            t.line()
                .starts_with("[2/5 runs] 1 running · 2 queued · 1 failed · ")
        );
    }

    #[test]
    fn one_slow_run_widens_the_range_instead_of_moving_the_eta_alone() {
        let runs: Vec<RunInfo> = (0..10)
            .map(|i| RunInfo {
                label: format!("r{i}"),
                group: "t E".into(),
                history: vec![1.0, 1.0, 1.0, 1.0],
            })
            .collect();
        let mut t = Tally::default();
        t.planned(&runs);
        let eta = t.compute_eta().unwrap();
        assert!((eta.seconds - 10.0).abs() < 1e-9, "{eta:?}");
        assert_eq!(eta.text(), "10s");
        // A slow run (20 s) of the group: smoothed, the estimate moves by 30%, the range widens.
        t.estimates.get_mut("t E").unwrap().add(20.0);
        let eta = t.compute_eta().unwrap();
        assert!(
            eta.seconds < 10.0 * 7.0 && eta.high >= 10.0 * 20.0 - 1e-9,
            "{eta:?}"
        );
        assert!(eta.text().contains('–'), "{}", eta.text());
    }

    #[test]
    fn runs_ending_within_a_second_compute_the_eta_once_and_the_last_one_again() {
        let runs: Vec<RunInfo> = (0..3)
            .map(|i| RunInfo {
                label: format!("r{i}"),
                group: "t E".into(),
                history: vec![1.0],
            })
            .collect();
        let mut t = Tally::default();
        t.planned(&runs);
        t.run_finished("r0", false);
        let first = t.eta.unwrap().1;
        t.run_finished("r1", false);
        assert_eq!(t.eta.unwrap().1, first, "computed again within a second");
        // The contest's last run: nothing left, whenever it ends.
        t.run_finished("r2", false);
        assert_eq!(t.eta.unwrap().0.seconds, 0.0);
    }

    #[test]
    fn a_run_past_its_estimate_raises_the_eta_of_its_group() {
        let runs: Vec<RunInfo> = (0..3)
            .map(|i| RunInfo {
                label: format!("r{i}"),
                group: "t E".into(),
                history: vec![0.01, 0.01, 0.01],
            })
            .collect();
        let mut t = Tally::default();
        t.planned(&runs);
        t.run_started("r0");
        std::thread::sleep(Duration::from_millis(300));
        t.eta = t.compute_eta().map(|e| (e, Instant::now()));
        let eta = t.eta_now().unwrap();
        // r0 has run 0.3 s against an estimate of 0.01 s: about 0.3 s more, and r1, r2 as long.
        assert!(eta.seconds >= 0.85, "{eta:?}");
        assert!(eta.high >= eta.seconds, "{eta:?}");
    }
}
