//! Model instances: folders in the MCC layout or BenchKit `.tgz` archives (read safely by
//! [`crate::archive`]), used as they are: their files listed and digested, their special files
//! inspected once per version of the instance, and their content copied into a run's folder.
//!
//! This file holds the facts mccbuild keeps of an instance and reads them; a folder's are made
//! by `folder_facts`, an archive's by `archive_facts`, and `materialize` copies an instance
//! into a run's folder.

mod archive_facts;
mod folder_facts;
mod materialize;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use mccbuild_core::digest::{Digest, hash_reader};
use mccbuild_core::stamp::FileStamp;
use serde::{Deserialize, Serialize};

use self::archive_facts::archive_facts;
use self::folder_facts::folder_facts;
use crate::digest_cache::DigestCache;
use crate::manifest::InstanceSource;

pub use self::materialize::materialize;
pub use crate::archive::ArchiveLimits;
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

impl InstanceError {
    /// The file a problem is about and what is wrong with it, for a [`Problem`](mccbuild_core::diag::Problem)
    /// that names the file itself: an archive's problem is not prefixed with its path again.
    /// `None`: the message names what it is about.
    pub fn placed(&self) -> (Option<&Path>, String) {
        match self {
            InstanceError::Archive { path, problem } => (Some(path), problem.clone()),
            other => (None, other.to_string()),
        }
    }
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
            let stamps = [(String::new(), FileStamp::of(&meta))];
            cache
                .derived(path, &stamps, |_| archive_facts(path, name, limits))
                .map(Arc::new)
        }
        InstanceSource::Folder(path) => {
            let mut files = Vec::new();
            walk_folder(path, path, &mut files)?;
            let stamps: Vec<(String, FileStamp)> = files
                .iter()
                .map(|(rel, meta)| (rel.clone(), FileStamp::of(meta)))
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

/// The digest of everything a reader yields (re-exported for callers hashing instance files).
pub fn digest_of(reader: impl Read) -> io::Result<Digest> {
    hash_reader(reader)
}
