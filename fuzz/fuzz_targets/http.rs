//! Any bytes as what a client sends on an HTTP connection, served the way `HttpServer`
//! serves one (hyper's HTTP/1 and HTTP/2 detection, upgrades on, `HttpService` behind it),
//! in any reads: never a panic, the connection ends when the client is done, whatever
//! comes back is HTTP, and every `200` answer to a JSON-RPC POST is a JSON-RPC response or
//! batch of responses.
//!
//! The first byte is unused (room for options), the next up to eight the read sizes; the
//! rest is the stream. Requests that are valid HTTP/1.1 are found quickly from the seeds.
#![no_main]

// Only `split_input` is used here.
#[allow(dead_code)]
#[path = "common/chunked.rs"]
mod chunked;
#[path = "common/client_side.rs"]
mod client_side;

use std::time::Duration;

use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;
use libfuzzer_sys::fuzz_target;
use rpcwire::dispatch::{NoParams, Router};
use rpcwire::transport::http::HttpService;

fn service() -> HttpService {
    let mut router = Router::new();
    router.method("add", |(a, b): (i64, i64)| Ok(a.wrapping_add(b)));
    router.method("ping", |_: NoParams| Ok("pong"));
    HttpService::new(router)
        .with_max_body(4096)
        .with_body_timeout(Duration::from_secs(5))
}

/// Checks each `HTTP/1.1 200` answer with a JSON body; returns how many there were.
fn check_answers(written: &[u8]) -> usize {
    let mut checked = 0;
    let mut rest = written;
    while let Some(start) = find(rest, b"HTTP/1.1 ") {
        rest = &rest[start..];
        let Some(head_end) = find(rest, b"\r\n\r\n") else {
            break;
        };
        let head = std::str::from_utf8(&rest[..head_end]).expect("hyper writes an ASCII head");
        let body_start = head_end + 4;
        let length = head
            .lines()
            .find_map(|line| {
                line.to_ascii_lowercase()
                    .strip_prefix("content-length: ")
                    .map(str::to_owned)
            })
            .and_then(|n| n.trim().parse::<usize>().ok());
        if head.starts_with("HTTP/1.1 200")
            && head
                .to_ascii_lowercase()
                .contains("content-type: application/json")
        {
            let length = length.expect("a 200 JSON answer has a length");
            let body = &rest[body_start..body_start + length];
            let parsed = rpcwire::parse(body).unwrap_or_else(|e| panic!("answer body {body:?}: {e}"));
            match parsed {
                rpcwire::Parsed::Single(message) => assert!(matches!(message, rpcwire::Message::Response(_))),
                rpcwire::Parsed::Batch(batch) => {
                    for element in &batch {
                        assert!(matches!(element, Ok(rpcwire::Message::Response(_))), "{body:?}");
                    }
                }
            }
            checked += 1;
        }
        rest = &rest[body_start + length.unwrap_or(0)..];
    }
    checked
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

async fn exchange(stream: &[u8], sizes: &[usize]) {
    let (server, client) = tokio::io::duplex(1 << 16);
    let connection = tokio::spawn(async move {
        let mut builder = auto::Builder::new(TokioExecutor::new());
        builder.http1().keep_alive(true);
        let _ = builder
            .serve_connection_with_upgrades(TokioIo::new(server), TowerToHyperService::new(service()))
            .await;
    });
    let reader = client_side::send_in_reads(client, stream, sizes).await;
    // A WebSocket upgrade's peer and a body still awaited end by themselves; bounded here.
    let finished = tokio::time::timeout(Duration::from_secs(60), async {
        let written = reader.await.unwrap();
        connection.await.unwrap();
        written
    })
    .await
    .expect("the connection ends after the client is done");
    let answers = check_answers(&finished);
    if std::env::var_os("RPCWIRE_FUZZ_DEBUG").is_some() {
        eprintln!(
            "{answers} JSON-RPC answers checked in {:?}",
            String::from_utf8_lossy(&finished)
        );
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((_, sizes, stream)) = chunked::split_input(data) else {
        return;
    };
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap()
        .block_on(exchange(stream, &sizes));
});
