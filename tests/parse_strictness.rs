//! Every strictness rule of issue 2: what is accepted, what is -32700 (malformed JSON), what
//! is -32600 (valid JSON, invalid message), at which byte, with which id; limits; string
//! validation; unescaping; owned frames and the reusing parser.

use bytes::Bytes;
use rpcwire::json::SyntaxErrorKind;
use rpcwire::{
    BatchScratch, ErrorCode, Id, Limits, Message, ParseError, ParseErrorKind, Parsed, ParsedFrame, Parser,
};

fn parse_ok(input: &[u8]) -> Message<'_> {
    match rpcwire::parse(input) {
        Ok(Parsed::Single(message)) => message,
        other => panic!(
            "expected one message for {}, got {other:?}",
            String::from_utf8_lossy(input)
        ),
    }
}

fn parse_err(input: &[u8]) -> ParseError {
    match rpcwire::parse(input) {
        Err(error) => {
            check_error_is_explained(input, &error);
            error
        }
        Ok(parsed) => panic!(
            "expected an error for {}, got {parsed:?}",
            String::from_utf8_lossy(input)
        ),
    }
}

/// Asserts `input` is -32700 and returns the error.
fn syntax(input: &[u8]) -> ParseError {
    let e = parse_err(input);
    assert!(
        e.is_syntax(),
        "expected -32700 for {}, got {e}",
        String::from_utf8_lossy(input)
    );
    assert_eq!(e.code(), ErrorCode::ParseError);
    assert!(e.id().is_none(), "a parse error has no id to echo");
    e
}

/// Asserts `input` is -32600 for `reason` and returns the error.
fn invalid(input: &[u8], reason: ParseErrorKind) -> ParseError {
    let e = parse_err(input);
    assert!(
        !e.is_syntax(),
        "expected -32600 for {}, got {e}",
        String::from_utf8_lossy(input)
    );
    assert_eq!(e.code(), ErrorCode::InvalidRequest);
    assert_eq!(*e.kind(), reason, "for {}", String::from_utf8_lossy(input));
    e
}

/// Every error says where (an offset inside the input or at its end) and what, in words.
fn check_error_is_explained(input: &[u8], e: &ParseError) {
    assert!(
        e.offset() <= input.len(),
        "offset {} beyond input of {} bytes",
        e.offset(),
        input.len()
    );
    let text = e.to_string();
    let what = if e.is_syntax() {
        "parse error"
    } else {
        "invalid request"
    };
    assert!(
        text.starts_with(&format!("{what} at byte {}: ", e.offset())),
        "{text}"
    );
    assert!(text.len() > what.len() + 15, "{text}");
    assert_eq!(text, format!("{what} at byte {}: {}", e.offset(), e.kind()));
    let object = rpcwire::ErrorObject::from(e);
    assert_eq!(object.code(), e.code());
    let data: String = object.data().unwrap().decode().unwrap();
    assert!(data.contains(&e.offset().to_string()), "{data}");
}

fn request(input: &[u8]) -> rpcwire::Request<'_> {
    match parse_ok(input) {
        Message::Request(r) => r,
        other => panic!("expected a request, got {other:?}"),
    }
}

/// The offset of the first occurrence of `needle` in `input`.
fn at(input: &[u8], needle: &str) -> usize {
    input
        .windows(needle.len())
        .position(|w| w == needle.as_bytes())
        .unwrap_or_else(|| panic!("{needle} not in input"))
}

// ---- "jsonrpc" ----

#[test]
fn version_must_be_exactly_2_0() {
    assert!(matches!(
        parse_ok(br#"{"jsonrpc":"2.0","method":"m"}"#),
        Message::Notification(_)
    ));
    // Escapes are fine when the value is "2.0".
    assert!(matches!(
        parse_ok(br#"{"jsonrpc":"2\u002e0","method":"m"}"#),
        Message::Notification(_)
    ));
    assert!(matches!(
        parse_ok(br#"{"jsonrpc":"\u0032.\u0030","id":1,"result":1}"#),
        Message::Response(_)
    ));
    for bad in [
        r#"{"jsonrpc":"2.0 ","method":"m","id":1}"#,
        r#"{"jsonrpc":" 2.0","method":"m","id":1}"#,
        r#"{"jsonrpc":"2","method":"m","id":1}"#,
        r#"{"jsonrpc":"2.00","method":"m","id":1}"#,
        r#"{"jsonrpc":"1.0","method":"m","id":1}"#,
        r#"{"jsonrpc":"","method":"m","id":1}"#,
        r#"{"jsonrpc":2.0,"method":"m","id":1}"#,
        r#"{"jsonrpc":2,"method":"m","id":1}"#,
        r#"{"jsonrpc":null,"method":"m","id":1}"#,
        r#"{"jsonrpc":["2.0"],"method":"m","id":1}"#,
        r#"{"jsonrpc":{"v":"2.0"},"method":"m","id":1}"#,
    ] {
        let e = invalid(bad.as_bytes(), ParseErrorKind::BadVersion);
        assert_eq!(e.offset(), 11, "points at the value: {bad}");
        assert_eq!(e.id(), Some(&Id::from(1u64)), "{bad}");
    }
    let e = invalid(br#"{"method":"m","id":"x"}"#, ParseErrorKind::MissingVersion);
    assert_eq!(e.offset(), 0);
    assert_eq!(e.id(), Some(&Id::from("x")));
    invalid(br#"{"id":1,"result":1}"#, ParseErrorKind::MissingVersion);
    invalid(b"{}", ParseErrorKind::MissingVersion);
    // Case matters in member names.
    invalid(
        br#"{"JSONRPC":"2.0","method":"m"}"#,
        ParseErrorKind::MissingVersion,
    );
}

// ---- "method" ----

#[test]
fn method_must_be_a_non_empty_string() {
    let input = br#"{"jsonrpc":"2.0","method":"","id":3}"#;
    let e = invalid(input, ParseErrorKind::EmptyMethod);
    assert_eq!(e.offset(), at(input, r#""""#));
    assert_eq!(e.id(), Some(&Id::from(3u64)));
    for value in ["1", "null", "true", "[\"m\"]", "{\"m\":1}"] {
        let input = format!(r#"{{"jsonrpc":"2.0","method":{value},"id":3}}"#);
        let e = invalid(input.as_bytes(), ParseErrorKind::MethodNotString);
        assert_eq!(e.offset(), 26, "{input}");
    }
    invalid(br#"{"jsonrpc":"2.0","id":3}"#, ParseErrorKind::MissingMethod);
    invalid(
        br#"{"jsonrpc":"2.0","id":3,"params":[]}"#,
        ParseErrorKind::MissingMethod,
    );
    // A method that only looks empty after unescaping does not exist: "\u0000" is one
    // character. Whitespace and odd characters are still names.
    assert_eq!(
        parse_ok(br#"{"jsonrpc":"2.0","method":"\u0000"}"#).method(),
        Some("\0")
    );
    assert_eq!(parse_ok(br#"{"jsonrpc":"2.0","method":" "}"#).method(), Some(" "));
    assert_eq!(
        parse_ok(br#"{"jsonrpc":"2.0","method":"rpc.discover"}"#).method(),
        Some("rpc.discover")
    );
    // A message with a method is a request or notification, never a response too.
    invalid(
        br#"{"jsonrpc":"2.0","method":"m","id":1,"result":1}"#,
        ParseErrorKind::MethodWithResult,
    );
    invalid(
        br#"{"jsonrpc":"2.0","method":"m","id":1,"error":{"code":1,"message":"x"}}"#,
        ParseErrorKind::MethodWithResult,
    );
}

// ---- "params" ----

#[test]
fn params_must_be_array_object_or_null() {
    let r = request(br#"{"jsonrpc":"2.0","method":"m","id":1,"params":[]}"#);
    assert!(r.params().unwrap().is_array());
    let r = request(br#"{"jsonrpc":"2.0","method":"m","id":1,"params":{}}"#);
    assert!(r.params().unwrap().is_object());
    let r = request(br#"{"jsonrpc":"2.0","method":"m","id":1,"params":null}"#);
    assert!(r.params().is_none(), "null params are absent params");
    let r = request(br#"{"jsonrpc":"2.0","method":"m","id":1}"#);
    assert!(r.params().is_none());
    for value in ["\"bar\"", "1", "-1.5", "true", "false"] {
        let input = format!(r#"{{"jsonrpc":"2.0","method":"m","id":"k","params":{value}}}"#);
        let e = invalid(input.as_bytes(), ParseErrorKind::BadParams);
        assert_eq!(e.offset(), at(input.as_bytes(), value), "{input}");
        assert_eq!(e.id(), Some(&Id::from("k")));
    }
    // A response has no params, not even null ones.
    invalid(
        br#"{"jsonrpc":"2.0","id":1,"result":1,"params":[]}"#,
        ParseErrorKind::ParamsInResponse,
    );
    invalid(
        br#"{"jsonrpc":"2.0","id":1,"result":1,"params":null}"#,
        ParseErrorKind::ParamsInResponse,
    );
}

// ---- "id" ----

#[test]
fn id_must_be_string_number_or_null() {
    for (text, kind) in [
        ("\"s\"", rpcwire::IdKind::String),
        ("12", rpcwire::IdKind::Number),
        ("-1.25E+7", rpcwire::IdKind::Number),
        ("null", rpcwire::IdKind::Null),
    ] {
        let input = format!(r#"{{"jsonrpc":"2.0","id":{text},"method":"m"}}"#);
        assert_eq!(request(input.as_bytes()).id().kind(), kind, "{input}");
    }
    for value in ["true", "false", "[1]", "{\"a\":1}", "[]", "{}"] {
        let input = format!(r#"{{"jsonrpc":"2.0","id":{value},"method":"m"}}"#);
        let e = invalid(input.as_bytes(), ParseErrorKind::BadId);
        assert_eq!(e.offset(), 22, "{input}");
        assert!(e.id().is_none(), "an unreadable id is not echoed: {input}");
    }
    // Malformed numbers are malformed JSON.
    for value in ["01", "1.", ".5", "+1", "-", "1e", "0x10", "NaN", "Infinity"] {
        let input = format!(r#"{{"jsonrpc":"2.0","id":{value},"method":"m"}}"#);
        syntax(input.as_bytes());
    }
}

#[test]
fn id_null_is_a_request_and_missing_id_is_a_notification() {
    let m = parse_ok(br#"{"jsonrpc":"2.0","id":null,"method":"m"}"#);
    let Message::Request(r) = m else {
        panic!("id null expects an answer: {m:?}")
    };
    assert!(r.id().is_null());
    let m = parse_ok(br#"{"jsonrpc":"2.0","method":"m"}"#);
    assert!(matches!(m, Message::Notification(_)), "{m:?}");
}

// ---- responses ----

#[test]
fn response_has_exactly_one_of_result_and_error() {
    let input = br#"{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"x"}}"#;
    let e = invalid(input, ParseErrorKind::ResultAndError);
    assert_eq!(e.offset(), 0);
    assert_eq!(e.id(), Some(&Id::from(1u64)));
    invalid(br#"{"jsonrpc":"2.0","id":1}"#, ParseErrorKind::MissingMethod);
    invalid(br#"{"jsonrpc":"2.0","result":1}"#, ParseErrorKind::MissingId);
    invalid(
        br#"{"jsonrpc":"2.0","error":{"code":1,"message":"x"}}"#,
        ParseErrorKind::MissingId,
    );
    // An error of null is not an error object.
    let e = parse_err(br#"{"jsonrpc":"2.0","id":1,"result":1,"error":null}"#);
    assert_eq!(e.code().code(), -32600);
    // id null is fine in a response (the answer to an unreadable request).
    assert!(
        parse_ok(br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#)
            .id()
            .unwrap()
            .is_null()
    );
}

#[test]
fn error_needs_integer_code_and_string_message() {
    let ok = parse_ok(br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"m","data":null}}"#);
    let Message::Response(r) = ok else { panic!() };
    assert_eq!(r.error_object().unwrap().code().code(), -32000);
    assert!(r.error_object().unwrap().data().unwrap().is_null());
    let i64_min =
        parse_ok(br#"{"jsonrpc":"2.0","id":1,"error":{"code":-9223372036854775808,"message":"m"}}"#);
    let Message::Response(r) = i64_min else { panic!() };
    assert_eq!(r.error_object().unwrap().code().code(), i64::MIN);

    let bad_code = |code: &str| {
        let input = format!(r#"{{"jsonrpc":"2.0","id":1,"error":{{"code":{code},"message":"m"}}}}"#);
        let e = parse_err(input.as_bytes());
        assert_eq!(e.code().code(), -32600, "{input}");
        assert!(
            matches!(e.kind(), ParseErrorKind::BadErrorObject(_)),
            "{input}: {e}"
        );
        assert_eq!(e.offset(), at(input.as_bytes(), code), "{input}");
        assert_eq!(e.id(), Some(&Id::from(1u64)));
    };
    for code in [
        "1.0",
        "1e2",
        "1E2",
        "-32000.5",
        "\"-32000\"",
        "null",
        "true",
        "[1]",
        "99999999999999999999",
    ] {
        bad_code(code);
    }
    for (error, what) in [
        (r#"{"code":1}"#, "missing \"message\""),
        (r#"{"message":"m"}"#, "missing \"code\""),
        (r#"{}"#, "missing \"code\""),
        (r#"{"code":1,"message":2}"#, "\"message\" must be a string"),
        (r#"{"code":1,"message":null}"#, "\"message\" must be a string"),
        (r#""oops""#, "not an object"),
        (r#"[1,"m"]"#, "not an object"),
        (r#"-32000"#, "not an object"),
    ] {
        let input = format!(r#"{{"jsonrpc":"2.0","id":1,"error":{error}}}"#);
        invalid(input.as_bytes(), ParseErrorKind::BadErrorObject(what));
    }
}

// ---- duplicates ----

#[test]
fn duplicate_members_are_rejected() {
    let cases: [(&str, &str); 12] = [
        (r#"{"jsonrpc":"2.0","id":1,"method":"a","method":"b"}"#, "method"),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"a","met\u0068od":"b"}"#,
            "method",
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"\u006dethod":"a","method":"b"}"#,
            "method",
        ),
        (
            r#"{"jsonrpc":"2.0","jsonrpc":"2.0","id":1,"method":"a"}"#,
            "jsonrpc",
        ),
        (r#"{"jsonrpc":"2.0","id":1,"id":1,"method":"a"}"#, "id"),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"a","params":[],"params":[]}"#,
            "params",
        ),
        (r#"{"jsonrpc":"2.0","id":1,"result":1,"result":2}"#, "result"),
        (
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"},"error":{"code":1,"message":"m"}}"#,
            "error",
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"code":2,"message":"m"}}"#,
            "code",
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","\u006dessage":"n"}}"#,
            "message",
        ),
        (r#"{"jsonrpc":"2.0","id":1,"method":"a","x":1,"x":1}"#, "x"),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"a","x\u00e9":1,"x\u00E9":2}"#,
            "xé",
        ),
    ];
    for (input, name) in cases {
        let e = invalid(input.as_bytes(), ParseErrorKind::DuplicateMember(name.to_owned()));
        // The offset is the second key, where the duplicate is found.
        let second_key = input
            .rfind(&format!(",\"{}", &input[e.offset() + 1..e.offset() + 2]))
            .unwrap()
            + 1;
        assert_eq!(e.offset(), second_key, "{input}");
        assert!(
            e.to_string().contains(&format!("duplicate member \"{name}\"")),
            "{e}"
        );
    }
    // Duplicate unknown members whose raw spellings differ.
    invalid(
        br#"{"jsonrpc":"2.0","method":"a","x":1,"\u0078":2}"#,
        ParseErrorKind::DuplicateMember("x".to_owned()),
    );
    invalid(
        br#"{"jsonrpc":"2.0","method":"a","":1,"":2}"#,
        ParseErrorKind::DuplicateMember(String::new()),
    );
    // Different members that only look alike are not duplicates.
    assert!(parse_ok(br#"{"jsonrpc":"2.0","method":"a","x":1,"X":2,"x ":3}"#)
        .method()
        .is_some());
    // A duplicate is found even when the id comes after it, and the id is echoed.
    let e = invalid(
        br#"{"jsonrpc":"2.0","method":"a","method":"b","id":"late"}"#,
        ParseErrorKind::DuplicateMember("method".into()),
    );
    assert_eq!(e.id(), Some(&Id::from("late")));
    // Two ids: which one is meant cannot be told, so the answer's id is null (JSON-RPC 2.0,
    // section 5: "If there was an error in detecting the id … it MUST be Null"), even when
    // both are the same, and however they are spelled.
    for input in [
        &br#"{"jsonrpc":"2.0","id":1,"id":2,"method":"a"}"#[..],
        br#"{"jsonrpc":"2.0","id":7,"method":"a","id":7}"#,
        br#"{"jsonrpc":"2.0","id":"x","method":"a","\u0069d":"y"}"#,
        br#"{"jsonrpc":"2.0","id":1,"result":0,"id":2}"#,
    ] {
        let e = invalid(input, ParseErrorKind::DuplicateMember("id".into()));
        assert_eq!(e.id(), None, "{}", String::from_utf8_lossy(input));
    }
}

#[test]
fn duplicates_among_many_unknown_members() {
    // Many unknown members: a duplicate is found wherever it is, also when spelled with escapes.
    let message = |extra: &str| {
        let mut text = String::from(r#"{"jsonrpc":"2.0","id":9,"method":"m""#);
        for i in 0..40 {
            text.push_str(&format!(r#","k{i}":{i}"#));
        }
        text.push_str(extra);
        text.push('}');
        text
    };
    assert!(rpcwire::parse(message("").as_bytes()).is_ok());
    for (extra, name) in [
        (r#","k3":0"#, "k3"),
        (r#","k39":0"#, "k39"),
        (r#","\u006b25":0"#, "k25"),
    ] {
        let input = message(extra);
        let e = invalid(input.as_bytes(), ParseErrorKind::DuplicateMember(name.to_owned()));
        assert_eq!(e.offset(), input.len() - extra.len(), "{input}");
        assert_eq!(e.id(), Some(&Id::from(9u64)));
    }
    // The same in an error object.
    let mut error = String::from(r#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m""#);
    for i in 0..20 {
        error.push_str(&format!(r#","e{i}":true"#));
    }
    let ok = format!("{error}}}}}");
    assert!(rpcwire::parse(ok.as_bytes()).is_ok());
    let duplicated = format!(r#"{error},"e\u0031":1}}}}"#);
    invalid(
        duplicated.as_bytes(),
        ParseErrorKind::DuplicateMember("e1".into()),
    );

    // A message as large as the default limit allows, made of short distinct unknown
    // members (about 100,000): accepted, and a duplicate of the first is found at the end.
    // (Comparing every member with every earlier one would take minutes here.)
    let mut big = String::from(r#"{"jsonrpc":"2.0","method":"m""#);
    let mut i = 0u32;
    while big.len() < (1 << 20) - 32 {
        big.push_str(&format!(r#","{i:x}":0"#));
        i += 1;
    }
    assert!(rpcwire::parse(format!("{big}}}").as_bytes()).is_ok());
    invalid(
        format!(r#"{big},"0":1}}"#).as_bytes(),
        ParseErrorKind::DuplicateMember("0".into()),
    );
}

// ---- unknown members ----

#[test]
fn unknown_members_are_ignored_but_validated() {
    let m = parse_ok(br#"{"jsonrpc":"2.0","x-trace":{"deep":[1,{"a":null}]},"method":"m","id":1,"":0}"#);
    assert_eq!(m.method(), Some("m"));
    let m = parse_ok(br#"{"jsonrpc":"2.0","id":1,"result":7,"meta":[true,false]}"#);
    assert!(matches!(m, Message::Response(_)));
    let m = parse_ok(br#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","extra":"e"}}"#);
    assert!(matches!(m, Message::Response(_)));

    for input in [
        &br#"{"jsonrpc":"2.0","method":"m","x":[1,}"#[..],
        br#"{"jsonrpc":"2.0","method":"m","x":{"a"}}"#,
        br#"{"jsonrpc":"2.0","method":"m","x":tru}"#,
        br#"{"jsonrpc":"2.0","method":"m","x":"\q"}"#,
        br#"{"jsonrpc":"2.0","method":"m","x":01}"#,
        b"{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"x\":\"\xff\"}",
        br#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","extra":[}}"#,
        // Also when the message is already invalid for JSON-RPC reasons: syntax wins.
        br#"{"jsonrpc":"1.0","method":"m","x":[1,}"#,
        br#"{"jsonrpc":"2.0","method":1,"id":1,"x":nul}"#,
    ] {
        syntax(input);
    }
}

// ---- malformed JSON anywhere ----

#[test]
fn malformed_json_deep_inside_params_or_result_is_a_parse_error() {
    for (input, bad) in [
        (
            &br#"{"jsonrpc":"2.0","id":1,"method":"m","params":[[[{"a":[1,2,}]]]]}"#[..],
            "}]]]]}",
        ),
        (
            br#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":{"b":{"c":[1 2]}}}}"#,
            "2]",
        ),
        (
            br#"{"jsonrpc":"2.0","id":1,"method":"m","params":[1,[2,[3,[4,-]]]]}"#,
            "]]]]}",
        ),
        (
            br#"{"jsonrpc":"2.0","id":1,"result":{"a":[{"b":"c\u12G4"}]}}"#,
            "G4",
        ),
        (
            br#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","data":[{"x":[}]}}"#,
            "}]}}",
        ),
        (
            br#"{"jsonrpc":"2.0","id":1,"method":"m","params":["a" "b"]}"#,
            "\"b\"",
        ),
    ] {
        let e = syntax(input);
        assert_eq!(
            e.offset(),
            at(input, bad),
            "{}: {e}",
            String::from_utf8_lossy(input)
        );
    }
}

#[test]
fn trailing_bytes_are_a_parse_error() {
    let message = br#"{"jsonrpc":"2.0","method":"m"}"#;
    for tail in [
        &b" x"[..],
        b"{}",
        b",",
        b"]",
        b"\0",
        b"\x0c",
        b" \n {\"jsonrpc\":\"2.0\",\"method\":\"m\"}",
    ] {
        let mut input = message.to_vec();
        input.extend_from_slice(tail);
        let e = syntax(&input);
        assert_eq!(
            *e.kind(),
            ParseErrorKind::Syntax(SyntaxErrorKind::TrailingBytes),
            "{tail:?}"
        );
        let first_non_ws = tail.iter().position(|b| !b" \n".contains(b)).unwrap();
        assert_eq!(e.offset(), message.len() + first_non_ws, "{tail:?}");
    }
    // Surrounding JSON whitespace is fine.
    assert!(rpcwire::parse(b" \t\r\n{\"jsonrpc\":\"2.0\",\"method\":\"m\"} \t\r\n").is_ok());
    let e = syntax(b"[1] 2");
    assert_eq!(e.offset(), 4);
}

#[test]
fn not_json_at_all() {
    for input in [
        &b""[..],
        b"   ",
        b"{",
        b"[",
        b"\"",
        b"nul",
        b"{\"jsonrpc\"",
        b"\xef\xbb\xbf{}",
        b"'a'",
    ] {
        syntax(input);
    }
    assert_eq!(syntax(b"").offset(), 0);
    assert_eq!(syntax(b"   ").offset(), 3);
    // Valid JSON that is not an object or array is an invalid request.
    for input in [&b"1"[..], b"\"x\"", b"null", b"true", b" -0.5 "] {
        invalid(input, ParseErrorKind::NotAnObject);
    }
}

// ---- batches ----

#[test]
fn a_syntax_error_anywhere_in_a_batch_is_one_parse_error() {
    let good = r#"{"jsonrpc":"2.0","method":"m","id":1}"#;
    for bad in [
        r#"{"jsonrpc":"2.0","method":"m","id":1,}"#,
        r#"{"jsonrpc":"2.0","method":"m","params":[1,]}"#,
        r#"{"jsonrpc":"1.0","method":"m","params":[1,]}"#,
        r#"[1,]"#,
        r#"nul"#,
        r#""\ud800""#,
    ] {
        for input in [
            format!("[{bad}]"),
            format!("[{good},{bad}]"),
            format!("[{bad},{good}]"),
            format!("[{good},{good},{bad},{good}]"),
        ] {
            let e = syntax(input.as_bytes());
            assert!(e.offset() >= input.find(bad).unwrap(), "{input}: {e}");
        }
    }
    for input in [
        format!("[{good},]"),
        format!("[{good} {good}]"),
        format!("[{good}"),
        format!("[{good}]]"),
    ] {
        syntax(input.as_bytes());
    }
}

#[test]
fn batch_elements_fail_one_by_one_and_carry_their_ids() {
    let input = br#"[{"jsonrpc":"2.0","method":"ok","id":1},{"jsonrpc":"1.0","method":"m","id":"e"},5,{"jsonrpc":"2.0","method":"m","id":true},[],{"jsonrpc":"2.0","method":"n"}]"#;
    let batch = rpcwire::parse(input).unwrap().batch().unwrap();
    assert_eq!(batch.len(), 6);
    assert_eq!(batch.get(0).unwrap().unwrap().method(), Some("ok"));
    let e = batch.get(1).unwrap().unwrap_err();
    assert_eq!(*e.kind(), ParseErrorKind::BadVersion);
    assert_eq!(e.id(), Some(&Id::from("e")));
    assert_eq!(e.offset(), at(input, r#""1.0""#));
    let e = batch.get(2).unwrap().unwrap_err();
    assert_eq!(*e.kind(), ParseErrorKind::NotAnObject);
    assert_eq!(e.offset(), at(input, ",5,") + 1);
    let e = batch.get(3).unwrap().unwrap_err();
    assert_eq!(*e.kind(), ParseErrorKind::BadId);
    assert!(e.id().is_none());
    let e = batch.get(4).unwrap().unwrap_err();
    assert_eq!(*e.kind(), ParseErrorKind::NotAnObject);
    assert!(matches!(batch.get(5).unwrap().unwrap(), Message::Notification(_)));
    for element in batch.iter().filter_map(Result::err) {
        assert_eq!(element.code().code(), -32600);
        check_error_is_explained(input, element);
    }
    // An empty batch is -32600, also with whitespace inside.
    invalid(b"[]", ParseErrorKind::EmptyBatch);
    invalid(b" [ \n ] ", ParseErrorKind::EmptyBatch);
}

// ---- offsets and messages ----

#[test]
fn every_error_has_an_offset_and_a_message() {
    // (input, where the error is: the first occurrence of this text, or "$" for the end)
    let cases: &[(&[u8], &str)] = &[
        (b"{", "$"),
        (b"{\"jsonrpc\":\"2.0\",\"method\":\"m\"", "$"),
        (b"{\"jsonrpc\" \"2.0\"}", "\"2.0"),
        (b"{\"jsonrpc\":\"2.0\",\"method\":\"m\\x\"}", "\\x"),
        (b"{\"jsonrpc\":\"2.0\",\"method\":\"m\\u12\"}", "\"}"),
        (b"{\"jsonrpc\":\"2.0\",\"method\":\"\\udc00\"}", "\\udc00"),
        (b"{\"jsonrpc\":\"2.0\",\"method\":\"\x01\"}", "\x01"),
        (b"{\"jsonrpc\":\"2.0\",\"method\":\"\xc3\"}", "\u{fffd}"),
        (b"{\"jsonrpc\":\"2.0\",\"id\":1.e5,\"method\":\"m\"}", "e5"),
        (
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":[fals]}",
            "fals",
        ),
        (b"{\"jsonrpc\":\"2.0\",\"method\":\"m\"}x", "x"),
        (b"[1 2]", "2"),
        (b"{\"jsonrpc\":\"1\",\"method\":\"m\"}", "\"1\""),
        (b"{\"jsonrpc\":\"2.0\"}", "{"),
        (b"[]", "["),
    ];
    for &(input, place) in cases {
        let e = parse_err(input);
        let expected = match place {
            "$" => input.len(),
            // The byte that is not UTF-8: where the lossy view shows U+FFFD.
            "\u{fffd}" => input.iter().position(|&b| b >= 0x80).unwrap(),
            _ => at(input, place),
        };
        assert_eq!(e.offset(), expected, "{} -> {e}", String::from_utf8_lossy(input));
    }
}

// ---- limits ----

#[test]
fn max_size_is_checked_before_any_work() {
    let parser = Parser::new(Limits::default().with_max_size(32));
    let fits = br#"{"jsonrpc":"2.0","method":"abc"}"#;
    assert_eq!(fits.len(), 32);
    assert!(parser.parse(fits).is_ok());
    let too_big = br#"{"jsonrpc":"2.0","method":"abcd"}"#;
    let e = parser.parse(too_big).unwrap_err();
    assert_eq!(*e.kind(), ParseErrorKind::TooLarge { size: 33, limit: 32 });
    assert_eq!(e.code().code(), -32600);
    check_error_is_explained(too_big, &e);
    // Garbage that is too large is rejected for its size, without being read.
    let e = parser.parse(&[0xffu8; 1000]).unwrap_err();
    assert!(
        matches!(e.kind(), ParseErrorKind::TooLarge { size: 1000, .. }),
        "{e}"
    );
    // The default is 1 MiB.
    let mut big = br#"{"jsonrpc":"2.0","method":"m","params":[""#.to_vec();
    big.resize((1 << 20) - 3, b'a');
    big.extend_from_slice(b"\"]}");
    assert_eq!(big.len(), 1 << 20);
    assert!(rpcwire::parse(&big).is_ok());
    big.insert(1, b' ');
    assert!(matches!(
        rpcwire::parse(&big).unwrap_err().kind(),
        ParseErrorKind::TooLarge { .. }
    ));
}

#[test]
fn max_depth_counts_the_message_object_as_level_one() {
    let parser = Parser::new(Limits::default().with_max_depth(3));
    assert!(parser
        .parse(br#"{"jsonrpc":"2.0","method":"m","params":[[1]]}"#)
        .is_ok());
    let input = br#"{"jsonrpc":"2.0","method":"m","params":[[[1]]]}"#;
    let e = parser.parse(input).unwrap_err();
    assert_eq!(
        *e.kind(),
        ParseErrorKind::Syntax(SyntaxErrorKind::TooDeep { limit: 3 })
    );
    assert!(e.is_syntax());
    assert_eq!(e.offset(), at(input, "[1]"));
    // In a batch the array is a level too.
    assert!(parser
        .parse(br#"[{"jsonrpc":"2.0","method":"m","params":[1]}]"#)
        .is_ok());
    assert!(parser
        .parse(br#"[{"jsonrpc":"2.0","method":"m","params":[[1]]}]"#)
        .is_err());
    // Unknown members and error data count as well.
    assert!(parser
        .parse(br#"{"jsonrpc":"2.0","method":"m","x":[[[]]]}"#)
        .is_err());
    assert!(parser
        .parse(br#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","data":[1]}}"#)
        .is_ok());
    assert!(parser
        .parse(br#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","data":[[1]]}}"#)
        .is_err());
    // Default: 128.
    let nested = |levels: usize| {
        format!(
            r#"{{"jsonrpc":"2.0","method":"m","params":{}{}}}"#,
            "[".repeat(levels),
            "]".repeat(levels)
        )
    };
    assert!(rpcwire::parse(nested(127).as_bytes()).is_ok());
    assert_eq!(
        *rpcwire::parse(nested(128).as_bytes()).unwrap_err().kind(),
        ParseErrorKind::Syntax(SyntaxErrorKind::TooDeep { limit: 128 })
    );
}

#[test]
fn deep_nesting_never_overflows_the_stack() {
    let opens = "[".repeat(100_000);
    let e = syntax(opens.as_bytes());
    assert_eq!(
        *e.kind(),
        ParseErrorKind::Syntax(SyntaxErrorKind::TooDeep { limit: 128 })
    );
    assert_eq!(e.offset(), 128);
    let objects = "{\"a\":".repeat(100_000);
    let e = syntax(format!(r#"{{"jsonrpc":"2.0","method":"m","params":{objects}"#).as_bytes());
    assert!(matches!(
        e.kind(),
        ParseErrorKind::Syntax(SyntaxErrorKind::TooDeep { .. })
    ));

    // Without a depth limit the parser still walks 100,000 levels with its own stack, on a
    // thread with a small call stack.
    let handle = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(|| {
            let unlimited = Parser::new(Limits::default().with_max_depth(usize::MAX));
            let arrays = format!(
                r#"{{"jsonrpc":"2.0","method":"m","params":{}{}}}"#,
                "[".repeat(100_000),
                "]".repeat(100_000)
            );
            let parsed = unlimited.parse(arrays.as_bytes()).unwrap();
            let params_len = parsed.single().unwrap().method().map(str::len);
            let mixed = format!(
                r#"{{"jsonrpc":"2.0","method":"m","params":{}1{}}}"#,
                "{\"a\":[".repeat(50_000),
                "]}".repeat(50_000)
            );
            assert!(unlimited.parse(mixed.as_bytes()).is_ok());
            let unclosed = "[".repeat(100_000);
            let e = unlimited.parse(unclosed.as_bytes()).unwrap_err();
            assert_eq!(*e.kind(), ParseErrorKind::Syntax(SyntaxErrorKind::UnexpectedEnd));
            params_len
        })
        .unwrap();
    assert_eq!(handle.join().unwrap(), Some(1));
}

#[test]
fn max_batch_length() {
    let parser = Parser::new(Limits::default().with_max_batch_len(3));
    let element = r#"{"jsonrpc":"2.0","method":"m"}"#;
    let batch = |n: usize| format!("[{}]", vec![element; n].join(","));
    assert_eq!(
        parser.parse(batch(3).as_bytes()).unwrap().batch().unwrap().len(),
        3
    );
    let input = batch(4);
    let e = parser.parse(input.as_bytes()).unwrap_err();
    assert_eq!(*e.kind(), ParseErrorKind::BatchTooLong { limit: 3 });
    assert_eq!(e.code().code(), -32600);
    // Found at the fourth element, before reading it.
    assert_eq!(e.offset(), 1 + 3 * (element.len() + 1));
    check_error_is_explained(input.as_bytes(), &e);
    // Default: 1,000.
    assert!(rpcwire::parse(batch(1000).as_bytes()).is_ok());
    assert!(matches!(
        rpcwire::parse(batch(1001).as_bytes()).unwrap_err().kind(),
        ParseErrorKind::BatchTooLong { limit: 1000 }
    ));
}

// ---- strings ----

/// Whether an error's reason is the expected one.
type ReasonCheck = fn(&ParseErrorKind) -> bool;

#[test]
fn invalid_strings_are_rejected_wherever_they_are() {
    let bad_strings: [(&[u8], ReasonCheck); 10] = [
        (b"\"\\ud800\"", |r| {
            *r == ParseErrorKind::Syntax(SyntaxErrorKind::LoneSurrogate)
        }),
        (b"\"\\udc00\"", |r| {
            *r == ParseErrorKind::Syntax(SyntaxErrorKind::LoneSurrogate)
        }),
        (b"\"\\ud800\\u0041\"", |r| {
            *r == ParseErrorKind::Syntax(SyntaxErrorKind::LoneSurrogate)
        }),
        (b"\"\\ud800x\"", |r| {
            *r == ParseErrorKind::Syntax(SyntaxErrorKind::LoneSurrogate)
        }),
        (b"\"\\udc00\\ud800\"", |r| {
            *r == ParseErrorKind::Syntax(SyntaxErrorKind::LoneSurrogate)
        }),
        (b"\"\xff\"", |r| {
            *r == ParseErrorKind::Syntax(SyntaxErrorKind::InvalidUtf8)
        }),
        (b"\"\xc0\xaf\"", |r| {
            *r == ParseErrorKind::Syntax(SyntaxErrorKind::InvalidUtf8)
        }),
        (b"\"\xed\xa0\x80\"", |r| {
            *r == ParseErrorKind::Syntax(SyntaxErrorKind::InvalidUtf8)
        }),
        (b"\"a\x00b\"", |r| {
            *r == ParseErrorKind::Syntax(SyntaxErrorKind::ControlCharacter)
        }),
        (b"\"tab\there\"", |r| {
            *r == ParseErrorKind::Syntax(SyntaxErrorKind::ControlCharacter)
        }),
    ];
    let places: [(&[u8], &[u8]); 7] = [
        (b"{\"jsonrpc\":\"2.0\",\"method\":", b"}"),
        (b"{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"id\":", b"}"),
        (b"{\"jsonrpc\":\"2.0\",\"method\":\"m\",", b":1}"),
        (b"{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":[", b"]}"),
        (b"{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":{", b":1}}"),
        (b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"a\":[", b"]}}"),
        (
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":1,\"message\":",
            b"}}",
        ),
    ];
    for (string, reason_ok) in bad_strings {
        for (before, after) in places {
            let input = [before, string, after].concat();
            let e = syntax(&input);
            assert!(reason_ok(e.kind()), "{}: {e}", String::from_utf8_lossy(&input));
            assert!(e.offset() > before.len() && e.offset() < before.len() + string.len());
        }
    }
    // Valid pairs, all escapes and non-ASCII UTF-8 are fine.
    let m = parse_ok(
        "{\"jsonrpc\":\"2.0\",\"method\":\"\\ud83d\\ude00 \\\" \\\\ \\/ \\b \\f \\n \\r \\t é ✓ 😀 \u{7f}\"}"
            .as_bytes(),
    );
    assert_eq!(m.method(), Some("😀 \" \\ / \u{8} \u{c} \n \r \t é ✓ 😀 \u{7f}"));
}

#[test]
fn keys_are_compared_after_unescaping() {
    let m = parse_ok(br#"{"\u006asonrpc":"2.0","met\u0068od":"m","\u0069\u0064":5,"p\u0061rams":[1]}"#);
    let Message::Request(r) = m else { panic!("{m:?}") };
    assert_eq!(r.method(), "m");
    assert_eq!(r.id().as_u64(), Some(5));
    assert_eq!(r.params().unwrap().as_str(), "[1]");
    let m = parse_ok(br#"{"jsonrpc":"2.0","id":1,"r\u0065sult":true}"#);
    assert!(matches!(m, Message::Response(_)));
    let m = parse_ok(
        br#"{"jsonrpc":"2.0","id":1,"\u0065rror":{"\u0063ode":1,"m\u0065ssage":"x","\u0064ata":2}}"#,
    );
    let Message::Response(r) = m else { panic!() };
    assert_eq!(r.error_object().unwrap().data().unwrap().get(), "2");
    // Params keys too, through `get`.
    let r = request(br#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"n\u0061me":"v"}}"#);
    assert_eq!(r.params().unwrap().get("name").unwrap().get(), "\"v\"");
}

#[test]
fn escaped_method_and_id_come_back_unescaped() {
    let input = br#"{"jsonrpc":"2.0","id":"a\u0041\"\n","method":"sub\u0074ract\/x"}"#;
    let r = request(input);
    assert_eq!(r.method(), "subtract/x");
    assert_eq!(r.id().as_str().as_deref(), Some("aA\"\n"));
    assert_eq!(r.id().raw(), r#"a\u0041\"\n"#);
    assert_eq!(r.id().to_string(), r#""a\u0041\"\n""#);
    assert_eq!(r.id(), &Id::from("aA\"\n"));
}

// ---- owned frames and the reusing parser ----

/// A parse result flattened into comparable parts: whether it was a batch, and the
/// messages/element errors in order.
fn flatten(
    parsed: Result<Parsed<'_>, ParseError>,
) -> Result<(bool, Vec<Result<Message<'static>, ParseError>>), ParseError> {
    Ok(match parsed? {
        Parsed::Single(m) => (false, vec![Ok(m.into_owned())]),
        Parsed::Batch(b) => (
            true,
            b.iter()
                .map(|e| e.map(Message::into_owned).map_err(Clone::clone))
                .collect(),
        ),
    })
}

const SAMPLES: &[&str] = &[
    r#"{"jsonrpc":"2.0","id":42,"method":"eth_getBalance","params":["0x407d73d8a49eeb85d32cf465507dd71d507100c1","latest"]}"#,
    r#"{"jsonrpc":"2.0","method":"n\u00e9","params":{"a":[1,{"b":null}]}}"#,
    r#"{"jsonrpc":"2.0","id":"x","result":{"a":1}}"#,
    r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":[1]}}"#,
    r#"[{"jsonrpc":"2.0","method":"a"},1,{"jsonrpc":"1.0","id":7,"method":"b"},{"jsonrpc":"2.0","id":1,"result":[]}]"#,
    r#"[1,2,3]"#,
    r#"[]"#,
    r#"{"jsonrpc":"2.0","method":"m","params":[1,]}"#,
    r#"{"jsonrpc":"2.0","method":"m","id":true}"#,
    r#"7"#,
];

#[test]
fn parsed_frame_is_send_sync_and_views_like_parse() {
    fn send_sync_static<T: Send + Sync + 'static>(_: &T) {}
    for sample in SAMPLES {
        let direct = flatten(rpcwire::parse(sample.as_bytes()));
        match ParsedFrame::parse(Bytes::from_static(sample.as_bytes())) {
            Ok(frame) => {
                send_sync_static(&frame);
                assert_eq!(flatten(Ok(frame.view())), direct, "{sample}");
                assert_eq!(&frame.bytes()[..], sample.as_bytes());
                // The view survives a move to another thread.
                let moved = std::thread::spawn(move || flatten(Ok(frame.view())))
                    .join()
                    .unwrap();
                assert_eq!(moved, direct, "{sample}");
            }
            Err(e) => assert_eq!(Err(e), direct, "{sample}"),
        }
        // With explicit limits, too.
        let parser = Parser::new(Limits::default().with_max_batch_len(2));
        let frame = parser.parse_frame(Bytes::copy_from_slice(sample.as_bytes()));
        assert_eq!(
            frame.map(|f| flatten(Ok(f.view()))).and_then(|r| r),
            flatten(parser.parse(sample.as_bytes()))
        );
    }
    // Views borrow the frame's own bytes, not a copy.
    let frame = ParsedFrame::parse(Bytes::from_static(SAMPLES[0].as_bytes())).unwrap();
    let view = frame.view().single().unwrap();
    let method = view.method().unwrap();
    assert!(frame.bytes().as_ptr_range().contains(&method.as_ptr()));
    assert_eq!(frame.into_bytes(), Bytes::from_static(SAMPLES[0].as_bytes()));
}

#[test]
fn parse_reusing_matches_parse() {
    let parser = Parser::default();
    let mut scratch = BatchScratch::default();
    // Twice over, so that the scratch is reused with leftovers from earlier batches.
    for sample in SAMPLES.iter().chain(SAMPLES) {
        let expected = flatten(parser.parse(sample.as_bytes()));
        let reused = flatten(parser.parse_reusing(sample.as_bytes(), &mut scratch));
        assert_eq!(reused, expected, "{sample}");
    }
    // A smaller batch after a bigger one shows only its own elements.
    let _ = parser.parse_reusing(b"[1,2,3,4,5]", &mut scratch).unwrap();
    let parsed = parser.parse_reusing(b"[1]", &mut scratch).unwrap();
    assert_eq!(parsed.batch().unwrap().len(), 1);
}

#[test]
fn only_an_error_response_may_have_a_null_id() {
    for input in [
        &br#"{"jsonrpc":"2.0","id":null,"result":1}"#[..], // the canonical layout
        br#"{"id":null,"jsonrpc":"2.0","result":{"a":1}}"#,
        br#"{ "jsonrpc": "2.0", "result": [], "id": null }"#,
    ] {
        let e = invalid(input, ParseErrorKind::NullIdSuccess);
        assert!(e.to_string().contains("null"), "{e}");
    }
    // In a batch, that element alone is refused.
    let batch =
        rpcwire::parse(br#"[{"jsonrpc":"2.0","id":null,"result":1},{"jsonrpc":"2.0","id":2,"result":1}]"#)
            .unwrap()
            .batch()
            .unwrap();
    assert_eq!(
        batch.get(0).unwrap().unwrap_err().kind(),
        &ParseErrorKind::NullIdSuccess
    );
    assert!(batch.get(1).unwrap().is_ok());
    // An error response with a null id (the answer to a request whose id could not be read).
    let answer = parse_ok(br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#);
    assert!(matches!(answer, Message::Response(ref r) if r.id().is_null() && !r.is_success()));
}

/// serde_json's private tokens are ordinary keys in JSON: valid, kept byte for byte (the
/// differential fuzz target's finding: serde_json itself rejects this input).
#[test]
fn serde_json_private_tokens_are_ordinary_keys() {
    let input = br#"{"jsonrpc":"2.0","id":1,"method":"m","params":[{"$serde_json::private::RawValue":"0sseal:1ur}"}]}"#;
    let Message::Request(request) = parse_ok(input) else {
        panic!("not a request");
    };
    assert_eq!(
        request.params().unwrap().raw().get(),
        r#"[{"$serde_json::private::RawValue":"0sseal:1ur}"}]"#
    );
    let number = br#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"$serde_json::private::Number":"x"}}"#;
    assert!(matches!(parse_ok(number), Message::Request(_)));
}
