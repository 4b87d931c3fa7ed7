//! Instance archives through the binary: an archive is read with constant
//! memory whatever its entries' sizes (hashed, parsed and unpacked as its bytes flow, the size
//! caps counted on the bytes read), and hostile archives are refused. The kinds of hostile
//! archive are each checked in crates/plan (`hostile_archives_are_refused`,
//! `archive_bombs_stop_at_the_bound`); here, peak memory is measured on the real process.

use std::fs::{self, File};
use std::io::{self, Read};
use std::path::Path;
use std::process::{Command, Stdio};

use crate::common::*;

/// What a finished `mccbuild` said, and its peak resident memory (its own and its reaped
/// children's, from wait4's rusage).
struct Measured {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    max_rss_mb: u64,
}

fn mccbuild_measured(dir: &Path, args: &[&str]) -> Measured {
    let out = tempfile::tempfile().unwrap();
    let err = tempfile::tempfile().unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_mccbuild"))
        .args(args)
        .current_dir(dir)
        .env_remove("MCCBUILD_SANDBOX")
        .stdin(Stdio::null())
        .stdout(out.try_clone().unwrap())
        .stderr(err.try_clone().unwrap())
        .spawn()
        .expect("mccbuild starts");
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: rusage is plain data, for which all-zero bytes are a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: wait4 fills `usage` for our own child, which std never waits for (the Child is
    // dropped without wait).
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid, "wait4: {}", io::Error::last_os_error());
    drop(child);
    let read = |mut f: File| {
        use std::io::Seek;
        f.rewind().unwrap();
        let mut s = String::new();
        f.read_to_string(&mut s).unwrap();
        s
    };
    Measured {
        code: libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status)),
        stdout: read(out),
        stderr: read(err),
        max_rss_mb: usage.ru_maxrss as u64 / 1024,
    }
}

type Builder = tar::Builder<flate2::write::GzEncoder<File>>;

/// Writes `path` as a .tgz made by `entries`.
fn write_tgz(path: &Path, entries: impl FnOnce(&mut Builder)) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(
        File::create(path).unwrap(),
        flate2::Compression::fast(),
    ));
    entries(&mut builder);
    builder.into_inner().unwrap().finish().unwrap();
}

fn file(b: &mut Builder, path: &str, size: u64, content: impl Read) {
    let mut header = tar::Header::new_gnu();
    header.set_path(path).unwrap();
    header.set_size(size);
    header.set_mode(0o644);
    header.set_cksum();
    b.append(&header, content).unwrap();
}

const PNML: &str = r#"<?xml version="1.0"?><pnml><net id="n" type="http://www.pnml.org/version-2009/grammar/ptnet"><page id="p"/></net></pnml>"#;

/// An archive of 512 MiB of zeros in one entry (half a megabyte compressed): `check` reads it
/// (hashing every byte) and `run` unpacks it for a tool that sees all of it, each with a peak
/// memory far below the entry's size (reading the entry whole, as before, took more than its size).
#[test]
fn a_huge_entry_is_checked_and_unpacked_with_constant_memory() {
    const BIG: u64 = 512 << 20;
    const BOUND_MB: u64 = 64;
    let mut c = TestContest::new();
    write_tgz(&c.path().join("inputs/X-PT-1.tgz"), |b| {
        file(b, "X-PT-1/model.pnml", PNML.len() as u64, PNML.as_bytes());
        file(b, "X-PT-1/iscolored", 6, &b"FALSE\n"[..]);
        file(b, "X-PT-1/zeros", BIG, io::repeat(0).take(BIG));
    });
    assert!(
        fs::metadata(c.path().join("inputs/X-PT-1.tgz"))
            .unwrap()
            .len()
            < 4 << 20
    );
    c.model("X", "known", &["inputs/X-PT-1.tgz"]);
    c.script_tool(
        "sizer",
        "#!/bin/sh\necho \"STATE_SPACE STATES $(stat -c %s zeros) TECHNIQUES EXPLICIT\"\n",
        "examinations = [\"StateSpace\"]",
    );
    c.write("time_s = 60");

    let check = mccbuild_measured(c.path(), &["check"]);
    assert_eq!(check.code, Some(0), "{}", check.stderr);
    eprintln!("check: peak memory {} MB", check.max_rss_mb);
    assert!(
        check.max_rss_mb < BOUND_MB,
        "check: peak memory {} MB for an entry of {} MB",
        check.max_rss_mb,
        BIG >> 20
    );
    // Without the digest cache `check` made, `run` reads the archive twice: for the plan, then
    // to unpack it into the run's folder.
    fs::remove_dir_all(c.path().join("cache")).unwrap();
    let run = mccbuild_measured(c.path(), &["run", "--json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    eprintln!("run: peak memory {} MB", run.max_rss_mb);
    assert!(
        run.max_rss_mb < BOUND_MB,
        "run: peak memory {} MB for an entry of {} MB",
        run.max_rss_mb,
        BIG >> 20
    );
    let summary: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(summary["executed"], 1, "{}", run.stderr);
    let record = c.record("sizer", "X-PT-1", "StateSpace");
    assert_eq!(
        record["answers"][0]["value"],
        BIG.to_string(),
        "the tool saw the whole entry: {record}"
    );
}

/// A GNU sparse entry declaring 3 GiB with one byte of data (a reader of it yields 3 GiB of
/// zeros) is refused before anything is read, by `check` and by `run` (each naming the archive
/// once), and nothing is unpacked.
#[test]
fn a_sparse_entry_of_3_gib_is_refused_at_once() {
    let mut c = TestContest::new();
    write_tgz(&c.path().join("inputs/X-PT-1.tgz"), |b| {
        file(b, "X-PT-1/model.pnml", PNML.len() as u64, PNML.as_bytes());
        let mut header = tar::Header::new_gnu();
        header.set_path("X-PT-1/zeros").unwrap();
        header.set_entry_type(tar::EntryType::GNUSparse);
        let gnu = header.as_gnu_mut().unwrap();
        gnu.realsize = *b"30000000000\0";
        gnu.sparse[0].offset = *b"27777777777\0";
        gnu.sparse[0].numbytes = *b"00000000001\0";
        header.set_size(1);
        header.set_mode(0o644);
        header.set_cksum();
        b.append(&header, &b"x"[..]).unwrap();
    });
    c.model("X", "known", &["inputs/X-PT-1.tgz"]);
    c.scripted_tool("a", "examinations = [\"StateSpace\"]");
    c.write("time_s = 10");
    let check = mccbuild_measured(c.path(), &["check"]);
    assert_eq!(check.code, Some(2), "{}", check.stderr);
    assert!(
        check.stderr.contains("X-PT-1.tgz") && check.stderr.contains("not a plain file"),
        "{}",
        check.stderr
    );
    assert!(check.max_rss_mb < 64, "check: {} MB", check.max_rss_mb);
    let run = mccbuild_measured(c.path(), &["run", "--json"]);
    assert!(run.stderr.contains("not a plain file"), "{}", run.stderr);
    // The archive is named once, where the problem is.
    for said in [&check.stderr, &run.stderr] {
        for line in said.lines().filter(|l| l.contains("not a plain file")) {
            assert_eq!(line.matches("X-PT-1.tgz").count(), 1, "{line}");
        }
    }
    let summary: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(summary["executed"], 0, "{}", run.stderr);
}
