//! Pinning a process to the run's cores.

use std::io;

/// Pins the calling process (and what it starts) to `cores` (none: left as it is). Safe between
/// fork and exec: one system call on a set built on the stack.
pub(crate) fn pin_to_cores(cores: &[u32]) -> io::Result<()> {
    pin_process(0, cores)
}

/// Pins process `pid` (0: the caller) to `cores` (none: left as it is).
pub(crate) fn pin_process(pid: libc::pid_t, cores: &[u32]) -> io::Result<()> {
    if cores.is_empty() {
        return Ok(());
    }
    // SAFETY: a zeroed cpu_set_t is a valid empty set; CPU_SET and sched_setaffinity act on it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cores {
            libc::CPU_SET(c as usize, &mut set);
        }
        if libc::sched_setaffinity(pid, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}
