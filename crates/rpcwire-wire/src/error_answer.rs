//! Parse and frame errors as the error objects a server answers with: the mapping lives here,
//! above the parser and the framing, which only say what went wrong and where. The `rpcwire`
//! facade re-exports the writers as `rpcwire::dispatch::{write_parse_error, write_frame_error}`.

use bytes::BytesMut;

use crate::encode;
use crate::frame::FrameError;
use crate::json::escape::quote_json_str;
use crate::message::{ErrorCode, ErrorObject, Id, RawJson};
use crate::parse::ParseError;

/// The error object for a parse error: the standard code and message (-32700 for malformed
/// JSON, -32600 for an invalid request), and the error's description (what and at which
/// byte) as `data`.
///
/// ```
/// use rpcwire_wire::ErrorObject;
/// let error = rpcwire_wire::parse(b"[]").unwrap_err();
/// let object = ErrorObject::from(&error);
/// assert_eq!(object.code().code(), -32600);
/// assert_eq!(object.message(), "Invalid Request");
/// assert_eq!(object.data().unwrap().get(), r#""empty batch at byte 0""#);
/// ```
impl From<&ParseError> for ErrorObject<'static> {
    fn from(error: &ParseError) -> ErrorObject<'static> {
        let detail = format!("{} at byte {}", error.kind(), error.offset());
        with_detail(error.code(), &detail)
    }
}

/// The error object for a framing error: -32600 for a frame over the size limit, -32700 for
/// a header or frame that cannot be read, and the error's description as `data`.
///
/// ```
/// use rpcwire_wire::frame::FrameError;
/// use rpcwire_wire::ErrorObject;
/// let error = FrameError::TooLarge { len: 9, limit: 8, offset: 0 };
/// assert_eq!(ErrorObject::from(&error).code().code(), -32600);
/// ```
impl From<&FrameError> for ErrorObject<'static> {
    fn from(error: &FrameError) -> ErrorObject<'static> {
        let code = match error {
            FrameError::TooLarge { .. } => ErrorCode::InvalidRequest,
            _ => ErrorCode::ParseError,
        };
        with_detail(code, &error.to_string())
    }
}

/// The standard error object for `code`, with `detail` as a JSON string in `data`.
fn with_detail(code: ErrorCode, detail: &str) -> ErrorObject<'static> {
    let data = RawJson::from_validated_owned(quote_json_str(detail));
    ErrorObject::from_code(code).with_raw_data(data)
}

/// Writes the answer to input that did not parse: the error object (-32700 or -32600, the
/// description in `data`), with the id when the parser read one (`null` otherwise) — what a
/// proxy answers a client's bad frame with before anything goes upstream.
///
/// ```
/// let error = rpcwire_wire::parse(br#"{"jsonrpc":"2.0","id":7,"method":5}"#).unwrap_err();
/// let mut out = bytes::BytesMut::new();
/// rpcwire_wire::error_answer::write_parse_error(&mut out, &error);
/// assert!(out.starts_with(br#"{"jsonrpc":"2.0","id":7,"error":{"code":-32600"#));
/// ```
pub fn write_parse_error(dst: &mut BytesMut, error: &ParseError) {
    let null = Id::null();
    encode::write_error(dst, error.id().unwrap_or(&null), &ErrorObject::from(error));
}

/// Writes the answer to a framing error: the error object (-32600 for a frame over the
/// limit, -32700 otherwise) with id `null`.
///
/// ```
/// let error = rpcwire_wire::frame::FrameError::TooLarge { len: 9, limit: 8, offset: 0 };
/// let mut out = bytes::BytesMut::new();
/// rpcwire_wire::error_answer::write_frame_error(&mut out, &error);
/// assert!(out.starts_with(br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600"#));
/// ```
pub fn write_frame_error(dst: &mut BytesMut, error: &FrameError) {
    encode::write_error(dst, &Id::null(), &ErrorObject::from(error));
}
