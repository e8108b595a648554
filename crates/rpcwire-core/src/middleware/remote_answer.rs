//! `RemoteAnswer`: what the other side answered a call with — the answer of every service
//! that reaches another process (a `Peer`'s connection, a gateway's upstream, an MCP
//! server child).

use bytes::BytesMut;

#[cfg(feature = "tokio")]
use crate::dispatch::FallbackAnswer;
use crate::message::{ErrorObject, Id, JsonBytes};

/// What the other side answered a call with: its result, or its error — each as it wrote it,
/// so that whoever passes it on writes the same bytes (members, their order, escapes, number
/// spellings). The answer type of the services that reach another process; a gateway adds to
/// it what only it has (a whole frame with the id's place, an answer that breaks the
/// specification, a failure of its own).
///
/// ```
/// use rpcwire_core::middleware::RemoteAnswer;
/// use rpcwire_core::{ErrorObject, Id, JsonBytes};
///
/// let result = RemoteAnswer::Result(JsonBytes::new(bytes::Bytes::from_static(br#"{"n":1.50}"#)).unwrap());
/// let mut out = bytes::BytesMut::new();
/// result.write(&Id::from(7), &mut out);
/// assert_eq!(&out[..], br#"{"jsonrpc":"2.0","id":7,"result":{"n":1.50}}"#);
///
/// let error = RemoteAnswer::Error {
///     error: ErrorObject::new(-32005, "limit exceeded"),
///     text: Some(JsonBytes::new(bytes::Bytes::from_static(br#"{"message":"limit exceeded","code":-32005}"#)).unwrap()),
/// };
/// assert_eq!(error.error().map(|e| e.code().code()), Some(-32005));
/// out.clear();
/// error.write(&Id::from(7), &mut out);
/// assert_eq!(&out[..], br#"{"jsonrpc":"2.0","id":7,"error":{"message":"limit exceeded","code":-32005}}"#);
/// ```
#[derive(Clone, Debug)]
pub enum RemoteAnswer {
    /// The result's JSON text, as the other side wrote it.
    Result(JsonBytes),
    /// The other side's error.
    Error {
        /// The error object, decoded (for retry decisions and callers that read it).
        error: ErrorObject<'static>,
        /// The error object's JSON text as the other side wrote it, when it was kept (an
        /// answer inside a batch frame is not): what is passed on.
        text: Option<JsonBytes>,
    },
}

impl RemoteAnswer {
    /// The result, when it is one.
    ///
    /// ```
    /// let answer = rpcwire_core::middleware::RemoteAnswer::Result(rpcwire_core::JsonBytes::new(bytes::Bytes::from_static(b"1")).unwrap());
    /// assert_eq!(answer.result().unwrap().as_str(), "1");
    /// ```
    pub fn result(&self) -> Option<&JsonBytes> {
        match self {
            RemoteAnswer::Result(result) => Some(result),
            RemoteAnswer::Error { .. } => None,
        }
    }

    /// The error object, when it is an error.
    ///
    /// ```
    /// let answer = rpcwire_core::middleware::RemoteAnswer::Result(rpcwire_core::JsonBytes::new(bytes::Bytes::from_static(b"1")).unwrap());
    /// assert!(answer.error().is_none());
    /// ```
    pub fn error(&self) -> Option<&ErrorObject<'static>> {
        match self {
            RemoteAnswer::Result(_) => None,
            RemoteAnswer::Error { error, .. } => Some(error),
        }
    }

    /// Writes the response to the request `id` at the end of `out`: the result, or the
    /// error as the other side wrote it when its text was kept.
    ///
    /// ```
    /// use rpcwire_core::middleware::RemoteAnswer;
    /// let answer = RemoteAnswer::Error { error: rpcwire_core::ErrorObject::new(-32000, "no"), text: None };
    /// let mut out = bytes::BytesMut::new();
    /// answer.write(&rpcwire_core::Id::from("a"), &mut out);
    /// assert_eq!(&out[..], br#"{"jsonrpc":"2.0","id":"a","error":{"code":-32000,"message":"no"}}"#);
    /// ```
    pub fn write(&self, id: &Id<'_>, out: &mut BytesMut) {
        match self {
            RemoteAnswer::Result(result) => crate::encode::write_success_bytes(out, id, result),
            RemoteAnswer::Error { text: Some(text), .. } => crate::encode::write_error_bytes(out, id, text),
            RemoteAnswer::Error { error, text: None } => crate::encode::write_error(out, id, error),
        }
    }
}

/// The other side's answer, passed on: its result, or its error as it wrote it when its
/// text was kept.
///
/// ```
/// use rpcwire_core::dispatch::FallbackAnswer;
/// use rpcwire_core::middleware::RemoteAnswer;
/// let answer = RemoteAnswer::Error { error: rpcwire_core::ErrorObject::new(-32000, "no"), text: None };
/// assert!(matches!(FallbackAnswer::from(answer), FallbackAnswer::Error(_)));
/// ```
#[cfg(feature = "tokio")]
impl From<RemoteAnswer> for FallbackAnswer {
    fn from(answer: RemoteAnswer) -> FallbackAnswer {
        match answer {
            RemoteAnswer::Result(result) => FallbackAnswer::Result(result),
            RemoteAnswer::Error {
                error,
                text: Some(text),
            } => FallbackAnswer::ErrorText { error, text },
            RemoteAnswer::Error { error, text: None } => FallbackAnswer::Error(error),
        }
    }
}
