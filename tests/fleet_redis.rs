//! The fleet's shared rate limit against a real Redis (Debian's `redis-server`, started by
//! the test on a loopback port without persistence): three limiters stand for three gateway
//! instances, each with its own connection. A key's limit holds across them (within 5% of
//! rate × time, plus a burst of one second's worth); an instance that stops changes nothing;
//! Redis killed mid-load: every check still answered within its timeout (open: at the local
//! share of the rate; closed: refused), and shared again once Redis is back. The same over
//! TLS (`rediss://`, Redis's own TLS port with a certificate the test made): shared with the
//! authority trusted, with a client certificate when Redis asks for one, and not shared —
//! every check still answered — when the certificate is not trusted.
#![cfg(feature = "redis")]

#[path = "support/certs.rs"]
mod certs;
#[path = "support/python_peer.rs"]
mod python_peer;
#[path = "support/redis_server.rs"]
mod redis_server;

use std::time::{Duration, Instant};

use redis_server::RedisServer;
use rpcwire::proxy::fleet::{ApiKeys, Decision, LimitConfig, OnRedisDown, SharedLimiter};

fn limiters(server: &RedisServer, count: usize, on_down: OnRedisDown) -> Vec<SharedLimiter> {
    let config = LimitConfig {
        prefix: format!("rpcwire:test:{}:", std::process::id()),
        timeout: Duration::from_millis(100),
        on_down,
        retry_after: Duration::from_millis(500),
        ..LimitConfig::default()
    };
    (0..count)
        .map(|_| SharedLimiter::new(server.url(), config.clone()).unwrap())
        .collect()
}

/// Checks `key` on every limiter in turn, every `every`, for `duration`: what each decided.
async fn load(
    limiters: &[SharedLimiter],
    keys: &ApiKeys,
    key: &str,
    every: Duration,
    duration: Duration,
) -> Vec<(Decision, Duration)> {
    let key = keys.find(key).unwrap();
    let mut decisions = Vec::new();
    let started = Instant::now();
    let mut tick = tokio::time::interval(every);
    let mut turn = 0;
    while started.elapsed() < duration {
        tick.tick().await;
        let asked = Instant::now();
        let decision = limiters[turn % limiters.len()].check(key, 1).await;
        decisions.push((decision, asked.elapsed()));
        turn += 1;
    }
    decisions
}

fn allowed(decisions: &[(Decision, Duration)]) -> usize {
    decisions
        .iter()
        .filter(|(d, _)| matches!(d, Decision::Allowed { .. }))
        .count()
}

/// Waits until every limiter decides through Redis.
async fn until_shared(limiters: &[SharedLimiter], keys: &ApiKeys) {
    let probe = keys.find("probe").unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    for limiter in limiters {
        while limiter.check(probe, 1).await != (Decision::Allowed { shared: true }) {
            assert!(Instant::now() < deadline, "the limiter reaches Redis");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_keys_limit_holds_across_instances_and_one_stopping_changes_nothing() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let keys = ApiKeys::parse("alpha 40\nbeta 1000\nprobe 1000000").unwrap();
    let mut fleet = limiters(&server, 3, OnRedisDown::Open { instances: 3 });
    until_shared(&fleet, &keys).await;

    // Four times the rate offered, spread over three instances, for 3 s.
    let started = Instant::now();
    let first = load(
        &fleet,
        &keys,
        "alpha",
        Duration::from_millis(6),
        Duration::from_millis(1500),
    )
    .await;
    // One instance stops; the other two go on.
    fleet.pop();
    let second = load(
        &fleet,
        &keys,
        "alpha",
        Duration::from_millis(6),
        Duration::from_millis(1500),
    )
    .await;
    let seconds = started.elapsed().as_secs_f64();
    let decisions: Vec<_> = first.iter().chain(&second).collect();
    assert!(
        decisions
            .iter()
            .all(|(d, _)| !matches!(d, Decision::Allowed { shared: false } | Decision::Unavailable)),
        "every decision was Redis's"
    );
    let admitted = allowed(&first) + allowed(&second);
    let (rate, burst) = (40.0, 40.0);
    let low = rate * seconds * 0.95;
    let high = rate * seconds * 1.05 + burst;
    assert!(
        (low..=high).contains(&(admitted as f64)),
        "admitted {admitted} in {seconds:.2} s at {rate}/s (burst {burst}): expected {low:.0}..{high:.0}"
    );
    // A limited request is told when to come back: within one interval.
    let waits: Vec<Duration> = decisions
        .iter()
        .filter_map(|(d, _)| match d {
            Decision::Limited { retry_after } => Some(*retry_after),
            _ => None,
        })
        .collect();
    assert!(
        !waits.is_empty() && waits.iter().all(|w| *w <= Duration::from_millis(26)),
        "{:?}",
        &waits[..waits.len().min(5)]
    );

    // Another key is limited apart: under its rate, all of it goes through.
    let beta = load(
        &fleet,
        &keys,
        "beta",
        Duration::from_millis(5),
        Duration::from_millis(300),
    )
    .await;
    assert_eq!(allowed(&beta), beta.len());
    let stats = fleet[0].stats();
    assert!(
        stats.shared > 0 && stats.limited > 0 && stats.redis_errors == 0,
        "{stats:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_killed_mid_load_every_check_is_answered_in_time_and_shared_again_when_it_is_back() {
    let Some(mut server) = RedisServer::start() else {
        return;
    };
    let keys = ApiKeys::parse("alpha 60\nprobe 1000000").unwrap();
    // Told of one instance only: they count themselves in Redis (four limiters, one prefix).
    let open = limiters(&server, 3, OnRedisDown::Open { instances: 1 });
    let closed = limiters(&server, 1, OnRedisDown::Closed);
    until_shared(&open, &keys).await;
    until_shared(&closed, &keys).await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while open
        .iter()
        .chain(&closed)
        .any(|limiter| limiter.live_instances() != Some(4))
    {
        assert!(
            Instant::now() < deadline,
            "the instances counted: {:?}",
            open.iter().map(SharedLimiter::live_instances).collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    let before = load(
        &open,
        &keys,
        "alpha",
        Duration::from_millis(5),
        Duration::from_millis(500),
    )
    .await;
    assert!(before
        .iter()
        .all(|(d, _)| !matches!(d, Decision::Allowed { shared: false })));
    server.stop();
    let started = Instant::now();
    let down = load(
        &open,
        &keys,
        "alpha",
        Duration::from_millis(5),
        Duration::from_millis(2000),
    )
    .await;
    let seconds = started.elapsed().as_secs_f64();
    // Every check answered, none past its timeout (100 ms) by much.
    let slowest = down.iter().map(|(_, took)| *took).max().unwrap();
    assert!(slowest < Duration::from_millis(500), "a check took {slowest:?}");
    // Decided locally, each instance at a quarter of the rate (the live count when Redis
    // went down; its burst a quarter too): the three together under the rate.
    assert!(down
        .iter()
        .all(|(d, _)| !matches!(d, Decision::Allowed { shared: true } | Decision::Unavailable)));
    let admitted = allowed(&down) as f64;
    let high = 60.0 * seconds * 1.05 + 60.0 + 3.0;
    assert!(
        admitted <= high && admitted >= 60.0 * seconds * 0.5,
        "admitted {admitted} in {seconds:.2} s with Redis down"
    );
    let refused = closed[0].check(keys.find("alpha").unwrap(), 1).await;
    assert_eq!(refused, Decision::Unavailable);
    let alpha = keys.find("alpha").unwrap();
    assert_eq!(
        closed[0].check_many(alpha, &[1, 1]).await,
        [Decision::Unavailable; 2]
    );
    let many = open[1].check_many(alpha, &[1, 1]).await;
    assert!(
        many.iter()
            .all(|d| !matches!(d, Decision::Allowed { shared: true } | Decision::Unavailable)),
        "{many:?}"
    );
    assert!(open[0].stats().redis_errors > 0 && open[0].stats().without_redis > 0);

    // A limiter made while Redis is down decides locally, and connects once it is up.
    let late = limiters(&server, 1, OnRedisDown::Open { instances: 1 });
    assert_eq!(
        late[0].check(keys.find("alpha").unwrap(), 1).await,
        Decision::Allowed { shared: false }
    );
    assert!(format!("{:?}", late[0]).contains("SharedLimiter"));

    // Redis back on the same port: shared again, without a new limiter.
    let _back = RedisServer::start_on(server.port).expect("redis-server again");
    until_shared(&open, &keys).await;
    until_shared(&closed, &keys).await;
    until_shared(&late, &keys).await;
}

/// `FleetLayer` in front of rpcwire's `HttpService`: keys checked (401), each key's rate
/// shared through Redis (429 with `Retry-After` and -32005 with each request's id; a batch
/// decided element by element), heavy methods weighed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_layer_answers_401_and_429_per_request_and_per_batch_element() {
    use bytes::Bytes;
    use http_body_util::{BodyExt, Full};
    use rpcwire::proxy::fleet::FleetLayer;
    use rpcwire::transport::http::HttpService;
    use serde_json::{json, Value};
    use tower_layer::Layer;
    use tower_service::Service;

    let Some(server) = RedisServer::start() else {
        return;
    };
    let keys = ApiKeys::parse("single 5\nbatch 2\nheavy 2\nprobe 1000000").unwrap();
    let limiter = limiters(&server, 1, OnRedisDown::Closed).remove(0);
    until_shared(std::slice::from_ref(&limiter), &keys).await;
    let mut router = rpcwire::dispatch::Router::new();
    router.method("echo", |(n,): (u64,)| Ok(n));
    router.method("heavy", |_: rpcwire::dispatch::NoParams| Ok("done"));
    let layer = FleetLayer::new(keys)
        .with_limiter(limiter)
        .with_weight("heavy", 3);
    let mut service = layer.layer(HttpService::new(router));
    let mut post = async |path: &str, key: Option<&str>, body: Value| {
        let mut request = http::Request::post(path).header("content-type", "application/json");
        if let Some(key) = key {
            request = request.header("authorization", format!("Bearer {key}"));
        }
        let request = request.body(Full::new(Bytes::from(body.to_string()))).unwrap();
        let response = service.call(request).await.unwrap();
        let status = response.status();
        let retry = response
            .headers()
            .get("retry-after")
            .map(|v| v.to_str().unwrap().to_owned());
        let auth = response.headers().contains_key("www-authenticate");
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        let body: Value = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes).unwrap()
        };
        (status.as_u16(), retry, auth, body)
    };
    let echo = |id: u64| json!({"jsonrpc": "2.0", "id": id, "method": "echo", "params": [id]});

    // No key, an unknown one: 401 with a JSON-RPC error, id null.
    for key in [None, Some("nope")] {
        let (status, _, auth, body) = post("/", key, echo(1)).await;
        assert_eq!((status, auth), (401, true));
        assert_eq!(
            (body["error"]["code"].as_i64(), body["id"].clone()),
            (Some(-32001), Value::Null)
        );
    }
    // The key in the path.
    assert_eq!(post("/single", None, echo(1)).await.0, 200);

    // Rate 5 (its burst 5, one used above): four more pass, then 429 with the request's id.
    let mut statuses = Vec::new();
    for id in 2..=8 {
        let (status, retry, _, body) = post("/", Some("single"), echo(id)).await;
        statuses.push(status);
        if status == 429 {
            assert_eq!(
                (body["id"].as_u64(), body["error"]["code"].as_i64()),
                (Some(id), Some(-32005)),
                "{body}"
            );
            assert!(retry.unwrap().parse::<u64>().unwrap() >= 1);
        } else {
            assert_eq!(body["result"].as_u64(), Some(id));
        }
    }
    // (A slow machine may see one more interval pass: at most one more let through.)
    let passed = statuses.iter().take_while(|status| **status == 200).count();
    assert!(
        (4..=5).contains(&passed) && statuses[passed..].iter().all(|s| *s == 429),
        "{statuses:?}"
    );
    let notification = json!({"jsonrpc": "2.0", "method": "echo", "params": [0]});
    let (status, _, _, body) = post("/", Some("single"), notification).await;
    assert_eq!((status, body), (429, Value::Null));

    // A batch of four on a key of rate 2: two answered, two refused, each with its id.
    let batch = json!([echo(11), echo(12), echo(13), echo(14)]);
    let (status, _, _, body) = post("/", Some("batch"), batch.clone()).await;
    assert_eq!(status, 200);
    let answers = body.as_array().unwrap();
    assert_eq!(answers.len(), 4, "{body}");
    let results: Vec<u64> = answers.iter().filter_map(|a| a["result"].as_u64()).collect();
    let mut refused: Vec<u64> = answers
        .iter()
        .filter(|a| a["error"]["code"] == -32005)
        .map(|a| a["id"].as_u64().unwrap())
        .collect();
    refused.sort();
    assert_eq!((results, refused), (vec![11, 12], vec![13, 14]));
    // All of it refused: 429 with every refusal.
    let (status, retry, _, body) = post("/", Some("batch"), batch).await;
    assert_eq!((status, body.as_array().map(Vec::len)), (429, Some(4)));
    assert!(retry.is_some());

    // A heavy method costs 3: over a burst of 2 at once.
    let heavy = json!({"jsonrpc": "2.0", "id": "h", "method": "heavy"});
    let (status, _, _, body) = post("/", Some("heavy"), heavy).await;
    assert_eq!((status, body["id"].as_str()), (429, Some("h")));
    // Not JSON: the service answers (-32700), the key's rate counted.
    let (status, _, _, _) = post("/", Some("heavy"), json!("x")).await;
    assert!(status == 200 || status == 429, "{status}");
}

/// The shared cache: an answer fetched through one instance is served by the others without
/// reaching the upstream, with each client's id byte for byte; errors are not cached; a TTL
/// ends an entry; a result over the size limit is not kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cached_answer_fetched_through_one_instance_is_served_by_the_others() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    use bytes::Bytes;
    use http_body_util::{BodyExt, Full};
    use rpcwire::proxy::fleet::FleetLayer;
    use rpcwire::transport::http::HttpService;
    use tower_layer::Layer;
    use tower_service::Service;

    let Some(server) = RedisServer::start() else {
        return;
    };
    let keys = ApiKeys::parse("k3y 100000\nprobe 1000000").unwrap();
    let calls = Arc::new(AtomicUsize::new(0));
    let mut fleet = Vec::new();
    for limiter in limiters(&server, 3, OnRedisDown::Open { instances: 3 }) {
        until_shared(std::slice::from_ref(&limiter), &keys).await;
        let mut router = rpcwire::dispatch::Router::new();
        let counted = calls.clone();
        router.raw_method(
            "eth_chainId",
            move |_: Option<rpcwire::Params<'_>>, reply: rpcwire::dispatch::Reply<'_>| {
                counted.fetch_add(1, Ordering::SeqCst);
                Ok(reply.raw(&rpcwire::RawJson::new(r#"{"chain" : "0x1", "n":1.50}"#.to_owned()).unwrap()))
            },
        );
        let counted = calls.clone();
        router.method(
            "eth_fail",
            move |_: rpcwire::dispatch::NoParams| -> Result<u64, rpcwire::ErrorObject<'static>> {
                counted.fetch_add(1, Ordering::SeqCst);
                Err(rpcwire::ErrorObject::new(-32000, "upstream failed"))
            },
        );
        let counted = calls.clone();
        router.method("eth_blockNumber", move |_: rpcwire::dispatch::NoParams| {
            Ok(counted.fetch_add(1, Ordering::SeqCst) as u64)
        });
        let counted = calls.clone();
        router.method("eth_big", move |_: rpcwire::dispatch::NoParams| {
            counted.fetch_add(1, Ordering::SeqCst);
            Ok("x".repeat(100))
        });
        let layer = FleetLayer::new(keys.clone())
            .with_limiter(limiter)
            .with_cache("eth_chainId", None)
            .with_cache("eth_fail", None)
            .with_cache("eth_big", None)
            .with_cache("eth_blockNumber", Some(Duration::from_millis(300)))
            .with_max_cached(64);
        fleet.push(layer.layer(HttpService::new(router)));
    }
    let post = |instance: usize, body: &str| {
        let mut service = fleet[instance].clone();
        let request = http::Request::post("/k3y")
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from(body.to_owned())))
            .unwrap();
        async move {
            let response = service.call(request).await.unwrap();
            response.into_body().collect().await.unwrap().to_bytes()
        }
    };
    let count = || calls.load(Ordering::SeqCst);

    let first = post(
        0,
        r#"{"jsonrpc":"2.0","id":1.50,"method":"eth_chainId","params":[]}"#,
    )
    .await;
    assert_eq!(
        &first[..],
        br#"{"jsonrpc":"2.0","id":1.50,"result":{"chain" : "0x1", "n":1.50}}"#
    );
    assert_eq!(count(), 1);
    // Written in the background: the others find it once it is there.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let before = count();
        let answer = post(
            1,
            r#"{"jsonrpc":"2.0","id":"b\u00e9","method":"eth_chainId","params":[]}"#,
        )
        .await;
        assert_eq!(
            &answer[..],
            br#"{"jsonrpc":"2.0","id":"b\u00e9","result":{"chain" : "0x1", "n":1.50}}"#
        );
        if count() == before {
            break;
        }
        assert!(Instant::now() < deadline, "the answer was cached");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let before = count();
    let third = post(
        2,
        r#"{"jsonrpc":"2.0","id":7,"method":"eth_chainId","params":[]}"#,
    )
    .await;
    assert_eq!(
        &third[..],
        br#"{"jsonrpc":"2.0","id":7,"result":{"chain" : "0x1", "n":1.50}}"#
    );
    assert_eq!(count(), before, "served from the cache");
    // Other params bytes: another entry.
    post(
        2,
        r#"{"jsonrpc":"2.0","id":8,"method":"eth_chainId","params":[ ]}"#,
    )
    .await;
    assert_eq!(count(), before + 1);

    // Errors are not cached; nor a result over the size limit.
    for (method, instance) in [("eth_fail", 0), ("eth_fail", 1), ("eth_big", 0), ("eth_big", 1)] {
        let body = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{method}"}}"#);
        let counted = count();
        post(instance, &body).await;
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(
            count(),
            counted + 1,
            "{method} through {instance} reached the upstream"
        );
    }

    // A TTL ends an entry.
    let block = r#"{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"}"#;
    let fetched = post(0, block).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(post(1, block).await, fetched, "within its TTL");
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_ne!(post(2, block).await, fetched, "past its TTL");
}

/// Keys kept in Redis by their digests (never their texts), read at start and again every
/// while: one removed there is refused, one added is taken, without a restart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_kept_in_redis_are_read_again_without_a_restart() {
    use bytes::Bytes;
    use http_body_util::Full;
    use rpcwire::proxy::fleet::FleetLayer;
    use rpcwire::transport::http::HttpService;
    use sha2::Digest;
    use tower_layer::Layer;
    use tower_service::Service;

    let Some(server) = RedisServer::start() else {
        return;
    };
    let hash = format!("rpcwire:test:{}:keys", std::process::id());
    let digest = |key: &str| {
        sha2::Sha256::digest(key.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    let client = redis::Client::open(server.url()).unwrap();
    let mut connection = client.get_multiplexed_async_connection().await.unwrap();
    let hset = |key: &str, value: &str| redis::cmd("HSET").arg(&hash).arg(digest(key)).arg(value).clone();
    hset("first", "50 team-r")
        .query_async::<()>(&mut connection)
        .await
        .unwrap();
    let keys = ApiKeys::load(&server.url(), &hash, Duration::from_secs(2))
        .await
        .unwrap();
    assert_eq!((keys.len(), keys.find("first").unwrap().label()), (1, "team-r"));
    assert!(
        ApiKeys::load("redis://127.0.0.1:9/", &hash, Duration::from_millis(500))
            .await
            .is_err()
    );

    let mut router = rpcwire::dispatch::Router::new();
    router.method("ping", |_: rpcwire::dispatch::NoParams| Ok("pong"));
    let layer =
        FleetLayer::new(keys).with_keys_refreshed_from(server.url(), &hash, Duration::from_millis(100));
    let mut service = layer.layer(HttpService::new(router));
    let mut status = async |key: &str| {
        let request = http::Request::post(format!("/{key}"))
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from_static(
                br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            )))
            .unwrap();
        service.call(request).await.unwrap().status().as_u16()
    };
    assert_eq!((status("first").await, status("second").await), (200, 401));
    redis::cmd("HDEL")
        .arg(&hash)
        .arg(digest("first"))
        .query_async::<()>(&mut connection)
        .await
        .unwrap();
    hset("second", "50")
        .query_async::<()>(&mut connection)
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while (status("first").await, status("second").await) != (401, 200) {
        assert!(Instant::now() < deadline, "the keys were read again");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Identical requests under way on one instance coalesce before the cache is asked: one
/// reaches the upstream, every one is answered with its own id, each is still counted
/// against its key's rate; an error is not shared (each of those goes on by itself).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn identical_requests_under_way_coalesce_before_the_cache_is_asked() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    use bytes::Bytes;
    use http_body_util::{BodyExt, Full};
    use rpcwire::proxy::fleet::FleetLayer;
    use rpcwire::transport::http::HttpService;
    use tower_layer::Layer;
    use tower_service::Service;

    let Some(server) = RedisServer::start() else {
        return;
    };
    // 15 requests a second with a burst of 15: of 20 at once, 5 are over the rate.
    let keys = ApiKeys::parse("k3y 15\nprobe 1000000").unwrap();
    let limiter = limiters(&server, 1, OnRedisDown::Open { instances: 1 }).remove(0);
    until_shared(std::slice::from_ref(&limiter), &keys).await;
    let calls = Arc::new(AtomicUsize::new(0));
    let mut router = rpcwire::dispatch::Router::new();
    let counted = calls.clone();
    router.method_async("eth_slow", move |_: rpcwire::dispatch::NoParams| {
        counted.fetch_add(1, Ordering::SeqCst);
        async {
            tokio::time::sleep(Duration::from_millis(300)).await;
            Ok::<_, rpcwire::ErrorObject<'static>>("0xabc")
        }
    });
    let counted = calls.clone();
    router.method_async("eth_slowFail", move |_: rpcwire::dispatch::NoParams| {
        counted.fetch_add(1, Ordering::SeqCst);
        async {
            tokio::time::sleep(Duration::from_millis(300)).await;
            Err::<u64, _>(rpcwire::ErrorObject::new(-32000, "upstream failed"))
        }
    });
    let service = FleetLayer::new(keys.clone())
        .with_limiter(limiter.clone())
        .with_cache("eth_slow", None)
        .with_cache("eth_slowFail", None)
        .layer(HttpService::new(router));
    let post = |key: &'static str, body: String| {
        let mut service = service.clone();
        let request = http::Request::post(format!("/{key}"))
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from(body)))
            .unwrap();
        tokio::spawn(async move {
            let response = service.call(request).await.unwrap();
            let status = response.status();
            (status, response.into_body().collect().await.unwrap().to_bytes())
        })
    };

    let answers: Vec<_> = (0..20)
        .map(|id| {
            post(
                "k3y",
                format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"eth_slow"}}"#),
            )
        })
        .collect();
    let mut answered = 0;
    let mut limited = 0;
    for (id, answer) in answers.into_iter().enumerate() {
        let (status, body) = answer.await.unwrap();
        match status.as_u16() {
            200 => {
                assert_eq!(
                    body,
                    format!(r#"{{"jsonrpc":"2.0","id":{id},"result":"0xabc"}}"#).as_bytes()
                );
                answered += 1;
            }
            429 => {
                assert!(std::str::from_utf8(&body)
                    .unwrap()
                    .contains(&format!(r#""id":{id},"#)));
                limited += 1;
            }
            other => panic!("{other}: {body:?}"),
        }
    }
    assert_eq!(
        calls.load(Ordering::SeqCst),
        1,
        "one of them reached the upstream"
    );
    assert!(
        (14..=16).contains(&answered) && answered + limited == 20,
        "{answered} answered, {limited} limited"
    );

    // Errors are not shared: each waiting request goes on by itself.
    let answers: Vec<_> = (0..4)
        .map(|id| {
            post(
                "probe",
                format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"eth_slowFail"}}"#),
            )
        })
        .collect();
    for (id, answer) in answers.into_iter().enumerate() {
        let (status, body) = answer.await.unwrap();
        assert_eq!(status, 200);
        let body = std::str::from_utf8(&body).unwrap();
        assert!(
            body.contains(&format!(r#""id":{id},"#)) && body.contains("upstream failed"),
            "{body}"
        );
    }
    assert_eq!(calls.load(Ordering::SeqCst), 1 + 4);
}

/// A batch's cacheable requests are read from the cache in the batch's one round trip: the
/// ones found are answered with their ids, the rest forwarded together, and the results among
/// their answers cached for the next batch on any instance.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batchs_cacheable_requests_are_served_from_the_cache() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    use bytes::Bytes;
    use http_body_util::{BodyExt, Full};
    use rpcwire::proxy::fleet::FleetLayer;
    use rpcwire::transport::http::HttpService;
    use tower_layer::Layer;
    use tower_service::Service;

    let Some(server) = RedisServer::start() else {
        return;
    };
    let keys = ApiKeys::parse("k3y 100000\nslow 2\nprobe 1000000").unwrap();
    let chain_ids = Arc::new(AtomicUsize::new(0));
    let blocks = Arc::new(AtomicUsize::new(0));
    let mut fleet = Vec::new();
    for limiter in limiters(&server, 2, OnRedisDown::Open { instances: 2 }) {
        until_shared(std::slice::from_ref(&limiter), &keys).await;
        let mut router = rpcwire::dispatch::Router::new();
        let counted = chain_ids.clone();
        router.method("eth_chainId", move |_: rpcwire::dispatch::NoParams| {
            counted.fetch_add(1, Ordering::SeqCst);
            Ok("0x1")
        });
        let counted = blocks.clone();
        router.method("eth_blockNumber", move |_: rpcwire::dispatch::NoParams| {
            Ok(format!("0x{:x}", counted.fetch_add(1, Ordering::SeqCst)))
        });
        let layer = FleetLayer::new(keys.clone())
            .with_limiter(limiter)
            .with_cache("eth_chainId", None);
        fleet.push(layer.layer(HttpService::new(router)));
    }
    let post_as = |key: &str, instance: usize, body: String| {
        let mut service = fleet[instance].clone();
        let request = http::Request::post(format!("/{key}"))
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from(body)))
            .unwrap();
        async move {
            let response = service.call(request).await.unwrap();
            let status = response.status();
            let body = response.into_body().collect().await.unwrap().to_bytes();
            (
                status,
                serde_json::from_slice::<serde_json::Value>(&body).unwrap(),
            )
        }
    };
    let post = |instance: usize, body: String| post_as("k3y", instance, body);
    let batch = |first: u32| {
        format!(
            r#"[{{"jsonrpc":"2.0","id":{first},"method":"eth_chainId"}},{{"jsonrpc":"2.0","id":{},"method":"eth_blockNumber"}}]"#,
            first + 1
        )
    };
    let by_id = |answers: &serde_json::Value, id: u32| -> serde_json::Value {
        answers
            .as_array()
            .unwrap()
            .iter()
            .find(|answer| answer["id"] == id)
            .unwrap_or_else(|| panic!("no answer with id {id}: {answers}"))["result"]
            .clone()
    };

    let (status, answers) = post(0, batch(1)).await;
    assert_eq!(status, 200);
    assert_eq!(
        (by_id(&answers, 1), by_id(&answers, 2)),
        ("0x1".into(), "0x0".into())
    );
    assert_eq!(chain_ids.load(Ordering::SeqCst), 1);
    // The write lands in the background: the other instance's batches find it once it is there.
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut first = 10;
    loop {
        let before = chain_ids.load(Ordering::SeqCst);
        let (status, answers) = post(1, batch(first)).await;
        assert_eq!(status, 200);
        assert_eq!(answers.as_array().unwrap().len(), 2, "{answers}");
        assert_eq!(by_id(&answers, first), "0x1");
        if chain_ids.load(Ordering::SeqCst) == before {
            break;
        }
        assert!(Instant::now() < deadline, "the batch's answer was cached");
        first += 10;
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Every element cached: answered without the upstream.
    let before = (chain_ids.load(Ordering::SeqCst), blocks.load(Ordering::SeqCst));
    let (status, answers) = post(
        0,
        r#"[{"jsonrpc":"2.0","id":"x","method":"eth_chainId"},{"jsonrpc":"2.0","id":"y","method":"eth_chainId"}]"#.to_owned(),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(
        answers,
        serde_json::json!([{"jsonrpc":"2.0","id":"x","result":"0x1"},{"jsonrpc":"2.0","id":"y","result":"0x1"}])
    );
    assert_eq!(
        (chain_ids.load(Ordering::SeqCst), blocks.load(Ordering::SeqCst)),
        before
    );

    // A key of 2 a second (a burst of 2): a batch's elements are answered from the cache,
    // forwarded, or refused, each on its own, in one answer.
    let request = |id: &str, method: &str| format!(r#"{{"jsonrpc":"2.0","id":"{id}","method":"{method}"}}"#);
    let mixed = format!(
        "[{},{},{}]",
        request("s1", "eth_chainId"),
        request("s2", "eth_blockNumber"),
        request("s3", "eth_blockNumber")
    );
    let blocks_before = blocks.load(Ordering::SeqCst);
    let (status, answers) = post_as("slow", 0, mixed).await;
    assert_eq!(status, 200);
    let answers = answers.as_array().unwrap().clone();
    assert_eq!(answers.len(), 3, "{answers:?}");
    let find = |id: &str| answers.iter().find(|answer| answer["id"] == id).unwrap().clone();
    assert_eq!(find("s1")["result"], "0x1");
    assert!(find("s2")["result"].is_string());
    assert_eq!(find("s3")["error"]["code"], -32005);
    assert_eq!(
        blocks.load(Ordering::SeqCst),
        blocks_before + 1,
        "only s2 was forwarded"
    );
    // Nothing left of the burst: refused whole, 429.
    let (status, answers) = post_as("slow", 1, format!("[{}]", request("s4", "eth_chainId"))).await;
    assert_eq!(status, 429);
    assert_eq!(answers[0]["error"]["code"], -32005);
    // One back after half a second: one from the cache, one refused; nothing forwarded, 200.
    tokio::time::sleep(Duration::from_millis(550)).await;
    let (status, answers) = post_as(
        "slow",
        0,
        format!(
            "[{},{}]",
            request("s5", "eth_chainId"),
            request("s6", "eth_chainId")
        ),
    )
    .await;
    assert_eq!(status, 200, "{answers}");
    let answers = answers.as_array().unwrap();
    assert!(
        answers.iter().any(|a| a["id"] == "s5" && a["result"] == "0x1"),
        "{answers:?}"
    );
    assert!(
        answers
            .iter()
            .any(|a| a["id"] == "s6" && a["error"]["code"] == -32005),
        "{answers:?}"
    );
    assert_eq!(blocks.load(Ordering::SeqCst), blocks_before + 1);
}

/// A key of a high rate is charged after the fact: three instances each asking as fast as
/// they can for 2 s admit, together, the rate × time plus the burst plus at most each
/// instance's allowance between two charges (twice the rate over `charge_every`), not more;
/// and they ask Redis far less than once a request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_high_rate_key_is_charged_after_the_fact_within_its_bound_in_few_round_trips() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let keys = ApiKeys::parse("fast 2000\nprobe 1000000").unwrap();
    let fleet = limiters(&server, 3, OnRedisDown::Open { instances: 3 });
    until_shared(&fleet, &keys).await;
    let before: Vec<_> = fleet.iter().map(SharedLimiter::stats).collect();
    let duration = Duration::from_secs(2);
    let started = Instant::now();
    let tasks: Vec<_> = fleet
        .iter()
        .cloned()
        .map(|limiter| {
            let keys = keys.clone();
            tokio::spawn(async move {
                let key = keys.find("fast").unwrap();
                let (mut admitted, mut asked) = (0u64, 0u64);
                while started.elapsed() < duration {
                    asked += 1;
                    match limiter.check(key, 1).await {
                        Decision::Allowed { shared } => {
                            assert!(shared, "Redis decided");
                            admitted += 1;
                        }
                        Decision::Limited { .. } => {}
                        Decision::Unavailable => panic!("Redis answered"),
                    }
                    if asked % 16 == 0 {
                        tokio::task::yield_now().await;
                    }
                }
                (admitted, asked)
            })
        })
        .collect();
    let (mut admitted, mut asked) = (0, 0);
    for task in tasks {
        let (a, b) = task.await.unwrap();
        admitted += a;
        asked += b;
    }
    let seconds = started.elapsed().as_secs_f64();
    let (rate, burst) = (2000.0, 2000.0);
    let allowance = 2.0 * rate * LimitConfig::default().charge_every.as_secs_f64();
    let low = rate * seconds * 0.95;
    let high = rate * seconds * 1.05 + burst + 3.0 * allowance;
    assert!(
        (low..=high).contains(&(admitted as f64)),
        "admitted {admitted} of {asked} in {seconds:.2} s at {rate}/s: expected {low:.0}..{high:.0}"
    );
    let round_trips: u64 = fleet
        .iter()
        .zip(&before)
        .map(|(limiter, before)| limiter.stats().round_trips - before.round_trips)
        .sum();
    println!(
        "admitted {admitted} of {asked} in {seconds:.2} s ({low:.0}..{high:.0}), {round_trips} round trips"
    );
    assert!(
        round_trips * 5 < asked,
        "{round_trips} round trips for {asked} requests"
    );
}

/// The fleet's JSON-RPC layers wrap any service, not only an HTTP one: here a real `Peer`'s
/// link to a JSON-RPC server. A cached method reaches the server once and is then answered
/// from Redis, read in the rate check's one round trip; a call without a key is refused; a
/// batch is decided in one round trip, each entry on its own, and what is let through goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rate_limit_and_the_cache_are_layers_around_any_json_rpc_service() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    use rpcwire::middleware::{BatchEntry, CallContext, LinkError, RemoteAnswer, RpcCall, RpcService};
    use rpcwire::proxy::fleet::{CacheLayer, RateLimitLayer, Refused};
    use rpcwire::transport::{Peer, PeerLink, StreamTransport};
    use tower_layer::Layer;

    #[derive(Debug)]
    enum Failed {
        Refused(Refused),
        // Read through `Debug`, when a test fails.
        #[allow(dead_code)]
        Link(LinkError),
    }
    impl From<Refused> for Failed {
        fn from(refused: Refused) -> Failed {
            Failed::Refused(refused)
        }
    }
    /// The server's link, with the error the layers need.
    struct Server(PeerLink);
    impl RpcService for Server {
        type Answer = RemoteAnswer;
        type Error = Failed;
        async fn call(&self, call: RpcCall<'_>) -> Result<RemoteAnswer, Failed> {
            RpcService::call(&self.0, call).await.map_err(Failed::Link)
        }
        async fn notify(&self, call: RpcCall<'_>) -> Result<(), Failed> {
            RpcService::notify(&self.0, call).await.map_err(Failed::Link)
        }
    }

    let Some(server) = RedisServer::start() else {
        return;
    };
    let keys = ApiKeys::parse("k3y 1000\nslow 2\nmid 100\nprobe 1000000").unwrap();
    let limiter = limiters(&server, 1, OnRedisDown::Open { instances: 1 }).remove(0);
    until_shared(std::slice::from_ref(&limiter), &keys).await;
    let stats = limiter.clone();

    let calls = Arc::new(AtomicUsize::new(0));
    let mut router = rpcwire::dispatch::Router::new();
    let counted = calls.clone();
    router.method("eth_chainId", move |_: rpcwire::dispatch::NoParams| {
        counted.fetch_add(1, Ordering::SeqCst);
        Ok("0x1")
    });
    let counted = calls.clone();
    router.method("eth_blockNumber", move |_: rpcwire::dispatch::NoParams| {
        Ok(format!("0x{:x}", counted.fetch_add(1, Ordering::SeqCst)))
    });
    let (ours, theirs) = tokio::io::duplex(1 << 16);
    let framing = rpcwire::frame::Framing::Ndjson;
    let _upstream = Peer::new(StreamTransport::from_io(theirs, framing), router);
    let client = Peer::new(
        StreamTransport::from_io(ours, framing),
        rpcwire::dispatch::Router::new(),
    );
    let cache = CacheLayer::new(limiter.clone()).with_method("eth_chainId", None);
    let service = RateLimitLayer::new(limiter)
        .reading_for(cache.clone())
        .layer(cache.layer(Server(client.link())));

    let caller = |key: &str| {
        let mut caller = http::Extensions::new();
        caller.insert(keys.find(key).unwrap().clone());
        caller
    };
    let fast = caller("k3y");
    let id = rpcwire::Id::from(1);
    let fast = CallContext::new().with_id(&id).with_extensions(&fast);
    let chain_id = RpcCall::new("eth_chainId", None).with_context(&fast);
    let result = |answer: Result<RemoteAnswer, Failed>| match answer {
        Ok(RemoteAnswer::Result(result)) => result.as_str().to_owned(),
        other => panic!("{other:?}"),
    };
    assert_eq!(result(service.call(chain_id).await), r#""0x1""#);
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    // Kept in the background: answered from Redis once it is there.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let before = calls.load(Ordering::SeqCst);
        assert_eq!(result(service.call(chain_id).await), r#""0x1""#);
        if calls.load(Ordering::SeqCst) == before {
            break;
        }
        assert!(Instant::now() < deadline, "the answer was cached");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // A cached answer is read in the rate check's own round trip: one, not two.
    let mid = caller("mid");
    let mid = CallContext::new().with_id(&id).with_extensions(&mid);
    let before = stats.stats().round_trips;
    let answer = service
        .call(RpcCall::new("eth_chainId", None).with_context(&mid))
        .await;
    assert_eq!(result(answer), r#""0x1""#);
    assert_eq!(stats.stats().round_trips - before, 1);
    assert!(matches!(
        service
            .call(RpcCall::new("eth_chainId", None).with_context(&CallContext::new().with_id(&id)))
            .await,
        Err(Failed::Refused(Refused::Unauthorized))
    ));

    // A key of 2 a second (a burst of 2): of three calls in one batch, two go on.
    let slow = caller("slow");
    let slow = CallContext::new().with_id(&id).with_extensions(&slow);
    let block = RpcCall::new("eth_blockNumber", None).with_context(&slow);
    let before = calls.load(Ordering::SeqCst);
    let outcomes = service.batch(&[BatchEntry::Call(block); 3]).await;
    assert_eq!(outcomes.len(), 3);
    assert!(matches!(outcomes[0], Some(Ok(RemoteAnswer::Result(_)))));
    assert!(matches!(outcomes[1], Some(Ok(RemoteAnswer::Result(_)))));
    assert!(
        matches!(outcomes[2], Some(Err(Failed::Refused(Refused::Limited { .. })))),
        "{:?}",
        outcomes[2]
    );
    assert_eq!(calls.load(Ordering::SeqCst), before + 2);
}

/// PEM files of a test authority and a Redis certificate it signed, in a directory of
/// their own (removed when dropped).
struct TlsFiles {
    directory: std::path::PathBuf,
    authority: certs::Authority,
}

impl TlsFiles {
    fn new() -> TlsFiles {
        let directory = std::env::temp_dir().join(format!("rpcwire-redis-tls-{}", std::process::id()));
        std::fs::create_dir_all(&directory).unwrap();
        let authority = certs::Authority::new("rpcwire redis CA");
        let server = authority.server(certs::LOCAL);
        std::fs::write(directory.join("ca.pem"), &authority.pem.cert).unwrap();
        std::fs::write(directory.join("cert.pem"), &server.cert).unwrap();
        std::fs::write(directory.join("key.pem"), &server.key).unwrap();
        TlsFiles { directory, authority }
    }

    fn path(&self, name: &str) -> String {
        self.directory.join(name).to_str().unwrap().to_owned()
    }
}

impl Drop for TlsFiles {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.directory);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fleet_shares_its_limits_over_tls() {
    use rpcwire::proxy::fleet::RedisTarget;
    let files = TlsFiles::new();
    let (cert, key, ca) = (
        files.path("cert.pem"),
        files.path("key.pem"),
        files.path("ca.pem"),
    );
    let Some(server) = RedisServer::start_tls(&cert, &key, &ca, false) else {
        return;
    };
    assert!(server.url().starts_with("rediss://"));
    let config = LimitConfig {
        prefix: format!("rpcwire:test:{}:tls:", std::process::id()),
        timeout: Duration::from_millis(500),
        ..LimitConfig::default()
    };
    let keys = ApiKeys::parse("alpha 1000\nprobe 1000000").unwrap();
    let trusted = RedisTarget::new(server.url()).with_ca_pem(files.authority.pem.cert.as_bytes());
    let fleet: Vec<SharedLimiter> = (0..2)
        .map(|_| SharedLimiter::new(trusted.clone(), config.clone()).unwrap())
        .collect();
    until_shared(&fleet, &keys).await;
    let decisions = load(
        &fleet,
        &keys,
        "alpha",
        Duration::from_millis(5),
        Duration::from_millis(300),
    )
    .await;
    assert!(
        decisions
            .iter()
            .all(|(d, _)| matches!(d, Decision::Allowed { shared: true })),
        "every check was Redis's, over TLS"
    );
    assert_eq!(fleet[0].stats().redis_errors, 0, "{:?}", fleet[0].stats());

    // Trusting another authority: the handshake fails, every check is still answered (here,
    // open: locally), none is shared.
    let stranger = certs::Authority::new("someone else's CA");
    let untrusted = RedisTarget::new(server.url()).with_ca_pem(stranger.pem.cert.as_bytes());
    let alone = [SharedLimiter::new(untrusted, config.clone()).unwrap()];
    let decisions = load(
        &alone,
        &keys,
        "alpha",
        Duration::from_millis(20),
        Duration::from_millis(600),
    )
    .await;
    assert!(!decisions.is_empty());
    assert!(
        decisions
            .iter()
            .all(|(d, waited)| !matches!(d, Decision::Allowed { shared: true })
                && *waited < Duration::from_secs(2)),
        "{:?}",
        &decisions[..decisions.len().min(3)]
    );

    // A Redis that asks for a client certificate: shared with one the authority issued.
    let Some(strict) = RedisServer::start_tls(&cert, &key, &ca, true) else {
        return;
    };
    let client = files.authority.client("gateway");
    let shown = RedisTarget::new(strict.url())
        .with_ca_pem(files.authority.pem.cert.as_bytes())
        .with_client_certificate_pem(client.cert.as_bytes(), client.key.as_bytes());
    let fleet = [SharedLimiter::new(shown.clone(), config.clone()).unwrap()];
    until_shared(&fleet, &keys).await;
    // Keys read from a hash there, over the same TLS; refused without the certificate.
    let hash = format!("rpcwire:test:{}:tls-keys", std::process::id());
    let read = ApiKeys::load(shown, &hash, Duration::from_secs(2)).await;
    assert!(read.is_ok_and(|keys| keys.is_empty()), "an empty hash read");
    let without = RedisTarget::new(strict.url()).with_ca_pem(files.authority.pem.cert.as_bytes());
    assert!(ApiKeys::load(without, &hash, Duration::from_secs(2))
        .await
        .is_err());
}
