//! The index file's keys, laid out in memory for lookups: a bucket table by the keys' first two
//! bytes, the keys' first 8 bytes in an array of their own, each key beside its record's
//! content digest (one cache line); and lookups of many keys at once, their memory fetched a
//! few lookups ahead.

use mccbuild_core::RunKey;
use mccbuild_core::digest::Digest;

pub(super) const BUCKETS: usize = 1 << 16;

pub(super) fn bucket_of(key: &RunKey) -> usize {
    (key.0[0] as usize) << 8 | key.0[1] as usize
}

/// A key's first 8 bytes, as a number that orders keys as their bytes do.
pub(super) fn prefix_of(key: &RunKey) -> u64 {
    u64::from_be_bytes(key.0[..8].try_into().unwrap_or([0; 8]))
}

/// A key of the index file beside its record's content digest: one cache line, so that a
/// lookup that finds the key has the digest too.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
pub(super) struct KeyEntry {
    pub(super) key: RunKey,
    pub(super) digest: Digest,
}

/// The index file's keys (sorted) with their records' digests, laid out for lookups: a bucket
/// table by the keys' first two bytes, the keys' first 8 bytes in an array of their own (a
/// few kilobytes a lookup scans in the cache), then the one line of the entry found.
#[derive(Default)]
pub(super) struct FileKeys {
    pub(super) entries: Vec<KeyEntry>,
    pub(super) prefixes: Vec<u64>,
    /// `entries[buckets[b]..buckets[b + 1]]` are the keys whose first two bytes are `b`.
    pub(super) buckets: Vec<u32>,
}

impl FileKeys {
    pub(super) fn empty() -> FileKeys {
        FileKeys {
            buckets: vec![0; BUCKETS + 1],
            ..FileKeys::default()
        }
    }

    pub(super) fn len(&self) -> usize {
        self.entries.len()
    }

    pub(super) fn key(&self, i: usize) -> &RunKey {
        &self.entries[i].key
    }

    pub(super) fn digest(&self, i: usize) -> Digest {
        self.entries[i].digest
    }

    pub(super) fn keys(&self) -> impl Iterator<Item = &RunKey> {
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
    pub(super) fn position(&self, key: &RunKey) -> Option<usize> {
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
    pub(super) fn positions<'k>(
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
/// program sees (whatever `p` is). The crate's one `unsafe` block: the intrinsic needs the `sse`
/// target feature, which every x86_64 processor has but which only an `unsafe` call can assume,
/// and stable Rust has no safe prefetch.
#[inline(always)]
#[allow(unsafe_code)]
fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch neither reads memory the program observes nor faults, for any address.
    unsafe {
        std::arch::x86_64::_mm_prefetch(p as *const i8, std::arch::x86_64::_MM_HINT_T0)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
