//! Zero heap allocations per message in steady state (DESIGN.md, principle 6), proven with a
//! counting global allocator rather than claimed in a comment.
//!
//! The allocator counts allocations (alloc, alloc_zeroed, realloc) made by the current
//! thread, so tests running in parallel do not disturb each other. One test shows that the
//! counter does see allocations (an escaped method must be unescaped into a new `String`).

use bytes::Bytes;
use rpcwire::{BatchScratch, Message, Parsed, ParsedFrame, Parser};

use crate::counting_alloc::allocations;

const W1_REQUEST: &[u8] = br#"{"jsonrpc":"2.0","id":42,"method":"eth_getBalance","params":["0x407d73d8a49eeb85d32cf465507dd71d507100c1","latest"]}"#;
const NAMED_REQUEST: &[u8] =
    br#"{"jsonrpc":"2.0","id":"req-7","method":"subtract","params":{"minuend":42,"subtrahend":23,"note":"x"}}"#;
const NOTIFICATION: &[u8] =
    br#"{"jsonrpc":"2.0","method":"textDocument/didChange","params":{"uri":"file:///a.rs","version":3}}"#;
const SUCCESS: &[u8] = br#"{"jsonrpc":"2.0","id":42,"result":"0x0234c8a3397aab58"}"#;
const OBJECT_RESULT: &[u8] =
    br#"{"jsonrpc":"2.0","id":7,"result":{"number":"0x1b4","hash":null,"transactions":[]}}"#;
const ERROR: &[u8] = br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#;
const ERROR_WITH_DATA: &[u8] =
    br#"{"jsonrpc":"2.0","id":"x","error":{"code":3,"message":"execution reverted","data":"0x4e487b71"}}"#;

#[test]
fn counter_sees_allocations() {
    assert!(allocations(|| vec![1u8; 16]) >= 1);
    assert_eq!(allocations(|| [1u8; 16]), 0);
    // An escaped method is unescaped into a new String: that allocates.
    let escaped = br#"{"jsonrpc":"2.0","id":1,"method":"eth_get\u0042alance","params":[]}"#;
    assert!(allocations(|| rpcwire::parse(escaped).unwrap()) >= 1);
    // And so does an escaped string id when asked for its value.
    let message = rpcwire::parse(br#"{"jsonrpc":"2.0","id":"a\nb","method":"m"}"#)
        .unwrap()
        .single()
        .unwrap();
    assert!(allocations(|| message.id().unwrap().as_str()) >= 1);
}

#[test]
fn parsing_escape_free_messages_allocates_nothing() {
    for input in [
        W1_REQUEST,
        NAMED_REQUEST,
        NOTIFICATION,
        SUCCESS,
        OBJECT_RESULT,
        ERROR,
        ERROR_WITH_DATA,
    ] {
        let count = allocations(|| rpcwire::parse(input).unwrap());
        assert_eq!(count, 0, "{}", String::from_utf8_lossy(input));
        let parser = Parser::default();
        assert_eq!(allocations(|| parser.parse(input).unwrap()), 0);
    }
}

#[test]
fn reading_a_request_allocates_nothing() {
    let parsed = rpcwire::parse(W1_REQUEST).unwrap();
    let mut seen = 0usize;
    let count = allocations(|| {
        let Parsed::Single(Message::Request(request)) = &parsed else {
            panic!()
        };
        seen += request.method().len();
        seen += request.id().as_u64().unwrap() as usize;
        seen += request.id().raw().len();
        let params = request.params().unwrap();
        for value in params.iter() {
            let text: &str = value.decode().unwrap();
            seen += text.len();
        }
        seen += params.at(1).unwrap().get().len();
        let (address, block): (&str, &str) = params.decode().unwrap();
        seen += address.len() + block.len();
        seen += usize::from(params.is_array()) + params.len();
    });
    assert_eq!(count, 0);
    assert!(seen > 42 + 14);

    let parsed = rpcwire::parse(NAMED_REQUEST).unwrap();
    let count = allocations(|| {
        let Parsed::Single(Message::Request(request)) = &parsed else {
            panic!()
        };
        let params = request.params().unwrap();
        let minuend: i64 = params.get("minuend").unwrap().decode().unwrap();
        let note_raw = params.get("note").unwrap();
        let note: &str = note_raw.decode().unwrap();
        let id = request.id().as_str().unwrap();
        let members = params.members().count();
        (minuend, note.len(), id.len(), members)
    });
    assert_eq!(count, 0);

    #[derive(serde::Deserialize)]
    struct Subtract<'a> {
        minuend: i64,
        subtrahend: i64,
        note: &'a str,
    }
    let Parsed::Single(Message::Request(request)) = &parsed else {
        panic!()
    };
    let count = allocations(|| {
        let p: Subtract<'_> = request.params().unwrap().decode().unwrap();
        p.minuend - p.subtrahend + p.note.len() as i64
    });
    assert_eq!(count, 0);
}

#[test]
fn reading_notifications_and_responses_allocates_nothing() {
    let parsed = rpcwire::parse(NOTIFICATION).unwrap();
    let count = allocations(|| {
        let Parsed::Single(Message::Notification(n)) = &parsed else {
            panic!()
        };
        let version: u32 = n.params().unwrap().get("version").unwrap().decode().unwrap();
        n.method().len() + version as usize
    });
    assert_eq!(count, 0);

    for input in [SUCCESS, ERROR, ERROR_WITH_DATA] {
        let parsed = rpcwire::parse(input).unwrap();
        let count = allocations(|| {
            let Parsed::Single(Message::Response(r)) = &parsed else {
                panic!()
            };
            let id = r.id().raw().len();
            match r.result() {
                Some(result) => id + result.decode::<&str>().unwrap().len(),
                None => {
                    let e = r.error_object().unwrap();
                    let data = e.data().map_or(0, |d| d.decode::<&str>().unwrap().len());
                    id + e.message().len() + e.code().code() as usize + data
                }
            }
        });
        assert_eq!(count, 0, "{}", String::from_utf8_lossy(input));
    }
}

#[test]
fn batches_with_a_warm_scratch_allocate_nothing() {
    let parser = Parser::default();
    let mut scratch = BatchScratch::default();
    let batch = [
        &b"["[..],
        W1_REQUEST,
        b",",
        NOTIFICATION,
        b",",
        SUCCESS,
        b",",
        ERROR,
        b",",
        NAMED_REQUEST,
        b"]",
    ]
    .concat();
    // Warm up: the scratch grows to this batch's size once.
    assert_eq!(
        parser
            .parse_reusing(&batch, &mut scratch)
            .unwrap()
            .batch()
            .unwrap()
            .len(),
        5
    );
    let count = allocations(|| {
        let parsed = parser.parse_reusing(&batch, &mut scratch).unwrap();
        let Parsed::Batch(b) = parsed else { panic!() };
        b.iter()
            .map(|m| m.unwrap().method().map_or(0, str::len))
            .sum::<usize>()
    });
    assert_eq!(count, 0);
    // A smaller batch reuses the same storage.
    let small = [&b"["[..], W1_REQUEST, b"]"].concat();
    assert_eq!(
        allocations(|| parser
            .parse_reusing(&small, &mut scratch)
            .map(|p| p.batch().is_some())),
        0
    );
    // Single messages never needed the scratch.
    let mut empty = BatchScratch::default();
    assert_eq!(
        allocations(|| parser.parse_reusing(W1_REQUEST, &mut empty).is_ok()),
        0
    );
}

#[test]
fn an_owned_frame_of_one_message_allocates_nothing() {
    let count = allocations(|| {
        let frame = ParsedFrame::parse(Bytes::from_static(W1_REQUEST)).unwrap();
        let method_len = frame.view().single().unwrap().method().unwrap().len();
        (frame, method_len)
    });
    assert_eq!(count, 0);
    let parser = Parser::default();
    assert_eq!(
        allocations(|| parser.parse_frame(Bytes::from_static(ERROR)).unwrap()),
        0
    );
}

/// Requests with varying ids through the router's typed path end to end (parse → route →
/// serde decode → handler → encode), singles and batches with notifications: nothing is
/// allocated once the output buffer and the per-thread batch storage have grown.
#[test]
fn routing_requests_allocates_nothing_in_steady_state() {
    let mut router = rpcwire::dispatch::Router::new();
    crate::spec_methods::register(&mut router);
    let inputs: Vec<Vec<u8>> = (0..64)
        .map(|i| match i % 3 {
            0 => format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"subtract","params":[{},23]}}"#, i * 7).into_bytes(),
            1 => format!(r#"{{"jsonrpc":"2.0","id":"r{i}","method":"subtract","params":{{"minuend":{i},"subtrahend":2}}}}"#).into_bytes(),
            _ => format!(
                r#"[{{"jsonrpc":"2.0","id":{i},"method":"sum","params":[1,2,{i}]}},{{"jsonrpc":"2.0","method":"notify_hello","params":[7]}},{{"jsonrpc":"2.0","id":null,"method":"get_data"}}]"#
            )
            .into_bytes(),
        })
        .collect();
    let mut out = bytes::BytesMut::with_capacity(4096);
    let mut written = 0usize;
    let mut run = |rounds: usize| {
        for _ in 0..rounds {
            for input in &inputs {
                out.clear();
                assert!(router.handle(input, &mut out));
                written += out.len();
            }
        }
    };
    run(2); // warm-up: the per-thread batch storage grows once
    let count = allocations(|| run(160)); // 10,240 inputs
    assert_eq!(count, 0, "allocations over {} inputs", 160 * inputs.len());
    assert!(written > 160 * 64 * 30);
}
