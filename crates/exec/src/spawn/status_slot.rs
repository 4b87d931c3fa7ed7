//! The page a run's init and mccbuild share, where the init leaves the tool's wait status.

use std::io;

/// A page shared with the run's init, where it leaves the tool's wait status before it exits.
pub(crate) struct StatusSlot {
    pub(super) page: *mut i32,
}

// SAFETY: the page is owned by this value alone in mccbuild (the init has its own mapping).
unsafe impl Send for StatusSlot {}

const PAGE: usize = 4096;

impl StatusSlot {
    pub(super) fn new() -> io::Result<StatusSlot> {
        // SAFETY: a fresh anonymous mapping, unmapped once (Drop).
        let page = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                PAGE,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if page == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(StatusSlot { page: page.cast() })
    }

    /// The tool's wait status, if the init handed it over; read once the init was waited for.
    /// None: the init was killed before (a limit, a cancellation) or the tool never started.
    pub fn tool_status(&self) -> Option<i32> {
        // SAFETY: the page is mapped while self lives; the init wrote it before it exited.
        unsafe {
            (std::ptr::read_volatile(self.page) == 1)
                .then(|| std::ptr::read_volatile(self.page.add(1)))
        }
    }
}

impl Drop for StatusSlot {
    fn drop(&mut self) {
        // SAFETY: unmapping the page mapped in `new`.
        unsafe { libc::munmap(self.page.cast(), PAGE) };
    }
}
