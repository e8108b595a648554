//! The JSON-RPC 2.0 specification's example server: reads messages from stdin, answers on
//! stdout, exits 0 at the end of input.
//!
//! ```sh
//! cargo run --release --example spec_server -- --framing ndjson
//! cargo run --release --example spec_server -- --framing content-length [--max-frame BYTES]
//! ```
//!
//! Methods, as in the specification's examples: `subtract` (`[minuend, subtrahend]` or
//! `{"minuend": a, "subtrahend": b}`), `sum` (an array of integers), `get_data` (no params →
//! `["hello", 5]`), `echo` (returns its params unchanged); `update`, `foobar`,
//! `notify_hello`, `notify_sum` are accepted as notifications. Anything else is -32601.
//! A line or frame over the size limit gets an error answer with id `null`, and the server
//! goes on with the next one. The loop is `rpcwire::serve`: pooled buffers, no allocation
//! per escape-free message in steady state.

#[path = "common/spec_methods.rs"]
mod spec_methods;

use std::process::ExitCode;

use rpcwire::dispatch::Router;
use rpcwire::frame::Framing;
use rpcwire::Limits;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const USAGE: &str = "usage: spec_server --framing ndjson|content-length [--max-frame BYTES]";

fn arguments() -> Result<(Framing, usize), String> {
    let mut framing = None;
    let mut max_frame = Limits::default().get_max_size();
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
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok((framing.ok_or("--framing is required")?, max_frame))
}

fn main() -> ExitCode {
    let (framing, max_frame) = match arguments() {
        Ok(parsed) => parsed,
        Err(message) => {
            if !message.is_empty() {
                eprintln!("spec_server: {message}");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let mut router = Router::with_limits(Limits::default().max_size(max_frame));
    spec_methods::register(&mut router);
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
