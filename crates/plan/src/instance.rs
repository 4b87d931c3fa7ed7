//! Model instances: folders in the MCC layout or BenchKit `.tgz` archives (read safely by
//! [`crate::archive`]), used as they are: their files listed and digested, their special files
//! inspected once per version of the instance, and their content copied into a run's folder.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::{self, BufReader, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use mccbuild_core::digest::{hash_reader, Digest};
use serde::{Deserialize, Serialize};

use crate::archive::for_each_archive_file;
pub use crate::archive::ArchiveLimits;
use crate::digest_cache::{DigestCache, Stamp};
use crate::manifest::InstanceSource;
use crate::model_files::{
    formula_ids, location_of, pnml_info, read_formula_ids, read_pnml_info, AtOffset,
};
pub use crate::model_files::{FileProblem, NetInfo};
use mccbuild_core::diag::Location;

/// Why an instance cannot be used (its files cannot be listed, read or copied).
#[derive(Debug, thiserror::Error)]
pub enum InstanceError {
    #[error("cannot read {}: {source}", path.display())]
    Read { path: PathBuf, source: io::Error },
    #[error("{} is a symbolic link; instance folders hold plain files only", path.display())]
    Link { path: PathBuf },
    #[error("{} is not a regular file", path.display())]
    NotAFile { path: PathBuf },
    #[error("{}: {problem}", path.display())]
    Archive { path: PathBuf, problem: String },
    #[error("{name} is known from the results file {} only: its runs cannot be executed", results.display())]
    ImportedOnly { name: String, results: PathBuf },
    #[error("cannot write {}: {source}", path.display())]
    Write { path: PathBuf, source: io::Error },
}

/// One file of an instance.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileEntry {
    /// Relative to the instance folder, `/`-separated.
    pub path: String,
    pub size: u64,
    pub digest: Digest,
    pub executable: bool,
}

/// Everything mccbuild needs to know about an instance, computed once per version of it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstanceFacts {
    /// Sorted by path.
    pub files: Vec<FileEntry>,
    /// Formula files (top-level `*.xml` whose root is `<property-set>`): their `<id>`s in file
    /// order, or why they could not be read.
    pub formulas: BTreeMap<String, Result<Vec<String>, FileProblem>>,
    /// `model.pnml`, or why it is not a readable PNML file.
    pub net: Result<NetInfo, FileProblem>,
    /// The empty `NewModel` marker: the instance belongs to a new (surprise) model.
    pub new_model: bool,
    /// Small top-level text files (at most 256 bytes: `iscolored`, `instance`, an expected
    /// verdict...), by name.
    pub texts: BTreeMap<String, String>,
}

impl Default for InstanceFacts {
    /// An instance known by name only (from a results file).
    fn default() -> Self {
        InstanceFacts {
            net: Err(FileProblem::new("no model file")),
            ..InstanceFacts::empty()
        }
    }
}

impl InstanceFacts {
    /// Before any file is looked at.
    fn empty() -> InstanceFacts {
        InstanceFacts {
            files: Vec::new(),
            formulas: BTreeMap::new(),
            net: Err(FileProblem::new("model.pnml is missing")),
            new_model: false,
            texts: BTreeMap::new(),
        }
    }

    pub fn has_file(&self, name: &str) -> bool {
        self.files.iter().any(|f| f.path == name)
    }

    /// The digest of the files a run sees (all, minus `hidden`): what the run key takes from
    /// the instance's content.
    pub fn visible_digest(&self, hidden: &[&str]) -> Digest {
        let mut hasher = blake3::Hasher::new();
        for f in self
            .files
            .iter()
            .filter(|f| !hidden.contains(&f.path.as_str()))
        {
            hasher.update(&(f.path.len() as u64).to_le_bytes());
            hasher.update(f.path.as_bytes());
            hasher.update(&f.digest);
            hasher.update(&[f.executable as u8]);
        }
        *hasher.finalize().as_bytes()
    }
}

/// Lists, digests and inspects an instance (cached in `cache`).
pub fn instance_facts(
    name: &str,
    source: &InstanceSource,
    cache: &mut DigestCache,
    limits: ArchiveLimits,
) -> Result<Arc<InstanceFacts>, InstanceError> {
    match source {
        InstanceSource::Imported(_) => Ok(Arc::new(InstanceFacts::default())),
        InstanceSource::Archive(path) => {
            let meta = fs::metadata(path).map_err(|source| InstanceError::Read {
                path: path.clone(),
                source,
            })?;
            let stamps = [(String::new(), Stamp::of(&meta))];
            cache
                .derived(path, &stamps, |_| archive_facts(path, name, limits))
                .map(Arc::new)
        }
        InstanceSource::Folder(path) => {
            let mut files = Vec::new();
            walk_folder(path, path, &mut files)?;
            let stamps: Vec<(String, Stamp)> = files
                .iter()
                .map(|(rel, meta)| (rel.clone(), Stamp::of(meta)))
                .collect();
            cache
                .derived(path, &stamps, |cache| folder_facts(path, &files, cache))
                .map(Arc::new)
        }
    }
}

/// The plain files below `dir` (relative to `root`), sorted; links and special files are refused.
fn walk_folder(
    root: &Path,
    dir: &Path,
    out: &mut Vec<(String, fs::Metadata)>,
) -> Result<(), InstanceError> {
    let unreadable = |source| InstanceError::Read {
        path: dir.to_path_buf(),
        source,
    };
    let mut entries: Vec<_> = fs::read_dir(dir)
        .map_err(unreadable)?
        .collect::<Result<_, _>>()
        .map_err(unreadable)?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        let meta = fs::symlink_metadata(&path).map_err(|source| InstanceError::Read {
            path: path.clone(),
            source,
        })?;
        let rel = path
            .strip_prefix(root)
            .unwrap_or(&path)
            .to_string_lossy()
            .into_owned();
        if meta.file_type().is_symlink() {
            return Err(InstanceError::Link { path });
        } else if meta.is_dir() {
            walk_folder(root, &path, out)?;
        } else if meta.is_file() {
            out.push((rel, meta));
        } else {
            return Err(InstanceError::NotAFile { path });
        }
    }
    Ok(())
}

fn folder_facts(
    root: &Path,
    files: &[(String, fs::Metadata)],
    cache: &mut DigestCache,
) -> Result<InstanceFacts, InstanceError> {
    let mut facts = InstanceFacts::empty();
    for (rel, meta) in files {
        let path = root.join(rel);
        let digest = cache
            .file_digest(&path)
            .map_err(|source| InstanceError::Read {
                path: path.clone(),
                source,
            })?;
        facts.files.push(FileEntry {
            path: rel.clone(),
            size: meta.len(),
            digest,
            executable: meta.permissions().mode() & 0o111 != 0,
        });
        inspect(&mut facts, rel, meta.len(), || {
            File::open(&path).map(BufReader::new)
        });
    }
    Ok(facts)
}

/// The facts of an archive, read in one pass with constant memory whatever its entries' sizes:
/// each entry is hashed as it streams by, and the special files are parsed from the same stream.
/// A problem found in a file is located (line and column) by a second pass over the archive,
/// only when there is one.
fn archive_facts(
    path: &Path,
    name: &str,
    limits: ArchiveLimits,
) -> Result<InstanceFacts, InstanceError> {
    let mut facts = InstanceFacts::empty();
    // Problems to locate: (the entry's index, its path, the problem).
    let mut unlocated: Vec<(usize, String, AtOffset)> = Vec::new();
    let mut index = 0usize;
    for_each_archive_file(path, name, limits, |rel, _, executable, reader| {
        let entry = index;
        index += 1;
        let read_error = |e: io::Error| InstanceError::Archive {
            path: path.to_path_buf(),
            problem: format!("entry {rel}: {e}"),
        };
        let mut hashed = HashingReader::new(reader);
        let mut input = BufReader::with_capacity(64 * 1024, &mut hashed);
        let top_level = !rel.contains('/');
        if rel == "NewModel" {
            facts.new_model = true;
        }
        if rel == "model.pnml" {
            match read_pnml_info(&mut input) {
                Ok(info) => facts.net = Ok(info),
                // Set once located, below.
                Err(p) => unlocated.push((entry, rel.to_string(), p)),
            }
        } else if top_level && rel.ends_with(".xml") {
            if !rel.starts_with("GenericProperties") {
                match read_formula_ids(&mut input) {
                    Ok(Some(ids)) => {
                        facts.formulas.insert(rel.to_string(), Ok(ids));
                    }
                    Ok(None) => {}
                    // Set once located, below.
                    Err(p) => unlocated.push((entry, rel.to_string(), p)),
                }
            }
        } else if top_level {
            // A small text file (at most 256 bytes): read 257 to know.
            let mut head = Vec::with_capacity(257);
            (&mut input)
                .take(257)
                .read_to_end(&mut head)
                .map_err(read_error)?;
            if head.len() <= 256 {
                if let Ok(text) = String::from_utf8(head) {
                    facts.texts.insert(rel.to_string(), text);
                }
            }
        }
        // Hash what the parser did not read.
        io::copy(&mut input, &mut io::sink()).map_err(read_error)?;
        drop(input);
        let (digest, size) = hashed.finish();
        facts.files.push(FileEntry {
            path: rel.to_string(),
            size,
            digest,
            executable,
        });
        Ok(())
    })?;
    if !unlocated.is_empty() {
        locate_in_archive(path, name, limits, unlocated, &mut facts);
    }
    facts.files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(facts)
}

/// Turns the byte offsets of the problems found in an archive's files into lines and columns,
/// reading the archive again (only the entries up to the last one with a problem).
fn locate_in_archive(
    path: &Path,
    name: &str,
    limits: ArchiveLimits,
    unlocated: Vec<(usize, String, AtOffset)>,
    facts: &mut InstanceFacts,
) {
    let mut locations: BTreeMap<usize, Location> = BTreeMap::new();
    let wanted: BTreeMap<usize, u64> = unlocated
        .iter()
        .filter_map(|(entry, _, p)| p.offset().map(|offset| (*entry, offset)))
        .collect();
    let last = wanted.keys().next_back().copied();
    let mut index = 0usize;
    if let Some(last) = last {
        let walked = for_each_archive_file(path, name, limits, |_, _, _, reader| {
            let entry = index;
            index += 1;
            if let Some(&offset) = wanted.get(&entry) {
                if let Ok(location) = location_of(reader, offset) {
                    locations.insert(entry, location);
                }
            }
            if entry == last {
                // Everything wanted is found: stop reading (not an error of the archive).
                return Err(InstanceError::Archive {
                    path: path.to_path_buf(),
                    problem: String::new(),
                });
            }
            Ok(())
        });
        // The first pass read the whole archive: a failure of this one (the archive replaced
        // meanwhile) only leaves the problems without their place.
        let _ = walked;
    }
    for (entry, rel, problem) in unlocated {
        let problem = problem.at_location(locations.get(&entry).copied());
        if rel == "model.pnml" {
            facts.net = Err(problem);
        } else {
            facts.formulas.insert(rel, Err(problem));
        }
    }
}

/// Hashes and counts what is read through it.
struct HashingReader<R> {
    inner: R,
    hasher: blake3::Hasher,
    count: u64,
}

impl<R: Read> HashingReader<R> {
    fn new(inner: R) -> HashingReader<R> {
        HashingReader {
            inner,
            hasher: blake3::Hasher::new(),
            count: 0,
        }
    }

    /// The digest and the size of everything read.
    fn finish(self) -> (Digest, u64) {
        (*self.hasher.finalize().as_bytes(), self.count)
    }
}

impl<R: Read> Read for HashingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hasher.update(&buf[..n]);
        self.count += n as u64;
        Ok(n)
    }
}

/// Records what mccbuild needs from the instance's special files (`open` may be called twice:
/// a problem is located by reading the file again).
fn inspect<R: io::BufRead>(
    facts: &mut InstanceFacts,
    rel: &str,
    size: u64,
    open: impl Fn() -> io::Result<R>,
) {
    if size <= 256 && !rel.contains('/') && !rel.ends_with(".xml") && rel != "model.pnml" {
        if let Ok(mut reader) = open() {
            let mut text = String::new();
            if reader.read_to_string(&mut text).is_ok() {
                facts.texts.insert(rel.to_string(), text);
            }
        }
        if rel == "NewModel" {
            facts.new_model = true;
        }
    } else if rel == "NewModel" {
        facts.new_model = true;
    } else if rel == "model.pnml" {
        facts.net = pnml_info(open);
    } else if rel.ends_with(".xml") && !rel.contains('/') && !rel.starts_with("GenericProperties") {
        match formula_ids(open) {
            Ok(Some(ids)) => {
                facts.formulas.insert(rel.to_string(), Ok(ids));
            }
            Ok(None) => {}
            Err(e) => {
                facts.formulas.insert(rel.to_string(), Err(e));
            }
        }
    }
}

/// Materialises an instance in `dest` (a fresh folder), without the files in `hidden` (rule M-9).
pub fn materialize(
    name: &str,
    source: &InstanceSource,
    dest: &Path,
    hidden: &[&str],
    limits: ArchiveLimits,
) -> Result<(), InstanceError> {
    create_dir(dest)?;
    match source {
        InstanceSource::Imported(path) => Err(InstanceError::ImportedOnly {
            name: name.to_string(),
            results: path.clone(),
        }),
        InstanceSource::Folder(root) => {
            let mut files = Vec::new();
            walk_folder(root, root, &mut files)?;
            for (rel, meta) in files {
                if hidden.contains(&rel.as_str()) {
                    continue;
                }
                let target = dest.join(&rel);
                if let Some(parent) = target.parent() {
                    create_dir(parent)?;
                }
                fs::copy(root.join(&rel), &target).map_err(|source| InstanceError::Write {
                    path: target.clone(),
                    source,
                })?;
                set_executable(&target, meta.permissions().mode() & 0o111 != 0);
            }
            Ok(())
        }
        InstanceSource::Archive(path) => {
            for_each_archive_file(path, name, limits, |rel, _, executable, reader| {
                if hidden.contains(&rel) {
                    return Ok(());
                }
                let target = dest.join(rel);
                if let Some(parent) = target.parent() {
                    create_dir(parent)?;
                }
                let written = File::create(&target).and_then(|mut out| {
                    io::copy(reader, &mut out)?;
                    out.flush()
                });
                written.map_err(|source| InstanceError::Write {
                    path: target.clone(),
                    source,
                })?;
                set_executable(&target, executable);
                Ok(())
            })
        }
    }
}

fn create_dir(dir: &Path) -> Result<(), InstanceError> {
    fs::create_dir_all(dir).map_err(|source| InstanceError::Write {
        path: dir.to_path_buf(),
        source,
    })
}

fn set_executable(path: &Path, executable: bool) {
    let mode = if executable { 0o755 } else { 0o644 };
    let _ = fs::set_permissions(path, fs::Permissions::from_mode(mode));
}

/// The digest of everything a reader yields (re-exported for callers hashing instance files).
pub fn digest_of(reader: impl Read) -> io::Result<Digest> {
    hash_reader(reader)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_archive_facts() {
        let Some(data) = mccbuild_testkit::mcc_data() else {
            return;
        };
        let archive = data.join("INPUTS/Philosophers-PT-000005.tgz");
        let source = InstanceSource::Archive(archive);
        let mut cache = DigestCache::in_memory();
        let facts = instance_facts(
            "Philosophers-PT-000005",
            &source,
            &mut cache,
            ArchiveLimits::default(),
        )
        .unwrap();
        assert!(facts.has_file("model.pnml"));
        assert!(facts.has_file("GenericPropertiesVerdict.xml"));
        assert!(!facts.new_model);
        assert!(!facts.net.as_ref().unwrap().colored);
        let ub = facts.formulas["UpperBounds.xml"].as_ref().unwrap();
        assert_eq!(ub.len(), 16);
        assert_eq!(ub[0], "Philosophers-PT-000005-UpperBounds-00");
        // The folder and the archive of the same instance have the same content digest.
        let folder = InstanceSource::Folder(data.join("fixtures/Philosophers-PT-000005"));
        let folder_facts = instance_facts(
            "Philosophers-PT-000005",
            &folder,
            &mut cache,
            ArchiveLimits::default(),
        )
        .unwrap();
        let ignore_oracle: Vec<&str> = folder_facts
            .files
            .iter()
            .filter(|f| f.path.starts_with("oracle/"))
            .map(|f| f.path.as_str())
            .collect();
        assert_eq!(
            folder_facts.visible_digest(&ignore_oracle),
            facts.visible_digest(&[])
        );
        assert_ne!(
            facts.visible_digest(&["GenericPropertiesVerdict.xml"]),
            facts.visible_digest(&[])
        );
    }

    fn tar_gz(
        entries: impl FnOnce(&mut tar::Builder<flate2::write::GzEncoder<Vec<u8>>>),
    ) -> Vec<u8> {
        let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(
            Vec::new(),
            flate2::Compression::fast(),
        ));
        entries(&mut builder);
        builder.into_inner().unwrap().finish().unwrap()
    }

    fn raw_file(
        builder: &mut tar::Builder<flate2::write::GzEncoder<Vec<u8>>>,
        path: &str,
        content: &[u8],
    ) {
        // Write the name into the header by hand: tar's safe setters refuse `..` and `/x`.
        let mut header = tar::Header::new_gnu();
        header.as_gnu_mut().unwrap().name[..path.len()].copy_from_slice(path.as_bytes());
        header.set_size(content.len() as u64);
        header.set_mode(0o644);
        header.set_entry_type(tar::EntryType::Regular);
        header.set_cksum();
        builder.append(&header, content).unwrap();
    }

    fn check_archive(bytes: &[u8], limits: ArchiveLimits) -> Result<Vec<String>, String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("X-PT-1.tgz");
        fs::write(&path, bytes).unwrap();
        let dest = dir.path().join("out");
        let source = InstanceSource::Archive(path);
        materialize("X-PT-1", &source, &dest, &[], limits).map_err(|e| e.to_string())?;
        let mut found = Vec::new();
        walk_folder(&dest, &dest, &mut Vec::new()).unwrap();
        for e in fs::read_dir(&dest).unwrap() {
            found.push(e.unwrap().file_name().to_string_lossy().into_owned());
        }
        found.sort();
        // Nothing was written next to the destination.
        let mut siblings: Vec<String> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        siblings.sort();
        assert_eq!(siblings, vec!["X-PT-1.tgz", "out"]);
        Ok(found)
    }

    #[test]
    fn safe_archive_unpacks_without_its_top_folder() {
        let bytes = tar_gz(|b| {
            raw_file(b, "X-PT-1/model.pnml", b"<pnml/>");
            raw_file(b, "X-PT-1/iscolored", b"FALSE\n");
        });
        assert_eq!(
            check_archive(&bytes, ArchiveLimits::default()).unwrap(),
            vec!["iscolored", "model.pnml"]
        );
    }

    #[test]
    fn hostile_archives_are_refused() {
        let dotdot = tar_gz(|b| raw_file(b, "X-PT-1/../../escaped", b"x"));
        assert!(check_archive(&dotdot, ArchiveLimits::default())
            .unwrap_err()
            .contains("escapes the instance folder"));
        let absolute = tar_gz(|b| raw_file(b, "/tmp/escaped", b"x"));
        assert!(check_archive(&absolute, ArchiveLimits::default())
            .unwrap_err()
            .contains("absolute path"));
        let symlink = tar_gz(|b| {
            let mut header = tar::Header::new_gnu();
            header.set_entry_type(tar::EntryType::Symlink);
            header.set_size(0);
            b.append_link(&mut header, "X-PT-1/model.pnml", "/etc/passwd")
                .unwrap();
        });
        assert!(check_archive(&symlink, ArchiveLimits::default())
            .unwrap_err()
            .contains("symbolic link"));
        let hardlink = tar_gz(|b| {
            let mut header = tar::Header::new_gnu();
            header.set_entry_type(tar::EntryType::Link);
            header.set_size(0);
            b.append_link(&mut header, "X-PT-1/model.pnml", "/etc/passwd")
                .unwrap();
        });
        assert!(check_archive(&hardlink, ArchiveLimits::default())
            .unwrap_err()
            .contains("hard link"));
        assert!(check_archive(b"not a gzip at all", ArchiveLimits::default()).is_err());
        let special = |kind: tar::EntryType| {
            tar_gz(|b| {
                let mut header = tar::Header::new_gnu();
                header.set_path("X-PT-1/model.pnml").unwrap();
                header.set_entry_type(kind);
                let mut data: &[u8] = &[];
                if kind == tar::EntryType::GNUSparse {
                    // 3 GiB in 1 byte: a hole, then the last byte (its reader yields the zeros).
                    let gnu = header.as_gnu_mut().unwrap();
                    gnu.realsize = *b"30000000000\0";
                    gnu.sparse[0].offset = *b"27777777777\0";
                    gnu.sparse[0].numbytes = *b"00000000001\0";
                    data = b"x";
                }
                header.set_size(data.len() as u64);
                header.set_cksum();
                b.append(&header, data).unwrap();
            })
        };
        for kind in [
            tar::EntryType::Char,
            tar::EntryType::Block,
            tar::EntryType::Fifo,
            tar::EntryType::GNUSparse,
        ] {
            let refused = check_archive(&special(kind), ArchiveLimits::default());
            assert!(
                refused.as_ref().unwrap_err().contains("not a plain file"),
                "{kind:?}: {refused:?}"
            );
        }
        let empty_path = tar_gz(|b| raw_file(b, "X-PT-1/", b"x"));
        assert!(check_archive(&empty_path, ArchiveLimits::default())
            .unwrap_err()
            .contains("empty path"));
        let mut truncated = tar_gz(|b| raw_file(b, "X-PT-1/model.pnml", &[b'x'; 100_000]));
        truncated.truncate(truncated.len() / 2);
        assert!(check_archive(&truncated, ArchiveLimits::default()).is_err());
    }

    /// Issue 13, item 7: an entry far larger than memory should allow is hashed and parsed as it
    /// streams by (the binary's peak memory is measured in tests/archives.rs); the facts are
    /// those of the folder with the same files, and a problem in a formula file of an archive
    /// still has its line.
    #[test]
    fn archive_facts_stream_and_locate_problems() {
        let big = 40 << 20;
        let bytes = tar_gz(|b| {
            raw_file(
                b,
                "X-PT-1/model.pnml",
                br#"<pnml><net type="ptnet"/></pnml>"#,
            );
            let mut header = tar::Header::new_gnu();
            header.set_path("X-PT-1/zeros").unwrap();
            header.set_size(big);
            header.set_mode(0o644);
            header.set_cksum();
            b.append(&header, io::repeat(0).take(big)).unwrap();
            raw_file(b, "X-PT-1/iscolored", b"FALSE\n");
            raw_file(
                b,
                "X-PT-1/UpperBounds.xml",
                b"<property-set>\n<property><id> </id></property>\n</property-set>",
            );
        });
        let dir = tempfile::tempdir().unwrap();
        let archive = dir.path().join("X-PT-1.tgz");
        fs::write(&archive, bytes).unwrap();
        let mut cache = DigestCache::in_memory();
        let source = InstanceSource::Archive(archive);
        let facts =
            instance_facts("X-PT-1", &source, &mut cache, ArchiveLimits::default()).unwrap();
        let zeros = facts.files.iter().find(|f| f.path == "zeros").unwrap();
        assert_eq!(zeros.size, big);
        assert_eq!(zeros.digest, digest_of(io::repeat(0).take(big)).unwrap());
        assert_eq!(facts.texts["iscolored"], "FALSE\n");
        assert_eq!(facts.net.as_ref().unwrap().net_type, "ptnet");
        let problem = facts.formulas["UpperBounds.xml"].as_ref().unwrap_err();
        assert!(problem.message.contains("empty <id>"), "{problem:?}");
        assert_eq!(problem.location.map(|l| l.line), Some(2), "{problem:?}");
        // The same files in a folder: the same facts.
        let folder = dir.path().join("folder");
        materialize("X-PT-1", &source, &folder, &[], ArchiveLimits::default()).unwrap();
        let from_folder = instance_facts(
            "X-PT-1",
            &InstanceSource::Folder(folder),
            &mut cache,
            ArchiveLimits::default(),
        )
        .unwrap();
        assert_eq!(*from_folder, *facts);
    }

    #[test]
    fn archive_bombs_stop_at_the_bound() {
        // 64 MB of zeros compress to ~64 KB; with a 16 MB bound the expansion stops early.
        let bomb = tar_gz(|b| {
            let zeros = vec![0u8; 64 << 20];
            raw_file(b, "X-PT-1/model.pnml", &zeros);
        });
        assert!(bomb.len() < 1 << 20);
        let limits = ArchiveLimits {
            max_bytes: 16 << 20,
            max_entries: 10,
        };
        assert!(check_archive(&bomb, limits)
            .unwrap_err()
            .contains("more than 16 MB"));
        let many = tar_gz(|b| {
            for i in 0..20 {
                raw_file(b, &format!("X-PT-1/f{i}"), b"x");
            }
        });
        assert!(check_archive(&many, limits)
            .unwrap_err()
            .contains("more than 10 entries"));
    }
}
