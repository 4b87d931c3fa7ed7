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
//! Each key comes with its record's content digest (the one the record file ends with) and the
//! file's stamp when it was last verified (size, change time, inode). Every load stats every
//! indexed record (in parallel, relative to each shard folder) and compares the stamp: a record
//! changed in any way since it was verified (rewritten, truncated, edited in place) is read again
//! and its digest checked; a record that no longer matches its own digest is reported and leaves
//! the index (its run is to be done again). A record that was replaced by another valid record
//! of the same run (a rerun) gets its new summary and digest.
//!
//! ```text
//! "MCCBIDX3" | blake3(keys section) | blake3(summaries section) | n: u64 |
//! keys section: 256 shard times (i128, MIN = unknown), n sorted keys, n content digests,
//!               n stamps (size u64, ctime ns i64, inode u64; all 0 = unknown) |
//! summaries section: postcard, one entry per key, in key order
//! ```

use std::collections::HashSet;
use std::fs;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::sync::{Arc, OnceLock};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use mccbuild_core::digest::Digest;
use mccbuild_core::fsio::write_atomically;
use mccbuild_core::timing::phase;
use mccbuild_core::{KeyMap, Measurement, Outcome, Response, RunKey, Termination, Value};

use crate::{parse_record_verified, verify_digest, CorruptRecord, RunRecord, Store};

const INDEX_MAGIC: &[u8; 8] = b"MCCBIDX3";
const STAMP: usize = 24;

/// What a record file looked like when its content was last verified. Any write, truncation,
/// rename over it or attribute change moves its change time (which no user call can set back).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stamp {
    pub size: u64,
    pub ctime_ns: i64,
    pub ino: u64,
}

impl Stamp {
    fn of(meta: &fs::Metadata) -> Stamp {
        Stamp {
            size: meta.size(),
            ctime_ns: meta.ctime() * 1_000_000_000 + meta.ctime_nsec(),
            ino: meta.ino(),
        }
    }

    fn to_bytes(s: Option<Stamp>) -> [u8; STAMP] {
        let s = s.unwrap_or(Stamp {
            size: 0,
            ctime_ns: 0,
            ino: 0,
        });
        let mut b = [0u8; STAMP];
        b[..8].copy_from_slice(&s.size.to_le_bytes());
        b[8..16].copy_from_slice(&s.ctime_ns.to_le_bytes());
        b[16..].copy_from_slice(&s.ino.to_le_bytes());
        b
    }

    fn from_bytes(b: &[u8]) -> Option<Stamp> {
        let u = |r: std::ops::Range<usize>| u64::from_le_bytes(b[r].try_into().unwrap_or([0; 8]));
        let s = Stamp {
            size: u(0..8),
            ctime_ns: u(8..16) as i64,
            ino: u(16..24),
        };
        (s.size != 0).then_some(s)
    }
}

/// A record's content digest and the stamp of its file when it was verified.
#[derive(Clone, Copy, Debug, Default)]
struct Meta {
    digest: Option<Digest>,
    stamp: Option<Stamp>,
}

/// Reads one record file, checks its digest and key; returns it with its digest and stamp.
fn read_verified(store: &Store, key: &RunKey) -> Result<(RunRecord, Digest, Stamp), CorruptRecord> {
    let path = store.record_path(key);
    let cannot = |e: io::Error| CorruptRecord {
        path: path.clone(),
        reason: format!("cannot read: {e}"),
    };
    let mut file = fs::File::open(&path).map_err(cannot)?;
    let stamp = Stamp::of(&file.metadata().map_err(cannot)?);
    let mut bytes = Vec::with_capacity(stamp.size as usize);
    io::Read::read_to_end(&mut file, &mut bytes).map_err(cannot)?;
    let (record, digest) = parse_record_verified(&path, &bytes, key)?;
    Ok((record, digest, stamp))
}

/// The file's stamp, if its content still has this digest (and verifies).
fn stamp_if_digest(path: &std::path::Path, digest: &Digest) -> Option<Stamp> {
    let mut file = fs::File::open(path).ok()?;
    let stamp = Stamp::of(&file.metadata().ok()?);
    let mut bytes = Vec::new();
    io::Read::read_to_end(&mut file, &mut bytes).ok()?;
    (verify_digest(&bytes).ok()? == *digest).then_some(stamp)
}

/// The record files among `keys` (in key order, so one shard folder after the other) whose stamp
/// is not `known(position)`, with their stamp now (`None`: gone or cannot be stat'ed), in key
/// order; on a few threads. `known` returning `None` means "check it": it is always reported.
fn stat_moved(
    store: &Store,
    keys: &[RunKey],
    known: impl Fn(usize) -> Option<Option<Stamp>> + Sync,
) -> Vec<(RunKey, Option<Stamp>)> {
    use std::os::unix::ffi::OsStrExt;
    let runs = store.root().join("runs");
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .clamp(1, 4);
    let chunk = keys.len().div_ceil(threads).max(4096);
    let known = &known;
    let parts: Vec<Vec<(RunKey, Option<Stamp>)>> = std::thread::scope(|scope| {
        let workers: Vec<_> = keys
            .chunks(chunk)
            .enumerate()
            .map(|(c, keys)| {
                let runs = &runs;
                scope.spawn(move || {
                    let mut moved: Vec<(RunKey, Option<Stamp>)> = Vec::new();
                    let mut shard: Option<(u8, i32)> = None;
                    let mut name = [0u8; 64 + 5 + 1];
                    for (k, key) in keys.iter().enumerate() {
                        let Some(expected) = known(c * chunk + k) else {
                            continue;
                        };
                        let mut now: Option<Stamp> = None;
                        let dirfd = match shard {
                            Some((s, fd)) if s == key.0[0] => fd,
                            _ => {
                                if let Some((_, fd)) = shard {
                                    // SAFETY: a descriptor this thread opened.
                                    unsafe { libc::close(fd) };
                                }
                                let dir = runs.join(format!("{:02x}", key.0[0]));
                                let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes())
                                else {
                                    moved.push((*key, None));
                                    continue;
                                };
                                // SAFETY: a NUL-terminated path; the descriptor is closed below.
                                let fd = unsafe {
                                    libc::open(
                                        c.as_ptr(),
                                        libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
                                    )
                                };
                                shard = Some((key.0[0], fd));
                                fd
                            }
                        };
                        if dirfd < 0 {
                            moved.push((*key, None));
                            continue;
                        }
                        name[..64].copy_from_slice(key.hex().as_bytes());
                        name[64..69].copy_from_slice(b".json");
                        name[69] = 0;
                        let mut st: libc::stat = unsafe { std::mem::zeroed() };
                        // SAFETY: a NUL-terminated name relative to an open folder; `st` is ours.
                        let r = unsafe {
                            libc::fstatat(
                                dirfd,
                                name.as_ptr() as *const libc::c_char,
                                &mut st,
                                libc::AT_SYMLINK_NOFOLLOW,
                            )
                        };
                        if r == 0 {
                            now = Some(Stamp {
                                size: st.st_size as u64,
                                ctime_ns: st.st_ctime * 1_000_000_000 + st.st_ctime_nsec,
                                ino: st.st_ino,
                            });
                        }
                        if now.is_none() || now != expected {
                            moved.push((*key, now));
                        }
                    }
                    if let Some((_, fd)) = shard {
                        if fd >= 0 {
                            // SAFETY: a descriptor this thread opened.
                            unsafe { libc::close(fd) };
                        }
                    }
                    moved
                })
            })
            .collect();
        workers
            .into_iter()
            // A thread that failed must not pass for "nothing moved": its panic goes on.
            .map(|w| w.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    parts.concat()
}
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
    /// Per file key: its record's content digest and verified stamp.
    file_digests: Vec<Digest>,
    file_stamps: Vec<Option<Stamp>>,
    /// Digests and stamps learnt since the file was written (they win over the file's).
    meta: KeyMap<Meta>,
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
    /// Keys whose records appeared, disappeared or changed (what `mccbuild watch` applies).
    pub changed: Vec<RunKey>,
    /// Records whose file changed since they were verified and were read again.
    pub records_reverified: usize,
}

impl Index {
    /// Loads the index and brings it up to date with `runs/`.
    pub fn load(store: &Store) -> (Index, LoadReport) {
        let mut report = LoadReport::default();
        let t = phase("index: read and decode");
        let mut index = match read_index(&store.index_path()) {
            Ok((head, body)) => match decode(head, body) {
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
        drop(t);
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
            file_digests: Vec::new(),
            file_stamps: Vec::new(),
            meta: KeyMap::default(),
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
        let t = phase("index: shard folders");
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
                match read_verified(store, &key) {
                    Ok((record, digest, stamp)) => {
                        report.records_read += 1;
                        report.changed.push(key);
                        self.removed.remove(&key);
                        self.added.insert(key, Summary::of(&record));
                        self.meta.insert(
                            key,
                            Meta {
                                digest: Some(digest),
                                stamp: Some(stamp),
                            },
                        );
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
        drop(t);
        self.verify(store, report);
    }

    /// The digest and stamp known for a stored key.
    fn meta_of(&self, key: &RunKey) -> Meta {
        if let Some(m) = self.meta.get(key) {
            return *m;
        }
        match self.file_position(key) {
            Some(p) if !self.added.contains_key(key) => Meta {
                digest: Some(self.file_digests[p]),
                stamp: self.file_stamps[p],
            },
            _ => Meta::default(),
        }
    }

    /// Stats every indexed record; reads again and checks those whose file changed since they
    /// were verified (docs/cache.md, "Self-verifying records").
    fn verify(&mut self, store: &Store, report: &mut LoadReport) {
        let t = phase("index: stat every record");
        // The file's keys in file order (one shard folder after the other), compared with the
        // stamps at the same positions: no lookup per key on a quiet store.
        let quiet = self.meta.is_empty() && self.added.is_empty() && self.removed.is_empty();
        let mut moved = stat_moved(store, &self.file_keys, |i| {
            if quiet {
                return Some(self.file_stamps[i]);
            }
            let key = &self.file_keys[i];
            (!self.removed.contains(key)).then(|| self.meta_of(key).stamp)
        });
        // Then the keys learnt since the file was written.
        let mut extra: Vec<RunKey> = self
            .added
            .keys()
            .filter(|k| self.file_position(k).is_none() || self.removed.contains(k))
            .copied()
            .collect();
        extra.sort_unstable();
        moved.extend(stat_moved(store, &extra, |i| {
            Some(self.meta_of(&extra[i]).stamp)
        }));
        drop(t);
        let _t = phase("index: check moved records");
        for (key, now) in moved {
            let known = self.meta_of(&key);
            let path = store.record_path(&key);
            if now.is_none() && !path.exists() {
                // Gone (its shard was listed within the same clock tick): no longer stored.
                self.remove(&key);
                report.changed.push(key);
                continue;
            }
            // Same bytes as verified before (a copy, a touch): only the stamp is new.
            let same = match known.digest {
                Some(digest) => stamp_if_digest(&path, &digest),
                None => None,
            };
            if let Some(stamp) = same {
                self.meta.insert(
                    key,
                    Meta {
                        digest: known.digest,
                        stamp: Some(stamp),
                    },
                );
                self.dirty = true;
                continue;
            }
            report.records_reverified += 1;
            match read_verified(store, &key) {
                Ok((record, digest, stamp)) => {
                    // Another valid record of the same run (a rerun): its summary replaces the old.
                    self.added.insert(key, Summary::of(&record));
                    self.meta.insert(
                        key,
                        Meta {
                            digest: Some(digest),
                            stamp: Some(stamp),
                        },
                    );
                    report.changed.push(key);
                    self.dirty = true;
                }
                Err(corrupt) => {
                    self.remove(&key);
                    self.shard_mtimes[key.0[0] as usize] = None;
                    report.changed.push(key);
                    report.corrupt.push(corrupt);
                }
            }
        }
    }

    /// Whether the run is stored (`Some`) and its record's content digest: [`Index::contains`]
    /// and [`Index::digest`] in one lookup.
    pub fn lookup(&self, key: &RunKey) -> Option<Option<Digest>> {
        if self.meta.is_empty() && self.added.is_empty() && self.removed.is_empty() {
            return self.file_position(key).map(|p| Some(self.file_digests[p]));
        }
        self.contains(key).then(|| self.meta_of(key).digest)
    }

    /// The content digest of a stored run's record (what cached views are keyed by).
    pub fn digest(&self, key: &RunKey) -> Option<Digest> {
        // A quiet store (nothing learnt since the file was written): one lookup.
        if self.meta.is_empty() && self.added.is_empty() && self.removed.is_empty() {
            return self.file_position(key).map(|p| self.file_digests[p]);
        }
        if !self.contains(key) {
            return None;
        }
        self.meta_of(key).digest
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

    /// Records a run just stored, with its record's content digest (its file's stamp is taken
    /// when the index is next saved or loaded).
    pub fn insert(&mut self, key: RunKey, summary: Summary, digest: Digest) {
        self.removed.remove(&key);
        self.added.insert(key, summary);
        self.meta.insert(
            key,
            Meta {
                digest: Some(digest),
                stamp: None,
            },
        );
        self.dirty = true;
    }

    /// Forgets a run whose record was removed.
    pub fn remove(&mut self, key: &RunKey) {
        self.meta.remove(key);
        if self.added.remove(key).is_some() || self.file_position(key).is_some() {
            self.removed.insert(*key);
            self.dirty = true;
        }
    }

    /// Whether the index learnt something its file does not hold.
    pub fn is_dirty(&self) -> bool {
        self.dirty
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
        let metas: Vec<Meta> = all.iter().map(|(k, _)| self.meta_of(k)).collect();
        for m in &metas {
            keys_section.extend_from_slice(&m.digest.unwrap_or([0; 32]));
        }
        for m in &metas {
            keys_section.extend_from_slice(&Stamp::to_bytes(m.stamp));
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

/// The end of the keys section, from the header (`None`: not an index of this version).
fn keys_end(header: &[u8]) -> Option<usize> {
    if header.len() < HEADER || &header[..8] != INDEX_MAGIC {
        return None;
    }
    let n = u64::from_le_bytes(header[72..80].try_into().ok()?) as usize;
    HEADER
        .checked_add(SHARDS * 16)
        .and_then(|x| x.checked_add(n.checked_mul(32 + 32 + STAMP)?))
}

/// The index file in two buffers: the header with the keys section, and the summaries section
/// (kept as read until scoring decodes it, while the keys section is dropped once decoded).
fn read_index(path: &std::path::Path) -> io::Result<(Vec<u8>, Vec<u8>)> {
    use std::io::Read;
    let mut file = fs::File::open(path)?;
    let size = file.metadata()?.len() as usize;
    let mut head = vec![0u8; HEADER.min(size)];
    file.read_exact(&mut head)?;
    let end = keys_end(&head).unwrap_or(HEADER).min(size);
    head.resize(end, 0);
    file.read_exact(&mut head[HEADER.min(end)..])?;
    let mut body = Vec::with_capacity(size - end);
    file.read_to_end(&mut body)?;
    Ok((head, body))
}

fn decode(bytes: Vec<u8>, body: Vec<u8>) -> Result<Index, String> {
    if bytes.len() < HEADER || &bytes[..8] != INDEX_MAGIC {
        return Err("not an index of this mccbuild version".into());
    }
    let n = u64::from_le_bytes(bytes[72..80].try_into().map_err(|_| "malformed")?) as usize;
    let keys_end = keys_end(&bytes).ok_or("malformed")?;
    if bytes.len() < keys_end {
        return Err("truncated".into());
    }
    let keys_section = &bytes[HEADER..keys_end];
    if blake3::hash(keys_section).as_bytes() != &bytes[8..40]
        || blake3::hash(&body).as_bytes() != &bytes[40..72]
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
    let keys_end = SHARDS * 16 + n * 32;
    let digests_end = keys_end + n * 32;
    let file_digests: Vec<Digest> = keys_section[keys_end..digests_end]
        .chunks_exact(32)
        .map(|c| c.try_into().unwrap_or([0; 32]))
        .collect();
    let file_stamps: Vec<Option<Stamp>> = keys_section[digests_end..]
        .chunks_exact(STAMP)
        .map(Stamp::from_bytes)
        .collect();
    let file_keys: Vec<RunKey> = keys_section[SHARDS * 16..keys_end]
        .chunks_exact(32)
        .map(|c| RunKey(c.try_into().unwrap_or([0; 32])))
        .collect();
    if file_keys.windows(2).any(|w| w[0] >= w[1]) {
        return Err("malformed (unsorted keys)".into());
    }
    Ok(Index {
        buckets: buckets(&file_keys),
        file_keys,
        file_digests,
        file_stamps,
        meta: KeyMap::default(),
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
    fn records_damaged_after_they_were_indexed_are_noticed() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let (a, b, c) = (RunKey([1; 32]), RunKey([2; 32]), RunKey([3; 32]));
        for k in [a, b, c] {
            store.put(&sample_record(k)).unwrap();
        }
        let (mut index, _) = Index::load(&store);
        age_shards(&store);
        index.save(&store).unwrap();
        let digest_b = index.digest(&b).unwrap();
        // In place, the shard folders' times unchanged: a truncation, a valid-JSON edit.
        let truncate = fs::OpenOptions::new()
            .write(true)
            .open(store.record_path(&a))
            .unwrap();
        truncate.set_len(100).unwrap();
        let text = fs::read_to_string(store.record_path(&b)).unwrap();
        let edited = text.replacen("\"value\":\"6\"", "\"value\":\"5\"", 1);
        fs::OpenOptions::new()
            .write(true)
            .open(store.record_path(&b))
            .and_then(|mut f| io::Write::write_all(&mut f, edited.as_bytes()))
            .unwrap();
        let (index, report) = Index::load(&store);
        assert_eq!(report.records_read, 0);
        let mut damaged: Vec<_> = report.corrupt.iter().map(|c| c.path.clone()).collect();
        damaged.sort();
        assert_eq!(damaged, vec![store.record_path(&a), store.record_path(&b)]);
        assert!(!index.contains(&a) && !index.contains(&b) && index.contains(&c));
        assert_eq!(index.get(&b), None);
        assert_eq!(index.digest(&b), None);
        // Still reported next time (the index does not forget a damaged record).
        let (_, report) = Index::load(&store);
        assert_eq!(report.corrupt.len(), 2);
        // Repaired by a new record of the same run: it is found again, with its digest.
        assert_eq!(store.put(&sample_record(b)).unwrap(), digest_b);
        let (index, report) = Index::load(&store);
        assert_eq!(report.corrupt.len(), 1);
        assert_eq!(index.digest(&b), Some(digest_b));
    }

    #[test]
    fn a_touched_record_is_checked_once_and_a_replaced_one_read_again() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let a = RunKey([1; 32]);
        store.put(&sample_record(a)).unwrap();
        let (mut index, _) = Index::load(&store);
        age_shards(&store);
        index.save(&store).unwrap();
        // chmod: another change time, same bytes.
        let path = store.record_path(&a);
        let mut perms = fs::metadata(&path).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o600);
        fs::set_permissions(&path, perms).unwrap();
        let (mut index, report) = Index::load(&store);
        assert!(report.corrupt.is_empty() && report.records_reverified == 0);
        index.save(&store).unwrap();
        let (_, report) = Index::load(&store);
        assert!(report.changed.is_empty(), "the new stamp was saved");
        // Another valid record of the run (redone with another outcome): its summary is used.
        let mut other = sample_record(a);
        other.answers[0].value = Value::Int(9);
        store.put(&other).unwrap();
        age_shards(&store);
        let (index, report) = Index::load(&store);
        assert!(report.corrupt.is_empty());
        assert_eq!(index.get(&a).unwrap().answers[0], (0, Value::Int(9)));
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
