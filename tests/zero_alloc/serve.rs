//! The zero-allocation loop (issue "Framing, pooled buffers and the zero-allocation
//! pipeline"): read a chunk into a pooled buffer → split frames → parse → route → encode →
//! frame → write performs no heap allocation per message after warm-up, for escape-free
//! messages, in both framings. Counted by a per-thread counting global allocator over more
//! than 10,000 messages.

use rpcwire::dispatch::Router;
use rpcwire::frame::Framing;
use rpcwire::pool::BufferPool;
use rpcwire::serve::Connection;

use crate::counting_alloc::{allocations, allocations_and};

fn router() -> Router {
    let mut router = Router::new();
    crate::spec_methods::register(&mut router);
    router
}

/// A stream of `n` escape-free messages in `framing`: requests with positional and named
/// params, notifications, and batches, with varying ids.
fn stream(framing: Framing, n: usize) -> Vec<u8> {
    let mut wire = bytes::BytesMut::new();
    for i in 0..n {
        let body = match i % 4 {
            0 => format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"subtract","params":[{i},23]}}"#),
            1 => format!(
                r#"{{"jsonrpc":"2.0","id":"s{i}","method":"subtract","params":{{"subtrahend":{i},"minuend":5}}}}"#
            ),
            2 => r#"{"jsonrpc":"2.0","method":"notify_hello","params":[7]}"#.to_owned(),
            _ => format!(
                r#"[{{"jsonrpc":"2.0","id":{i},"method":"sum","params":[1,2,{i}]}},{{"jsonrpc":"2.0","id":null,"method":"get_data"}}]"#
            ),
        };
        framing.encode(body.as_bytes(), &mut wire);
    }
    wire.to_vec()
}

/// Feeds `wire` to `connection` in `chunk`-byte reads, writing (here: counting and
/// clearing) the output after each read, as a server loop does. Returns output bytes.
fn pump(connection: &mut Connection, router: &Router, wire: &[u8], chunk: usize) -> usize {
    let mut written = 0;
    for piece in wire.chunks(chunk) {
        connection.input().extend_from_slice(piece);
        connection.process(router).expect("no framing error");
        written += connection.output().len();
        connection.output().clear();
    }
    written
}

#[test]
fn the_serving_loop_allocates_nothing_per_message_in_steady_state() {
    let router = router();
    for framing in [Framing::Ndjson, Framing::ContentLength] {
        for chunk in [4096, 65536, 333] {
            let pool = BufferPool::new(2, 4096, 1 << 20);
            let mut connection = Connection::new(framing, &pool);
            let wire = stream(framing, 12_000);
            pump(&mut connection, &router, &wire, chunk); // warm-up: buffers grow once
            let frames_before = connection.stats().frames;
            let (count, written) = allocations_and(|| pump(&mut connection, &router, &wire, chunk));
            let frames = connection.stats().frames - frames_before;
            assert_eq!(frames, 12_000);
            assert!(written > 12_000 * 20, "answers were written");
            assert_eq!(
                count, 0,
                "{framing:?} in {chunk}-byte reads: {count} allocations over {frames} messages"
            );
        }
    }
}

#[test]
fn serve_over_std_io_allocates_only_for_setup() {
    // `serve` creates its pool and buffers once per stream: the count must not grow with the
    // number of messages.
    let router = router();
    for framing in [Framing::Ndjson, Framing::ContentLength] {
        let small = stream(framing, 2_000);
        let large = stream(framing, 20_000);
        let mut sink = Vec::with_capacity(4 << 20);
        let run = |wire: &[u8], sink: &mut Vec<u8>| {
            sink.clear();
            allocations(|| rpcwire::serve::serve(&router, framing, wire, &mut *sink).unwrap())
        };
        run(&small, &mut sink); // first use of the thread's batch storage
        let (a, b) = (run(&small, &mut sink), run(&large, &mut sink));
        assert_eq!(a, b, "{framing:?}: allocations for 2,000 vs 20,000 messages");
        assert!(sink.len() > 20_000 * 20);
    }
}
