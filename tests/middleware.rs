//! The JSON-RPC middleware: a timeout and a concurrency limit around a service that waits
//! for the test's word, composed from outside, one inside the other and over a borrowed
//! service.
#![cfg(feature = "tokio")]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rpcwire::middleware::{
    BatchEntry, CallContext, ConcurrencyLimitLayer, Readiness, RpcCall, RpcService, TimedOut, TimeoutLayer,
};
use tokio::sync::Semaphore;
use tower_layer::Layer;

/// Answers each call or notification once the test hands out a permit; counts those begun.
struct Gated {
    gate: Arc<Semaphore>,
    begun: AtomicUsize,
}

#[derive(Debug, PartialEq)]
enum Failed {
    TimedOut(Duration),
}

impl From<TimedOut> for Failed {
    fn from(elapsed: TimedOut) -> Failed {
        Failed::TimedOut(elapsed.limit())
    }
}

impl RpcService for Gated {
    type Answer = String;
    type Error = Failed;

    async fn call(&self, call: RpcCall<'_>) -> Result<String, Failed> {
        self.begun.fetch_add(1, Ordering::SeqCst);
        self.gate.acquire().await.unwrap().forget();
        Ok(format!(
            "{}{}",
            call.method(),
            call.params().map_or("", |p| p.get())
        ))
    }

    async fn notify(&self, _: RpcCall<'_>) -> Result<(), Failed> {
        self.begun.fetch_add(1, Ordering::SeqCst);
        self.gate.acquire().await.unwrap().forget();
        Ok(())
    }
}

fn gated() -> (Gated, Arc<Semaphore>) {
    let gate = Arc::new(Semaphore::new(0));
    let service = Gated {
        gate: gate.clone(),
        begun: AtomicUsize::new(0),
    };
    (service, gate)
}

#[tokio::test]
async fn the_limit_holds_calls_past_it_until_one_ends_and_says_it_is_busy() {
    let (service, gate) = gated();
    let limited = Arc::new(ConcurrencyLimitLayer::new(2).layer(service));
    assert_eq!(limited.readiness(), Readiness::Ready);
    let mut calls = Vec::new();
    for n in 0..3 {
        let limited = limited.clone();
        calls.push(tokio::spawn(async move {
            let params = rpcwire::RawJson::new("[1]").unwrap();
            let method = format!("m{n}");
            limited.call(RpcCall::new(&method, Some(&params))).await
        }));
    }
    tokio::time::timeout(Duration::from_secs(5), async {
        while limited.get_ref().begun.load(Ordering::SeqCst) < 2 {
            tokio::task::yield_now().await;
        }
    })
    .await
    .expect("two calls begun");
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(
        limited.get_ref().begun.load(Ordering::SeqCst),
        2,
        "the third waits for a slot"
    );
    assert_eq!(limited.in_flight(), 2);
    assert_eq!(limited.readiness(), Readiness::Busy);
    gate.add_permits(3);
    let mut answers = Vec::new();
    for call in calls {
        answers.push(call.await.unwrap().unwrap());
    }
    answers.sort();
    assert_eq!(answers, ["m0[1]", "m1[1]", "m2[1]"]);
    assert_eq!(limited.in_flight(), 0);
    assert_eq!(limited.readiness(), Readiness::Ready);
}

#[tokio::test]
async fn a_timeout_ends_calls_and_notifications_with_the_services_own_error() {
    let (service, gate) = gated();
    let limit = Duration::from_millis(50);
    // Over a borrowed service: the layer wraps it for these calls only.
    let timed = TimeoutLayer::new(limit).layer(&service);
    assert_eq!(
        timed.call(RpcCall::new("late", None)).await,
        Err(Failed::TimedOut(limit))
    );
    assert_eq!(
        timed.notify(RpcCall::new("late", None)).await,
        Err(Failed::TimedOut(limit))
    );
    gate.add_permits(1);
    assert_eq!(
        timed.call(RpcCall::new("on_time", None)).await,
        Ok("on_time".to_owned())
    );
    assert_eq!(timed.readiness(), Readiness::Ready);
    assert_eq!(service.begun.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn waiting_for_a_slot_counts_against_the_timeout_outside_it() {
    let (service, gate) = gated();
    let limited = ConcurrencyLimitLayer::new(1).layer(service);
    let timed = TimeoutLayer::new(Duration::from_millis(50)).layer(&limited);
    let held = limited.call(RpcCall::new("first", None));
    let waiting = async {
        tokio::time::sleep(Duration::from_millis(10)).await;
        assert_eq!(timed.readiness(), Readiness::Busy);
        let waited = timed.notify(RpcCall::new("second", None)).await;
        gate.add_permits(1);
        waited
    };
    let (first, second) = tokio::join!(held, waiting);
    assert!(matches!(second, Err(Failed::TimedOut(_))), "{second:?}");
    assert_eq!(first, Ok("first".to_owned()));
    assert_eq!(
        limited.get_ref().begun.load(Ordering::SeqCst),
        1,
        "the notification never got a slot"
    );
}

/// A batch goes through the layers whole: one slot of the limit for all its entries, one
/// time for all of them (each entry's outcome the timeout past it), a notification's place
/// `None` once sent; the caller's id and extensions reach the service.
#[tokio::test]
async fn a_batch_takes_one_slot_and_one_time_with_an_outcome_per_entry() {
    let (service, gate) = gated();
    let limited = ConcurrencyLimitLayer::new(1).layer(service);
    let limit = Duration::from_millis(50);
    let timed = TimeoutLayer::new(limit).layer(&limited);
    let id = rpcwire::Id::from(7);
    let mut caller = http::Extensions::new();
    caller.insert("alice");
    let context = CallContext::new().with_id(&id).with_extensions(&caller);
    let call = RpcCall::new("a", None).with_context(&context);
    assert_eq!(call.id(), Some(&id));
    assert_eq!(call.extension::<&str>(), Some(&"alice"));
    assert!(call.extensions().is_some());
    let entries = [
        BatchEntry::Call(call),
        BatchEntry::Notify(RpcCall::new("b", None)),
    ];
    assert!(entries[0].is_call() && !entries[1].is_call());
    assert_eq!(entries[1].call().method(), "b");

    gate.add_permits(2);
    let outcomes = timed.batch(&entries).await;
    assert_eq!(outcomes, vec![Some(Ok("a".to_owned())), None]);
    assert_eq!(limited.in_flight(), 0, "the batch's slot is back");

    // One permit: the call is answered, the notification waits past the batch's time.
    gate.add_permits(1);
    let outcomes = timed.batch(&entries).await;
    assert_eq!(
        outcomes,
        vec![
            Some(Err(Failed::TimedOut(limit))),
            Some(Err(Failed::TimedOut(limit)))
        ]
    );
    assert_eq!(limited.get_ref().begun.load(Ordering::SeqCst), 4);
}

/// A `Peer`'s link is a service: the other side's result and error as it wrote them, and
/// down once the connection has closed.
#[tokio::test]
async fn a_peer_link_answers_as_the_other_side_wrote_and_is_down_once_closed() {
    use rpcwire::dispatch::Router;
    use rpcwire::middleware::RemoteAnswer;
    use rpcwire::transport::{Peer, StreamTransport};

    let (ours, theirs) = tokio::io::duplex(4096);
    let mut router = Router::new();
    router.raw_method("spelled", |_, reply| {
        Ok(reply.raw(&rpcwire::RawJson::new("1.50").unwrap()))
    });
    let server = Peer::new(
        StreamTransport::from_io(theirs, rpcwire::frame::Framing::Ndjson),
        router,
    );
    let client = Peer::new(
        StreamTransport::from_io(ours, rpcwire::frame::Framing::Ndjson),
        Router::new(),
    );
    let link = client.link();
    assert_eq!(link.readiness(), Readiness::Ready);
    let answer = RpcService::call(&link, RpcCall::new("spelled", None))
        .await
        .unwrap();
    assert_eq!(answer.result().unwrap().as_str(), "1.50", "the number as written");
    let RemoteAnswer::Error { error, text } =
        RpcService::call(&link, RpcCall::new("nope", None)).await.unwrap()
    else {
        panic!("an error answer");
    };
    assert_eq!(error.code().code(), -32601);
    assert!(text.unwrap().as_str().contains("-32601"), "its text kept");
    RpcService::notify(&link, RpcCall::new("note", None))
        .await
        .unwrap();
    drop(server);
    tokio::time::timeout(Duration::from_secs(5), client.closed())
        .await
        .expect("closed when the other side went");
    assert_eq!(link.readiness(), Readiness::Down);
    assert!(RpcService::call(&link, RpcCall::new("spelled", None))
        .await
        .is_err());
}
