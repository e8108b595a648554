//! The messages the soak sends: a deterministic, seeded mix of requests (every example
//! method, `echo` with params of many sizes, unknown methods, bad params), notifications,
//! batches, invalid JSON, valid JSON that is not a request, truncated messages and messages
//! over the size limit, each with the answers it must get.

use serde_json::{json, Value};

/// The size limit the servers are started with (`--max-frame`, `--max-body`), in bytes.
pub const MAX_MESSAGE: usize = 64 * 1024;

/// What a message is, for the counts and for the transports that treat some apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// One request with an id.
    Request,
    /// One notification (never answered).
    Notification,
    /// A batch of requests, notifications and the odd invalid element.
    Batch,
    /// Bytes that are not JSON: answered -32700 with id `null`.
    InvalidJson,
    /// JSON that is not a request: answered -32600 with id `null` (one per element).
    InvalidRequest,
    /// A request cut off in its params: answered -32700 with id `null`.
    Truncated,
    /// A request over [`MAX_MESSAGE`]: an error with id `null` (HTTP: 413; WebSocket: a
    /// close with 1009).
    Oversized,
}

impl Kind {
    /// Every kind, in the order the reports list them.
    pub const ALL: [Kind; 7] = [
        Kind::Request,
        Kind::Notification,
        Kind::Batch,
        Kind::InvalidJson,
        Kind::InvalidRequest,
        Kind::Truncated,
        Kind::Oversized,
    ];

    /// The kind's name in the reports.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Request => "request",
            Kind::Notification => "notification",
            Kind::Batch => "batch",
            Kind::InvalidJson => "invalid_json",
            Kind::InvalidRequest => "invalid_request",
            Kind::Truncated => "truncated",
            Kind::Oversized => "oversized",
        }
    }
}

/// The answer a request with an id must get.
#[derive(Clone, Debug, PartialEq)]
pub enum Expected {
    /// A success with exactly this result.
    Result(Value),
    /// An error with this code.
    Error(i64),
}

/// One message to send (the JSON text, unframed) and the answers it must get.
#[derive(Clone, Debug)]
pub struct Outgoing {
    /// What it is.
    pub kind: Kind,
    /// The message or batch, one line of UTF-8 without a newline.
    pub body: String,
    /// The answers with an id it must get: the id as compact JSON, and the answer.
    pub answers: Vec<(String, Expected)>,
    /// How many error answers with id `null` it must get.
    pub null_errors: u32,
}

impl Outgoing {
    /// How many answers it must get, with an id or with `null`.
    pub fn expected_answers(&self) -> u32 {
        self.answers.len() as u32 + self.null_errors
    }

    /// Whether it gets no answer at all (notifications, a batch of notifications).
    pub fn is_silent(&self) -> bool {
        self.expected_answers() == 0
    }
}

/// Bytes that are not JSON; none has an id before the error.
const INVALID_JSON: &[&str] = &[
    r#"{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]"#,
    r#"[{"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},{"jsonrpc": "2.0", "method"]"#,
    r#"{"jsonrpc":"2.0","method":"sum","params":[1,2,]}"#,
    r#"{"jsonrpc":"2.0","method":"echo","params":["\x41"]}"#,
    r#"{"jsonrpc":"2.0","method":"sum","params":[01]}"#,
    r#"{"jsonrpc":"2.0","method":"echo","params":["unterminated]}"#,
    r#"nul"#,
    r#"[1,2"#,
    r#"{,}"#,
];

/// JSON that is not a request, and how many -32600 answers (id `null`) each gets.
const INVALID_REQUESTS: &[(&str, u32)] = &[
    (r#"{"jsonrpc": "2.0", "method": 1, "params": "bar"}"#, 1),
    ("[]", 1),
    ("[1]", 1),
    ("[1,2,3]", 3),
    (r#"{"foo":"boo"}"#, 1),
    (r#""just a string""#, 1),
    (r#"{"jsonrpc":"1.0","method":"update"}"#, 1),
];

/// Sizes of the string `echo` sends back, in bytes (the largest still under the limit).
const ECHO_SIZES: &[usize] = &[0, 16, 100, 1_000, 4_000, 16_000, 60_000];

/// A small, fast, seeded generator (SplitMix64): the same seed gives the same traffic.
pub struct Random(u64);

impl Random {
    /// A generator started from `seed`.
    pub fn new(seed: u64) -> Random {
        Random(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..bound` (`bound` > 0).
    pub fn below(&mut self, bound: u64) -> u64 {
        self.next_u64() % bound
    }

    /// A number in `-range..=range`.
    fn signed(&mut self, range: i64) -> i64 {
        self.below(2 * range as u64 + 1) as i64 - range
    }

    /// One of `items` (not empty).
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

/// One connection's stream of messages, with ids unique on the connection.
pub struct Traffic {
    /// Prefix of the string ids, naming the connection.
    tag: String,
    next_id: u64,
    random: Random,
}

/// A call inside a request: method, params (JSON text, if any) and the answer it gets.
struct Call {
    method: &'static str,
    params: Option<String>,
    expected: Expected,
}

impl Traffic {
    /// The traffic of the connection named `tag`, from `seed`.
    pub fn new(tag: &str, seed: u64) -> Traffic {
        Traffic {
            tag: tag.to_owned(),
            next_id: 1,
            random: Random::new(seed),
        }
    }

    /// The next message of the mix: per thousand, 550 requests, 120 notifications, 150
    /// batches, 50 invalid JSON, 50 invalid requests, 76 truncated, 4 oversized.
    pub fn next_message(&mut self) -> Outgoing {
        match self.random.below(1000) {
            0..=549 => self.request(),
            550..=669 => self.notification(),
            670..=819 => self.batch(),
            820..=869 => self.invalid_json(),
            870..=919 => self.invalid_request(),
            920..=995 => self.truncated(),
            _ => self.oversized(),
        }
    }

    /// A fresh id: a number, or now and then a string naming the connection.
    fn fresh_id(&mut self) -> Value {
        let n = self.next_id;
        self.next_id += 1;
        if self.random.below(4) == 0 {
            Value::String(format!("{}-{n}", self.tag))
        } else {
            Value::from(n)
        }
    }

    /// One of the calls the servers know, or one they refuse; `sized`: `echo` may carry up
    /// to 60 KB (not in batches, which must stay under the limit as a whole).
    fn call(&mut self, sized: bool) -> Call {
        let (a, b) = (self.random.signed(1_000_000), self.random.signed(1_000_000));
        let call = |method, params: String, expected| Call {
            method,
            params: Some(params),
            expected,
        };
        match self.random.below(10) {
            0 => call("subtract", format!("[{a},{b}]"), Expected::Result(json!(a - b))),
            1 => call(
                "subtract",
                format!(r#"{{"subtrahend":{b},"minuend":{a}}}"#),
                Expected::Result(json!(a - b)),
            ),
            2 => {
                let terms: Vec<i64> = (0..self.random.below(20))
                    .map(|_| self.random.signed(1000))
                    .collect();
                let params = serde_json::to_string(&terms).unwrap_or_default();
                call("sum", params, Expected::Result(json!(terms.iter().sum::<i64>())))
            }
            3 => Call {
                method: "get_data",
                params: None,
                expected: Expected::Result(json!(["hello", 5])),
            },
            4 | 5 => self.small_echo(),
            6 | 7 if sized => self.sized_echo(),
            6 | 7 => self.small_echo(),
            8 => call("no_such_method", "[]".to_owned(), Expected::Error(-32601)),
            _ => call("sum", r#"["one","two"]"#.to_owned(), Expected::Error(-32602)),
        }
    }

    /// `echo` with nested params, escapes and non-ASCII text.
    fn small_echo(&mut self) -> Call {
        let value = json!([
            "é ü \"quoted\" back\\slash \u{1F600}",
            self.random.signed(1 << 40),
            {"k": [1, 2.5, null, true], "n": {"deep": [[[]]]}}
        ]);
        Call {
            method: "echo",
            params: Some(value.to_string()),
            expected: Expected::Result(value),
        }
    }

    /// `echo` with a string of one of [`ECHO_SIZES`].
    fn sized_echo(&mut self) -> Call {
        let size = *self.random.pick(ECHO_SIZES);
        let letter = char::from(b'a' + self.random.below(26) as u8);
        let value = json!([letter.to_string().repeat(size)]);
        Call {
            method: "echo",
            params: Some(value.to_string()),
            expected: Expected::Result(value),
        }
    }

    /// A request's JSON text: the id comes last, so that a cut anywhere before it removes it.
    fn request_text(method: &str, params: Option<&str>, id: &Value) -> String {
        match params {
            Some(params) => format!(r#"{{"jsonrpc":"2.0","method":"{method}","params":{params},"id":{id}}}"#),
            None => format!(r#"{{"jsonrpc":"2.0","method":"{method}","id":{id}}}"#),
        }
    }

    /// A request with a fresh id.
    fn request(&mut self) -> Outgoing {
        let (body, answer) = self.request_element(true);
        Outgoing {
            kind: Kind::Request,
            body,
            answers: vec![answer],
            null_errors: 0,
        }
    }

    /// A request's text and the answer it gets (`sized`: see [`Traffic::call`]).
    fn request_element(&mut self, sized: bool) -> (String, (String, Expected)) {
        let id = self.fresh_id();
        let call = self.call(sized);
        let body = Traffic::request_text(call.method, call.params.as_deref(), &id);
        (body, (id.to_string(), call.expected))
    }

    /// A notification's text: known methods, and one no one serves (still not answered).
    fn notification_text(&mut self) -> String {
        let params = self.random.signed(1000);
        match self.random.below(5) {
            0 => format!(r#"{{"jsonrpc":"2.0","method":"update","params":[1,2,{params}]}}"#),
            1 => r#"{"jsonrpc":"2.0","method":"notify_hello","params":[7]}"#.to_owned(),
            2 => r#"{"jsonrpc":"2.0","method":"notify_sum","params":[1,2,4]}"#.to_owned(),
            3 => r#"{"jsonrpc":"2.0","method":"foobar"}"#.to_owned(),
            _ => format!(r#"{{"jsonrpc":"2.0","method":"no_such_notification","params":{{"n":{params}}}}}"#),
        }
    }

    /// A notification.
    fn notification(&mut self) -> Outgoing {
        Outgoing {
            kind: Kind::Notification,
            body: self.notification_text(),
            answers: Vec::new(),
            null_errors: 0,
        }
    }

    /// A batch of 1 to 7 small elements (a few KB at most): requests, notifications, and now
    /// and then an element that is not a request (answered -32600 with id `null` inside the
    /// batch's answer).
    fn batch(&mut self) -> Outgoing {
        let mut elements = Vec::new();
        let mut answers = Vec::new();
        let mut null_errors = 0;
        for _ in 0..=self.random.below(6) {
            match self.random.below(10) {
                0..=6 => {
                    let (text, answer) = self.request_element(false);
                    elements.push(text);
                    answers.push(answer);
                }
                7 | 8 => elements.push(self.notification_text()),
                _ => {
                    elements.push(r#"{"foo":"boo"}"#.to_owned());
                    null_errors += 1;
                }
            }
        }
        Outgoing {
            kind: Kind::Batch,
            body: format!("[{}]", elements.join(",")),
            answers,
            null_errors,
        }
    }

    /// Bytes that are not JSON.
    fn invalid_json(&mut self) -> Outgoing {
        Outgoing {
            kind: Kind::InvalidJson,
            body: (*self.random.pick(INVALID_JSON)).to_owned(),
            answers: Vec::new(),
            null_errors: 1,
        }
    }

    /// JSON that is not a request.
    fn invalid_request(&mut self) -> Outgoing {
        let (body, null_errors) = *self.random.pick(INVALID_REQUESTS);
        Outgoing {
            kind: Kind::InvalidRequest,
            body: body.to_owned(),
            answers: Vec::new(),
            null_errors,
        }
    }

    /// An `echo` request cut off somewhere in its params (before its id).
    fn truncated(&mut self) -> Outgoing {
        let id = self.fresh_id();
        let size = 1 + self.random.below(2000) as usize;
        let params = format!(r#"["{}",1,{{"k":[2,3]}}]"#, "t".repeat(size));
        let whole = Traffic::request_text("echo", Some(&params), &id);
        let params_start = whole.find("\"params\":").unwrap_or(0) + "\"params\":".len();
        let cut = params_start + 1 + self.random.below(params.len() as u64 - 1) as usize;
        Outgoing {
            kind: Kind::Truncated,
            body: whole[..cut].to_owned(),
            answers: Vec::new(),
            null_errors: 1,
        }
    }

    /// An `echo` request (with an id) a little over [`MAX_MESSAGE`]: the server cannot read
    /// its id, so it is answered with id `null`.
    fn oversized(&mut self) -> Outgoing {
        let id = self.fresh_id();
        let size = MAX_MESSAGE + self.random.below(4096) as usize;
        let params = format!(r#"["{}"]"#, "o".repeat(size));
        Outgoing {
            kind: Kind::Oversized,
            body: Traffic::request_text("echo", Some(&params), &id),
            answers: Vec::new(),
            null_errors: 1,
        }
    }
}
