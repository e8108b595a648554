//! `LinkError`: the one error of a call forwarded to another JSON-RPC side — whether it
//! reached it, the HTTP status if any, and why no answer came. The proxy's upstreams and the
//! MCP gateway's children both end a failed call with it; retries, breakers and the answers
//! their clients get read it, never its text.

use std::fmt;

/// What kind of failure a [`LinkError`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkErrorKind {
    /// The request was not sent: no connection, refused, too many pending, a queue full.
    NotReached,
    /// The request may have reached the other side and no answer came: the connection
    /// closed with it under way, an HTTP error status (`status`), an answer that is not a
    /// response to it.
    NoAnswer {
        /// The HTTP status the other side answered with, if it answered with one.
        status: Option<u16>,
    },
    /// The request may have reached the other side and no answer came within `after`.
    TimedOut {
        /// The time the call had.
        after: std::time::Duration,
    },
    /// The params cannot be sent (they are not an array or an object).
    Params,
    /// The other side refused the request for a limit it has reached (HTTP `429 Too Many
    /// Requests`): it was not run there; `retry_after` is how long it asked the caller to
    /// wait (its `Retry-After`), when it said.
    Limited {
        /// How long the other side asked the caller to wait, if it said.
        retry_after: Option<std::time::Duration>,
    },
}

/// Why a forwarded call brought no usable answer.
///
/// ```
/// use rpcwire_core::middleware::{LinkError, LinkErrorKind};
/// let error = LinkError::new(LinkErrorKind::NoAnswer { status: Some(503) }, "HTTP status 503");
/// assert!(error.reached());
/// assert_eq!(error.status(), Some(503));
/// assert_eq!(error.to_string(), "HTTP status 503");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkError {
    kind: LinkErrorKind,
    reason: String,
    /// The error object the other side answered with, when its refusal carried one (a 429
    /// whose body is a JSON-RPC error answer).
    error: Option<Box<crate::message::ErrorObject<'static>>>,
}

impl LinkError {
    /// A failure of `kind`, saying why.
    ///
    /// ```
    /// use rpcwire_core::middleware::{LinkError, LinkErrorKind};
    /// let error = LinkError::new(LinkErrorKind::NotReached, "refused");
    /// assert!(!error.reached());
    /// ```
    pub fn new(kind: LinkErrorKind, reason: impl Into<String>) -> LinkError {
        LinkError {
            kind,
            reason: reason.into(),
            error: None,
        }
    }

    /// With the error object the other side answered with (the JSON-RPC error in the body of
    /// a refusal: a 429's, say).
    ///
    /// ```
    /// use rpcwire_core::middleware::{LinkError, LinkErrorKind};
    /// let limited = LinkError::new(LinkErrorKind::Limited { retry_after: None }, "HTTP status 429")
    ///     .with_error(rpcwire_core::ErrorObject::new(-32005, "daily request count exceeded"));
    /// assert_eq!(limited.error().unwrap().message(), "daily request count exceeded");
    /// ```
    pub fn with_error(mut self, error: crate::message::ErrorObject<'static>) -> LinkError {
        self.error = Some(Box::new(error));
        self
    }

    /// The error object the other side answered with, if its refusal carried one.
    ///
    /// ```
    /// use rpcwire_core::middleware::{LinkError, LinkErrorKind};
    /// assert!(LinkError::new(LinkErrorKind::NotReached, "down").error().is_none());
    /// ```
    pub fn error(&self) -> Option<&crate::message::ErrorObject<'static>> {
        self.error.as_deref()
    }

    /// What kind of failure it is.
    ///
    /// ```
    /// use rpcwire_core::middleware::{LinkError, LinkErrorKind};
    /// assert_eq!(LinkError::new(LinkErrorKind::Params, "scalar").kind(), LinkErrorKind::Params);
    /// ```
    pub fn kind(&self) -> LinkErrorKind {
        self.kind
    }

    /// Whether the request may have reached the other side and run there (a request
    /// refused for a limit did not run).
    ///
    /// ```
    /// use rpcwire_core::middleware::{LinkError, LinkErrorKind};
    /// assert!(LinkError::new(LinkErrorKind::NoAnswer { status: None }, "reset").reached());
    /// assert!(!LinkError::new(LinkErrorKind::Limited { retry_after: None }, "429").reached());
    /// ```
    pub fn reached(&self) -> bool {
        !matches!(
            self.kind,
            LinkErrorKind::NotReached | LinkErrorKind::Limited { .. }
        )
    }

    /// The HTTP status the other side answered with, if any.
    ///
    /// ```
    /// use rpcwire_core::middleware::{LinkError, LinkErrorKind};
    /// assert_eq!(LinkError::new(LinkErrorKind::NotReached, "down").status(), None);
    /// ```
    pub fn status(&self) -> Option<u16> {
        match self.kind {
            LinkErrorKind::NoAnswer { status } => status,
            LinkErrorKind::Limited { .. } => Some(429),
            _ => None,
        }
    }

    /// Why.
    ///
    /// ```
    /// use rpcwire_core::middleware::{LinkError, LinkErrorKind};
    /// assert_eq!(LinkError::new(LinkErrorKind::NotReached, "down").reason(), "down");
    /// ```
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

impl fmt::Display for LinkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason)
    }
}

impl std::error::Error for LinkError {}

/// No answer in time: the request may have reached the other side.
#[cfg(feature = "tokio")]
impl From<super::TimedOut> for LinkError {
    fn from(elapsed: super::TimedOut) -> LinkError {
        LinkError::new(
            LinkErrorKind::TimedOut {
                after: elapsed.limit(),
            },
            elapsed.to_string(),
        )
    }
}

#[cfg(all(test, feature = "tokio"))]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_call_out_of_time_may_have_reached_the_other_side() {
        let elapsed = LinkError::from(super::super::TimedOut::after(Duration::from_secs(1)));
        assert_eq!(
            elapsed.kind(),
            LinkErrorKind::TimedOut {
                after: Duration::from_secs(1)
            }
        );
        assert!(elapsed.reached());
        assert_eq!(elapsed.status(), None);
        assert_eq!(elapsed.reason(), "no answer within 1s");
    }
}
