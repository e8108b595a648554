//! In-memory upstreams for the proxy tests: a healthy one (a `Peer` serving a few methods on
//! the other end of a duplex), one whose connections are refused, and faulty ones that drop
//! the connection with a request under way or never answer.
#![allow(dead_code)] // each test binary uses some of them

use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rpcwire::dispatch::{NoParams, Router};
use rpcwire::frame::Framing;
use rpcwire::proxy::Upstream;
use rpcwire::transport::{FrameReceiver, Peer, StreamTransport, Transport};
use rpcwire::ErrorObject;
use tokio::io::{DuplexStream, ReadHalf, WriteHalf};

type Duplex = StreamTransport<ReadHalf<DuplexStream>, WriteHalf<DuplexStream>>;

/// A healthy upstream: `whoami` answers its name, `subtract` subtracts, `slow` answers after
/// 200 ms, `busy` answers -32000 "server busy" (a code a policy may retry; -32005 would be a
/// rate limit, which pauses the upstream).
pub fn healthy(name: &'static str) -> Upstream {
    Upstream::new(name, move || {
        let (ours, theirs) = tokio::io::duplex(1 << 16);
        let mut router = Router::new();
        router.method("whoami", move |_: NoParams| Ok(name));
        router.method("subtract", |(a, b): (i64, i64)| Ok(a - b));
        router.method("busy", |_: NoParams| -> Result<(), _> {
            Err(ErrorObject::new(-32000, "server busy"))
        });
        router.method_async("slow", move |_: NoParams| async move {
            tokio::time::sleep(Duration::from_millis(200)).await;
            Ok(name)
        });
        let server = Peer::new(StreamTransport::from_io(theirs, Framing::Ndjson), router);
        tokio::spawn(async move { server.closed().await });
        Peer::new(StreamTransport::from_io(ours, Framing::Ndjson), Router::new())
    })
}

/// An upstream whose every connection is refused; counts the attempts to connect.
pub fn refused(name: &'static str, connects: Arc<AtomicUsize>) -> Upstream {
    Upstream::new(name, move || {
        connects.fetch_add(1, Ordering::SeqCst);
        Peer::builder().connect(
            async { Err::<Duplex, _>(io::Error::from(io::ErrorKind::ConnectionRefused)) },
            Router::new(),
        )
    })
}

/// An upstream that reads a request and then drops the connection (`answers: false`), or
/// reads requests and never answers them (`answers: true` keeps the connection open, silent).
pub fn faulty(name: &'static str, drops: bool) -> Upstream {
    Upstream::new(name, move || {
        let (ours, theirs) = tokio::io::duplex(1 << 16);
        tokio::spawn(async move {
            let (mut receiver, sender) = StreamTransport::from_io(theirs, Framing::Ndjson).split();
            let _keep = sender;
            while let Ok(Some(_frame)) = receiver.receive().await {
                if drops {
                    return;
                }
            }
        });
        Peer::new(StreamTransport::from_io(ours, Framing::Ndjson), Router::new())
    })
}
