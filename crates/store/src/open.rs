//! Opening a store: its folders, its marker (`STORE`) and format, and the upgrade of a format 1
//! store in place.

use std::fs;
use std::io;
use std::path::Path;

use mccbuild_core::RunKey;
use mccbuild_core::fsio::{write_atomically, write_atomically_in_batch};

use crate::{RECORD_FORMAT, RunRecord, STORE_FORMAT, Store, StoreError, encode_record};

/// What a damaged marker holds, for a message: its first bytes, each byte that is not printable
/// ASCII escaped (`\n`, `\x00`, `\xff`), shortened with `...` and its size when longer.
fn shown_marker(bytes: &[u8]) -> String {
    const SHOWN: usize = 40;
    let trimmed = bytes.trim_ascii();
    let head = &trimmed[..trimmed.len().min(SHOWN)];
    let mut shown = head.escape_ascii().to_string();
    if trimmed.len() > SHOWN {
        shown.push_str(&format!("... ({} bytes)", bytes.len()));
    }
    shown
}

impl Store {
    /// Opens (creating it if needed) the store at `root`.
    pub fn open(root: &Path) -> Result<Store, StoreError> {
        let marker = root.join("STORE");
        for dir in ["runs", "tmp", "meta"] {
            fs::create_dir_all(root.join(dir)).map_err(|source| StoreError::Create {
                path: root.to_path_buf(),
                source,
            })?;
        }
        let mut notes = Vec::new();
        match fs::read(&marker) {
            Ok(bytes) => {
                let text = String::from_utf8_lossy(&bytes);
                let version = text
                    .trim()
                    .strip_prefix("mccbuild store ")
                    .and_then(|v| v.parse::<u32>().ok());
                match version {
                    Some(STORE_FORMAT) => {}
                    Some(1) => {
                        let n =
                            upgrade_from_format_1(root).map_err(|source| StoreError::Upgrade {
                                path: root.to_path_buf(),
                                source,
                            })?;
                        notes.push(format!(
                            "upgraded the store {} from format 1 to {STORE_FORMAT}: {n} records now carry a content digest",
                            root.display()
                        ));
                    }
                    Some(_) => {
                        return Err(StoreError::OtherFormat {
                            path: root.to_path_buf(),
                            found: text.trim().to_string(),
                        });
                    }
                    None => {
                        return Err(StoreError::DamagedMarker {
                            path: marker,
                            found: shown_marker(&bytes),
                        });
                    }
                }
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                write_atomically(
                    &marker,
                    format!("mccbuild store {STORE_FORMAT}\n").as_bytes(),
                )
                .map_err(|source| StoreError::Write {
                    path: marker.clone(),
                    source,
                })?;
            }
            Err(source) => {
                return Err(StoreError::Read {
                    path: marker,
                    source,
                });
            }
        }
        Ok(Store {
            root: root.to_path_buf(),
            notes,
        })
    }
}

fn sync_filesystem(root: &Path) -> io::Result<()> {
    let dir = fs::File::open(root)?;
    rustix::fs::syncfs(&dir)?;
    Ok(())
}

/// Upgrades a format 1 store: each readable record of format 1 is rewritten as format 2 (with its
/// content digest); damaged ones are left as they are (they are reported and their runs done
/// again, as always). Rerunnable: an interrupted upgrade goes on where it stopped.
fn upgrade_from_format_1(root: &Path) -> io::Result<usize> {
    let mut n = 0;
    let runs = root.join("runs");
    for shard in fs::read_dir(&runs)? {
        let shard = shard?.path();
        if !shard.is_dir() {
            continue;
        }
        for entry in fs::read_dir(&shard)? {
            let path = entry?.path();
            let Some(key) = path
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_suffix(".json"))
                .and_then(RunKey::from_hex)
            else {
                continue;
            };
            let Ok(bytes) = fs::read(&path) else { continue };
            let Ok(mut record) = serde_json::from_slice::<RunRecord>(&bytes) else {
                continue;
            };
            if record.format != 1 || record.key != key {
                continue;
            }
            record.format = RECORD_FORMAT;
            let (bytes, _) = encode_record(&record)?;
            write_atomically_in_batch(&path, &bytes)?;
            n += 1;
        }
    }
    sync_filesystem(root)?;
    // The old index has no digests (and another magic): it is rebuilt from the records.
    match fs::remove_file(root.join("index.bin")) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    write_atomically(
        &root.join("STORE"),
        format!("mccbuild store {STORE_FORMAT}\n").as_bytes(),
    )?;
    Ok(n)
}
