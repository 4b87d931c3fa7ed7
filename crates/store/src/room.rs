//! Whether records can be written: a writable store with room on its file system.

use std::fs;
use std::io;

use crate::{Store, StoreError};

/// The least free space a command that records runs starts with (records are small; a store
/// with less is about to fill up, and a run made then not recorded is lost work).
pub const MIN_FREE_BYTES: u64 = 16 << 20;

impl Store {
    /// Checks that records can be written (commands that record runs check before they start:
    /// a run made and then not recorded would be lost work).
    /// It also checks that the store's file system has [`MIN_FREE_BYTES`] free.
    pub fn check_writable(&self) -> Result<(), StoreError> {
        let probe = self.temp_path("write-check");
        let result = fs::write(&probe, b"mccbuild").and_then(|()| fs::remove_file(&probe));
        if let Err(source) = result {
            let _ = fs::remove_file(&probe);
            if source.raw_os_error() == Some(rustix::io::Errno::NOSPC.raw_os_error()) {
                return Err(StoreError::Full {
                    path: self.root.clone(),
                    free: self.free_bytes().unwrap_or(0),
                });
            }
            return Err(StoreError::ReadOnly {
                path: self.root.clone(),
                source,
            });
        }
        match self.free_bytes() {
            Ok(free) if free < MIN_FREE_BYTES => Err(StoreError::Full {
                path: self.root.clone(),
                free,
            }),
            _ => Ok(()),
        }
    }

    /// Free bytes on the store's file system (for an unprivileged writer).
    pub fn free_bytes(&self) -> io::Result<u64> {
        let st = rustix::fs::statvfs(&self.root)?;
        Ok(st.f_bavail * st.f_frsize)
    }
}

#[cfg(test)]
mod tests {
    use crate::Store;

    #[test]
    fn a_store_with_room_is_writable_and_a_gone_one_has_no_free_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        assert!(store.free_bytes().unwrap() > 0);
        store.check_writable().unwrap();
        std::fs::remove_dir_all(dir.path()).unwrap();
        let error = store.free_bytes().unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::NotFound, "{error}");
    }
}
