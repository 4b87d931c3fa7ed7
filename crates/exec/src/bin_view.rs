//! A run's own, writable BK_BIN_PATH: on the MCC's VM `/home/mcc/BenchKit/bin/` is on the
//! tool's disk, writable, and thrown away with the VM, and real submissions keep temporary files
//! there (`$BK_BIN_PATH/tmp`). Each run gets a copy-on-write view of the tool's setup products
//! (or of its folder): an overlayfs whose upper layer is in the run's folder, or a copy where
//! overlays cannot be mounted (no root, an upper folder on a file system overlayfs refuses).
//! Either way the view is removed with the run's folder: no run sees what another wrote, and the
//! products themselves are never changed.

use std::ffi::CString;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::InfraError;

/// How a run's BK_BIN_PATH was made.
#[derive(Debug)]
pub struct BinView {
    path: PathBuf,
    /// Mounted (overlay): unmounted when dropped.
    mounted: bool,
}

impl BinView {
    /// The folder the run sees as BK_BIN_PATH.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `overlay` or `copy`.
    pub fn kind(&self) -> &'static str {
        if self.mounted { "overlay" } else { "copy" }
    }

    /// Makes `run_dir/bin`, a writable view of `lower` owned by `owner` (uid, gid) at its top.
    pub fn new(
        lower: &Path,
        run_dir: &Path,
        owner: Option<(u32, u32)>,
    ) -> Result<BinView, InfraError> {
        let merged = run_dir.join("bin");
        let upper = run_dir.join("bin-upper");
        let work = run_dir.join("bin-work");
        let infra = |what: &str, p: &Path, e: std::io::Error| {
            InfraError(format!(
                "cannot {what} {} for BK_BIN_PATH: {e}",
                p.display()
            ))
        };
        for d in [&merged, &upper, &work] {
            fs::create_dir_all(d).map_err(|e| infra("create", d, e))?;
        }
        if let Some((uid, gid)) = owner {
            // The merged folder's top takes the upper folder's owner.
            for d in [&merged, &upper] {
                std::os::unix::fs::chown(d, Some(uid), Some(gid))
                    .map_err(|e| infra("give", d, e))?;
            }
        }
        if mount_overlay(lower, &upper, &work, &merged).is_ok() {
            return Ok(BinView {
                path: merged,
                mounted: true,
            });
        }
        let _ = fs::remove_dir_all(&upper);
        let _ = fs::remove_dir_all(&work);
        let status = std::process::Command::new("cp")
            .arg("-a")
            .arg("--")
            .arg(lower.join("."))
            .arg(&merged)
            .status()
            .map_err(|e| infra("copy", lower, e))?;
        if !status.success() {
            return Err(InfraError(format!(
                "cannot copy {} into {} for BK_BIN_PATH (cp {status})",
                lower.display(),
                merged.display()
            )));
        }
        if let Some((uid, gid)) = owner {
            std::os::unix::fs::chown(&merged, Some(uid), Some(gid))
                .map_err(|e| infra("give", &merged, e))?;
        }
        Ok(BinView {
            path: merged,
            mounted: false,
        })
    }
}

impl Drop for BinView {
    fn drop(&mut self) {
        if self.mounted {
            if let Ok(path) = CString::new(self.path.as_os_str().as_bytes()) {
                // SAFETY: unmounting the overlay we mounted, by its path.
                unsafe { libc::umount2(path.as_ptr(), libc::MNT_DETACH) };
            }
        }
    }
}

/// Mounts an overlay of `lower` at `merged`; paths overlayfs would read as separators (`,`
/// `:`) or that are not valid C strings are refused (the caller copies instead).
fn mount_overlay(lower: &Path, upper: &Path, work: &Path, merged: &Path) -> std::io::Result<()> {
    let text = |p: &Path| -> std::io::Result<String> {
        let s = p.to_str().ok_or(std::io::ErrorKind::InvalidInput)?;
        if s.contains([',', ':', '\\']) {
            return Err(std::io::ErrorKind::InvalidInput.into());
        }
        Ok(s.to_string())
    };
    let options = format!(
        "lowerdir={},upperdir={},workdir={}",
        text(lower)?,
        text(upper)?,
        text(work)?
    );
    let c = |s: &str| {
        CString::new(s).map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))
    };
    let (source, target, kind) = (c("overlay")?, c(&text(merged)?)?, c("overlay")?);
    let mount = |data: &CString| {
        // SAFETY: all pointers are valid NUL-terminated strings for the duration of the call.
        let r = unsafe {
            libc::mount(
                source.as_ptr(),
                target.as_ptr(),
                kind.as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV,
                data.as_ptr().cast(),
            )
        };
        if r != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    };
    // `volatile` (Linux 5.10 and later): the upper layer is the run's scratch, thrown away with
    // the run, so it is never synced. Without it, unmounting the overlay syncs the whole file
    // system the upper layer lies on, other processes' unwritten data included: with a busy
    // disk, runs waited seconds to minutes each for their folder's unmount. A kernel that does
    // not know the option refuses it (EINVAL): the overlay is then mounted without it.
    match mount(&c(&format!("{options},volatile"))?) {
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => mount(&c(&options)?),
        done => done,
    }
}
