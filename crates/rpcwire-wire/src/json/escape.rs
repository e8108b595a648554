//! Writing text as the content of a JSON string.

/// The JSON escape for `byte` when it must be escaped inside a string.
fn escape_for(byte: u8) -> Option<&'static str> {
    const CONTROL: [&str; 32] = [
        "\\u0000", "\\u0001", "\\u0002", "\\u0003", "\\u0004", "\\u0005", "\\u0006", "\\u0007", "\\b", "\\t",
        "\\n", "\\u000b", "\\f", "\\r", "\\u000e", "\\u000f", "\\u0010", "\\u0011", "\\u0012", "\\u0013",
        "\\u0014", "\\u0015", "\\u0016", "\\u0017", "\\u0018", "\\u0019", "\\u001a", "\\u001b", "\\u001c",
        "\\u001d", "\\u001e", "\\u001f",
    ];
    match byte {
        b'"' => Some("\\\""),
        b'\\' => Some("\\\\"),
        0..=0x1f => Some(CONTROL[byte as usize]),
        _ => None,
    }
}

/// Calls `piece` with the parts of `text` escaped as the content of a JSON string (without
/// quotes): runs of plain text and the escapes between them, in order.
///
/// ```
/// let mut pieces = Vec::new();
/// rpcwire_wire::json::escape::escaped_pieces("a\"b", |piece| pieces.push(piece.to_owned()));
/// assert_eq!(pieces, ["a", "\\\"", "b"]);
/// ```
#[inline]
pub fn escaped_pieces(text: &str, mut piece: impl FnMut(&str)) {
    let mut plain_from = 0;
    for (i, &byte) in text.as_bytes().iter().enumerate() {
        if let Some(escape) = escape_for(byte) {
            piece(&text[plain_from..i]);
            piece(escape);
            plain_from = i + 1;
        }
    }
    piece(&text[plain_from..]);
}

/// Appends `text` escaped as the content of a JSON string (without quotes).
///
/// ```
/// let mut out = String::from("\"");
/// rpcwire_wire::json::escape::push_escaped(&mut out, "tab\there");
/// assert_eq!(out, "\"tab\\there");
/// ```
pub fn push_escaped(out: &mut String, text: &str) {
    escaped_pieces(text, |piece| out.push_str(piece));
}

/// `text` escaped as the content of a JSON string, or `None` when it needs no escape.
///
/// ```
/// use rpcwire_wire::json::escape::escape_json_str;
/// assert_eq!(escape_json_str("plain"), None);
/// assert_eq!(escape_json_str("a\nb").as_deref(), Some("a\\nb"));
/// ```
pub fn escape_json_str(text: &str) -> Option<String> {
    if !text.bytes().any(|byte| escape_for(byte).is_some()) {
        return None;
    }
    let mut out = String::with_capacity(text.len() + 8);
    push_escaped(&mut out, text);
    Some(out)
}

/// `text` as a complete JSON string, quotes included.
///
/// ```
/// assert_eq!(rpcwire_wire::json::escape::quote_json_str("é\u{1}"), "\"é\\u0001\"");
/// ```
pub fn quote_json_str(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    push_escaped(&mut out, text);
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_what_json_requires_and_nothing_else() {
        assert_eq!(escape_json_str("plain é ✓"), None);
        assert_eq!(
            escape_json_str("a\"b\\c\nd\u{1}").as_deref(),
            Some("a\\\"b\\\\c\\nd\\u0001")
        );
        assert_eq!(quote_json_str("x\ty"), "\"x\\ty\"");
    }

    #[test]
    fn round_trips_through_serde_json() {
        let all: String = (0u8..0x80).map(char::from).chain("é\u{10000}".chars()).collect();
        let quoted = quote_json_str(&all);
        let back: String = serde_json::from_str(&quoted).unwrap();
        assert_eq!(back, all);
    }
}
