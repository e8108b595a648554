//! `Timeout`: every call through it ends within a time.

use std::fmt;
use std::time::Duration;

use super::{BatchEntry, BatchOutcome, Readiness, RpcCall, RpcService};

/// A call that did not end within its time: what [`Timeout`] makes the service's error
/// from.
///
/// ```
/// let elapsed = rpcwire_core::middleware::TimedOut::after(std::time::Duration::from_secs(2));
/// assert_eq!(elapsed.limit(), std::time::Duration::from_secs(2));
/// assert_eq!(elapsed.to_string(), "no answer within 2s");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimedOut {
    limit: Duration,
}

impl TimedOut {
    /// A call that did not end within `limit`.
    ///
    /// ```
    /// let _ = rpcwire_core::middleware::TimedOut::after(std::time::Duration::from_millis(10));
    /// ```
    pub fn after(limit: Duration) -> TimedOut {
        TimedOut { limit }
    }

    /// The time it had.
    ///
    /// ```
    /// use std::time::Duration;
    /// assert_eq!(rpcwire_core::middleware::TimedOut::after(Duration::ZERO).limit(), Duration::ZERO);
    /// ```
    pub fn limit(&self) -> Duration {
        self.limit
    }
}

impl fmt::Display for TimedOut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "no answer within {:?}", self.limit)
    }
}

impl std::error::Error for TimedOut {}

/// Makes [`Timeout`]s: every call (and notification) of the service it wraps ends within
/// `limit`, or with the service's error made from [`TimedOut`].
///
/// ```
/// use tower_layer::Layer;
/// let layer = rpcwire_core::middleware::TimeoutLayer::new(std::time::Duration::from_secs(1));
/// assert_eq!(layer.limit(), std::time::Duration::from_secs(1));
/// ```
#[derive(Clone, Copy, Debug)]
pub struct TimeoutLayer {
    limit: Duration,
}

impl TimeoutLayer {
    /// Calls end within `limit`.
    ///
    /// ```
    /// let _ = rpcwire_core::middleware::TimeoutLayer::new(std::time::Duration::from_secs(10));
    /// ```
    pub fn new(limit: Duration) -> TimeoutLayer {
        TimeoutLayer { limit }
    }

    /// The time a call has.
    ///
    /// ```
    /// use std::time::Duration;
    /// assert_eq!(rpcwire_core::middleware::TimeoutLayer::new(Duration::ZERO).limit(), Duration::ZERO);
    /// ```
    pub fn limit(&self) -> Duration {
        self.limit
    }
}

impl<S> tower_layer::Layer<S> for TimeoutLayer {
    type Service = Timeout<S>;

    fn layer(&self, inner: S) -> Timeout<S> {
        Timeout {
            inner,
            limit: self.limit,
        }
    }
}

/// A service whose calls end within a time. See [`TimeoutLayer`] and the
/// [module](super) for an example.
#[derive(Clone, Debug)]
pub struct Timeout<S> {
    inner: S,
    limit: Duration,
}

impl<S> Timeout<S> {
    /// The service it wraps.
    ///
    /// ```
    /// use tower_layer::Layer;
    /// let timeout = rpcwire_core::middleware::TimeoutLayer::new(std::time::Duration::from_secs(1)).layer(7);
    /// assert_eq!(*timeout.get_ref(), 7);
    /// ```
    pub fn get_ref(&self) -> &S {
        &self.inner
    }
}

impl<S> RpcService for Timeout<S>
where
    S: RpcService,
    S::Error: From<TimedOut>,
{
    type Answer = S::Answer;
    type Error = S::Error;

    async fn call(&self, call: RpcCall<'_>) -> Result<S::Answer, S::Error> {
        match tokio::time::timeout(self.limit, self.inner.call(call)).await {
            Ok(answer) => answer,
            Err(_) => Err(TimedOut::after(self.limit).into()),
        }
    }

    async fn notify(&self, call: RpcCall<'_>) -> Result<(), S::Error> {
        match tokio::time::timeout(self.limit, self.inner.notify(call)).await {
            Ok(sent) => sent,
            Err(_) => Err(TimedOut::after(self.limit).into()),
        }
    }

    /// The batch whole within the time (every entry's outcome the [`TimedOut`] error past it).
    async fn batch<'a>(&'a self, entries: &'a [BatchEntry<'a>]) -> Vec<BatchOutcome<S::Answer, S::Error>> {
        match tokio::time::timeout(self.limit, self.inner.batch(entries)).await {
            Ok(outcomes) => outcomes,
            Err(_) => entries
                .iter()
                .map(|_| Some(Err(TimedOut::after(self.limit).into())))
                .collect(),
        }
    }

    fn readiness(&self) -> Readiness {
        self.inner.readiness()
    }
}
