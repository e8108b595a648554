//! Three `examples/gateway` instances with `--keys` and `--redis`, in front of
//! `examples/http_server`, one real Redis (started by the test): a key's rate holds across
//! the three (within 5% of rate × time, plus one second's burst), and still when one of them
//! is killed; an answer cached through one is served by the others without reaching the
//! upstream, each client's id byte for byte; Redis killed mid-load: every request still
//! answered, in time, within the instances' local share.
#![cfg(all(unix, feature = "redis", feature = "metrics"))]

#[path = "support/example_binary.rs"]
mod example_binary;
#[path = "support/http_post.rs"]
mod http_post;
#[path = "support/listening_child.rs"]
mod listening_child;
#[path = "support/python_peer.rs"]
mod python_peer;
#[path = "support/redis_server.rs"]
mod redis_server;

use std::time::{Duration, Instant};

use example_binary::example_binary;
use http_post::post_to;
use listening_child::{start_listening, Listening};
use redis_server::RedisServer;
use serde_json::json;

fn keys_file() -> std::path::PathBuf {
    let path = std::env::temp_dir().join(format!("rpcwire-fleet-keys-{}", std::process::id()));
    std::fs::write(&path, "limited 40 team-a\nfree 100000 team-b\n").unwrap();
    path
}

fn instance(upstream: &str, redis: &RedisServer, keys: &std::path::Path) -> Listening {
    let args = [
        "--listen",
        "127.0.0.1:0",
        "--upstream",
        upstream,
        "--keys",
        keys.to_str().unwrap(),
        "--redis",
        &redis.url(),
        "--instances",
        "3",
        "--redis-timeout-ms",
        "100",
        "--cache",
        "get_data=0",
        "--admin",
    ];
    start_listening(&example_binary("gateway"), &args)
}

/// Sends `subtract` with key `limited` to the instances in turn from three threads for
/// `duration`: the statuses seen, and the seconds it took.
fn load(addresses: &[String], duration: Duration) -> (Vec<u16>, f64) {
    let started = Instant::now();
    let threads: Vec<_> = (0..3)
        .map(|thread| {
            let addresses = addresses.to_vec();
            std::thread::spawn(move || {
                let mut statuses = Vec::new();
                let mut turn = thread;
                while started.elapsed() < duration {
                    let address = &addresses[turn % addresses.len()];
                    let body = json!({"jsonrpc": "2.0", "id": turn, "method": "subtract", "params": [5, 3]})
                        .to_string();
                    let posted = post_to(address, "/", &["authorization: Bearer limited"], &body);
                    if posted.status == 200 {
                        assert_eq!(posted.body["result"], 2);
                    } else {
                        assert_eq!(posted.body["error"]["code"], -32005, "{}", posted.body);
                        assert_eq!(posted.body["id"], json!(turn));
                    }
                    statuses.push(posted.status);
                    turn += 1;
                    std::thread::sleep(Duration::from_millis(4));
                }
                statuses
            })
        })
        .collect();
    let statuses = threads.into_iter().flat_map(|t| t.join().unwrap()).collect();
    (statuses, started.elapsed().as_secs_f64())
}

fn admitted(statuses: &[u16]) -> f64 {
    statuses.iter().filter(|s| **s == 200).count() as f64
}

/// The requests the instances sent upstream, by their own count (`gateway_upstreams`).
fn upstream_requests(addresses: &[String]) -> u64 {
    addresses
        .iter()
        .map(|address| {
            let body = r#"{"jsonrpc":"2.0","id":1,"method":"gateway_upstreams"}"#;
            let posted = post_to(address, "/free", &[], body);
            posted.body["result"]
                .as_array()
                .unwrap()
                .iter()
                .map(|u| u["requests"].as_u64().unwrap())
                .sum::<u64>()
        })
        .sum()
}

#[test]
fn three_instances_share_limits_and_a_cache_through_one_redis() {
    let Some(mut redis) = RedisServer::start() else {
        return;
    };
    let upstream_server = start_listening(&example_binary("http_server"), &["--listen", "127.0.0.1:0"]);
    let upstream = format!("http://{}/", upstream_server.address);
    let keys = keys_file();
    let mut instances: Vec<Listening> = (0..3).map(|_| instance(&upstream, &redis, &keys)).collect();
    let addresses: Vec<String> = instances.iter().map(|i| i.address.clone()).collect();

    // Keys: none or unknown, 401 with a JSON-RPC error; known, by header or path.
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"get_data"}"#;
    let refused = post_to(&addresses[0], "/", &[], ping);
    assert_eq!(
        (refused.status, refused.body["error"]["code"].clone()),
        (401, json!(-32001))
    );
    assert_eq!(
        post_to(&addresses[0], "/", &["x-api-key: nope"], ping).status,
        401
    );
    assert_eq!(
        post_to(&addresses[1], "/", &["x-api-key: free"], ping).status,
        200
    );

    // The cache: fetched through one, served by the others without the upstream, each
    // client's id as it wrote it.
    let before = upstream_requests(&addresses);
    let first = post_to(
        &addresses[0],
        "/free",
        &[],
        r#"{"jsonrpc":"2.0","id":"a","method":"get_data","params":[]}"#,
    );
    assert_eq!(
        first.body,
        json!({"jsonrpc": "2.0", "id": "a", "result": ["hello", 5]})
    );
    std::thread::sleep(Duration::from_millis(300));
    for (address, id) in [(&addresses[1], "1.50"), (&addresses[2], "\"c\"")] {
        let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"get_data","params":[]}}"#);
        let posted = post_to(address, "/free", &[], &body);
        assert_eq!(posted.body["result"], json!(["hello", 5]));
        assert_eq!(posted.body["id"].to_string(), id.replace("1.50", "1.5"));
    }
    // (gateway_upstreams itself is answered by each instance, not upstream.)
    assert_eq!(
        upstream_requests(&addresses),
        before + 1,
        "only the first reached the upstream"
    );

    // A key's limit across the three, then with one killed.
    let (first_half, first_seconds) = load(&addresses, Duration::from_millis(1500));
    instances.pop();
    let survivors = &addresses[..2];
    let (second_half, second_seconds) = load(survivors, Duration::from_millis(1500));
    let seconds = first_seconds + second_seconds;
    let admitted_total = admitted(&first_half) + admitted(&second_half);
    let (low, high) = (40.0 * seconds * 0.95, 40.0 * seconds * 1.05 + 40.0);
    assert!(
        (low..=high).contains(&admitted_total),
        "admitted {admitted_total} in {seconds:.2} s at 40/s: expected {low:.0}..{high:.0}"
    );

    // An instance that reads its keys from Redis (their digests there, never their texts).
    let hash = format!("rpcwire:test:{}:keys", std::process::id());
    let digest: String = {
        use sha2::Digest;
        sha2::Sha256::digest(b"from-redis")
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let client = redis::Client::open(redis.url()).unwrap();
        let mut connection = client.get_multiplexed_async_connection().await.unwrap();
        redis::cmd("HSET")
            .arg(&hash)
            .arg(&digest)
            .arg("100 team-r")
            .query_async::<()>(&mut connection)
            .await
            .unwrap();
    });
    let args = [
        "--listen",
        "127.0.0.1:0",
        "--upstream",
        &upstream,
        "--keys-from-redis",
        &hash,
        "--redis",
        &redis.url(),
    ];
    let from_redis = start_listening(&example_binary("gateway"), &args);
    assert_eq!(post_to(&from_redis.address, "/from-redis", &[], ping).status, 200);
    assert_eq!(post_to(&from_redis.address, "/limited", &[], ping).status, 401);
    drop(from_redis);

    // Redis killed mid-load: every request answered, in time, each instance at its share of
    // the rate (a third, or a half once Redis counted the killed instance out).
    redis.stop();
    let started = Instant::now();
    let (down, down_seconds) = load(survivors, Duration::from_millis(1500));
    assert!(started.elapsed() < Duration::from_secs(5));
    let local = admitted(&down);
    assert!(
        local > 0.0 && local <= 2.0 * (40.0 / 2.0) * (down_seconds * 1.05 + 1.0) + 2.0,
        "admitted {local} with Redis down"
    );
    drop(instances);
    let _ = std::fs::remove_file(&keys);
}
