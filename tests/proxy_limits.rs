//! Rate limits passed on (`proxy`): an upstream's HTTP 429 (with `Retry-After`) or a
//! "limit exceeded" error answer (-32005, or 429 in the body, inside HTTP 200) pauses that
//! upstream for as long as it asked, the request goes to another one (even a method not marked
//! safe: it did not run), and when no upstream can take it the client gets -32005 with the
//! upstream's message and data — over HTTP, for a request alone in its body, as `429` with
//! `Retry-After`. Upstreams are axum servers on 127.0.0.1 answering as providers do.
#![cfg(feature = "http")]

#[path = "support/http_post.rs"]
mod http_post;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::http::{HeaderMap, HeaderValue, StatusCode};
use rpcwire::dispatch::{NoParams, Router};
use rpcwire::proxy::{ForwardError, Gateway, RetryPolicy, Upstream, UpstreamGroup};
use rpcwire::transport::http::HttpServer;
use serde_json::{json, Value};

/// An upstream answering every POST with `status`, `retry_after` (when given) and `body`; how
/// many POSTs it got.
struct Scripted {
    url: String,
    posts: Arc<AtomicUsize>,
}

async fn scripted(status: u16, retry_after: Option<&'static str>, body: &'static str) -> Scripted {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v3/SECRET-KEY", listener.local_addr().unwrap());
    let posts = Arc::new(AtomicUsize::new(0));
    let counted = posts.clone();
    let app = axum::Router::new().route(
        "/v3/SECRET-KEY",
        axum::routing::post(move || {
            counted.fetch_add(1, Ordering::SeqCst);
            async move {
                let mut headers = HeaderMap::new();
                headers.insert("content-type", HeaderValue::from_static("application/json"));
                if let Some(wait) = retry_after {
                    headers.insert("retry-after", HeaderValue::from_static(wait));
                }
                (StatusCode::from_u16(status).unwrap(), headers, body)
            }
        }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    Scripted { url, posts }
}

/// An upstream that answers `whoami` with "good".
async fn good() -> Scripted {
    scripted(200, None, r#"{"jsonrpc":"2.0","id":1,"result":"good"}"#).await
}

const RATE_EXCEEDED: &str = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32005,"message":"project ID request rate exceeded","data":{"see":"https://provider.example/ratelimits"}}}"#;

fn not_safe() -> RetryPolicy {
    // No method marked safe: only what did not run is sent again.
    RetryPolicy::new().with_backoff(Duration::ZERO, Duration::ZERO)
}

async fn whoami(group: &UpstreamGroup) -> Result<String, ForwardError> {
    Ok(group.call("whoami", None).await?.decode().unwrap())
}

#[tokio::test]
async fn a_429_pauses_its_upstream_for_its_retry_after_and_the_request_goes_to_another() {
    let limited = scripted(429, Some("30"), RATE_EXCEEDED).await;
    let other = good().await;
    let group = UpstreamGroup::new(vec![
        Upstream::address(&limited.url).unwrap(),
        Upstream::address(&other.url).unwrap(),
    ])
    .with_retry(not_safe());
    assert_eq!(whoami(&group).await.unwrap(), "good");
    let stats = group.upstreams()[0].stats();
    assert_eq!((stats.requests, stats.limited), (1, 1));
    let paused = stats.paused_for.expect("paused");
    assert!(
        paused > Duration::from_secs(28) && paused <= Duration::from_secs(30),
        "{paused:?}"
    );
    // Paused: the next calls all go to the other upstream.
    for _ in 0..4 {
        assert_eq!(whoami(&group).await.unwrap(), "good");
    }
    assert_eq!(limited.posts.load(Ordering::SeqCst), 1);
    assert_eq!(other.posts.load(Ordering::SeqCst), 5);
    // A limit is not a failure: the breaker does not bench it.
    assert!(!group.upstreams()[0].stats().benched);
}

#[tokio::test]
async fn when_every_upstream_is_over_its_limit_the_client_gets_the_limit_and_when_to_come_back() {
    let limited = scripted(429, Some("30"), RATE_EXCEEDED).await;
    let group = UpstreamGroup::new(vec![Upstream::address(&limited.url).unwrap()]).with_retry(not_safe());
    for _ in 0..3 {
        match whoami(&group).await.unwrap_err() {
            ForwardError::Limited { error, retry_after } => {
                assert_eq!(error.code().code(), -32005);
                assert_eq!(error.message(), "project ID request rate exceeded");
                assert_eq!(
                    error.data().unwrap().get(),
                    r#"{"see":"https://provider.example/ratelimits"}"#
                );
                assert!(retry_after > Duration::from_secs(28) && retry_after <= Duration::from_secs(30));
            }
            other => panic!("{other:?}"),
        }
    }
    // Asked once: the calls after it were answered from the pause.
    assert_eq!(limited.posts.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn limits_inside_http_200_and_without_a_body_pause_for_the_default_and_are_asked_again() {
    // A provider's 429 code in the body of an HTTP 200; no Retry-After.
    let in_body = scripted(
        200,
        None,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":429,"message":"exceeded its compute units per second capacity"}}"#,
    )
    .await;
    // A bare 429 with a text body.
    let bare = scripted(429, None, "Too Many Requests").await;
    for (upstream, message) in [
        (&in_body, "exceeded its compute units per second capacity"),
        (&bare, "limit exceeded"),
    ] {
        let group = UpstreamGroup::new(vec![Upstream::address(&upstream.url).unwrap()])
            .with_retry(not_safe())
            .with_limit_pause(Duration::from_millis(300), Duration::from_secs(5));
        let ForwardError::Limited { error, retry_after } = whoami(&group).await.unwrap_err() else {
            panic!("not a limit")
        };
        assert_eq!((error.code().code(), error.message()), (-32005, message));
        assert!(retry_after <= Duration::from_millis(300), "{retry_after:?}");
        assert_eq!(upstream.posts.load(Ordering::SeqCst), 1);
        tokio::time::sleep(Duration::from_millis(350)).await;
        assert!(matches!(whoami(&group).await, Err(ForwardError::Limited { .. })));
        assert_eq!(
            upstream.posts.load(Ordering::SeqCst),
            2,
            "asked again after the pause"
        );
    }
}

#[tokio::test]
async fn a_retry_after_longer_than_the_most_allowed_is_cut_and_an_http_date_is_read() {
    let hour = scripted(429, Some("3600"), RATE_EXCEEDED).await;
    let group = UpstreamGroup::new(vec![Upstream::address(&hour.url).unwrap()])
        .with_retry(not_safe())
        .with_limit_pause(Duration::from_millis(100), Duration::from_secs(2));
    let ForwardError::Limited { retry_after, .. } = whoami(&group).await.unwrap_err() else {
        panic!("not a limit")
    };
    assert!(retry_after <= Duration::from_secs(2), "{retry_after:?}");

    let date = httpdate_in(Duration::from_secs(20));
    let dated = scripted(429, Some(Box::leak(date.into_boxed_str())), RATE_EXCEEDED).await;
    let group = UpstreamGroup::new(vec![Upstream::address(&dated.url).unwrap()]).with_retry(not_safe());
    let ForwardError::Limited { retry_after, .. } = whoami(&group).await.unwrap_err() else {
        panic!("not a limit")
    };
    assert!(
        retry_after > Duration::from_secs(17) && retry_after <= Duration::from_secs(20),
        "{retry_after:?}"
    );
}

/// An HTTP date `wait` from now (IMF-fixdate).
fn httpdate_in(wait: Duration) -> String {
    let at = std::time::SystemTime::now() + wait;
    let seconds = at.duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let (days, rest) = (seconds / 86_400, seconds % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let weekday = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][(days % 7) as usize];
    let months = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    format!(
        "{weekday}, {day:02} {} {year} {:02}:{:02}:{:02} GMT",
        months[month as usize - 1],
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

#[tokio::test]
async fn a_request_too_large_for_the_upstream_is_not_a_rate_limit() {
    // eth_getLogs over too wide a range: -32005 too, but about the request.
    let too_many = scripted(
        200,
        None,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32005,"message":"query returned more than 10000 results"}}"#,
    )
    .await;
    let group = UpstreamGroup::new(vec![Upstream::address(&too_many.url).unwrap()]).with_retry(not_safe());
    for _ in 0..2 {
        match whoami(&group).await.unwrap_err() {
            ForwardError::Remote(error) => {
                assert_eq!(error.message(), "query returned more than 10000 results")
            }
            other => panic!("{other:?}"),
        }
    }
    let stats = group.upstreams()[0].stats();
    assert_eq!((stats.limited, stats.paused_for), (0, None));
    assert_eq!(too_many.posts.load(Ordering::SeqCst), 2);
}

/// A gateway on rpcwire's HTTP server in front of `group`: its address.
async fn gateway(group: UpstreamGroup) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap().to_string();
    let mut router = Router::new();
    router.method("local", |_: NoParams| Ok("here"));
    Gateway::new(group).install(&mut router);
    tokio::spawn(HttpServer::new(router).serve(listener));
    address
}

async fn post(address: &str, body: Value) -> http_post::Posted {
    let address = address.to_owned();
    tokio::task::spawn_blocking(move || http_post::post_to(&address, "/", &[], &body.to_string()))
        .await
        .unwrap()
}

#[tokio::test]
async fn through_the_gateway_a_single_request_gets_429_with_retry_after_and_a_batch_gets_its_errors() {
    let limited = scripted(429, Some("7"), RATE_EXCEEDED).await;
    let group = UpstreamGroup::new(vec![Upstream::address(&limited.url).unwrap()]).with_retry(not_safe());
    let address = gateway(group).await;

    let single = post(
        &address,
        json!({"jsonrpc":"2.0","id":"a","method":"eth_blockNumber"}),
    )
    .await;
    assert_eq!(single.status, 429);
    assert_eq!(single.header("retry-after"), Some("7"));
    assert_eq!(
        single.body,
        json!({"jsonrpc":"2.0","id":"a","error":{"code":-32005,"message":"project ID request rate exceeded","data":{"see":"https://provider.example/ratelimits"}}})
    );
    // The key in the upstream's URL reaches no client.
    assert!(!single.body.to_string().contains("SECRET-KEY"));

    // A batch: HTTP 200, each request its own error, a local method answered as usual.
    let batch = post(
        &address,
        json!([
            {"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"},
            {"jsonrpc":"2.0","id":2,"method":"local"},
        ]),
    )
    .await;
    assert_eq!(batch.status, 200);
    assert_eq!(batch.header("retry-after"), None);
    assert_eq!(batch.body[0]["error"]["code"], -32005);
    assert_eq!(batch.body[1], json!({"jsonrpc":"2.0","id":2,"result":"here"}));
    // One POST upstream in all: the pause answered the rest.
    assert_eq!(limited.posts.load(Ordering::SeqCst), 1);

    // A local method alone is not limited.
    let local = post(&address, json!({"jsonrpc":"2.0","id":3,"method":"local"})).await;
    assert_eq!((local.status, local.header("retry-after")), (200, None));
}

#[tokio::test]
async fn through_the_gateway_a_limit_inside_http_200_also_gets_429() {
    let in_body = scripted(200, None, RATE_EXCEEDED).await;
    let group = UpstreamGroup::new(vec![Upstream::address(&in_body.url).unwrap()])
        .with_retry(not_safe())
        .with_limit_pause(Duration::from_millis(1500), Duration::from_secs(5));
    let address = gateway(group).await;
    let single = post(&address, json!({"jsonrpc":"2.0","id":9,"method":"eth_chainId"})).await;
    assert_eq!(single.status, 429);
    assert_eq!(single.header("retry-after"), Some("2"), "1.5 s rounded up");
    assert_eq!(single.body["id"], 9);
    assert_eq!(
        single.body["error"]["message"],
        "project ID request rate exceeded"
    );
}
