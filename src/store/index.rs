//! The store's index: a summary of every record (what scoring needs), in one checksummed file.
//!
//! Records stay the source of truth; the index is rebuilt from them when it is missing or
//! damaged. It is kept in step with `runs/` through the modification times of the 256 shard
//! folders: a record added or removed by any process (an executor, a Slurm step, a user) changes
//! its shard's time, and only changed shards are listed again.

use std::collections::HashMap;
use std::fs;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::answers::Verdict;
use crate::key::RunKey;
use crate::store::{parse_record, write_atomically, CorruptRecord, RunRecord, Store, Termination};
use crate::value::Value;

const INDEX_MAGIC: &[u8; 8] = b"MCCBIDX1";
const SHARDS: usize = 256;

/// What scoring needs of a run.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    pub verdict: Verdict,
    pub termination: Termination,
    pub cpu_time_s: f64,
    pub wall_time_s: f64,
    pub peak_memory_bytes: u64,
    /// (value id, value), in the order of the instance's value ids.
    pub answers: Vec<(Arc<str>, Value)>,
}

impl Summary {
    pub fn of(record: &RunRecord) -> Summary {
        Summary {
            verdict: record.verdict,
            termination: record.termination,
            cpu_time_s: record.cpu_time_s,
            wall_time_s: record.wall_time_s,
            peak_memory_bytes: record.peak_memory_bytes,
            answers: record.answers.iter().map(|a| (a.id.clone(), a.value.clone())).collect(),
        }
    }
}

#[derive(Serialize, Deserialize)]
struct IndexFile {
    shard_mtimes: Vec<Option<i128>>,
    strings: Vec<String>,
    entries: Vec<IndexEntry>,
}

#[derive(Serialize, Deserialize)]
struct IndexEntry {
    key: RunKey,
    verdict: Verdict,
    /// `Termination` is internally tagged for JSON, which postcard cannot decode: pairs here.
    termination: (u8, i32),
    cpu_time_s: f64,
    wall_time_s: f64,
    peak_memory_bytes: u64,
    answers: Vec<(u32, Value)>,
}

/// The in-memory index of a store.
pub struct Index {
    entries: HashMap<RunKey, Summary>,
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
}

impl Index {
    /// Loads the index and brings it up to date with `runs/`.
    pub fn load(store: &Store) -> (Index, LoadReport) {
        let mut report = LoadReport::default();
        let mut index = match fs::read(store.index_path()) {
            Ok(bytes) => match decode(&bytes) {
                Ok(index) => index,
                Err(problem) => {
                    report.index_problem = Some(format!("{}: {problem}; rebuilding it from the records", store.index_path().display()));
                    Index::empty()
                }
            },
            Err(e) if e.kind() == io::ErrorKind::NotFound => Index::empty(),
            Err(e) => {
                report.index_problem = Some(format!("cannot read {}: {e}; rebuilding it from the records", store.index_path().display()));
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
        Index { entries: HashMap::new(), shard_mtimes: vec![None; SHARDS], dirty: false }
    }

    /// Re-lists the shard folders whose modification time changed.
    pub fn reconcile(&mut self, store: &Store, report: &mut LoadReport) {
        let runs = store.root().join("runs");
        for shard in 0..SHARDS {
            let dir = runs.join(format!("{shard:02x}"));
            let mtime = match fs::metadata(&dir) {
                Ok(meta) => meta.mtime() as i128 * 1_000_000_000 + meta.mtime_nsec() as i128,
                Err(_) => {
                    // No such shard: no records in it.
                    if self.shard_mtimes[shard].is_some() || self.entries.keys().any(|k| k.0[0] as usize == shard) {
                        self.entries.retain(|k, _| k.0[0] as usize != shard);
                        self.shard_mtimes[shard] = None;
                        self.dirty = true;
                    }
                    continue;
                }
            };
            if self.shard_mtimes[shard] == Some(mtime) {
                continue;
            }
            let Ok(listing) = fs::read_dir(&dir) else { continue };
            let mut present: Vec<RunKey> = Vec::new();
            for entry in listing.flatten() {
                let name = entry.file_name();
                let Some(key) = name.to_str().and_then(|n| n.strip_suffix(".json")).and_then(RunKey::from_hex) else { continue };
                present.push(key);
            }
            let before = self.entries.len();
            self.entries.retain(|k, _| k.0[0] as usize != shard || present.contains(k));
            if self.entries.len() != before {
                self.dirty = true;
            }
            for key in present {
                if self.entries.contains_key(&key) {
                    continue;
                }
                let path = store.record_path(&key);
                match fs::read(&path).map_err(|e| CorruptRecord { path: path.clone(), reason: format!("cannot read: {e}") }).and_then(|b| parse_record(&path, &b, &key)) {
                    Ok(record) => {
                        report.records_read += 1;
                        self.entries.insert(key, Summary::of(&record));
                        self.dirty = true;
                    }
                    Err(corrupt) => report.corrupt.push(corrupt),
                }
            }
            // A folder changed within the last two seconds may change again within the same
            // clock tick: do not trust its time yet.
            let now = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos() as i128).unwrap_or(0);
            let trusted = if now - mtime < 2_000_000_000 || !report.corrupt.is_empty() { None } else { Some(mtime) };
            if self.shard_mtimes[shard] != trusted {
                self.shard_mtimes[shard] = trusted;
                self.dirty = true;
            }
        }
    }

    pub fn get(&self, key: &RunKey) -> Option<&Summary> {
        self.entries.get(key)
    }

    pub fn contains(&self, key: &RunKey) -> bool {
        self.entries.contains_key(key)
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Records a run just stored.
    pub fn insert(&mut self, key: RunKey, summary: Summary) {
        self.entries.insert(key, summary);
        self.dirty = true;
    }

    /// Forgets a run whose record was removed.
    pub fn remove(&mut self, key: &RunKey) {
        if self.entries.remove(key).is_some() {
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
        let mut strings: Vec<String> = Vec::new();
        let mut ids: HashMap<&str, u32> = HashMap::new();
        let mut entries: Vec<IndexEntry> = Vec::with_capacity(self.entries.len());
        for (key, s) in &self.entries {
            let answers = s
                .answers
                .iter()
                .map(|(id, value)| {
                    let n = *ids.entry(id).or_insert_with(|| {
                        strings.push(id.to_string());
                        (strings.len() - 1) as u32
                    });
                    (n, value.clone())
                })
                .collect();
            entries.push(IndexEntry {
                key: *key,
                verdict: s.verdict,
                termination: termination_code(s.termination),
                cpu_time_s: s.cpu_time_s,
                wall_time_s: s.wall_time_s,
                peak_memory_bytes: s.peak_memory_bytes,
                answers,
            });
        }
        let file = IndexFile { shard_mtimes: self.shard_mtimes.clone(), strings, entries };
        let body = postcard::to_allocvec(&file).unwrap_or_default();
        let mut bytes = Vec::with_capacity(body.len() + 40);
        bytes.extend_from_slice(INDEX_MAGIC);
        bytes.extend_from_slice(blake3::hash(&body).as_bytes());
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
        _ => return None,
    })
}

fn decode(bytes: &[u8]) -> Result<Index, String> {
    if bytes.len() < 40 || &bytes[..8] != INDEX_MAGIC {
        return Err("not an index of this mccbuild version".into());
    }
    let body = &bytes[40..];
    if blake3::hash(body).as_bytes() != &bytes[8..40] {
        return Err("checksum mismatch (damaged)".into());
    }
    let file: IndexFile = postcard::from_bytes(body).map_err(|e| format!("undecodable ({e})"))?;
    if file.shard_mtimes.len() != SHARDS {
        return Err("malformed".into());
    }
    let strings: Vec<Arc<str>> = file.strings.into_iter().map(Arc::from).collect();
    let mut entries = HashMap::with_capacity(file.entries.len());
    for e in file.entries {
        let mut answers = Vec::with_capacity(e.answers.len());
        for (n, value) in e.answers {
            let id = strings.get(n as usize).ok_or("malformed")?.clone();
            answers.push((id, value));
        }
        entries.insert(
            e.key,
            Summary {
                verdict: e.verdict,
                termination: termination_from_code(e.termination).ok_or("malformed")?,
                cpu_time_s: e.cpu_time_s,
                wall_time_s: e.wall_time_s,
                peak_memory_bytes: e.peak_memory_bytes,
                answers,
            },
        );
    }
    Ok(Index { entries, shard_mtimes: file.shard_mtimes, dirty: false })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::tests::sample_record;

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
        assert_eq!(index.get(&b).unwrap().answers[0].1, Value::Int(6));
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
