//! `RetryPolicy`: which failed requests are sent again, how many times, how long after, and
//! within what budget; and `Retrying`, the middleware layer that sends them again.

use std::collections::HashSet;
use std::future::Future;
use std::sync::Mutex;
use std::time::Duration;

use crate::middleware::{BatchEntry, BatchOutcome, Readiness, RpcCall, RpcService};
use crate::sync::lock_unpoisoned;

/// When a request that failed upstream is sent again, to the next upstream.
///
/// A request that never reached an upstream (the connection was refused or never made, the
/// upstream was not connected, too many calls were pending) or was refused for a rate limit
/// (HTTP 429, a -32005 answer: it did not run, and the upstream is paused) is always sent
/// again. One that may have reached it (the connection was reset with the request under way,
/// no answer in time, HTTP 502/503/504, an upstream error code in [`retry_code`](RetryPolicy::retry_code))
/// only when its method is marked safe to repeat ([`safe_method`](RetryPolicy::safe_method)):
/// sending `eth_sendRawTransaction` twice is not the same as sending it once.
///
/// Each retry waits first (`backoff`, doubling up to `max_backoff`) and takes a token from a
/// budget that every request refills by `ratio` (up to `burst`), so that when every
/// upstream is failing, retries stay a fraction of the traffic instead of multiplying it.
///
/// ```
/// use std::time::Duration;
/// use rpcwire::proxy::RetryPolicy;
///
/// let policy = RetryPolicy::new()
///     .with_max_attempts(3)
///     .with_backoff(Duration::from_millis(5), Duration::from_millis(200))
///     .safe_methods(["eth_blockNumber", "eth_getBalance", "eth_call"])
///     .retry_code(-32000); // "header not found" from a node behind the others
/// assert!(policy.is_safe("eth_call") && !policy.is_safe("eth_sendRawTransaction"));
/// assert_eq!(policy.backoff_before(2), Duration::from_millis(10));
/// ```
#[derive(Clone, Debug)]
pub struct RetryPolicy {
    max_attempts: usize,
    backoff: Duration,
    max_backoff: Duration,
    ratio: f64,
    burst: f64,
    safe: HashSet<Box<str>>,
    codes: HashSet<i64>,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy::new()
    }
}

impl RetryPolicy {
    /// Three attempts in all, 10 ms before the first retry (doubling up to 1 s), a budget of
    /// one retry per five requests with a reserve of ten, no method marked safe, no upstream
    /// error code retried.
    ///
    /// ```
    /// assert_eq!(rpcwire::proxy::RetryPolicy::new().max_attempts(), 3);
    /// ```
    pub fn new() -> RetryPolicy {
        RetryPolicy {
            max_attempts: 3,
            backoff: Duration::from_millis(10),
            max_backoff: Duration::from_secs(1),
            ratio: 0.2,
            burst: 10.0,
            safe: HashSet::new(),
            codes: HashSet::new(),
        }
    }

    /// How many attempts a request gets in all, the first included (at least 1).
    ///
    /// ```
    /// assert_eq!(rpcwire::proxy::RetryPolicy::new().with_max_attempts(0).max_attempts(), 1);
    /// ```
    pub fn with_max_attempts(mut self, attempts: usize) -> RetryPolicy {
        self.max_attempts = attempts.max(1);
        self
    }

    /// How many attempts a request gets in all.
    ///
    /// ```
    /// assert_eq!(rpcwire::proxy::RetryPolicy::new().with_max_attempts(5).max_attempts(), 5);
    /// ```
    pub fn max_attempts(&self) -> usize {
        self.max_attempts
    }

    /// The wait before the first retry, doubled for each one after, never over `max`.
    ///
    /// ```
    /// use std::time::Duration;
    /// let policy = rpcwire::proxy::RetryPolicy::new().with_backoff(Duration::from_millis(1), Duration::from_millis(3));
    /// assert_eq!(policy.backoff_before(3), Duration::from_millis(3));
    /// ```
    pub fn with_backoff(mut self, first: Duration, max: Duration) -> RetryPolicy {
        self.backoff = first;
        self.max_backoff = max.max(first);
        self
    }

    /// The retry budget: each request adds `ratio` retries to it, up to `burst` saved up;
    /// each retry takes one. `with_budget(0.0, 0.0)` turns retries off.
    ///
    /// ```
    /// let policy = rpcwire::proxy::RetryPolicy::new().with_budget(0.5, 20.0);
    /// # let _ = policy;
    /// ```
    pub fn with_budget(mut self, ratio: f64, burst: f64) -> RetryPolicy {
        self.ratio = ratio.max(0.0);
        self.burst = burst.max(0.0);
        self
    }

    /// Marks `method` safe to send again after it may have reached an upstream (it reads,
    /// or repeating it changes nothing).
    ///
    /// ```
    /// assert!(rpcwire::proxy::RetryPolicy::new().safe_method("eth_chainId").is_safe("eth_chainId"));
    /// ```
    pub fn safe_method(mut self, method: &str) -> RetryPolicy {
        self.safe.insert(method.into());
        self
    }

    /// Marks every method of `methods` safe to send again.
    ///
    /// ```
    /// let policy = rpcwire::proxy::RetryPolicy::new().safe_methods(["a", "b"]);
    /// assert!(policy.is_safe("b"));
    /// ```
    pub fn safe_methods<'m>(mut self, methods: impl IntoIterator<Item = &'m str>) -> RetryPolicy {
        self.safe.extend(methods.into_iter().map(Box::from));
        self
    }

    /// Whether `method` is marked safe to send again.
    ///
    /// ```
    /// assert!(!rpcwire::proxy::RetryPolicy::new().is_safe("eth_sendRawTransaction"));
    /// ```
    pub fn is_safe(&self, method: &str) -> bool {
        !self.safe.is_empty() && self.safe.contains(method)
    }

    /// Retries a safe method whose upstream answered with error `code` (an upstream's way
    /// of saying "busy": a node still syncing, one behind the others). Rate limits need no
    /// code here: they are always sent on (see [`RetryPolicy`]).
    ///
    /// ```
    /// assert!(rpcwire::proxy::RetryPolicy::new().retry_code(-32000).retries_code(-32000));
    /// ```
    pub fn retry_code(mut self, code: i64) -> RetryPolicy {
        self.codes.insert(code);
        self
    }

    /// Whether an upstream error with `code` is worth retrying (for a safe method).
    ///
    /// ```
    /// assert!(!rpcwire::proxy::RetryPolicy::new().retries_code(-32601));
    /// ```
    pub fn retries_code(&self, code: i64) -> bool {
        self.codes.contains(&code)
    }

    /// The wait before retry number `retry` (1 for the first).
    ///
    /// ```
    /// use std::time::Duration;
    /// let policy = rpcwire::proxy::RetryPolicy::new();
    /// assert_eq!(policy.backoff_before(1), Duration::from_millis(10));
    /// assert_eq!(policy.backoff_before(2), Duration::from_millis(20));
    /// ```
    pub fn backoff_before(&self, retry: usize) -> Duration {
        let doublings = u32::try_from(retry.saturating_sub(1)).unwrap_or(u32::MAX).min(20);
        self.backoff.saturating_mul(1 << doublings).min(self.max_backoff)
    }

    pub(crate) fn budget(&self) -> RetryBudget {
        RetryBudget {
            ratio: self.ratio,
            burst: self.burst,
            tokens: Mutex::new(self.burst),
        }
    }
}

/// The retries a group may still make (see [`RetryPolicy::with_budget`]).
#[derive(Debug)]
pub(crate) struct RetryBudget {
    ratio: f64,
    burst: f64,
    tokens: Mutex<f64>,
}

impl RetryBudget {
    /// A request came: the budget grows by the ratio.
    pub(crate) fn deposit(&self) {
        let mut tokens = lock_unpoisoned(&self.tokens);
        *tokens = (*tokens + self.ratio).min(self.burst);
    }

    /// Takes one retry from the budget; `false` when it is spent.
    pub(crate) fn withdraw(&self) -> bool {
        let mut tokens = lock_unpoisoned(&self.tokens);
        if *tokens >= 1.0 {
            *tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

/// A service whose failed calls are made again, as a [`RetryPolicy`] and its budget allow: a
/// call the policy's `retries` says is worth another attempt is made again (up to the
/// policy's attempts, each after its backoff and only with a token from `budget`, which every
/// call fills by the policy's ratio); the last outcome is the call's, as it came. What it
/// wraps decides where each attempt goes (a group: the next upstream). A middleware layer;
/// notifications pass as they are.
pub(crate) struct Retrying<'p, S, F> {
    policy: &'p RetryPolicy,
    budget: &'p RetryBudget,
    inner: S,
    retries: F,
}

impl<'p, S, F> Retrying<'p, S, F> {
    pub(crate) fn new(policy: &'p RetryPolicy, budget: &'p RetryBudget, inner: S, retries: F) -> Self {
        Retrying {
            policy,
            budget,
            inner,
            retries,
        }
    }
}

impl<S, F> RpcService for Retrying<'_, S, F>
where
    S: RpcService,
    F: Fn(&RpcCall<'_>, &Result<S::Answer, S::Error>) -> bool + Send + Sync,
{
    type Answer = S::Answer;
    type Error = S::Error;

    async fn call(&self, call: RpcCall<'_>) -> Result<S::Answer, S::Error> {
        self.budget.deposit();
        let mut outcome = self.inner.call(call).await;
        for retry in 1..self.policy.max_attempts() {
            if !(self.retries)(&call, &outcome) || !self.budget.withdraw() {
                break;
            }
            super::metrics::retried(call.method());
            tokio::time::sleep(self.policy.backoff_before(retry)).await;
            outcome = self.inner.call(call).await;
        }
        outcome
    }

    fn notify<'a>(&'a self, call: RpcCall<'a>) -> impl Future<Output = Result<(), S::Error>> + Send + 'a {
        self.inner.notify(call)
    }

    /// The batch made again whole when every call's outcome is worth another attempt (the
    /// exchange failed: what came back for one call came back for all), as for a call; one
    /// that brought some answers is not (its calls that got none end with their errors).
    async fn batch<'a>(&'a self, entries: &'a [BatchEntry<'a>]) -> Vec<BatchOutcome<S::Answer, S::Error>> {
        self.budget.deposit();
        let mut outcomes = self.inner.batch(entries).await;
        let Some(first) = entries.iter().find(|entry| entry.is_call()) else {
            return outcomes;
        };
        for retry in 1..self.policy.max_attempts() {
            let worth = entries
                .iter()
                .zip(&outcomes)
                .all(|(entry, outcome)| match outcome {
                    Some(outcome) if entry.is_call() => (self.retries)(&entry.call(), outcome),
                    _ => !entry.is_call(),
                });
            if !worth || !self.budget.withdraw() {
                break;
            }
            super::metrics::retried(first.call().method());
            tokio::time::sleep(self.policy.backoff_before(retry)).await;
            outcomes = self.inner.batch(entries).await;
        }
        outcomes
    }

    fn readiness(&self) -> Readiness {
        self.inner.readiness()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Fails its first `failures` calls; counts every call and notification.
    struct Flaky {
        failures: usize,
        calls: AtomicUsize,
    }

    impl RpcService for Flaky {
        type Answer = usize;
        type Error = usize;

        async fn call(&self, _: RpcCall<'_>) -> Result<usize, usize> {
            let call = self.calls.fetch_add(1, Ordering::SeqCst);
            if call < self.failures {
                Err(call)
            } else {
                Ok(call)
            }
        }

        async fn notify(&self, _: RpcCall<'_>) -> Result<(), usize> {
            self.calls.fetch_add(1, Ordering::SeqCst);
            Err(0)
        }

        fn readiness(&self) -> Readiness {
            Readiness::Busy
        }
    }

    #[tokio::test]
    async fn failed_calls_are_made_again_within_the_attempts_and_the_budget() {
        let policy = RetryPolicy::new()
            .with_max_attempts(3)
            .with_backoff(Duration::ZERO, Duration::ZERO)
            .with_budget(0.0, 3.0);
        let budget = policy.budget();
        let retried = |_: &RpcCall<'_>, outcome: &Result<usize, usize>| outcome.is_err();
        let flaky = Flaky {
            failures: 2,
            calls: AtomicUsize::new(0),
        };
        let service = Retrying::new(&policy, &budget, &flaky, retried);
        assert_eq!(
            service.call(RpcCall::new("m", None)).await,
            Ok(2),
            "the third attempt"
        );
        let flaky = Flaky {
            failures: 5,
            calls: AtomicUsize::new(0),
        };
        let service = Retrying::new(&policy, &budget, &flaky, retried);
        assert_eq!(
            service.call(RpcCall::new("m", None)).await,
            Err(1),
            "the last outcome, as it came: one token was left"
        );
        assert_eq!(
            service.call(RpcCall::new("m", None)).await,
            Err(2),
            "no retry: the budget is spent"
        );
        assert_eq!(
            service.notify(RpcCall::new("n", None)).await,
            Err(0),
            "passed on once"
        );
        assert_eq!(flaky.calls.load(Ordering::SeqCst), 4);
        assert_eq!(service.readiness(), Readiness::Busy);
        let never = Retrying::new(
            &policy,
            &budget,
            &flaky,
            |_: &RpcCall<'_>, _: &Result<usize, usize>| false,
        );
        assert_eq!(never.call(RpcCall::new("m", None)).await, Err(4));
    }

    #[test]
    fn the_budget_allows_its_reserve_then_a_ratio_of_the_requests() {
        let budget = RetryPolicy::new().with_budget(0.5, 2.0).budget();
        assert!(budget.withdraw() && budget.withdraw());
        assert!(!budget.withdraw(), "the reserve is spent");
        budget.deposit();
        assert!(!budget.withdraw(), "half a retry is not one");
        budget.deposit();
        assert!(budget.withdraw());
        for _ in 0..100 {
            budget.deposit();
        }
        assert!(
            budget.withdraw() && budget.withdraw() && !budget.withdraw(),
            "never more than the burst"
        );
        let none = RetryPolicy::new().with_budget(0.0, 0.0).budget();
        none.deposit();
        assert!(!none.withdraw());
    }
}
