//! A JSON-RPC client over a child process's stdin and stdout: spawns the command, makes
//! `subtract` calls through a [`Peer`] with up to `--in-flight` of them pending at once,
//! checks every answer, and prints calls/s and latency percentiles.
//!
//! ```sh
//! cargo build --release --features tokio --example spec_server --example stdio_client
//! target/release/examples/stdio_client -- target/release/examples/spec_server --framing content-length
//! ```
//!
//! Options (before the command): `--calls N` (default 10000), `--in-flight N` (default 256),
//! `--framing content-length|ndjson` (default content-length; tell the server the same),
//! `--timeout SECS` per call (default 10). After the first failed call no new calls start.
//! Half the calls use positional params `[minuend, subtrahend]`, half named ones
//! `{"minuend": …, "subtrahend": …}`, as in the JSON-RPC 2.0 specification's examples.
//! Prints one line `stdio_client: calls=… errors=… calls_per_s=… p50_us=… p99_us=…` and
//! exits with status 0 only when every answer was right and the child exited cleanly.

use std::process::{ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rpcwire::dispatch::Router;
use rpcwire::frame::Framing;
use rpcwire::transport::{Peer, StreamTransport};
use serde_json::json;

struct Options {
    calls: usize,
    in_flight: usize,
    framing: Framing,
    timeout: Duration,
    command: Vec<String>,
}

fn parse_options(mut args: impl Iterator<Item = String>) -> Result<Options, String> {
    let mut options = Options {
        calls: 10_000,
        in_flight: 256,
        framing: Framing::ContentLength,
        timeout: Duration::from_secs(10),
        command: Vec::new(),
    };
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or_else(|| format!("{name} needs a value"));
        match arg.as_str() {
            "--calls" => options.calls = value("--calls")?.parse().map_err(|e| format!("--calls: {e}"))?,
            "--in-flight" => {
                options.in_flight = value("--in-flight")?
                    .parse()
                    .map_err(|e| format!("--in-flight: {e}"))?
            }
            "--framing" => {
                options.framing = value("--framing")?
                    .parse()
                    .map_err(|e| format!("--framing: {e}"))?
            }
            "--timeout" => {
                let seconds: f64 = value("--timeout")?
                    .parse()
                    .map_err(|e| format!("--timeout: {e}"))?;
                options.timeout =
                    Duration::try_from_secs_f64(seconds).map_err(|e| format!("--timeout: {e}"))?;
            }
            "--" => {
                options.command.extend(args.by_ref());
                break;
            }
            _ if arg.starts_with("--") => return Err(format!("unknown option {arg}")),
            _ => {
                options.command.push(arg);
                options.command.extend(args.by_ref());
                break;
            }
        }
    }
    if options.command.is_empty() {
        return Err(
            "usage: stdio_client [--calls N] [--in-flight N] [--framing F] [--] <command> [args…]".into(),
        );
    }
    options.in_flight = options.in_flight.max(1);
    Ok(options)
}

/// The operands of call `i`: varied, negative and positive.
fn operands(i: usize) -> (i64, i64) {
    let i = i as i64;
    ((i * 7919) % 1_000_003 - 500_000, (i * 31) % 9973 - 4000)
}

/// Makes call `i` and checks its answer; the error text when it is wrong.
async fn subtract(peer: &Peer, i: usize) -> Result<(), String> {
    let (minuend, subtrahend) = operands(i);
    let answer: Result<i64, _> = if i % 2 == 0 {
        peer.call("subtract", [minuend, subtrahend]).await
    } else {
        peer.call("subtract", json!({"minuend": minuend, "subtrahend": subtrahend}))
            .await
    };
    match answer {
        Ok(difference) if difference == minuend - subtrahend => Ok(()),
        Ok(difference) => Err(format!(
            "call {i}: {minuend} - {subtrahend} answered {difference}"
        )),
        Err(error) => Err(format!("call {i}: {error}")),
    }
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1].as_secs_f64() * 1e6
}

#[tokio::main]
async fn main() -> ExitCode {
    let options = match parse_options(std::env::args().skip(1)) {
        Ok(options) => options,
        Err(message) => {
            eprintln!("stdio_client: {message}");
            return ExitCode::from(2);
        }
    };
    let mut child = match tokio::process::Command::new(&options.command[0])
        .args(&options.command[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
    {
        Ok(child) => child,
        Err(error) => {
            eprintln!("stdio_client: cannot start {:?}: {error}", options.command[0]);
            return ExitCode::from(2);
        }
    };
    let (stdout, stdin) = (child.stdout.take(), child.stdin.take());
    let transport = StreamTransport::new(stdout.expect("piped"), stdin.expect("piped"), options.framing);
    let peer = Peer::builder()
        .call_capacity(options.in_flight)
        .call_timeout(options.timeout)
        .start(transport, Router::new());

    let next = Arc::new(AtomicUsize::new(0));
    let failed = Arc::new(AtomicBool::new(false));
    let started = Instant::now();
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..options.in_flight.min(options.calls.max(1)) {
        let (peer, next, failed, calls) = (peer.clone(), next.clone(), failed.clone(), options.calls);
        workers.spawn(async move {
            let mut latencies = Vec::new();
            let mut errors = Vec::new();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= calls || failed.load(Ordering::Relaxed) {
                    return (latencies, errors);
                }
                let sent = Instant::now();
                match subtract(&peer, i).await {
                    Ok(()) => latencies.push(sent.elapsed()),
                    Err(error) => {
                        failed.store(true, Ordering::Relaxed);
                        errors.push(error);
                    }
                }
            }
        });
    }
    let mut latencies = Vec::with_capacity(options.calls);
    let mut errors = Vec::new();
    while let Some(joined) = workers.join_next().await {
        let (worker_latencies, worker_errors) = joined.expect("a worker panicked");
        latencies.extend(worker_latencies);
        errors.extend(worker_errors);
    }
    let elapsed = started.elapsed();

    // Closing our side ends the child's input; a well-behaved server then exits.
    peer.close().await;
    drop(peer);
    let exit = tokio::time::timeout(Duration::from_secs(10), child.wait()).await;

    latencies.sort_unstable();
    println!(
        "stdio_client: calls={} answered={} errors={} calls_per_s={:.0} p50_us={:.1} p99_us={:.1} in_flight={} framing={}",
        options.calls,
        latencies.len(),
        errors.len(),
        latencies.len() as f64 / elapsed.as_secs_f64(),
        percentile(&latencies, 50.0),
        percentile(&latencies, 99.0),
        options.in_flight,
        options.framing,
    );
    for error in errors.iter().take(5) {
        eprintln!("stdio_client: {error}");
    }
    let child_ok = match exit {
        Ok(Ok(status)) if status.success() => true,
        Ok(Ok(status)) => {
            eprintln!("stdio_client: the child exited with {status}");
            false
        }
        Ok(Err(error)) => {
            eprintln!("stdio_client: waiting for the child failed: {error}");
            false
        }
        Err(_) => {
            eprintln!("stdio_client: the child did not exit within 10 s after its input closed");
            false
        }
    };
    if errors.is_empty() && latencies.len() == options.calls && child_ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
