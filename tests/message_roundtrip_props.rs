//! Property tests:
//!
//! - messages built from the owned types and serialized by serde_json parse back equal;
//! - the same messages re-emitted by a small printer of our own, with random whitespace,
//!   random member order, random (valid) escapes in every string and key, `"jsonrpc"` and
//!   `"params":null` variants and unknown members, parse back equal;
//! - arbitrary bytes, and random mutations of valid messages, never panic, and whatever
//!   rpcwire accepts serde_json accepts too;
//! - on JSON-ish text used as params, and on single mutations of valid messages, rpcwire
//!   and serde_json agree on whether the text is valid JSON.

use std::fmt::Write as _;

use proptest::prelude::*;
use proptest::test_runner::Config;
use rpcwire::{
    ErrorObject, Id, Message, Notification, ParseError, Parsed, ParsedFrame, Parser, RawJson, Request,
    Response,
};
use serde_json::{Number, Value};

// ---------------------------------------------------------------------------------------
// Generators
// ---------------------------------------------------------------------------------------

/// Strings of every kind: plain names, anything Unicode, and characters that need escapes.
fn arb_string() -> impl Strategy<Value = String> {
    let tricky = prop::sample::select(vec![
        '"', '\\', '/', '\n', '\r', '\t', '\u{0}', '\u{8}', '\u{c}', '\u{1f}', '\u{7f}', 'é', '✓', '😀',
        '\u{2028}', '\u{fffd}', 'a', ' ',
    ]);
    prop_oneof![
        "[a-zA-Z_./]{0,12}",
        any::<String>(),
        prop::collection::vec(tricky, 0..10).prop_map(|chars| chars.into_iter().collect()),
    ]
}

fn arb_method() -> impl Strategy<Value = String> {
    arb_string().prop_filter("a method is not empty", |s| !s.is_empty())
}

fn arb_number() -> impl Strategy<Value = Number> {
    prop_oneof![
        any::<i64>().prop_map(Number::from),
        any::<u64>().prop_map(Number::from),
        any::<f64>().prop_filter_map("finite", Number::from_f64),
        (-1000i64..1000).prop_map(Number::from),
    ]
}

fn arb_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        arb_number().prop_map(Value::Number),
        arb_string().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 40, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((arb_string(), inner), 0..6)
                .prop_map(|members| Value::Object(members.into_iter().collect())),
        ]
    })
}

/// Params: absent, an array or an object.
fn arb_params() -> impl Strategy<Value = Option<Value>> {
    prop_oneof![
        1 => Just(None),
        2 => prop::collection::vec(arb_value(), 0..5).prop_map(|items| Some(Value::Array(items))),
        2 => prop::collection::vec((arb_string(), arb_value()), 0..5)
            .prop_map(|members| Some(Value::Object(members.into_iter().collect()))),
    ]
}

#[derive(Clone, Debug)]
enum IdSpec {
    Null,
    /// JSON number text, kept exactly.
    Number(String),
    String(String),
}

impl IdSpec {
    fn id(&self) -> Id<'static> {
        match self {
            IdSpec::Null => Id::null(),
            IdSpec::Number(text) => Id::number(text.clone()).expect("generated number text is JSON"),
            IdSpec::String(value) => Id::string(value.clone()),
        }
    }
}

/// Ids of every kind. `wide` allows exponents beyond the range of f64 (`1e9999`).
fn arb_id(wide: bool) -> impl Strategy<Value = IdSpec> {
    let number_text = if wide {
        "-?(0|[1-9][0-9]{0,30})(\\.[0-9]{1,10})?([eE][+-]?[0-9]{1,4})?"
    } else {
        "-?(0|[1-9][0-9]{0,20})(\\.[0-9]{1,8})?([eE][+-]?[0-9]{1,2})?"
    };
    prop_oneof![
        Just(IdSpec::Null),
        any::<u64>().prop_map(|n| IdSpec::Number(n.to_string())),
        any::<i64>().prop_map(|n| IdSpec::Number(n.to_string())),
        Just(IdSpec::Number("18446744073709551616".into())),
        number_text.prop_map(IdSpec::Number),
        arb_string().prop_map(IdSpec::String),
    ]
}

/// A message described by plain values, so that it can be built with the owned types and
/// also printed by hand.
#[derive(Clone, Debug)]
enum Spec {
    Request {
        id: IdSpec,
        method: String,
        params: Option<Value>,
    },
    Notification {
        method: String,
        params: Option<Value>,
    },
    Success {
        id: IdSpec,
        result: Value,
    },
    Failure {
        id: IdSpec,
        code: i64,
        message: String,
        data: Option<Value>,
    },
}

fn arb_spec(wide: bool) -> impl Strategy<Value = Spec> {
    prop_oneof![
        (arb_id(wide), arb_method(), arb_params()).prop_map(|(id, method, params)| Spec::Request {
            id,
            method,
            params
        }),
        (arb_method(), arb_params()).prop_map(|(method, params)| Spec::Notification { method, params }),
        // Only an error response may have a null id.
        (
            arb_id(wide).prop_filter("a success has a non-null id", |id| !matches!(id, IdSpec::Null)),
            arb_value()
        )
            .prop_map(|(id, result)| Spec::Success { id, result }),
        (
            arb_id(wide),
            prop_oneof![any::<i64>(), -32768i64..-32000],
            arb_string(),
            prop::option::of(arb_value())
        )
            .prop_map(|(id, code, message, data)| Spec::Failure {
                id,
                code,
                message,
                data
            }),
    ]
}

/// The message built with the constructors.
fn build(spec: &Spec) -> Message<'static> {
    match spec.clone() {
        Spec::Request { id, method, params } => {
            let request = Request::new(id.id(), method);
            match params {
                Some(params) => request.with_params(&params).unwrap().into(),
                None => request.into(),
            }
        }
        Spec::Notification { method, params } => {
            let notification = Notification::new(method);
            match params {
                Some(params) => notification.with_params(&params).unwrap().into(),
                None => notification.into(),
            }
        }
        Spec::Success { id, result } => Response::success(id.id(), &result).unwrap().into(),
        Spec::Failure {
            id,
            code,
            message,
            data,
        } => {
            let error = ErrorObject::new(code, message);
            let error = match data {
                Some(data) => error.with_data(&data).unwrap(),
                None => error,
            };
            Response::error(id.id(), error).into()
        }
    }
}

// ---------------------------------------------------------------------------------------
// A printer with random whitespace, member order and escapes
// ---------------------------------------------------------------------------------------

/// SplitMix64: the printer's source of random choices, seeded by proptest.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// `true` one time in `n`.
    fn one_in(&mut self, n: u64) -> bool {
        self.next() % n == 0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            items.swap(i, self.below(i + 1));
        }
    }
}

struct Printer {
    rng: Rng,
    out: String,
}

impl Printer {
    fn new(seed: u64) -> Printer {
        Printer {
            rng: Rng(seed),
            out: String::new(),
        }
    }

    /// JSON whitespace: nothing half of the time, else up to four of the four kinds.
    fn ws(&mut self) {
        if self.rng.one_in(2) {
            return;
        }
        for _ in 0..=self.rng.below(4) {
            self.out.push([' ', '\t', '\n', '\r'][self.rng.below(4)]);
        }
    }

    fn hex4(&mut self, unit: u32) {
        if self.rng.one_in(2) {
            write!(self.out, "\\u{unit:04x}").unwrap();
        } else {
            write!(self.out, "\\u{unit:04X}").unwrap();
        }
    }

    /// A JSON string for `value`, escaping what must be escaped (in one of the valid ways)
    /// and sometimes what need not be.
    fn string(&mut self, value: &str) {
        self.out.push('"');
        for c in value.chars() {
            let short = match c {
                '"' => Some("\\\""),
                '\\' => Some("\\\\"),
                '\n' => Some("\\n"),
                '\r' => Some("\\r"),
                '\t' => Some("\\t"),
                '\u{8}' => Some("\\b"),
                '\u{c}' => Some("\\f"),
                '/' => Some("\\/"),
                _ => None,
            };
            let must = c < ' ' || c == '"' || c == '\\';
            if must || self.rng.one_in(6) {
                match short {
                    Some(escape) if self.rng.one_in(2) || c >= ' ' => self.out.push_str(escape),
                    _ => {
                        let mut units = [0u16; 2];
                        for &unit in c.encode_utf16(&mut units).iter() {
                            self.hex4(u32::from(unit));
                        }
                    }
                }
            } else {
                self.out.push(c);
            }
        }
        self.out.push('"');
    }

    fn value(&mut self, value: &Value) {
        match value {
            Value::Null => self.out.push_str("null"),
            Value::Bool(b) => self.out.push_str(if *b { "true" } else { "false" }),
            Value::Number(n) => write!(self.out, "{n}").unwrap(),
            Value::String(s) => self.string(s),
            Value::Array(items) => {
                self.out.push('[');
                self.ws();
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        self.out.push(',');
                        self.ws();
                    }
                    self.value(item);
                    self.ws();
                }
                self.out.push(']');
            }
            Value::Object(map) => {
                let mut members: Vec<(&String, &Value)> = map.iter().collect();
                self.rng.shuffle(&mut members);
                self.out.push('{');
                self.ws();
                for (i, (key, item)) in members.into_iter().enumerate() {
                    if i > 0 {
                        self.out.push(',');
                        self.ws();
                    }
                    self.string(key);
                    self.ws();
                    self.out.push(':');
                    self.ws();
                    self.value(item);
                    self.ws();
                }
                self.out.push('}');
            }
        }
    }

    /// Prints `value` on its own and returns its text (no surrounding whitespace).
    fn value_text(&mut self, value: &Value) -> String {
        let mark = self.out.len();
        self.value(value);
        let text = self.out[mark..].to_owned();
        self.out.truncate(mark);
        text
    }

    fn id_text(&mut self, id: &IdSpec) -> String {
        match id {
            IdSpec::Null => "null".to_owned(),
            IdSpec::Number(text) => text.clone(),
            IdSpec::String(value) => self.value_text(&Value::String(value.clone())),
        }
    }

    /// The message as text, and the message rpcwire must read from it.
    fn message(mut self, spec: &Spec, extra: Option<&Value>) -> (String, Message<'static>) {
        let version = ["\"2.0\"", "\"2\\u002e0\"", "\"\\u0032.0\"", "\"2.\\u0030\""][self.rng.below(4)];
        let mut members: Vec<(&str, String)> = vec![("jsonrpc", version.to_owned())];
        let expected: Message<'static> = match spec {
            Spec::Request { id, method, params } => {
                members.push(("id", self.id_text(id)));
                let params = self.call_members(&mut members, method, params.as_ref());
                let request = Request::new(id.id(), method.clone());
                match params {
                    Some(p) => request.with_raw_params(p).unwrap().into(),
                    None => request.into(),
                }
            }
            Spec::Notification { method, params } => {
                let params = self.call_members(&mut members, method, params.as_ref());
                let notification = Notification::new(method.clone());
                match params {
                    Some(p) => notification.with_raw_params(p).unwrap().into(),
                    None => notification.into(),
                }
            }
            Spec::Success { id, result } => {
                members.push(("id", self.id_text(id)));
                let text = self.value_text(result);
                members.push(("result", text.clone()));
                Response::success_raw(id.id(), RawJson::new(text).unwrap())
                    .unwrap()
                    .into()
            }
            Spec::Failure {
                id,
                code,
                message,
                data,
            } => {
                members.push(("id", self.id_text(id)));
                let mut error_members = vec![
                    ("code", code.to_string()),
                    ("message", self.value_text(&Value::String(message.clone()))),
                ];
                let mut error = ErrorObject::new(*code, message.clone());
                if let Some(data) = data {
                    let text = self.value_text(data);
                    error_members.push(("data", text.clone()));
                    error = error.with_raw_data(RawJson::new(text).unwrap());
                }
                let error_text = self.object(error_members);
                members.push(("error", error_text));
                Response::error(id.id(), error).into()
            }
        };
        if let Some(extra) = extra {
            let text = self.value_text(extra);
            members.push(("x-extra", text));
        }
        self.ws();
        let object = self.object(members);
        self.out.push_str(&object);
        self.ws();
        (self.out, expected)
    }

    /// Prints a call's method and params members; returns the params rpcwire must find.
    fn call_members(
        &mut self,
        members: &mut Vec<(&str, String)>,
        method: &str,
        params: Option<&Value>,
    ) -> Option<RawJson<'static>> {
        members.push(("method", self.value_text(&Value::String(method.to_owned()))));
        match params {
            Some(params) => {
                let text = self.value_text(params);
                members.push(("params", text.clone()));
                Some(RawJson::new(text).unwrap())
            }
            None => {
                if self.rng.one_in(3) {
                    members.push(("params", "null".to_owned()));
                }
                None
            }
        }
    }

    /// An object of already printed members, in random order, keys randomly escaped.
    fn object(&mut self, mut members: Vec<(&str, String)>) -> String {
        self.rng.shuffle(&mut members);
        let mark = self.out.len();
        self.out.push('{');
        self.ws();
        for (i, (key, value)) in members.into_iter().enumerate() {
            if i > 0 {
                self.out.push(',');
                self.ws();
            }
            self.string(key);
            self.ws();
            self.out.push(':');
            self.ws();
            self.out.push_str(&value);
            self.ws();
        }
        self.out.push('}');
        let text = self.out[mark..].to_owned();
        self.out.truncate(mark);
        text
    }
}

// ---------------------------------------------------------------------------------------
// Oracles and helpers
// ---------------------------------------------------------------------------------------

fn parse_single(text: &[u8]) -> Result<Message<'_>, String> {
    match rpcwire::parse(text) {
        Ok(Parsed::Single(message)) => Ok(message),
        Ok(Parsed::Batch(_)) => Err("a batch".into()),
        Err(e) => Err(e.to_string()),
    }
}

/// serde_json's verdict on whether `bytes` is one valid JSON text. `Value` checks
/// everything (UTF-8, surrogates, control characters) but refuses numbers beyond f64; such
/// a refusal is not a syntax error, so then the text is checked again with `IgnoredAny`,
/// which ignores number ranges, and for UTF-8. That second check does not see lone
/// surrogate escapes, so after an out-of-range number the oracle is lenient: it is used
/// as an exact oracle only where numbers stay in range or only one thing can be wrong,
/// and otherwise only as "whatever rpcwire accepts, serde_json accepts".
fn serde_json_accepts(bytes: &[u8]) -> bool {
    match serde_json::from_slice::<Value>(bytes) {
        Ok(_) => true,
        Err(e) if e.to_string().starts_with("number out of range") => {
            std::str::from_utf8(bytes).is_ok()
                && serde_json::from_slice::<serde::de::IgnoredAny>(bytes).is_ok()
        }
        Err(_) => false,
    }
}

/// rpcwire's verdict: valid JSON unless the error is a syntax error.
fn rpcwire_accepts(result: &Result<Parsed<'_>, ParseError>) -> bool {
    match result {
        Ok(_) => true,
        Err(e) => !e.is_syntax(),
    }
}

/// Reads everything a parse result offers, so that the views run on odd inputs too.
fn touch(result: &Result<Parsed<'_>, ParseError>) -> usize {
    let visit = |message: &Message<'_>| -> usize {
        let mut n = 0;
        if let Some(id) = message.id() {
            n += id.raw().len() + id.as_str().map_or(0, |s| s.len()) + usize::from(id.as_u64().is_some());
            n += id.to_string().len();
        }
        n += message.method().map_or(0, str::len);
        let params = match message {
            Message::Request(r) => r.params(),
            Message::Notification(n) => n.params(),
            Message::Response(r) => {
                n += r.result().map_or(0, |v| v.get().len());
                if let Some(e) = r.error_object() {
                    n += e.to_string().len();
                }
                None
            }
        };
        if let Some(p) = params {
            n += p.len() + p.iter().count() + p.members().count();
            n += p.get("a").map_or(0, |v| v.get().len()) + p.at(0).map_or(0, |v| v.get().len());
            let _ = p.decode::<serde::de::IgnoredAny>();
        }
        n + serde_json::to_string(message).map_or(0, |s| s.len())
    };
    match result {
        Ok(Parsed::Single(message)) => visit(message),
        Ok(Parsed::Batch(batch)) => batch.iter().map(|m| m.map_or(1, |m| visit(&m))).sum(),
        Err(e) => e.to_string().len() + rpcwire::ErrorObject::from(e).to_string().len(),
    }
}

/// An error's code, message and data.
type ErrorParts = (i64, String, Option<Value>);

/// A message's params, result and error as serde_json values.
fn json_parts(message: &Message<'_>) -> (Option<Value>, Option<Value>, Option<ErrorParts>) {
    let decode = |raw: &RawJson<'_>| raw.decode::<Value>().unwrap();
    match message {
        Message::Request(r) => (r.raw_params().map(decode), None, None),
        Message::Notification(n) => (n.raw_params().map(decode), None, None),
        Message::Response(r) => (
            None,
            r.result().map(decode),
            r.error_object()
                .map(|e| (e.code().code(), e.message().to_owned(), e.data().map(decode))),
        ),
    }
}

#[derive(Clone, Debug)]
enum Mutation {
    Replace(usize, u8),
    Insert(usize, u8),
    Delete(usize),
    InsertToken(usize, &'static str),
    Duplicate(usize, usize),
}

fn arb_mutation() -> impl Strategy<Value = Mutation> {
    let interesting = prop::sample::select(vec![
        b'"', b'\\', b'{', b'}', b'[', b']', b',', b':', b'0', b'-', b'.', b'e', b' ', b'\0', 0x1f, 0x7f,
        0x80, 0xc3, 0xff,
    ]);
    let token = prop::sample::select(vec![
        "\\u",
        "\\ud800",
        "\\udc00",
        "\\u00e9",
        "1e999",
        "null",
        "tru",
        "\"",
        ",\"x\":1",
        "[",
        "{}",
        "\u{e9}",
        "\u{1F600}",
        "\\",
        "\"method\":\"m\",",
        "\"id\":1,",
        "\"result\":1,",
    ]);
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(at, byte)| Mutation::Replace(at, byte)),
        (any::<usize>(), interesting.clone()).prop_map(|(at, byte)| Mutation::Replace(at, byte)),
        (any::<usize>(), interesting).prop_map(|(at, byte)| Mutation::Insert(at, byte)),
        any::<usize>().prop_map(Mutation::Delete),
        (any::<usize>(), token).prop_map(|(at, token)| Mutation::InsertToken(at, token)),
        (any::<usize>(), 1usize..20).prop_map(|(at, len)| Mutation::Duplicate(at, len)),
    ]
}

fn mutate(bytes: &mut Vec<u8>, mutation: &Mutation) {
    if bytes.is_empty() {
        return;
    }
    let len = bytes.len();
    match *mutation {
        Mutation::Replace(at, byte) => bytes[at % len] = byte,
        Mutation::Insert(at, byte) => bytes.insert(at % (len + 1), byte),
        Mutation::Delete(at) => {
            bytes.remove(at % len);
        }
        Mutation::InsertToken(at, token) => {
            let at = at % (len + 1);
            bytes.splice(at..at, token.bytes());
        }
        Mutation::Duplicate(at, n) => {
            let start = at % len;
            let end = (start + n).min(len);
            let copy = bytes[start..end].to_vec();
            bytes.splice(end..end, copy);
        }
    }
}

/// JSON-ish pieces: structure, literals, numbers and strings, valid and not. No sequence of
/// pieces can form a lone UTF-16 surrogate escape, so `serde_json_accepts` is exact on them.
const PIECES: &[&str] = &[
    "[",
    "]",
    "{",
    "}",
    ",",
    ":",
    " ",
    "\n",
    "\t",
    "\r",
    "\u{c}",
    "\u{a0}",
    "true",
    "false",
    "null",
    "nul",
    "tru",
    "True",
    "NaN",
    "Infinity",
    "0",
    "-0",
    "1",
    "42",
    "-",
    "+",
    ".",
    "5.",
    ".5",
    "1.5",
    "e",
    "E",
    "e5",
    "E-3",
    "e+",
    "00",
    "012",
    "1e999",
    "-1.5E+300",
    "123456789012345678901234567890",
    "\"\"",
    "\"a\"",
    "\"é✓😀\"",
    "\"\\n\\t\\\"\\\\\\/\\b\\f\\r\"",
    "\"\\u00e9\"",
    "\"\\ud83d\\ude00\"",
    "\"\\x\"",
    "\"\\u12\"",
    "\"\\uZZZZ\"",
    "\"tab\tin\"",
    "\"nul\u{0}\"",
    "\"",
    "\"open",
    "\"key\":",
    "'a'",
    "/",
    "#",
    "\\",
    "\"\\u0000\"",
];

fn arb_json_ish() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::collection::vec(prop::sample::select(PIECES), 0..40).prop_map(|pieces| pieces.concat()),
        // Valid JSON with whitespace, sometimes with one piece inserted or one char removed:
        // one edit breaks at most one thing, so `serde_json_accepts` is exact here too.
        (
            arb_value(),
            any::<u64>(),
            prop::option::of((any::<usize>(), prop::sample::select(PIECES))),
            any::<bool>()
        )
            .prop_map(|(value, seed, insert, remove)| {
                let mut text = Printer::new(seed).value_text(&value);
                let boundaries: Vec<usize> =
                    text.char_indices().map(|(i, _)| i).chain([text.len()]).collect();
                if let Some((at, piece)) = insert {
                    text.insert_str(boundaries[at % boundaries.len()], piece);
                } else if remove && !text.is_empty() {
                    let at = boundaries[seed as usize % (boundaries.len() - 1)];
                    text.remove(at);
                }
                text
            }),
    ]
}

fn wrap_as_params(doc: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":[{doc}]}}"#)
}

// ---------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------

/// 512 cases per property unless `PROPTEST_CASES` asks for another number.
fn config() -> Config {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(512);
    Config {
        cases,
        ..Config::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn built_messages_round_trip_through_serde_json(spec in arb_spec(true)) {
        let message = build(&spec);
        let text = serde_json::to_string(&message).unwrap();
        let parsed = parse_single(text.as_bytes()).map_err(|e| TestCaseError::fail(format!("{e}: {text}")))?;
        prop_assert_eq!(&parsed, &message, "{}", text);
        prop_assert_eq!(&parsed.clone().into_owned(), &message);
        // Number ids keep their exact text.
        if let Some(id) = parsed.id() {
            if let Spec::Request { id: IdSpec::Number(t), .. }
                | Spec::Success { id: IdSpec::Number(t), .. }
                | Spec::Failure { id: IdSpec::Number(t), .. } = &spec
            {
                prop_assert_eq!(id.raw(), t.as_str());
            }
        }
        // Through serde_json's Deserialize as well, and written again identically.
        let via_serde: Message<'_> = serde_json::from_str(&text).unwrap();
        prop_assert_eq!(&via_serde, &message);
        prop_assert_eq!(serde_json::to_string(&parsed).unwrap(), text.clone());
        // serde_json agrees the text is valid JSON.
        prop_assert!(serde_json_accepts(text.as_bytes()));
        // A frame built from the same bytes views the same message.
        let frame = ParsedFrame::parse(bytes::Bytes::from(text.clone().into_bytes())).unwrap();
        prop_assert_eq!(frame.view().single().unwrap(), message);
    }

    #[test]
    fn messages_with_random_whitespace_order_and_escapes_parse_back_equal(
        spec in arb_spec(true),
        seed in any::<u64>(),
        extra in prop::option::of(arb_value()),
    ) {
        let (text, expected) = Printer::new(seed).message(&spec, extra.as_ref());
        let parsed = parse_single(text.as_bytes()).map_err(|e| TestCaseError::fail(format!("{e}: {text}")))?;
        prop_assert_eq!(&parsed, &expected, "{}", text);
        // Equal to the message built by the constructors, too, apart from params and
        // result text (whitespace and escapes differ): compare those as JSON values.
        let built = build(&spec);
        prop_assert_eq!(parsed.id(), built.id());
        prop_assert_eq!(parsed.method(), built.method());
        prop_assert_eq!(json_parts(&parsed), json_parts(&built));
        // In a batch, with another element, it parses the same.
        let batch = format!("[{text},{text}]");
        let parsed_batch = rpcwire::parse(batch.as_bytes()).unwrap().batch().unwrap();
        prop_assert_eq!(parsed_batch.len(), 2);
        for element in &parsed_batch {
            prop_assert_eq!(element.unwrap(), expected.clone());
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let result = rpcwire::parse(&bytes);
        touch(&result);
        if rpcwire_accepts(&result) {
            prop_assert!(serde_json_accepts(&bytes), "rpcwire accepted what serde_json rejects: {:?}", bytes);
        }
        let small = Parser::new(rpcwire::Limits::default().with_max_depth(3).with_max_batch_len(2).with_max_size(64));
        touch(&small.parse(&bytes));
        let _ = ParsedFrame::parse(bytes::Bytes::from(bytes.clone())).map(|frame| touch(&Ok(frame.view())));
        let _ = RawJson::new(String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn mutated_messages_never_panic(
        spec in arb_spec(true),
        seed in any::<u64>(),
        mutations in prop::collection::vec(arb_mutation(), 1..6),
    ) {
        let (text, _) = Printer::new(seed).message(&spec, None);
        let mut bytes = text.into_bytes();
        for mutation in &mutations {
            mutate(&mut bytes, mutation);
        }
        let result = rpcwire::parse(&bytes);
        touch(&result);
        if rpcwire_accepts(&result) {
            prop_assert!(
                serde_json_accepts(&bytes),
                "rpcwire accepted what serde_json rejects: {}",
                String::from_utf8_lossy(&bytes)
            );
        }
    }

    #[test]
    fn single_mutations_are_judged_like_serde_json(
        spec in arb_spec(false),
        seed in any::<u64>(),
        mutation in arb_mutation(),
    ) {
        // Numbers stay within f64 range here, so that serde_json's `Value` is an exact oracle
        // for everything a single mutation can break.
        let (text, _) = Printer::new(seed).message(&spec, None);
        let mut bytes = text.into_bytes();
        mutate(&mut bytes, &mutation);
        let result = rpcwire::parse(&bytes);
        prop_assert_eq!(
            rpcwire_accepts(&result),
            serde_json_accepts(&bytes),
            "{:?} on {} gives {:?}",
            mutation,
            String::from_utf8_lossy(&bytes),
            result.as_ref().err()
        );
    }

    #[test]
    fn json_ish_params_are_judged_like_serde_json(doc in arb_json_ish()) {
        let wrapped = wrap_as_params(&doc);
        let serde_json_valid = serde_json_accepts(wrapped.as_bytes());
        let result = rpcwire::parse(wrapped.as_bytes());
        prop_assert_eq!(result.is_ok(), serde_json_valid, "{} gives {:?}", wrapped, result.as_ref().err());
        if let Err(e) = &result {
            prop_assert!(e.is_syntax(), "{}", e);
        }
        // The document alone gets the same verdict on its JSON validity.
        let alone = rpcwire::parse(doc.as_bytes());
        let alone_valid = serde_json_accepts(doc.as_bytes());
        prop_assert_eq!(rpcwire_accepts(&alone), alone_valid, "{:?} gives {:?}", doc, alone.as_ref().err());
        // RawJson validates the same way.
        prop_assert_eq!(RawJson::new(doc.as_str()).is_ok(), alone_valid);
    }
}

/// The oracles themselves tell valid from invalid (so that the properties above can fail).
#[test]
fn oracles_tell_valid_from_invalid() {
    for valid in [
        &b"[1]"[..],
        b"{\"a\":1e999}",
        b" \"\\ud83d\\ude00\" ",
        b"[1.5e300, -0]",
    ] {
        assert!(serde_json_accepts(valid), "{}", String::from_utf8_lossy(valid));
    }
    for invalid in [
        &b"[1,]"[..],
        b"\"\\ud800\"",
        b"[1e999, \"\xff\"]",
        b"\"\xff\"",
        b"\"a\tb\"",
        b"01",
        b"",
    ] {
        assert!(
            !serde_json_accepts(invalid),
            "{}",
            String::from_utf8_lossy(invalid)
        );
    }
    // The pieces make both kinds of text.
    let parse = |s: &str| serde_json_accepts(wrap_as_params(s).as_bytes());
    assert!(parse("[1e999, \"\\u00e9\"]"));
    assert!(!parse("\"tab\tin\""));
    assert!(!parse("\"\\u12\""));
    assert!(!parse("\u{a0}"));
}

/// The printer produces what it claims: valid JSON for any value, equal to the value.
#[test]
fn printer_output_is_the_value() {
    let value = serde_json::json!({"a": [1, -2.5, "x\"\\\n\u{0}😀/", null, true], "": {"é": []}});
    for seed in 0..200 {
        let text = Printer::new(seed).value_text(&value);
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), value, "{text}");
    }
}
