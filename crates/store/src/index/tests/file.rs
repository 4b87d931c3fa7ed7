//! The index file's format: every termination survives it; a damaged, cut or other file is
//! rebuilt from the records, never used.

use std::fs;

use mccbuild_core::Termination;
use mccbuild_core::digest::Digest;

use super::{packed_index_of, spread_keys};
use crate::index::format::{HEAD_AT, HEADER, INDEX};
use crate::index::place::PLACE;
use crate::index::summary::{termination_code, termination_from_code};
use crate::index::{Index, SHARDS};

#[test]
fn every_termination_survives_the_index() {
    for t in [
        Termination::Exit { code: 3 },
        Termination::Signal { signal: 9 },
        Termination::CpuLimit,
        Termination::MemoryLimit,
        Termination::WallLimit,
        Termination::OutputLimit,
        Termination::GuestPanic,
    ] {
        assert_eq!(termination_from_code(termination_code(t)), Some(t));
    }
}

#[test]
fn a_damaged_cut_or_other_index_file_is_rebuilt_never_used() {
    let keys = spread_keys(300);
    let (_dir, store) = packed_index_of(&keys);
    let (good, report) = Index::load(&store);
    assert!(report.index_problem.is_none());
    let digests: Vec<Option<Digest>> = keys.iter().map(|k| good.digest(k)).collect();
    let whole = fs::read(store.index_path()).unwrap();
    let n = keys.len();
    let keys_at = HEADER
        + SHARDS * 16
        + u64::from_le_bytes(whole[HEAD_AT + 72..HEADER].try_into().unwrap()) as usize;
    let summaries_at = keys_at + n * (32 + 32 + PLACE);
    let rebuilt = |what: &str, expect: &str| {
        let (index, report) = Index::load(&store);
        let problem = report
            .index_problem
            .unwrap_or_else(|| panic!("{what}: used"));
        assert!(problem.contains(expect), "{what}: {problem}");
        assert!(index.is_dirty(), "{what}: to be written again");
        let now: Vec<Option<Digest>> = keys.iter().map(|k| index.digest(k)).collect();
        assert_eq!(now, digests, "{what}: rebuilt from the records");
        assert_eq!(index.get(&keys[3]), good.get(&keys[3]), "{what}");
    };
    // A byte flipped in each part: the frame's digest of the head, the checksums, a shard's
    // time, the pack table, a key, a digest, a place, a summary.
    for (what, at) in [
        ("the head's digest", HEAD_AT - 2),
        ("the keys' checksum", HEAD_AT + 1),
        ("the summaries' checksum", HEAD_AT + 33),
        ("a shard's time", HEADER + 5),
        ("the pack table", HEADER + SHARDS * 16 + 1),
        ("a key", keys_at + 32 * 7 + 3),
        ("a digest", keys_at + 32 * n + 32 * 9),
        ("a place", keys_at + 64 * n + PLACE * 4 + 9),
        ("a summary", summaries_at + 10),
    ] {
        let mut bytes = whole.clone();
        bytes[at] ^= 0x10;
        fs::write(store.index_path(), &bytes).unwrap();
        rebuilt(what, "checksum mismatch");
    }
    for (what, len) in [
        ("cut in the header", 50),
        ("cut in the keys", keys_at + 100),
        ("cut in the places", summaries_at - 3),
    ] {
        fs::write(store.index_path(), &whole[..len]).unwrap();
        rebuilt(what, "");
    }
    fs::write(store.index_path(), &whole[..summaries_at + 5]).unwrap();
    rebuilt("cut in the summaries", "checksum mismatch");
    let mut old = whole.clone();
    old[..8].copy_from_slice(b"MCCBIDX3");
    fs::write(store.index_path(), &old).unwrap();
    rebuilt(
        "an index of an earlier format",
        "not an index of this mccbuild version",
    );
    let mut old = whole.clone();
    old[8..12].copy_from_slice(&5u32.to_le_bytes());
    fs::write(store.index_path(), &old).unwrap();
    rebuilt(
        "an index of an earlier version",
        "not an index of this mccbuild version",
    );
    // The head's counts changed: a file of another length than they say.
    let mut bytes = whole.clone();
    bytes[HEAD_AT + 64] ^= 1;
    fs::write(store.index_path(), &bytes).unwrap();
    rebuilt("the count of keys", "");
    // Keys out of order under checksums that hold (only a bug could write that): two keys
    // apart, then two keys with the same first 8 bytes.
    let key_at = |bytes: &[u8], i: usize| -> [u8; 32] {
        bytes[keys_at + 32 * i..keys_at + 32 * (i + 1)]
            .try_into()
            .unwrap()
    };
    let twins = (0..n - 1)
        .find(|&i| key_at(&whole, i)[..8] == key_at(&whole, i + 1)[..8])
        .expect("the twin keys are side by side");
    for (what, (a, b)) in [("keys apart", (3, 7)), ("twin keys", (twins, twins + 1))] {
        let mut bytes = whole.clone();
        let (ka, kb) = (key_at(&bytes, a), key_at(&bytes, b));
        bytes[keys_at + 32 * a..keys_at + 32 * (a + 1)].copy_from_slice(&kb);
        bytes[keys_at + 32 * b..keys_at + 32 * (b + 1)].copy_from_slice(&ka);
        let checksum = blake3::hash(&bytes[HEADER..summaries_at]);
        let mut head = bytes[HEAD_AT..HEADER].to_vec();
        head[..32].copy_from_slice(checksum.as_bytes());
        bytes[..HEADER].copy_from_slice(&INDEX.encode(&[], &head));
        fs::write(store.index_path(), &bytes).unwrap();
        rebuilt(what, "unsorted keys");
    }
    fs::write(store.index_path(), &whole).unwrap();
    let (again, report) = Index::load(&store);
    assert!(
        report.index_problem.is_none(),
        "the file as written is used"
    );
    assert_eq!(again.digest(&keys[5]), digests[5]);
}
