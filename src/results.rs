//! Results read from the scoring database: the JSON of `mccbuild scores` and the podium tables.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use crate::db::{category_scores, podiums, tool_confidence, Handles, ScoringDb};
use crate::digest::{hex, Digest};
use crate::plan::Plan;

#[derive(Clone, Debug, Serialize, serde::Deserialize, PartialEq)]
pub struct ValueRow {
    pub instance: String,
    pub examination: String,
    pub id: String,
    pub trusted: Option<String>,
    /// Which situation of rule E-3.1 decided it.
    pub case: String,
    pub answers: BTreeMap<String, String>,
}

#[derive(Clone, Debug, Serialize, serde::Deserialize, PartialEq)]
pub struct StandingRow {
    pub tool: String,
    pub score: f64,
    pub rank: Option<u32>,
    pub medal: Option<String>,
    pub competing: bool,
    pub best_of_family: bool,
}

#[derive(Clone, Debug, Serialize, serde::Deserialize, PartialEq)]
pub struct AwardRow {
    pub fastest: Option<String>,
    pub least_memory: Option<String>,
}

/// The JSON of `mccbuild scores`.
#[derive(Clone, Debug, Serialize, serde::Deserialize, PartialEq)]
pub struct ScoresReport {
    pub contest: String,
    pub edition: String,
    pub confidence: BTreeMap<String, f64>,
    pub scores: BTreeMap<String, BTreeMap<String, f64>>,
    /// Per category, the ranked tools in order (competing tools, best variant of each family).
    pub podiums: BTreeMap<String, Vec<String>>,
    pub awards: BTreeMap<String, AwardRow>,
    /// Per category, every tool with its score, rank and medal (reference tools and other
    /// variants included, unranked).
    pub standings: BTreeMap<String, Vec<StandingRow>>,
    #[serde(default)]
    pub values: Vec<ValueRow>,
}

/// Bump when what the results report holds changes.
const RESULTS_SCHEMA: u32 = 1;

/// The key of a plan's results: everything scoring depends on. The rules text, the scoring
/// shape of the contest (tools with family and kind, models with kind and size, which values each
/// examination of each instance has), each planned run's key and whether it is stored (a stored
/// run's summary never changes: its key is its content), and the mccbuild binary itself (the
/// scoring code). Equal keys mean equal results, so a no-op `run` prints the cached report.
pub fn results_key(plan: &Plan, stored: &[bool], binary: &Digest) -> Digest {
    let mut buf: Vec<u8> = Vec::with_capacity(64 * plan.runs.len() + 4096);
    let mut put = |bytes: &[u8]| {
        buf.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
        buf.extend_from_slice(bytes);
    };
    put(b"mccbuild results");
    put(&RESULTS_SCHEMA.to_le_bytes());
    put(binary);
    put(plan.contest.edition.digest.as_bytes());
    put(plan.contest.name.as_bytes());
    for t in &plan.contest.tools {
        put(t.name.as_bytes());
        put(t.family.as_bytes());
        put(&[(t.kind == crate::manifest::ToolKind::Competing) as u8]);
    }
    for m in &plan.models {
        put(m.name.as_bytes());
        put(&(m.kind as u64).to_le_bytes());
        put(&(m.instances.len() as u64).to_le_bytes());
    }
    for i in &plan.instances {
        put(i.name.as_bytes());
        put(&(i.model as u64).to_le_bytes());
    }
    for ei in &plan.exam_instances {
        put(&[ei.instance as u64, ei.exam as u64, ei.ids.len() as u64]
            .map(u64::to_le_bytes)
            .concat());
    }
    for (i, run) in plan.runs.iter().enumerate() {
        put(&[run.exam_instance as u64, run.tool as u64]
            .map(u64::to_le_bytes)
            .concat());
        put(&run.key.0);
        put(&[stored.get(i).copied().unwrap_or(false) as u8]);
    }
    *blake3::hash(&buf).as_bytes()
}

/// Reads a cached results report (`store/results/<key>.json`), if there is one.
pub fn load_cached(store: &crate::store::Store, key: &Digest) -> Option<ScoresReport> {
    let bytes = std::fs::read(
        store
            .root()
            .join("results")
            .join(format!("{}.json", hex(key))),
    )
    .ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Saves a results report under its key, keeping the 20 most recent reports.
pub fn save_cached(
    store: &crate::store::Store,
    key: &Digest,
    report: &ScoresReport,
) -> std::io::Result<()> {
    let dir = store.root().join("results");
    std::fs::create_dir_all(&dir)?;
    crate::store::write_atomically(
        &dir.join(format!("{}.json", hex(key))),
        &serde_json::to_vec(report).map_err(std::io::Error::other)?,
    )?;
    let mut files: Vec<(std::time::SystemTime, std::path::PathBuf)> = std::fs::read_dir(&dir)?
        .flatten()
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    files.sort();
    let excess = files.len().saturating_sub(20);
    for (_, path) in files.into_iter().take(excess) {
        let _ = std::fs::remove_file(path);
    }
    Ok(())
}

fn medal_name(m: u8) -> String {
    match m {
        1 => "gold",
        2 => "silver",
        _ => "bronze",
    }
    .to_string()
}

/// Reads everything `scores` prints from the database.
pub fn scores_report(
    plan: &Plan,
    db: &ScoringDb,
    handles: &Handles,
    with_values: bool,
) -> ScoresReport {
    // Whatever is out of date is recomputed on all cores first.
    db.refresh(handles);
    report_of(plan, db, handles, with_values)
}

/// The scores report (without values) when the podiums were just computed: nothing to refresh.
pub fn scores_report_of_current(plan: &Plan, db: &ScoringDb, handles: &Handles) -> ScoresReport {
    report_of(plan, db, handles, false)
}

fn report_of(plan: &Plan, db: &ScoringDb, handles: &Handles, with_values: bool) -> ScoresReport {
    let edition = &plan.contest.edition;
    let tools = &plan.contest.tools;
    let contest = handles.contest;
    let tool_data = contest.tool_data(db);
    // Confidence means nothing where the truth is given (ground-truth contests): not shown.
    let confidence = if edition.info.trust == crate::rules::edition::TrustKind::GroundTruth {
        BTreeMap::new()
    } else {
        tools
            .iter()
            .zip(tool_data.iter())
            .map(|(t, d)| (t.name.clone(), round(tool_confidence(db, *d))))
            .collect()
    };
    let totals = category_scores(db, contest);
    let mut scores = BTreeMap::new();
    let mut podium_lists = BTreeMap::new();
    let mut awards = BTreeMap::new();
    let mut standings = BTreeMap::new();
    for podium in podiums(db, contest) {
        let category = edition.categories[podium.category].name.clone();
        scores.insert(
            category.clone(),
            tools
                .iter()
                .enumerate()
                .map(|(i, t)| (t.name.clone(), round(totals.scores[podium.category][i])))
                .collect(),
        );
        podium_lists.insert(
            category.clone(),
            podium
                .standings
                .iter()
                .filter(|s| s.rank.is_some())
                .map(|s| tools[s.tool as usize].name.clone())
                .collect(),
        );
        awards.insert(
            category.clone(),
            AwardRow {
                fastest: podium
                    .awards
                    .fastest
                    .map(|t| tools[t as usize].name.clone()),
                least_memory: podium
                    .awards
                    .least_memory
                    .map(|t| tools[t as usize].name.clone()),
            },
        );
        standings.insert(
            category,
            podium
                .standings
                .iter()
                .map(|s| StandingRow {
                    tool: tools[s.tool as usize].name.clone(),
                    score: round(s.score),
                    rank: s.rank,
                    medal: s.medal.map(medal_name),
                    competing: s.competing,
                    best_of_family: s.best_of_family,
                })
                .collect(),
        );
    }
    let mut values = Vec::new();
    if with_values {
        for (e, ei) in plan.exam_instances.iter().enumerate() {
            let groups = handles.value_groups(db, e);
            let decisions = handles.decisions(db, e);
            for (i, id) in ei.ids.iter().enumerate() {
                values.push(ValueRow {
                    instance: plan.instances[ei.instance].name.clone(),
                    examination: edition.examinations[ei.exam].name.clone(),
                    id: id.to_string(),
                    trusted: decisions[i].value.as_ref().map(|v| v.to_string()),
                    case: serde_json::to_value(decisions[i].case)
                        .ok()
                        .and_then(|v| v.as_str().map(String::from))
                        .unwrap_or_default(),
                    answers: groups
                        .group(i)
                        .iter()
                        .map(|(t, v)| (tools[*t as usize].name.clone(), v.to_string()))
                        .collect(),
                });
            }
        }
    }
    ScoresReport {
        contest: plan.contest.name.clone(),
        edition: edition.info.name.clone(),
        confidence,
        scores,
        podiums: podium_lists,
        awards,
        standings,
        values,
    }
}

/// Scores are sums of fractions; keep them readable and stable in JSON.
fn round(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

/// How the podium tables are printed on a terminal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct TermStyle {
    /// ANSI colours (medals, titles).
    pub color: bool,
    /// The terminal's width in columns: longer tool names are shortened, the awards line split.
    pub width: Option<usize>,
}

impl TermStyle {
    /// Colour when stdout is a terminal (or `CLICOLOR_FORCE` is set), `NO_COLOR` is unset or
    /// empty (https://no-color.org) and `TERM` is not `dumb`. The width: `COLUMNS` if set, else
    /// the terminal's when stdout is one.
    pub fn detect() -> TermStyle {
        // SAFETY: isatty and ioctl(TIOCGWINSZ) only read the state of file descriptor 1.
        let tty = unsafe { libc::isatty(1) } == 1;
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        let dumb = std::env::var("TERM").is_ok_and(|t| t == "dumb");
        let mut width = std::env::var("COLUMNS")
            .ok()
            .and_then(|c| c.parse::<usize>().ok())
            .filter(|w| *w > 0);
        if tty && width.is_none() {
            let mut size: libc::winsize = unsafe { std::mem::zeroed() };
            if unsafe { libc::ioctl(1, libc::TIOCGWINSZ, &mut size) } == 0 && size.ws_col > 0 {
                width = Some(size.ws_col as usize);
            }
        }
        let force = std::env::var_os("CLICOLOR_FORCE").is_some_and(|v| !v.is_empty() && v != "0");
        TermStyle {
            color: (tty || force) && !no_color && !dumb,
            width,
        }
    }
}

/// The podium tables, as printed after `run` and by `scores` (plain: no colour, any width).
pub fn podium_text(plan: &Plan, report: &ScoresReport) -> String {
    podium_text_styled(plan, report, TermStyle::default())
}

/// Shortens `name` to `width` characters, marking the cut with `~`.
fn fit(name: &str, width: usize) -> String {
    if name.chars().count() <= width {
        name.to_string()
    } else {
        let mut s: String = name.chars().take(width.saturating_sub(1)).collect();
        s.push('~');
        s
    }
}

/// The podium tables for a terminal of the given style.
pub fn podium_text_styled(plan: &Plan, report: &ScoresReport, style: TermStyle) -> String {
    let paint = |code: &str, text: &str| {
        if style.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}",
        paint("1", &format!("{} ({})", report.contest, report.edition))
    );
    for category in &plan.contest.edition.categories {
        let Some(rows) = report.standings.get(&category.name) else {
            continue;
        };
        if rows.is_empty() {
            let _ = writeln!(
                out,
                "\n{}\n  no tool took part",
                paint("1", &category.title)
            );
            continue;
        }
        let _ = writeln!(out, "\n{}", paint("1", &category.title));
        // "  " + place (9) + " " + name + "  " + score: 14 columns besides the name and score.
        let longest = rows
            .iter()
            .map(|r| r.tool.chars().count())
            .max()
            .unwrap_or(4)
            .max(4);
        let score_width = rows
            .iter()
            .map(|r| format!("{:.2}", r.score).len())
            .max()
            .unwrap_or(4)
            .max(6);
        let width = match style.width {
            Some(w) => longest.min(w.saturating_sub(14 + score_width).max(6)),
            None => longest,
        };
        for row in rows {
            let place = match (row.rank, &row.medal) {
                (Some(r), Some(m)) => {
                    let code = match m.as_str() {
                        "gold" => "1;33",
                        "silver" => "1;37",
                        _ => "1;31",
                    };
                    format!("{r:>2} {}", paint(code, &format!("{m:<6}")))
                }
                (Some(r), None) => format!("{r:>2}       "),
                (None, _) if !row.competing => "  (ref.) ".to_string(),
                (None, _) => "  (var.) ".to_string(),
            };
            let _ = writeln!(
                out,
                "  {place} {:<width$}  {:>score_width$.2}",
                fit(&row.tool, width),
                row.score
            );
        }
        if let Some(a) = report.awards.get(&category.name) {
            if a.fastest.is_some() || a.least_memory.is_some() {
                // On a narrow terminal, each award on its own line, names shortened to fit.
                let name = |n: &Option<String>, label: usize| {
                    let n = n.as_deref().unwrap_or("-");
                    style
                        .width
                        .map_or(n.to_string(), |w| fit(n, w.saturating_sub(label).max(6)))
                };
                let fastest = format!("  fastest: {}", name(&a.fastest, 11));
                let memory = format!("least memory: {}", name(&a.least_memory, 16));
                match style.width {
                    Some(w) if fastest.chars().count() + 3 + memory.chars().count() > w => {
                        let _ = writeln!(out, "{fastest}\n  {memory}");
                    }
                    _ => {
                        let _ = writeln!(out, "{fastest}   {memory}");
                    }
                }
            }
        }
    }
    out
}
