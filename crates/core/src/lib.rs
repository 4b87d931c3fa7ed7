//! mccbuild's vocabulary, shared by every stage of the data flow: the values tools compute, the
//! answer protocol they speak, how a run ended and what it used, run keys and digests,
//! diagnostics about the user's files, and the one atomic file write.

pub mod conformance;
pub mod diag;
pub mod digest;
pub mod fsio;
pub mod measurement;
pub mod outcome;
pub mod protocol;
pub mod run_key;
pub mod stamp;
pub mod timing;
pub mod toml_file;
pub mod value;

pub use digest::{hex, Digest};
pub use measurement::{CapturedOutput, Measurement};
pub use outcome::{Outcome, Response, Termination};
pub use run_key::{KeyMap, RunKey};
pub use value::{Value, ValueKind};
