//! The facts of an instance folder: each file digested (through the digest cache) and the
//! special files inspected (formula files, `model.pnml`, `NewModel`, small text files).

use std::fs::{self, File};
use std::io::{self, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use super::{FileEntry, InstanceError, InstanceFacts};
use crate::digest_cache::DigestCache;
use crate::model_files::{formula_ids, pnml_info};

/// The facts of the folder at `root` from its plain files (as [`super::walk_folder`] lists them).
pub(super) fn folder_facts(
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
