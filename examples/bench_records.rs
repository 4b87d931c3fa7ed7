//! Records for `scripts/bench-watch` when the store's records are packed (as `mccbuild import`
//! leaves them): writes, for N stored runs that answered (chosen at random, seed given), two
//! loose-record files in the store's own format into OUT: `KEY.changed.json`, the record with its
//! answers dropped and one second more of CPU time (a run that, done again, computed nothing),
//! and `KEY.json`, the record as stored. Renamed into the store's `runs/` while `mccbuild watch`
//! runs, each is a changed record (its content digest differs from the index's), as when an
//! executor writes a run's new record.
//!
//!   cargo run --release --example bench_records -- MANIFEST OUT N SEED

use std::path::PathBuf;

use mccbuild::session::Session;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [manifest, out, n, seed] = &args[..] else {
        eprintln!("usage: bench_records MANIFEST OUT N SEED");
        std::process::exit(2);
    };
    let n: usize = n.parse().expect("N: a number");
    let mut state: u64 = seed.parse().expect("SEED: a number");
    let session = Session::open(&PathBuf::from(manifest)).expect("cannot open the contest");
    let mut keys: Vec<_> = session
        .plan
        .runs
        .iter()
        .map(|r| r.key)
        .filter(|k| session.index.get(k).is_some_and(|s| !s.answers.is_empty()))
        .collect();
    keys.sort_unstable();
    std::fs::create_dir_all(out).expect("cannot create OUT");
    for _ in 0..n.min(keys.len()) {
        // A linear congruential generator (Knuth's MMIX constants): reproducible picks.
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let key = keys.swap_remove((state >> 33) as usize % keys.len());
        let (record, _) = session
            .index
            .read(&session.store, &key)
            .expect("a damaged record")
            .expect("a stored record");
        let mut changed = record.clone();
        changed.answers.clear();
        changed.measurement.cpu_time_s += 1.0;
        for (record, suffix) in [(&changed, ".changed.json"), (&record, ".json")] {
            let (bytes, _) = mccbuild_store::encode_record(record).expect("cannot encode");
            let path = PathBuf::from(out).join(format!("{}{suffix}", key.hex()));
            std::fs::write(&path, bytes).expect("cannot write");
        }
        println!("{}", key.hex());
    }
}
