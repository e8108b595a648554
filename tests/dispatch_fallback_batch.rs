//! `Fallback::batch` (`dispatch`): the elements of a batch a router's fallback serves are
//! handed to it together, and whatever the fallback does wrong — too few answers, a whole
//! answer for a batch it did not get whole, a panic, a future that never ends past the
//! handler timeout — every request still gets exactly one answer, with its id, in order.
#![cfg(feature = "tokio")]

use std::time::Duration;

use bytes::{Bytes, BytesMut};
use rpcwire::dispatch::{
    Fallback, FallbackAnswer, FallbackBatchAnswer, FallbackBatchFuture, FallbackCall, FallbackFuture,
    NoParams, Router,
};
use rpcwire::frame::Framing;
use rpcwire::transport::{Peer, StreamTransport};
use serde_json::Value;

/// How the fallback misbehaves with a batch.
#[derive(Clone, Copy)]
enum Way {
    /// Answers only the first call.
    TooFew,
    /// Answers whole, whether or not it got the batch whole.
    Whole,
    /// Panics before it starts.
    PanicAtOnce,
    /// Panics in its future.
    PanicLater,
    /// Never answers.
    Never,
}

struct Misbehaving(Way);

impl Fallback for Misbehaving {
    fn call(&self, _: FallbackCall<'_>) -> FallbackFuture {
        Box::pin(async { FallbackAnswer::Result(rpcwire::RawJson::new("\"alone\"").unwrap().into()) })
    }

    fn batch(&self, calls: &[FallbackCall<'_>]) -> Option<FallbackBatchFuture> {
        let whole = calls[0].whole_batch().is_some();
        Some(match self.0 {
            Way::TooFew => Box::pin(async {
                FallbackBatchAnswer::Each(vec![FallbackAnswer::Result(
                    rpcwire::RawJson::new("1").unwrap().into(),
                )])
            }),
            Way::Whole => {
                let _ = whole;
                Box::pin(async {
                    FallbackBatchAnswer::Whole(Bytes::from_static(
                        br#"[{"jsonrpc":"2.0","id":1,"result":"whole"}]"#,
                    ))
                })
            }
            Way::PanicAtOnce => panic!("the batch cannot start"),
            Way::PanicLater => Box::pin(async { panic!("the batch failed") }),
            Way::Never => Box::pin(std::future::pending()),
        })
    }
}

fn router(way: Way) -> Router {
    let mut router = Router::new();
    router.method("local", |_: NoParams| Ok("here"));
    router.fallback(Misbehaving(way));
    router
}

async fn answer(router: &Router, batch: &str) -> Value {
    let mut out = BytesMut::new();
    router.handle_async(batch.as_bytes(), &mut out).await;
    serde_json::from_slice(&out).unwrap()
}

const BATCH: &str = r#"[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","id":2,"method":"local"},{"jsonrpc":"2.0","id":3,"method":"b"}]"#;

#[tokio::test]
async fn every_request_gets_one_answer_whatever_the_fallback_does() {
    // Too few: the missing one is -32603; the local method answered in its place.
    let answers = answer(&router(Way::TooFew), BATCH).await;
    assert_eq!(answers[0]["result"], 1);
    assert_eq!(answers[1]["result"], "here");
    assert_eq!(
        (answers[2]["id"].as_u64(), answers[2]["error"]["code"].as_i64()),
        (Some(3), Some(-32603))
    );

    // A whole answer for a batch it did not get whole (a local method is in it): -32603 each.
    let answers = answer(&router(Way::Whole), BATCH).await;
    assert_eq!(answers[1]["result"], "here");
    for index in [0, 2] {
        assert_eq!(answers[index]["error"]["code"], -32603, "{answers}");
    }
    // Got whole: its whole answer is the batch's.
    let whole = r#"[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"n"}]"#;
    assert_eq!(answer(&router(Way::Whole), whole).await[0]["result"], "whole");

    // A panic, before or in the future: -32603 for each, the local one answered.
    for way in [Way::PanicAtOnce, Way::PanicLater] {
        let answers = answer(&router(way), BATCH).await;
        assert_eq!(answers[1]["result"], "here");
        for index in [0, 2] {
            let message = answers[index]["error"]["data"].as_str().unwrap();
            assert!(message.contains("panicked"), "{answers}");
        }
    }
}

#[tokio::test]
async fn a_batch_that_never_ends_is_answered_at_the_handler_timeout() {
    let (ours, theirs) = tokio::io::duplex(1 << 16);
    let server = Peer::builder().handler_timeout(Duration::from_millis(100)).start(
        StreamTransport::from_io(theirs, Framing::Ndjson),
        router(Way::Never),
    );
    let client = Peer::new(StreamTransport::from_io(ours, Framing::Ndjson), Router::new());
    let params = rpcwire::RawJson::new("[]").unwrap();
    let answers = client
        .batch_raw(&[
            rpcwire::transport::BatchEntry::call("a", Some(&params)),
            rpcwire::transport::BatchEntry::call("local", None),
        ])
        .await
        .unwrap();
    let timed_out = answers[0].as_ref().unwrap_err().to_string();
    assert!(timed_out.contains("timed out"), "{timed_out}");
    assert_eq!(&answers[1].as_ref().unwrap()[..], br#""here""#);
    drop(server);
}
