//! Hedging: for a method safe to repeat, a second attempt on another upstream when the first
//! has not answered after a delay — fixed, or a quantile of that upstream's recent latencies —
//! the first answer winning and the other attempt dropped (which cancels it). [`Hedge`] says
//! when; [`Latencies`] keeps each upstream's recent latencies the delay is read from;
//! [`HedgeStats`] counts what it did.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use crate::sync::lock_unpoisoned;

/// When a call of a method marked safe ([`RetryPolicy::safe_method`](crate::RetryPolicy::safe_method))
/// gets a second attempt on another upstream, if the first has not answered yet
/// ([`UpstreamGroup::with_hedge`](crate::UpstreamGroup::with_hedge)).
///
/// ```
/// use std::time::Duration;
/// use rpcwire::proxy::Hedge;
/// let fixed = Hedge::after(Duration::from_millis(50));
/// assert_eq!(fixed.delay(&[]), Duration::from_millis(50));
/// // The upstream's 95th percentile of its recent latencies, at least 5 ms.
/// let percentile = Hedge::quantile(0.95, Duration::from_millis(5));
/// let recent: Vec<Duration> = (1..=100).map(Duration::from_millis).collect();
/// assert_eq!(percentile.delay(&recent), Duration::from_millis(95));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hedge {
    quantile: Option<f64>,
    delay: Duration,
}

impl Hedge {
    /// A second attempt after `delay`.
    ///
    /// See [`Hedge`] for an example.
    pub fn after(delay: Duration) -> Hedge {
        Hedge {
            quantile: None,
            delay,
        }
    }

    /// A second attempt after the `quantile` (0 to 1: 0.95 for the 95th percentile) of the
    /// first upstream's recent latencies (its last 128 answers), never before `least`, nor
    /// before it has answered 16 calls to read them from.
    ///
    /// See [`Hedge`] for an example.
    pub fn quantile(quantile: f64, least: Duration) -> Hedge {
        Hedge {
            quantile: Some(quantile.clamp(0.0, 1.0)),
            delay: least,
        }
    }

    /// Whether the delay is read from the upstream's latencies.
    pub(crate) fn reads_latencies(&self) -> bool {
        self.quantile.is_some()
    }

    /// The delay before the second attempt, given the first upstream's `recent` latencies.
    ///
    /// See [`Hedge`] for an example.
    pub fn delay(&self, recent: &[Duration]) -> Duration {
        let Some(quantile) = self.quantile else {
            return self.delay;
        };
        if recent.len() < MIN_SAMPLES {
            return self.delay;
        }
        let mut sorted = recent.to_vec();
        sorted.sort_unstable();
        let rank = (quantile * sorted.len() as f64).ceil() as usize;
        sorted[rank.clamp(1, sorted.len()) - 1].max(self.delay)
    }
}

/// How many latencies an upstream must have answered with before a quantile is read.
const MIN_SAMPLES: usize = 16;

/// How many latencies are kept per upstream.
const KEPT: usize = 128;

/// An upstream's most recent latencies (the last 128 answers), for [`Hedge::quantile`], and
/// their moving average, for [`UpstreamGroup::prefer_faster`](crate::UpstreamGroup::prefer_faster).
#[derive(Debug, Default)]
pub(crate) struct Latencies {
    ring: Mutex<(Vec<Duration>, usize)>,
    /// The exponentially weighted average of the latencies, in nanoseconds, plus one (zero:
    /// none yet); each new one weighs an eighth.
    average: AtomicU64,
}

impl Latencies {
    /// An answer came after `latency`.
    pub(crate) fn record(&self, latency: Duration) {
        let nanos = u64::try_from(latency.as_nanos())
            .unwrap_or(u64::MAX / 2)
            .min(u64::MAX / 2);
        let _ = self
            .average
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |average| {
                Some(match average.checked_sub(1) {
                    None => nanos + 1,
                    Some(average) => average - average / 8 + nanos / 8 + 1,
                })
            });
        let mut ring = lock_unpoisoned(&self.ring);
        let (kept, next) = &mut *ring;
        if kept.len() < KEPT {
            kept.push(latency);
        } else {
            kept[*next] = latency;
            *next = (*next + 1) % KEPT;
        }
    }

    /// The latencies kept, in no order.
    pub(crate) fn recent(&self) -> Vec<Duration> {
        lock_unpoisoned(&self.ring).0.clone()
    }

    /// Their moving average, in nanoseconds (`None`: none yet).
    pub(crate) fn average(&self) -> Option<u64> {
        self.average.load(Ordering::Relaxed).checked_sub(1)
    }
}

/// An attempt's latency, recorded when it ends: answered, or dropped unanswered (a hedge's
/// other attempt won, or its caller left) — then at what it had taken, a lower bound.
pub(crate) struct Timing<'a> {
    latencies: &'a Latencies,
    started: std::time::Instant,
    done: bool,
}

impl<'a> Timing<'a> {
    pub(crate) fn start(latencies: &'a Latencies) -> Timing<'a> {
        Timing {
            latencies,
            started: std::time::Instant::now(),
            done: false,
        }
    }

    /// It ended with an answer (`answered`: recorded) or a failure (not recorded).
    pub(crate) fn end(mut self, answered: bool) {
        self.done = true;
        if answered {
            self.latencies.record(self.started.elapsed());
        }
    }
}

impl Drop for Timing<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.latencies.record(self.started.elapsed());
        }
    }
}

/// What hedging did in a group.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let stats = rpcwire::proxy::UpstreamGroup::new(vec![]).hedge_stats();
/// assert_eq!((stats.sent, stats.won), (0, 0));
/// # });
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HedgeStats {
    /// Second attempts sent (the first had not answered in time).
    pub sent: u64,
    /// Second attempts whose answer was the one passed on.
    pub won: u64,
}

/// The counters behind [`HedgeStats`].
#[derive(Debug, Default)]
pub(crate) struct HedgeCounters {
    pub(crate) sent: AtomicU64,
    pub(crate) won: AtomicU64,
}

impl HedgeCounters {
    pub(crate) fn stats(&self) -> HedgeStats {
        HedgeStats {
            sent: self.sent.load(Ordering::Relaxed),
            won: self.won.load(Ordering::Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quantile_waits_for_enough_samples_and_never_goes_under_its_least() {
        let hedge = Hedge::quantile(0.5, Duration::from_millis(10));
        let few: Vec<Duration> = (0..MIN_SAMPLES - 1).map(|_| Duration::from_secs(1)).collect();
        assert_eq!(hedge.delay(&few), Duration::from_millis(10));
        let fast: Vec<Duration> = (0..40).map(|_| Duration::from_millis(1)).collect();
        assert_eq!(hedge.delay(&fast), Duration::from_millis(10));
        let latencies = Latencies::default();
        for ms in 1..=200 {
            latencies.record(Duration::from_millis(ms));
        }
        let recent = latencies.recent();
        assert_eq!(recent.len(), KEPT);
        // The last 128: 73 ms to 200 ms; their median is 136 ms.
        assert_eq!(hedge.delay(&recent), Duration::from_millis(136));
        assert_eq!(
            Hedge::quantile(1.5, Duration::ZERO).delay(&recent),
            Duration::from_millis(200)
        );
    }

    #[test]
    fn the_average_follows_the_latencies_and_an_attempt_dropped_counts_what_it_took() {
        let latencies = Latencies::default();
        assert_eq!(latencies.average(), None);
        latencies.record(Duration::from_micros(800));
        assert_eq!(latencies.average(), Some(800_000));
        for _ in 0..64 {
            latencies.record(Duration::from_micros(80));
        }
        let settled = latencies.average().unwrap();
        assert!((80_000..81_000).contains(&settled), "{settled}");
        Timing::start(&latencies).end(false);
        assert_eq!(latencies.recent().len(), 65, "a failure is not a latency");
        let dropped = Timing::start(&latencies);
        std::thread::sleep(Duration::from_millis(2));
        drop(dropped);
        assert_eq!(latencies.recent().len(), 66);
        assert!(latencies.average().unwrap() > settled + 200_000);
    }
}
