//! Stages "… stream": framed streams through the whole serving loop — bytes read in 64 KiB
//! chunks into a pooled buffer → frames split off → parse → route → serde decode → handler
//! → encode → frame — with rpcwire's `serve::Connection`, and for W1 beside the same loop
//! written with memchr line splitting, serde_json and jsonrpsee-types.
//!
//! W1 streams: 256 W1 requests (`eth_getBalance`, varying ids); the handler decodes its
//! params into `(String, String)` and returns a fixed hex string, as issue 5 asks. ETH
//! streams: every request line of the Ethereum corpus; each corpus method echoes its params.

use std::hint::black_box;
use std::io::Write as _;
use std::marker::PhantomData;
use std::ops::Range;

use bytes::BytesMut;
use jsonrpsee_types::{ErrorObjectOwned, Request, Response, ResponsePayload};
use rpcwire::dispatch::{Reply, Router};
use rpcwire::frame::Framing;
use rpcwire::pool::BufferPool;
use rpcwire::serve::Connection;
use rpcwire::Params;

use super::stages::Stage;
use super::workloads::{self, Kind};

const BALANCE: &str = "0x0234c8a3397aab58";
const CHUNK: usize = 64 * 1024;

/// What a stream stage carries and how the server answers it.
pub trait StreamSpec: 'static {
    const STAGE: &'static str;
    const FRAMING: Framing;
    /// The message bodies of the stream, in order.
    fn bodies() -> Vec<Vec<u8>>;
    fn register(router: &mut Router);
}

fn w1_bodies() -> Vec<Vec<u8>> {
    (1..=256u32)
        .map(|i| {
            workloads::W1
                .replacen("\"id\":42", &format!("\"id\":{i}"), 1)
                .into_bytes()
        })
        .collect()
}

fn register_w1(router: &mut Router) {
    router.method("eth_getBalance", |(address, block): (String, String)| {
        black_box((address, block));
        Ok(BALANCE)
    });
}

/// The request lines of the Ethereum corpus (empty when the corpus is missing).
fn eth_bodies() -> Vec<Vec<u8>> {
    workloads::eth().map_or_else(Vec::new, |w| {
        w.messages
            .into_iter()
            .filter(|m| matches!(m.kind, Kind::Request | Kind::RequestBatch))
            .map(|m| m.bytes)
            .collect()
    })
}

fn register_eth(router: &mut Router) {
    let bodies = eth_bodies();
    let mut names: Vec<String> = bodies
        .iter()
        .filter_map(|b| rpcwire::parse(b).ok()?.single()?.method().map(str::to_owned))
        .collect();
    names.sort();
    names.dedup();
    for name in names {
        router.raw_method(&name, |params: Option<Params<'_>>, reply: Reply<'_>| {
            Ok(match params {
                Some(params) => reply.raw(&params.raw()),
                None => reply.null(),
            })
        });
    }
}

/// A `StreamSpec` named `$name`: stage `$stage`, framing `$framing`, bodies and handlers
/// from `$bodies` and `$register`.
macro_rules! stream_spec {
    ($name:ident, $stage:literal, $framing:expr, $bodies:ident, $register:ident) => {
        pub struct $name;
        impl StreamSpec for $name {
            const STAGE: &'static str = $stage;
            const FRAMING: Framing = $framing;
            fn bodies() -> Vec<Vec<u8>> {
                $bodies()
            }
            fn register(router: &mut Router) {
                $register(router)
            }
        }
    };
}

stream_spec!(
    W1Ndjson,
    "W1 NDJSON stream",
    Framing::Ndjson,
    w1_bodies,
    register_w1
);
stream_spec!(
    W1ContentLength,
    "W1 Content-Length stream",
    Framing::ContentLength,
    w1_bodies,
    register_w1
);
stream_spec!(
    EthNdjson,
    "ETH NDJSON stream",
    Framing::Ndjson,
    eth_bodies,
    register_eth
);
stream_spec!(
    EthContentLength,
    "ETH Content-Length stream",
    Framing::ContentLength,
    eth_bodies,
    register_eth
);

/// The framed stream and where each message's frame lies in it.
fn framed<S: StreamSpec>() -> (Vec<u8>, Vec<Range<usize>>) {
    let mut wire = BytesMut::new();
    let mut frames = Vec::new();
    for body in S::bodies() {
        let start = wire.len();
        S::FRAMING.encode(&body, &mut wire);
        frames.push(start..wire.len());
    }
    (wire.to_vec(), frames)
}

/// rpcwire: `serve::Connection` with pooled buffers.
pub struct RpcwireStream<S> {
    router: Router,
    connection: Connection,
    wire: Vec<u8>,
    frames: Vec<Range<usize>>,
    _spec: PhantomData<S>,
}

impl<S: StreamSpec> RpcwireStream<S> {
    fn feed(&mut self, bytes: Range<usize>) -> usize {
        self.connection.input().extend_from_slice(&self.wire[bytes]);
        self.connection.process(&self.router).expect("no framing error");
        let written = self.connection.output().len();
        black_box(&self.connection.output()[..]);
        self.connection.output().clear();
        written
    }
}

impl<S: StreamSpec> Stage for RpcwireStream<S> {
    const STAGE: &'static str = S::STAGE;
    const NAME: &'static str = "rpcwire serve::Connection";
    const RPCWIRE: bool = true;

    fn new() -> Self {
        let mut router = Router::new();
        S::register(&mut router);
        let pool = BufferPool::new(2, CHUNK, 4 << 20);
        let (wire, frames) = framed::<S>();
        RpcwireStream {
            router,
            connection: Connection::new(S::FRAMING, &pool),
            wire,
            frames,
            _spec: PhantomData,
        }
    }
    fn messages(&self) -> usize {
        self.frames.len()
    }
    fn bytes(&self) -> usize {
        self.wire.len()
    }
    fn pass(&mut self) -> usize {
        let mut written = 0;
        let mut at = 0;
        while at < self.wire.len() {
            let end = (at + CHUNK).min(self.wire.len());
            written += self.feed(at..end);
            at = end;
        }
        written
    }
    fn one(&mut self, i: usize) -> usize {
        self.feed(self.frames[i].clone())
    }
}

/// The same loop with the peers' tools: frames found with memchr (`\n`, or the header's
/// `\r\n\r\n` and its Content-Length), `jsonrpsee_types::Request` by serde_json, params
/// decoded by serde_json, a jsonrpsee `Response` serialized into a reused `Vec`, framed.
pub struct BaselineStream<S> {
    wire: Vec<u8>,
    frames: Vec<Range<usize>>,
    out: Vec<u8>,
    body: Vec<u8>,
    _spec: PhantomData<S>,
}

fn eth_get_balance(params: Option<&serde_json::value::RawValue>) -> Result<&'static str, ErrorObjectOwned> {
    let invalid =
        |e: serde_json::Error| ErrorObjectOwned::owned(-32602, "Invalid params", Some(e.to_string()));
    let params = params.ok_or_else(|| ErrorObjectOwned::owned(-32602, "Invalid params", None::<()>))?;
    let (address, block): (String, String) = serde_json::from_str(params.get()).map_err(invalid)?;
    black_box((address, block));
    Ok(BALANCE)
}

impl<S: StreamSpec> BaselineStream<S> {
    /// Answers one body into `self.out`, framed.
    fn answer(&mut self, body: &[u8]) {
        self.body.clear();
        match serde_json::from_slice::<Request<'_>>(body) {
            Ok(request) => {
                let payload = if request.method == "eth_getBalance" {
                    match eth_get_balance(request.params.as_deref()) {
                        Ok(result) => ResponsePayload::success(result),
                        Err(error) => ResponsePayload::error(error),
                    }
                } else {
                    ResponsePayload::error(ErrorObjectOwned::owned(-32601, "Method not found", None::<()>))
                };
                serde_json::to_writer(&mut self.body, &Response::new(payload, request.id))
                    .expect("serializable");
            }
            Err(_) => self.body.extend_from_slice(
                br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#,
            ),
        }
        match S::FRAMING {
            Framing::Ndjson => {
                self.out.extend_from_slice(&self.body);
                self.out.push(b'\n');
            }
            Framing::ContentLength => {
                write!(self.out, "Content-Length: {}\r\n\r\n", self.body.len()).expect("Vec write");
                self.out.extend_from_slice(&self.body);
            }
        }
    }

    /// Splits `bytes` into frames and answers each.
    fn serve(&mut self, range: Range<usize>) -> usize {
        self.out.clear();
        let wire = std::mem::take(&mut self.wire);
        let mut rest = &wire[range];
        while !rest.is_empty() {
            let (body, next) = match S::FRAMING {
                Framing::Ndjson => {
                    let end = memchr::memchr(b'\n', rest).unwrap_or(rest.len());
                    (&rest[..end], (end + 1).min(rest.len()))
                }
                Framing::ContentLength => {
                    let end = memchr::memmem::find(rest, b"\r\n\r\n").expect("header end");
                    let header = std::str::from_utf8(&rest[..end]).expect("ASCII header");
                    let length: usize = header
                        .lines()
                        .find_map(|line| {
                            let (name, value) = line.split_once(':')?;
                            name.eq_ignore_ascii_case("content-length")
                                .then(|| value.trim().parse().ok())?
                        })
                        .expect("Content-Length");
                    (&rest[end + 4..end + 4 + length], end + 4 + length)
                }
            };
            self.answer(body);
            rest = &rest[next..];
        }
        self.wire = wire;
        black_box(&self.out);
        self.out.len()
    }
}

impl<S: StreamSpec> Stage for BaselineStream<S> {
    const STAGE: &'static str = S::STAGE;
    const NAME: &'static str = "memchr + serde_json + jsonrpsee-types";
    const RPCWIRE: bool = false;

    fn new() -> Self {
        let (wire, frames) = framed::<S>();
        BaselineStream {
            wire,
            frames,
            out: Vec::with_capacity(CHUNK * 2),
            body: Vec::with_capacity(1024),
            _spec: PhantomData,
        }
    }
    fn messages(&self) -> usize {
        self.frames.len()
    }
    fn bytes(&self) -> usize {
        self.wire.len()
    }
    fn pass(&mut self) -> usize {
        self.serve(0..self.wire.len())
    }
    fn one(&mut self, i: usize) -> usize {
        self.serve(self.frames[i].clone())
    }
}

/// rpcwire and the baseline answer the W1 streams identically (as JSON values, frame by
/// frame); the ETH streams answer every request.
pub fn verify() {
    fn bodies(framing: Framing, mut out: &[u8]) -> Vec<serde_json::Value> {
        let mut decoder = rpcwire::frame::FrameDecoder::new(framing);
        let mut buf = BytesMut::from(std::mem::take(&mut out));
        let mut values = Vec::new();
        while let Some(frame) = decoder.decode(&mut buf).expect("framed output") {
            values.push(serde_json::from_slice(&frame).expect("JSON answer"));
        }
        values
    }
    fn check<S: StreamSpec>() {
        let mut ours = RpcwireStream::<S>::new();
        let mut base = BaselineStream::<S>::new();
        ours.connection.input().extend_from_slice(&ours.wire.clone());
        ours.connection.process(&ours.router).expect("no framing error");
        let a = bodies(S::FRAMING, &ours.connection.output().split().freeze());
        base.pass();
        let b = bodies(S::FRAMING, &base.out);
        assert_eq!(a.len(), ours.frames.len(), "{}: one answer per request", S::STAGE);
        assert_eq!(a, b, "{}", S::STAGE);
        assert!(a.iter().all(|v| v["result"] == BALANCE), "{}", S::STAGE);
    }
    check::<W1Ndjson>();
    check::<W1ContentLength>();
    for (stage, framing) in [
        (EthNdjson::STAGE, Framing::Ndjson),
        (EthContentLength::STAGE, Framing::ContentLength),
    ] {
        let mut ours = match framing {
            Framing::Ndjson => RpcwireStream::<EthNdjson>::new().into_parts(),
            Framing::ContentLength => RpcwireStream::<EthContentLength>::new().into_parts(),
        };
        ours.1.input().extend_from_slice(&ours.2);
        ours.1.process(&ours.0).expect("no framing error");
        let answers = bodies(framing, &ours.1.output().split().freeze());
        assert!(
            answers.iter().all(|v| v.get("result").is_some()),
            "{stage}: every request answered with a result"
        );
    }
}

impl<S> RpcwireStream<S> {
    fn into_parts(self) -> (Router, Connection, Vec<u8>) {
        (self.router, self.connection, self.wire)
    }
}
