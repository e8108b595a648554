//! `Reader`: a cursor over the input that knows the JSON grammar.
//!
//! Every method validates what it steps over: strings (escapes, surrogate pairs, UTF-8,
//! control characters), numbers (the full grammar), literals, and nested values (with a
//! depth limit and an explicit stack, so deep input cannot overflow the call stack).

use super::error::{ParseError, Reason};
use super::scan;
use super::spans::{Span, StrSpan};

/// The JSON whitespace bytes: space, tab, line feed, carriage return.
#[inline(always)]
fn is_ws(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | b'\r')
}

/// `char` flavour of [`is_ws`], for `str::trim_matches`.
pub(crate) fn is_json_whitespace_char(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

/// One of the three literals.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Literal {
    True,
    False,
    Null,
}

/// A stack of bits (`true` = object, `false` = array): the first 128 levels in one
/// `u128`, deeper levels (only with a `max_depth` above 128) on the heap.
struct ContainerStack {
    bits: u128,
    len: usize,
    deeper: Vec<bool>,
}

impl ContainerStack {
    fn new() -> ContainerStack {
        ContainerStack {
            bits: 0,
            len: 0,
            deeper: Vec::new(),
        }
    }

    #[inline(always)]
    fn push(&mut self, is_object: bool) {
        if self.len < 128 {
            let bit = 1u128 << self.len;
            if is_object {
                self.bits |= bit;
            } else {
                self.bits &= !bit;
            }
        } else {
            self.deeper.push(is_object);
        }
        self.len += 1;
    }

    #[inline(always)]
    fn pop(&mut self) {
        self.len -= 1;
        if self.len >= 128 {
            self.deeper.pop();
        }
    }

    /// `true` when the innermost open container is an object.
    #[inline(always)]
    fn top_is_object(&self) -> bool {
        let at = self.len.wrapping_sub(1);
        if at < 128 {
            self.bits & (1u128 << at) != 0
        } else {
            self.deeper.last().copied().unwrap_or(false)
        }
    }
}

/// A position in the input and the grammar around it.
pub(crate) struct Reader<'a> {
    pub(crate) buf: &'a [u8],
    pub(crate) pos: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Reader<'a> {
        Reader { buf, pos: 0 }
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
        // Compact JSON has no whitespace: one compare decides most calls.
        match self.buf.get(self.pos) {
            Some(&byte) if byte > b' ' => return,
            None => return,
            _ => {}
        }
        while let Some(&byte) = self.buf.get(self.pos) {
            if !is_ws(byte) {
                break;
            }
            self.pos += 1;
        }
    }

    /// An error at the current position.
    #[cold]
    pub(crate) fn error(&self, reason: Reason) -> ParseError {
        ParseError::new(reason, self.pos)
    }

    /// "Unexpected byte" (or "unexpected end") at the current position.
    #[cold]
    pub(crate) fn unexpected(&self, expected: &'static str) -> ParseError {
        match self.peek() {
            None => self.error(Reason::UnexpectedEnd),
            Some(byte) => self.error(Reason::UnexpectedByte { byte, expected }),
        }
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
    ///
    /// Fast path: a string that ends within the next 16 bytes without escapes (keys,
    /// methods, ids, most values) takes one vector compare.
    #[inline(always)]
    pub(crate) fn string(&mut self) -> Result<StrSpan, ParseError> {
        let start = self.pos + 1;
        if let Some(chunk) = self.buf.get(start..).and_then(<[u8]>::first_chunk::<16>) {
            let bits = scan::attention16(chunk);
            if bits == 0 {
                return self.string_from(start, start + 16, false);
            }
            let end = start + bits.trailing_zeros() as usize;
            if chunk[end - start] == b'"' {
                self.pos = end + 1;
                return Ok(StrSpan {
                    span: Span::new(start, end),
                    escaped: false,
                });
            }
            return self.string_from(start, end, false);
        }
        self.short_tail_string(start)
    }

    /// A string that starts less than 16 bytes before the end of the input (the last
    /// member of a message): the tail is copied into a 16-byte block padded with quotes, so
    /// the same vector compare applies; a quote found in the padding means the string is
    /// not closed, which the general loop reports.
    #[inline(never)]
    fn short_tail_string(&mut self, start: usize) -> Result<StrSpan, ParseError> {
        let tail = self.buf.get(start..).unwrap_or_default();
        let first = match self.buf.last_chunk::<16>() {
            // The usual case: the input's last 16 bytes, shifted so that bit 0 is `start`;
            // no attention in the tail means the string is not closed.
            Some(last) => {
                let skipped = 16 - tail.len();
                ((scan::attention16(last) >> skipped) | (1 << tail.len())).trailing_zeros() as usize
            }
            // An input shorter than 16 bytes: the tail padded with quotes.
            None => {
                let mut block = [b'"'; 16];
                block[..tail.len()].copy_from_slice(tail);
                scan::attention16(&block).trailing_zeros() as usize
            }
        };
        if first < tail.len() && tail[first] == b'"' {
            self.pos = start + first + 1;
            return Ok(StrSpan {
                span: Span::new(start, start + first),
                escaped: false,
            });
        }
        self.string_from(start, start + first.min(tail.len()), false)
    }

    /// The general string loop, from `pos` inside the string that starts at `start`.
    #[inline(never)]
    fn string_from(
        &mut self,
        start: usize,
        mut pos: usize,
        mut escaped: bool,
    ) -> Result<StrSpan, ParseError> {
        loop {
            // Medium strings: 16 bytes at a time inline; long ones, and the last few bytes
            // of the input: the cached kernel.
            let mut chunks = 0;
            loop {
                let Some(chunk) = self.buf.get(pos..).and_then(<[u8]>::first_chunk::<16>) else {
                    pos += scan::string_run(self.buf.get(pos..).unwrap_or_default());
                    break;
                };
                let bits = scan::attention16(chunk);
                if bits != 0 {
                    pos += bits.trailing_zeros() as usize;
                    break;
                }
                pos += 16;
                chunks += 1;
                if chunks == 4 {
                    pos += scan::string_run(self.buf.get(pos..).unwrap_or_default());
                    break;
                }
            }
            match self.buf.get(pos) {
                Some(b'"') => {
                    self.pos = pos + 1;
                    return Ok(StrSpan {
                        span: Span::new(start, pos),
                        escaped,
                    });
                }
                Some(b'\\') => {
                    escaped = true;
                    pos = self.escape(pos)?;
                }
                Some(&byte) if byte < 0x20 => {
                    return Err(ParseError::new(Reason::ControlCharacter, pos));
                }
                Some(_) => pos = self.utf8_sequence(pos)?,
                None => return Err(ParseError::new(Reason::UnexpectedEnd, pos)),
            }
        }
    }

    /// Validates the escape at `at` (a backslash); returns the position after it.
    fn escape(&self, at: usize) -> Result<usize, ParseError> {
        match self.buf.get(at + 1) {
            Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => Ok(at + 2),
            Some(b'u') => {
                let unit = self.hex4(at + 2)?;
                match unit {
                    0xD800..=0xDBFF => {
                        if self.buf.get(at + 6) == Some(&b'\\') && self.buf.get(at + 7) == Some(&b'u') {
                            let low = self.hex4(at + 8)?;
                            if (0xDC00..=0xDFFF).contains(&low) {
                                return Ok(at + 12);
                            }
                        }
                        Err(ParseError::new(Reason::LoneSurrogate, at))
                    }
                    0xDC00..=0xDFFF => Err(ParseError::new(Reason::LoneSurrogate, at)),
                    _ => Ok(at + 6),
                }
            }
            Some(_) => Err(ParseError::new(Reason::InvalidEscape, at)),
            None => Err(ParseError::new(Reason::UnexpectedEnd, at + 1)),
        }
    }

    /// Four hex digits at `at`.
    fn hex4(&self, at: usize) -> Result<u32, ParseError> {
        let mut value = 0;
        for i in at..at + 4 {
            let digit = match self.buf.get(i) {
                Some(&b @ b'0'..=b'9') => b - b'0',
                Some(&b @ b'a'..=b'f') => b - b'a' + 10,
                Some(&b @ b'A'..=b'F') => b - b'A' + 10,
                Some(_) => return Err(ParseError::new(Reason::InvalidUnicodeEscape, i)),
                None => return Err(ParseError::new(Reason::UnexpectedEnd, i)),
            };
            value = (value << 4) | u32::from(digit);
        }
        Ok(value)
    }

    /// Validates the UTF-8 sequence starting at `at` (a byte >= 0x80); returns the position
    /// after it. Rejects overlong forms, surrogates and code points above U+10FFFF
    /// (the table of the Unicode standard, section 3.9).
    fn utf8_sequence(&self, at: usize) -> Result<usize, ParseError> {
        let first = self.buf[at];
        let (len, second_range) = match first {
            0xC2..=0xDF => (2, 0x80..=0xBF),
            0xE0 => (3, 0xA0..=0xBF),
            0xE1..=0xEC | 0xEE..=0xEF => (3, 0x80..=0xBF),
            0xED => (3, 0x80..=0x9F),
            0xF0 => (4, 0x90..=0xBF),
            0xF1..=0xF3 => (4, 0x80..=0xBF),
            0xF4 => (4, 0x80..=0x8F),
            _ => return Err(ParseError::new(Reason::InvalidUtf8, at)),
        };
        match self.buf.get(at + 1) {
            Some(byte) if second_range.contains(byte) => {}
            _ => return Err(ParseError::new(Reason::InvalidUtf8, at)),
        }
        for i in at + 2..at + len {
            match self.buf.get(i) {
                Some(0x80..=0xBF) => {}
                _ => return Err(ParseError::new(Reason::InvalidUtf8, at)),
            }
        }
        Ok(at + len)
    }

    /// A number; the reader is at its first byte (`-` or a digit).
    #[inline]
    pub(crate) fn number(&mut self) -> Result<Span, ParseError> {
        let start = self.pos;
        let buf = self.buf;
        let mut pos = start;
        if buf.get(pos) == Some(&b'-') {
            pos += 1;
        }
        match buf.get(pos) {
            Some(b'0') => pos += 1,
            Some(b'1'..=b'9') => {
                pos += 1;
                while matches!(buf.get(pos), Some(b'0'..=b'9')) {
                    pos += 1;
                }
            }
            _ => return Err(ParseError::new(Reason::InvalidNumber, pos)),
        }
        if buf.get(pos) == Some(&b'.') {
            pos += 1;
            if !matches!(buf.get(pos), Some(b'0'..=b'9')) {
                return Err(ParseError::new(Reason::InvalidNumber, pos));
            }
            while matches!(buf.get(pos), Some(b'0'..=b'9')) {
                pos += 1;
            }
        }
        if matches!(buf.get(pos), Some(b'e' | b'E')) {
            pos += 1;
            if matches!(buf.get(pos), Some(b'+' | b'-')) {
                pos += 1;
            }
            if !matches!(buf.get(pos), Some(b'0'..=b'9')) {
                return Err(ParseError::new(Reason::InvalidNumber, pos));
            }
            while matches!(buf.get(pos), Some(b'0'..=b'9')) {
                pos += 1;
            }
        }
        self.pos = pos;
        Ok(Span::new(start, pos))
    }

    /// `true`, `false` or `null`; the reader is at its first byte.
    #[inline]
    pub(crate) fn literal(&mut self) -> Result<Literal, ParseError> {
        let rest = self.buf.get(self.pos..).unwrap_or_default();
        // The usual case, one compare of four bytes.
        match rest.first_chunk::<4>() {
            Some(b"null") => {
                self.pos += 4;
                return Ok(Literal::Null);
            }
            Some(b"true") => {
                self.pos += 4;
                return Ok(Literal::True);
            }
            _ => {}
        }
        let (literal, text): (Literal, &[u8]) = match rest.first() {
            Some(b't') => (Literal::True, b"true"),
            Some(b'f') => (Literal::False, b"false"),
            _ => (Literal::Null, b"null"),
        };
        if rest.starts_with(text) {
            self.pos += text.len();
            Ok(literal)
        } else if text.starts_with(rest) {
            Err(ParseError::new(Reason::UnexpectedEnd, self.buf.len()))
        } else {
            Err(self.error(Reason::InvalidLiteral))
        }
    }

    /// Any value that is not an array or an object.
    #[inline(always)]
    fn scalar(&mut self) -> Result<(), ParseError> {
        match self.peek() {
            Some(b'"') => self.string().map(drop),
            Some(b'-' | b'0'..=b'9') => self.number().map(drop),
            Some(b't' | b'f' | b'n') => self.literal().map(drop),
            _ => Err(self.unexpected("a JSON value")),
        }
    }

    /// Any value, validated; `enclosing` is the number of containers around it.
    #[inline]
    pub(crate) fn value(&mut self, enclosing: usize, max_depth: usize) -> Result<(), ParseError> {
        match self.peek() {
            Some(b'{' | b'[') => self.container(enclosing, max_depth),
            _ => self.scalar(),
        }
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

    /// An array or an object with everything inside it, without recursion.
    pub(crate) fn container(&mut self, enclosing: usize, max_depth: usize) -> Result<(), ParseError> {
        let mut stack = ContainerStack::new();
        let mut depth = enclosing;
        // The innermost open container's kind, cached out of the stack.
        let mut in_object = false;
        'value: loop {
            // At the start of a value, whitespace skipped.
            match self.peek() {
                Some(open @ (b'{' | b'[')) => {
                    depth += 1;
                    if depth > max_depth {
                        return Err(self.error(Reason::TooDeep { limit: max_depth }));
                    }
                    let is_object = open == b'{';
                    self.pos += 1;
                    self.skip_ws();
                    let close = if is_object { b'}' } else { b']' };
                    if self.peek() == Some(close) {
                        self.pos += 1;
                        depth -= 1;
                    } else {
                        stack.push(is_object);
                        in_object = is_object;
                        if is_object {
                            self.member_key()?;
                        }
                        continue 'value;
                    }
                }
                _ => self.scalar()?,
            }
            // After a value: close containers until one continues with a comma.
            loop {
                if depth == enclosing {
                    return Ok(());
                }
                self.skip_ws();
                match self.peek() {
                    Some(b',') => {
                        self.pos += 1;
                        self.skip_ws();
                        if in_object {
                            self.member_key()?;
                        }
                        continue 'value;
                    }
                    Some(b'}') if in_object => {}
                    Some(b']') if !in_object => {}
                    _ => return Err(self.unexpected(if in_object { "',' or '}'" } else { "',' or ']'" })),
                }
                self.pos += 1;
                stack.pop();
                in_object = stack.top_is_object();
                depth -= 1;
            }
        }
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
