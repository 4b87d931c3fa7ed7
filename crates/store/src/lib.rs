//! The store: one record per run key, under `cache/` by default.
//!
//! Layout (docs/cache.md):
//! - `STORE`: the store format version;
//! - `runs/<2 hex>/<key>.json`: run records, each written atomically (temporary file + rename),
//!   by whichever process ran the run (a local job, a Slurm step);
//! - `index.bin`: summaries of the records (what scoring needs), checksummed, so that a no-op
//!   `mccbuild run` over 300,000 runs reads one file instead of 300,000; it is reconciled with
//!   `runs/` through the modification times of the 256 shard folders, and rebuilt from the
//!   records when it is missing or damaged;
//! - `tools/<setup digest>/`: what tools' setup commands produced;
//! - `meta/`: caches (file digests).

pub mod index;
pub mod record;

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

pub use index::{Index, Summary};
pub use record::{RunRecord, SlurmPlacement, VmInfo, RECORD_FORMAT};

use mccbuild_core::fsio::{temp_sibling, write_atomically, write_atomically_in_batch};
use mccbuild_core::RunKey;

/// The store's own format version (the layout of folders and files).
pub const STORE_FORMAT: u32 = 1;

/// Why the store cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot create the store {path}: {source}")]
    Create { path: PathBuf, source: io::Error },
    #[error("{path} is a store of another format (`{found}`); this mccbuild reads format {STORE_FORMAT}. Use another `store` in [contest] or remove that folder")]
    OtherFormat { path: PathBuf, found: String },
    #[error("cannot read {path}: {source}")]
    Read { path: PathBuf, source: io::Error },
    #[error("cannot write {path}: {source}")]
    Write { path: PathBuf, source: io::Error },
    #[error("the store {path} cannot be written ({source}); a command that records runs needs a writable store: check its permissions and its file system (read-only?), or set `store` in [contest]")]
    ReadOnly { path: PathBuf, source: io::Error },
    #[error("cannot read the run record {path}: {reason}")]
    Record { path: PathBuf, reason: String },
}

/// Why a record cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {reason}")]
pub struct CorruptRecord {
    pub path: PathBuf,
    pub reason: String,
}

/// A store folder.
#[derive(Clone, Debug)]
pub struct Store {
    root: PathBuf,
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
        match fs::read_to_string(&marker) {
            Ok(text) => {
                let version = text
                    .trim()
                    .strip_prefix("mccbuild store ")
                    .and_then(|v| v.parse::<u32>().ok());
                if version != Some(STORE_FORMAT) {
                    return Err(StoreError::OtherFormat {
                        path: root.to_path_buf(),
                        found: text.trim().to_string(),
                    });
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
                })
            }
        }
        Ok(Store {
            root: root.to_path_buf(),
        })
    }

    /// Checks that records can be written (commands that record runs check before they start:
    /// a run made and then not recorded would be lost work).
    pub fn check_writable(&self) -> Result<(), StoreError> {
        let probe = self.temp_path("write-check");
        let result = fs::write(&probe, b"mccbuild").and_then(|()| fs::remove_file(&probe));
        result.map_err(|source| StoreError::ReadOnly {
            path: self.root.clone(),
            source,
        })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn record_path(&self, key: &RunKey) -> PathBuf {
        let hex = key.hex();
        self.root
            .join("runs")
            .join(&hex[..2])
            .join(format!("{hex}.json"))
    }

    pub fn index_path(&self) -> PathBuf {
        self.root.join("index.bin")
    }

    pub fn tools_dir(&self) -> PathBuf {
        self.root.join("tools")
    }

    pub fn meta_dir(&self) -> PathBuf {
        self.root.join("meta")
    }

    /// A fresh temporary path inside the store (same filesystem, so renames are atomic).
    pub fn temp_path(&self, hint: &str) -> PathBuf {
        temp_sibling(&self.root.join("tmp").join(hint))
    }

    /// Reads one record: `Ok(None)` if absent, an error if it is unreadable or not a record of
    /// this key.
    pub fn get(&self, key: &RunKey) -> Result<Option<RunRecord>, CorruptRecord> {
        let path = self.record_path(key);
        let bytes = match fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(CorruptRecord {
                    path,
                    reason: format!("cannot read: {e}"),
                })
            }
        };
        parse_record(&path, &bytes, key).map(Some)
    }

    /// Writes a record atomically: a reader sees the old state or the whole new record.
    pub fn put(&self, record: &RunRecord) -> io::Result<()> {
        let json = serde_json::to_vec(record).map_err(io::Error::other)?;
        write_atomically(&self.record_path(&record.key), &json)
    }

    /// Writes many records (an import, a generated store): each atomically, made durable together
    /// by one `syncfs` at the end instead of one fsync per record.
    pub fn put_many<'a>(
        &self,
        records: impl IntoIterator<Item = &'a RunRecord>,
    ) -> io::Result<usize> {
        let mut n = 0;
        for record in records {
            let json = serde_json::to_vec(record).map_err(io::Error::other)?;
            write_atomically_in_batch(&self.record_path(&record.key), &json)?;
            n += 1;
        }
        let dir = fs::File::open(&self.root)?;
        // SAFETY: syncfs on a file descriptor we own.
        if unsafe { libc::syncfs(std::os::unix::io::AsRawFd::as_raw_fd(&dir)) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(n)
    }

    /// Removes a record (to have its run redone).
    pub fn remove(&self, key: &RunKey) -> io::Result<()> {
        match fs::remove_file(self.record_path(key)) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }
}

/// Decodes and checks a record file's content.
pub fn parse_record(path: &Path, bytes: &[u8], key: &RunKey) -> Result<RunRecord, CorruptRecord> {
    let corrupt = |reason: String| CorruptRecord {
        path: path.to_path_buf(),
        reason,
    };
    #[derive(serde::Deserialize)]
    struct FormatOnly {
        format: u32,
    }
    let format = serde_json::from_slice::<FormatOnly>(bytes)
        .map_err(|e| corrupt(format!("not a run record: {e}")))?;
    if format.format != RECORD_FORMAT {
        return Err(corrupt(format!(
            "record format {} (this mccbuild reads {RECORD_FORMAT})",
            format.format
        )));
    }
    let record: RunRecord =
        serde_json::from_slice(bytes).map_err(|e| corrupt(format!("damaged run record: {e}")))?;
    if record.key != *key {
        return Err(corrupt(format!(
            "holds the record of run {} instead",
            record.key
        )));
    }
    Ok(record)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use mccbuild_core::protocol::Answer;
    use mccbuild_core::{CapturedOutput, Measurement, Response, Termination, Value};
    use mccbuild_rules::edition::Limits;

    pub fn sample_record(key: RunKey) -> RunRecord {
        RunRecord {
            format: RECORD_FORMAT,
            key,
            mccbuild_version: "test".into(),
            tool: "explorer".into(),
            instance: "Philosophers-PT-000002".into(),
            examination: "StateSpace".into(),
            executor: [("kind".to_string(), "local".to_string())].into(),
            limits: Limits {
                time_s: 60,
                memory_mb: 1024,
                time: Default::default(),
            },
            started_at: "2026-11-22T00:00:00Z".into(),
            finished_at: "2026-11-22T00:00:01Z".into(),
            measurement: Measurement {
                termination: Termination::Exit { code: 0 },
                cpu_time_s: 0.5,
                wall_time_s: 0.6,
                peak_memory_bytes: 1 << 20,
            },
            method: "test".into(),
            cores: vec![0],
            host: "h".into(),
            response: Response::Answered,
            answers: vec![Answer {
                id: "STATES".into(),
                position: 0,
                value: Value::Int(6),
                techniques: vec!["EXPLICIT".into()],
            }],
            diagnostics: vec![],
            stdout: CapturedOutput {
                text: "STATE_SPACE STATES 6\n".into(),
                bytes: 21,
                truncated: false,
            },
            stderr: CapturedOutput::default(),
            vm: None,
            slurm: None,
        }
    }

    #[test]
    fn records_with_and_without_vm_load() {
        // Records written before `vm` existed have no such field.
        let plain = serde_json::to_value(sample_record(RunKey([4; 32]))).unwrap();
        assert!(plain.get("vm").is_none());
        let back: RunRecord = serde_json::from_value(plain).unwrap();
        assert_eq!(back.vm, None);
        let mut in_vm = sample_record(RunKey([5; 32]));
        in_vm.measurement.termination = Termination::GuestPanic;
        in_vm.vm = Some(crate::VmInfo {
            accel: "tcg".into(),
            guest: "kernel".into(),
            cpu_model: "Westmere".into(),
            memory_mb: 2048,
            vcpus: 1,
            qemu_cpu_time_s: 8.5,
            vm_wall_time_s: 12.0,
            note: String::new(),
            console: "Kernel panic".into(),
        });
        let text = serde_json::to_string(&in_vm).unwrap();
        assert!(text.contains("\"guest_panic\"") && text.contains("\"qemu_cpu_time_s\""));
        assert_eq!(serde_json::from_str::<RunRecord>(&text).unwrap(), in_vm);
    }

    #[test]
    fn put_then_get_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let key = RunKey([3; 32]);
        assert_eq!(store.get(&key).unwrap(), None);
        let record = sample_record(key);
        store.put(&record).unwrap();
        assert_eq!(store.get(&key).unwrap(), Some(record));
        // No temporary file is left behind.
        let shard = store.record_path(&key).parent().unwrap().to_path_buf();
        assert_eq!(fs::read_dir(shard).unwrap().count(), 1);
    }

    #[test]
    fn corrupt_and_foreign_records_are_errors_not_panics() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let key = RunKey([4; 32]);
        let path = store.record_path(&key);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, b"{\"format\": 1, \"key\": tru").unwrap();
        assert!(store
            .get(&key)
            .unwrap_err()
            .reason
            .contains("not a run record"));
        fs::write(&path, b"{\"format\": 99}").unwrap();
        assert!(store
            .get(&key)
            .unwrap_err()
            .reason
            .contains("record format 99"));
        let other = sample_record(RunKey([5; 32]));
        fs::write(&path, serde_json::to_vec(&other).unwrap()).unwrap();
        assert!(store.get(&key).unwrap_err().reason.contains("instead"));
    }

    #[test]
    fn a_store_of_another_format_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("STORE"), "mccbuild store 999\n").unwrap();
        assert!(Store::open(dir.path())
            .unwrap_err()
            .to_string()
            .contains("another format"));
    }
}
