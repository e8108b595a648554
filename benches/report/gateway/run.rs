//! Runs every workload × requests in flight × way of forwarding (`http` feature).

use std::sync::Arc;
use std::time::Duration;

use super::servers::{corpus_pairs, W1_RESULT};
use super::GatewayRun;
use crate::config::Config;
use crate::render_json::round;
use crate::transports::child::ServerProcess;
use crate::transports::load::{self, Exchange, Protocol};

/// The requests in flight measured.
const IN_FLIGHT: [usize; 2] = [1, 64];

/// The ways of forwarding, and what each is.
const SUBJECTS: [(&str, &str); 4] = [
    ("straight", "no gateway: the load generator calls the upstream"),
    (
        "rpcwire",
        "rpcwire proxy::Gateway behind HttpServer (params and results passed on as bytes)",
    ),
    (
        "value",
        "hyper + serde_json::Value: parsed, id set, serialized, both ways",
    ),
    ("floor", "hyper forwarding the bodies as they are"),
];

/// The requests of a workload and what their answers must contain (their id).
fn exchanges(workload: &str) -> Vec<Exchange> {
    let with_id = |request: &[u8]| -> Option<Exchange> {
        let parsed = rpcwire::parse(request).ok()?.single()?;
        let id = parsed.id()?.json_parts().concat();
        Some(Exchange::new(
            Protocol::Http,
            request,
            format!(r#""id":{id}"#).as_bytes(),
        ))
    };
    match workload {
        "W1" => {
            let mut exchange = with_id(crate::common::workloads::W1.as_bytes()).expect("W1 is a request");
            exchange.expect = format!(r#""result":{W1_RESULT}"#).into_bytes();
            vec![exchange]
        }
        _ => corpus_pairs()
            .iter()
            .filter_map(|(request, _)| with_id(request))
            .collect(),
    }
}

/// How many times each workload × in flight × way of forwarding is measured, the rounds
/// interleaved, in a full run: the report keeps, per configuration, the round with the median
/// gateway CPU per request (as the transports section does), so that one slow second of a
/// shared 2-core machine does not decide a comparison.
const ROUNDS: usize = 3;

/// Measures the gateway section, `ROUNDS` times interleaved; prints each run as it ends and
/// returns, per configuration, its median round.
pub(crate) fn measure_gateway(config: &Config) -> Vec<GatewayRun> {
    let (warmup, mut duration, rounds) = if config.quick {
        (Duration::from_millis(200), Duration::from_millis(800), 1)
    } else {
        (Duration::from_millis(500), Duration::from_millis(2000), ROUNDS)
    };
    // For a measurement that must go round the corpus many times (a gateway under callgrind
    // answers a few hundred requests a second): `GATEWAY_DURATION_MS=10000`.
    if let Some(ms) = std::env::var("GATEWAY_DURATION_MS")
        .ok()
        .and_then(|ms| ms.parse().ok())
    {
        duration = Duration::from_millis(ms);
    }
    let upstream = ServerProcess::start_with("gateway-upstream", &[]);
    let url = format!("http://{}/", upstream.address);
    let gateways: Vec<Option<ServerProcess>> = SUBJECTS
        .iter()
        .map(|(name, _)| {
            (*name != "straight").then(|| ServerProcess::start_with(&format!("gateway-{name}"), &[&url]))
        })
        .collect();
    // For a look at some cells only: `GATEWAY_WORKLOADS=W1`, `GATEWAY_IN_FLIGHT=1`.
    let chosen = |variable: &str, value: &str| {
        std::env::var(variable).map_or(true, |list| list.split(',').any(|item| item == value))
    };
    let mut plan = Vec::new();
    for workload in ["W1", "ETH"]
        .into_iter()
        .filter(|w| chosen("GATEWAY_WORKLOADS", w))
    {
        let exchanges = Arc::new(exchanges(workload));
        if exchanges.is_empty() {
            println!("gateway: {workload} skipped (no corpus)");
            continue;
        }
        for in_flight in IN_FLIGHT
            .into_iter()
            .filter(|n| chosen("GATEWAY_IN_FLIGHT", &n.to_string()))
        {
            plan.push((workload, in_flight, exchanges.clone()));
        }
    }
    // samples[configuration][subject] = one run per round.
    let mut samples: Vec<Vec<Vec<GatewayRun>>> = vec![vec![Vec::new(); SUBJECTS.len()]; plan.len()];
    for round_number in 1..=rounds {
        for ((workload, in_flight, exchanges), samples) in plan.iter().zip(&mut samples) {
            let mut straight = (0.0, 0.0);
            for (((name, what), gateway), samples) in SUBJECTS.iter().zip(&gateways).zip(samples.iter_mut()) {
                let process = gateway.as_ref().unwrap_or(&upstream);
                let mut marks = Vec::with_capacity(2);
                let load = load::run(
                    Protocol::Http,
                    process.address,
                    *in_flight,
                    exchanges,
                    warmup,
                    duration,
                    || marks.push(process.cpu()),
                );
                let cpu = marks[1].saturating_sub(marks[0]).as_secs_f64();
                let us = |q: f64| load.histogram.value_at_quantile(q) as f64 / 1e3;
                let (p50, p99) = (us(0.5), us(0.99));
                if *name == "straight" {
                    straight = (p50, p99);
                }
                let run = GatewayRun {
                    workload,
                    implementation: name,
                    in_flight: *in_flight,
                    req_per_s: round(load.requests as f64 / load.seconds, 0),
                    added_p50_us: round(p50 - straight.0, 1),
                    added_p99_us: round(p99 - straight.1, 1),
                    cpu_us_per_req: round(cpu * 1e6 / load.requests.max(1) as f64, 2),
                    p50_us: round(p50, 1),
                    p99_us: round(p99, 1),
                    requests: load.requests,
                    what,
                    rounds: Vec::new(),
                };
                println!(
                    "gateway: round {round_number}/{rounds} {:<3} {:>2} in flight {:<8}: {:>7.0} req/s, p50 {:>7.1} (+{:>6.1}) \
                     p99 {:>7.1} (+{:>6.1}) µs, CPU {:>6.2} µs/req{}",
                    run.workload,
                    run.in_flight,
                    run.implementation,
                    run.req_per_s,
                    run.p50_us,
                    run.added_p50_us,
                    run.p99_us,
                    run.added_p99_us,
                    run.cpu_us_per_req,
                    if *name == "straight" { " (the upstream's)" } else { "" }
                );
                samples.push(run);
            }
        }
    }
    samples.into_iter().flatten().map(median_round).collect()
}

/// The round with the median CPU per request, with every round's figure beside it.
fn median_round(mut samples: Vec<GatewayRun>) -> GatewayRun {
    samples.sort_by(|a, b| a.cpu_us_per_req.total_cmp(&b.cpu_us_per_req));
    let all: Vec<f64> = samples.iter().map(|run| run.cpu_us_per_req).collect();
    let mut median = samples.swap_remove(samples.len() / 2);
    median.rounds = all;
    median
}
