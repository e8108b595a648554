//! `Reader`: a cursor over the input that knows the JSON grammar, for the envelope's general
//! path and the raw-JSON iterators.
//!
//! Every method validates what it steps over, through the position functions of `string`
//! (escapes, surrogate pairs, UTF-8, control characters) and `value` (numbers, literals,
//! nested values with a depth limit and without recursion).

use super::error::{ParseError, Reason};
use super::scan;
use super::spans::{Span, StrSpan};
use super::string::string_span;
pub(crate) use super::value::Literal;
use super::value::{literal_end, number_end, skip_ws_at, unexpected_at, value_end};

/// The JSON whitespace characters (space, tab, line feed, carriage return), for
/// `str::trim_matches`.
pub(crate) fn is_json_whitespace_char(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

/// A position in the input and the grammar around it.
pub(crate) struct Reader<'a> {
    pub(crate) buf: &'a [u8],
    pub(crate) pos: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Reader<'a> {
        Reader::at(buf, 0)
    }

    /// A cursor at `pos` (a local one lets a function keep the position in a register).
    pub(crate) fn at(buf: &'a [u8], pos: usize) -> Reader<'a> {
        Reader { buf, pos }
    }

    #[inline(always)]
    pub(crate) fn peek(&self) -> Option<u8> {
        self.buf.get(self.pos).copied()
    }

    #[inline(always)]
    pub(crate) fn at_end(&self) -> bool {
        self.pos >= self.buf.len()
    }

    #[inline(always)]
    pub(crate) fn skip_ws(&mut self) {
        self.pos = skip_ws_at(self.buf, self.pos);
    }

    /// An error at the current position.
    #[cold]
    pub(crate) fn error(&self, reason: Reason) -> ParseError {
        ParseError::new(reason, self.pos)
    }

    /// "Unexpected byte" (or "unexpected end") at the current position.
    #[cold]
    pub(crate) fn unexpected(&self, expected: &'static str) -> ParseError {
        unexpected_at(self.buf, self.pos, expected)
    }

    /// Consumes `byte` (after optional whitespace) or fails with `expected`.
    #[inline(always)]
    pub(crate) fn expect(&mut self, byte: u8, expected: &'static str) -> Result<(), ParseError> {
        self.skip_ws();
        if self.peek() == Some(byte) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.unexpected(expected))
        }
    }

    /// A string; the reader is at its opening quote. Returns the content between the
    /// quotes and whether it holds escapes; leaves the reader after the closing quote.
    #[inline(always)]
    pub(crate) fn string(&mut self) -> Result<StrSpan, ParseError> {
        let (span, after) = string_span(self.buf, self.pos + 1)?;
        self.pos = after;
        Ok(span)
    }

    /// A number; the reader is at its first byte (`-` or a digit).
    #[inline]
    pub(crate) fn number(&mut self) -> Result<Span, ParseError> {
        let start = self.pos;
        self.pos = number_end(self.buf, start)?;
        Ok(Span::new(start, self.pos))
    }

    /// `true`, `false` or `null`; the reader is at its first byte.
    #[inline]
    pub(crate) fn literal(&mut self) -> Result<Literal, ParseError> {
        let (literal, end) = literal_end(self.buf, self.pos)?;
        self.pos = end;
        Ok(literal)
    }

    /// Any value, validated; `enclosing` is the number of containers around it.
    #[inline]
    pub(crate) fn value(&mut self, enclosing: usize, max_depth: usize) -> Result<(), ParseError> {
        self.pos = value_end(self.buf, self.pos, enclosing, max_depth)?;
        Ok(())
    }

    /// An object member's key and colon; the reader is at the key's opening quote (after
    /// whitespace) and is left at the member's value.
    #[inline(always)]
    pub(crate) fn member_key(&mut self) -> Result<StrSpan, ParseError> {
        if self.peek() != Some(b'"') {
            return Err(self.unexpected("a string key"));
        }
        let key = self.string()?;
        if self.peek() == Some(b':') {
            self.pos += 1;
        } else {
            self.expect(b':', "':'")?;
        }
        self.skip_ws();
        Ok(key)
    }

    /// An array or an object with everything inside it; the reader is at `[` or `{`.
    #[inline]
    pub(crate) fn container(&mut self, enclosing: usize, max_depth: usize) -> Result<(), ParseError> {
        self.pos = value_end(self.buf, self.pos, enclosing, max_depth)?;
        Ok(())
    }

    /// Whitespace to the end of the input, or a trailing-bytes error.
    pub(crate) fn finish(&mut self) -> Result<(), ParseError> {
        self.skip_ws();
        if self.at_end() {
            Ok(())
        } else {
            Err(self.error(Reason::TrailingBytes))
        }
    }
}

/// Validates `bytes` as exactly one JSON value with optional surrounding whitespace, with
/// the default nesting limit.
pub(crate) fn validate_json(bytes: &[u8]) -> Result<(), ParseError> {
    let mut reader = Reader::new(bytes);
    reader.skip_ws();
    reader.value(0, super::Limits::default().get_max_depth())?;
    reader.finish()
}

/// `true` when `bytes` is exactly one JSON number.
pub(crate) fn is_json_number(bytes: &[u8]) -> bool {
    let mut reader = Reader::new(bytes);
    matches!(bytes.first(), Some(b'-' | b'0'..=b'9')) && reader.number().is_ok() && reader.at_end()
}

/// The elements of a validated JSON array, as text.
pub(crate) struct ArrayIter<'a> {
    reader: Reader<'a>,
    first: bool,
    done: bool,
}

impl<'a> ArrayIter<'a> {
    /// `text` must be a validated JSON array.
    pub(crate) fn new(text: &'a str) -> ArrayIter<'a> {
        let mut reader = Reader::new(text.as_bytes());
        reader.skip_ws();
        let done = reader.peek() != Some(b'[');
        reader.pos += 1;
        ArrayIter {
            reader,
            first: true,
            done,
        }
    }

    fn step(&mut self) -> Result<Option<&'a str>, ParseError> {
        self.reader.skip_ws();
        match self.reader.peek() {
            Some(b']') | None => return Ok(None),
            Some(b',') if !self.first => {
                self.reader.pos += 1;
                self.reader.skip_ws();
            }
            _ => {}
        }
        self.first = false;
        let start = self.reader.pos;
        self.reader.value(1, usize::MAX)?;
        Ok(Some(scan::str_from_validated(
            &self.reader.buf[start..self.reader.pos],
        )))
    }
}

impl<'a> Iterator for ArrayIter<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        if self.done {
            return None;
        }
        let item = self.step().ok().flatten();
        self.done = item.is_none();
        item
    }
}

/// One member of a validated JSON object: `((raw key, key has escapes), value text)`.
pub(crate) type RawMember<'a> = ((&'a str, bool), &'a str);

/// The members of a validated JSON object: key (raw, with escape flag) and value text.
pub(crate) struct MemberIter<'a> {
    reader: Reader<'a>,
    first: bool,
    done: bool,
}

impl<'a> MemberIter<'a> {
    /// `text` must be a validated JSON object.
    pub(crate) fn new(text: &'a str) -> MemberIter<'a> {
        let mut reader = Reader::new(text.as_bytes());
        reader.skip_ws();
        let done = reader.peek() != Some(b'{');
        reader.pos += 1;
        MemberIter {
            reader,
            first: true,
            done,
        }
    }

    fn step(&mut self) -> Result<Option<RawMember<'a>>, ParseError> {
        self.reader.skip_ws();
        match self.reader.peek() {
            Some(b'}') | None => return Ok(None),
            Some(b',') if !self.first => {
                self.reader.pos += 1;
                self.reader.skip_ws();
            }
            _ => {}
        }
        self.first = false;
        let key = self.reader.member_key()?;
        let start = self.reader.pos;
        self.reader.value(1, usize::MAX)?;
        let buf = self.reader.buf;
        Ok(Some((
            (key.span.text(buf), key.escaped),
            scan::str_from_validated(&buf[start..self.reader.pos]),
        )))
    }
}

impl<'a> Iterator for MemberIter<'a> {
    /// `((raw key, key has escapes), value text)`.
    type Item = RawMember<'a>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let item = self.step().ok().flatten();
        self.done = item.is_none();
        item
    }
}
