//! Pipeline stages (benches/common/stages.rs): router end to end, framing, the serving loop and the peer round trip.

use crate::common::peer_stage::PeerRun;
use crate::common::stages::{self, StageResult};
use crate::common::stream_stage::StreamSpec as _;
use crate::common::workloads::{self};
use serde::Serialize;
use std::fmt::Write as _;

use crate::{config::*, measure::*, render_json::*, render_text::*, targets::*};

pub(crate) fn measure_stages(config: &Config, timer_ns: u64) -> Vec<StageResult> {
    use crate::common::router_stage::{self, JsonrpseeServer, RpcwireRouter};
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
    use crate::common::stream_stage::{self as streams, BaselineStream, RpcwireStream};
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
pub(crate) struct CorrelationRun {
    pub(crate) threads: usize,
    pub(crate) ns_per_op: f64,
    pub(crate) ops_per_s: f64,
    pub(crate) rounds: Vec<f64>,
}

pub(crate) fn measure_correlation(config: &Config) -> Vec<CorrelationRun> {
    let ops = if config.quick { 200_000 } else { 1_000_000 };
    crate::common::correlate::insert_complete_ns_per_op(1, ops / 10); // warm-up
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
            let ns = crate::common::correlate::insert_complete_ns_per_op(run.threads, ops / run.threads);
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
pub(crate) fn measure_peer_round_trips(config: &Config) -> Vec<PeerRun> {
    use rpcwire::frame::Framing;
    let calls = if config.quick { 20_000 } else { 100_000 };
    crate::common::peer_stage::round_trip(calls / 10, 64, Framing::ContentLength); // warm-up
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
                .map(|_| crate::common::peer_stage::round_trip(n, in_flight, framing))
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
pub(crate) fn measure_peer_round_trips(_config: &Config) -> Vec<PeerRun> {
    println!("peer round trip: skipped (it needs `--features tokio`)");
    Vec::new()
}

pub(crate) const PEER_DUPLEX_KIB: usize = crate::common::peer_stage::DUPLEX_BYTES / 1024;

pub(crate) fn peer_table(runs: &[PeerRun]) -> String {
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

pub(crate) fn correlation_table(runs: &[CorrelationRun]) -> String {
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
pub(crate) fn stage_pair<'s>(
    results: &'s [StageResult],
    stage: &str,
) -> Option<(&'s StageResult, &'s StageResult)> {
    let ours = results.iter().find(|r| r.stage == stage && r.rpcwire)?;
    let base = results.iter().find(|r| r.stage == stage && !r.rpcwire)?;
    Some((ours, base))
}

pub(crate) fn stage_targets(results: &[StageResult]) -> Vec<Target> {
    let mut out = Vec::new();
    if let Some((ours, base)) = stage_pair(results, crate::common::router_stage::STAGE) {
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
    if let Some((ours, base)) = stage_pair(results, crate::common::stream_stage::W1Ndjson::STAGE) {
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
pub(crate) fn stages_table(results: &[StageResult]) -> String {
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

pub(crate) fn print_stages(results: &[StageResult]) {
    if !results.is_empty() {
        println!("\nPipeline stages\n{}", stages_table(results));
    }
}
