//! Reading an instance's XML files: the `<id>`s of its formula files and the well-formedness of
//! its `model.pnml`. Problems carry the line and column where they were found.

use std::io::{self, BufRead, Read};

use mccbuild_core::diag::Location;
use quick_xml::events::{BytesDecl, Event};
use serde::{Deserialize, Serialize};

use self::utf8::Utf8Checked;

mod utf8;

/// A problem found in one file, and where in it when that is known.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("{message}")]
pub struct FileProblem {
    pub message: String,
    pub location: Option<Location>,
}

impl FileProblem {
    pub fn new(message: impl Into<String>) -> FileProblem {
        FileProblem {
            message: message.into(),
            location: None,
        }
    }
}

/// What `model.pnml` says about the net.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NetInfo {
    pub net_type: String,
    pub colored: bool,
}

/// A problem at a byte offset of the file, before the offset is turned into a place.
pub(crate) struct AtOffset {
    message: String,
    offset: Option<u64>,
}

impl AtOffset {
    /// A problem where the reader is now.
    fn at<R>(message: impl Into<String>, reader: &quick_xml::Reader<R>) -> AtOffset {
        AtOffset {
            message: message.into(),
            offset: Some(reader.buffer_position()),
        }
    }

    /// The reader's own error, where it began.
    fn parse_error<R>(message: impl Into<String>, reader: &quick_xml::Reader<R>) -> AtOffset {
        AtOffset {
            message: message.into(),
            offset: Some(reader.error_position()),
        }
    }

    /// The reader's error, at the first byte that is not UTF-8 when that is why it stopped
    /// (`what`: "model.pnml", "the formula file").
    fn read_error<R: BufRead>(
        error: &quick_xml::Error,
        reader: &quick_xml::Reader<Utf8Checked<R>>,
        what: &str,
    ) -> AtOffset {
        match reader.get_ref().bad() {
            Some(bad) => AtOffset {
                message: format!(
                    "{what} is not well-formed XML: byte 0x{:02x} at offset {} is not UTF-8, the document's encoding",
                    bad.byte, bad.offset
                ),
                offset: Some(bad.offset),
            },
            None => {
                AtOffset::parse_error(format!("{what} is not well-formed XML: {error}"), reader)
            }
        }
    }

    /// Where the problem is, in bytes from the start of the file, when that is known.
    pub(crate) fn offset(&self) -> Option<u64> {
        self.offset
    }

    /// The problem at `location` (found by the caller from [`AtOffset::offset`]).
    pub(crate) fn at_location(self, location: Option<Location>) -> FileProblem {
        FileProblem {
            message: self.message,
            location,
        }
    }

    /// The problem, its offset turned into a line and column by reading the file again.
    fn locate<R: Read>(self, reopen: impl FnOnce() -> io::Result<R>) -> FileProblem {
        let location = self
            .offset
            .and_then(|offset| reopen().ok().and_then(|r| location_of(r, offset).ok()));
        FileProblem {
            message: self.message,
            location,
        }
    }
}

/// The line and column (1-based, columns in characters) of byte `offset` of what `reader` yields.
pub fn location_of(reader: impl Read, offset: u64) -> io::Result<Location> {
    let mut reader = io::BufReader::new(reader.take(offset));
    let (mut line, mut column) = (1, 1);
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            return Ok(Location { line, column });
        }
        for &b in buf {
            if b == b'\n' {
                line += 1;
                column = 1;
            } else if b & 0xC0 != 0x80 {
                // Not a UTF-8 continuation byte: a character starts here.
                column += 1;
            }
        }
        let n = buf.len();
        reader.consume(n);
    }
}

/// The `<id>`s of a formula file (`<property-set><property><id>`), in file order; `None` when
/// the root element is not `property-set`. `open` gives the file (twice when there is a problem
/// to locate).
pub fn formula_ids<R: BufRead>(
    open: impl Fn() -> io::Result<R>,
) -> Result<Option<Vec<String>>, FileProblem> {
    let input = open().map_err(|e| FileProblem::new(format!("cannot read it: {e}")))?;
    read_formula_ids(input).map_err(|p| p.locate(&open))
}

/// [`formula_ids`] reading the file once (an archive's entry, streamed): a problem keeps its
/// byte offset, for the caller to locate.
pub(crate) fn read_formula_ids(input: impl BufRead) -> Result<Option<Vec<String>>, AtOffset> {
    let mut reader = quick_xml::Reader::from_reader(Utf8Checked::new(input));
    let mut buf = Vec::new();
    let mut stack: Vec<String> = Vec::new();
    // Each id with where its element ends (to place a duplicate).
    let mut ids: Vec<(String, u64)> = Vec::new();
    let mut current: Option<String> = None;
    let mut root_seen = false;
    loop {
        let event = match reader.read_event_into(&mut buf) {
            Ok(event) => event,
            Err(e) => return Err(AtOffset::read_error(&e, &reader, "the formula file")),
        };
        match event {
            Event::Decl(d) => declared_encoding(&d, &mut reader),
            Event::Start(e) => {
                let name = String::from_utf8_lossy(e.local_name().as_ref()).into_owned();
                if !root_seen {
                    root_seen = true;
                    if name != "property-set" {
                        return Ok(None);
                    }
                }
                if stack.len() == 2 && name == "id" && stack[1] == "property" {
                    current = Some(String::new());
                }
                stack.push(name);
            }
            Event::Empty(e) if !root_seen => {
                root_seen = true;
                if e.local_name().as_ref() != b"property-set" {
                    return Ok(None);
                }
            }
            Event::Text(t) => {
                if let Some(id) = current.as_mut() {
                    id.push_str(&String::from_utf8_lossy(&t.into_inner()));
                }
            }
            Event::End(_) => {
                if stack.len() == 3 {
                    if let Some(id) = current.take() {
                        let id = id.trim().to_string();
                        if id.is_empty() {
                            return Err(AtOffset::at("a <property> has an empty <id>", &reader));
                        }
                        ids.push((id, reader.buffer_position()));
                    }
                }
                stack.pop();
            }
            Event::Eof => break,
            _ => {}
        }
        buf.clear();
    }
    // Problems found at the end are placed there.
    if !root_seen {
        return Err(AtOffset::at("empty file: no XML element", &reader));
    }
    if let Some(open) = stack.last() {
        return Err(AtOffset::at(
            format!("the file ends inside <{open}>: it is truncated"),
            &reader,
        ));
    }
    let mut seen = std::collections::HashSet::new();
    if let Some((dup, at)) = ids.iter().find(|(id, _)| !seen.insert(id.as_str())) {
        return Err(AtOffset {
            message: format!("formula id `{dup}` appears twice"),
            offset: Some(*at),
        });
    }
    Ok(Some(ids.into_iter().map(|(id, _)| id).collect()))
}

/// An XML declaration naming an encoding other than UTF-8 (`encoding="ISO-8859-1"`): the
/// document's bytes are then not checked as UTF-8.
fn declared_encoding<R: BufRead>(
    decl: &BytesDecl<'_>,
    reader: &mut quick_xml::Reader<Utf8Checked<R>>,
) {
    let utf8 =
        |name: &[u8]| name.eq_ignore_ascii_case(b"utf-8") || name.eq_ignore_ascii_case(b"utf8");
    if let Some(Ok(encoding)) = decl.encoding() {
        if !utf8(&encoding) {
            reader.get_mut().accept_any_encoding();
        }
    }
}

/// Checks that `model.pnml` is well-formed XML with a `<pnml><net type="...">`. `open` gives
/// the file (twice when there is a problem to locate).
pub fn pnml_info<R: BufRead>(open: impl Fn() -> io::Result<R>) -> Result<NetInfo, FileProblem> {
    let input = open().map_err(|e| FileProblem::new(format!("cannot read model.pnml: {e}")))?;
    read_pnml_info(input).map_err(|p| p.locate(&open))
}

/// [`pnml_info`] reading the file once (an archive's entry, streamed): a problem keeps its byte
/// offset, for the caller to locate.
pub(crate) fn read_pnml_info(input: impl BufRead) -> Result<NetInfo, AtOffset> {
    let mut reader = quick_xml::Reader::from_reader(Utf8Checked::new(input));
    let mut buf = Vec::new();
    let mut depth = 0usize;
    let mut root_seen = false;
    let mut net_type: Option<String> = None;
    loop {
        let event = match reader.read_event_into(&mut buf) {
            Ok(event) => event,
            Err(e) => return Err(AtOffset::read_error(&e, &reader, "model.pnml")),
        };
        match event {
            Event::Decl(ref d) => declared_encoding(d, &mut reader),
            Event::Start(ref e) | Event::Empty(ref e) => {
                let name = e.local_name();
                if !root_seen {
                    root_seen = true;
                    if name.as_ref() != b"pnml" {
                        return Err(AtOffset::at(
                            format!(
                                "model.pnml: the root element is <{}>, not <pnml>",
                                String::from_utf8_lossy(name.as_ref())
                            ),
                            &reader,
                        ));
                    }
                } else if depth == 1 && name.as_ref() == b"net" && net_type.is_none() {
                    let ty = e
                        .try_get_attribute("type")
                        .ok()
                        .flatten()
                        .map(|a| String::from_utf8_lossy(&a.value).into_owned())
                        .ok_or_else(|| {
                            AtOffset::at("model.pnml: <net> has no type attribute", &reader)
                        })?;
                    net_type = Some(ty);
                }
                if matches!(event, Event::Start(_)) {
                    depth += 1;
                }
            }
            Event::End(_) => depth = depth.saturating_sub(1),
            Event::Eof => break,
            _ => {}
        }
        buf.clear();
    }
    // Problems found at the end are placed there.
    if !root_seen {
        return Err(AtOffset::at(
            "model.pnml is not XML: it holds no element",
            &reader,
        ));
    }
    if depth > 0 {
        return Err(AtOffset::at(
            "model.pnml is not well-formed XML: it ends inside an element (truncated?)",
            &reader,
        ));
    }
    let net_type = net_type
        .ok_or_else(|| AtOffset::at("model.pnml: no <net> element under <pnml>", &reader))?;
    let colored = net_type.contains("symmetricnet") || net_type.contains("highlevelnet");
    Ok(NetInfo { net_type, colored })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes<'a>(text: &'a str) -> impl Fn() -> io::Result<&'a [u8]> + 'a {
        move || Ok(text.as_bytes())
    }

    #[test]
    fn formula_ids_in_file_order() {
        let xml = r#"<?xml version="1.0"?>
<property-set xmlns="http://mcc.lip6.fr/">
  <property><id>M-UpperBounds-01</id><description>x</description><formula><place-bound><place>p</place></place-bound></formula></property>
  <property>
    <id>
      M-UpperBounds-00
    </id>
    <formula/>
  </property>
</property-set>"#;
        assert_eq!(
            formula_ids(bytes(xml)).unwrap(),
            Some(vec![
                "M-UpperBounds-01".to_string(),
                "M-UpperBounds-00".to_string()
            ])
        );
        assert_eq!(formula_ids(bytes("<toolspecific/>")).unwrap(), None);
        assert!(formula_ids(bytes("<property-set><property><id>a</id></property><property><id>a</id></property></property-set>")).unwrap_err().message.contains("twice"));
        assert!(formula_ids(bytes("<property-set><property><id>a</id>")).is_err());
        assert!(formula_ids(bytes("")).is_err());
    }

    #[test]
    fn pnml_checks() {
        let ok = r#"<?xml version="1.0"?><pnml xmlns="http://www.pnml.org/version-2009/grammar/pnml"><net id="n" type="http://www.pnml.org/version-2009/grammar/ptnet"><page id="p"/></net></pnml>"#;
        assert_eq!(
            pnml_info(bytes(ok)).unwrap(),
            NetInfo {
                net_type: "http://www.pnml.org/version-2009/grammar/ptnet".into(),
                colored: false
            }
        );
        let colored = ok.replace("ptnet", "symmetricnet");
        assert!(pnml_info(bytes(&colored)).unwrap().colored);
        for bad in [
            "this is not XML",
            "",
            "<pnml><net type=\"x\"></pnml>",
            "<foo/>",
            "<pnml></pnml>",
        ] {
            assert!(pnml_info(bytes(bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn problems_say_line_and_column_not_byte_offsets() {
        // A mismatched end tag on line 3.
        let pnml = "<?xml version=\"1.0\"?>\n<pnml>\n  <net type=\"t\"></nett>\n</pnml>\n";
        let problem = pnml_info(bytes(pnml)).unwrap_err();
        let at = problem.location.expect("located");
        assert_eq!(at.line, 3, "{problem:?}");
        assert!(at.column > 1, "{problem:?}");
        assert!(!problem.message.contains("byte"), "{problem:?}");
        // An empty <id> on line 2.
        let formulas = "<property-set>\n<property><id> </id></property>\n</property-set>";
        let problem = formula_ids(bytes(formulas)).unwrap_err();
        assert_eq!(problem.location.map(|l| l.line), Some(2), "{problem:?}");
    }

    /// Found by the properties below: problems seen at the end of a file (empty, truncated, no
    /// <net>) and a duplicate id had no place; they are placed at the end, at the duplicate.
    #[test]
    fn every_problem_has_its_place() {
        let line = |problem: FileProblem| problem.location.map(|l| (l.line, l.column));
        assert_eq!(line(formula_ids(bytes("")).unwrap_err()), Some((1, 1)));
        let truncated = "<property-set>\n<property>\n  <id>a";
        assert_eq!(
            line(formula_ids(bytes(truncated)).unwrap_err()),
            Some((3, 8))
        );
        let twice = "<property-set>\n<property><id>a</id></property>\n<property><id>a</id></property>\n</property-set>";
        let problem = formula_ids(bytes(twice)).unwrap_err();
        assert!(problem.message.contains("twice"), "{problem:?}");
        assert_eq!(problem.location.map(|l| l.line), Some(3), "{problem:?}");
        assert_eq!(line(pnml_info(bytes("\n\n")).unwrap_err()), Some((3, 1)));
        assert_eq!(
            line(pnml_info(bytes("<pnml>\n</pnml>")).unwrap_err()),
            Some((2, 8))
        );
        assert_eq!(
            line(pnml_info(bytes("<pnml>\n<net type=\"t\">")).unwrap_err()),
            Some((2, 15))
        );
    }

    #[test]
    fn offsets_become_lines_and_characters() {
        let text = "ab\ncdé\nf";
        let at = |offset| location_of(text.as_bytes(), offset).unwrap();
        assert_eq!(at(0), Location { line: 1, column: 1 });
        assert_eq!(at(3), Location { line: 2, column: 1 });
        // `é` is two bytes, one character.
        assert_eq!(at(7), Location { line: 2, column: 4 });
        assert_eq!(at(8), Location { line: 3, column: 1 });
    }
}

/// The XML readers on generated files: valid formula and PNML files edited at random, and arbitrary
/// bytes. They never panic, and every problem has its place (a line and column inside the file).
/// `MCCBUILD_PROPTEST_CASES` sets the number of files (scripts/bench-fuzz runs a million).
#[cfg(test)]
pub(crate) mod properties {
    use super::*;
    use proptest::collection::vec;
    use proptest::prelude::*;

    pub(crate) fn cases() -> u32 {
        cases_or(2000)
    }

    /// `MCCBUILD_PROPTEST_CASES`, else `default`.
    pub(crate) fn cases_or(default: u32) -> u32 {
        std::env::var("MCCBUILD_PROPTEST_CASES")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(default)
    }

    const FORMULAS: &str = "<?xml version=\"1.0\"?>\n<property-set xmlns=\"http://mcc.lip6.fr/\">\n  <property>\n    <id>X-PT-1-UpperBounds-00</id>\n    <description>d</description>\n    <formula><place-bound><place>p1</place></place-bound></formula>\n  </property>\n  <property><id>X-PT-1-UpperBounds-01</id><formula/></property>\n</property-set>\n";
    const PNML: &str = "<?xml version=\"1.0\"?>\n<pnml xmlns=\"http://www.pnml.org/version-2009/grammar/pnml\">\n  <net id=\"n\" type=\"http://www.pnml.org/version-2009/grammar/ptnet\">\n    <page id=\"g\"><place id=\"p1\"/></page>\n  </net>\n</pnml>\n";

    /// An edit of a file: at a position, delete some bytes and insert a snippet.
    fn edits() -> impl Strategy<Value = Vec<(prop::sample::Index, usize, Vec<u8>)>> {
        const SNIPPETS: &[&str] = &[
            "",
            "<",
            ">",
            "/>",
            "</",
            "<id>",
            "</id>",
            "<property>",
            "</property>",
            "<property-set>",
            "</property-set>",
            "<net type=\"x\">",
            "</net>",
            "<pnml>",
            "</pnml>",
            "<!--",
            "-->",
            "<![CDATA[",
            "]]>",
            "&amp;",
            "&#0;",
            "&#x110000;",
            "&bogus;",
            "\"",
            "'",
            "=",
            "\n",
            "<?xml version=\"1.0\" encoding=\"UTF-16\"?>",
            "<!DOCTYPE x [<!ENTITY e \"&e;&e;\">]>",
            "\u{feff}",
            "é",
            "\0",
            "<a:b xmlns:a=\"u\">",
            "  ",
        ];
        let snippet = prop_oneof![
            4 => proptest::sample::select(SNIPPETS).prop_map(|s| s.as_bytes().to_vec()),
            1 => vec(any::<u8>(), 0..8),
        ];
        vec((any::<prop::sample::Index>(), 0usize..12, snippet), 0..6)
    }

    pub(crate) fn edited(base: &[u8], edits: &[(prop::sample::Index, usize, Vec<u8>)]) -> Vec<u8> {
        let mut bytes = base.to_vec();
        for (at, delete, insert) in edits {
            let i = at.index(bytes.len() + 1);
            let end = (i + delete).min(bytes.len());
            bytes.splice(i..end, insert.iter().copied());
        }
        bytes
    }

    /// A file to read: an edited valid one, or arbitrary bytes.
    fn file(base: &'static str) -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            4 => edits().prop_map(move |e| edited(base.as_bytes(), &e)),
            1 => vec(any::<u8>(), 0..600),
        ]
    }

    /// The problem is placed inside the file: a line that exists, a column on it.
    fn placed_inside(problem: &FileProblem, bytes: &[u8]) -> Result<(), TestCaseError> {
        let Some(at) = problem.location else {
            return Err(TestCaseError::fail(format!(
                "a problem without its place: {problem:?}"
            )));
        };
        let lines: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
        prop_assert!(
            at.line >= 1 && at.line <= lines.len(),
            "{:?} in {} lines",
            problem,
            lines.len()
        );
        prop_assert!(
            at.column >= 1 && at.column <= lines[at.line - 1].len() + 1,
            "{:?}",
            problem
        );
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(cases()))]

        #[test]
        fn formula_files_are_read_or_refused_at_a_place(bytes in file(FORMULAS)) {
            match formula_ids(|| Ok::<_, io::Error>(&bytes[..])) {
                Ok(Some(ids)) => {
                    let mut seen = std::collections::HashSet::new();
                    for id in &ids {
                        prop_assert!(!id.is_empty() && id.trim() == id, "id {:?}", id);
                        prop_assert!(seen.insert(id), "id {:?} twice", id);
                    }
                }
                Ok(None) => {}
                Err(problem) => placed_inside(&problem, &bytes)?,
            }
        }

        #[test]
        fn pnml_files_are_read_or_refused_at_a_place(bytes in file(PNML)) {
            if let Err(problem) = pnml_info(|| Ok::<_, io::Error>(&bytes[..])) {
                placed_inside(&problem, &bytes)?;
            }
        }
    }
}
