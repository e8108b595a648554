//! `FleetLayer` composed with axum and tower-http's CORS, compression and trace layers, as
//! README shows it, served on 127.0.0.1 and called by hyper's client: the layers do their
//! work on the fleet's answers (preflights answered, CORS headers on a 401 and a 429, a
//! gzip-compressed result that decompresses to the answer with the client's id), and the
//! shared limit holds through them (a real Redis, started by the test).
#![cfg(feature = "redis")]

#[path = "support/python_peer.rs"]
mod python_peer;
#[path = "support/redis_server.rs"]
mod redis_server;

use std::io::Read;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use redis_server::RedisServer;
use rpcwire::proxy::fleet::{ApiKeys, Decision, FleetLayer, LimitConfig, SharedLimiter};
use rpcwire::transport::http::{HttpService, ParsedBody};
use tower_http::compression::CompressionLayer;
use tower_http::cors::CorsLayer;
use tower_http::trace::TraceLayer;
use tower_layer::Layer;

/// The app README shows: the JSON-RPC service behind the fleet's layer, at `/` and `/{key}`,
/// with tower-http's layers around every route.
fn app(limiter: SharedLimiter) -> axum::Router {
    let mut router = rpcwire::dispatch::Router::new();
    router.method("eth_getLogs", |_: rpcwire::dispatch::NoParams| {
        Ok(vec!["0x00000000000000000000000000000000000000000000000000000000deadbeef"; 64])
    });
    let keys = ApiKeys::parse("k3y-alpha 1000 alpha\nk3y-slow 1 slow\n").unwrap();
    let rpc = FleetLayer::new(keys)
        .with_limiter(limiter)
        .layer(HttpService::new(router));
    axum::Router::new()
        .route_service("/", rpc.clone())
        .route_service("/{key}", rpc)
        .layer(CompressionLayer::new())
        .layer(CorsLayer::permissive())
        .layer(TraceLayer::new_for_http())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fleet_layer_composes_with_axum_and_tower_http() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let config = LimitConfig {
        prefix: format!("rpcwire:test:{}:", std::process::id()),
        timeout: Duration::from_millis(200),
        ..LimitConfig::default()
    };
    let limiter = SharedLimiter::new(server.url(), config).unwrap();
    // Connected before the first request (it connects in the background on its first check).
    let warm = ApiKeys::parse("warm-up 1000000").unwrap();
    let started = std::time::Instant::now();
    while limiter.check(warm.find("warm-up").unwrap(), 1).await != (Decision::Allowed { shared: true }) {
        assert!(started.elapsed() < Duration::from_secs(10), "Redis reached");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let serving = tokio::spawn(async move { axum::serve(listener, app(limiter)).await });
    let client: Client<_, Full<Bytes>> = Client::builder(TokioExecutor::new()).build_http();
    let send = |method: &str, path: &str, headers: &[(&str, &str)], body: &str| {
        let mut request = http::Request::builder()
            .method(method)
            .uri(format!("http://{address}{path}"))
            .header("origin", "https://app.example")
            .header("content-type", "application/json");
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let request = request.body(Full::new(Bytes::from(body.to_owned()))).unwrap();
        let client = client.clone();
        async move {
            let response = tokio::time::timeout(Duration::from_secs(10), client.request(request))
                .await
                .expect("answered in time")
                .expect("answered");
            let (head, body) = response.into_parts();
            (head, body.collect().await.unwrap().to_bytes())
        }
    };
    let logs = r#"{"jsonrpc":"2.0","id":"a\u00e9","method":"eth_getLogs"}"#;

    // A CORS preflight is answered by tower-http, before any key is asked for.
    let (head, _) = send(
        "OPTIONS",
        "/k3y-alpha",
        &[("access-control-request-method", "POST")],
        "",
    )
    .await;
    assert!(head.status.is_success(), "{}", head.status);
    assert_eq!(head.headers["access-control-allow-origin"], "*");

    // A known key: the answer, compressed by tower-http, with the client's id as it wrote it.
    let (head, body) = send("POST", "/k3y-alpha", &[("accept-encoding", "gzip")], logs).await;
    assert_eq!(head.status, 200);
    assert_eq!(head.headers["content-encoding"], "gzip");
    assert_eq!(head.headers["access-control-allow-origin"], "*");
    let mut answer = String::new();
    flate2::read::GzDecoder::new(&body[..])
        .read_to_string(&mut answer)
        .expect("gzip");
    assert!(
        answer.starts_with(r#"{"jsonrpc":"2.0","id":"a\u00e9","result":["0x"#),
        "{answer}"
    );
    assert!(
        body.len() < answer.len() / 4,
        "{} bytes for {}",
        body.len(),
        answer.len()
    );

    // No key (the same by header): 401 from the fleet's layer, with tower-http's CORS headers.
    let (head, body) = send("POST", "/", &[], logs).await;
    assert_eq!(head.status, 401);
    assert_eq!(head.headers["access-control-allow-origin"], "*");
    assert!(std::str::from_utf8(&body).unwrap().contains("-32001"));
    let (head, _) = send("POST", "/", &[("x-api-key", "k3y-alpha")], logs).await;
    assert_eq!(head.status, 200);

    // Over the rate (1 a second, a burst of one): 429 with Retry-After and the error with its id.
    let mut statuses = Vec::new();
    for id in 0..3 {
        let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"eth_getLogs"}}"#);
        let (head, answer) = send("POST", "/k3y-slow", &[], &body).await;
        if head.status == 429 {
            assert!(head.headers.contains_key("retry-after"));
            assert_eq!(head.headers["access-control-allow-origin"], "*");
            let answer = std::str::from_utf8(&answer).unwrap();
            assert!(
                answer.contains("-32005") && answer.contains(&format!(r#""id":{id}"#)),
                "{answer}"
            );
        }
        statuses.push(head.status.as_u16());
    }
    assert_eq!(statuses, [200, 429, 429]);
    serving.abort();
}

/// `HttpServer::serve_layered`: the server's own connections with a layer in front of its
/// service (here the fleet's keys, no Redis needed).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_server_serves_a_layered_service() {
    let mut router = rpcwire::dispatch::Router::new();
    router.method("ping", |_: rpcwire::dispatch::NoParams| Ok("pong"));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let layer = FleetLayer::new(ApiKeys::parse("k3y 100").unwrap());
    let serving =
        tokio::spawn(rpcwire::transport::http::HttpServer::new(router).serve_layered(listener, layer));
    let client: Client<_, Full<Bytes>> = Client::builder(TokioExecutor::new()).build_http();
    for (path, status, answer) in [
        ("/k3y", 200, r#"{"jsonrpc":"2.0","id":1,"result":"pong"}"#),
        ("/nope", 401, "-32001"),
    ] {
        let request = http::Request::post(format!("http://{address}{path}"))
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from_static(
                br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            )))
            .unwrap();
        let response = client.request(request).await.unwrap();
        assert_eq!(response.status(), status);
        let body = response.into_body().collect().await.unwrap().to_bytes();
        assert!(std::str::from_utf8(&body).unwrap().contains(answer), "{body:?}");
    }
    serving.abort();
}

/// What a service behind the fleet's layer sees of each request: the methods of the body the
/// layer parsed, handed on with the request (`None`: no parse came with it).
#[derive(Clone)]
struct Seen {
    inner: HttpService,
    methods: std::sync::Arc<std::sync::Mutex<Vec<Option<Vec<String>>>>>,
}

impl tower_service::Service<http::Request<Full<Bytes>>> for Seen {
    type Response = http::Response<Full<Bytes>>;
    type Error = std::convert::Infallible;
    type Future =
        std::pin::Pin<Box<dyn std::future::Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, _: &mut std::task::Context<'_>) -> std::task::Poll<Result<(), Self::Error>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<Full<Bytes>>) -> Self::Future {
        let parsed = request.extensions().get::<ParsedBody>().map(ParsedBody::methods);
        self.methods.lock().unwrap().push(parsed);
        let mut inner = self.inner.clone();
        Box::pin(async move { tower_service::Service::call(&mut inner, request).await })
    }
}

/// With the shared limit, the layer parses each body once (its methods weighed) and hands the
/// parse on with the request; the service behind answers from it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_layer_hands_its_parse_of_the_body_to_the_service_behind() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let config = LimitConfig {
        prefix: format!("rpcwire:test:{}:parse:", std::process::id()),
        timeout: Duration::from_secs(2),
        ..LimitConfig::default()
    };
    let limiter = SharedLimiter::new(server.url(), config).unwrap();
    let mut router = rpcwire::dispatch::Router::new();
    router.method("ping", |_: rpcwire::dispatch::NoParams| Ok("pong"));
    let seen = Seen {
        inner: HttpService::new(router),
        methods: Default::default(),
    };
    let mut service = FleetLayer::new(ApiKeys::parse("k3y 100000").unwrap())
        .with_limiter(limiter)
        .layer(seen.clone());
    for (body, expected) in [
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":"pong"}"#,
        ),
        (
            r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}, {"jsonrpc":"2.0","id":2,"method":"ping"}]"#,
            r#"[{"jsonrpc":"2.0","id":1,"result":"pong"},{"jsonrpc":"2.0","id":2,"result":"pong"}]"#,
        ),
    ] {
        let request = http::Request::post("/")
            .header("content-type", "application/json")
            .header("x-api-key", "k3y")
            .body(Full::new(Bytes::from(body)))
            .unwrap();
        let response = tokio::time::timeout(
            Duration::from_secs(10),
            tower_service::Service::call(&mut service, request),
        )
        .await
        .expect("answered in time")
        .unwrap();
        assert_eq!(response.status(), 200);
        let answer = response.into_body().collect().await.unwrap().to_bytes();
        assert_eq!(answer, expected.as_bytes());
    }
    let methods = seen.methods.lock().unwrap().clone();
    let ping = || "ping".to_owned();
    assert_eq!(methods, [Some(vec![ping()]), Some(vec![ping(), ping()])]);
}
