//! The Examples section (7) of the JSON-RPC 2.0 specification: `-->` input and `<--`
//! output (`None`: no answer), for the Router tests and the example server's tests.

use serde_json::Value;

/// Removes `error.data` from an answer (or each answer of a batch): the specification's
/// examples show no `data`, which is optional; rpcwire puts the reason there, and the
/// tests check it separately.
pub fn strip_error_data(value: &mut Value) {
    match value {
        Value::Array(elements) => elements.iter_mut().for_each(strip_error_data),
        Value::Object(members) => {
            if let Some(Value::Object(error)) = members.get_mut("error") {
                error.remove("data");
            }
        }
        _ => {}
    }
}

/// Every example of section 7 of the specification, `-->` input and `<--` output.
pub const SPEC_EXAMPLES: &[(&str, &str, Option<&str>)] = &[
    (
        "positional params",
        r#"{"jsonrpc": "2.0", "method": "subtract", "params": [42, 23], "id": 1}"#,
        Some(r#"{"jsonrpc": "2.0", "result": 19, "id": 1}"#),
    ),
    (
        "positional params, reversed",
        r#"{"jsonrpc": "2.0", "method": "subtract", "params": [23, 42], "id": 2}"#,
        Some(r#"{"jsonrpc": "2.0", "result": -19, "id": 2}"#),
    ),
    (
        "named params",
        r#"{"jsonrpc": "2.0", "method": "subtract", "params": {"subtrahend": 23, "minuend": 42}, "id": 3}"#,
        Some(r#"{"jsonrpc": "2.0", "result": 19, "id": 3}"#),
    ),
    (
        "named params, other order",
        r#"{"jsonrpc": "2.0", "method": "subtract", "params": {"minuend": 42, "subtrahend": 23}, "id": 4}"#,
        Some(r#"{"jsonrpc": "2.0", "result": 19, "id": 4}"#),
    ),
    (
        "notification",
        r#"{"jsonrpc": "2.0", "method": "update", "params": [1,2,3,4,5]}"#,
        None,
    ),
    (
        "notification without params",
        r#"{"jsonrpc": "2.0", "method": "foobar"}"#,
        None,
    ),
    (
        "non-existent method",
        r#"{"jsonrpc": "2.0", "method": "foobar", "id": "1"}"#,
        Some(r#"{"jsonrpc": "2.0", "error": {"code": -32601, "message": "Method not found"}, "id": "1"}"#),
    ),
    (
        "invalid JSON",
        r#"{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]"#,
        Some(r#"{"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}, "id": null}"#),
    ),
    (
        "invalid Request object",
        r#"{"jsonrpc": "2.0", "method": 1, "params": "bar"}"#,
        Some(r#"{"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request"}, "id": null}"#),
    ),
    (
        "batch, invalid JSON",
        r#"[
  {"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},
  {"jsonrpc": "2.0", "method"
]"#,
        Some(r#"{"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}, "id": null}"#),
    ),
    (
        "empty array",
        r#"[]"#,
        Some(r#"{"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request"}, "id": null}"#),
    ),
    (
        "invalid batch of one",
        r#"[1]"#,
        Some(r#"[{"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request"}, "id": null}]"#),
    ),
    (
        "invalid batch of three",
        r#"[1,2,3]"#,
        Some(
            r#"[
  {"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request"}, "id": null},
  {"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request"}, "id": null},
  {"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request"}, "id": null}
]"#,
        ),
    ),
    (
        "mixed batch",
        r#"[
  {"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},
  {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]},
  {"jsonrpc": "2.0", "method": "subtract", "params": [42,23], "id": "2"},
  {"foo": "boo"},
  {"jsonrpc": "2.0", "method": "foo.get", "params": {"name": "myself"}, "id": "5"},
  {"jsonrpc": "2.0", "method": "get_data", "id": "9"}
]"#,
        Some(
            r#"[
  {"jsonrpc": "2.0", "result": 7, "id": "1"},
  {"jsonrpc": "2.0", "result": 19, "id": "2"},
  {"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request"}, "id": null},
  {"jsonrpc": "2.0", "error": {"code": -32601, "message": "Method not found"}, "id": "5"},
  {"jsonrpc": "2.0", "result": ["hello", 5], "id": "9"}
]"#,
        ),
    ),
    (
        "batch of only notifications",
        r#"[
  {"jsonrpc": "2.0", "method": "notify_sum", "params": [1,2,4]},
  {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]}
]"#,
        None,
    ),
];
