//! GCRA (the generic cell rate algorithm): a key may send a burst of `tolerance` worth of
//! requests at once, then one per `interval`. What the shared limiter's Redis script
//! computes, and the local limiter that stands in for it while Redis is down.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::sync::lock_unpoisoned;

/// The theoretical arrival time (µs) after a request of `cost` at `now`, given the last one
/// (`tat`), or how long (µs) until it would be allowed.
pub(crate) fn gcra(tat: Option<u64>, now: u64, interval: u64, tolerance: u64, cost: u64) -> Result<u64, u64> {
    let tat = tat.map_or(now, |tat| tat.max(now));
    let next = tat.saturating_add(interval.saturating_mul(cost));
    let allowed_at = next.saturating_sub(tolerance);
    if now < allowed_at {
        Err(allowed_at - now)
    } else {
        Ok(next)
    }
}

/// The emission interval (µs) of `rate` requests per second, and the tolerance of a burst
/// of one second's worth.
pub(crate) fn interval_and_tolerance(rate: f64) -> (u64, u64) {
    let interval = (1_000_000.0 / rate).max(1.0) as u64;
    // A burst of `rate` requests (at least one) at once: each takes an interval of the
    // tolerance.
    let tolerance = interval.saturating_mul((rate.ceil() as u64).max(1));
    (interval, tolerance)
}

/// A rate limit per key in this process alone: what an instance uses while the shared
/// limiter cannot reach Redis (at its share of each key's rate).
///
/// ```
/// use std::time::Duration;
/// let limiter = rpcwire::proxy::fleet::LocalLimiter::new();
/// let key = [7u8; 32];
/// assert!(limiter.check(&key, 2.0, 1).is_ok());
/// assert!(limiter.check(&key, 2.0, 1).is_ok());
/// let wait = limiter.check(&key, 2.0, 1).unwrap_err();
/// assert!(wait > Duration::ZERO && wait <= Duration::from_millis(500));
/// ```
#[derive(Debug)]
pub struct LocalLimiter {
    started: Instant,
    tats: Mutex<HashMap<[u8; 32], u64>>,
}

impl Default for LocalLimiter {
    fn default() -> LocalLimiter {
        LocalLimiter::new()
    }
}

impl LocalLimiter {
    /// A limiter with no key seen yet.
    ///
    /// ```
    /// let limiter = rpcwire::proxy::fleet::LocalLimiter::new();
    /// assert!(limiter.check(&[0; 32], 1.0, 1).is_ok());
    /// ```
    pub fn new() -> LocalLimiter {
        LocalLimiter {
            started: Instant::now(),
            tats: Mutex::new(HashMap::new()),
        }
    }

    /// Lets a request of `cost` of the key `digest` through at `rate` per second (a burst
    /// of one second's worth first), or says how long until it would be let through.
    ///
    /// ```
    /// let limiter = rpcwire::proxy::fleet::LocalLimiter::new();
    /// assert!(limiter.check(&[1; 32], 10.0, 10).is_ok()); // the burst, at once
    /// assert!(limiter.check(&[1; 32], 10.0, 1).is_err());
    /// ```
    pub fn check(&self, digest: &[u8; 32], rate: f64, cost: u64) -> Result<(), Duration> {
        let now = self.started.elapsed().as_micros() as u64;
        let (interval, tolerance) = interval_and_tolerance(rate);
        let mut tats = lock_unpoisoned(&self.tats);
        if tats.len() > 4096 {
            // Keys whose burst is whole again need no state.
            tats.retain(|_, tat| *tat > now);
        }
        match gcra(tats.get(digest).copied(), now, interval, tolerance, cost) {
            Ok(next) => {
                tats.insert(*digest, next);
                Ok(())
            }
            Err(wait) => Err(Duration::from_micros(wait)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_of_one_second_then_the_rate() {
        let (interval, tolerance) = interval_and_tolerance(10.0);
        assert_eq!((interval, tolerance), (100_000, 1_000_000));
        let mut tat = None;
        let mut allowed = 0;
        // Every millisecond for 3 s: the burst of 10, then 10 a second.
        for now in (0..3_000_000u64).step_by(1_000) {
            if let Ok(next) = gcra(tat, now, interval, tolerance, 1) {
                tat = Some(next);
                allowed += 1;
            }
        }
        assert!((39..=40).contains(&allowed), "{allowed}");
        assert_eq!(gcra(Some(1_000), 0, 100, 0, 1), Err(1_100));
        assert_eq!(interval_and_tolerance(0.5), (2_000_000, 2_000_000));
    }

    #[test]
    fn old_state_is_dropped_when_there_is_much_of_it() {
        let limiter = LocalLimiter::new();
        for n in 0..5000u32 {
            let mut key = [0u8; 32];
            key[..4].copy_from_slice(&n.to_le_bytes());
            assert!(limiter.check(&key, 1e6, 1).is_ok());
        }
        std::thread::sleep(Duration::from_millis(2));
        assert!(limiter.check(&[9; 32], 1e6, 1).is_ok());
        assert!(lock_unpoisoned(&limiter.tats).len() < 5000);
    }
}
