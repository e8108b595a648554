//! What the builders set is what the getters read back, the `Debug` output of the public
//! handles names what it shows, and an HTTP upgrade that is not a valid WebSocket handshake
//! is refused with the status RFC 6455 asks for.
#![cfg(feature = "http")]

use std::time::Duration;

use http_body_util::Full;
use rpcwire::dispatch::{RequestContext, Router};
use rpcwire::frame::Framing;
use rpcwire::proxy::{RetryPolicy, UpstreamGroup};
use rpcwire::transport::http::{HttpServer, HttpService};
use rpcwire::transport::{Peer, PeerBuilder, StreamTransport};
use rpcwire::RawJson;
use tower_service::Service;

#[test]
fn a_request_context_shows_its_id_method_and_state() {
    let context = RequestContext::new(Some(7u64.into()), "eth_call");
    let text = format!("{context:?}");
    assert!(text.contains("eth_call"), "{text}");
    assert!(text.contains("cancelled: false"), "{text}");
    assert!(text.contains("has_peer: false"), "{text}");
}

#[test]
fn http_limits_read_back_as_set() {
    let service = HttpService::new(Router::default())
        .with_max_body(12_345)
        .with_body_timeout(Duration::from_millis(750));
    assert_eq!(service.max_body(), 12_345);
    assert_eq!(service.body_timeout(), Duration::from_millis(750));
    assert!(format!("{service:?}").contains("12345"));
    let server = HttpServer::new(Router::new()).with_max_body(4096);
    assert_eq!(server.service().max_body(), 4096);
}

#[test]
fn a_default_router_has_no_methods() {
    let router = Router::default();
    assert!(router.is_empty());
    assert_eq!(router.len(), 0);
}

#[test]
fn pool_settings_read_back_as_set() {
    let pool = UpstreamGroup::new(Vec::new())
        .with_timeout(Duration::from_millis(250))
        .with_retry(RetryPolicy::new().with_max_attempts(5));
    assert_eq!(pool.timeout(), Duration::from_millis(250));
    let other = RetryPolicy::new().with_max_attempts(5);
    assert_eq!(format!("{:?}", pool.retry_policy()), format!("{other:?}"));
    assert_ne!(
        format!("{:?}", pool.retry_policy()),
        format!("{:?}", RetryPolicy::new())
    );
}

#[test]
fn a_borrowed_raw_value_is_the_same_text() {
    let owned = RawJson::new(String::from(r#"{"a":[1,2]}"#)).unwrap();
    let borrowed = owned.borrowed();
    assert_eq!(borrowed.get(), owned.get());
    assert_eq!(borrowed, owned);
}

#[tokio::test]
async fn a_peer_and_its_link_show_the_same_connection() {
    let (a, _b) = tokio::io::duplex(1024);
    let peer = PeerBuilder::default().start(StreamTransport::from_io(a, Framing::Ndjson), Router::new());
    let link = peer.link();
    assert_eq!(link.stats(), peer.stats());
    let peer_text = format!("{peer:?}");
    assert!(peer_text.contains("pending_calls: 0"), "{peer_text}");
    assert!(format!("{link:?}").starts_with("PeerLink"), "{link:?}");
    drop(Peer::builder());
}

fn upgrade_request(version: &str, key: Option<&str>) -> http::Request<Full<bytes::Bytes>> {
    let mut request = http::Request::get("/")
        .header("connection", "Upgrade")
        .header("upgrade", "websocket")
        .header("sec-websocket-version", version);
    if let Some(key) = key {
        request = request.header("sec-websocket-key", key);
    }
    request.body(Full::new(bytes::Bytes::new())).unwrap()
}

#[tokio::test]
async fn a_websocket_upgrade_with_another_version_gets_426_naming_13() {
    let mut service = HttpService::new(Router::new());
    let response = service
        .call(upgrade_request("8", Some("dGhlIHNhbXBsZSBub25jZQ==")))
        .await
        .unwrap();
    assert_eq!(response.status(), 426);
    assert_eq!(response.headers()["sec-websocket-version"], "13");
}

#[tokio::test]
async fn a_websocket_upgrade_without_a_key_gets_400() {
    let mut service = HttpService::new(Router::new());
    let response = service.call(upgrade_request("13", None)).await.unwrap();
    assert_eq!(response.status(), 400);
}
