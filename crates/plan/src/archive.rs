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
                    )))
                }
                Component::RootDir | Component::Prefix(_) => {
                    return Err(bad(format!("entry `{shown}` has an absolute path")))
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
