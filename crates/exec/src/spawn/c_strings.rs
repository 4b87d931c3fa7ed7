//! The tool's candidate paths, arguments and environment as C strings, made before the clone.

use std::ffi::{CString, c_char};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::Launch;

/// The tool's candidate paths, arguments and environment as C strings, made before the clone
/// (the cloned process allocates nothing).
pub(super) struct CStrings {
    candidates: Vec<CString>,
    argv: Vec<CString>,
    envp: Vec<CString>,
}

impl CStrings {
    pub(super) fn of(launch: &Launch) -> io::Result<CStrings> {
        let mut argv = vec![cstring(launch.program.as_os_str().as_bytes())?];
        for arg in launch.args {
            argv.push(cstring(arg.as_bytes())?);
        }
        let envp = launch
            .env
            .iter()
            .map(|(k, v)| cstring(format!("{k}={v}").as_bytes()))
            .collect::<io::Result<Vec<_>>>()?;
        Ok(CStrings {
            candidates: candidates(launch.program, launch.env)?,
            argv,
            envp,
        })
    }

    /// The null-terminated pointer lists `execve` takes (valid while `self` lives).
    #[allow(clippy::type_complexity)]
    pub(super) fn pointers(&self) -> (Vec<*const c_char>, Vec<*const c_char>, Vec<*const c_char>) {
        let pointers = |list: &[CString]| -> Vec<*const c_char> {
            list.iter()
                .map(|c| c.as_ptr())
                .chain([std::ptr::null()])
                .collect()
        };
        (
            pointers(&self.candidates),
            pointers(&self.argv),
            pointers(&self.envp),
        )
    }
}

/// The paths to execute, in order: the program itself if it holds a `/`, else the program in
/// each folder of the run's PATH (as `execvp` looks).
fn candidates(program: &Path, env: &[(String, String)]) -> io::Result<Vec<CString>> {
    let bytes = program.as_os_str().as_bytes();
    if bytes.contains(&b'/') {
        return Ok(vec![cstring(bytes)?]);
    }
    let path = env
        .iter()
        .find(|(k, _)| k == "PATH")
        .map_or("/usr/local/bin:/usr/bin:/bin", |(_, v)| v.as_str());
    path.split(':')
        .map(|dir| {
            let dir = if dir.is_empty() { "." } else { dir };
            let mut full = dir.as_bytes().to_vec();
            full.push(b'/');
            full.extend_from_slice(bytes);
            cstring(&full)
        })
        .collect()
}

fn cstring(bytes: &[u8]) -> io::Result<CString> {
    CString::new(bytes).map_err(|_| {
        io::Error::other(format!(
            "{} holds a NUL byte",
            String::from_utf8_lossy(bytes)
        ))
    })
}
