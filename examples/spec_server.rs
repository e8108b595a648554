//! The JSON-RPC 2.0 specification's example server: reads messages from stdin, answers on
//! stdout, exits 0 at the end of input.
//!
//! ```sh
//! cargo run --release --example spec_server -- --framing ndjson
//! cargo run --release --example spec_server -- --framing content-length [--max-frame BYTES]
//! cargo run --release --features tokio --example spec_server -- --framing content-length --peer
//! ```
//!
//! Methods, as in the specification's examples: `subtract` (`[minuend, subtrahend]` or
//! `{"minuend": a, "subtrahend": b}`), `sum` (an array of integers), `get_data` (no params →
//! `["hello", 5]`), `echo` (returns its params unchanged); `update`, `foobar`,
//! `notify_hello`, `notify_sum` are accepted as notifications. Anything else is -32601.
//! A line or frame over the size limit gets an error answer with id `null`, and the server
//! goes on with the next one. The loop is `rpcwire::serve`: pooled buffers, no allocation
//! per escape-free message in steady state. With `--peer` (`tokio` feature) the same router
//! serves through `rpcwire::transport::Peer` over the `stdio` transport instead.

#[path = "common/spec_methods.rs"]
mod spec_methods;

use std::process::ExitCode;

use rpcwire::dispatch::Router;
use rpcwire::frame::Framing;
use rpcwire::Limits;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const USAGE: &str = "usage: spec_server --framing ndjson|content-length [--max-frame BYTES] [--peer]";

struct Arguments {
    framing: Framing,
    max_frame: usize,
    peer: bool,
}

fn arguments() -> Result<Arguments, String> {
    let mut framing = None;
    let mut max_frame = Limits::default().max_size();
    let mut peer = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--framing" => {
                let value = args.next().ok_or("--framing needs a value")?;
                framing = Some(
                    value
                        .parse::<Framing>()
                        .map_err(|e| format!("--framing {value}: {e}"))?,
                );
            }
            "--max-frame" => {
                let value = args.next().ok_or("--max-frame needs a value")?;
                max_frame = value.parse().map_err(|e| format!("--max-frame {value}: {e}"))?;
            }
            "--peer" if cfg!(feature = "tokio") => peer = true,
            "--peer" => return Err("--peer needs the tokio feature (cargo run --features tokio …)".into()),
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(Arguments {
        framing: framing.ok_or("--framing is required")?,
        max_frame,
        peer,
    })
}

/// Serves stdin/stdout through a `Peer` until the input ends.
#[cfg(feature = "tokio")]
fn serve_with_peer(router: Router, framing: Framing, max_frame: usize) -> ExitCode {
    use rpcwire::transport::{stdio, Peer};
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    runtime.block_on(async move {
        let peer = Peer::new(stdio(framing).with_max_frame(max_frame), router);
        let reason = peer.closed().await;
        if reason.is_error() {
            eprintln!("spec_server: {reason}");
            ExitCode::FAILURE
        } else {
            ExitCode::SUCCESS
        }
    })
}

#[cfg(not(feature = "tokio"))]
fn serve_with_peer(_: Router, _: Framing, _: usize) -> ExitCode {
    unreachable!("--peer is refused without the tokio feature")
}

fn main() -> ExitCode {
    let Arguments {
        framing,
        max_frame,
        peer,
    } = match arguments() {
        Ok(parsed) => parsed,
        Err(message) => {
            if !message.is_empty() {
                eprintln!("spec_server: {message}");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let mut router = Router::with_limits(Limits::default().with_max_size(max_frame));
    spec_methods::register(&mut router);
    if peer {
        return serve_with_peer(router, framing, max_frame);
    }
    let stdin = std::io::stdin().lock();
    let stdout = std::io::stdout().lock();
    match rpcwire::serve::serve(&router, framing, stdin, stdout) {
        Ok(_) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("spec_server: {error}");
            ExitCode::FAILURE
        }
    }
}
