//! A record's file: the record's JSON ending with its content digest; writing it, reading it
//! back and checking it (format, digest, key), removing it.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use mccbuild_core::RunKey;
use mccbuild_core::digest::Digest;
use mccbuild_core::fsio::write_atomically;

use crate::{RECORD_FORMAT, RunRecord, Store};

/// Why a record cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {reason}")]
pub struct CorruptRecord {
    pub path: PathBuf,
    pub reason: String,
}

impl Store {
    /// Reads one record: `Ok(None)` if absent, an error if it is unreadable or not a record of
    /// this key.
    pub fn get(&self, key: &RunKey) -> Result<Option<RunRecord>, CorruptRecord> {
        Ok(self.get_verified(key)?.map(|(record, _)| record))
    }

    /// [`Store::get`], with the record's content digest.
    pub fn get_verified(&self, key: &RunKey) -> Result<Option<(RunRecord, Digest)>, CorruptRecord> {
        let path = self.record_path(key);
        let bytes = match fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(CorruptRecord {
                    path,
                    reason: format!("cannot read: {e}"),
                });
            }
        };
        parse_record_verified(&path, &bytes, key).map(Some)
    }

    /// Writes a record atomically: a reader sees the old state or the whole new record. Returns
    /// the record's content digest.
    pub fn put(&self, record: &RunRecord) -> io::Result<Digest> {
        let (bytes, digest) = encode_record(record)?;
        write_atomically(&self.record_path(&record.key), &bytes)?;
        Ok(digest)
    }

    /// Removes a record (to have its run redone).
    pub fn remove(&self, key: &RunKey) -> io::Result<()> {
        match fs::remove_file(self.record_path(key)) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }
}

/// The last field of every record file: `,"digest":"<64 hex>"}`.
const DIGEST_FIELD: &[u8] = b",\"digest\":\"";
const DIGEST_TAIL: usize = DIGEST_FIELD.len() + 64 + 2;

/// A record file's bytes and its content digest. The file is the record's JSON with one more
/// field at its end, `"digest"`: the blake3 hash of that same JSON without it (the bytes before
/// `,"digest"`, then `}`). So a record verifies itself: any change of its content (an edited
/// answer that stays valid JSON, a truncation) no longer matches its digest.
pub fn encode_record(record: &RunRecord) -> io::Result<(Vec<u8>, Digest)> {
    let mut bytes = serde_json::to_vec(record).map_err(io::Error::other)?;
    let digest = *blake3::hash(&bytes).as_bytes();
    bytes.pop(); // the closing `}`
    bytes.extend_from_slice(DIGEST_FIELD);
    bytes.extend_from_slice(mccbuild_core::digest::hex(&digest).as_bytes());
    bytes.extend_from_slice(b"\"}");
    Ok((bytes, digest))
}

/// Checks a record file's content digest; returns it.
pub fn verify_digest(bytes: &[u8]) -> Result<Digest, String> {
    let n = bytes.len();
    if n < DIGEST_TAIL + 1
        || &bytes[n - DIGEST_TAIL..n - DIGEST_TAIL + DIGEST_FIELD.len()] != DIGEST_FIELD
        || &bytes[n - 2..] != b"\"}"
    {
        return Err(format!(
            "its content digest is missing (the file ends without `\"digest\":\"...\"}}`): truncated or rewritten ({n} bytes)"
        ));
    }
    let written = std::str::from_utf8(&bytes[n - 66..n - 2])
        .ok()
        .and_then(|h| blake3::Hash::from_hex(h).ok())
        .map(|h| *h.as_bytes())
        .ok_or("its content digest is not 64 hex digits")?;
    let mut hasher = blake3::Hasher::new();
    hasher.update(&bytes[..n - DIGEST_TAIL]);
    hasher.update(b"}");
    let computed = hasher.finalize();
    // Byte for byte (lower-case hex, as written): no two files carry one digest.
    if computed.as_bytes() != &written || computed.to_hex().as_bytes() != &bytes[n - 66..n - 2] {
        return Err(
            "its content does not match its digest: the record was changed after it was written (an edited or damaged file)"
                .into(),
        );
    }
    Ok(written)
}

/// Decodes and checks a record file's content.
pub fn parse_record(path: &Path, bytes: &[u8], key: &RunKey) -> Result<RunRecord, CorruptRecord> {
    parse_record_verified(path, bytes, key).map(|(record, _)| record)
}

/// Decodes and checks a record file's content (format, content digest, key); returns the record
/// and its content digest.
pub fn parse_record_verified(
    path: &Path,
    bytes: &[u8],
    key: &RunKey,
) -> Result<(RunRecord, Digest), CorruptRecord> {
    let corrupt = |reason: String| CorruptRecord {
        path: path.to_path_buf(),
        reason,
    };
    #[derive(serde::Deserialize)]
    struct FormatOnly {
        format: u32,
    }
    let format = serde_json::from_slice::<FormatOnly>(bytes)
        .map_err(|e| corrupt(format!("not a run record: {e}")))?;
    if format.format != RECORD_FORMAT {
        return Err(corrupt(format!(
            "record format {} (this mccbuild reads {RECORD_FORMAT})",
            format.format
        )));
    }
    let digest = verify_digest(bytes).map_err(corrupt)?;
    let record: RunRecord =
        serde_json::from_slice(bytes).map_err(|e| corrupt(format!("damaged run record: {e}")))?;
    if record.key != *key {
        return Err(corrupt(format!(
            "holds the record of run {} instead",
            record.key
        )));
    }
    Ok((record, digest))
}
