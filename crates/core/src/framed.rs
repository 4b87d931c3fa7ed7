//! The one frame of mccbuild's own cache files (the digest cache, the plan snapshot, the
//! store's index and its delta, the remembered scores, the results cache, the remembered
//! no-op): a file is a header naming its format, then its payload, and is written atomically.
//!
//! ```text
//! magic (8 bytes) | version (u32 LE) | binding length (u32 LE) | binding
//!                 | payload length (u64 LE) | blake3 of the payload (32 bytes) | payload
//! ```
//!
//! The *binding* says what the content was made from (the digest of the inputs it caches, the
//! checksums of the file a delta completes, or nothing): a file bound to something else is not
//! this cache's and is read as [`FrameError::OtherBinding`], never used. A file cut short, or
//! whose payload does not match its digest, is [`FrameError::Damaged`]. Every error leaves the
//! caller with one decision: compute again. The payload is the caller's bytes; [`Format::write_value`]
//! and [`Format::read_value`] encode serde values with postcard.

use std::fmt;
use std::fs;
use std::io;
use std::path::Path;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::fsio::{write_atomically, write_atomically_in_batch};

/// A cache file's format: its magic and its version. A change of what the payload means is a
/// new version.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Format {
    pub magic: [u8; 8],
    pub version: u32,
}

/// Why a framed file cannot be used. Each reads after "cannot be used: ".
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    #[error("it is not there")]
    Missing,
    #[error("it cannot be read: {0}")]
    Io(io::Error),
    #[error("it is not a file of this kind")]
    OtherFormat,
    #[error("it is of version {found}, this mccbuild reads version {expected}")]
    OtherVersion { found: u32, expected: u32 },
    #[error("it was made from other inputs")]
    OtherBinding,
    #[error("it is damaged (cut short, or its checksum does not match)")]
    Damaged,
    #[error("its content is malformed: {0}")]
    Malformed(String),
}

/// A framed file read whole: its bytes, of which [`Framed::payload`] is the checked payload.
pub struct Framed {
    bytes: Vec<u8>,
    start: usize,
}

impl Framed {
    pub fn payload(&self) -> &[u8] {
        &self.bytes[self.start..]
    }
}

impl fmt::Debug for Framed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Framed({} bytes of payload)",
            self.bytes.len() - self.start
        )
    }
}

const FIXED: usize = 8 + 4 + 4;
const TAIL: usize = 8 + 32;

impl Format {
    pub const fn new(magic: &[u8; 8], version: u32) -> Format {
        Format {
            magic: *magic,
            version,
        }
    }

    /// The header's length for a binding of `binding_len` bytes: where the payload starts.
    pub const fn header_len(binding_len: usize) -> usize {
        FIXED + binding_len + TAIL
    }

    /// The file's bytes: the header, then `payload`.
    pub fn encode(&self, binding: &[u8], payload: &[u8]) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(Self::header_len(binding.len()) + payload.len());
        bytes.extend_from_slice(&self.magic);
        bytes.extend_from_slice(&self.version.to_le_bytes());
        bytes.extend_from_slice(&(binding.len() as u32).to_le_bytes());
        bytes.extend_from_slice(binding);
        bytes.extend_from_slice(&(payload.len() as u64).to_le_bytes());
        bytes.extend_from_slice(blake3::hash(payload).as_bytes());
        bytes.extend_from_slice(payload);
        bytes
    }

    /// Where the payload of `bytes` starts, once the header is checked against this format and
    /// `binding`, and the payload against its length and digest.
    pub fn check(&self, bytes: &[u8], binding: &[u8]) -> Result<usize, FrameError> {
        let head = bytes.get(..FIXED).ok_or(FrameError::Damaged)?;
        if head[..8] != self.magic {
            return Err(FrameError::OtherFormat);
        }
        let found = u32::from_le_bytes([head[8], head[9], head[10], head[11]]);
        if found != self.version {
            return Err(FrameError::OtherVersion {
                found,
                expected: self.version,
            });
        }
        let binding_len = u32::from_le_bytes([head[12], head[13], head[14], head[15]]) as usize;
        let stored = bytes
            .get(FIXED..FIXED.saturating_add(binding_len))
            .ok_or(FrameError::Damaged)?;
        if stored != binding {
            return Err(FrameError::OtherBinding);
        }
        let at = FIXED + binding_len;
        let tail = bytes.get(at..at + TAIL).ok_or(FrameError::Damaged)?;
        let mut len = [0u8; 8];
        len.copy_from_slice(&tail[..8]);
        let len = usize::try_from(u64::from_le_bytes(len)).map_err(|_| FrameError::Damaged)?;
        let start = at + TAIL;
        let payload = bytes.get(start..).ok_or(FrameError::Damaged)?;
        if payload.len() != len || blake3::hash(payload).as_bytes()[..] != tail[8..] {
            return Err(FrameError::Damaged);
        }
        Ok(start)
    }

    /// The checked payload of `bytes` (see [`Format::check`]).
    pub fn decode<'a>(&self, bytes: &'a [u8], binding: &[u8]) -> Result<&'a [u8], FrameError> {
        let start = self.check(bytes, binding)?;
        Ok(&bytes[start..])
    }

    /// Reads `path` whole and checks it.
    pub fn read(&self, path: &Path, binding: &[u8]) -> Result<Framed, FrameError> {
        let bytes = fs::read(path).map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => FrameError::Missing,
            _ => FrameError::Io(e),
        })?;
        let start = self.check(&bytes, binding)?;
        Ok(Framed { bytes, start })
    }

    /// Writes `path` atomically and durably (`fsio::write_atomically`).
    pub fn write(&self, path: &Path, binding: &[u8], payload: &[u8]) -> io::Result<()> {
        write_atomically(path, &self.encode(binding, payload))
    }

    /// Writes `path` atomically, without syncing: for a file whose loss costs only a
    /// computation (a torn one fails its digest and is computed again).
    pub fn write_quickly(&self, path: &Path, binding: &[u8], payload: &[u8]) -> io::Result<()> {
        write_atomically_in_batch(path, &self.encode(binding, payload))
    }

    /// The file's bytes for `value`, encoded with postcard.
    pub fn encode_value<T: Serialize>(&self, binding: &[u8], value: &T) -> io::Result<Vec<u8>> {
        let payload = postcard::to_allocvec(value).map_err(io::Error::other)?;
        Ok(self.encode(binding, &payload))
    }

    /// Writes `value`, encoded with postcard, atomically and durably.
    pub fn write_value<T: Serialize>(
        &self,
        path: &Path,
        binding: &[u8],
        value: &T,
    ) -> io::Result<()> {
        write_atomically(path, &self.encode_value(binding, value)?)
    }

    /// Reads a value written by [`Format::write_value`].
    pub fn read_value<T: DeserializeOwned>(
        &self,
        path: &Path,
        binding: &[u8],
    ) -> Result<T, FrameError> {
        let framed = self.read(path, binding)?;
        postcard::from_bytes(framed.payload()).map_err(|e| FrameError::Malformed(e.to_string()))
    }

    /// Decodes a value from a file's bytes (see [`Format::encode_value`]).
    pub fn decode_value<T: DeserializeOwned>(
        &self,
        bytes: &[u8],
        binding: &[u8],
    ) -> Result<T, FrameError> {
        postcard::from_bytes(self.decode(bytes, binding)?)
            .map_err(|e| FrameError::Malformed(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const F: Format = Format::new(b"MCCBTEST", 3);

    #[test]
    fn a_value_round_trips_through_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.bin");
        let value = (7u32, "seven".to_string(), vec![1u64, 2, 3]);
        F.write_value(&path, b"inputs", &value).unwrap();
        let read: (u32, String, Vec<u64>) = F.read_value(&path, b"inputs").unwrap();
        assert_eq!(read, value);
    }

    #[test]
    fn every_kind_of_unusable_file_is_told_apart() {
        let bytes = F.encode(b"bound", b"payload");
        assert_eq!(F.decode(&bytes, b"bound").unwrap(), b"payload");
        assert!(matches!(
            F.decode(&bytes, b"other"),
            Err(FrameError::OtherBinding)
        ));
        let other = Format::new(b"MCCBTEST", 4);
        assert!(matches!(
            other.decode(&bytes, b"bound"),
            Err(FrameError::OtherVersion {
                found: 3,
                expected: 4
            })
        ));
        let stranger = Format::new(b"SOMEFILE", 3);
        assert!(matches!(
            stranger.decode(&bytes, b"bound"),
            Err(FrameError::OtherFormat)
        ));
        // Cut anywhere, or one byte flipped anywhere in the payload: damaged, never used.
        for cut in 0..bytes.len() {
            assert!(F.decode(&bytes[..cut], b"bound").is_err(), "cut at {cut}");
        }
        let payload_at = Format::header_len(5);
        for i in payload_at..bytes.len() {
            let mut flipped = bytes.clone();
            flipped[i] ^= 1;
            assert!(matches!(
                F.decode(&flipped, b"bound"),
                Err(FrameError::Damaged)
            ));
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(matches!(
            F.decode(&longer, b"bound"),
            Err(FrameError::Damaged)
        ));
    }

    #[test]
    fn a_missing_file_is_told_from_a_damaged_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("absent.bin");
        assert!(matches!(F.read(&path, b""), Err(FrameError::Missing)));
        fs::write(&path, b"MCCBTEST").unwrap();
        assert!(matches!(F.read(&path, b""), Err(FrameError::Damaged)));
        let malformed = F.encode(b"", &[0xff; 3]);
        fs::write(&path, malformed).unwrap();
        assert!(matches!(
            F.read_value::<String>(&path, b""),
            Err(FrameError::Malformed(_))
        ));
    }
}
