//! `mccbuild watch`: one long-lived process that keeps the scoring database and applies each
//! change as it happens. A run record appearing in (or leaving) the store, whoever wrote it, is
//! an input change of the salsa database: only the queries that depend on it re-execute. An edit
//! of the manifest or the rules that plans the same runs (a scoring rule such as E-3.1's
//! threshold, a tool's kind or family:
//! [`mccbuild_plan::manifest::Contest::same_plan_as`]) is applied through the
//! edition's input setters, re-scoring only what reads the changed rule; any other edit of the
//! manifest or the rules, and an edit of a tool or a results file, re-plans (a new plan: new
//! keys, a new database). The last good state is kept while the manifest is invalid; with `--run`
//! the runs a change makes necessary are executed by a `mccbuild run` child, whose records then
//! arrive like any other.
//!
//! Changes are noticed through inotify (the `notify` crate): a record event reads that record
//! only (the store's whole reconciliation, which checks every record file's stamp, costs ~0.5 s
//! at an edition's scale). As a safety net the store is reconciled in full every 30 s, and at
//! once when the kernel's event queue overflowed; bursts are coalesced (all records present
//! when an update starts go into it).
//!
//! The watched contest and how changes apply to it are [`state`]'s; the files watched
//! [`files`]'s; each update and what it says [`update`]'s; where updates go [`publish`]'s; the
//! `mccbuild run` child of `--run` [`runner`]'s.

mod files;
mod publish;
mod runner;
mod state;
#[cfg(test)]
mod tests;
mod update;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::error::WatchError;
use crate::serve::Server;

use files::{InputChange, Watching};
use publish::Publisher;
use runner::Runner;
use state::State;

pub use update::{SiteUpdate, Update};

/// What `mccbuild watch` is asked to do.
pub struct WatchOptions {
    pub manifest: PathBuf,
    /// Execute the runs a change makes necessary.
    pub run: bool,
    /// Serve the report, updated live, on this address.
    pub serve: Option<String>,
    /// Keep the report written in this folder, as `mccbuild report --out` writes it: after an
    /// update, only the pages that changed are written again.
    pub out: Option<PathBuf>,
    /// One JSON object per line on stdout for each update.
    pub json: bool,
    /// Stop after this many updates (tests and benchmarks); None: until interrupted.
    pub updates: Option<u64>,
}

/// How often the store is reconciled in full (every record file's stamp checked), as a safety
/// net under inotify.
const FULL_RECONCILE: Duration = Duration::from_secs(30);

/// A watch started: the contest opened and scored, its site served, its files watched.
pub struct Watch {
    options: WatchOptions,
    state: State,
    publisher: Publisher,
    watching: Watching,
    runner: Runner,
}

impl Watch {
    /// Opens the contest, scores it, serves its site (`--serve`) and watches its files.
    pub fn open(options: WatchOptions) -> Result<Watch, WatchError> {
        let state = State::open(&options.manifest)?;
        // A long-lived process: what dead mccbuild processes left is reclaimed now, not only
        // by the next `mccbuild run` (its `mccbuild run` children reclaim too).
        state.session.executor.reclaim();
        let server = match &options.serve {
            Some(addr) => {
                let server = Server::start(addr).map_err(|source| WatchError::Serve {
                    addr: addr.clone(),
                    source,
                })?;
                eprintln!("serving the report on http://{}/", server.addr());
                Some(server)
            }
            None => None,
        };
        let publisher = Publisher {
            json: options.json,
            server,
            out: options.out.clone(),
            site: None,
        };
        let watching = Watching::start(&state.session)?;
        let runner = Runner {
            manifest: options.manifest.clone(),
            enabled: options.run,
            child: None,
            wanted: options.run,
        };
        Ok(Watch {
            options,
            state,
            publisher,
            watching,
            runner,
        })
    }

    /// Runs the watch loop until `--updates` updates were published (or forever), or `cancel`
    /// is set (then the `mccbuild run` child is interrupted too).
    pub fn run(self, cancel: &AtomicBool) -> Result<(), WatchError> {
        let Watch {
            options,
            mut state,
            mut publisher,
            mut watching,
            mut runner,
        } = self;
        let mut pending_corrupt: HashMap<PathBuf, Instant> = HashMap::new();
        let mut number = 0u64;
        let mut reconciled = Instant::now();
        let _ = state.db.take_executed();
        let start = Update::start(&state.scores);
        publisher.publish(&mut state, start)?;
        runner.poll(|| state.missing_runs());
        // The start is update 0: `--updates N` stops after it and N - 1 more.
        while options.updates.is_none_or(|n| number + 1 < n) {
            if cancel.load(Ordering::SeqCst) {
                runner.interrupt();
                return Err(WatchError::Interrupted);
            }
            let (events, timed_out, inputs_changed) = watching.next();
            if events.is_empty() && !timed_out {
                continue;
            }
            runner.poll(|| state.missing_runs());
            if inputs_changed != InputChange::None {
                let other = watching.settle() || inputs_changed == InputChange::Other;
                if !other {
                    match state.apply_contest_edit(&options.manifest, number + 1) {
                        Ok(Some(update)) => {
                            number += 1;
                            if !options.json {
                                eprintln!("re-scored: the edit plans the same runs");
                            }
                            publish_or_warn(&mut publisher, &mut state, update);
                            continue;
                        }
                        Ok(None) => {}
                        Err(e) => {
                            eprintln!("error (keeping the last good state): {e}");
                            continue;
                        }
                    }
                }
                let t = Instant::now();
                match State::open(&options.manifest) {
                    Ok(new) => {
                        watching.aim(&new.session, false);
                        let before = std::mem::replace(&mut state, new);
                        number += 1;
                        let _ = state.db.take_executed();
                        let update = Update::replan(number, t, &before.scores, &state.scores);
                        if !options.json {
                            eprintln!(
                                "re-planned: {} runs, {} to run",
                                state.session.plan.runs.len(),
                                state.missing_runs()
                            );
                        }
                        publisher.site = None;
                        publish_or_warn(&mut publisher, &mut state, update);
                        runner.wanted = runner.enabled;
                    }
                    Err(e) => eprintln!("error (keeping the last good state): {e}"),
                }
                continue;
            }
            // The store in full every 30 s and after lost events; otherwise the records named.
            let full = (timed_out && reconciled.elapsed() > FULL_RECONCILE)
                || watching.lost.swap(false, Ordering::Relaxed);
            let paths: Vec<PathBuf> = events.into_iter().flat_map(|e| e.paths).collect();
            if full {
                reconciled = Instant::now();
            }
            let paths = (!full).then_some(&paths[..]);
            if let Some(update) = state.update_from_records(number + 1, paths, &mut pending_corrupt)
            {
                number += 1;
                publish_or_warn(&mut publisher, &mut state, update);
            }
        }
        runner.wait();
        Ok(())
    }
}

/// Publishes an update; a site that cannot be written is reported, and rendered whole at the
/// next update (the watch goes on).
fn publish_or_warn(publisher: &mut Publisher, state: &mut State, update: Update) {
    if let Err(e) = publisher.publish(state, update) {
        eprintln!("error: {e}");
        publisher.site = None;
    }
}
