//! `RetryPolicy`: which failed requests are sent again, how many times, how long after, and
//! within what budget.

use std::collections::HashSet;
use std::sync::Mutex;
use std::time::Duration;

use crate::sync::lock_unpoisoned;

/// When a request that failed upstream is sent again, to the next upstream.
///
/// A request that never reached an upstream (the connection was refused or never made, the
/// upstream was not connected, too many calls were pending) is always sent again. One that
/// may have reached it (the connection was reset with the request under way, no answer in
/// time, HTTP 429/502/503/504, an upstream error code in [`retry_code`](RetryPolicy::retry_code))
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
///     .retry_code(-32005); // "limit exceeded" from the upstream
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
    /// of saying "busy": rate limits, a node still syncing).
    ///
    /// ```
    /// assert!(rpcwire::proxy::RetryPolicy::new().retry_code(-32005).retries_code(-32005));
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

#[cfg(test)]
mod tests {
    use super::*;

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
