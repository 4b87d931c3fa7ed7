//! Materialising an instance: its files copied into a run's folder, without those the run must
//! not see (rule M-9).

use std::fs::{self, File};
use std::io::{self, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use super::{ArchiveLimits, InstanceError, walk_folder};
use crate::archive::for_each_archive_file;
use crate::manifest::InstanceSource;

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
