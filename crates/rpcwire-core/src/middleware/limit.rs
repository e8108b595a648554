//! `ConcurrencyLimit`: at most so many calls under way through it.

use std::sync::Arc;

use tokio::sync::Semaphore;

use super::{BatchEntry, BatchOutcome, Readiness, RpcCall, RpcService};

/// Makes [`ConcurrencyLimit`]s: at most `max` calls and notifications of the service it
/// wraps under way at once (at least 1); more wait, in turn, for one to end.
///
/// ```
/// use tower_layer::Layer;
/// let limited = rpcwire_core::middleware::ConcurrencyLimitLayer::new(0).layer(());
/// assert_eq!(limited.max(), 1);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct ConcurrencyLimitLayer {
    max: usize,
}

impl ConcurrencyLimitLayer {
    /// At most `max` under way (at least 1).
    ///
    /// ```
    /// let _ = rpcwire_core::middleware::ConcurrencyLimitLayer::new(64);
    /// ```
    pub fn new(max: usize) -> ConcurrencyLimitLayer {
        ConcurrencyLimitLayer {
            max: max.clamp(1, Semaphore::MAX_PERMITS),
        }
    }
}

impl<S> tower_layer::Layer<S> for ConcurrencyLimitLayer {
    type Service = ConcurrencyLimit<S>;

    fn layer(&self, inner: S) -> ConcurrencyLimit<S> {
        ConcurrencyLimit {
            inner,
            slots: Arc::new(Semaphore::new(self.max)),
            max: self.max,
        }
    }
}

/// A service with a bound on the calls under way. See [`ConcurrencyLimitLayer`] and the
/// [module](super) for an example.
#[derive(Debug)]
pub struct ConcurrencyLimit<S> {
    inner: S,
    slots: Arc<Semaphore>,
    max: usize,
}

impl<S> ConcurrencyLimit<S> {
    /// The most calls under way at once.
    ///
    /// ```
    /// use tower_layer::Layer;
    /// assert_eq!(rpcwire_core::middleware::ConcurrencyLimitLayer::new(8).layer(()).max(), 8);
    /// ```
    pub fn max(&self) -> usize {
        self.max
    }

    /// How many calls are under way now.
    ///
    /// ```
    /// use tower_layer::Layer;
    /// assert_eq!(rpcwire_core::middleware::ConcurrencyLimitLayer::new(8).layer(()).in_flight(), 0);
    /// ```
    pub fn in_flight(&self) -> usize {
        self.max - self.slots.available_permits()
    }

    /// The service it wraps.
    ///
    /// ```
    /// use tower_layer::Layer;
    /// assert_eq!(*rpcwire_core::middleware::ConcurrencyLimitLayer::new(8).layer(5).get_ref(), 5);
    /// ```
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// The service it wraps, unwrapped.
    ///
    /// ```
    /// use tower_layer::Layer;
    /// assert_eq!(rpcwire_core::middleware::ConcurrencyLimitLayer::new(8).layer(5).into_inner(), 5);
    /// ```
    pub fn into_inner(self) -> S {
        self.inner
    }

    /// A slot: at once when one is free (the usual case), else when one is.
    async fn slot(&self) -> Option<tokio::sync::SemaphorePermit<'_>> {
        match self.slots.try_acquire() {
            Ok(slot) => Some(slot),
            // Never closed: the semaphore is this service's own.
            Err(_) => self.slots.acquire().await.ok(),
        }
    }
}

impl<S: RpcService> RpcService for ConcurrencyLimit<S> {
    type Answer = S::Answer;
    type Error = S::Error;

    async fn call(&self, call: RpcCall<'_>) -> Result<S::Answer, S::Error> {
        let _slot = self.slot().await;
        self.inner.call(call).await
    }

    async fn notify(&self, call: RpcCall<'_>) -> Result<(), S::Error> {
        let _slot = self.slot().await;
        self.inner.notify(call).await
    }

    /// A batch takes one slot, as it is one exchange.
    async fn batch<'a>(&'a self, entries: &'a [BatchEntry<'a>]) -> Vec<BatchOutcome<S::Answer, S::Error>> {
        let _slot = self.slot().await;
        self.inner.batch(entries).await
    }

    fn readiness(&self) -> Readiness {
        match self.inner.readiness() {
            Readiness::Ready if self.slots.available_permits() == 0 => Readiness::Busy,
            readiness => readiness,
        }
    }
}
