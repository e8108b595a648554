//! Every JSON-RPC error code rpcwire answers with, one meaning each.
//!
//! The five codes of the JSON-RPC 2.0 specification are [`ErrorCode`](crate::ErrorCode)'s
//! own variants (and listed here as numbers too); the rest are in the range the specification
//! reserves for implementation-defined server errors (`-32099..=-32000`), except
//! [`REQUEST_CANCELLED`], which is the Language Server Protocol's. No other module of rpcwire
//! defines a code: the names elsewhere (`PeerError::TIMED_OUT_CODE`,
//! `ForwardError::NO_ANSWER_CODE`, `mcp::HEADER_MISMATCH`, …) are these values.
//!
//! Codes fixed by a specification keep its number: the MCP ones ([`RESOURCE_NOT_FOUND`],
//! [`HEADER_MISMATCH`], [`MISSING_CAPABILITY`], [`UNSUPPORTED_VERSION`],
//! [`URL_ELICITATION_REQUIRED`]), Ethereum's [`LIMIT_EXCEEDED`] (EIP-1474) and LSP's
//! [`REQUEST_CANCELLED`]. rpcwire's own choices stay clear of the numbers EIP-1474 gives
//! other meanings (-32004, -32006), so that a gateway in front of an Ethereum node does not
//! answer with a code its clients read otherwise.
//!
//! | code | name | meaning |
//! | --- | --- | --- |
//! | -32700 | [`PARSE_ERROR`] | the input is not JSON, or a frame or header cannot be read |
//! | -32600 | [`INVALID_REQUEST`] | JSON, but not a valid JSON-RPC request (or a frame over the size limit) |
//! | -32601 | [`METHOD_NOT_FOUND`] | no such method (or not in this protocol revision, or not allowed) |
//! | -32602 | [`INVALID_PARAMS`] | the params do not fit the method |
//! | -32603 | [`INTERNAL_ERROR`] | the handler gave no answer of its own: it panicked, its result did not serialize, it ran past its timeout, or the connection closed under it |
//! | -32000 | [`REFUSED`] | not taken: a transport-level refusal (session header missing or unknown, Host or Origin not allowed, a body too large or too slow) or a bound reached (sessions, requests under way) |
//! | -32001 | [`UNAUTHORIZED`] | no credentials, or unknown ones |
//! | -32002 | [`RESOURCE_NOT_FOUND`] | MCP (revisions up to 2025-11-25): no resource with that URI |
//! | -32003 | [`OVERLOADED`] | taken, but every handler slot is busy and the backlog is full |
//! | -32005 | [`LIMIT_EXCEEDED`] | over a rate limit (EIP-1474's "limit exceeded"); retry later |
//! | -32010 | [`UPSTREAM_UNAVAILABLE`] | no upstream (or MCP server) can take the request: none configured, all benched, gone or not started |
//! | -32011 | [`UPSTREAM_NO_ANSWER`] | the upstream (or MCP server) took the request and gave no answer in time |
//! | -32012 | [`UPSTREAM_NON_CONFORMING`] | the upstream's answer breaks JSON-RPC 2.0 |
//! | -32020 | [`HEADER_MISMATCH`] | MCP 2026-07-28: HTTP headers missing or not matching the body |
//! | -32021 | [`MISSING_CAPABILITY`] | MCP 2026-07-28: the request needs a client capability not declared |
//! | -32022 | [`UNSUPPORTED_VERSION`] | MCP 2026-07-28: the protocol revision is not served |
//! | -32030 | [`CONNECTION_CLOSED`] | a call over a connection that closed (or closed while it was under way) |
//! | -32031 | [`TIMED_OUT`] | a call that got no answer within its timeout |
//! | -32032 | [`TOO_MANY_PENDING`] | a call refused on the calling side: too many already waiting for answers, or the outgoing queue stayed full |
//! | -32033 | [`HTTP_FAILURE`] | an HTTP exchange failed (an error status, a refused or broken connection, no answer in time) |
//! | -32034 | [`UNAVAILABLE`] | the service cannot take requests now: shutting down, or a store it needs is unreachable |
//! | -32042 | [`URL_ELICITATION_REQUIRED`] | MCP 2025-11-25: the client must open a URL first (reserved; rpcwire does not send it yet) |
//! | -32800 | [`REQUEST_CANCELLED`] | LSP: the request was cancelled by the other side |
//!
//! ```
//! use rpcwire_wire::{codes, ErrorCode, ErrorObject};
//! let error = ErrorObject::new(codes::UPSTREAM_NO_ANSWER, "no answer from upstream");
//! assert_eq!(error.code(), ErrorCode::ServerError(-32011));
//! assert_eq!(codes::meaning(-32011), Some("the upstream took the request and gave no answer in time"));
//! assert_eq!(codes::meaning(-32004), None);
//! ```

/// -32700: the input is not JSON, or a frame or header cannot be read.
pub const PARSE_ERROR: i64 = -32700;
/// -32600: JSON, but not a valid JSON-RPC request (or a frame over the size limit).
pub const INVALID_REQUEST: i64 = -32600;
/// -32601: no such method (or not in this protocol revision, or not allowed here).
pub const METHOD_NOT_FOUND: i64 = -32601;
/// -32602: the params do not fit the method.
pub const INVALID_PARAMS: i64 = -32602;
/// -32603: the handler gave no answer of its own: it panicked, its result did not serialize, it ran past its timeout, or the connection closed under it.
pub const INTERNAL_ERROR: i64 = -32603;

/// -32000: not taken — a transport-level refusal (session header missing or unknown, Host or
/// Origin not allowed, a body too large or too slow), or a bound reached (sessions, requests
/// under way). The number the MCP SDKs answer HTTP-level refusals with.
pub const REFUSED: i64 = -32000;
/// -32001: no credentials, or unknown ones (HTTP 401 where there is HTTP; on an MCP client,
/// its authorizer could not get any).
pub const UNAUTHORIZED: i64 = -32001;
/// -32002: MCP (revisions up to 2025-11-25): no resource with that URI (`data.uri`).
pub const RESOURCE_NOT_FOUND: i64 = -32002;
/// -32003: taken, but every handler slot is busy and the backlog is full.
pub const OVERLOADED: i64 = -32003;
/// -32005: over a rate limit — EIP-1474's "limit exceeded" (HTTP 429 and `Retry-After`
/// where there is HTTP).
pub const LIMIT_EXCEEDED: i64 = -32005;
/// -32010: no upstream (or MCP server) can take the request: none configured, all benched,
/// gone, or not started.
pub const UPSTREAM_UNAVAILABLE: i64 = -32010;
/// -32011: the upstream (or MCP server) took the request and gave no answer in time (or the
/// connection broke with it under way).
pub const UPSTREAM_NO_ANSWER: i64 = -32011;
/// -32012: the upstream's answer breaks JSON-RPC 2.0 (its `error`, when it had one, in `data`).
pub const UPSTREAM_NON_CONFORMING: i64 = -32012;
/// -32020: MCP 2026-07-28 — HTTP headers (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`,
/// `Mcp-Param-*`) missing or not matching the body.
pub const HEADER_MISMATCH: i64 = -32020;
/// -32021: MCP 2026-07-28 — the request needs a client capability the client did not declare
/// (`data.requiredCapabilities`).
pub const MISSING_CAPABILITY: i64 = -32021;
/// -32022: MCP 2026-07-28 — the protocol revision is not served (`data.supported`).
pub const UNSUPPORTED_VERSION: i64 = -32022;
/// -32030: a call over a connection that is closed, or closed while the call was under way.
pub const CONNECTION_CLOSED: i64 = -32030;
/// -32031: a call that got no answer within its timeout.
pub const TIMED_OUT: i64 = -32031;
/// -32032: a call refused on the calling side: too many already waiting for answers, or the
/// outgoing queue stayed full for the call's timeout.
pub const TOO_MANY_PENDING: i64 = -32032;
/// -32033: an HTTP exchange failed: an error status, a refused or broken connection, or no
/// answer in time (`data.reached`, `data.status`).
pub const HTTP_FAILURE: i64 = -32033;
/// -32034: the service cannot take requests now: it is shutting down, or a store it needs
/// (the fleet's Redis) is unreachable (HTTP 503 where there is HTTP).
pub const UNAVAILABLE: i64 = -32034;
/// -32042: MCP 2025-11-25 — the client must open a URL before the request can go on
/// (URL-mode elicitation). Reserved: rpcwire does not send it yet.
pub const URL_ELICITATION_REQUIRED: i64 = -32042;
/// -32800: the Language Server Protocol's "request cancelled": the other side cancelled the
/// request (`$/cancelRequest`) and it was answered without a result.
pub const REQUEST_CANCELLED: i64 = -32800;

/// Every code of this table with its meaning, in the table's order.
pub const ALL: &[(i64, &str)] = &[
    (
        PARSE_ERROR,
        "the input is not JSON, or a frame or header cannot be read",
    ),
    (INVALID_REQUEST, "JSON, but not a valid JSON-RPC request"),
    (METHOD_NOT_FOUND, "no such method"),
    (INVALID_PARAMS, "the params do not fit the method"),
    (INTERNAL_ERROR, "the handler gave no answer of its own"),
    (REFUSED, "not taken: a transport-level refusal or a bound reached"),
    (UNAUTHORIZED, "no credentials, or unknown ones"),
    (RESOURCE_NOT_FOUND, "no resource with that URI"),
    (OVERLOADED, "every handler slot is busy and the backlog is full"),
    (LIMIT_EXCEEDED, "over a rate limit"),
    (UPSTREAM_UNAVAILABLE, "no upstream can take the request"),
    (
        UPSTREAM_NO_ANSWER,
        "the upstream took the request and gave no answer in time",
    ),
    (
        UPSTREAM_NON_CONFORMING,
        "the upstream's answer breaks JSON-RPC 2.0",
    ),
    (HEADER_MISMATCH, "HTTP headers missing or not matching the body"),
    (
        MISSING_CAPABILITY,
        "the request needs a client capability not declared",
    ),
    (UNSUPPORTED_VERSION, "the protocol revision is not served"),
    (CONNECTION_CLOSED, "the connection closed"),
    (TIMED_OUT, "no answer within the timeout"),
    (TOO_MANY_PENDING, "too many calls waiting for answers"),
    (HTTP_FAILURE, "an HTTP exchange failed"),
    (UNAVAILABLE, "the service cannot take requests now"),
    (URL_ELICITATION_REQUIRED, "the client must open a URL first"),
    (REQUEST_CANCELLED, "the request was cancelled"),
];

/// The meaning of `code` in rpcwire's table, or `None` for a code rpcwire never answers with.
///
/// ```
/// assert_eq!(rpcwire_wire::codes::meaning(-32601), Some("no such method"));
/// assert_eq!(rpcwire_wire::codes::meaning(7), None);
/// ```
pub fn meaning(code: i64) -> Option<&'static str> {
    ALL.iter().find(|&&(c, _)| c == code).map(|&(_, meaning)| meaning)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorCode;

    #[test]
    fn each_code_has_one_meaning_and_the_standard_ones_match_error_code() {
        for (i, (code, _)) in ALL.iter().enumerate() {
            assert!(
                ALL[i + 1..].iter().all(|(other, _)| other != code),
                "{code} is listed twice"
            );
        }
        for standard in [
            ErrorCode::ParseError,
            ErrorCode::InvalidRequest,
            ErrorCode::MethodNotFound,
            ErrorCode::InvalidParams,
            ErrorCode::InternalError,
        ] {
            assert!(meaning(standard.code()).is_some(), "{standard:?}");
        }
        // rpcwire's own codes are in the server range, apart from LSP's.
        for &(code, _) in ALL {
            let standard = (-32603..=-32600).contains(&code) || code == PARSE_ERROR;
            assert!(
                standard
                    || code == REQUEST_CANCELLED
                    || matches!(ErrorCode::from(code), ErrorCode::ServerError(_)),
                "{code}"
            );
        }
    }
}
