//! Runs every workload × requests in flight × way of forwarding (`http` feature).

use std::sync::Arc;
use std::time::Duration;

use super::servers::{cache_hits, corpus_pairs, FLEET_KEY_HEADER, W1_RESULT};
use super::GatewayRun;
use crate::config::Config;
use crate::render_json::round;
use crate::transports::child::ServerProcess;
use crate::transports::load::{self, Exchange, Protocol};

/// The requests in flight measured.
const IN_FLIGHT: [usize; 2] = [1, 64];

/// The ways of forwarding, and what each is.
const SUBJECTS: [(&str, &str); 5] = [
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
    (
        "chain",
        "rpcwire's gateway with a HeadTracker and a FinalityCache: answers about finalized \
         blocks kept for good, about the head 1 s (ETH only)",
    ),
];

/// The workload the `chain` subject takes part in: the corpus replayed as a chain (W1 is one
/// request about the head, answered from the cache all but once a second).
const CHAIN_WORKLOAD: &str = "ETH";

/// The fleet's ways (`redis` feature), measured in the same rounds beside the others.
const FLEET_SUBJECTS: [(&str, &str); 2] = [
    (
        "fleet",
        "rpcwire's gateway behind FleetLayer: API key, rate limit shared in Redis, cache lookup \
         of a method not sent (every request forwarded)",
    ),
    (
        "fleet-cached",
        "the same with every method of the workloads cached in Redis (answered from Redis after \
         the first; errors are not cached and go on)",
    ),
];

/// How many calls the BATCH workload's batch holds (what viem and ethers send at most by
/// default is smaller; a thousand is the issue's measure).
const BATCH_CALLS: usize = 1000;

/// The subjects that take part in the BATCH workload (the others forward single requests).
const BATCH_SUBJECTS: [&str; 3] = ["straight", "rpcwire", "floor"];

/// The requests of a workload (single requests, each with an id; BATCH's one batch).
fn requests(workload: &str) -> Vec<Vec<u8>> {
    match workload {
        "W1" => vec![crate::common::workloads::W1.as_bytes().to_vec()],
        "BATCH" => batch().into_iter().collect(),
        _ => corpus_pairs().into_iter().map(|(request, _)| request).collect(),
    }
}

/// BATCH's request: a batch of [`BATCH_CALLS`] calls, the corpus's small ones (requests under
/// 512 bytes, answers under 1 KiB: balances, nonces, calls, block numbers — what a wallet or
/// an indexer batches) in
/// turn, ids 0, 1, …; `None` without the corpus.
fn batch() -> Option<Vec<u8>> {
    let small: Vec<rpcwire::Message<'static>> = corpus_pairs()
        .into_iter()
        .filter(|(request, answer)| request.len() < 512 && answer.len() < 1024)
        .filter_map(|(request, _)| {
            let request: &'static [u8] = Vec::leak(request);
            rpcwire::parse(request).ok()?.single()
        })
        .collect();
    if small.is_empty() {
        return None;
    }
    let mut out = bytes::BytesMut::new();
    let mut writer = rpcwire::encode::BatchWriter::new(&mut out);
    for (id, message) in (0..BATCH_CALLS).zip(small.iter().cycle()) {
        let rpcwire::Message::Request(request) = message else {
            continue;
        };
        let id = rpcwire::Id::from(id as u64);
        rpcwire::encode::write_call_raw(
            writer.element(),
            Some(&id),
            request.method(),
            request.raw_params(),
        )
        .expect("the corpus's params");
    }
    writer.finish();
    Some(out.to_vec())
}

/// The requests of a workload, each with the API key, and what their answers must contain
/// (their id; W1's, its result too).
fn exchanges(workload: &str, requests: &[Vec<u8>]) -> Vec<Exchange> {
    let with_id = |request: &[u8]| -> Option<Exchange> {
        let parsed = rpcwire::parse(request).ok()?.single()?;
        let id = parsed.id()?.json_parts().concat();
        Some(Exchange::with_header(
            Protocol::Http,
            request,
            format!(r#""id":{id}"#).as_bytes(),
            FLEET_KEY_HEADER,
        ))
    };
    if workload == "BATCH" {
        // The last call's answer is in the batch's answer.
        let expect = format!(r#""id":{}"#, BATCH_CALLS - 1);
        return requests
            .iter()
            .map(|batch| Exchange::with_header(Protocol::Http, batch, expect.as_bytes(), FLEET_KEY_HEADER))
            .collect();
    }
    let mut exchanges: Vec<Exchange> = requests.iter().filter_map(|request| with_id(request)).collect();
    if workload == "W1" {
        let exchange = exchanges.first_mut().expect("W1 is a request");
        exchange.expect = format!(r#""result":{W1_RESULT}"#).into_bytes();
    }
    exchanges
}

/// The methods `requests` call, each once.
fn methods(requests: &[Vec<u8>]) -> Vec<String> {
    let mut methods: Vec<String> = requests
        .iter()
        .filter_map(|request| match rpcwire::parse(request).ok()?.single()? {
            rpcwire::Message::Request(request) => Some(request.method().to_owned()),
            _ => None,
        })
        .collect();
    methods.sort();
    methods.dedup();
    methods
}

/// How many times each workload × in flight × way of forwarding is measured, the rounds
/// interleaved, in a full run: the report keeps, per configuration, the round with the median
/// gateway CPU per request (as the transports section does), so that one slow second of a
/// shared 2-core machine does not decide a comparison.
const ROUNDS: usize = 3;

/// What one end of a measured window read.
struct Mark {
    gateway: Duration,
    /// The upstream's CPU time (for the fleet and chain subjects).
    upstream: Duration,
    /// The chain subject's cache hits.
    hits: Option<u64>,
    /// The fleet subjects: Redis's CPU time and counters.
    #[cfg(feature = "redis")]
    redis: Option<(Duration, super::redis::RedisCounters)>,
}

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
    // For a look at some cells only: `GATEWAY_WORKLOADS=W1`, `GATEWAY_IN_FLIGHT=1`.
    let chosen = |variable: &str, value: &str| {
        std::env::var(variable).map_or(true, |list| list.split(',').any(|item| item == value))
    };
    let mut plan = Vec::new();
    let mut cached_methods = Vec::new();
    for workload in ["W1", "ETH", "BATCH"]
        .into_iter()
        .filter(|w| chosen("GATEWAY_WORKLOADS", w))
    {
        let requests = requests(workload);
        let exchanges = Arc::new(exchanges(workload, &requests));
        if exchanges.is_empty() {
            println!("gateway: {workload} skipped (no corpus)");
            continue;
        }
        if workload != "BATCH" {
            cached_methods.extend(methods(&requests));
        }
        // A batch's latency is its measure: one in flight.
        let in_flights: &[usize] = if workload == "BATCH" { &[1] } else { &IN_FLIGHT };
        for in_flight in in_flights
            .iter()
            .copied()
            .filter(|n| chosen("GATEWAY_IN_FLIGHT", &n.to_string()))
        {
            plan.push((workload, in_flight, exchanges.clone()));
        }
    }
    cached_methods.sort();
    cached_methods.dedup();
    // Started first, so that it is stopped last (after the gateways that use it), at the end
    // of the section or when it panics.
    #[cfg(feature = "redis")]
    let mut redis = match super::redis::RedisServer::start() {
        Ok(redis) => Some(redis),
        Err(problem) => {
            println!("gateway: fleet, fleet-cached skipped: no redis-server ({problem})");
            None
        }
    };
    #[cfg(feature = "redis")]
    let fleet = redis.is_some();
    #[cfg(not(feature = "redis"))]
    let fleet = {
        println!("gateway: fleet, fleet-cached skipped (run with --features http,mcp,auth,redis)");
        false
    };
    let subjects: Vec<(&str, &str)> = SUBJECTS
        .iter()
        .chain(if fleet { &FLEET_SUBJECTS[..] } else { &[] })
        .copied()
        .collect();
    // After the upstream's URL, a fleet gateway's Redis and the methods it caches.
    #[cfg(feature = "redis")]
    let fleet_args = |name: &str| -> Vec<String> {
        let Some(redis) = redis.as_ref().filter(|_| name.starts_with("fleet")) else {
            return Vec::new();
        };
        let cached = if name == "fleet-cached" {
            &cached_methods[..]
        } else {
            &[]
        };
        std::iter::once(redis.url())
            .chain(cached.iter().cloned())
            .collect()
    };
    #[cfg(not(feature = "redis"))]
    let fleet_args = |_: &str| -> Vec<String> { Vec::new() };
    let upstream = ServerProcess::start_with("gateway-upstream", &[]);
    let url = format!("http://{}/", upstream.address);
    let gateways: Vec<Option<ServerProcess>> = subjects
        .iter()
        .map(|(name, _)| {
            let args: Vec<String> = std::iter::once(url.clone()).chain(fleet_args(name)).collect();
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            (*name != "straight").then(|| ServerProcess::start_with(&format!("gateway-{name}"), &args))
        })
        .collect();
    // samples[configuration][subject] = one run per round.
    let mut samples: Vec<Vec<Vec<GatewayRun>>> = vec![vec![Vec::new(); subjects.len()]; plan.len()];
    for round_number in 1..=rounds {
        for ((workload, in_flight, exchanges), samples) in plan.iter().zip(&mut samples) {
            let mut straight = (0.0, 0.0);
            for (((name, what), gateway), samples) in subjects.iter().zip(&gateways).zip(samples.iter_mut()) {
                if *workload == "BATCH" && !BATCH_SUBJECTS.contains(name) {
                    continue;
                }
                if *name == "chain" && *workload != CHAIN_WORKLOAD {
                    continue;
                }
                let process = gateway.as_ref().unwrap_or(&upstream);
                #[cfg(feature = "redis")]
                let mut fleet_redis = redis.as_mut().filter(|_| name.starts_with("fleet"));
                let mut marks: Vec<Mark> = Vec::with_capacity(2);
                let load = load::run(
                    Protocol::Http,
                    process.address,
                    *in_flight,
                    exchanges,
                    warmup,
                    duration,
                    || {
                        // Redis's INFO outside the window: before the CPU times at its start,
                        // after them at its end.
                        #[cfg(feature = "redis")]
                        let counted = match (&mut fleet_redis, marks.is_empty()) {
                            (Some(redis), true) => Some(redis.counters()),
                            _ => None,
                        };
                        // The cache's counters outside the window, as Redis's.
                        let before =
                            (*name == "chain" && marks.is_empty()).then(|| cache_hits(process.address));
                        let gateway = process.cpu();
                        let upstream_cpu = upstream.cpu();
                        #[cfg(feature = "redis")]
                        let redis = fleet_redis.as_mut().map(|redis| {
                            let cpu = redis.cpu();
                            (cpu, counted.unwrap_or_else(|| redis.counters()))
                        });
                        let hits = match before {
                            Some(hits) => hits,
                            None if *name == "chain" => cache_hits(process.address),
                            None => None,
                        };
                        marks.push(Mark {
                            gateway,
                            upstream: upstream_cpu,
                            hits,
                            #[cfg(feature = "redis")]
                            redis,
                        });
                    },
                );
                let requests = load.requests.max(1) as f64;
                let per_request_us = |from: Duration, to: Duration| {
                    round(to.saturating_sub(from).as_secs_f64() * 1e6 / requests, 2)
                };
                let us = |q: f64| load.histogram.value_at_quantile(q) as f64 / 1e3;
                let (p50, p99) = (us(0.5), us(0.99));
                if *name == "straight" {
                    straight = (p50, p99);
                }
                // The fleet subjects: Redis's CPU, round trips, scripts and commands, and the
                // upstream's CPU, per request.
                #[cfg(feature = "redis")]
                let fleet = match (marks[0].redis, marks[1].redis) {
                    (Some((cpu_before, before)), Some((cpu_after, after))) => {
                        let counted = before.until(&after);
                        Some((
                            per_request_us(cpu_before, cpu_after),
                            round(counted.reads as f64 / requests, 3),
                            round(counted.scripts as f64 / requests, 3),
                            round(counted.commands as f64 / requests, 2),
                            per_request_us(marks[0].upstream, marks[1].upstream),
                        ))
                    }
                    _ => None,
                };
                #[cfg(not(feature = "redis"))]
                let fleet: Option<(f64, f64, f64, f64, f64)> = None;
                // The chain subject: the share of requests its cache answered, and the
                // upstream's CPU per request (what the cache spares it).
                let chain = match (marks[0].hits, marks[1].hits) {
                    (Some(before), Some(after)) => Some((
                        round(after.saturating_sub(before) as f64 / requests, 4),
                        per_request_us(marks[0].upstream, marks[1].upstream),
                    )),
                    _ => None,
                };
                let run = GatewayRun {
                    workload,
                    implementation: name,
                    in_flight: *in_flight,
                    req_per_s: round(load.requests as f64 / load.seconds, 0),
                    added_p50_us: round(p50 - straight.0, 1),
                    added_p99_us: round(p99 - straight.1, 1),
                    cpu_us_per_req: per_request_us(marks[0].gateway, marks[1].gateway),
                    p50_us: round(p50, 1),
                    p99_us: round(p99, 1),
                    requests: load.requests,
                    what,
                    rounds: Vec::new(),
                    redis_cpu_us_per_req: fleet.map(|f| f.0),
                    redis_round_trips_per_req: fleet.map(|f| f.1),
                    redis_scripts_per_req: fleet.map(|f| f.2),
                    redis_commands_per_req: fleet.map(|f| f.3),
                    upstream_cpu_us_per_req: fleet.map(|f| f.4).or(chain.map(|c| c.1)),
                    cache_hit_rate: chain.map(|c| c.0),
                };
                let fleet = match fleet {
                    Some((redis, trips, scripts, commands, upstream)) => format!(
                        "; Redis CPU {redis:.2} µs/req, {trips:.3} round trips, {scripts:.3} scripts, \
                         {commands:.2} commands per request; upstream CPU {upstream:.2} µs/req"
                    ),
                    None => match chain {
                        Some((hits, upstream)) => format!(
                            "; {:.1}% answered from the cache; upstream CPU {upstream:.2} µs/req",
                            hits * 100.0
                        ),
                        None => String::new(),
                    },
                };
                println!(
                    "gateway: round {round_number}/{rounds} {:<3} {:>2} in flight {:<12}: {:>7.0} req/s, p50 {:>7.1} (+{:>6.1}) \
                     p99 {:>7.1} (+{:>6.1}) µs, CPU {:>6.2} µs/req{}{fleet}",
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
    drop(gateways);
    drop(upstream);
    let mut runs: Vec<GatewayRun> = samples
        .into_iter()
        .flatten()
        .filter(|rounds| !rounds.is_empty())
        .map(median_round)
        .collect();
    if chosen("GATEWAY_WORKLOADS", "HEDGE") {
        runs.extend(super::hedge::measure_hedging(config));
    }
    if chosen("GATEWAY_WORKLOADS", "SUBS") {
        runs.extend(super::subscribe::measure_subscriptions(config));
    }
    runs
}

/// The round with the median CPU per request, with every round's figure beside it.
fn median_round(mut samples: Vec<GatewayRun>) -> GatewayRun {
    samples.sort_by(|a, b| a.cpu_us_per_req.total_cmp(&b.cpu_us_per_req));
    let all: Vec<f64> = samples.iter().map(|run| run.cpu_us_per_req).collect();
    let mut median = samples.swap_remove(samples.len() / 2);
    median.rounds = all;
    median
}
