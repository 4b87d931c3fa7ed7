//! mccbuild's vocabulary, shared by every stage of the data flow: the values tools compute, the
//! answer protocol they speak, how a run ended and what it used, run keys and digests,
//! diagnostics about the user's files, and the one atomic file write.

#![forbid(unsafe_code)]

pub mod conformance;
pub mod diag;
pub mod digest;
pub mod framed;
pub mod fsio;
pub mod measurement;
pub mod names;
pub mod outcome;
pub mod protocol;
pub mod run_key;
pub mod stamp;
pub mod timing;
pub mod toml_file;
pub mod toml_table;
pub mod value;

pub use digest::{Digest, hex};
pub use measurement::{CapturedOutput, Measurement};
pub use outcome::{Outcome, Response, Termination};
pub use run_key::{KeyMap, RunKey};
pub use value::{Value, ValueKind};

/// Drops `value` on a thread of its own: for large structures (a scoring database, remembered
/// scores: hundreds of thousands of allocations, 20-30 ms to free) that a command is done with
/// while it still has work to do. A process that exits first leaves the freeing to its exit.
pub fn drop_beside<T: Send + 'static>(value: T) {
    // No thread to be had: the value, moved into the closure, is freed with it here.
    let _ = std::thread::Builder::new()
        .name("mccbuild-drop".into())
        .spawn(move || drop(value));
}
