//! Writing files so that a crash never leaves half of one: the one atomic write of mccbuild.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Writes a file atomically and durably: a temporary file in the same folder, written and
/// synced, renamed over `path` (tempfile's `persist`), then the folder synced so that the rename
/// itself survives a crash. A reader sees the old content or the new one, never a mix. The
/// folder is created if needed.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write(path, bytes, true, None)?;
    sync_dir(parent_of(path))
}

/// [`write_atomically`] for one file of many written together: atomic, but made durable by the
/// caller, once for all of them (a `syncfs`, or [`sync_dir`] of their folder).
pub fn write_atomically_in_batch(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write(path, bytes, false, None)
}

/// The mode of a published file (a page of the site, an export): readable by everyone, so that
/// a web server serving the folder can read it whatever the umask of the process that wrote it.
pub const PUBLISHED_FILE_MODE: u32 = 0o644;
/// The mode of a published folder: everyone may list and enter it.
pub const PUBLISHED_DIR_MODE: u32 = 0o755;

/// [`write_atomically`] for a file to publish: mode [`PUBLISHED_FILE_MODE`] (a temporary file
/// is created private, 0600, and would keep that mode).
pub fn write_published(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write(path, bytes, true, Some(PUBLISHED_FILE_MODE))?;
    sync_dir(parent_of(path))
}

/// [`write_atomically_in_batch`] for a file to publish (mode [`PUBLISHED_FILE_MODE`]).
pub fn write_published_in_batch(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write(path, bytes, false, Some(PUBLISHED_FILE_MODE))
}

/// Creates a folder to publish and its missing parents; gives the folder itself mode
/// [`PUBLISHED_DIR_MODE`] (set explicitly: the umask does not narrow it).
pub fn create_published_dir(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    fs::create_dir_all(dir)?;
    fs::set_permissions(dir, fs::Permissions::from_mode(PUBLISHED_DIR_MODE))
}

fn write(path: &Path, bytes: &[u8], sync: bool, mode: Option<u32>) -> io::Result<()> {
    let dir = parent_of(path);
    fs::create_dir_all(dir)?;
    let mut file = tempfile::Builder::new()
        .prefix(&format!(".{}.", file_name(path)))
        .suffix(".tmp")
        .tempfile_in(dir)?;
    file.write_all(bytes)?;
    if let Some(mode) = mode {
        use std::os::unix::fs::PermissionsExt;
        // fchmod: not narrowed by the umask, unlike a mode given at creation.
        file.as_file()
            .set_permissions(fs::Permissions::from_mode(mode))?;
    }
    if sync {
        file.as_file().sync_all()?;
    }
    file.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Makes the entries of a folder (files created, renamed or removed in it) durable.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    fs::File::open(dir)?.sync_all()
}

/// A unique temporary path next to `path`, for writers that rename into place themselves.
pub fn temp_sibling(path: &Path) -> PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    path.with_file_name(format!(
        ".{}.{}.{n}.tmp",
        file_name(path),
        std::process::id()
    ))
}

fn parent_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_the_file_and_leaves_no_temporary_behind() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/file.json");
        write_atomically(&path, b"one").unwrap();
        write_atomically(&path, b"two").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"two");
        let names: Vec<_> = fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("file.json")]);
    }

    #[test]
    fn a_file_that_cannot_be_written_is_an_error_and_the_old_one_stays() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("file");
        write_atomically(&path, b"old").unwrap();
        // A folder in the way of the rename.
        let blocked = dir.path().join("folder");
        fs::create_dir(&blocked).unwrap();
        fs::write(blocked.join("x"), b"x").unwrap();
        assert!(write_atomically(&blocked, b"new").is_err());
        assert_eq!(fs::read(&path).unwrap(), b"old");
    }

    #[test]
    fn temporary_siblings_are_unique_and_beside_the_file() {
        let a = temp_sibling(Path::new("/x/y/file"));
        let b = temp_sibling(Path::new("/x/y/file"));
        assert_ne!(a, b);
        assert_eq!(a.parent(), Some(Path::new("/x/y")));
    }
}
