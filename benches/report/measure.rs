//! Measurements: timed batches, latency histograms, multi-thread throughput, allocations.

use crate::common::alloc::allocations;
use crate::common::peers::{self, Peer, Visit, RPCWIRE};
use crate::common::workloads::Workload;
use hdrhistogram::Histogram;
use serde::Serialize;
use std::hint::black_box;
use std::sync::Barrier;
use std::time::{Duration, Instant};

use crate::{config::*, render_json::*};

#[derive(Clone, Debug, Serialize)]
pub(crate) struct Latency {
    /// Messages per sample (1 = each message timed on its own).
    pub(crate) messages_per_sample: u64,
    pub(crate) samples: u64,
    pub(crate) p50_ns: u64,
    pub(crate) p99_ns: u64,
    pub(crate) p999_ns: u64,
    pub(crate) max_ns: u64,
}

#[derive(Clone, Debug)]
pub(crate) struct Measured {
    pub(crate) parser: &'static str,
    pub(crate) about: &'static str,
    /// ns per message of each timed batch.
    pub(crate) batch_ns: Vec<f64>,
    pub(crate) ns_per_msg: f64,
    pub(crate) mb_per_s: f64,
    pub(crate) msg_per_s: f64,
    pub(crate) allocs_per_msg: f64,
    pub(crate) latency: Option<Latency>,
}

pub(crate) struct WorkloadResult {
    pub(crate) name: &'static str,
    pub(crate) about: String,
    pub(crate) bytes: usize,
    pub(crate) messages: usize,
    pub(crate) total_bytes: usize,
    pub(crate) results: Vec<Measured>,
    pub(crate) fastest_peer: &'static str,
    /// Messages on which rpcwire `parse` allocated: (index, allocations, first bytes).
    pub(crate) rpcwire_allocating: Vec<(usize, u64, String)>,
}

impl WorkloadResult {
    pub(crate) fn get(&self, parser: &str) -> &Measured {
        self.results
            .iter()
            .find(|m| m.parser == parser)
            .unwrap_or_else(|| panic!("no result for {parser}"))
    }

    pub(crate) fn rpcwire(&self) -> &Measured {
        self.get(RPCWIRE)
    }

    pub(crate) fn fastest(&self) -> &Measured {
        self.get(self.fastest_peer)
    }

    /// How many times faster rpcwire `parse` is than the fastest peer.
    pub(crate) fn speedup(&self) -> f64 {
        self.fastest().ns_per_msg / self.rpcwire().ns_per_msg
    }
}

/// Runs `passes` passes over the workload; the digests' sum, so nothing is optimized away.
#[inline(never)]
pub(crate) fn run_passes<P: Peer>(peer: &mut P, workload: &Workload, passes: u64) -> usize {
    let n = workload.messages.len();
    let mut sum = 0usize;
    for _ in 0..passes {
        for i in 0..n {
            sum = sum.wrapping_add(peer.parse(black_box(workload), black_box(i)));
        }
    }
    black_box(sum)
}

/// The loop callgrind counts (`--toggle-collect=*instructions_loop*`): `n` parses, cycling
/// through the workload's messages from the first (so that with `n = 1 + k × messages`, the
/// runs of `n` and of 1 differ by exactly `k` parses of every message).
#[inline(never)]
pub(crate) fn instructions_loop<P: Peer>(peer: &mut P, workload: &Workload, n: u64) -> usize {
    let messages = workload.messages.len();
    let mut sum = 0usize;
    let mut i = 0;
    for _ in 0..n {
        sum = sum.wrapping_add(peer.parse(black_box(workload), black_box(i)));
        i += 1;
        if i == messages {
            i = 0;
        }
    }
    black_box(sum)
}

pub(crate) fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mid = sorted.len() / 2;
    if sorted.len() % 2 == 1 {
        sorted[mid]
    } else {
        (sorted[mid - 1] + sorted[mid]) / 2.0
    }
}

/// One parser's state behind a closure that runs whole passes over the workload, so that
/// the batches of all parsers can be interleaved (dynamic dispatch once per batch only).
pub(crate) struct Runner<'w> {
    pub(crate) parser: &'static str,
    pub(crate) about: &'static str,
    pub(crate) run: Box<dyn FnMut(u64) + 'w>,
}

pub(crate) struct CollectRunners<'w> {
    pub(crate) workload: &'w Workload,
    pub(crate) out: Vec<Runner<'w>>,
}

impl<'w> Visit for CollectRunners<'w> {
    fn visit<P: Peer>(&mut self, _: &Workload) {
        let workload = self.workload;
        let mut peer = P::new(workload);
        self.out.push(Runner {
            parser: P::NAME,
            about: P::ABOUT,
            run: Box::new(move |passes| {
                run_passes(&mut peer, workload, passes);
            }),
        });
    }
}

/// Warms up and calibrates every parser, then times `config.batches` rounds in which each
/// parser runs one batch (the order rotating each round), so that a burst of noise from the
/// machine lands on all parsers alike. Allocations are counted around each batch.
pub(crate) fn measure_throughput(config: &Config, workload: &Workload) -> Vec<Measured> {
    let mut collect = CollectRunners {
        workload,
        out: Vec::new(),
    };
    peers::for_each(&mut collect, workload);
    time_runners(config, workload, collect.out)
}

/// Times `runners` on `workload` as [`measure_throughput`] describes.
pub(crate) fn time_runners(
    config: &Config,
    workload: &Workload,
    mut runners: Vec<Runner<'_>>,
) -> Vec<Measured> {
    let n = workload.messages.len() as u64;
    let per_batch: Vec<u64> = runners
        .iter_mut()
        .map(|runner| {
            let start = Instant::now();
            let mut passes = 0u64;
            while start.elapsed() < config.warmup {
                (runner.run)(1);
                passes += 1;
            }
            let pass_ns = start.elapsed().as_nanos() as f64 / passes as f64;
            ((config.batch.as_nanos() as f64 / pass_ns) as u64).max(1)
        })
        .collect();
    let mut batch_ns: Vec<Vec<f64>> = runners
        .iter()
        .map(|_| Vec::with_capacity(config.batches))
        .collect();
    let mut allocated = vec![0u64; runners.len()];
    for round in 0..config.batches {
        for k in 0..runners.len() {
            let i = (k + round) % runners.len();
            let before = allocations();
            let t = Instant::now();
            (runners[i].run)(per_batch[i]);
            let elapsed = t.elapsed();
            allocated[i] += allocations() - before;
            batch_ns[i].push(elapsed.as_nanos() as f64 / (per_batch[i] * n) as f64);
        }
    }
    let bytes_per_msg = workload.total_bytes() as f64 / n as f64;
    runners
        .iter()
        .zip(batch_ns)
        .zip(per_batch.iter().zip(&allocated))
        .map(|((runner, batch_ns), (per_batch, allocated))| {
            let ns_per_msg = median(&batch_ns);
            Measured {
                parser: runner.parser,
                about: runner.about,
                batch_ns,
                ns_per_msg,
                mb_per_s: bytes_per_msg / ns_per_msg * 1e3,
                msg_per_s: 1e9 / ns_per_msg,
                allocs_per_msg: *allocated as f64 / (config.batches as u64 * per_batch * n) as f64,
                latency: None,
            }
        })
        .collect()
}

/// The messages of a workload on which a parser allocates, after a warm-up pass:
/// (index, allocations, the message's first bytes).
pub(crate) struct Allocating {
    pub(crate) out: Vec<(usize, u64, String)>,
}

impl Visit for Allocating {
    fn visit<P: Peer>(&mut self, workload: &Workload) {
        let mut peer = P::new(workload);
        run_passes(&mut peer, workload, 2);
        for i in 0..workload.messages.len() {
            let before = allocations();
            black_box(peer.parse(workload, i));
            let allocated = allocations() - before;
            if allocated > 0 {
                let bytes = &workload.messages[i].bytes;
                let prefix = String::from_utf8_lossy(&bytes[..bytes.len().min(120)]).into_owned();
                self.out.push((i, allocated, prefix));
            }
        }
    }
}

/// Records a latency histogram for one parser.
pub(crate) struct LatencyRun<'c> {
    pub(crate) config: &'c Config,
    pub(crate) per_sample: u64,
    pub(crate) timer_ns: u64,
    pub(crate) out: Option<Latency>,
}

impl Visit for LatencyRun<'_> {
    fn visit<P: Peer>(&mut self, workload: &Workload) {
        let mut peer = P::new(workload);
        let n = workload.messages.len();
        let warm = Instant::now();
        while warm.elapsed() < self.config.warmup / 4 {
            run_passes(&mut peer, workload, 1);
        }
        let mut histogram = Histogram::<u64>::new_with_bounds(1, 100_000_000_000, 3).expect("valid bounds");
        let k = self.per_sample;
        let mut i = 0;
        let start = Instant::now();
        loop {
            let t0 = Instant::now();
            let mut sum = 0usize;
            for _ in 0..k {
                sum = sum.wrapping_add(peer.parse(black_box(workload), black_box(i)));
                i += 1;
                if i == n {
                    i = 0;
                }
            }
            let t1 = Instant::now();
            black_box(sum);
            let ns = ((t1 - t0).as_nanos() as u64).saturating_sub(self.timer_ns) / k;
            histogram.saturating_record(ns.max(1));
            if t1 - start > self.config.histogram {
                break;
            }
        }
        self.out = Some(Latency {
            messages_per_sample: k,
            samples: histogram.len(),
            p50_ns: histogram.value_at_quantile(0.50),
            p99_ns: histogram.value_at_quantile(0.99),
            p999_ns: histogram.value_at_quantile(0.999),
            max_ns: histogram.max(),
        });
    }
}

/// The latency tail the machine itself adds: a fixed loop of plain arithmetic, sized like a
/// given message's parse, timed exactly as the parsers are.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct JitterFloor {
    /// What the loop is sized like.
    pub(crate) sized_like: String,
    pub(crate) work_ns: f64,
    pub(crate) samples: u64,
    pub(crate) p50_ns: u64,
    pub(crate) p99_ns: u64,
    pub(crate) p999_ns: u64,
    pub(crate) max_ns: u64,
}

#[inline(never)]
pub(crate) fn spin(iterations: u64) -> u64 {
    let mut x = 0u64;
    for i in 0..iterations {
        x = black_box(x.wrapping_add(i));
    }
    x
}

pub(crate) fn jitter_floor(config: &Config, sized_like: String, work_ns: f64, timer_ns: u64) -> JitterFloor {
    let probe = 2_000_000;
    let ns_per_iteration = (0..5)
        .map(|_| {
            let t = Instant::now();
            spin(black_box(probe));
            t.elapsed().as_nanos() as f64 / probe as f64
        })
        .fold(f64::INFINITY, f64::min);
    let iterations = ((work_ns / ns_per_iteration) as u64).max(1);
    let mut histogram = Histogram::<u64>::new_with_bounds(1, 100_000_000_000, 3).expect("valid bounds");
    let start = Instant::now();
    loop {
        let t0 = Instant::now();
        black_box(spin(black_box(iterations)));
        let t1 = Instant::now();
        histogram.saturating_record(((t1 - t0).as_nanos() as u64).saturating_sub(timer_ns).max(1));
        if t1 - start > config.histogram {
            break;
        }
    }
    JitterFloor {
        sized_like,
        work_ns: round(iterations as f64 * ns_per_iteration, 1),
        samples: histogram.len(),
        p50_ns: histogram.value_at_quantile(0.50),
        p99_ns: histogram.value_at_quantile(0.99),
        p999_ns: histogram.value_at_quantile(0.999),
        max_ns: histogram.max(),
    }
}

/// The median cost of `Instant::now()` twice in a row, subtracted from latency samples.
pub(crate) fn timer_overhead_ns() -> u64 {
    let mut samples: Vec<u64> = (0..200_001)
        .map(|_| {
            let t0 = Instant::now();
            let t1 = black_box(Instant::now());
            (t1 - t0).as_nanos() as u64
        })
        .collect();
    samples.sort_unstable();
    samples[samples.len() / 2]
}

#[derive(Clone, Debug, Serialize)]
pub(crate) struct ThreadRun {
    pub(crate) workload: &'static str,
    pub(crate) parser: String,
    pub(crate) threads: usize,
    pub(crate) msg_per_s: f64,
    /// msg/s per thread relative to the 1-thread run.
    pub(crate) scaling: f64,
    /// msg/s of each round (the median is reported).
    pub(crate) runs: Vec<f64>,
}

/// Messages per second with `threads` threads each parsing the workload with its own state.
pub(crate) struct Threads {
    pub(crate) duration: Duration,
    pub(crate) warmup: Duration,
    pub(crate) threads: usize,
    pub(crate) out: f64,
}

/// Multi-thread runs: this many rounds of `Config::threads / THREAD_ROUNDS` each.
pub(crate) const THREAD_ROUNDS: usize = 5;

impl Visit for Threads {
    fn visit<P: Peer>(&mut self, workload: &Workload) {
        let n = workload.messages.len() as u64;
        let barrier = Barrier::new(self.threads);
        let duration = self.duration;
        let warmup = self.warmup;
        let totals: Vec<(u64, Duration)> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..self.threads)
                .map(|_| {
                    s.spawn(|| {
                        let mut peer = P::new(workload);
                        let warm = Instant::now();
                        while warm.elapsed() < warmup {
                            run_passes(&mut peer, workload, 1);
                        }
                        barrier.wait();
                        let start = Instant::now();
                        let mut messages = 0u64;
                        while start.elapsed() < duration {
                            run_passes(&mut peer, workload, 256);
                            messages += 256 * n;
                        }
                        (messages, start.elapsed())
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().expect("thread")).collect()
        });
        self.out = totals
            .iter()
            .map(|(messages, elapsed)| *messages as f64 / elapsed.as_secs_f64())
            .sum();
    }
}
