//! Interop with jsonrpsee, the incumbent for JSON-RPC over HTTP and WebSocket in Rust: its
//! HTTP and WebSocket clients call rpcwire's server (single calls, batches, notifications, a
//! subscription over WebSocket), and rpcwire's client transports call a jsonrpsee server.
//! On 127.0.0.1, every wait bounded.

#![cfg(feature = "http")]

#[path = "support/http_server.rs"]
mod http_server;

use http_server::{spec_router, start};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use jsonrpsee::core::client::{ClientT, SubscriptionClientT};
use jsonrpsee::core::params::BatchRequestBuilder;
use jsonrpsee::rpc_params;
use rpcwire::dispatch::Router;
use rpcwire::transport::http::{HttpClientTransport, HttpServer, HttpService};
use rpcwire::transport::websocket::WebSocketTransport;
use rpcwire::transport::{Peer, PeerError, PeerErrorKind};

const LIMIT: Duration = Duration::from_secs(10);

#[tokio::test]
async fn jsonrpsee_http_client_calls_rpcwire() {
    let server = start(HttpServer::from_service(HttpService::new(spec_router()))).await;
    let address = server.address;
    let client = jsonrpsee::http_client::HttpClientBuilder::default()
        .request_timeout(LIMIT)
        .build(format!("http://{address}"))
        .unwrap();
    let difference: i64 = client.request("subtract", rpc_params![42, 23]).await.unwrap();
    assert_eq!(difference, 19);
    client.notification("update", rpc_params![1, 2]).await.unwrap();
    let error = client.request::<i64, _>("nope", rpc_params![]).await.unwrap_err();
    assert!(
        error.to_string().contains("-32601") || error.to_string().contains("not found"),
        "{error}"
    );

    let mut batch = BatchRequestBuilder::new();
    batch.insert("sum", rpc_params![1, 2, 4]).unwrap();
    batch.insert("subtract", rpc_params![42, 23]).unwrap();
    batch.insert("get_data", rpc_params![]).unwrap();
    let answers = client.batch_request::<serde_json::Value>(batch).await.unwrap();
    let values: Vec<serde_json::Value> = answers.into_iter().map(|answer| answer.unwrap()).collect();
    assert_eq!(
        values,
        [
            serde_json::json!(7),
            serde_json::json!(19),
            serde_json::json!(["hello", 5])
        ]
    );
}

#[tokio::test]
async fn jsonrpsee_ws_client_calls_and_subscribes() {
    // `eth_subscribe` answers a subscription id; the connection's peer then pushes three
    // notifications in jsonrpsee's (and Ethereum's) subscription shape.
    let peers: Arc<Mutex<Vec<Peer>>> = Arc::default();
    let mut router = spec_router();
    let for_handler = peers.clone();
    router.method("eth_subscribe", move |(kind,): (String,)| {
        assert_eq!(kind, "newHeads");
        let peer = for_handler.lock().unwrap().last().cloned().expect("a connection");
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            for n in 1..=3 {
                let params = serde_json::json!({ "subscription": "0x9ce59a", "result": { "number": n } });
                let _ = peer.notify("eth_subscription", params).await;
            }
        });
        Ok("0x9ce59a")
    });
    router.method("eth_unsubscribe", |(_id,): (String,)| Ok(true));
    let seen = peers.clone();
    let service = HttpService::new(router).on_websocket(move |peer| seen.lock().unwrap().push(peer));
    let server = start(HttpServer::from_service(service)).await;
    let address = server.address;

    let client = jsonrpsee::ws_client::WsClientBuilder::default()
        .request_timeout(LIMIT)
        .build(format!("ws://{address}"))
        .await
        .unwrap();
    let difference: i64 = client.request("subtract", rpc_params![42, 23]).await.unwrap();
    assert_eq!(difference, 19);
    let mut heads = client
        .subscribe::<serde_json::Value, _>("eth_subscribe", rpc_params!["newHeads"], "eth_unsubscribe")
        .await
        .unwrap();
    for n in 1..=3 {
        let head = tokio::time::timeout(LIMIT, heads.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        assert_eq!(head, serde_json::json!({ "number": n }));
    }
}

/// A jsonrpsee server with `subtract`, and its address.
async fn jsonrpsee_server() -> (SocketAddr, jsonrpsee::server::ServerHandle) {
    let server = jsonrpsee::server::Server::builder()
        .build("127.0.0.1:0")
        .await
        .unwrap();
    let address = server.local_addr().unwrap();
    let mut module = jsonrpsee::RpcModule::new(());
    module
        .register_method("subtract", |params, _, _| {
            let (a, b): (i64, i64) = params.parse()?;
            Ok::<i64, jsonrpsee::types::ErrorObjectOwned>(a - b)
        })
        .unwrap();
    (address, server.start(module))
}

#[tokio::test]
async fn rpcwire_clients_call_a_jsonrpsee_server() {
    let (address, handle) = jsonrpsee_server().await;
    let over_http = Peer::new(
        HttpClientTransport::new(format!("http://{address}/").parse().unwrap()).unwrap(),
        Router::new(),
    );
    let transport = WebSocketTransport::connect(&format!("ws://{address}/"))
        .await
        .unwrap();
    let over_ws = Peer::new(transport, Router::new());
    for client in [&over_http, &over_ws] {
        let difference: i64 = tokio::time::timeout(LIMIT, client.call("subtract", (42, 23)))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(difference, 19);
        let raw = rpcwire::RawJson::new("[5,3]").unwrap();
        assert_eq!(&client.call_raw("subtract", Some(&raw)).await.unwrap()[..], b"2");
        match client
            .call::<_, i64>("nope", ())
            .await
            .map_err(PeerError::into_kind)
        {
            Err(PeerErrorKind::Remote(error)) => assert_eq!(error.code().code(), -32601),
            other => panic!("{other:?}"),
        }
    }
    over_http.close().await;
    over_ws.close().await;
    handle.stop().unwrap();
}
