//! Where `watch`'s updates go ([`Publisher`]): standard output (lines or JSON), the served site
//! and the site's folder (only the pages whose inputs changed are rendered again).

use std::path::PathBuf;
use std::time::Instant;

use mccbuild_output::report::live::LiveSite;
use mccbuild_output::report::{ReportData, write_files};

use super::state::State;
use super::update::{SiteUpdate, Update};
use crate::error::WatchError;
use crate::progress::count;
use crate::serve::Server;

/// Where updates go: standard output (lines or JSON), the served site and the site's folder.
pub(super) struct Publisher {
    pub(super) json: bool,
    pub(super) server: Option<Server>,
    pub(super) out: Option<PathBuf>,
    /// The site as last rendered (with `--serve` or `--out`); None until the first update and
    /// after a re-plan or a rules edit (a new site is rendered whole).
    pub(super) site: Option<LiveSite>,
}

impl Publisher {
    pub(super) fn publish(
        &mut self,
        state: &mut State,
        mut update: Update,
    ) -> Result<(), WatchError> {
        if self.server.is_some() || self.out.is_some() {
            update.site = Some(self.update_site(state, update.cause == "records")?);
        } else {
            state.changed_runs.clear();
            state.recomputed = Some(Vec::new());
        }
        if self.json {
            println!("{}", serde_json::to_string(&update).unwrap_or_default());
        } else {
            println!("{}", update_line(state, &update));
            for (category, (was, now)) in &update.podium_changes {
                println!("  {category}: {} -> {}", was.join(", "), now.join(", "));
            }
            if let Some(p) = &update.scores.partial {
                println!("  {}", p.notice());
            }
        }
        Ok(())
    }

    /// Renders the pages whose inputs changed (after records only: any other update renders a
    /// new site whole), writes them into `--out`'s folder and serves them.
    fn update_site(&mut self, state: &mut State, records: bool) -> Result<SiteUpdate, WatchError> {
        let t = Instant::now();
        let changed_runs = std::mem::take(&mut state.changed_runs);
        let mut recomputed = state.recomputed.replace(Vec::new());
        if let Some(r) = &mut recomputed {
            r.sort_unstable();
            r.dedup();
        }
        let session = &state.session;
        let (change, all) = match (&mut self.site, records) {
            (Some(site), true) => {
                let notes = session.record_notes(changed_runs.iter().copied());
                let change = site.update(
                    &session.plan,
                    &state.db,
                    &state.handles,
                    state.scores.clone(),
                    &changed_runs,
                    recomputed.as_deref(),
                    |k| session.index.get(k),
                    notes,
                );
                (change, false)
            }
            _ => {
                let mut data = ReportData::gather(&session.plan, &state.db, &state.handles, |k| {
                    session.index.get(k)
                });
                data.set_records(session.record_notes(0..session.plan.runs.len()));
                let (site, change) = LiveSite::new(data, &state.db, &state.handles);
                self.site = Some(site);
                (change, true)
            }
        };
        let rendered = t.elapsed();
        if let Some(server) = &self.server {
            server.publish(&change.changed, all, &state.scores);
        }
        if let Some(dir) = &self.out {
            write_files(dir, &change.changed).map_err(|e| WatchError::Output {
                path: e.path,
                source: e.source,
            })?;
        }
        if std::env::var_os("MCCBUILD_WATCH_DEBUG").is_some() {
            let phases: Vec<String> = change
                .phases
                .iter()
                .map(|(what, ms)| format!("{what} {ms:.1} ms"))
                .chain(
                    change
                        .rendered
                        .iter()
                        .map(|(page, ms)| format!("{page} {ms:.1} ms")),
                )
                .collect();
            eprintln!(
                "timing: site: {}; published and written {:.1} ms (site {:.1} ms in all)",
                phases.join(", "),
                (t.elapsed() - rendered).as_secs_f64() * 1e3,
                t.elapsed().as_secs_f64() * 1e3,
            );
        }
        Ok(SiteUpdate {
            rendered: change.changed.len(),
            charts: change.charts,
            pages: change.pages,
            ms: t.elapsed().as_secs_f64() * 1e3,
        })
    }
}

/// An update in one line: the start says what the store holds (the records it starts from, not
/// the 0 applied), the others how many records they applied and the time since the newest
/// record or, for an edit of the manifest or the rules, since the edit.
fn update_line(state: &State, update: &Update) -> String {
    let session = &state.session;
    if update.cause == "start" {
        let stored = (0..session.plan.runs.len())
            .filter(|&i| session.is_stored(i))
            .count();
        return format!(
            "update {}: start ({} in the store, {stored} of the contest's {})",
            update.update,
            count(session.index.len(), "record", "records"),
            count(session.plan.runs.len(), "run", "runs"),
        );
    }
    let since = match update.cause {
        "records" => "after the record",
        _ => "after the edit",
    };
    format!(
        "update {}: {} ({}, {:.1} ms{})",
        update.update,
        update.cause,
        count(update.records, "record", "records"),
        update.compute_ms,
        update
            .latency_ms
            .map(|l| format!(", {l:.1} ms {since}"))
            .unwrap_or_default()
    )
}
