//! The gateway pieces' metrics (`metrics` feature) as a Prometheus recorder renders them:
//! attempts by upstream, method and outcome, latency, retries, coalesced and refused calls.
//! One test in its own binary: it installs the process's global recorder.
#![cfg(feature = "metrics")]

#[path = "support/memory_upstream.rs"]
mod memory_upstream;

use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use std::time::Duration;

use memory_upstream::{healthy, refused};
use metrics_exporter_prometheus::PrometheusBuilder;
use rpcwire::proxy::{Gateway, RetryPolicy, UpstreamGroup};

#[tokio::test]
async fn forwarding_is_counted_per_upstream_method_and_outcome() {
    let recorder = PrometheusBuilder::new().build_recorder();
    let handle = recorder.handle();
    metrics::set_global_recorder(recorder).expect("the only recorder of this test binary");

    let pool = UpstreamGroup::new(vec![
        refused("down", Arc::new(AtomicUsize::new(0))),
        healthy("up"),
    ])
    .with_retry(RetryPolicy::new().with_backoff(Duration::ZERO, Duration::ZERO));
    let router = Gateway::new(pool)
        .deny(["admin_peers"])
        .coalesce(true)
        .into_router();
    let mut out = bytes::BytesMut::new();
    for input in [
        r#"{"jsonrpc":"2.0","id":1,"method":"whoami"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"whoami"}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"nope"}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"admin_peers"}"#,
        r#"[{"jsonrpc":"2.0","id":5,"method":"slow"},{"jsonrpc":"2.0","id":6,"method":"slow"}]"#,
    ] {
        out.clear();
        assert!(router.handle_async(input.as_bytes(), &mut out).await);
    }
    let text = handle.render();
    let value = |series: &str| -> f64 {
        text.lines()
            .find_map(|line| line.strip_prefix(series)?.trim().parse().ok())
            .unwrap_or_else(|| panic!("no {series} in\n{text}"))
    };
    assert_eq!(
        value(r#"rpcwire_upstream_requests_total{upstream="up",method="whoami",outcome="answered"}"#),
        2.0
    );
    assert_eq!(
        value(r#"rpcwire_upstream_requests_total{upstream="up",method="nope",outcome="upstream_error"}"#),
        1.0
    );
    assert!(
        value(r#"rpcwire_upstream_requests_total{upstream="down",method="whoami",outcome="not_reached"}"#)
            >= 1.0
    );
    assert!(value(r#"rpcwire_upstream_retries_total{method="whoami"}"#) >= 1.0);
    assert_eq!(
        value(r#"rpcwire_gateway_denied_total{method="admin_peers"}"#),
        1.0
    );
    assert_eq!(value(r#"rpcwire_gateway_coalesced_total{method="slow"}"#), 1.0);
    assert_eq!(value(r#"rpcwire_upstream_in_flight{upstream="up"}"#), 0.0);
    assert!(text.contains("rpcwire_upstream_latency_seconds"), "{text}");
}
