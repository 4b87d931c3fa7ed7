//! Packs: run records gathered into segment files, as git packs loose objects.
//!
//! A store of 300,000 loose record files costs one `fstatat` per record on every command that
//! checks that no record changed since it was verified (docs/cache.md, "Self-verifying
//! records"): ~0.75 CPU-seconds here. A pack holds thousands of records in one file, verified by
//! one stamp (size, change time, inode), so a command checks a few dozen files instead.
//!
//! `packs/<number>.jsonl` (the number in 8 decimal digits; the higher, the newer) holds records
//! exactly as their loose files hold them, one per line: the bytes of `encode_record`, each
//! ending with its own content digest, then `\n` (JSON strings escape newlines, so a record is
//! one line). A pack is written once, as a whole, under the store's execution lock (a
//! temporary file, synced, renamed into `packs/`, the folder synced) and never changed; the
//! index holds where each record lies (pack, byte offset, length). Damage anywhere in a pack
//! costs only the records whose lines it touches: each line verifies itself.
//!
//! Which record of a run counts: the loose one, then the one of the newest pack; a loose file
//! with the same content digest as the packed record is a leftover of packing (removed by the
//! next packing), not a newer record.

use std::fs;
use std::io::{self, BufWriter, Read, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use mccbuild_core::RunKey;
use mccbuild_core::digest::Digest;

use crate::{CorruptRecord, RunRecord, Store, Summary, parse_record_verified};

/// Loose records that make the next `mccbuild run` or `import` pack them (git's `gc.auto` is
/// 6,700 loose objects): 2,048 loose records cost ~5 ms of stat per command here. Tests and
/// organisers may set another count with `MCCBUILD_PACK_AFTER` (0: never pack).
pub const PACK_AFTER: usize = 2048;

/// The largest pack written (more records go into the next pack): re-verifying a pack whose
/// file changed reads it whole.
pub const PACK_MAX_BYTES: u64 = 256 << 20;

/// The loose records that trigger packing: [`PACK_AFTER`] or `MCCBUILD_PACK_AFTER`.
pub fn pack_after() -> Option<usize> {
    match std::env::var("MCCBUILD_PACK_AFTER")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
    {
        Some(0) => None,
        Some(n) => Some(n),
        None => Some(PACK_AFTER),
    }
}

pub fn packs_dir(store: &Store) -> PathBuf {
    store.root().join("packs")
}

pub fn pack_path(store: &Store, pack: u32) -> PathBuf {
    packs_dir(store).join(format!("{pack:08}.jsonl"))
}

/// The pack numbers in `packs/`, ascending (other names are ignored: temporary files of a
/// packing that was killed, anything a user put there).
pub fn list_packs(store: &Store) -> io::Result<Vec<u32>> {
    let mut packs = Vec::new();
    let listing = match fs::read_dir(packs_dir(store)) {
        Ok(listing) => listing,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(packs),
        Err(e) => return Err(e),
    };
    for entry in listing {
        let name = entry?.file_name();
        if let Some(n) = name
            .to_str()
            .and_then(|n| n.strip_suffix(".jsonl"))
            .filter(|n| n.len() == 8 && n.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|n| n.parse::<u32>().ok())
        {
            packs.push(n);
        }
    }
    packs.sort_unstable();
    Ok(packs)
}

/// One valid record line of a pack.
pub struct PackedRecord {
    pub key: RunKey,
    pub digest: Digest,
    pub offset: u64,
    pub len: u32,
    /// What scoring needs of it (not the whole record: a pack holds up to 256 MiB of them).
    pub summary: Summary,
}

/// Reads a whole pack: its valid records, and each damaged line as a [`CorruptRecord`] naming
/// the pack, the line, its byte offset and (when it can be read) the run.
pub fn scan_pack(
    path: &Path,
    bytes: &[u8],
) -> (Vec<PackedRecord>, Vec<(Option<RunKey>, CorruptRecord)>) {
    let mut valid = Vec::new();
    let mut damaged = Vec::new();
    let mut offset = 0usize;
    for (n, line) in bytes.split(|&b| b == b'\n').enumerate() {
        let start = offset;
        offset += line.len() + 1;
        if line.is_empty() && start >= bytes.len() {
            break; // after the last newline
        }
        let place = |reason: String| CorruptRecord {
            path: path.to_path_buf(),
            reason: format!("line {} (byte {start}): {reason}", n + 1),
        };
        let key = key_of(line);
        let Some(k) = key else {
            damaged.push((None, place("not a run record (no readable `key`)".into())));
            continue;
        };
        if start + line.len() == bytes.len() {
            // No newline after it: the pack was cut short (its writer always ends a line).
            damaged.push((
                Some(k),
                place(format!(
                    "the record of run {k} is cut short (no end of line)"
                )),
            ));
            continue;
        }
        match parse_record_verified(path, line, &k) {
            Ok((record, digest)) => valid.push(PackedRecord {
                key: k,
                digest,
                offset: start as u64,
                len: line.len() as u32,
                summary: Summary::of(&record),
            }),
            Err(c) => damaged.push((
                Some(k),
                place(format!("the record of run {k}: {}", c.reason)),
            )),
        }
    }
    (valid, damaged)
}

/// The run key a record line names, if it can be read: from the whole line, or (a line cut
/// short or damaged further on) from the `"key"` field near its start, where records have it.
fn key_of(line: &[u8]) -> Option<RunKey> {
    #[derive(serde::Deserialize)]
    struct KeyOnly {
        key: RunKey,
    }
    let head = &line[..line.len().min(256)];
    // Where every record has it (`encode_record` writes `format`, then `key`): no parse.
    if let Some(hex) = head.strip_prefix(b"{\"format\":2,\"key\":\"") {
        if let Some(k) = hex
            .get(..64)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(RunKey::from_hex)
        {
            return Some(k);
        }
    }
    if let Ok(k) = serde_json::from_slice::<KeyOnly>(line) {
        return Some(k.key);
    }
    let field = b"\"key\":\"";
    let at = head.windows(field.len()).position(|w| w == field)? + field.len();
    std::str::from_utf8(head.get(at..at + 64)?)
        .ok()
        .and_then(RunKey::from_hex)
}

/// Reads one packed record and checks its digest and key.
pub fn read_packed(
    store: &Store,
    pack: u32,
    offset: u64,
    len: u32,
    key: &RunKey,
) -> Result<(RunRecord, Digest), CorruptRecord> {
    let path = pack_path(store, pack);
    let cannot = |e: io::Error| CorruptRecord {
        path: path.clone(),
        reason: format!("cannot read the record of run {key} (byte {offset}): {e}"),
    };
    let file = fs::File::open(&path).map_err(cannot)?;
    let mut bytes = vec![0u8; len as usize];
    file.read_exact_at(&mut bytes, offset).map_err(cannot)?;
    parse_record_verified(&path, &bytes, key).map_err(|c| CorruptRecord {
        path: c.path,
        reason: format!("the record of run {key} (byte {offset}): {}", c.reason),
    })
}

/// Reads a whole file.
pub fn read_all(path: &Path) -> io::Result<(Vec<u8>, fs::Metadata)> {
    let mut file = fs::File::open(path)?;
    let meta = file.metadata()?;
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.read_to_end(&mut bytes)?;
    Ok((bytes, meta))
}

/// Writes one pack of `records` (each a record file's bytes) as `packs/<number>.jsonl`,
/// atomically and durably; returns each record's (offset, length) in it.
pub fn write_pack(store: &Store, pack: u32, records: &[&[u8]]) -> io::Result<Vec<(u64, u32)>> {
    let dir = packs_dir(store);
    fs::create_dir_all(&dir)?;
    let temp = tempfile::Builder::new()
        .prefix(&format!(".{pack:08}.jsonl."))
        .suffix(".tmp")
        .tempfile_in(&dir)?;
    let mut places = Vec::with_capacity(records.len());
    let mut offset = 0u64;
    {
        let mut out = BufWriter::with_capacity(1 << 20, temp.as_file());
        for bytes in records {
            if bytes.contains(&b'\n') {
                return Err(io::Error::other("a record holds a raw newline"));
            }
            out.write_all(bytes)?;
            out.write_all(b"\n")?;
            places.push((offset, bytes.len() as u32));
            offset += bytes.len() as u64 + 1;
        }
        out.flush()?;
    }
    temp.as_file().sync_all()?;
    let path = pack_path(store, pack);
    // A pack is never replaced: under the execution lock, its number is new.
    if path.exists() {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("{} exists already", path.display()),
        ));
    }
    temp.persist(&path).map_err(|e| e.error)?;
    mccbuild_core::fsio::sync_dir(&dir)?;
    Ok(places)
}

/// Removes what a killed packing left in `packs/` (its temporary files).
pub fn remove_temporaries(store: &Store) {
    if let Ok(listing) = fs::read_dir(packs_dir(store)) {
        for entry in listing.flatten() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name.starts_with('.') && name.ends_with(".tmp") {
                let _ = fs::remove_file(entry.path());
            }
        }
    }
}
