//! `ParseError`: what was wrong, at which byte, and which JSON-RPC code a server answers.

use std::fmt;

use crate::json::{SyntaxError, SyntaxErrorKind};
use crate::message::{ErrorCode, Id};

/// What was wrong with the input.
///
/// [`Syntax`](ParseErrorKind::Syntax) is malformed JSON (the server answers -32700); the
/// others describe valid JSON that is not a valid JSON-RPC 2.0 message (-32600).
///
/// ```
/// use rpcwire_wire::json::SyntaxErrorKind;
/// use rpcwire_wire::ParseErrorKind;
/// assert_eq!(ParseErrorKind::Syntax(SyntaxErrorKind::TrailingBytes).code().code(), -32700);
/// assert_eq!(ParseErrorKind::BadVersion.code().code(), -32600);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParseErrorKind {
    /// Malformed JSON, or JSON nested deeper than the limit: -32700.
    Syntax(SyntaxErrorKind),
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
    /// A successful response whose `id` is `null`: only an error response may have a null
    /// id (the id of a request that could not be read).
    NullIdSuccess,
    /// `error` is not an object with an integer `code` and a string `message`; the text says
    /// which part is wrong.
    BadErrorObject(&'static str),
}

impl ParseErrorKind {
    /// The JSON-RPC error code a server answers this kind with: -32700 for syntax,
    /// -32600 for the rest.
    ///
    /// ```
    /// assert_eq!(rpcwire_wire::ParseErrorKind::EmptyBatch.code(), rpcwire_wire::ErrorCode::InvalidRequest);
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
    /// use rpcwire_wire::json::SyntaxErrorKind;
    /// assert!(rpcwire_wire::ParseErrorKind::Syntax(SyntaxErrorKind::InvalidNumber).is_syntax());
    /// ```
    pub fn is_syntax(&self) -> bool {
        matches!(self, ParseErrorKind::Syntax(_))
    }
}

impl fmt::Display for ParseErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseErrorKind::Syntax(kind) => kind.fmt(f),
            ParseErrorKind::TooLarge { size, limit } => {
                write!(f, "message of {size} bytes exceeds the limit of {limit} bytes")
            }
            ParseErrorKind::BatchTooLong { limit } => {
                write!(f, "batch has more than the limit of {limit} elements")
            }
            ParseErrorKind::EmptyBatch => f.write_str("empty batch"),
            ParseErrorKind::NotAnObject => f.write_str("message is not a JSON object"),
            ParseErrorKind::MissingVersion => f.write_str("missing \"jsonrpc\" member"),
            ParseErrorKind::BadVersion => f.write_str("\"jsonrpc\" must be exactly \"2.0\""),
            ParseErrorKind::DuplicateMember(name) => write!(f, "duplicate member \"{name}\""),
            ParseErrorKind::MissingMethod => {
                f.write_str("missing \"method\" (request) or \"result\"/\"error\" (response)")
            }
            ParseErrorKind::MethodNotString => f.write_str("\"method\" must be a string"),
            ParseErrorKind::EmptyMethod => f.write_str("\"method\" must not be empty"),
            ParseErrorKind::BadId => f.write_str("\"id\" must be a string, a number or null"),
            ParseErrorKind::BadParams => f.write_str("\"params\" must be an array or an object"),
            ParseErrorKind::MethodWithResult => {
                f.write_str("a message with \"method\" must not have \"result\" or \"error\"")
            }
            ParseErrorKind::ResultAndError => {
                f.write_str("a response must not have both \"result\" and \"error\"")
            }
            ParseErrorKind::MissingId => f.write_str("a response must have an \"id\""),
            ParseErrorKind::ParamsInResponse => f.write_str("a response must not have \"params\""),
            ParseErrorKind::NullIdSuccess => f.write_str("a successful response must not have a null \"id\""),
            ParseErrorKind::BadErrorObject(what) => write!(f, "invalid \"error\" object: {what}"),
        }
    }
}

/// Why bytes were not accepted as a JSON-RPC 2.0 message: the reason, the byte offset where
/// it was found, and the id of the message when it could be read (so that a server can echo
/// it in its -32600 answer).
///
/// ```
/// let err = rpcwire_wire::parse(br#"{"jsonrpc":"1.0","id":7,"method":"m"}"#).unwrap_err();
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
    kind: ParseErrorKind,
    offset: usize,
    id: Option<Id<'static>>,
}

impl ParseError {
    #[cold]
    pub(crate) fn new(kind: ParseErrorKind, offset: usize) -> ParseError {
        ParseError {
            inner: Box::new(Inner {
                kind,
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
    /// let err = rpcwire_wire::parse(b"[]").unwrap_err();
    /// assert_eq!(*err.kind(), rpcwire_wire::ParseErrorKind::EmptyBatch);
    /// ```
    pub fn kind(&self) -> &ParseErrorKind {
        &self.inner.kind
    }

    /// The byte offset in the input where the problem was found.
    ///
    /// ```
    /// assert_eq!(rpcwire_wire::parse(b"{} x").unwrap_err().offset(), 3);
    /// ```
    pub fn offset(&self) -> usize {
        self.inner.offset
    }

    /// The id of the offending message, when it could be read.
    ///
    /// ```
    /// assert!(rpcwire_wire::parse(b"{").unwrap_err().id().is_none());
    /// ```
    pub fn id(&self) -> Option<&Id<'static>> {
        self.inner.id.as_ref()
    }

    /// The JSON-RPC error code to answer with: -32700 for malformed JSON, -32600 for valid
    /// JSON that is not a valid message.
    ///
    /// ```
    /// assert_eq!(rpcwire_wire::parse(b"{").unwrap_err().code(), rpcwire_wire::ErrorCode::ParseError);
    /// ```
    pub fn code(&self) -> ErrorCode {
        self.inner.kind.code()
    }

    /// `true` for malformed JSON (-32700).
    ///
    /// ```
    /// assert!(rpcwire_wire::parse(b"nul").unwrap_err().is_syntax());
    /// ```
    pub fn is_syntax(&self) -> bool {
        self.inner.kind.is_syntax()
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = if self.is_syntax() {
            "parse error"
        } else {
            "invalid request"
        };
        write!(f, "{what} at byte {}: {}", self.inner.offset, self.inner.kind)
    }
}

impl std::error::Error for ParseError {}

impl From<SyntaxError> for ParseError {
    #[cold]
    #[inline(never)]
    fn from(error: SyntaxError) -> ParseError {
        let (kind, offset) = error.into_parts();
        ParseError::new(ParseErrorKind::Syntax(kind), offset)
    }
}
