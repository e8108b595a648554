//! `LinkError`: the one error of a call forwarded to another JSON-RPC side — whether it
//! reached it, the HTTP status if any, and why no answer came. The proxy's upstreams and the
//! MCP gateway's children both end a failed call with it; retries, breakers and the answers
//! their clients get read it, never its text.

use std::fmt;
#[cfg(feature = "tokio")]
use std::time::Duration;

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
        }
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

    /// Whether the request may have reached the other side (it may have run there).
    ///
    /// ```
    /// use rpcwire_core::middleware::{LinkError, LinkErrorKind};
    /// assert!(LinkError::new(LinkErrorKind::NoAnswer { status: None }, "reset").reached());
    /// ```
    pub fn reached(&self) -> bool {
        !matches!(self.kind, LinkErrorKind::NotReached)
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

/// What a [`Peer`](crate::transport::Peer)'s failure means for a forwarded call: not sent
/// (too many pending, the queue full, the connection never made), no answer (closed with it
/// under way), no answer in time, or params that cannot be sent.
///
/// ```
/// use rpcwire_core::middleware::{LinkError, LinkErrorKind};
/// use rpcwire_core::transport::{PeerError, PeerErrorKind};
/// let error = LinkError::from(PeerError::from(PeerErrorKind::TooManyPending { capacity: 2 }));
/// assert_eq!(error.kind(), LinkErrorKind::NotReached);
/// ```
#[cfg(feature = "tokio")]
impl From<crate::transport::PeerError> for LinkError {
    fn from(error: crate::transport::PeerError) -> LinkError {
        use crate::transport::{CloseReason, PeerErrorKind};
        let kind = match error.kind() {
            PeerErrorKind::TooManyPending { .. }
            | PeerErrorKind::QueueFull { .. }
            | PeerErrorKind::Closed(CloseReason::ConnectFailed(_)) => LinkErrorKind::NotReached,
            PeerErrorKind::Params(_) | PeerErrorKind::Result(_) => LinkErrorKind::Params,
            PeerErrorKind::TimedOut { after } => LinkErrorKind::TimedOut { after: *after },
            PeerErrorKind::Closed(_) | PeerErrorKind::Remote(_) => LinkErrorKind::NoAnswer { status: None },
        };
        let reason = match error.kind() {
            PeerErrorKind::TimedOut { after } => no_answer_within(*after),
            PeerErrorKind::TooManyPending { capacity } => {
                format!("too many requests pending (capacity {capacity})")
            }
            _ => error.report(),
        };
        LinkError::new(kind, reason)
    }
}

#[cfg(feature = "tokio")]
fn no_answer_within(after: Duration) -> String {
    format!("no answer within {after:?}")
}

#[cfg(all(test, feature = "tokio"))]
mod tests {
    use super::*;
    use crate::transport::{CloseReason, PeerError, PeerErrorKind};

    #[test]
    fn peer_failures_say_whether_the_request_reached_the_other_side() {
        let cases = [
            (
                PeerErrorKind::TooManyPending { capacity: 2 },
                LinkErrorKind::NotReached,
                "capacity 2",
            ),
            (
                PeerErrorKind::QueueFull {
                    after: Duration::from_millis(5),
                },
                LinkErrorKind::NotReached,
                "",
            ),
            (
                PeerErrorKind::TimedOut {
                    after: Duration::from_millis(7),
                },
                LinkErrorKind::TimedOut {
                    after: Duration::from_millis(7),
                },
                "no answer within 7ms",
            ),
            (
                PeerErrorKind::Closed(CloseReason::EndOfInput),
                LinkErrorKind::NoAnswer { status: None },
                "",
            ),
        ];
        for (kind, expected, reason) in cases {
            let error = LinkError::from(PeerError::from(kind));
            assert_eq!(error.kind(), expected, "{error}");
            assert!(error.reason().contains(reason), "{error}");
            assert_eq!(error.reached(), expected != LinkErrorKind::NotReached);
            assert_eq!(error.status(), None);
        }
        let params = serde_json::from_str::<u8>("x").unwrap_err();
        assert_eq!(
            LinkError::from(PeerError::from(PeerErrorKind::Result(params))).kind(),
            LinkErrorKind::Params
        );
        let elapsed = LinkError::from(super::super::TimedOut::after(Duration::from_secs(1)));
        assert_eq!(
            elapsed.kind(),
            LinkErrorKind::TimedOut {
                after: Duration::from_secs(1)
            }
        );
        assert!(elapsed.reached());
    }
}
