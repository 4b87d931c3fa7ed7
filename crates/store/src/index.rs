//! The store's index: a summary of every record (what scoring needs), in one checksummed file.
//!
//! Records stay the source of truth; the index is rebuilt from them when it is missing or
//! damaged. It is kept in step with `runs/` through the modification times of the 256 shard
//! folders: a record added or removed by any process (an executor, a Slurm step, a user) changes
//! its shard's time, and only changed shards are listed again.
//!
//! The file holds the sorted keys and the shard times in a first section, the summaries in a
//! second, each with its own checksum: knowing which runs are stored (a no-op `mccbuild run`)
//! does not decode the summaries; each is decoded when scoring first asks for it. What was learnt
//! since the file was written is saved, while it is small, in a delta file beside it
//! (`delta.rs`), not by writing the whole file again.
//!
//! Each key comes with its record's content digest (the one the record file ends with) and
//! where the record lies: a loose file, with the file's stamp when it was last verified (size,
//! change time, inode), or a pack (`crate::pack`: which, byte offset, length), whose own stamp
//! the index holds. Every load stats every indexed loose record (in parallel, relative to each
//! shard folder) and every pack, and compares the stamps: a record changed in any way since it
//! was verified (rewritten, truncated, edited in place) is read again and its digest checked; a
//! pack whose file moved is read again whole; a record that no longer matches its own digest is
//! reported and leaves the index (its run is to be done again). A record that was replaced by
//! another valid record of the same run (a rerun) gets its new summary and digest.
//!
//! ```text
//! "MCCBIDX5" | blake3(keys section) | blake3(summaries section) | n: u64 | t: u64 |
//! keys section: 256 shard times (i128, MIN = unknown), the pack table (t bytes, postcard:
//!               the packs folder's time, each pack's number and stamp, the damaged lines
//!               found in packs), n sorted keys, n content digests,
//!               n places (32 bytes: tag 0 = loose, then its stamp: size u64, ctime ns i64,
//!               inode u64, all 0 = unknown; tag 1 = packed, then pack u64, offset u64, length u64) |
//! summaries section: n entry ends (u32, from the first entry's start), then the entries
//!                   (postcard, one per key, in key order)
//! ```

use std::collections::{BTreeMap, HashSet};
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

mod delta;
mod footing;
pub use footing::{stamps_digest, FileStamp, Footing};

use crate::pack;
use crate::{parse_record_verified, verify_digest, CorruptRecord, RunRecord, Store};

const INDEX_MAGIC: &[u8; 8] = b"MCCBIDX5";
const PLACE: usize = 32;

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
}

/// Where a stored run's record lies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    /// `runs/<shard>/<key>.json`, with its file's stamp when it was verified (`None`: not yet).
    Loose(Option<Stamp>),
    /// A line of `packs/<pack>.jsonl` (`crate::pack`).
    Packed { pack: u32, offset: u64, len: u32 },
}

impl Default for Place {
    fn default() -> Place {
        Place::Loose(None)
    }
}

impl Place {
    fn to_bytes(self) -> [u8; PLACE] {
        let (tag, a, b, c) = match self {
            Place::Loose(s) => {
                let s = s.unwrap_or(Stamp {
                    size: 0,
                    ctime_ns: 0,
                    ino: 0,
                });
                (0u64, s.size, s.ctime_ns as u64, s.ino)
            }
            Place::Packed { pack, offset, len } => (1, pack as u64, offset, len as u64),
        };
        let mut bytes = [0u8; PLACE];
        for (i, v) in [tag, a, b, c].into_iter().enumerate() {
            bytes[i * 8..i * 8 + 8].copy_from_slice(&v.to_le_bytes());
        }
        bytes
    }

    fn from_bytes(b: &[u8]) -> Option<Place> {
        let u = |i: usize| u64::from_le_bytes(b[i * 8..i * 8 + 8].try_into().unwrap_or([0; 8]));
        match u(0) {
            0 => {
                let s = Stamp {
                    size: u(1),
                    ctime_ns: u(2) as i64,
                    ino: u(3),
                };
                Some(Place::Loose((s.size != 0).then_some(s)))
            }
            1 => Some(Place::Packed {
                pack: u32::try_from(u(1)).ok()?,
                offset: u(2),
                len: u32::try_from(u(3)).ok()?,
            }),
            _ => None,
        }
    }
}

/// A record's content digest and where it lies.
#[derive(Clone, Copy, Debug, Default)]
struct Meta {
    digest: Option<Digest>,
    place: Place,
}

/// A damaged line of a pack, found when the pack was last read: reported by every load while
/// its run has no other record (the pack is not read again until its file changes).
#[derive(Clone, Debug, Serialize, Deserialize)]
struct PackDamage {
    pack: u32,
    key: Option<RunKey>,
    path: String,
    reason: String,
}

/// A stamp as the pack table holds it: size, change time (ns), inode.
type StampFields = (u64, i64, u64);

/// The packs as the index file holds them.
#[derive(Default, Serialize, Deserialize)]
struct PackTable {
    /// The `packs/` folder's modification time when last listed (None: list it).
    mtime: Option<i128>,
    /// Each pack's number and its file's stamp when it was verified.
    packs: Vec<(u32, Option<StampFields>)>,
    damage: Vec<PackDamage>,
}

impl PackTable {
    /// The packs as the index keeps them: each pack's number and stamp.
    fn packs(&self) -> BTreeMap<u32, Option<Stamp>> {
        self.packs
            .iter()
            .map(|&(p, s)| {
                let stamp = s.map(|(size, ctime_ns, ino)| Stamp {
                    size,
                    ctime_ns,
                    ino,
                });
                (p, stamp)
            })
            .collect()
    }
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
/// order; on a few threads. `known` returning `None` means "not a loose record": not stat'ed.
fn stat_moved(
    store: &Store,
    count: usize,
    key_at: impl Fn(usize) -> RunKey + Sync,
    known: impl Fn(usize) -> Option<Option<Stamp>> + Sync,
) -> Vec<(RunKey, Option<Stamp>)> {
    use std::os::unix::ffi::OsStrExt;
    let runs = store.root().join("runs");
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .clamp(1, 4);
    let chunk = count.div_ceil(threads).max(4096);
    let (known, key_at) = (&known, &key_at);
    let parts: Vec<Vec<(RunKey, Option<Stamp>)>> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..count)
            .step_by(chunk)
            .map(|start| {
                let runs = &runs;
                scope.spawn(move || {
                    let mut moved: Vec<(RunKey, Option<Stamp>)> = Vec::new();
                    let mut shard: Option<(u8, i32)> = None;
                    let mut name = [0u8; 64 + 5 + 1];
                    for i in start..(start + chunk).min(count) {
                        let Some(expected) = known(i) else {
                            continue;
                        };
                        let key = &key_at(i);
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
const HEADER: usize = 8 + 32 + 32 + 8 + 8;
const BUCKETS: usize = 1 << 16;

fn bucket_of(key: &RunKey) -> usize {
    (key.0[0] as usize) << 8 | key.0[1] as usize
}

/// A key's first 8 bytes, as a number that orders keys as their bytes do.
fn prefix_of(key: &RunKey) -> u64 {
    u64::from_be_bytes(key.0[..8].try_into().unwrap_or([0; 8]))
}

/// A key of the index file beside its record's content digest: one cache line, so that a
/// lookup that finds the key has the digest too.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct KeyEntry {
    key: RunKey,
    digest: Digest,
}

/// The index file's keys (sorted) with their records' digests, laid out for lookups: a bucket
/// table by the keys' first two bytes, the keys' first 8 bytes in an array of their own (a
/// few kilobytes a lookup scans in the cache), then the one line of the entry found.
#[derive(Default)]
struct FileKeys {
    entries: Vec<KeyEntry>,
    prefixes: Vec<u64>,
    /// `entries[buckets[b]..buckets[b + 1]]` are the keys whose first two bytes are `b`.
    buckets: Vec<u32>,
}

impl FileKeys {
    fn empty() -> FileKeys {
        FileKeys {
            buckets: vec![0; BUCKETS + 1],
            ..FileKeys::default()
        }
    }

    fn len(&self) -> usize {
        self.entries.len()
    }

    fn key(&self, i: usize) -> &RunKey {
        &self.entries[i].key
    }

    fn digest(&self, i: usize) -> Digest {
        self.entries[i].digest
    }

    fn keys(&self) -> impl Iterator<Item = &RunKey> {
        self.entries.iter().map(|e| &e.key)
    }

    /// Where the keys from `key`'s bucket on that sort before `key` end.
    fn first_not_below(&self, key: &RunKey) -> (usize, usize) {
        let b = bucket_of(key);
        let (start, end) = (self.buckets[b] as usize, self.buckets[b + 1] as usize);
        let p = prefix_of(key);
        // Branch-free: the bucket's prefixes are sorted, and few.
        let below = self.prefixes[start..end]
            .iter()
            .map(|&q| (q < p) as usize)
            .sum::<usize>();
        (start + below, end)
    }

    /// The position of `key`.
    fn position(&self, key: &RunKey) -> Option<usize> {
        self.position_from(key, self.first_not_below(key))
    }

    /// The position of `key`, given [`FileKeys::first_not_below`] of it.
    fn position_from(&self, key: &RunKey, (mut at, end): (usize, usize)) -> Option<usize> {
        let p = prefix_of(key);
        while at < end && self.prefixes[at] == p {
            if self.entries[at].key == *key {
                return Some(at);
            }
            at += 1;
        }
        None
    }

    /// [`FileKeys::position`] of `count` keys (`key_at(0)`, `key_at(1)`...), each given to
    /// `found` in order: the memory each lookup reads is fetched a few lookups ahead (the
    /// bucket, then the prefixes, then the entry), so that the lookups wait for memory
    /// together rather than one after the other.
    fn positions<'k>(
        &self,
        count: usize,
        key_at: impl Fn(usize) -> &'k RunKey,
        mut found: impl FnMut(usize, Option<usize>),
    ) {
        // How many lookups ahead each stage fetches (a power of two).
        const ENTRY: usize = 8;
        const PREFIXES: usize = 2 * ENTRY;
        const BUCKET: usize = 3 * ENTRY;
        // The range found for each of the next `ENTRY` keys, by their number modulo `ENTRY`.
        let mut ranges = [(0, 0); ENTRY];
        for (i, range) in ranges.iter_mut().enumerate().take(count) {
            *range = self.first_not_below(key_at(i));
        }
        for i in 0..count {
            if i + BUCKET < count {
                prefetch(
                    self.buckets
                        .as_ptr()
                        .wrapping_add(bucket_of(key_at(i + BUCKET))),
                );
            }
            if i + PREFIXES < count {
                let b = bucket_of(key_at(i + PREFIXES));
                prefetch(
                    self.prefixes
                        .as_ptr()
                        .wrapping_add(self.buckets[b] as usize),
                );
            }
            let range = ranges[i % ENTRY];
            if i + ENTRY < count {
                let ahead = self.first_not_below(key_at(i + ENTRY));
                prefetch(self.entries.as_ptr().wrapping_add(ahead.0));
                ranges[i % ENTRY] = ahead;
            }
            found(i, self.position_from(key_at(i), range));
        }
    }
}

/// Asks the processor to bring the memory at `p` into its cache: a hint, which reads nothing the
/// program sees (whatever `p` is).
#[inline(always)]
fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch neither reads memory the program observes nor faults, for any address.
    unsafe {
        std::arch::x86_64::_mm_prefetch(p as *const i8, std::arch::x86_64::_MM_HINT_T0)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
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

/// Decoded summaries are kept in chunks of this many slots: a command that asks for a few
/// summaries of 300,000 makes a few chunks, not 300,000 slots (19 MB).
const SUMMARY_CHUNK: usize = 1024;

/// [`SUMMARY_CHUNK`] slots of decoded summaries, made when one of them is first asked for.
type SummaryChunk = OnceLock<Box<[OnceLock<Option<Summary>>]>>;

/// The in-memory index of a store.
pub struct Index {
    /// The index file's keys, sorted, with their records' content digests.
    file: FileKeys,
    /// Per file key: where its record lies.
    file_places: Vec<Place>,
    /// Digests and places learnt since the file was written (they win over the file's).
    meta: KeyMap<Meta>,
    /// The file's summaries section: each entry's end (u32), then the entries.
    file_body: Vec<u8>,
    /// Each file key's summary, decoded when it is first asked for, in chunks of
    /// [`SUMMARY_CHUNK`] slots made when one of theirs is first asked for.
    file_summaries: OnceLock<Vec<SummaryChunk>>,
    /// Runs found or recorded since the file was written.
    added: KeyMap<Summary>,
    /// File keys whose records are gone.
    removed: HashSet<RunKey>,
    shard_mtimes: Vec<Option<i128>>,
    /// The packs known, each with its file's stamp when it was verified.
    packs: BTreeMap<u32, Option<Stamp>>,
    /// The `packs/` folder's modification time when it was last listed.
    packs_mtime: Option<i128>,
    /// Damaged lines found in the packs (reported while their runs have no other record).
    damage: Vec<PackDamage>,
    dirty: bool,
    /// The store's index loaded again, when a loose record was found packed meanwhile.
    reloaded: OnceLock<Box<Index>>,
    /// The index file's stamp when it was read (`None`: not read from a file).
    loaded_from: Option<FileStamp>,
    /// The index file's two checksums, while the keys above are that file's (a delta names
    /// the file it completes by them: `delta.rs`); `None` once another file was written.
    file_id: Option<[u8; 64]>,
    /// The delta file's stamp when it was read (`None`: there was none).
    delta_read: Option<FileStamp>,
    /// Changes whenever what the index says may have changed ([`Index::version`]).
    version: u64,
}

/// A new value of [`Index::version`], never given before in this process.
fn next_version() -> u64 {
    static VERSIONS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    VERSIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1
}

/// What loading found.
#[derive(Debug, Default)]
pub struct LoadReport {
    /// Records read from `runs/` (or a pack) because the index did not have them yet.
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

/// What packing did ([`Index::pack`]).
#[derive(Debug, Default)]
pub struct PackOutcome {
    /// Loose records now in packs.
    pub records: usize,
    /// The packs written.
    pub packs: Vec<std::path::PathBuf>,
    /// Loose files removed that a killed packing had left beside their packed copies.
    pub leftovers: usize,
}

/// A folder's modification time, in nanoseconds.
fn mtime_of(path: &std::path::Path) -> Option<i128> {
    fs::metadata(path)
        .ok()
        .map(|meta| meta.mtime() as i128 * 1_000_000_000 + meta.mtime_nsec() as i128)
}

/// `mtime` if it can be trusted to move at the next change: a folder changed within the last
/// two seconds may change again within the same clock tick.
fn settled(mtime: Option<i128>) -> Option<i128> {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as i128)
        .unwrap_or(0);
    mtime.filter(|m| now - m >= 2_000_000_000)
}

impl Index {
    /// Loads the index and brings it up to date with `runs/` and `packs/`.
    pub fn load(store: &Store) -> (Index, LoadReport) {
        let mut report = LoadReport::default();
        let t = phase("index: read and decode");
        let mut index = match read_index(&store.index_path()) {
            Ok(index) => index,
            Err(Unusable::Damaged(problem)) => {
                report.index_problem = Some(format!(
                    "{}: {problem}; rebuilding it from the records",
                    store.index_path().display()
                ));
                Index::empty()
            }
            Err(Unusable::Io(e)) if e.kind() == io::ErrorKind::NotFound => Index::empty(),
            Err(Unusable::Io(e)) => {
                report.index_problem = Some(format!(
                    "cannot read {}: {e}; rebuilding it from the records",
                    store.index_path().display()
                ));
                Index::empty()
            }
        };
        drop(t);
        if report.index_problem.is_some() {
            index.touch();
        } else {
            let _t = phase("index: delta");
            match index.read_delta(store) {
                delta::Read::Absent | delta::Read::Applied => {}
                // Written for an index file written again since: the next save replaces it.
                delta::Read::Other => index.touch(),
                delta::Read::Unusable(problem) => {
                    report.index_problem = Some(format!(
                        "{}: {problem}; what it held is learnt again from the records",
                        delta::delta_path(store).display()
                    ));
                    index.touch();
                }
            }
        }
        index.reconcile(store, &mut report);
        (index, report)
    }

    fn empty() -> Index {
        Index {
            file: FileKeys::empty(),
            file_places: Vec::new(),
            meta: KeyMap::default(),
            file_body: Vec::new(),
            file_summaries: OnceLock::new(),
            added: KeyMap::default(),
            removed: HashSet::new(),
            shard_mtimes: vec![None; SHARDS],
            packs: BTreeMap::new(),
            packs_mtime: None,
            damage: Vec::new(),
            dirty: false,
            reloaded: OnceLock::new(),
            loaded_from: None,
            file_id: None,
            delta_read: None,
            version: next_version(),
        }
    }

    /// The position of a key in the index file.
    fn file_position(&self, key: &RunKey) -> Option<usize> {
        self.file.position(key)
    }

    /// The positions of the file keys of one shard (a contiguous range: keys are sorted).
    fn file_shard(&self, shard: usize) -> std::ops::Range<usize> {
        let buckets = &self.file.buckets;
        buckets[shard << 8] as usize..buckets[(shard + 1) << 8] as usize
    }

    fn is_loose(&self, key: &RunKey) -> bool {
        matches!(self.meta_of(key).place, Place::Loose(_))
    }

    /// Brings the index up to date: the packs first (listed again when `packs/` changed, each
    /// read again when its file changed), then the shard folders whose modification time
    /// changed, then the stamp of every loose record.
    pub fn reconcile(&mut self, store: &Store, report: &mut LoadReport) {
        let t = phase("index: packs");
        self.reconcile_packs(store, report);
        drop(t);
        let t = phase("index: shard folders");
        let runs = store.root().join("runs");
        // The runs learnt since the index file was written, by shard (once, not per shard).
        let mut added_by_shard: Option<Vec<Vec<RunKey>>> = None;
        for shard in 0..SHARDS {
            let dir = runs.join(format!("{shard:02x}"));
            let mtime = mtime_of(&dir);
            if mtime.is_some() && self.shard_mtimes[shard] == mtime {
                continue;
            }
            let added = added_by_shard.get_or_insert_with(|| {
                let mut by_shard = vec![Vec::new(); SHARDS];
                for k in self.added.keys() {
                    by_shard[k.0[0] as usize].push(*k);
                }
                by_shard
            });
            let added = std::mem::take(&mut added[shard]);
            let corrupt_here = self.relist_shard(store, shard, &dir, &added, report);
            // Nor when a record there was damaged: it is looked at again next time.
            let trusted = settled(mtime).filter(|_| !corrupt_here);
            if self.shard_mtimes[shard] != trusted {
                self.shard_mtimes[shard] = trusted;
                self.touch();
            }
        }
        drop(t);
        self.verify(store, report);
        self.report_pack_damage(report);
    }

    /// Lists one shard folder again: loose records that appeared are read and verified, those
    /// that disappeared leave the index. Returns whether a record there is damaged.
    fn relist_shard(
        &mut self,
        store: &Store,
        shard: usize,
        dir: &std::path::Path,
        added: &[RunKey],
        report: &mut LoadReport,
    ) -> bool {
        let mut present: HashSet<RunKey> = HashSet::new();
        if let Ok(listing) = fs::read_dir(dir) {
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
        // Loose records gone (a packed record is not in this folder).
        let gone: Vec<RunKey> =
            self.file_shard(shard)
                .filter(|&i| {
                    let k = self.file.key(i);
                    matches!(self.meta_at(i).place, Place::Loose(_))
                        && !present.contains(k)
                        && (self.removed.is_empty() || !self.removed.contains(k))
                })
                .map(|i| *self.file.key(i))
                .chain(added.iter().copied().filter(|k| {
                    !present.contains(k) && self.added.contains_key(k) && self.is_loose(k)
                }))
                .collect();
        let mut gone = gone;
        gone.sort_unstable();
        gone.dedup();
        for key in gone {
            self.remove(&key);
            report.changed.push(key);
        }
        let mut corrupt_here = false;
        for key in present {
            let packed = match self.contains(&key).then(|| self.meta_of(&key)) {
                Some(Meta {
                    place: Place::Loose(_),
                    ..
                }) => continue,
                Some(m) => m.digest,
                None => None,
            };
            match read_verified(store, &key) {
                // Beside its packed copy: a leftover of packing, not a newer record.
                Ok((_, digest, _)) if packed == Some(digest) => {}
                Ok((record, digest, stamp)) => {
                    report.records_read += 1;
                    report.changed.push(key);
                    self.put_loose(key, &record, digest, stamp);
                }
                Err(corrupt) => {
                    corrupt_here = true;
                    report.corrupt.push(corrupt);
                }
            }
        }
        corrupt_here
    }

    /// A loose record just read and verified: stored, with its summary, digest and stamp.
    fn put_loose(&mut self, key: RunKey, record: &RunRecord, digest: Digest, stamp: Stamp) {
        self.removed.remove(&key);
        self.added.insert(key, Summary::of(record));
        self.meta.insert(
            key,
            Meta {
                digest: Some(digest),
                place: Place::Loose(Some(stamp)),
            },
        );
        self.touch();
    }

    /// The digest and place known for a stored key.
    fn meta_of(&self, key: &RunKey) -> Meta {
        if let Some(m) = self.meta.get(key) {
            return *m;
        }
        match self.file_position(key) {
            Some(p) if !self.added.contains_key(key) => Meta {
                digest: Some(self.file.digest(p)),
                place: self.file_places[p],
            },
            _ => Meta::default(),
        }
    }

    /// [`Index::meta_of`] the file key at position `i` (without looking it up).
    fn meta_at(&self, i: usize) -> Meta {
        let in_file = Meta {
            digest: Some(self.file.digest(i)),
            place: self.file_places[i],
        };
        if self.meta.is_empty() && self.added.is_empty() {
            return in_file;
        }
        let key = self.file.key(i);
        if let Some(m) = self.meta.get(key) {
            return *m;
        }
        match self.added.contains_key(key) {
            true => Meta::default(),
            false => in_file,
        }
    }

    /// Stats every indexed loose record; reads again and checks those whose file changed since
    /// they were verified (docs/cache.md, "Self-verifying records").
    fn verify(&mut self, store: &Store, report: &mut LoadReport) {
        let t = phase("index: stat every loose record");
        let loose_stamp = |place: Place| match place {
            Place::Loose(stamp) => Some(stamp),
            Place::Packed { .. } => None,
        };
        // The file's keys in file order (one shard folder after the other), compared with the
        // stamps at the same positions: no lookup per key.
        let mut moved = stat_moved(
            store,
            self.file.len(),
            |i| *self.file.key(i),
            |i| {
                let stamp = loose_stamp(self.meta_at(i).place)?;
                match !self.removed.is_empty() && self.removed.contains(self.file.key(i)) {
                    true => None,
                    false => Some(stamp),
                }
            },
        );
        // Then the keys learnt since the file was written.
        let mut extra: Vec<RunKey> = self
            .added
            .keys()
            .filter(|k| self.file_position(k).is_none() || self.removed.contains(k))
            .copied()
            .collect();
        extra.sort_unstable();
        moved.extend(stat_moved(
            store,
            extra.len(),
            |i| extra[i],
            |i| loose_stamp(self.meta_of(&extra[i]).place),
        ));
        drop(t);
        let _t = phase("index: check moved records");
        for (key, now) in moved {
            self.check_moved(store, key, now, report);
        }
    }

    /// A loose record whose file's stamp is not the one it was verified with.
    fn check_moved(
        &mut self,
        store: &Store,
        key: RunKey,
        now: Option<Stamp>,
        report: &mut LoadReport,
    ) {
        let known = self.meta_of(&key);
        let path = store.record_path(&key);
        if now.is_none() && !path.exists() {
            // Gone (its shard was listed within the same clock tick): no longer stored.
            self.remove(&key);
            report.changed.push(key);
            return;
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
                    place: Place::Loose(Some(stamp)),
                },
            );
            self.touch();
            return;
        }
        report.records_reverified += 1;
        match read_verified(store, &key) {
            Ok((record, digest, stamp)) => {
                // Another valid record of the same run (a rerun): its summary replaces the old.
                self.put_loose(key, &record, digest, stamp);
                report.changed.push(key);
            }
            Err(corrupt) => {
                self.remove(&key);
                self.shard_mtimes[key.0[0] as usize] = None;
                report.changed.push(key);
                report.corrupt.push(corrupt);
            }
        }
    }

    /// Whether the run is stored (`Some`) and its record's content digest: [`Index::contains`]
    /// and [`Index::digest`] in one lookup.
    pub fn lookup(&self, key: &RunKey) -> Option<Option<Digest>> {
        if self.meta.is_empty() && self.added.is_empty() && self.removed.is_empty() {
            return self.file_position(key).map(|p| Some(self.file.digest(p)));
        }
        self.contains(key).then(|| self.meta_of(key).digest)
    }

    /// [`Index::lookup`] of `count` keys (`key_at(0)`, `key_at(1)`...), each answer given to
    /// `found` in order: the same answers, faster for many keys than one lookup after the other
    /// (the memory of each lookup is fetched while the ones before it are answered).
    pub fn lookup_each<'k>(
        &self,
        count: usize,
        key_at: impl Fn(usize) -> &'k RunKey,
        mut found: impl FnMut(usize, Option<Option<Digest>>),
    ) {
        if self.meta.is_empty() && self.added.is_empty() && self.removed.is_empty() {
            self.file.positions(count, key_at, |i, p| {
                found(i, p.map(|p| Some(self.file.digest(p))))
            });
        } else {
            // What was learnt since the file was written (a delta) wins over the file.
            self.file.positions(count, &key_at, |i, p| {
                let key = key_at(i);
                let answer = if self.added.contains_key(key) {
                    Some(self.meta.get(key).and_then(|m| m.digest))
                } else {
                    match p {
                        Some(_) if self.removed.contains(key) => None,
                        Some(p) => Some(match self.meta.get(key) {
                            Some(m) => m.digest,
                            None => Some(self.file.digest(p)),
                        }),
                        None => None,
                    }
                };
                found(i, answer)
            });
        }
    }

    /// The content digest of a stored run's record (what cached views are keyed by).
    pub fn digest(&self, key: &RunKey) -> Option<Digest> {
        // A quiet store (nothing learnt since the file was written): one lookup.
        if self.meta.is_empty() && self.added.is_empty() && self.removed.is_empty() {
            return self.file_position(key).map(|p| self.file.digest(p));
        }
        if !self.contains(key) {
            return None;
        }
        self.meta_of(key).digest
    }

    /// Reads a stored run's whole record, loose or packed, and verifies it (`Ok(None)`: the
    /// run is not stored).
    pub fn read(
        &self,
        store: &Store,
        key: &RunKey,
    ) -> Result<Option<(RunRecord, Digest)>, CorruptRecord> {
        if !self.contains(key) {
            return Ok(None);
        }
        match self.meta_of(key).place {
            Place::Loose(_) => match store.get_verified(key)? {
                Some(found) => Ok(Some(found)),
                // Packed by a `mccbuild run` since this index was loaded (the pack is in place
                // before the loose file goes): the store's index as it is now says where.
                None => {
                    let now = self.reloaded.get_or_init(|| Box::new(Index::load(store).0));
                    match now.meta_of(key).place {
                        Place::Packed { .. } if now.contains(key) => now.read(store, key),
                        _ => Ok(None),
                    }
                }
            },
            Place::Packed { pack, offset, len } => {
                pack::read_packed(store, pack, offset, len, key).map(Some)
            }
        }
    }

    /// The index file's record of where `key`'s record lies, for messages: its loose file, or
    /// its pack.
    pub fn record_location(&self, store: &Store, key: &RunKey) -> std::path::PathBuf {
        match self.meta_of(key).place {
            Place::Packed { pack, .. } if self.contains(key) => pack::pack_path(store, pack),
            _ => store.record_path(key),
        }
    }

    /// The summary of the file key at position `i`, decoded on first use: a command that
    /// scores a few model examinations decodes their runs' summaries only.
    fn summary_at(&self, i: usize) -> Option<&Summary> {
        let chunks = self.file_summaries.get_or_init(|| {
            (0..self.file.len().div_ceil(SUMMARY_CHUNK))
                .map(|_| OnceLock::new())
                .collect()
        });
        let chunk = chunks[i / SUMMARY_CHUNK]
            .get_or_init(|| (0..SUMMARY_CHUNK).map(|_| OnceLock::new()).collect());
        chunk[i % SUMMARY_CHUNK]
            .get_or_init(|| {
                // The section's checksum was verified: only a bug can make an entry
                // undecodable. Nothing is claimed then; the run looks unanswered, not wrong.
                let bytes = entry_bytes(&self.file_body, self.file.len(), i)?;
                postcard::from_bytes::<Entry>(bytes).ok()?.summary()
            })
            .as_ref()
    }

    pub fn get(&self, key: &RunKey) -> Option<&Summary> {
        if let Some(s) = self.added.get(key) {
            return Some(s);
        }
        if self.removed.contains(key) {
            return None;
        }
        let position = self.file_position(key)?;
        self.summary_at(position)
    }

    /// Whether the run is stored (without decoding any summary).
    pub fn contains(&self, key: &RunKey) -> bool {
        self.added.contains_key(key)
            || (self.file_position(key).is_some() && !self.removed.contains(key))
    }

    pub fn len(&self) -> usize {
        self.file.len() - self.removed.len()
            + self
                .added
                .keys()
                .filter(|k| self.file_position(k).is_none())
                .count()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Records a run just stored as a loose record, with its record's content digest (its
    /// file's stamp is taken when the index is next saved or loaded).
    pub fn insert(&mut self, key: RunKey, summary: Summary, digest: Digest) {
        self.removed.remove(&key);
        self.added.insert(key, summary);
        self.meta.insert(
            key,
            Meta {
                digest: Some(digest),
                place: Place::Loose(None),
            },
        );
        self.touch();
    }

    /// Forgets a run whose record was removed.
    pub fn remove(&mut self, key: &RunKey) {
        let had_meta = self.meta.remove(key).is_some();
        if self.added.remove(key).is_some() || self.file_position(key).is_some() {
            self.removed.insert(*key);
            self.touch();
        } else if had_meta {
            self.touch();
        }
    }

    /// Whether the index learnt something its file does not hold.
    pub fn is_dirty(&self) -> bool {
        self.dirty
    }

    /// The index learnt something its file does not hold: it is to be written, and what it
    /// says may have changed (a new [`Index::version`]).
    fn touch(&mut self) {
        self.dirty = true;
        self.version = next_version();
    }

    /// A number that changes whenever what the index says may have changed (a run stored,
    /// removed, read again, packed...), never the same for two indexes of one process: what was
    /// looked up in an index stays true while its version is the same.
    pub fn version(&self) -> u64 {
        self.version
    }

    /// Saves the index if it changed (after reconciling with records written meanwhile).
    pub fn save(&mut self, store: &Store) -> io::Result<()> {
        let mut report = LoadReport::default();
        self.reconcile(store, &mut report);
        self.save_learnt(store)
    }

    /// Saves what the index learnt, if anything, without looking at the store again: for an
    /// index just loaded (which reconciled it).
    pub fn save_learnt(&mut self, store: &Store) -> io::Result<()> {
        if !self.dirty {
            return Ok(());
        }
        match self.delta_suffices() {
            true => self.write_delta(store)?,
            false => self.write(store)?,
        }
        self.dirty = false;
        Ok(())
    }

    /// Writes the whole index file (then the delta, which completed the file before it, goes).
    fn write(&mut self, store: &Store) -> io::Result<()> {
        write_atomically(&store.index_path(), &self.encode()?)?;
        // The keys held are the former file's: a delta of this index would not apply to it.
        self.file_id = None;
        match fs::remove_file(delta::delta_path(store)) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        self.dirty = false;
        Ok(())
    }

    /// The pack table as the index and delta files hold it.
    fn pack_table(&self) -> PackTable {
        PackTable {
            mtime: self.packs_mtime,
            packs: self
                .packs
                .iter()
                .map(|(p, s)| (*p, s.map(|s| (s.size, s.ctime_ns, s.ino))))
                .collect(),
            damage: self.damage.clone(),
        }
    }

    fn encode(&self) -> io::Result<Vec<u8>> {
        /// Where an entry's summary comes from: the file's section (its bytes, not decoded),
        /// or what was learnt since.
        enum From<'a> {
            File(usize),
            Learnt(&'a Summary),
        }
        let mut all: Vec<(RunKey, From)> = Vec::with_capacity(self.file.len() + self.added.len());
        for (i, key) in self.file.keys().enumerate() {
            if !self.removed.is_empty() && self.removed.contains(key)
                || !self.added.is_empty() && self.added.contains_key(key)
            {
                continue;
            }
            all.push((*key, From::File(i)));
        }
        all.extend(self.added.iter().map(|(k, s)| (*k, From::Learnt(s))));
        all.sort_unstable_by_key(|(k, _)| *k);
        let table = postcard::to_allocvec(&self.pack_table()).unwrap_or_default();
        let mut keys_section =
            Vec::with_capacity(SHARDS * 16 + table.len() + all.len() * (64 + PLACE));
        for m in &self.shard_mtimes {
            keys_section.extend_from_slice(&m.unwrap_or(i128::MIN).to_le_bytes());
        }
        keys_section.extend_from_slice(&table);
        for (k, _) in &all {
            keys_section.extend_from_slice(&k.0);
        }
        let metas: Vec<Meta> = all.iter().map(|(k, _)| self.meta_of(k)).collect();
        for m in &metas {
            keys_section.extend_from_slice(&m.digest.unwrap_or([0; 32]));
        }
        for m in &metas {
            keys_section.extend_from_slice(&m.place.to_bytes());
        }
        // The summaries section: each entry's end, then the entries (a file entry's bytes as
        // they are, checked by the file's checksum when it was read).
        let mut ends: Vec<u8> = Vec::with_capacity(all.len() * 4);
        let mut entries: Vec<u8> = Vec::with_capacity(all.len() * 32);
        for (_, from) in &all {
            match from {
                From::File(i) => {
                    let bytes = entry_bytes(&self.file_body, self.file.len(), *i).unwrap_or(&[]);
                    entries.extend_from_slice(bytes);
                }
                From::Learnt(s) => {
                    entries = postcard::to_extend(&Entry::of(s), entries)
                        .map_err(|e| io::Error::other(format!("a summary: {e}")))?;
                }
            }
            let end = u32::try_from(entries.len()).map_err(|_| {
                io::Error::other("the index's summaries exceed 4 GiB (this index format's limit)")
            })?;
            ends.extend_from_slice(&end.to_le_bytes());
        }
        let mut body = ends;
        body.extend_from_slice(&entries);
        drop(entries);
        let mut bytes = Vec::with_capacity(HEADER + keys_section.len() + body.len());
        bytes.extend_from_slice(INDEX_MAGIC);
        bytes.extend_from_slice(blake3::hash(&keys_section).as_bytes());
        bytes.extend_from_slice(blake3::hash(&body).as_bytes());
        bytes.extend_from_slice(&(all.len() as u64).to_le_bytes());
        bytes.extend_from_slice(&(table.len() as u64).to_le_bytes());
        bytes.extend_from_slice(&keys_section);
        bytes.extend_from_slice(&body);
        Ok(bytes)
    }
}

/// The bytes of entry `i` of a summaries section of `n` entries (`None`: the section is not
/// well formed there).
fn entry_bytes(body: &[u8], n: usize, i: usize) -> Option<&[u8]> {
    let end_at = |j: usize| -> Option<usize> {
        let b = body.get(j * 4..j * 4 + 4)?;
        Some(u32::from_le_bytes(b.try_into().ok()?) as usize)
    };
    let entries = body.get(n.checked_mul(4)?..)?;
    let start = match i {
        0 => 0,
        _ => end_at(i - 1)?,
    };
    entries.get(start..end_at(i)?)
}

/// The packs: `crate::pack` writes and reads them; here the index keeps them in step.
impl Index {
    /// Lists `packs/` again when it changed (a pack added or removed), reads again each pack
    /// whose file changed since it was verified, and reports the damaged lines known.
    fn reconcile_packs(&mut self, store: &Store, report: &mut LoadReport) {
        let mut read_now: HashSet<u32> = HashSet::new();
        let mtime = mtime_of(&pack::packs_dir(store));
        if mtime.is_none() || self.packs_mtime != mtime {
            match pack::list_packs(store) {
                Ok(listed) => {
                    let gone: Vec<u32> = self
                        .packs
                        .keys()
                        .filter(|p| !listed.contains(p))
                        .copied()
                        .collect();
                    for p in gone {
                        self.drop_pack(p, report);
                    }
                    for p in listed {
                        if !self.packs.contains_key(&p) {
                            self.read_pack(store, p, report);
                            read_now.insert(p);
                        }
                    }
                    if self.packs_mtime != settled(mtime) {
                        self.packs_mtime = settled(mtime);
                        self.touch();
                    }
                }
                // Unreadable for now: what is known stays, and it is listed again next time.
                Err(_) => self.packs_mtime = None,
            }
        }
        let known: Vec<(u32, Option<Stamp>)> = self
            .packs
            .iter()
            .filter(|(p, _)| !read_now.contains(p))
            .map(|(p, s)| (*p, *s))
            .collect();
        for (p, stamp) in known {
            let now = fs::symlink_metadata(pack::pack_path(store, p))
                .ok()
                .map(|m| Stamp::of(&m));
            if now.is_none() || now != stamp {
                self.read_pack(store, p, report);
                read_now.insert(p);
            }
        }
    }

    /// The damaged lines of packs whose runs have no other record (a pack is read only when it
    /// changed: its damage is remembered, and said by every load).
    fn report_pack_damage(&self, report: &mut LoadReport) {
        for d in &self.damage {
            if d.key.is_none_or(|k| !self.contains(&k)) {
                report.corrupt.push(CorruptRecord {
                    path: d.path.clone().into(),
                    reason: d.reason.clone(),
                });
            }
        }
    }

    /// The stored runs whose record lies in pack `p`.
    fn keys_in_pack(&self, p: u32) -> Vec<RunKey> {
        let in_p = |place: Place| matches!(place, Place::Packed { pack, .. } if pack == p);
        let mut keys: Vec<RunKey> = self
            .file
            .keys()
            .enumerate()
            .filter(|(i, k)| {
                in_p(self.file_places[*i])
                    && !self.meta.contains_key(k)
                    && !self.removed.contains(k)
                    && !self.added.contains_key(k)
            })
            .map(|(_, k)| *k)
            .collect();
        keys.extend(
            self.meta
                .iter()
                .filter(|(k, m)| in_p(m.place) && self.contains(k))
                .map(|(k, _)| *k),
        );
        keys
    }

    /// A pack that is gone: its records are no longer stored (as a removed loose record).
    fn drop_pack(&mut self, p: u32, report: &mut LoadReport) {
        for key in self.keys_in_pack(p) {
            self.remove(&key);
            report.changed.push(key);
        }
        self.packs.remove(&p);
        self.damage.retain(|d| d.pack != p);
        self.touch();
    }

    /// Reads pack `p` whole (new to the index, or its file changed) and verifies every line:
    /// its valid records are stored (unless a newer record of the run is), a record of it that
    /// the index held and that is no longer valid there is reported and leaves the index.
    fn read_pack(&mut self, store: &Store, p: u32, report: &mut LoadReport) {
        let path = pack::pack_path(store, p);
        let (bytes, meta) = match pack::read_all(&path) {
            Ok(read) => read,
            Err(e) => {
                if e.kind() != io::ErrorKind::NotFound {
                    report.corrupt.push(CorruptRecord {
                        path: path.clone(),
                        reason: format!("cannot read this pack of records: {e}"),
                    });
                }
                self.drop_pack(p, report);
                // Looked at again next time.
                self.packs_mtime = None;
                return;
            }
        };
        let (valid, damaged) = pack::scan_pack(&path, &bytes);
        let mut held: HashSet<RunKey> = self.keys_in_pack(p).into_iter().collect();
        for r in valid {
            held.remove(&r.key);
            let current = self.contains(&r.key).then(|| self.meta_of(&r.key));
            let take = match current {
                None => true,
                // A loose copy of the same record is a leftover of packing.
                Some(Meta {
                    place: Place::Loose(_),
                    digest,
                }) => digest == Some(r.digest),
                Some(Meta {
                    place: Place::Packed { pack, .. },
                    ..
                }) => pack <= p,
            };
            if !take {
                continue;
            }
            if current.and_then(|m| m.digest) != Some(r.digest) {
                report.records_read += 1;
                report.changed.push(r.key);
                self.removed.remove(&r.key);
                self.added.insert(r.key, r.summary);
            }
            self.meta.insert(
                r.key,
                Meta {
                    digest: Some(r.digest),
                    place: Place::Packed {
                        pack: p,
                        offset: r.offset,
                        len: r.len,
                    },
                },
            );
        }
        self.damage.retain(|d| d.pack != p);
        let named: HashSet<RunKey> = damaged.iter().filter_map(|(k, _)| *k).collect();
        for key in held {
            self.remove(&key);
            report.changed.push(key);
            if !named.contains(&key) {
                report.corrupt.push(CorruptRecord {
                    path: path.clone(),
                    reason: format!(
                        "the record of run {key} is no longer in it (the pack was changed or cut short after it was verified)"
                    ),
                });
            }
        }
        for (key, corrupt) in damaged {
            self.damage.push(PackDamage {
                pack: p,
                key,
                path: path.display().to_string(),
                reason: corrupt.reason,
            });
        }
        self.packs.insert(p, Some(Stamp::of(&meta)));
        self.touch();
    }

    /// Packs the loose records into segment files (`crate::pack`) when there are at least
    /// `min_loose` of them; the caller holds the store's execution lock. Each record is read
    /// and verified again; a pack is written whole and synced, then the index saved with the
    /// records' new places, and only then are the loose files removed: a process killed at any
    /// point leaves every record readable (at worst twice: the loose copy counts until the
    /// index knows the pack, and is removed by the next packing).
    pub fn pack(&mut self, store: &Store, min_loose: usize) -> io::Result<PackOutcome> {
        let mut outcome = PackOutcome::default();
        // Present while a packing is under way: a killed one may have left loose copies.
        let marker = pack::packs_dir(store).join("PACKING");
        let interrupted = marker.exists();
        if self.loose_count() < min_loose.max(1) && !interrupted {
            return Ok(outcome);
        }
        pack::remove_temporaries(store);
        fs::create_dir_all(pack::packs_dir(store))?;
        write_atomically(
            &marker,
            b"a packing of loose records is under way (mccbuild)\n",
        )?;
        let leftovers = if interrupted {
            self.packed_leftovers(store)
        } else {
            Vec::new()
        };
        let mut loose: Vec<RunKey> = Vec::new();
        if self.loose_count() >= min_loose.max(1) {
            loose = self
                .file
                .keys()
                .filter(|k| !self.removed.contains(k) && !self.added.contains_key(k))
                .chain(self.added.keys())
                .filter(|k| self.is_loose(k))
                .copied()
                .collect();
        }
        loose.sort_unstable();
        let mut next = self.next_pack_number(store)?;
        let mut packed: Vec<RunKey> = Vec::new();
        let mut start = 0;
        while start < loose.len() {
            let t = phase("pack: read and verify loose records");
            let (batch, end) = self.next_batch(store, &loose, start);
            drop(t);
            let _t = phase("pack: write packs");
            start = end;
            if batch.is_empty() {
                continue;
            }
            let lines: Vec<(RunKey, &[u8], Digest)> = batch
                .iter()
                .map(|(k, b, d)| (*k, b.as_slice(), *d))
                .collect();
            self.add_pack(store, next, &lines)?;
            packed.extend(batch.iter().map(|(k, _, _)| *k));
            outcome.records += batch.len();
            outcome.packs.push(pack::pack_path(store, next));
            next += 1;
        }
        // The index knows the packs before any loose file goes.
        self.packs_mtime = None;
        let t = phase("pack: save the index");
        self.write(store)?;
        drop(t);
        let _t = phase("pack: remove loose files");
        for key in packed.iter().chain(&leftovers) {
            fs::remove_file(store.record_path(key)).or_else(|e| match e.kind() {
                io::ErrorKind::NotFound => Ok(()),
                _ => Err(e),
            })?;
        }
        // The shard folders' times moved: the next load lists them again (and finds nothing
        // new), so the index need not be written again here.
        outcome.leftovers = leftovers.len();
        fs::remove_file(&marker)?;
        Ok(outcome)
    }

    /// Stores many new records straight into packs (an import, a generated store), without a
    /// loose file each: the packs are written and synced, then the index saved. A process killed
    /// in between leaves packs the next load finds and verifies. Returns the records' content
    /// digests, in order.
    pub fn put_packed(&mut self, store: &Store, records: &[RunRecord]) -> io::Result<Vec<Digest>> {
        let mut digests = Vec::with_capacity(records.len());
        let mut next = self.next_pack_number(store)?;
        let mut start = 0;
        while start < records.len() {
            let mut lines: Vec<Vec<u8>> = Vec::new();
            let mut bytes_in = 0u64;
            while start + lines.len() < records.len() && bytes_in < pack::PACK_MAX_BYTES {
                let (bytes, digest) = crate::encode_record(&records[start + lines.len()])?;
                bytes_in += bytes.len() as u64 + 1;
                digests.push(digest);
                lines.push(bytes);
            }
            let batch = &records[start..start + lines.len()];
            let entries: Vec<(RunKey, &[u8], Digest)> = batch
                .iter()
                .zip(&lines)
                .zip(&digests[start..])
                .map(|((r, bytes), d)| (r.key, bytes.as_slice(), *d))
                .collect();
            self.add_pack(store, next, &entries)?;
            for record in batch {
                self.removed.remove(&record.key);
                self.added.insert(record.key, Summary::of(record));
            }
            start += lines.len();
            next += 1;
        }
        self.packs_mtime = None;
        self.touch();
        self.write(store)?;
        Ok(digests)
    }

    /// The number of the next pack: after every pack the index knows and every pack in `packs/`.
    fn next_pack_number(&self, store: &Store) -> io::Result<u32> {
        Ok(self
            .packs
            .keys()
            .copied()
            .chain(pack::list_packs(store)?)
            .max()
            .map_or(1, |p| p + 1))
    }

    /// Writes pack `number` of these records (each a record file's bytes with its key and
    /// digest) and places them there in the index.
    fn add_pack(
        &mut self,
        store: &Store,
        number: u32,
        records: &[(RunKey, &[u8], Digest)],
    ) -> io::Result<()> {
        let lines: Vec<&[u8]> = records.iter().map(|(_, bytes, _)| *bytes).collect();
        let places = pack::write_pack(store, number, &lines)?;
        let stamp = fs::symlink_metadata(pack::pack_path(store, number))?;
        for ((key, _, digest), (offset, len)) in records.iter().zip(places) {
            let place = Place::Packed {
                pack: number,
                offset,
                len,
            };
            self.meta.insert(
                *key,
                Meta {
                    digest: Some(*digest),
                    place,
                },
            );
        }
        self.packs.insert(number, Some(Stamp::of(&stamp)));
        self.touch();
        Ok(())
    }

    /// How many stored runs have a loose record.
    fn loose_count(&self) -> usize {
        let loose = |p: &Place| matches!(p, Place::Loose(_));
        if self.meta.is_empty() && self.added.is_empty() && self.removed.is_empty() {
            return self.file_places.iter().filter(|p| loose(p)).count();
        }
        // The file's count, then each key learnt since counted as it is now instead.
        let mut count = self.file_places.iter().filter(|p| loose(p)).count();
        let touched: HashSet<&RunKey> = self
            .meta
            .keys()
            .chain(self.added.keys())
            .chain(self.removed.iter())
            .collect();
        for key in touched {
            if self
                .file_position(key)
                .is_some_and(|p| loose(&self.file_places[p]))
            {
                count -= 1;
            }
            if self.contains(key) && self.is_loose(key) {
                count += 1;
            }
        }
        count
    }

    /// The next records to pack from `loose[start..]`, up to [`pack::PACK_MAX_BYTES`]: each
    /// read and verified again (one that changed since the index verified it stays loose: the
    /// next load looks at it). Returns them and where the next batch starts.
    #[allow(clippy::type_complexity)]
    fn next_batch(
        &self,
        store: &Store,
        loose: &[RunKey],
        start: usize,
    ) -> (Vec<(RunKey, Vec<u8>, Digest)>, usize) {
        let mut batch = Vec::new();
        let mut bytes_in = 0u64;
        let mut i = start;
        while i < loose.len() && bytes_in < pack::PACK_MAX_BYTES {
            let key = loose[i];
            i += 1;
            let known = self.meta_of(&key);
            let Ok((bytes, meta)) = pack::read_all(&store.record_path(&key)) else {
                continue;
            };
            let stamp_ok = match known.place {
                Place::Loose(Some(s)) => s == Stamp::of(&meta),
                _ => true,
            };
            match verify_digest(&bytes) {
                Ok(d) if stamp_ok && Some(d) == known.digest && !bytes.contains(&b'\n') => {
                    bytes_in += bytes.len() as u64 + 1;
                    batch.push((key, bytes, d));
                }
                _ => {}
            }
        }
        (batch, i)
    }

    /// Loose files that a killed packing left beside their packed copies (same content digest).
    fn packed_leftovers(&self, store: &Store) -> Vec<RunKey> {
        let mut leftovers = Vec::new();
        for shard in 0..SHARDS {
            let dir = store.root().join("runs").join(format!("{shard:02x}"));
            let Ok(listing) = fs::read_dir(&dir) else {
                continue;
            };
            for entry in listing.flatten() {
                let Some(key) = entry
                    .file_name()
                    .to_str()
                    .and_then(|n| n.strip_suffix(".json"))
                    .and_then(RunKey::from_hex)
                else {
                    continue;
                };
                let known = self.meta_of(&key);
                if !self.contains(&key) || matches!(known.place, Place::Loose(_)) {
                    continue;
                }
                let same = fs::read(entry.path())
                    .ok()
                    .and_then(|b| verify_digest(&b).ok());
                if same.is_some() && same == known.digest {
                    leftovers.push(key);
                }
            }
        }
        leftovers
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
    let t = u64::from_le_bytes(header[80..88].try_into().ok()?) as usize;
    HEADER
        .checked_add(SHARDS * 16)?
        .checked_add(t)?
        .checked_add(n.checked_mul(32 + 32 + PLACE)?)
}

/// Why an index file was not used.
enum Unusable {
    /// It could not be read (gone, unreadable).
    Io(io::Error),
    /// Not an index of this version, cut short, or damaged.
    Damaged(String),
}

impl From<io::Error> for Unusable {
    fn from(e: io::Error) -> Unusable {
        Unusable::Io(e)
    }
}

/// Bytes read at a time from the keys section: a multiple of every record's width there.
const READ_CHUNK: usize = 1 << 17;

/// Reads `len` bytes of `file` through `buf`, each piece hashed into `hasher` and handed to
/// `each` (in pieces of a multiple of 32 bytes: every record of the keys section is 32 bytes).
fn stream(
    file: &mut fs::File,
    mut len: usize,
    buf: &mut [u8],
    hasher: &mut blake3::Hasher,
    mut each: impl FnMut(&[u8]),
) -> io::Result<()> {
    use std::io::Read;
    while len > 0 {
        let piece = &mut buf[..len.min(READ_CHUNK)];
        file.read_exact(piece)?;
        hasher.update(piece);
        each(piece);
        len -= piece.len();
    }
    Ok(())
}

/// Reads and decodes the index file in one pass, without a copy of it: the keys section goes
/// through a small buffer (hashed as it goes by, each key, digest and place decoded into its
/// vector, the keys' order and the buckets checked and counted on the way), the summaries
/// section is read straight into its own buffer and hashed on a second thread. Nothing is used
/// unless both checksums hold.
fn read_index(path: &std::path::Path) -> Result<Index, Unusable> {
    use std::io::Read;
    use std::os::unix::fs::FileExt;
    let mut file = fs::File::open(path)?;
    let meta = file.metadata()?;
    let size = meta.len();
    let damaged = |what: &str| Unusable::Damaged(what.to_string());
    let mut header = [0u8; HEADER];
    if size < HEADER as u64 {
        return Err(damaged("not an index of this mccbuild version"));
    }
    file.read_exact(&mut header)?;
    if &header[..8] != INDEX_MAGIC {
        return Err(damaged("not an index of this mccbuild version"));
    }
    let word = |at: usize| u64::from_le_bytes(header[at..at + 8].try_into().unwrap_or([0; 8]));
    let (n, t) = (word(72), word(80));
    let keys_end = keys_end(&header).ok_or_else(|| damaged("malformed"))?;
    if (keys_end as u64) > size {
        return Err(damaged("truncated"));
    }
    let (n, t) = (n as usize, t as usize);
    // The summaries section, read and hashed beside the keys section.
    let body_len = (size - keys_end as u64) as usize;
    let reading_body = {
        let file = file.try_clone()?;
        std::thread::spawn(move || -> io::Result<(Vec<u8>, blake3::Hash)> {
            let mut body = vec![0u8; body_len];
            file.read_exact_at(&mut body, keys_end as u64)?;
            let digest = blake3::hash(&body);
            Ok((body, digest))
        })
    };
    let mut hasher = blake3::Hasher::new();
    let mut head = vec![0u8; SHARDS * 16 + t];
    file.read_exact(&mut head)?;
    hasher.update(&head);
    let mut buf = vec![0u8; READ_CHUNK];
    let mut keys = FileKeys {
        entries: Vec::with_capacity(n),
        prefixes: Vec::with_capacity(n),
        buckets: vec![0u32; BUCKETS + 1],
    };
    let mut sorted = true;
    stream(&mut file, n * 32, &mut buf, &mut hasher, |piece| {
        for c in piece.chunks_exact(32) {
            let key = RunKey(c.try_into().unwrap_or([0; 32]));
            let prefix = prefix_of(&key);
            // In order: by the first 8 bytes, the whole key only when they are the same.
            sorted &= match keys.prefixes.last() {
                None => true,
                Some(&last) if last != prefix => last < prefix,
                Some(_) => keys.entries.last().is_some_and(|last| last.key < key),
            };
            keys.buckets[bucket_of(&key) + 1] += 1;
            keys.prefixes.push(prefix);
            keys.entries.push(KeyEntry {
                key,
                digest: [0; 32],
            });
        }
    })?;
    let mut entries = keys.entries.iter_mut();
    stream(&mut file, n * 32, &mut buf, &mut hasher, |piece| {
        for (entry, c) in (&mut entries).zip(piece.chunks_exact(32)) {
            entry.digest = c.try_into().unwrap_or([0; 32]);
        }
    })?;
    let mut places: Vec<Place> = Vec::with_capacity(n);
    let mut places_valid = true;
    stream(&mut file, n * PLACE, &mut buf, &mut hasher, |piece| {
        for c in piece.chunks_exact(PLACE) {
            match Place::from_bytes(c) {
                Some(place) => places.push(place),
                None => places_valid = false,
            }
        }
    })?;
    let (body, body_digest) = reading_body
        .join()
        .map_err(|_| damaged("the summaries could not be read"))??;
    if hasher.finalize().as_bytes() != &header[8..40] || body_digest.as_bytes() != &header[40..72] {
        return Err(damaged("checksum mismatch (damaged)"));
    }
    if !places_valid {
        return Err(damaged("malformed (a record's place)"));
    }
    if !sorted {
        return Err(damaged("malformed (unsorted keys)"));
    }
    let shard_mtimes = head[..SHARDS * 16]
        .chunks_exact(16)
        .map(|c| {
            let m = i128::from_le_bytes(c.try_into().unwrap_or([0; 16]));
            (m != i128::MIN).then_some(m)
        })
        .collect();
    let table: PackTable = postcard::from_bytes(&head[SHARDS * 16..])
        .map_err(|_| damaged("malformed (pack table)"))?;
    for b in 0..BUCKETS {
        keys.buckets[b + 1] += keys.buckets[b];
    }
    Ok(Index {
        file: keys,
        file_places: places,
        meta: KeyMap::default(),
        file_body: body,
        file_summaries: OnceLock::new(),
        added: KeyMap::default(),
        removed: HashSet::new(),
        shard_mtimes,
        packs: table.packs(),
        packs_mtime: table.mtime,
        damage: table.damage,
        dirty: false,
        reloaded: OnceLock::new(),
        loaded_from: Some(FileStamp::of(&meta)),
        file_id: header[8..72].try_into().ok(),
        delta_read: None,
        version: next_version(),
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

    /// A store of `n` loose records, indexed and saved, its folders' times settled.
    fn store_of(n: u8) -> (tempfile::TempDir, Store, Vec<RunKey>) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let keys: Vec<RunKey> = (0..n).map(|i| RunKey([i; 32])).collect();
        for (i, k) in keys.iter().enumerate() {
            let mut record = sample_record(*k);
            record.answers[0].value = Value::Int(i as u64);
            store.put(&record).unwrap();
        }
        let (mut index, _) = Index::load(&store);
        age_shards(&store);
        index.save(&store).unwrap();
        (dir, store, keys)
    }

    /// [`store_of`], its records packed, the store's folders' times settled.
    fn packed_store_of(n: u8) -> (tempfile::TempDir, Store, Vec<RunKey>) {
        let (dir, store, keys) = store_of(n);
        let (mut index, _) = Index::load(&store);
        assert_eq!(index.pack(&store, 1).unwrap().records, n as usize);
        settled_load(&store);
        (dir, store, keys)
    }

    fn age_packs(store: &Store) {
        let old = SystemTime::now() - std::time::Duration::from_secs(60);
        let dir = fs::File::open(pack::packs_dir(store)).unwrap();
        dir.set_modified(old).unwrap();
    }

    /// Loads, saves and loads again with every folder's time settled: what the next command sees.
    fn settled_load(store: &Store) -> (Index, LoadReport) {
        let (mut index, _) = Index::load(store);
        age_shards(store);
        age_packs(store);
        index.save(store).unwrap();
        Index::load(store)
    }

    #[test]
    fn packed_records_are_the_same_records_and_a_quiet_store_reads_none() {
        let (_dir, store, keys) = store_of(40);
        let (mut index, _) = Index::load(&store);
        let before: Vec<(Option<Digest>, Summary)> = keys
            .iter()
            .map(|k| (index.digest(k), index.get(k).unwrap().clone()))
            .collect();
        // Fewer loose records than asked for: nothing happens.
        assert_eq!(index.pack(&store, 41).unwrap().records, 0);
        let outcome = index.pack(&store, 40).unwrap();
        assert_eq!((outcome.records, outcome.packs.len()), (40, 1));
        for k in &keys {
            assert!(!store.record_path(k).exists(), "the loose file is gone");
        }
        let (index, report) = settled_load(&store);
        assert!(report.corrupt.is_empty(), "{:?}", report.corrupt);
        assert_eq!((report.records_read, report.records_reverified), (0, 0));
        assert!(report.changed.is_empty());
        assert_eq!(index.len(), 40);
        for (k, (digest, summary)) in keys.iter().zip(&before) {
            assert_eq!(index.digest(k), *digest);
            assert_eq!(index.get(k), Some(summary));
            let (record, d) = index.read(&store, k).unwrap().unwrap();
            assert_eq!((record.key, Some(d)), (*k, *digest));
            assert_eq!(Summary::of(&record), *summary);
        }
        assert!(!index.is_dirty());
        // Rebuilt from the pack alone: the same.
        fs::remove_file(store.index_path()).unwrap();
        let (index, report) = Index::load(&store);
        assert_eq!((index.len(), report.records_read), (40, 40));
        for (k, (digest, _)) in keys.iter().zip(&before) {
            assert_eq!(index.digest(k), *digest);
        }
    }

    #[test]
    fn a_packed_record_edited_in_place_is_reported_until_its_run_has_a_new_record() {
        let (_dir, store, keys) = packed_store_of(10);
        // An answer changed inside the pack, the file still valid JSON lines of the same length.
        let path = pack::pack_path(&store, 1);
        let text = fs::read_to_string(&path).unwrap();
        let edited = text.replacen("\"value\":\"3\"", "\"value\":\"8\"", 1);
        assert_ne!(edited, text);
        fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .and_then(|mut f| io::Write::write_all(&mut f, edited.as_bytes()))
            .unwrap();
        let (mut index, report) = Index::load(&store);
        assert_eq!(report.corrupt.len(), 1, "{:?}", report.corrupt);
        assert_eq!(report.corrupt[0].path, path);
        let reason = &report.corrupt[0].reason;
        assert!(
            reason.contains(&keys[3].hex()) && reason.contains("does not match its digest"),
            "{reason}"
        );
        assert!(!index.contains(&keys[3]) && index.get(&keys[3]).is_none());
        assert_eq!(index.len(), 9);
        index.save(&store).unwrap();
        // Still reported by the next command, without reading the pack again.
        let (index, report) = Index::load(&store);
        assert_eq!(report.corrupt.len(), 1);
        assert_eq!(report.records_read, 0);
        assert!(!index.contains(&keys[3]));
        // Its run done again (a loose record): no longer reported, the new record counts.
        let mut redone = sample_record(keys[3]);
        redone.answers[0].value = Value::Int(3);
        let digest = store.put(&redone).unwrap();
        let (index, report) = Index::load(&store);
        assert!(report.corrupt.is_empty(), "{:?}", report.corrupt);
        assert_eq!(index.digest(&keys[3]), Some(digest));
    }

    #[test]
    fn a_pack_cut_short_loses_only_its_last_records_and_says_so() {
        let (_dir, store, keys) = packed_store_of(10);
        let path = pack::pack_path(&store, 1);
        let len = fs::metadata(&path).unwrap().len();
        fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(len - 100)
            .unwrap();
        let (index, report) = Index::load(&store);
        assert_eq!(index.len(), 9);
        assert!(!index.contains(&keys[9]));
        assert_eq!(report.corrupt.len(), 1, "{:?}", report.corrupt);
        assert!(
            report.corrupt[0].reason.contains("cut short"),
            "{:?}",
            report.corrupt
        );
        // A pack removed: its records are no longer stored (as removed loose records).
        fs::remove_file(&path).unwrap();
        let (index, _) = Index::load(&store);
        assert!(index.is_empty());
    }

    #[test]
    fn a_rerun_over_a_packed_record_wins_and_is_packed_in_turn() {
        let (_dir, store, keys) = packed_store_of(4);
        let mut redone = sample_record(keys[1]);
        redone.answers[0].value = Value::Int(99);
        let digest = store.put(&redone).unwrap();
        let (mut index, report) = Index::load(&store);
        assert_eq!(report.changed, vec![keys[1]]);
        assert_eq!(index.get(&keys[1]).unwrap().answers[0], (0, Value::Int(99)));
        let outcome = index.pack(&store, 1).unwrap();
        assert_eq!(outcome.records, 1);
        assert!(outcome.packs[0].ends_with("00000002.jsonl"));
        let (index, _) = settled_load(&store);
        assert_eq!(index.digest(&keys[1]), Some(digest));
        // Rebuilt: the newer pack's record counts.
        fs::remove_file(store.index_path()).unwrap();
        let (index, _) = Index::load(&store);
        assert_eq!(index.digest(&keys[1]), Some(digest));
        assert_eq!(index.len(), 4);
    }

    #[test]
    fn a_packing_killed_before_it_ended_loses_nothing_and_is_finished_next_time() {
        let (_dir, store, keys) = store_of(6);
        let (index, _) = Index::load(&store);
        // Killed after the pack was renamed into place, before the index knew it: the pack and
        // every loose file are there, and the marker.
        let lines: Vec<Vec<u8>> = keys
            .iter()
            .map(|k| fs::read(store.record_path(k)).unwrap())
            .collect();
        let refs: Vec<&[u8]> = lines.iter().map(|l| l.as_slice()).collect();
        pack::write_pack(&store, 1, &refs).unwrap();
        fs::write(pack::packs_dir(&store).join("PACKING"), "x").unwrap();
        fs::write(
            pack::packs_dir(&store).join(".00000002.jsonl.abc.tmp"),
            "half",
        )
        .unwrap();
        let digests: Vec<_> = keys.iter().map(|k| index.digest(k)).collect();
        let (mut index, report) = Index::load(&store);
        assert!(
            report.corrupt.is_empty() && report.changed.is_empty(),
            "{report:?}"
        );
        assert_eq!(
            keys.iter().map(|k| index.digest(k)).collect::<Vec<_>>(),
            digests
        );
        // The next packing removes the loose copies and the temporary file.
        let outcome = index.pack(&store, 1000).unwrap();
        assert_eq!((outcome.records, outcome.leftovers), (0, 6));
        assert!(keys.iter().all(|k| !store.record_path(k).exists()));
        let names: Vec<String> = fs::read_dir(pack::packs_dir(&store))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, vec!["00000001.jsonl".to_string()]);
        let (index, report) = settled_load(&store);
        assert!(report.corrupt.is_empty());
        assert_eq!(
            keys.iter().map(|k| index.digest(k)).collect::<Vec<_>>(),
            digests
        );
    }

    #[test]
    fn records_put_straight_into_a_pack_are_stored_without_a_loose_file() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let records: Vec<RunRecord> = (0..5u8).map(|i| sample_record(RunKey([i; 32]))).collect();
        let (mut index, _) = Index::load(&store);
        let digests = index.put_packed(&store, &records).unwrap();
        assert!(records.iter().all(|r| !store.record_path(&r.key).exists()));
        for (index, fresh) in [(index, false), (settled_load(&store).0, true)] {
            for (r, d) in records.iter().zip(&digests) {
                assert_eq!(index.digest(&r.key), Some(*d), "reloaded: {fresh}");
                assert_eq!(index.read(&store, &r.key).unwrap().unwrap().0, *r);
            }
        }
        // More later: a second pack.
        let (mut index, _) = Index::load(&store);
        index
            .put_packed(&store, &[sample_record(RunKey([9; 32]))])
            .unwrap();
        assert!(pack::pack_path(&store, 2).exists());
        assert_eq!(settled_load(&store).0.len(), 6);
    }

    #[test]
    fn a_record_packed_by_another_process_is_still_read() {
        let (_dir, store, keys) = store_of(3);
        let (reader, _) = Index::load(&store);
        // Another process packs them (and removes the loose files) after the reader loaded.
        let (mut other, _) = Index::load(&store);
        other.pack(&store, 1).unwrap();
        assert!(!store.record_path(&keys[1]).exists());
        let (record, digest) = reader.read(&store, &keys[1]).unwrap().unwrap();
        assert_eq!(
            (record.key, Some(digest)),
            (keys[1], reader.digest(&keys[1]))
        );
        assert!(reader.read(&store, &RunKey([200; 32])).unwrap().is_none());
    }

    /// docs/cache.md, "The index's delta": a save after a few runs were learnt writes them in the
    /// delta file, not the index file; a load reads the two to the same index (no record read
    /// again); a delta of another index file, or a damaged one, is not used (the records say
    /// what it held: the damaged one is reported); a save of the whole index removes the delta.
    #[test]
    fn a_few_runs_learnt_are_saved_as_a_delta_of_the_index_file() {
        let (_dir, store, keys) = store_of(40);
        let index_bytes = fs::read(store.index_path()).unwrap();
        let delta = delta::delta_path(&store);
        assert!(!delta.exists(), "a first index is written whole");
        // A run stored, one changed, one removed.
        let mut changed = sample_record(keys[3]);
        changed.answers[0].value = Value::Int(333);
        let new = sample_record(RunKey([200; 32]));
        let (mut index, _) = Index::load(&store);
        store.put(&new).unwrap();
        index.insert(
            new.key,
            Summary::of(&new),
            store.get_verified(&new.key).unwrap().unwrap().1,
        );
        store.put(&changed).unwrap();
        fs::remove_file(store.record_path(&keys[5])).unwrap();
        age_shards(&store);
        index.save(&store).unwrap();
        assert_eq!(
            fs::read(store.index_path()).unwrap(),
            index_bytes,
            "the index file stays"
        );
        assert!(delta.exists());
        let expect = |index: &Index| {
            assert_eq!(index.get(&keys[3]).unwrap().answers[0].1, Value::Int(333));
            assert!(index.contains(&new.key) && !index.contains(&keys[5]));
            assert_eq!(index.len(), 40);
            let mut found = Vec::new();
            let asked = [keys[3], keys[5], new.key, keys[7]];
            index.lookup_each(asked.len(), |i| &asked[i], |_, f| found.push(f));
            let one_by_one: Vec<_> = asked.iter().map(|k| index.lookup(k)).collect();
            assert_eq!(found, one_by_one);
            assert_eq!(found[1], None);
            assert!(found
                .iter()
                .enumerate()
                .all(|(i, f)| i == 1 || f.unwrap().is_some()));
        };
        let (again, report) = Index::load(&store);
        assert_eq!(report.records_read + report.records_reverified, 0);
        assert!(report.index_problem.is_none() && !again.is_dirty());
        expect(&again);
        // A delta of another index file: not used; the records say the same.
        let delta_bytes = fs::read(&delta).unwrap();
        let mut other = delta_bytes.clone();
        other[8] ^= 1;
        fs::write(&delta, &other).unwrap();
        let (again, report) = Index::load(&store);
        assert!(report.index_problem.is_none() && again.is_dirty());
        assert!(
            report.records_read > 0,
            "what the delta held is learnt again"
        );
        expect(&again);
        // A damaged delta (its checksum fails, or cut short): reported, not used.
        for damaged in [
            {
                let mut d = delta_bytes.clone();
                let last = d.len() - 1;
                d[last] ^= 1;
                d
            },
            delta_bytes[..delta_bytes.len() - 3].to_vec(),
            delta_bytes[..20].to_vec(),
        ] {
            fs::write(&delta, &damaged).unwrap();
            let (again, report) = Index::load(&store);
            let problem = report.index_problem.expect("a damaged delta is said");
            assert!(problem.contains("index-delta.bin"), "{problem}");
            expect(&again);
        }
        // A save of the whole index (here: a packing) removes the delta.
        fs::write(&delta, &delta_bytes).unwrap();
        let (mut index, _) = Index::load(&store);
        expect(&index);
        index.pack(&store, 1).unwrap();
        assert!(!delta.exists());
        let (again, report) = Index::load(&store);
        assert!(report.index_problem.is_none());
        expect(&again);
    }

    /// docs/cache.md, "The remembered no-op": an index that is exactly its files, over stamps
    /// old enough to be trusted, lists what it rests on (the index file and its delta, `packs/`
    /// and each pack, the 256 shard folders, each loose record) with one digest of their
    /// stamps; any change to one of them changes the digest; an index that learnt something, or
    /// stamps too fresh, give none.
    #[test]
    fn the_footing_lists_what_the_index_rests_on_and_any_change_moves_it() {
        let (_dir, store, keys) = store_of(6);
        let (mut index, _) = Index::load(&store);
        assert_eq!(index.pack(&store, 3).unwrap().records, 6);
        store.put(&sample_record(RunKey([100; 32]))).unwrap();
        let (index, _) = settled_load(&store);
        assert!(
            index.footing(&store).is_none(),
            "stamps written a moment ago"
        );
        std::thread::sleep(std::time::Duration::from_millis(2100));
        let (index, _) = Index::load(&store);
        assert!(!index.is_dirty());
        let footing = index.footing(&store).expect("a settled store");
        let listed = |p: &str| footing.paths.iter().any(|x| x == p);
        assert!(listed("index.bin") && listed("packs") && listed("packs/00000001.jsonl"));
        assert!(listed("index-delta.bin") && listed("runs/00") && listed("runs/ff"));
        assert!(listed(&format!("runs/64/{}.json", RunKey([100; 32]).hex())));
        assert_eq!(footing.paths.len(), 1 + 1 + 1 + 1 + 256 + 1);
        assert_eq!(
            stamps_digest(store.root(), &footing.paths),
            (footing.digest, false)
        );
        assert_eq!(index.loose_records(), 1);
        // A loose record's attributes changed (its change time moves): another digest, and
        // the index, which sees it moved, is not its file any more until saved.
        let loose = store.record_path(&RunKey([100; 32]));
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&loose, fs::Permissions::from_mode(0o600)).unwrap();
        let (digest, racy) = stamps_digest(store.root(), &footing.paths);
        assert!(racy && digest != footing.digest);
        let (index, _) = Index::load(&store);
        assert!(index.footing(&store).is_none(), "a stamp moved just now");
        // A pack rewritten with the same bytes: another file, another digest.
        let pack = pack::pack_path(&store, 1);
        let bytes = fs::read(&pack).unwrap();
        fs::write(pack.with_extension("tmp"), &bytes).unwrap();
        fs::rename(pack.with_extension("tmp"), &pack).unwrap();
        assert_ne!(
            stamps_digest(store.root(), &footing.paths).0,
            footing.digest
        );
        // A record added to a shard folder.
        store.put(&sample_record(RunKey([101; 32]))).unwrap();
        let (index, _) = Index::load(&store);
        assert!(index.is_dirty() && index.footing(&store).is_none());
        assert_eq!(keys.len(), 6);
    }

    /// An index of many runs put straight into packs (as `import` and the synthetic contest
    /// write them), settled: its keys as given, among them keys sharing their first 8 bytes
    /// (a lookup scans those), and the first and last possible buckets.
    fn packed_index_of(keys: &[RunKey]) -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let records: Vec<RunRecord> = keys.iter().map(|k| sample_record(*k)).collect();
        let (mut index, _) = Index::load(&store);
        index.put_packed(&store, &records).unwrap();
        settled_load(&store);
        (dir, store)
    }

    /// Keys spread over the buckets, with look-alikes: the same first 8 bytes, the same bucket.
    fn spread_keys(n: u64) -> Vec<RunKey> {
        let mut keys: Vec<RunKey> = (0..n)
            .map(|i| RunKey(*blake3::hash(&i.to_le_bytes()).as_bytes()))
            .collect();
        let mut twin = keys[0];
        twin.0[31] ^= 1;
        let mut cousin = keys[1];
        cousin.0[7] ^= 1;
        keys.extend([twin, cousin, RunKey([0; 32]), RunKey([0xff; 32])]);
        keys
    }

    #[test]
    fn lookups_in_bulk_agree_with_one_at_a_time() {
        let stored = spread_keys(3000);
        let (_dir, store) = packed_index_of(&stored[..2000]);
        let (mut index, _) = Index::load(&store);
        // Stored keys, keys never stored (look-alikes among them), in no particular order.
        let mut asked: Vec<RunKey> = stored.iter().rev().copied().collect();
        for k in &stored[..50] {
            let mut near = *k;
            near.0[20] ^= 0x40;
            asked.push(near);
        }
        let check = |index: &Index, what: &str| {
            let mut bulk = Vec::new();
            index.lookup_each(
                asked.len(),
                |i| &asked[i],
                |i, found| {
                    assert_eq!(i, bulk.len(), "{what}: in order");
                    bulk.push(found);
                },
            );
            let one_by_one: Vec<Option<Option<Digest>>> =
                asked.iter().map(|k| index.lookup(k)).collect();
            assert_eq!(bulk, one_by_one, "{what}");
            for (k, found) in asked.iter().zip(&bulk) {
                assert_eq!(found.is_some(), index.contains(k), "{what}");
                assert_eq!(found.flatten(), index.digest(k), "{what}");
            }
            bulk
        };
        let quiet = check(&index, "a quiet index");
        let present = quiet.iter().filter(|f| f.is_some()).count();
        assert_eq!(present, 2000, "every stored key is found, no other");
        for (k, found) in stored[..2000].iter().zip(quiet.iter().rev().skip(50)) {
            let digest = index.read(&store, k).unwrap().unwrap().1;
            assert_eq!(*found, Some(Some(digest)), "the digest of its record");
        }
        // Runs recorded and records gone since the file was written: the other way of looking.
        let new = sample_record(stored[2500]);
        index.insert(new.key, Summary::of(&new), [9; 32]);
        index.remove(&stored[10]);
        let changed = check(&index, "an index that learnt something");
        assert_ne!(changed, quiet);
    }

    #[test]
    fn the_version_moves_with_every_change() {
        let keys = spread_keys(10);
        let (_dir, store) = packed_index_of(&keys[..5]);
        let (mut index, _) = Index::load(&store);
        let (other, _) = Index::load(&store);
        assert_ne!(index.version(), other.version(), "two loads, two versions");
        // What changes nothing the index says keeps its version: reading, saving, reconciling
        // with a store that did not change, a packing with nothing to pack, removing a run
        // that is not stored.
        let version = index.version();
        let _ = (index.lookup(&keys[1]), index.get(&keys[1]), index.len());
        index.save(&store).unwrap();
        index.reconcile(&store, &mut LoadReport::default());
        assert_eq!(index.pack(&store, 1).unwrap().records, 0);
        index.remove(&keys[6]);
        assert_eq!(index.version(), version, "nothing changed");
        let mut seen = vec![index.version(), other.version()];
        let mut moved = |index: &Index, what: &str| {
            assert!(!seen.contains(&index.version()), "{what}");
            seen.push(index.version());
        };
        let record = sample_record(keys[7]);
        index.insert(record.key, Summary::of(&record), [1; 32]);
        moved(&index, "a run recorded");
        index.remove(&keys[0]);
        moved(&index, "a run removed");
        index.put_packed(&store, &[sample_record(keys[8])]).unwrap();
        moved(&index, "runs put into a pack");
        store.put(&sample_record(keys[9])).unwrap();
        index.reconcile(&store, &mut LoadReport::default());
        moved(&index, "a record found by reconciling");
        assert!(index.pack(&store, 1).unwrap().records > 0);
        moved(&index, "records packed");
    }

    #[test]
    fn a_damaged_cut_or_other_index_file_is_rebuilt_never_used() {
        let keys = spread_keys(300);
        let (_dir, store) = packed_index_of(&keys);
        let (good, report) = Index::load(&store);
        assert!(report.index_problem.is_none());
        let digests: Vec<Option<Digest>> = keys.iter().map(|k| good.digest(k)).collect();
        let whole = fs::read(store.index_path()).unwrap();
        let n = keys.len();
        let keys_at =
            HEADER + SHARDS * 16 + u64::from_le_bytes(whole[80..88].try_into().unwrap()) as usize;
        let summaries_at = keys_at + n * (32 + 32 + PLACE);
        let rebuilt = |what: &str, expect: &str| {
            let (index, report) = Index::load(&store);
            let problem = report
                .index_problem
                .unwrap_or_else(|| panic!("{what}: used"));
            assert!(problem.contains(expect), "{what}: {problem}");
            assert!(index.is_dirty(), "{what}: to be written again");
            let now: Vec<Option<Digest>> = keys.iter().map(|k| index.digest(k)).collect();
            assert_eq!(now, digests, "{what}: rebuilt from the records");
            assert_eq!(index.get(&keys[3]), good.get(&keys[3]), "{what}");
        };
        // A byte flipped in each part: the checksums, a shard's time, the pack table, a key, a
        // digest, a place, a summary.
        for (what, at) in [
            ("the keys' checksum", 9),
            ("the summaries' checksum", 41),
            ("a shard's time", HEADER + 5),
            ("the pack table", HEADER + SHARDS * 16 + 1),
            ("a key", keys_at + 32 * 7 + 3),
            ("a digest", keys_at + 32 * n + 32 * 9),
            ("a place", keys_at + 64 * n + PLACE * 4 + 9),
            ("a summary", summaries_at + 10),
        ] {
            let mut bytes = whole.clone();
            bytes[at] ^= 0x10;
            fs::write(store.index_path(), &bytes).unwrap();
            rebuilt(what, "checksum mismatch");
        }
        for (what, len) in [
            ("cut in the header", 50),
            ("cut in the keys", keys_at + 100),
            ("cut in the places", summaries_at - 3),
        ] {
            fs::write(store.index_path(), &whole[..len]).unwrap();
            rebuilt(what, "");
        }
        fs::write(store.index_path(), &whole[..summaries_at + 5]).unwrap();
        rebuilt("cut in the summaries", "checksum mismatch");
        let mut old = whole.clone();
        old[..8].copy_from_slice(b"MCCBIDX3");
        fs::write(store.index_path(), &old).unwrap();
        rebuilt(
            "an index of an earlier format",
            "not an index of this mccbuild version",
        );
        // The header's counts changed: a file of another length than they say.
        let mut bytes = whole.clone();
        bytes[72] ^= 1;
        fs::write(store.index_path(), &bytes).unwrap();
        rebuilt("the count of keys", "");
        // Keys out of order under a checksum that holds (only a bug could write that): two
        // keys apart, then two keys with the same first 8 bytes.
        let key_at = |bytes: &[u8], i: usize| -> [u8; 32] {
            bytes[keys_at + 32 * i..keys_at + 32 * (i + 1)]
                .try_into()
                .unwrap()
        };
        let twins = (0..n - 1)
            .find(|&i| key_at(&whole, i)[..8] == key_at(&whole, i + 1)[..8])
            .expect("the twin keys are side by side");
        for (what, (a, b)) in [("keys apart", (3, 7)), ("twin keys", (twins, twins + 1))] {
            let mut bytes = whole.clone();
            let (ka, kb) = (key_at(&bytes, a), key_at(&bytes, b));
            bytes[keys_at + 32 * a..keys_at + 32 * (a + 1)].copy_from_slice(&kb);
            bytes[keys_at + 32 * b..keys_at + 32 * (b + 1)].copy_from_slice(&ka);
            let checksum = blake3::hash(&bytes[HEADER..summaries_at]);
            bytes[8..40].copy_from_slice(checksum.as_bytes());
            fs::write(store.index_path(), &bytes).unwrap();
            rebuilt(what, "unsorted keys");
        }
        fs::write(store.index_path(), &whole).unwrap();
        let (again, report) = Index::load(&store);
        assert!(
            report.index_problem.is_none(),
            "the file as written is used"
        );
        assert_eq!(again.digest(&keys[5]), digests[5]);
    }
}
