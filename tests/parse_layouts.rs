//! The same message in every layout reads the same (issue 16): the members in any order,
//! any JSON whitespace between them, pretty-printed — whichever path of the parser takes it
//! (canonical, any-order, general), the message is the one the canonical text gives.
//!
//! Real messages from `../shared/corpus/ethereum-execution-apis` re-laid-out three ways, and
//! a property test over permutations and whitespace.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use rpcwire::{Message, Parsed};
use serde_json::value::RawValue;
use serde_json::Value;

const CORPUS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/corpus/ethereum-execution-apis"
);

/// What a message says, compared as values: kind, id text, method, and the params, result
/// or error as serde_json reads them.
fn meaning(message: &Message<'_>) -> (String, String, String, Value) {
    let json = |text: &str| serde_json::from_str::<Value>(text).unwrap();
    match message {
        Message::Request(r) => (
            "request".into(),
            r.id().to_string(),
            r.method().to_owned(),
            r.params().map_or(Value::Null, |p| json(p.raw().get())),
        ),
        Message::Notification(n) => (
            "notification".into(),
            String::new(),
            n.method().to_owned(),
            n.params().map_or(Value::Null, |p| json(p.raw().get())),
        ),
        Message::Response(r) => match (r.result(), r.error_object()) {
            (Some(result), _) => (
                "success".into(),
                r.id().to_string(),
                String::new(),
                json(result.get()),
            ),
            (None, Some(error)) => (
                "failure".into(),
                r.id().to_string(),
                error.message().to_owned(),
                serde_json::json!([error.code().code(), error.data().map(|d| json(d.get()))]),
            ),
            (None, None) => unreachable!("a response has a result or an error"),
        },
    }
}

fn single(text: &str) -> Message<'_> {
    match rpcwire::parse(text.as_bytes()) {
        Ok(Parsed::Single(message)) => message,
        Ok(Parsed::Batch(_)) => panic!("a batch: {text}"),
        Err(e) => panic!("{e}: {text}"),
    }
}

/// `members` written with `open`, `colon`, `comma` and `close` around them.
fn layout(members: &[(&str, &str)], open: &str, colon: &str, comma: &str, close: &str) -> String {
    let body: Vec<String> = members
        .iter()
        .map(|(name, value)| format!("{}{colon}{value}", serde_json::to_string(name).unwrap()))
        .collect();
    format!("{{{open}{}{close}}}", body.join(comma))
}

fn io_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            io_files(&path, out);
        } else if path.extension().is_some_and(|ext| ext == "io") {
            out.push(path);
        }
    }
}

#[test]
fn corpus_messages_read_the_same_in_every_layout() {
    if !Path::new(CORPUS).is_dir() {
        eprintln!("SKIPPING: the Ethereum corpus is not at {CORPUS}");
        return;
    }
    let mut files = Vec::new();
    io_files(Path::new(CORPUS), &mut files);
    let mut checked = 0;
    for file in files {
        for line in fs::read_to_string(&file).unwrap().lines() {
            let Some(text) = line.strip_prefix(">>").or_else(|| line.strip_prefix("<<")) else {
                continue;
            };
            let text = text.trim();
            if text.starts_with('[') {
                continue;
            }
            let expected = meaning(&single(text));
            // The top-level members as written (serde_json keeps each value's raw text).
            let members: BTreeMap<String, Box<RawValue>> = serde_json::from_str(text).unwrap();
            let members: Vec<(&str, &str)> = members.iter().map(|(k, v)| (k.as_str(), v.get())).collect();
            let reversed: Vec<(&str, &str)> = members.iter().rev().copied().collect();
            let pretty = serde_json::to_string_pretty(&serde_json::from_str::<Value>(text).unwrap()).unwrap();
            for other in [
                layout(&members, "", ":", ",", ""),
                layout(&reversed, "", ":", ",", ""),
                layout(&members, "", ": ", ", ", ""),
                layout(&reversed, "\n  ", ": ", ",\n  ", "\n"),
                pretty,
            ] {
                assert_eq!(meaning(&single(&other)), expected, "{}: {other}", file.display());
                checked += 1;
            }
        }
    }
    assert!(checked > 1000, "only {checked} layouts checked");
}

/// Whitespace that may go between tokens.
fn whitespace() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "",
        "",
        " ",
        "  ",
        "\n",
        "\n    ",
        "\t",
        "\r\n",
        "          \n  ",
    ])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Any order of the members and any whitespace around every token: the message the
    /// canonical text gives.
    #[test]
    fn any_order_and_whitespace_read_as_the_canonical_text(
        template in 0usize..5,
        order in Just((0..4usize).collect::<Vec<_>>()).prop_shuffle(),
        spaces in prop::collection::vec(whitespace(), 20),
    ) {
        let templates: [&[(&str, &str)]; 5] = [
            &[("jsonrpc", r#""2.0""#), ("id", "42"), ("method", r#""eth_getBalance""#), ("params", r#"["0x407d73d8a49eeb85d32cf465507dd71d507100c1","latest"]"#)],
            &[("jsonrpc", r#""2.0""#), ("id", r#""a\"b""#), ("method", r#""m""#), ("params", r#"{"x":[1,{"y":null}],"z":-0.5e3}"#)],
            &[("jsonrpc", r#""2.0""#), ("id", "null"), ("method", r#""m""#), ("params", "[ 1 , true , \"s\" ]")],
            &[("jsonrpc", r#""2.0""#), ("id", "7"), ("result", r#"{"a":[true,false,null]}"#)],
            &[("jsonrpc", r#""2.0""#), ("id", "1.5e3"), ("error", r#"{"code":-32000,"message":"m","data":[1]}"#)],
        ];
        let members = templates[template];
        let canonical = layout(members, "", ":", ",", "");
        let expected = meaning(&single(&canonical));
        let mut text = format!("{}{{{}", spaces[0], spaces[1]);
        for (i, &at) in order.iter().filter(|&&at| at < members.len()).enumerate() {
            let (name, value) = members[at];
            if i > 0 {
                text.push_str(&format!(",{}", spaces[2 + 4 * i % 16]));
            }
            text.push_str(&format!(
                "\"{name}\"{}:{}{value}{}",
                spaces[3 + i], spaces[4 + 2 * i], spaces[5 + 3 * i]
            ));
        }
        text.push_str(&format!("}}{}", spaces[19]));
        prop_assert_eq!(meaning(&single(&text)), expected, "{}", text);
    }
}
