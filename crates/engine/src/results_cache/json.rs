//! The `scores --json` output of a results key, cached in the store
//! (`scores-json/<key>.json`) as it was printed: a second `scores --json` copies the file.
//!
//! ```text
//! head: frame (`mccbuild_core::framed`: magic "MCCBSJSN", version 2), no binding,
//!       payload: the body's length (u64 LE) | blake3 of the body (32 bytes)
//! body: the JSON, as printed
//! ```
//!
//! Only the head is framed; the body stays the bare JSON after it, because the output is large
//! (57 MB for the 2024 replay) and both ways through the file are streamed: it is written beside
//! standard output while it is printed (the head, whose digest is known only at the end, is
//! written last, before the file is renamed into place), and read back through a small buffer,
//! checked, then copied (docs/BENCHMARKS.md: a hit checks the digest and copies the file through
//! a 1 MB buffer). Framing the body whole would hold it in memory twice. A file of another format
//! or version, cut short or damaged fails the head's frame or the body's digest and is not used,
//! without a word: the JSON is computed again.

use std::fs::File;
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use mccbuild_core::digest::{Digest, hex};
use mccbuild_core::framed::Format;
use mccbuild_plan::Plan;
use mccbuild_store::Store;
use tempfile::NamedTempFile;

use super::keep_most_recent;

/// The head's frame (1: the JSON followed by its digest, no head).
const HEAD: Format = Format::new(b"MCCBSJSN", 2);

/// The head's payload: the body's length and digest.
const HEAD_PAYLOAD: usize = 8 + 32;

/// The head's length: where the body starts.
const HEAD_LEN: usize = Format::header_len(0) + HEAD_PAYLOAD;

/// How many `scores --json` outputs are kept (each is the size of the edition's JSON: 57 MB for
/// the 2024 replay).
const JSON_KEPT: usize = 2;

/// The buffer a cached output is read through.
const BUF: usize = 1 << 20;

/// The key of a plan's `scores --json` output: its results key ([`super::results_key`]:
/// everything the scores depend on) and what the JSON shows beyond the scores, every value's id
/// (the values' count is in the results key, their names come from the formula files).
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
fn json_dir(store: &Store) -> PathBuf {
    store.root().join("scores-json")
}

/// The head of a body of `len` bytes whose blake3 digest is `digest`.
fn head(len: u64, digest: &blake3::Hash) -> Vec<u8> {
    let mut payload = [0u8; HEAD_PAYLOAD];
    payload[..8].copy_from_slice(&len.to_le_bytes());
    payload[8..].copy_from_slice(digest.as_bytes());
    HEAD.encode(b"", &payload)
}

/// The cached `scores --json` output of a results key ([`json_key`]), if a whole, undamaged one
/// is stored: its head holds, and the body is as long as the head says and has its digest.
/// Read twice through a small buffer (checked, then copied by [`CachedJson::copy_to`]) rather
/// than held whole: the file is never changed once in place (written aside, then renamed), and
/// the open file keeps its content even if another command replaces or removes it in between.
pub fn load_json(store: &Store, key: &Digest) -> Option<CachedJson> {
    let mut file = File::open(json_dir(store).join(format!("{}.json", hex(key)))).ok()?;
    let mut head = [0u8; HEAD_LEN];
    file.read_exact(&mut head).ok()?;
    let payload = HEAD.decode(&head, b"").ok()?;
    let (len, digest) = payload.split_at(8);
    let len = u64::from_le_bytes(len.try_into().ok()?);
    if file.metadata().ok()?.len() != HEAD_LEN as u64 + len {
        return None;
    }
    let mut hasher = blake3::Hasher::new();
    let mut buf = vec![0; BUF];
    let mut left = len;
    while left > 0 {
        let n = file.read(&mut buf[..left.min(BUF as u64) as usize]).ok()?;
        if n == 0 {
            return None;
        }
        hasher.update(&buf[..n]);
        left -= n as u64;
    }
    (hasher.finalize().as_bytes()[..] == *digest).then_some(CachedJson { file, len, buf })
}

/// A cached `scores --json` output whose digest holds ([`load_json`]).
pub struct CachedJson {
    file: File,
    len: u64,
    buf: Vec<u8>,
}

impl CachedJson {
    /// Writes the JSON (the body, without the head) to `out`.
    pub fn copy_to(mut self, out: &mut impl Write) -> io::Result<()> {
        self.file.seek(SeekFrom::Start(HEAD_LEN as u64))?;
        let mut left = self.len;
        while left > 0 {
            let n = self
                .file
                .read(&mut self.buf[..left.min(BUF as u64) as usize])?;
            if n == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            out.write_all(&self.buf[..n])?;
            left -= n as u64;
        }
        out.flush()
    }
}

/// A cache entry being written: the file (its head's place left empty), the body's digest and
/// length so far.
struct Entry {
    file: BufWriter<NamedTempFile>,
    hasher: blake3::Hasher,
    len: u64,
}

/// A `scores --json` output being written to standard output and, beside it, into the cache
/// under its results key ([`load_json`]). Whatever goes wrong with the cache's file only costs
/// the cache entry: the output is written all the same.
pub struct JsonTee<W: Write> {
    out: W,
    entry: Option<Entry>,
    path: PathBuf,
}

impl<W: Write> JsonTee<W> {
    pub fn new(out: W, store: &Store, key: &Digest) -> Self {
        let dir = json_dir(store);
        let entry = std::fs::create_dir_all(&dir)
            .and_then(|()| {
                tempfile::Builder::new()
                    .prefix(".scores-json.")
                    .suffix(".tmp")
                    .tempfile_in(&dir)
            })
            .and_then(|f| {
                let mut file = BufWriter::with_capacity(1 << 16, f);
                // The head's place, written at the end.
                file.write_all(&[0; HEAD_LEN])?;
                Ok(Entry {
                    file,
                    hasher: blake3::Hasher::new(),
                    len: 0,
                })
            })
            .ok();
        JsonTee {
            out,
            entry,
            path: dir.join(format!("{}.json", hex(key))),
        }
    }

    /// Flushes the output, then puts the cache entry in place (its head written, then renamed:
    /// a reader sees a whole file or none; not synced: a file torn by a crash fails its digest)
    /// and keeps the [`JSON_KEPT`] most recent entries.
    pub fn finish(mut self) -> io::Result<()> {
        self.out.flush()?;
        if let Some(entry) = self.entry.take() {
            let _ = Self::persist(entry, &self.path);
        }
        Ok(())
    }

    fn persist(entry: Entry, path: &Path) -> io::Result<()> {
        let mut file = entry.file.into_inner().map_err(|e| e.into_error())?;
        file.seek(SeekFrom::Start(0))?;
        file.write_all(&head(entry.len, &entry.hasher.finalize()))?;
        file.persist(path).map_err(|e| e.error)?;
        let dir = path.parent().unwrap_or(path);
        keep_most_recent(dir, JSON_KEPT, |name| name.ends_with(".json"))
    }
}

impl<W: Write> Write for JsonTee<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.out.write(buf)?;
        if let Some(entry) = &mut self.entry {
            if entry.file.write_all(&buf[..n]).is_ok() {
                entry.hasher.update(&buf[..n]);
                entry.len += n as u64;
            } else {
                self.entry = None;
            }
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}
