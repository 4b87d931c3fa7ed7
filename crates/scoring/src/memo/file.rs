//! The memo's file.
//!
//! ```text
//! frame (`mccbuild_core::framed`: magic "MCCBSCR1", version MEMO_SCHEMA (2)), bound to the
//!   global digest (`global_digest`), with an empty payload |
//! blocks, each: payload length (u64 LE) | blake3 of the payload (32 bytes) | payload
//! payload: entries, each its digest (32 bytes) | its length (u32 LE) | its bytes (`encoding`)
//! ```
//!
//! The frame covers the head only; the blocks after it keep their own layout, because a
//! command that computed entries appends them as one block (one write of a few kilobytes, not
//! the whole file of every model examination written again), and each block is checked on its
//! own, so that an append torn by a crash loses only its entries. A frame over the whole file
//! would make every change rewrite it. The entries are decoded on every core once their blocks
//! are checked (docs/BENCHMARKS.md: the remembered scores read in 19 ms at 299,988 runs).
//!
//! The frame's binding is the global digest: a memo of another schema, binary, rules or tool
//! list is not read past its head. Whatever cannot be used (missing, of another format or
//! version, of other inputs, damaged) is read as an empty memo, without a word: everything is
//! computed again.

use std::io;
use std::path::Path;
use std::sync::Arc;

use mccbuild_core::digest::Digest;
use mccbuild_core::framed::Format;
use mccbuild_core::timing::phase;

use super::encoding::{Reader, Writer};
use super::{FileShape, MEMO_SCHEMA, Memo, Remembered};

/// The memo file's frame: its magic, and the schema as its version (2: the head framed).
const MEMO: Format = Format::new(b"MCCBSCR1", MEMO_SCHEMA);

impl Memo {
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

/// The framed head: where the first block starts.
const HEADER: usize = Format::header_len(32);

/// The head: the frame bound to `global`, its payload empty (the blocks follow it).
fn header(global: &Digest) -> Vec<u8> {
    MEMO.encode(global, &[])
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
    // This format and schema, made for `global`, its head whole (its empty payload checked).
    MEMO.check(bytes.get(..HEADER)?, global).ok()?;
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
