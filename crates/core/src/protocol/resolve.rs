//! The second step of reading a tool's output: the answer lines matched to the value ids of the
//! instance's examination (E-1.8), with a diagnostic, of a known kind, for every line ignored.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::lines::{LineKey, LineValue, ParsedOutput};
use crate::outcome::Response;
use crate::value::{Value, ValueKind};

/// How an examination's answers are written and keyed (rules files: `answers = ...`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AnswerForm {
    /// `STATE_SPACE <value id> <n>` lines; the value ids are fixed by the rules.
    StateSpace,
    /// One `FORMULA <examination> <value>` line; the id is the examination's name (older tools
    /// printed `<instance>-<examination>-0`, accepted too).
    Global,
    /// `FORMULA <id> <value>` lines keyed by the ids of the instance's formula file.
    Formulas,
    /// One verification result, `SAFE`, `UNSAFE` or `UNKNOWN` (SV-COMP): SAFE is TRUE (the
    /// property holds), UNSAFE is FALSE, UNKNOWN is no answer. Rules files: `"verification-result"`
    /// (formerly `"verdict"`, still read).
    #[serde(rename = "verification-result", alias = "verdict")]
    VerificationResult,
}

/// What the examination of one instance expects.
#[derive(Clone, Copy, Debug)]
pub struct Expected<'a> {
    pub examination: &'a str,
    pub instance: &'a str,
    pub form: AnswerForm,
    pub kind: ValueKind,
    /// The value ids, in the order of the formula file (or fixed by the rules).
    pub ids: &'a [Arc<str>],
}

/// One answered value, keyed by its position in [`Expected::ids`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Answer {
    pub id: Arc<str>,
    /// The position of `id` among the examination's value ids (its order in the formula file).
    pub position: u16,
    pub value: Value,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub techniques: Vec<String>,
}

/// The answers of one run, matched to the instance's value ids.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunAnswers {
    /// What the output says as a whole (E-1.8).
    pub response: Response,
    /// In the order of the value ids; at most one per id.
    pub answers: Vec<Answer>,
    /// Problems with the output that a tool developer should know about.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub diagnostics: Vec<String>,
}

/// What kind of problem a diagnostic of [`resolve_detailed`] is: commands that judge a tool's
/// output (`mccbuild qualify`) branch on this, never on the message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DiagnosticKind {
    /// A line starting with `FORMULA` or `STATE_SPACE` that is not an answer line.
    Malformed,
    /// An answer line whose value word is not a value (`yes`, `1.5e3`).
    InvalidValue,
    /// A value of the wrong kind for the examination (an integer where a boolean is expected).
    WrongKind,
    /// An answer for an id the instance's examination does not have.
    UnknownId,
    /// An answer line of another examination's form (`STATE_SPACE` in a formula run).
    WrongForm,
    /// Two different answers for one id (or two different verification results).
    Contradiction,
    /// An id answered and declared CANNOT_COMPUTE.
    AnswerAndCannotCompute,
    /// DO_NOT_COMPETE printed after (or with) answers.
    DoNotCompeteWithAnswers,
}

/// Matches parsed lines to the expected value ids (E-1.8; protocol notes).
///
/// - an answer for an unknown id, a value of the wrong kind (an integer for a boolean examination),
///   a line of the wrong form (`STATE_SPACE` in a formula examination) is ignored with a diagnostic;
/// - two different answers for one id: the last one counts, as in the community harness, with a
///   diagnostic;
/// - `DO_NOT_COMPETE` wins over everything (with a diagnostic if answers were printed too).
pub fn resolve(parsed: &ParsedOutput, expected: Expected<'_>) -> RunAnswers {
    let (answers, _) = resolve_detailed(parsed, expected);
    answers
}

/// [`resolve`], with the kind of each diagnostic (in the order of `RunAnswers::diagnostics`).
pub fn resolve_detailed(
    parsed: &ParsedOutput,
    expected: Expected<'_>,
) -> (RunAnswers, Vec<DiagnosticKind>) {
    let mut diagnostics = Diagnostics::default();
    report_unreadable_lines(parsed, &mut diagnostics);
    let mut chosen: BTreeMap<usize, (Value, Vec<String>, usize)> = BTreeMap::new();
    let mut not_computed: BTreeMap<usize, usize> = BTreeMap::new();
    if expected.form == AnswerForm::VerificationResult && !expected.ids.is_empty() {
        if let Some((line, value)) = verification_result(parsed, &mut diagnostics) {
            chosen.insert(0, (value, Vec::new(), line));
        }
    }
    for answer in &parsed.lines {
        let Some(index) = match_key(&answer.key, expected, answer.line, &mut diagnostics) else {
            continue;
        };
        match &answer.value {
            LineValue::NotComputed => {
                not_computed.insert(index, answer.line);
            }
            LineValue::Value(value) => {
                if value.kind() != expected.kind {
                    diagnostics.push(
                        DiagnosticKind::WrongKind,
                        format!(
                            "line {}: `{}` is not a valid {} value for {}; ignored",
                            answer.line,
                            value,
                            expected.kind.name(),
                            expected.ids[index]
                        ),
                    );
                    continue;
                }
                if let Some((previous, _, previous_line)) = chosen.get(&index) {
                    if previous != value {
                        diagnostics.push(DiagnosticKind::Contradiction, format!(
                            "lines {previous_line} and {}: two different answers for {} ({previous} then {value}); the last one counts",
                            answer.line, expected.ids[index]
                        ));
                    }
                }
                chosen.insert(
                    index,
                    (value.clone(), answer.techniques.clone(), answer.line),
                );
            }
        }
    }
    for (index, line) in not_computed {
        if let Some((value, _, value_line)) = chosen.get(&index) {
            diagnostics.push(DiagnosticKind::AnswerAndCannotCompute, format!(
                "lines {value_line} and {line}: {} answered {value} and CANNOT_COMPUTE; the answer counts",
                expected.ids[index]
            ));
        }
    }
    let chosen_lines: BTreeMap<u16, usize> = chosen
        .iter()
        .map(|(&index, (_, _, line))| (index as u16, *line))
        .collect();
    let answers: Vec<Answer> = chosen
        .into_iter()
        .map(|(index, (value, techniques, _))| Answer {
            id: expected.ids[index].clone(),
            position: index as u16,
            value,
            techniques,
        })
        .collect();
    let response = if parsed.do_not_compete {
        if let Some(first) = answers.iter().map(|a| chosen_lines[&a.position]).min() {
            diagnostics.push(
                DiagnosticKind::DoNotCompeteWithAnswers,
                format!("line {first}: an answer, but the tool printed DO_NOT_COMPETE too; DO_NOT_COMPETE wins"),
            );
        }
        Response::DoNotCompete
    } else if answers.is_empty() {
        Response::CannotCompute
    } else {
        Response::Answered
    };
    let answers = if response == Response::DoNotCompete {
        Vec::new()
    } else {
        answers
    };
    (
        RunAnswers {
            response,
            answers,
            diagnostics: diagnostics.messages,
        },
        diagnostics.kinds,
    )
}

/// The malformed lines and the lines without a valid value, in line order, as diagnostics.
fn report_unreadable_lines(parsed: &ParsedOutput, diagnostics: &mut Diagnostics) {
    let mut lines: Vec<(usize, DiagnosticKind, &String)> = parsed
        .malformed
        .iter()
        .map(|(line, text)| (*line, DiagnosticKind::Malformed, text))
        .chain(
            parsed
                .invalid_values
                .iter()
                .map(|(line, text)| (*line, DiagnosticKind::InvalidValue, text)),
        )
        .collect();
    lines.sort_by_key(|(line, _, _)| *line);
    for (line, kind, text) in lines {
        let what = match kind {
            DiagnosticKind::InvalidValue => "answer line with no valid value",
            _ => "malformed answer line",
        };
        diagnostics.push(kind, format!("line {line}: {what} `{text}` ignored"));
    }
}

/// SV-COMP's verification result: the last SAFE/UNSAFE line (true/false) and its line; two
/// different results are a contradiction, the last one counts.
fn verification_result(
    parsed: &ParsedOutput,
    diagnostics: &mut Diagnostics,
) -> Option<(usize, Value)> {
    let mut last: Option<(usize, &str)> = None;
    for (line, word) in &parsed.verification_results {
        if let Some((previous_line, previous)) = last {
            if previous != word {
                diagnostics.push(DiagnosticKind::Contradiction, format!("lines {previous_line} and {line}: two different verification results ({previous} then {word}); the last one counts"));
            }
        }
        last = Some((*line, word));
    }
    match last {
        Some((line, "SAFE")) => Some((line, Value::Bool(true))),
        Some((line, "UNSAFE")) => Some((line, Value::Bool(false))),
        _ => None,
    }
}

/// Diagnostics with their kinds, kept side by side.
#[derive(Default)]
struct Diagnostics {
    messages: Vec<String>,
    kinds: Vec<DiagnosticKind>,
}

impl Diagnostics {
    fn push(&mut self, kind: DiagnosticKind, message: String) {
        self.kinds.push(kind);
        self.messages.push(message);
    }
}

fn match_key(
    key: &LineKey,
    expected: Expected<'_>,
    line: usize,
    diagnostics: &mut Diagnostics,
) -> Option<usize> {
    let position = |id: &str| expected.ids.iter().position(|known| &**known == id);
    match (expected.form, key) {
        (AnswerForm::StateSpace, LineKey::StateSpace(what)) => {
            let found = position(what);
            if found.is_none() {
                diagnostics.push(
                    DiagnosticKind::UnknownId,
                    format!("line {line}: unknown STATE_SPACE value `{what}` ignored"),
                );
            }
            found
        }
        (AnswerForm::Global, LineKey::Formula(id)) => {
            let bare = id
                .strip_prefix(expected.instance)
                .and_then(|rest| rest.strip_prefix('-'))
                .unwrap_or(id);
            let bare = bare.strip_suffix("-0").unwrap_or(bare);
            if bare == expected.examination && !expected.ids.is_empty() {
                Some(0)
            } else {
                diagnostics.push(
                    DiagnosticKind::UnknownId,
                    format!(
                        "line {line}: answer for `{id}` ignored: a {} run answers `FORMULA {} ...`",
                        expected.examination, expected.examination
                    ),
                );
                None
            }
        }
        (AnswerForm::Formulas, LineKey::Formula(id)) => {
            let found = position(id);
            if found.is_none() {
                diagnostics.push(
                    DiagnosticKind::UnknownId,
                    format!(
                        "line {line}: answer for unknown formula id `{id}` ignored (not in {}.xml)",
                        expected.examination
                    ),
                );
            }
            found
        }
        (_, LineKey::StateSpace(what)) => {
            diagnostics.push(
                DiagnosticKind::WrongForm,
                format!(
                    "line {line}: STATE_SPACE {what} ignored in a {} run",
                    expected.examination
                ),
            );
            None
        }
        (AnswerForm::VerificationResult, LineKey::Formula(id)) => {
            diagnostics.push(DiagnosticKind::WrongForm, format!(
                "line {line}: FORMULA {id} ignored: a verification run answers SAFE, UNSAFE or UNKNOWN"
            ));
            None
        }
        (AnswerForm::StateSpace, LineKey::Formula(id)) => {
            diagnostics.push(
                DiagnosticKind::WrongForm,
                format!("line {line}: FORMULA {id} ignored in a StateSpace run"),
            );
            None
        }
    }
}
