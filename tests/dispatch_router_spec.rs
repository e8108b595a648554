//! The Router answers exactly like the JSON-RPC 2.0 specification: every example of its
//! Examples section (compared as JSON values), and every answer rule of the router issue.

#[path = "support/spec_cases.rs"]
mod spec_cases;
#[path = "../examples/common/spec_methods.rs"]
mod spec_methods;

use spec_cases::{strip_error_data, SPEC_EXAMPLES};

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use bytes::BytesMut;
use rpcwire::dispatch::{NoParams, Router};
use rpcwire::{ErrorObject, Limits};
use serde_json::{json, Value};

fn spec_router() -> Router {
    let mut router = Router::new();
    spec_methods::register(&mut router);
    router
}

/// The answer as text, `None` when the router wrote nothing.
fn answer(router: &Router, input: &str) -> Option<String> {
    let mut out = BytesMut::new();
    let wrote = router.handle(input.as_bytes(), &mut out);
    assert_eq!(
        wrote,
        !out.is_empty(),
        "the return value says whether anything was written"
    );
    wrote.then(|| String::from_utf8(out.to_vec()).expect("answers are UTF-8"))
}

/// The answer as a JSON value, with `error.data` removed: the specification's examples
/// show no `data`, which is optional; rpcwire puts the reason there (checked separately).
fn answer_value(router: &Router, input: &str) -> Option<Value> {
    answer(router, input).map(|text| {
        let mut value: Value = serde_json::from_str(&text).expect("answers are JSON");
        strip_error_data(&mut value);
        value
    })
}

fn spec(expected: &str) -> Value {
    serde_json::from_str(expected).unwrap()
}

#[test]
fn every_specification_example() {
    let router = spec_router();
    for (name, input, expected) in SPEC_EXAMPLES {
        assert_eq!(answer_value(&router, input), expected.map(spec), "{name}");
    }
}

#[test]
fn answers_are_compact_with_the_version_first() {
    let router = spec_router();
    let text = answer(
        &router,
        r#"{"jsonrpc": "2.0", "method": "subtract", "params": [42, 23], "id": 1}"#,
    )
    .unwrap();
    assert_eq!(text, r#"{"jsonrpc":"2.0","id":1,"result":19}"#);
}

#[test]
fn ids_echo_byte_for_byte() {
    let router = spec_router();
    for id in [
        "18446744073709551616",
        "-7",
        "1.5e3",
        "-0",
        "0.0",
        r#""a\u0062""#,
        r#""\ud83d\ude00""#,
        "null",
    ] {
        let input = format!(r#"{{"jsonrpc":"2.0","method":"sum","params":[1],"id":{id}}}"#);
        let text = answer(&router, &input).unwrap();
        assert_eq!(text, format!(r#"{{"jsonrpc":"2.0","id":{id},"result":1}}"#));
        // Also on the error paths.
        let input = format!(r#"{{"jsonrpc":"2.0","method":"nope","id":{id}}}"#);
        assert!(answer(&router, &input)
            .unwrap()
            .starts_with(&format!(r#"{{"jsonrpc":"2.0","id":{id},"error""#)));
    }
}

#[test]
fn unknown_method_is_32601_naming_the_method() {
    let router = spec_router();
    let value: Value =
        serde_json::from_str(&answer(&router, r#"{"jsonrpc":"2.0","method":"frobnicate","id":1}"#).unwrap())
            .unwrap();
    assert_eq!(value["error"]["code"], -32601);
    assert_eq!(value["error"]["data"], "frobnicate");
}

#[test]
fn method_names_are_matched_after_unescaping() {
    let router = spec_router();
    let text = answer(
        &router,
        r#"{"jsonrpc":"2.0","method":"sub\u0074ract","params":[3,1],"id":1}"#,
    )
    .unwrap();
    assert_eq!(text, r#"{"jsonrpc":"2.0","id":1,"result":2}"#);
}

#[test]
fn params_that_do_not_decode_are_32602_with_the_reason() {
    let router = spec_router();
    for params in [
        r#"["a", 1]"#,
        r#"{"minuend": 1}"#,
        "[1]",
        "[1,2,3]",
        r#"{"minuend":1,"subtrahend":2,"minuend":3}"#,
    ] {
        let input = format!(r#"{{"jsonrpc":"2.0","method":"subtract","params":{params},"id":1}}"#);
        let value: Value = serde_json::from_str(&answer(&router, &input).unwrap()).unwrap();
        assert_eq!(value["error"]["code"], -32602, "{params}");
        let reason = value["error"]["data"].as_str().unwrap();
        assert!(!reason.is_empty(), "{params}");
    }
    let value: Value = serde_json::from_str(
        &answer(
            &router,
            r#"{"jsonrpc":"2.0","method":"subtract","params":{"minuend":1},"id":1}"#,
        )
        .unwrap(),
    )
    .unwrap();
    assert!(value["error"]["data"].as_str().unwrap().contains("subtrahend"));
    // No params at all where some are needed; params where none are expected.
    for input in [
        r#"{"jsonrpc":"2.0","method":"subtract","id":1}"#,
        r#"{"jsonrpc":"2.0","method":"get_data","params":[1],"id":1}"#,
    ] {
        let value: Value = serde_json::from_str(&answer(&router, input).unwrap()).unwrap();
        assert_eq!(value["error"]["code"], -32602, "{input}");
    }
    // `NoParams` accepts the empty forms.
    for params in ["[]", "{}", "null"] {
        let input = format!(r#"{{"jsonrpc":"2.0","method":"get_data","params":{params},"id":1}}"#);
        assert_eq!(
            answer(&router, &input).unwrap(),
            r#"{"jsonrpc":"2.0","id":1,"result":["hello",5]}"#
        );
    }
}

#[test]
fn handler_errors_keep_their_code_and_data() {
    let mut router = Router::new();
    router.method("busy", |_: NoParams| -> Result<(), ErrorObject> {
        Err(ErrorObject::new(-32001, "busy")
            .with_data(&json!({"retry_ms": 50}))
            .unwrap())
    });
    router.method("app", |_: NoParams| -> Result<(), ErrorObject> {
        Err(ErrorObject::new(7, "seven"))
    });
    assert_eq!(
        answer(&router, r#"{"jsonrpc":"2.0","method":"busy","id":"x"}"#).unwrap(),
        r#"{"jsonrpc":"2.0","id":"x","error":{"code":-32001,"message":"busy","data":{"retry_ms":50}}}"#
    );
    assert_eq!(
        answer(&router, r#"{"jsonrpc":"2.0","method":"app","id":2}"#).unwrap(),
        r#"{"jsonrpc":"2.0","id":2,"error":{"code":7,"message":"seven"}}"#
    );
}

#[test]
fn a_panicking_handler_is_32603_and_the_router_goes_on() {
    let mut router = spec_router();
    router.method("explode", |_: NoParams| -> Result<(), ErrorObject> {
        panic!("kaboom")
    });
    router.method("explode_fmt", |(n,): (i64,)| -> Result<(), ErrorObject> {
        panic!("kaboom {n}")
    });
    let value: Value =
        serde_json::from_str(&answer(&router, r#"{"jsonrpc":"2.0","method":"explode","id":1}"#).unwrap())
            .unwrap();
    assert_eq!(value["error"]["code"], -32603);
    assert!(value["error"]["data"].as_str().unwrap().contains("kaboom"));
    let value: Value = serde_json::from_str(
        &answer(
            &router,
            r#"{"jsonrpc":"2.0","method":"explode_fmt","params":[5],"id":1}"#,
        )
        .unwrap(),
    )
    .unwrap();
    assert!(value["error"]["data"].as_str().unwrap().contains("kaboom 5"));
    // In a batch: the other elements are still answered, in order.
    let value = answer_value(
        &router,
        r#"[{"jsonrpc":"2.0","method":"sum","params":[1],"id":1},{"jsonrpc":"2.0","method":"explode","id":2},{"jsonrpc":"2.0","method":"sum","params":[2],"id":3}]"#,
    )
    .unwrap();
    assert_eq!(
        value,
        json!([
            {"jsonrpc":"2.0","id":1,"result":1},
            {"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"Internal error"}},
            {"jsonrpc":"2.0","id":3,"result":2}
        ])
    );
    // A panicking notification: no answer, no crash.
    assert_eq!(answer(&router, r#"{"jsonrpc":"2.0","method":"explode"}"#), None);
    assert_eq!(
        answer(&router, r#"{"jsonrpc":"2.0","method":"sum","params":[4],"id":1}"#).unwrap(),
        r#"{"jsonrpc":"2.0","id":1,"result":4}"#
    );
}

#[test]
fn notifications_never_get_an_answer_even_when_they_fail() {
    let mut router = spec_router();
    router.method("explode", |_: NoParams| -> Result<(), ErrorObject> {
        panic!("kaboom")
    });
    for input in [
        r#"{"jsonrpc":"2.0","method":"no_such_method"}"#,
        r#"{"jsonrpc":"2.0","method":"subtract","params":["x"]}"#,
        r#"{"jsonrpc":"2.0","method":"subtract","params":[1,2]}"#,
        r#"{"jsonrpc":"2.0","method":"explode"}"#,
        r#"[{"jsonrpc":"2.0","method":"no_such_method"},{"jsonrpc":"2.0","method":"subtract","params":["x"]}]"#,
    ] {
        assert_eq!(answer(&router, input), None, "{input}");
    }
    // Without an id and with scalar params it is not a valid notification but an invalid
    // request, which is answered (id null), as the specification's example 7 shows.
    let invalid = r#"{"jsonrpc":"2.0","method":"notify_hello","params":"text"}"#;
    let value: Value = serde_json::from_str(&answer(&router, invalid).unwrap()).unwrap();
    assert_eq!(
        (value["error"]["code"].clone(), value["id"].clone()),
        (json!(-32600), Value::Null)
    );
}

#[test]
fn notifications_run_their_handler() {
    let calls = Arc::new(AtomicUsize::new(0));
    let mut router = Router::new();
    let seen = calls.clone();
    router.method("count", move |(n,): (usize,)| {
        seen.fetch_add(n, Ordering::Relaxed);
        Ok(n)
    });
    let seen = calls.clone();
    router.notification("tick", move |(n,): (usize,)| {
        seen.fetch_add(n * 100, Ordering::Relaxed);
    });
    assert_eq!(
        answer(&router, r#"{"jsonrpc":"2.0","method":"count","params":[2]}"#),
        None
    );
    assert_eq!(
        answer(&router, r#"{"jsonrpc":"2.0","method":"tick","params":[3]}"#),
        None
    );
    assert_eq!(
        answer(
            &router,
            r#"[{"jsonrpc":"2.0","method":"count","params":[1]},{"jsonrpc":"2.0","method":"tick","params":[1]}]"#
        ),
        None
    );
    assert_eq!(calls.load(Ordering::Relaxed), 2 + 300 + 1 + 100);
    // A notification-only method called as a request: -32601, handler not run.
    let value: Value = serde_json::from_str(
        &answer(
            &router,
            r#"{"jsonrpc":"2.0","method":"tick","params":[1],"id":1}"#,
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(value["error"]["code"], -32601);
    assert_eq!(calls.load(Ordering::Relaxed), 403);
}

#[test]
fn invalid_requests_echo_the_id_when_readable() {
    let router = spec_router();
    for (input, id) in [
        (r#"{"jsonrpc":"1.0","method":"sum","id":7}"#, json!(7)),
        (r#"{"jsonrpc":"2.0","method":"","id":"e"}"#, json!("e")),
        (r#"{"jsonrpc":"2.0","method":"sum","params":3,"id":8}"#, json!(8)),
        (r#"{"method":"sum","id":9}"#, json!(9)),
        (
            r#"{"jsonrpc":"2.0","method":"sum","method":"sum","id":10}"#,
            json!(10),
        ),
        (r#"{"jsonrpc":"2.0","method":"sum","id":{"no":1}}"#, Value::Null),
        (r#""just a string""#, Value::Null),
    ] {
        let value: Value = serde_json::from_str(&answer(&router, input).unwrap()).unwrap();
        assert_eq!(value["error"]["code"], -32600, "{input}");
        assert_eq!(value["id"], id, "{input}");
        assert!(
            value["error"]["data"].as_str().unwrap().contains("at byte"),
            "{input}"
        );
    }
}

#[test]
fn malformed_json_anywhere_is_32700_with_null_id() {
    let router = spec_router();
    for input in [
        r#"{"jsonrpc":"2.0","method":"sum","params":[1,2,],"id":1}"#,
        r#"{"jsonrpc":"2.0","method":"sum","params":[1,2],"id":1} x"#,
        r#"[{"jsonrpc":"2.0","method":"sum","params":[1],"id":1},{"jsonrpc":"2.0","method":"sum","params":[01],"id":2}]"#,
        "",
        "\u{0}",
    ] {
        let value: Value = serde_json::from_str(&answer(&router, input).unwrap()).unwrap();
        assert_eq!(value["error"]["code"], -32700, "{input:?}");
        assert_eq!(value["id"], Value::Null, "{input:?}");
    }
}

#[test]
fn a_batch_over_the_limit_is_one_32600_saying_so() {
    let mut router = Router::with_limits(Limits::default().with_max_batch_len(3));
    spec_methods::register(&mut router);
    let element = r#"{"jsonrpc":"2.0","method":"sum","params":[1],"id":1}"#;
    let three = format!("[{}]", [element; 3].join(","));
    let four = format!("[{}]", [element; 4].join(","));
    assert_eq!(
        answer_value(&router, &three).unwrap().as_array().unwrap().len(),
        3
    );
    let text = answer(&router, &four).unwrap();
    let value: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(value["error"]["code"], -32600);
    assert!(value["error"]["data"].as_str().unwrap().contains('3'), "{text}");
}

#[test]
fn responses_sent_to_the_router_get_no_answer() {
    let router = spec_router();
    assert_eq!(answer(&router, r#"{"jsonrpc":"2.0","id":1,"result":7}"#), None);
    assert_eq!(
        answer(
            &router,
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"}}"#
        ),
        None
    );
    assert_eq!(
        answer_value(
            &router,
            r#"[{"jsonrpc":"2.0","id":1,"result":7},{"jsonrpc":"2.0","method":"sum","params":[5],"id":2}]"#
        ),
        Some(json!([{"jsonrpc":"2.0","id":2,"result":5}]))
    );
}

#[test]
fn echo_returns_params_unchanged() {
    let router = spec_router();
    let params = r#"{"a":[1,2.5e-3,"\u00e9\n"],"b":{"c":null,"d":true}}"#;
    let text = answer(
        &router,
        &format!(r#"{{"jsonrpc":"2.0","method":"echo","params":{params},"id":1}}"#),
    )
    .unwrap();
    assert_eq!(text, format!(r#"{{"jsonrpc":"2.0","id":1,"result":{params}}}"#));
    assert_eq!(
        answer(&router, r#"{"jsonrpc":"2.0","method":"echo","id":1}"#).unwrap(),
        r#"{"jsonrpc":"2.0","id":1,"result":null}"#
    );
}

#[test]
fn answers_are_appended_to_what_the_buffer_holds() {
    let router = spec_router();
    let mut out = BytesMut::from(&b"prefix:"[..]);
    assert!(router.handle(
        br#"{"jsonrpc":"2.0","method":"sum","params":[1],"id":1}"#,
        &mut out
    ));
    assert!(!router.handle(br#"{"jsonrpc":"2.0","method":"update"}"#, &mut out));
    assert_eq!(&out[..], br#"prefix:{"jsonrpc":"2.0","id":1,"result":1}"#);
}

#[test]
fn a_handler_may_call_another_router_on_the_same_thread() {
    let inner = Arc::new(spec_router());
    let mut outer = Router::new();
    let nested = inner.clone();
    outer.method("nested", move |_: NoParams| {
        let mut out = BytesMut::new();
        nested.handle(
            br#"[{"jsonrpc":"2.0","method":"sum","params":[2,3],"id":1}]"#,
            &mut out,
        );
        Ok(String::from_utf8(out.to_vec()).unwrap())
    });
    let value = answer_value(&outer, r#"[{"jsonrpc":"2.0","method":"nested","id":1}]"#).unwrap();
    assert_eq!(value[0]["result"], r#"[{"jsonrpc":"2.0","id":1,"result":5}]"#);
}

#[test]
fn the_router_is_shared_across_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Router>();
    let router = Arc::new(spec_router());
    std::thread::scope(|scope| {
        for t in 0..4i64 {
            let router = router.clone();
            scope.spawn(move || {
                for i in 0..200i64 {
                    let input =
                        format!(r#"[{{"jsonrpc":"2.0","method":"subtract","params":[{i},{t}],"id":{i}}}]"#);
                    let value = answer_value(&router, &input).unwrap();
                    assert_eq!(value, json!([{"jsonrpc":"2.0","id":i,"result":i - t}]));
                }
            });
        }
    });
}

#[test]
fn lookup_stays_correct_with_hundreds_of_methods() {
    let mut router = Router::new();
    for i in 0..500u64 {
        router.method(&format!("m{i}"), move |_: NoParams| Ok(i));
    }
    assert_eq!(router.len(), 500);
    for i in (0..500u64).step_by(7) {
        let text = answer(&router, &format!(r#"{{"jsonrpc":"2.0","method":"m{i}","id":1}}"#)).unwrap();
        assert_eq!(text, format!(r#"{{"jsonrpc":"2.0","id":1,"result":{i}}}"#));
    }
    assert!(format!("{router:?}").contains("m499"));
}

#[test]
fn built_messages_are_answered_by_the_responder_with_the_same_rules() {
    use rpcwire::dispatch::{Answer, Responder};
    let router = spec_router();
    let mut out = BytesMut::new();
    let mut responder = Responder::new();
    let mut respond = |message: rpcwire::Message<'_>, out: &mut BytesMut| {
        let frame = bytes::Bytes::from(serde_json::to_vec(&message).unwrap());
        responder.respond(&router, &frame, out)
    };
    assert!(matches!(
        respond(rpcwire::Notification::new("update").into(), &mut out),
        Answer::Silent
    ));
    assert!(matches!(
        respond(
            rpcwire::Request::new(1u64, "sum")
                .with_params(&[1, 2])
                .unwrap()
                .into(),
            &mut out
        ),
        Answer::Written
    ));
    assert_eq!(&out[..], br#"{"jsonrpc":"2.0","id":1,"result":3}"#);
}

#[cfg(feature = "tokio")]
mod async_handlers {
    use super::*;

    fn async_router() -> Router {
        let mut router = spec_router();
        router.method_async("slow_double", |(x,): (i64,)| async move {
            tokio::task::yield_now().await;
            Ok(x * 2)
        });
        router.method_async("async_fail", |_: NoParams| async {
            Err::<(), _>(ErrorObject::new(-32050, "nope"))
        });
        router.method_async("async_panic", |_: NoParams| async {
            tokio::task::yield_now().await;
            if true {
                panic!("async kaboom");
            }
            Ok(())
        });
        router
    }

    async fn answer_async(router: &Router, input: &str) -> Option<Value> {
        let mut out = BytesMut::new();
        router
            .handle_async(input.as_bytes(), &mut out)
            .await
            .then(|| serde_json::from_slice(&out).unwrap())
    }

    #[tokio::test]
    async fn async_and_sync_handlers_answer_in_order() {
        let router = async_router();
        let value = answer_async(
            &router,
            r#"[{"jsonrpc":"2.0","method":"slow_double","params":[21],"id":1},
                {"jsonrpc":"2.0","method":"sum","params":[1,2],"id":2},
                {"jsonrpc":"2.0","method":"slow_double","params":["x"],"id":3},
                {"jsonrpc":"2.0","method":"async_fail","id":4},
                {"jsonrpc":"2.0","method":"async_panic","id":5},
                {"jsonrpc":"2.0","method":"slow_double","params":[1]},
                7]"#,
        )
        .await
        .unwrap();
        assert_eq!(value[0], json!({"jsonrpc":"2.0","id":1,"result":42}));
        assert_eq!(value[1], json!({"jsonrpc":"2.0","id":2,"result":3}));
        assert_eq!(value[2]["error"]["code"], -32602);
        assert_eq!(
            value[3],
            json!({"jsonrpc":"2.0","id":4,"error":{"code":-32050,"message":"nope"}})
        );
        assert_eq!(value[4]["error"]["code"], -32603);
        assert!(value[4]["error"]["data"]
            .as_str()
            .unwrap()
            .contains("async kaboom"));
        assert_eq!(value[5]["error"]["code"], -32600);
        assert_eq!(value.as_array().unwrap().len(), 6);
    }

    #[tokio::test]
    async fn async_handle_follows_the_single_message_rules() {
        let router = async_router();
        for (name, input, expected) in SPEC_EXAMPLES {
            let mut value = answer_async(&router, input).await;
            if let Some(value) = &mut value {
                strip_error_data(value);
            }
            assert_eq!(value, expected.map(spec), "{name}");
        }
        assert_eq!(
            answer_async(
                &router,
                r#"{"jsonrpc":"2.0","method":"slow_double","params":[2]}"#
            )
            .await,
            None
        );
    }

    #[tokio::test]
    async fn the_sync_path_refuses_async_methods() {
        let router = async_router();
        let value: Value = serde_json::from_str(
            &answer(
                &router,
                r#"{"jsonrpc":"2.0","method":"slow_double","params":[2],"id":1}"#,
            )
            .unwrap(),
        )
        .unwrap();
        assert_eq!(value["error"]["code"], -32603);
        // A notification for an async method is run on the current runtime; no answer.
        assert_eq!(
            answer(
                &router,
                r#"{"jsonrpc":"2.0","method":"slow_double","params":[2]}"#
            ),
            None
        );
    }

    #[tokio::test]
    async fn serve_asks_for_an_await_only_while_an_async_handler_is_registered() {
        use rpcwire::dispatch::{Answer, Responder};
        let frame = br#"{"jsonrpc":"2.0","method":"m","id":1}"#;
        let served = |router: &Router| {
            let mut out = BytesMut::new();
            let frame = bytes::Bytes::from_static(frame);
            match Responder::new().respond(router, &frame, &mut out) {
                Answer::Written => "answered",
                Answer::Silent => "silent",
                Answer::Pending(_) => "pending",
            }
        };
        let mut router = Router::new();
        router.method("m", |_: NoParams| Ok(1));
        assert_eq!(served(&router), "answered");
        router.method_async("m", |_: NoParams| async { Ok(2) });
        assert_eq!(served(&router), "pending");
        router.method_async("m", |_: NoParams| async { Ok(3) }); // replaced by another async one
        assert_eq!(served(&router), "pending");
        router.method("m", |_: NoParams| Ok(4)); // the async handler is gone
        assert_eq!(served(&router), "answered");
    }

    /// Two async elements of one batch that can only finish together (each waits at a
    /// barrier for the other): answered only if they run at the same time; the answers keep
    /// the batch's order around a synchronous element.
    #[tokio::test]
    async fn async_batch_elements_run_at_the_same_time() {
        let barrier = std::sync::Arc::new(tokio::sync::Barrier::new(2));
        let mut router = spec_router();
        for name in ["left", "right"] {
            let barrier = barrier.clone();
            router.method_async(name, move |_: NoParams| {
                let barrier = barrier.clone();
                async move {
                    barrier.wait().await;
                    Ok(name)
                }
            });
        }
        let input = r#"[{"jsonrpc":"2.0","method":"left","id":1},
                        {"jsonrpc":"2.0","method":"sum","params":[1,2],"id":2},
                        {"jsonrpc":"2.0","method":"right","id":3}]"#;
        let value = tokio::time::timeout(std::time::Duration::from_secs(10), answer_async(&router, input))
            .await
            .expect("both elements ran at once")
            .unwrap();
        assert_eq!(
            value,
            json!([
                {"jsonrpc": "2.0", "id": 1, "result": "left"},
                {"jsonrpc": "2.0", "id": 2, "result": 3},
                {"jsonrpc": "2.0", "id": 3, "result": "right"},
            ])
        );
    }
}
