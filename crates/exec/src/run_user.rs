//! The user a run executes as. BenchKit runs tools as the unprivileged user `mcc` of
//! the MCC's VM; so do mccbuild's runs by default, `root` (still without capabilities) where
//! the manifest says `user = "root"`. The user `mcc` is created on the host when missing
//! (`useradd`, as on BenchKit's VM: its own group, home `/home/mcc`). Only a mccbuild running
//! as root can change users: otherwise the run executes as whoever started mccbuild (the
//! fallback sandbox, already in the key).

use std::ffi::CString;
use std::io;
use std::path::Path;
use std::sync::OnceLock;

use mccbuild_plan::manifest::RunUser;

use crate::InfraError;

/// The (uid, gid) a run of `user` executes as, None for no change (root, or a mccbuild that is
/// not root). Creates the user `mcc` when missing.
pub fn resolve(user: RunUser) -> Result<Option<(u32, u32)>, InfraError> {
    // SAFETY: geteuid has no preconditions.
    if user == RunUser::Root || unsafe { libc::geteuid() } != 0 {
        return Ok(None);
    }
    static MCC: OnceLock<Result<(u32, u32), String>> = OnceLock::new();
    MCC.get_or_init(|| ensure(user.name()))
        .clone()
        .map(Some)
        .map_err(InfraError)
}

/// The user's (uid, gid), created first if missing.
fn ensure(name: &str) -> Result<(u32, u32), String> {
    if let Some(ids) = lookup(name) {
        return Ok(ids);
    }
    let out = std::process::Command::new("useradd")
        .args(["--user-group", "--create-home", "--home-dir"])
        .arg(format!("/home/{name}"))
        .args(["--shell", "/bin/bash", name])
        .output();
    // Another mccbuild may have created it meanwhile: look again either way.
    match (lookup(name), out) {
        (Some(ids), _) => Ok(ids),
        (None, Ok(out)) => Err(format!(
            "the user `{name}` runs execute as does not exist and `useradd {name}` failed: {}; create it (as on the MCC's VM) or set `user = \"root\"` for the tool",
            String::from_utf8_lossy(&out.stderr).trim()
        )),
        (None, Err(e)) => Err(format!(
            "the user `{name}` runs execute as does not exist and `useradd` cannot run: {e}; create the user or set `user = \"root\"` for the tool"
        )),
    }
}

/// The user's (uid, gid) from the password database.
fn lookup(name: &str) -> Option<(u32, u32)> {
    let name = CString::new(name).ok()?;
    let mut buf = vec![0 as libc::c_char; 16 * 1024];
    // SAFETY: a zeroed passwd is a valid out-parameter.
    let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
    let mut result: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: getpwnam_r with a C string, the out-parameters above and a buffer of the length
    // given, all of which outlive the call; the strings `pwd` points to are not read after it.
    let rc = unsafe {
        libc::getpwnam_r(
            name.as_ptr(),
            &mut pwd,
            buf.as_mut_ptr(),
            buf.len(),
            &mut result,
        )
    };
    (rc == 0 && !result.is_null()).then_some((pwd.pw_uid, pwd.pw_gid))
}

/// Gives `path` and everything under it (symbolic links themselves, not their targets) to
/// (uid, gid): the run's folder, its working directory and the unpacked instance are the run's.
pub fn give(path: &Path, (uid, gid): (u32, u32)) -> io::Result<()> {
    std::os::unix::fs::lchown(path, Some(uid), Some(gid))?;
    if std::fs::symlink_metadata(path)?.is_dir() {
        for entry in std::fs::read_dir(path)? {
            give(&entry?.path(), (uid, gid))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_is_looked_up_and_root_runs_change_nothing() {
        assert_eq!(lookup("root"), Some((0, 0)));
        assert_eq!(lookup("no-such-user-of-mccbuild"), None);
        assert_eq!(resolve(RunUser::Root), Ok(None));
    }
}
