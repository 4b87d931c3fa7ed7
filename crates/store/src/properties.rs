//! The record reader on generated input: it never panics, every error names the file, and no
//! change to a valid record's bytes is ever accepted.

use std::path::Path;

use proptest::prelude::*;

use mccbuild_core::RunKey;

use crate::{encode_record, parse_record_verified, tests};

fn valid_bytes() -> (Vec<u8>, RunKey) {
    let key = RunKey([9; 32]);
    (encode_record(&tests::sample_record(key)).unwrap().0, key)
}

proptest! {
    // A change that leaves the record as it was is rejected: allow as many such draws as
    // cases (a million cases drew more than proptest's default 1,024, scripts/bench-fuzz).
    #![proptest_config({
        let cases = std::env::var("MCCBUILD_PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(2000);
        ProptestConfig { max_global_rejects: cases, ..ProptestConfig::with_cases(cases) }
    })]

    #[test]
    fn arbitrary_bytes_are_an_error_naming_the_file(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let path = Path::new("/store/runs/09/x.json");
        match parse_record_verified(path, &bytes, &RunKey([9; 32])) {
            Ok(_) => prop_assert!(false, "arbitrary bytes accepted"),
            Err(e) => prop_assert_eq!(e.path, path.to_path_buf()),
        }
    }

    #[test]
    fn any_change_to_a_valid_record_is_refused(at in any::<prop::sample::Index>(), byte in any::<u8>(), how in 0u8..3) {
        let (good, key) = valid_bytes();
        let i = at.index(good.len());
        let mut bad = good.clone();
        match how {
            0 => bad[i] = byte,
            1 => bad.truncate(i),
            _ => bad.insert(i, byte),
        }
        prop_assume!(bad != good);
        let path = Path::new("/store/runs/09/x.json");
        let result = parse_record_verified(path, &bad, &key);
        prop_assert!(result.is_err(), "a changed record was accepted: byte {} ({})", i, how);
    }
}
