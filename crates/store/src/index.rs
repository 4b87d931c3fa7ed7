//! The store's index: a summary of every record (what scoring needs), in one checksummed file.
//!
//! Records stay the source of truth; the index is rebuilt from them when it is missing or
//! damaged. It is kept in step with `runs/` through the modification times of the 256 shard
//! folders: a record added or removed by any process (an executor, a Slurm step, a user) changes
//! its shard's time, and only changed shards are listed again.
//!
//! The file holds the sorted keys and the shard times in a first section, the summaries in a
//! second, each with its own checksum: knowing which runs are stored (a no-op `mccbuild run`)
//! does not decode the summaries; they are decoded when scoring first asks for one.
//!
//! ```text
//! "MCCBIDX2" | blake3(keys section) | blake3(summaries section) | n: u64 |
//! keys section: 256 shard times (i128, MIN = unknown), n sorted keys |
//! summaries section: postcard, one entry per key, in key order
//! ```

use std::collections::HashSet;
use std::fs;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::sync::{Arc, OnceLock};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use mccbuild_core::fsio::write_atomically;
use mccbuild_core::{KeyMap, Measurement, Outcome, Response, RunKey, Termination, Value};

use crate::{parse_record, CorruptRecord, RunRecord, Store};

const INDEX_MAGIC: &[u8; 8] = b"MCCBIDX2";
const SHARDS: usize = 256;
const HEADER: usize = 8 + 32 + 32 + 8;
const BUCKETS: usize = 1 << 16;

fn bucket_of(key: &RunKey) -> usize {
    (key.0[0] as usize) << 8 | key.0[1] as usize
}

fn buckets(keys: &[RunKey]) -> Vec<u32> {
    let mut starts = vec![0u32; BUCKETS + 1];
    for k in keys {
        starts[bucket_of(k) + 1] += 1;
    }
    for b in 0..BUCKETS {
        starts[b + 1] += starts[b];
    }
    starts
}

/// What scoring needs of a run.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    pub response: Response,
    pub measurement: Measurement,
    /// (position among the examination's value ids, value), sorted by position. Positions are
    /// valid for every plan that has this run's key: the key covers the formula file.
    pub answers: Arc<[(u16, Value)]>,
}

impl Summary {
    /// What became of the run.
    pub fn outcome(&self) -> Outcome {
        Outcome::of(self.response, self.measurement.termination)
    }

    pub fn of(record: &RunRecord) -> Summary {
        Summary {
            response: record.response,
            measurement: record.measurement,
            answers: record
                .answers
                .iter()
                .map(|a| (a.position, a.value.clone()))
                .collect(),
        }
    }
}

/// A summary as the index file holds it (postcard).
#[derive(Serialize, Deserialize)]
struct Entry {
    response: Response,
    /// `Termination` is internally tagged for JSON, which postcard cannot decode: pairs here.
    termination: (u8, i32),
    cpu_time_s: f64,
    wall_time_s: f64,
    peak_memory_bytes: u64,
    answers: Vec<(u16, Value)>,
}

impl Entry {
    fn of(s: &Summary) -> Entry {
        Entry {
            response: s.response,
            termination: termination_code(s.measurement.termination),
            cpu_time_s: s.measurement.cpu_time_s,
            wall_time_s: s.measurement.wall_time_s,
            peak_memory_bytes: s.measurement.peak_memory_bytes,
            answers: s.answers.to_vec(),
        }
    }

    fn summary(self) -> Option<Summary> {
        Some(Summary {
            response: self.response,
            measurement: Measurement {
                termination: termination_from_code(self.termination)?,
                cpu_time_s: self.cpu_time_s,
                wall_time_s: self.wall_time_s,
                peak_memory_bytes: self.peak_memory_bytes,
            },
            answers: self.answers.into(),
        })
    }
}

/// The in-memory index of a store.
pub struct Index {
    /// The index file's keys, sorted.
    file_keys: Vec<RunKey>,
    /// `file_keys[buckets[b]..buckets[b + 1]]` are the keys whose first two bytes are `b`: a
    /// lookup touches one or two cache lines instead of a binary search over megabytes.
    buckets: Vec<u32>,
    /// The file's summaries section, decoded on first use.
    file_body: Vec<u8>,
    file_summaries: OnceLock<Vec<Option<Summary>>>,
    /// Runs found or recorded since the file was written.
    added: KeyMap<Summary>,
    /// File keys whose records are gone.
    removed: HashSet<RunKey>,
    shard_mtimes: Vec<Option<i128>>,
    dirty: bool,
}

/// What loading found.
#[derive(Debug, Default)]
pub struct LoadReport {
    /// Records read from `runs/` because the index did not have them yet.
    pub records_read: usize,
    /// Records that could not be used (they will be run again).
    pub corrupt: Vec<CorruptRecord>,
    /// Why the index file itself was not used, if it was not.
    pub index_problem: Option<String>,
    /// Keys whose records appeared or disappeared (what `mccbuild watch` applies).
    pub changed: Vec<RunKey>,
}

impl Index {
    /// Loads the index and brings it up to date with `runs/`.
    pub fn load(store: &Store) -> (Index, LoadReport) {
        let mut report = LoadReport::default();
        let mut index = match fs::read(store.index_path()) {
            Ok(bytes) => match decode(bytes) {
                Ok(index) => index,
                Err(problem) => {
                    report.index_problem = Some(format!(
                        "{}: {problem}; rebuilding it from the records",
                        store.index_path().display()
                    ));
                    Index::empty()
                }
            },
            Err(e) if e.kind() == io::ErrorKind::NotFound => Index::empty(),
            Err(e) => {
                report.index_problem = Some(format!(
                    "cannot read {}: {e}; rebuilding it from the records",
                    store.index_path().display()
                ));
                Index::empty()
            }
        };
        if report.index_problem.is_some() {
            index.dirty = true;
        }
        index.reconcile(store, &mut report);
        (index, report)
    }

    fn empty() -> Index {
        Index {
            file_keys: Vec::new(),
            buckets: vec![0; BUCKETS + 1],
            file_body: Vec::new(),
            file_summaries: OnceLock::new(),
            added: KeyMap::default(),
            removed: HashSet::new(),
            shard_mtimes: vec![None; SHARDS],
            dirty: false,
        }
    }

    /// The position of a key in the index file.
    fn file_position(&self, key: &RunKey) -> Option<usize> {
        let b = bucket_of(key);
        let (start, end) = (self.buckets[b] as usize, self.buckets[b + 1] as usize);
        self.file_keys[start..end]
            .iter()
            .position(|k| k == key)
            .map(|p| start + p)
    }

    /// The file keys of one shard (a contiguous range: keys are sorted).
    fn file_shard(&self, shard: usize) -> &[RunKey] {
        let start = self
            .file_keys
            .partition_point(|k| (k.0[0] as usize) < shard);
        let end = self
            .file_keys
            .partition_point(|k| (k.0[0] as usize) <= shard);
        &self.file_keys[start..end]
    }

    /// Re-lists the shard folders whose modification time changed.
    pub fn reconcile(&mut self, store: &Store, report: &mut LoadReport) {
        let runs = store.root().join("runs");
        for shard in 0..SHARDS {
            let dir = runs.join(format!("{shard:02x}"));
            let mtime = fs::metadata(&dir)
                .ok()
                .map(|meta| meta.mtime() as i128 * 1_000_000_000 + meta.mtime_nsec() as i128);
            if mtime.is_some() && self.shard_mtimes[shard] == mtime {
                continue;
            }
            let mut present: HashSet<RunKey> = HashSet::new();
            if let Ok(listing) = fs::read_dir(&dir) {
                for entry in listing.flatten() {
                    let name = entry.file_name();
                    if let Some(key) = name
                        .to_str()
                        .and_then(|n| n.strip_suffix(".json"))
                        .and_then(RunKey::from_hex)
                    {
                        present.insert(key);
                    }
                }
            }
            let gone: Vec<RunKey> = self
                .file_shard(shard)
                .iter()
                .filter(|k| !present.contains(k) && !self.removed.contains(k))
                .copied()
                .collect();
            for key in gone {
                self.removed.insert(key);
                self.dirty = true;
                report.changed.push(key);
            }
            let before = self.added.len();
            self.added.retain(|k, _| {
                let keep = k.0[0] as usize != shard || present.contains(k);
                if !keep {
                    report.changed.push(*k);
                }
                keep
            });
            self.dirty |= self.added.len() != before;
            let mut corrupt_here = false;
            for key in present {
                if self.contains(&key) {
                    continue;
                }
                let path = store.record_path(&key);
                match fs::read(&path)
                    .map_err(|e| CorruptRecord {
                        path: path.clone(),
                        reason: format!("cannot read: {e}"),
                    })
                    .and_then(|b| parse_record(&path, &b, &key))
                {
                    Ok(record) => {
                        report.records_read += 1;
                        report.changed.push(key);
                        self.removed.remove(&key);
                        self.added.insert(key, Summary::of(&record));
                        self.dirty = true;
                    }
                    Err(corrupt) => {
                        corrupt_here = true;
                        report.corrupt.push(corrupt);
                    }
                }
            }
            // A folder changed within the last two seconds may change again within the same
            // clock tick: do not trust its time yet. Nor when a record there was damaged.
            let now = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_nanos() as i128)
                .unwrap_or(0);
            let trusted = mtime.filter(|m| now - m >= 2_000_000_000 && !corrupt_here);
            if self.shard_mtimes[shard] != trusted {
                self.shard_mtimes[shard] = trusted;
                self.dirty = true;
            }
        }
    }

    fn summaries(&self) -> &Vec<Option<Summary>> {
        self.file_summaries.get_or_init(|| {
            match postcard::from_bytes::<Vec<Entry>>(&self.file_body) {
                Ok(entries) if entries.len() == self.file_keys.len() => {
                    entries.into_iter().map(Entry::summary).collect()
                }
                // The section's checksum was verified: only a bug can get here. Nothing is
                // claimed then; the runs look unanswered rather than wrong.
                _ => vec![None; self.file_keys.len()],
            }
        })
    }

    pub fn get(&self, key: &RunKey) -> Option<&Summary> {
        if let Some(s) = self.added.get(key) {
            return Some(s);
        }
        if self.removed.contains(key) {
            return None;
        }
        let position = self.file_position(key)?;
        self.summaries()[position].as_ref()
    }

    /// Whether the run is stored (without decoding any summary).
    pub fn contains(&self, key: &RunKey) -> bool {
        self.added.contains_key(key)
            || (self.file_position(key).is_some() && !self.removed.contains(key))
    }

    pub fn len(&self) -> usize {
        self.file_keys.len() - self.removed.len()
            + self
                .added
                .keys()
                .filter(|k| self.file_position(k).is_none())
                .count()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Records a run just stored.
    pub fn insert(&mut self, key: RunKey, summary: Summary) {
        self.removed.remove(&key);
        self.added.insert(key, summary);
        self.dirty = true;
    }

    /// Forgets a run whose record was removed.
    pub fn remove(&mut self, key: &RunKey) {
        if self.added.remove(key).is_some() || self.file_position(key).is_some() {
            self.removed.insert(*key);
            self.dirty = true;
        }
    }

    /// Saves the index if it changed (after reconciling with records written meanwhile).
    pub fn save(&mut self, store: &Store) -> io::Result<()> {
        let mut report = LoadReport::default();
        self.reconcile(store, &mut report);
        if !self.dirty {
            return Ok(());
        }
        write_atomically(&store.index_path(), &self.encode())?;
        self.dirty = false;
        Ok(())
    }

    fn encode(&self) -> Vec<u8> {
        let mut all: Vec<(RunKey, &Summary)> =
            Vec::with_capacity(self.file_keys.len() + self.added.len());
        for (i, key) in self.file_keys.iter().enumerate() {
            if self.removed.contains(key) || self.added.contains_key(key) {
                continue;
            }
            if let Some(s) = &self.summaries()[i] {
                all.push((*key, s));
            }
        }
        all.extend(self.added.iter().map(|(k, s)| (*k, s)));
        all.sort_by_key(|(k, _)| *k);
        let mut keys_section = Vec::with_capacity(SHARDS * 16 + all.len() * 32);
        for m in &self.shard_mtimes {
            keys_section.extend_from_slice(&m.unwrap_or(i128::MIN).to_le_bytes());
        }
        for (k, _) in &all {
            keys_section.extend_from_slice(&k.0);
        }
        let entries: Vec<Entry> = all.iter().map(|(_, s)| Entry::of(s)).collect();
        let body = postcard::to_allocvec(&entries).unwrap_or_default();
        let mut bytes = Vec::with_capacity(HEADER + keys_section.len() + body.len());
        bytes.extend_from_slice(INDEX_MAGIC);
        bytes.extend_from_slice(blake3::hash(&keys_section).as_bytes());
        bytes.extend_from_slice(blake3::hash(&body).as_bytes());
        bytes.extend_from_slice(&(all.len() as u64).to_le_bytes());
        bytes.extend_from_slice(&keys_section);
        bytes.extend_from_slice(&body);
        bytes
    }
}

fn termination_code(t: Termination) -> (u8, i32) {
    match t {
        Termination::Exit { code } => (0, code),
        Termination::Signal { signal } => (1, signal),
        Termination::CpuLimit => (2, 0),
        Termination::MemoryLimit => (3, 0),
        Termination::WallLimit => (4, 0),
        Termination::OutputLimit => (5, 0),
        Termination::GuestPanic => (6, 0),
    }
}

fn termination_from_code((tag, n): (u8, i32)) -> Option<Termination> {
    Some(match tag {
        0 => Termination::Exit { code: n },
        1 => Termination::Signal { signal: n },
        2 => Termination::CpuLimit,
        3 => Termination::MemoryLimit,
        4 => Termination::WallLimit,
        5 => Termination::OutputLimit,
        6 => Termination::GuestPanic,
        _ => return None,
    })
}

fn decode(bytes: Vec<u8>) -> Result<Index, String> {
    if bytes.len() < HEADER || &bytes[..8] != INDEX_MAGIC {
        return Err("not an index of this mccbuild version".into());
    }
    let n = u64::from_le_bytes(bytes[72..80].try_into().map_err(|_| "malformed")?) as usize;
    let keys_end = HEADER
        .checked_add(SHARDS * 16)
        .and_then(|x| x.checked_add(n.checked_mul(32)?))
        .ok_or("malformed")?;
    if bytes.len() < keys_end {
        return Err("truncated".into());
    }
    let keys_section = &bytes[HEADER..keys_end];
    let body = &bytes[keys_end..];
    if blake3::hash(keys_section).as_bytes() != &bytes[8..40]
        || blake3::hash(body).as_bytes() != &bytes[40..72]
    {
        return Err("checksum mismatch (damaged)".into());
    }
    let shard_mtimes = keys_section[..SHARDS * 16]
        .chunks_exact(16)
        .map(|c| {
            let m = i128::from_le_bytes(c.try_into().unwrap_or([0; 16]));
            (m != i128::MIN).then_some(m)
        })
        .collect();
    let file_keys: Vec<RunKey> = keys_section[SHARDS * 16..]
        .chunks_exact(32)
        .map(|c| RunKey(c.try_into().unwrap_or([0; 32])))
        .collect();
    if file_keys.windows(2).any(|w| w[0] >= w[1]) {
        return Err("malformed (unsorted keys)".into());
    }
    let body = body.to_vec();
    Ok(Index {
        buckets: buckets(&file_keys),
        file_keys,
        file_body: body,
        file_summaries: OnceLock::new(),
        added: KeyMap::default(),
        removed: HashSet::new(),
        shard_mtimes,
        dirty: false,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_termination_survives_the_index() {
        for t in [
            Termination::Exit { code: 3 },
            Termination::Signal { signal: 9 },
            Termination::CpuLimit,
            Termination::MemoryLimit,
            Termination::WallLimit,
            Termination::OutputLimit,
            Termination::GuestPanic,
        ] {
            assert_eq!(termination_from_code(termination_code(t)), Some(t));
        }
    }

    use super::*;
    use crate::tests::sample_record;

    fn age_shards(store: &Store) {
        // Make shard times look old so that the index trusts them.
        let old = SystemTime::now() - std::time::Duration::from_secs(60);
        for entry in fs::read_dir(store.root().join("runs")).unwrap() {
            let dir = fs::File::open(entry.unwrap().path()).unwrap();
            dir.set_modified(old).unwrap();
        }
    }

    #[test]
    fn index_finds_records_written_by_anyone() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let (a, b) = (RunKey([1; 32]), RunKey([2; 32]));
        store.put(&sample_record(a)).unwrap();
        let (mut index, report) = Index::load(&store);
        assert_eq!(report.records_read, 1);
        assert!(index.contains(&a));
        age_shards(&store);
        index.save(&store).unwrap();
        // Another process adds a record: the shard's time changes, the index picks it up.
        store.put(&sample_record(b)).unwrap();
        let (index, report) = Index::load(&store);
        assert_eq!(report.records_read, 1, "only the new record is read");
        assert!(index.contains(&a) && index.contains(&b));
        assert_eq!(index.get(&b).unwrap().answers[0], (0, Value::Int(6)));
    }

    #[test]
    fn a_quiet_store_reads_no_record() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        for i in 0..20u8 {
            store.put(&sample_record(RunKey([i; 32]))).unwrap();
        }
        let (mut index, _) = Index::load(&store);
        age_shards(&store);
        index.save(&store).unwrap();
        let (index, report) = Index::load(&store);
        assert_eq!(report.records_read, 0);
        assert_eq!(index.len(), 20);
    }

    #[test]
    fn removed_records_leave_the_index_and_damage_is_rebuilt() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let (a, b) = (RunKey([1; 32]), RunKey([2; 32]));
        store.put(&sample_record(a)).unwrap();
        store.put(&sample_record(b)).unwrap();
        let (mut index, _) = Index::load(&store);
        age_shards(&store);
        index.save(&store).unwrap();
        store.remove(&a).unwrap();
        let (index, _) = Index::load(&store);
        assert!(!index.contains(&a) && index.contains(&b));
        // Flip a byte of the index: it is rebuilt from the records, with a word about it.
        let mut bytes = fs::read(store.index_path()).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 0xff;
        fs::write(store.index_path(), bytes).unwrap();
        let (index, report) = Index::load(&store);
        assert!(report.index_problem.unwrap().contains("checksum"));
        assert!(index.contains(&b));
    }

    #[test]
    fn corrupt_records_are_reported_not_indexed() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let a = RunKey([1; 32]);
        let path = store.record_path(&a);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, b"\x00\x01 not json").unwrap();
        let (index, report) = Index::load(&store);
        assert!(!index.contains(&a));
        assert_eq!(report.corrupt.len(), 1);
        assert_eq!(report.corrupt[0].path, path);
    }
}
