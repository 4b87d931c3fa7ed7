//! The run key: the content address of a run (how it is built: mccbuild-plan's `key` module).

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::digest::{Digest, hex};

/// The content address of a run (hex in JSON, raw bytes in binary encodings).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct RunKey(pub Digest);

/// A run key hashes as its first 8 bytes: a blake3 digest's bytes are uniform already, and
/// [`KeyMap`]'s hasher takes them as the hash (equal keys have equal first bytes).
impl std::hash::Hash for RunKey {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        let mut first = [0u8; 8];
        first.copy_from_slice(&self.0[..8]);
        state.write_u64(u64::from_le_bytes(first));
    }
}

impl Serialize for RunKey {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if serializer.is_human_readable() {
            serializer.serialize_str(&self.hex())
        } else {
            self.0.serialize(serializer)
        }
    }
}

impl<'de> Deserialize<'de> for RunKey {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        if deserializer.is_human_readable() {
            let text = String::deserialize(deserializer)?;
            RunKey::from_hex(&text)
                .ok_or_else(|| serde::de::Error::custom("not a run key (64 hex digits)"))
        } else {
            Digest::deserialize(deserializer).map(RunKey)
        }
    }
}

impl RunKey {
    pub fn hex(&self) -> String {
        hex(&self.0)
    }

    pub fn from_hex(text: &str) -> Option<RunKey> {
        blake3::Hash::from_hex(text)
            .ok()
            .map(|h| RunKey(*h.as_bytes()))
    }
}

impl fmt::Display for RunKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.hex())
    }
}

impl fmt::Debug for RunKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RunKey({})", &self.hex()[..16])
    }
}

/// A hash map keyed by run keys: the keys are already uniform, their first 8 bytes are the hash.
pub type KeyMap<V> = std::collections::HashMap<RunKey, V, std::hash::BuildHasherDefault<KeyHasher>>;

/// The hasher of [`KeyMap`].
#[derive(Default)]
pub struct KeyHasher(u64);

impl std::hash::Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write_u64(&mut self, word: u64) {
        // A run key's first 8 bytes (its `Hash`): the hash as they are.
        self.0 = self.0.rotate_left(5) ^ word;
    }

    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.0 = self.0.rotate_left(5) ^ u64::from_le_bytes(word);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_read_back_from_hex_and_json() {
        let key = RunKey([0xab; 32]);
        assert_eq!(RunKey::from_hex(&key.hex()), Some(key));
        assert_eq!(RunKey::from_hex("not hex"), None);
        let json = serde_json::to_string(&key).unwrap();
        assert_eq!(json, format!("\"{}\"", "ab".repeat(32)));
        assert_eq!(serde_json::from_str::<RunKey>(&json).unwrap(), key);
        let bytes = postcard::to_allocvec(&key).unwrap();
        assert_eq!(postcard::from_bytes::<RunKey>(&bytes).unwrap(), key);
    }
}
