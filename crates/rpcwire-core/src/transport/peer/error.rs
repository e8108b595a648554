//! What a call or notification through a [`Peer`](super::Peer) can fail with.

use std::fmt;
use std::time::Duration;

use super::CloseReason;
use crate::correlate::CallError;
use crate::codes;
use crate::message::{ErrorCode, ErrorObject, Id};
use crate::middleware::{LinkError, LinkErrorKind};

/// Why a call or notification failed: its [`kind`](PeerError::kind), and the call it
/// failed in — the method and the id the call was sent with — when it came from one.
///
/// ```
/// use rpcwire_core::transport::{CloseReason, PeerError, PeerErrorKind};
/// let error = PeerError::from(PeerErrorKind::Closed(CloseReason::EndOfInput));
/// assert_eq!(error.to_string(), "connection closed: the other side ended the connection");
/// assert!(matches!(error.kind(), PeerErrorKind::Closed(CloseReason::EndOfInput)));
/// ```
///
/// An error from a call names it: `eth_call (id 7): request timed out after 30s`.
/// `source()` goes on to the cause: for `Closed`, the close reason's own cause (the transport
/// or connect error; the reason itself is in this error's text), for `Params` and `Result`,
/// serde_json's error. [`report`](PeerError::report) writes the whole chain.
#[derive(Debug)]
pub struct PeerError {
    kind: PeerErrorKind,
    call: Option<Box<CallSite>>,
}

/// The call an error came from.
#[derive(Debug)]
struct CallSite {
    method: Box<str>,
    id: Option<Id<'static>>,
}

/// What went wrong, for matching: `match error.kind() { PeerErrorKind::Remote(e) => … }`.
///
/// ```
/// use rpcwire_core::transport::PeerErrorKind;
/// let kind = PeerErrorKind::TooManyPending { capacity: 4 };
/// assert_eq!(kind.to_string(), "too many pending requests (capacity 4)");
/// ```
#[derive(Debug)]
pub enum PeerErrorKind {
    /// The connection is closed (or closing): the call was not sent, or its answer can no
    /// longer arrive.
    Closed(CloseReason),
    /// As many calls as the peer allows are pending; the call was not sent.
    TooManyPending {
        /// The most calls that may be pending at once.
        capacity: usize,
    },
    /// No answer arrived in time; an answer arriving later is dropped.
    TimedOut {
        /// The call's timeout.
        after: Duration,
    },
    /// The frame could not be queued in time: the outgoing queue stayed full (the other side
    /// is not reading) for the call timeout.
    QueueFull {
        /// How long it waited for room.
        after: Duration,
    },
    /// The other side answered with an error object.
    Remote(ErrorObject<'static>),
    /// The params could not be serialized, or are not an array or an object.
    Params(serde_json::Error),
    /// The result could not be decoded into the type asked for.
    Result(serde_json::Error),
}

impl fmt::Display for PeerErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use PeerErrorKind as PeerError;
        match self {
            PeerError::Closed(reason) => write!(f, "connection closed: {reason}"),
            PeerError::TooManyPending { capacity } => {
                write!(f, "too many pending requests (capacity {capacity})")
            }
            PeerError::TimedOut { after } => write!(f, "request timed out after {after:?}"),
            PeerError::QueueFull { after } => {
                write!(
                    f,
                    "the other side is not reading: the outgoing queue stayed full for {after:?}"
                )
            }
            PeerError::Remote(error) => write!(f, "the other side answered with an error: {error}"),
            PeerError::Params(_) => f.write_str("params cannot be sent"),
            PeerError::Result(_) => f.write_str("result cannot be decoded"),
        }
    }
}

impl std::error::Error for PeerErrorKind {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        use PeerErrorKind as PeerError;
        match self {
            PeerError::Closed(reason) => std::error::Error::source(reason),
            PeerError::Params(error) | PeerError::Result(error) => Some(error),
            _ => None,
        }
    }
}

/// The call first, when the error came from one: `method (id 7): …`.
impl fmt::Display for PeerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(call) = &self.call {
            f.write_str(&call.method)?;
            if let Some(id) = &call.id {
                write!(f, " (id {id})")?;
            }
            f.write_str(": ")?;
        }
        self.kind.fmt(f)
    }
}

impl std::error::Error for PeerError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        std::error::Error::source(&self.kind)
    }
}

impl From<PeerErrorKind> for PeerError {
    fn from(kind: PeerErrorKind) -> PeerError {
        PeerError { kind, call: None }
    }
}

impl PeerError {
    /// What went wrong.
    ///
    /// ```
    /// use rpcwire_core::transport::{PeerError, PeerErrorKind};
    /// let error = PeerError::from(PeerErrorKind::TooManyPending { capacity: 2 });
    /// assert!(matches!(error.kind(), PeerErrorKind::TooManyPending { capacity: 2 }));
    /// ```
    pub fn kind(&self) -> &PeerErrorKind {
        &self.kind
    }

    /// What went wrong, owned (the call's method and id dropped).
    ///
    /// ```
    /// use rpcwire_core::transport::{PeerError, PeerErrorKind};
    /// let error = PeerError::from(PeerErrorKind::Remote(rpcwire_core::ErrorObject::new(-32000, "no")));
    /// let PeerErrorKind::Remote(object) = error.into_kind() else { unreachable!() };
    /// assert_eq!(object.message(), "no");
    /// ```
    pub fn into_kind(self) -> PeerErrorKind {
        self.kind
    }

    /// The method of the call (or notification) the error came from.
    ///
    /// ```
    /// # use rpcwire_core::transport::{PeerError, PeerErrorKind};
    /// assert_eq!(PeerError::from(PeerErrorKind::TooManyPending { capacity: 1 }).method(), None);
    /// ```
    pub fn method(&self) -> Option<&str> {
        self.call.as_ref().map(|call| &*call.method)
    }

    /// The id the call was sent with (`None` for a notification, or a call refused before
    /// it got one).
    ///
    /// ```
    /// # use rpcwire_core::transport::{PeerError, PeerErrorKind};
    /// assert!(PeerError::from(PeerErrorKind::TooManyPending { capacity: 1 }).id().is_none());
    /// ```
    pub fn id(&self) -> Option<&Id<'static>> {
        self.call.as_ref()?.id.as_ref()
    }

    /// The error, naming the call it came from (what [`method`](PeerError::method) and
    /// [`id`](PeerError::id) give).
    ///
    /// ```
    /// # use rpcwire_core::transport::{PeerError, PeerErrorKind};
    /// let error = PeerError::from(PeerErrorKind::TooManyPending { capacity: 1 }).in_call("sum", None);
    /// assert_eq!(error.method(), Some("sum"));
    /// ```
    pub fn in_call(mut self, method: &str, id: Option<&Id<'_>>) -> PeerError {
        self.call = Some(Box::new(CallSite {
            method: method.into(),
            id: id.map(|id| id.clone().into_owned()),
        }));
        self
    }

    /// Whether the connection is closed (so that no later call can succeed either).
    ///
    /// ```
    /// use rpcwire_core::transport::{CloseReason, PeerError, PeerErrorKind};
    /// assert!(PeerError::from(PeerErrorKind::Closed(CloseReason::Local)).is_closed());
    /// assert!(!PeerError::from(PeerErrorKind::TooManyPending { capacity: 1 }).is_closed());
    /// ```
    pub fn is_closed(&self) -> bool {
        matches!(self.kind, PeerErrorKind::Closed(_))
    }

    /// The error code [`to_error_object`](PeerError::to_error_object) gives a closed
    /// connection: [`codes::CONNECTION_CLOSED`](crate::codes::CONNECTION_CLOSED) (-32030).
    pub const CLOSED_CODE: i64 = codes::CONNECTION_CLOSED;
    /// The error code [`to_error_object`](PeerError::to_error_object) gives a call refused
    /// because too many are pending: [`codes::TOO_MANY_PENDING`](crate::codes::TOO_MANY_PENDING)
    /// (-32032).
    pub const TOO_MANY_PENDING_CODE: i64 = codes::TOO_MANY_PENDING;
    /// The error code [`to_error_object`](PeerError::to_error_object) gives a call that timed
    /// out: [`codes::TIMED_OUT`](crate::codes::TIMED_OUT) (-32031).
    pub const TIMED_OUT_CODE: i64 = codes::TIMED_OUT;

    /// The error object to answer a request with when a call made on its behalf failed — what
    /// a gateway or proxy sends its client: the other side's own error object for
    /// [`Remote`](PeerErrorKind::Remote) (as it came); for the rest, a code in the server-error
    /// range with the reason in `data` — [`CLOSED_CODE`](PeerError::CLOSED_CODE) (-32030),
    /// [`TOO_MANY_PENDING_CODE`](PeerError::TOO_MANY_PENDING_CODE) (-32032),
    /// [`TIMED_OUT_CODE`](PeerError::TIMED_OUT_CODE) (-32031) —, invalid params (-32602) for
    /// params that could not be sent, and an internal error (-32603) for a result that could
    /// not be decoded.
    ///
    /// ```
    /// use std::time::Duration;
    /// use rpcwire_core::transport::{PeerError, PeerErrorKind};
    ///
    /// let error = PeerError::from(PeerErrorKind::TimedOut { after: Duration::from_secs(2) }).to_error_object();
    /// assert_eq!(error.code().code(), PeerError::TIMED_OUT_CODE);
    /// assert_eq!(error.data().unwrap().get(), r#""request timed out after 2s""#);
    ///
    /// let remote = rpcwire_core::ErrorObject::new(-32005, "limit exceeded");
    /// assert_eq!(PeerError::from(PeerErrorKind::Remote(remote.clone())).to_error_object(), remote);
    /// ```
    pub fn to_error_object(&self) -> ErrorObject<'static> {
        use PeerErrorKind as PeerError;
        let (code, message) = match &self.kind {
            PeerError::Remote(error) => return error.clone(),
            PeerError::Closed(_) => (ErrorCode::from(Self::CLOSED_CODE), "connection closed"),
            PeerError::TooManyPending { .. } => (
                ErrorCode::from(Self::TOO_MANY_PENDING_CODE),
                "too many requests pending",
            ),
            PeerError::TimedOut { .. } => (ErrorCode::from(Self::TIMED_OUT_CODE), "request timed out"),
            PeerError::QueueFull { .. } => (
                ErrorCode::from(Self::TOO_MANY_PENDING_CODE),
                "too many requests pending",
            ),
            PeerError::Params(_) => (ErrorCode::InvalidParams, ErrorCode::InvalidParams.message()),
            PeerError::Result(_) => (ErrorCode::InternalError, ErrorCode::InternalError.message()),
        };
        let reason = self.report();
        let object = ErrorObject::new(code, message);
        object.clone().with_data(&reason).unwrap_or(object)
    }

    /// The error and its causes, each after a colon: `connection closed: could not connect:
    /// connection refused`.
    ///
    /// ```
    /// use rpcwire_core::transport::{PeerError, PeerErrorKind};
    /// let error = PeerError::from(PeerErrorKind::Params(serde_json::from_str::<u8>("x").unwrap_err()));
    /// assert!(error.report().starts_with("params cannot be sent: expected value"));
    /// ```
    pub fn report(&self) -> String {
        let mut text = self.to_string();
        let mut cause = std::error::Error::source(self);
        while let Some(error) = cause {
            text.push_str(": ");
            text.push_str(&error.to_string());
            cause = error.source();
        }
        text
    }

    /// Maps a correlation table error, naming the close reason for a closed connection.
    pub(super) fn from_call(error: CallError, reason: impl FnOnce() -> CloseReason) -> PeerError {
        match error {
            CallError::TooManyPending { capacity } => PeerErrorKind::TooManyPending { capacity },
            CallError::TimedOut { after } => PeerErrorKind::TimedOut { after },
            CallError::ConnectionClosed => PeerErrorKind::Closed(reason()),
        }
        .into()
    }
}

/// What a [`Peer`](crate::transport::Peer)'s failure means for a call forwarded through it:
/// not sent (too many pending, the queue full, the connection never made), no answer (closed
/// with it under way), no answer in time, or params that cannot be sent.
///
/// ```
/// use rpcwire_core::middleware::{LinkError, LinkErrorKind};
/// use rpcwire_core::transport::{PeerError, PeerErrorKind};
/// let error = LinkError::from(PeerError::from(PeerErrorKind::TooManyPending { capacity: 2 }));
/// assert_eq!(error.kind(), LinkErrorKind::NotReached);
/// ```
impl From<PeerError> for LinkError {
    fn from(error: PeerError) -> LinkError {
        let kind = match error.kind() {
            PeerErrorKind::TooManyPending { .. }
            | PeerErrorKind::QueueFull { .. }
            | PeerErrorKind::Closed(CloseReason::ConnectFailed(_)) => LinkErrorKind::NotReached,
            PeerErrorKind::Params(_) | PeerErrorKind::Result(_) => LinkErrorKind::Params,
            PeerErrorKind::TimedOut { after } => LinkErrorKind::TimedOut { after: *after },
            PeerErrorKind::Closed(_) | PeerErrorKind::Remote(_) => LinkErrorKind::NoAnswer { status: None },
        };
        let reason = match error.kind() {
            PeerErrorKind::TimedOut { after } => format!("no answer within {after:?}"),
            PeerErrorKind::TooManyPending { capacity } => {
                format!("too many requests pending (capacity {capacity})")
            }
            _ => error.report(),
        };
        LinkError::new(kind, reason)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peer_failures_say_whether_a_forwarded_call_reached_the_other_side() {
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
    }

    #[test]
    fn every_failure_becomes_an_error_object_with_its_reason() {
        let params = serde_json::from_str::<u8>("x").unwrap_err();
        let result = serde_json::from_str::<u8>("[]").unwrap_err();
        let cases = [
            (
                PeerErrorKind::Closed(CloseReason::EndOfInput),
                PeerError::CLOSED_CODE,
            ),
            (
                PeerErrorKind::TooManyPending { capacity: 3 },
                PeerError::TOO_MANY_PENDING_CODE,
            ),
            (
                PeerErrorKind::TimedOut {
                    after: Duration::from_millis(5),
                },
                PeerError::TIMED_OUT_CODE,
            ),
            (PeerErrorKind::Params(params), -32602),
            (PeerErrorKind::Result(result), -32603),
        ];
        for (kind, code) in cases {
            let error = PeerError::from(kind).in_call("m", Some(&crate::message::Id::from(4u64)));
            let object = error.to_error_object();
            assert_eq!(object.code().code(), code, "{error}");
            let data: String = object.data().expect("the reason in data").decode().unwrap();
            assert_eq!(data, error.report());
        }
    }

    #[test]
    fn causes_chain_through_source() {
        use std::error::Error;
        let refused = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused by 127.0.0.1:1");
        let error = PeerError::from(PeerErrorKind::Closed(CloseReason::ConnectFailed(refused.into())));
        assert_eq!(error.to_string(), "connection closed: could not connect");
        let io = error.source().expect("the I/O error");
        assert_eq!(io.to_string(), "refused by 127.0.0.1:1");
        assert!(io.source().is_none());
        assert_eq!(
            error.report(),
            "connection closed: could not connect: refused by 127.0.0.1:1"
        );
        let result = PeerError::from(PeerErrorKind::Result(
            serde_json::from_str::<u8>("[]").unwrap_err(),
        ));
        assert!(result.source().is_some());
        assert!(PeerError::from(PeerErrorKind::Closed(CloseReason::EndOfInput))
            .source()
            .is_none());
    }

    #[test]
    fn an_error_from_a_call_names_it() {
        let id = crate::message::Id::from("c-9");
        let error = PeerError::from(PeerErrorKind::TimedOut {
            after: Duration::from_secs(2),
        })
        .in_call("eth_call", Some(&id));
        assert_eq!(
            error.to_string(),
            r#"eth_call (id "c-9"): request timed out after 2s"#
        );
        assert_eq!(error.method(), Some("eth_call"));
        assert_eq!(error.id().map(|id| id.to_string()).as_deref(), Some(r#""c-9""#));
        let notification = PeerError::from(PeerErrorKind::Closed(CloseReason::Local)).in_call("log", None);
        assert_eq!(
            notification.to_string(),
            "log: connection closed: closed by this side"
        );
        assert!(notification.id().is_none());
    }
}
