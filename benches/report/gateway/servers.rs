//! The gateway section's servers, each in a child process on one tokio thread (this bench
//! binary with `--transport-server gateway-KIND [UPSTREAM_URL [REDIS_URL [METHOD …]]]`): the
//! upstream, and the gateways in front of it (with the `redis` feature, the fleet's two too).

use std::collections::HashMap;
use std::convert::Infallible;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo};

use crate::transports::server::{announce, bind, run_child_server};

/// The W1 request's answer from the upstream.
pub(crate) const W1_RESULT: &str = r#""0x0234c8a3397aab58""#;

/// Request/answer pairs of the corpus: single requests with single answers, in file order.
pub(crate) fn corpus_pairs() -> Vec<(Vec<u8>, Vec<u8>)> {
    let Some(eth) = crate::common::workloads::eth() else {
        return Vec::new();
    };
    let mut pairs = Vec::new();
    let mut messages = eth.messages.iter().peekable();
    while let Some(message) = messages.next() {
        use crate::common::workloads::Kind;
        if message.kind != Kind::Request {
            continue;
        }
        if let Some(answer) = messages.next_if(|next| matches!(next.kind, Kind::Response)) {
            pairs.push((message.bytes.clone(), answer.bytes.clone()));
        }
    }
    pairs
}

/// Runs the server `kind` until stdin closes; prints `listening on ADDR` first.
pub(crate) fn serve(kind: &str, args: &[String]) {
    let upstream = args.first().cloned().unwrap_or_default();
    run_child_server(async move {
        match kind {
            "upstream" => self::upstream(None).await,
            "upstream-late" => self::upstream_late(None, true).await,
            "fast-only" | "no-hedge" | "hedge-p75" | "hedge-2ms" | "faster-2ms" => hedged(kind, args).await,
            "rpcwire" => rpcwire(&upstream).await,
            "value" => forwarder(&upstream, true).await,
            "floor" => forwarder(&upstream, false).await,
            "chain" => chain(&upstream).await,
            "ws-node" => super::subscribe::node(upstream.parse().expect("an interval in ms")).await,
            "subs" => super::subscribe::gateway(&upstream).await,
            #[cfg(feature = "redis")]
            "fleet" | "fleet-cached" => fleet(&upstream, &args[1], &args[2..]).await,
            other => panic!("unknown gateway server {other:?}"),
        }
    });
}

/// The upstream: rpcwire's `HttpServer` answering W1 and every corpus request with the
/// corpus's answer for the same method and params; over TLS with `tls`.
pub(crate) async fn upstream(tls: Option<rpcwire::transport::tls::ServerTls>) {
    upstream_late(tls, false).await;
}

/// [`upstream`], answering every fifth request 200 ms late when `late` (the hedging rows' slow
/// upstream).
async fn upstream_late(tls: Option<rpcwire::transport::tls::ServerTls>, late: bool) {
    type Answer = Result<rpcwire::JsonBytes, rpcwire::ErrorObject<'static>>;
    let mut answers: HashMap<(String, Vec<u8>), Answer> = HashMap::new();
    let w1 = crate::common::workloads::W1.as_bytes().to_vec();
    let w1_answer = format!(r#"{{"jsonrpc":"2.0","id":42,"result":{W1_RESULT}}}"#).into_bytes();
    for (request, answer) in std::iter::once((w1, w1_answer)).chain(corpus_pairs()) {
        let Ok(rpcwire::Message::Request(request)) =
            rpcwire::parse(&request).map(|p| p.single().expect("single"))
        else {
            continue;
        };
        let Ok(rpcwire::Message::Response(response)) =
            rpcwire::parse(&answer).map(|p| p.single().expect("single"))
        else {
            continue;
        };
        let key = (
            request.method().to_owned(),
            request
                .raw_params()
                .map(|p| p.get().as_bytes().to_vec())
                .unwrap_or_default(),
        );
        let value = match response.payload() {
            rpcwire::ResponsePayload::Result(result) => {
                Ok(rpcwire::JsonBytes::from(result.clone().into_owned()))
            }
            rpcwire::ResponsePayload::Error(error) => Err(error.clone().into_owned()),
        };
        answers.entry(key).or_insert(value);
    }
    // The corpus's chain is final up to its head (its "finalized" block is its latest, 0x36);
    // a gateway tracking heads asks for that block without its transactions.
    let finalized = (
        "eth_getBlockByNumber".to_owned(),
        br#"["finalized",true]"#.to_vec(),
    );
    if let Some(block) = answers.get(&finalized).cloned() {
        let without = (
            "eth_getBlockByNumber".to_owned(),
            br#"["finalized",false]"#.to_vec(),
        );
        answers.entry(without).or_insert(block);
    }
    let answers = std::sync::Arc::new(answers);
    let mut router = rpcwire::dispatch::Router::new();
    let calls = std::sync::atomic::AtomicU64::new(0);
    router.fallback_async(move |call: rpcwire::dispatch::RawCall| {
        let key = (
            call.method().to_owned(),
            call.params().map(|p| p.to_vec()).unwrap_or_default(),
        );
        let answer = answers.get(&key).cloned();
        let delay = (late && calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % 5 == 0)
            .then_some(std::time::Duration::from_millis(200));
        async move {
            if let Some(delay) = delay {
                tokio::time::sleep(delay).await;
            }
            answer.unwrap_or_else(|| Err(rpcwire::ErrorObject::method_not_found(&key.0)))
        }
    });
    let listener = bind().await;
    announce(listener.local_addr().expect("local address"));
    let mut server = rpcwire::transport::http::HttpServer::new(router).with_max_body(64 << 20);
    if let Some(tls) = tls {
        server = server.with_tls(tls);
    }
    server.serve(listener).await.expect("the upstream serves");
}

/// rpcwire's gateway as a user builds it: `proxy::Gateway` behind `HttpServer`.
async fn rpcwire(upstream: &str) {
    // An upstream that takes batches of a thousand (BATCH's): a client's goes up as one.
    let upstream = rpcwire::proxy::Upstream::address_limited(upstream, 64 << 20).unwrap();
    serve_gateway(upstream.with_max_batch(1000)).await;
}

/// The hedging rows' gateways: rpcwire's over `upstreams` (W1's method marked safe), hedged
/// as `kind` says (see `hedge.rs`).
async fn hedged(kind: &str, upstreams: &[String]) {
    use rpcwire::proxy::{Gateway, Hedge, RetryPolicy, Upstream, UpstreamGroup};
    let upstreams = upstreams
        .iter()
        .map(|url| Upstream::address_limited(url, 64 << 20).unwrap())
        .collect();
    let mut pool = UpstreamGroup::new(upstreams).with_retry(RetryPolicy::new().safe_method("eth_getBalance"));
    match kind {
        "hedge-p75" => pool = pool.with_hedge(Hedge::quantile(0.75, std::time::Duration::from_micros(100))),
        "hedge-2ms" => pool = pool.with_hedge(Hedge::after(std::time::Duration::from_millis(2))),
        "faster-2ms" => {
            pool = pool
                .with_hedge(Hedge::after(std::time::Duration::from_millis(2)))
                .prefer_faster(true)
        }
        _ => {}
    }
    let router = Gateway::new(pool).into_router();
    serve_router(router).await;
}

/// The method the `chain` subject answers with its cache's counters (`{"hits":…,"misses":…}`).
pub(crate) const CACHE_STATS: &str = "bench_cacheStats";

/// rpcwire's gateway as the `rpcwire` subject, with each upstream's head tracked (every
/// second) and a `FinalityCache` (its defaults: answers about finalized blocks kept for good,
/// about the head for 1 s, 64 MiB); its cache's counters at [`CACHE_STATS`].
async fn chain(upstream: &str) {
    use rpcwire::proxy::{FinalityCache, Gateway, HeadTracker, Upstream, UpstreamGroup};
    let upstream = Upstream::address_limited(upstream, 64 << 20).unwrap();
    let pool = std::sync::Arc::new(UpstreamGroup::new(vec![upstream]));
    let _tracking = HeadTracker::new(std::time::Duration::from_secs(1)).start(pool.clone());
    let mut router = rpcwire::dispatch::Router::new();
    let gateway = Gateway::from_shared(pool)
        .with_cache(FinalityCache::new())
        .install(&mut router);
    router.method(CACHE_STATS, move |_: rpcwire::dispatch::NoParams| {
        let stats = gateway.cache_stats().unwrap_or_default();
        Ok(serde_json::json!({"hits": stats.hits, "misses": stats.misses}))
    });
    serve_router(router).await;
}

/// The `chain` subject's cache hits so far (`None` when it does not answer).
pub(crate) fn cache_hits(address: std::net::SocketAddr) -> Option<u64> {
    use std::io::{Read, Write};
    let body = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{CACHE_STATS}"}}"#);
    let mut socket =
        std::net::TcpStream::connect_timeout(&address, std::time::Duration::from_secs(2)).ok()?;
    socket
        .set_read_timeout(Some(std::time::Duration::from_secs(5)))
        .ok()?;
    write!(
        socket,
        "POST / HTTP/1.1\r\nhost: x\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .ok()?;
    let mut answer = String::new();
    socket.read_to_string(&mut answer).ok()?;
    let body: serde_json::Value = serde_json::from_str(answer.split_once("\r\n\r\n")?.1).ok()?;
    body["result"]["hits"].as_u64()
}

/// `proxy::Gateway` to `upstream` behind `HttpServer` (bodies up to 64 MiB), announced.
pub(crate) async fn serve_gateway(upstream: rpcwire::proxy::Upstream) {
    use rpcwire::proxy::{Gateway, UpstreamGroup};
    let router = Gateway::new(UpstreamGroup::new(vec![upstream])).into_router();
    serve_router(router).await;
}

/// Serves `router` behind `HttpServer` (bodies up to 64 MiB) on a fresh port, announced: how
/// every rpcwire gateway of the section is served.
pub(crate) async fn serve_router(router: rpcwire::dispatch::Router) {
    let listener = bind().await;
    announce(listener.local_addr().expect("local address"));
    rpcwire::transport::http::HttpServer::new(router)
        .with_max_body(64 << 20)
        .serve(listener)
        .await
        .expect("the gateway serves");
}

/// The API key every request of the gateway section carries (the other subjects ignore it).
pub(crate) const FLEET_KEY_HEADER: &str = "X-Api-Key: bench-key-0123456789";

/// What the fleet subjects cache when told no method: one no workload sends, so that every
/// request looks its method up, misses and is forwarded.
#[cfg(feature = "redis")]
const NOT_SENT: &str = "bench_notSent";

/// rpcwire's gateway as the `rpcwire` subject builds it, its `HttpService` behind
/// `FleetLayer` (the gateway example's way with `--keys`, `--redis` and `--cache`): the key
/// checked, the rate limit shared through the Redis at `redis` (a rate so high nothing is
/// limited; with `LimitConfig`'s defaults, such a key is charged after the fact, every 5 ms),
/// and the answers of the methods `cached` (or of `NOT_SENT`) cached there for
/// good; served by `HttpServer::serve_layered` (the same connections as the `rpcwire`
/// subject's), as the example does.
#[cfg(feature = "redis")]
async fn fleet(upstream: &str, redis: &str, cached: &[String]) {
    use rpcwire::proxy::fleet::{ApiKeys, FleetLayer, LimitConfig, SharedLimiter};
    use rpcwire::proxy::{Gateway, Upstream, UpstreamGroup};
    let pool = UpstreamGroup::new(vec![Upstream::address_limited(upstream, 64 << 20).unwrap()]);
    let router = Gateway::new(pool).into_router();
    let service = rpcwire::transport::http::HttpService::new(router).with_max_body(64 << 20);
    let keys = ApiKeys::parse("bench-key-0123456789 1000000000 bench\n").expect("the bench's key");
    // A timeout no answer of a loaded 2-core machine reaches: past it the limiter would decide
    // locally for a second, which is not what is measured here.
    let config = LimitConfig {
        timeout: std::time::Duration::from_secs(1),
        ..LimitConfig::default()
    };
    let limiter = SharedLimiter::new(redis, config).expect("a Redis URL");
    let mut layer = FleetLayer::new(keys)
        .with_max_body(64 << 20)
        .with_limiter(limiter);
    if cached.is_empty() {
        layer = layer.with_cache(NOT_SENT, None);
    }
    for method in cached {
        layer = layer.with_cache(method.clone(), None);
    }
    let listener = bind().await;
    announce(listener.local_addr().expect("local address"));
    rpcwire::transport::http::HttpServer::from_service(service)
        .serve_layered(listener, layer)
        .await
        .expect("the gateway serves");
}

/// A hyper server that forwards each body to `upstream` with hyper's pooled client: as it
/// is (`decode: false`, the floor), or the usual way (`decode: true`: the body parsed into a
/// serde_json `Value`, the gateway's own id set, serialized; the answer parsed, the client's
/// id put back, serialized).
async fn forwarder(upstream: &str, decode: bool) {
    let client: Client<_, Full<Bytes>> = Client::builder(TokioExecutor::new()).build_http();
    forward_with(client, upstream, decode).await;
}

/// [`forwarder`] through `client` (plain, or hyper-rustls's connector for the TLS floors).
pub(crate) async fn forward_with<C>(client: Client<C, Full<Bytes>>, upstream: &str, decode: bool)
where
    C: hyper_util::client::legacy::connect::Connect + Clone + Send + Sync + 'static,
{
    let upstream: hyper::Uri = upstream.parse().expect("an upstream URL");
    let listener = bind().await;
    announce(listener.local_addr().expect("local address"));
    let next_id = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(1));
    loop {
        let Ok((socket, _)) = listener.accept().await else {
            continue;
        };
        let _ = socket.set_nodelay(true);
        let (client, upstream, next_id) = (client.clone(), upstream.clone(), next_id.clone());
        tokio::spawn(async move {
            let service = service_fn(move |request: Request<Incoming>| {
                let (client, upstream, next_id) = (client.clone(), upstream.clone(), next_id.clone());
                async move {
                    let body = request
                        .into_body()
                        .collect()
                        .await
                        .map(|b| b.to_bytes())
                        .unwrap_or_default();
                    let (body, client_id) = if decode {
                        let mut value: serde_json::Value = serde_json::from_slice(&body).expect("JSON");
                        let id = next_id.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let client_id = std::mem::replace(&mut value["id"], id.into());
                        (
                            Bytes::from(serde_json::to_vec(&value).expect("serializes")),
                            Some(client_id),
                        )
                    } else {
                        (body, None)
                    };
                    let forwarded = Request::post(upstream)
                        .header(hyper::header::CONTENT_TYPE, "application/json")
                        .body(Full::new(body))
                        .expect("a request");
                    let answer = client.request(forwarded).await.expect("the upstream answers");
                    let answer = answer.into_body().collect().await.expect("its body").to_bytes();
                    let answer = match client_id {
                        Some(client_id) => {
                            let mut value: serde_json::Value = serde_json::from_slice(&answer).expect("JSON");
                            value["id"] = client_id;
                            Bytes::from(serde_json::to_vec(&value).expect("serializes"))
                        }
                        None => answer,
                    };
                    let mut response = Response::new(Full::new(answer));
                    response.headers_mut().insert(
                        hyper::header::CONTENT_TYPE,
                        hyper::header::HeaderValue::from_static("application/json"),
                    );
                    Ok::<_, Infallible>(response)
                }
            });
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(socket), service)
                .await;
        });
    }
}
