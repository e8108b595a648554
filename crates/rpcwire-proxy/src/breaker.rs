//! `Breaker`: benches an upstream that keeps failing, and lets one probe through after a
//! while to see whether it is back; also benched while an outside verdict says so (other
//! holders of a breaker for the same upstream: the fleet, with the `redis` feature), and
//! probed only when that verdict picks this one; and `Breaking`, a service behind a breaker
//! (a middleware layer).

use std::future::Future;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::middleware::{BatchEntry, BatchOutcome, Readiness, RpcCall, RpcService};
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
    /// The outside verdict last given (`Healthy` when there is none).
    outside: Verdict,
    /// What the outside has not been told yet.
    report: Report,
}

/// What the outside (others holding a breaker for the same upstream) says of it.
#[cfg_attr(not(feature = "redis"), allow(dead_code))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Nothing: this instance's own breaker decides.
    #[default]
    Healthy,
    /// Benched by some instance's breaker: no request goes to it from here.
    Benched,
    /// Benched, and this instance is the one to probe it: one request goes through.
    Probe,
}

/// A change of a breaker that the outside is to be told of.
#[cfg_attr(not(feature = "redis"), allow(dead_code))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Report {
    #[default]
    Nothing,
    /// It opened (the threshold reached, or a probe failed).
    Opened,
    /// It closed again after being open (a probe succeeded).
    Closed,
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
            return state.outside != Verdict::Benched;
        };
        if state.outside == Verdict::Benched {
            return false;
        }
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
        state.outside == Verdict::Benched
            || state
                .open_until
                .is_some_and(|until| now < until || state.probe_since.is_some())
    }

    /// The upstream answered: the breaker closes.
    pub(crate) fn success(&self) {
        let mut state = lock_unpoisoned(&self.state);
        if state.open_until.is_some() {
            state.report = Report::Closed;
            state.outside = Verdict::Healthy;
        }
        state.failures = 0;
        state.open_until = None;
        state.probe_since = None;
    }

    /// The upstream failed: one more in a row; a failed probe, or the threshold reached,
    /// opens the breaker for `cool_down`.
    pub(crate) fn failure(&self, now: Instant) {
        let mut state = lock_unpoisoned(&self.state);
        state.failures = state.failures.saturating_add(1);
        if state.probe_since.is_some() || state.failures >= self.threshold {
            state.open_until = Some(now + self.cool_down);
            state.probe_since = None;
            state.report = Report::Opened;
        }
    }

    /// How long it stays open before a probe.
    #[cfg_attr(not(feature = "redis"), allow(dead_code))]
    pub(crate) fn cool_down(&self) -> Duration {
        self.cool_down
    }

    /// What the outside has not been told yet, now taken (to be given back with
    /// [`untake`](Breaker::untake) when the telling failed).
    #[cfg_attr(not(feature = "redis"), allow(dead_code))]
    pub(crate) fn take_report(&self) -> Report {
        std::mem::take(&mut lock_unpoisoned(&self.state).report)
    }

    /// Gives back a report that could not be told, unless a newer one came meanwhile.
    #[cfg_attr(not(feature = "redis"), allow(dead_code))]
    pub(crate) fn untake(&self, report: Report) {
        let mut state = lock_unpoisoned(&self.state);
        if state.report == Report::Nothing {
            state.report = report;
        }
    }

    /// Takes the outside's `verdict`: benched (no request from here), this instance's turn to
    /// probe (one request goes through, as when half-open), or healthy again — after being
    /// benched, that means another instance's probe succeeded (or the bench lapsed), and this
    /// breaker closes too. `true` when this verdict made it this instance's turn to probe.
    #[cfg_attr(not(feature = "redis"), allow(dead_code))]
    pub(crate) fn apply(&self, verdict: Verdict, now: Instant) -> bool {
        let mut state = lock_unpoisoned(&self.state);
        let armed = verdict == Verdict::Probe && state.outside != Verdict::Probe;
        match verdict {
            Verdict::Healthy if state.outside != Verdict::Healthy => {
                state.failures = 0;
                state.open_until = None;
                state.probe_since = None;
            }
            Verdict::Probe if state.outside != Verdict::Probe => {
                state.open_until = Some(now);
                state.probe_since = None;
            }
            _ => {}
        }
        state.outside = verdict;
        armed
    }

    /// The outside cannot be asked (for a fleet: Redis is down): this breaker decides alone.
    #[cfg_attr(not(feature = "redis"), allow(dead_code))]
    pub(crate) fn forget_outside(&self) {
        lock_unpoisoned(&self.state).outside = Verdict::Healthy;
    }
}

/// A service behind a [`Breaker`]: [`Readiness::Down`] while the breaker is open (asking
/// is what lets the probe through), and every call's outcome told to the breaker — a failure
/// when `trips` says so, a success otherwise. Notifications pass as they are (no answer says
/// how they went).
pub(crate) struct Breaking<'b, S, F> {
    breaker: &'b Breaker,
    inner: S,
    trips: F,
}

impl<'b, S, F> Breaking<'b, S, F> {
    pub(crate) fn new(breaker: &'b Breaker, inner: S, trips: F) -> Breaking<'b, S, F> {
        Breaking {
            breaker,
            inner,
            trips,
        }
    }
}

impl<S, F> RpcService for Breaking<'_, S, F>
where
    S: RpcService,
    F: Fn(&Result<S::Answer, S::Error>) -> bool + Send + Sync,
{
    type Answer = S::Answer;
    type Error = S::Error;

    async fn call(&self, call: RpcCall<'_>) -> Result<S::Answer, S::Error> {
        let outcome = self.inner.call(call).await;
        if (self.trips)(&outcome) {
            self.breaker.failure(Instant::now());
        } else {
            self.breaker.success();
        }
        outcome
    }

    fn notify<'a>(&'a self, call: RpcCall<'a>) -> impl Future<Output = Result<(), S::Error>> + Send + 'a {
        self.inner.notify(call)
    }

    /// The batch as one exchange: a failure when every call's outcome `trips` (the exchange
    /// failed), a success otherwise; a batch of notifications only tells nothing.
    async fn batch<'a>(&'a self, entries: &'a [BatchEntry<'a>]) -> Vec<BatchOutcome<S::Answer, S::Error>> {
        let outcomes = self.inner.batch(entries).await;
        let mut calls = entries
            .iter()
            .zip(&outcomes)
            .filter(|(entry, _)| entry.is_call())
            .map(|(_, outcome)| outcome.as_ref().is_some_and(|outcome| (self.trips)(outcome)))
            .peekable();
        if calls.peek().is_some() {
            if calls.all(|trips| trips) {
                self.breaker.failure(Instant::now());
            } else {
                self.breaker.success();
            }
        }
        outcomes
    }

    fn readiness(&self) -> Readiness {
        if self.breaker.allow(Instant::now) {
            self.inner.readiness()
        } else {
            Readiness::Down
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fails while `failing` is set.
    struct Flaky {
        failing: std::sync::atomic::AtomicBool,
    }

    impl RpcService for Flaky {
        type Answer = ();
        type Error = ();

        async fn call(&self, _: RpcCall<'_>) -> Result<(), ()> {
            match self.failing.load(std::sync::atomic::Ordering::SeqCst) {
                true => Err(()),
                false => Ok(()),
            }
        }

        async fn notify(&self, _: RpcCall<'_>) -> Result<(), ()> {
            Err(())
        }
    }

    #[tokio::test]
    async fn a_service_behind_a_breaker_is_down_while_it_is_open_and_probed_back() {
        let breaker = Breaker::new(2, Duration::from_millis(50));
        let flaky = Flaky { failing: true.into() };
        let service = Breaking::new(&breaker, &flaky, |outcome: &Result<(), ()>| outcome.is_err());
        let call = || RpcCall::new("m", None);
        assert_eq!(service.readiness(), Readiness::Ready);
        assert!(service.call(call()).await.is_err());
        assert!(service.notify(call()).await.is_err(), "passed as it is");
        assert_eq!(
            service.readiness(),
            Readiness::Ready,
            "a notification is not counted"
        );
        assert!(service.call(call()).await.is_err());
        assert_eq!(service.readiness(), Readiness::Down, "two failures in a row");
        tokio::time::sleep(Duration::from_millis(60)).await;
        flaky.failing.store(false, std::sync::atomic::Ordering::SeqCst);
        assert_eq!(service.readiness(), Readiness::Ready, "the probe");
        assert_eq!(service.readiness(), Readiness::Down, "one probe at a time");
        assert!(service.call(call()).await.is_ok());
        assert_eq!(
            service.readiness(),
            Readiness::Ready,
            "closed by the probe's success"
        );
    }

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

    #[test]
    fn reports_its_changes_and_takes_the_fleets_verdict() {
        let breaker = Breaker::new(1, Duration::from_secs(10));
        let t0 = Instant::now();
        assert_eq!(breaker.take_report(), Report::Nothing);
        breaker.success();
        assert_eq!(
            breaker.take_report(),
            Report::Nothing,
            "closed already: nothing to tell"
        );
        breaker.failure(t0);
        assert_eq!(breaker.take_report(), Report::Opened);
        assert_eq!(breaker.take_report(), Report::Nothing, "told once");
        breaker.untake(Report::Opened);
        assert_eq!(
            breaker.take_report(),
            Report::Opened,
            "given back when the telling failed"
        );

        // Benched by the fleet: nothing goes through, not even this instance's own probe.
        breaker.apply(Verdict::Benched, t0);
        let later = t0 + Duration::from_secs(11);
        assert!(!breaker.allow(|| later) && breaker.is_open(later));
        // This instance's turn to probe: one request, then none until it reports back.
        assert!(breaker.apply(Verdict::Probe, later), "this instance's turn");
        assert!(breaker.allow(|| later), "the probe");
        assert!(!breaker.apply(Verdict::Probe, later));
        assert!(
            !breaker.allow(|| later),
            "one probe only, however often the fleet says so"
        );
        breaker.success();
        assert_eq!(breaker.take_report(), Report::Closed);
        assert!(breaker.allow(|| later) && !breaker.is_open(later));

        // Another instance's probe succeeded: benched here, then healthy closes this one too.
        let other = Breaker::new(1, Duration::from_secs(10));
        other.failure(t0);
        other.apply(Verdict::Benched, t0);
        assert!(!other.allow(|| t0));
        other.apply(Verdict::Healthy, t0);
        assert!(other.allow(|| t0) && !other.is_open(t0));
        // Benched by the fleet while closed here; Redis gone: this breaker decides alone.
        other.apply(Verdict::Benched, t0);
        assert!(!other.allow(|| t0) && other.is_open(t0));
        other.forget_outside();
        assert!(other.allow(|| t0));
    }
}
