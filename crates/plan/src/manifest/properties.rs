//! The manifest reader on generated manifests: the repository's demo contest.toml edited at random
//! (TOML punctuation, keys, values of every type), and arbitrary text. It never panics, and every
//! problem names a file (the manifest, or the file it is about) and, in the manifest, its line
//! and what to do (a help line).
//! `MCCBUILD_PROPTEST_CASES` sets the number of manifests (scripts/bench-fuzz runs a million).

use std::path::Path;

use super::*;
use crate::model_files::properties::{cases, edited};
use proptest::collection::vec;
use proptest::prelude::*;

const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

fn base() -> String {
    std::fs::read_to_string(format!("{REPO}/contest.toml")).unwrap()
}

fn edits() -> impl Strategy<Value = Vec<(prop::sample::Index, usize, Vec<u8>)>> {
    const SNIPPETS: &[&str] = &[
        "",
        "[",
        "]",
        "[[",
        "]]",
        "=",
        "\"",
        "'",
        "\"\"\"",
        "{",
        "}",
        ",",
        "#",
        "\n",
        ".",
        "[[tool]]\n",
        "[[model]]\n",
        "[limits]\n",
        "[executor]\n",
        "[contest]\n",
        "name = \"x\"\n",
        "kind = \"surprise\"\n",
        "instances = []\n",
        "examinations = [\"Nope\"]\n",
        "cores = 0\n",
        "time_s = -1\n",
        "memory_mb = 1e400\n",
        "jobs = 18446744073709551616\n",
        "dir = \"/\"\n",
        "dir = \"../../..\"\n",
        "instances = [\"models/*\"]\n",
        "rules = \"/dev/null\"\n",
        "unknown = 1\n",
        "true",
        "2026-11-24T00:00:00Z",
        "\\u0000",
        "é",
        "\t",
        "\r\n",
    ];
    let snippet = prop_oneof![
        5 => proptest::sample::select(SNIPPETS).prop_map(|s| s.as_bytes().to_vec()),
        1 => vec(any::<u8>(), 0..8),
    ];
    vec((any::<prop::sample::Index>(), 0usize..30, snippet), 0..5)
}

fn manifest() -> impl Strategy<Value = String> {
    let base = base();
    prop_oneof![
        6 => edits().prop_map(move |e| String::from_utf8_lossy(&edited(base.as_bytes(), &e)).into_owned()),
        1 => vec(any::<char>(), 0..300).prop_map(|c| c.into_iter().collect()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn manifests_are_read_or_refused_naming_file_and_line(text in manifest()) {
        let path = Path::new(REPO).join("contest.toml");
        if let Err(problems) = Contest::parse(&path, &text) {
            prop_assert!(!problems.is_empty());
            let lines = text.split('\n').count();
            for p in &problems.0 {
                prop_assert!(!p.file.as_os_str().is_empty(), "{}", p);
                if p.file == path {
                    let Some(at) = p.location else {
                        return Err(TestCaseError::fail(format!("a problem of the manifest without its line: {p}")));
                    };
                    prop_assert!(at.line >= 1 && at.line <= lines, "{} (of {} lines)", p, lines);
                    prop_assert!(p.help.is_some(), "a problem of the manifest without its help: {}", p);
                }
            }
        }
    }
}
