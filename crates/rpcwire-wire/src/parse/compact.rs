//! The fast path for the fixed layouts nearly every client and server writes. First compact
//! JSON with the members in the spec's order,
//!
//! ```text
//! {"jsonrpc":"2.0","id":ID,"method":"NAME","params":PARAMS}   (id and params optional)
//! {"jsonrpc":"2.0","method":"NAME","params":PARAMS,"id":ID}   (the id last, as the Ethereum docs write it)
//! {"jsonrpc":"2.0","id":ID,"result":RESULT}
//! {"jsonrpc":"2.0","id":ID,"error":{"code":CODE,"message":"TEXT","data":DATA}}   (data optional)
//! ```
//!
//! then the same with Python's `", "` and `": "` separators, go-ethereum's id-first order
//! (`{"id":1,"jsonrpc":"2.0",…}`) and ethers.js's method-first order
//! (`{"method":"m","params":[…],"id":1,"jsonrpc":"2.0"}`).
//!
//! Each member name is one fixed-size compare instead of a key scan, a lookup and duplicate
//! bookkeeping (a member cannot repeat when each is matched once, in order, up to the closing
//! brace). Every value is validated exactly as on the general path. Anything else — another
//! order or spacing, an unknown member, an escaped name, a value the general path would
//! object to, a syntax error — returns `None`, and the any-order path (then the general path)
//! reads the object from its start, so the answer (and every error) is the general path's. A different layout is told
//! at the first member name; the most a miss can cost is one more pass over the object (an
//! unexpected member after a large result, say).

use super::spans::{IdSpan, MessageSpans};
use crate::json::kernels::Span;
use crate::json::number::{integer, number_span};
use crate::json::string::{string_span, StrSpan};
use crate::json::value::{params_span, value_span};

/// The position after `text` when the input holds it at `pos`.
#[inline(always)]
fn literal<const N: usize>(buf: &[u8], pos: usize, text: &[u8; N]) -> Option<usize> {
    (buf.get(pos..)?.first_chunk::<N>()? == text).then_some(pos + N)
}

/// The string whose content starts at `start`, and the position after it.
#[inline(always)]
fn string(buf: &[u8], start: usize) -> Option<(StrSpan, usize)> {
    string_span(buf, start).ok()
}

/// An `id` value at `pos`: a string, a number or `null`.
#[inline(always)]
fn id(buf: &[u8], pos: usize) -> Option<(IdSpan, usize)> {
    match *buf.get(pos)? {
        b'"' => string(buf, pos + 1).map(|(s, after)| (IdSpan::String(s), after)),
        b'-' | b'0'..=b'9' => {
            let (span, end) = number_span(buf, pos).ok()?;
            Some((IdSpan::Number(span), end))
        }
        b'n' => literal(buf, pos, b"null").map(|after| (IdSpan::Null, after)),
        _ => None,
    }
}

/// Any JSON value at `pos` inside the message object, and its span.
#[inline(always)]
fn value(buf: &[u8], pos: usize, depth: usize, max_depth: usize) -> Option<(Span, usize)> {
    value_span(buf, pos, depth, max_depth).ok()
}

/// The functions that read one spacing of the canonical layout, from its literals: the text
/// before the first member (`head`), the keys as written (`id`: `"id":`; `method`: from the
/// key's quote to the value's quote; `next`: between a value and the next key's first letter;
/// `params`, `id_last` (an id after the method and params), `code`, `message`, `data`: from
/// the comma through the colon, or the value's quote for strings) and the continuations of a
/// key whose first letter was told (`after_m`, …).
macro_rules! spacing {
    (
        $(#[$doc:meta])*
        mod $name:ident {
            head: $head:literal,
            id: $id:literal,
            method: $method:literal,
            next: $next:literal,
            after_m: $after_m:literal,
            after_r: $after_r:literal,
            after_e: $after_e:literal,
            params: $params:literal,
            id_last: $id_last:literal,
            code: $code:literal,
            message: $message:literal,
            data: $data:literal $(,)?
        }
    ) => {
        $(#[$doc])*
        pub(super) mod $name {
            use super::*;

            /// A request's or notification's method, from its content start at `pos`, and
            /// its params if they follow; the position after them.
            #[inline(always)]
            fn method_and_params(
                buf: &[u8],
                pos: usize,
                depth: usize,
                max_depth: usize,
            ) -> Option<(StrSpan, Option<Span>, usize)> {
                let (method, mut pos) = string(buf, pos)?;
                if method.span.is_empty() {
                    return None;
                }
                let mut params = None;
                if let Some(after) = literal(buf, pos, $params) {
                    if !matches!(buf.get(after), Some(b'[' | b'{')) {
                        return None;
                    }
                    let (span, end) = params_span(buf, after, depth, max_depth).ok()?;
                    params = Some(span);
                    pos = end;
                }
                Some((method, params, pos))
            }

            /// A request or notification from the method's content start at `pos`.
            #[inline(always)]
            fn call(
                buf: &[u8],
                pos: usize,
                id: Option<IdSpan>,
                depth: usize,
                max_depth: usize,
            ) -> Option<(MessageSpans, usize)> {
                let (method, params, pos) = method_and_params(buf, pos, depth, max_depth)?;
                let end = literal(buf, pos, b"}")?;
                let spans = match id {
                    Some(id) => MessageSpans::Request { id, method, params },
                    None => MessageSpans::Notification { method, params },
                };
                Some((spans, end))
            }

            /// The message object at `pos` (its `{`) when it is a request whose id comes after
            /// its method and params (`"method"`, `"params"`, `"id"`: the order of the Ethereum
            /// docs and of many hand-written requests). Out of line, tried only once the
            /// spec's order was not found, so that the usual layouts' code stays as it was.
            #[inline(never)]
            pub(in crate::parse) fn id_last(
                buf: &[u8],
                pos: usize,
                depth: usize,
                max_depth: usize,
            ) -> Option<(MessageSpans, usize)> {
                let pos = literal(buf, literal(buf, pos, $head)?, $method)?;
                let (method, params, pos) = method_and_params(buf, pos, depth, max_depth)?;
                let (id, pos) = super::id(buf, literal(buf, pos, $id_last)?)?;
                let end = literal(buf, pos, b"}")?;
                Some((MessageSpans::Request { id, method, params }, end))
            }

            /// An error response from its error object's `{` at `pos`.
            #[inline(never)]
            fn failure(
                buf: &[u8],
                pos: usize,
                id: IdSpan,
                depth: usize,
                max_depth: usize,
            ) -> Option<(MessageSpans, usize)> {
                if depth + 1 > max_depth {
                    return None;
                }
                let pos = literal(buf, pos, $code)?;
                let (code, code_end) = number_span(buf, pos).ok()?;
                let code = integer(code.text(buf)).ok()?;
                let pos = literal(buf, code_end, $message)?;
                let (message, mut pos) = string(buf, pos)?;
                let mut data = None;
                if let Some(after) = literal(buf, pos, $data) {
                    let (span, end) = value(buf, after, depth + 1, max_depth)?;
                    data = Some(span);
                    pos = end;
                }
                let end = literal(buf, pos, b"}}")?;
                let spans = MessageSpans::Failure {
                    id,
                    code,
                    message,
                    data,
                };
                Some((spans, end))
            }

            /// The rest of a message after its id, from the first letter of the next key at
            /// `pos` (`method`, `result` or `error`).
            #[inline(always)]
            pub(in crate::parse) fn after_id(
                buf: &[u8],
                pos: usize,
                id: IdSpan,
                depth: usize,
                max_depth: usize,
            ) -> Option<(MessageSpans, usize)> {
                match *buf.get(pos)? {
                    b'm' => call(buf, literal(buf, pos, $after_m)?, Some(id), depth, max_depth),
                    // A success with a null id is refused by the general path, which says why.
                    b'r' if id == IdSpan::Null => None,
                    b'r' => {
                        let (result, end) = value(buf, literal(buf, pos, $after_r)?, depth, max_depth)?;
                        Some((MessageSpans::Success { id, result }, literal(buf, end, b"}")?))
                    }
                    b'e' => failure(buf, literal(buf, pos, $after_e)?, id, depth, max_depth),
                    _ => None,
                }
            }

            /// The message object at `pos` (its `{`), members in the spec's order.
            #[inline(always)]
            pub(in crate::parse) fn message(
                buf: &[u8],
                pos: usize,
                depth: usize,
                max_depth: usize,
            ) -> Option<(MessageSpans, usize)> {
                let pos = literal(buf, pos, $head)?;
                let Some(pos) = literal(buf, pos, $id) else {
                    return call(buf, literal(buf, pos, $method)?, None, depth, max_depth);
                };
                let (id, pos) = id(buf, pos)?;
                after_id(buf, literal(buf, pos, $next)?, id, depth, max_depth)
            }
        }
    };
}

spacing! {
    /// `{"jsonrpc":"2.0","id":1,"method":"m","params":[…]}`: what most clients write.
    mod no_spaces {
        head: b"{\"jsonrpc\":\"2.0\",",
        id: b"\"id\":",
        method: b"\"method\":\"",
        next: b",\"",
        after_m: b"method\":\"",
        after_r: b"result\":",
        after_e: b"error\":",
        params: b",\"params\":",
        id_last: b",\"id\":",
        code: b"{\"code\":",
        message: b",\"message\":\"",
        data: b",\"data\":",
    }
}

spacing! {
    /// `{"jsonrpc": "2.0", "id": 1, "method": "m", "params": […]}`: Python's `json.dumps`.
    mod python_spaces {
        head: b"{\"jsonrpc\": \"2.0\", ",
        id: b"\"id\": ",
        method: b"\"method\": \"",
        next: b", \"",
        after_m: b"method\": \"",
        after_r: b"result\": ",
        after_e: b"error\": ",
        params: b", \"params\": ",
        id_last: b", \"id\": ",
        code: b"{\"code\": ",
        message: b", \"message\": \"",
        data: b", \"data\": ",
    }
}

/// `{"id":1,"jsonrpc":"2.0","method":"m",…}`: go-ethereum's and erigon's fixtures; `pos` is
/// after `{"id":`.
#[inline(always)]
fn id_first(buf: &[u8], pos: usize, depth: usize, max_depth: usize) -> Option<(MessageSpans, usize)> {
    let (id, pos) = id(buf, pos)?;
    let pos = literal(buf, pos, b",\"jsonrpc\":\"2.0\",\"")?;
    no_spaces::after_id(buf, pos, id, depth, max_depth)
}

/// `{"method":"m","params":[…],"id":1,"jsonrpc":"2.0"}`: ethers.js; `pos` is the method's
/// content start.
#[inline(always)]
fn method_first(buf: &[u8], pos: usize, depth: usize, max_depth: usize) -> Option<(MessageSpans, usize)> {
    let (method, pos) = string(buf, pos)?;
    if method.span.is_empty() {
        return None;
    }
    let pos = literal(buf, pos, b",\"params\":")?;
    if !matches!(buf.get(pos), Some(b'[' | b'{')) {
        return None;
    }
    let (params, pos) = params_span(buf, pos, depth, max_depth).ok()?;
    let (id, pos) = id(buf, literal(buf, pos, b",\"id\":")?)?;
    let end = literal(buf, pos, b",\"jsonrpc\":\"2.0\"}")?;
    let spans = MessageSpans::Request {
        id,
        method,
        params: Some(params),
    };
    Some((spans, end))
}

/// The message object at `pos` (its `{`) inside `enclosing` containers, when it has one of
/// the fixed layouts: its offsets and the position after its `}`.
#[inline(always)]
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
    if let Some(found) = no_spaces::message(buf, pos, depth, max_depth) {
        return Some(found);
    }
    other_layouts(buf, pos, depth, max_depth)
}

/// [`message`] past the canonical compact layout: the other fixed layouts, told by their
/// first bytes.
#[inline(never)]
fn other_layouts(buf: &[u8], pos: usize, depth: usize, max_depth: usize) -> Option<(MessageSpans, usize)> {
    match buf.get(pos + 2) {
        Some(b'i') => id_first(buf, literal(buf, pos, b"{\"id\":")?, depth, max_depth),
        Some(b'm') => method_first(buf, literal(buf, pos, b"{\"method\":\"")?, depth, max_depth),
        _ => no_spaces::id_last(buf, pos, depth, max_depth)
            .or_else(|| python_spaces::message(buf, pos, depth, max_depth))
            .or_else(|| python_spaces::id_last(buf, pos, depth, max_depth)),
    }
}

#[cfg(test)]
mod tests {
    use super::super::envelope;
    use super::*;

    /// Messages in the canonical layout, each of which the fast path must take.
    const CANONICAL: &[&str] = &[
        r#"{"jsonrpc":"2.0","id":42,"method":"eth_getBalance","params":["0x407d73d8a49eeb85d32cf465507dd71d507100c1","latest"]}"#,
        r#"{"jsonrpc":"2.0","id":"a\"b\u00e9","method":"text\/Document","params":{"x":[1,{"y":null}],"z":-0.5e3}}"#,
        r#"{"jsonrpc":"2.0","id":null,"method":"m"}"#,
        r#"{"jsonrpc":"2.0","id":-7,"method":"m","params":[]}"#,
        r#"{"jsonrpc":"2.0","id":8,"method":"m","params":[1,-2.5e3,true,false,null,"s\u0041",""]}"#,
        r#"{"jsonrpc":"2.0","method":"notify","params":{}}"#,
        r#"{"jsonrpc":"2.0","method":"é"}"#,
        r#"{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}"#,
        r#"{"jsonrpc":"2.0","method":"eth_blockNumber","params":[],"id":"a\"b"}"#,
        r#"{"jsonrpc":"2.0","method":"m","id":null}"#,
        r#"{"jsonrpc": "2.0", "method": "eth_blockNumber", "params": [], "id": 83}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{"a":[true,false,null]}}"#,
        r#"{"jsonrpc":"2.0","id":"x","result":"0x1"}"#,
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#,
        r#"{"jsonrpc":"2.0","id":3,"error":{"code":0,"message":"","data":[1,2]}}"#,
        r#"{"jsonrpc":"2.0","id":3,"error":{"code":-9223372036854775808,"message":"min"}}"#,
        // The other fixed layouts.
        r#"{"id":42,"jsonrpc":"2.0","method":"eth_getBalance","params":["0x407d73d8a49eeb85d32cf465507dd71d507100c1","latest"]}"#,
        r#"{"id":"a","jsonrpc":"2.0","result":{"b":[]}}"#,
        r#"{"id":null,"jsonrpc":"2.0","error":{"code":-32600,"message":"m","data":1}}"#,
        r#"{"method":"eth_getBalance","params":["0x407d73d8a49eeb85d32cf465507dd71d507100c1","latest"],"id":42,"jsonrpc":"2.0"}"#,
        r#"{"method":"m","params":{"a":1},"id":"x","jsonrpc":"2.0"}"#,
        r#"{"jsonrpc": "2.0", "id": 42, "method": "eth_getBalance", "params": ["0x407d73d8a49eeb85d32cf465507dd71d507100c1", "latest"]}"#,
        r#"{"jsonrpc": "2.0", "method": "n"}"#,
        r#"{"jsonrpc": "2.0", "id": "x", "result": [1, 2]}"#,
        r#"{"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "Method not found", "data": null}}"#,
    ];

    fn general(input: &[u8], enclosing: usize, max_depth: usize) -> Option<(MessageSpans, usize)> {
        match envelope::general(input, 0, enclosing, max_depth) {
            Ok((Ok(spans), end)) => Some((spans, end)),
            _ => None,
        }
    }

    /// Whenever the fast path answers, the general path gives the same message and end.
    fn agrees(input: &[u8], enclosing: usize, max_depth: usize) -> bool {
        match message(input, 0, enclosing, max_depth) {
            Some(fast) => general(input, enclosing, max_depth) == Some(fast),
            None => true,
        }
    }

    #[test]
    fn takes_the_canonical_layouts_and_agrees_with_the_general_path() {
        for text in CANONICAL {
            let input = text.as_bytes();
            let fast = message(input, 0, 0, 128);
            assert!(fast.is_some(), "fast path refused {text}");
            assert_eq!(fast, general(input, 0, 128), "{text}");
            assert_eq!(fast.map(|(_, end)| end), Some(input.len()));
        }
    }

    #[test]
    fn hands_everything_else_to_the_general_path() {
        let others = [
            // Other orders, whitespace, unknown or repeated members, escaped names.
            r#"{"id":1,"method":"m","jsonrpc":"2.0"}"#,
            r#"{"method":"m","id":1,"jsonrpc":"2.0"}"#,
            r#"{"method":"m","params":[],"jsonrpc":"2.0"}"#,
            r#"{"jsonrpc":"2.0","method":"m","id":1,"params":[]}"#,
            r#"{"jsonrpc":"2.0","method":"m","params":[],"id":1,"id":2}"#,
            r#"{"jsonrpc":"2.0","method":"m","params":[],"id":true}"#,
            r#"{"jsonrpc":"2.0","method":"m","params":[],"id":1 }"#,
            r#"{ "jsonrpc":"2.0","id":1,"method":"m"}"#,
            r#"{"jsonrpc": "2.0","id":1,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":[1],"extra":0}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","id":2}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":0,"error":{"code":1,"message":"m"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","extra":0}}"#,
            r#"{"jsonrpc":"2.0","id":1,"\u006dethod":"m"}"#,
            // Values the general path objects to.
            r#"{"jsonrpc":"2.0","id":1,"method":""}"#,
            r#"{"jsonrpc":"2.0","id":true,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":[1],"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":3}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":null}"#,
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"m"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":9223372036854775808,"message":"m"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"error":{"message":"m","code":1}}"#,
            r#"{"jsonrpc":"2.0","id":1,"other":0}"#,
            // Syntax errors.
            r#"{"jsonrpc":"2.0","id":01,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":nul,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":[1,]}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":tru}"#,
        ];
        for text in others {
            assert_eq!(message(text.as_bytes(), 0, 0, 128), None, "{text}");
        }
    }

    #[test]
    fn respects_the_depth_limit_like_the_general_path() {
        let nested = br#"{"jsonrpc":"2.0","id":1,"method":"m","params":[[[1]]]}"#;
        for max_depth in 0..6 {
            assert!(agrees(nested, 0, max_depth), "max_depth {max_depth}");
        }
        assert_eq!(message(nested, 0, 0, 3), None);
        assert!(message(nested, 0, 0, 4).is_some());
        let flat = br#"{"jsonrpc":"2.0","id":1,"method":"m","params":["a",2]}"#;
        for max_depth in 0..4 {
            assert!(agrees(flat, 0, max_depth), "max_depth {max_depth}");
        }
        assert_eq!(message(flat, 0, 0, 1), None);
        assert!(message(flat, 0, 0, 2).is_some());
        let error = br#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","data":[1]}}"#;
        for max_depth in 0..5 {
            assert!(agrees(error, 0, max_depth), "max_depth {max_depth}");
        }
        assert_eq!(message(error, 0, 0, 2), None);
        assert!(message(error, 0, 0, 3).is_some());
        // A batch element is one level deeper.
        assert_eq!(message(error, 0, 1, 3), None);
    }

    /// Every truncation, deletion and a set of replacements of every byte of the canonical
    /// messages: the fast path never accepts what the general path would read differently.
    #[test]
    fn never_disagrees_with_the_general_path_on_mutations() {
        let checked = crate::json::mutations::check_mutations(CANONICAL, |input| agrees(input, 0, 128));
        assert!(checked > 10_000);
    }
}
