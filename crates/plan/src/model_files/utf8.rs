//! The UTF-8 check of an XML file as it is read: a byte that is not part of a UTF-8 character
//! makes a document whose encoding is UTF-8 (the default, and what the MCC's files declare)
//! not well-formed XML. The check passes bytes on as the XML reader asks for them, stops at the
//! first bad one and remembers where it was, in constant memory whatever the file's size.

use std::io::{self, BufRead, Read};

/// The first byte of a file that is not part of a UTF-8 character: the start of the bad
/// sequence (as `std::str::Utf8Error::valid_up_to` counts it) and its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BadByte {
    pub(crate) offset: u64,
    pub(crate) byte: u8,
}

/// What the check expects of the next byte.
#[derive(Clone, Copy, Debug, Default)]
struct Expect {
    /// Continuation bytes still due in the character begun at `lead`.
    due: u8,
    /// The range the next continuation byte must be in (overlong forms and surrogates are
    /// refused by its bounds, as `std::str::from_utf8` refuses them).
    low: u8,
    high: u8,
    /// The character's first byte, and where it is.
    lead: u8,
    lead_at: u64,
}

/// A reader that passes on the bytes of `inner` up to the first one that is not UTF-8, then
/// fails with [`io::ErrorKind::InvalidData`]; [`Utf8Checked::bad`] says where.
pub(crate) struct Utf8Checked<R> {
    inner: R,
    /// Bytes consumed so far: the offset of the start of `inner`'s buffer.
    consumed: u64,
    /// Bytes at the start of `inner`'s buffer already checked (passed on).
    checked: usize,
    expect: Expect,
    bad: Option<BadByte>,
    /// The file declares another encoding: nothing is checked.
    off: bool,
}

impl<R: BufRead> Utf8Checked<R> {
    pub(crate) fn new(inner: R) -> Self {
        Utf8Checked {
            inner,
            consumed: 0,
            checked: 0,
            expect: Expect::default(),
            bad: None,
            off: false,
        }
    }

    /// The first byte that is not UTF-8, once the reading has reached it.
    pub(crate) fn bad(&self) -> Option<BadByte> {
        self.bad
    }

    /// The document declares an encoding other than UTF-8: its bytes are not checked (a bad
    /// byte already met is forgotten, the bytes after it are passed on).
    pub(crate) fn accept_any_encoding(&mut self) {
        self.off = true;
        self.bad = None;
    }

    fn invalid(bad: BadByte) -> io::Error {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "byte 0x{:02x} at offset {} is not UTF-8",
                bad.byte, bad.offset
            ),
        )
    }
}

/// How many bytes of `bytes` (the next ones of the file, the first at `offset`) are UTF-8 so
/// far, given what the bytes before expect; `expect` is updated, and the first bad byte is
/// returned with the count of bytes before it.
fn check(bytes: &[u8], offset: u64, expect: &mut Expect) -> (usize, Option<BadByte>) {
    let mut i = 0;
    while i < bytes.len() {
        if expect.due == 0 {
            // The bulk: whole characters.
            match std::str::from_utf8(&bytes[i..]) {
                Ok(_) => return (bytes.len(), None),
                Err(e) => {
                    i += e.valid_up_to();
                    if let Some(_len) = e.error_len() {
                        return (
                            i,
                            Some(BadByte {
                                offset: offset + i as u64,
                                byte: bytes[i],
                            }),
                        );
                    }
                    // A character cut by the end of the bytes: checked byte by byte below.
                }
            }
        }
        let b = bytes[i];
        if expect.due == 0 {
            let (due, low, high) = match b {
                0xC2..=0xDF => (1, 0x80, 0xBF),
                0xE0 => (2, 0xA0, 0xBF),
                0xE1..=0xEC | 0xEE..=0xEF => (2, 0x80, 0xBF),
                0xED => (2, 0x80, 0x9F),
                0xF0 => (3, 0x90, 0xBF),
                0xF1..=0xF3 => (3, 0x80, 0xBF),
                0xF4 => (3, 0x80, 0x8F),
                _ => {
                    let bad = BadByte {
                        offset: offset + i as u64,
                        byte: b,
                    };
                    return (i, Some(bad));
                }
            };
            *expect = Expect {
                due,
                low,
                high,
                lead: b,
                lead_at: offset + i as u64,
            };
        } else if b < expect.low || b > expect.high {
            let bad = BadByte {
                offset: expect.lead_at,
                byte: expect.lead,
            };
            return (i, Some(bad));
        } else {
            expect.due -= 1;
            expect.low = 0x80;
            expect.high = 0xBF;
        }
        i += 1;
    }
    (i, None)
}

impl<R: BufRead> Read for Utf8Checked<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let n = {
            let available = self.fill_buf()?;
            let n = available.len().min(out.len());
            out[..n].copy_from_slice(&available[..n]);
            n
        };
        self.consume(n);
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Utf8Checked<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.off {
            return self.inner.fill_buf();
        }
        let buf = self.inner.fill_buf()?;
        if let Some(bad) = self.bad {
            // The bytes before the bad one are passed on first.
            if self.checked == 0 {
                return Err(Self::invalid(bad));
            }
            return Ok(&buf[..self.checked.min(buf.len())]);
        }
        if buf.is_empty() {
            if self.expect.due > 0 {
                // The file ends inside a character.
                let bad = BadByte {
                    offset: self.expect.lead_at,
                    byte: self.expect.lead,
                };
                self.bad = Some(bad);
                return Err(Self::invalid(bad));
            }
            return Ok(buf);
        }
        if self.checked < buf.len() {
            let from = self.checked;
            let (good, bad) = check(&buf[from..], self.consumed + from as u64, &mut self.expect);
            self.checked = from + good;
            if let Some(bad) = bad {
                self.bad = Some(bad);
                if self.checked == 0 {
                    return Err(Self::invalid(bad));
                }
            }
        }
        Ok(&buf[..self.checked])
    }

    fn consume(&mut self, amount: usize) {
        self.inner.consume(amount);
        self.consumed += amount as u64;
        self.checked = self.checked.saturating_sub(amount);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Reads `bytes` through the check in chunks of `chunk` bytes; what was passed on and the
    /// bad byte.
    fn read_all(bytes: &[u8], chunk: usize) -> (Vec<u8>, Option<BadByte>) {
        let inner = io::BufReader::with_capacity(chunk.max(1), bytes);
        let mut checked = Utf8Checked::new(inner);
        let mut out = Vec::new();
        let result = checked.read_to_end(&mut out);
        assert_eq!(result.is_err(), checked.bad().is_some());
        (out, checked.bad())
    }

    #[test]
    fn stops_at_the_first_bad_byte() {
        assert_eq!(
            read_all(b"<a>\xc3\xa9</a>", 2),
            (b"<a>\xc3\xa9</a>".to_vec(), None)
        );
        let (out, bad) = read_all(b"<a>x\xffy</a>", 3);
        assert_eq!(out, b"<a>x");
        assert_eq!(
            bad,
            Some(BadByte {
                offset: 4,
                byte: 0xff
            })
        );
        // A character cut by the end of the file, and one whose second byte is not its own.
        assert_eq!(read_all(b"ab\xe2\x82", 1).1.map(|b| b.offset), Some(2));
        assert_eq!(read_all(b"ab\xc3A", 1).1.map(|b| b.offset), Some(2));
        // Surrogates and overlong forms are not UTF-8.
        assert_eq!(read_all(b"\xed\xa0\x80", 8).1.map(|b| b.offset), Some(0));
        assert_eq!(read_all(b"x\xc0\x80", 8).1.map(|b| b.offset), Some(1));
    }

    #[test]
    fn another_declared_encoding_is_not_checked() {
        let inner = io::BufReader::with_capacity(4, &b"ab\xffcd"[..]);
        let mut checked = Utf8Checked::new(inner);
        let mut out = [0u8; 2];
        checked.read_exact(&mut out).unwrap();
        checked.accept_any_encoding();
        let mut rest = Vec::new();
        checked.read_to_end(&mut rest).unwrap();
        assert_eq!(rest, b"\xffcd");
    }

    proptest! {
        /// Whatever the bytes and however they are cut, the check agrees with
        /// `std::str::from_utf8`: the same bytes pass, the same first bad byte is reported.
        #[test]
        fn agrees_with_from_utf8(
            bytes in proptest::collection::vec(
                prop_oneof![4 => 0x20u8..0x7f, 1 => 0x80u8..=0xff, 1 => Just(0xc3), 1 => Just(0xe2)],
                0..40,
            ),
            chunk in 1usize..7,
        ) {
            let (out, bad) = read_all(&bytes, chunk);
            match std::str::from_utf8(&bytes) {
                Ok(_) => {
                    prop_assert_eq!(bad, None);
                    prop_assert_eq!(out, bytes);
                }
                Err(e) => {
                    let at = e.valid_up_to();
                    prop_assert_eq!(bad, Some(BadByte { offset: at as u64, byte: bytes[at] }));
                    prop_assert!(out.len() >= at && bytes.starts_with(&out));
                }
            }
        }
    }
}
