//! Validating a whole JSON text: exactly one value with optional whitespace around it.

use super::cursor::Cursor;
use super::error::SyntaxError;

/// The nesting limit [`validate`] enforces, and the parser's default: 128 levels.
///
/// ```
/// assert_eq!(rpcwire_wire::json::DEFAULT_MAX_DEPTH, 128);
/// ```
pub const DEFAULT_MAX_DEPTH: usize = 128;

/// Validates `bytes` as exactly one JSON value (RFC 8259) with optional whitespace around
/// it, nested at most [`DEFAULT_MAX_DEPTH`] levels: strings (escapes, surrogate pairs,
/// UTF-8, control characters), numbers and literals included. The grammar rpcwire's parser
/// applies to everything it accepts, params and results too.
///
/// ```
/// assert!(rpcwire_wire::json::validate(br#" {"a":[1,2.5e3,"\u00e9",null]} "#).is_ok());
/// assert!(rpcwire_wire::json::validate(br#"{"a":01}"#).is_err());
/// assert!(rpcwire_wire::json::validate(b"\"\\ud800\"").is_err());
/// ```
pub fn validate(bytes: &[u8]) -> Result<(), SyntaxError> {
    let mut cursor = Cursor::new(bytes);
    cursor.skip_ws();
    cursor.value(0, DEFAULT_MAX_DEPTH)?;
    cursor.finish()
}

/// The JSON whitespace characters (space, tab, line feed, carriage return), for
/// `str::trim_matches`.
///
/// ```
/// assert_eq!(" \t[1]\r\n".trim_matches(rpcwire_wire::json::is_whitespace_char), "[1]");
/// assert!(!rpcwire_wire::json::is_whitespace_char('\u{a0}'));
/// ```
pub fn is_whitespace_char(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}
