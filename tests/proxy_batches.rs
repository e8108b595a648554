//! Batches kept whole (`proxy`): a client's batch goes upstream as one batch (split by the
//! upstream's batch limit), its elements mapped back by id whatever order the upstream
//! answers in, every answer with the client's own id, in the client's order — what the
//! router serves itself, what the gateway denies and elements that are not requests answered
//! in their places. A batch whose exchange failed goes whole to the next upstream as a call
//! would. Upstreams are servers on 127.0.0.1 that record what they get.
#![cfg(feature = "http")]

#[path = "support/memory_upstream.rs"]
mod memory_upstream;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::http::StatusCode;
use rpcwire::dispatch::{NoParams, Router};
use rpcwire::proxy::{Gateway, RetryPolicy, Upstream, UpstreamGroup};
use rpcwire::transport::http::HttpServer;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

type Script = Arc<dyn Fn(&Value) -> (StatusCode, String) + Send + Sync>;

/// An HTTP upstream answering each body with `script`; the bodies it got.
async fn upstream(script: Script) -> (String, Arc<Mutex<Vec<Value>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let recorded = seen.clone();
    let app = axum::Router::new().route(
        "/",
        axum::routing::post(move |body: axum::body::Bytes| {
            let body: Value = serde_json::from_slice(&body).unwrap();
            recorded.lock().unwrap().push(body.clone());
            let (status, answer) = script(&body);
            async move { (status, answer) }
        }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, seen)
}

/// The answer of a node to one request: its method and params echoed in the result.
fn echo(request: &Value) -> Value {
    json!({"jsonrpc":"2.0","id":request["id"],"result":{"method":request["method"],"params":request["params"]}})
}

/// Answers a batch with the answers to its calls, last first; a request alone as itself.
fn reversed() -> Script {
    Arc::new(|body: &Value| {
        let answer = match body {
            Value::Array(batch) => Value::Array(
                batch
                    .iter()
                    .filter(|r| r.get("id").is_some())
                    .rev()
                    .map(echo)
                    .collect(),
            ),
            request => echo(request),
        };
        (StatusCode::OK, answer.to_string())
    })
}

/// A gateway on rpcwire's HTTP server in front of `gateway` (a local method `local` beside it).
async fn front(gateway: Gateway) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let mut router = Router::new();
    router.method("local", |_: NoParams| Ok("here"));
    gateway.install(&mut router);
    tokio::spawn(HttpServer::new(router).serve(listener));
    format!("http://{address}/")
}

/// POSTs `body`; the answer's exact text.
async fn post(url: &str, body: String) -> String {
    let address = url.trim_start_matches("http://").trim_end_matches('/').to_owned();
    let answer = tokio::task::spawn_blocking(move || {
        use std::io::{Read, Write};
        let mut socket = std::net::TcpStream::connect(address).unwrap();
        socket.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        write!(
            socket,
            "POST / HTTP/1.1\r\nhost: x\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut raw = String::new();
        socket.read_to_string(&mut raw).unwrap();
        raw
    })
    .await
    .unwrap();
    answer.split_once("\r\n\r\n").unwrap().1.to_owned()
}

#[tokio::test]
async fn a_clients_batch_goes_upstream_as_one_and_comes_back_in_its_order_with_its_ids() {
    let (url, seen) = upstream(reversed()).await;
    let group = UpstreamGroup::new(vec![Upstream::address(&url).unwrap()]);
    let address = front(Gateway::new(group).deny(["admin_peers"])).await;
    let batch = r#"[
        {"jsonrpc":"2.0","id":1.50,"method":"eth_chainId"},
        {"jsonrpc":"2.0","id":"a","method":"eth_getBalance","params":["0x1","latest"]},
        {"jsonrpc":"2.0","method":"note","params":[1]},
        {"jsonrpc":"2.0","id":"a","method":"eth_blockNumber"},
        {"jsonrpc":"2.0","id":2,"method":"local"},
        {"jsonrpc":"2.0","id":3,"method":"admin_peers"},
        {"jsonrpc":"2.0","id":null,"method":"eth_gasPrice"},
        {"id":4}
    ]"#;
    let answer = post(&address, batch.to_owned()).await;
    // The client's order and ids, exactly as it wrote them (1.50 stays 1.50); the upstream's
    // answers as it wrote them (serde_json's members in order of name).
    assert!(
        answer.starts_with(r#"[{"id":1.50,"jsonrpc":"2.0","result":"#),
        "{answer}"
    );
    let answers: Value = serde_json::from_str(&answer).unwrap();
    let ids: Vec<Value> = answers
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["id"].clone())
        .collect();
    assert_eq!(
        ids,
        [
            json!(1.5),
            json!("a"),
            json!("a"),
            json!(2),
            json!(3),
            Value::Null,
            json!(4)
        ]
    );
    assert_eq!(answers[0]["result"]["method"], "eth_chainId");
    assert_eq!(
        answers[1]["result"],
        json!({"method":"eth_getBalance","params":["0x1","latest"]})
    );
    assert_eq!(answers[2]["result"]["method"], "eth_blockNumber");
    assert_eq!(answers[3]["result"], "here");
    assert_eq!(answers[4]["error"]["code"], -32601);
    assert_eq!(answers[5]["result"]["method"], "eth_gasPrice");
    assert_eq!(answers[6]["error"]["code"], -32600);

    // Upstream: one POST, the forwarded calls numbered in order, the notification with them.
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(
        seen[0],
        json!([
            {"jsonrpc":"2.0","id":1,"method":"eth_chainId"},
            {"jsonrpc":"2.0","id":2,"method":"eth_getBalance","params":["0x1","latest"]},
            {"jsonrpc":"2.0","method":"note","params":[1]},
            {"jsonrpc":"2.0","id":4,"method":"eth_blockNumber"},
            {"jsonrpc":"2.0","id":5,"method":"eth_gasPrice"},
        ])
    );
}

/// A batch of `count` calls of `eth_blockNumber`, ids 0, 1, …
fn calls(count: usize) -> String {
    let calls: Vec<Value> = (0..count)
        .map(|id| json!({"jsonrpc":"2.0","id":id,"method":"eth_blockNumber","params":[id]}))
        .collect();
    Value::Array(calls).to_string()
}

/// Checks a batch answer: `count` answers, in order, each echoing its call's params.
fn assert_in_order(answer: &str, count: usize) {
    let answers: Value = serde_json::from_str(answer).unwrap();
    let answers = answers.as_array().unwrap();
    assert_eq!(answers.len(), count);
    for (id, answer) in answers.iter().enumerate() {
        assert_eq!(answer["id"], id, "{answer}");
        assert_eq!(answer["result"]["params"], json!([id]), "{answer}");
    }
}

#[tokio::test]
async fn a_batch_over_the_upstreams_limit_goes_as_several_and_comes_back_as_one() {
    let (url, seen) = upstream(reversed()).await;
    let group = UpstreamGroup::new(vec![Upstream::address(&url).unwrap().with_max_batch(100)]);
    let address = front(Gateway::new(group)).await;
    assert_in_order(&post(&address, calls(250)).await, 250);
    let mut sizes: Vec<usize> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|b| b.as_array().unwrap().len())
        .collect();
    sizes.sort_unstable();
    assert_eq!(sizes, [50, 100, 100]);

    // A thousand at once to an upstream taking a thousand: one POST.
    let (url, seen) = upstream(reversed()).await;
    let group = UpstreamGroup::new(vec![Upstream::address(&url).unwrap().with_max_batch(1000)]);
    let address = front(Gateway::new(group)).await;
    assert_in_order(&post(&address, calls(1000)).await, 1000);
    assert_eq!(seen.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn what_an_upstream_leaves_out_of_its_batch_answer_is_an_error_for_those_calls_only() {
    // Answers the odd-numbered calls only, and one the gateway never asked.
    let script: Script = Arc::new(|body: &Value| {
        let mut answers: Vec<Value> = body
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["id"].as_u64().is_some_and(|id| id % 2 == 1))
            .map(echo)
            .collect();
        answers.push(json!({"jsonrpc":"2.0","id":99,"result":"foreign"}));
        (StatusCode::OK, Value::Array(answers).to_string())
    });
    let (url, _) = upstream(script).await;
    let address = front(Gateway::new(UpstreamGroup::new(vec![
        Upstream::address(&url).unwrap()
    ])))
    .await;
    let answers: Value = serde_json::from_str(&post(&address, calls(4)).await).unwrap();
    for (id, answer) in answers.as_array().unwrap().iter().enumerate() {
        assert_eq!(answer["id"], id);
        // The batch went on as it came (its ids are plain): the upstream answered 1 and 3.
        if id % 2 == 1 {
            assert_eq!(answer["result"]["params"], json!([id]), "{answer}");
        } else {
            assert_eq!(answer["error"]["code"], -32011, "{answer}");
            assert!(answer["error"]["data"]
                .as_str()
                .unwrap()
                .contains("no answer to this call"));
        }
    }
}

#[tokio::test]
async fn a_batch_answered_with_one_error_gives_it_to_every_call() {
    let script: Script = Arc::new(|_: &Value| {
        let error = json!({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"batch too large"}});
        (StatusCode::OK, error.to_string())
    });
    let (url, _) = upstream(script).await;
    let address = front(Gateway::new(UpstreamGroup::new(vec![
        Upstream::address(&url).unwrap()
    ])))
    .await;
    let answers: Value = serde_json::from_str(&post(&address, calls(3)).await).unwrap();
    assert_eq!(
        answers,
        json!([0, 1, 2]
            .iter()
            .map(|id| json!({"jsonrpc":"2.0","id":id,"error":{"code":-32600,"message":"batch too large"}}))
            .collect::<Vec<_>>())
    );
}

#[tokio::test]
async fn a_batch_whose_exchange_failed_goes_whole_to_the_next_upstream() {
    let refusing = {
        let port = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .unwrap()
            .local_addr()
            .unwrap();
        format!("http://{port}/")
    };
    let limited: Script = Arc::new(|_: &Value| {
        let error = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32005,"message":"rate exceeded"}}"#;
        (StatusCode::TOO_MANY_REQUESTS, error.to_owned())
    });
    let (limited, limited_seen) = upstream(limited).await;
    let (good, good_seen) = upstream(reversed()).await;
    let fast = RetryPolicy::new().with_backoff(Duration::ZERO, Duration::ZERO);
    // Never reached, then refused for a limit: neither ran the batch, so it goes on, though
    // no method is marked safe.
    let group = UpstreamGroup::new(vec![
        Upstream::address(&refusing).unwrap(),
        Upstream::address(&limited).unwrap(),
        Upstream::address(&good).unwrap(),
    ])
    .with_retry(fast.with_max_attempts(3));
    let gateway = Gateway::new(group);
    let address = front(gateway).await;
    assert_in_order(&post(&address, calls(5)).await, 5);
    assert_eq!(limited_seen.lock().unwrap().len(), 1);
    assert_eq!(good_seen.lock().unwrap().len(), 1);
    // The limited upstream is paused: the next batch goes straight to the good one.
    assert_in_order(&post(&address, calls(5)).await, 5);
    assert_eq!(limited_seen.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_batch_that_may_have_run_goes_on_only_when_every_method_in_it_is_safe() {
    let unavailable: Script = Arc::new(|_: &Value| (StatusCode::SERVICE_UNAVAILABLE, "down".to_owned()));
    let (down, down_seen) = upstream(unavailable).await;
    let (good, good_seen) = upstream(reversed()).await;
    let fast = RetryPolicy::new().with_backoff(Duration::ZERO, Duration::ZERO);
    for (safe, goes_on) in [(vec!["eth_blockNumber"], true), (vec![], false)] {
        down_seen.lock().unwrap().clear();
        good_seen.lock().unwrap().clear();
        let group = UpstreamGroup::new(vec![
            Upstream::address(&down).unwrap(),
            Upstream::address(&good).unwrap(),
        ])
        .with_retry(fast.clone().safe_methods(safe.iter().copied()));
        let address = front(Gateway::new(group)).await;
        let answer = post(&address, calls(3)).await;
        if goes_on {
            assert_in_order(&answer, 3);
        } else {
            let answers: Value = serde_json::from_str(&answer).unwrap();
            assert!(
                answers
                    .as_array()
                    .unwrap()
                    .iter()
                    .all(|a| a["error"]["code"] == -32011),
                "{answers}"
            );
        }
        assert_eq!(down_seen.lock().unwrap().len(), 1);
        assert_eq!(good_seen.lock().unwrap().len(), usize::from(goes_on));
    }
}

#[tokio::test]
async fn methods_routed_to_another_group_go_in_their_own_batch_and_answers_keep_the_clients_order() {
    let (main, main_seen) = upstream(reversed()).await;
    let (logs, logs_seen) = upstream(reversed()).await;
    let gateway = Gateway::new(UpstreamGroup::new(vec![Upstream::address(&main).unwrap()])).route(
        ["eth_getLogs"],
        UpstreamGroup::new(vec![Upstream::address(&logs).unwrap()]),
    );
    let address = front(gateway).await;
    let batch = json!([
        {"jsonrpc":"2.0","id":0,"method":"eth_getLogs","params":[0]},
        {"jsonrpc":"2.0","id":1,"method":"eth_call","params":[1]},
        {"jsonrpc":"2.0","id":2,"method":"eth_getLogs","params":[2]},
    ]);
    let answers: Value = serde_json::from_str(&post(&address, batch.to_string()).await).unwrap();
    for (id, answer) in answers.as_array().unwrap().iter().enumerate() {
        assert_eq!(
            (answer["id"].as_u64(), &answer["result"]["params"]),
            (Some(id as u64), &json!([id]))
        );
    }
    assert_eq!(logs_seen.lock().unwrap()[0].as_array().unwrap().len(), 2);
    assert_eq!(main_seen.lock().unwrap()[0].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn a_batch_to_an_upstream_behind_a_connection_goes_as_one_frame() {
    // A TCP upstream speaking NDJSON: each line it reads is one frame.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("tcp://{}", listener.local_addr().unwrap());
    let frames = Arc::new(Mutex::new(Vec::<Value>::new()));
    let seen = frames.clone();
    tokio::spawn(async move {
        let (socket, _) = listener.accept().await.unwrap();
        let (reader, mut writer) = socket.into_split();
        let mut lines = tokio::io::BufReader::new(reader).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            let frame: Value = serde_json::from_str(&line).unwrap();
            seen.lock().unwrap().push(frame.clone());
            let answers: Vec<Value> = frame.as_array().unwrap().iter().rev().map(echo).collect();
            writer
                .write_all(format!("{}\n", Value::Array(answers)).as_bytes())
                .await
                .unwrap();
        }
    });
    let address = front(Gateway::new(UpstreamGroup::new(vec![
        Upstream::address(&url).unwrap()
    ])))
    .await;
    assert_in_order(&post(&address, calls(20)).await, 20);
    assert_eq!(frames.lock().unwrap().len(), 1);

    // And a Peer-served upstream (memory): the same answers.
    let group = UpstreamGroup::new(vec![memory_upstream::healthy("memory")]);
    let address = front(Gateway::new(group)).await;
    let batch = r#"[{"jsonrpc":"2.0","id":"x","method":"subtract","params":[5,3]},{"jsonrpc":"2.0","id":"y","method":"whoami"}]"#;
    assert_eq!(
        post(&address, batch.to_owned()).await,
        r#"[{"jsonrpc":"2.0","id":"x","result":2},{"jsonrpc":"2.0","id":"y","result":"memory"}]"#
    );
}

/// Answers a batch with the answers to its calls in their order, written its own way.
fn in_order() -> Script {
    Arc::new(|body: &Value| {
        let answers: Vec<String> = body
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r.get("id").is_some())
            .map(|r| {
                format!(
                    r#"{{ "id" : {}, "result" : {} , "jsonrpc":"2.0"}}"#,
                    r["id"], r["params"]
                )
            })
            .collect();
        (StatusCode::OK, format!("[{}]", answers.join(" , ")))
    })
}

#[tokio::test]
async fn a_batch_with_plain_ids_goes_on_as_it_came_and_its_answer_comes_back_as_written() {
    let (url, seen) = upstream(in_order()).await;
    let address = front(Gateway::new(UpstreamGroup::new(vec![
        Upstream::address(&url).unwrap()
    ])))
    .await;
    let batch = r#"[ {"jsonrpc":"2.0","id":7,"method":"eth_call","params":[{"to":"0x1"}]},
        {"jsonrpc":"2.0","method":"note"}, {"id":"b","jsonrpc":"2.0","method":"eth_chainId","params":[]} ]"#;
    let answer = post(&address, batch.to_owned()).await;
    // Byte for byte, both ways.
    assert_eq!(
        answer,
        r#"[{ "id" : 7, "result" : [{"to":"0x1"}] , "jsonrpc":"2.0"} , { "id" : "b", "result" : [] , "jsonrpc":"2.0"}]"#
    );
    assert_eq!(
        seen.lock().unwrap()[0],
        serde_json::from_str::<Value>(batch).unwrap()
    );

    // Ids a node may write again otherwise (1.50, a string with an escape), or twice: the
    // calls are numbered, and each answer comes back with its client's id as written.
    for batch in [
        r#"[{"jsonrpc":"2.0","id":1.50,"method":"m","params":[0]},{"jsonrpc":"2.0","id":"\u0061","method":"m","params":[1]}]"#,
        r#"[{"jsonrpc":"2.0","id":5,"method":"m","params":[0]},{"jsonrpc":"2.0","id":5,"method":"m","params":[1]}]"#,
    ] {
        seen.lock().unwrap().clear();
        let answer = post(&address, batch.to_owned()).await;
        let answers: Value = serde_json::from_str(&answer).unwrap();
        let sent: Value = serde_json::from_str(batch).unwrap();
        for (index, answer) in answers.as_array().unwrap().iter().enumerate() {
            assert_eq!(answer["id"], sent[index]["id"], "{answer}");
            assert_eq!(answer["result"], json!([index]), "{answer}");
        }
        if batch.contains("1.50") {
            assert!(
                answer.contains(" 1.50,") && answer.contains(r#""\u0061""#),
                "{answer}"
            );
        }
        let ids: Vec<Value> = seen.lock().unwrap()[0]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].clone())
            .collect();
        assert_eq!(ids, [json!(1), json!(2)], "renumbered upstream");
    }
}

#[tokio::test]
async fn numbered_batches_and_answers_that_are_no_batch_end_as_clearly_as_whole_ones() {
    let fast = RetryPolicy::new().with_backoff(Duration::ZERO, Duration::ZERO);
    let one_error: Script = Arc::new(|_: &Value| {
        let error = json!({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"batch too large"}});
        (StatusCode::OK, error.to_string())
    });
    // Batches of at most two: a client's three calls go as two numbered batches.
    let (url, _) = upstream(one_error).await;
    let split = |url: &str| Upstream::address(url).unwrap().with_max_batch(2);
    let address = front(Gateway::new(UpstreamGroup::new(vec![split(&url)]))).await;
    let answers: Value = serde_json::from_str(&post(&address, calls(3)).await).unwrap();
    for (id, answer) in answers.as_array().unwrap().iter().enumerate() {
        assert_eq!(
            (answer["id"].as_u64(), answer["error"]["code"].as_i64()),
            (Some(id as u64), Some(-32600))
        );
    }

    // Never reached: the numbered batches go on to the next upstream.
    let refusing = {
        let port = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .unwrap()
            .local_addr()
            .unwrap();
        format!("http://{port}/")
    };
    let (good, good_seen) = upstream(reversed()).await;
    let group = UpstreamGroup::new(vec![split(&refusing), split(&good)]).with_retry(fast.clone());
    let address = front(Gateway::new(group)).await;
    assert_in_order(&post(&address, calls(3)).await, 3);
    assert_eq!(good_seen.lock().unwrap().len(), 2);

    // Answers that are no batch of responses, whole or numbered: each call -32011.
    for answer in [
        r#"{"jsonrpc":"2.0","id":0,"result":1}"#,
        r#"[{"jsonrpc":"2.0","id":0,"method":"x"}]"#,
        "not json",
    ] {
        let script: Script = Arc::new(move |_: &Value| (StatusCode::OK, answer.to_owned()));
        let (url, _) = upstream(script).await;
        for upstream in [Upstream::address(&url).unwrap(), split(&url)] {
            let address = front(Gateway::new(UpstreamGroup::new(vec![upstream]))).await;
            let answers: Value = serde_json::from_str(&post(&address, calls(3)).await).unwrap();
            assert!(
                answers
                    .as_array()
                    .unwrap()
                    .iter()
                    .all(|a| a["error"]["code"] == -32011),
                "{answer}: {answers}"
            );
        }
    }
}

#[tokio::test]
async fn batches_to_links_of_ones_own_and_to_connections_that_are_down() {
    use rpcwire::proxy::{LinkAnswer, LinkError, LinkErrorKind, LinkFuture, UpstreamLink};
    /// Answers every call with 42, one at a time (no batches of its own).
    struct FortyTwo;
    impl UpstreamLink for FortyTwo {
        fn call<'a>(
            &'a self,
            _: Option<&'a bytes::Bytes>,
            _: &'a str,
            _: Option<&'a rpcwire::RawJson<'a>>,
        ) -> LinkFuture<'a, LinkAnswer> {
            let answer =
                rpcwire::middleware::RemoteAnswer::Result(rpcwire::RawJson::new("42").unwrap().into());
            Box::pin(async move { Ok(LinkAnswer::Remote(answer)) })
        }
        fn notify<'a>(&'a self, _: &'a str, _: Option<&'a rpcwire::RawJson<'a>>) -> LinkFuture<'a, ()> {
            Box::pin(async { Err(LinkError::new(LinkErrorKind::NotReached, "no notifications")) })
        }
    }
    let address = front(Gateway::new(UpstreamGroup::new(vec![Upstream::with_link(
        "own", FortyTwo,
    )])))
    .await;
    let answer = post(
        &address,
        r#"[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"b"},{"jsonrpc":"2.0","id":2,"method":"c"}]"#.to_owned(),
    )
    .await;
    assert_eq!(
        answer,
        r#"[{"jsonrpc":"2.0","id":1,"result":42},{"jsonrpc":"2.0","id":2,"result":42}]"#
    );

    // A connection that cannot be made: every call of the batch gets -32010.
    let port = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap()
        .local_addr()
        .unwrap();
    let group = UpstreamGroup::new(vec![Upstream::address(&format!("tcp://{port}")).unwrap()]);
    let address = front(Gateway::new(group)).await;
    let answers: Value = serde_json::from_str(&post(&address, calls(2)).await).unwrap();
    assert!(
        answers
            .as_array()
            .unwrap()
            .iter()
            .all(|a| a["error"]["code"] == -32010),
        "{answers}"
    );
}
