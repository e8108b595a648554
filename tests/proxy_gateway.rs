//! `proxy::Gateway` behind a `Router`: local methods served locally, the rest forwarded to
//! in-memory upstreams; the method policy; routing to a second pool; identical calls under
//! way coalesced into one upstream call, each client answered with its own id; a batch whose
//! elements fail in different ways answered element by element, in order.
#![cfg(feature = "tokio")]

#[path = "support/memory_upstream.rs"]
mod memory_upstream;

use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

use bytes::BytesMut;
use memory_upstream::{healthy, refused};
use rpcwire::dispatch::{NoParams, Router};
use rpcwire::proxy::{ForwardError, Gateway, UpstreamGroup};
use serde_json::{json, Value};

async fn answer(router: &Router, input: &str) -> Value {
    let mut out = BytesMut::new();
    let answered = tokio::time::timeout(
        std::time::Duration::from_secs(10),
        router.handle_async(input.as_bytes(), &mut out),
    )
    .await
    .expect("an answer in time");
    assert!(answered, "{input}");
    serde_json::from_slice(&out).unwrap()
}

#[tokio::test]
async fn local_methods_stay_local_the_rest_is_forwarded_under_the_policy() {
    let mut router = Router::new();
    router.method("gateway_version", |_: NoParams| Ok("1.0"));
    let gateway = Gateway::new(UpstreamGroup::new(vec![healthy("main")]))
        .deny(["subtract"])
        .route(["slow"], UpstreamGroup::new(vec![healthy("side")]))
        .install(&mut router);
    let batch = answer(
        &router,
        r#"[{"jsonrpc":"2.0","id":1,"method":"gateway_version"},
            {"jsonrpc":"2.0","id":"two","method":"whoami"},
            {"jsonrpc":"2.0","id":3,"method":"subtract","params":[2,1]},
            {"jsonrpc":"2.0","id":4,"method":"slow"},
            {"jsonrpc":"2.0","id":5,"method":"busy"},
            {"jsonrpc":"2.0","id":6},
            {"jsonrpc":"2.0","method":"whoami"}]"#,
    )
    .await;
    assert_eq!(
        batch,
        json!([
            {"jsonrpc": "2.0", "id": 1, "result": "1.0"},
            {"jsonrpc": "2.0", "id": "two", "result": "main"},
            {"jsonrpc": "2.0", "id": 3, "error": {"code": -32601, "message": "Method not found", "data": "subtract"}},
            {"jsonrpc": "2.0", "id": 4, "result": "side"},
            {"jsonrpc": "2.0", "id": 5, "error": {"code": -32000, "message": "server busy"}},
            {"jsonrpc": "2.0", "id": 6, "error": {"code": -32600, "message": "Invalid Request", "data": batch[5]["error"]["data"]}},
        ])
    );
    let stats = gateway.stats();
    assert_eq!(
        (stats.forwarded, stats.notifications, stats.denied),
        (3, 1, 1),
        "{stats:?}"
    );
}

#[tokio::test]
async fn an_allow_list_forwards_only_what_is_on_it() {
    let router = Gateway::new(UpstreamGroup::new(vec![healthy("main")]))
        .allow(["whoami"])
        .into_router();
    let allowed = answer(&router, r#"{"jsonrpc":"2.0","id":1,"method":"whoami"}"#).await;
    assert_eq!(allowed["result"], "main");
    let refused = answer(
        &router,
        r#"{"jsonrpc":"2.0","id":2,"method":"subtract","params":[1,1]}"#,
    )
    .await;
    assert_eq!(refused["error"]["code"], -32601);
}

#[tokio::test]
async fn identical_calls_under_way_share_one_upstream_call() {
    let pool = UpstreamGroup::new(vec![healthy("main")]);
    let mut router = Router::new();
    let gateway = Gateway::new(pool).coalesce(true).install(&mut router);
    // Five identical slow calls in one batch (its async elements run at the same time),
    // and one with other params bytes.
    let batch = answer(
        &router,
        r#"[{"jsonrpc":"2.0","id":1,"method":"slow","params":[]},
            {"jsonrpc":"2.0","id":"b","method":"slow","params":[]},
            {"jsonrpc":"2.0","id":3.50,"method":"slow","params":[]},
            {"jsonrpc":"2.0","id":4,"method":"slow","params":[]},
            {"jsonrpc":"2.0","id":5,"method":"slow","params":[]},
            {"jsonrpc":"2.0","id":6,"method":"slow","params":[ ]}]"#,
    )
    .await;
    let ids: Vec<&Value> = batch.as_array().unwrap().iter().map(|a| &a["id"]).collect();
    assert_eq!(
        ids,
        [
            &json!(1),
            &json!("b"),
            &json!(3.5),
            &json!(4),
            &json!(5),
            &json!(6)
        ]
    );
    assert!(
        batch.as_array().unwrap().iter().all(|a| a["result"] == "main"),
        "{batch}"
    );
    let stats = gateway.stats();
    assert_eq!((stats.forwarded, stats.coalesced), (2, 4), "{stats:?}");
}

#[tokio::test]
async fn no_upstream_is_an_error_answer_with_the_clients_id() {
    let connects = Arc::new(AtomicUsize::new(0));
    let router = Gateway::new(UpstreamGroup::new(vec![refused("down", connects)])).into_router();
    let answer = answer(&router, r#"{"jsonrpc":"2.0","id":"q-1","method":"whoami"}"#).await;
    assert_eq!(answer["id"], "q-1");
    assert_eq!(answer["error"]["code"], ForwardError::UNAVAILABLE_CODE);
    assert!(
        answer["error"]["data"].as_str().unwrap().contains("down"),
        "{answer}"
    );
}
