//! Signals: SIGINT and SIGTERM stop a command's runs (through the flag executors watch), and a
//! closed pipe ends output quietly.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// A flag that SIGINT (Ctrl-C) and SIGTERM (`scancel`, a supervisor) set the moment they arrive:
/// executors watch it to stop their runs, and the command then exits 130. signal-hook sets it
/// from the handler itself (an atomic store: all a handler may safely do).
pub fn cancel_on_interrupt() -> std::io::Result<Arc<AtomicBool>> {
    let cancel = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(signal, cancel.clone())?;
    }
    Ok(cancel)
}

/// Writing into a closed pipe (`mccbuild scores | head`) ends the process quietly, as for
/// other command-line tools, instead of panicking in `print!`.
pub fn default_sigpipe() {
    // SAFETY: restores SIGPIPE's default disposition before any thread starts; no handler runs.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
