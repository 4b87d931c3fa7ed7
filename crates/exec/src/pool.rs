//! Running many runs at once, each on cores of its own (rule E-5.5: a run is pinned to its
//! cores; two runs never share one).

use std::collections::VecDeque;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};

use crate::{Execution, InfraError, RunExecutor, RunSpec};

/// What the pool reports, in the order things happen.
#[expect(
    clippy::large_enum_variant,
    reason = "one event per run start and end, handed straight to the caller: never stored"
)]
pub enum PoolEvent {
    Started {
        index: usize,
    },
    Finished {
        index: usize,
        result: Result<Option<Execution>, InfraError>,
    },
}

/// The CPUs this process may use (its affinity mask).
pub fn available_cores() -> Vec<u32> {
    // SAFETY: sched_getaffinity fills a cpu_set_t we own.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return vec![0];
        }
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .map(|c| c as u32)
            .collect()
    }
}

struct Cores {
    free: Mutex<Vec<u32>>,
    freed: Condvar,
}

impl Cores {
    fn take(&self, n: usize) -> Vec<u32> {
        let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
        while free.len() < n {
            free = self.freed.wait(free).unwrap_or_else(|e| e.into_inner());
        }
        free.sort_unstable();
        free.drain(..n).collect()
    }

    fn give_back(&self, cores: Vec<u32>) {
        self.free
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend(cores);
        self.freed.notify_all();
    }
}

/// Runs `specs` with at most `jobs` at a time on the `cores` given, calling `on_event` on the
/// caller's thread for each start and end (so that recording results needs no locking).
/// A run needing more cores than exist is reported as an infrastructure failure.
pub fn run_all(
    executor: &dyn RunExecutor,
    specs: &[RunSpec],
    jobs: usize,
    cores: &[u32],
    cancel: &Arc<AtomicBool>,
    mut on_event: impl FnMut(PoolEvent),
) {
    let queue: Mutex<VecDeque<usize>> = Mutex::new((0..specs.len()).collect());
    let pool = Cores {
        free: Mutex::new(cores.to_vec()),
        freed: Condvar::new(),
    };
    let (tx, rx) = mpsc::channel::<PoolEvent>();
    let jobs = jobs.max(1).min(specs.len().max(1));
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            let tx = tx.clone();
            let (queue, pool) = (&queue, &pool);
            scope.spawn(move || loop {
                if cancel.load(std::sync::atomic::Ordering::Relaxed) {
                    break;
                }
                let Some(index) = queue.lock().unwrap_or_else(|e| e.into_inner()).pop_front() else { break };
                let spec = &specs[index];
                let needed = spec.cores as usize;
                if needed > cores.len() {
                    let error = InfraError(format!(
                        "tool {} needs {needed} cores (rules E-5.3/E-5.4) and this machine gives mccbuild {}",
                        spec.tool,
                        cores.len()
                    ));
                    let _ = tx.send(PoolEvent::Finished { index, result: Err(error) });
                    continue;
                }
                let mine = pool.take(needed);
                let _ = tx.send(PoolEvent::Started { index });
                let result = executor.execute(spec, &mine, cancel);
                pool.give_back(mine);
                let _ = tx.send(PoolEvent::Finished { index, result });
            });
        }
        drop(tx);
        for event in rx {
            on_event(event);
        }
    });
}
