//! Content digests: blake3, written as hex.

use std::io::{self, Read};

/// A blake3 digest.
pub type Digest = [u8; 32];

/// A digest in lower-case hex (64 digits).
pub fn hex(digest: &Digest) -> String {
    blake3::Hash::from_bytes(*digest).to_hex().to_string()
}

/// Hashes everything a reader yields.
pub fn hash_reader(mut reader: impl Read) -> io::Result<Digest> {
    let mut hasher = blake3::Hasher::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = reader.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(*hasher.finalize().as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_is_blake3s_hex() {
        let d = *blake3::hash(b"mccbuild").as_bytes();
        assert_eq!(hex(&d), blake3::hash(b"mccbuild").to_hex().as_str());
        assert_eq!(hash_reader(&b"mccbuild"[..]).unwrap(), d);
    }
}
