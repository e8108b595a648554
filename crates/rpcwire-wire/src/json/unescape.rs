//! Unescaping the content of a validated JSON string.

/// The value of a hex digit (the text was validated, so anything else does not occur).
fn hex_value(byte: u8) -> u32 {
    match byte {
        b'0'..=b'9' => u32::from(byte - b'0'),
        b'a'..=b'f' => u32::from(byte - b'a' + 10),
        b'A'..=b'F' => u32::from(byte - b'A' + 10),
        _ => 0,
    }
}

/// The four hex digits at `bytes[at..at + 4]` as a number (missing digits count as 0).
fn hex4(bytes: &[u8], at: usize) -> u32 {
    (at..at + 4).fold(0, |acc, i| {
        (acc << 4) | hex_value(bytes.get(i).copied().unwrap_or(b'0'))
    })
}

/// Unescapes `raw`, the content of a JSON string the parser has validated (every escape
/// well formed, surrogates paired). Anything malformed that could only come from
/// unvalidated text becomes U+FFFD instead of a panic.
pub(crate) fn unescape(raw: &str) -> String {
    let bytes = raw.as_bytes();
    let mut out = String::with_capacity(raw.len());
    let mut plain_from = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'\\' {
            i += 1;
            continue;
        }
        out.push_str(&raw[plain_from..i]);
        let kind = bytes.get(i + 1).copied().unwrap_or(b'?');
        i += 2;
        let decoded = match kind {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let first = hex4(bytes, i);
                i += 4;
                if (0xD800..0xDC00).contains(&first) && bytes.get(i) == Some(&b'\\') {
                    let second = hex4(bytes, i + 2);
                    i += 6;
                    let code = 0x10000 + ((first - 0xD800) << 10) + (second.wrapping_sub(0xDC00) & 0x3FF);
                    char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER)
                } else {
                    char::from_u32(first).unwrap_or(char::REPLACEMENT_CHARACTER)
                }
            }
            _ => char::REPLACEMENT_CHARACTER,
        };
        out.push(decoded);
        i = i.min(bytes.len());
        while !raw.is_char_boundary(i) {
            i += 1;
        }
        plain_from = i;
    }
    out.push_str(&raw[plain_from..]);
    out
}

#[cfg(test)]
mod tests {
    use super::unescape;

    #[test]
    fn every_escape() {
        assert_eq!(
            unescape(r#"a\"b\\c\/d\be\ff\ng\rh\ti"#),
            "a\"b\\c/d\u{8}e\u{c}f\ng\rh\ti"
        );
        assert_eq!(unescape(r"\u00e9\u0041"), "éA");
        assert_eq!(unescape(r"\uD83D\uDE00!"), "😀!");
        assert_eq!(unescape("plain ✓"), "plain ✓");
    }

    #[test]
    fn malformed_text_never_panics() {
        assert_eq!(unescape(r"\uD800"), "\u{FFFD}");
        assert_eq!(unescape(r"\q"), "\u{FFFD}");
        assert_eq!(unescape("\\"), "\u{FFFD}");
        assert_eq!(unescape(r"\u12"), "\u{1200}");
        assert_eq!(unescape("\\é"), "\u{FFFD}");
        assert_eq!(unescape("\\uéé"), "\u{0}");
    }
}
