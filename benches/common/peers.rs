//! rpcwire and the peers it is measured against, behind one small trait.
//!
//! Every parser checks `"jsonrpc" == "2.0"`, extracts the id, the method and a handle to the
//! params / result / error (kept alive through `black_box`), and returns a digest that is the
//! same for every correct parser: `1 + 2 × method length + (id present and not null)`, summed
//! over a batch's elements. `0` means "rejected". The harness checks, before timing, that
//! every parser returns rpcwire's digest for every message of a workload.

use std::borrow::Cow;
use std::hint::black_box;

use bytes::Bytes;
use serde::Deserialize;
use serde_json::value::RawValue;
use simd_json::prelude::*;

use super::workloads::{Kind, Workload};

/// One parser under test, with whatever state it keeps between messages (reused buffers,
/// pre-built `Bytes`), created once per workload outside the timed loop.
pub trait Peer: 'static {
    const NAME: &'static str;
    /// One line: what is measured.
    const ABOUT: &'static str;
    fn new(workload: &Workload) -> Self;
    /// Parses message `i` of `workload`; the digest, or 0 when the parser rejected it.
    fn parse(&mut self, workload: &Workload, i: usize) -> usize;
}

/// Receives each parser type in turn (a generic "for each parser" without `dyn`).
pub trait Visit {
    fn visit<P: Peer>(&mut self, workload: &Workload);
}

/// Calls `visitor.visit::<P>()` for every parser, rpcwire first.
pub fn for_each<V: Visit>(visitor: &mut V, workload: &Workload) {
    visitor.visit::<Rpcwire>(workload);
    visitor.visit::<RpcwireFrame>(workload);
    visitor.visit::<SerdeBorrowed>(workload);
    visitor.visit::<JsonrpseeTypes>(workload);
    visitor.visit::<SerdeValue>(workload);
    visitor.visit::<SimdBorrowed>(workload);
    visitor.visit::<SimdTape>(workload);
    visitor.visit::<SonicLazy>(workload);
}

/// Calls `visitor.visit::<P>()` for the parser named `name`; false when there is none.
pub fn for_name<V: Visit>(visitor: &mut V, workload: &Workload, name: &str) -> bool {
    match name {
        Rpcwire::NAME => visitor.visit::<Rpcwire>(workload),
        RpcwireFrame::NAME => visitor.visit::<RpcwireFrame>(workload),
        SerdeBorrowed::NAME => visitor.visit::<SerdeBorrowed>(workload),
        JsonrpseeTypes::NAME => visitor.visit::<JsonrpseeTypes>(workload),
        SerdeValue::NAME => visitor.visit::<SerdeValue>(workload),
        SimdBorrowed::NAME => visitor.visit::<SimdBorrowed>(workload),
        SimdTape::NAME => visitor.visit::<SimdTape>(workload),
        SonicLazy::NAME => visitor.visit::<SonicLazy>(workload),
        _ => return false,
    }
    true
}

pub const RPCWIRE: &str = Rpcwire::NAME;
pub const RPCWIRE_FRAME: &str = RpcwireFrame::NAME;

/// Whether `name` is one of rpcwire's own entries (not a peer).
pub fn is_rpcwire(name: &str) -> bool {
    name == RPCWIRE || name == RPCWIRE_FRAME
}

#[inline(always)]
fn digest(method_len: usize, has_id: bool) -> usize {
    1 + 2 * method_len + usize::from(has_id)
}

/// Sums element digests; 0 when any element was rejected (or the batch was empty).
#[inline(always)]
fn batch_digest(digests: impl Iterator<Item = usize>) -> usize {
    let mut sum = 0;
    for d in digests {
        if d == 0 {
            return 0;
        }
        sum += d;
    }
    sum
}

// ---------------------------------------------------------------------------------------
// rpcwire

#[inline(always)]
fn rpcwire_digest(message: &rpcwire::Message<'_>) -> usize {
    match message {
        rpcwire::Message::Request(r) => {
            black_box(r.raw_params());
            digest(r.method().len(), !r.id().is_null())
        }
        rpcwire::Message::Notification(n) => {
            black_box(n.raw_params());
            digest(n.method().len(), false)
        }
        rpcwire::Message::Response(r) => {
            black_box(r.payload());
            digest(0, !r.id().is_null())
        }
    }
}

#[inline(always)]
fn rpcwire_parsed_digest(parsed: rpcwire::Parsed<'_>) -> usize {
    match parsed {
        rpcwire::Parsed::Single(message) => rpcwire_digest(&message),
        rpcwire::Parsed::Batch(batch) => batch_digest(batch.iter().map(|element| match element {
            Ok(message) => rpcwire_digest(&message),
            Err(_) => 0,
        })),
    }
}

/// `rpcwire::parse` to a borrowed view; batches with `Parser::parse_reusing` and a reused
/// `BatchScratch`, iterating the elements.
pub struct Rpcwire {
    parser: rpcwire::Parser,
    scratch: rpcwire::BatchScratch,
}

impl Peer for Rpcwire {
    const NAME: &'static str = "rpcwire";
    const ABOUT: &'static str =
        "rpcwire::parse → borrowed Message view; batches: Parser::parse_reusing with a reused BatchScratch";

    fn new(_: &Workload) -> Self {
        Rpcwire {
            parser: rpcwire::Parser::default(),
            scratch: rpcwire::BatchScratch::default(),
        }
    }

    #[inline]
    fn parse(&mut self, workload: &Workload, i: usize) -> usize {
        let message = &workload.messages[i];
        let parsed = match message.kind {
            Kind::Request | Kind::Response => rpcwire::parse(&message.bytes),
            Kind::RequestBatch | Kind::ResponseBatch => {
                self.parser.parse_reusing(&message.bytes, &mut self.scratch)
            }
        };
        match parsed {
            Ok(parsed) => rpcwire_parsed_digest(parsed),
            Err(_) => 0,
        }
    }
}

/// `ParsedFrame::parse(Bytes)`: an owned, `Send` frame (the `Bytes` clone is prepared
/// outside the timed loop; cloning a `Bytes` is a reference-count increment).
pub struct RpcwireFrame {
    bytes: Vec<Bytes>,
}

impl Peer for RpcwireFrame {
    const NAME: &'static str = "rpcwire-frame";
    const ABOUT: &'static str = "rpcwire::ParsedFrame::parse(Bytes) → owned, Send frame, then view()";

    fn new(workload: &Workload) -> Self {
        RpcwireFrame {
            bytes: workload
                .messages
                .iter()
                .map(|m| Bytes::from(m.bytes.clone()))
                .collect(),
        }
    }

    #[inline]
    fn parse(&mut self, _: &Workload, i: usize) -> usize {
        match rpcwire::ParsedFrame::parse(self.bytes[i].clone()) {
            Ok(frame) => rpcwire_parsed_digest(frame.view()),
            Err(_) => 0,
        }
    }
}

// ---------------------------------------------------------------------------------------
// serde_json, borrowed struct (how jsonrpsee and most Rust JSON-RPC stacks do it)

/// `Some(raw)` also for a JSON `null` (plain `Option<&RawValue>` would turn `null` into None).
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&'de RawValue>::deserialize(d).map(Some)
}

#[derive(Deserialize)]
struct SerdeMessage<'a> {
    #[serde(borrow)]
    jsonrpc: Cow<'a, str>,
    #[serde(borrow, default, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    method: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "present")]
    params: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    result: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    error: Option<&'a RawValue>,
}

impl SerdeMessage<'_> {
    #[inline(always)]
    fn digest(&self) -> usize {
        if self.jsonrpc != "2.0" {
            return 0;
        }
        let has_id = self.id.is_some_and(|id| id.get() != "null");
        match &self.method {
            Some(method) => {
                black_box(self.params);
                digest(method.len(), has_id)
            }
            None if self.result.is_some() != self.error.is_some() => {
                black_box((self.result, self.error));
                digest(0, has_id)
            }
            None => 0,
        }
    }
}

/// serde_json into a borrowed struct: `Cow<str>` method, `&RawValue` id/params/result/error.
pub struct SerdeBorrowed;

impl Peer for SerdeBorrowed {
    const NAME: &'static str = "serde_json-borrowed";
    const ABOUT: &'static str =
        "serde_json::from_slice into a borrowed struct (Cow<str> method, &RawValue id/params/result/error)";

    fn new(_: &Workload) -> Self {
        SerdeBorrowed
    }

    #[inline]
    fn parse(&mut self, workload: &Workload, i: usize) -> usize {
        let message = &workload.messages[i];
        match message.kind {
            Kind::Request | Kind::Response => {
                serde_json::from_slice::<SerdeMessage<'_>>(&message.bytes).map_or(0, |m| m.digest())
            }
            Kind::RequestBatch | Kind::ResponseBatch => {
                serde_json::from_slice::<Vec<SerdeMessage<'_>>>(&message.bytes)
                    .map_or(0, |batch| batch_digest(batch.iter().map(SerdeMessage::digest)))
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// jsonrpsee-types

fn jsonrpsee_has_id(id: &jsonrpsee_types::Id<'_>) -> bool {
    !matches!(id, jsonrpsee_types::Id::Null)
}

#[inline(always)]
fn jsonrpsee_request_digest(r: &jsonrpsee_types::Request<'_>) -> usize {
    black_box(&r.params);
    digest(r.method.len(), jsonrpsee_has_id(&r.id))
}

#[inline(always)]
fn jsonrpsee_response_digest(r: &jsonrpsee_types::Response<'_, &RawValue>) -> usize {
    if r.jsonrpc.is_none() {
        // jsonrpsee accepts a response without "jsonrpc"; the harness requires it.
        return 0;
    }
    black_box(&r.payload);
    digest(0, jsonrpsee_has_id(&r.id))
}

/// jsonrpsee-types' own `Request` (server side) and `Response<&RawValue>` (client side),
/// deserialized with serde_json as jsonrpsee does.
pub struct JsonrpseeTypes;

impl Peer for JsonrpseeTypes {
    const NAME: &'static str = "jsonrpsee-types";
    const ABOUT: &'static str =
        "serde_json into jsonrpsee_types::Request / Response<&RawValue> (per direction, as its server/client do)";

    fn new(_: &Workload) -> Self {
        JsonrpseeTypes
    }

    #[inline]
    fn parse(&mut self, workload: &Workload, i: usize) -> usize {
        let message = &workload.messages[i];
        let bytes = &message.bytes;
        match message.kind {
            Kind::Request => serde_json::from_slice::<jsonrpsee_types::Request<'_>>(bytes)
                .map_or(0, |r| jsonrpsee_request_digest(&r)),
            Kind::Response => serde_json::from_slice::<jsonrpsee_types::Response<'_, &RawValue>>(bytes)
                .map_or(0, |r| jsonrpsee_response_digest(&r)),
            Kind::RequestBatch => serde_json::from_slice::<Vec<jsonrpsee_types::Request<'_>>>(bytes)
                .map_or(0, |b| batch_digest(b.iter().map(jsonrpsee_request_digest))),
            Kind::ResponseBatch => {
                serde_json::from_slice::<Vec<jsonrpsee_types::Response<'_, &RawValue>>>(bytes)
                    .map_or(0, |b| batch_digest(b.iter().map(jsonrpsee_response_digest)))
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// serde_json::Value

#[inline(always)]
fn value_digest(v: &serde_json::Value) -> usize {
    let Some(object) = v.as_object() else { return 0 };
    if object.get("jsonrpc").and_then(serde_json::Value::as_str) != Some("2.0") {
        return 0;
    }
    let has_id = object.get("id").is_some_and(|id| !id.is_null());
    match object.get("method") {
        Some(serde_json::Value::String(method)) => {
            black_box(object.get("params"));
            digest(method.len(), has_id)
        }
        Some(_) => 0,
        None => {
            let (result, error) = (object.get("result"), object.get("error"));
            if result.is_some() == error.is_some() {
                return 0;
            }
            black_box((result, error));
            digest(0, has_id)
        }
    }
}

/// serde_json into a `serde_json::Value` tree.
pub struct SerdeValue;

impl Peer for SerdeValue {
    const NAME: &'static str = "serde_json-value";
    const ABOUT: &'static str = "serde_json::from_slice::<serde_json::Value>, then field look-ups";

    fn new(_: &Workload) -> Self {
        SerdeValue
    }

    #[inline]
    fn parse(&mut self, workload: &Workload, i: usize) -> usize {
        let message = &workload.messages[i];
        match serde_json::from_slice::<serde_json::Value>(&message.bytes) {
            Ok(serde_json::Value::Array(elements)) if !elements.is_empty() => {
                batch_digest(elements.iter().map(value_digest))
            }
            Ok(value) => value_digest(&value),
            Err(_) => 0,
        }
    }
}

// ---------------------------------------------------------------------------------------
// simd-json

#[inline(always)]
fn simd_borrowed_digest(v: &simd_json::BorrowedValue<'_>) -> usize {
    if v.as_object().is_none() || v.get_str("jsonrpc") != Some("2.0") {
        return 0;
    }
    let has_id = v.get("id").is_some_and(|id| !id.is_null());
    match v.get("method") {
        Some(method) => match method.as_str() {
            Some(method) => {
                black_box(v.get("params"));
                digest(method.len(), has_id)
            }
            None => 0,
        },
        None => {
            let (result, error) = (v.get("result"), v.get("error"));
            if result.is_some() == error.is_some() {
                return 0;
            }
            black_box((result, error));
            digest(0, has_id)
        }
    }
}

/// simd-json needs a mutable, padded copy of its input: the copy into `input` is part of
/// the measured work, as it is for any caller whose buffer is shared or must stay intact.
pub struct SimdBorrowed {
    input: Vec<u8>,
    buffers: simd_json::Buffers,
}

impl Peer for SimdBorrowed {
    const NAME: &'static str = "simd-json-borrowed";
    const ABOUT: &'static str =
        "copy into a reused Vec + simd_json::to_borrowed_value_with_buffers (reused Buffers)";

    fn new(workload: &Workload) -> Self {
        let largest = workload.messages.iter().map(|m| m.bytes.len()).max().unwrap_or(0);
        SimdBorrowed {
            input: Vec::with_capacity(largest),
            buffers: simd_json::Buffers::new(largest),
        }
    }

    #[inline]
    fn parse(&mut self, workload: &Workload, i: usize) -> usize {
        self.input.clear();
        self.input.extend_from_slice(&workload.messages[i].bytes);
        match simd_json::to_borrowed_value_with_buffers(&mut self.input, &mut self.buffers) {
            Ok(value) => match value.as_array() {
                Some(elements) if !elements.is_empty() => {
                    batch_digest(elements.iter().map(simd_borrowed_digest))
                }
                _ => simd_borrowed_digest(&value),
            },
            Err(_) => 0,
        }
    }
}

#[inline(always)]
fn simd_tape_digest(v: simd_json::tape::Value<'_, '_>) -> usize {
    let Some(object) = v.as_object() else { return 0 };
    if !object.get("jsonrpc").is_some_and(|j| j.as_str() == Some("2.0")) {
        return 0;
    }
    let has_id = object.get("id").is_some_and(|id| !id.is_null());
    match object.get("method") {
        Some(method) => match method.as_str() {
            Some(method) => {
                black_box(object.get("params"));
                digest(method.len(), has_id)
            }
            None => 0,
        },
        None => {
            let (result, error) = (object.get("result"), object.get("error"));
            if result.is_some() == error.is_some() {
                return 0;
            }
            black_box((result, error));
            digest(0, has_id)
        }
    }
}

/// simd-json's tape (no value tree), reusing the tape's allocation between messages.
pub struct SimdTape {
    input: Vec<u8>,
    buffers: simd_json::Buffers,
    tape: Option<simd_json::Tape<'static>>,
}

impl Peer for SimdTape {
    const NAME: &'static str = "simd-json-tape";
    const ABOUT: &'static str =
        "copy into a reused Vec + simd_json::fill_tape (reused Buffers and Tape), tape look-ups";

    fn new(workload: &Workload) -> Self {
        let largest = workload.messages.iter().map(|m| m.bytes.len()).max().unwrap_or(0);
        SimdTape {
            input: Vec::with_capacity(largest),
            buffers: simd_json::Buffers::new(largest),
            tape: Some(simd_json::Tape::null().reset()),
        }
    }

    #[inline]
    fn parse(&mut self, workload: &Workload, i: usize) -> usize {
        let SimdTape { input, buffers, tape } = self;
        input.clear();
        input.extend_from_slice(&workload.messages[i].bytes);
        let mut filled = tape.take().expect("tape is put back after each parse").reset();
        let result = match simd_json::fill_tape(input, buffers, &mut filled) {
            Ok(()) => {
                let value = filled.as_value();
                match value.as_array() {
                    Some(elements) if !elements.is_empty() => {
                        batch_digest(elements.iter().map(simd_tape_digest))
                    }
                    _ => simd_tape_digest(value),
                }
            }
            Err(_) => 0,
        };
        *tape = Some(filled.reset());
        result
    }
}

// ---------------------------------------------------------------------------------------
// sonic-rs

#[derive(Deserialize)]
struct SonicMessage<'a> {
    #[serde(borrow)]
    jsonrpc: Cow<'a, str>,
    #[serde(borrow, default)]
    id: Option<sonic_rs::LazyValue<'a>>,
    #[serde(borrow, default)]
    method: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    params: Option<sonic_rs::LazyValue<'a>>,
    #[serde(borrow, default)]
    result: Option<sonic_rs::LazyValue<'a>>,
    #[serde(borrow, default)]
    error: Option<sonic_rs::LazyValue<'a>>,
}

impl SonicMessage<'_> {
    #[inline(always)]
    fn digest(&self) -> usize {
        if self.jsonrpc != "2.0" {
            return 0;
        }
        let has_id = self.id.as_ref().is_some_and(|id| id.as_raw_str() != "null");
        match &self.method {
            Some(method) => {
                black_box(&self.params);
                digest(method.len(), has_id)
            }
            // `Option<LazyValue>` reads `"result": null` as None, so only "not both".
            None if !(self.result.is_some() && self.error.is_some()) => {
                black_box((&self.result, &self.error));
                digest(0, has_id)
            }
            None => 0,
        }
    }
}

/// sonic-rs into a borrowed struct whose id/params/result/error are `LazyValue`s.
pub struct SonicLazy;

impl Peer for SonicLazy {
    const NAME: &'static str = "sonic-rs";
    const ABOUT: &'static str =
        "sonic_rs::from_slice into a borrowed struct (Cow<str> method, LazyValue id/params/result/error)";

    fn new(_: &Workload) -> Self {
        SonicLazy
    }

    #[inline]
    fn parse(&mut self, workload: &Workload, i: usize) -> usize {
        let message = &workload.messages[i];
        match message.kind {
            Kind::Request | Kind::Response => {
                sonic_rs::from_slice::<SonicMessage<'_>>(&message.bytes).map_or(0, |m| m.digest())
            }
            Kind::RequestBatch | Kind::ResponseBatch => {
                sonic_rs::from_slice::<Vec<SonicMessage<'_>>>(&message.bytes)
                    .map_or(0, |batch| batch_digest(batch.iter().map(SonicMessage::digest)))
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Checks

/// Asserts that every parser accepts every message of `workload` with rpcwire's digest.
pub fn verify(workload: &Workload) {
    struct Verify {
        expected: Vec<usize>,
    }
    impl Visit for Verify {
        fn visit<P: Peer>(&mut self, workload: &Workload) {
            let mut peer = P::new(workload);
            for (i, expected) in self.expected.iter().enumerate() {
                // Twice: the second run uses the state (buffers, scratch) the first left.
                for round in 0..2 {
                    let got = peer.parse(workload, i);
                    assert!(
                        got == *expected,
                        "{}: parser {} returned digest {got} for message {i} (round {round}), rpcwire {expected}; \
                         message: {}",
                        workload.name,
                        P::NAME,
                        String::from_utf8_lossy(&workload.messages[i].bytes[..workload.messages[i].bytes.len().min(300)]),
                    );
                }
            }
        }
    }
    let mut rpcwire = Rpcwire::new(workload);
    let expected: Vec<usize> = (0..workload.messages.len())
        .map(|i| {
            let digest = rpcwire.parse(workload, i);
            assert!(
                digest != 0,
                "{}: rpcwire rejected message {i}: {:?}",
                workload.name,
                rpcwire::parse(&workload.messages[i].bytes).err()
            );
            digest
        })
        .collect();
    for_each(&mut Verify { expected }, workload);
}

/// Invalid inputs a strict JSON-RPC parser must reject, to show which peers validate what.
pub const PROBES: [(&str, Kind, &[u8]); 9] = [
    (
        "malformed params",
        Kind::Request,
        br#"{"jsonrpc":"2.0","id":1,"method":"m","params":[1,]}"#,
    ),
    (
        "bad literal in params",
        Kind::Request,
        br#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":tru}}"#,
    ),
    (
        "leading zero in params",
        Kind::Request,
        br#"{"jsonrpc":"2.0","id":1,"method":"m","params":[01]}"#,
    ),
    (
        "invalid UTF-8 in params",
        Kind::Request,
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":[\"\xff\"]}",
    ),
    (
        "raw control char in result",
        Kind::Response,
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"a\x01b\"}",
    ),
    (
        "bad escape in result",
        Kind::Response,
        br#"{"jsonrpc":"2.0","id":1,"result":"\q"}"#,
    ),
    (
        "jsonrpc 1.0",
        Kind::Request,
        br#"{"jsonrpc":"1.0","id":1,"method":"m","params":[]}"#,
    ),
    (
        "duplicate method",
        Kind::Request,
        br#"{"jsonrpc":"2.0","id":1,"method":"a","method":"b"}"#,
    ),
    (
        "result and error",
        Kind::Response,
        br#"{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"x"}}"#,
    ),
];

/// For each parser, which probes it rejects: (parser, [rejected?; PROBES.len()]).
pub fn probe_all() -> Vec<(&'static str, Vec<bool>)> {
    struct Probe {
        out: Vec<(&'static str, Vec<bool>)>,
    }
    impl Visit for Probe {
        fn visit<P: Peer>(&mut self, _: &Workload) {
            let rejected = PROBES
                .iter()
                .map(|(_, kind, text)| {
                    let workload = Workload {
                        name: "probe",
                        about: String::new(),
                        messages: vec![super::workloads::Message {
                            bytes: text.to_vec(),
                            kind: *kind,
                        }],
                    };
                    P::new(&workload).parse(&workload, 0) == 0
                })
                .collect();
            self.out.push((P::NAME, rejected));
        }
    }
    let empty = Workload {
        name: "probe",
        about: String::new(),
        messages: Vec::new(),
    };
    let mut probe = Probe { out: Vec::new() };
    for_each(&mut probe, &empty);
    probe.out
}
