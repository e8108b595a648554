//! `ParseError`: what was wrong, at which byte, and which JSON-RPC code a server answers.

use std::fmt;

use crate::message::{ErrorCode, ErrorObject, Id};

/// What was wrong with the input.
///
/// Reasons up to [`Reason::TooDeep`] are JSON syntax errors (the server answers -32700);
/// the others describe valid JSON that is not a valid JSON-RPC 2.0 message (-32600).
///
/// ```
/// use rpcwire::Reason;
/// assert_eq!(Reason::TrailingBytes.code().code(), -32700);
/// assert_eq!(Reason::BadVersion.code().code(), -32600);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Reason {
    // ---- JSON syntax: -32700 ----
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
    // ---- valid JSON, invalid JSON-RPC: -32600 ----
    /// The message is larger than the configured limit.
    TooLarge {
        /// The message size in bytes.
        size: usize,
        /// The configured maximum size.
        limit: usize,
    },
    /// A batch with more elements than the configured limit.
    BatchTooLong {
        /// The configured maximum batch length.
        limit: usize,
    },
    /// The batch array `[]` is empty.
    EmptyBatch,
    /// The message (or batch element) is not a JSON object.
    NotAnObject,
    /// No `"jsonrpc"` member.
    MissingVersion,
    /// `"jsonrpc"` is not exactly the string `"2.0"`.
    BadVersion,
    /// The same member appears twice (compared after unescaping).
    DuplicateMember(String),
    /// Neither `method` (request) nor `result`/`error` (response).
    MissingMethod,
    /// `method` is not a string.
    MethodNotString,
    /// `method` is the empty string.
    EmptyMethod,
    /// `id` is not a string, a number or null.
    BadId,
    /// `params` is not an array, an object or null.
    BadParams,
    /// A message with `method` that also has `result` or `error`.
    MethodWithResult,
    /// A response with both `result` and `error`.
    ResultAndError,
    /// A response without an `id` member.
    MissingId,
    /// A response with a `params` member.
    ParamsInResponse,
    /// `error` is not an object with an integer `code` and a string `message`; the text says
    /// which part is wrong.
    BadErrorObject(&'static str),
}

impl Reason {
    /// The JSON-RPC error code a server answers this reason with: -32700 for syntax,
    /// -32600 for the rest.
    ///
    /// ```
    /// assert_eq!(rpcwire::Reason::EmptyBatch.code(), rpcwire::ErrorCode::InvalidRequest);
    /// ```
    pub fn code(&self) -> ErrorCode {
        if self.is_syntax() {
            ErrorCode::ParseError
        } else {
            ErrorCode::InvalidRequest
        }
    }

    /// `true` for JSON syntax errors (including the nesting limit).
    ///
    /// ```
    /// assert!(rpcwire::Reason::InvalidNumber.is_syntax());
    /// ```
    pub fn is_syntax(&self) -> bool {
        matches!(
            self,
            Reason::UnexpectedEnd
                | Reason::UnexpectedByte { .. }
                | Reason::InvalidEscape
                | Reason::InvalidUnicodeEscape
                | Reason::LoneSurrogate
                | Reason::ControlCharacter
                | Reason::InvalidUtf8
                | Reason::InvalidNumber
                | Reason::InvalidLiteral
                | Reason::TrailingBytes
                | Reason::TooDeep { .. }
        )
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::UnexpectedEnd => f.write_str("unexpected end of input"),
            Reason::UnexpectedByte { byte, expected } => {
                if byte.is_ascii_graphic() {
                    write!(f, "unexpected byte '{}', expected {expected}", *byte as char)
                } else {
                    write!(f, "unexpected byte 0x{byte:02x}, expected {expected}")
                }
            }
            Reason::InvalidEscape => f.write_str("invalid escape in string"),
            Reason::InvalidUnicodeEscape => f.write_str("invalid \\u escape: four hex digits expected"),
            Reason::LoneSurrogate => f.write_str("lone UTF-16 surrogate in \\u escape"),
            Reason::ControlCharacter => f.write_str("control character in string"),
            Reason::InvalidUtf8 => f.write_str("invalid UTF-8 in string"),
            Reason::InvalidNumber => f.write_str("invalid number"),
            Reason::InvalidLiteral => f.write_str("invalid literal: true, false or null expected"),
            Reason::TrailingBytes => f.write_str("trailing bytes after the JSON value"),
            Reason::TooDeep { limit } => write!(f, "nesting deeper than the limit of {limit}"),
            Reason::TooLarge { size, limit } => {
                write!(f, "message of {size} bytes exceeds the limit of {limit} bytes")
            }
            Reason::BatchTooLong { limit } => {
                write!(f, "batch has more than the limit of {limit} elements")
            }
            Reason::EmptyBatch => f.write_str("empty batch"),
            Reason::NotAnObject => f.write_str("message is not a JSON object"),
            Reason::MissingVersion => f.write_str("missing \"jsonrpc\" member"),
            Reason::BadVersion => f.write_str("\"jsonrpc\" must be exactly \"2.0\""),
            Reason::DuplicateMember(name) => write!(f, "duplicate member \"{name}\""),
            Reason::MissingMethod => {
                f.write_str("missing \"method\" (request) or \"result\"/\"error\" (response)")
            }
            Reason::MethodNotString => f.write_str("\"method\" must be a string"),
            Reason::EmptyMethod => f.write_str("\"method\" must not be empty"),
            Reason::BadId => f.write_str("\"id\" must be a string, a number or null"),
            Reason::BadParams => f.write_str("\"params\" must be an array or an object"),
            Reason::MethodWithResult => {
                f.write_str("a message with \"method\" must not have \"result\" or \"error\"")
            }
            Reason::ResultAndError => f.write_str("a response must not have both \"result\" and \"error\""),
            Reason::MissingId => f.write_str("a response must have an \"id\""),
            Reason::ParamsInResponse => f.write_str("a response must not have \"params\""),
            Reason::BadErrorObject(what) => write!(f, "invalid \"error\" object: {what}"),
        }
    }
}

/// Why bytes were not accepted as a JSON-RPC 2.0 message: the reason, the byte offset where
/// it was found, and the id of the message when it could be read (so that a server can echo
/// it in its -32600 answer).
///
/// ```
/// let err = rpcwire::parse(br#"{"jsonrpc":"1.0","id":7,"method":"m"}"#).unwrap_err();
/// assert_eq!(err.code().code(), -32600);
/// assert_eq!(err.id().unwrap().as_u64(), Some(7));
/// assert_eq!(err.offset(), 11);
/// assert_eq!(err.to_string(), "invalid request at byte 11: \"jsonrpc\" must be exactly \"2.0\"");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    // Boxed, as serde_json does: a `Result<_, ParseError>` stays two words, so the parser's
    // hot functions return in registers; the allocation happens only on the error path.
    inner: Box<Inner>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Inner {
    reason: Reason,
    offset: usize,
    id: Option<Id<'static>>,
}

/// The error of one element of a batch. An element error is always an invalid request
/// (-32600): a syntax error anywhere in a batch fails the whole batch with a [`ParseError`].
pub type ElementError = ParseError;

impl ParseError {
    #[cold]
    pub(crate) fn new(reason: Reason, offset: usize) -> ParseError {
        ParseError {
            inner: Box::new(Inner {
                reason,
                offset,
                id: None,
            }),
        }
    }

    pub(crate) fn with_id(mut self, id: Option<Id<'static>>) -> ParseError {
        self.inner.id = id;
        self
    }

    /// What was wrong.
    ///
    /// ```
    /// let err = rpcwire::parse(b"[]").unwrap_err();
    /// assert_eq!(*err.reason(), rpcwire::Reason::EmptyBatch);
    /// ```
    pub fn reason(&self) -> &Reason {
        &self.inner.reason
    }

    /// The byte offset in the input where the problem was found.
    ///
    /// ```
    /// assert_eq!(rpcwire::parse(b"{} x").unwrap_err().offset(), 3);
    /// ```
    pub fn offset(&self) -> usize {
        self.inner.offset
    }

    /// The id of the offending message, when it could be read.
    ///
    /// ```
    /// assert!(rpcwire::parse(b"{").unwrap_err().id().is_none());
    /// ```
    pub fn id(&self) -> Option<&Id<'static>> {
        self.inner.id.as_ref()
    }

    /// The JSON-RPC error code to answer with: -32700 for malformed JSON, -32600 for valid
    /// JSON that is not a valid message.
    ///
    /// ```
    /// assert_eq!(rpcwire::parse(b"{").unwrap_err().code(), rpcwire::ErrorCode::ParseError);
    /// ```
    pub fn code(&self) -> ErrorCode {
        self.inner.reason.code()
    }

    /// `true` for malformed JSON (-32700).
    ///
    /// ```
    /// assert!(rpcwire::parse(b"nul").unwrap_err().is_syntax());
    /// ```
    pub fn is_syntax(&self) -> bool {
        self.inner.reason.is_syntax()
    }

    /// The error object a server answers with: the standard code and message, and this
    /// error's description (reason and offset) as `data`.
    ///
    /// ```
    /// let e = rpcwire::parse(b"[]").unwrap_err().to_error_object();
    /// assert_eq!(e.code().code(), -32600);
    /// assert_eq!(e.message(), "Invalid Request");
    /// ```
    pub fn to_error_object(&self) -> ErrorObject<'static> {
        let detail = format!("{} at byte {}", self.inner.reason, self.inner.offset);
        let data = crate::message::RawJson::from_validated_owned(super::quote_json_str(&detail));
        ErrorObject::from_code(self.code()).with_raw_data(data)
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = if self.is_syntax() {
            "parse error"
        } else {
            "invalid request"
        };
        write!(f, "{what} at byte {}: {}", self.inner.offset, self.inner.reason)
    }
}

impl std::error::Error for ParseError {}
