//! The fast path for every other layout: the known members in any order, with any JSON
//! whitespace around them,
//!
//! ```text
//! {"id":1,"method":"m","jsonrpc":"2.0","params":[…]}
//! {"params":[…], "method":"m", "jsonrpc":"2.0"}
//! {\n  "jsonrpc": "2.0",\n  "id": 1, …\n}          pretty-printed (curl users)
//! {"jsonrpc":"2.0","result":{…},"id":1}
//! ```
//!
//! It runs after the fixed-layout path (`compact`: the canonical order compact and with
//! Python's spacing, go-ethereum's id-first and ethers.js's method-first orders), which
//! refuses everything else within its first literals. Each member name is told by one
//! sixteen-byte word compare chosen by its first letter (the spaced spelling out of line), a
//! member seen twice is one bit of a mask, and every value is validated exactly as on the
//! general path. Anything this path does not take on its own — an unknown member, a repeated
//! one, an escaped name, a value the general path would object to, a syntax error — returns
//! `None`, and the general path reads the object again from its start, so the answer and
//! every error are the general path's.

use super::error_object::error_object;
use super::spans::{IdSpan, MessageSpans};
use crate::json::kernels::Span;
use crate::json::number::number_span;
use crate::json::string::{string_span, StrSpan};
use crate::json::value::{params_span, skip_ws_at, value_span};

/// The bits of the members seen so far.
const JSONRPC: u8 = 1;
const ID: u8 = 2;
const METHOD: u8 = 4;
const PARAMS: u8 = 8;
const RESULT: u8 = 16;
const ERROR: u8 = 32;

/// Little-endian bytes of `text` in the low bytes of a word, and the mask of those bytes.
const fn word(text: &[u8]) -> (u128, u128) {
    let mut word = 0u128;
    let mut i = 0;
    while i < text.len() {
        word |= (text[i] as u128) << (8 * i);
        i += 1;
    }
    let mask = if text.len() == 16 {
        u128::MAX
    } else {
        (1u128 << (8 * text.len())) - 1
    };
    (word, mask)
}

/// The sixteen bytes from `pos` as a little-endian word, zero-padded past the input's end.
#[inline(always)]
fn word_at(buf: &[u8], pos: usize) -> u128 {
    match buf.get(pos..).and_then(<[u8]>::first_chunk::<16>) {
        Some(sixteen) => u128::from_le_bytes(*sixteen),
        None => {
            let mut sixteen = [0u8; 16];
            let rest = buf.get(pos..).unwrap_or_default();
            sixteen[..rest.len()].copy_from_slice(rest);
            u128::from_le_bytes(sixteen)
        }
    }
}

/// A known member as it is written: its bit; its compact spelling from the opening quote
/// through the colon (for `jsonrpc`, through the value `"2.0"`) as a masked word with its
/// length; and its name with the closing quote, for the spaced spelling.
struct Known {
    bit: u8,
    compact: (u128, u128),
    compact_len: usize,
    name: (u128, u128),
    name_len: usize,
}

const fn known(bit: u8, compact: &[u8], name: &[u8]) -> Known {
    Known {
        bit,
        compact: word(compact),
        compact_len: compact.len(),
        name: word(name),
        name_len: name.len(),
    }
}

const KNOWN: [Known; 6] = [
    known(JSONRPC, b"\"jsonrpc\":\"2.0\"", b"jsonrpc\""),
    known(ID, b"\"id\":", b"id\""),
    known(METHOD, b"\"method\":", b"method\""),
    known(PARAMS, b"\"params\":", b"params\""),
    known(RESULT, b"\"result\":", b"result\""),
    known(ERROR, b"\"error\":", b"error\""),
];

/// Where the value of the `known` member whose key starts at `pos` (its opening quote, with
/// `head` the sixteen bytes from there) begins — for `jsonrpc`, the position after its value
/// `"2.0"`; `None` for another name that starts with the same letter, an escaped one, or a
/// syntax error.
#[inline(always)]
fn key(buf: &[u8], pos: usize, head: u128, known: &Known) -> Option<usize> {
    if head & known.compact.1 == known.compact.0 {
        // Whitespace may still come after the colon.
        return Some(if known.bit == JSONRPC {
            pos + known.compact_len
        } else {
            ws(buf, pos + known.compact_len)
        });
    }
    // Python's spelling of the version member fills the word exactly.
    if known.bit == JSONRPC && head == PYTHON_JSONRPC {
        return Some(pos + 16);
    }
    spaced(buf, pos, known)
}

/// `"jsonrpc": "2.0"` as a word.
const PYTHON_JSONRPC: u128 = word(b"\"jsonrpc\": \"2.0\"").0;

/// The first position at or after `pos` that is not whitespace, with the single space of
/// `", "` and `": "` taken inline.
#[inline(always)]
fn ws(buf: &[u8], pos: usize) -> usize {
    match buf.get(pos) {
        Some(b' ') if buf.get(pos + 1).is_some_and(|&next| next > b' ') => pos + 1,
        _ => skip_ws_at(buf, pos),
    }
}

/// [`key`] for a key followed by whitespace (or not a known key at all).
#[inline(never)]
fn spaced(buf: &[u8], pos: usize, known: &Known) -> Option<usize> {
    if *buf.get(pos)? != b'"' || word_at(buf, pos + 1) & known.name.1 != known.name.0 {
        return None;
    }
    let pos = skip_ws_at(buf, pos + 1 + known.name_len);
    if *buf.get(pos)? != b':' {
        return None;
    }
    let pos = skip_ws_at(buf, pos + 1);
    if known.bit != JSONRPC {
        return Some(pos);
    }
    (buf.get(pos..)?.first_chunk::<5>()? == b"\"2.0\"").then_some(pos + 5)
}

/// An `id` value at `pos`: a string, a number or `null`.
#[inline(always)]
fn id(buf: &[u8], pos: usize) -> Option<(IdSpan, usize)> {
    match *buf.get(pos)? {
        b'"' => string_span(buf, pos + 1)
            .ok()
            .map(|(s, after)| (IdSpan::String(s), after)),
        b'-' | b'0'..=b'9' => {
            let (span, end) = number_span(buf, pos).ok()?;
            Some((IdSpan::Number(span), end))
        }
        b'n' => (buf.get(pos..)?.first_chunk::<4>()? == b"null").then_some((IdSpan::Null, pos + 4)),
        _ => None,
    }
}

/// What the members held.
#[derive(Default)]
struct Found {
    id: Option<IdSpan>,
    method: Option<StrSpan>,
    params: Option<Span>,
    result: Option<Span>,
    error: Option<(i64, StrSpan, Option<Span>)>,
}

/// The message object at `pos` (its `{`) inside `enclosing` containers, when its members are
/// the known ones, each once, in any order and spacing: its offsets and the position after
/// its `}`.
#[inline(never)]
pub(crate) fn message(
    buf: &[u8],
    pos: usize,
    enclosing: usize,
    max_depth: usize,
) -> Option<(MessageSpans, usize)> {
    let depth = enclosing + 1;
    if depth > max_depth {
        return None;
    }
    let mut seen = 0u8;
    let mut found = Found::default();
    let mut pos = skip_ws_at(buf, pos + 1);
    loop {
        let head = word_at(buf, pos);
        let (bit, end) = match (head >> 8) as u8 {
            b'j' => (JSONRPC, key(buf, pos, head, &KNOWN[0])?),
            b'i' => {
                let (value, end) = id(buf, key(buf, pos, head, &KNOWN[1])?)?;
                found.id = Some(value);
                (ID, end)
            }
            b'm' => {
                let at = key(buf, pos, head, &KNOWN[2])?;
                if *buf.get(at)? != b'"' {
                    return None;
                }
                let (name, end) = string_span(buf, at + 1).ok()?;
                if name.span.is_empty() {
                    return None;
                }
                found.method = Some(name);
                (METHOD, end)
            }
            b'p' => {
                let at = key(buf, pos, head, &KNOWN[3])?;
                if !matches!(buf.get(at), Some(b'[' | b'{')) {
                    return None;
                }
                let (span, end) = params_span(buf, at, depth, max_depth).ok()?;
                found.params = Some(span);
                (PARAMS, end)
            }
            b'r' => {
                let at = key(buf, pos, head, &KNOWN[4])?;
                let (span, end) = value_span(buf, at, depth, max_depth).ok()?;
                found.result = Some(span);
                (RESULT, end)
            }
            b'e' => {
                let at = key(buf, pos, head, &KNOWN[5])?;
                if *buf.get(at)? != b'{' {
                    return None;
                }
                let (Ok(parts), end) = error_object(buf, at, depth, max_depth).ok()? else {
                    return None;
                };
                found.error = Some((parts.code, parts.message, parts.data));
                (ERROR, end)
            }
            _ => return None,
        };
        if seen & bit != 0 {
            return None;
        }
        seen |= bit;
        pos = end;
        pos = skip_ws_at(buf, pos);
        match *buf.get(pos)? {
            b',' => pos = ws(buf, pos + 1),
            b'}' => break,
            _ => return None,
        }
    }
    Some((assemble(seen, found)?, pos + 1))
}

/// The message the members make, when the JSON-RPC rules allow it; the general path says
/// what is wrong otherwise.
#[inline(always)]
fn assemble(seen: u8, found: Found) -> Option<MessageSpans> {
    if seen & JSONRPC == 0 {
        return None;
    }
    if let Some(method) = found.method {
        if seen & (RESULT | ERROR) != 0 {
            return None;
        }
        return Some(match found.id {
            Some(id) => MessageSpans::Request {
                id,
                method,
                params: found.params,
            },
            None => MessageSpans::Notification {
                method,
                params: found.params,
            },
        });
    }
    if seen & PARAMS != 0 {
        return None;
    }
    let id = found.id?;
    match (found.result, found.error) {
        (Some(_), Some(_)) => None,
        (Some(_), None) if id == IdSpan::Null => None,
        (Some(result), None) => Some(MessageSpans::Success { id, result }),
        (None, Some((code, message, data))) => Some(MessageSpans::Failure {
            id,
            code,
            message,
            data,
        }),
        (None, None) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::envelope;
    use super::*;

    /// Messages in layouts other than the canonical one, each of which this path must take.
    const LAYOUTS: &[&str] = &[
        r#"{"id":42,"jsonrpc":"2.0","method":"eth_getBalance","params":["0x407d73d8a49eeb85d32cf465507dd71d507100c1","latest"]}"#,
        r#"{"method":"eth_getBalance","params":["0x407d73d8a49eeb85d32cf465507dd71d507100c1","latest"],"id":42,"jsonrpc":"2.0"}"#,
        r#"{"jsonrpc": "2.0", "id": 42, "method": "eth_getBalance", "params": ["0x407d73d8a49eeb85d32cf465507dd71d507100c1", "latest"]}"#,
        "{\n  \"jsonrpc\": \"2.0\",\n  \"id\": \"a\\\"b\",\n  \"method\": \"m\",\n  \"params\": {\n    \"x\": [\n      1,\n      null\n    ]\n  }\n}",
        " {\t\"method\"\r\n:\"n\" ,\"jsonrpc\" : \"2.0\"}",
        r#"{"params":{},"method":"notify","jsonrpc":"2.0"}"#,
        r#"{"id":null,"method":"m","jsonrpc":"2.0"}"#,
        r#"{"result":{"a":[true,false,null]},"id":1,"jsonrpc":"2.0"}"#,
        r#"{"id":"x", "jsonrpc":"2.0", "result":"0x1"}"#,
        r#"{"error":{"message":"Parse error","code":-32700},"id":null,"jsonrpc":"2.0"}"#,
        r#"{"jsonrpc":"2.0","id":3,"error":{"code":0,"message":"","data":[1,2]}}"#,
        r#"{"jsonrpc":"2.0","method":"m","id":1}"#,
        r#"{"jsonrpc":"2.0","id":1}"#,
    ];

    fn general(input: &[u8], enclosing: usize, max_depth: usize) -> Option<(MessageSpans, usize)> {
        let start = input.iter().position(|&b| b == b'{')?;
        match envelope::general(input, start, enclosing, max_depth) {
            Ok((Ok(spans), end)) => Some((spans, end)),
            _ => None,
        }
    }

    fn fast(input: &[u8], enclosing: usize, max_depth: usize) -> Option<(MessageSpans, usize)> {
        let start = input.iter().position(|&b| b == b'{')?;
        message(input, start, enclosing, max_depth)
    }

    /// Whenever this path answers, the general path gives the same message and end.
    fn agrees(input: &[u8], enclosing: usize, max_depth: usize) -> bool {
        match fast(input, enclosing, max_depth) {
            Some(answer) => general(input, enclosing, max_depth) == Some(answer),
            None => true,
        }
    }

    #[test]
    fn takes_other_orders_and_spacing_and_agrees_with_the_general_path() {
        for text in &LAYOUTS[..LAYOUTS.len() - 1] {
            let input = text.as_bytes();
            let answer = fast(input, 0, 128);
            assert!(answer.is_some(), "refused {text}");
            assert_eq!(answer, general(input, 0, 128), "{text}");
            let end = input.iter().rposition(|&b| b == b'}').unwrap() + 1;
            assert_eq!(answer.map(|(_, end)| end), Some(end), "{text}");
        }
        // Valid JSON that is no message: left to the general path, which says why.
        assert_eq!(fast(LAYOUTS[LAYOUTS.len() - 1].as_bytes(), 0, 128), None);
    }

    #[test]
    fn hands_everything_else_to_the_general_path() {
        let others = [
            r#"{"id":1,"jsonrpc":"2.0","method":"m","extra":0}"#,
            r#"{"id":1,"jsonrpc":"2.0","method":"m","id":2}"#,
            r#"{"id":1,"jsonrpc":"2.0","\u006dethod":"m"}"#,
            r#"{"id":1,"jsonrpc":"2.0 ","method":"m"}"#,
            r#"{"id":1,"jsonrpc":"2.0","method":""}"#,
            r#"{"id":true,"jsonrpc":"2.0","method":"m"}"#,
            r#"{"id":1,"jsonrpc":"2.0","method":"m","params":3}"#,
            r#"{"id":1,"jsonrpc":"2.0","method":"m","params":null}"#,
            r#"{"id":1,"jsonrpc":"2.0","method":"m","result":1}"#,
            r#"{"id":1,"jsonrpc":"2.0","params":[],"result":1}"#,
            r#"{"id":null,"jsonrpc":"2.0","result":1}"#,
            r#"{"jsonrpc":"2.0","result":1}"#,
            r#"{"id":1,"jsonrpc":"2.0","result":1,"error":{"code":1,"message":"m"}}"#,
            r#"{"id":1,"jsonrpc":"2.0","error":{"code":1.5,"message":"m"}}"#,
            r#"{"id":1,"jsonrpc":"2.0","error":[]}"#,
            r#"{"method":"m"}"#,
            r#"{}"#,
            r#"{"id":01,"jsonrpc":"2.0","method":"m"}"#,
            r#"{"id":1,"jsonrpc":"2.0","method":"m",}"#,
            r#"{"id":1 "jsonrpc":"2.0","method":"m"}"#,
            r#"{"id" 1,"jsonrpc":"2.0","method":"m"}"#,
            r#"{"id":1,"jsonrpc":"2.0","method":"m""#,
            r#"{"i"#,
        ];
        for text in others {
            assert_eq!(fast(text.as_bytes(), 0, 128), None, "{text}");
        }
    }

    #[test]
    fn respects_the_depth_limit_like_the_general_path() {
        let nested = br#"{"params":[[[1]]],"id":1,"method":"m","jsonrpc":"2.0"}"#;
        for max_depth in 0..6 {
            assert!(agrees(nested, 0, max_depth), "max_depth {max_depth}");
        }
        assert_eq!(fast(nested, 0, 3), None);
        assert!(fast(nested, 0, 4).is_some());
        assert_eq!(fast(nested, 1, 4), None);
    }

    /// Every truncation, deletion and a set of replacements of every byte of the layouts:
    /// this path never accepts what the general path would read differently.
    #[test]
    fn never_disagrees_with_the_general_path_on_mutations() {
        let checked = crate::json::mutations::check_mutations(LAYOUTS, |input| agrees(input, 0, 128));
        assert!(checked > 10_000);
    }
}
