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
use crate::model_files::{formula_ids, pnml_info};
pub use crate::model_files::{FileProblem, NetInfo};

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

fn archive_facts(
    path: &Path,
    name: &str,
    limits: ArchiveLimits,
) -> Result<InstanceFacts, InstanceError> {
    let mut facts = InstanceFacts::empty();
    for_each_archive_file(path, name, limits, |rel, size, executable, reader| {
        // Read the entry once: inspect what needs parsing from memory, hash everything.
        let mut content = Vec::with_capacity(size.min(1 << 26) as usize);
        reader
            .read_to_end(&mut content)
            .map_err(|e| InstanceError::Archive {
                path: path.to_path_buf(),
                problem: format!("entry {rel}: {e}"),
            })?;
        let digest = *blake3::hash(&content).as_bytes();
        facts.files.push(FileEntry {
            path: rel.to_string(),
            size: content.len() as u64,
            digest,
            executable,
        });
        inspect(&mut facts, rel, content.len() as u64, || {
            Ok::<_, io::Error>(&content[..])
        });
        Ok(())
    })?;
    facts.files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(facts)
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
