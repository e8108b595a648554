//! Chain-aware forwarding (`proxy`): a `HeadTracker` polls each upstream's latest and
//! finalized block; the group routes away from upstreams that lag and uses them only when no
//! other would take the call; the gateway's `FinalityCache` keeps answers about finalized
//! blocks for good and about the head briefly (never `null`s or errors), here and — with the
//! fleet — in Redis; a wide `eth_getLogs` is split into ranges the upstream accepts.
//! Upstreams are axum servers on 127.0.0.1 answering as an Ethereum node does, each counting
//! the calls it got by method.
#![cfg(feature = "http")]

#[cfg(feature = "redis")]
#[path = "support/python_peer.rs"]
mod python_peer;
#[cfg(feature = "redis")]
#[path = "support/redis_server.rs"]
mod redis_server;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::IntoResponse;
use rpcwire::dispatch::Router;
use rpcwire::proxy::{FinalityCache, Gateway, HeadTracker, RetryPolicy, Upstream, UpstreamGroup};
use serde_json::{json, Value};

/// A node: its name (what `eth_getBalance` answers, to tell who answered), its latest and
/// finalized blocks, whether it answers for the `finalized` tag, the widest log range it
/// serves, and the calls it got by method.
struct Node {
    url: String,
    state: Arc<NodeState>,
}

struct NodeState {
    name: &'static str,
    latest: AtomicU64,
    finalized: AtomicU64,
    knows_finalized: AtomicBool,
    limited: AtomicBool,
    /// Answers `eth_getLogs` with an object, not a list.
    odd_logs: AtomicBool,
    max_log_range: u64,
    calls: Mutex<HashMap<String, usize>>,
}

impl Node {
    async fn start(name: &'static str, latest: u64, finalized: u64) -> Node {
        let state = Arc::new(NodeState {
            name,
            latest: AtomicU64::new(latest),
            finalized: AtomicU64::new(finalized),
            knows_finalized: AtomicBool::new(true),
            limited: AtomicBool::new(false),
            odd_logs: AtomicBool::new(false),
            max_log_range: 1000,
            calls: Mutex::default(),
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/", listener.local_addr().unwrap());
        let shared = state.clone();
        let app = axum::Router::new().route(
            "/",
            axum::routing::post(move |body: axum::body::Bytes| {
                let state = shared.clone();
                async move { state.answer(&body) }
            }),
        );
        tokio::spawn(async move { axum::serve(listener, app).await });
        Node { url, state }
    }

    /// How many calls of `method` it got.
    fn calls(&self, method: &str) -> usize {
        self.state.calls.lock().unwrap().get(method).copied().unwrap_or(0)
    }

    fn upstream(&self) -> Upstream {
        Upstream::address(&self.url).unwrap()
    }
}

impl NodeState {
    fn answer(&self, body: &[u8]) -> axum::response::Response {
        if self.limited.load(Ordering::SeqCst) {
            let mut headers = HeaderMap::new();
            headers.insert("retry-after", HeaderValue::from_static("30"));
            return (StatusCode::TOO_MANY_REQUESTS, headers, "").into_response();
        }
        let request: Value = serde_json::from_slice(body).unwrap();
        let answer = match &request {
            Value::Array(batch) => Value::Array(batch.iter().map(|one| self.one(one)).collect()),
            one => self.one(one),
        };
        let mut headers = HeaderMap::new();
        headers.insert("content-type", HeaderValue::from_static("application/json"));
        (StatusCode::OK, headers, answer.to_string()).into_response()
    }

    fn one(&self, request: &Value) -> Value {
        let method = request["method"].as_str().unwrap_or_default();
        let params = &request["params"];
        // A block asked for by number or tag is counted apart: "eth_getBlockByNumber 0x50".
        let counted = match (method, params[0].as_str()) {
            ("eth_getBlockByNumber", Some(block)) => format!("{method} {block}"),
            _ => method.to_owned(),
        };
        *self.calls.lock().unwrap().entry(counted).or_default() += 1;
        let hex = |number: u64| json!(format!("{number:#x}"));
        let number = |value: &Value| u64::from_str_radix(value.as_str()?.strip_prefix("0x")?, 16).ok();
        let latest = self.latest.load(Ordering::SeqCst);
        let result = match method {
            "eth_chainId" => json!("0x1"),
            "eth_blockNumber" => hex(latest),
            "eth_getBalance" => json!(self.name),
            "eth_getBlockByNumber" => match params[0].as_str() {
                Some("finalized") if !self.knows_finalized.load(Ordering::SeqCst) => {
                    return json!({"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32602, "message": "invalid block tag"}})
                }
                Some("finalized") => json!({"number": hex(self.finalized.load(Ordering::SeqCst))}),
                Some("latest") => json!({"number": hex(latest)}),
                _ => match number(&params[0]) {
                    Some(block) if block <= latest => json!({"number": hex(block), "from": self.name}),
                    _ => Value::Null,
                },
            },
            "eth_getTransactionReceipt" => json!({"blockNumber": "0x5", "transactionHash": params[0]}),
            "eth_getLogs" if self.odd_logs.load(Ordering::SeqCst) => json!({"logs": []}),
            "eth_getLogs" => {
                let (from, to) = (
                    number(&params[0]["fromBlock"]).unwrap(),
                    number(&params[0]["toBlock"]).unwrap(),
                );
                if to - from + 1 > self.max_log_range {
                    return json!({"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32005, "message": "query exceeds max block range 1000"}});
                }
                Value::Array(
                    (from..=to)
                        .map(|block| json!({"blockNumber": hex(block)}))
                        .collect(),
                )
            }
            _ => {
                return json!({"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32601, "message": "no such method"}})
            }
        };
        json!({"jsonrpc": "2.0", "id": request["id"], "result": result})
    }
}

/// Waits (at most 5 s) until `done` holds.
async fn until(what: &str, done: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !done() {
        assert!(Instant::now() < deadline, "gave up waiting: {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn balance_from(group: &UpstreamGroup) -> String {
    let params = rpcwire::RawJson::new(r#"["0xab","latest"]"#).unwrap();
    group
        .call("eth_getBalance", Some(&params))
        .await
        .unwrap()
        .decode()
        .unwrap()
}

#[tokio::test]
async fn an_upstream_that_lags_gets_calls_only_when_no_other_would_take_them() {
    let ahead = Node::start("ahead", 100, 90).await;
    let behind = Node::start("behind", 50, 40).await;
    let group = Arc::new(
        UpstreamGroup::new(vec![ahead.upstream(), behind.upstream()])
            .with_retry(RetryPolicy::new().with_backoff(Duration::ZERO, Duration::ZERO))
            .with_max_lag(10),
    );
    let _tracking = HeadTracker::new(Duration::from_millis(20)).start(group.clone());
    until("both heads known", || {
        group.upstreams().iter().all(|u| u.stats().latest_block.is_some())
    })
    .await;
    assert_eq!(group.latest_block(), Some(100));
    assert_eq!(
        group.finalized_block(),
        Some(90),
        "the lagging upstream's finality not counted"
    );
    assert_eq!(group.upstreams()[1].stats().finalized_block, Some(40));
    for _ in 0..6 {
        assert_eq!(balance_from(&group).await, "ahead");
    }
    assert_eq!(behind.calls("eth_getBalance"), 0);

    // The one ahead is over its limit: the one behind is better than no answer.
    ahead.state.limited.store(true, Ordering::SeqCst);
    assert_eq!(balance_from(&group).await, "behind");
    ahead.state.limited.store(false, Ordering::SeqCst);

    // It catches up: both take calls again (the paused one once its pause is over: a new
    // group over the same nodes).
    behind.state.latest.store(95, Ordering::SeqCst);
    let fresh = Arc::new(UpstreamGroup::new(vec![ahead.upstream(), behind.upstream()]).with_max_lag(10));
    let _tracking = HeadTracker::new(Duration::from_millis(20)).start(fresh.clone());
    until("heads known", || {
        fresh.upstreams().iter().all(|u| u.stats().latest_block.is_some())
    })
    .await;
    let mut seen = Vec::new();
    for _ in 0..4 {
        seen.push(balance_from(&fresh).await);
    }
    assert!(
        seen.iter().any(|who| who == "ahead") && seen.iter().any(|who| who == "behind"),
        "{seen:?}"
    );
}

#[tokio::test]
async fn an_upstream_without_the_finalized_tag_is_taken_final_a_depth_behind_its_head() {
    let node = Node::start("old", 2000, 0).await;
    node.state.knows_finalized.store(false, Ordering::SeqCst);
    let group = Arc::new(UpstreamGroup::new(vec![node.upstream()]));
    let tracking = HeadTracker::new(Duration::from_millis(20))
        .with_finality_depth(64)
        .start(group.clone());
    until("the head known", || group.finalized_block().is_some()).await;
    assert_eq!(group.finalized_block(), Some(2000 - 64));
    // No poll reaches the node once the tracking is dropped.
    drop(tracking);
    tokio::time::sleep(Duration::from_millis(50)).await;
    let polled = node.calls("eth_blockNumber");
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(node.calls("eth_blockNumber"), polled);
    // Polls are not counted as the upstream's requests.
    assert_eq!(group.upstreams()[0].stats().requests, 0);
}

/// A gateway (as a router) over `group`, with a cache whose answers about the head last
/// `head_ttl`.
fn gateway(group: Arc<UpstreamGroup>, head_ttl: Duration) -> (Router, Arc<Gateway>) {
    let mut router = Router::new();
    let gateway = Gateway::from_shared(group)
        .with_cache(FinalityCache::new().with_head_ttl(head_ttl))
        .with_log_chunks(1000)
        .install(&mut router);
    (router, gateway)
}

async fn ask(router: &Router, request: &str) -> Value {
    let mut out = bytes::BytesMut::new();
    router.handle_async(request.as_bytes(), &mut out).await;
    serde_json::from_slice(&out).unwrap()
}

#[tokio::test]
async fn answers_about_finalized_blocks_are_kept_for_good_and_about_the_head_briefly() {
    let node = Node::start("node", 100, 90).await;
    let group = Arc::new(UpstreamGroup::new(vec![node.upstream()]));
    let tracking = HeadTracker::new(Duration::from_millis(20)).start(group.clone());
    until("finality known", || group.finalized_block() == Some(90)).await;
    // What the tracker found stays known; its polls would blur the counts below.
    drop(tracking);
    tokio::time::sleep(Duration::from_millis(50)).await;
    let polls = node.calls("eth_blockNumber");
    let (router, gateway) = gateway(group, Duration::from_millis(300));
    let block = |id: &str, number: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"eth_getBlockByNumber","params":["{number}",false]}}"#
        )
    };

    // Final: asked upstream once, each client answered with its own id.
    let first = ask(&router, &block("1", "0x50")).await;
    let second = ask(&router, &block("\"two\"", "0x50")).await;
    assert_eq!(
        (first["id"].clone(), second["id"].clone()),
        (json!(1), json!("two"))
    );
    assert_eq!(first["result"], json!({"number": "0x50", "from": "node"}));
    assert_eq!(second["result"], first["result"]);
    assert_eq!(node.calls("eth_getBlockByNumber 0x50"), 1);
    // Not final (96 > 90), and the head: kept 300 ms.
    for _ in 0..2 {
        ask(&router, &block("3", "0x60")).await;
        ask(&router, r#"{"jsonrpc":"2.0","id":4,"method":"eth_blockNumber"}"#).await;
    }
    assert_eq!(node.calls("eth_getBlockByNumber 0x60"), 1);
    assert_eq!(node.calls("eth_blockNumber") - polls, 1);
    // A null (a block the node does not have yet) is never kept; nor is `pending`.
    for _ in 0..2 {
        assert_eq!(ask(&router, &block("5", "0xc8")).await["result"], Value::Null);
        ask(&router, &block("5", "pending")).await;
    }
    assert_eq!(node.calls("eth_getBlockByNumber 0xc8"), 2);
    assert_eq!(node.calls("eth_getBlockByNumber pending"), 2);
    // A receipt in a final block: kept; a method that writes: never.
    for _ in 0..2 {
        ask(
            &router,
            r#"{"jsonrpc":"2.0","id":6,"method":"eth_getTransactionReceipt","params":["0xab"]}"#,
        )
        .await;
        ask(
            &router,
            r#"{"jsonrpc":"2.0","id":7,"method":"eth_sendRawTransaction","params":["0x01"]}"#,
        )
        .await;
    }
    assert_eq!(node.calls("eth_getTransactionReceipt"), 1);
    assert_eq!(node.calls("eth_sendRawTransaction"), 2);
    // Past the head's time: 0x60 and the head go upstream again, 0x50 does not.
    tokio::time::sleep(Duration::from_millis(350)).await;
    ask(&router, &block("8", "0x60")).await;
    ask(&router, &block("9", "0x50")).await;
    ask(&router, r#"{"jsonrpc":"2.0","id":4,"method":"eth_blockNumber"}"#).await;
    assert_eq!(node.calls("eth_getBlockByNumber 0x60"), 2);
    assert_eq!(node.calls("eth_getBlockByNumber 0x50"), 1);
    assert_eq!(node.calls("eth_blockNumber") - polls, 2);
    let stats = gateway.cache_stats().unwrap();
    assert_eq!((stats.hits, stats.kept_final), (5, 2), "{stats:?}");
    assert_eq!(gateway.stats().forwarded, 12, "cache hits are not forwarded");

    // A batch: its cached elements answered here, the rest sent on, every id in order.
    let requests_before = node.calls("eth_chainId");
    let batch = format!(
        "[{},{},{}]",
        block("10", "0x50"),
        r#"{"jsonrpc":"2.0","id":11,"method":"eth_chainId"}"#,
        r#"{"jsonrpc":"2.0","id":12,"method":"eth_getTransactionReceipt","params":["0xab"]}"#
    );
    let answers = ask(&router, &batch).await;
    let ids: Vec<Value> = answers
        .as_array()
        .unwrap()
        .iter()
        .map(|answer| answer["id"].clone())
        .collect();
    assert_eq!(ids, [json!(10), json!(11), json!(12)]);
    assert_eq!(answers[0]["result"]["number"], "0x50");
    assert_eq!(node.calls("eth_chainId"), requests_before + 1);
    assert_eq!(node.calls("eth_getTransactionReceipt"), 1);
    ask(&router, r#"{"jsonrpc":"2.0","id":13,"method":"eth_chainId"}"#).await;
    assert_eq!(
        node.calls("eth_chainId"),
        requests_before + 1,
        "the chain id kept from the batch"
    );
}

#[tokio::test]
async fn a_wide_get_logs_is_split_into_ranges_the_upstream_accepts() {
    let node = Node::start("node", 5000, 4000).await;
    let group = Arc::new(UpstreamGroup::new(vec![node.upstream()]));
    let (router, _) = gateway(group.clone(), Duration::ZERO);
    let logs = |from: &str, to: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"eth_getLogs","params":[{{"address":"0xab","fromBlock":"{from}","toBlock":"{to}"}}]}}"#
        )
    };
    // Direct, the node refuses the range.
    let params = rpcwire::RawJson::new(r#"[{"fromBlock":"0x1","toBlock":"0x9c4"}]"#).unwrap();
    assert!(group.call("eth_getLogs", Some(&params)).await.is_err());
    let refused = node.calls("eth_getLogs");

    let answer = ask(&router, &logs("0x1", "0x9c4")).await;
    let got: Vec<u64> = answer["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|log| {
            u64::from_str_radix(log["blockNumber"].as_str().unwrap().trim_start_matches("0x"), 16).unwrap()
        })
        .collect();
    assert_eq!(got, (1..=2500).collect::<Vec<_>>());
    assert_eq!(node.calls("eth_getLogs") - refused, 3);
    // Within the limit: one call, as it came.
    let answer = ask(&router, &logs("0x10", "0x13")).await;
    assert_eq!(answer["result"].as_array().unwrap().len(), 4);
    assert_eq!(node.calls("eth_getLogs") - refused, 4);
    // A chunk refused fails the whole with the upstream's error.
    let answer = ask(&router, &logs("0x1", "0x1388")).await;
    assert!(
        answer["result"].is_array(),
        "5000 blocks in five chunks: {answer}"
    );
    node.state.limited.store(true, Ordering::SeqCst);
    let answer = ask(&router, &logs("0x1", "0x7d0")).await;
    assert_eq!(answer["error"]["code"], -32005, "{answer}");
}

#[cfg(feature = "redis")]
#[tokio::test]
async fn gateways_of_a_fleet_share_their_final_answers_through_redis() {
    use rpcwire::proxy::fleet::{LimitConfig, SharedLimiter};
    let Some(redis) = redis_server::RedisServer::start() else {
        eprintln!("skipped: no redis-server (installed by tests/support/install-debian.sh)");
        return;
    };
    let node = Node::start("node", 100, 90).await;
    let mut routers = Vec::new();
    for _ in 0..2 {
        let group = Arc::new(UpstreamGroup::new(vec![node.upstream()]));
        let tracking = HeadTracker::new(Duration::from_millis(20)).start(group.clone());
        until("finality known", || group.finalized_block() == Some(90)).await;
        let store = SharedLimiter::new(redis.url().as_str(), LimitConfig::default()).unwrap();
        let mut router = Router::new();
        let gateway = Gateway::from_shared(group)
            .with_cache(FinalityCache::new().shared_through(store))
            .install(&mut router);
        routers.push((router, gateway, tracking));
    }
    let request = r#"{"jsonrpc":"2.0","id":1,"method":"eth_getBlockByNumber","params":["0x7",false]}"#;
    let first = ask(&routers[0].0, request).await;
    // The write to Redis is in a task of its own: wait until the other instance finds it.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let second = ask(&routers[1].0, request).await;
        assert_eq!(second["result"], first["result"]);
        if routers[1].1.cache_stats().unwrap().hits == 1 {
            break;
        }
        assert!(Instant::now() < deadline, "never found in Redis");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Found there, the second instance asked the node no more: every time it did, it kept
    // the answer here (as briefly as the head) and found it here after.
    assert!(
        node.calls("eth_getBlockByNumber 0x7") <= 2,
        "{}",
        node.calls("eth_getBlockByNumber 0x7")
    );
}

#[tokio::test]
async fn a_silent_upstream_has_no_head_and_chunks_that_are_not_lists_fail_the_call() {
    // Accepts connections and never answers: each poll ends at the group's timeout.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/", silent.local_addr().unwrap());
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = silent.accept().await {
            held.push(socket);
        }
    });
    let node = Node::start("node", 300, 200).await;
    let group = Arc::new(
        UpstreamGroup::new(vec![Upstream::address(&url).unwrap(), node.upstream()])
            .with_timeout(Duration::from_millis(100))
            .with_max_lag(10),
    );
    let _tracking = HeadTracker::new(Duration::from_millis(20)).start(group.clone());
    until("the node's head known", || group.latest_block() == Some(300)).await;
    tokio::time::sleep(Duration::from_millis(250)).await;
    let silent_stats = group.upstreams()[0].stats();
    assert_eq!(
        (silent_stats.latest_block, silent_stats.finalized_block),
        (None, None)
    );
    // Not knowing a head is not being behind; the known ones decide the finality.
    assert_eq!(group.finalized_block(), Some(200));

    node.state.odd_logs.store(true, Ordering::SeqCst);
    let only_node = Arc::new(UpstreamGroup::new(vec![node.upstream()]));
    let (router, _) = gateway(only_node, Duration::ZERO);
    let answer = ask(
        &router,
        r#"{"jsonrpc":"2.0","id":1,"method":"eth_getLogs","params":[{"fromBlock":"0x1","toBlock":"0x7d0"}]}"#,
    )
    .await;
    assert!(answer["result"].is_null(), "{answer}");
    assert!(
        answer["error"]
            .to_string()
            .contains("something other than a list"),
        "{answer}"
    );
}
