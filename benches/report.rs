//! The performance report of issue 3: `cargo bench --bench report --features tokio` (README's
//! "main job"; without the feature the peer round-trip section is skipped).
//!
//! For each workload (W1–W5, ETH) and parser (rpcwire, rpcwire-frame and the peers):
//! median ns per message over timed batches, MB/s, msg/s and heap allocations per message
//! (mimalloc wrapped in a counting allocator); for rpcwire and the fastest peer a latency
//! histogram (p50, p99, p99.9, max); multi-thread throughput on W1 (1 and 2 threads).
//! Prints a table and writes `perf-reports/latest.{md,json}`, `perf-reports/speedup.svg` and
//! `perf-reports/latency.svg`. Whether each target of the issue is met is computed from the
//! numbers of the same run (and from `perf-reports/instructions.json`, written by
//! `benches/instructions.sh`, for the instruction-count target).
//!
//! Options (after `--`):
//! - `--quick`: shorter batches and histograms (well under 2 minutes);
//! - `--only W1,W3`: just these workloads; prints, writes nothing;
//! - `--instructions WORKLOAD PARSER N`: parse message 0 of WORKLOAD N times inside
//!   `instructions_loop` and exit (for callgrind; see `benches/instructions.sh`).
//!
//! What "one message" is: W1, W2, W3, W5 one JSON-RPC message; W4 one batch of 100 requests;
//! ETH one line of the corpus (ns/msg = time for the stream / its number of messages).

mod common;

use std::fmt::Write as _;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::Barrier;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use serde::Serialize;

use common::alloc::allocations;
use common::instructions::{self as counts, Instructions};
use common::peer_stage::PeerRun;
use common::peers::{self, Peer, Visit, RPCWIRE};
use common::stages::{self, StageResult};
use common::stream_stage::StreamSpec as _;
use common::workloads::{self, Workload};

#[global_allocator]
static GLOBAL: common::alloc::Counting = common::alloc::Counting;

// ---------------------------------------------------------------------------------------
// Configuration

#[derive(Clone, Copy, Debug)]
struct Config {
    quick: bool,
    /// Untimed running before the batches; also calibrates the batch size.
    warmup: Duration,
    /// The length one timed batch aims for.
    batch: Duration,
    /// Timed batches per workload × parser; the median is reported.
    batches: usize,
    /// How long each latency histogram records.
    histogram: Duration,
    /// How long each multi-thread throughput run lasts.
    threads: Duration,
}

impl Config {
    fn new(quick: bool) -> Config {
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
const LATENCY_SINGLE_MIN_NS: f64 = 100.0;
/// The duration a multi-message latency sample aims for.
const LATENCY_SAMPLE_NS: f64 = 200.0;

// ---------------------------------------------------------------------------------------
// Measurements

#[derive(Clone, Debug, Serialize)]
struct Latency {
    /// Messages per sample (1 = each message timed on its own).
    messages_per_sample: u64,
    samples: u64,
    p50_ns: u64,
    p99_ns: u64,
    p999_ns: u64,
    max_ns: u64,
}

#[derive(Clone, Debug)]
struct Measured {
    parser: &'static str,
    about: &'static str,
    /// ns per message of each timed batch.
    batch_ns: Vec<f64>,
    ns_per_msg: f64,
    mb_per_s: f64,
    msg_per_s: f64,
    allocs_per_msg: f64,
    latency: Option<Latency>,
}

struct WorkloadResult {
    name: &'static str,
    about: String,
    bytes: usize,
    messages: usize,
    total_bytes: usize,
    results: Vec<Measured>,
    fastest_peer: &'static str,
    /// Messages on which rpcwire `parse` allocated: (index, allocations, first bytes).
    rpcwire_allocating: Vec<(usize, u64, String)>,
}

impl WorkloadResult {
    fn get(&self, parser: &str) -> &Measured {
        self.results
            .iter()
            .find(|m| m.parser == parser)
            .unwrap_or_else(|| panic!("no result for {parser}"))
    }

    fn rpcwire(&self) -> &Measured {
        self.get(RPCWIRE)
    }

    fn fastest(&self) -> &Measured {
        self.get(self.fastest_peer)
    }

    /// How many times faster rpcwire `parse` is than the fastest peer.
    fn speedup(&self) -> f64 {
        self.fastest().ns_per_msg / self.rpcwire().ns_per_msg
    }
}

/// Runs `passes` passes over the workload; the digests' sum, so nothing is optimized away.
#[inline(never)]
fn run_passes<P: Peer>(peer: &mut P, workload: &Workload, passes: u64) -> usize {
    let n = workload.messages.len();
    let mut sum = 0usize;
    for _ in 0..passes {
        for i in 0..n {
            sum = sum.wrapping_add(peer.parse(black_box(workload), black_box(i)));
        }
    }
    black_box(sum)
}

/// The loop callgrind counts (`--toggle-collect=*instructions_loop*`).
#[inline(never)]
fn instructions_loop<P: Peer>(peer: &mut P, workload: &Workload, n: u64) -> usize {
    let mut sum = 0usize;
    for _ in 0..n {
        sum = sum.wrapping_add(peer.parse(black_box(workload), black_box(0)));
    }
    black_box(sum)
}

fn median(values: &[f64]) -> f64 {
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
struct Runner<'w> {
    parser: &'static str,
    about: &'static str,
    run: Box<dyn FnMut(u64) + 'w>,
}

struct CollectRunners<'w> {
    workload: &'w Workload,
    out: Vec<Runner<'w>>,
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
fn measure_throughput(config: &Config, workload: &Workload) -> Vec<Measured> {
    let mut collect = CollectRunners {
        workload,
        out: Vec::new(),
    };
    peers::for_each(&mut collect, workload);
    let mut runners = collect.out;
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
struct Allocating {
    out: Vec<(usize, u64, String)>,
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
struct LatencyRun<'c> {
    config: &'c Config,
    per_sample: u64,
    timer_ns: u64,
    out: Option<Latency>,
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
struct JitterFloor {
    /// What the loop is sized like.
    sized_like: String,
    work_ns: f64,
    samples: u64,
    p50_ns: u64,
    p99_ns: u64,
    p999_ns: u64,
    max_ns: u64,
}

#[inline(never)]
fn spin(iterations: u64) -> u64 {
    let mut x = 0u64;
    for i in 0..iterations {
        x = black_box(x.wrapping_add(i));
    }
    x
}

fn jitter_floor(config: &Config, sized_like: String, work_ns: f64, timer_ns: u64) -> JitterFloor {
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
fn timer_overhead_ns() -> u64 {
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
struct ThreadRun {
    workload: &'static str,
    parser: String,
    threads: usize,
    msg_per_s: f64,
    /// msg/s per thread relative to the 1-thread run.
    scaling: f64,
    /// msg/s of each round (the median is reported).
    runs: Vec<f64>,
}

/// Messages per second with `threads` threads each parsing the workload with its own state.
struct Threads {
    duration: Duration,
    warmup: Duration,
    threads: usize,
    out: f64,
}

/// Multi-thread runs: this many rounds of `Config::threads / THREAD_ROUNDS` each.
const THREAD_ROUNDS: usize = 5;

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

// ---------------------------------------------------------------------------------------
// Environment

fn machine() -> String {
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_owned())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_owned());
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    format!("{model}, {cores} cores")
}

fn command(program: &str, args: &[&str]) -> Option<String> {
    let out = std::process::Command::new(program).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

fn git_head() -> Option<String> {
    let dir = env!("CARGO_MANIFEST_DIR");
    let head = command("git", &["-C", dir, "rev-parse", "--short", "HEAD"])?;
    let dirty = command(
        "git",
        &["-C", dir, "status", "--porcelain", "--", "src", "Cargo.toml"],
    )
    .is_some_and(|s| !s.is_empty());
    Some(if dirty {
        format!("{head} + uncommitted changes")
    } else {
        head
    })
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

fn simd_note() -> String {
    #[cfg(target_arch = "x86_64")]
    let runtime = if std::arch::is_x86_feature_detected!("avx2") {
        "AVX2 available at run time"
    } else {
        "no AVX2 at run time"
    };
    #[cfg(not(target_arch = "x86_64"))]
    let runtime = "non-x86_64";
    let compiled = if cfg!(target_feature = "avx2") {
        "compiled with AVX2 enabled (all crates use it)"
    } else {
        "compiled for the baseline target (no -C target-cpu): rpcwire and simd-json pick AVX2 at run \
         time, sonic-rs uses its compile-time SSE2 kernels"
    };
    format!("{runtime}; {compiled}")
}

fn now_utc() -> String {
    command("date", &["-u", "+%Y-%m-%dT%H:%M:%SZ"]).unwrap_or_default()
}

fn reports_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("perf-reports")
}

// ---------------------------------------------------------------------------------------
// Targets

#[derive(Clone, Debug, Serialize)]
struct Target {
    target: String,
    measured: String,
    /// `None`: not measured in this run.
    met: Option<bool>,
}

fn targets(results: &[WorkloadResult], instructions: Option<&Instructions>) -> Vec<Target> {
    let mut out = Vec::new();
    for w in results {
        let speedup = w.speedup();
        out.push(Target {
            target: format!("{}: rpcwire ≥ 3× faster than the fastest peer", w.name),
            measured: format!(
                "{:.2}× ({} {} ns vs rpcwire {} ns)",
                speedup,
                w.fastest_peer,
                fmt_ns(w.fastest().ns_per_msg),
                fmt_ns(w.rpcwire().ns_per_msg)
            ),
            met: Some(speedup >= 3.0),
        });
    }
    let w1 = instructions.and_then(|i| i.get("W1", RPCWIRE));
    out.push(Target {
        target: "W1: ≤ 600 instructions per message (callgrind)".to_owned(),
        measured: match (w1, instructions) {
            (Some(n), Some(i)) => format!(
                "{n:.0} instructions (instructions.json of {}, git {})",
                i.generated_at, i.git_head
            ),
            _ => "not measured: run benches/instructions.sh".to_owned(),
        },
        met: w1.map(|n| n <= 600.0),
    });
    match results.iter().find(|w| w.name == "W2") {
        Some(w2) => {
            let latency = w2.rpcwire().latency.as_ref().expect("rpcwire has a histogram");
            out.push(Target {
                target: "W2: rpcwire p99.9 < 1 µs".to_owned(),
                measured: format!(
                    "p99.9 {} ns ({} messages per sample)",
                    latency.p999_ns, latency.messages_per_sample
                ),
                met: Some(latency.p999_ns < 1000),
            });
        }
        None => out.push(Target {
            target: "W2: rpcwire p99.9 < 1 µs".to_owned(),
            measured: "W2 not measured".to_owned(),
            met: None,
        }),
    }
    let allocating: Vec<String> = results
        .iter()
        .filter(|w| w.name != "ETH")
        .filter(|w| w.rpcwire().allocs_per_msg > 0.0)
        .map(|w| format!("{} {:.3}", w.name, w.rpcwire().allocs_per_msg))
        .collect();
    let measured: Vec<&str> = results
        .iter()
        .filter(|w| w.name != "ETH")
        .map(|w| w.name)
        .collect();
    out.push(Target {
        target: "W1–W5: rpcwire 0 heap allocations per message".to_owned(),
        measured: if allocating.is_empty() {
            format!("0 on {}", measured.join(", "))
        } else {
            format!("allocations/msg: {}", allocating.join(", "))
        },
        met: Some(allocating.is_empty() && measured.len() == 5),
    });
    out
}

// ---------------------------------------------------------------------------------------
// Pipeline stages (benches/common/stages.rs): router end to end, …

fn measure_stages(config: &Config, timer_ns: u64) -> Vec<StageResult> {
    use common::router_stage::{self, JsonrpseeServer, RpcwireRouter};
    let timing = stages::Timing {
        warmup: config.warmup,
        batch: config.batch,
        batches: config.batches,
        histogram: config.histogram,
        threads: config.threads / THREAD_ROUNDS as u32,
        timer_ns,
    };
    router_stage::verify();
    println!(
        "{}: verified both implementations answer alike; measuring…",
        router_stage::STAGE
    );
    let mut out = vec![
        stages::measure::<RpcwireRouter>(&timing),
        stages::measure::<JsonrpseeServer>(&timing),
    ];
    use common::stream_stage::{self as streams, BaselineStream, RpcwireStream};
    streams::verify();
    println!("framed streams: verified rpcwire and the baseline answer alike; measuring…");
    out.push(stages::measure::<RpcwireStream<streams::W1Ndjson>>(&timing));
    out.push(stages::measure::<BaselineStream<streams::W1Ndjson>>(&timing));
    out.push(stages::measure::<RpcwireStream<streams::W1ContentLength>>(
        &timing,
    ));
    out.push(stages::measure::<BaselineStream<streams::W1ContentLength>>(
        &timing,
    ));
    if workloads::eth().is_some() {
        out.push(stages::measure::<RpcwireStream<streams::EthNdjson>>(&timing));
        out.push(stages::measure::<RpcwireStream<streams::EthContentLength>>(
            &timing,
        ));
    }
    out
}

/// Correlation table: start + complete + take, ns per call on one shared table (median of
/// rounds), with 1 and 2 threads.
#[derive(Clone, Debug, Serialize)]
struct CorrelationRun {
    threads: usize,
    ns_per_op: f64,
    ops_per_s: f64,
    rounds: Vec<f64>,
}

fn measure_correlation(config: &Config) -> Vec<CorrelationRun> {
    let ops = if config.quick { 200_000 } else { 1_000_000 };
    common::correlate::insert_complete_ns_per_op(1, ops / 10); // warm-up
    let mut runs: Vec<CorrelationRun> = [1, 2]
        .into_iter()
        .map(|threads| CorrelationRun {
            threads,
            ns_per_op: 0.0,
            ops_per_s: 0.0,
            rounds: Vec::new(),
        })
        .collect();
    for _ in 0..THREAD_ROUNDS {
        for run in runs.iter_mut() {
            let ns = common::correlate::insert_complete_ns_per_op(run.threads, ops / run.threads);
            run.rounds.push(round(ns, 1));
        }
    }
    for run in runs.iter_mut() {
        run.ns_per_op = round(median(&run.rounds), 1);
        run.ops_per_s = round(1e9 / run.ns_per_op, 0);
        println!(
            "correlation table, {} thread(s): {} ns per start+complete+take ({} calls/s)",
            run.threads,
            fmt_ns(run.ns_per_op),
            fmt_count(run.ops_per_s)
        );
    }
    runs
}

/// Peer round trips over an in-memory duplex (the `tokio` feature), or nothing without it.
#[cfg(feature = "tokio")]
fn measure_peer_round_trips(config: &Config) -> Vec<PeerRun> {
    use rpcwire::frame::Framing;
    let calls = if config.quick { 20_000 } else { 100_000 };
    common::peer_stage::round_trip(calls / 10, 64, Framing::ContentLength); // warm-up
    let configs = [
        (1, Framing::ContentLength),
        (64, Framing::ContentLength),
        (64, Framing::Ndjson),
    ];
    configs
        .iter()
        .map(|&(in_flight, framing)| {
            // Calls one at a time take longer each: fewer of them.
            let n = if in_flight == 1 { calls / 5 } else { calls };
            let mut rounds: Vec<PeerRun> = (0..THREAD_ROUNDS)
                .map(|_| common::peer_stage::round_trip(n, in_flight, framing))
                .collect();
            rounds.sort_by(|a, b| a.calls_per_s.total_cmp(&b.calls_per_s));
            let run = rounds.swap_remove(rounds.len() / 2);
            println!(
                "peer round trip, {} in flight, {}: {} calls/s, p50 {} p99 {} p99.9 {} ns",
                run.in_flight,
                run.framing,
                fmt_count(run.calls_per_s),
                run.p50_ns,
                run.p99_ns,
                run.p999_ns
            );
            run
        })
        .collect()
}

#[cfg(not(feature = "tokio"))]
fn measure_peer_round_trips(_config: &Config) -> Vec<PeerRun> {
    println!("peer round trip: skipped (it needs `--features tokio`)");
    Vec::new()
}

const PEER_DUPLEX_KIB: usize = common::peer_stage::DUPLEX_BYTES / 1024;

fn peer_table(runs: &[PeerRun]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "| framing | calls in flight | calls | calls/s | p50 | p99 | p99.9 | max |"
    );
    let _ = writeln!(s, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for r in runs {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            r.framing,
            r.in_flight,
            fmt_count(r.calls as f64),
            fmt_count(r.calls_per_s),
            fmt_ns(r.p50_ns as f64),
            fmt_ns(r.p99_ns as f64),
            fmt_ns(r.p999_ns as f64),
            fmt_ns(r.max_ns as f64)
        );
    }
    s
}

fn correlation_table(runs: &[CorrelationRun]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "| threads | ns per call (start + complete + take) | calls/s | rounds (ns) |"
    );
    let _ = writeln!(s, "| ---: | ---: | ---: | --- |");
    for r in runs {
        let rounds: Vec<String> = r.rounds.iter().map(|x| fmt_ns(*x)).collect();
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} |",
            r.threads,
            fmt_ns(r.ns_per_op),
            fmt_count(r.ops_per_s),
            rounds.join(", ")
        );
    }
    s
}

/// The rpcwire and baseline results of `stage`.
fn stage_pair<'s>(results: &'s [StageResult], stage: &str) -> Option<(&'s StageResult, &'s StageResult)> {
    let ours = results.iter().find(|r| r.stage == stage && r.rpcwire)?;
    let base = results.iter().find(|r| r.stage == stage && !r.rpcwire)?;
    Some((ours, base))
}

fn stage_targets(results: &[StageResult]) -> Vec<Target> {
    let mut out = Vec::new();
    if let Some((ours, base)) = stage_pair(results, common::router_stage::STAGE) {
        out.push(Target {
            target: "router W1 subtract: ≥ 2 M msg/s per core (issue 4)".to_owned(),
            measured: format!(
                "{} msg/s on 1 thread, {} on 2 ({} ns/msg median)",
                fmt_count(ours.msg_per_s_1_thread),
                fmt_count(ours.msg_per_s_2_threads),
                fmt_ns(ours.ns_per_msg)
            ),
            met: Some(ours.msg_per_s_1_thread >= 2e6),
        });
        out.push(Target {
            target: "router W1 subtract: 0 allocations per message (issue 4)".to_owned(),
            measured: format!("{} allocs/msg", fmt_allocs(ours.allocs_per_msg)),
            met: Some(ours.allocs_per_msg == 0.0),
        });
        let speedup = base.ns_per_msg / ours.ns_per_msg;
        out.push(Target {
            target: format!(
                "router W1 subtract: ≥ 3× faster than {} (issue 4)",
                base.implementation
            ),
            measured: format!(
                "{speedup:.2}× ({} ns vs {} ns)",
                fmt_ns(base.ns_per_msg),
                fmt_ns(ours.ns_per_msg)
            ),
            met: Some(speedup >= 3.0),
        });
    }
    if let Some((ours, base)) = stage_pair(results, common::stream_stage::W1Ndjson::STAGE) {
        out.push(Target {
            target: "W1 NDJSON stream end to end: ≥ 2 M msg/s per core (issue 5)".to_owned(),
            measured: format!(
                "{} msg/s on 1 thread, {} on 2; {:.2}× {}",
                fmt_count(ours.msg_per_s_1_thread),
                fmt_count(ours.msg_per_s_2_threads),
                base.ns_per_msg / ours.ns_per_msg,
                base.implementation
            ),
            met: Some(ours.msg_per_s_1_thread >= 2e6),
        });
    }
    out
}

/// The stages as a markdown table.
fn stages_table(results: &[StageResult]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "| stage | implementation | ns/msg | msg/s 1 thread | msg/s 2 threads | MB/s | allocs/msg | p50 ns | p99 ns | p99.9 ns | rpcwire speed-up |"
    );
    let _ = writeln!(
        s,
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    );
    for r in results {
        let speedup = stage_pair(results, r.stage).map_or(String::new(), |(ours, base)| {
            if r.rpcwire {
                format!("**{:.2}×**", base.ns_per_msg / ours.ns_per_msg)
            } else {
                "1×".to_owned()
            }
        });
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {:.0} | {} | {} | {} | {} | {speedup} |",
            r.stage,
            r.implementation,
            fmt_ns(r.ns_per_msg),
            fmt_count(r.msg_per_s_1_thread),
            fmt_count(r.msg_per_s_2_threads),
            r.mb_per_s,
            fmt_allocs(r.allocs_per_msg),
            r.p50_ns,
            r.p99_ns,
            r.p999_ns
        );
    }
    s
}

fn print_stages(results: &[StageResult]) {
    if !results.is_empty() {
        println!("\nPipeline stages\n{}", stages_table(results));
    }
}

// ---------------------------------------------------------------------------------------
// Output: table, markdown, JSON, SVG

fn fmt_ns(ns: f64) -> String {
    if ns >= 100.0 {
        format!("{ns:.0}")
    } else {
        format!("{ns:.1}")
    }
}

fn fmt_count(x: f64) -> String {
    if x >= 1e6 {
        format!("{:.2} M", x / 1e6)
    } else if x >= 1e3 {
        format!("{:.1} k", x / 1e3)
    } else {
        format!("{x:.0}")
    }
}

fn fmt_allocs(x: f64) -> String {
    if x == 0.0 {
        "0".to_owned()
    } else if x >= 10.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.2}")
    }
}

fn yes_no(met: Option<bool>) -> &'static str {
    match met {
        Some(true) => "**met**",
        Some(false) => "**not met**",
        None => "not measured",
    }
}

fn parser_names(results: &[WorkloadResult]) -> Vec<&'static str> {
    results
        .first()
        .map(|w| w.results.iter().map(|m| m.parser).collect())
        .unwrap_or_default()
}

/// The ns/msg matrix: workloads × parsers.
/// Replaces the text between the perf-table markers of README.md with `section`.
fn update_readme(section: &str) {
    const START: &str = "<!-- perf-table:start -->";
    const END: &str = "<!-- perf-table:end -->";
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md");
    let Ok(readme) = std::fs::read_to_string(&path) else {
        println!("README.md not found; performance table not updated");
        return;
    };
    let (Some(start), Some(end)) = (readme.find(START), readme.find(END)) else {
        println!("README.md has no perf-table markers; performance table not updated");
        return;
    };
    let updated = format!("{}{START}\n{section}{}", &readme[..start], &readme[end..]);
    std::fs::write(&path, updated).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    println!("updated {}", path.display());
}

fn matrix(results: &[WorkloadResult], markdown: bool) -> String {
    let parsers = parser_names(results);
    let mut s = String::new();
    if markdown {
        let _ = write!(s, "| parser |");
        for w in results {
            let _ = write!(s, " {} |", w.name);
        }
        let _ = write!(s, "\n| --- |");
        for _ in results {
            let _ = write!(s, " ---: |");
        }
        s.push('\n');
        for p in &parsers {
            let _ = write!(s, "| {p} |");
            for w in results {
                let m = w.get(p);
                let mark = if *p == w.fastest_peer { " ◆" } else { "" };
                let _ = write!(s, " {}{mark} |", fmt_ns(m.ns_per_msg));
            }
            s.push('\n');
        }
    } else {
        let _ = write!(s, "{:<20}", "ns/msg (median)");
        for w in results {
            let _ = write!(s, "{:>12}", w.name);
        }
        s.push('\n');
        for p in &parsers {
            let _ = write!(s, "{p:<20}");
            for w in results {
                let m = w.get(p);
                let mark = if *p == w.fastest_peer { "*" } else { " " };
                let _ = write!(s, "{:>11}{mark}", fmt_ns(m.ns_per_msg));
            }
            s.push('\n');
        }
        let _ = write!(s, "{:<20}", "rpcwire speed-up");
        for w in results {
            let _ = write!(s, "{:>11.2}x", w.speedup());
        }
        s.push('\n');
    }
    s
}

fn print_table(results: &[WorkloadResult], target_list: &[Target], threads: &[ThreadRun]) {
    println!();
    for w in results {
        println!("{} — {}", w.name, w.about);
        println!(
            "  {:<20} {:>10} {:>10} {:>10} {:>10} {:>8} {:>8} {:>8} {:>9}",
            "parser", "ns/msg", "MB/s", "msg/s", "allocs", "p50", "p99", "p99.9", "max"
        );
        for m in &w.results {
            let (p50, p99, p999, max) = m.latency.as_ref().map_or_else(
                || ("-".into(), "-".into(), "-".into(), "-".into()),
                |l| {
                    (
                        l.p50_ns.to_string(),
                        l.p99_ns.to_string(),
                        l.p999_ns.to_string(),
                        l.max_ns.to_string(),
                    )
                },
            );
            println!(
                "  {:<20} {:>10} {:>10.1} {:>10} {:>10} {:>8} {:>8} {:>8} {:>9}{}",
                m.parser,
                fmt_ns(m.ns_per_msg),
                m.mb_per_s,
                fmt_count(m.msg_per_s),
                fmt_allocs(m.allocs_per_msg),
                p50,
                p99,
                p999,
                max,
                if m.parser == w.fastest_peer {
                    "  ← fastest peer"
                } else {
                    ""
                }
            );
        }
        println!();
    }
    print!("{}", matrix(results, false));
    println!();
    for t in threads {
        println!(
            "{} {:<20} {} thread(s): {:>8} msg/s (scaling per thread {:.2})",
            t.workload,
            t.parser,
            t.threads,
            fmt_count(t.msg_per_s),
            t.scaling
        );
    }
    println!();
    for t in target_list {
        println!(
            "[{}] {} — {}",
            match t.met {
                Some(true) => "MET",
                Some(false) => "NOT MET",
                None => "?",
            },
            t.target,
            t.measured
        );
    }
}

// ----- SVG

const PALETTE: [&str; 8] = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf",
];

fn svg_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// Bars of "rpcwire is N× faster than this peer" per workload, on a log2 axis around 1×.
fn speedup_svg(results: &[WorkloadResult]) -> String {
    let peers: Vec<&str> = parser_names(results)
        .into_iter()
        .filter(|p| !peers::is_rpcwire(p))
        .collect();
    let values: Vec<f64> = results
        .iter()
        .flat_map(|w| peers.iter().map(|p| w.get(p).ns_per_msg / w.rpcwire().ns_per_msg))
        .collect();
    let lo = values.iter().copied().fold(0.5f64, f64::min).log2().floor();
    let hi = values.iter().copied().fold(4.0f64, f64::max).log2().ceil();
    let (width, height) = (960.0, 440.0);
    let (left, right, top, bottom) = (60.0, 200.0, 40.0, 50.0);
    let plot_w = width - left - right;
    let plot_h = height - top - bottom;
    let y = |v: f64| top + plot_h * (hi - v.log2()) / (hi - lo);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="22" text-anchor="middle" font-size="15">rpcwire parse speed-up over each peer (peer ns/msg ÷ rpcwire ns/msg, log scale)</text>"#,
        left + plot_w / 2.0
    );
    let mut e = lo;
    while e <= hi {
        let v = 2f64.powf(e);
        let yy = y(v);
        let _ = writeln!(
            s,
            r##"<line x1="{left}" x2="{}" y1="{yy:.1}" y2="{yy:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" text-anchor="end">{}×</text>"##,
            left + plot_w,
            left - 6.0,
            yy + 4.0,
            if v < 1.0 {
                format!("{v}")
            } else {
                format!("{v:.0}")
            }
        );
        e += 1.0;
    }
    let groups = results.len() as f64;
    let group_w = plot_w / groups;
    let bar_w = (group_w * 0.8) / peers.len() as f64;
    for (gi, w) in results.iter().enumerate() {
        let gx = left + group_w * gi as f64 + group_w * 0.1;
        for (pi, p) in peers.iter().enumerate() {
            let v = w.get(p).ns_per_msg / w.rpcwire().ns_per_msg;
            let x = gx + bar_w * pi as f64;
            let (y0, y1) = (y(1.0), y(v));
            let _ = writeln!(
                s,
                r#"<rect x="{x:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{}"><title>{}: {} {:.2}×</title></rect>"#,
                y0.min(y1),
                bar_w * 0.9,
                (y0 - y1).abs().max(1.0),
                PALETTE[pi % PALETTE.len()],
                w.name,
                svg_escape(p),
                v
            );
            let _ = writeln!(
                s,
                r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="9">{v:.1}</text>"#,
                x + bar_w * 0.45,
                if v >= 1.0 { y1 - 3.0 } else { y1 + 10.0 }
            );
        }
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="13">{}</text>"#,
            left + group_w * (gi as f64 + 0.5),
            top + plot_h + 20.0,
            w.name
        );
    }
    let _ = writeln!(
        s,
        r##"<line x1="{left}" x2="{}" y1="{:.1}" y2="{:.1}" stroke="#333"/>"##,
        left + plot_w,
        y(1.0),
        y(1.0)
    );
    let _ = writeln!(
        s,
        r##"<line x1="{left}" x2="{}" y1="{:.1}" y2="{:.1}" stroke="#c00" stroke-dasharray="6 4"/><text x="{}" y="{:.1}" fill="#c00" font-size="11">target 3×</text>"##,
        left + plot_w,
        y(3.0),
        y(3.0),
        left + 4.0,
        y(3.0) - 4.0
    );
    for (pi, p) in peers.iter().enumerate() {
        let ly = top + 30.0 + 20.0 * pi as f64;
        let lx = left + plot_w + 20.0;
        let _ = writeln!(
            s,
            r#"<rect x="{lx}" y="{:.1}" width="12" height="12" fill="{}"/><text x="{}" y="{:.1}">{}</text>"#,
            ly - 10.0,
            PALETTE[pi % PALETTE.len()],
            lx + 18.0,
            ly,
            svg_escape(p)
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle" font-size="11">above 1×: rpcwire is faster; below: the peer is faster</text>"#,
        left + plot_w / 2.0,
        height - 8.0
    );
    s.push_str("</svg>\n");
    s
}

/// p50 / p99 / p99.9 of rpcwire and of the fastest peer per workload, log10 ns axis.
fn latency_svg(results: &[WorkloadResult]) -> String {
    let series: Vec<(&WorkloadResult, [&Measured; 2])> =
        results.iter().map(|w| (w, [w.rpcwire(), w.fastest()])).collect();
    let all: Vec<f64> = series
        .iter()
        .flat_map(|(_, ms)| ms.iter().filter_map(|m| m.latency.as_ref()))
        .flat_map(|l| [l.p50_ns, l.p99_ns, l.p999_ns])
        .map(|v| v.max(1) as f64)
        .collect();
    let lo = all
        .iter()
        .copied()
        .fold(1e9f64, f64::min)
        .log10()
        .floor()
        .min(2.0);
    let hi = all.iter().copied().fold(1.0f64, f64::max).log10().ceil().max(3.0);
    let (width, height) = (960.0, 440.0);
    let (left, right, top, bottom) = (70.0, 210.0, 40.0, 60.0);
    let plot_w = width - left - right;
    let plot_h = height - top - bottom;
    let y = |v: f64| top + plot_h * (hi - v.max(1.0).log10()) / (hi - lo);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="22" text-anchor="middle" font-size="15">Latency per message: rpcwire vs the fastest peer (ns, log scale)</text>"#,
        left + plot_w / 2.0
    );
    let mut e = lo;
    while e <= hi {
        let v = 10f64.powf(e);
        let label = if v >= 1e6 {
            format!("{:.0} ms", v / 1e6)
        } else if v >= 1e3 {
            format!("{:.0} µs", v / 1e3)
        } else {
            format!("{v:.0} ns")
        };
        let _ = writeln!(
            s,
            r##"<line x1="{left}" x2="{}" y1="{:.1}" y2="{:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" text-anchor="end">{label}</text>"##,
            left + plot_w,
            y(v),
            y(v),
            left - 6.0,
            y(v) + 4.0
        );
        e += 1.0;
    }
    let shades = [
        ["#9ecae1", "#4292c6", "#08519c"],
        ["#fdd0a2", "#fd8d3c", "#d94801"],
    ];
    let group_w = plot_w / series.len() as f64;
    let bar_w = group_w * 0.8 / 6.0;
    for (gi, (w, ms)) in series.iter().enumerate() {
        let gx = left + group_w * gi as f64 + group_w * 0.1;
        for (si, m) in ms.iter().enumerate() {
            let Some(l) = &m.latency else { continue };
            for (qi, (q, v)) in [("p50", l.p50_ns), ("p99", l.p99_ns), ("p99.9", l.p999_ns)]
                .into_iter()
                .enumerate()
            {
                let x = gx + bar_w * (si * 3 + qi) as f64;
                let yy = y(v as f64);
                let _ = writeln!(
                    s,
                    r#"<rect x="{x:.1}" y="{yy:.1}" width="{:.1}" height="{:.1}" fill="{}"><title>{} {} {q}: {v} ns</title></rect>"#,
                    bar_w * 0.9,
                    (top + plot_h - yy).max(1.0),
                    shades[si][qi],
                    w.name,
                    svg_escape(m.parser)
                );
            }
        }
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="13">{}</text><text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="10">vs {}</text>"#,
            left + group_w * (gi as f64 + 0.5),
            top + plot_h + 18.0,
            w.name,
            left + group_w * (gi as f64 + 0.5),
            top + plot_h + 32.0,
            svg_escape(w.fastest_peer)
        );
    }
    let _ = writeln!(
        s,
        r##"<line x1="{left}" x2="{}" y1="{:.1}" y2="{:.1}" stroke="#c00" stroke-dasharray="6 4"/><text x="{}" y="{:.1}" fill="#c00">1 µs (W2 p99.9 target)</text>"##,
        left + plot_w,
        y(1000.0),
        y(1000.0),
        left + plot_w + 6.0,
        y(1000.0) + 4.0
    );
    let legend = [
        ("rpcwire p50", shades[0][0]),
        ("rpcwire p99", shades[0][1]),
        ("rpcwire p99.9", shades[0][2]),
        ("fastest peer p50", shades[1][0]),
        ("fastest peer p99", shades[1][1]),
        ("fastest peer p99.9", shades[1][2]),
    ];
    for (i, (label, color)) in legend.iter().enumerate() {
        let ly = top + 40.0 + 20.0 * i as f64;
        let lx = left + plot_w + 20.0;
        let _ = writeln!(
            s,
            r#"<rect x="{lx}" y="{:.1}" width="12" height="12" fill="{color}"/><text x="{}" y="{:.1}">{label}</text>"#,
            ly - 10.0,
            lx + 18.0,
            ly
        );
    }
    s.push_str("</svg>\n");
    s
}

// ----- JSON

/// `x` rounded to `digits` decimals (for a readable JSON file).
fn round(x: f64, digits: i32) -> f64 {
    let scale = 10f64.powi(digits);
    (x * scale).round() / scale
}

#[derive(Serialize)]
struct JsonResult {
    parser: &'static str,
    ns_per_msg: f64,
    mb_per_s: f64,
    allocs_per_msg: f64,
    p50_ns: Option<u64>,
    p99_ns: Option<u64>,
    p999_ns: Option<u64>,
    // Extra fields beyond the issue's shape.
    max_ns: Option<u64>,
    msg_per_s: f64,
    ns_per_msg_min: f64,
    ns_per_msg_max: f64,
    batches: usize,
    latency_messages_per_sample: Option<u64>,
    latency_samples: Option<u64>,
    speedup_of_rpcwire: f64,
    about: &'static str,
}

#[derive(Serialize)]
struct JsonWorkload {
    name: &'static str,
    bytes: usize,
    messages: usize,
    total_bytes: usize,
    about: String,
    fastest_peer: &'static str,
    speedup_vs_fastest_peer: f64,
    results: Vec<JsonResult>,
    rpcwire_allocating_messages: Vec<JsonAllocating>,
}

#[derive(Serialize)]
struct JsonAllocating {
    index: usize,
    allocations: u64,
    prefix: String,
}

#[derive(Serialize)]
struct JsonProbe {
    parser: &'static str,
    rejected: Vec<&'static str>,
    accepted: Vec<&'static str>,
}

#[derive(Serialize)]
struct JsonReport {
    machine: String,
    workloads: Vec<JsonWorkload>,
    // Extra fields beyond the issue's shape.
    generated_at: String,
    mode: &'static str,
    git_head: Option<String>,
    rustc: Option<String>,
    simd: String,
    load_average_before: String,
    load_average_after: String,
    timer_overhead_ns: u64,
    latency_method: String,
    jitter_floor: Option<JitterFloor>,
    targets: Vec<Target>,
    threads: Vec<ThreadRun>,
    /// Pipeline stages after parsing (router end to end, …), each beside its baseline.
    stages: Vec<StageResult>,
    /// Correlation table start + complete + take on 1 and 2 threads.
    correlation_table: Vec<CorrelationRun>,
    /// Round trips between two in-process peers over an in-memory duplex.
    peer_round_trip: Vec<PeerRun>,
    instructions_per_msg: Vec<InstructionJson>,
    strictness_probes: Vec<JsonProbe>,
}

#[derive(Serialize)]
struct InstructionJson {
    workload: String,
    parser: String,
    instructions_per_msg: f64,
    branches_per_msg: Option<f64>,
    mispredicted_per_msg: Option<f64>,
}

// ----- Markdown

struct Report<'a> {
    config: &'a Config,
    results: &'a [WorkloadResult],
    targets: &'a [Target],
    threads: &'a [ThreadRun],
    stages: &'a [StageResult],
    correlation: &'a [CorrelationRun],
    peer: &'a [PeerRun],
    instructions: Option<&'a Instructions>,
    probes: &'a [(&'static str, Vec<bool>)],
    machine: &'a str,
    generated_at: &'a str,
    git_head: Option<&'a str>,
    rustc: Option<&'a str>,
    simd: &'a str,
    load: (&'a str, &'a str),
    timer_ns: u64,
    latency_method: &'a str,
    seconds: f64,
    jitter: Option<&'a JitterFloor>,
}

impl Report<'_> {
    /// The Performance table of README.md: the median matrix, the speed-ups and the
    /// verdicts of this run, nothing typed by hand.
    fn readme_section(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "Median ns per message from `perf-reports/latest.md` ({} run, {}, git {}, {}). \
             ◆ marks the fastest peer; W4 is one batch of 100 requests, ETH the mean over the \
             Ethereum corpus stream.\n",
            if self.config.quick { "quick" } else { "full" },
            self.machine,
            self.git_head.unwrap_or("?"),
            self.generated_at
        );
        s.push_str(&matrix(self.results, true));
        let _ = write!(s, "| **rpcwire speed-up vs fastest peer** |");
        for w in self.results {
            let _ = write!(s, " **{:.2}×** |", w.speedup());
        }
        if !self.stages.is_empty() {
            let _ = writeln!(s, "\n\nPipeline stages, same run:\n");
            s.push_str(&stages_table(self.stages));
        }
        if !self.peer.is_empty() {
            let _ = writeln!(
                s,
                "\nRound trips between two in-process peers over an in-memory duplex, same run:\n"
            );
            s.push_str(&peer_table(self.peer));
        }
        let _ = writeln!(s, "\n\n| target | measured | verdict |\n| --- | --- | --- |");
        for t in self.targets {
            let _ = writeln!(s, "| {} | {} | {} |", t.target, t.measured, yes_no(t.met));
        }
        s
    }

    fn markdown(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "# rpcwire performance report\n");
        let _ = writeln!(
            s,
            "Generated by `cargo bench --bench report{}{}` — do not edit by hand; every number and \
             every verdict below is computed by `benches/report.rs` in the same run.\n",
            if cfg!(feature = "tokio") {
                " --features tokio"
            } else {
                ""
            },
            if self.config.quick { " -- --quick" } else { "" }
        );
        let _ = writeln!(s, "| | |\n| --- | --- |");
        let _ = writeln!(s, "| machine | {} |", self.machine);
        let _ = writeln!(s, "| generated | {} ({:.0} s) |", self.generated_at, self.seconds);
        let _ = writeln!(
            s,
            "| mode | {} ({} batches of ~{} ms per workload × parser, median reported; histograms {} ms) |",
            if self.config.quick { "quick" } else { "full" },
            self.config.batches,
            self.config.batch.as_millis(),
            self.config.histogram.as_millis()
        );
        let _ = writeln!(s, "| git | {} |", self.git_head.unwrap_or("?"));
        let _ = writeln!(s, "| rustc | {} |", self.rustc.unwrap_or("?"));
        let _ = writeln!(s, "| SIMD | {} |", self.simd);
        let _ = writeln!(
            s,
            "| allocator | mimalloc, wrapped by a per-thread allocation counter |"
        );
        let _ = writeln!(
            s,
            "| load average before / after | {} / {} |\n",
            self.load.0, self.load.1
        );
        let busy = |load: &str| {
            load.split_whitespace()
                .next()
                .and_then(|l| l.parse::<f64>().ok())
                .is_some_and(|l| l > 1.5)
        };
        if busy(self.load.0) || busy(self.load.1) {
            let _ = writeln!(
                s,
                "> **Note:** the 1-minute load average was above 1.5 on this 2-core machine: other \
                 processes competed for the CPU and the numbers, tails above all, are noisier than \
                 usual. Batches of all parsers are interleaved, so medians stay comparable.\n"
            );
        }

        let _ = writeln!(s, "## Targets (issues 3 and 4)\n");
        let _ = writeln!(s, "| target | measured | verdict |\n| --- | --- | --- |");
        for t in self.targets {
            let _ = writeln!(s, "| {} | {} | {} |", t.target, t.measured, yes_no(t.met));
        }
        let _ = writeln!(s);
        if self.instructions.is_some() && self.targets.iter().any(|t| t.met == Some(false)) {
            let _ = writeln!(
                s,
                "Where the instructions and the time go, for the targets not met: \
                 [Where the time goes](#where-the-time-goes).\n"
            );
        }
        if let Some(j) = self.jitter {
            let _ = writeln!(
                s,
                "The machine's own latency floor: a fixed loop of plain arithmetic sized like {} \
                 ({:.0} ns), timed exactly like the parsers, gives p50 {} ns, p99 {} ns, p99.9 {} ns, \
                 max {} ns ({} samples). A parser's tail cannot be measured below this.\n",
                j.sized_like, j.work_ns, j.p50_ns, j.p99_ns, j.p999_ns, j.max_ns, j.samples
            );
        }

        if !self.stages.is_empty() {
            let _ = writeln!(s, "## Pipeline stages\n");
            let _ = writeln!(
                s,
                "Each stage beside a baseline doing the same work with the peers' tools, both \
                 verified to answer alike before timing. `router W1 subtract`: W1-shaped requests \
                 (`subtract`, positional params, 256 different ids) answered end to end — parse, \
                 route, serde decode, handler, encode into a reused buffer. `… stream`: the whole \
                 serving loop (`rpcwire::serve::Connection`: 64 KiB reads into a pooled buffer, \
                 frames split off, parse, route, decode, encode, frame); W1 streams answer \
                 `eth_getBalance` by decoding its params into `(String, String)` as issue 5 asks \
                 (those two `String`s are the 2 allocations per message), ETH streams echo the \
                 params of every corpus request. ns/msg is the median of \
                 the batches; msg/s per thread count is each thread's own state running flat out; \
                 latency is per message, timed one by one.\n"
            );
            s.push_str(&stages_table(self.stages));
            let _ = writeln!(s);
        }
        if !self.correlation.is_empty() {
            let _ = writeln!(s, "## Correlation table\n");
            let _ = writeln!(
                s,
                "`rpcwire::correlate::CorrelationTable` (capacity 1,024), shared by all threads: each \
                 call is `start` (slot + generated id), `complete` by that id, and the caller taking \
                 the value (which frees the slot). Wall-clock time ÷ calls, median of {THREAD_ROUNDS} \
                 rounds.\n"
            );
            s.push_str(&correlation_table(self.correlation));
            let _ = writeln!(s);
        }
        if !self.peer.is_empty() {
            let _ = writeln!(
                s,
                "## Peer round trip
"
            );
            let _ = writeln!(
                s,
                "Two `rpcwire::transport::Peer`s in one process over `tokio::io::duplex` ({} KiB \
                 per direction), on a 2-worker Tokio runtime: the client's callers each send a \
                 `subtract` call and wait for its answer (decoded and checked) before the next; the \
                 server answers through its `Router`. Latency is per call, from sending to the \
                 decoded result. The median of {THREAD_ROUNDS} rounds by calls/s.\n",
                PEER_DUPLEX_KIB
            );
            s.push_str(&peer_table(self.peer));
            let _ = writeln!(s);
        }

        let _ = writeln!(s, "## Median ns per message\n");
        let _ = writeln!(
            s,
            "◆ marks the fastest peer of each workload. One message is one JSON-RPC message, \
             except W4 (one batch of 100 requests) and ETH (the mean over the stream's messages).\n"
        );
        s.push_str(&matrix(self.results, true));
        let _ = write!(s, "| **rpcwire speed-up vs fastest peer** |");
        for w in self.results {
            let _ = write!(s, " **{:.2}×** |", w.speedup());
        }
        let _ = writeln!(s, "\n\n![speed-up of rpcwire over each peer](speedup.svg)\n");
        let _ = writeln!(s, "![latency percentiles](latency.svg)\n");

        let _ = writeln!(s, "## Per workload\n");
        for w in self.results {
            let _ = writeln!(s, "### {} — {}\n", w.name, w.about);
            let _ = writeln!(
                s,
                "| parser | ns/msg | spread (min–max batch) | MB/s | msg/s | allocs/msg | p50 ns | p99 ns | p99.9 ns | max ns | rpcwire speed-up |"
            );
            let _ = writeln!(
                s,
                "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
            );
            let base = w.rpcwire().ns_per_msg;
            for m in &w.results {
                let lat = |f: fn(&Latency) -> u64| {
                    m.latency.as_ref().map_or("–".to_owned(), |l| f(l).to_string())
                };
                let min = m.batch_ns.iter().copied().fold(f64::INFINITY, f64::min);
                let max = m.batch_ns.iter().copied().fold(0.0, f64::max);
                let name = if m.parser == w.fastest_peer {
                    format!("{} ◆", m.parser)
                } else {
                    m.parser.to_owned()
                };
                let _ = writeln!(
                    s,
                    "| {name} | {} | {}–{} | {:.0} | {} | {} | {} | {} | {} | {} | {:.2}× |",
                    fmt_ns(m.ns_per_msg),
                    fmt_ns(min),
                    fmt_ns(max),
                    m.mb_per_s,
                    fmt_count(m.msg_per_s),
                    fmt_allocs(m.allocs_per_msg),
                    lat(|l| l.p50_ns),
                    lat(|l| l.p99_ns),
                    lat(|l| l.p999_ns),
                    lat(|l| l.max_ns),
                    m.ns_per_msg / base
                );
            }
            let _ = writeln!(s);
            if !w.rpcwire_allocating.is_empty() {
                let _ = writeln!(
                    s,
                    "rpcwire allocates on {} of the {} messages (after warm-up); the first ones:\n",
                    w.rpcwire_allocating.len(),
                    w.messages
                );
                for (index, allocations, prefix) in w.rpcwire_allocating.iter().take(5) {
                    let _ = writeln!(s, "- message {index}: {allocations} allocation(s): `{prefix}…`");
                }
                let _ = writeln!(s);
            }
        }

        let _ = writeln!(s, "## Multi-thread throughput (W1)\n");
        let _ = writeln!(
            s,
            "Each thread parses W1 in a loop with its own parser state; {THREAD_ROUNDS} rounds of \
             {} ms alternating parsers and thread counts, median reported.\n",
            self.config.threads.as_millis() / THREAD_ROUNDS as u128
        );
        let _ = writeln!(
            s,
            "| parser | threads | msg/s | per-thread scaling |\n| --- | ---: | ---: | ---: |"
        );
        for t in self.threads {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {:.2} |",
                t.parser,
                t.threads,
                fmt_count(t.msg_per_s),
                t.scaling
            );
        }
        let _ = writeln!(s);

        let _ = writeln!(s, "## Instructions per message (callgrind)\n");
        match self.instructions {
            Some(i) => {
                let _ = writeln!(
                    s,
                    "From `perf-reports/instructions.json` ({}, git {}), written by \
                     `benches/instructions.sh` (callgrind, `(Ir(1001 runs) − Ir(1 run)) / 1000` \
                     inside the parse loop).\n",
                    i.generated_at, i.git_head
                );
                let _ = writeln!(
                    s,
                    "| workload | parser | instructions/msg |\n| --- | --- | ---: |"
                );
                for c in &i.counts {
                    let _ = writeln!(s, "| {} | {} | {:.0} |", c.workload, c.parser, c.instructions);
                }
            }
            None => {
                let _ = writeln!(s, "Not measured yet: run `benches/instructions.sh`.");
            }
        }
        let _ = writeln!(s);
        if let Some(i) = self.instructions {
            let timings: Vec<counts::Timing<'_>> = self
                .results
                .iter()
                .map(|w| counts::Timing {
                    workload: w.name,
                    fastest_peer: w.fastest_peer,
                    ns: w.results.iter().map(|m| (m.parser, m.ns_per_msg)).collect(),
                })
                .collect();
            counts::where_the_time_goes(&mut s, i, &timings, RPCWIRE);
        }

        let _ = writeln!(s, "## Strictness of each parser\n");
        let _ = writeln!(
            s,
            "Invalid inputs each parser is given (as in the timed runs: same checks, same code); \
             \"rejects\" means the parse failed or the harness's JSON-RPC checks (`jsonrpc` is \
             \"2.0\", a method or exactly one of result/error) refused it. A fast peer that \
             accepts invalid input is skipping work rpcwire does.\n"
        );
        let _ = write!(s, "| parser |");
        for (name, _, _) in peers::PROBES.iter() {
            let _ = write!(s, " {name} |");
        }
        let _ = write!(s, "\n| --- |");
        for _ in peers::PROBES.iter() {
            let _ = write!(s, " :---: |");
        }
        s.push('\n');
        for (parser, rejected) in self.probes {
            let _ = write!(s, "| {parser} |");
            for r in rejected {
                let _ = write!(s, " {} |", if *r { "rejects" } else { "**accepts**" });
            }
            s.push('\n');
        }
        let _ = writeln!(s);

        let _ = writeln!(s, "## Method\n");
        let _ = writeln!(
            s,
            "- Workloads are built in `benches/common/workloads.rs`; every parser gets the same \
             bytes. Before timing, every parser must return rpcwire's digest (method, id) for every \
             message of the workload, or the run aborts.\n\
             - Parsers (`benches/common/peers.rs`); each checks `\"jsonrpc\" == \"2.0\"` and extracts \
             the id, the method and a handle to params/result/error:"
        );
        if let Some(w) = self.results.first() {
            for m in &w.results {
                let _ = writeln!(s, "  - `{}`: {}", m.parser, m.about);
            }
        }
        let _ = writeln!(
            s,
            "- ns/msg: warm-up ({} ms, which also sizes the batches), then {} timed batches of \
             ~{} ms; the median batch's ns per message. MB/s and msg/s derive from it.\n\
             - allocs/msg: heap allocations (alloc, alloc_zeroed, realloc) on the measuring thread \
             during the timed batches ÷ messages.\n\
             - Latency: {}\n\
             - Instruction counts: `benches/instructions.sh`.",
            self.config.warmup.as_millis(),
            self.config.batches,
            self.config.batch.as_millis(),
            self.latency_method
        );
        s
    }

    fn json(&self) -> JsonReport {
        JsonReport {
            machine: self.machine.to_owned(),
            workloads: self
                .results
                .iter()
                .map(|w| JsonWorkload {
                    name: w.name,
                    bytes: w.bytes,
                    messages: w.messages,
                    total_bytes: w.total_bytes,
                    about: w.about.clone(),
                    fastest_peer: w.fastest_peer,
                    speedup_vs_fastest_peer: round(w.speedup(), 3),
                    rpcwire_allocating_messages: w
                        .rpcwire_allocating
                        .iter()
                        .map(|(index, allocations, prefix)| JsonAllocating {
                            index: *index,
                            allocations: *allocations,
                            prefix: prefix.clone(),
                        })
                        .collect(),
                    results: w
                        .results
                        .iter()
                        .map(|m| JsonResult {
                            parser: m.parser,
                            ns_per_msg: round(m.ns_per_msg, 1),
                            mb_per_s: round(m.mb_per_s, 1),
                            allocs_per_msg: round(m.allocs_per_msg, 4),
                            p50_ns: m.latency.as_ref().map(|l| l.p50_ns),
                            p99_ns: m.latency.as_ref().map(|l| l.p99_ns),
                            p999_ns: m.latency.as_ref().map(|l| l.p999_ns),
                            max_ns: m.latency.as_ref().map(|l| l.max_ns),
                            msg_per_s: round(m.msg_per_s, 0),
                            ns_per_msg_min: round(
                                m.batch_ns.iter().copied().fold(f64::INFINITY, f64::min),
                                1,
                            ),
                            ns_per_msg_max: round(m.batch_ns.iter().copied().fold(0.0, f64::max), 1),
                            batches: m.batch_ns.len(),
                            latency_messages_per_sample: m.latency.as_ref().map(|l| l.messages_per_sample),
                            latency_samples: m.latency.as_ref().map(|l| l.samples),
                            speedup_of_rpcwire: round(m.ns_per_msg / w.rpcwire().ns_per_msg, 3),
                            about: m.about,
                        })
                        .collect(),
                })
                .collect(),
            generated_at: self.generated_at.to_owned(),
            mode: if self.config.quick { "quick" } else { "full" },
            git_head: self.git_head.map(str::to_owned),
            rustc: self.rustc.map(str::to_owned),
            simd: self.simd.to_owned(),
            load_average_before: self.load.0.to_owned(),
            load_average_after: self.load.1.to_owned(),
            timer_overhead_ns: self.timer_ns,
            latency_method: self.latency_method.to_owned(),
            jitter_floor: self.jitter.cloned(),
            targets: self.targets.to_vec(),
            threads: self.threads.to_vec(),
            stages: self.stages.to_vec(),
            correlation_table: self.correlation.to_vec(),
            peer_round_trip: self.peer.to_vec(),
            instructions_per_msg: self
                .instructions
                .map(|i| {
                    i.counts
                        .iter()
                        .map(|c| InstructionJson {
                            workload: c.workload.clone(),
                            parser: c.parser.clone(),
                            instructions_per_msg: c.instructions,
                            branches_per_msg: c.branches,
                            mispredicted_per_msg: c.mispredicted,
                        })
                        .collect()
                })
                .unwrap_or_default(),
            strictness_probes: self
                .probes
                .iter()
                .map(|(parser, rejected)| JsonProbe {
                    parser,
                    rejected: peers::PROBES
                        .iter()
                        .zip(rejected)
                        .filter(|(_, r)| **r)
                        .map(|(p, _)| p.0)
                        .collect(),
                    accepted: peers::PROBES
                        .iter()
                        .zip(rejected)
                        .filter(|(_, r)| !**r)
                        .map(|(p, _)| p.0)
                        .collect(),
                })
                .collect(),
        }
    }
}

// ---------------------------------------------------------------------------------------
// Main

const USAGE: &str = "usage: cargo bench --bench report --features tokio [-- [--quick] [--only W1,W2,...] \
                     | --instructions WORKLOAD PARSER N]";

fn instructions_mode(args: &[String]) {
    let [workload, parser, n] = args else {
        panic!("{USAGE}");
    };
    let n: u64 = n.parse().unwrap_or_else(|_| panic!("{USAGE}"));
    struct Count {
        n: u64,
        digest: usize,
    }
    impl Visit for Count {
        fn visit<P: Peer>(&mut self, workload: &Workload) {
            let mut peer = P::new(workload);
            // Outside the counted loop: grows buffers, runs CPU feature detection.
            assert!(
                peer.parse(workload, 0) != 0,
                "{} rejected {}",
                P::NAME,
                workload.name
            );
            self.digest = instructions_loop(&mut peer, workload, self.n);
        }
    }
    let workload = workloads::build(workload).unwrap_or_else(|| panic!("workload {workload} unavailable"));
    let mut count = Count { n, digest: 0 };
    assert!(
        peers::for_name(&mut count, &workload, parser),
        "unknown parser {parser}"
    );
    println!(
        "instructions mode: {} × {parser} × {n} (digest sum {})",
        workload.name, count.digest
    );
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    if let Some(at) = args.iter().position(|a| a == "--instructions") {
        instructions_mode(&args[at + 1..]);
        return;
    }
    let quick = args.iter().any(|a| a == "--quick");
    args.retain(|a| a != "--quick");
    let mut only: Option<Vec<String>> = None;
    if let Some(at) = args.iter().position(|a| a == "--only") {
        let list = args.get(at + 1).unwrap_or_else(|| panic!("{USAGE}")).clone();
        only = Some(list.split(',').map(str::to_owned).collect());
        args.drain(at..at + 2);
    }
    if let Some(unknown) = args.first() {
        eprintln!("unknown argument {unknown:?}\n{USAGE}");
        std::process::exit(2);
    }
    let config = Config::new(quick);
    let began = Instant::now();
    let load_before = load_average();
    // At the start: the source this binary was just built from, as near as can be told.
    let git_head = git_head();
    let machine = machine();
    println!(
        "rpcwire report ({} mode) on {machine}",
        if quick { "quick" } else { "full" }
    );

    let workload_list: Vec<Workload> = match &only {
        Some(names) => names
            .iter()
            .filter(|n| *n != "stages")
            .filter_map(|n| workloads::build(n))
            .collect(),
        None => workloads::all(),
    };
    let timer_ns = timer_overhead_ns();
    println!("timer overhead (two Instant::now() calls, median): {timer_ns} ns");

    let mut results = Vec::new();
    for workload in &workload_list {
        peers::verify(workload);
        println!(
            "{}: {} — verified all parsers; measuring…",
            workload.name, workload.about
        );
        let mut measured = measure_throughput(&config, workload);
        let fastest_peer = measured
            .iter()
            .filter(|m| !peers::is_rpcwire(m.parser))
            .min_by(|a, b| a.ns_per_msg.total_cmp(&b.ns_per_msg))
            .expect("peers")
            .parser;
        let quickest = measured
            .iter()
            .filter(|m| m.parser == RPCWIRE || m.parser == fastest_peer)
            .map(|m| m.ns_per_msg)
            .fold(f64::INFINITY, f64::min);
        let per_sample = if quickest >= LATENCY_SINGLE_MIN_NS {
            1
        } else {
            (LATENCY_SAMPLE_NS / quickest).ceil() as u64
        };
        for m in measured.iter_mut() {
            if m.parser == RPCWIRE || m.parser == fastest_peer {
                let mut run = LatencyRun {
                    config: &config,
                    per_sample,
                    timer_ns,
                    out: None,
                };
                peers::for_name(&mut run, workload, m.parser);
                m.latency = run.out;
            }
        }
        let mut rpcwire_allocating = Vec::new();
        if measured
            .iter()
            .any(|m| m.parser == RPCWIRE && m.allocs_per_msg > 0.0)
        {
            let mut allocating = Allocating { out: Vec::new() };
            peers::for_name(&mut allocating, workload, RPCWIRE);
            rpcwire_allocating = allocating.out;
        }
        results.push(WorkloadResult {
            name: workload.name,
            about: workload.about.clone(),
            bytes: workload.bytes_per_msg(),
            messages: workload.messages.len(),
            total_bytes: workload.total_bytes(),
            results: measured,
            fastest_peer,
            rpcwire_allocating,
        });
    }

    let mut threads = Vec::new();
    if let (Some(w1), Some(r1)) = (
        workload_list.iter().find(|w| w.name == "W1"),
        results.iter().find(|w| w.name == "W1"),
    ) {
        // Short runs in rounds, alternating parsers and thread counts; the median of each.
        let configs: Vec<(&str, usize)> = [RPCWIRE, r1.fastest_peer]
            .into_iter()
            .flat_map(|parser| [(parser, 1), (parser, 2)])
            .collect();
        let mut runs = vec![Vec::new(); configs.len()];
        for _ in 0..THREAD_ROUNDS {
            for (c, (parser, n)) in configs.iter().enumerate() {
                let mut run = Threads {
                    duration: config.threads / THREAD_ROUNDS as u32,
                    warmup: config.warmup / 4,
                    threads: *n,
                    out: 0.0,
                };
                peers::for_name(&mut run, w1, parser);
                runs[c].push(run.out);
            }
        }
        let medians: Vec<f64> = runs.iter().map(|r| median(r)).collect();
        for (c, (parser, n)) in configs.iter().enumerate() {
            let single = medians[configs
                .iter()
                .position(|(p, k)| p == parser && *k == 1)
                .expect("1 thread")];
            threads.push(ThreadRun {
                workload: "W1",
                parser: (*parser).to_owned(),
                threads: *n,
                msg_per_s: round(medians[c], 0),
                scaling: round(medians[c] / *n as f64 / single, 3),
                runs: runs[c].iter().map(|r| round(*r, 0)).collect(),
            });
        }
    }

    let jitter = results.iter().find(|w| w.name == "W2").map(|w2| {
        jitter_floor(
            &config,
            "rpcwire's median W2 parse".to_owned(),
            w2.rpcwire().ns_per_msg,
            timer_ns,
        )
    });
    if let Some(j) = &jitter {
        println!(
            "jitter floor ({:.0} ns of arithmetic): p50 {} p99 {} p99.9 {} max {} ns",
            j.work_ns, j.p50_ns, j.p99_ns, j.p999_ns, j.max_ns
        );
    }
    let run_stages = only
        .as_ref()
        .map_or(true, |names| names.iter().any(|n| n == "stages"));
    let (stage_results, correlation, peer_runs) = if run_stages {
        (
            measure_stages(&config, timer_ns),
            measure_correlation(&config),
            measure_peer_round_trips(&config),
        )
    } else {
        (Vec::new(), Vec::new(), Vec::new())
    };
    let instructions = Instructions::load(&reports_dir());
    let mut target_list = targets(&results, instructions.as_ref());
    target_list.extend(stage_targets(&stage_results));
    let probes = peers::probe_all();
    print_table(&results, &target_list, &threads);
    print_stages(&stage_results);

    if only.is_some() {
        println!("\n--only: partial run, perf-reports/ left unchanged");
        return;
    }
    let latency_method = format!(
        "per-sample `Instant::now()` pairs for {} ms per parser, cycling through the workload's \
         messages; the timer's own overhead ({timer_ns} ns, median of empty pairs) is subtracted. \
         A sample is one message, unless the faster of rpcwire and the fastest peer takes under \
         {LATENCY_SINGLE_MIN_NS} ns per message: then a sample is N = ⌈{LATENCY_SAMPLE_NS} ns ÷ \
         that time⌉ back-to-back messages and records elapsed ÷ N (column messages-per-sample in \
         latest.json), which smooths the tail of such short messages. Recorded in an HdrHistogram \
         (3 significant digits).",
        config.histogram.as_millis()
    );
    let generated_at = now_utc();
    let rustc = command("rustc", &["-V"]);
    let simd = simd_note();
    let load_after = load_average();
    let report = Report {
        config: &config,
        results: &results,
        targets: &target_list,
        threads: &threads,
        stages: &stage_results,
        correlation: &correlation,
        peer: &peer_runs,
        instructions: instructions.as_ref(),
        probes: &probes,
        machine: &machine,
        generated_at: &generated_at,
        git_head: git_head.as_deref(),
        rustc: rustc.as_deref(),
        simd: &simd,
        load: (&load_before, &load_after),
        timer_ns,
        latency_method: &latency_method,
        seconds: began.elapsed().as_secs_f64(),
        jitter: jitter.as_ref(),
    };
    let dir = reports_dir();
    std::fs::create_dir_all(&dir).expect("create perf-reports/");
    let write = |name: &str, text: String| {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        println!("wrote {}", path.display());
    };
    write("latest.md", report.markdown());
    write(
        "latest.json",
        serde_json::to_string_pretty(&report.json()).expect("serializable") + "\n",
    );
    write("speedup.svg", speedup_svg(&results));
    write("latency.svg", latency_svg(&results));
    update_readme(&report.readme_section());
    println!("report took {:.0} s", began.elapsed().as_secs_f64());
}
