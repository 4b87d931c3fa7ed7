//! How a run ended: what the tool said (its [`Response`], rule E-1.8), how its process ended
//! ([`Termination`]), and the one classification every table, export and page uses
//! ([`Outcome`]).

use serde::{Deserialize, Serialize};

/// What a run's output says as a whole (rule E-1.8): it answered, it said it does not compete,
/// or it computed nothing (said CANNOT_COMPUTE, or printed no well-formed answer).
///
/// Stored in records and exported as `verdict` (the field's name since the first record format).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Response {
    /// At least one value was answered.
    Answered,
    /// The tool said `DO_NOT_COMPETE`.
    DoNotCompete,
    /// The tool said `CANNOT_COMPUTE`, or printed no well-formed answer.
    CannotCompute,
}

/// How a run's process ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum Termination {
    /// The tool's main process exited by itself.
    Exit { code: i32 },
    /// The tool's main process was killed by a signal mccbuild did not send.
    Signal { signal: i32 },
    /// CPU-time limit reached (E-5.1): the run was killed.
    CpuLimit,
    /// Memory limit reached: the run was killed (or the kernel's OOM killer hit it).
    MemoryLimit,
    /// Wall-clock safety limit reached (a tool sleeping or blocked).
    WallLimit,
    /// The tool printed more than the output limit.
    OutputLimit,
    /// The run's virtual machine crashed (its kernel panicked) before the tool's end was seen.
    GuestPanic,
}

impl Termination {
    /// Whether mccbuild stopped the run at one of its limits.
    pub fn is_limit(&self) -> bool {
        matches!(
            self,
            Termination::CpuLimit
                | Termination::MemoryLimit
                | Termination::WallLimit
                | Termination::OutputLimit
        )
    }

    /// Whether a time limit stopped the run: the CPU-time limit or the wall-clock one (a
    /// time-out, the MCC's `Time` flag).
    pub fn is_time_out(&self) -> bool {
        matches!(self, Termination::CpuLimit | Termination::WallLimit)
    }

    /// Whether the memory limit stopped the run (a memory-out, the MCC's `Memory` flag).
    pub fn is_memory_out(&self) -> bool {
        matches!(self, Termination::MemoryLimit)
    }

    /// The name of how it ended, as in records (`exit`, `signal`, `cpu_limit`, ...).
    pub fn reason(&self) -> &'static str {
        match self {
            Termination::Exit { .. } => "exit",
            Termination::Signal { .. } => "signal",
            Termination::CpuLimit => "cpu_limit",
            Termination::MemoryLimit => "memory_limit",
            Termination::WallLimit => "wall_limit",
            Termination::OutputLimit => "output_limit",
            Termination::GuestPanic => "guest_panic",
        }
    }

    /// Short upper-case label for tables (`OK`, `TIMEOUT`, `MEMORY`, `EXIT 3`, ...).
    pub fn label(&self) -> String {
        match self {
            Termination::Exit { code: 0 } => "OK".into(),
            Termination::Exit { code } => format!("EXIT {code}"),
            Termination::Signal { signal } => format!("SIGNAL {signal}"),
            Termination::CpuLimit => "TIMEOUT".into(),
            Termination::MemoryLimit => "MEMORY".into(),
            Termination::WallLimit => "WALL TIMEOUT".into(),
            Termination::OutputLimit => "OUTPUT LIMIT".into(),
            Termination::GuestPanic => "GUEST PANIC".into(),
        }
    }
}

/// What became of a run: the one classification of mccbuild (report pages, exports, progress
/// lines). A run that answered anything is `Answered` however it ended; one that did not
/// compete is `DoNotCompete`; otherwise how it ended decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// At least one value computed.
    Answered,
    /// CANNOT_COMPUTE, or no well-formed answer, the tool having stopped by itself.
    CannotCompute,
    DoNotCompete,
    /// The CPU-time or the wall-clock limit stopped it, with no answer.
    TimeOut,
    /// The memory limit stopped it, with no answer.
    MemoryOut,
    /// No answer, and killed by a signal, a non-zero exit, too much output or a crashed VM.
    Failed,
}

impl Outcome {
    /// Classifies a run from its response and how it ended.
    pub fn of(response: Response, termination: Termination) -> Outcome {
        match (response, termination) {
            (Response::Answered, _) => Outcome::Answered,
            (Response::DoNotCompete, _) => Outcome::DoNotCompete,
            (_, t) if t.is_time_out() => Outcome::TimeOut,
            (_, t) if t.is_memory_out() => Outcome::MemoryOut,
            (_, Termination::Exit { code: 0 }) => Outcome::CannotCompute,
            _ => Outcome::Failed,
        }
    }

    /// The short label of a table cell.
    pub fn label(self) -> &'static str {
        match self {
            Outcome::Answered => "ok",
            Outcome::CannotCompute => "CC",
            Outcome::DoNotCompete => "DNC",
            Outcome::TimeOut => "TO",
            Outcome::MemoryOut => "MO",
            Outcome::Failed => "fail",
        }
    }

    /// In words.
    pub fn title(self) -> &'static str {
        match self {
            Outcome::Answered => "answered",
            Outcome::CannotCompute => "cannot compute",
            Outcome::DoNotCompete => "did not compete",
            Outcome::TimeOut => "time-out",
            Outcome::MemoryOut => "memory-out",
            Outcome::Failed => "failed (crash or error)",
        }
    }

    /// One line about a run for progress output and the JSON export's `outcome`: `DNC`, `CC`,
    /// `16 answers`, `3 answers, then TIMEOUT`, `CC (EXIT 3)`, `MEMORY`, ...
    pub fn describe(response: Response, termination: Termination, answers: usize) -> String {
        match Outcome::of(response, termination) {
            Outcome::DoNotCompete => "DNC".into(),
            Outcome::Answered if termination.is_limit() => {
                format!("{}, then {}", answers_text(answers), termination.label())
            }
            Outcome::Answered => answers_text(answers),
            Outcome::CannotCompute => "CC".into(),
            Outcome::Failed
                if matches!(
                    termination,
                    Termination::Exit { .. } | Termination::Signal { .. }
                ) =>
            {
                format!("CC ({})", termination.label())
            }
            Outcome::TimeOut | Outcome::MemoryOut | Outcome::Failed => termination.label(),
        }
    }
}

/// `1 answer`, `16 answers`.
fn answers_text(n: usize) -> String {
    format!("{n} {}", if n == 1 { "answer" } else { "answers" })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_follow_the_response_then_the_termination() {
        use Response::*;
        let of = Outcome::of;
        assert_eq!(of(Answered, Termination::CpuLimit), Outcome::Answered);
        assert_eq!(of(CannotCompute, Termination::CpuLimit), Outcome::TimeOut);
        assert_eq!(of(CannotCompute, Termination::WallLimit), Outcome::TimeOut);
        assert_eq!(
            of(CannotCompute, Termination::MemoryLimit),
            Outcome::MemoryOut
        );
        assert_eq!(
            of(CannotCompute, Termination::Exit { code: 0 }),
            Outcome::CannotCompute
        );
        assert_eq!(
            of(CannotCompute, Termination::Signal { signal: 11 }),
            Outcome::Failed
        );
        assert_eq!(of(CannotCompute, Termination::OutputLimit), Outcome::Failed);
        assert_eq!(
            of(DoNotCompete, Termination::Exit { code: 0 }),
            Outcome::DoNotCompete
        );
    }

    #[test]
    fn descriptions_say_what_ended_the_run() {
        use Response::*;
        let d = Outcome::describe;
        assert_eq!(d(DoNotCompete, Termination::CpuLimit, 0), "DNC");
        assert_eq!(d(Answered, Termination::Exit { code: 0 }, 16), "16 answers");
        assert_eq!(d(Answered, Termination::Exit { code: 0 }, 1), "1 answer");
        assert_eq!(
            d(Answered, Termination::CpuLimit, 3),
            "3 answers, then TIMEOUT"
        );
        assert_eq!(d(CannotCompute, Termination::Exit { code: 0 }, 0), "CC");
        assert_eq!(
            d(CannotCompute, Termination::Exit { code: 3 }, 0),
            "CC (EXIT 3)"
        );
        assert_eq!(
            d(CannotCompute, Termination::Signal { signal: 9 }, 0),
            "CC (SIGNAL 9)"
        );
        assert_eq!(d(CannotCompute, Termination::MemoryLimit, 0), "MEMORY");
        assert_eq!(d(CannotCompute, Termination::GuestPanic, 0), "GUEST PANIC");
    }

    #[test]
    fn reasons_are_the_serde_tags() {
        for t in [
            Termination::Exit { code: 1 },
            Termination::Signal { signal: 9 },
            Termination::CpuLimit,
            Termination::MemoryLimit,
            Termination::WallLimit,
            Termination::OutputLimit,
            Termination::GuestPanic,
        ] {
            let json = serde_json::to_value(t).unwrap();
            assert_eq!(json["reason"], t.reason());
        }
    }
}
