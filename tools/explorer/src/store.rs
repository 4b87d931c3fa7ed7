//! Compact storage of markings: a canonical byte encoding and a hash set of encoded
//! markings numbered in insertion order.
//!
//! Encoding (one tag byte, then):
//! - `TAG_BITMAP`: one bit per place, when every count is 0 or 1;
//! - `TAG_SPARSE`: for each non-zero place, LEB128 of the gap from the previous one, then of the count;
//! - `TAG_DENSE`: LEB128 of every count.
//!
//! The layout is chosen from the marking alone (see [`encode`]), so equal markings have equal bytes.

use crate::net::Tokens;

const TAG_BITMAP: u8 = 0;
const TAG_SPARSE: u8 = 1;
const TAG_DENSE: u8 = 2;

#[inline]
fn put_varint(out: &mut Vec<u8>, mut v: u32) {
    if v < 0x80 {
        out.push(v as u8);
        return;
    }
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

#[inline]
fn get_varint(b: &[u8], pos: &mut usize) -> u32 {
    let mut v: u32 = 0;
    let mut shift = 0;
    loop {
        let byte = b[*pos];
        *pos += 1;
        v |= ((byte & 0x7f) as u32) << shift;
        if byte < 0x80 {
            return v;
        }
        shift += 7;
    }
}

/// Facts gathered while encoding, so that callers need not walk the marking again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MarkingInfo {
    pub sum: u64,
    pub max: Tokens,
    /// Bit `p % 64` set when place p is marked: a cheap necessary condition for coverage.
    pub support: u64,
}

/// Encodes `m` into `out` (cleared first) and returns its token sum, maximum and support bits.
///
/// The layout is a function of the marking only (so equal markings get equal bytes): a bitmap
/// when every count is 0 or 1 and at least one place in 64 is marked, else the sparse form when
/// at most one place in 4 is marked, else the dense form.
pub fn encode(m: &[Tokens], out: &mut Vec<u8>) -> MarkingInfo {
    out.clear();
    // Separate simple reductions: each one vectorizes.
    let sum: u64 = m.iter().map(|&v| v as u64).sum();
    let max = m.iter().copied().max().unwrap_or(0);
    let nonzero = m.iter().filter(|&&v| v != 0).count();
    let mut support = 0u64;
    if max <= 1 && nonzero * 64 >= m.len() {
        out.push(TAG_BITMAP);
        for chunk in m.chunks(8) {
            let mut byte = 0u8;
            for (i, &v) in chunk.iter().enumerate() {
                byte |= (v as u8) << i;
            }
            out.push(byte);
        }
        // bit p % 64 of the support is bit p % 64 of some 8-byte word of the bitmap
        for word in out[1..].chunks(8) {
            let mut w = [0u8; 8];
            w[..word.len()].copy_from_slice(word);
            support |= u64::from_le_bytes(w);
        }
    } else if nonzero * 4 <= m.len() {
        out.push(TAG_SPARSE);
        let mut last = 0usize;
        let mut marked = [0u8; 64];
        for (c, chunk) in m.chunks(64).enumerate() {
            // branch-free collection of the marked positions of the chunk
            let mut n = 0;
            for (k, &v) in chunk.iter().enumerate() {
                marked[n] = k as u8;
                n += (v != 0) as usize;
            }
            for &k in &marked[..n] {
                let p = c * 64 + k as usize;
                put_varint(out, (p - last) as u32);
                put_varint(out, m[p]);
                support |= 1u64 << (p & 63);
                last = p;
            }
        }
    } else {
        out.push(TAG_DENSE);
        for (p, &v) in m.iter().enumerate() {
            put_varint(out, v);
            support |= ((v != 0) as u64) << (p & 63);
        }
    }
    MarkingInfo { sum, max, support }
}

/// Decodes bytes produced by [`encode`] into `m` (whose length is the number of places).
pub fn decode(b: &[u8], m: &mut [Tokens]) {
    match b[0] {
        TAG_BITMAP => {
            for (p, v) in m.iter_mut().enumerate() {
                *v = ((b[1 + p / 8] >> (p % 8)) & 1) as Tokens;
            }
        }
        TAG_SPARSE => {
            m.fill(0);
            let mut pos = 1;
            let mut p = 0usize;
            while pos < b.len() {
                p += get_varint(b, &mut pos) as usize;
                m[p] = get_varint(b, &mut pos);
            }
        }
        _ => {
            let mut pos = 1;
            for v in m.iter_mut() {
                *v = get_varint(b, &mut pos);
            }
        }
    }
}

#[inline]
fn hash_bytes(b: &[u8]) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut h: u64 = (b.len() as u64).wrapping_mul(K);
    let mut chunks = b.chunks_exact(8);
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        h = (h.rotate_left(5) ^ u64::from_le_bytes(w)).wrapping_mul(K);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut w = [0u8; 8];
        w[..rest.len()].copy_from_slice(rest);
        h = (h.rotate_left(5) ^ u64::from_le_bytes(w)).wrapping_mul(K);
    }
    // final avalanche (murmur3 fmix64)
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// A set of encoded markings, numbered 0, 1, 2, ... in insertion order.
pub struct StateStore {
    arena: Vec<u8>,
    /// `offsets[i]..offsets[i+1]` are the bytes of state i.
    offsets: Vec<u64>,
    /// Open addressing: 0 = empty, else (high 32 bits of hash) << 32 | (index + 1); the slot is
    /// taken from the same 32 bits (so the table holds at most 2^32 slots).
    table: Vec<u64>,
}

impl Default for StateStore {
    fn default() -> Self {
        Self::new()
    }
}

impl StateStore {
    pub fn new() -> Self {
        StateStore {
            arena: Vec::new(),
            offsets: vec![0],
            table: vec![0; 1 << 10],
        }
    }

    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes of state `i`.
    #[inline]
    pub fn get(&self, i: usize) -> &[u8] {
        &self.arena[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }

    /// Approximate heap bytes in use.
    pub fn heap_bytes(&self) -> usize {
        self.arena.capacity() + self.offsets.capacity() * 8 + self.table.capacity() * 8
    }

    /// Inserts `enc` if absent. Returns its index and whether it was new.
    /// Fails when the number of states would not fit a u32 index.
    pub fn insert(&mut self, enc: &[u8]) -> Result<(u32, bool), String> {
        let tag = hash_bytes(enc) >> 32;
        let mask = self.table.len() - 1;
        let mut slot = (tag as usize) & mask;
        loop {
            let e = self.table[slot];
            if e == 0 {
                break;
            }
            if e >> 32 == tag {
                let idx = (e & 0xffff_ffff) as usize - 1;
                if self.get(idx) == enc {
                    return Ok((idx as u32, false));
                }
            }
            slot = (slot + 1) & mask;
        }
        let idx = self.len();
        if idx >= u32::MAX as usize - 1 || idx + 1 >= self.table.len() {
            return Err("more than 2^32-2 states".into());
        }
        self.arena.extend_from_slice(enc);
        self.offsets.push(self.arena.len() as u64);
        self.table[slot] = (tag << 32) | (idx as u64 + 1);
        if (idx + 1) * 10 > self.table.len() * 7 {
            self.grow();
        }
        Ok((idx as u32, true))
    }

    /// Doubles the table. The slot of an entry derives from its stored hash bits, so the
    /// markings themselves are not read again.
    fn grow(&mut self) {
        if self.table.len() >= 1 << 32 {
            return; // slots come from 32 hash bits; the u32 state index runs out first anyway
        }
        let new_len = self.table.len() * 2;
        let mut table = vec![0u64; new_len];
        let mask = new_len - 1;
        for &e in &self.table {
            if e == 0 {
                continue;
            }
            let mut slot = ((e >> 32) as usize) & mask;
            while table[slot] != 0 {
                slot = (slot + 1) & mask;
            }
            table[slot] = e;
        }
        self.table = table;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(m: &[Tokens]) -> Vec<u8> {
        let mut enc = Vec::new();
        let info = encode(m, &mut enc);
        assert_eq!(info.sum, m.iter().map(|&v| v as u64).sum::<u64>());
        assert_eq!(info.max, m.iter().copied().max().unwrap_or(0));
        let support = m
            .iter()
            .enumerate()
            .fold(0u64, |acc, (p, &v)| acc | (((v != 0) as u64) << (p % 64)));
        assert_eq!(info.support, support);
        let mut back = vec![7; m.len()];
        decode(&enc, &mut back);
        assert_eq!(back, m);
        enc
    }

    #[test]
    fn encodings_roundtrip_and_pick_by_density() {
        let safe: Vec<Tokens> = (0..100).map(|i| (i % 3 == 0) as Tokens).collect();
        assert_eq!(roundtrip(&safe)[0], TAG_BITMAP);
        let mut sparse_safe = vec![0; 100];
        sparse_safe[42] = 1;
        assert_eq!(roundtrip(&sparse_safe)[0], TAG_SPARSE);
        let mut sparse = vec![0; 1000];
        sparse[3] = 2;
        sparse[900] = 70000;
        assert_eq!(roundtrip(&sparse)[0], TAG_SPARSE);
        let dense: Vec<Tokens> = (0..50).map(|i| i + 2).collect();
        assert_eq!(roundtrip(&dense)[0], TAG_DENSE);
        roundtrip(&[]);
        roundtrip(&[u32::MAX, 0, 1, u32::MAX - 1]);
        roundtrip(&[0, 0, 0]);
    }

    #[test]
    fn store_deduplicates_and_numbers_in_order() {
        let mut s = StateStore::new();
        let mut enc = Vec::new();
        for i in 0..5000u32 {
            encode(&[i % 7, i / 7 % 3, 5], &mut enc);
            let (idx, new) = s.insert(&enc).unwrap();
            if i < 21 {
                assert!(new);
                assert_eq!(idx, i);
            } else {
                assert!(!new);
                assert_eq!(idx, i % 21);
            }
        }
        assert_eq!(s.len(), 21);
        let mut m = vec![0; 3];
        decode(s.get(8), &mut m);
        assert_eq!(m, vec![1, 1, 5]);
        // growth keeps everything findable
        for i in 0..100_000u32 {
            encode(&[i, 1, 2], &mut enc);
            s.insert(&enc).unwrap();
        }
        for i in 0..100_000u32 {
            encode(&[i, 1, 2], &mut enc);
            assert!(!s.insert(&enc).unwrap().1);
        }
    }
}
