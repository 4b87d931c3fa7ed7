//! Isolation of a run from the host, the store, the project and the other runs.
//!
//! With root, each run's first process is cloned into fresh mount and PID namespaces (`spawn`): it
//! is process 1 of the new PID namespace. It builds the view below (the mount namespace is its
//! own) and, once it is in the run's cgroups, enters fresh network and IPC namespaces (made by a
//! thread meanwhile, see [`Namespaces`]), mounts the run's /proc, then forks the tool and stays as
//! the run's minimal init (`run_init`: forwards signals, reaps, hands over the tool's status),
//! so that the tool's signals to itself work as on a plain Linux. In the namespace:
//! - every mount of the host is read-only; `/tmp`, `/var/tmp` and `/dev/shm` are fresh private
//!   tmpfs; `/dev` is a fresh tmpfs with only null, zero, full, random, urandom and tty; `/proc`
//!   is a fresh read-only proc of the new PID namespace (other runs' processes, and mccbuild,
//!   are neither visible nor reachable by signals);
//! - the project, the store, the instance's source folder and the folder of the runs' working
//!   directories are covered by empty read-only tmpfs; only the run's own folder (writable), the
//!   tool's folder and its setup products (read-only) are bound back at their usual paths;
//! - the network namespace has only a loopback interface, which is up;
//! - the process then gives up every capability (bounding set emptied, `SECBIT_NOROOT` locked,
//!   `no_new_privs`): it stays user 0, so it reads what root's tools were installed with (a
//!   Python in /root, say), but it can undo none of the above, open no device of the host, and
//!   write nothing of the host's.
//!
//! The plan ([`IsolationPlan::new`]) is a pure function of paths and the mount table, made in
//! the parent. [`Prepared`] turns it into C strings so that `Prepared::enter` can run between
//! clone and exec, where nothing may allocate.
//!
//! The files: `plan` (the pure plan, unit-tested) and `host_mounts` (the host's mount table)
//! are computed in mccbuild; `prepared` makes the plan into steps ready to apply; `enter`
//! applies them in the run's first process and `init` stays there as the run's init (both
//! between clone and exec, allocating nothing); `namespaces` makes the run's network and IPC
//! namespaces beforehand; `failure` explains a failure of the run's process; `probe` checks the
//! host.

mod enter;
mod failure;
mod host_mounts;
mod init;
mod namespaces;
mod plan;
mod prepared;
mod probe;

pub use self::enter::become_user;
pub use self::failure::describe_apply_error;
pub use self::host_mounts::{HostMount, HostMounts, host_mounts};
pub(crate) use self::init::ToolStart;
pub use self::namespaces::{Namespaces, PendingNamespaces};
pub use self::plan::{Cover, IsolationPlan, IsolationRequest, PRIVATE_TMP, in_private_tmp};
pub use self::prepared::Prepared;
pub(crate) use self::probe::probe;
