//! The results key: a digest of everything a plan's scores depend on, its runs hashed in parts
//! of a fixed size on every core.

use mccbuild_core::digest::Digest;
use mccbuild_plan::manifest::ToolKind;
use mccbuild_plan::{Plan, Run};

/// Bump when what the results report holds, its file's format, or the encoding of its key,
/// changes (it is in the key, and the version of the report's frame: an older report is not
/// found, nor read). (6: the report's file framed.)
pub(super) const RESULTS_SCHEMA: u32 = 6;

/// Runs per part of the results key hashed on its own (on any core; a fixed count, so the key
/// does not depend on the machine).
pub const RUNS_PER_PART: usize = 1 << 15;

/// The key of a plan's results: everything scoring depends on. The rules text, the scoring
/// shape of the contest (tools with family and kind, models with kind and size, which values each
/// examination of each instance has), each planned run's key and the content digest of its record
/// when it is stored (a run redone with another outcome has another record, so another key), and
/// the mccbuild binary itself (the scoring code). Equal keys mean equal results, so a no-op `run`
/// prints the cached report; a stale report cannot be found.
///
/// `record_digests` holds each planned run's record digest (`None`: not stored). The runs are
/// hashed in parts of [`RUNS_PER_PART`] ([`PartHasher`]), the parts on every core, and their
/// digests go into the key in order ([`results_key_of_parts`]).
pub fn results_key(plan: &Plan, record_digests: &[Option<Digest>], binary: &Digest) -> Digest {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    results_key_of_parts(plan, &runs_parts(plan, record_digests, threads), binary)
}

/// [`results_key`] from the digests of its parts of runs, in order (each made by a
/// [`PartHasher`] from [`RUNS_PER_PART`] runs, the last from the rest).
pub fn results_key_of_parts(plan: &Plan, parts: &[Digest], binary: &Digest) -> Digest {
    assert_eq!(
        parts.len(),
        plan.runs.len().div_ceil(RUNS_PER_PART),
        "one digest per part of the runs"
    );
    // Streamed into the hasher through a small buffer (the encoding of 300,000 runs is tens
    // of megabytes): the same bytes, so the same key, as hashing them at once.
    let mut hasher = blake3::Hasher::new();
    let mut buf: Vec<u8> = Vec::with_capacity(1 << 16);
    let mut put = |bytes: &[u8]| {
        buf.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
        buf.extend_from_slice(bytes);
        if buf.len() >= 1 << 15 {
            hasher.update(&buf);
            buf.clear();
        }
    };
    put(b"mccbuild results");
    put(&RESULTS_SCHEMA.to_le_bytes());
    put(binary);
    put(plan.contest.edition.digest.as_bytes());
    put(plan.contest.name.as_bytes());
    for t in &plan.contest.tools {
        put(t.name.as_bytes());
        put(t.family.as_bytes());
        put(&[(t.kind == ToolKind::Competing) as u8]);
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
    // The reference answers and the basis: a new reference re-scores (it is in no run key).
    if let (Some(config), Some(reference)) = (&plan.contest.reference, &plan.reference) {
        put(config.basis.name().as_bytes());
        put(reference.describe().as_bytes());
        for ei in &plan.exam_instances {
            for v in ei.reference.iter().flat_map(|r| r.iter()) {
                put(v
                    .as_ref()
                    .map_or_else(|| "?".to_string(), |v| v.to_string())
                    .as_bytes());
            }
            put(b";");
        }
    }
    // The organisers' decisions (E-6.3): new corrections re-score (they are in no run key).
    if let Some(corrections) = &plan.corrections {
        put(b"corrections");
        for c in &corrections.entries {
            put(c.instance.as_bytes());
            put(c.examination.as_bytes());
            put(c.id.as_bytes());
            put(c.value.to_string().as_bytes());
        }
    }
    put(b"runs");
    put(&(plan.runs.len() as u64).to_le_bytes());
    hasher.update(&buf);
    for part in parts {
        hasher.update(part);
    }
    *hasher.finalize().as_bytes()
}

/// One part of the runs of a results key: each run as a fixed-width record (its examination
/// instance, its tool, then 1 and its record's content digest, or 0 and its key when it is not
/// stored), hashed through a buffer that stays in the cache.
pub struct PartHasher {
    hasher: blake3::Hasher,
    buf: Vec<u8>,
}

impl Default for PartHasher {
    fn default() -> PartHasher {
        PartHasher {
            hasher: blake3::Hasher::new(),
            buf: Vec::with_capacity(1 << 16),
        }
    }
}

impl PartHasher {
    /// The next run of the part, with its record's content digest (`None`: not stored).
    pub fn add(&mut self, run: &Run, record: Option<&Digest>) {
        if self.buf.len() + RUN_BYTES > self.buf.capacity() {
            self.hasher.update(&self.buf);
            self.buf.clear();
        }
        self.buf
            .extend_from_slice(&(run.exam_instance as u64).to_le_bytes());
        self.buf.extend_from_slice(&(run.tool as u64).to_le_bytes());
        // A record's content digest stands for its key too (a record holds its run's key, and
        // is verified against it).
        match record {
            Some(d) => {
                self.buf.push(1);
                self.buf.extend_from_slice(d);
            }
            None => {
                self.buf.push(0);
                self.buf.extend_from_slice(&run.key.0);
            }
        }
    }

    pub fn finish(mut self) -> Digest {
        self.hasher.update(&self.buf);
        *self.hasher.finalize().as_bytes()
    }
}

/// The digests of the parts of [`results_key`]'s runs, in order, hashed on `threads` threads.
pub(super) fn runs_parts(
    plan: &Plan,
    record_digests: &[Option<Digest>],
    threads: usize,
) -> Vec<Digest> {
    assert_eq!(
        plan.runs.len(),
        record_digests.len(),
        "one record digest per planned run"
    );
    let parts = plan.runs.len().div_ceil(RUNS_PER_PART);
    let mut digests = vec![[0u8; 32]; parts];
    let threads = threads.clamp(1, parts.max(1));
    // Each thread takes every `threads`-th part.
    let mut mine: Vec<Vec<(usize, &mut Digest)>> = (0..threads).map(|_| Vec::new()).collect();
    for (p, digest) in digests.iter_mut().enumerate() {
        mine[p % threads].push((p, digest));
    }
    std::thread::scope(|scope| {
        for parts in mine {
            scope.spawn(move || {
                for (p, digest) in parts {
                    let start = p * RUNS_PER_PART;
                    let end = (start + RUNS_PER_PART).min(plan.runs.len());
                    let mut part = PartHasher::default();
                    for (run, record) in plan.runs[start..end]
                        .iter()
                        .zip(&record_digests[start..end])
                    {
                        part.add(run, record.as_ref());
                    }
                    *digest = part.finish();
                }
            });
        }
    });
    digests
}

/// Bytes of one run in a part of the results key ([`PartHasher`]).
const RUN_BYTES: usize = 8 + 8 + 1 + 32;
