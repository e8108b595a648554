//! The report's configuration: quick or full runs, batch and histogram lengths.

use std::time::Duration;

#[derive(Clone, Copy, Debug)]
pub(crate) struct Config {
    pub(crate) quick: bool,
    /// Untimed running before the batches; also calibrates the batch size.
    pub(crate) warmup: Duration,
    /// The length one timed batch aims for.
    pub(crate) batch: Duration,
    /// Timed batches per workload × parser; the median is reported.
    pub(crate) batches: usize,
    /// How long each latency histogram records.
    pub(crate) histogram: Duration,
    /// How long each multi-thread throughput run lasts.
    pub(crate) threads: Duration,
}

impl Config {
    pub(crate) fn new(quick: bool) -> Config {
        if quick {
            Config {
                quick,
                warmup: Duration::from_millis(100),
                batch: Duration::from_millis(20),
                batches: 7,
                histogram: Duration::from_millis(300),
                threads: Duration::from_millis(400),
            }
        } else {
            Config {
                quick,
                warmup: Duration::from_millis(400),
                batch: Duration::from_millis(100),
                batches: 31,
                histogram: Duration::from_millis(2000),
                threads: Duration::from_millis(2500),
            }
        }
    }
}

/// A sample covers one message unless the faster of the two parsers takes less than this
/// per message; then a sample covers N messages and records elapsed / N.
pub(crate) const LATENCY_SINGLE_MIN_NS: f64 = 100.0;
/// The duration a multi-message latency sample aims for.
pub(crate) const LATENCY_SAMPLE_NS: f64 = 200.0;
