//! Every example of the JSON-RPC 2.0 specification, section 7 ("Examples"), parsed with
//! rpcwire: the requests, notifications and responses it shows, and the inputs it uses to
//! illustrate -32700 and -32600.
//!
//! <https://www.jsonrpc.org/specification#examples>

use rpcwire::json::SyntaxErrorKind;
use rpcwire::{
    Batch, ErrorCode, Id, IdKind, Message, Notification, ParseError, ParseErrorKind, Parsed, Request,
    Response,
};
use serde_json::{json, Value};

fn single(input: &str) -> Message<'_> {
    match rpcwire::parse(input.as_bytes()) {
        Ok(Parsed::Single(message)) => message,
        other => panic!("expected a single message for {input}, got {other:?}"),
    }
}

fn request(input: &str) -> Request<'_> {
    match single(input) {
        Message::Request(request) => request,
        other => panic!("expected a request for {input}, got {other:?}"),
    }
}

fn notification(input: &str) -> Notification<'_> {
    match single(input) {
        Message::Notification(notification) => notification,
        other => panic!("expected a notification for {input}, got {other:?}"),
    }
}

fn response(input: &str) -> Response<'_> {
    match single(input) {
        Message::Response(response) => response,
        other => panic!("expected a response for {input}, got {other:?}"),
    }
}

fn batch(input: &str) -> Batch<'_> {
    match rpcwire::parse(input.as_bytes()) {
        Ok(Parsed::Batch(batch)) => batch,
        other => panic!("expected a batch for {input}, got {other:?}"),
    }
}

fn error(input: &str) -> ParseError {
    match rpcwire::parse(input.as_bytes()) {
        Err(error) => error,
        Ok(parsed) => panic!("expected an error for {input}, got {parsed:?}"),
    }
}

fn result_value(response: &Response<'_>) -> Value {
    response.result().expect("a result").decode().unwrap()
}

#[derive(serde::Deserialize, Debug, PartialEq)]
struct Subtract {
    minuend: i64,
    subtrahend: i64,
}

// ---- rpc call with positional parameters ----

#[test]
fn positional_params_requests() {
    let r = request(r#"{"jsonrpc": "2.0", "method": "subtract", "params": [42, 23], "id": 1}"#);
    assert_eq!(r.method(), "subtract");
    assert_eq!(r.id().kind(), IdKind::Number);
    assert_eq!(r.id().as_u64(), Some(1));
    let params = r.params().unwrap();
    assert!(params.is_array());
    assert_eq!(params.len(), 2);
    assert_eq!(params.decode::<(i64, i64)>().unwrap(), (42, 23));
    assert_eq!(params.at(1).unwrap().get(), "23");

    let r = request(r#"{"jsonrpc": "2.0", "method": "subtract", "params": [23, 42], "id": 2}"#);
    assert_eq!(r.id().as_i64(), Some(2));
    assert_eq!(r.params().unwrap().decode::<Vec<i64>>().unwrap(), [23, 42]);
}

#[test]
fn positional_params_responses() {
    let r = response(r#"{"jsonrpc": "2.0", "result": 19, "id": 1}"#);
    assert!(r.is_success());
    assert_eq!(r.id(), &Id::from(1u64));
    assert_eq!(r.result().unwrap().get(), "19");
    assert_eq!(r.result().unwrap().decode::<i64>().unwrap(), 19);

    let r = response(r#"{"jsonrpc": "2.0", "result": -19, "id": 2}"#);
    assert_eq!(r.id().as_u64(), Some(2));
    assert_eq!(r.result().unwrap().decode::<i64>().unwrap(), -19);
}

// ---- rpc call with named parameters ----

#[test]
fn named_params_requests() {
    let r = request(
        r#"{"jsonrpc": "2.0", "method": "subtract", "params": {"subtrahend": 23, "minuend": 42}, "id": 3}"#,
    );
    assert_eq!(r.method(), "subtract");
    assert_eq!(r.id().as_u64(), Some(3));
    let params = r.params().unwrap();
    assert!(params.is_object());
    assert_eq!(
        params.decode::<Subtract>().unwrap(),
        Subtract {
            minuend: 42,
            subtrahend: 23
        }
    );
    assert_eq!(params.get("subtrahend").unwrap().get(), "23");
    assert_eq!(params.get("minuend").unwrap().decode::<i64>().unwrap(), 42);
    let keys: Vec<String> = params.members().map(|(k, _)| k.into_owned()).collect();
    assert_eq!(keys, ["subtrahend", "minuend"]);

    let r = request(
        r#"{"jsonrpc": "2.0", "method": "subtract", "params": {"minuend": 42, "subtrahend": 23}, "id": 4}"#,
    );
    assert_eq!(r.id().as_u64(), Some(4));
    assert_eq!(
        r.params().unwrap().decode::<Subtract>().unwrap(),
        Subtract {
            minuend: 42,
            subtrahend: 23
        }
    );
}

#[test]
fn named_params_responses() {
    for (input, id) in [
        (r#"{"jsonrpc": "2.0", "result": 19, "id": 3}"#, 3),
        (r#"{"jsonrpc": "2.0", "result": 19, "id": 4}"#, 4),
    ] {
        let r = response(input);
        assert_eq!(r.id().as_u64(), Some(id));
        assert_eq!(result_value(&r), json!(19));
    }
}

// ---- a Notification ----

#[test]
fn notifications() {
    let n = notification(r#"{"jsonrpc": "2.0", "method": "update", "params": [1,2,3,4,5]}"#);
    assert_eq!(n.method(), "update");
    assert_eq!(n.params().unwrap().decode::<Vec<u8>>().unwrap(), [1, 2, 3, 4, 5]);
    let positional: Vec<u8> = n.params().unwrap().iter().map(|v| v.decode().unwrap()).collect();
    assert_eq!(positional, [1, 2, 3, 4, 5]);

    let n = notification(r#"{"jsonrpc": "2.0", "method": "foobar"}"#);
    assert_eq!(n.method(), "foobar");
    assert!(n.params().is_none());
    assert!(Message::from(n).id().is_none());
}

// ---- rpc call of non-existent method ----

#[test]
fn non_existent_method() {
    let r = request(r#"{"jsonrpc": "2.0", "method": "foobar", "id": "1"}"#);
    assert_eq!(r.method(), "foobar");
    assert_eq!(r.id().kind(), IdKind::String);
    assert_eq!(r.id().as_str().as_deref(), Some("1"));
    // A string id "1" is not the number 1.
    assert_eq!(r.id().as_u64(), None);
    assert_ne!(r.id(), &Id::from(1u64));

    let resp = response(
        r#"{"jsonrpc": "2.0", "error": {"code": -32601, "message": "Method not found"}, "id": "1"}"#,
    );
    assert!(!resp.is_success());
    assert_eq!(resp.id(), r.id());
    let e = resp.error_object().unwrap();
    assert_eq!(e.code(), ErrorCode::MethodNotFound);
    assert_eq!(e.code().code(), -32601);
    assert_eq!(e.message(), "Method not found");
    assert!(e.data().is_none());
}

// ---- rpc call with invalid JSON ----

#[test]
fn invalid_json_is_a_parse_error() {
    let input = r#"{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]"#;
    let e = error(input);
    assert!(e.is_syntax());
    assert_eq!(e.code(), ErrorCode::ParseError);
    assert_eq!(e.code().code(), -32700);
    assert!(e.id().is_none());
    // The string "foobar, " ends at the quote before `params`; the `p` is where the JSON
    // stops making sense.
    assert_eq!(e.offset(), input.find("params").unwrap());
    assert!(
        matches!(
            e.kind(),
            ParseErrorKind::Syntax(SyntaxErrorKind::UnexpectedByte { byte: b'p', .. })
        ),
        "{e:?}"
    );
    assert_eq!(rpcwire::ErrorObject::from(&e).message(), "Parse error");

    let resp =
        response(r#"{"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}, "id": null}"#);
    assert!(resp.id().is_null());
    assert_eq!(resp.error_object().unwrap().code(), ErrorCode::ParseError);
}

// ---- rpc call with invalid Request object ----

#[test]
fn invalid_request_object() {
    let input = r#"{"jsonrpc": "2.0", "method": 1, "params": "bar"}"#;
    let e = error(input);
    assert!(!e.is_syntax());
    assert_eq!(e.code(), ErrorCode::InvalidRequest);
    assert_eq!(e.code().code(), -32600);
    // No id member, so the answer goes to id null.
    assert!(e.id().is_none());
    // The first problem found is the method, at its value.
    assert_eq!(*e.kind(), ParseErrorKind::MethodNotString);
    assert_eq!(e.offset(), input.find(": 1").unwrap() + 2);
    assert_eq!(rpcwire::ErrorObject::from(&e).message(), "Invalid Request");

    let resp = response(
        r#"{"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request"}, "id": null}"#,
    );
    assert!(resp.id().is_null());
    assert_eq!(resp.error_object().unwrap().code(), ErrorCode::InvalidRequest);
}

// ---- rpc call Batch, invalid JSON ----

#[test]
fn batch_with_invalid_json_is_one_parse_error() {
    let input = r#"[
  {"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},
  {"jsonrpc": "2.0", "method"
]"#;
    let e = error(input);
    assert!(e.is_syntax());
    assert_eq!(e.code().code(), -32700);
    // After the key `"method"` a ':' is expected; a newline is skipped, then ']' is found.
    assert_eq!(e.offset(), input.rfind(']').unwrap());
    assert!(
        matches!(
            e.kind(),
            ParseErrorKind::Syntax(SyntaxErrorKind::UnexpectedByte { byte: b']', .. })
        ),
        "{e:?}"
    );
}

// ---- rpc call with an empty Array ----

#[test]
fn empty_array_is_an_invalid_request() {
    let e = error("[]");
    assert_eq!(*e.kind(), ParseErrorKind::EmptyBatch);
    assert_eq!(e.code().code(), -32600);
    assert_eq!(e.offset(), 0);
    assert!(e.id().is_none());
}

// ---- rpc call with an invalid Batch (but not empty) ----

#[test]
fn invalid_batch_of_one() {
    let b = batch("[1]");
    assert_eq!(b.len(), 1);
    let e = b.get(0).unwrap().unwrap_err();
    assert_eq!(*e.kind(), ParseErrorKind::NotAnObject);
    assert_eq!(e.code().code(), -32600);
    assert_eq!(e.offset(), 1);
    assert!(e.id().is_none());
}

// ---- rpc call with invalid Batch ----

#[test]
fn invalid_batch_of_three() {
    let input = "[1,2,3]";
    let b = batch(input);
    assert_eq!(b.len(), 3);
    let offsets: Vec<usize> = b
        .iter()
        .map(|element| {
            let e = element.unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidRequest);
            assert!(e.id().is_none());
            e.offset()
        })
        .collect();
    assert_eq!(offsets, [1, 3, 5]);
}

// ---- rpc call Batch ----

const MIXED_BATCH: &str = r#"[
        {"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},
        {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]},
        {"jsonrpc": "2.0", "method": "subtract", "params": [42,23], "id": "2"},
        {"foo": "boo"},
        {"jsonrpc": "2.0", "method": "foo.get", "params": {"name": "myself"}, "id": "5"},
        {"jsonrpc": "2.0", "method": "get_data", "id": "9"}
    ]"#;

#[test]
fn mixed_batch_good_elements_stay_usable() {
    let b = batch(MIXED_BATCH);
    assert_eq!(b.len(), 6);

    let Ok(Message::Request(sum)) = b.get(0).unwrap() else {
        panic!("sum")
    };
    assert_eq!(sum.method(), "sum");
    assert_eq!(sum.id().as_str().as_deref(), Some("1"));
    assert_eq!(sum.params().unwrap().decode::<[i32; 3]>().unwrap(), [1, 2, 4]);

    let Ok(Message::Notification(hello)) = b.get(1).unwrap() else {
        panic!("notify_hello")
    };
    assert_eq!(hello.method(), "notify_hello");
    assert_eq!(hello.params().unwrap().decode::<(u8,)>().unwrap(), (7,));

    let Ok(Message::Request(subtract)) = b.get(2).unwrap() else {
        panic!("subtract")
    };
    assert_eq!(subtract.id(), &Id::from("2"));
    assert_eq!(
        subtract.params().unwrap().decode::<(i64, i64)>().unwrap(),
        (42, 23)
    );

    let foo = b.get(3).unwrap().unwrap_err();
    assert_eq!(foo.code().code(), -32600);
    assert_eq!(*foo.kind(), ParseErrorKind::MissingVersion);
    assert_eq!(foo.offset(), MIXED_BATCH.find(r#"{"foo""#).unwrap());
    assert!(foo.id().is_none(), "{{\"foo\": \"boo\"}} has no id to echo");

    let Ok(Message::Request(get)) = b.get(4).unwrap() else {
        panic!("foo.get")
    };
    assert_eq!(get.method(), "foo.get");
    assert_eq!(
        get.params()
            .unwrap()
            .get("name")
            .unwrap()
            .decode::<&str>()
            .unwrap(),
        "myself"
    );

    let Ok(Message::Request(data)) = b.get(5).unwrap() else {
        panic!("get_data")
    };
    assert_eq!(data.method(), "get_data");
    assert_eq!(data.id().as_str().as_deref(), Some("9"));
    assert!(data.params().is_none());

    assert!(b.get(6).is_none());
    let kinds: Vec<&str> = b
        .iter()
        .map(|m| match m {
            Ok(Message::Request(_)) => "request",
            Ok(Message::Notification(_)) => "notification",
            Ok(Message::Response(_)) => "response",
            Err(_) => "error",
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "request",
            "notification",
            "request",
            "error",
            "request",
            "request"
        ]
    );
}

#[test]
fn mixed_batch_invalid_element_carries_its_id_when_readable() {
    // The specification's bad element has no id; one that has one gets it echoed.
    let input =
        r#"[{"jsonrpc": "2.0", "method": 1, "id": "7"}, {"jsonrpc": "2.0", "method": "ok", "id": 8}]"#;
    let b = batch(input);
    let e = b.get(0).unwrap().unwrap_err();
    assert_eq!(e.code().code(), -32600);
    assert_eq!(e.id(), Some(&Id::from("7")));
    assert_eq!(b.get(1).unwrap().unwrap().id().unwrap().as_u64(), Some(8));
}

#[test]
fn mixed_batch_responses() {
    let input = r#"[
        {"jsonrpc": "2.0", "result": 7, "id": "1"},
        {"jsonrpc": "2.0", "result": 19, "id": "2"},
        {"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request"}, "id": null},
        {"jsonrpc": "2.0", "error": {"code": -32601, "message": "Method not found"}, "id": "5"},
        {"jsonrpc": "2.0", "result": ["hello", 5], "id": "9"}
    ]"#;
    let b = batch(input);
    let responses: Vec<Response<'_>> = b
        .iter()
        .map(|m| match m {
            Ok(Message::Response(r)) => r,
            other => panic!("expected a response, got {other:?}"),
        })
        .collect();
    assert_eq!(responses.len(), 5);
    assert_eq!(responses[0].id(), &Id::from("1"));
    assert_eq!(result_value(&responses[0]), json!(7));
    assert_eq!(responses[1].id(), &Id::from("2"));
    assert_eq!(result_value(&responses[1]), json!(19));
    assert!(responses[2].id().is_null());
    assert_eq!(
        responses[2].error_object().unwrap().code(),
        ErrorCode::InvalidRequest
    );
    assert_eq!(responses[2].error_object().unwrap().message(), "Invalid Request");
    assert_eq!(responses[3].id(), &Id::from("5"));
    assert_eq!(
        responses[3].error_object().unwrap().code(),
        ErrorCode::MethodNotFound
    );
    assert_eq!(responses[4].id(), &Id::from("9"));
    assert_eq!(result_value(&responses[4]), json!(["hello", 5]));
    assert_eq!(
        responses[4].result().unwrap().decode::<(&str, u8)>().unwrap(),
        ("hello", 5)
    );
}

#[test]
fn invalid_batch_responses() {
    let one = r#"[
  {"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request"}, "id": null}
]"#;
    let three = r#"[
  {"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request"}, "id": null},
  {"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request"}, "id": null},
  {"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request"}, "id": null}
]"#;
    for (input, len) in [(one, 1), (three, 3)] {
        let b = batch(input);
        assert_eq!(b.len(), len);
        for element in &b {
            let Ok(Message::Response(r)) = element else {
                panic!("{element:?}")
            };
            assert!(r.id().is_null());
            assert_eq!(r.error_object().unwrap().code().code(), -32600);
        }
    }
}

// ---- rpc call Batch (all notifications) ----

#[test]
fn batch_of_only_notifications() {
    let input = r#"[
        {"jsonrpc": "2.0", "method": "notify_sum", "params": [1,2,4]},
        {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]}
    ]"#;
    let b = batch(input);
    assert_eq!(b.len(), 2);
    let mut methods = Vec::new();
    for element in &b {
        let Ok(Message::Notification(n)) = element else {
            panic!("{element:?}")
        };
        methods.push(n.method().to_owned());
    }
    assert_eq!(methods, ["notify_sum", "notify_hello"]);
    // Nothing in it expects an answer.
    assert!(b.iter().all(|m| m.unwrap().id().is_none()));
    let Ok(Message::Notification(sum)) = b.get(0).unwrap() else {
        unreachable!()
    };
    assert_eq!(sum.params().unwrap().decode::<Vec<i32>>().unwrap(), [1, 2, 4]);
}

/// The answers a server builds for the examples serialize to the specification's text
/// (as JSON values: member order and spacing aside).
#[test]
fn built_responses_match_the_specification() {
    use rpcwire::ErrorObject;
    let cases: [(Response<'static>, &str); 5] = [
        (
            Response::success(1u64, &19).unwrap(),
            r#"{"jsonrpc": "2.0", "result": 19, "id": 1}"#,
        ),
        (
            Response::success(2u64, &-19).unwrap(),
            r#"{"jsonrpc": "2.0", "result": -19, "id": 2}"#,
        ),
        (
            Response::error("1", ErrorObject::new(-32601, "Method not found")),
            r#"{"jsonrpc": "2.0", "error": {"code": -32601, "message": "Method not found"}, "id": "1"}"#,
        ),
        (
            Response::error(Id::null(), ErrorObject::parse_error()),
            r#"{"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}, "id": null}"#,
        ),
        (
            Response::error(Id::null(), ErrorObject::invalid_request()),
            r#"{"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request"}, "id": null}"#,
        ),
    ];
    for (built, spec) in cases {
        let ours: Value = serde_json::to_value(&built).unwrap();
        let theirs: Value = serde_json::from_str(spec).unwrap();
        assert_eq!(ours, theirs);
        assert_eq!(response(spec), built);
    }
}
