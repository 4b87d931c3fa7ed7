//! The packs: the same records as loose ones, damage in a pack, a rerun over a packed record,
//! a packing killed half-way, records put straight into packs, a record packed by another
//! process.

use std::fs;
use std::io;

use mccbuild_core::digest::Digest;
use mccbuild_core::{RunKey, Value};

use super::{packed_store_of, sample_record, settled_load, store_of};
use crate::index::{Index, Summary};
use crate::pack;
use crate::{RunRecord, Store};

#[test]
fn packed_records_are_the_same_records_and_a_quiet_store_reads_none() {
    let (_dir, store, keys) = store_of(40);
    let (mut index, _) = Index::load(&store);
    let before: Vec<(Option<Digest>, Summary)> = keys
        .iter()
        .map(|k| (index.digest(k), index.get(k).unwrap().clone()))
        .collect();
    // Fewer loose records than asked for: nothing happens.
    assert_eq!(index.pack(&store, 41).unwrap().records, 0);
    let outcome = index.pack(&store, 40).unwrap();
    assert_eq!((outcome.records, outcome.packs.len()), (40, 1));
    for k in &keys {
        assert!(!store.record_path(k).exists(), "the loose file is gone");
    }
    let (index, report) = settled_load(&store);
    assert!(report.corrupt.is_empty(), "{:?}", report.corrupt);
    assert_eq!((report.records_read, report.records_reverified), (0, 0));
    assert!(report.changed.is_empty());
    assert_eq!(index.len(), 40);
    for (k, (digest, summary)) in keys.iter().zip(&before) {
        assert_eq!(index.digest(k), *digest);
        assert_eq!(index.get(k), Some(summary));
        let (record, d) = index.read(&store, k).unwrap().unwrap();
        assert_eq!((record.key, Some(d)), (*k, *digest));
        assert_eq!(Summary::of(&record), *summary);
    }
    assert!(!index.is_dirty());
    // Rebuilt from the pack alone: the same.
    fs::remove_file(store.index_path()).unwrap();
    let (index, report) = Index::load(&store);
    assert_eq!((index.len(), report.records_read), (40, 40));
    for (k, (digest, _)) in keys.iter().zip(&before) {
        assert_eq!(index.digest(k), *digest);
    }
}

#[test]
fn a_packed_record_edited_in_place_is_reported_until_its_run_has_a_new_record() {
    let (_dir, store, keys) = packed_store_of(10);
    // An answer changed inside the pack, the file still valid JSON lines of the same length.
    let path = pack::pack_path(&store, 1);
    let text = fs::read_to_string(&path).unwrap();
    let edited = text.replacen("\"value\":\"3\"", "\"value\":\"8\"", 1);
    assert_ne!(edited, text);
    fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .and_then(|mut f| io::Write::write_all(&mut f, edited.as_bytes()))
        .unwrap();
    let (mut index, report) = Index::load(&store);
    assert_eq!(report.corrupt.len(), 1, "{:?}", report.corrupt);
    assert_eq!(report.corrupt[0].path, path);
    let reason = &report.corrupt[0].reason;
    assert!(
        reason.contains(&keys[3].hex()) && reason.contains("does not match its digest"),
        "{reason}"
    );
    assert!(!index.contains(&keys[3]) && index.get(&keys[3]).is_none());
    assert_eq!(index.len(), 9);
    index.save(&store).unwrap();
    // Still reported by the next command, without reading the pack again.
    let (index, report) = Index::load(&store);
    assert_eq!(report.corrupt.len(), 1);
    assert_eq!(report.records_read, 0);
    assert!(!index.contains(&keys[3]));
    // Its run done again (a loose record): no longer reported, the new record counts.
    let mut redone = sample_record(keys[3]);
    redone.answers[0].value = Value::Int(3);
    let digest = store.put(&redone).unwrap();
    let (index, report) = Index::load(&store);
    assert!(report.corrupt.is_empty(), "{:?}", report.corrupt);
    assert_eq!(index.digest(&keys[3]), Some(digest));
}

#[test]
fn a_pack_cut_short_loses_only_its_last_records_and_says_so() {
    let (_dir, store, keys) = packed_store_of(10);
    let path = pack::pack_path(&store, 1);
    let len = fs::metadata(&path).unwrap().len();
    fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(len - 100)
        .unwrap();
    let (index, report) = Index::load(&store);
    assert_eq!(index.len(), 9);
    assert!(!index.contains(&keys[9]));
    assert_eq!(report.corrupt.len(), 1, "{:?}", report.corrupt);
    assert!(
        report.corrupt[0].reason.contains("cut short"),
        "{:?}",
        report.corrupt
    );
    // A pack removed: its records are no longer stored (as removed loose records).
    fs::remove_file(&path).unwrap();
    let (index, _) = Index::load(&store);
    assert!(index.is_empty());
}

#[test]
fn a_rerun_over_a_packed_record_wins_and_is_packed_in_turn() {
    let (_dir, store, keys) = packed_store_of(4);
    let mut redone = sample_record(keys[1]);
    redone.answers[0].value = Value::Int(99);
    let digest = store.put(&redone).unwrap();
    let (mut index, report) = Index::load(&store);
    assert_eq!(report.changed, vec![keys[1]]);
    assert_eq!(index.get(&keys[1]).unwrap().answers[0], (0, Value::Int(99)));
    let outcome = index.pack(&store, 1).unwrap();
    assert_eq!(outcome.records, 1);
    assert!(outcome.packs[0].ends_with("00000002.jsonl"));
    let (index, _) = settled_load(&store);
    assert_eq!(index.digest(&keys[1]), Some(digest));
    // Rebuilt: the newer pack's record counts.
    fs::remove_file(store.index_path()).unwrap();
    let (index, _) = Index::load(&store);
    assert_eq!(index.digest(&keys[1]), Some(digest));
    assert_eq!(index.len(), 4);
}

#[test]
fn a_packing_killed_before_it_ended_loses_nothing_and_is_finished_next_time() {
    let (_dir, store, keys) = store_of(6);
    let (index, _) = Index::load(&store);
    // Killed after the pack was renamed into place, before the index knew it: the pack and
    // every loose file are there, and the marker.
    let lines: Vec<Vec<u8>> = keys
        .iter()
        .map(|k| fs::read(store.record_path(k)).unwrap())
        .collect();
    let refs: Vec<&[u8]> = lines.iter().map(|l| l.as_slice()).collect();
    pack::write_pack(&store, 1, &refs).unwrap();
    fs::write(pack::packs_dir(&store).join("PACKING"), "x").unwrap();
    fs::write(
        pack::packs_dir(&store).join(".00000002.jsonl.abc.tmp"),
        "half",
    )
    .unwrap();
    let digests: Vec<_> = keys.iter().map(|k| index.digest(k)).collect();
    let (mut index, report) = Index::load(&store);
    assert!(
        report.corrupt.is_empty() && report.changed.is_empty(),
        "{report:?}"
    );
    assert_eq!(
        keys.iter().map(|k| index.digest(k)).collect::<Vec<_>>(),
        digests
    );
    // The next packing removes the loose copies and the temporary file.
    let outcome = index.pack(&store, 1000).unwrap();
    assert_eq!((outcome.records, outcome.leftovers), (0, 6));
    assert!(keys.iter().all(|k| !store.record_path(k).exists()));
    let names: Vec<String> = fs::read_dir(pack::packs_dir(&store))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, vec!["00000001.jsonl".to_string()]);
    let (index, report) = settled_load(&store);
    assert!(report.corrupt.is_empty());
    assert_eq!(
        keys.iter().map(|k| index.digest(k)).collect::<Vec<_>>(),
        digests
    );
}

#[test]
fn records_put_straight_into_a_pack_are_stored_without_a_loose_file() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let records: Vec<RunRecord> = (0..5u8).map(|i| sample_record(RunKey([i; 32]))).collect();
    let (mut index, _) = Index::load(&store);
    let digests = index.put_packed(&store, &records).unwrap();
    assert!(records.iter().all(|r| !store.record_path(&r.key).exists()));
    for (index, fresh) in [(index, false), (settled_load(&store).0, true)] {
        for (r, d) in records.iter().zip(&digests) {
            assert_eq!(index.digest(&r.key), Some(*d), "reloaded: {fresh}");
            assert_eq!(index.read(&store, &r.key).unwrap().unwrap().0, *r);
        }
    }
    // More later: a second pack.
    let (mut index, _) = Index::load(&store);
    index
        .put_packed(&store, &[sample_record(RunKey([9; 32]))])
        .unwrap();
    assert!(pack::pack_path(&store, 2).exists());
    assert_eq!(settled_load(&store).0.len(), 6);
}

#[test]
fn a_record_packed_by_another_process_is_still_read() {
    let (_dir, store, keys) = store_of(3);
    let (reader, _) = Index::load(&store);
    // Another process packs them (and removes the loose files) after the reader loaded.
    let (mut other, _) = Index::load(&store);
    other.pack(&store, 1).unwrap();
    assert!(!store.record_path(&keys[1]).exists());
    let (record, digest) = reader.read(&store, &keys[1]).unwrap().unwrap();
    assert_eq!(
        (record.key, Some(digest)),
        (keys[1], reader.digest(&keys[1]))
    );
    assert!(reader.read(&store, &RunKey([200; 32])).unwrap().is_none());
}

/// docs/cache.md, "Packs": damaged lines set aside. A pack with a key flipped in one line and
/// cut in its last: the sound records go into a new pack, the damaged bytes into `damaged/`,
/// the old pack goes, and nothing is reported any more (also by an index rebuilt). A reader that
/// loaded the index before reads its records from the new pack. Killed after the index was
/// saved (the old pack put back): its records are the new pack's, its damage is reported again
/// and set aside again, and no record is lost or doubled.
#[test]
fn damaged_lines_set_aside_stop_counting_and_a_killed_setting_aside_loses_nothing() {
    let (_dir, store, keys) = packed_store_of(10);
    let path = pack::pack_path(&store, 1);
    let mut bytes = fs::read(&path).unwrap();
    let at = bytes.windows(7).position(|w| w == b"\"key\":\"").unwrap() + 7;
    bytes[at] = if bytes[at] == b'0' { b'1' } else { b'0' };
    bytes.truncate(bytes.len() - 100);
    fs::write(&path, &bytes).unwrap();
    let damaged = bytes.clone();
    let (mut index, report) = Index::load(&store);
    assert_eq!(index.len(), 8, "{:?}", report.corrupt);
    let reader = Index::load(&store).0;
    let aside = index.set_aside_damage(&store).unwrap();
    assert_eq!(aside.lines, 2);
    assert_eq!(aside.from, vec![path.clone()]);
    assert_eq!(aside.packs, vec![pack::pack_path(&store, 2)]);
    assert!(!path.exists());
    let kept = fs::read(&aside.kept_in[0]).unwrap();
    assert_eq!(kept.iter().filter(|&&b| b == b'\n').count(), 2);
    let digests: Vec<Option<Digest>> = keys.iter().map(|k| index.digest(k)).collect();
    for rebuilt in [false, true] {
        if rebuilt {
            fs::remove_file(store.index_path()).unwrap();
        }
        let (index, report) = Index::load(&store);
        assert!(report.corrupt.is_empty(), "{:?}", report.corrupt);
        assert_eq!(index.len(), 8);
        for (k, d) in keys.iter().zip(&digests) {
            assert_eq!(index.digest(k), *d);
        }
    }
    // The reader loaded before: the records it knew in pack 1 are read from pack 2.
    let (record, _) = reader.read(&store, &keys[5]).unwrap().unwrap();
    assert_eq!(record.key, keys[5]);
    // Killed before the old pack was removed: it is back beside the new one.
    fs::write(&path, &damaged).unwrap();
    let (mut index, report) = Index::load(&store);
    assert_eq!(report.corrupt.len(), 2, "{:?}", report.corrupt);
    assert_eq!(index.len(), 8);
    let aside = index.set_aside_damage(&store).unwrap();
    assert_eq!(
        (aside.lines, aside.packs.len()),
        (2, 0),
        "nothing counts there"
    );
    assert!(!path.exists());
    let (index, report) = Index::load(&store);
    assert!(report.corrupt.is_empty(), "{:?}", report.corrupt);
    for (k, d) in keys.iter().zip(&digests) {
        assert_eq!(index.digest(k), *d);
    }
    // Every sound record lies once in the store's packs.
    let pack2 = fs::read(pack::pack_path(&store, 2)).unwrap();
    let (valid, damaged) = pack::scan_pack(&pack::pack_path(&store, 2), &pack2);
    assert_eq!((valid.len(), damaged.len()), (8, 0));
    assert_eq!(pack::list_packs(&store).unwrap(), vec![2]);
}
