//! Remembered scores (docs/cache.md, "Remembered scores"): what scoring computed of each model
//! examination, kept between processes under a digest of everything it was computed from, so
//! that the first scoring after a change reads and scores only the model examinations whose runs
//! changed, or whose Confidence-dependent decisions moved.
//!
//! A model examination's scores are a function of its inputs (its examination instances, each
//! planned run's key and record, the reference answers and the organisers' decisions there, the
//! rules, the tools' order, the scoring code) and of the E-3.1 decisions its trusted values read
//! (each tool's verdict on its lone values, each contested shape's winner), which depend on the
//! Confidences of the whole contest. The first part is the entry's digest
//! ([`examination_digest`]); the decisions are kept beside the entry and compared with those
//! settled now ([`Remembered::holds`]): an entry whose decisions moved is computed again from its
//! runs. The podiums are then summed by the same salsa queries as always, from remembered and
//! computed model examinations alike ([`podium_report`]).

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use mccbuild_core::digest::Digest;
use mccbuild_core::timing::phase;
use mccbuild_core::RunKey;
use mccbuild_plan::Plan;
use mccbuild_rules::confidence::{ConfidenceTally, ToolIdx, ToolTally};
use mccbuild_rules::exact::{Exact, Sum};
use mccbuild_rules::podium::Completed;
use mccbuild_store::Summary;
use num_bigint::BigInt;

use crate::database::{RunInputs, ScoringDb};
use crate::db::{
    agreement, exam_scores, Agreement, ContestedDecision, DecisionNeeds, ExamTotal,
    ModelExamination,
};
use crate::inputs::{contest_inputs, run_inputs};
use crate::scores::{scores_report, ScoresReport};

/// Bump when what a remembered model examination holds, or how it is computed, changes (the
/// binary's digest is an ingredient too: another build never reads these entries).
const MEMO_SCHEMA: u32 = 1;
const MAGIC: &[u8; 8] = b"MCCBSCR1";

/// What the podiums read of one model examination's scores, and what they were computed under.
#[derive(Clone, Debug, PartialEq)]
pub struct Remembered {
    /// E-2.2's counts over its values, and the decisions its values need.
    pub agreement: Agreement,
    /// The verdict on lone values (E-3.1, fourth situation) of each tool of
    /// `agreement.needs.alone`, in that order, when the scores were computed.
    pub alone: Vec<bool>,
    /// Its contested shapes' decisions when the scores were computed.
    pub decided: Vec<ContestedDecision>,
    /// Its scores' sums per tool (E-4.2, E-4.3) and, per examination instance, the runs that
    /// completed it (E-4.5).
    pub totals: Arc<[ExamTotal]>,
    pub completed: Arc<[Vec<Completed>]>,
}

impl Remembered {
    /// Whether the decisions settled now are those the scores were computed under (it reads the
    /// inputs the scores would read: the same dependencies in salsa).
    pub(crate) fn holds(&self, db: &dyn salsa::Database, m: ModelExamination) -> bool {
        let tools = m.contest(db).tool_data(db);
        **m.decided(db) == self.decided[..]
            && self.agreement.needs.alone.len() == self.alone.len()
            && self
                .agreement
                .needs
                .alone
                .iter()
                .zip(&self.alone)
                .all(|(t, a)| {
                    tools
                        .get(*t as usize)
                        .is_some_and(|tool| tool.alone(db) == *a)
                })
    }
}

/// The remembered scores of one contest: entries by the digest of their model examination's
/// inputs.
#[derive(Clone, Debug, Default)]
pub struct Memo {
    /// The digest every entry's digest starts from ([`global_digest`]): a memo of another one is
    /// not read past its header.
    global: Digest,
    entries: HashMap<Digest, Arc<Remembered>>,
    /// What the file it was read from holds (None: no usable file): [`Memo::write`] appends to
    /// it or writes it anew.
    file: Option<FileShape>,
    /// Entries computed in this process: what an append adds.
    fresh: Vec<Digest>,
}

/// How many entries and blocks a memo file holds (entries of earlier states included).
#[derive(Clone, Copy, Debug, Default)]
struct FileShape {
    entries: usize,
    blocks: usize,
}

/// How a podium report was made from a memo.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemoUse {
    /// Model examinations answered from the memo.
    pub remembered: usize,
    /// Model examinations computed from their runs: new inputs.
    pub computed: usize,
    /// Remembered model examinations computed again from their runs: the decisions they read
    /// moved.
    pub revived: usize,
}

impl Memo {
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The memo at `path`, if it is one of this format made for `global`; otherwise (none, of
    /// another schema, binary or contest, damaged: its first block's digest fails) an empty one,
    /// and everything is computed. A block cut short or damaged after the first (an append torn
    /// by a crash) ends the reading: the entries before it are used.
    pub fn read(path: &Path, global: &Digest) -> Memo {
        let _t = phase("remembered scores: read");
        let empty = Memo {
            global: *global,
            ..Memo::default()
        };
        let Ok(bytes) = std::fs::read(path) else {
            return empty;
        };
        decode(&bytes, global).unwrap_or(empty)
    }

    /// Keeps the memo at `path`: the entries computed in this process appended to the file it
    /// was read from, as one block written at once (a reader sees it whole or not at all), or,
    /// when that file holds too many entries of earlier states (or there is none), a new file
    /// of this memo's entries only, renamed over it. Not synced: a block torn by a crash fails
    /// its digest and its entries are computed again.
    pub fn write(&self, path: &Path) -> io::Result<()> {
        let _t = phase("remembered scores: write");
        let appendable = self.file.filter(|f| {
            f.blocks < MAX_BLOCKS && f.entries + self.fresh.len() <= 2 * self.entries.len()
        });
        if appendable.is_some() {
            use std::io::Write;
            let block = block(
                self.fresh
                    .iter()
                    .filter_map(|d| Some((d, self.entries.get(d)?))),
            );
            let mut file = std::fs::OpenOptions::new().append(true).open(path)?;
            return file.write_all(&block);
        }
        let mut bytes = header(&self.global);
        bytes.extend_from_slice(&block(self.entries.iter()));
        mccbuild_core::fsio::write_atomically_in_batch(path, &bytes)
    }
}

/// Blocks appended before the memo is written anew.
const MAX_BLOCKS: usize = 64;

/// Where the remembered scores of the contest at `manifest` live in the store's `meta` folder
/// (one per manifest, as the plan snapshot).
pub fn memo_path(meta_dir: &Path, manifest: &Path) -> PathBuf {
    let manifest = std::fs::canonicalize(manifest).unwrap_or_else(|_| manifest.to_path_buf());
    let digest = blake3::hash(manifest.to_string_lossy().as_bytes());
    meta_dir.join(format!("scores-{}.bin", &digest.to_hex()[..16]))
}

/// Whether a contest's podium report can be made from remembered scores: not with `[reference]`
/// answers, whose report reads every value's answers (its podiums are computed in full).
pub fn applies(plan: &Plan) -> bool {
    plan.reference.is_none()
}

/// What every entry's digest starts from: the memo's schema, the scoring code (the binary's
/// digest), the rules (the edition's digest: E-2.2, E-3.1, E-4.1 to E-4.3, and whether the
/// truth is voted or given), and the tools in their order (scores and tallies are by tool
/// index). Not the reference answers' basis: a contest with `[reference]` is not remembered
/// ([`applies`]).
pub fn global_digest(plan: &Plan, binary: &Digest) -> Digest {
    let mut h = blake3::Hasher::new();
    h.update(b"mccbuild remembered scores");
    h.update(&MEMO_SCHEMA.to_le_bytes());
    h.update(binary);
    put_str(&mut h, &plan.contest.edition.digest);
    h.update(&(plan.contest.tools.len() as u64).to_le_bytes());
    for t in &plan.contest.tools {
        put_str(&mut h, &t.name);
    }
    *h.finalize().as_bytes()
}

fn put_str(h: &mut blake3::Hasher, s: &str) {
    h.update(&(s.len() as u64).to_le_bytes());
    h.update(s.as_bytes());
}

fn put_values(buf: &mut Vec<u8>, values: Option<&Arc<[Option<mccbuild_core::Value>]>>) {
    let Some(values) = values else {
        buf.push(0);
        return;
    };
    buf.push(1);
    buf.extend_from_slice(&(values.len() as u64).to_le_bytes());
    for v in values.iter() {
        match v {
            None => buf.push(0),
            Some(v) => {
                let text = v.to_string();
                buf.push(1);
                buf.extend_from_slice(&(text.len() as u64).to_le_bytes());
                buf.extend_from_slice(text.as_bytes());
            }
        }
    }
}

/// The digest of one model examination's inputs: the global digest, then per examination
/// instance (in the plan's order) its examination, its values (how many, how many scored, the
/// truth given, the reference answers, the organisers' decisions) and each planned run's tool,
/// key and record digest (none: not stored). The run key covers the instance's content, the
/// tool and the limits; the record digest, every answer and measurement of the run.
pub fn examination_digest(
    global: &Digest,
    plan: &Plan,
    members: &[usize],
    runs_of: &[Vec<usize>],
    records: &[Option<Digest>],
) -> Digest {
    // Into a buffer, hashed once: a hasher update per field costs more than the hashing.
    let mut buf: Vec<u8> = Vec::with_capacity(4096);
    let mut h = blake3::Hasher::new();
    h.update(global);
    for &e in members {
        let ei = &plan.exam_instances[e];
        for n in [ei.instance, ei.exam, ei.ids.len(), ei.scored] {
            buf.extend_from_slice(&(n as u64).to_le_bytes());
        }
        for values in [&ei.truth, &ei.reference, &ei.corrections] {
            put_values(&mut buf, values.as_ref());
        }
        buf.extend_from_slice(&(runs_of[e].len() as u64).to_le_bytes());
        for &r in &runs_of[e] {
            let run = &plan.runs[r];
            buf.extend_from_slice(&(run.tool as u64).to_le_bytes());
            buf.extend_from_slice(&run.key.0);
            match &records[r] {
                Some(d) => {
                    buf.push(1);
                    buf.extend_from_slice(d);
                }
                None => buf.push(0),
            }
        }
        if buf.len() >= 1 << 15 {
            h.update(&buf);
            buf.clear();
        }
    }
    h.update(&buf);
    *h.finalize().as_bytes()
}

/// The contest's podium report, from the memo where it holds and from the runs elsewhere (the
/// same report as [`scores_report`] of a database built from every run: the same queries sum
/// it), and the memo of this state. `records`: each planned run's record digest (None: not
/// stored); `summary`: a stored run's summary, read only for the model examinations computed.
/// The plan must have no `[reference]` ([`applies`]).
pub fn podium_report<'a>(
    plan: &Plan,
    records: &[Option<Digest>],
    summary: impl Fn(&RunKey) -> Option<&'a Summary>,
    memo: &Memo,
    binary: &Digest,
) -> (ScoresReport, Memo, MemoUse) {
    let global = global_digest(plan, binary);
    let t = phase("remembered scores: digests");
    let shape = Examinations::of(plan);
    let digests = shape.digests(&global, plan, records);
    drop(t);
    let usable = memo.global == global;
    let kept: Vec<Option<Arc<Remembered>>> = digests
        .iter()
        .map(|d| usable.then(|| memo.entries.get(d).cloned()).flatten())
        .collect();
    let mut uses = MemoUse {
        remembered: kept.iter().filter(|k| k.is_some()).count(),
        computed: kept.iter().filter(|k| k.is_none()).count(),
        revived: 0,
    };
    // A run's inputs: from its summary, or none for a run of a remembered model examination.
    let runs = |e: usize, given: bool| -> Vec<RunInputs> {
        shape.runs_of[e]
            .iter()
            .map(|&r| {
                let run = &plan.runs[r];
                let (answers, competes, measurement) = match given {
                    true => run_inputs(summary(&run.key)),
                    false => run_inputs(None),
                };
                RunInputs {
                    tool: run.tool as u32,
                    competes,
                    answers,
                    measurement,
                }
            })
            .collect()
    };
    let (mut db, handles) = build(plan, &shape, &kept, &runs);
    // Remembered model examinations whose decisions moved get their runs; that changes no tally
    // (the same answers), hence no decision: one round, and a second finds none.
    loop {
        let stale = db.stale_remembered();
        if stale.is_empty() {
            break;
        }
        let _t = phase("remembered scores: revived");
        uses.revived += stale.len();
        uses.remembered -= stale.len();
        let mut changes = db.change();
        for m in stale {
            if let Some(k) = handles.examinations.iter().position(|x| *x == m) {
                let members = &shape.order[k].1;
                changes.revive(m, members.iter().map(|&e| runs(e, true)).collect());
            }
        }
    }
    let t = phase("remembered scores: report");
    let report = scores_report(plan, &db, &handles, false);
    drop(t);
    let t = phase("remembered scores: kept");
    // What was remembered and still holds is kept as it is; the rest is taken from the database.
    let mut fresh = Vec::new();
    let entries = handles
        .examinations
        .iter()
        .zip(&digests)
        .zip(kept)
        .map(|((m, digest), kept)| {
            let entry = match kept {
                Some(r) if m.remembered(&db).is_some() => r,
                _ => {
                    fresh.push(*digest);
                    Arc::new(remember(&db, *m))
                }
            };
            (*digest, entry)
        })
        .collect();
    drop(t);
    // Freed beside what the command does next (printing, saving).
    mccbuild_core::drop_beside(db);
    let memo = Memo {
        global,
        entries,
        file: memo.file.filter(|_| usable),
        fresh,
    };
    (report, memo, uses)
}

/// A plan's model examinations as the scoring database groups them: by model and examination,
/// in order of first appearance (so the `k`-th is the database's `k`-th).
struct Examinations {
    /// Per examination instance of the plan, its planned runs (indices into the plan's runs).
    runs_of: Vec<Vec<usize>>,
    /// Per model examination: (model, examination), and its examination instances.
    order: Vec<((u32, u32), Vec<usize>)>,
}

impl Examinations {
    fn of(plan: &Plan) -> Examinations {
        let mut runs_of: Vec<Vec<usize>> = vec![Vec::new(); plan.exam_instances.len()];
        for (i, run) in plan.runs.iter().enumerate() {
            runs_of[run.exam_instance].push(i);
        }
        let mut order: Vec<((u32, u32), Vec<usize>)> = Vec::new();
        let mut at: HashMap<(u32, u32), usize> = HashMap::new();
        for (e, ei) in plan.exam_instances.iter().enumerate() {
            let me = (plan.instances[ei.instance].model as u32, ei.exam as u32);
            let i = *at.entry(me).or_insert_with(|| {
                order.push((me, Vec::new()));
                order.len() - 1
            });
            order[i].1.push(e);
        }
        Examinations { runs_of, order }
    }

    /// Each model examination's digest ([`examination_digest`]), on every core.
    fn digests(&self, global: &Digest, plan: &Plan, records: &[Option<Digest>]) -> Vec<Digest> {
        use rayon::prelude::*;
        self.order
            .par_iter()
            .map(|(_, members)| examination_digest(global, plan, members, &self.runs_of, records))
            .collect()
    }
}

/// The scoring database of a plan whose model examinations are remembered (`kept`) or given
/// their runs (`runs(e, true)`), settled.
fn build(
    plan: &Plan,
    shape: &Examinations,
    kept: &[Option<Arc<Remembered>>],
    runs: &dyn Fn(usize, bool) -> Vec<RunInputs>,
) -> (ScoringDb, crate::database::Handles) {
    let t = phase("remembered scores: salsa inputs");
    let mut given = vec![false; plan.exam_instances.len()];
    let mut remembered = HashMap::new();
    for ((me, members), k) in shape.order.iter().zip(kept) {
        match k {
            Some(r) => {
                remembered.insert(*me, r.clone());
            }
            None => members.iter().for_each(|&e| given[e] = true),
        }
    }
    let inputs = contest_inputs(plan, |e| runs(e, given[e]), remembered);
    drop(t);
    let _t = phase("remembered scores: database built and settled");
    let mut db = ScoringDb::default();
    let handles = db.build(inputs);
    debug_assert!(shape
        .order
        .iter()
        .enumerate()
        .all(|(k, (_, members))| handles.exam_instances[members[0]].0 == k));
    (db, handles)
}

/// What to remember of a model examination whose scores are up to date.
fn remember(db: &ScoringDb, m: ModelExamination) -> Remembered {
    let agreement = agreement(db, m).clone();
    let tools = m.contest(db).tool_data(db);
    let alone = agreement
        .needs
        .alone
        .iter()
        .map(|t| tools.get(*t as usize).is_some_and(|tool| tool.alone(db)))
        .collect();
    let scores = exam_scores(db, m);
    Remembered {
        agreement,
        alone,
        decided: m.decided(db).to_vec(),
        totals: scores.totals.clone(),
        completed: scores.completed.clone(),
    }
}

// The file: a header (MAGIC, the schema, the global digest), then blocks, each its payload's
// length and blake3 digest, then the payload: entries, each its digest, its length and its bytes.

const HEADER: usize = 8 + 4 + 32;

fn header(global: &Digest) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(HEADER);
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&MEMO_SCHEMA.to_le_bytes());
    bytes.extend_from_slice(global);
    bytes
}

fn block<'a>(entries: impl Iterator<Item = (&'a Digest, &'a Arc<Remembered>)>) -> Vec<u8> {
    let mut payload = Writer::default();
    for (digest, r) in entries {
        payload.bytes(digest);
        let at = payload.0.len();
        payload.u32(0);
        payload.remembered(r);
        let len = (payload.0.len() - at - 4) as u32;
        payload.0[at..at + 4].copy_from_slice(&len.to_le_bytes());
    }
    let mut bytes = Vec::with_capacity(40 + payload.0.len());
    bytes.extend_from_slice(&(payload.0.len() as u64).to_le_bytes());
    bytes.extend_from_slice(blake3::hash(&payload.0).as_bytes());
    bytes.extend_from_slice(&payload.0);
    bytes
}

fn decode(bytes: &[u8], global: &Digest) -> Option<Memo> {
    use rayon::prelude::*;
    if bytes.len() < HEADER
        || &bytes[..8] != MAGIC
        || bytes[8..12] != MEMO_SCHEMA.to_le_bytes()
        || &bytes[12..44] != global
    {
        return None;
    }
    let _t = phase("remembered scores: decode");
    // Every whole block's entries, in order (a later entry of a digest wins).
    let mut rest = &bytes[HEADER..];
    let mut found: Vec<(&[u8], &[u8])> = Vec::new();
    let mut blocks = 0;
    while rest.len() >= 40 {
        let len = usize::try_from(u64::from_le_bytes(rest[..8].try_into().ok()?)).ok()?;
        let Some(payload) = rest.get(40..40usize.checked_add(len)?) else {
            break;
        };
        if blake3::hash(payload).as_bytes()[..] != rest[8..40] {
            break;
        }
        let mut entries = Reader(payload);
        let mut these = Vec::new();
        while !entries.0.is_empty() {
            let digest = entries.take(32)?;
            let len = entries.u32()? as usize;
            these.push((digest, entries.take(len)?));
        }
        found.extend(these);
        blocks += 1;
        rest = &rest[40 + len..];
    }
    if blocks == 0 {
        return None;
    }
    let decoded: Vec<(Digest, Arc<Remembered>)> = found
        .par_iter()
        .map(|(digest, bytes)| {
            let mut r = Reader(bytes);
            let remembered = r.remembered()?;
            r.0.is_empty()
                .then(|| Some(((*digest).try_into().ok()?, Arc::new(remembered))))?
        })
        .collect::<Option<_>>()?;
    Some(Memo {
        global: *global,
        file: Some(FileShape {
            entries: decoded.len(),
            blocks,
        }),
        entries: decoded.into_iter().collect(),
        fresh: Vec::new(),
    })
}

#[derive(Default)]
struct Writer(Vec<u8>);

impl Writer {
    fn u8(&mut self, x: u8) {
        self.0.push(x);
    }
    fn u32(&mut self, x: u32) {
        self.0.extend_from_slice(&x.to_le_bytes());
    }
    fn u64(&mut self, x: u64) {
        self.0.extend_from_slice(&x.to_le_bytes());
    }
    fn f64(&mut self, x: f64) {
        self.u64(x.to_bits());
    }
    fn bytes(&mut self, b: &[u8]) {
        self.0.extend_from_slice(b);
    }
    fn big(&mut self, n: &BigInt) {
        let b = n.to_signed_bytes_le();
        self.u32(b.len() as u32);
        self.bytes(&b);
    }
    fn sum(&mut self, s: &Sum) {
        match s {
            Sum::Small(n, d) => {
                self.u8(0);
                self.bytes(&n.to_le_bytes());
                self.bytes(&d.to_le_bytes());
            }
            Sum::Big(x) => {
                self.u8(1);
                self.big(x.numer());
                self.big(x.denom());
            }
        }
    }
    fn tools(&mut self, tools: &[ToolIdx]) {
        self.u32(tools.len() as u32);
        tools.iter().for_each(|t| self.u32(*t));
    }
    fn shape(&mut self, shape: &[Vec<ToolIdx>]) {
        self.u32(shape.len() as u32);
        shape.iter().for_each(|class| self.tools(class));
    }
    fn remembered(&mut self, r: &Remembered) {
        let tally = &r.agreement.tally;
        self.u64(tally.agreed_values);
        self.u32(tally.tools.len() as u32);
        for t in &tally.tools {
            self.u64(t.selected);
            self.u64(t.correct);
        }
        self.tools(&r.agreement.needs.alone);
        self.u32(r.agreement.needs.shapes.len() as u32);
        r.agreement.needs.shapes.iter().for_each(|s| self.shape(s));
        self.u32(r.alone.len() as u32);
        r.alone.iter().for_each(|a| self.u8(*a as u8));
        self.u32(r.decided.len() as u32);
        for (shape, decision) in &r.decided {
            self.shape(shape);
            match decision {
                None => self.u8(0),
                Some(d) => {
                    self.u8(1);
                    self.u32(*d);
                }
            }
        }
        self.u32(r.totals.len() as u32);
        for t in r.totals.iter() {
            self.u32(t.tool);
            self.sum(&t.points);
            self.u32(t.completed);
            self.sum(&t.cpu_s);
            self.sum(&t.peak_memory_mb);
        }
        self.u32(r.completed.len() as u32);
        for instance in r.completed.iter() {
            self.u32(instance.len() as u32);
            for c in instance {
                self.u32(c.tool);
                self.f64(c.cpu_s);
                self.f64(c.peak_memory_mb);
            }
        }
    }
}

/// Reads what [`Writer`] wrote; None at the first byte that does not fit.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(head)
    }
    fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn i128(&mut self) -> Option<i128> {
        Some(i128::from_le_bytes(self.take(16)?.try_into().ok()?))
    }
    fn f64(&mut self) -> Option<f64> {
        Some(f64::from_bits(self.u64()?))
    }
    /// A count of items each at least `min` bytes long: no more than the bytes left allow.
    fn count(&mut self, min: usize) -> Option<usize> {
        let n = self.u32()? as usize;
        (n.saturating_mul(min) <= self.0.len()).then_some(n)
    }
    fn big(&mut self) -> Option<BigInt> {
        let n = self.count(1)?;
        Some(BigInt::from_signed_bytes_le(self.take(n)?))
    }
    fn sum(&mut self) -> Option<Sum> {
        match self.u8()? {
            0 => {
                let (n, d) = (self.i128()?, self.i128()?);
                (d > 0).then_some(Sum::Small(n, d))
            }
            1 => {
                let (n, d) = (self.big()?, self.big()?);
                (d > BigInt::from(0)).then(|| Sum::Big(Exact::new(n, d)))
            }
            _ => None,
        }
    }
    fn tools(&mut self) -> Option<Vec<ToolIdx>> {
        let n = self.count(4)?;
        (0..n).map(|_| self.u32()).collect()
    }
    fn shape(&mut self) -> Option<Vec<Vec<ToolIdx>>> {
        let n = self.count(4)?;
        (0..n).map(|_| self.tools()).collect()
    }
    fn remembered(&mut self) -> Option<Remembered> {
        let agreed_values = self.u64()?;
        let n = self.count(16)?;
        let tools = (0..n)
            .map(|_| {
                Some(ToolTally {
                    selected: self.u64()?,
                    correct: self.u64()?,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        let alone_tools = self.tools()?;
        let n = self.count(4)?;
        let shapes = (0..n).map(|_| self.shape()).collect::<Option<Vec<_>>>()?;
        let n = self.count(1)?;
        let alone = (0..n)
            .map(|_| match self.u8()? {
                0 => Some(false),
                1 => Some(true),
                _ => None,
            })
            .collect::<Option<Vec<_>>>()?;
        let n = self.count(5)?;
        let decided = (0..n)
            .map(|_| {
                let shape = self.shape()?;
                let decision = match self.u8()? {
                    0 => None,
                    1 => Some(self.u32()?),
                    _ => return None,
                };
                Some((shape, decision))
            })
            .collect::<Option<Vec<_>>>()?;
        let n = self.count(4 + 3 * 9 + 4)?;
        let totals = (0..n)
            .map(|_| {
                Some(ExamTotal {
                    tool: self.u32()?,
                    points: self.sum()?,
                    completed: self.u32()?,
                    cpu_s: self.sum()?,
                    peak_memory_mb: self.sum()?,
                })
            })
            .collect::<Option<Arc<[_]>>>()?;
        let n = self.count(4)?;
        let completed = (0..n)
            .map(|_| {
                let k = self.count(20)?;
                (0..k)
                    .map(|_| {
                        Some(Completed {
                            tool: self.u32()?,
                            cpu_s: self.f64()?,
                            peak_memory_mb: self.f64()?,
                        })
                    })
                    .collect::<Option<Vec<_>>>()
            })
            .collect::<Option<Arc<[_]>>>()?;
        Some(Remembered {
            agreement: Agreement {
                tally: ConfidenceTally {
                    agreed_values,
                    tools,
                },
                needs: DecisionNeeds {
                    alone: alone_tools,
                    shapes,
                },
            },
            alone,
            decided,
            totals,
            completed,
        })
    }
}
