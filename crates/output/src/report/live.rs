//! The results site kept current by `mccbuild watch --serve`: after a change, only the pages
//! whose inputs changed are rendered again, and the site is the same bytes as a fresh
//! `mccbuild report` of the same store.
//!
//! What each page shows is gathered per run and per examination instance ([`ReportData`]'s run
//! views and decisions) and kept between updates: an update re-reads the runs whose records
//! changed, and compares the decisions (E-3.1) and scores (E-4.2) of every model examination
//! whose `trusted_values` or `exam_scores` salsa re-executed with the kept ones (a Confidence
//! that moved re-decides values far from the record that moved it; a query salsa did not
//! re-execute has the value it had). Each run view and each examination instance's decisions
//! has a digest of its content; each page a key, the blake3 of the digests of everything it
//! shows (the list is `LiveSite::page_key`, beside the templates it mirrors). A page is
//! rendered again when its key differs from the one it was rendered with, never otherwise: a
//! kept page is one whose every input is the same content.
//!
//! A [`LiveSite`] belongs to one plan (the same runs, tools, models and edition): a re-plan or
//! an edit of the rules makes a new one.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Arc;

use mccbuild_plan::Plan;
use mccbuild_rules::trusted::Decision;
use mccbuild_scoring::db::{Handles, ScoringDb};
use mccbuild_scoring::scores::ScoresReport;
use mccbuild_store::Summary;

use super::html::{self, Page};
use super::{ReportData, RunView};

/// A file of the site: its name and text (shared with the server that serves it).
pub type SiteFile = (String, Arc<String>);

/// The site as last rendered, and what its pages were rendered from.
pub struct LiveSite {
    runs: Vec<RunView>,
    runs_of: Vec<Vec<usize>>,
    decisions: Vec<Arc<[Decision]>>,
    diagnostics: BTreeMap<usize, Vec<String>>,
    /// The setup facts of each run's record, and the tools' version strings.
    facts: BTreeMap<usize, super::setup::RunFacts>,
    tool_versions: Vec<Option<String>>,
    /// The disputes page's values, recomputed after each update.
    disputes: Vec<super::disputes::Dispute>,
    /// The run pages, by run (those of the records read).
    run_pages: BTreeMap<usize, super::RunPage>,
    limits: Arc<Vec<(String, String)>>,
    exports: bool,
    /// Per run: a digest of its view and of its answer-parser diagnostics.
    run_digest: Vec<u64>,
    /// Per examination instance: a digest of its decisions.
    decision_digest: Vec<u64>,
    /// Per examination instance: a digest of its decisions' and its runs' digests.
    instance_digest: Vec<u64>,
    /// The runs of each tool, the examination instances of each examination and of each model.
    runs_by_tool: Vec<Vec<usize>>,
    instances_by_exam: Vec<Vec<usize>>,
    instances_by_model: Vec<Vec<usize>>,
    /// Per page of the site (in its order): the key it was rendered with, and the file.
    pages: Vec<(Page, blake3::Hash, SiteFile, usize)>,
    charts: Arc<ChartCache>,
    /// The scoring database's examination instances: per model examination, its examination
    /// instances' indices here; per examination instance, its model examination.
    instances_of: Vec<Vec<usize>>,
    model_exam_of: Vec<usize>,
    /// Per model examination: the tools that answered a value of it (sorted, unique), for the
    /// reliability table's "examinations entered".
    answering: Vec<Vec<usize>>,
}

/// What an update of the site rendered.
#[derive(Debug, Default)]
pub struct SiteChange {
    /// The files rendered again (all of them for a new site), in the site's order.
    pub changed: Vec<SiteFile>,
    /// Charts drawn for them.
    pub charts: usize,
    /// Pages of the site in all.
    pub pages: usize,
    /// Where the time went: (phase, milliseconds).
    pub phases: Vec<(&'static str, f64)>,
    /// Each page rendered again (not on a new site) and the time it took (on one core).
    pub rendered: Vec<(String, f64)>,
}

/// A digest of a value's content, by its `Debug` form (which prints every field, floats to
/// the last bit; in memory only: never stored, so its form may change between versions).
fn content_digest(value: &impl std::fmt::Debug) -> blake3::Hash {
    struct Writer(blake3::Hasher);
    impl std::fmt::Write for Writer {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            self.0.update(s.as_bytes());
            Ok(())
        }
    }
    let mut w = Writer(blake3::Hasher::new());
    let _ = write!(w, "{value:?}");
    w.0.finalize()
}

/// [`content_digest`]'s first 64 bits.
fn digest_of(value: &impl std::fmt::Debug) -> u64 {
    let bytes = content_digest(value);
    u64::from_le_bytes(bytes.as_bytes()[..8].try_into().unwrap_or_default())
}

/// Scatter plots drawn before, by the digest of everything their drawing reads (the tools'
/// names, the time limit, the points): a charts page drawn again draws only the scatter plots
/// whose points changed. Holds about two sites' worth of charts, the most recently used.
#[derive(Default)]
pub struct ChartCache {
    charts: std::sync::Mutex<std::collections::HashMap<blake3::Hash, (Arc<String>, u64)>>,
    clock: std::sync::atomic::AtomicU64,
    limit: std::sync::atomic::AtomicUsize,
}

impl ChartCache {
    /// The scatter plot of two tools' runs (what `svg::scatter` draws from these arguments),
    /// drawn now if it is not kept.
    pub(crate) fn scatter(
        &self,
        x_name: &str,
        y_name: &str,
        pairs: &[super::svg::Pair],
        limit: f64,
    ) -> Arc<String> {
        use std::sync::atomic::Ordering;
        // Every argument, each field in full (floats by their bits).
        let mut bytes = Vec::with_capacity(64 + pairs.len() * 19);
        for name in [x_name, y_name] {
            bytes.extend_from_slice(&(name.len() as u64).to_le_bytes());
            bytes.extend_from_slice(name.as_bytes());
        }
        bytes.extend_from_slice(&limit.to_bits().to_le_bytes());
        for p in pairs {
            for t in [p.x, p.y] {
                match t {
                    Some(t) => {
                        bytes.push(1);
                        bytes.extend_from_slice(&t.to_bits().to_le_bytes());
                    }
                    None => bytes.push(0),
                }
            }
            bytes.push(p.disagree as u8);
            bytes.extend_from_slice(&p.label.to_le_bytes());
        }
        let key = blake3::hash(&bytes);
        let now = self.clock.fetch_add(1, Ordering::Relaxed);
        let lock = || self.charts.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((chart, used)) = lock().get_mut(&key) {
            *used = now;
            return chart.clone();
        }
        let chart = Arc::new(super::svg::scatter(x_name, y_name, pairs, limit));
        lock().insert(key, (chart.clone(), now));
        chart
    }

    /// Drops the least recently used charts beyond twice the most charts a render used.
    fn trim(&self, used: usize) {
        use std::sync::atomic::Ordering;
        let limit = self
            .limit
            .fetch_max(2 * used, Ordering::Relaxed)
            .max(2 * used);
        let mut charts = self.charts.lock().unwrap_or_else(|e| e.into_inner());
        if charts.len() > limit {
            let mut ages: Vec<u64> = charts.values().map(|(_, used)| *used).collect();
            ages.sort_unstable();
            let oldest_kept = ages[ages.len() - limit];
            charts.retain(|_, (_, used)| *used >= oldest_kept);
        }
    }
}

impl LiveSite {
    /// The whole site from gathered data (as `mccbuild report` renders it); every page is in
    /// the change.
    pub fn new(data: ReportData<'_>, db: &ScoringDb, handles: &Handles) -> (LiveSite, SiteChange) {
        let plan = data.plan;
        let mut instances_of = vec![Vec::new(); handles.examinations.len()];
        let mut model_exam_of = vec![0; handles.exam_instances.len()];
        for (e, &(i, _)) in handles.exam_instances.iter().enumerate() {
            instances_of[i].push(e);
            model_exam_of[e] = i;
        }
        let mut runs_by_tool = vec![Vec::new(); plan.contest.tools.len()];
        for (r, run) in data.runs.iter().enumerate() {
            runs_by_tool[run.tool].push(r);
        }
        let mut instances_by_exam = vec![Vec::new(); plan.contest.edition.examinations.len()];
        let mut instances_by_model = vec![Vec::new(); plan.models.len()];
        for (e, ei) in plan.exam_instances.iter().enumerate() {
            instances_by_exam[ei.exam].push(e);
            instances_by_model[plan.instances[ei.instance].model].push(e);
        }
        let ReportData {
            plan,
            scores,
            reliability,
            agreed_values,
            runs,
            runs_of,
            decisions,
            exports,
            diagnostics,
            charts: _,
            facts,
            observed: _,
            tool_versions,
            disputes,
            run_pages,
            limits,
        } = data;
        let mut site = LiveSite {
            run_digest: vec![0; runs.len()],
            decision_digest: vec![0; decisions.len()],
            instance_digest: vec![0; decisions.len()],
            runs,
            runs_of,
            decisions,
            diagnostics,
            facts,
            tool_versions,
            disputes,
            run_pages,
            limits,
            exports,
            runs_by_tool,
            instances_by_exam,
            instances_by_model,
            pages: Vec::new(),
            charts: Arc::default(),
            answering: vec![Vec::new(); instances_of.len()],
            instances_of,
            model_exam_of,
        };
        for i in 0..site.answering.len() {
            site.answering[i] = site.tools_answering(db, handles, i);
        }
        for r in 0..site.runs.len() {
            site.run_digest[r] = site.digest_run(r);
        }
        for e in 0..site.decisions.len() {
            site.decision_digest[e] = digest_of(&site.decisions[e]);
            site.instance_digest[e] = site.digest_instance(e);
        }
        let mut change = site.render(plan, scores, reliability, agreed_values);
        change.changed.extend(site.run_pages.values().cloned());
        (site, change)
    }

    /// The tools that answered a value of model examination `i`.
    fn tools_answering(&self, db: &ScoringDb, handles: &Handles, i: usize) -> Vec<usize> {
        let mut tools: Vec<usize> = self.instances_of[i]
            .iter()
            .flat_map(|&e| mccbuild_scoring::explain::tools_answering(db, handles, e))
            .collect();
        tools.sort_unstable();
        tools.dedup();
        tools
    }

    fn digest_run(&self, r: usize) -> u64 {
        digest_of(&(
            &self.runs[r],
            self.diagnostics.get(&r),
            self.run_pages.get(&r).map(|p| &p.0),
        ))
    }

    fn digest_instance(&self, e: usize) -> u64 {
        let mut h = blake3::Hasher::new();
        h.update(&self.decision_digest[e].to_le_bytes());
        for &r in &self.runs_of[e] {
            h.update(&self.run_digest[r].to_le_bytes());
        }
        u64::from_le_bytes(h.finalize().as_bytes()[..8].try_into().unwrap_or_default())
    }

    /// Brings the site up to date with the scoring database, after the records of `changed`
    /// (indices into the plan's runs) changed: `summary` gives each one's stored summary (None:
    /// not in the store), `diagnostics` the answer-parser diagnostics of those that have some.
    /// `scores` is the scores report of the database as it is now. `recomputed`: the model
    /// examinations (indices into the handles' `examinations`) whose `trusted_values` or
    /// `exam_scores` salsa executed since the last update (the others are as they were: salsa
    /// re-executes a query whose inputs changed); None: not known, every one is compared.
    #[expect(clippy::too_many_arguments)]
    pub fn update<'s>(
        &mut self,
        plan: &Plan,
        db: &ScoringDb,
        handles: &Handles,
        scores: ScoresReport,
        changed: &[usize],
        recomputed: Option<&[usize]>,
        summary: impl Fn(&mccbuild_core::RunKey) -> Option<&'s Summary>,
        notes: super::RecordNotes,
    ) -> SiteChange {
        let super::RecordNotes {
            mut diagnostics,
            mut facts,
            mut pages,
        } = notes;
        let mut new_run_pages = Vec::new();
        let t = std::time::Instant::now();
        let scores = super::published_scores(plan, scores);
        let mut touched = vec![false; self.runs.len()];
        for &r in changed {
            let s = summary(&plan.runs[r].key);
            let view = &mut self.runs[r];
            view.outcome = s.map(Summary::outcome);
            view.measurement = s.map(|s| s.measurement).unwrap_or_default();
            view.answers = s.map_or_else(|| Arc::from(Vec::new()), |s| s.answers.clone());
            match diagnostics.remove(&r) {
                Some(d) => self.diagnostics.insert(r, d),
                None => self.diagnostics.remove(&r),
            };
            match facts.remove(&r) {
                Some(f) => self.facts.insert(r, f),
                None => self.facts.remove(&r),
            };
            match pages.remove(&r) {
                Some(p) => {
                    if self.run_pages.get(&r).is_none_or(|old| old.0 != p.0) {
                        new_run_pages.push(p.clone());
                    }
                    self.run_pages.insert(r, p)
                }
                None => self.run_pages.remove(&r),
            };
            touched[r] = true;
        }
        // Decisions and scores anywhere may have moved (a tool's Confidence re-decides the
        // values it took part in): those salsa recomputed are compared with the database's,
        // model examination by model examination (one memo of each).
        let mut dirty = vec![false; self.decisions.len()];
        let all: Vec<usize>;
        let recomputed = match recomputed {
            Some(r) => r,
            None => {
                all = (0..handles.examinations.len()).collect();
                &all
            }
        };
        for &i in recomputed {
            let m = handles.examinations[i];
            let decisions = mccbuild_scoring::db::trusted_values(db, m);
            let exam_scores = mccbuild_scoring::db::exam_scores(db, m);
            for &e in &self.instances_of[i] {
                let j = handles.exam_instances[e].1;
                if *self.decisions[e] != *decisions[j] {
                    self.decisions[e] = Arc::from(&decisions[j][..]);
                    self.decision_digest[e] = digest_of(&self.decisions[e]);
                    dirty[e] = true;
                }
                for &r in &self.runs_of[e] {
                    let view = &mut self.runs[r];
                    // As `ReportData::gather` finds it.
                    let score = exam_scores[j].iter().find(|x| x.tool as usize == view.tool);
                    if view.score.as_ref() != score {
                        view.score = score.cloned();
                        touched[r] = true;
                    }
                }
            }
        }
        // Which tools answered in a model examination changes with its runs' answers only.
        let mut answers_moved: Vec<usize> = changed
            .iter()
            .map(|&r| self.model_exam_of[self.runs[r].exam_instance])
            .collect();
        answers_moved.sort_unstable();
        answers_moved.dedup();
        for i in answers_moved {
            self.answering[i] = self.tools_answering(db, handles, i);
        }
        let compared = t.elapsed().as_secs_f64() * 1e3;
        for (r, _) in touched.iter().enumerate().filter(|(_, t)| **t) {
            self.run_digest[r] = self.digest_run(r);
            dirty[self.runs[r].exam_instance] = true;
        }
        for (e, _) in dirty.iter().enumerate().filter(|(_, d)| **d) {
            self.instance_digest[e] = self.digest_instance(e);
        }
        let reliability = self.reliability(plan, db, handles);
        self.disputes = super::disputes::disputes(plan, db, handles, &self.runs, &self.runs_of);
        let agreed_values =
            mccbuild_scoring::db::confidence_tally(db, handles.contest).agreed_values;
        let gathered = t.elapsed().as_secs_f64() * 1e3;
        let mut change = self.render(plan, scores, reliability, agreed_values);
        change.changed.extend(new_run_pages);
        change.phases.splice(
            0..0,
            [
                ("decisions and scores compared", compared),
                ("digests and reliability", gathered - compared),
            ],
        );
        change
    }

    /// The reliability table, as `confidence_table` makes it.
    fn reliability(
        &self,
        plan: &Plan,
        db: &ScoringDb,
        handles: &Handles,
    ) -> Vec<mccbuild_scoring::explain::ConfidenceRow> {
        let exams = plan.contest.edition.examinations.len();
        let mut entered = vec![vec![false; exams]; plan.contest.tools.len()];
        for (i, tools) in self.answering.iter().enumerate() {
            let Some(&e) = self.instances_of[i].first() else {
                continue;
            };
            for &t in tools {
                entered[t][plan.exam_instances[e].exam] = true;
            }
        }
        mccbuild_scoring::explain::confidence_rows(plan, db, handles, |t| {
            entered[t].iter().filter(|x| **x).count()
        })
    }

    /// Renders the pages whose key changed (all of them the first time).
    fn render(
        &mut self,
        plan: &Plan,
        scores: ScoresReport,
        reliability: Vec<mccbuild_scoring::explain::ConfidenceRow>,
        agreed_values: u64,
    ) -> SiteChange {
        use rayon::prelude::*;
        let data = ReportData {
            plan,
            scores,
            reliability,
            agreed_values,
            runs: std::mem::take(&mut self.runs),
            runs_of: std::mem::take(&mut self.runs_of),
            decisions: std::mem::take(&mut self.decisions),
            exports: self.exports,
            diagnostics: std::mem::take(&mut self.diagnostics),
            charts: Some(self.charts.clone()),
            observed: super::setup::Observed::of(self.facts.values()),
            facts: std::mem::take(&mut self.facts),
            tool_versions: self.tool_versions.clone(),
            disputes: std::mem::take(&mut self.disputes),
            run_pages: std::mem::take(&mut self.run_pages),
            limits: self.limits.clone(),
        };
        let t = std::time::Instant::now();
        let list = html::list(&data);
        let first =
            self.pages.len() != list.len() || self.pages.iter().zip(&list).any(|(p, q)| p.0 != *q);
        let this = &*self;
        let keys: Vec<blake3::Hash> = list.par_iter().map(|p| this.page_key(&data, *p)).collect();
        let todo: Vec<usize> = (0..list.len())
            .filter(|&i| first || self.pages[i].1 != keys[i])
            .collect();
        let keyed = t.elapsed().as_secs_f64() * 1e3;
        let shared = html::Shared::of(&data);
        let rendered: Vec<((String, String, usize), f64)> = todo
            .par_iter()
            .map(|&i| {
                let t = std::time::Instant::now();
                let page = html::render(&data, &shared, list[i]);
                (page, t.elapsed().as_secs_f64() * 1e3)
            })
            .collect();
        let mut change = SiteChange {
            pages: list.len(),
            phases: vec![
                ("page keys", keyed),
                ("rendered", t.elapsed().as_secs_f64() * 1e3 - keyed),
            ],
            ..Default::default()
        };
        if first {
            self.pages.clear();
        }
        if !first {
            for ((name, _, _), ms) in &rendered {
                change.rendered.push((name.clone(), *ms));
            }
        }
        self.charts
            .trim(rendered.iter().map(|((_, _, charts), _)| charts).sum());
        for (i, ((name, text, charts), _)) in todo.into_iter().zip(rendered) {
            let file: SiteFile = (name, Arc::new(text));
            change.changed.push(file.clone());
            change.charts += charts;
            let entry = (list[i], keys[i], file, charts);
            if first {
                self.pages.push(entry);
            } else {
                self.pages[i] = entry;
            }
        }
        self.runs = data.runs;
        self.runs_of = data.runs_of;
        self.decisions = data.decisions;
        self.diagnostics = data.diagnostics;
        self.facts = data.facts;
        self.disputes = data.disputes;
        self.run_pages = data.run_pages;
        change
    }

    /// Every file of the site as last rendered.
    pub fn files(&self) -> Vec<SiteFile> {
        let mut files: Vec<SiteFile> = self.pages.iter().map(|p| p.2.clone()).collect();
        files.extend(self.run_pages.values().cloned());
        files
    }

    /// The key of a page: a digest of everything it shows (what `html`'s template of that page
    /// reads, the plan aside: a site belongs to one plan).
    fn page_key(&self, data: &ReportData<'_>, page: Page) -> blake3::Hash {
        let mut h = blake3::Hasher::new();
        let json = |h: &mut blake3::Hasher, value: &dyn erased::Json| {
            h.update(value.json().as_bytes());
            h.update(b"\0");
        };
        // The layout of every page: the contest's and the edition's names.
        json(&mut h, &(&data.scores.contest, &data.scores.edition));
        h.update(format!("{page:?}").as_bytes());
        let u64s = |h: &mut blake3::Hasher, xs: &mut dyn Iterator<Item = u64>| {
            let bytes: Vec<u8> = xs.flat_map(u64::to_le_bytes).collect();
            h.update(&bytes);
        };
        let scores = &data.scores;
        match page {
            Page::Style | Page::Script | Page::Examinations | Page::Models => {}
            Page::Index => {
                let stored = data.runs.iter().filter(|r| r.outcome.is_some()).count();
                json(
                    &mut h,
                    &(
                        stored,
                        data.exports,
                        &scores.basis,
                        &scores.reference,
                        &scores.standings,
                        &scores.awards,
                        (&data.observed, &data.tool_versions),
                    ),
                );
            }
            Page::Reliability => json(&mut h, &(&data.reliability, data.agreed_values)),
            Page::Disputes => {
                json(&mut h, &scores.confidence);
                h.update(content_digest(&data.disputes).as_bytes());
            }
            Page::Tools => json(&mut h, &scores.confidence),
            Page::Tool(t) => {
                let name = &data.plan.contest.tools[t].name;
                let rows: Vec<_> = scores
                    .standings
                    .iter()
                    .map(|(c, rows)| (c, rows.iter().find(|r| &r.tool == name)))
                    .collect();
                let confidence = data.reliability.iter().find(|r| &r.tool == name);
                json(&mut h, &(rows, confidence));
                // Its runs (with their diagnostics) and the decisions of their instances.
                u64s(
                    &mut h,
                    &mut self.runs_by_tool[t].iter().flat_map(|&r| {
                        [
                            self.run_digest[r],
                            self.decision_digest[data.runs[r].exam_instance],
                        ]
                    }),
                );
            }
            Page::Examination(x) | Page::Charts(x) => u64s(
                &mut h,
                &mut self.instances_by_exam[x]
                    .iter()
                    .map(|&e| self.instance_digest[e]),
            ),
            Page::Model(m) => u64s(
                &mut h,
                &mut self.instances_by_model[m]
                    .iter()
                    .map(|&e| self.instance_digest[e]),
            ),
        }
        h.finalize()
    }
}

/// Serializing a tuple of references to JSON through a trait object.
mod erased {
    pub trait Json {
        fn json(&self) -> String;
    }
    impl<T: serde::Serialize> Json for T {
        fn json(&self) -> String {
            serde_json::to_string(self).unwrap_or_default()
        }
    }
}
