//! JSON strings, validated: escapes, surrogate pairs, UTF-8 and control characters.
//!
//! Free functions over `(input, position)` that return the position after the string, so a
//! caller walking a value keeps its position in a register. Finding the next byte that needs
//! attention is the kernels' job ([`next_attention`], or a [`Window`] during a value walk);
//! this file is the grammar of what is found there.

use std::borrow::Cow;

use super::error::{SyntaxError, SyntaxErrorKind};
use super::kernels::{next_attention, Blocks, Span, Window};
use super::unescape::unescape;

/// The content of a JSON string (between its quotes) and whether it holds escapes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct StrSpan {
    pub(crate) span: Span,
    pub(crate) escaped: bool,
}

impl StrSpan {
    /// The string's value: borrowed when it had no escapes.
    pub(crate) fn value(self, input: &[u8]) -> Cow<'_, str> {
        let raw = self.span.text(input);
        if self.escaped {
            Cow::Owned(unescape(raw))
        } else {
            Cow::Borrowed(raw)
        }
    }
}

/// The position after the string whose content starts at `start` (just after its opening
/// quote). `escaped` is set when the string holds a backslash escape.
#[inline(always)]
pub(crate) fn string_end(buf: &[u8], start: usize, escaped: &mut bool) -> Result<usize, SyntaxError> {
    let at = next_attention(buf, start);
    if buf.get(at) == Some(&b'"') {
        return Ok(at + 1);
    }
    string_rest(buf, at, escaped)
}

/// [`string_end`] through the window of a value walk.
#[inline(always)]
pub(crate) fn string_end_in<K: Blocks>(
    window: &mut Window<K>,
    buf: &[u8],
    start: usize,
    escaped: &mut bool,
) -> Result<usize, SyntaxError> {
    window.scan_string(buf, start, |at| string_rest(buf, at, escaped))
}

/// The string whose content starts at `start` (just after its opening quote): its content
/// and whether it holds escapes, and the position after its closing quote.
#[inline(always)]
pub(crate) fn string_span(buf: &[u8], start: usize) -> Result<(StrSpan, usize), SyntaxError> {
    let mut escaped = false;
    let after = string_end(buf, start, &mut escaped)?;
    let span = Span::new(start, after - 1);
    Ok((StrSpan { span, escaped }, after))
}

/// The rest of a string from `pos`, a byte that needs attention and is not its closing
/// quote (or the end of the input).
#[inline(never)]
fn string_rest(buf: &[u8], mut pos: usize, escaped: &mut bool) -> Result<usize, SyntaxError> {
    loop {
        match buf.get(pos) {
            Some(b'"') => return Ok(pos + 1),
            Some(b'\\') => {
                *escaped = true;
                pos = escape(buf, pos)?;
            }
            Some(&byte) if byte < 0x20 => {
                return Err(SyntaxError::new(SyntaxErrorKind::ControlCharacter, pos));
            }
            Some(_) => pos = utf8_sequence(buf, pos)?,
            None => return Err(SyntaxError::new(SyntaxErrorKind::UnexpectedEnd, pos)),
        }
        pos = next_attention(buf, pos);
    }
}

/// Validates the escape at `at` (a backslash); returns the position after it.
fn escape(buf: &[u8], at: usize) -> Result<usize, SyntaxError> {
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
                    Err(SyntaxError::new(SyntaxErrorKind::LoneSurrogate, at))
                }
                0xDC00..=0xDFFF => Err(SyntaxError::new(SyntaxErrorKind::LoneSurrogate, at)),
                _ => Ok(at + 6),
            }
        }
        Some(_) => Err(SyntaxError::new(SyntaxErrorKind::InvalidEscape, at)),
        None => Err(SyntaxError::new(SyntaxErrorKind::UnexpectedEnd, at + 1)),
    }
}

/// The value of each byte as a hex digit; `0xff` for the bytes that are not one.
const HEX_DIGITS: [u8; 256] = {
    let mut table = [0xff; 256];
    let mut byte = 0;
    while byte < 256 {
        table[byte] = match byte as u8 {
            digit @ b'0'..=b'9' => digit - b'0',
            letter @ b'a'..=b'f' => letter - b'a' + 10,
            letter @ b'A'..=b'F' => letter - b'A' + 10,
            _ => 0xff,
        };
        byte += 1;
    }
    table
};

/// Four hex digits at `at`: four table lookups and one check; a bad digit or the input's
/// end is located by [`hex4_error`].
fn hex4(buf: &[u8], at: usize) -> Result<u32, SyntaxError> {
    if let Some(four) = buf.get(at..).and_then(<[u8]>::first_chunk::<4>) {
        let [a, b, c, d] = four.map(|byte| HEX_DIGITS[usize::from(byte)]);
        if (a | b | c | d) < 0x10 {
            return Ok(u32::from(a) << 12 | u32::from(b) << 8 | u32::from(c) << 4 | u32::from(d));
        }
    }
    hex4_error(buf, at)
}

/// [`hex4`] one digit at a time: the error at the first bad digit (or at the input's end).
#[cold]
fn hex4_error(buf: &[u8], at: usize) -> Result<u32, SyntaxError> {
    let mut value = 0;
    for i in at..at + 4 {
        let digit = match buf.get(i) {
            Some(&b @ b'0'..=b'9') => b - b'0',
            Some(&b @ b'a'..=b'f') => b - b'a' + 10,
            Some(&b @ b'A'..=b'F') => b - b'A' + 10,
            Some(_) => return Err(SyntaxError::new(SyntaxErrorKind::InvalidUnicodeEscape, i)),
            None => return Err(SyntaxError::new(SyntaxErrorKind::UnexpectedEnd, i)),
        };
        value = (value << 4) | u32::from(digit);
    }
    Ok(value)
}

/// Validates the UTF-8 sequence starting at `at` (a byte >= 0x80); returns the position
/// after it. Rejects overlong forms, surrogates and code points above U+10FFFF (the table of
/// the Unicode standard, section 3.9).
fn utf8_sequence(buf: &[u8], at: usize) -> Result<usize, SyntaxError> {
    let first = buf[at];
    let (len, second_range) = match first {
        0xC2..=0xDF => (2, 0x80..=0xBF),
        0xE0 => (3, 0xA0..=0xBF),
        0xE1..=0xEC | 0xEE..=0xEF => (3, 0x80..=0xBF),
        0xED => (3, 0x80..=0x9F),
        0xF0 => (4, 0x90..=0xBF),
        0xF1..=0xF3 => (4, 0x80..=0xBF),
        0xF4 => (4, 0x80..=0x8F),
        _ => return Err(SyntaxError::new(SyntaxErrorKind::InvalidUtf8, at)),
    };
    match buf.get(at + 1) {
        Some(byte) if second_range.contains(byte) => {}
        _ => return Err(SyntaxError::new(SyntaxErrorKind::InvalidUtf8, at)),
    }
    for i in at + 2..at + len {
        match buf.get(i) {
            Some(0x80..=0xBF) => {}
            _ => return Err(SyntaxError::new(SyntaxErrorKind::InvalidUtf8, at)),
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
            let mut window = Window::new(super::super::kernels::Baseline);
            for &start in &starts {
                let mut flag = false;
                let expected = string_end(&input, start, &mut flag).map_err(|e| e.offset());
                let mut window_flag = false;
                let got = string_end_in(&mut window, &input, start, &mut window_flag).map_err(|e| e.offset());
                assert_eq!(got, expected, "string at {start}");
                assert_eq!(window_flag, flag, "escape flag of the string at {start}");
            }
        }
    }

    /// The table's answer is the digit-at-a-time loop's, value or error (position included),
    /// for every byte at every position and for inputs that end early.
    #[test]
    fn hex4_agrees_with_the_digit_at_a_time_loop() {
        for position in 0..4 {
            for byte in 0..=255u8 {
                let mut digits = *b"0aF9";
                digits[position] = byte;
                assert_eq!(hex4(&digits, 0), hex4_error(&digits, 0), "{digits:?}");
            }
        }
        for len in 0..4 {
            assert_eq!(hex4(&b"beef"[..len], 0), hex4_error(&b"beef"[..len], 0), "{len}");
        }
        assert_eq!(hex4(b"\\uD83d", 2), Ok(0xd83d));
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
