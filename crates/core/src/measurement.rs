//! What a run used and how it ended: the one measurement of a run, carried unchanged from the
//! executor to the record, the store's index, scoring and every output.

use serde::{Deserialize, Serialize};

use crate::outcome::Termination;

/// How a run ended and what it used. Records and the JSON export hold its fields flat, in this
/// order (`termination`, `cpu_time_s`, `wall_time_s`, `peak_memory_bytes`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    pub termination: Termination,
    /// CPU time of the whole process tree, in seconds.
    pub cpu_time_s: f64,
    pub wall_time_s: f64,
    /// Peak memory of the whole process tree.
    pub peak_memory_bytes: u64,
}

impl Measurement {
    /// Peak memory in MiB (what the MCC's tables call MB).
    pub fn peak_memory_mb(&self) -> f64 {
        self.peak_memory_bytes as f64 / (1u64 << 20) as f64
    }
}

impl Default for Measurement {
    /// Nothing measured: a run not made.
    fn default() -> Self {
        Measurement {
            termination: Termination::Exit { code: 0 },
            cpu_time_s: 0.0,
            wall_time_s: 0.0,
            peak_memory_bytes: 0,
        }
    }
}

/// A capped copy of one of the tool's output streams.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CapturedOutput {
    /// The first and last bytes (lossy UTF-8), with a marker where the middle was dropped.
    pub text: String,
    /// How many bytes the tool wrote in all.
    pub bytes: u64,
    /// Whether `text` is not the whole output.
    pub truncated: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialized_flat_in_the_records_order() {
        let m = Measurement {
            termination: Termination::CpuLimit,
            cpu_time_s: 1.5,
            wall_time_s: 2.0,
            peak_memory_bytes: 3 << 20,
        };
        assert_eq!(
            serde_json::to_string(&m).unwrap(),
            r#"{"termination":{"reason":"cpu_limit"},"cpu_time_s":1.5,"wall_time_s":2.0,"peak_memory_bytes":3145728}"#
        );
        assert_eq!(m.peak_memory_mb(), 3.0);
    }
}
