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

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::outcome::Response;
use crate::value::{Value, ValueError, ValueKind};

/// Longest line the parser looks at; longer lines are noise (a tool flooding one line).
const MAX_LINE: usize = 64 * 1024;

/// The key of an answer line, before it is matched to the instance's value ids.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LineKey {
    /// `FORMULA <id> ...`
    Formula(String),
    /// `STATE_SPACE <what> ...`
    StateSpace(String),
}

/// The value part of an answer line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LineValue {
    Value(Value),
    /// `FORMULA <id> CANNOT_COMPUTE`, or a negative number.
    NotComputed,
}

/// One well-formed answer line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnswerLine {
    pub line: usize,
    pub key: LineKey,
    pub value: LineValue,
    pub techniques: Vec<String>,
}

/// Everything the protocol cares about in a tool's stdout.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ParsedOutput {
    pub do_not_compete: bool,
    pub cannot_compute: bool,
    pub lines: Vec<AnswerLine>,
    /// SV-COMP's verification results, `SAFE`, `UNSAFE`, `UNKNOWN` lines, with their line
    /// numbers.
    pub verification_results: Vec<(usize, String)>,
    /// Lines that start like an answer but are malformed (`FORMULA x` with no value, ...).
    pub malformed: Vec<(usize, String)>,
    /// Answer lines whose value word is no value at all (`yes`, `1.5e3`, `-x`).
    pub invalid_values: Vec<(usize, String)>,
}

/// Incremental line parser fed with the raw bytes of stdout as they arrive.
#[derive(Default)]
pub struct OutputParser {
    parsed: ParsedOutput,
    partial: Vec<u8>,
    overlong: bool,
    line_no: usize,
}

impl OutputParser {
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds a chunk of stdout; chunks may split lines anywhere.
    pub fn feed(&mut self, mut bytes: &[u8]) {
        while let Some(pos) = bytes.iter().position(|&b| b == b'\n') {
            self.push_partial(&bytes[..pos]);
            self.end_line();
            bytes = &bytes[pos + 1..];
        }
        self.push_partial(bytes);
    }

    fn push_partial(&mut self, bytes: &[u8]) {
        if self.overlong {
            return;
        }
        if self.partial.len() + bytes.len() > MAX_LINE {
            self.overlong = true;
            self.partial.clear();
        } else {
            self.partial.extend_from_slice(bytes);
        }
    }

    fn end_line(&mut self) {
        self.line_no += 1;
        if !self.overlong {
            let line = String::from_utf8_lossy(&self.partial).into_owned();
            parse_line(&mut self.parsed, self.line_no, &line);
        }
        self.partial.clear();
        self.overlong = false;
    }

    /// Ends the stream (a last line without a newline still counts).
    pub fn finish(mut self) -> ParsedOutput {
        if !self.partial.is_empty() || self.overlong {
            self.end_line();
        }
        self.parsed
    }
}

/// Parses a whole output at once.
pub fn parse_output(text: &str) -> ParsedOutput {
    let mut parser = OutputParser::new();
    parser.feed(text.as_bytes());
    parser.finish()
}

fn parse_line(out: &mut ParsedOutput, line_no: usize, line: &str) {
    let words: Vec<&str> = line.split_whitespace().collect();
    match words.as_slice() {
        [] => {}
        ["DO_NOT_COMPETE"] | ["DO", "NOT", "COMPETE"] => out.do_not_compete = true,
        ["CANNOT_COMPUTE"] => out.cannot_compute = true,
        [word @ ("SAFE" | "UNSAFE" | "UNKNOWN")] => {
            out.verification_results.push((line_no, word.to_string()))
        }
        ["FORMULA", rest @ ..] | ["STATE_SPACE", rest @ ..] => {
            let is_formula = words[0] == "FORMULA";
            let (key, value_word, tail) = match rest {
                [key, value, tail @ ..] => (*key, *value, tail),
                _ => {
                    out.malformed.push((line_no, truncate(line)));
                    return;
                }
            };
            let techniques = match tail {
                [] => Vec::new(),
                ["TECHNIQUES", techniques @ ..] => {
                    techniques.iter().map(|t| t.to_string()).collect()
                }
                _ => {
                    out.malformed.push((line_no, truncate(line)));
                    return;
                }
            };
            let value = if value_word == "CANNOT_COMPUTE" {
                LineValue::NotComputed
            } else {
                match Value::parse(value_word) {
                    Ok(value) => LineValue::Value(value),
                    Err(ValueError::Negative(_)) => LineValue::NotComputed,
                    Err(ValueError::Invalid(_)) => {
                        // A count in scientific notation denoting an integer (`1.5E+10`), as
                        // the MCC's files write big numbers: that integer (docs/rules.md).
                        match Value::parse_scientific_integer(value_word) {
                            Some(value) => LineValue::Value(value),
                            None => {
                                out.invalid_values.push((line_no, truncate(line)));
                                return;
                            }
                        }
                    }
                }
            };
            let key = if is_formula {
                LineKey::Formula(key.to_string())
            } else {
                LineKey::StateSpace(key.to_string())
            };
            out.lines.push(AnswerLine {
                line: line_no,
                key,
                value,
                techniques,
            });
        }
        _ => {} // noise: banners, logs, timings
    }
}

fn truncate(line: &str) -> String {
    const KEEP: usize = 200;
    if line.len() <= KEEP {
        line.to_string()
    } else {
        let mut end = KEEP;
        while !line.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}...", &line[..end])
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(names: &[&str]) -> Vec<Arc<str>> {
        names.iter().map(|n| Arc::from(*n)).collect()
    }

    const SS: [&str; 4] = [
        "STATES",
        "TRANSITIONS",
        "MAX_TOKEN_IN_PLACE",
        "MAX_TOKEN_PER_MARKING",
    ];

    fn state_space(ids: &[Arc<str>]) -> Expected<'_> {
        Expected {
            examination: "StateSpace",
            instance: "Philosophers-PT-000005",
            form: AnswerForm::StateSpace,
            kind: ValueKind::Integer,
            ids,
        }
    }

    fn value_of(answers: &RunAnswers, id: &str) -> Option<String> {
        answers
            .answers
            .iter()
            .find(|a| &*a.id == id)
            .map(|a| a.value.to_string())
    }

    #[test]
    fn state_space_lines_in_any_order_with_noise() {
        let out = "# Hello from the tool\n\
                   STATE_SPACE TRANSITIONS 945 TECHNIQUES DECISION_DIAGRAMS\n\
                   computing...\n\
                   STATE_SPACE STATES 243 TECHNIQUES DECISION_DIAGRAMS TOPOLOGICAL\n\
                   STATE_SPACE MAX_TOKEN_PER_MARKING 10 TECHNIQUES DECISION_DIAGRAMS\n\
                   STATE_SPACE MAX_TOKEN_IN_PLACE 1 TECHNIQUES DECISION_DIAGRAMS\n\
                   Total time 0.3s\n";
        let ids = ids(&SS);
        let answers = resolve(&parse_output(out), state_space(&ids));
        assert_eq!(answers.response, Response::Answered);
        assert_eq!(value_of(&answers, "STATES").as_deref(), Some("243"));
        assert_eq!(value_of(&answers, "TRANSITIONS").as_deref(), Some("945"));
        assert_eq!(
            value_of(&answers, "MAX_TOKEN_IN_PLACE").as_deref(),
            Some("1")
        );
        assert_eq!(
            value_of(&answers, "MAX_TOKEN_PER_MARKING").as_deref(),
            Some("10")
        );
        assert_eq!(
            answers.answers[0].techniques,
            vec!["DECISION_DIAGRAMS", "TOPOLOGICAL"]
        );
        assert!(answers.diagnostics.is_empty(), "{:?}", answers.diagnostics);
    }

    #[test]
    fn negative_state_space_value_means_not_computed() {
        // TAPAAL prints TRANSITIONS -1 when it did not count edges.
        let out = "STATE_SPACE STATES 12 TECHNIQUES EXPLICIT\nSTATE_SPACE TRANSITIONS -1 TECHNIQUES EXPLICIT\n";
        let ids = ids(&SS);
        let answers = resolve(&parse_output(out), state_space(&ids));
        assert_eq!(answers.answers.len(), 1);
        assert_eq!(value_of(&answers, "TRANSITIONS"), None);
        assert!(answers.diagnostics.is_empty());
    }

    #[test]
    fn huge_integers_and_infinity() {
        let big = "7".repeat(23_857);
        let out = format!("STATE_SPACE STATES {big} TECHNIQUES DECISION_DIAGRAMS\nSTATE_SPACE TRANSITIONS +inf TECHNIQUES X\nSTATE_SPACE MAX_TOKEN_IN_PLACE inf\n");
        let ids = ids(&SS);
        let answers = resolve(&parse_output(&out), state_space(&ids));
        assert_eq!(value_of(&answers, "STATES"), Some(big));
        assert_eq!(value_of(&answers, "TRANSITIONS").as_deref(), Some("+inf"));
        assert_eq!(
            value_of(&answers, "MAX_TOKEN_IN_PLACE").as_deref(),
            Some("+inf")
        );
    }

    /// A state count in scientific notation is read as the integer it denotes, as the MCC's
    /// own files write big numbers (`7.1790E+0023`); one that denotes no integer is an invalid
    /// value, reported, and the value is not computed (docs/rules.md, "Where the texts leave a
    /// choice open").
    #[test]
    fn state_counts_in_scientific_notation_are_the_integers_they_denote() {
        let out = "STATE_SPACE STATES 7.1790E+0023 TECHNIQUES DECISION_DIAGRAMS\n\
                   STATE_SPACE TRANSITIONS 2.5e3 TECHNIQUES DECISION_DIAGRAMS\n\
                   STATE_SPACE MAX_TOKEN_IN_PLACE 1.25E+1 TECHNIQUES X\n\
                   STATE_SPACE MAX_TOKEN_PER_MARKING 1.50E+1 TECHNIQUES X\n";
        let parsed = parse_output(out);
        assert_eq!(
            parsed.invalid_values.len(),
            1,
            "{:?}",
            parsed.invalid_values
        );
        assert_eq!(parsed.invalid_values[0].0, 3);
        let ids = ids(&SS);
        let answers = resolve(&parsed, state_space(&ids));
        assert_eq!(
            value_of(&answers, "STATES"),
            Some(format!("71790{}", "0".repeat(19)))
        );
        assert_eq!(value_of(&answers, "TRANSITIONS").as_deref(), Some("2500"));
        assert_eq!(value_of(&answers, "MAX_TOKEN_IN_PLACE"), None);
        assert_eq!(
            value_of(&answers, "MAX_TOKEN_PER_MARKING").as_deref(),
            Some("15")
        );
    }

    #[test]
    fn formulas_keyed_by_the_ids_of_the_file() {
        let names = [
            "M-PT-1-ReachabilityCardinality-2025-00",
            "M-PT-1-ReachabilityCardinality-2025-01",
            "M-PT-1-ReachabilityCardinality-2023-02",
        ];
        let ids = ids(&names);
        let expected = Expected {
            examination: "ReachabilityCardinality",
            instance: "M-PT-1",
            form: AnswerForm::Formulas,
            kind: ValueKind::Boolean,
            ids: &ids,
        };
        let out = "FORMULA M-PT-1-ReachabilityCardinality-2023-02 TRUE TECHNIQUES SAT_SMT\n\
                   FORMULA M-PT-1-ReachabilityCardinality-2025-00 FALSE TECHNIQUES EXPLICIT STUBBORN_SETS\n\
                   FORMULA M-PT-1-ReachabilityCardinality-2025-01 CANNOT_COMPUTE\n\
                   FORMULA M-PT-1-ReachabilityCardinality-2025-02 TRUE TECHNIQUES X\n";
        let answers = resolve(&parse_output(out), expected);
        assert_eq!(answers.response, Response::Answered);
        // Kept in the order of the file, not of the output.
        let got: Vec<_> = answers
            .answers
            .iter()
            .map(|a| (a.id.to_string(), a.value.to_string()))
            .collect();
        assert_eq!(
            got,
            vec![
                (names[0].to_string(), "FALSE".to_string()),
                (names[2].to_string(), "TRUE".to_string())
            ]
        );
        assert_eq!(answers.diagnostics.len(), 1, "{:?}", answers.diagnostics);
        assert!(answers.diagnostics[0]
            .contains("unknown formula id `M-PT-1-ReachabilityCardinality-2025-02`"));
    }

    #[test]
    fn upper_bounds_integers_and_inf() {
        let ids = ids(&["U-00", "U-01", "U-02"]);
        let expected = Expected {
            examination: "UpperBounds",
            instance: "U",
            form: AnswerForm::Formulas,
            kind: ValueKind::Integer,
            ids: &ids,
        };
        let out = "FORMULA U-00 5 TECHNIQUES TOPOLOGICAL\nFORMULA U-01 +inf TECHNIQUES CPN_APPROX\nFORMULA U-02 TRUE TECHNIQUES X\n";
        let answers = resolve(&parse_output(out), expected);
        assert_eq!(value_of(&answers, "U-00").as_deref(), Some("5"));
        assert_eq!(value_of(&answers, "U-01").as_deref(), Some("+inf"));
        assert_eq!(value_of(&answers, "U-02"), None);
        assert!(answers.diagnostics[0].contains("not a valid integer value"));
    }

    #[test]
    fn global_property_ids_old_and_new() {
        let ids = ids(&["ReachabilityDeadlock"]);
        let expected = Expected {
            examination: "ReachabilityDeadlock",
            instance: "Dekker-PT-010",
            form: AnswerForm::Global,
            kind: ValueKind::Boolean,
            ids: &ids,
        };
        for line in [
            "FORMULA ReachabilityDeadlock TRUE TECHNIQUES EXPLICIT",
            "FORMULA Dekker-PT-010-ReachabilityDeadlock-0 TRUE TECHNIQUES EXPLICIT",
            "FORMULA  Dekker-PT-010-ReachabilityDeadlock-0  TRUE  TECHNIQUES  EXPLICIT",
            "FORMULA ReachabilityDeadlock TRUE",
        ] {
            let answers = resolve(&parse_output(line), expected);
            assert_eq!(
                value_of(&answers, "ReachabilityDeadlock").as_deref(),
                Some("TRUE"),
                "{line}"
            );
            assert!(
                answers.diagnostics.is_empty(),
                "{line}: {:?}",
                answers.diagnostics
            );
        }
        let answers = resolve(&parse_output("FORMULA OneSafe TRUE TECHNIQUES X"), expected);
        assert_eq!(answers.response, Response::CannotCompute);
        assert_eq!(answers.diagnostics.len(), 1);
    }

    #[test]
    fn verification_results_of_verification_tasks() {
        let ids = ids(&["ReachSafety"]);
        let expected = Expected {
            examination: "ReachSafety",
            instance: "loop1",
            form: AnswerForm::VerificationResult,
            kind: ValueKind::Boolean,
            ids: &ids,
        };
        assert_eq!(
            value_of(
                &resolve(&parse_output("checking...\nSAFE\n"), expected),
                "ReachSafety"
            )
            .as_deref(),
            Some("TRUE")
        );
        assert_eq!(
            value_of(&resolve(&parse_output("UNSAFE\n"), expected), "ReachSafety").as_deref(),
            Some("FALSE")
        );
        let unknown = resolve(&parse_output("UNKNOWN\n"), expected);
        assert_eq!(unknown.response, Response::CannotCompute);
        let two = resolve(&parse_output("SAFE\nUNSAFE\n"), expected);
        assert_eq!(value_of(&two, "ReachSafety").as_deref(), Some("FALSE"));
        assert_eq!(two.diagnostics.len(), 1);
        // Verification results are noise in an MCC run.
        let ss = ids_of_state_space();
        assert_eq!(
            resolve(&parse_output("SAFE\n"), state_space(&ss)).response,
            Response::CannotCompute
        );
    }

    fn ids_of_state_space() -> Vec<Arc<str>> {
        ids(&SS)
    }

    #[test]
    fn do_not_compete_and_cannot_compute() {
        let ids = ids(&SS);
        let answers = resolve(&parse_output("banner\nDO_NOT_COMPETE\n"), state_space(&ids));
        assert_eq!(answers.response, Response::DoNotCompete);
        // LoLA's wrapper once printed it with spaces.
        assert_eq!(
            resolve(&parse_output("DO NOT COMPETE"), state_space(&ids)).response,
            Response::DoNotCompete
        );
        assert_eq!(
            resolve(&parse_output("CANNOT_COMPUTE\n"), state_space(&ids)).response,
            Response::CannotCompute
        );
        // E-1.8: no well-formed answer means nothing computed.
        assert_eq!(
            resolve(&parse_output("Segmentation fault\n"), state_space(&ids)).response,
            Response::CannotCompute
        );
        // CANNOT_COMPUTE for the run does not cancel the answers printed before.
        let answers = resolve(
            &parse_output("STATE_SPACE STATES 3\nCANNOT_COMPUTE\n"),
            state_space(&ids),
        );
        assert_eq!(answers.response, Response::Answered);
        let answers = resolve(
            &parse_output("STATE_SPACE STATES 3\nDO_NOT_COMPETE\n"),
            state_space(&ids),
        );
        assert_eq!(answers.response, Response::DoNotCompete);
        assert!(answers.answers.is_empty());
        assert_eq!(answers.diagnostics.len(), 1);
        // Found by the properties below: the diagnostic names its place, the first answer's line.
        let answers = resolve(
            &parse_output(
                "banner\nDO_NOT_COMPETE\nSTATE_SPACE TRANSITIONS 4\nSTATE_SPACE STATES 3\n",
            ),
            state_space(&ids),
        );
        assert!(
            answers.diagnostics[0].starts_with("line 3: "),
            "{:?}",
            answers.diagnostics
        );
    }

    #[test]
    fn two_different_answers_for_one_key_last_wins_with_diagnostic() {
        let ids = ids(&["F-00"]);
        let expected = Expected {
            examination: "CTLCardinality",
            instance: "F",
            form: AnswerForm::Formulas,
            kind: ValueKind::Boolean,
            ids: &ids,
        };
        let answers = resolve(
            &parse_output("FORMULA F-00 TRUE\nFORMULA F-00 FALSE\n"),
            expected,
        );
        assert_eq!(value_of(&answers, "F-00").as_deref(), Some("FALSE"));
        assert_eq!(answers.diagnostics.len(), 1);
        assert!(answers.diagnostics[0].contains("two different answers"));
        // The same answer twice is not a problem.
        let answers = resolve(
            &parse_output("FORMULA F-00 TRUE\nFORMULA F-00 TRUE TECHNIQUES X\n"),
            expected,
        );
        assert!(answers.diagnostics.is_empty());
    }

    #[test]
    fn malformed_lines_are_reported_not_fatal() {
        let ids = ids(&SS);
        let out = "STATE_SPACE STATES\nSTATE_SPACE STATES 1.5e3\nSTATE_SPACE STATES 7 TECHNIQUE X\nFORMULA\nSTATE_SPACE STATES 7\n";
        let answers = resolve(&parse_output(out), state_space(&ids));
        assert_eq!(value_of(&answers, "STATES").as_deref(), Some("7"));
        assert_eq!(answers.diagnostics.len(), 4, "{:?}", answers.diagnostics);
    }

    #[test]
    fn chunked_feeding_and_garbage() {
        let mut parser = OutputParser::new();
        let out = b"\xff\xfe garbage \x00\nSTATE_SPACE STA";
        parser.feed(out);
        parser.feed(b"TES 9 TECHNIQUES EXPLICIT\n");
        parser.feed(&vec![b'x'; 3 * MAX_LINE]);
        parser.feed(b"\nSTATE_SPACE TRANSITIONS 4");
        let parsed = parser.finish();
        let ids = ids(&SS);
        let answers = resolve(&parsed, state_space(&ids));
        assert_eq!(value_of(&answers, "STATES").as_deref(), Some("9"));
        assert_eq!(value_of(&answers, "TRANSITIONS").as_deref(), Some("4"));
    }

    /// docs/protocol.md, "Answers mccbuild accepts": each statement there, checked here.
    #[test]
    fn the_documented_answer_syntax() {
        let ss = ids(&SS);
        let value =
            |out: &str, id: &str| value_of(&resolve(&parse_output(out), state_space(&ss)), id);
        // Line endings: \n and \r\n; the last line needs none. Words: spaces or tabs, any number.
        assert_eq!(
            value("STATE_SPACE STATES 5 TECHNIQUES X\r\n", "STATES").as_deref(),
            Some("5")
        );
        assert_eq!(
            value("STATE_SPACE\tSTATES\t\t5", "STATES").as_deref(),
            Some("5")
        );
        assert_eq!(
            value("  STATE_SPACE STATES 5  ", "STATES").as_deref(),
            Some("5")
        );
        // A bare \r is not a line end: the line has two answers in it and is malformed.
        let answers = resolve(
            &parse_output("STATE_SPACE STATES 5\rSTATE_SPACE TRANSITIONS 6\n"),
            state_space(&ss),
        );
        assert!(answers.answers.is_empty());
        assert_eq!(answers.diagnostics.len(), 1, "{:?}", answers.diagnostics);
        // Keywords are upper case; a lower-case line is noise, without a diagnostic.
        let answers = resolve(&parse_output("state_space STATES 5\n"), state_space(&ss));
        assert!(answers.answers.is_empty() && answers.diagnostics.is_empty());
        // Integers: digits, an optional +, leading zeros, any size; +inf's six spellings.
        assert_eq!(
            value("STATE_SPACE STATES +0042", "STATES").as_deref(),
            Some("42")
        );
        for inf in ["+inf", "inf", "+INF", "INF", "+Inf", "Inf"] {
            assert_eq!(
                value(&format!("STATE_SPACE STATES {inf}"), "STATES").as_deref(),
                Some("+inf"),
                "{inf}"
            );
        }
        // Scientific notation denoting an integer is that integer (docs/rules.md).
        assert_eq!(
            value("STATE_SPACE STATES 1e6", "STATES").as_deref(),
            Some("1000000")
        );
        // Not values: a diagnostic each, the line ignored.
        for word in ["true", "1.5", "1.25E+1", "1e-6", "0x10", "-inf", "--1", "∞"] {
            let answers = resolve(
                &parse_output(&format!("STATE_SPACE STATES {word}")),
                state_space(&ss),
            );
            assert!(answers.answers.is_empty(), "{word}");
            assert_eq!(
                answers.diagnostics.len(),
                1,
                "{word}: {:?}",
                answers.diagnostics
            );
        }
        // A negative integer: not computed, no diagnostic; an earlier answer for the id stands.
        let answers = resolve(
            &parse_output("STATE_SPACE STATES 5\nSTATE_SPACE STATES -1\n"),
            state_space(&ss),
        );
        assert_eq!(value_of(&answers, "STATES").as_deref(), Some("5"));
        assert_eq!(
            answers.diagnostics.len(),
            1,
            "answered and not computed: {:?}",
            answers.diagnostics
        );
        // DO_NOT_COMPETE before the answers wins too.
        let answers = resolve(
            &parse_output("DO_NOT_COMPETE\nSTATE_SPACE STATES 5\n"),
            state_space(&ss),
        );
        assert_eq!(answers.response, Response::DoNotCompete);
        assert!(answers.answers.is_empty());
        // DO_NOT_COMPETE with other words on its line is noise.
        let answers = resolve(
            &parse_output("DO_NOT_COMPETE now\nSTATE_SPACE STATES 5\n"),
            state_space(&ss),
        );
        assert_eq!(answers.response, Response::Answered);
        // An answer inside a line longer than 64 KiB is not read.
        let long = format!("STATE_SPACE STATES 5 TECHNIQUES {}\n", "X".repeat(MAX_LINE));
        assert_eq!(value(&long, "STATES"), None);
        // A per-id CANNOT_COMPUTE before an answer: the answer counts, with a diagnostic.
        let answers = resolve(
            &parse_output("FORMULA F-00 CANNOT_COMPUTE\nFORMULA F-00 TRUE TECHNIQUES X\n"),
            Expected {
                examination: "CTLCardinality",
                instance: "F",
                form: AnswerForm::Formulas,
                kind: ValueKind::Boolean,
                ids: &ids(&["F-00"]),
            },
        );
        assert_eq!(value_of(&answers, "F-00").as_deref(), Some("TRUE"));
        assert_eq!(answers.diagnostics.len(), 1);
        // The four spellings of a global property's id.
        let global = ids(&["OneSafe"]);
        for id in ["OneSafe", "OneSafe-0", "D-PT-1-OneSafe", "D-PT-1-OneSafe-0"] {
            let answers = resolve(
                &parse_output(&format!("FORMULA {id} FALSE")),
                Expected {
                    examination: "OneSafe",
                    instance: "D-PT-1",
                    form: AnswerForm::Global,
                    kind: ValueKind::Boolean,
                    ids: &global,
                },
            );
            assert_eq!(
                value_of(&answers, "OneSafe").as_deref(),
                Some("FALSE"),
                "{id}"
            );
        }
    }
}

/// The answer parser on generated output (issue 13, item 10): it never panics, reading the
/// output in chunks split anywhere is reading it whole, and every diagnostic names its place
/// (a line of the output that exists). `MCCBUILD_PROPTEST_CASES` sets the number of outputs
/// (scripts/bench-fuzz runs a million).
#[cfg(test)]
mod properties {
    use super::*;
    use proptest::collection::vec;
    use proptest::prelude::*;

    const IDS: [&str; 3] = [
        "X-PT-1-UpperBounds-00",
        "X-PT-1-UpperBounds-01",
        "UpperBounds",
    ];

    /// Words of the protocol, numbers, and a few arbitrary characters.
    fn word() -> impl Strategy<Value = String> {
        const KEYWORDS: &[&str] = &[
            "FORMULA",
            "STATE_SPACE",
            "TECHNIQUES",
            "CANNOT_COMPUTE",
            "DO_NOT_COMPETE",
            "DO",
            "NOT",
            "COMPETE",
            "TRUE",
            "FALSE",
            "STATES",
            "TRANSITIONS",
            "MAX_TOKEN_IN_PLACE",
            "MAX_TOKEN_PER_MARKING",
            "SAFE",
            "UNSAFE",
            "UNKNOWN",
            IDS[0],
            IDS[1],
            IDS[2],
            "X-PT-1-UpperBounds-0",
            "+inf",
            "inf",
            "-1",
            "-0",
            "1.5e3",
            "0x10",
            "",
        ];
        prop_oneof![
            4 => proptest::sample::select(KEYWORDS).prop_map(String::from),
            2 => any::<u64>().prop_map(|n| n.to_string()),
            1 => vec(0u8..10, 1..60).prop_map(|d| d.iter().map(|d| char::from(b'0' + d)).collect()),
            1 => vec(any::<char>(), 0..10).prop_map(|c| c.into_iter().collect()),
        ]
    }

    /// A tool's stdout: lines of words, or arbitrary bytes.
    fn output() -> impl Strategy<Value = Vec<u8>> {
        let separator = proptest::sample::select(&[" ", "  ", "\t", " \r"][..]);
        let line = vec((word(), separator), 0..8).prop_map(|words| {
            words
                .into_iter()
                .map(|(w, s)| format!("{w}{s}"))
                .collect::<String>()
        });
        prop_oneof![
            3 => vec(line, 0..24).prop_map(|lines| lines.join("\n").into_bytes()),
            1 => vec(any::<u8>(), 0..1500),
        ]
    }

    fn cases() -> u32 {
        std::env::var("MCCBUILD_PROPTEST_CASES")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(2000)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(cases()))]

        #[test]
        fn any_output_is_read_and_every_diagnostic_names_its_line(
            bytes in output(),
            cuts in vec(any::<prop::sample::Index>(), 0..6),
        ) {
            let mut parser = OutputParser::new();
            let mut cuts: Vec<usize> = cuts.iter().map(|c| c.index(bytes.len() + 1)).collect();
            cuts.sort_unstable();
            let mut from = 0;
            for cut in cuts.into_iter().chain([bytes.len()]) {
                parser.feed(&bytes[from..cut]);
                from = cut;
            }
            let parsed = parser.finish();
            let whole = parse_output(&String::from_utf8_lossy(&bytes));
            if std::str::from_utf8(&bytes).is_ok() {
                prop_assert_eq!(&parsed, &whole);
            }
            let lines = bytes.split(|&b| b == b'\n').count();
            let ids: Vec<Arc<str>> = IDS.iter().map(|&id| Arc::from(id)).collect();
            let state_space: Vec<Arc<str>> = ["STATES", "TRANSITIONS", "MAX_TOKEN_IN_PLACE", "MAX_TOKEN_PER_MARKING"]
                .iter().map(|&id| Arc::from(id)).collect();
            for (form, kind, ids) in [
                (AnswerForm::StateSpace, ValueKind::Integer, &state_space[..]),
                (AnswerForm::Global, ValueKind::Boolean, &ids[2..]),
                (AnswerForm::Formulas, ValueKind::Integer, &ids[..2]),
                (AnswerForm::Formulas, ValueKind::Boolean, &ids[..2]),
                (AnswerForm::VerificationResult, ValueKind::Boolean, &ids[2..]),
            ] {
                let expected = Expected { examination: "UpperBounds", instance: "X-PT-1", form, kind, ids };
                let (answers, kinds) = resolve_detailed(&parsed, expected);
                prop_assert_eq!(answers.diagnostics.len(), kinds.len());
                prop_assert!(answers.answers.len() <= ids.len());
                for d in &answers.diagnostics {
                    let place = d.strip_prefix("lines ").or_else(|| d.strip_prefix("line "));
                    let numbers: Vec<usize> = place
                        .map(|p| p.split(':').next().unwrap_or("").split(" and ").filter_map(|n| n.trim().parse().ok()).collect())
                        .unwrap_or_default();
                    prop_assert!(!numbers.is_empty(), "a diagnostic without its line: {}", d);
                    for n in numbers {
                        prop_assert!((1..=lines).contains(&n), "line {} of {}: {}", n, lines, d);
                    }
                }
            }
        }
    }
}
