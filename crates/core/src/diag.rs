//! Problems reported to the user: each names the file, the place in it, what is wrong and what
//! to do. Checks collect every problem they find instead of stopping at the first one.

use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

/// A line and column (both 1-based; columns count characters) in a text file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Location {
    pub line: usize,
    pub column: usize,
}

/// One problem found in the user's input.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Problem {
    pub file: PathBuf,
    pub location: Option<Location>,
    pub message: String,
    pub help: Option<String>,
}

impl Problem {
    pub fn new(file: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        Problem {
            file: file.into(),
            location: None,
            message: message.into(),
            help: None,
        }
    }

    pub fn at(mut self, location: Option<Location>) -> Self {
        self.location = location;
        self
    }

    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(loc) = self.location {
            write!(f, ":{}:{}", loc.line, loc.column)?;
        }
        write!(f, ": {}", self.message)?;
        if let Some(help) = &self.help {
            write!(f, "\n  help: {help}")?;
        }
        Ok(())
    }
}

/// Every problem a check found.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Problems(pub Vec<Problem>);

impl Problems {
    pub fn push(&mut self, problem: Problem) {
        self.0.push(problem);
    }

    pub fn extend(&mut self, other: Problems) {
        self.0.extend(other.0);
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// `Ok(value)` when nothing was found, the problems otherwise.
    pub fn into_result<T>(self, value: T) -> Result<T, Problems> {
        if self.0.is_empty() {
            Ok(value)
        } else {
            Err(self)
        }
    }
}

impl From<Problem> for Problems {
    fn from(problem: Problem) -> Self {
        Problems(vec![problem])
    }
}

impl fmt::Display for Problems {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, problem) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "error: {problem}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Problems {}

/// The text of a file being checked, to turn byte offsets into lines and columns.
pub struct SourceText<'a> {
    pub path: &'a Path,
    pub text: &'a str,
}

impl SourceText<'_> {
    pub fn location(&self, offset: usize) -> Location {
        let offset = offset.min(self.text.len());
        let before = &self.text[..floor_char_boundary(self.text, offset)];
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        Location { line, column }
    }

    pub fn problem_at(&self, span: Option<Range<usize>>, message: impl Into<String>) -> Problem {
        Problem::new(self.path, message).at(span.map(|s| self.location(s.start)))
    }

    /// Turns a TOML parse or schema error into a problem at its place.
    pub fn toml_problem(&self, error: &toml::de::Error, help: &str) -> Problem {
        let message = error.message().trim().to_string();
        let message = message.strip_suffix('.').unwrap_or(&message).to_string();
        self.problem_at(error.span(), message).help(help)
    }
}

/// The text of a file read as `bytes`, or the problem of its first byte that is not UTF-8: at
/// its line and column, with its offset and value (`what` names the file in the message: "the
/// manifest", "model.pnml").
pub fn utf8_text<'a>(path: &Path, bytes: &'a [u8], what: &str) -> Result<&'a str, Problem> {
    std::str::from_utf8(bytes).map_err(|e| {
        let offset = e.valid_up_to();
        // The bytes before the first bad one are valid UTF-8.
        let before = std::str::from_utf8(&bytes[..offset]).unwrap_or_default();
        let location = SourceText { path, text: before }.location(offset);
        let byte = bytes.get(offset).copied().unwrap_or_default();
        Problem::new(
            path,
            format!(
                "{what} is not UTF-8 text: byte 0x{byte:02x} at offset {offset} is not a character"
            ),
        )
        .at(Some(location))
        .help("save the file as UTF-8 (e.g. `iconv -f latin1 -t utf-8`), or remove the byte")
    })
}

fn floor_char_boundary(text: &str, mut offset: usize) -> usize {
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_are_one_based() {
        let text = "a = 1\nbb = 2\n";
        let source = SourceText {
            path: Path::new("x.toml"),
            text,
        };
        assert_eq!(source.location(0), Location { line: 1, column: 1 });
        assert_eq!(source.location(6), Location { line: 2, column: 1 });
        assert_eq!(source.location(8), Location { line: 2, column: 3 });
        assert_eq!(source.location(999), Location { line: 3, column: 1 });
    }

    #[test]
    fn a_byte_that_is_not_utf8_is_placed() {
        let path = Path::new("x.toml");
        assert_eq!(utf8_text(path, b"a = 1\n", "it"), Ok("a = 1\n"));
        let problem =
            utf8_text(path, b"a = 1\nb = \"\xc3\xa9\xff\"\n", "the manifest").unwrap_err();
        assert_eq!(problem.location, Some(Location { line: 2, column: 7 }));
        assert_eq!(
            problem.message,
            "the manifest is not UTF-8 text: byte 0xff at offset 13 is not a character"
        );
        // A character cut short at the end of the file.
        let problem = utf8_text(path, b"ab\xc3", "it").unwrap_err();
        assert_eq!(problem.location, Some(Location { line: 1, column: 3 }));
        assert!(problem.message.contains("byte 0xc3 at offset 2"));
    }

    #[test]
    fn display_names_file_place_and_fix() {
        let problem = Problem::new("contest.toml", "unknown key `jbos`")
            .at(Some(Location { line: 3, column: 1 }))
            .help("did you mean `jobs`?");
        assert_eq!(
            problem.to_string(),
            "contest.toml:3:1: unknown key `jbos`\n  help: did you mean `jobs`?"
        );
    }
}
