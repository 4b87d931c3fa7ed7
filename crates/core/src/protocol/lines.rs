//! The first step of reading a tool's output: its lines, as they stream out of the tool, sorted
//! into answer lines (`FORMULA ...`, `STATE_SPACE ...`), the whole-output keywords
//! (`DO_NOT_COMPETE`, `CANNOT_COMPUTE`, SV-COMP's `SAFE`/`UNSAFE`/`UNKNOWN`), malformed lines and
//! noise. Nothing is matched to value ids here ([`super::resolve`] does).

use crate::value::{Value, ValueError};

/// Longest line the parser looks at; longer lines are noise (a tool flooding one line).
pub(super) const MAX_LINE: usize = 64 * 1024;

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
