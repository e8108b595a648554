//! JSON strings, validated: escapes, surrogate pairs, UTF-8 and control characters.
//!
//! Free functions over `(input, position)` that return the position after the string, so a
//! caller walking a value keeps its position in a register (the `Reader` methods and the
//! container walk are built on them). The walk of a value goes through a [`Window`]: 64
//! bytes of attention bits computed ahead, so that finding a string's end does not wait on a
//! vector scan that waited on the previous string's end.

use super::error::{ParseError, Reason};
use super::scan;
use super::spans::{Span, StrSpan};

/// The position after the string whose content starts at `start` (just after its opening
/// quote). `escaped` is set when the string holds a backslash escape.
///
/// Fast path: a string that ends within the next 16 bytes without escapes (keys, methods,
/// ids, most values) takes one vector compare.
#[inline(always)]
pub(crate) fn string_end(buf: &[u8], start: usize, escaped: &mut bool) -> Result<usize, ParseError> {
    if let Some(chunk) = buf.get(start..).and_then(<[u8]>::first_chunk::<16>) {
        let bits = scan::attention16(chunk);
        if bits == 0 {
            return string_from(buf, start + 16, escaped);
        }
        let first = bits.trailing_zeros() as usize;
        if chunk[first] == b'"' {
            return Ok(start + first + 1);
        }
        return string_from(buf, start + first, escaped);
    }
    // Within 16 bytes of the end (the last string of a message): the input's last 16 bytes,
    // shifted so that bit 0 is `start`; no byte needing attention in the tail means the
    // string is not closed, which the general loop reports.
    if let (Some(last), Some(tail)) = (buf.last_chunk::<16>(), buf.get(start..)) {
        let bits = (scan::attention16(last) >> (16 - tail.len())) | (1 << tail.len());
        let first = bits.trailing_zeros() as usize;
        if first < tail.len() && tail[first] == b'"' {
            return Ok(start + first + 1);
        }
        return string_from(buf, start + first, escaped);
    }
    short_input_string(buf, start, escaped)
}

/// The bytes needing attention in a 64-byte window of the input, kept while a value is
/// walked: the end of a string inside the window is a shift and a count away, with no vector
/// scan that has to wait for the previous string's end (the next window's address does not
/// depend on where strings end, so the core loads and compares it ahead).
pub(crate) struct Window {
    base: usize,
    bits: u64,
}

impl Window {
    /// A window that holds nothing yet: placed so far past any input (inputs are at most
    /// `u32::MAX` bytes) that neither it nor the window after it holds a position.
    #[inline(always)]
    pub(crate) fn new() -> Window {
        Window {
            base: usize::MAX - 127,
            bits: 0,
        }
    }

    /// Points the window at the 64 bytes from `base`; `false` when the input ends before.
    #[inline(always)]
    fn load(&mut self, buf: &[u8], base: usize) -> bool {
        let Some(block) = buf.get(base..).and_then(<[u8]>::first_chunk::<64>) else {
            return false;
        };
        let mut bits = 0u64;
        for (i, chunk) in block.chunks_exact(16).enumerate() {
            let chunk: &[u8; 16] = chunk.try_into().unwrap_or(&[0; 16]);
            bits |= u64::from(scan::attention16(chunk)) << (16 * i);
        }
        self.base = base;
        self.bits = bits;
        true
    }

    /// [`string_end`] through the window.
    #[inline(always)]
    pub(crate) fn string_end(
        &mut self,
        buf: &[u8],
        start: usize,
        escaped: &mut bool,
    ) -> Result<usize, ParseError> {
        let mut offset = start.wrapping_sub(self.base);
        if offset >= 64 {
            // The next window when the string starts in it, else one at the string.
            let next = self.base.wrapping_add(64);
            let base = if start.wrapping_sub(next) < 64 {
                next
            } else {
                start
            };
            if !self.load(buf, base) {
                return string_end(buf, start, escaped);
            }
            offset = start - base;
        }
        let mut from = start;
        let mut rest = self.bits >> offset;
        // Clean to the window's end: the string goes on in the next windows (hashes and
        // addresses end there); past two more, the long-string kernel takes over.
        for _ in 0..2 {
            if rest != 0 {
                break;
            }
            let next = self.base + 64;
            if !self.load(buf, next) {
                return string_from(buf, next, escaped);
            }
            from = next;
            rest = self.bits;
        }
        if rest == 0 {
            return string_from(buf, self.base + 64, escaped);
        }
        let end = from + rest.trailing_zeros() as usize;
        if buf.get(end) == Some(&b'"') {
            return Ok(end + 1);
        }
        string_from(buf, end, escaped)
    }
}

/// The string whose content starts at `start` (just after its opening quote): its content
/// and whether it holds escapes, and the position after its closing quote.
#[inline(always)]
pub(crate) fn string_span(buf: &[u8], start: usize) -> Result<(StrSpan, usize), ParseError> {
    let mut escaped = false;
    let after = string_end(buf, start, &mut escaped)?;
    let span = Span::new(start, after - 1);
    Ok((StrSpan { span, escaped }, after))
}

/// A string in an input shorter than 16 bytes: the tail padded with quotes (a quote found in
/// the padding means the string is not closed, which the general loop reports).
#[inline(never)]
fn short_input_string(buf: &[u8], start: usize, escaped: &mut bool) -> Result<usize, ParseError> {
    let tail = buf.get(start..).unwrap_or_default();
    let mut block = [b'"'; 16];
    block[..tail.len()].copy_from_slice(tail);
    let first = scan::attention16(&block).trailing_zeros() as usize;
    if first < tail.len() && tail[first] == b'"' {
        return Ok(start + first + 1);
    }
    string_from(buf, start + first.min(tail.len()), escaped)
}

/// A string that goes on past its first 16 bytes, from `pos` inside it: up to 64 more bytes
/// 16 at a time (addresses, 32-byte hashes in hex: 66 bytes), anything else goes to the
/// general loop.
#[inline(never)]
fn string_from(buf: &[u8], mut pos: usize, escaped: &mut bool) -> Result<usize, ParseError> {
    for _ in 0..4 {
        let Some(chunk) = buf.get(pos..).and_then(<[u8]>::first_chunk::<16>) else {
            break;
        };
        let bits = scan::attention16(chunk);
        if bits != 0 {
            let first = bits.trailing_zeros() as usize;
            if chunk[first] == b'"' {
                return Ok(pos + first + 1);
            }
            return string_general(buf, pos + first, escaped);
        }
        pos += 16;
    }
    string_general(buf, pos, escaped)
}

/// The general string loop, from `pos` inside a string.
#[inline(never)]
fn string_general(buf: &[u8], mut pos: usize, escaped: &mut bool) -> Result<usize, ParseError> {
    loop {
        // Medium strings: 16 bytes at a time inline; long ones, and the last few bytes of the
        // input: the cached kernel.
        let mut chunks = 0;
        loop {
            let Some(chunk) = buf.get(pos..).and_then(<[u8]>::first_chunk::<16>) else {
                pos += scan::string_run(buf.get(pos..).unwrap_or_default());
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
                pos += scan::string_run(buf.get(pos..).unwrap_or_default());
                break;
            }
        }
        match buf.get(pos) {
            Some(b'"') => return Ok(pos + 1),
            Some(b'\\') => {
                *escaped = true;
                pos = escape(buf, pos)?;
            }
            Some(&byte) if byte < 0x20 => {
                return Err(ParseError::new(Reason::ControlCharacter, pos));
            }
            Some(_) => pos = utf8_sequence(buf, pos)?,
            None => return Err(ParseError::new(Reason::UnexpectedEnd, pos)),
        }
    }
}

/// Validates the escape at `at` (a backslash); returns the position after it.
fn escape(buf: &[u8], at: usize) -> Result<usize, ParseError> {
    match buf.get(at + 1) {
        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => Ok(at + 2),
        Some(b'u') => {
            let unit = hex4(buf, at + 2)?;
            match unit {
                0xD800..=0xDBFF => {
                    if buf.get(at + 6) == Some(&b'\\') && buf.get(at + 7) == Some(&b'u') {
                        let low = hex4(buf, at + 8)?;
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
fn hex4(buf: &[u8], at: usize) -> Result<u32, ParseError> {
    let mut value = 0;
    for i in at..at + 4 {
        let digit = match buf.get(i) {
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
/// after it. Rejects overlong forms, surrogates and code points above U+10FFFF (the table of
/// the Unicode standard, section 3.9).
fn utf8_sequence(buf: &[u8], at: usize) -> Result<usize, ParseError> {
    let first = buf[at];
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
    match buf.get(at + 1) {
        Some(byte) if second_range.contains(byte) => {}
        _ => return Err(ParseError::new(Reason::InvalidUtf8, at)),
    }
    for i in at + 2..at + len {
        match buf.get(i) {
            Some(0x80..=0xBF) => {}
            _ => return Err(ParseError::new(Reason::InvalidUtf8, at)),
        }
    }
    Ok(at + len)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// String contents (without a raw quote) that end anywhere relative to the input's end.
    fn contents() -> Vec<Vec<u8>> {
        let mut all: Vec<Vec<u8>> = (0..40).map(|n| vec![b'a'; n]).collect();
        for tricky in [
            &b"\\\""[..],
            b"\\\\",
            b"\\u00e9",
            b"\\ud83d\\ude00",
            b"\\ud83d",
            b"\\x",
            b"\\u12",
            b"\xc3\xa9",
            b"\xe2\x82\xac",
            b"\xf0\x9f\x98\x80",
            b"\xc3",
            b"\xed\xa0\x80",
            b"\xff",
            b"\x01",
            b"\t",
            b"\x7f",
        ] {
            for before in [0, 3, 15, 16, 17, 30] {
                let mut text = vec![b'x'; before];
                text.extend_from_slice(tricky);
                text.extend_from_slice(b"yz");
                all.push(text);
            }
        }
        all
    }

    /// `string_end` agrees with serde_json on every content, wherever the string sits
    /// relative to the end of the input, and reports an unclosed string as an error.
    #[test]
    fn agrees_with_serde_json_wherever_the_string_ends() {
        for content in contents() {
            let mut quoted = vec![b'"'];
            quoted.extend_from_slice(&content);
            quoted.push(b'"');
            let valid = serde_json::from_slice::<String>(&quoted).is_ok();
            for before in [0, 1, 7, 16, 40] {
                for after in [0, 1, 2, 15, 16, 17, 40] {
                    let mut input = vec![b' '; before];
                    input.extend_from_slice(&quoted);
                    input.extend(std::iter::repeat_n(b'}', after));
                    let end = string_end(&input, before + 1, &mut false);
                    if valid {
                        assert_eq!(
                            end.ok(),
                            Some(before + quoted.len()),
                            "{content:?} {before} {after}"
                        );
                    } else {
                        assert!(end.is_err(), "{content:?} {before} {after}");
                    }
                    let unclosed = &input[..before + quoted.len() - 1];
                    assert!(
                        string_end(unclosed, before + 1, &mut false).is_err(),
                        "{content:?}"
                    );
                }
            }
        }
    }

    /// A walk through many strings with one window finds every end `string_end` finds,
    /// whether a string sits inside the window, across its edge, past it or near the input's
    /// end, and reports the same errors.
    #[test]
    fn a_window_agrees_with_string_end_along_a_walk() {
        let all = contents();
        for stride in [1, 3, 7] {
            let mut input = Vec::new();
            let mut starts = Vec::new();
            for content in all.iter().step_by(stride).chain(all.iter().rev().step_by(stride)) {
                starts.push(input.len() + 1);
                input.push(b'"');
                input.extend_from_slice(content);
                input.extend_from_slice(b"\",");
            }
            let long = vec![b'b'; 200];
            starts.push(input.len() + 1);
            input.push(b'"');
            input.extend_from_slice(&long);
            input.push(b'"');
            let mut window = Window::new();
            for &start in &starts {
                let mut flag = false;
                let expected = string_end(&input, start, &mut flag).map_err(|e| e.offset());
                let mut window_flag = false;
                let got = window
                    .string_end(&input, start, &mut window_flag)
                    .map_err(|e| e.offset());
                assert_eq!(got, expected, "string at {start}");
                assert_eq!(window_flag, flag, "escape flag of the string at {start}");
            }
        }
    }

    #[test]
    fn flags_escapes() {
        for (text, escaped) in [(&br#""plain" "#[..], false), (br#""a\nb""#, true)] {
            let mut flag = false;
            assert!(string_end(text, 1, &mut flag).is_ok());
            assert_eq!(flag, escaped);
        }
    }
}
