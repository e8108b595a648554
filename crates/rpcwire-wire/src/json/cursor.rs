//! `Cursor`: a position in the input that knows the JSON grammar, for the JSON-RPC envelope's
//! general path and the raw-JSON iterators.
//!
//! Every method validates what it steps over, through the position functions of `string`
//! (escapes, surrogate pairs, UTF-8, control characters) and `value` (numbers, literals,
//! nested values with a depth limit and without recursion).

use super::error::{SyntaxError, SyntaxErrorKind};
use super::kernels::Span;
use super::number::number_end;
use super::string::{string_span, StrSpan};
use super::value::{literal_end, skip_ws_at, unexpected_at, value_end, Literal};

/// A position in the input and the grammar around it.
pub(crate) struct Cursor<'a> {
    pub(crate) buf: &'a [u8],
    pub(crate) pos: usize,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Cursor<'a> {
        Cursor::at(buf, 0)
    }

    /// A cursor at `pos` (a local one lets a function keep the position in a register).
    pub(crate) fn at(buf: &'a [u8], pos: usize) -> Cursor<'a> {
        Cursor { buf, pos }
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
    pub(crate) fn error(&self, kind: SyntaxErrorKind) -> SyntaxError {
        SyntaxError::new(kind, self.pos)
    }

    /// "Unexpected byte" (or "unexpected end") at the current position.
    #[cold]
    pub(crate) fn unexpected(&self, expected: &'static str) -> SyntaxError {
        unexpected_at(self.buf, self.pos, expected)
    }

    /// Consumes `byte` (after optional whitespace) or fails with `expected`.
    #[inline(always)]
    pub(crate) fn expect(&mut self, byte: u8, expected: &'static str) -> Result<(), SyntaxError> {
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
    pub(crate) fn string(&mut self) -> Result<StrSpan, SyntaxError> {
        let (span, after) = string_span(self.buf, self.pos + 1)?;
        self.pos = after;
        Ok(span)
    }

    /// A number; the reader is at its first byte (`-` or a digit).
    #[inline]
    pub(crate) fn number(&mut self) -> Result<Span, SyntaxError> {
        let start = self.pos;
        self.pos = number_end(self.buf, start)?;
        Ok(Span::new(start, self.pos))
    }

    /// `true`, `false` or `null`; the reader is at its first byte.
    #[inline]
    pub(crate) fn literal(&mut self) -> Result<Literal, SyntaxError> {
        let (literal, end) = literal_end(self.buf, self.pos)?;
        self.pos = end;
        Ok(literal)
    }

    /// Any value, validated; `enclosing` is the number of containers around it.
    #[inline]
    pub(crate) fn value(&mut self, enclosing: usize, max_depth: usize) -> Result<(), SyntaxError> {
        self.pos = value_end(self.buf, self.pos, enclosing, max_depth)?;
        Ok(())
    }

    /// [`value`](Cursor::value), and the span it covers.
    #[inline]
    pub(crate) fn value_span(&mut self, enclosing: usize, max_depth: usize) -> Result<Span, SyntaxError> {
        let start = self.pos;
        self.value(enclosing, max_depth)?;
        Ok(Span::new(start, self.pos))
    }

    /// An object member's key and colon; the reader is at the key's opening quote (after
    /// whitespace) and is left at the member's value.
    #[inline(always)]
    pub(crate) fn member_key(&mut self) -> Result<StrSpan, SyntaxError> {
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

    /// Whitespace to the end of the input, or a trailing-bytes error.
    pub(crate) fn finish(&mut self) -> Result<(), SyntaxError> {
        self.skip_ws();
        if self.at_end() {
            Ok(())
        } else {
            Err(self.error(SyntaxErrorKind::TrailingBytes))
        }
    }
}
