//! The run's gate: one byte on a socket pair that mccbuild sends once the run's process is
//! pinned and limited, carrying the run's network and IPC namespaces (SCM_RIGHTS); the process
//! waits for it before it forks or executes anything.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

/// Opens the gate, handing over the run's network and IPC namespaces with the byte when they
/// were made; closing the gate without the byte makes the process give up.
pub(super) fn release(
    gate: OwnedFd,
    namespaces: Option<crate::isolation::PendingNamespaces>,
) -> io::Result<()> {
    // A failure to make them costs only the overlap: the process makes its own.
    let namespaces = namespaces.and_then(|pending| pending.join().ok());
    send_gate(&gate, namespaces.as_ref().map(|n| n.fds()))
}

/// Sends the gate's byte, with `fds` attached (SCM_RIGHTS) if given.
fn send_gate(gate: &OwnedFd, fds: Option<[i32; 2]>) -> io::Result<()> {
    let mut byte = 1u8;
    let mut iov = libc::iovec {
        iov_base: (&mut byte as *mut u8).cast(),
        iov_len: 1,
    };
    let mut control = [0u64; 8];
    // SAFETY: msghdr is plain data; the control buffer is large and aligned enough for one
    // SCM_RIGHTS message of two fds (CMSG_SPACE(8) = 24 bytes), filled through the CMSG macros.
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        if let Some(fds) = fds {
            let len = std::mem::size_of::<[i32; 2]>() as u32;
            msg.msg_control = control.as_mut_ptr().cast();
            msg.msg_controllen = libc::CMSG_SPACE(len) as usize;
            let header = libc::CMSG_FIRSTHDR(&msg);
            (*header).cmsg_level = libc::SOL_SOCKET;
            (*header).cmsg_type = libc::SCM_RIGHTS;
            (*header).cmsg_len = libc::CMSG_LEN(len) as usize;
            std::ptr::copy_nonoverlapping(fds.as_ptr(), libc::CMSG_DATA(header).cast(), 2);
        }
        loop {
            if libc::sendmsg(gate.as_raw_fd(), &msg, libc::MSG_NOSIGNAL) == 1 {
                return Ok(());
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }
}

/// In the run's process: waits at the gate until mccbuild moved it into its cgroups; returns
/// the network and IPC namespaces handed over with the byte, if any. An error (ECANCELED) if
/// the gate was closed without the byte (a move failed, or mccbuild died).
///
/// # Safety
/// Between clone and exec: system calls only, on the stack.
pub(crate) unsafe fn receive_gate(gate: i32) -> io::Result<Option<[i32; 2]>> {
    let mut byte = 0u8;
    let mut iov = libc::iovec {
        iov_base: (&mut byte as *mut u8).cast(),
        iov_len: 1,
    };
    let mut control = [0u64; 8];
    // SAFETY: `msghdr` is plain C data, for which all zeroes is a valid value.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(&control);
    // SAFETY: recvmsg(2) into the byte and the control buffer on the stack, which `msg`
    // describes with their sizes; errno is this thread's; `gate` is closed once, here.
    let n = unsafe {
        let n = loop {
            let n = libc::recvmsg(gate, &mut msg, libc::MSG_CMSG_CLOEXEC);
            if n >= 0 || *libc::__errno_location() != libc::EINTR {
                break n;
            }
        };
        libc::close(gate);
        n
    };
    if n != 1 || byte != 1 {
        return Err(io::Error::from_raw_os_error(libc::ECANCELED));
    }
    // SAFETY: the CMSG macros walk the control buffer that recvmsg filled (`msg` says how much
    // of it); the header is read only when it is there, and the two descriptors only when the
    // message is long enough for them.
    unsafe {
        let header = libc::CMSG_FIRSTHDR(&msg);
        if header.is_null()
            || (*header).cmsg_level != libc::SOL_SOCKET
            || (*header).cmsg_type != libc::SCM_RIGHTS
            || (*header).cmsg_len < libc::CMSG_LEN(8) as usize
        {
            return Ok(None);
        }
        let mut fds = [-1i32; 2];
        std::ptr::copy_nonoverlapping(libc::CMSG_DATA(header).cast::<i32>(), fds.as_mut_ptr(), 2);
        Ok(Some(fds))
    }
}
