//! Hedging (`proxy::UpstreamGroup::with_hedge`): a call of a method marked safe whose first
//! upstream has not answered after the hedge's delay goes to another upstream too, and the
//! first answer wins; calls answered in time and methods not marked safe are never hedged.
//! Upstreams are HTTP servers on 127.0.0.1 that answer after a delay the test sets.
#![cfg(feature = "http")]

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rpcwire::proxy::{Hedge, RetryPolicy, Upstream, UpstreamGroup};

/// An upstream answering every call with `name` after its delay (ms, changeable); how many
/// calls it got.
struct Delayed {
    url: String,
    delay_ms: Arc<AtomicU64>,
    calls: Arc<AtomicUsize>,
}

async fn delayed(name: &'static str, delay: Duration) -> Delayed {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    let delay_ms = Arc::new(AtomicU64::new(delay.as_millis() as u64));
    let calls = Arc::new(AtomicUsize::new(0));
    let (waits, counted) = (delay_ms.clone(), calls.clone());
    let app = axum::Router::new().route(
        "/",
        axum::routing::post(move |body: axum::body::Bytes| {
            counted.fetch_add(1, Ordering::SeqCst);
            let wait = Duration::from_millis(waits.load(Ordering::SeqCst));
            async move {
                tokio::time::sleep(wait).await;
                let request: serde_json::Value = serde_json::from_slice(&body).unwrap();
                serde_json::json!({"jsonrpc":"2.0","id":request["id"],"result":name}).to_string()
            }
        }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    Delayed { url, delay_ms, calls }
}

fn group(upstreams: &[&Delayed], hedge: Hedge) -> UpstreamGroup {
    UpstreamGroup::new(
        upstreams
            .iter()
            .map(|u| Upstream::address(&u.url).unwrap())
            .collect(),
    )
    .with_retry(RetryPolicy::new().safe_method("eth_call"))
    .with_hedge(hedge)
}

async fn call(group: &UpstreamGroup, method: &str) -> (String, Duration) {
    let started = Instant::now();
    let answer = group.call(method, None).await.unwrap();
    (answer.decode().unwrap(), started.elapsed())
}

#[tokio::test]
async fn a_slow_first_upstream_is_hedged_on_the_other_and_the_first_answer_wins() {
    let slow = delayed("slow", Duration::from_millis(800)).await;
    let fast = delayed("fast", Duration::ZERO).await;
    let group = group(&[&slow, &fast], Hedge::after(Duration::from_millis(50)));

    // The first call goes to the slow one first (upstreams in turn): hedged, the fast wins.
    let (answer, took) = call(&group, "eth_call").await;
    assert_eq!(answer, "fast");
    assert!(took < Duration::from_millis(600), "{took:?}");
    assert_eq!(
        group.hedge_stats(),
        rpcwire::proxy::HedgeStats { sent: 1, won: 1 }
    );
    assert_eq!(
        (
            slow.calls.load(Ordering::SeqCst),
            fast.calls.load(Ordering::SeqCst)
        ),
        (1, 1)
    );

    // The next starts on the fast one and is answered in time: no second attempt.
    assert_eq!(call(&group, "eth_call").await.0, "fast");
    assert_eq!(group.hedge_stats().sent, 1);

    // A method not marked safe waits for its upstream, however slow.
    let (answer, took) = call(&group, "eth_sendRawTransaction").await;
    assert_eq!(answer, "slow");
    assert!(took >= Duration::from_millis(800), "{took:?}");
    assert_eq!(group.hedge_stats().sent, 1);
}

#[tokio::test]
async fn a_quantile_hedge_waits_about_as_long_as_the_upstream_usually_takes() {
    let a = delayed("a", Duration::from_millis(30)).await;
    let b = delayed("b", Duration::ZERO).await;
    let group = group(&[&a, &b], Hedge::quantile(0.5, Duration::from_millis(1)));
    // Both answer in their usual time: a in about 30 ms, b at once; nothing is hedged while
    // each answers within its own median... mostly: count only what follows.
    for _ in 0..40 {
        call(&group, "eth_call").await;
    }
    let before = group.hedge_stats();
    // Now `a` is slow: a call that starts on it is hedged after about its median (~30 ms).
    a.delay_ms.store(2000, Ordering::SeqCst);
    let mut hedged = 0;
    for _ in 0..2 {
        let (answer, took) = call(&group, "eth_call").await;
        if answer == "b" && took < Duration::from_millis(1000) {
            hedged += 1;
        }
    }
    let after = group.hedge_stats();
    assert!(after.won > before.won, "{before:?} → {after:?}");
    assert!(hedged >= 1, "{after:?}");
}

#[tokio::test]
async fn a_second_attempt_that_fails_leaves_the_first_to_answer() {
    let slow = delayed("slow", Duration::from_millis(300)).await;
    // An upstream whose connections are refused.
    let port = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap()
        .local_addr()
        .unwrap();
    let refusing = Delayed {
        url: format!("http://{port}/"),
        delay_ms: Arc::new(AtomicU64::new(0)),
        calls: Arc::new(AtomicUsize::new(0)),
    };
    let group = group(&[&slow, &refusing], Hedge::after(Duration::from_millis(20)));
    let (answer, took) = call(&group, "eth_call").await;
    assert_eq!(answer, "slow");
    assert!(took >= Duration::from_millis(300), "{took:?}");
    assert_eq!(
        group.hedge_stats(),
        rpcwire::proxy::HedgeStats { sent: 1, won: 0 }
    );
    // One upstream only: nothing to hedge on.
    let alone = UpstreamGroup::new(vec![Upstream::address(&slow.url).unwrap()])
        .with_retry(RetryPolicy::new().safe_method("eth_call"))
        .with_hedge(Hedge::after(Duration::from_millis(1)));
    assert_eq!(call(&alone, "eth_call").await.0, "slow");
    assert_eq!(alone.hedge_stats().sent, 0);
}

#[tokio::test]
async fn preferring_the_faster_sends_most_calls_to_it_and_some_still_in_turn() {
    let slow = delayed("slow", Duration::from_millis(20)).await;
    let fast = delayed("fast", Duration::ZERO).await;
    let group = UpstreamGroup::new(vec![
        Upstream::address(&slow.url).unwrap(),
        Upstream::address(&fast.url).unwrap(),
    ])
    .prefer_faster(true);
    let mut answered = std::collections::HashMap::new();
    for _ in 0..128 {
        *answered.entry(call(&group, "eth_call").await.0).or_insert(0) += 1;
    }
    // Each is timed at its first call; from then on the fast one takes all but one call in 32.
    let (to_slow, to_fast) = (answered["slow"], answered["fast"]);
    assert!((2..=8).contains(&to_slow), "{answered:?}");
    assert_eq!(to_slow + to_fast, 128);

    // It slows down and the other speeds up: the choice follows once the moving averages
    // have crossed (the one now fast is timed again one call in 32, its average falling by an
    // eighth of the gap each time), and then sticks.
    slow.delay_ms.store(0, Ordering::SeqCst);
    fast.delay_ms.store(20, Ordering::SeqCst);
    for _ in 0..160 {
        call(&group, "eth_call").await;
    }
    let before = slow.calls.load(Ordering::SeqCst);
    for _ in 0..32 {
        call(&group, "eth_call").await;
    }
    assert!(
        slow.calls.load(Ordering::SeqCst) - before >= 31,
        "the choice did not follow"
    );
}

#[tokio::test]
async fn an_attempt_a_hedge_won_over_counts_against_its_upstream() {
    // The first upstream answers late: each call is hedged to the second, which wins; the
    // first's attempts, dropped, count what they took, so that it is chosen less.
    let late = delayed("late", Duration::from_millis(300)).await;
    let quick = delayed("quick", Duration::ZERO).await;
    let group = UpstreamGroup::new(vec![
        Upstream::address(&late.url).unwrap(),
        Upstream::address(&quick.url).unwrap(),
    ])
    .with_retry(RetryPolicy::new().safe_method("eth_call"))
    .with_hedge(Hedge::after(Duration::from_millis(20)))
    .prefer_faster(true);
    let mut slow_calls = 0;
    for _ in 0..40 {
        let (who, took) = call(&group, "eth_call").await;
        assert_eq!(who, "quick");
        if took >= Duration::from_millis(20) {
            slow_calls += 1;
        }
    }
    // The late one is tried first once (not yet timed) and then one call in 32.
    assert!(slow_calls <= 4, "{slow_calls} calls waited for the hedge");
    assert!(late.calls.load(Ordering::SeqCst) <= 4);
}
