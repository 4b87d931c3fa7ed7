//! Signals: SIGINT and SIGTERM stop a command's runs (through the flag executors watch), and a
//! closed pipe ends output quietly.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

/// A flag that SIGINT (Ctrl-C), SIGTERM (`scancel`, a supervisor), SIGHUP (a closed terminal or
/// ssh session) and a closed output pipe (`mccbuild run 2>&1 | head -1`: SIGPIPE at the next
/// write, or at once through [`cancel_when_output_closes`]) set the moment they happen:
/// executors watch it to stop their runs (killed, not recorded, cleaned up), and the command
/// then exits 130. signal-hook sets it from the handler itself (an atomic store: all a handler
/// may safely do). From here on a write into a closed pipe fails (EPIPE) instead of killing
/// mccbuild: what the command writes to stderr ignores that error.
pub fn cancel_on_interrupt() -> Result<Arc<AtomicBool>, crate::error::Error> {
    install().map_err(crate::error::Error::Signals)
}

/// The handlers of [`cancel_on_interrupt`], installed.
fn install() -> std::io::Result<Arc<AtomicBool>> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGPIPE, SIGTERM};
    let cancel = Arc::new(AtomicBool::new(false));
    for signal in [SIGINT, SIGTERM, SIGHUP, SIGPIPE] {
        signal_hook::flag::register(signal, cancel.clone())?;
    }
    cancel_when_output_closes(cancel.clone());
    Ok(cancel)
}

/// Sets `cancel` as soon as the reader of stdout or stderr goes away, when they are pipes (a
/// pipe's write end polls POLLERR then): without it, mccbuild would notice only at its next
/// line, which may be minutes away.
fn cancel_when_output_closes(cancel: Arc<AtomicBool>) {
    let mut fds: Vec<libc::pollfd> = [1, 2]
        .into_iter()
        .filter(|&fd| {
            // SAFETY: fstat on a standard descriptor into a zeroed struct we own.
            unsafe {
                let mut st: libc::stat = std::mem::zeroed();
                libc::fstat(fd, &mut st) == 0 && st.st_mode & libc::S_IFMT == libc::S_IFIFO
            }
        })
        .map(|fd| libc::pollfd {
            fd,
            events: 0,
            revents: 0,
        })
        .collect();
    if fds.is_empty() {
        return;
    }
    std::thread::spawn(move || {
        loop {
            // SAFETY: poll on our own array of valid pollfds.
            let r = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, -1) };
            if r > 0 {
                if fds
                    .iter()
                    .any(|p| p.revents & (libc::POLLERR | libc::POLLHUP) != 0)
                {
                    cancel.store(true, std::sync::atomic::Ordering::SeqCst);
                    return;
                }
            } else if r < 0
                && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted
            {
                return;
            }
        }
    });
}

/// Writes a line to stderr, ignoring errors (a closed pipe or terminal): what `run` says while
/// runs are in flight must never stop it.
pub use mccbuild_engine::progress::say;

/// Writing into a closed pipe (`mccbuild scores | head`) ends the process quietly, as for
/// other command-line tools, instead of panicking in `print!`.
pub fn default_sigpipe() {
    // SAFETY: restores SIGPIPE's default disposition before any thread starts; no handler runs.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
