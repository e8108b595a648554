//! `ErrorObject` and `ErrorCode`: the `error` member of a failed response.

use std::borrow::Cow;
use std::fmt;

use serde::Serialize;

use super::{BuildError, RawJson};

/// A JSON-RPC error code.
///
/// The five codes the specification defines have their own variants; `-32099..=-32000` is
/// the range reserved for implementation-defined server errors; anything else is an
/// application code.
///
/// ```
/// use rpcwire_wire::ErrorCode;
/// assert_eq!(ErrorCode::from(-32601), ErrorCode::MethodNotFound);
/// assert_eq!(ErrorCode::from(-32001), ErrorCode::ServerError(-32001));
/// assert_eq!(ErrorCode::from(42), ErrorCode::Application(42));
/// assert_eq!(ErrorCode::InvalidParams.code(), -32602);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// -32700: invalid JSON was received.
    ParseError,
    /// -32600: the JSON sent is not a valid request object.
    InvalidRequest,
    /// -32601: the method does not exist or is not available.
    MethodNotFound,
    /// -32602: invalid method parameters.
    InvalidParams,
    /// -32603: internal JSON-RPC error.
    InternalError,
    /// -32099..=-32000: reserved for implementation-defined server errors.
    ServerError(i64),
    /// Any other code: defined by the application.
    Application(i64),
}

impl ErrorCode {
    /// The numeric code.
    ///
    /// ```
    /// assert_eq!(rpcwire_wire::ErrorCode::ParseError.code(), -32700);
    /// ```
    pub const fn code(self) -> i64 {
        match self {
            ErrorCode::ParseError => -32700,
            ErrorCode::InvalidRequest => -32600,
            ErrorCode::MethodNotFound => -32601,
            ErrorCode::InvalidParams => -32602,
            ErrorCode::InternalError => -32603,
            ErrorCode::ServerError(code) | ErrorCode::Application(code) => code,
        }
    }

    /// The message the specification gives for a standard code, `"Server error"` for the
    /// server range, and `"Application error"` otherwise.
    ///
    /// ```
    /// assert_eq!(rpcwire_wire::ErrorCode::InvalidRequest.message(), "Invalid Request");
    /// ```
    pub const fn message(self) -> &'static str {
        match self {
            ErrorCode::ParseError => "Parse error",
            ErrorCode::InvalidRequest => "Invalid Request",
            ErrorCode::MethodNotFound => "Method not found",
            ErrorCode::InvalidParams => "Invalid params",
            ErrorCode::InternalError => "Internal error",
            ErrorCode::ServerError(_) => "Server error",
            ErrorCode::Application(_) => "Application error",
        }
    }
}

impl From<i64> for ErrorCode {
    fn from(code: i64) -> Self {
        match code {
            -32700 => ErrorCode::ParseError,
            -32600 => ErrorCode::InvalidRequest,
            -32601 => ErrorCode::MethodNotFound,
            -32602 => ErrorCode::InvalidParams,
            -32603 => ErrorCode::InternalError,
            -32099..=-32000 => ErrorCode::ServerError(code),
            _ => ErrorCode::Application(code),
        }
    }
}

impl From<i32> for ErrorCode {
    fn from(code: i32) -> Self {
        ErrorCode::from(i64::from(code))
    }
}

impl From<ErrorCode> for i64 {
    fn from(code: ErrorCode) -> i64 {
        code.code()
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message(), self.code())
    }
}

/// The `error` member of a failed response: a code, a message and optional data.
///
/// ```
/// use rpcwire_wire::{ErrorCode, ErrorObject};
/// let e = ErrorObject::method_not_found("frobnicate");
/// assert_eq!(e.code(), ErrorCode::MethodNotFound);
/// assert_eq!(e.message(), "Method not found");
/// assert_eq!(e.data().unwrap().get(), r#""frobnicate""#);
///
/// let e = ErrorObject::new(42, "out of coffee").with_data(&[1, 2]).unwrap();
/// assert_eq!(e.code().code(), 42);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ErrorObject<'a> {
    code: ErrorCode,
    message: Cow<'a, str>,
    data: Option<RawJson<'a>>,
}

impl<'a> ErrorObject<'a> {
    /// An error with a code and a message, without data.
    ///
    /// ```
    /// let e = rpcwire_wire::ErrorObject::new(-32000, "busy");
    /// assert!(e.data().is_none());
    /// ```
    pub fn new(code: impl Into<ErrorCode>, message: impl Into<Cow<'a, str>>) -> ErrorObject<'a> {
        ErrorObject {
            code: code.into(),
            message: message.into(),
            data: None,
        }
    }

    /// The standard error for `code`, with the specification's message.
    ///
    /// ```
    /// let e = rpcwire_wire::ErrorObject::from_code(rpcwire_wire::ErrorCode::InternalError);
    /// assert_eq!(e.message(), "Internal error");
    /// ```
    pub fn from_code(code: ErrorCode) -> ErrorObject<'static> {
        ErrorObject::new(code, code.message())
    }

    /// Parser entry.
    pub(crate) fn from_parts(
        code: ErrorCode,
        message: Cow<'a, str>,
        data: Option<RawJson<'a>>,
    ) -> ErrorObject<'a> {
        ErrorObject { code, message, data }
    }

    /// -32700 `Parse error`.
    ///
    /// ```
    /// assert_eq!(rpcwire_wire::ErrorObject::parse_error().code().code(), -32700);
    /// ```
    pub fn parse_error() -> ErrorObject<'static> {
        ErrorObject::from_code(ErrorCode::ParseError)
    }

    /// -32600 `Invalid Request`.
    ///
    /// ```
    /// assert_eq!(rpcwire_wire::ErrorObject::invalid_request().code().code(), -32600);
    /// ```
    pub fn invalid_request() -> ErrorObject<'static> {
        ErrorObject::from_code(ErrorCode::InvalidRequest)
    }

    /// -32601 `Method not found`, naming the method in `data`.
    ///
    /// ```
    /// let e = rpcwire_wire::ErrorObject::method_not_found("x");
    /// assert_eq!(e.data().unwrap().get(), "\"x\"");
    /// ```
    pub fn method_not_found(method: &str) -> ErrorObject<'static> {
        ErrorObject::from_code(ErrorCode::MethodNotFound).with_text_data(method)
    }

    /// -32602 `Invalid params`, with the reason (for example the decoder's error) in `data`.
    ///
    /// ```
    /// let e = rpcwire_wire::ErrorObject::invalid_params("missing field `a`");
    /// assert_eq!(e.data().unwrap().get(), "\"missing field `a`\"");
    /// ```
    pub fn invalid_params(reason: impl fmt::Display) -> ErrorObject<'static> {
        ErrorObject::from_code(ErrorCode::InvalidParams).with_text_data(&reason.to_string())
    }

    /// -32603 `Internal error`, with the reason in `data`.
    ///
    /// ```
    /// let e = rpcwire_wire::ErrorObject::internal_error("handler panicked");
    /// assert_eq!(e.code().code(), -32603);
    /// ```
    pub fn internal_error(reason: impl fmt::Display) -> ErrorObject<'static> {
        ErrorObject::from_code(ErrorCode::InternalError).with_text_data(&reason.to_string())
    }

    /// Attaches `data`, serialized with serde_json.
    ///
    /// ```
    /// let e = rpcwire_wire::ErrorObject::new(1, "m").with_data(&serde_json::json!({"k": true})).unwrap();
    /// assert_eq!(e.data().unwrap().get(), r#"{"k":true}"#);
    /// ```
    pub fn with_data<T: Serialize + ?Sized>(self, data: &T) -> Result<ErrorObject<'a>, BuildError> {
        let data = RawJson::from_value(data).map_err(BuildError::Serialize)?;
        Ok(self.with_raw_data(data))
    }

    /// Attaches `data` that is already JSON text.
    ///
    /// ```
    /// let data = rpcwire_wire::RawJson::new("[1]").unwrap();
    /// let e = rpcwire_wire::ErrorObject::new(1, "m").with_raw_data(data);
    /// assert_eq!(e.data().unwrap().get(), "[1]");
    /// ```
    pub fn with_raw_data(mut self, data: RawJson<'a>) -> ErrorObject<'a> {
        self.data = Some(data);
        self
    }

    fn with_text_data(self, text: &str) -> ErrorObject<'a> {
        let json = crate::json::escape::quote_json_str(text);
        self.with_raw_data(RawJson::from_validated_owned(json))
    }

    /// The error code.
    ///
    /// ```
    /// assert_eq!(rpcwire_wire::ErrorObject::new(7, "m").code().code(), 7);
    /// ```
    pub fn code(&self) -> ErrorCode {
        self.code
    }

    /// The message.
    ///
    /// ```
    /// assert_eq!(rpcwire_wire::ErrorObject::new(7, "m").message(), "m");
    /// ```
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The data, if any.
    ///
    /// ```
    /// assert!(rpcwire_wire::ErrorObject::new(7, "m").data().is_none());
    /// ```
    pub fn data(&self) -> Option<&RawJson<'a>> {
        self.data.as_ref()
    }

    /// Detaches the error from the buffer it was parsed from.
    ///
    /// ```
    /// let e: rpcwire_wire::ErrorObject<'static> = rpcwire_wire::ErrorObject::new(7, "m").into_owned();
    /// assert_eq!(e.message(), "m");
    /// ```
    pub fn into_owned(self) -> ErrorObject<'static> {
        ErrorObject {
            code: self.code,
            message: Cow::Owned(self.message.into_owned()),
            data: self.data.map(RawJson::into_owned),
        }
    }
}

impl fmt::Display for ErrorObject<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.code.code())?;
        if let Some(data) = &self.data {
            write!(f, ": {data}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ErrorObject<'_> {}
