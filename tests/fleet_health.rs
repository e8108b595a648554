//! Shared upstream health against a real Redis (Debian's `redis-server`, started by the test
//! on a loopback port without persistence): three upstream groups stand for three gateway
//! instances in front of one upstream that counts the requests reaching it. When one
//! instance's breaker benches it, the others stop sending to it; while it stays down, one
//! probe per cool-down reaches it from the whole fleet, not one per instance; when a probe
//! succeeds, every instance sends to it again; without Redis, each instance's own breaker
//! decides.
#![cfg(feature = "redis")]

#[path = "support/python_peer.rs"]
mod python_peer;
#[path = "support/redis_server.rs"]
mod redis_server;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use redis_server::RedisServer;
use rpcwire::proxy::fleet::{HealthConfig, SharedHealth};
use rpcwire::proxy::{
    ForwardError, LinkAnswer, LinkError, LinkErrorKind, LinkFuture, RetryPolicy, Upstream, UpstreamGroup,
    UpstreamLink,
};
use rpcwire::{JsonBytes, RawJson};

/// The upstream: answers `1` while healthy, is not reached while down; counts every request.
#[derive(Default)]
struct Node {
    down: AtomicBool,
    requests: AtomicU64,
}

struct NodeLink(Arc<Node>);

impl UpstreamLink for NodeLink {
    fn call<'a>(
        &'a self,
        _frame: Option<&'a bytes::Bytes>,
        _method: &'a str,
        _params: Option<&'a RawJson<'a>>,
    ) -> LinkFuture<'a, LinkAnswer> {
        let node = self.0.clone();
        Box::pin(async move {
            node.requests.fetch_add(1, Ordering::SeqCst);
            if node.down.load(Ordering::SeqCst) {
                return Err(LinkError::new(LinkErrorKind::NotReached, "connection refused"));
            }
            Ok(LinkAnswer::Remote(rpcwire::middleware::RemoteAnswer::Result(
                JsonBytes::new(bytes::Bytes::from_static(b"1")).unwrap(),
            )))
        })
    }

    fn notify<'a>(&'a self, _method: &'a str, _params: Option<&'a RawJson<'a>>) -> LinkFuture<'a, ()> {
        Box::pin(async { Ok(()) })
    }
}

const COOL_DOWN: Duration = Duration::from_millis(600);
const EVERY: Duration = Duration::from_millis(50);

/// `count` instances in front of `node`, each benching it after two failures in a row, each
/// sharing its breaker through `server` (or through nothing when `server` is `None`).
fn instances(
    node: &Arc<Node>,
    server: &RedisServer,
    count: usize,
) -> Vec<(Arc<UpstreamGroup>, SharedHealth)> {
    let config = HealthConfig {
        prefix: format!("rpcwire:test:{}:health:", std::process::id()),
        every: EVERY,
        timeout: Duration::from_millis(100),
    };
    (0..count)
        .map(|_| {
            let upstream = Upstream::with_link("node", NodeLink(node.clone())).with_breaker(2, COOL_DOWN);
            let group = Arc::new(
                UpstreamGroup::new(vec![upstream])
                    .with_retry(RetryPolicy::new().with_max_attempts(1))
                    .with_timeout(Duration::from_secs(1)),
            );
            let health = SharedHealth::start(server.url(), &group, config.clone()).unwrap();
            (group, health)
        })
        .collect()
}

async fn until(what: &str, within: Duration, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(started.elapsed() < within, "{what}: not within {within:?}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn call(group: &UpstreamGroup) -> Result<JsonBytes, ForwardError> {
    group.call("eth_blockNumber", None).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_benched_by_one_instance_is_benched_by_all_and_probed_back_by_one() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let node = Arc::new(Node::default());
    let fleet = instances(&node, &server, 3);
    until("every instance synced", Duration::from_secs(5), || {
        fleet.iter().all(|(_, health)| health.stats().syncs > 0)
    })
    .await;
    for (group, _) in &fleet {
        assert_eq!(call(group).await.unwrap().as_str(), "1");
    }

    // Down: instance 0 fails twice and benches it; the others learn it from Redis.
    node.down.store(true, Ordering::SeqCst);
    for _ in 0..2 {
        assert!(matches!(
            call(&fleet[0].0).await,
            Err(ForwardError::Unavailable(_))
        ));
    }
    assert!(fleet[0].0.upstreams()[0].stats().benched);
    until("the others see it benched", Duration::from_secs(2), || {
        fleet[1..]
            .iter()
            .all(|(group, _)| group.upstreams()[0].stats().benched)
    })
    .await;
    let before = node.requests.load(Ordering::SeqCst);
    for (group, _) in &fleet[1..] {
        for _ in 0..5 {
            let refused = call(group).await.unwrap_err();
            assert!(
                matches!(&refused, ForwardError::Unavailable(reason) if reason.contains("benched")),
                "{refused:?}"
            );
        }
    }
    assert_eq!(
        node.requests.load(Ordering::SeqCst),
        before,
        "no request of the other instances reached the benched upstream"
    );

    // Still down: requests through every instance in turn for a few cool-downs; the fleet
    // probes it once per cool-down (each probe fails and benches it again), not once per
    // instance.
    let before = node.requests.load(Ordering::SeqCst);
    let window = Instant::now();
    let mut turn = 0;
    while window.elapsed() < COOL_DOWN * 3 {
        let _ = call(&fleet[turn % 3].0).await;
        turn += 1;
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let probes = node.requests.load(Ordering::SeqCst) - before;
    let periods = (window.elapsed().as_secs_f64() / COOL_DOWN.as_secs_f64()).ceil() as u64;
    assert!(
        (1..=periods).contains(&probes),
        "{probes} requests reached the upstream in {periods} cool-downs ({turn} sent)"
    );
    let picked: u64 = fleet.iter().map(|(_, health)| health.stats().probes).sum();
    assert!(picked >= probes, "{picked} probes picked, {probes} made");

    // Back: the next probe succeeds, and every instance sends to it again.
    node.down.store(false, Ordering::SeqCst);
    let back = Instant::now();
    let mut turn = 0;
    let mut in_a_row = 0;
    while in_a_row < 6 {
        assert!(
            back.elapsed() < COOL_DOWN * 4,
            "the fleet did not take the upstream back ({turn} sent)"
        );
        match call(&fleet[turn % 3].0).await {
            Ok(_) => in_a_row += 1,
            Err(_) => in_a_row = 0,
        }
        turn += 1;
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    for (group, _) in &fleet {
        assert!(!group.upstreams()[0].stats().benched);
    }
    for (_, health) in &fleet {
        assert_eq!(health.stats().redis_errors, 0);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_redis_each_instance_decides_alone() {
    let Some(mut server) = RedisServer::start() else {
        return;
    };
    let node = Arc::new(Node::default());
    let fleet = instances(&node, &server, 2);
    until("both synced", Duration::from_secs(5), || {
        fleet.iter().all(|(_, health)| health.stats().syncs > 0)
    })
    .await;
    node.down.store(true, Ordering::SeqCst);
    for _ in 0..2 {
        let _ = call(&fleet[0].0).await;
    }
    until("benched by the fleet", Duration::from_secs(2), || {
        fleet[1].0.upstreams()[0].stats().benched
    })
    .await;

    // Redis gone while the upstream is benched and back: instance 1, which never saw it fail,
    // must not stay benched by a verdict it can no longer read.
    server.stop();
    node.down.store(false, Ordering::SeqCst);
    until("Redis missed", Duration::from_secs(3), || {
        fleet[1].1.stats().redis_errors > 0
    })
    .await;
    assert_eq!(call(&fleet[1].0).await.unwrap().as_str(), "1");
    // Instance 0's own breaker still decides for itself: benched until its cool-down ends,
    // then its own probe takes the upstream back.
    let started = Instant::now();
    while call(&fleet[0].0).await.is_err() {
        assert!(
            started.elapsed() < COOL_DOWN * 3,
            "instance 0 never probed on its own"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
