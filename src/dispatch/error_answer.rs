//! Parse and frame errors as the error objects a server answers with: the mapping lives here,
//! above the parser and the framing, which only say what went wrong and where.

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
/// use rpcwire::ErrorObject;
/// let error = rpcwire::parse(b"[]").unwrap_err();
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
/// use rpcwire::frame::FrameError;
/// use rpcwire::ErrorObject;
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

/// The answer to input that did not parse: the error object, with the id when the parser
/// read one (`null` otherwise).
pub(crate) fn write_parse_error(dst: &mut BytesMut, error: &ParseError) {
    let null = Id::null();
    encode::write_error(dst, error.id().unwrap_or(&null), &ErrorObject::from(error));
}

/// The answer to a framing error: the error object with id `null`.
pub(crate) fn write_frame_error(dst: &mut BytesMut, error: &FrameError) {
    encode::write_error(dst, &Id::null(), &ErrorObject::from(error));
}
