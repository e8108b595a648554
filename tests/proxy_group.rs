//! `proxy::UpstreamGroup` against in-memory upstreams with faults: refused connections,
//! connections dropped with a request under way, upstreams that never answer, slow ones,
//! busy codes. Each call ends with exactly one outcome; what never reached an upstream is
//! always sent again, what may have reached one only for methods marked safe; failing
//! upstreams are benched and probed back; dropped ones reconnect.
#![cfg(feature = "tokio")]

#[path = "support/memory_upstream.rs"]
mod memory_upstream;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use memory_upstream::{faulty, healthy, refused};
use rpcwire::dispatch::{NoParams, Router};
use rpcwire::frame::Framing;
use rpcwire::proxy::{ForwardError, RetryPolicy, Upstream, UpstreamGroup};
use rpcwire::transport::{Peer, StreamTransport};
use rpcwire::RawJson;

async fn whoami(pool: &UpstreamGroup) -> Result<String, ForwardError> {
    let result = pool.call("whoami", None).await?;
    Ok(result.decode().unwrap())
}

#[tokio::test]
async fn requests_go_round_the_upstreams() {
    let pool = UpstreamGroup::new(vec![healthy("a"), healthy("b")]);
    let mut seen = Vec::new();
    for _ in 0..4 {
        seen.push(whoami(&pool).await.unwrap());
    }
    seen.sort();
    assert_eq!(seen, ["a", "a", "b", "b"]);
    let params = RawJson::new("[10, 4]").unwrap();
    assert_eq!(pool.call("subtract", Some(&params)).await.unwrap().as_str(), "6");
    // The upstream's own errors come back as they came, not retried.
    let Err(ForwardError::Remote(error)) = pool.call("nope", None).await else {
        panic!()
    };
    assert_eq!(error.code().code(), -32601);
    let stats: Vec<_> = pool.upstreams().iter().map(|u| u.stats()).collect();
    assert_eq!(stats.iter().map(|s| s.requests).sum::<u64>(), 6);
    assert_eq!(stats.iter().map(|s| s.upstream_errors).sum::<u64>(), 1);
    assert_eq!(
        stats.iter().map(|s| s.connects).sum::<u64>(),
        2,
        "one connection each, reused"
    );
}

#[tokio::test]
async fn what_never_reached_an_upstream_is_sent_again_even_when_not_safe() {
    let connects = Arc::new(AtomicUsize::new(0));
    let pool = UpstreamGroup::new(vec![refused("down", connects.clone()), healthy("up")])
        .with_retry(RetryPolicy::new().with_backoff(Duration::ZERO, Duration::ZERO));
    for _ in 0..4 {
        // `whoami` is not marked safe: it is retried only because it never left.
        assert_eq!(whoami(&pool).await.unwrap(), "up");
    }
    let down = pool.upstreams()[0].stats();
    assert!(down.not_reached >= 1, "{down:?}");
    assert_eq!(down.answered, 0);
}

#[tokio::test]
async fn what_may_have_reached_one_is_sent_again_only_when_safe() {
    let unsafe_pool = UpstreamGroup::new(vec![faulty("drops", true), healthy("up")])
        .with_retry(RetryPolicy::new().with_backoff(Duration::ZERO, Duration::ZERO));
    let error = whoami(&unsafe_pool).await.unwrap_err();
    assert!(
        matches!(&error, ForwardError::NoAnswer(reason) if reason.contains("drops")),
        "{error}"
    );
    assert_eq!(
        unsafe_pool.upstreams()[1].stats().requests,
        0,
        "not sent elsewhere"
    );
    assert_eq!(
        error.to_error_object().code().code(),
        ForwardError::NO_ANSWER_CODE
    );

    let safe_pool = UpstreamGroup::new(vec![faulty("drops", true), healthy("up")]).with_retry(
        RetryPolicy::new()
            .with_backoff(Duration::ZERO, Duration::ZERO)
            .safe_method("whoami"),
    );
    assert_eq!(whoami(&safe_pool).await.unwrap(), "up");
    assert_eq!(safe_pool.upstreams()[0].stats().no_answer, 1);
}

#[tokio::test]
async fn an_upstream_that_never_answers_times_out_and_a_safe_call_moves_on() {
    let pool = UpstreamGroup::new(vec![faulty("silent", false), healthy("up")])
        .with_timeout(Duration::from_millis(100))
        .with_retry(RetryPolicy::new().safe_method("whoami"));
    let started = std::time::Instant::now();
    assert_eq!(whoami(&pool).await.unwrap(), "up");
    assert!(started.elapsed() < Duration::from_secs(5));
    let silent = pool.upstreams()[0].stats();
    assert_eq!((silent.no_answer, silent.in_flight), (1, 0), "{silent:?}");
}

#[tokio::test]
async fn busy_codes_are_retried_for_safe_methods_and_passed_on_at_the_end() {
    let pool = UpstreamGroup::new(vec![healthy("a"), healthy("b")]).with_retry(
        RetryPolicy::new()
            .with_backoff(Duration::ZERO, Duration::ZERO)
            .safe_method("busy")
            .retry_code(-32000),
    );
    let Err(ForwardError::Remote(error)) = pool.call("busy", None).await else {
        panic!()
    };
    assert_eq!(error.message(), "server busy");
    let tries: u64 = pool.upstreams().iter().map(|u| u.stats().requests).sum();
    assert_eq!(tries, 3, "every attempt the policy allows");
}

#[tokio::test]
async fn a_failing_upstream_is_benched_then_probed_back() {
    let connects = Arc::new(AtomicUsize::new(0));
    let cool_down = Duration::from_millis(300);
    let pool = UpstreamGroup::new(vec![
        refused("down", connects.clone()).with_breaker(2, cool_down),
        healthy("up"),
    ])
    .with_retry(RetryPolicy::new().with_backoff(Duration::ZERO, Duration::ZERO));
    for _ in 0..10 {
        assert_eq!(whoami(&pool).await.unwrap(), "up");
    }
    assert_eq!(connects.load(Ordering::SeqCst), 2, "benched after two failures");
    assert!(pool.upstreams()[0].stats().benched);
    tokio::time::sleep(cool_down + Duration::from_millis(50)).await;
    for _ in 0..10 {
        assert_eq!(whoami(&pool).await.unwrap(), "up");
    }
    assert_eq!(
        connects.load(Ordering::SeqCst),
        3,
        "one probe after the cool-down, failed: benched again"
    );
}

#[tokio::test]
async fn a_dropped_upstream_reconnects() {
    // The server ends of the connections made, so that the test can drop one (as a
    // WebSocket server going away or a child process exiting would).
    let servers: Arc<std::sync::Mutex<Vec<Peer>>> = Arc::default();
    let made = servers.clone();
    let upstream = Upstream::new("a", move || {
        let (ours, theirs) = tokio::io::duplex(1 << 16);
        let mut router = Router::new();
        router.method("whoami", |_: NoParams| Ok("a"));
        made.lock().unwrap().push(Peer::new(
            StreamTransport::from_io(theirs, Framing::Ndjson),
            router,
        ));
        Peer::new(StreamTransport::from_io(ours, Framing::Ndjson), Router::new())
    });
    let pool = UpstreamGroup::new(vec![upstream]).with_retry(
        RetryPolicy::new()
            .with_backoff(Duration::from_millis(5), Duration::from_millis(5))
            .safe_method("whoami"),
    );
    assert_eq!(whoami(&pool).await.unwrap(), "a");
    assert_eq!(whoami(&pool).await.unwrap(), "a");
    assert_eq!(
        pool.upstreams()[0].stats().connects,
        1,
        "an open connection is kept"
    );
    let first = servers.lock().unwrap()[0].clone();
    first.close().await;
    // The next calls find the connection closed (or closing: then a retry) and connect again.
    for _ in 0..3 {
        assert_eq!(whoami(&pool).await.unwrap(), "a");
    }
    assert_eq!(pool.upstreams()[0].stats().connects, 2);
    assert_eq!(servers.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn retries_stop_when_the_budget_is_spent() {
    let connects = Arc::new(AtomicUsize::new(0));
    let pool = UpstreamGroup::new(vec![
        refused("x", connects.clone()).with_breaker(1000, Duration::from_secs(60)),
        refused("y", connects.clone()).with_breaker(1000, Duration::from_secs(60)),
    ])
    .with_retry(
        RetryPolicy::new()
            .with_max_attempts(10)
            .with_backoff(Duration::ZERO, Duration::ZERO)
            .with_budget(0.0, 3.0),
    );
    let error = whoami(&pool).await.unwrap_err();
    assert!(matches!(error, ForwardError::Unavailable(_)), "{error}");
    let attempts: u64 = pool.upstreams().iter().map(|u| u.stats().requests).sum();
    assert_eq!(
        attempts, 4,
        "the first attempt and the three retries of the reserve"
    );
    let error = whoami(&pool).await.unwrap_err();
    assert!(matches!(error, ForwardError::Unavailable(_)));
    let attempts: u64 = pool.upstreams().iter().map(|u| u.stats().requests).sum();
    assert_eq!(attempts, 5, "no budget left: no retry");
}

#[tokio::test]
async fn the_in_flight_limit_sends_concurrent_calls_to_the_free_upstream() {
    let pool = Arc::new(UpstreamGroup::new(vec![
        healthy("a").with_max_in_flight(1),
        healthy("b").with_max_in_flight(1),
    ]));
    let calls: Vec<_> = (0..2)
        .map(|_| {
            let pool = pool.clone();
            tokio::spawn(async move { pool.call("slow", None).await.unwrap().decode::<String>().unwrap() })
        })
        .collect();
    let mut names = Vec::new();
    for call in calls {
        names.push(call.await.unwrap());
    }
    names.sort();
    assert_eq!(names, ["a", "b"]);
}

#[tokio::test]
async fn notifications_go_to_one_upstream() {
    let connects = Arc::new(AtomicUsize::new(0));
    let pool = UpstreamGroup::new(vec![refused("down", connects), healthy("up")]);
    pool.notify("whoami", None).await.unwrap();
    let scalar = RawJson::new("1").unwrap();
    assert!(matches!(
        pool.notify("x", Some(&scalar)).await,
        Err(ForwardError::Params(_))
    ));
    assert!(matches!(
        pool.call("x", Some(&scalar)).await,
        Err(ForwardError::Params(_))
    ));
}

/// Over HTTP: a refused connection is never-reached (sent again even for a method not
/// marked safe), a 503 may-have-reached (sent again only when safe), and rpcwire's server
/// answers.
#[cfg(feature = "http")]
#[tokio::test]
async fn http_upstreams_are_classified_by_what_their_transport_saw() {
    use rpcwire::transport::http::HttpServer;

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let good = format!("http://{}/", listener.local_addr().unwrap());
    let mut router = Router::new();
    router.method("whoami", |_: NoParams| Ok("http"));
    tokio::spawn(HttpServer::new(router).serve(listener));

    let refusing = {
        let port = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .unwrap()
            .local_addr()
            .unwrap();
        format!("http://{port}/")
    };
    let unavailable = {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/", listener.local_addr().unwrap());
        let app = axum::Router::new().route(
            "/",
            axum::routing::post(|| async { (axum::http::StatusCode::SERVICE_UNAVAILABLE, "try later") }),
        );
        tokio::spawn(async move { axum::serve(listener, app).await });
        url
    };
    let fast = RetryPolicy::new().with_backoff(Duration::ZERO, Duration::ZERO);

    let pool = UpstreamGroup::new(vec![
        Upstream::address(&refusing).unwrap(),
        Upstream::address(&good).unwrap(),
    ])
    .with_retry(fast.clone());
    assert_eq!(whoami(&pool).await.unwrap(), "http");
    assert_eq!(pool.upstreams()[0].stats().not_reached, 1);

    let pool = UpstreamGroup::new(vec![
        Upstream::address(&unavailable).unwrap(),
        Upstream::address(&good).unwrap(),
    ])
    .with_retry(fast.clone());
    let error = whoami(&pool).await.unwrap_err();
    assert!(
        matches!(&error, ForwardError::NoAnswer(reason) if reason.contains("503")),
        "{error}"
    );

    let pool = UpstreamGroup::new(vec![
        Upstream::address(&unavailable).unwrap(),
        Upstream::address(&good).unwrap(),
    ])
    .with_retry(fast.safe_method("whoami"));
    assert_eq!(whoami(&pool).await.unwrap(), "http");
}

/// HTTP upstreams that answer with something other than a response to the call (garbage, a
/// foreign id, nothing at all) count as having given no answer; notifications are POSTed; a
/// TCP upstream (a `Peer` served with `Peer::serve` per connection) is reached by its address.
#[cfg(feature = "http")]
#[tokio::test]
async fn http_answers_that_are_not_the_calls_response_and_tcp_upstreams() {
    use rpcwire::frame::Framing;

    async fn serve_axum(answer: &'static str, status: u16) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/", listener.local_addr().unwrap());
        let app = axum::Router::new().route(
            "/",
            axum::routing::post(move || async move {
                (axum::http::StatusCode::from_u16(status).unwrap(), answer)
            }),
        );
        tokio::spawn(async move { axum::serve(listener, app).await });
        url
    }
    let garbage = serve_axum("this is not JSON-RPC", 200).await;
    let foreign = serve_axum(r#"{"jsonrpc":"2.0","id":999,"result":1}"#, 200).await;
    let nothing = serve_axum("", 204).await;
    for url in [&garbage, &foreign, &nothing] {
        let pool = UpstreamGroup::new(vec![Upstream::address(url).unwrap()]);
        let error = whoami(&pool).await.unwrap_err();
        assert!(matches!(error, ForwardError::NoAnswer(_)), "{url}: {error}");
        assert_eq!(pool.upstreams()[0].stats().no_answer, 1);
        // A notification is one POST; the answer to it does not matter.
        pool.notify("log", None).await.unwrap();
        // It shows the upstream by its label, never its URL.
        let shown = format!("{pool:?}");
        assert!(shown.contains(&rpcwire::proxy::upstream_label(url)), "{shown}");
        assert!(!shown.contains(url.as_str()), "{shown}");
    }

    // TCP: a Peer per accepted connection.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = format!("tcp://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let mut router = Router::new();
        router.method("whoami", |_: NoParams| Ok("tcp"));
        let router = Arc::new(router);
        while let Ok((socket, _)) = listener.accept().await {
            tokio::spawn(Peer::serve(
                StreamTransport::from_io(socket, Framing::Ndjson),
                router.clone(),
            ));
        }
    });
    let pool = UpstreamGroup::new(vec![Upstream::address_limited(&address, 1 << 20).unwrap()]);
    assert_eq!(whoami(&pool).await.unwrap(), "tcp");
    pool.notify("whoami", None).await.unwrap();
    assert_eq!(pool.upstreams()[0].stats().connects, 1);
}
