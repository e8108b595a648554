//! The message-type requirements ("types spec"), FR-001..FR-012.
//!
//! The original types spec is not at hand; these twelve requirements are derived from the
//! "Message types" section of issue 2 and from ../shared/DESIGN.md:
//!
//! - FR-001 One family of types with a lifetime: values produced by the parser borrow from
//!   the input (method, id, params, result, error message/data point into the buffer),
//!   values built with the constructors are `'static`, and every type (`Message`,
//!   `Request`, `Notification`, `Response`, `Id`, `ErrorObject`, `RawJson`) has
//!   `into_owned()` that detaches it from the buffer and keeps it equal.
//! - FR-002 `Message` is an enum of `Request | Notification | Response`, with `id()`,
//!   `method()` and `From` conversions from each variant.
//! - FR-003 `Request` has an id (which may be null), a method and optional params;
//!   `Notification` has a method and optional params and no id. Params are a view offering
//!   `decode`, `get`, `at`, `iter`, `members`, `len`, `is_array`/`is_object`.
//! - FR-004 `Response` carries an id and exactly one of a result or an error
//!   (`ResponsePayload`), with `is_success`, `result`, `error_object`, `payload`,
//!   `into_parts`.
//! - FR-005 `Id` is a number, a string or null, keeps its exact JSON text (`raw()`), and
//!   offers `kind`, `is_null`, `as_u64`, `as_i64`, `as_str`; equality is by kind and by
//!   number text or unescaped string value.
//! - FR-006 `ErrorObject` has a code, a message and optional data, and displays them.
//! - FR-007 `ErrorCode` names the five standard codes, the server range
//!   `-32099..=-32000`, and any other (application) code; `code()`, `message()` and
//!   `From<i64>` convert both ways.
//! - FR-008 `RawJson` is validated JSON text: `new` rejects invalid JSON, `from_value`
//!   serializes, `decode` deserializes (borrowing), and it interoperates with serde_json's
//!   `RawValue`.
//! - FR-009 All types implement serde `Serialize` and `Deserialize` and work with
//!   serde_json directly, borrowing from the input where possible.
//! - FR-010 One-line constructors: `Request::new(id, method).with_params(&T)`,
//!   `Notification::new(..)`, `Response::success(id, &T)`, `Response::error(id, e)`,
//!   `ErrorObject::parse_error()`, `invalid_request()`, `method_not_found(name)`,
//!   `invalid_params(..)`, `internal_error(..)`, `ErrorObject::new(code, msg).with_data(&T)`;
//!   params must be an array or an object.
//! - FR-011 Serialization omits absent optional fields (params, error data), always writes
//!   `"jsonrpc":"2.0"`, and writes exactly one of result/error.
//! - FR-012 Serialization keeps the id's kind and text: a string stays a string, a number
//!   stays the same number text (`18446744073709551616`, `-7`, `1.5e3`), null stays null;
//!   parse → serialize echoes the id byte for byte.

use std::borrow::Cow;
use std::collections::HashSet;

use rpcwire::{
    BuildError, ErrorCode, ErrorObject, Id, IdKind, Message, Notification, Parsed, RawJson, Request,
    Response, ResponsePayload,
};
use serde_json::{json, Value};

fn parse_single(input: &str) -> Message<'_> {
    match rpcwire::parse(input.as_bytes()) {
        Ok(Parsed::Single(message)) => message,
        other => panic!("expected one message for {input}, got {other:?}"),
    }
}

/// `true` when `part` lies inside `whole` (same allocation, no copy).
fn points_into(part: &str, whole: &str) -> bool {
    let range = whole.as_bytes().as_ptr_range();
    let p = part.as_ptr();
    range.start <= p && p <= range.end && part.len() <= whole.len()
}

// ---------------------------------------------------------------------------------------
// FR-001: one family of types with a lifetime; borrowed when parsed; into_owned.
// ---------------------------------------------------------------------------------------

#[test]
fn fr_001_parsed_values_borrow_from_the_input() {
    let input = String::from(r#"{"jsonrpc":"2.0","id":"abc","method":"sum","params":[1,2]}"#);
    let Message::Request(request) = parse_single(&input) else {
        panic!()
    };
    assert!(points_into(request.id().raw(), &input));
    assert!(points_into(request.method(), &input));
    assert!(points_into(request.raw_params().unwrap().get(), &input));
    let (id, method, params) = request.into_parts();
    assert!(matches!(method, Cow::Borrowed("sum")));
    assert!(matches!(id.as_str(), Some(Cow::Borrowed("abc"))));
    assert_eq!(params.unwrap().get(), "[1,2]");

    let input =
        String::from(r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"busy","data":{"k":1}}}"#);
    let Message::Response(response) = parse_single(&input) else {
        panic!()
    };
    let error = response.error_object().unwrap();
    assert!(points_into(error.message(), &input));
    assert!(points_into(error.data().unwrap().get(), &input));
}

#[test]
fn fr_001_built_values_are_static() {
    fn is_static<T: 'static>(_: &T) {}
    let method = String::from("built");
    is_static(&Request::new(1u64, method.clone()));
    is_static(&Notification::new(method));
    is_static(&Response::success(1u64, &true).unwrap());
    is_static(&Response::error(Id::null(), ErrorObject::internal_error("x")));
    is_static(&Id::from(String::from("s")));
    is_static(&RawJson::from_value(&[1]).unwrap());
    is_static(&Message::from(Notification::new("n")));
}

#[test]
fn fr_001_into_owned_detaches_and_stays_equal() {
    let inputs = [
        r#"{"jsonrpc":"2.0","id":"a\nb","method":"m\u00e9","params":{"x":[1,2,{"y":null}]}}"#,
        r#"{"jsonrpc":"2.0","method":"note","params":[true]}"#,
        r#"{"jsonrpc":"2.0","id":1.5e3,"result":{"deep":[[]]}}"#,
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":"x"}}"#,
    ];
    for input in inputs {
        let owned: Message<'static> = {
            let buffer = input.to_owned();
            let borrowed = parse_single(&buffer);
            let owned = borrowed.clone().into_owned();
            assert_eq!(owned, borrowed);
            owned
            // `buffer` is dropped here; `owned` must not need it.
        };
        assert_eq!(owned, parse_single(input));
    }

    let id_text = String::from("42");
    let id: Id<'static> = Id::number(id_text.as_str()).unwrap().into_owned();
    drop(id_text);
    assert_eq!(id.raw(), "42");

    let raw_text = String::from("[1]");
    let raw: RawJson<'static> = RawJson::new(raw_text.as_str()).unwrap().into_owned();
    drop(raw_text);
    assert_eq!(raw.get(), "[1]");

    let message = String::from("oops");
    let error: ErrorObject<'static> = ErrorObject::new(1, message.as_str()).into_owned();
    drop(message);
    assert_eq!(error.message(), "oops");
}

// ---------------------------------------------------------------------------------------
// FR-002: Message enum.
// ---------------------------------------------------------------------------------------

#[test]
fn fr_002_message_is_request_notification_or_response() {
    let m = parse_single(r#"{"jsonrpc":"2.0","id":7,"method":"a"}"#);
    assert!(matches!(m, Message::Request(_)));
    assert_eq!(m.id().unwrap().as_u64(), Some(7));
    assert_eq!(m.method(), Some("a"));

    let m = parse_single(r#"{"jsonrpc":"2.0","method":"b"}"#);
    assert!(matches!(m, Message::Notification(_)));
    assert!(m.id().is_none());
    assert_eq!(m.method(), Some("b"));

    let m = parse_single(r#"{"jsonrpc":"2.0","id":"r","result":null}"#);
    assert!(matches!(m, Message::Response(_)));
    assert_eq!(m.id(), Some(&Id::from("r")));
    assert_eq!(m.method(), None);

    assert_eq!(
        Message::from(Request::new(1u64, "a")),
        Message::Request(Request::new(1u64, "a"))
    );
    assert_eq!(
        Message::from(Notification::new("b")),
        Message::Notification(Notification::new("b"))
    );
    let r = Response::success(1u64, &0).unwrap();
    assert_eq!(Message::from(r.clone()), Message::Response(r));
}

// ---------------------------------------------------------------------------------------
// FR-003: Request and Notification.
// ---------------------------------------------------------------------------------------

#[test]
fn fr_003_request_with_null_id_is_a_request() {
    let Message::Request(r) = parse_single(r#"{"jsonrpc":"2.0","id":null,"method":"m"}"#) else {
        panic!("id null expects an answer")
    };
    assert!(r.id().is_null());
    assert_eq!(r.id().kind(), IdKind::Null);
    assert!(r.params().is_none());
}

#[test]
fn fr_003_params_view() {
    let input = r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1,"b\u0021":"two","c":[3]}}"#;
    let Message::Request(r) = parse_single(input) else {
        panic!()
    };
    let p = r.params().unwrap();
    assert!(p.is_object() && !p.is_array());
    assert_eq!(p.len(), 3);
    assert!(!p.is_empty());
    assert_eq!(p.get("a").unwrap().get(), "1");
    assert_eq!(p.get("b!").unwrap().decode::<&str>().unwrap(), "two");
    assert!(p.get("b\\u0021").is_none(), "keys are compared after unescaping");
    assert!(p.get("zzz").is_none());
    assert!(p.at(0).is_none(), "named params have no positions");
    assert_eq!(p.iter().count(), 0);
    let members: Vec<(String, String)> = p
        .members()
        .map(|(k, v)| (k.into_owned(), v.get().to_owned()))
        .collect();
    assert_eq!(
        members,
        [
            ("a".into(), "1".into()),
            ("b!".into(), "\"two\"".into()),
            ("c".into(), "[3]".into())
        ]
    );
    assert_eq!(
        p.decode::<Value>().unwrap(),
        json!({"a": 1, "b!": "two", "c": [3]})
    );
    assert_eq!(p.raw().get(), p.as_str());

    let Message::Notification(n) =
        parse_single(r#"{"jsonrpc":"2.0","method":"n","params":[ "x" , [1] , {} ]}"#)
    else {
        panic!()
    };
    let p = n.params().unwrap();
    assert!(p.is_array());
    assert_eq!(p.len(), 3);
    let items: Vec<String> = p.iter().map(|v| v.get().to_owned()).collect();
    assert_eq!(items, ["\"x\"", "[1]", "{}"]);
    assert_eq!(p.at(1).unwrap().get(), "[1]");
    assert!(p.at(3).is_none());
    assert!(p.get("x").is_none(), "positional params have no names");

    let Message::Notification(n) = parse_single(r#"{"jsonrpc":"2.0","method":"n","params":[]}"#) else {
        panic!()
    };
    assert!(n.params().unwrap().is_empty());
}

#[test]
fn fr_003_into_parts() {
    let (id, method, params) = Request::new("x", "m").with_params(&[1]).unwrap().into_parts();
    assert_eq!(id, Id::from("x"));
    assert_eq!(method, "m");
    assert_eq!(params.unwrap().get(), "[1]");
    let (method, params) = Notification::new("n").into_parts();
    assert_eq!(method, "n");
    assert!(params.is_none());
}

// ---------------------------------------------------------------------------------------
// FR-004: Response, exactly one of result and error.
// ---------------------------------------------------------------------------------------

#[test]
fn fr_004_response_has_exactly_one_of_result_and_error() {
    let Message::Response(ok) = parse_single(r#"{"jsonrpc":"2.0","id":1,"result":[1,2]}"#) else {
        panic!()
    };
    assert!(ok.is_success());
    assert!(ok.error_object().is_none());
    assert!(matches!(ok.payload(), ResponsePayload::Result(r) if r.get() == "[1,2]"));

    let Message::Response(failed) =
        parse_single(r#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"}}"#)
    else {
        panic!()
    };
    assert!(!failed.is_success());
    assert!(failed.result().is_none());
    assert!(matches!(failed.payload(), ResponsePayload::Error(e) if e.code().code() == 1));

    // Both or neither is not a response.
    for input in [
        r#"{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"m"}}"#,
        r#"{"jsonrpc":"2.0","id":1}"#,
    ] {
        assert_eq!(
            rpcwire::parse(input.as_bytes()).unwrap_err().code().code(),
            -32600,
            "{input}"
        );
    }

    // A null result is still a result.
    let Message::Response(null) = parse_single(r#"{"jsonrpc":"2.0","id":1,"result":null}"#) else {
        panic!()
    };
    assert!(null.is_success());
    assert!(null.result().unwrap().is_null());

    let (id, payload) = Response::error(3u64, ErrorObject::parse_error()).into_parts();
    assert_eq!(id.as_u64(), Some(3));
    assert!(matches!(payload, ResponsePayload::Error(_)));
}

// ---------------------------------------------------------------------------------------
// FR-005: Id.
// ---------------------------------------------------------------------------------------

/// (id JSON text, kind, raw(), as_u64(), as_i64(), as_str())
type IdCase = (
    &'static str,
    IdKind,
    &'static str,
    Option<u64>,
    Option<i64>,
    Option<&'static str>,
);

#[test]
fn fr_005_id_kinds_and_accessors() {
    let cases: [IdCase; 9] = [
        ("42", IdKind::Number, "42", Some(42), Some(42), None),
        ("-7", IdKind::Number, "-7", None, Some(-7), None),
        ("0", IdKind::Number, "0", Some(0), Some(0), None),
        (
            "18446744073709551615",
            IdKind::Number,
            "18446744073709551615",
            Some(u64::MAX),
            None,
            None,
        ),
        (
            "18446744073709551616",
            IdKind::Number,
            "18446744073709551616",
            None,
            None,
            None,
        ),
        ("1.5e3", IdKind::Number, "1.5e3", None, None, None),
        ("\"abc\"", IdKind::String, "abc", None, None, Some("abc")),
        (
            "\"a\\u0041\\\"\"",
            IdKind::String,
            "a\\u0041\\\"",
            None,
            None,
            Some("aA\""),
        ),
        ("null", IdKind::Null, "null", None, None, None),
    ];
    for (text, kind, raw, u, i, s) in cases {
        let input = format!(r#"{{"jsonrpc":"2.0","id":{text},"method":"m"}}"#);
        let message = parse_single(&input);
        let id = message.id().unwrap();
        assert_eq!(id.kind(), kind, "{text}");
        assert_eq!(id.raw(), raw, "{text}");
        assert_eq!(id.as_u64(), u, "{text}");
        assert_eq!(id.as_i64(), i, "{text}");
        assert_eq!(id.as_str().as_deref(), s, "{text}");
        assert_eq!(id.is_null(), kind == IdKind::Null);
        assert_eq!(id.to_string(), text, "Display writes the JSON text");
        let mut json = String::new();
        id.write_json(&mut json);
        assert_eq!(json, text);
    }
}

#[test]
fn fr_005_id_constructors_and_equality() {
    assert_eq!(Id::from(5u64), Id::number("5").unwrap());
    assert_eq!(Id::from(-5i64), Id::number("-5").unwrap());
    assert_eq!(Id::from(5u32), Id::from(5i32));
    assert_eq!(Id::from("x"), Id::string(String::from("x")));
    assert!(Id::number("01").is_none());
    assert!(Id::number("1.").is_none());
    assert!(Id::number(" 1").is_none());
    assert!(Id::number("abc").is_none());
    // Numbers compare by text, strings by value, kinds never equal each other.
    assert_ne!(Id::number("1").unwrap(), Id::number("1.0").unwrap());
    assert_ne!(Id::from("1"), Id::from(1u64));
    assert_ne!(Id::null(), Id::from("null"));
    let escaped = parse_single(r#"{"jsonrpc":"2.0","id":"\u0061b","method":"m"}"#);
    assert_eq!(escaped.id().unwrap(), &Id::from("ab"));
    // Equal ids hash equally.
    let set: HashSet<Id<'_>> = [Id::from("ab"), escaped.id().unwrap().clone()]
        .into_iter()
        .collect();
    assert_eq!(set.len(), 1);
    // A string built with characters that need escapes.
    let id = Id::string("tab\there");
    assert_eq!(id.raw(), "tab\\there");
    assert_eq!(id.as_str().unwrap(), "tab\there");
}

// ---------------------------------------------------------------------------------------
// FR-006: ErrorObject.
// ---------------------------------------------------------------------------------------

#[test]
fn fr_006_error_object_parts() {
    let input =
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"field":"a"}}}"#;
    let Message::Response(r) = parse_single(input) else {
        panic!()
    };
    let e = r.error_object().unwrap();
    assert_eq!(e.code(), ErrorCode::InvalidParams);
    assert_eq!(e.message(), "Invalid params");
    assert_eq!(
        e.data().unwrap().decode::<Value>().unwrap(),
        json!({"field": "a"})
    );
    assert_eq!(e.to_string(), r#"Invalid params (-32602): {"field":"a"}"#);

    let plain = ErrorObject::new(7, "seven");
    assert!(plain.data().is_none());
    assert_eq!(plain.to_string(), "seven (7)");
    let as_error: &dyn std::error::Error = &plain;
    assert_eq!(as_error.to_string(), "seven (7)");

    // An escaped message comes back unescaped.
    let input = r#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"a\"b\u00e9"}}"#;
    let Message::Response(r) = parse_single(input) else {
        panic!()
    };
    assert_eq!(r.error_object().unwrap().message(), "a\"bé");
}

// ---------------------------------------------------------------------------------------
// FR-007: ErrorCode.
// ---------------------------------------------------------------------------------------

#[test]
fn fr_007_error_codes() {
    let standard = [
        (ErrorCode::ParseError, -32700, "Parse error"),
        (ErrorCode::InvalidRequest, -32600, "Invalid Request"),
        (ErrorCode::MethodNotFound, -32601, "Method not found"),
        (ErrorCode::InvalidParams, -32602, "Invalid params"),
        (ErrorCode::InternalError, -32603, "Internal error"),
    ];
    for (code, number, message) in standard {
        assert_eq!(code.code(), number);
        assert_eq!(ErrorCode::from(number), code);
        assert_eq!(i64::from(code), number);
        assert_eq!(code.message(), message);
        assert_eq!(ErrorObject::from_code(code).message(), message);
    }
    for number in [-32099, -32050, -32000] {
        assert_eq!(ErrorCode::from(number), ErrorCode::ServerError(number));
        assert_eq!(ErrorCode::from(number).code(), number);
    }
    for number in [
        -32100,
        -31999,
        -32604,
        -32699,
        -32701,
        0,
        1,
        3,
        i64::MIN,
        i64::MAX,
    ] {
        assert_eq!(
            ErrorCode::from(number),
            ErrorCode::Application(number),
            "{number}"
        );
        assert_eq!(ErrorCode::from(number).code(), number);
    }
    assert_eq!(ErrorCode::from(-32601i32), ErrorCode::MethodNotFound);
    assert_eq!(
        ErrorCode::ServerError(-32001).to_string(),
        "Server error (-32001)"
    );

    // Parsed codes are classified the same way.
    let input = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32005,"message":"limit"}}"#;
    let Message::Response(r) = parse_single(input) else {
        panic!()
    };
    assert_eq!(r.error_object().unwrap().code(), ErrorCode::ServerError(-32005));
}

// ---------------------------------------------------------------------------------------
// FR-008: RawJson.
// ---------------------------------------------------------------------------------------

#[test]
fn fr_008_raw_json_is_validated_text() {
    for valid in [
        "1",
        " [1, 2.5e-3, null] ",
        r#"{"a":{"b":[true,false]}}"#,
        r#""\ud83d\ude00""#,
    ] {
        assert!(RawJson::new(valid).is_ok(), "{valid}");
    }
    for invalid in ["", "[1,]", "{\"a\"}", "01", "\"\\ud800\"", "[1] x", "nul", "'a'"] {
        let e = RawJson::new(invalid).unwrap_err();
        assert!(e.offset() <= invalid.len(), "{invalid}: {e}");
        // Wrapped by the JSON-RPC layer, it is answered -32700.
        assert!(rpcwire::ParseError::from(e).is_syntax(), "{invalid}");
    }
    let raw = RawJson::from_value(&json!({"k": [1, "two"]})).unwrap();
    assert_eq!(raw.get(), r#"{"k":[1,"two"]}"#);
    let pair = RawJson::new(r#"[1,"two"]"#).unwrap();
    let (number, text): (u8, &str) = pair.decode().unwrap();
    assert_eq!((number, text), (1, "two"));
    assert!(RawJson::new("null").unwrap().is_null());
    assert!(!RawJson::new("0").unwrap().is_null());
    assert_eq!(RawJson::new("[1]").unwrap().to_string(), "[1]");

    // serde_json RawValue both ways.
    let boxed = serde_json::value::RawValue::from_string("[3]".into()).unwrap();
    let from_boxed = RawJson::try_from(boxed).unwrap();
    assert_eq!(from_boxed.get(), "[3]");
    assert_eq!(from_boxed.to_raw_value().get(), "[3]");
    let borrowed: &serde_json::value::RawValue = serde_json::from_str("{\"x\":1}").unwrap();
    assert_eq!(RawJson::try_from(borrowed).unwrap().get(), "{\"x\":1}");
    let lone: &serde_json::value::RawValue = serde_json::from_str(r#""\ud800""#).unwrap();
    assert!(RawJson::try_from(lone).is_err());
    assert_eq!(RawJson::try_from(&json!([true])).unwrap().get(), "[true]");
}

// ---------------------------------------------------------------------------------------
// FR-009: serde Serialize/Deserialize with serde_json, borrowing.
// ---------------------------------------------------------------------------------------

#[test]
fn fr_009_deserialize_with_serde_json_borrows() {
    let input = r#"{"jsonrpc":"2.0","id":"q","method":"eth_call","params":["0x1",true]}"#;
    let request: Request<'_> = serde_json::from_str(input).unwrap();
    assert!(points_into(request.method(), input));
    assert!(points_into(request.raw_params().unwrap().get(), input));
    assert_eq!(request.id(), &Id::from("q"));

    let message: Message<'_> = serde_json::from_str(input).unwrap();
    assert_eq!(message, Message::Request(request));

    let n: Notification<'_> = serde_json::from_str(r#"{"jsonrpc":"2.0","method":"n"}"#).unwrap();
    assert_eq!(n.method(), "n");
    let r: Response<'_> = serde_json::from_str(r#"{"jsonrpc":"2.0","id":1,"result":{"a":1}}"#).unwrap();
    assert_eq!(r.result().unwrap().get(), r#"{"a":1}"#);

    // The wrong kind is an error, and so is anything the strict parser rejects.
    assert!(serde_json::from_str::<Request<'_>>(r#"{"jsonrpc":"2.0","method":"n"}"#).is_err());
    assert!(serde_json::from_str::<Notification<'_>>(r#"{"jsonrpc":"2.0","id":1,"method":"n"}"#).is_err());
    assert!(serde_json::from_str::<Response<'_>>(r#"{"jsonrpc":"2.0","id":1,"method":"n"}"#).is_err());
    assert!(serde_json::from_str::<Message<'_>>(r#"{"jsonrpc":"1.0","id":1,"method":"n"}"#).is_err());
    assert!(serde_json::from_str::<Message<'_>>(r#"{"jsonrpc":"2.0","method":"a","method":"b"}"#).is_err());
    assert!(serde_json::from_str::<Message<'_>>(r#"[{"jsonrpc":"2.0","method":"a"}]"#).is_err());

    // Embedded in a user's own type.
    #[derive(serde::Deserialize)]
    struct Envelope<'a> {
        #[serde(borrow)]
        message: Message<'a>,
        #[serde(borrow)]
        extra: RawJson<'a>,
        #[serde(borrow)]
        id: Id<'a>,
        code: ErrorCode,
        #[serde(borrow)]
        error: ErrorObject<'a>,
    }
    let text = r#"{"message":{"jsonrpc":"2.0","method":"x"},"extra":[1, 2],"id":-7,"code":-32601,
                   "error":{"code":-32000,"message":"busy","data":[1]}}"#;
    let envelope: Envelope<'_> = serde_json::from_str(text).unwrap();
    assert_eq!(envelope.message.method(), Some("x"));
    assert_eq!(envelope.extra.get(), "[1, 2]");
    assert!(points_into(envelope.extra.get(), text));
    assert_eq!(envelope.id.raw(), "-7");
    assert_eq!(envelope.id.kind(), IdKind::Number);
    assert_eq!(envelope.code, ErrorCode::MethodNotFound);
    assert_eq!(envelope.error.code(), ErrorCode::ServerError(-32000));
    assert!(points_into(envelope.error.message(), text));
    assert_eq!(envelope.error.data().unwrap().get(), "[1]");

    // Deserializing checks what rpcwire's parser checks, also where serde_json's RawValue
    // is more lenient (lone UTF-16 surrogate escapes).
    for lone in [r#""\ud800""#, r#"["\udc00"]"#, r#"{"a":"x\ud83dy"}"#] {
        assert!(rpcwire::parse(format!(r#"{{"jsonrpc":"2.0","id":1,"result":{lone}}}"#).as_bytes()).is_err());
        assert!(serde_json::from_str::<RawJson<'_>>(lone).is_err(), "{lone}");
        let error = format!(r#"{{"code":1,"message":"m","data":{lone}}}"#);
        assert!(
            serde_json::from_str::<ErrorObject<'_>>(&error).is_err(),
            "{error}"
        );
    }
    assert!(serde_json::from_str::<Id<'_>>(r#""\ud800""#).is_err());
    assert!(serde_json::from_str::<Id<'_>>(r#""\ud83d\ude00""#).is_ok());
    assert_eq!(
        serde_json::from_str::<RawJson<'_>>(r#" ["\ud83d\ude00"] "#)
            .unwrap()
            .get(),
        r#"["\ud83d\ude00"]"#
    );

    assert!(serde_json::from_str::<Id<'_>>("true").is_err());
    assert!(serde_json::from_str::<Id<'_>>("[1]").is_err());
    assert_eq!(serde_json::from_str::<Id<'_>>("null").unwrap(), Id::null());
    assert_eq!(serde_json::from_str::<Id<'_>>(r#""s""#).unwrap(), Id::from("s"));
}

#[test]
fn fr_009_serialize_with_serde_json() {
    let messages: Vec<Message<'static>> = vec![
        Request::new(1u64, "a")
            .with_params(&json!({"k": [1, 2]}))
            .unwrap()
            .into(),
        Notification::new("b").with_params(&(1, "two")).unwrap().into(),
        Response::success("id", &json!(null)).unwrap().into(),
        Response::error(Id::null(), ErrorObject::method_not_found("zz")).into(),
    ];
    for message in messages {
        let text = serde_json::to_string(&message).unwrap();
        assert_eq!(parse_single(&text), message, "{text}");
        let back: Message<'_> = serde_json::from_str(&text).unwrap();
        assert_eq!(back, message);
        // To a serde_json::Value and back to text gives the same message.
        let value = serde_json::to_value(&message).unwrap();
        assert_eq!(value["jsonrpc"], "2.0");
        let text = serde_json::to_string(&value).unwrap();
        assert_eq!(parse_single(&text), message, "{text}");
        // Pretty printing is whitespace only.
        let pretty = serde_json::to_string_pretty(&message).unwrap();
        assert_eq!(serde_json::from_str::<Value>(&pretty).unwrap(), value);
    }
    assert_eq!(
        serde_json::to_string(&ErrorCode::InternalError).unwrap(),
        "-32603"
    );
    assert_eq!(
        serde_json::to_string(&RawJson::new(" [1, 2] ").unwrap()).unwrap(),
        "[1, 2]"
    );
}

// ---------------------------------------------------------------------------------------
// FR-010: constructors and helpers.
// ---------------------------------------------------------------------------------------

#[test]
fn fr_010_constructors() {
    #[derive(serde::Serialize)]
    struct Named {
        a: u8,
    }
    let r = Request::new(1u64, "m").with_params(&Named { a: 1 }).unwrap();
    assert_eq!(r.raw_params().unwrap().get(), r#"{"a":1}"#);
    let r = Request::new("x", String::from("m"))
        .with_params(&vec![1, 2])
        .unwrap();
    assert_eq!(r.params().unwrap().decode::<Vec<u8>>().unwrap(), [1, 2]);
    let r = Request::new(Id::null(), "m");
    assert!(r.id().is_null());

    // Params must be an array or an object.
    for bad in [json!(1), json!("s"), json!(null), json!(true)] {
        assert!(matches!(
            Request::new(1u64, "m").with_params(&bad),
            Err(BuildError::ParamsNotStructured)
        ));
        assert!(matches!(
            Notification::new("m").with_params(&bad),
            Err(BuildError::ParamsNotStructured)
        ));
    }
    assert!(matches!(
        Request::new(1u64, "m").with_raw_params(RawJson::new("7").unwrap()),
        Err(BuildError::ParamsNotStructured)
    ));
    let r = Notification::new("m")
        .with_raw_params(RawJson::new("{}").unwrap())
        .unwrap();
    assert!(r.params().unwrap().is_object());
    // A value serde_json cannot serialize is a build error, not a panic.
    let mut bad_map = std::collections::HashMap::new();
    bad_map.insert(vec![1u8], 1);
    assert!(matches!(
        Request::new(1u64, "m").with_params(&bad_map),
        Err(BuildError::Serialize(_))
    ));

    let n = Notification::new("tick");
    assert_eq!(n.method(), "tick");
    assert!(n.params().is_none());

    let ok = Response::success(9u64, &[1, 2]).unwrap();
    assert_eq!(ok.result().unwrap().get(), "[1,2]");
    assert_eq!(ok.id().as_u64(), Some(9));
    let ok = Response::success_raw("s", RawJson::new("true").unwrap()).unwrap();
    assert_eq!(ok.result().unwrap().get(), "true");
    // Only an error response may have a null id.
    assert!(matches!(
        Response::success(Id::null(), &1),
        Err(BuildError::NullIdSuccess)
    ));
    assert!(matches!(
        Response::success_raw(Id::null(), RawJson::new("1").unwrap()),
        Err(BuildError::NullIdSuccess)
    ));
    assert!(Response::error(Id::null(), ErrorObject::parse_error())
        .id()
        .is_null());
    let failed = Response::error(9u64, ErrorObject::invalid_request());
    assert_eq!(failed.error_object().unwrap().code(), ErrorCode::InvalidRequest);

    let cases = [
        (ErrorObject::parse_error(), -32700, "Parse error", None),
        (ErrorObject::invalid_request(), -32600, "Invalid Request", None),
        (
            ErrorObject::method_not_found("frob"),
            -32601,
            "Method not found",
            Some(r#""frob""#),
        ),
        (
            ErrorObject::invalid_params("bad \"a\""),
            -32602,
            "Invalid params",
            Some(r#""bad \"a\"""#),
        ),
        (
            ErrorObject::internal_error(42),
            -32603,
            "Internal error",
            Some(r#""42""#),
        ),
    ];
    for (e, code, message, data) in cases {
        assert_eq!(e.code().code(), code);
        assert_eq!(e.message(), message);
        assert_eq!(e.data().map(|d| d.get()), data);
        if let Some(data) = e.data() {
            // The data is valid JSON.
            assert!(serde_json::from_str::<String>(data.get()).is_ok());
        }
    }
    let e = ErrorObject::new(-32001, "busy")
        .with_data(&json!({"retry": 5}))
        .unwrap();
    assert_eq!(e.code(), ErrorCode::ServerError(-32001));
    assert_eq!(e.data().unwrap().get(), r#"{"retry":5}"#);
    let e = ErrorObject::new(ErrorCode::InternalError, String::from("x"))
        .with_raw_data(RawJson::new("[]").unwrap());
    assert_eq!(e.data().unwrap().get(), "[]");
}

// ---------------------------------------------------------------------------------------
// FR-011: serialization shape.
// ---------------------------------------------------------------------------------------

#[test]
fn fr_011_serialization_shape() {
    let cases: Vec<(Message<'static>, &str)> = vec![
        (
            Request::new(1u64, "m").into(),
            r#"{"jsonrpc":"2.0","id":1,"method":"m"}"#,
        ),
        (
            Request::new(1u64, "m").with_params(&[1]).unwrap().into(),
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":[1]}"#,
        ),
        (
            Request::new(Id::null(), "m").into(),
            r#"{"jsonrpc":"2.0","id":null,"method":"m"}"#,
        ),
        (Notification::new("n").into(), r#"{"jsonrpc":"2.0","method":"n"}"#),
        (
            Notification::new("n").with_params(&json!({})).unwrap().into(),
            r#"{"jsonrpc":"2.0","method":"n","params":{}}"#,
        ),
        (
            Response::success(1u64, &json!(null)).unwrap().into(),
            r#"{"jsonrpc":"2.0","id":1,"result":null}"#,
        ),
        (
            Response::error(2u64, ErrorObject::new(5, "five")).into(),
            r#"{"jsonrpc":"2.0","id":2,"error":{"code":5,"message":"five"}}"#,
        ),
        (
            Response::error(2u64, ErrorObject::new(5, "five").with_data(&false).unwrap()).into(),
            r#"{"jsonrpc":"2.0","id":2,"error":{"code":5,"message":"five","data":false}}"#,
        ),
    ];
    for (message, expected) in cases {
        assert_eq!(serde_json::to_string(&message).unwrap(), expected);
        let value = serde_json::to_value(&message).unwrap();
        let object = value.as_object().unwrap();
        assert_eq!(object["jsonrpc"], "2.0");
        assert!(!(object.contains_key("result") && object.contains_key("error")));
    }
    // Serializing a parsed message rewrites "jsonrpc" as "2.0" even when it arrived escaped.
    let parsed = parse_single(r#"{"jsonrpc":"2\u002e0","method":"n","params":null}"#);
    assert_eq!(
        serde_json::to_string(&parsed).unwrap(),
        r#"{"jsonrpc":"2.0","method":"n"}"#
    );
}

// ---------------------------------------------------------------------------------------
// FR-012: ids keep their kind and text.
// ---------------------------------------------------------------------------------------

#[test]
fn fr_012_id_text_survives_parse_and_serialize() {
    for id in [
        "1",
        "-7",
        "0",
        "-0",
        "18446744073709551616",
        "-9223372036854775809",
        "1.5e3",
        "1E+2",
        "2.50",
        "1e-400",
        "123456789012345678901234567890",
        "\"abc\"",
        "\"1\"",
        "\"\"",
        "\"é ✓ \\n\"",
        "null",
    ] {
        let input = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"m"}}"#);
        let message = parse_single(&input);
        let written = serde_json::to_string(&message).unwrap();
        assert_eq!(written, input, "request id {id}");
        if id == "null" {
            // Only an error response may carry a null id.
            assert!(Response::success(message.id().unwrap().clone(), &1).is_err());
            let answer = Response::error(message.id().unwrap().clone(), ErrorObject::new(-32000, "x"));
            let written = serde_json::to_string(&answer).unwrap();
            assert_eq!(
                written,
                r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"x"}}"#
            );
            continue;
        }
        let answer = Response::success(message.id().unwrap().clone(), &1).unwrap();
        let written = serde_json::to_string(&answer).unwrap();
        assert_eq!(
            written,
            format!(r#"{{"jsonrpc":"2.0","id":{id},"result":1}}"#),
            "response id {id}"
        );
        // Built from the text directly, too.
        if !id.starts_with('"') && id != "null" {
            let built = Request::new(Id::number(id).unwrap(), "m");
            assert_eq!(serde_json::to_string(&built).unwrap(), input);
        }
    }
}

#[test]
fn fr_012_id_kind_is_preserved() {
    let string = serde_json::to_value(Request::new("5", "m")).unwrap();
    assert_eq!(string["id"], json!("5"));
    let number = serde_json::to_value(Request::new(5u64, "m")).unwrap();
    assert_eq!(number["id"], json!(5));
    let negative = serde_json::to_value(Request::new(-5i64, "m")).unwrap();
    assert_eq!(negative["id"], json!(-5));
    let null = serde_json::to_value(Request::new(Id::null(), "m")).unwrap();
    assert_eq!(null["id"], Value::Null);
    let float = serde_json::to_value(Request::new(Id::number("1.5e3").unwrap(), "m")).unwrap();
    assert_eq!(float["id"], json!(1500.0));
    // Strings that need escapes are written escaped and read back equal.
    let tricky = Id::string("quote\" backslash\\ newline\n nul\u{0} é");
    let text = serde_json::to_string(&Request::new(tricky.clone(), "m")).unwrap();
    assert_eq!(parse_single(&text).id(), Some(&tricky));
    let back: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(back["id"], json!("quote\" backslash\\ newline\n nul\u{0} é"));
    // An escaped string id keeps its value (and its kind) when written back; the escapes
    // themselves may be normalised (the raw text is still available from `raw()`).
    let parsed = parse_single(r#"{"jsonrpc":"2.0","id":"\u0041\/","method":"m"}"#);
    assert_eq!(parsed.id().unwrap().raw(), r"\u0041\/");
    let written: Value = serde_json::to_value(&parsed).unwrap();
    assert_eq!(written["id"], json!("A/"));
}

// ---------------------------------------------------------------------------------------
// Exactness details found in review.

#[test]
fn escaped_string_ids_serialize_byte_for_byte() {
    let input = br#"{"jsonrpc":"2.0","id":"\u0041\/b","method":"m"}"#;
    let message = rpcwire::parse(input).unwrap().single().unwrap();
    let text = serde_json::to_string(&message).unwrap();
    assert!(text.contains(r#""id":"\u0041\/b""#), "{text}");
    assert_eq!(message.id().unwrap().as_str().unwrap(), "A/b");
}

#[test]
fn error_data_null_is_present_on_every_path() {
    let input = r#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","data":null}}"#;
    let parsed = rpcwire::parse(input.as_bytes()).unwrap().single().unwrap();
    let via_serde: Message<'_> = serde_json::from_str(input).unwrap();
    assert_eq!(parsed, via_serde);
    let object: ErrorObject<'_> = serde_json::from_str(r#"{"code":1,"message":"m","data":null}"#).unwrap();
    assert_eq!(object.data().unwrap().get(), "null");
    let object: ErrorObject<'_> = serde_json::from_str(r#"{"code":1,"message":"m"}"#).unwrap();
    assert!(object.data().is_none());
}

#[test]
fn params_get_takes_the_last_duplicate_like_serde_json_value() {
    let input = br#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1,"b":2,"\u0061":3}}"#;
    let Message::Request(request) = rpcwire::parse(input).unwrap().single().unwrap() else {
        panic!("a request")
    };
    let params = request.params().unwrap();
    assert_eq!(params.get("a").unwrap().get(), "3");
    let value: serde_json::Value = params.decode().unwrap();
    assert_eq!(value["a"], 3);
}

#[test]
fn raw_json_new_drops_surrounding_whitespace() {
    let raw = RawJson::new(" \n[1, 2]\t ").unwrap();
    assert_eq!(raw.get(), "[1, 2]");
    let owned = RawJson::new(String::from(" {} ")).unwrap();
    assert_eq!(owned.get(), "{}");
    assert_eq!(serde_json::to_string(&raw).unwrap(), "[1, 2]");
}
