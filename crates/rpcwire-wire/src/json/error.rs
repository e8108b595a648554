//! `SyntaxError`: what broke the JSON grammar, and at which byte.

use std::fmt;

/// What broke the JSON grammar.
///
/// ```
/// use rpcwire_wire::json::SyntaxErrorKind;
/// let err = rpcwire_wire::json::validate(b"[1,]").unwrap_err();
/// assert!(matches!(err.kind(), SyntaxErrorKind::UnexpectedByte { byte: b']', .. }));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SyntaxErrorKind {
    /// The input ended inside a value.
    UnexpectedEnd,
    /// A byte that the JSON grammar does not allow here; `expected` says what would fit.
    UnexpectedByte {
        /// The offending byte.
        byte: u8,
        /// What the grammar expected at this point.
        expected: &'static str,
    },
    /// A backslash escape other than `\" \\ \/ \b \f \n \r \t \uXXXX`.
    InvalidEscape,
    /// A `\u` escape without four hex digits.
    InvalidUnicodeEscape,
    /// A `\u` escape of a UTF-16 surrogate without its other half.
    LoneSurrogate,
    /// A raw control character (below U+0020) inside a string.
    ControlCharacter,
    /// Bytes inside a string that are not valid UTF-8.
    InvalidUtf8,
    /// A number that does not follow the JSON number grammar.
    InvalidNumber,
    /// A misspelled `true`, `false` or `null`.
    InvalidLiteral,
    /// More bytes after the end of the value.
    TrailingBytes,
    /// Nesting deeper than the configured limit.
    TooDeep {
        /// The configured maximum depth.
        limit: usize,
    },
}

impl fmt::Display for SyntaxErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SyntaxErrorKind::UnexpectedEnd => f.write_str("unexpected end of input"),
            SyntaxErrorKind::UnexpectedByte { byte, expected } => {
                if byte.is_ascii_graphic() {
                    write!(f, "unexpected byte '{}', expected {expected}", *byte as char)
                } else {
                    write!(f, "unexpected byte 0x{byte:02x}, expected {expected}")
                }
            }
            SyntaxErrorKind::InvalidEscape => f.write_str("invalid escape in string"),
            SyntaxErrorKind::InvalidUnicodeEscape => {
                f.write_str("invalid \\u escape: four hex digits expected")
            }
            SyntaxErrorKind::LoneSurrogate => f.write_str("lone UTF-16 surrogate in \\u escape"),
            SyntaxErrorKind::ControlCharacter => f.write_str("control character in string"),
            SyntaxErrorKind::InvalidUtf8 => f.write_str("invalid UTF-8 in string"),
            SyntaxErrorKind::InvalidNumber => f.write_str("invalid number"),
            SyntaxErrorKind::InvalidLiteral => f.write_str("invalid literal: true, false or null expected"),
            SyntaxErrorKind::TrailingBytes => f.write_str("trailing bytes after the JSON value"),
            SyntaxErrorKind::TooDeep { limit } => write!(f, "nesting deeper than the limit of {limit}"),
        }
    }
}

/// Bytes that are not JSON: what was wrong ([`SyntaxErrorKind`]) and the byte offset where
/// it was found. The JSON-RPC layer wraps it in a [`ParseError`](crate::ParseError), which
/// a server answers with -32700.
///
/// ```
/// let err = rpcwire_wire::json::validate(br#"{"a":tru}"#).unwrap_err();
/// assert_eq!(err.offset(), 5);
/// assert_eq!(err.to_string(), "invalid literal: true, false or null expected at byte 5");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntaxError {
    // Boxed, as serde_json does: a `Result<usize, SyntaxError>` stays two words, so the
    // grammar's hot functions return in registers; the allocation happens only on errors.
    inner: Box<(SyntaxErrorKind, usize)>,
}

impl SyntaxError {
    #[cold]
    pub(crate) fn new(kind: SyntaxErrorKind, offset: usize) -> SyntaxError {
        SyntaxError {
            inner: Box::new((kind, offset)),
        }
    }

    /// What was wrong.
    ///
    /// ```
    /// let err = rpcwire_wire::json::validate(b"\"\\x\"").unwrap_err();
    /// assert_eq!(*err.kind(), rpcwire_wire::json::SyntaxErrorKind::InvalidEscape);
    /// ```
    pub fn kind(&self) -> &SyntaxErrorKind {
        &self.inner.0
    }

    /// The byte offset in the input where the problem was found.
    ///
    /// ```
    /// assert_eq!(rpcwire_wire::json::validate(b"[1] 2").unwrap_err().offset(), 4);
    /// ```
    pub fn offset(&self) -> usize {
        self.inner.1
    }

    /// The kind and the offset, taken apart.
    ///
    /// ```
    /// let (kind, offset) = rpcwire_wire::json::validate(b"").unwrap_err().into_parts();
    /// assert_eq!((kind, offset), (rpcwire_wire::json::SyntaxErrorKind::UnexpectedEnd, 0));
    /// ```
    pub fn into_parts(self) -> (SyntaxErrorKind, usize) {
        *self.inner
    }
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.inner.0, self.inner.1)
    }
}

impl std::error::Error for SyntaxError {}
