//! What a failure of the run's first process means: the step that failed travels in the high
//! bits of the errno it reports (see `enter`), read back here into a sentence.

use std::io;

/// Explains an error returned by `crate::spawn::spawn` (the step is in the errno's high bits).
pub fn describe_apply_error(e: &io::Error) -> String {
    let Some(raw) = e.raw_os_error() else {
        return e.to_string();
    };
    let (step, errno) = (raw >> 16, raw & 0xffff);
    let what = match step {
        1 => "entering new mount, network and IPC namespaces",
        2 => "making the run's mounts private",
        3 => "bringing the loopback interface up",
        4 => "opening a folder the run needs (tool, setup products or its own folder)",
        5 => "covering a folder with a tmpfs",
        6 => "binding a folder the run needs into its view",
        7 => "making a covered folder read-only",
        8 => "entering the working directory",
        9 => "giving up capabilities and root (becoming the run's user)",
        10 => "mounting the run's own /proc",
        11 => "starting the run's init",
        12 => "waiting to be moved into the run's cgroups",
        14 => "making the host's mounts read-only",
        crate::spawn::STEP_START => "starting the run's process (standard streams, session)",
        _ => return e.to_string(),
    };
    format!("{what}: {}", io::Error::from_raw_os_error(errno))
}
