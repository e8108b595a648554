//! `ForwardError`: why a request forwarded through an [`UpstreamGroup`](super::UpstreamGroup)
//! got no result, and the error object its client is answered with.

use crate::message::{ErrorCode, ErrorObject};

/// Why a forwarded request got no result.
///
/// ```
/// use rpcwire::proxy::ForwardError;
/// let error = ForwardError::Unavailable("every upstream is benched".into());
/// let object = error.to_error_object();
/// assert_eq!(object.code().code(), ForwardError::UNAVAILABLE_CODE);
/// assert_eq!(object.data().unwrap().get(), r#""every upstream is benched""#);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ForwardError {
    /// The upstream answered with an error object: the client gets it as it came.
    #[error("the upstream answered with an error: {0}")]
    Remote(ErrorObject<'static>),
    /// No upstream took the request: none could be reached, or every one is benched. It
    /// was not sent anywhere.
    #[error("no upstream available: {0}")]
    Unavailable(String),
    /// The request may have reached an upstream but no answer came (the connection was
    /// reset with it under way, no answer in time, an HTTP error status) and it was not sent
    /// again (its method is not marked safe, or the attempts or the retry budget ran out).
    #[error("no answer from the upstream: {0}")]
    NoAnswer(String),
    /// The params could not be sent (they are not an array or an object).
    #[error("params cannot be sent: {0}")]
    Params(String),
    /// Every upstream that could take it refused it for a limit it reached (an HTTP 429, a
    /// -32005 answer), or is paused for one: `error` is the last limit's (code -32005, the
    /// upstream's message and data), `retry_after` the time until the first upstream paused
    /// comes back. Over HTTP a gateway answers a request alone in its body `429 Too Many
    /// Requests` with `Retry-After`.
    #[error("every upstream is over its limit: {}", error.message())]
    Limited {
        /// The error object the client gets.
        error: ErrorObject<'static>,
        /// How long the client should wait before asking again.
        retry_after: std::time::Duration,
    },
    /// The upstream answered in breach of JSON-RPC 2.0 (`"result":null` beside an
    /// `"error"`, both `null`, …): what it sent, and why it was refused.
    #[error("the upstream's answer breaks JSON-RPC 2.0: {reason}")]
    NonConforming {
        /// Why the answer was refused.
        reason: String,
        /// The answer's `"error"` member as it came, when it had one that is not `null`.
        error: Option<crate::message::JsonBytes>,
    },
}

impl ForwardError {
    /// The error code for [`Unavailable`](ForwardError::Unavailable):
    /// [`codes::UPSTREAM_UNAVAILABLE`](crate::codes::UPSTREAM_UNAVAILABLE) (-32010).
    pub const UNAVAILABLE_CODE: i64 = crate::codes::UPSTREAM_UNAVAILABLE;
    /// The error code for [`NoAnswer`](ForwardError::NoAnswer):
    /// [`codes::UPSTREAM_NO_ANSWER`](crate::codes::UPSTREAM_NO_ANSWER) (-32011).
    pub const NO_ANSWER_CODE: i64 = crate::codes::UPSTREAM_NO_ANSWER;
    /// The error code for [`NonConforming`](ForwardError::NonConforming):
    /// [`codes::UPSTREAM_NON_CONFORMING`](crate::codes::UPSTREAM_NON_CONFORMING) (-32012).
    pub const NON_CONFORMING_CODE: i64 = crate::codes::UPSTREAM_NON_CONFORMING;

    /// The error object the client is answered with: the upstream's own for
    /// [`Remote`](ForwardError::Remote), the limit's for [`Limited`](ForwardError::Limited); [`UNAVAILABLE_CODE`](ForwardError::UNAVAILABLE_CODE)
    /// (-32010, "upstream unavailable") or [`NO_ANSWER_CODE`](ForwardError::NO_ANSWER_CODE)
    /// (-32011, "no answer from upstream") with the reason in `data`; invalid params (-32602)
    /// for params that could not be sent;
    /// [`NON_CONFORMING_CODE`](ForwardError::NON_CONFORMING_CODE) (-32012, "upstream answer
    /// breaks JSON-RPC 2.0") with `{"reason": …, "error": the upstream's error member as it
    /// came, or null}` in `data`.
    ///
    /// ```
    /// use rpcwire::proxy::ForwardError;
    /// let object = ForwardError::NoAnswer("timed out after 2s".into()).to_error_object();
    /// assert_eq!(object.message(), "no answer from upstream");
    /// ```
    pub fn to_error_object(&self) -> ErrorObject<'static> {
        let (code, message, reason) = match self {
            ForwardError::NonConforming { reason, error } => {
                let object = ErrorObject::new(
                    ForwardError::NON_CONFORMING_CODE,
                    "upstream answer breaks JSON-RPC 2.0",
                );
                let error = error.as_ref().map(crate::message::JsonBytes::to_raw_json);
                let data = serde_json::json!({ "reason": reason, "error": error });
                return object.clone().with_data(&data).unwrap_or(object);
            }
            ForwardError::Remote(error) | ForwardError::Limited { error, .. } => return error.clone(),
            ForwardError::Unavailable(reason) => (
                ErrorCode::from(ForwardError::UNAVAILABLE_CODE),
                "upstream unavailable",
                reason,
            ),
            ForwardError::NoAnswer(reason) => (
                ErrorCode::from(ForwardError::NO_ANSWER_CODE),
                "no answer from upstream",
                reason,
            ),
            ForwardError::Params(reason) => (
                ErrorCode::InvalidParams,
                ErrorCode::InvalidParams.message(),
                reason,
            ),
        };
        let object = ErrorObject::new(code, message);
        object.clone().with_data(reason).unwrap_or(object)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_has_its_object() {
        let remote = ErrorObject::new(-32000, "execution reverted");
        assert_eq!(ForwardError::Remote(remote.clone()).to_error_object(), remote);
        assert_eq!(
            ForwardError::Params("scalar".into()).to_error_object().code(),
            ErrorCode::InvalidParams
        );
        let no_answer = ForwardError::NoAnswer("reset".into());
        assert_eq!(
            no_answer.to_error_object().code().code(),
            ForwardError::NO_ANSWER_CODE
        );
        assert_eq!(no_answer.to_string(), "no answer from the upstream: reset");
    }
}
