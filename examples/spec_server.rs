//! The JSON-RPC 2.0 specification's example server: reads messages from stdin, answers on
//! stdout, exits 0 at the end of input.
//!
//! ```sh
//! cargo run --release --example spec_server -- --framing ndjson
//! cargo run --release --example spec_server -- --framing content-length [--max-frame BYTES]
//! cargo run --release --features tokio --example spec_server -- --framing content-length --peer
//! cargo run --release --features tokio --example spec_server -- --framing content-length --peer \
//!     --max-concurrent 8 --cancel lsp
//! ```
//!
//! Methods, as in the specification's examples: `subtract` (`[minuend, subtrahend]` or
//! `{"minuend": a, "subtrahend": b}`), `sum` (an array of integers), `get_data` (no params →
//! `["hello", 5]`), `echo` (returns its params unchanged); `update`, `foobar`,
//! `notify_hello`, `notify_sum` are accepted as notifications. Anything else is -32601.
//! A line or frame over the size limit gets an error answer with id `null`, and the server
//! goes on with the next one. The loop is `rpcwire::serve`: pooled buffers, no allocation
//! per escape-free message in steady state. With `--peer` (`tokio` feature) the same router
//! serves through `rpcwire::transport::Peer` over the `stdio` transport instead, with one
//! method more, `sleep` (`[ms]`: answers `ms` after that many milliseconds, asynchronously,
//! unless cancelled), and these settings of the peer: `--max-concurrent N` handlers at once
//! (default 64), `--max-queued N` requests waiting for one (default 1,024; past both, a
//! request is answered -32003 "server overloaded" at once), `--cancel lsp|mcp|none` (how the
//! other side cancels: `$/cancelRequest` answered -32800, `notifications/cancelled` not
//! answered, or not at all; default none).

#[path = "common/spec_methods.rs"]
mod spec_methods;

use std::process::ExitCode;

use rpcwire::dispatch::Router;
use rpcwire::frame::Framing;
use rpcwire::Limits;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const USAGE: &str = "usage: spec_server --framing ndjson|content-length [--max-frame BYTES] \
                     [--peer [--max-concurrent N] [--max-queued N] [--cancel lsp|mcp|none]]";

struct Arguments {
    framing: Framing,
    max_frame: usize,
    peer: Option<PeerSettings>,
}

/// The `Peer`'s settings (`--peer` only).
#[derive(Default)]
struct PeerSettings {
    max_concurrent: Option<usize>,
    max_queued: Option<usize>,
    cancel: Option<String>,
}

fn arguments() -> Result<Arguments, String> {
    let mut framing = None;
    let mut max_frame = Limits::default().max_size();
    let mut peer = false;
    let mut settings = PeerSettings::default();
    let number = |flag: &str, value: Option<String>| -> Result<usize, String> {
        let value = value.ok_or(format!("{flag} needs a value"))?;
        value.parse().map_err(|e| format!("{flag} {value}: {e}"))
    };
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
            "--max-concurrent" => settings.max_concurrent = Some(number(&arg, args.next())?),
            "--max-queued" => settings.max_queued = Some(number(&arg, args.next())?),
            "--cancel" => {
                let value = args.next().ok_or("--cancel needs a value")?;
                if !["lsp", "mcp", "none"].contains(&value.as_str()) {
                    return Err(format!("--cancel {value}: lsp, mcp or none"));
                }
                settings.cancel = Some(value);
            }
            "--peer" => return Err("--peer needs the tokio feature (cargo run --features tokio …)".into()),
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    let tuned =
        settings.max_concurrent.is_some() || settings.max_queued.is_some() || settings.cancel.is_some();
    if tuned && !peer {
        return Err("--max-concurrent, --max-queued and --cancel are settings of --peer".into());
    }
    Ok(Arguments {
        framing: framing.ok_or("--framing is required")?,
        max_frame,
        peer: peer.then_some(settings),
    })
}

/// Serves stdin/stdout through a `Peer` until the input ends.
#[cfg(feature = "tokio")]
fn serve_with_peer(
    mut router: Router,
    framing: Framing,
    max_frame: usize,
    settings: PeerSettings,
) -> ExitCode {
    use rpcwire::dispatch::RequestContext;
    use rpcwire::transport::{stdio, CancelProtocol, Peer};
    router.method_async_with_context("sleep", |(ms,): (u64,), cx: RequestContext| async move {
        tokio::select! {
            () = tokio::time::sleep(std::time::Duration::from_millis(ms)) => Ok(ms),
            // The peer answers a cancelled request itself (or not, for MCP); this only
            // stops the timer early.
            () = cx.cancelled() => Err(rpcwire::ErrorObject::new(-32800, "cancelled")),
        }
    });
    let mut builder = Peer::builder().cancel_protocol(match settings.cancel.as_deref() {
        Some("lsp") => CancelProtocol::Lsp,
        Some("mcp") => CancelProtocol::Mcp,
        _ => CancelProtocol::None,
    });
    if let Some(limit) = settings.max_concurrent {
        builder = builder.max_concurrent_requests(limit);
    }
    if let Some(frames) = settings.max_queued {
        builder = builder.max_queued_requests(frames);
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    runtime.block_on(async move {
        let peer = builder.start(stdio(framing).with_max_frame(max_frame), router);
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
fn serve_with_peer(_: Router, _: Framing, _: usize, _: PeerSettings) -> ExitCode {
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
    if let Some(settings) = peer {
        return serve_with_peer(router, framing, max_frame, settings);
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
