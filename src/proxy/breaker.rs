//! `Breaker`: benches an upstream that keeps failing, and lets one probe through after a
//! while to see whether it is back.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::sync::lock_unpoisoned;

/// A circuit breaker: closed (requests go through) until `threshold` failures in a row;
/// then open (none go through) for `cool_down`; then half-open: one probe goes through, and
/// its outcome closes the breaker again or opens it for another `cool_down`.
#[derive(Debug)]
pub(crate) struct Breaker {
    threshold: u32,
    cool_down: Duration,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    failures: u32,
    open_until: Option<Instant>,
    /// When the probe now under way was let through (a probe that never reports back, say
    /// because its request was dropped, gives way to another after a cool-down).
    probe_since: Option<Instant>,
}

impl Breaker {
    pub(crate) fn new(threshold: u32, cool_down: Duration) -> Breaker {
        Breaker {
            threshold: threshold.max(1),
            cool_down,
            state: Mutex::default(),
        }
    }

    /// Whether a request may go through now (when the breaker is half-open, only the first
    /// asker gets through: the probe).
    pub(crate) fn allow(&self, now: impl FnOnce() -> Instant) -> bool {
        let mut state = lock_unpoisoned(&self.state);
        let Some(until) = state.open_until else {
            // Closed, the usual case: no need to read the clock.
            return true;
        };
        let now = now();
        if now < until
            || state
                .probe_since
                .is_some_and(|since| now < since + self.cool_down)
        {
            return false;
        }
        state.probe_since = Some(now);
        true
    }

    pub(crate) fn is_open(&self, now: Instant) -> bool {
        let state = lock_unpoisoned(&self.state);
        state
            .open_until
            .is_some_and(|until| now < until || state.probe_since.is_some())
    }

    /// The upstream answered: the breaker closes.
    pub(crate) fn success(&self) {
        *lock_unpoisoned(&self.state) = State::default();
    }

    /// The upstream failed: one more in a row; a failed probe, or the threshold reached,
    /// opens the breaker for `cool_down`.
    pub(crate) fn failure(&self, now: Instant) {
        let mut state = lock_unpoisoned(&self.state);
        state.failures = state.failures.saturating_add(1);
        if state.probe_since.is_some() || state.failures >= self.threshold {
            state.open_until = Some(now + self.cool_down);
            state.probe_since = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opens_after_the_threshold_and_probes_after_the_cool_down() {
        let breaker = Breaker::new(2, Duration::from_secs(10));
        let t0 = Instant::now();
        assert!(breaker.allow(|| t0));
        breaker.failure(t0);
        assert!(breaker.allow(|| t0) && !breaker.is_open(t0));
        breaker.failure(t0);
        assert!(!breaker.allow(|| t0) && breaker.is_open(t0));
        let later = t0 + Duration::from_secs(11);
        assert!(breaker.allow(|| later), "one probe");
        assert!(!breaker.allow(|| later), "only one");
        breaker.failure(later);
        assert!(
            !breaker.allow(|| later + Duration::from_secs(5)),
            "a failed probe opens it again"
        );
        let much_later = later + Duration::from_secs(11);
        assert!(breaker.allow(|| much_later));
        assert!(
            breaker.allow(|| much_later + Duration::from_secs(11)),
            "a probe that never reports back gives way to another"
        );
        breaker.success();
        assert!(breaker.allow(|| much_later) && breaker.allow(|| much_later) && !breaker.is_open(much_later));
    }
}
