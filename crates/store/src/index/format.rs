//! The index file's binary format: writing it from an index, reading and checking it.
//!
//! ```text
//! frame (`mccbuild_core::framed`: magic "MCCBIDX5", version 6, no binding), whose payload is
//!   the head: blake3(keys section) | blake3(summaries section) | n: u64 | t: u64 |
//! keys section: 256 shard times (i128, MIN = unknown), the pack table (t bytes, postcard:
//!               the packs folder's time, each pack's number and stamp, the damaged lines
//!               found in packs), n sorted keys, n content digests,
//!               n places (32 bytes: tag 0 = loose, then its stamp: size u64, ctime ns i64,
//!               inode u64, all 0 = unknown; tag 1 = packed, then pack u64, offset u64, length u64) |
//! summaries section: n entry ends (u32, from the first entry's start), then the entries
//!                   (postcard, one per key, in key order)
//! ```
//!
//! The frame covers the head only, and the head holds the body's two digests: the body keeps
//! its own layout because the index is read by every command and its speed is measured
//! (docs/BENCHMARKS.md). A frame over the whole body would have it read whole into one buffer
//! and hashed in one pass before anything is decoded; this layout lets the keys section be
//! hashed and decoded in one pass through a small buffer while the summaries section is read and
//! hashed on a second thread, and lets each summary be decoded only when scoring first asks for
//! it (the entry ends). The two digests are also what names this file: a delta is bound to
//! them (`delta.rs`). A file of another format or version (the frame says which) is rebuilt
//! from the records with the same word as before: "not an index of this mccbuild version".

use std::collections::HashSet;
use std::fs;
use std::io;
use std::sync::OnceLock;

use mccbuild_core::framed::{Format, FrameError};
use mccbuild_core::stamp::FileStamp;
use mccbuild_core::{KeyMap, RunKey};

use super::file_keys::{BUCKETS, FileKeys, KeyEntry, bucket_of, prefix_of};
use super::packs::PackTable;
use super::place::PLACE;
use super::summary::Entry;
use super::{Index, Meta, Place, SHARDS, Summary, next_version};

/// The index file's frame: its magic, and its version (6: the head framed).
pub(super) const INDEX: Format = Format::new(b"MCCBIDX5", 6);
/// The head: the two sections' digests, the count of keys, the pack table's length.
const HEAD: usize = 32 + 32 + 8 + 8;
/// Where the head starts (after the frame's own header, whose binding is empty).
pub(super) const HEAD_AT: usize = Format::header_len(0);
/// The frame with the head: where the keys section starts.
pub(super) const HEADER: usize = HEAD_AT + HEAD;

impl Index {
    /// The whole index file: the keys and summaries known now (those of the file read, as
    /// bytes, less the removed, and those learnt since).
    pub(super) fn encode(&self) -> io::Result<Vec<u8>> {
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
        let mut head = Vec::with_capacity(HEAD);
        head.extend_from_slice(blake3::hash(&keys_section).as_bytes());
        head.extend_from_slice(blake3::hash(&body).as_bytes());
        head.extend_from_slice(&(all.len() as u64).to_le_bytes());
        head.extend_from_slice(&(table.len() as u64).to_le_bytes());
        let mut bytes = INDEX.encode(&[], &head);
        bytes.reserve_exact(keys_section.len() + body.len());
        bytes.extend_from_slice(&keys_section);
        bytes.extend_from_slice(&body);
        Ok(bytes)
    }
}

/// The bytes of entry `i` of a summaries section of `n` entries (`None`: the section is not
/// well formed there).
pub(super) fn entry_bytes(body: &[u8], n: usize, i: usize) -> Option<&[u8]> {
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

/// The end of the keys section, from the head (`None`: not well formed).
fn keys_end(head: &[u8]) -> Option<usize> {
    let n = u64::from_le_bytes(head.get(64..72)?.try_into().ok()?) as usize;
    let t = u64::from_le_bytes(head.get(72..80)?.try_into().ok()?) as usize;
    HEADER
        .checked_add(SHARDS * 16)?
        .checked_add(t)?
        .checked_add(n.checked_mul(32 + 32 + PLACE)?)
}

/// Why an index file was not used.
pub(super) enum Unusable {
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
pub(super) fn read_index(path: &std::path::Path) -> Result<Index, Unusable> {
    use std::io::Read;
    use std::os::unix::fs::FileExt;
    let mut file = fs::File::open(path)?;
    let meta = file.metadata()?;
    let size = meta.len();
    let damaged = |what: &str| Unusable::Damaged(what.to_string());
    const OTHER: &str = "not an index of this mccbuild version";
    let mut header = [0u8; HEADER];
    if size < HEADER as u64 {
        return Err(damaged(OTHER));
    }
    file.read_exact(&mut header)?;
    // The frame: this format and version, and the head as it was written.
    let head = match INDEX.decode(&header, &[]) {
        Ok(head) => head,
        Err(FrameError::Damaged) => return Err(damaged("checksum mismatch (damaged)")),
        Err(_) => return Err(damaged(OTHER)),
    };
    let word = |at: usize| u64::from_le_bytes(head[at..at + 8].try_into().unwrap_or([0; 8]));
    let (n, t) = (word(64), word(72));
    let keys_end = keys_end(head).ok_or_else(|| damaged("malformed"))?;
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
    let mut times_and_table = vec![0u8; SHARDS * 16 + t];
    file.read_exact(&mut times_and_table)?;
    hasher.update(&times_and_table);
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
    if hasher.finalize().as_bytes() != &head[..32] || body_digest.as_bytes() != &head[32..64] {
        return Err(damaged("checksum mismatch (damaged)"));
    }
    if !places_valid {
        return Err(damaged("malformed (a record's place)"));
    }
    if !sorted {
        return Err(damaged("malformed (unsorted keys)"));
    }
    let shard_mtimes = times_and_table[..SHARDS * 16]
        .chunks_exact(16)
        .map(|c| {
            let m = i128::from_le_bytes(c.try_into().unwrap_or([0; 16]));
            (m != i128::MIN).then_some(m)
        })
        .collect();
    let table: PackTable = postcard::from_bytes(&times_and_table[SHARDS * 16..])
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
        file_id: head[..64].try_into().ok(),
        delta_read: None,
        version: next_version(),
    })
}
