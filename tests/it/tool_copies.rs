//! The files tools/pm4py and tools/snakes share stay identical. Each tool folder is a tool of its
//! own (its files are in its runs' key, and a tool is installed from its folder alone), so the
//! library-independent part of the two Python tools (the MCC environment, the formula reader, the
//! LTL translation) and their hand cases are copies, not links. This test keeps the copies equal:
//! the shared files are listed here, and every file under the shared folders is compared.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use crate::common::REPO;

/// The two tools that share files.
const TOOLS: [&str; 2] = ["tools/pm4py", "tools/snakes"];

/// The shared files, relative to each tool's folder.
const SHARED_FILES: &[&str] = &[
    "mcc_common.py",
    "mcc_formulas.py",
    "mcc_ltl.py",
    "tests/analyse_all.py",
    "tests/compare_oracle.py",
    "tests/run.sh",
    "tests/run_cases.py",
    "tests/test_formulas.py",
];

/// The shared folders, relative to each tool's folder: the same files in both, byte for byte.
const SHARED_FOLDERS: &[&str] = &["tests/nets"];

/// The files under `dir`, relative to `root`.
fn files_under(root: &Path, dir: &Path, out: &mut BTreeSet<PathBuf>) {
    for entry in fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .flatten()
    {
        let path = entry.path();
        if path.is_dir() {
            files_under(root, &path, out);
        } else {
            out.insert(path.strip_prefix(root).unwrap().to_path_buf());
        }
    }
}

#[test]
fn the_files_pm4py_and_snakes_share_are_identical() {
    let [a, b] = TOOLS.map(|t| Path::new(REPO).join(t));
    let mut shared: BTreeSet<PathBuf> = SHARED_FILES.iter().map(PathBuf::from).collect();
    for folder in SHARED_FOLDERS {
        for root in [&a, &b] {
            files_under(root, &root.join(folder), &mut shared);
        }
    }
    assert!(
        shared.len() > SHARED_FILES.len(),
        "no file under the shared folders {SHARED_FOLDERS:?}"
    );
    let mut differ = Vec::new();
    for file in &shared {
        let (in_a, in_b) = (fs::read(a.join(file)), fs::read(b.join(file)));
        let problem = match (&in_a, &in_b) {
            (Ok(x), Ok(y)) if x == y => continue,
            (Ok(_), Ok(_)) => "the two copies differ",
            (Ok(_), Err(_)) => "only in tools/pm4py",
            (Err(_), Ok(_)) => "only in tools/snakes",
            (Err(_), Err(_)) => "in neither tool",
        };
        differ.push(format!("  {}: {problem}", file.display()));
    }
    assert!(
        differ.is_empty(),
        "tools/pm4py and tools/snakes share these files, which must be identical:\n{}\n\
         Make the two copies equal: after editing one, copy it over the other (e.g. \
         `cp tools/pm4py/mcc_common.py tools/snakes/mcc_common.py`); a file added under a shared \
         folder goes into both tools. A file that is to differ between the tools is taken out of \
         the lists of tests/it/tool_copies.rs.",
        differ.join("\n")
    );
}
