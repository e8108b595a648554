//! Subscriptions through the gateway (`proxy::Subscriptions`): clients on WebSocket subscribe
//! through rpcwire's gateway to a WebSocket node (`support/eth_node.rs`'s `WsNode`); each gets
//! the node's notifications under an id of the gateway's own, only for what it subscribed to;
//! unsubscribing or disconnecting ends the subscription at the node; a node that drops its
//! connections is subscribed to again and the clients keep their ids; over HTTP
//! `eth_subscribe` is refused as geth refuses it.
#![cfg(feature = "http")]

#[path = "support/eth_node.rs"]
mod eth_node;
#[path = "support/http_post.rs"]
mod http_post;

use std::time::{Duration, Instant};

use eth_node::WsNode;
use rpcwire::dispatch::Router;
use rpcwire::frame::Framing;
use rpcwire::proxy::{Dial, Gateway, Subscriptions, UpstreamGroup};
use rpcwire::transport::http::HttpServer;
use rpcwire::transport::websocket::WebSocketTransport;
use rpcwire::transport::Peer;
use serde_json::Value;
use tokio::sync::mpsc;

/// The gateway in front of `node` (subscriptions only); its address.
async fn gateway(node: &WsNode, subscriptions: Subscriptions) -> (String, Subscriptions) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap().to_string();
    let router = Gateway::new(UpstreamGroup::new(vec![]))
        .with_subscriptions(subscriptions.clone())
        .into_router();
    tokio::spawn(HttpServer::new(router).serve(listener));
    let _ = node;
    (address, subscriptions)
}

/// A WebSocket client of the gateway and the notifications it gets (their params).
async fn client(address: &str) -> (Peer, mpsc::UnboundedReceiver<Value>) {
    let (sender, received) = mpsc::unbounded_channel();
    let mut router = Router::new();
    router.raw_notification("eth_subscription", move |params| {
        let params = params.map(|p| serde_json::from_str(p.raw().get()).unwrap());
        let _ = sender.send(params.unwrap_or(Value::Null));
    });
    let transport = WebSocketTransport::connect(&format!("ws://{address}/"))
        .await
        .unwrap();
    let _ = Framing::Ndjson;
    (Peer::new(transport, router), received)
}

async fn next(received: &mut mpsc::UnboundedReceiver<Value>) -> Value {
    tokio::time::timeout(Duration::from_secs(5), received.recv())
        .await
        .expect("a notification in time")
        .expect("the client is there")
}

/// Waits (up to 5 s) until `check` holds.
async fn eventually(what: &str, check: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !check() {
        assert!(Instant::now() < deadline, "{what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn subscriptions(node: &WsNode) -> Subscriptions {
    Subscriptions::new([node.url.as_str()], &Dial::new()).unwrap()
}

#[tokio::test]
async fn each_client_gets_its_own_notifications_under_its_own_id() {
    let node = WsNode::start();
    let (address, subscriptions) = gateway(&node, subscriptions(&node)).await;
    let (one, mut one_gets) = client(&address).await;
    let (two, mut two_gets) = client(&address).await;
    let first: String = one.call("eth_subscribe", ["newHeads"]).await.unwrap();
    let second: String = two.call("eth_subscribe", ["newHeads"]).await.unwrap();
    assert_ne!(first, second);
    assert!(first.starts_with("0x") && first.len() == 18, "{first}");
    // One connection to the node, a subscription there for each client.
    assert_eq!((node.connections(), node.subscriptions()), (1, 2));
    for number in 1..=3 {
        assert_eq!(node.push(number), 2);
        for (gets, id) in [(&mut one_gets, &first), (&mut two_gets, &second)] {
            let params = next(gets).await;
            assert_eq!(params["subscription"], id.as_str());
            assert_eq!(params["result"]["number"], format!("{number:#x}"));
        }
    }
    assert_eq!(subscriptions.stats().notifications, 6);
    assert_eq!(subscriptions.stats().active, 2);

    // Unsubscribing ends it at the node; another client's id is not one's to end.
    let refused: bool = one.call("eth_unsubscribe", [&second]).await.unwrap();
    assert!(!refused);
    let ended: bool = one.call("eth_unsubscribe", [&first]).await.unwrap();
    assert!(ended);
    eventually("one subscription left at the node", || node.subscriptions() == 1).await;
    node.push(4);
    assert_eq!(next(&mut two_gets).await["result"]["number"], "0x4");
    assert!(
        one_gets.try_recv().is_err(),
        "no notification after unsubscribing"
    );

    // Disconnecting ends the rest.
    two.close().await;
    eventually("no subscription left at the node", || node.subscriptions() == 0).await;
    eventually("none left in the gateway", || subscriptions.stats().active == 0).await;
}

#[tokio::test]
async fn a_node_that_drops_its_connections_is_subscribed_to_again_and_the_client_keeps_its_id() {
    let node = WsNode::start();
    let (address, subscriptions) = gateway(&node, subscriptions(&node)).await;
    let (subscriber, mut gets) = client(&address).await;
    let id: String = subscriber.call("eth_subscribe", ["newHeads"]).await.unwrap();
    node.push(1);
    assert_eq!(next(&mut gets).await["subscription"], id.as_str());
    node.drop_connections();
    eventually("subscribed again", || {
        node.subscriptions() == 1 && node.connections() == 2
    })
    .await;
    // Counted once the node's answer is back (after the node counted the subscription).
    eventually("counted as subscribed again", || {
        subscriptions.stats().resubscribed == 1
    })
    .await;
    node.push(2);
    let params = next(&mut gets).await;
    assert_eq!(
        (
            params["subscription"].as_str(),
            params["result"]["number"].as_str()
        ),
        (Some(id.as_str()), Some("0x2"))
    );
}

#[tokio::test]
async fn limits_and_http_are_refused_clearly() {
    let node = WsNode::start();
    let (address, _) = gateway(&node, subscriptions(&node).with_limits(1, 16)).await;
    let (subscriber, _gets) = client(&address).await;
    let _: String = subscriber.call("eth_subscribe", ["newHeads"]).await.unwrap();
    let refused = subscriber
        .call::<_, String>("eth_subscribe", ["newHeads"])
        .await
        .unwrap_err();
    assert!(refused.to_string().contains("-32005"), "{refused}");
    assert_eq!(node.subscriptions(), 1);

    // Over HTTP: what geth answers.
    let subscribe = address.clone();
    let posted = tokio::task::spawn_blocking(move || {
        http_post::post_to(
            &subscribe,
            "/",
            &[],
            r#"{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newHeads"]}"#,
        )
    })
    .await
    .unwrap();
    assert_eq!(posted.body["error"]["code"], -32601);
    assert_eq!(posted.body["error"]["message"], "notifications not supported");
    let unsubscribe = address.clone();
    let posted = tokio::task::spawn_blocking(move || {
        http_post::post_to(
            &unsubscribe,
            "/",
            &[],
            r#"{"jsonrpc":"2.0","id":2,"method":"eth_unsubscribe","params":["0x1"]}"#,
        )
    })
    .await
    .unwrap();
    assert_eq!(posted.body["result"], false);

    // What the node refuses is the client's answer, as the node wrote it.
    let (other, _) = client(&address).await;
    let refused = other
        .call::<_, String>("eth_subscribe", ["bogus"])
        .await
        .unwrap_err();
    assert!(
        refused.to_string().contains("unsupported subscription type"),
        "{refused}"
    );

    // A node that is not there: a clear error, nothing held.
    let gone = Subscriptions::new(["ws://127.0.0.1:9/v3/KEY"], &Dial::new()).unwrap();
    let (address, gone) = gateway(&node, gone).await;
    let (subscriber, _gets) = client(&address).await;
    let error = subscriber
        .call::<_, String>("eth_subscribe", ["newHeads"])
        .await
        .unwrap_err();
    let text = error.to_string();
    assert!(text.contains("-32010") && !text.contains("KEY"), "{text}");
    assert_eq!(gone.stats().active, 0);
}

#[tokio::test]
async fn a_client_that_stops_reading_is_dropped_and_its_subscription_ended() {
    use futures::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::Message;
    let node = WsNode::start();
    let (address, subscriptions) = gateway(&node, subscriptions(&node).with_limits(4, 8)).await;
    // A client that subscribes, reads the answer, and reads nothing more.
    let (mut socket, _) = tokio_tungstenite::connect_async(format!("ws://{address}/"))
        .await
        .unwrap();
    socket
        .send(Message::text(
            r#"{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newHeads"]}"#,
        ))
        .await
        .unwrap();
    let answer = socket.next().await.unwrap().unwrap();
    assert!(answer.to_text().unwrap().contains("0x"), "{answer:?}");
    // A reader that keeps up, beside it.
    let (reader, mut gets) = client(&address).await;
    let _: String = reader.call("eth_subscribe", ["newHeads"]).await.unwrap();
    // Large heads until the silent client's socket buffers, its connection's queue and its 8
    // waiting notifications are full (bounded: at most 4,000 heads of 64 KiB, one per 2 ms).
    for number in 0..4000 {
        node.push_padded(number, 64 << 10);
        if subscriptions.stats().dropped_clients > 0 {
            break;
        }
        // At a pace a reading client keeps up with.
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    assert_eq!(subscriptions.stats().dropped_clients, 1);
    eventually("the silent client's subscription ended at the node", || {
        node.subscriptions() == 1
    })
    .await;
    // The reader still gets its heads.
    while gets.try_recv().is_ok() {}
    node.push(9999);
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let params = next(&mut gets).await;
        if params["result"]["number"] == "0x270f" {
            break;
        }
        assert!(Instant::now() < deadline);
    }
    // The silent client's connection was closed: past what was already sent, it ends.
    let closed = tokio::time::timeout(Duration::from_secs(20), async {
        while let Some(Ok(message)) = socket.next().await {
            if message.is_close() {
                break;
            }
        }
    })
    .await;
    assert!(closed.is_ok(), "the dropped client's connection stays open");
}

#[tokio::test]
async fn an_upstream_of_ones_own_that_cannot_connect_is_said_by_its_label() {
    let refusing: rpcwire::proxy::Connector = Box::new(|| {
        Box::pin(async {
            Err(std::io::Error::new(
                std::io::ErrorKind::ConnectionRefused,
                "no node",
            ))
        })
    });
    let subscriptions = Subscriptions::connecting(vec![("in-memory".to_owned(), refusing)]);
    let node = WsNode::start();
    let (address, subscriptions) = gateway(&node, subscriptions).await;
    let (subscriber, _gets) = client(&address).await;
    let error = subscriber
        .call::<_, String>("eth_subscribe", ["newHeads"])
        .await
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("-32010") && error.contains("in-memory: not connected"),
        "{error}"
    );
    assert_eq!(subscriptions.stats().active, 0);
}
