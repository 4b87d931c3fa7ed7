//! Reading what a tool printed: the answer lines of the MCC protocol.
//!
//! Rule E-1.8: a tool states its answers with dedicated keywords, says explicitly when it does not
//! compete (`DO_NOT_COMPETE`) or cannot compute (`CANNOT_COMPUTE`); where no well-formed answer is
//! found the tool is assumed to have computed nothing. The line forms are those of
//! `shared/notes/mcc-protocol.md`: `FORMULA <id> <value> [TECHNIQUES ...]`,
//! `STATE_SPACE <STATES|TRANSITIONS|MAX_TOKEN_IN_PLACE|MAX_TOKEN_PER_MARKING> <n> [TECHNIQUES ...]`,
//! per-formula `FORMULA <id> CANNOT_COMPUTE`; any other line is noise. A negative number means
//! "not computed" (TAPAAL prints `TRANSITIONS -1`).
//!
//! Parsing happens in two steps: [`OutputParser`] reads lines as they stream out of the tool
//! (so that answers are found even when the stored copy of stdout is capped), then [`resolve`]
//! matches the answers against the value ids of the instance's examination.

mod lines;
mod resolve;

pub use lines::{AnswerLine, LineKey, LineValue, OutputParser, ParsedOutput, parse_output};
pub use resolve::{
    Answer, AnswerForm, DiagnosticKind, Expected, RunAnswers, resolve, resolve_detailed,
};

#[cfg(test)]
mod properties;
#[cfg(test)]
mod tests;
