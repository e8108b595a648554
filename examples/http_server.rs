//! The JSON-RPC 2.0 specification's example methods served over HTTP (`http` feature):
//! POST a message or a batch to `/` with `Content-Type: application/json`, or open a
//! WebSocket at `/` on the same port (one message or batch per text message).
//!
//! ```sh
//! cargo run --release --features http --example http_server -- [--listen 127.0.0.1:8545] [--max-body BYTES] \
//!     [--tls-cert cert.pem --tls-key key.pem]
//! curl -s localhost:8545 -H 'content-type: application/json' \
//!      -d '{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}'
//! ```
//!
//! Methods as in `spec_server`: `subtract`, `sum`, `get_data`, `echo`; `update`, `foobar`,
//! `notify_hello`, `notify_sum` as notifications. Prints `listening on ADDRESS` once it
//! accepts connections (with `--listen 127.0.0.1:0` the port the system chose), and serves
//! until it is stopped. With `--tls-cert` and `--tls-key` it serves HTTPS and WSS instead
//! (HTTP/2 or HTTP/1.1 by ALPN; the files are read again when they change).

#[path = "common/spec_methods.rs"]
mod spec_methods;
#[path = "common/tls.rs"]
mod tls;

use std::io::Write as _;
use std::process::ExitCode;

use rpcwire::dispatch::Router;
use rpcwire::transport::http::{HttpServer, DEFAULT_MAX_BODY};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const USAGE: &str = "usage: http_server [--listen ADDRESS] [--max-body BYTES] [--tls-cert PEM --tls-key PEM]";

struct Arguments {
    listen: String,
    max_body: usize,
    tls: tls::TlsOptions,
}

fn arguments() -> Result<Arguments, String> {
    let mut parsed = Arguments {
        listen: "127.0.0.1:8545".to_owned(),
        max_body: DEFAULT_MAX_BODY,
        tls: tls::TlsOptions::default(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if parsed.tls.take(&arg, &mut |name| {
            args.next().ok_or(format!("{name} needs a value"))
        })? {
            continue;
        }
        match arg.as_str() {
            "--listen" => parsed.listen = args.next().ok_or("--listen needs an address")?,
            "--max-body" => {
                let value = args.next().ok_or("--max-body needs a value")?;
                parsed.max_body = value.parse().map_err(|e| format!("--max-body {value}: {e}"))?;
            }
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(parsed)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let arguments = match arguments() {
        Ok(arguments) => arguments,
        Err(problem) => {
            if !problem.is_empty() {
                eprintln!("http_server: {problem}");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let listener = match tokio::net::TcpListener::bind(&arguments.listen).await {
        Ok(listener) => listener,
        Err(error) => {
            eprintln!("http_server: cannot listen on {}: {error}", arguments.listen);
            return ExitCode::FAILURE;
        }
    };
    let tls = match arguments.tls.server() {
        Ok(tls) => tls,
        Err(problem) => {
            eprintln!("http_server: {problem}");
            return ExitCode::from(2);
        }
    };
    let mut router = Router::with_limits(rpcwire::Limits::default().with_max_size(arguments.max_body));
    spec_methods::register(&mut router);
    if let Ok(address) = listener.local_addr() {
        println!("listening on {address}");
        let _ = std::io::stdout().flush();
    }
    let mut server = HttpServer::new(router).with_max_body(arguments.max_body);
    if let Some(tls) = tls {
        server = server.with_tls(tls);
    }
    match server.serve(listener).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("http_server: {error}");
            ExitCode::FAILURE
        }
    }
}
