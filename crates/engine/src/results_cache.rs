//! The scores report of a plan, cached in the store (`results/<key>.json`) under a key of
//! everything it depends on: a no-op `mccbuild run` prints the podiums without scoring.

use mccbuild_core::digest::{hex, Digest};
use mccbuild_plan::manifest::ToolKind;
use mccbuild_plan::{Plan, Run};
use mccbuild_scoring::scores::ScoresReport;
use mccbuild_store::Store;

/// Bump when what the results report holds, or the encoding of its key, changes.
const RESULTS_SCHEMA: u32 = 5;

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
fn runs_parts(plan: &Plan, record_digests: &[Option<Digest>], threads: usize) -> Vec<Digest> {
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

/// Where the results report of `key` is cached (`store/results/<key>.json`).
pub fn path(store: &Store, key: &Digest) -> std::path::PathBuf {
    store
        .root()
        .join("results")
        .join(format!("{}.json", hex(key)))
}

/// Reads a cached results report (`store/results/<key>.json`), if there is one.
pub fn load(store: &Store, key: &Digest) -> Option<ScoresReport> {
    let bytes = std::fs::read(path(store, key)).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Saves a results report under its key, keeping the 20 most recent reports.
pub fn save(store: &Store, key: &Digest, report: &ScoresReport) -> std::io::Result<()> {
    let dir = store.root().join("results");
    std::fs::create_dir_all(&dir)?;
    // Renamed into place, not synced (a cache: a file torn by a crash does not parse, and the
    // report is computed again); the sync cost the first scoring after a change ~9 ms.
    mccbuild_core::fsio::write_atomically_in_batch(
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

/// The key of a plan's `scores --json` output: its results key ([`results_key`]: everything the
/// scores depend on) and what the JSON shows beyond the scores, every value's id (the values'
/// count is in the results key, their names come from the formula files).
pub fn json_key(results_key: &Digest, plan: &Plan) -> Digest {
    // Through a buffer, as in `results_key`: a `blake3` update per id costs more than hashing.
    let mut hasher = blake3::Hasher::new();
    let mut buf: Vec<u8> = Vec::with_capacity(1 << 16);
    buf.extend_from_slice(b"mccbuild scores json");
    buf.extend_from_slice(results_key);
    for ei in &plan.exam_instances {
        buf.extend_from_slice(&(ei.ids.len() as u64).to_le_bytes());
        for id in ei.ids.iter() {
            buf.extend_from_slice(&(id.len() as u64).to_le_bytes());
            buf.extend_from_slice(id.as_bytes());
        }
        if buf.len() >= 1 << 15 {
            hasher.update(&buf);
            buf.clear();
        }
    }
    hasher.update(&buf);
    *hasher.finalize().as_bytes()
}

/// The folder of the cached `scores --json` outputs (`store/scores-json/<key>.json`).
fn json_dir(store: &Store) -> std::path::PathBuf {
    store.root().join("scores-json")
}

/// How many `scores --json` outputs are kept (each is the size of the edition's JSON: 57 MB for
/// the 2024 replay).
const JSON_KEPT: usize = 2;

/// The cached `scores --json` output of a results key ([`json_key`]), if a whole, undamaged one
/// is stored: the file is the JSON followed by the blake3 digest of the JSON (32 bytes), and a
/// torn or damaged file fails its digest and is not used. Read twice through a small buffer
/// (checked, then copied by [`CachedJson::copy_to`]) rather than held whole: the file is never
/// changed once in place (written aside, then renamed), and the open file keeps its content
/// even if another command replaces or removes it in between.
pub fn load_json(store: &Store, key: &Digest) -> Option<CachedJson> {
    use std::io::Read;
    let mut file = std::fs::File::open(json_dir(store).join(format!("{}.json", hex(key)))).ok()?;
    let len = file.metadata().ok()?.len().checked_sub(32)?;
    let mut hasher = blake3::Hasher::new();
    let mut buf = vec![0; 1 << 20];
    let mut left = len;
    while left > 0 {
        let n = file.read(&mut buf[..left.min(1 << 20) as usize]).ok()?;
        if n == 0 {
            return None;
        }
        hasher.update(&buf[..n]);
        left -= n as u64;
    }
    let mut digest = [0; 32];
    file.read_exact(&mut digest).ok()?;
    (hasher.finalize().as_bytes() == &digest).then_some(CachedJson { file, len, buf })
}

/// A cached `scores --json` output whose digest holds ([`load_json`]).
pub struct CachedJson {
    file: std::fs::File,
    len: u64,
    buf: Vec<u8>,
}

impl CachedJson {
    /// Writes the JSON (without its digest) to `out`.
    pub fn copy_to(mut self, out: &mut impl std::io::Write) -> std::io::Result<()> {
        use std::io::{Read, Seek};
        self.file.seek(std::io::SeekFrom::Start(0))?;
        let mut left = self.len;
        while left > 0 {
            let n = self
                .file
                .read(&mut self.buf[..left.min(1 << 20) as usize])?;
            if n == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            out.write_all(&self.buf[..n])?;
            left -= n as u64;
        }
        out.flush()
    }
}

/// A `scores --json` output being written to standard output and, beside it, into the cache
/// under its results key ([`load_json`]). Whatever goes wrong with the cache's file only costs
/// the cache entry: the output is written all the same.
pub struct JsonTee<W: std::io::Write> {
    out: W,
    entry: Option<(std::io::BufWriter<tempfile::NamedTempFile>, blake3::Hasher)>,
    path: std::path::PathBuf,
}

impl<W: std::io::Write> JsonTee<W> {
    pub fn new(out: W, store: &Store, key: &Digest) -> Self {
        let dir = json_dir(store);
        let entry = std::fs::create_dir_all(&dir)
            .and_then(|()| {
                tempfile::Builder::new()
                    .prefix(".scores-json.")
                    .suffix(".tmp")
                    .tempfile_in(&dir)
            })
            .ok()
            .map(|f| {
                (
                    std::io::BufWriter::with_capacity(1 << 16, f),
                    blake3::Hasher::new(),
                )
            });
        JsonTee {
            out,
            entry,
            path: dir.join(format!("{}.json", hex(key))),
        }
    }

    /// Flushes the output, then puts the cache entry in place (renamed: a reader sees a whole
    /// file or none; not synced: a file torn by a crash fails its digest) and keeps the
    /// [`JSON_KEPT`] most recent entries.
    pub fn finish(mut self) -> std::io::Result<()> {
        self.out.flush()?;
        if let Some((file, hasher)) = self.entry.take() {
            let _ = Self::persist(file, hasher, &self.path);
        }
        Ok(())
    }

    fn persist(
        mut file: std::io::BufWriter<tempfile::NamedTempFile>,
        hasher: blake3::Hasher,
        path: &std::path::Path,
    ) -> std::io::Result<()> {
        use std::io::Write;
        file.write_all(hasher.finalize().as_bytes())?;
        let file = file.into_inner().map_err(|e| e.into_error())?;
        file.persist(path).map_err(|e| e.error)?;
        let dir = path.parent().unwrap_or(path);
        let mut files: Vec<(std::time::SystemTime, std::path::PathBuf)> = std::fs::read_dir(dir)?
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().ends_with(".json"))
            .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
            .collect();
        files.sort();
        let excess = files.len().saturating_sub(JSON_KEPT);
        for (_, path) in files.into_iter().take(excess) {
            let _ = std::fs::remove_file(path);
        }
        Ok(())
    }
}

impl<W: std::io::Write> std::io::Write for JsonTee<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.out.write(buf)?;
        if let Some((file, hasher)) = &mut self.entry {
            if file.write_all(&buf[..n]).is_ok() {
                hasher.update(&buf[..n]);
            } else {
                self.entry = None;
            }
        }
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use mccbuild_plan::digest_cache::DigestCache;
    use mccbuild_plan::instance::ArchiveLimits;
    use mccbuild_plan::manifest::Contest;

    /// The demo contest's plan, its runs repeated (each copy with other keys) past two parts
    /// of the results key.
    pub(crate) fn demo_plan_past_two_parts() -> Plan {
        // The demo contest of the repository (two folders above this crate).
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
            .canonicalize()
            .expect("the repository");
        let contest = Contest::load(&root.join("contest.toml")).expect("the demo contest");

        let executor = vec![("kind".to_string(), "test".to_string())];
        let mut plan = Plan::build(
            contest,
            &executor,
            &mut DigestCache::in_memory(),
            ArchiveLimits::default(),
        )
        .expect("the demo plans");
        let demo = plan.runs.clone();
        // Hundreds of copies (the demo has ~200 runs): each numbered in two bytes of its keys.
        let mut copy = 0u16;
        while plan.runs.len() <= 2 * RUNS_PER_PART {
            copy += 1;
            plan.runs.extend(demo.iter().cloned().map(|mut run| {
                let [low, high] = copy.to_le_bytes();
                run.key.0[0] ^= low;
                run.key.0[1] = low;
                run.key.0[2] = high;
                run
            }));
        }
        plan
    }

    /// [`demo_plan_past_two_parts`], and a record digest for most runs.
    fn plan_and_digests() -> (Plan, Vec<Option<Digest>>) {
        let plan = demo_plan_past_two_parts();
        let digests = (0..plan.runs.len())
            .map(|i| (i % 5 != 0).then(|| *blake3::hash(&i.to_le_bytes()).as_bytes()))
            .collect();
        (plan, digests)
    }

    #[test]
    fn every_ingredient_of_the_runs_changes_the_results_key() {
        let (mut plan, mut digests) = plan_and_digests();
        let binary = [3; 32];
        let base = results_key(&plan, &digests, &binary);
        assert_eq!(
            base,
            results_key(&plan, &digests, &binary),
            "the same inputs"
        );
        let mut seen = vec![base];
        let mut changed = |what: &str, key: Digest| {
            assert!(!seen.contains(&key), "{what} left the key as it was");
            seen.push(key);
        };
        changed("the binary", results_key(&plan, &digests, &[4; 32]));
        // In the first part, in a later one, the very last run.
        for i in [7, RUNS_PER_PART + 11, plan.runs.len() - 1] {
            let was = digests[i];
            digests[i] = Some([i as u8; 32]);
            changed("a record's digest", results_key(&plan, &digests, &binary));
            digests[i] = None;
            changed("a record gone", results_key(&plan, &digests, &binary));
            // The key of a run not stored (a stored run's key is in its record, whose
            // digest is in the key).
            plan.runs[i].key.0[9] ^= 1;
            changed("a run's key", results_key(&plan, &digests, &binary));
            plan.runs[i].key.0[9] ^= 1;
            digests[i] = was;
            plan.runs[i].tool = (plan.runs[i].tool + 1) % plan.contest.tools.len();
            changed("a run's tool", results_key(&plan, &digests, &binary));
            plan.runs[i].exam_instance += 1;
            changed(
                "a run's examination instance",
                results_key(&plan, &digests, &binary),
            );
        }
        let run = plan.runs.pop().unwrap();
        let digest = digests.pop().unwrap();
        changed("a run fewer", results_key(&plan, &digests, &binary));
        plan.runs.push(run);
        digests.push(digest);
        plan.runs.swap(3, 4);
        digests.swap(3, 4);
        changed(
            "two runs in another order",
            results_key(&plan, &digests, &binary),
        );
        plan.contest.name.push('!');
        changed("the contest's name", results_key(&plan, &digests, &binary));
        plan.instances[0].name.push('!');
        changed("an instance's name", results_key(&plan, &digests, &binary));
    }

    /// The runs are hashed in parts of a fixed size, whatever the number of threads.
    #[test]
    fn the_parts_of_the_results_key_do_not_depend_on_the_threads() {
        let (plan, digests) = plan_and_digests();
        let one = runs_parts(&plan, &digests, 1);
        assert_eq!(one.len(), plan.runs.len().div_ceil(RUNS_PER_PART));
        for threads in [2, 3, 8] {
            assert_eq!(
                runs_parts(&plan, &digests, threads),
                one,
                "{threads} threads"
            );
        }
    }
}
