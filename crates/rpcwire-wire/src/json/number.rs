//! JSON numbers: the grammar, and the integer value of number text.

use super::error::{SyntaxError, SyntaxErrorKind};
use super::kernels::Span;

/// The position after the number at `start` (`-` or a digit).
#[inline(always)]
pub(crate) fn number_end(buf: &[u8], start: usize) -> Result<usize, SyntaxError> {
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
        _ => return Err(SyntaxError::new(SyntaxErrorKind::InvalidNumber, pos)),
    }
    if buf.get(pos) == Some(&b'.') {
        pos += 1;
        if !matches!(buf.get(pos), Some(b'0'..=b'9')) {
            return Err(SyntaxError::new(SyntaxErrorKind::InvalidNumber, pos));
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
            return Err(SyntaxError::new(SyntaxErrorKind::InvalidNumber, pos));
        }
        while matches!(buf.get(pos), Some(b'0'..=b'9')) {
            pos += 1;
        }
    }
    Ok(pos)
}

/// The number at `start` (`-` or a digit): its span and the position after it.
#[inline(always)]
pub(crate) fn number_span(buf: &[u8], start: usize) -> Result<(Span, usize), SyntaxError> {
    let end = number_end(buf, start)?;
    Ok((Span::new(start, end), end))
}

/// `true` when `bytes` is exactly one JSON number.
pub(crate) fn is_json_number(bytes: &[u8]) -> bool {
    matches!(bytes.first(), Some(b'-' | b'0'..=b'9')) && number_end(bytes, 0) == Ok(bytes.len())
}

/// Why number text is not an `i64`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NotAnInteger {
    /// It has a fraction or an exponent.
    Fractional,
    /// It is an integer outside `i64`.
    OutOfRange,
}

/// The value of validated JSON number text that must be an `i64` integer.
pub(crate) fn integer(text: &str) -> Result<i64, NotAnInteger> {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(digits) => (true, digits),
        None => (false, text),
    };
    let mut value: i64 = 0;
    for &byte in digits.as_bytes() {
        if !byte.is_ascii_digit() {
            return Err(NotAnInteger::Fractional);
        }
        let digit = i64::from(byte - b'0');
        value = value
            .checked_mul(10)
            .and_then(|v| {
                if negative {
                    v.checked_sub(digit)
                } else {
                    v.checked_add(digit)
                }
            })
            .ok_or(NotAnInteger::OutOfRange)?;
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_in_range_and_out() {
        assert_eq!(integer("-9223372036854775808"), Ok(i64::MIN));
        assert_eq!(integer("9223372036854775807"), Ok(i64::MAX));
        assert_eq!(integer("9223372036854775808"), Err(NotAnInteger::OutOfRange));
        assert_eq!(integer("1.0"), Err(NotAnInteger::Fractional));
        assert_eq!(integer("1e3"), Err(NotAnInteger::Fractional));
    }

    #[test]
    fn whole_numbers_only() {
        for good in ["0", "-0", "1.5e3", "-7", "18446744073709551616"] {
            assert!(is_json_number(good.as_bytes()), "{good}");
        }
        for bad in ["", "-", "01", "1.", "1e", "+1", "1 ", "0x1"] {
            assert!(!is_json_number(bad.as_bytes()), "{bad}");
        }
    }
}
