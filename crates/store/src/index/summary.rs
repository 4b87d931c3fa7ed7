//! What scoring needs of a run ([`Summary`]), the form the index file holds it in ([`Entry`],
//! postcard), and its decoding on first use.

use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Serialize};

use mccbuild_core::{Measurement, Outcome, Response, Termination, Value};

use super::Index;
use super::format::entry_bytes;
use crate::RunRecord;

/// What scoring needs of a run.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    pub response: Response,
    pub measurement: Measurement,
    /// (position among the examination's value ids, value), sorted by position. Positions are
    /// valid for every plan that has this run's key: the key covers the formula file.
    pub answers: Arc<[(u16, Value)]>,
}

impl Summary {
    /// What became of the run.
    pub fn outcome(&self) -> Outcome {
        Outcome::of(self.response, self.measurement.termination)
    }

    pub fn of(record: &RunRecord) -> Summary {
        Summary {
            response: record.response,
            measurement: record.measurement,
            answers: record
                .answers
                .iter()
                .map(|a| (a.position, a.value.clone()))
                .collect(),
        }
    }
}

/// A summary as the index file holds it (postcard).
#[derive(Serialize, Deserialize)]
pub(super) struct Entry {
    response: Response,
    /// `Termination` is internally tagged for JSON, which postcard cannot decode: pairs here.
    termination: (u8, i32),
    cpu_time_s: f64,
    wall_time_s: f64,
    peak_memory_bytes: u64,
    answers: Vec<(u16, Value)>,
}

impl Entry {
    pub(super) fn of(s: &Summary) -> Entry {
        Entry {
            response: s.response,
            termination: termination_code(s.measurement.termination),
            cpu_time_s: s.measurement.cpu_time_s,
            wall_time_s: s.measurement.wall_time_s,
            peak_memory_bytes: s.measurement.peak_memory_bytes,
            answers: s.answers.to_vec(),
        }
    }

    pub(super) fn summary(self) -> Option<Summary> {
        Some(Summary {
            response: self.response,
            measurement: Measurement {
                termination: termination_from_code(self.termination)?,
                cpu_time_s: self.cpu_time_s,
                wall_time_s: self.wall_time_s,
                peak_memory_bytes: self.peak_memory_bytes,
            },
            answers: self.answers.into(),
        })
    }
}

/// Decoded summaries are kept in chunks of this many slots: a command that asks for a few
/// summaries of 300,000 makes a few chunks, not 300,000 slots (19 MB).
pub(super) const SUMMARY_CHUNK: usize = 1024;

/// [`SUMMARY_CHUNK`] slots of decoded summaries, made when one of them is first asked for.
pub(super) type SummaryChunk = OnceLock<Box<[OnceLock<Option<Summary>>]>>;

impl Index {
    /// The summary of the file key at position `i`, decoded on first use: a command that
    /// scores a few model examinations decodes their runs' summaries only.
    pub(super) fn summary_at(&self, i: usize) -> Option<&Summary> {
        let chunks = self.file_summaries.get_or_init(|| {
            (0..self.file.len().div_ceil(SUMMARY_CHUNK))
                .map(|_| OnceLock::new())
                .collect()
        });
        let chunk = chunks[i / SUMMARY_CHUNK]
            .get_or_init(|| (0..SUMMARY_CHUNK).map(|_| OnceLock::new()).collect());
        chunk[i % SUMMARY_CHUNK]
            .get_or_init(|| {
                // The section's checksum was verified: only a bug can make an entry
                // undecodable. Nothing is claimed then; the run looks unanswered, not wrong.
                let bytes = entry_bytes(&self.file_body, self.file.len(), i)?;
                postcard::from_bytes::<Entry>(bytes).ok()?.summary()
            })
            .as_ref()
    }
}

pub(super) fn termination_code(t: Termination) -> (u8, i32) {
    match t {
        Termination::Exit { code } => (0, code),
        Termination::Signal { signal } => (1, signal),
        Termination::CpuLimit => (2, 0),
        Termination::MemoryLimit => (3, 0),
        Termination::WallLimit => (4, 0),
        Termination::OutputLimit => (5, 0),
        Termination::GuestPanic => (6, 0),
    }
}

pub(super) fn termination_from_code((tag, n): (u8, i32)) -> Option<Termination> {
    Some(match tag {
        0 => Termination::Exit { code: n },
        1 => Termination::Signal { signal: n },
        2 => Termination::CpuLimit,
        3 => Termination::MemoryLimit,
        4 => Termination::WallLimit,
        5 => Termination::OutputLimit,
        6 => Termination::GuestPanic,
        _ => return None,
    })
}
