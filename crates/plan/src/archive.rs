//! Instance archives (BenchKit `.tgz`), never trusted: entries must stay inside the instance
//! folder (no absolute paths, no `..`, no links, no devices) and the whole archive must expand
//! to less than a bound, counting the bytes actually read, not what headers claim.

use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::{Component, Path};

use crate::instance::InstanceError;

/// How far an instance archive may expand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArchiveLimits {
    pub max_bytes: u64,
    pub max_entries: usize,
}

impl Default for ArchiveLimits {
    /// 4 GiB and 100,000 entries: far above real MCC instances (a few MB), far below a disk.
    fn default() -> Self {
        ArchiveLimits {
            max_bytes: 4 << 30,
            max_entries: 100_000,
        }
    }
}

/// Visits every file of an instance archive after checking it is safe: paths stay inside the
/// instance folder (a leading `<instance>/` folder is stripped), entries are plain files or
/// folders, and the archive expands to at most `limits`.
pub fn for_each_archive_file(
    path: &Path,
    instance: &str,
    limits: ArchiveLimits,
    mut visit: impl FnMut(&str, u64, bool, &mut dyn Read) -> Result<(), InstanceError>,
) -> Result<(), InstanceError> {
    let file = File::open(path).map_err(|source| InstanceError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let gz = flate2::read::MultiGzDecoder::new(BufReader::new(file));
    let mut archive = tar::Archive::new(gz);
    let bad = |problem: String| InstanceError::Archive {
        path: path.to_path_buf(),
        problem,
    };
    let mut total: u64 = 0;
    let mut count = 0usize;
    let entries = archive
        .entries()
        .map_err(|e| bad(format!("not a tar.gz archive: {e}")))?;
    for entry in entries {
        let mut entry = entry.map_err(|e| bad(format!("corrupt archive: {e}")))?;
        count += 1;
        if count > limits.max_entries {
            return Err(bad(format!(
                "more than {} entries; refusing to expand it",
                limits.max_entries
            )));
        }
        let raw = entry
            .path()
            .map_err(|e| bad(format!("entry with an unreadable path: {e}")))?
            .into_owned();
        let shown = raw.display().to_string();
        let mut parts: Vec<String> = Vec::new();
        for component in raw.components() {
            match component {
                Component::Normal(part) => parts.push(part.to_string_lossy().into_owned()),
                Component::CurDir => {}
                Component::ParentDir => {
                    return Err(bad(format!(
                        "entry `{shown}` escapes the instance folder (`..`)"
                    )));
                }
                Component::RootDir | Component::Prefix(_) => {
                    return Err(bad(format!("entry `{shown}` has an absolute path")));
                }
            }
        }
        if parts.first().is_some_and(|first| first == instance) {
            parts.remove(0);
        }
        let kind = entry.header().entry_type();
        if kind.is_dir() {
            continue;
        }
        if !(kind.is_file() || kind == tar::EntryType::Continuous) {
            let what = if kind.is_symlink() {
                "a symbolic link"
            } else if kind.is_hard_link() {
                "a hard link"
            } else {
                "not a plain file"
            };
            return Err(bad(format!(
                "entry `{shown}` is {what}; instance archives hold plain files only"
            )));
        }
        if parts.is_empty() {
            return Err(bad(format!("entry `{shown}` has an empty path")));
        }
        let rel = parts.join("/");
        let mode = entry.header().mode().unwrap_or(0o644);
        let size = entry.header().size().unwrap_or(0);
        if total.saturating_add(size) > limits.max_bytes {
            return Err(bad(format!(
                "expands to more than {} MB; refusing to expand it",
                limits.max_bytes >> 20
            )));
        }
        // Never trust the header: count what is really read.
        let budget = limits.max_bytes - total;
        let mut counted = CountingReader {
            inner: (&mut entry).take(budget + 1),
            count: 0,
        };
        visit(&rel, size, mode & 0o111 != 0, &mut counted)?;
        io::copy(&mut counted, &mut io::sink())
            .map_err(|e| bad(format!("entry `{shown}`: {e}")))?;
        total += counted.count;
        if total > limits.max_bytes {
            return Err(bad(format!(
                "expands to more than {} MB; refusing to expand it",
                limits.max_bytes >> 20
            )));
        }
    }
    Ok(())
}

struct CountingReader<R> {
    inner: R,
    count: u64,
}

impl<R: Read> Read for CountingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count += n as u64;
        Ok(n)
    }
}

/// The archive reader on generated archives: valid archives whose tar stream or gzip bytes are
/// edited at random, and arbitrary bytes. It never panics, every error names the archive, and
/// whatever it accepts stays inside the instance folder and within the caps; the facts read from it
/// (one streaming pass) are computed without panic too. `MCCBUILD_PROPTEST_CASES` sets the number
/// of archives (1,000 by default: each one is gzipped, written and read twice; scripts/bench-fuzz
/// runs a million).
#[cfg(test)]
mod properties {
    use super::*;
    use crate::digest_cache::DigestCache;
    use crate::instance::instance_facts;
    use crate::manifest::InstanceSource;
    use crate::model_files::properties::{cases_or, edited};
    use proptest::collection::vec;
    use proptest::prelude::*;
    use std::io::Write;

    const NAMES: &[&str] = &[
        "X-PT-1/model.pnml",
        "X-PT-1/UpperBounds.xml",
        "X-PT-1/iscolored",
        "X-PT-1/NewModel",
        "X-PT-1/sub/deep.txt",
        "model.pnml",
        "X-PT-1/../escape",
        "/abs",
        "./X-PT-1/./a",
        "X-PT-1/",
    ];
    const CONTENTS: &[&str] = &[
        "",
        "FALSE\n",
        "<pnml><net type=\"ptnet\"/></pnml>",
        "<property-set><property><id>a</id></property></property-set>",
        "<property-set><property><id>a</id>",
    ];

    /// A tar stream of a few entries (names written raw into the header, as a hostile packer
    /// would), of any entry type.
    fn tar_stream() -> impl Strategy<Value = Vec<u8>> {
        let entry = (
            proptest::sample::select(NAMES),
            proptest::sample::select(CONTENTS),
            proptest::sample::select(
                &[
                    b'0', b'0', b'0', b'5', b'1', b'2', b'3', b'4', b'6', b'7', b'S', b'x', b'L',
                ][..],
            ),
        );
        vec(entry, 0..5).prop_map(|entries| {
            let mut builder = tar::Builder::new(Vec::new());
            for (name, content, kind) in entries {
                let mut header = tar::Header::new_gnu();
                header.as_gnu_mut().unwrap().name[..name.len()].copy_from_slice(name.as_bytes());
                header.set_size(content.len() as u64);
                header.set_mode(0o644);
                header.set_entry_type(tar::EntryType::new(kind));
                header.set_cksum();
                builder.append(&header, content.as_bytes()).unwrap();
            }
            builder.into_inner().unwrap()
        })
    }

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(bytes).unwrap();
        gz.finish().unwrap()
    }

    fn archive() -> impl Strategy<Value = Vec<u8>> {
        let edit = (
            any::<prop::sample::Index>(),
            0usize..40,
            vec(any::<u8>(), 0..16),
        );
        prop_oneof![
            2 => tar_stream().prop_map(|t| gzip(&t)),
            3 => (tar_stream(), vec(edit.clone(), 1..4)).prop_map(|(t, e)| gzip(&edited(&t, &e))),
            2 => (tar_stream(), vec(edit, 1..4)).prop_map(|(t, e)| edited(&gzip(&t), &e)),
            1 => vec(any::<u8>(), 0..600),
        ]
    }

    thread_local! {
        static DIR: tempfile::TempDir = tempfile::tempdir().unwrap();
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(cases_or(1000)))]

        #[test]
        fn archives_are_read_safely_or_refused_naming_the_archive(bytes in archive()) {
            let path = DIR.with(|d| d.path().join("X-PT-1.tgz"));
            std::fs::write(&path, &bytes).unwrap();
            let limits = ArchiveLimits { max_bytes: 4096, max_entries: 3 };
            let mut total = 0u64;
            let mut entries = 0usize;
            let read = for_each_archive_file(&path, "X-PT-1", limits, |rel, _, _, reader| {
                entries += 1;
                assert!(!rel.is_empty() && !rel.starts_with('/'), "{rel:?}");
                assert!(rel.split('/').all(|p| !p.is_empty() && p != ".." && p != "."), "{rel:?}");
                let mut sink = Vec::new();
                reader.read_to_end(&mut sink).map_err(|source| InstanceError::Read { path: path.clone(), source })?;
                total += sink.len() as u64;
                Ok(())
            });
            match read {
                Ok(()) => prop_assert!(total <= limits.max_bytes && entries <= limits.max_entries),
                Err(e) => prop_assert!(
                    e.to_string().starts_with(&path.display().to_string()) || e.to_string().contains(&path.display().to_string()),
                    "an error not naming the archive: {}", e
                ),
            }
            let facts = instance_facts("X-PT-1", &InstanceSource::Archive(path.clone()), &mut DigestCache::in_memory(), limits);
            if let Err(e) = facts {
                prop_assert!(e.to_string().contains(&path.display().to_string()), "{}", e);
            }
        }
    }
}
