//! A JSON-RPC gateway (`http` and `metrics` features): HTTP and WebSocket in front, upstreams behind, params
//! and results passed on as they came (`rpcwire::proxy`).
//!
//! ```sh
//! cargo run --release --features http,metrics --example gateway -- \
//!     --listen 127.0.0.1:8546 \
//!     --upstream http://127.0.0.1:8545/ \
//!     --upstream "stdio:target/release/examples/spec_server --framing ndjson" \
//!     --safe subtract --safe get_data
//! curl -s localhost:8546 -H 'content-type: application/json' \
//!      -d '{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}'
//! ```
//!
//! Upstreams: `http://…`, `https://…` (HTTP/2 when the upstream offers it), `ws://…`,
//! `wss://…`, `tcp://HOST:PORT` (NDJSON), or `stdio:` followed by a
//! command whose stdin and stdout speak NDJSON (started again if it exits); `LABEL=URL`
//! names one (by default its host and port: the URL itself, where providers put API keys,
//! appears in no answer, metric or log line), and `${NAME}` in a URL is the environment
//! variable `NAME` (`--upstream 'https://eth.example/v3/${PROVIDER_KEY}'`), so that keys stay
//! out of command lines. Requests go to
//! the upstreams in turn; one that never reached its upstream is sent to the next, one that
//! may have reached it only for the methods given with `--safe`. An upstream over its rate
//! limit (HTTP 429, or -32005 in an answer) is left alone for its `Retry-After` (1 s when it
//! does not say, 60 s at most) and the request goes to the next one; when every upstream is
//! over its limit the client gets -32005 with the upstream's message and data, a request alone
//! in its body as HTTP 429 with `Retry-After`. Clients on WebSocket subscribe with
//! `eth_subscribe` through the `ws://` and `wss://` upstreams: each subscription gets the
//! gateway's own id, notifications go to the client that subscribed, a subscription ends
//! upstream when its client unsubscribes or leaves, and one whose upstream drops is made again
//! on another (the client keeps its id). `--deny METHOD` refuses a
//! method (-32601); `--coalesce` shares one upstream call between identical calls under way;
//! `--timeout-ms` bounds each attempt; `--max-body` bounds requests, `--max-response` each
//! upstream answer (16 MiB by default). A client's batch goes upstream as one batch, in
//! batches of at most `--max-batch` (100 by default) when it is larger. `--hedge MS` (or
//! `--hedge p95`: the upstream's 95th percentile of its recent latencies) sends a call of a
//! `--safe` method to a second upstream when the first has not answered by then; the first
//! answer wins. `--prefer-faster` sends each call first to the upstream answering fastest
//! lately (one call in 32 still in turn). `--route METHOD=LABEL` (repeated: several labels) sends a method to the
//! upstreams of those labels only (say, `eth_sendRawTransaction` to one provider,
//! `debug_traceTransaction` to an archive node).
//!
//! Chain-aware (Ethereum-style upstreams): `--track-heads MS` polls each upstream's latest
//! and finalized block (`eth_blockNumber`, `eth_getBlockByNumber("finalized")`; an upstream
//! without the tag is taken final `--finality-depth BLOCKS` behind its head, 1024 by default);
//! `--max-lag BLOCKS` sends calls to an upstream that far behind the highest only when no
//! other would take them; `--finality-cache` keeps answers about finalized blocks for good and
//! about the head for `--head-ttl-ms` (1000), never `null`s, errors, `pending` or writes, up to
//! `--cache-bytes` (64 MiB) here and, with `--redis`, in the fleet's Redis too;
//! `--log-chunk BLOCKS` splits an `eth_getLogs` over a wider range of block numbers into
//! requests of that many and answers with their logs in order. `--max-lag` and
//! `--finality-cache` poll every second unless `--track-heads` says otherwise.
//!
//! With `--admin` the gateway answers
//! `gateway_upstreams` itself: each upstream's name and counters (off by default: any client
//! could call it). `--metrics ADDRESS` serves the
//! `rpcwire::proxy` metrics (per upstream and method: attempts by outcome, latency, in
//! flight; retries, coalesced and refused calls) as Prometheus text at `GET /metrics` there,
//! and prints `metrics on ADDRESS`. Prints `listening on ADDRESS` once it accepts
//! connections. An address it cannot use stops it at start-up with the reason.
//!
//! TLS: `--tls-cert PEM --tls-key PEM` serves HTTPS and WSS (the files are read again when
//! they change); `--ca PEM` trusts an authority besides the system's roots for `https://`
//! and `wss://` upstreams, `--webpki-roots` Mozilla's roots too, and `--client-cert PEM
//! --client-key PEM` is shown to upstreams that ask for a client certificate.
//!
//! A fleet (with the `redis` feature: several instances behind a load balancer, one Redis):
//! `--keys FILE` asks every request for an API key (`Authorization: Bearer KEY`,
//! `x-api-key: KEY` or the path `/KEY`; lines `KEY RATE_PER_SECOND [LABEL]`, 401 otherwise),
//! or `--keys-from-redis HASH` (fields: the keys' SHA-256 in hex, values `RATE [LABEL]`; read
//! again every 10 s);
//! `--redis redis://HOST:PORT/` limits each key to its rate across every instance (429 with
//! `Retry-After` and -32005 per request) and shares the upstreams' breakers (an upstream
//! benched by one instance is benched by all, and probed back by one),
//! `--weight METHOD=COST` makes a method count more,
//! `--cache METHOD=SECONDS` (0: for good) caches its answers for the whole fleet;
//! `--on-redis-down open|closed` (open: each instance at the rate divided by `--instances N`;
//! closed: 503) and `--redis-timeout-ms MS` (50) say what happens when Redis does not answer.
//! A `rediss://` URL speaks TLS to Redis (the system's roots, or `--redis-ca PEM`'s); `${NAME}`
//! in it is read from the environment, as in upstream URLs.

use std::io::Write as _;
use std::process::{ExitCode, Stdio};
use std::time::Duration;

#[path = "common/config.rs"]
mod config;
#[path = "common/env.rs"]
mod env;
#[cfg(feature = "redis")]
#[path = "common/fleet.rs"]
mod fleet;
#[path = "common/prometheus.rs"]
mod prometheus;
#[path = "common/tls.rs"]
mod tls;
use prometheus::serve_metrics;

use rpcwire::dispatch::{NoParams, Router};
use rpcwire::frame::Framing;
use rpcwire::proxy::{Dial, Gateway, RetryPolicy, Upstream, UpstreamGroup};
use rpcwire::transport::http::{HttpServer, DEFAULT_MAX_BODY};
use rpcwire::transport::{AnyTransport, Peer};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const USAGE: &str = "usage: gateway [--config FILE] [--check] [--listen ADDRESS] --upstream [LABEL=]URL [--upstream [LABEL=]URL …] [--safe METHOD …] \
                     [--deny METHOD …] [--coalesce] [--admin] [--timeout-ms MS] [--max-body BYTES] [--max-response BYTES] [--max-batch N] [--hedge MS|pNN] [--prefer-faster] [--metrics ADDRESS] \
                     [--route METHOD=LABEL …] [--track-heads MS] [--max-lag BLOCKS] [--finality-depth BLOCKS] \
                     [--finality-cache [--head-ttl-ms MS] [--cache-bytes BYTES]] [--log-chunk BLOCKS] \
                     [--keys FILE | --keys-from-redis HASH] [--redis URL [--redis-ca PEM] [--on-redis-down open|closed] [--instances N] [--redis-timeout-ms MS] \
                     [--cache METHOD=SECONDS …]] [--weight METHOD=COST …]] \
                     [--tls-cert PEM --tls-key PEM] [--ca PEM …] [--webpki-roots] [--client-cert PEM --client-key PEM]";

struct Arguments {
    listen: String,
    upstreams: Vec<String>,
    safe: Vec<String>,
    deny: Vec<String>,
    coalesce: bool,
    admin: bool,
    timeout: Duration,
    max_body: usize,
    max_response: usize,
    max_batch: usize,
    hedge: Option<rpcwire::proxy::Hedge>,
    prefer_faster: bool,
    metrics: Option<String>,
    /// `--route METHOD=LABEL`: methods sent to the upstreams of those labels only.
    routes: Vec<(String, String)>,
    chain: ChainOptions,
    /// `--check`: validate, print what it would serve, and exit.
    check: bool,
    tls: tls::TlsOptions,
    #[cfg(feature = "redis")]
    fleet: fleet::FleetOptions,
}

fn arguments() -> Result<Arguments, String> {
    let mut parsed = Arguments {
        listen: "127.0.0.1:8546".to_owned(),
        upstreams: Vec::new(),
        safe: Vec::new(),
        deny: Vec::new(),
        coalesce: false,
        admin: false,
        timeout: rpcwire::proxy::DEFAULT_ATTEMPT_TIMEOUT,
        max_body: DEFAULT_MAX_BODY,
        max_response: rpcwire::proxy::DEFAULT_MAX_RESPONSE,
        max_batch: rpcwire::proxy::DEFAULT_MAX_BATCH,
        hedge: None,
        prefer_faster: false,
        metrics: None,
        routes: Vec::new(),
        chain: ChainOptions::default(),
        check: false,
        tls: tls::TlsOptions::default(),
        #[cfg(feature = "redis")]
        fleet: fleet::FleetOptions::default(),
    };
    let mut args: std::collections::VecDeque<String> = std::env::args().skip(1).collect();
    while let Some(arg) = args.pop_front() {
        if arg == "--config" {
            // The file's settings are flags too, taken where `--config` stands.
            let path = args.pop_front().ok_or("--config needs a file")?;
            let text = std::fs::read_to_string(&path).map_err(|error| format!("--config {path}: {error}"))?;
            let flags = config::flags(&text).map_err(|problem| format!("--config {path}: {problem}"))?;
            for flag in flags.into_iter().rev() {
                args.push_front(flag);
            }
            continue;
        }
        let mut value = |name: &str| args.pop_front().ok_or(format!("{name} needs a value"));
        #[cfg(feature = "redis")]
        if parsed.fleet.take(&arg, &mut value)? {
            continue;
        }
        if parsed.tls.take(&arg, &mut value)? {
            continue;
        }
        match arg.as_str() {
            "--listen" => parsed.listen = value("--listen")?,
            "--upstream" => parsed.upstreams.push(value("--upstream")?),
            "--safe" => parsed.safe.push(value("--safe")?),
            "--deny" => parsed.deny.push(value("--deny")?),
            "--coalesce" => parsed.coalesce = true,
            "--prefer-faster" => parsed.prefer_faster = true,
            "--check" => parsed.check = true,
            "--admin" => parsed.admin = true,
            "--metrics" => parsed.metrics = Some(value("--metrics")?),
            "--timeout-ms" => {
                let ms = value("--timeout-ms")?;
                parsed.timeout =
                    Duration::from_millis(ms.parse().map_err(|e| format!("--timeout-ms {ms}: {e}"))?);
            }
            "--max-body" => {
                let bytes = value("--max-body")?;
                parsed.max_body = bytes.parse().map_err(|e| format!("--max-body {bytes}: {e}"))?;
            }
            "--max-response" => {
                let bytes = value("--max-response")?;
                parsed.max_response = bytes
                    .parse()
                    .map_err(|e| format!("--max-response {bytes}: {e}"))?;
            }
            "--hedge" => parsed.hedge = Some(hedge(&value("--hedge")?)?),
            "--max-batch" => {
                let count = value("--max-batch")?;
                parsed.max_batch = count.parse().map_err(|e| format!("--max-batch {count}: {e}"))?;
            }
            "--route" => {
                let pair = value("--route")?;
                let (method, label) = pair
                    .split_once('=')
                    .ok_or_else(|| format!("--route {pair}: expected METHOD=LABEL"))?;
                parsed.routes.push((method.to_owned(), label.to_owned()));
            }
            "--finality-cache" => parsed.chain.cache = true,
            "--track-heads" | "--max-lag" | "--finality-depth" | "--head-ttl-ms" | "--cache-bytes"
            | "--log-chunk" => {
                let given = value(&arg)?;
                let number: u64 = given.parse().map_err(|e| format!("{arg} {given}: {e}"))?;
                let slot = match arg.as_str() {
                    "--track-heads" => &mut parsed.chain.track_heads_ms,
                    "--max-lag" => &mut parsed.chain.max_lag,
                    "--finality-depth" => &mut parsed.chain.finality_depth,
                    "--head-ttl-ms" => &mut parsed.chain.head_ttl_ms,
                    "--cache-bytes" => &mut parsed.chain.cache_bytes,
                    _ => &mut parsed.chain.log_chunk,
                };
                *slot = Some(number);
            }
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if parsed.upstreams.is_empty() {
        return Err("at least one --upstream is needed".to_owned());
    }
    Ok(parsed)
}

/// The chain-aware settings: each upstream's head polled every `track_heads_ms` (1 s when
/// only `max_lag` or the cache asks for it), upstreams lagging more than `max_lag` blocks
/// avoided, answers kept by their blocks' finality, wide `eth_getLogs` split.
#[derive(Default)]
struct ChainOptions {
    track_heads_ms: Option<u64>,
    max_lag: Option<u64>,
    finality_depth: Option<u64>,
    cache: bool,
    head_ttl_ms: Option<u64>,
    cache_bytes: Option<u64>,
    log_chunk: Option<u64>,
}

impl ChainOptions {
    /// How often heads are polled, when anything needs them.
    fn tracking(&self) -> Option<rpcwire::proxy::HeadTracker> {
        let every = self
            .track_heads_ms
            .or((self.max_lag.is_some() || self.cache).then_some(1000))?;
        let tracker = rpcwire::proxy::HeadTracker::new(Duration::from_millis(every));
        Some(match self.finality_depth {
            Some(depth) => tracker.with_finality_depth(depth),
            None => tracker,
        })
    }

    /// The cache `--finality-cache` asks for.
    fn cache(&self) -> Option<rpcwire::proxy::FinalityCache> {
        if !self.cache {
            return None;
        }
        let mut cache = rpcwire::proxy::FinalityCache::new();
        if let Some(ms) = self.head_ttl_ms {
            cache = cache.with_head_ttl(Duration::from_millis(ms));
        }
        if let Some(bytes) = self.cache_bytes {
            cache = cache.with_max_bytes(usize::try_from(bytes).unwrap_or(usize::MAX));
        }
        Some(cache)
    }
}

/// The groups `--route` asks for: for each method, a group of its own over the upstreams of
/// the labels named (each connected apart from the default group's).
fn routed(arguments: &Arguments, dial: &Dial) -> Result<Vec<(Vec<String>, UpstreamGroup)>, String> {
    let mut by_labels: Vec<(Vec<String>, Vec<String>)> = Vec::new();
    let mut methods: Vec<(String, Vec<String>)> = Vec::new();
    for (method, label) in &arguments.routes {
        match methods.iter_mut().find(|(known, _)| known == method) {
            Some((_, labels)) => labels.push(label.clone()),
            None => methods.push((method.clone(), vec![label.clone()])),
        }
    }
    for (method, labels) in methods {
        match by_labels.iter_mut().find(|(known, _)| *known == labels) {
            Some((_, routed)) => routed.push(method),
            None => by_labels.push((labels, vec![method])),
        }
    }
    let mut groups = Vec::new();
    for (labels, methods) in by_labels {
        let mut upstreams = Vec::new();
        for label in &labels {
            let given = arguments
                .upstreams
                .iter()
                .find(|given| matches!(given.split_once('='), Some((named, _)) if named == label))
                .ok_or_else(|| format!("--route: no upstream is labelled {label}"))?;
            upstreams.push(upstream(given, dial)?.with_max_batch(arguments.max_batch));
        }
        groups.push((methods, group(arguments, upstreams)));
    }
    Ok(groups)
}

/// A group over `upstreams` with the settings of the command line.
fn group(arguments: &Arguments, upstreams: Vec<Upstream>) -> UpstreamGroup {
    let mut pool = UpstreamGroup::new(upstreams)
        .with_timeout(arguments.timeout)
        .with_retry(RetryPolicy::new().safe_methods(arguments.safe.iter().map(String::as_str)));
    if let Some(hedge) = arguments.hedge {
        pool = pool.with_hedge(hedge);
    }
    if let Some(blocks) = arguments.chain.max_lag {
        pool = pool.with_max_lag(blocks);
    }
    pool.prefer_faster(arguments.prefer_faster)
}

/// `--hedge MS` (a second attempt after MS milliseconds) or `--hedge pNN` (after the first
/// upstream's NNth percentile of its recent latencies, at least 1 ms).
fn hedge(given: &str) -> Result<rpcwire::proxy::Hedge, String> {
    let wrong = |e: std::num::ParseIntError| format!("--hedge {given}: {e} (MS, or pNN for a percentile)");
    match given.strip_prefix('p') {
        Some(percentile) => {
            let percentile: u8 = percentile.parse().map_err(wrong)?;
            Ok(rpcwire::proxy::Hedge::quantile(
                f64::from(percentile.min(100)) / 100.0,
                Duration::from_millis(1),
            ))
        }
        None => Ok(rpcwire::proxy::Hedge::after(Duration::from_millis(
            given.parse().map_err(wrong)?,
        ))),
    }
}

/// An upstream from `[LABEL=]ADDRESS`, its `${NAME}`s replaced by the environment's;
/// `stdio:COMMAND` runs the command (again whenever the last one has exited) and speaks
/// NDJSON over its stdin and stdout.
fn upstream(given: &str, dial: &Dial) -> Result<Upstream, String> {
    let (label, address) = labelled(given)?;
    let upstream = stdio_or_dial(&address, dial)?;
    Ok(match label {
        Some(label) => upstream.with_name(label),
        None => upstream,
    })
}

/// `[LABEL=]ADDRESS` as its label and its address, `${NAME}`s replaced.
fn labelled(given: &str) -> Result<(Option<&str>, String), String> {
    // A label is a word before `=` with no `:` or `/` (a URL's query may hold `=`).
    let (label, address) = match given.split_once('=') {
        Some((label, address)) if !label.is_empty() && !label.contains([':', '/']) => (Some(label), address),
        _ => (None, given),
    };
    let address = env::expand(address).map_err(|problem| format!("--upstream: {problem}"))?;
    Ok((label, address))
}

/// The WebSocket upstreams among `given` (`ws://`, `wss://`): they serve `eth_subscribe`.
fn subscriptions(given: &[String], dial: &Dial) -> Result<Option<rpcwire::proxy::Subscriptions>, String> {
    let mut pushing = Vec::new();
    for given in given {
        let (_, address) = labelled(given)?;
        let scheme = address
            .split_once("://")
            .map(|(scheme, _)| scheme.to_ascii_lowercase());
        if matches!(scheme.as_deref(), Some("ws" | "wss")) {
            pushing.push(address);
        }
    }
    if pushing.is_empty() {
        return Ok(None);
    }
    rpcwire::proxy::Subscriptions::new(pushing.iter().map(String::as_str), dial)
        .map(Some)
        .map_err(|problem| format!("--upstream: {problem}"))
}

/// The upstream at `address` (see [`upstream`]).
fn stdio_or_dial(address: &str, dial: &Dial) -> Result<Upstream, String> {
    let max_response = dial.max_response();
    let Some(command) = address.strip_prefix("stdio:") else {
        return Upstream::dial(address, dial).map_err(|error| format!("--upstream: {error}"));
    };
    let words: Vec<String> = command.split_whitespace().map(str::to_owned).collect();
    Ok(Upstream::new(
        &rpcwire::proxy::upstream_label(address),
        move || {
            let words = words.clone();
            Peer::builder().connect(
                async move {
                    let (program, arguments) = words.split_first().ok_or_else(|| {
                        std::io::Error::new(std::io::ErrorKind::InvalidInput, "stdio: needs a command")
                    })?;
                    let mut child = tokio::process::Command::new(program)
                        .args(arguments)
                        .stdin(Stdio::piped())
                        .stdout(Stdio::piped())
                        .stderr(Stdio::inherit())
                        .kill_on_drop(true)
                        .spawn()?;
                    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
                        return Err(std::io::Error::other("the child's pipes are missing"));
                    };
                    // The child lives as long as it runs; it ends when its stdin closes.
                    tokio::spawn(async move { child.wait().await });
                    Ok(AnyTransport::stream(stdout, stdin, Framing::Ndjson).with_max_frame(max_response))
                },
                // Answers are parsed up to the response limit, like the transport's frames.
                Router::with_limits(rpcwire::Limits::default().with_max_size(max_response)),
            )
        },
    ))
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let arguments = match arguments() {
        Ok(arguments) => arguments,
        Err(problem) => {
            if !problem.is_empty() {
                eprintln!("gateway: {problem}");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let (client_tls, server_tls) = match (arguments.tls.client(), arguments.tls.server()) {
        (Ok(client), Ok(server)) => (client, server),
        (Err(problem), _) | (_, Err(problem)) => {
            eprintln!("gateway: {problem}");
            return ExitCode::from(2);
        }
    };
    let mut dial = Dial::new().with_max_response(arguments.max_response);
    if let Some(tls) = client_tls {
        dial = dial.with_tls(tls);
    }
    let upstreams = match arguments
        .upstreams
        .iter()
        .map(|address| upstream(address, &dial).map(|upstream| upstream.with_max_batch(arguments.max_batch)))
        .collect::<Result<Vec<_>, _>>()
    {
        Ok(upstreams) => upstreams,
        Err(problem) => {
            eprintln!("gateway: {problem}");
            return ExitCode::from(2);
        }
    };
    let pool = std::sync::Arc::new(group(&arguments, upstreams));
    let routes = match routed(&arguments, &dial) {
        Ok(routes) => routes,
        Err(problem) => {
            eprintln!("gateway: {problem}");
            return ExitCode::from(2);
        }
    };
    let mut router = Router::with_limits(rpcwire::Limits::default().with_max_size(arguments.max_body));
    let mut gateway = Gateway::from_shared(pool.clone())
        .deny(arguments.deny.iter().map(String::as_str))
        .coalesce(arguments.coalesce);
    // Each group's heads polled while the gateway runs (the trackers held until it ends).
    let tracker = arguments.chain.tracking();
    let mut tracking = Vec::new();
    for (methods, routed) in routes {
        let routed = std::sync::Arc::new(routed);
        if let (Some(tracker), false) = (tracker, arguments.check) {
            tracking.push(tracker.start(routed.clone()));
        }
        gateway = gateway.route_shared(methods.iter().map(String::as_str), routed);
    }
    if let (Some(tracker), false) = (tracker, arguments.check) {
        tracking.push(tracker.start(pool.clone()));
    }
    if let Some(cache) = arguments.chain.cache() {
        #[cfg(feature = "redis")]
        let cache = match arguments.fleet.store() {
            Ok(Some(store)) => cache.shared_through(store),
            Ok(None) => cache,
            Err(problem) => {
                eprintln!("gateway: {problem}");
                return ExitCode::from(2);
            }
        };
        gateway = gateway.with_cache(cache);
    }
    if let Some(blocks) = arguments.chain.log_chunk {
        gateway = gateway.with_log_chunks(blocks);
    }
    match subscriptions(&arguments.upstreams, &dial) {
        Ok(Some(subscriptions)) => gateway = gateway.with_subscriptions(subscriptions),
        Ok(None) => {}
        Err(problem) => {
            eprintln!("gateway: {problem}");
            return ExitCode::from(2);
        }
    }
    gateway.install(&mut router);
    if arguments.check {
        let names: Vec<&str> = pool.upstreams().iter().map(|upstream| upstream.name()).collect();
        println!(
            "gateway: config ok: {} upstreams ({})",
            names.len(),
            names.join(", ")
        );
        return ExitCode::SUCCESS;
    }
    if let Some(address) = &arguments.metrics {
        if let Err(error) = serve_metrics(address).await {
            eprintln!("gateway: cannot serve metrics on {address}: {error}");
            return ExitCode::FAILURE;
        }
    }
    let listener = match tokio::net::TcpListener::bind(&arguments.listen).await {
        Ok(listener) => listener,
        Err(error) => {
            eprintln!("gateway: cannot listen on {}: {error}", arguments.listen);
            return ExitCode::FAILURE;
        }
    };
    #[cfg(feature = "redis")]
    let _health = match arguments.fleet.health(&pool) {
        Ok(health) => health,
        Err(problem) => {
            eprintln!("gateway: {problem}");
            return ExitCode::from(2);
        }
    };
    if arguments.admin {
        admin(&mut router, pool);
    }
    if let Ok(address) = listener.local_addr() {
        println!("listening on {address}");
        let _ = std::io::stdout().flush();
    }
    let mut server = HttpServer::new(router).with_max_body(arguments.max_body);
    if let Some(tls) = server_tls {
        server = server.with_tls(tls);
    }
    #[cfg(feature = "redis")]
    if arguments.fleet.any() {
        let layer = match arguments.fleet.layer(arguments.max_body).await {
            Ok(layer) => layer,
            Err(problem) => {
                eprintln!("gateway: {problem}");
                return ExitCode::from(2);
            }
        };
        return match server.serve_layered(listener, layer).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("gateway: {error}");
                ExitCode::FAILURE
            }
        };
    }
    match server.serve(listener).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("gateway: {error}");
            ExitCode::FAILURE
        }
    }
}

/// `gateway_upstreams`: each upstream's name (never its URL) and counters (`--admin`).
fn admin(router: &mut Router, pool: std::sync::Arc<UpstreamGroup>) {
    router.method("gateway_upstreams", move |_: NoParams| {
        let stats: Vec<_> = pool
            .upstreams()
            .iter()
            .map(|u| {
                let s = u.stats();
                serde_json::json!({
                    "name": u.name(), "requests": s.requests, "answered": s.answered,
                    "upstream_errors": s.upstream_errors, "not_reached": s.not_reached,
                    "no_answer": s.no_answer, "limited": s.limited, "connects": s.connects,
                    "in_flight": s.in_flight, "benched": s.benched,
                    "paused_ms": s.paused_for.map(|wait| wait.as_millis() as u64),
                    "latest_block": s.latest_block, "finalized_block": s.finalized_block,
                })
            })
            .collect();
        Ok(stats)
    });
}
