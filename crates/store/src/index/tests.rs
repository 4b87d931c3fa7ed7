//! The index's tests: loose records found, changed and damaged, lookups, the version, the delta
//! and the footing; the packs' in `tests/packs.rs`, the file format's in `tests/file.rs`.

use std::fs;
use std::io;

use mccbuild_core::digest::Digest;
use mccbuild_core::{RunKey, Value};

use super::{Index, LoadReport, Summary, delta, stamps_digest};
use crate::pack;
use crate::tests::sample_record;
use crate::{RunRecord, Store};

mod file;
mod packs;

/// Waits until every folder's stamp is old enough for the index to trust it
/// (`FileStamp::is_racy`: its change time cannot be set back, so only time makes it old).
fn settle() {
    std::thread::sleep(std::time::Duration::from_millis(2100));
}

#[test]
fn index_finds_records_written_by_anyone() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let (a, b) = (RunKey([1; 32]), RunKey([2; 32]));
    store.put(&sample_record(a)).unwrap();
    let (mut index, report) = Index::load(&store);
    assert_eq!(report.records_read, 1);
    assert!(index.contains(&a));
    settle();
    index.save(&store).unwrap();
    // Another process adds a record: the shard's time changes, the index picks it up.
    store.put(&sample_record(b)).unwrap();
    let (index, report) = Index::load(&store);
    assert_eq!(report.records_read, 1, "only the new record is read");
    assert!(index.contains(&a) && index.contains(&b));
    assert_eq!(index.get(&b).unwrap().answers[0], (0, Value::Int(6)));
}

#[test]
fn a_quiet_store_reads_no_record() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    for i in 0..20u8 {
        store.put(&sample_record(RunKey([i; 32]))).unwrap();
    }
    let (mut index, _) = Index::load(&store);
    settle();
    index.save(&store).unwrap();
    let (index, report) = Index::load(&store);
    assert_eq!(report.records_read, 0);
    assert_eq!(index.len(), 20);
}

#[test]
fn removed_records_leave_the_index_and_damage_is_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let (a, b) = (RunKey([1; 32]), RunKey([2; 32]));
    store.put(&sample_record(a)).unwrap();
    store.put(&sample_record(b)).unwrap();
    let (mut index, _) = Index::load(&store);
    settle();
    index.save(&store).unwrap();
    store.remove(&a).unwrap();
    let (index, _) = Index::load(&store);
    assert!(!index.contains(&a) && index.contains(&b));
    // Flip a byte of the index: it is rebuilt from the records, with a word about it.
    let mut bytes = fs::read(store.index_path()).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    fs::write(store.index_path(), bytes).unwrap();
    let (index, report) = Index::load(&store);
    assert!(report.index_problem.unwrap().contains("checksum"));
    assert!(index.contains(&b));
}

#[test]
fn records_damaged_after_they_were_indexed_are_noticed() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let (a, b, c) = (RunKey([1; 32]), RunKey([2; 32]), RunKey([3; 32]));
    for k in [a, b, c] {
        store.put(&sample_record(k)).unwrap();
    }
    let (mut index, _) = Index::load(&store);
    settle();
    index.save(&store).unwrap();
    let digest_b = index.digest(&b).unwrap();
    // In place, the shard folders' times unchanged: a truncation, a valid-JSON edit.
    let truncate = fs::OpenOptions::new()
        .write(true)
        .open(store.record_path(&a))
        .unwrap();
    truncate.set_len(100).unwrap();
    let text = fs::read_to_string(store.record_path(&b)).unwrap();
    let edited = text.replacen("\"value\":\"6\"", "\"value\":\"5\"", 1);
    fs::OpenOptions::new()
        .write(true)
        .open(store.record_path(&b))
        .and_then(|mut f| io::Write::write_all(&mut f, edited.as_bytes()))
        .unwrap();
    let (index, report) = Index::load(&store);
    assert_eq!(report.records_read, 0);
    let mut damaged: Vec<_> = report.corrupt.iter().map(|c| c.path.clone()).collect();
    damaged.sort();
    assert_eq!(damaged, vec![store.record_path(&a), store.record_path(&b)]);
    assert!(!index.contains(&a) && !index.contains(&b) && index.contains(&c));
    assert_eq!(index.get(&b), None);
    assert_eq!(index.digest(&b), None);
    // Still reported next time (the index does not forget a damaged record).
    let (_, report) = Index::load(&store);
    assert_eq!(report.corrupt.len(), 2);
    // Repaired by a new record of the same run: it is found again, with its digest.
    assert_eq!(store.put(&sample_record(b)).unwrap(), digest_b);
    let (index, report) = Index::load(&store);
    assert_eq!(report.corrupt.len(), 1);
    assert_eq!(index.digest(&b), Some(digest_b));
}

#[test]
fn a_touched_record_is_checked_once_and_a_replaced_one_read_again() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let a = RunKey([1; 32]);
    store.put(&sample_record(a)).unwrap();
    let (mut index, _) = Index::load(&store);
    settle();
    index.save(&store).unwrap();
    // chmod: another change time, same bytes.
    let path = store.record_path(&a);
    let mut perms = fs::metadata(&path).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o600);
    fs::set_permissions(&path, perms).unwrap();
    let (mut index, report) = Index::load(&store);
    assert!(report.corrupt.is_empty() && report.records_reverified == 0);
    index.save(&store).unwrap();
    let (_, report) = Index::load(&store);
    assert!(report.changed.is_empty(), "the new stamp was saved");
    // Another valid record of the run (redone with another outcome): its summary is used.
    let mut other = sample_record(a);
    other.answers[0].value = Value::Int(9);
    store.put(&other).unwrap();
    settle();
    let (index, report) = Index::load(&store);
    assert!(report.corrupt.is_empty());
    assert_eq!(index.get(&a).unwrap().answers[0], (0, Value::Int(9)));
}

#[test]
fn corrupt_records_are_reported_not_indexed() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let a = RunKey([1; 32]);
    let path = store.record_path(&a);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(&path, b"\x00\x01 not json").unwrap();
    let (index, report) = Index::load(&store);
    assert!(!index.contains(&a));
    assert_eq!(report.corrupt.len(), 1);
    assert_eq!(report.corrupt[0].path, path);
}

/// A store of `n` loose records, indexed and saved, its folders' times settled.
fn store_of(n: u8) -> (tempfile::TempDir, Store, Vec<RunKey>) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let keys: Vec<RunKey> = (0..n).map(|i| RunKey([i; 32])).collect();
    for (i, k) in keys.iter().enumerate() {
        let mut record = sample_record(*k);
        record.answers[0].value = Value::Int(i as u64);
        store.put(&record).unwrap();
    }
    let (mut index, _) = Index::load(&store);
    settle();
    index.save(&store).unwrap();
    (dir, store, keys)
}

/// [`store_of`], its records packed, the store's folders' times settled.
fn packed_store_of(n: u8) -> (tempfile::TempDir, Store, Vec<RunKey>) {
    let (dir, store, keys) = store_of(n);
    let (mut index, _) = Index::load(&store);
    assert_eq!(index.pack(&store, 1).unwrap().records, n as usize);
    settled_load(&store);
    (dir, store, keys)
}

/// Loads, saves and loads again with every folder's time settled: what the next command sees.
fn settled_load(store: &Store) -> (Index, LoadReport) {
    let (mut index, _) = Index::load(store);
    settle();
    index.save(store).unwrap();
    Index::load(store)
}

/// docs/cache.md, "The index's delta": a save after a few runs were learnt writes them in the
/// delta file, not the index file; a load reads the two to the same index (no record read
/// again); a delta of another index file, or a damaged one, is not used (the records say
/// what it held: the damaged one is reported); a save of the whole index removes the delta.
#[test]
fn a_few_runs_learnt_are_saved_as_a_delta_of_the_index_file() {
    let (_dir, store, keys) = store_of(40);
    let index_bytes = fs::read(store.index_path()).unwrap();
    let delta = delta::delta_path(&store);
    assert!(!delta.exists(), "a first index is written whole");
    // A run stored, one changed, one removed.
    let mut changed = sample_record(keys[3]);
    changed.answers[0].value = Value::Int(333);
    let new = sample_record(RunKey([200; 32]));
    let (mut index, _) = Index::load(&store);
    store.put(&new).unwrap();
    index.insert(
        new.key,
        Summary::of(&new),
        store.get_verified(&new.key).unwrap().unwrap().1,
    );
    store.put(&changed).unwrap();
    fs::remove_file(store.record_path(&keys[5])).unwrap();
    settle();
    index.save(&store).unwrap();
    assert_eq!(
        fs::read(store.index_path()).unwrap(),
        index_bytes,
        "the index file stays"
    );
    assert!(delta.exists());
    let expect = |index: &Index| {
        assert_eq!(index.get(&keys[3]).unwrap().answers[0].1, Value::Int(333));
        assert!(index.contains(&new.key) && !index.contains(&keys[5]));
        assert_eq!(index.len(), 40);
        let mut found = Vec::new();
        let asked = [keys[3], keys[5], new.key, keys[7]];
        index.lookup_each(asked.len(), |i| &asked[i], |_, f| found.push(f));
        let one_by_one: Vec<_> = asked.iter().map(|k| index.lookup(k)).collect();
        assert_eq!(found, one_by_one);
        assert_eq!(found[1], None);
        assert!(
            found
                .iter()
                .enumerate()
                .all(|(i, f)| i == 1 || f.unwrap().is_some())
        );
    };
    let (again, report) = Index::load(&store);
    assert_eq!(report.records_read + report.records_reverified, 0);
    assert!(report.index_problem.is_none() && !again.is_dirty());
    expect(&again);
    // A delta of another index file: not used; the records say the same.
    let delta_bytes = fs::read(&delta).unwrap();
    let mut other = delta_bytes.clone();
    other[16] ^= 1; // A byte of its binding: the checksums of the index file it completes.
    fs::write(&delta, &other).unwrap();
    let (again, report) = Index::load(&store);
    assert!(report.index_problem.is_none() && again.is_dirty());
    assert!(
        report.records_read > 0,
        "what the delta held is learnt again"
    );
    expect(&again);
    // A damaged delta (its checksum fails, or cut short): reported, not used.
    for damaged in [
        {
            let mut d = delta_bytes.clone();
            let last = d.len() - 1;
            d[last] ^= 1;
            d
        },
        delta_bytes[..delta_bytes.len() - 3].to_vec(),
        delta_bytes[..20].to_vec(),
    ] {
        fs::write(&delta, &damaged).unwrap();
        let (again, report) = Index::load(&store);
        let problem = report.index_problem.expect("a damaged delta is said");
        assert!(problem.contains("index-delta.bin"), "{problem}");
        expect(&again);
    }
    // A save of the whole index (here: a packing) removes the delta.
    fs::write(&delta, &delta_bytes).unwrap();
    let (mut index, _) = Index::load(&store);
    expect(&index);
    index.pack(&store, 1).unwrap();
    assert!(!delta.exists());
    let (again, report) = Index::load(&store);
    assert!(report.index_problem.is_none());
    expect(&again);
}

/// docs/cache.md, "The remembered no-op": an index that is exactly its files, over stamps
/// old enough to be trusted, lists what it rests on (the index file and its delta, `packs/`
/// and each pack, the 256 shard folders, each loose record) with one digest of their
/// stamps; any change to one of them changes the digest; an index that learnt something, or
/// stamps too fresh, give none.
#[test]
fn the_footing_lists_what_the_index_rests_on_and_any_change_moves_it() {
    let (_dir, store, keys) = store_of(6);
    let (mut index, _) = Index::load(&store);
    assert_eq!(index.pack(&store, 3).unwrap().records, 6);
    store.put(&sample_record(RunKey([100; 32]))).unwrap();
    let (index, _) = settled_load(&store);
    assert!(
        index.footing(&store).is_none(),
        "stamps written a moment ago"
    );
    std::thread::sleep(std::time::Duration::from_millis(2100));
    let (index, _) = Index::load(&store);
    assert!(!index.is_dirty());
    let footing = index.footing(&store).expect("a settled store");
    let listed = |p: &str| footing.paths.iter().any(|x| x == p);
    assert!(listed("index.bin") && listed("packs") && listed("packs/00000001.jsonl"));
    assert!(listed("index-delta.bin") && listed("runs/00") && listed("runs/ff"));
    assert!(listed(&format!("runs/64/{}.json", RunKey([100; 32]).hex())));
    assert_eq!(footing.paths.len(), 1 + 1 + 1 + 1 + 256 + 1);
    assert_eq!(
        stamps_digest(store.root(), &footing.paths),
        (footing.digest, false)
    );
    assert_eq!(index.loose_records(), 1);
    // A loose record's attributes changed (its change time moves): another digest, and
    // the index, which sees it moved, is not its file any more until saved.
    let loose = store.record_path(&RunKey([100; 32]));
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&loose, fs::Permissions::from_mode(0o600)).unwrap();
    let (digest, racy) = stamps_digest(store.root(), &footing.paths);
    assert!(racy && digest != footing.digest);
    let (index, _) = Index::load(&store);
    assert!(index.footing(&store).is_none(), "a stamp moved just now");
    // A pack rewritten with the same bytes: another file, another digest.
    let pack = pack::pack_path(&store, 1);
    let bytes = fs::read(&pack).unwrap();
    fs::write(pack.with_extension("tmp"), &bytes).unwrap();
    fs::rename(pack.with_extension("tmp"), &pack).unwrap();
    assert_ne!(
        stamps_digest(store.root(), &footing.paths).0,
        footing.digest
    );
    // A record added to a shard folder.
    store.put(&sample_record(RunKey([101; 32]))).unwrap();
    let (index, _) = Index::load(&store);
    assert!(index.is_dirty() && index.footing(&store).is_none());
    assert_eq!(keys.len(), 6);
}

/// An index of many runs put straight into packs (as `import` and the synthetic contest
/// write them), settled: its keys as given, among them keys sharing their first 8 bytes
/// (a lookup scans those), and the first and last possible buckets.
fn packed_index_of(keys: &[RunKey]) -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let records: Vec<RunRecord> = keys.iter().map(|k| sample_record(*k)).collect();
    let (mut index, _) = Index::load(&store);
    index.put_packed(&store, &records).unwrap();
    settled_load(&store);
    (dir, store)
}

/// Keys spread over the buckets, with look-alikes: the same first 8 bytes, the same bucket.
fn spread_keys(n: u64) -> Vec<RunKey> {
    let mut keys: Vec<RunKey> = (0..n)
        .map(|i| RunKey(*blake3::hash(&i.to_le_bytes()).as_bytes()))
        .collect();
    let mut twin = keys[0];
    twin.0[31] ^= 1;
    let mut cousin = keys[1];
    cousin.0[7] ^= 1;
    keys.extend([twin, cousin, RunKey([0; 32]), RunKey([0xff; 32])]);
    keys
}

#[test]
fn lookups_in_bulk_agree_with_one_at_a_time() {
    let stored = spread_keys(3000);
    let (_dir, store) = packed_index_of(&stored[..2000]);
    let (mut index, _) = Index::load(&store);
    // Stored keys, keys never stored (look-alikes among them), in no particular order.
    let mut asked: Vec<RunKey> = stored.iter().rev().copied().collect();
    for k in &stored[..50] {
        let mut near = *k;
        near.0[20] ^= 0x40;
        asked.push(near);
    }
    let check = |index: &Index, what: &str| {
        let mut bulk = Vec::new();
        index.lookup_each(
            asked.len(),
            |i| &asked[i],
            |i, found| {
                assert_eq!(i, bulk.len(), "{what}: in order");
                bulk.push(found);
            },
        );
        let one_by_one: Vec<Option<Option<Digest>>> =
            asked.iter().map(|k| index.lookup(k)).collect();
        assert_eq!(bulk, one_by_one, "{what}");
        for (k, found) in asked.iter().zip(&bulk) {
            assert_eq!(found.is_some(), index.contains(k), "{what}");
            assert_eq!(found.flatten(), index.digest(k), "{what}");
        }
        bulk
    };
    let quiet = check(&index, "a quiet index");
    let present = quiet.iter().filter(|f| f.is_some()).count();
    assert_eq!(present, 2000, "every stored key is found, no other");
    for (k, found) in stored[..2000].iter().zip(quiet.iter().rev().skip(50)) {
        let digest = index.read(&store, k).unwrap().unwrap().1;
        assert_eq!(*found, Some(Some(digest)), "the digest of its record");
    }
    // Runs recorded and records gone since the file was written: the other way of looking.
    let new = sample_record(stored[2500]);
    index.insert(new.key, Summary::of(&new), [9; 32]);
    index.remove(&stored[10]);
    let changed = check(&index, "an index that learnt something");
    assert_ne!(changed, quiet);
}

#[test]
fn the_version_moves_with_every_change() {
    let keys = spread_keys(10);
    let (_dir, store) = packed_index_of(&keys[..5]);
    let (mut index, _) = Index::load(&store);
    let (other, _) = Index::load(&store);
    assert_ne!(index.version(), other.version(), "two loads, two versions");
    // What changes nothing the index says keeps its version: reading, saving, reconciling
    // with a store that did not change, a packing with nothing to pack, removing a run
    // that is not stored.
    let version = index.version();
    let _ = (index.lookup(&keys[1]), index.get(&keys[1]), index.len());
    index.save(&store).unwrap();
    index.reconcile(&store, &mut LoadReport::default());
    assert_eq!(index.pack(&store, 1).unwrap().records, 0);
    index.remove(&keys[6]);
    assert_eq!(index.version(), version, "nothing changed");
    let mut seen = vec![index.version(), other.version()];
    let mut moved = |index: &Index, what: &str| {
        assert!(!seen.contains(&index.version()), "{what}");
        seen.push(index.version());
    };
    let record = sample_record(keys[7]);
    index.insert(record.key, Summary::of(&record), [1; 32]);
    moved(&index, "a run recorded");
    index.remove(&keys[0]);
    moved(&index, "a run removed");
    index.put_packed(&store, &[sample_record(keys[8])]).unwrap();
    moved(&index, "runs put into a pack");
    store.put(&sample_record(keys[9])).unwrap();
    index.reconcile(&store, &mut LoadReport::default());
    moved(&index, "a record found by reconciling");
    assert!(index.pack(&store, 1).unwrap().records > 0);
    moved(&index, "records packed");
}
