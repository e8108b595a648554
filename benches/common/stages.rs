//! Pipeline stages after parsing (routing end to end, framed streams, correlation), each
//! beside a baseline doing the same work with the peers' tools, measured the same way as
//! the parsers: median ns per message over interleaved batches, allocations per message,
//! a per-message latency histogram, and msg/s on 1 and 2 threads.

use std::hint::black_box;
use std::sync::Barrier;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use serde::Serialize;

use super::alloc::allocations;

/// One implementation of a stage, with its reusable state (buffers, router), created once
/// per thread outside the timed loop.
pub trait Stage: 'static {
    /// The stage, e.g. `router W1 subtract`.
    const STAGE: &'static str;
    /// The implementation, e.g. `rpcwire Router::handle`.
    const NAME: &'static str;
    /// `true` for rpcwire, `false` for the baseline.
    const RPCWIRE: bool;
    fn new() -> Self;
    /// Messages handled by one [`pass`](Stage::pass).
    fn messages(&self) -> usize;
    /// Input bytes handled by one pass.
    fn bytes(&self) -> usize;
    /// Handles every message once; a digest so that nothing is optimized away.
    fn pass(&mut self) -> usize;
    /// Handles message `i` alone (for the latency histogram).
    fn one(&mut self, i: usize) -> usize;
}

/// How long each part of a stage's measurement runs.
#[derive(Clone, Copy, Debug)]
pub struct Timing {
    pub warmup: Duration,
    pub batch: Duration,
    pub batches: usize,
    pub histogram: Duration,
    pub threads: Duration,
    /// The median cost of two back-to-back `Instant::now()`, subtracted from each sample.
    pub timer_ns: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct StageResult {
    pub stage: &'static str,
    pub implementation: &'static str,
    pub rpcwire: bool,
    pub ns_per_msg: f64,
    pub msg_per_s: f64,
    pub mb_per_s: f64,
    pub allocs_per_msg: f64,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub p999_ns: u64,
    pub max_ns: u64,
    pub msg_per_s_1_thread: f64,
    pub msg_per_s_2_threads: f64,
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    if values.len() % 2 == 1 {
        values[mid]
    } else {
        (values[mid - 1] + values[mid]) / 2.0
    }
}

#[inline(never)]
fn passes<S: Stage>(stage: &mut S, n: u64) -> usize {
    let mut sum = 0usize;
    for _ in 0..n {
        sum = sum.wrapping_add(stage.pass());
    }
    black_box(sum)
}

/// msg/s with `threads` threads, each with its own state, for `duration`.
fn threaded<S: Stage>(timing: &Timing, threads: usize) -> f64 {
    let barrier = Barrier::new(threads);
    let rates: Vec<f64> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut stage = S::new();
                    let messages = stage.messages() as u64;
                    let warm = Instant::now();
                    while warm.elapsed() < timing.warmup / 4 {
                        passes(&mut stage, 1);
                    }
                    barrier.wait();
                    let start = Instant::now();
                    let mut done = 0u64;
                    while start.elapsed() < timing.threads {
                        passes(&mut stage, 16);
                        done += 16 * messages;
                    }
                    done as f64 / start.elapsed().as_secs_f64()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("stage thread"))
            .collect()
    });
    rates.iter().sum()
}

/// Measures one implementation of a stage.
pub fn measure<S: Stage>(timing: &Timing) -> StageResult {
    let mut stage = S::new();
    let n = stage.messages() as u64;
    let start = Instant::now();
    let mut warm = 0u64;
    while start.elapsed() < timing.warmup {
        passes(&mut stage, 1);
        warm += 1;
    }
    let pass_ns = start.elapsed().as_nanos() as f64 / warm as f64;
    let per_batch = ((timing.batch.as_nanos() as f64 / pass_ns) as u64).max(1);
    let mut batch_ns = Vec::with_capacity(timing.batches);
    let mut allocated = 0u64;
    for _ in 0..timing.batches {
        let before = allocations();
        let t = Instant::now();
        passes(&mut stage, per_batch);
        let elapsed = t.elapsed();
        allocated += allocations() - before;
        batch_ns.push(elapsed.as_nanos() as f64 / (per_batch * n) as f64);
    }
    let ns_per_msg = median(&mut batch_ns);

    let mut histogram = Histogram::<u64>::new_with_bounds(1, 100_000_000_000, 3).expect("bounds");
    let start = Instant::now();
    let mut i = 0usize;
    loop {
        let t0 = Instant::now();
        let digest = stage.one(black_box(i));
        let t1 = Instant::now();
        black_box(digest);
        histogram.saturating_record(
            ((t1 - t0).as_nanos() as u64)
                .saturating_sub(timing.timer_ns)
                .max(1),
        );
        i = (i + 1) % n as usize;
        if t1 - start > timing.histogram {
            break;
        }
    }
    let bytes_per_msg = stage.bytes() as f64 / n as f64;
    StageResult {
        stage: S::STAGE,
        implementation: S::NAME,
        rpcwire: S::RPCWIRE,
        ns_per_msg,
        msg_per_s: 1e9 / ns_per_msg,
        mb_per_s: bytes_per_msg / ns_per_msg * 1e3,
        allocs_per_msg: allocated as f64 / (timing.batches as u64 * per_batch * n) as f64,
        p50_ns: histogram.value_at_quantile(0.50),
        p99_ns: histogram.value_at_quantile(0.99),
        p999_ns: histogram.value_at_quantile(0.999),
        max_ns: histogram.max(),
        msg_per_s_1_thread: threaded::<S>(timing, 1),
        msg_per_s_2_threads: threaded::<S>(timing, 2),
    }
}
