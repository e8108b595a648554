//! The gateway section's hedging rows: W1 (a call of a method marked safe) through rpcwire's
//! gateway over two upstreams, one of which answers every fifth call 200 ms late (20%), with
//! and without hedging, beside the same gateway over the fast upstream alone; the issue's aim
//! is the hedged p99 within 1.2× the fast upstream's.

use std::sync::Arc;
use std::time::Duration;

use super::GatewayRun;
use crate::config::Config;
use crate::render_json::round;
use crate::transports::child::ServerProcess;
use crate::transports::load::{self, Exchange, Protocol};

/// The subjects, the upstreams each forwards to, and what it is.
const SUBJECTS: [(&str, bool, &str); 5] = [
    (
        "fast-only",
        false,
        "rpcwire's gateway over the fast upstream alone",
    ),
    (
        "no-hedge",
        true,
        "rpcwire's gateway over the fast upstream and one answering 20% of calls 200 ms late, in turn",
    ),
    (
        "hedge-p75",
        true,
        "the same with Hedge::quantile(0.75, 100 µs): a second attempt after the first upstream's \
         75th percentile of its last 128 latencies",
    ),
    ("hedge-2ms", true, "the same with Hedge::after(2 ms)"),
    (
        "faster-2ms",
        true,
        "the same with Hedge::after(2 ms) and prefer_faster: each call first to the upstream \
         answering fastest lately, one in 32 in turn",
    ),
];

/// How many requests in flight are measured.
const IN_FLIGHT: [usize; 2] = [1, 16];

/// Measures the hedging rows, `rounds` times interleaved; each configuration's median round.
pub(crate) fn measure_hedging(config: &Config) -> Vec<GatewayRun> {
    let (warmup, duration, rounds) = if config.quick {
        (Duration::from_millis(300), Duration::from_millis(1500), 1)
    } else {
        (Duration::from_millis(500), Duration::from_millis(4000), 3)
    };
    let fast = ServerProcess::start_with("gateway-upstream", &[]);
    let late = ServerProcess::start_with("gateway-upstream-late", &[]);
    let (fast_url, late_url) = (
        format!("http://{}/", fast.address),
        format!("http://{}/", late.address),
    );
    let gateways: Vec<ServerProcess> = SUBJECTS
        .iter()
        .map(|(name, both, _)| {
            let mut args = vec![fast_url.as_str()];
            if *both {
                args.push(&late_url);
            }
            ServerProcess::start_with(&format!("gateway-{name}"), &args)
        })
        .collect();
    let exchanges = Arc::new(vec![Exchange::new(
        Protocol::Http,
        crate::common::workloads::W1.as_bytes(),
        br#""id":42"#,
    )]);
    let mut samples: Vec<Vec<GatewayRun>> = vec![Vec::new(); SUBJECTS.len() * IN_FLIGHT.len()];
    for round_number in 1..=rounds {
        for (slot, (in_flight, ((name, _, what), gateway))) in IN_FLIGHT
            .iter()
            .flat_map(|n| std::iter::repeat(n).zip(SUBJECTS.iter().zip(&gateways)))
            .enumerate()
        {
            let mut marks = Vec::with_capacity(2);
            let load = load::run(
                Protocol::Http,
                gateway.address,
                *in_flight,
                &exchanges,
                warmup,
                duration,
                || marks.push(gateway.cpu()),
            );
            let requests = load.requests.max(1) as f64;
            let us = |q: f64| load.histogram.value_at_quantile(q) as f64 / 1e3;
            let run = GatewayRun {
                workload: "HEDGE",
                implementation: name,
                in_flight: *in_flight,
                req_per_s: round(load.requests as f64 / load.seconds, 0),
                added_p50_us: 0.0,
                added_p99_us: 0.0,
                cpu_us_per_req: round(
                    marks[1].saturating_sub(marks[0]).as_secs_f64() * 1e6 / requests,
                    2,
                ),
                p50_us: round(us(0.5), 1),
                p99_us: round(us(0.99), 1),
                requests: load.requests,
                what,
                rounds: Vec::new(),
                redis_cpu_us_per_req: None,
                redis_round_trips_per_req: None,
                redis_scripts_per_req: None,
                redis_commands_per_req: None,
                upstream_cpu_us_per_req: None,
                cache_hit_rate: None,
            };
            println!(
                "gateway: round {round_number}/{rounds} HEDGE {in_flight:>2} in flight {name:<10}: {:>7.0} req/s, \
                 p50 {:>8.1} p99 {:>9.1} µs, CPU {:>6.2} µs/req",
                run.req_per_s, run.p50_us, run.p99_us, run.cpu_us_per_req
            );
            samples[slot].push(run);
        }
    }
    // The median round by p99: what the rows are about.
    samples
        .into_iter()
        .filter(|rounds| !rounds.is_empty())
        .map(|mut rounds| {
            rounds.sort_by(|a, b| a.p99_us.total_cmp(&b.p99_us));
            let all = rounds.iter().map(|run| run.cpu_us_per_req).collect();
            let mut median = rounds.swap_remove(rounds.len() / 2);
            median.rounds = all;
            median
        })
        .collect()
}
