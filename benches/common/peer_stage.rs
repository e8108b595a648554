//! Round trips between two in-process `Peer`s over an in-memory duplex stream: the client
//! calls `subtract`, the server's router answers; calls/s and per-call latency.
//!
//! Needs the `tokio` feature (`cargo bench --bench report --features tokio`).
#![allow(dead_code)]

#[cfg(feature = "tokio")]
use {
    hdrhistogram::Histogram,
    rpcwire::dispatch::Router,
    rpcwire::frame::Framing,
    rpcwire::transport::{Peer, StreamTransport},
    std::sync::atomic::{AtomicUsize, Ordering},
    std::sync::Arc,
    std::time::Instant,
};

/// The size of each direction's in-memory pipe.
pub const DUPLEX_BYTES: usize = 256 * 1024;

/// One configuration's outcome.
#[derive(Clone, Debug, serde::Serialize)]
pub struct PeerRun {
    pub framing: &'static str,
    pub in_flight: usize,
    pub calls: usize,
    pub calls_per_s: f64,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub p999_ns: u64,
    pub max_ns: u64,
}

#[cfg(feature = "tokio")]
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

/// Makes `calls` `subtract` calls from one peer to the other with `in_flight` callers at
/// once (each waits for its answer before the next call), checks every answer, and
/// returns the throughput and the latency of each call (send to decoded answer).
#[cfg(feature = "tokio")]
pub fn round_trip(calls: usize, in_flight: usize, framing: Framing) -> PeerRun {
    runtime().block_on(async move {
        let (a, b) = tokio::io::duplex(DUPLEX_BYTES);
        let mut router = Router::new();
        router.method("subtract", |(x, y): (i64, i64)| Ok(x - y));
        let server = Peer::new(StreamTransport::from_io(a, framing), router);
        let client = Peer::builder()
            .call_capacity(in_flight.max(1))
            .start(StreamTransport::from_io(b, framing), Router::new());

        let next = Arc::new(AtomicUsize::new(0));
        let started = Instant::now();
        let workers: Vec<_> = (0..in_flight.max(1))
            .map(|_| {
                let (client, next) = (client.clone(), next.clone());
                tokio::spawn(async move {
                    let mut latencies = Vec::with_capacity(calls / in_flight.max(1) + 1);
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= calls {
                            return latencies;
                        }
                        let (x, y) = (i as i64 * 3, 42i64);
                        let sent = Instant::now();
                        let difference: i64 = client.call("subtract", [x, y]).await.expect("call succeeds");
                        latencies.push(sent.elapsed().as_nanos() as u64);
                        assert_eq!(difference, x - y, "wrong answer to call {i}");
                    }
                })
            })
            .collect();
        let mut histogram = Histogram::<u64>::new(3).expect("histogram");
        for worker in workers {
            for ns in worker.await.expect("worker") {
                histogram.record(ns.max(1)).expect("record");
            }
        }
        let elapsed = started.elapsed();
        client.close().await;
        server.closed().await;
        PeerRun {
            framing: framing.as_str(),
            in_flight,
            calls,
            calls_per_s: calls as f64 / elapsed.as_secs_f64(),
            p50_ns: histogram.value_at_quantile(0.50),
            p99_ns: histogram.value_at_quantile(0.99),
            p999_ns: histogram.value_at_quantile(0.999),
            max_ns: histogram.max(),
        }
    })
}
