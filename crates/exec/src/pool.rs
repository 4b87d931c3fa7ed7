//! Running many runs at once, each on cores of its own (rule E-5.5: a run is pinned to its
//! cores; two runs never share one, not even runs of two mccbuild processes: each core is
//! reserved machine-wide by a lock file while a run uses it). Runs waiting for cores another
//! process holds say who holds them and get them in turn ([`line`]).

mod line;

pub use line::{CoreHolder, CoreWait, since_text};
use line::{Line, Turn};

use std::collections::VecDeque;
use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

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
    /// A run waits for cores other processes hold (sent when it starts waiting and whenever
    /// what it waits for changes).
    Waiting(CoreWait),
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

/// The folder of the machine-wide core reservations: `/run/mccbuild/cores` (root), else
/// `mccbuild-cores` in the temporary folder; `MCCBUILD_CORE_LOCKS` names another.
pub fn core_lock_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("MCCBUILD_CORE_LOCKS") {
        return PathBuf::from(dir);
    }
    let run = PathBuf::from("/run/mccbuild/cores");
    if std::fs::create_dir_all(&run).is_ok() {
        return run;
    }
    std::env::temp_dir().join("mccbuild-cores")
}

/// Reserves core `core` machine-wide: an exclusive `flock` on its lock file, held as long as
/// the file stays open (the kernel releases it when the holder dies, `kill -9` included); the
/// holder then writes its note into the file (`line::write_note`: pid, contest, since when).
/// None when another process (or another run of this one) holds it; `Some(None)` when the
/// lock file cannot be opened (a folder of another user): the core is then reserved within this
/// process only, rather than never.
pub fn reserve(dir: &Path, core: u32) -> Option<Option<File>> {
    let _ = std::fs::create_dir_all(dir);
    let Ok(file) = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join(format!("core-{core}.lock")))
    else {
        return Some(None);
    };
    // SAFETY: flock on a descriptor we own.
    let locked = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0;
    locked.then_some(Some(file))
}

/// Reserves `cores` machine-wide (their lock files, as runs do), waiting while another run holds
/// one; without `given` cores, the first available core no run holds is taken instead of the
/// first one. The reservations last as long as the returned files are open.
pub fn reserve_waiting(cores: &mut Vec<u32>, given: bool) -> Vec<Option<File>> {
    let dir = core_lock_dir();
    let mut said = false;
    loop {
        if !given {
            for core in available_cores() {
                if let Some(lock) = reserve(&dir, core) {
                    *cores = vec![core];
                    return vec![lock];
                }
            }
        } else {
            let mut held = Vec::new();
            for &core in cores.iter() {
                match reserve(&dir, core) {
                    Some(lock) => held.push(lock),
                    None => break,
                }
            }
            if held.len() == cores.len() {
                return held;
            }
        }
        if !said {
            eprintln!(
                "waiting for a core: runs of mccbuild hold {} (reservations in {})",
                match given {
                    true => "the cores asked for",
                    false => "every core this process may use",
                },
                dir.display()
            );
            said = true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

struct Cores {
    free: Mutex<Vec<u32>>,
    freed: Condvar,
    lock_dir: PathBuf,
    /// The waiting line of the machine's processes (in `lock_dir`).
    line: Line,
    /// This process's contest folder, written into the notes of the cores it reserves.
    contest: String,
}

impl Cores {
    /// `n` cores free in this process and reserved machine-wide, with their reservations;
    /// None when cancelled while waiting. When other processes hold the cores, the run joins
    /// the machine's waiting line and tries again every 100 ms when its turn has come (first
    /// come, first served; a process running already queues behind those waiting), telling
    /// `on_wait` who holds what it waits for whenever that changes.
    fn take(
        &self,
        n: usize,
        cancel: &AtomicBool,
        on_wait: &dyn Fn(CoreWait),
    ) -> Option<(Vec<u32>, Vec<Option<File>>)> {
        let mut ticket = None;
        let mut told: Option<CoreWait> = None;
        let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if cancel.load(Ordering::Relaxed) {
                self.line.leave(&mut ticket);
                return None;
            }
            if free.len() >= n {
                free.sort_unstable();
                let turn = self.line.turn(&mut ticket);
                let mut mine = Vec::new();
                let mut locks = Vec::new();
                let mut held = Vec::new();
                for &core in free.iter() {
                    if turn != Turn::Yours || mine.len() == n {
                        held.push(core);
                        continue;
                    }
                    match reserve(&self.lock_dir, core) {
                        Some(lock) => {
                            mine.push(core);
                            locks.push(lock);
                        }
                        None => held.push(core),
                    }
                }
                if mine.len() == n {
                    for lock in locks.iter().flatten() {
                        line::write_note(lock, &self.contest);
                    }
                    self.line.leave(&mut ticket);
                    free.retain(|c| !mine.contains(c));
                    return Some((mine, locks));
                }
                drop(locks);
                self.line.join(&mut ticket);
                let ahead = match turn {
                    Turn::Wait { ahead } => ahead,
                    Turn::Yours => 0,
                };
                let wait = self.waiting_for(n, &held, ahead);
                if told.as_ref() != Some(&wait)
                    && !(wait.held.is_empty() && wait.unknown.is_empty())
                {
                    on_wait(wait.clone());
                    told = Some(wait);
                }
            }
            free = self
                .freed
                .wait_timeout(free, Duration::from_millis(100))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// What a run needing `n` cores waits for: the holders of the cores `held` that another
    /// process holds (those whose lock file names another pid), `ahead` tickets before it.
    fn waiting_for(&self, n: usize, held: &[u32], ahead: usize) -> CoreWait {
        let me = std::process::id();
        let mut wait = CoreWait {
            needed: n,
            held: Vec::new(),
            unknown: Vec::new(),
            ahead,
        };
        for &core in held {
            match line::read_note(&self.lock_dir, core) {
                Some(h) if h.pid != me => wait.held.push(h),
                Some(_) => {}
                None => wait.unknown.push(core),
            }
        }
        wait
    }

    fn give_back(&self, cores: Vec<u32>, locks: Vec<Option<File>>) {
        drop(locks);
        self.free
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend(cores);
        self.freed.notify_all();
    }
}

/// Runs `specs` with at most `jobs` at a time on the `cores` given, calling `on_event` on the
/// caller's thread for each start and end, and for each wait for cores another process holds
/// (so that recording results needs no locking). `contest` (the contest's folder) is written
/// into the notes of the cores reserved. A run needing more cores than exist is reported as an
/// infrastructure failure.
pub fn run_all(
    executor: &dyn RunExecutor,
    specs: &[RunSpec],
    jobs: usize,
    cores: &[u32],
    contest: &str,
    cancel: &Arc<AtomicBool>,
    mut on_event: impl FnMut(PoolEvent),
) {
    let queue: Mutex<VecDeque<usize>> = Mutex::new((0..specs.len()).collect());
    let lock_dir = core_lock_dir();
    let pool = Cores {
        free: Mutex::new(cores.to_vec()),
        freed: Condvar::new(),
        line: Line::new(&lock_dir, contest),
        lock_dir,
        contest: contest.replace(['\t', '\n'], " "),
    };
    let (tx, rx) = mpsc::channel::<PoolEvent>();
    let jobs = jobs.max(1).min(specs.len().max(1));
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            let tx = tx.clone();
            let (queue, pool) = (&queue, &pool);
            scope.spawn(move || loop {
                if cancel.load(Ordering::Relaxed) {
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
                let on_wait = |wait: CoreWait| {
                    let _ = tx.send(PoolEvent::Waiting(wait));
                };
                let Some((mine, locks)) = pool.take(needed, cancel, &on_wait) else { break };
                let _ = tx.send(PoolEvent::Started { index });
                let result = executor.execute(spec, &mine, cancel);
                pool.give_back(mine, locks);
                let _ = tx.send(PoolEvent::Finished { index, result });
            });
        }
        drop(tx);
        for event in rx {
            on_event(event);
        }
    });
}
