//! The soak bench: rpcwire's example servers under a steady mix of good and bad traffic for
//! a long while, checking that every request is answered exactly once and that resident
//! memory does not grow.
//!
//! ```sh
//! cargo bench --bench soak --features http -- [--seconds N]   # default 600 (10 minutes)
//! ```
//!
//! It builds the examples as the tests build them (`tests/support/example_binary.rs`) and
//! starts each server as its own process, as a user starts it, with a 64 KiB limit:
//! `spec_server` in both framings (NDJSON, Content-Length) with the blocking `serve` loop and
//! with `--peer` (tokio `Peer`), each driven over its stdin and stdout, and `http_server`,
//! driven by 4 HTTP/1.1 keep-alive connections (pipelined POSTs) and 2 WebSocket
//! connections, and `http_server` serving HTTPS (`--tls-cert`, a certificate the soak
//! makes) to 4 HTTP/1.1 connections that the soak closes and opens again every 500
//! messages (a TLS handshake each time). Every connection sends, until the time is up, a seeded mix of requests (all
//! the example methods; `echo` with params from a few bytes to 60 KB, escapes and non-ASCII
//! text included; unknown methods; bad params), notifications, batches (with the odd invalid
//! element), invalid JSON, JSON that is not a request, truncated messages and messages over
//! the limit, with at most [`ledger::WINDOW`] answers due at once per connection (a soak,
//! not a flood).
//!
//! Each answer is checked: a request with an id must get exactly one answer with that id and
//! the expected result or error code; an unreadable message must get error answers with id
//! `null` (over HTTP a body over the limit gets 413; over WebSocket a message over the limit
//! gets a close with 1009, and the soak opens a new connection). At the end it stops
//! sending, waits (at most 10 s) for the answers due, closes stdin and the connections, and
//! counts what never came as unanswered.
//!
//! Each server's resident memory (VmRSS) is read from `/proc` once a second: after the
//! warm-up (10% of the run, at least 5 s), its peak, and when the traffic stops, and the
//! growth between the first and the last. Aims: growth ≤ 5% and no unanswered request.
//!
//! Writes `perf-reports/soak.json` and `perf-reports/soak.md` and prints a summary. Talks to
//! 127.0.0.1 only; every wait has a time limit; the servers are killed if the soak ends
//! early.

// The tests' certificate authority (rcgen), for the HTTPS server.
#[path = "../tests/support/certs.rs"]
mod certs;
#[path = "soak/connection.rs"]
mod connection;
// The report's: the machine, the git head (saying when src/ has uncommitted changes), the date.
#[allow(dead_code)]
#[path = "report/environment.rs"]
mod environment;
#[path = "../tests/support/example_binary.rs"]
mod example_binary;
#[path = "soak/http_client.rs"]
mod http_client;
#[path = "soak/ledger.rs"]
mod ledger;
#[path = "../tests/support/listening_child.rs"]
mod listening_child;
#[path = "soak/memory.rs"]
mod memory;
#[path = "soak/report.rs"]
mod report;
#[path = "soak/servers.rs"]
mod servers;
#[path = "soak/stdio_client.rs"]
mod stdio_client;
#[path = "soak/tls.rs"]
mod tls;
#[path = "soak/traffic.rs"]
mod traffic;
#[path = "common/trend.rs"]
mod trend;
#[path = "soak/ws_client.rs"]
mod ws_client;

use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::{Instant, MissedTickBehavior};

use crate::servers::{Outcome, Running};

/// The run's length unless `--seconds` says otherwise: 10 minutes.
const DEFAULT_SECONDS: u64 = 600;

/// The shortest run accepted (the warm-up alone is 5 s).
const MIN_SECONDS: u64 = 10;

/// How long, after the traffic stops, the connections have to drain and close, and the
/// stdio servers to exit (the drain itself is bounded at 10 s, closing at 5 s more).
const FINISH_LIMIT: Duration = Duration::from_secs(30);

const USAGE: &str = "usage: cargo bench --bench soak --features http -- [--seconds N]";

/// The command-line options.
struct Options {
    /// How long the traffic runs, s.
    seconds: u64,
}

impl Options {
    /// Reads the options (cargo bench's own `--bench` is ignored).
    fn from_args() -> Result<Options, String> {
        let mut seconds = DEFAULT_SECONDS;
        let mut args = std::env::args().skip(1);
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--seconds" => {
                    let value = args.next().ok_or("--seconds needs a value")?;
                    seconds = value.parse().map_err(|e| format!("--seconds {value}: {e}"))?;
                }
                "--bench" => {}
                "-h" | "--help" => return Err(String::new()),
                other => return Err(format!("unknown argument {other:?}")),
            }
        }
        if seconds < MIN_SECONDS {
            return Err(format!("--seconds {seconds}: at least {MIN_SECONDS}"));
        }
        Ok(Options { seconds })
    }

    /// The warm-up: 10% of the run, at least 5 s.
    fn warmup_seconds(&self) -> u64 {
        (self.seconds / 10).max(5)
    }
}

fn main() {
    let options = Options::from_args().unwrap_or_else(|problem| {
        if !problem.is_empty() {
            eprintln!("soak: {problem}");
        }
        eprintln!("{USAGE}");
        std::process::exit(2);
    });
    let binaries = [
        ("spec_server", example_binary::example_binary("spec_server")),
        ("http_server", example_binary::example_binary("http_server")),
    ];
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let Some(outcomes) = runtime.block_on(soak(&options, &binaries)) else {
        eprintln!("soak: interrupted; the servers are stopped, no report written");
        std::process::exit(130);
    };
    let report = report::Report::new(options.seconds, options.warmup_seconds(), outcomes);
    print!("{}", report.summary());
    let directory = Path::new(env!("CARGO_MANIFEST_DIR")).join("perf-reports");
    match report.write(&directory) {
        Ok(paths) => {
            for path in paths {
                println!("wrote {}", path.display());
            }
        }
        Err(error) => {
            eprintln!(
                "soak: cannot write the report into {}: {error}",
                directory.display()
            );
            std::process::exit(1);
        }
    }
}

/// Runs every server under traffic for the run's length, sampling their memory once a
/// second, then stops the traffic and sums up; `None` if interrupted (Ctrl-C), once the
/// servers are killed.
async fn soak(options: &Options, binaries: &[(&str, PathBuf)]) -> Option<Vec<Outcome>> {
    let (stop, stopped) = watch::channel(false);
    let mut servers: Vec<Running> = servers::plan()
        .into_iter()
        .enumerate()
        .map(|(index, plan)| {
            let binary = binaries
                .iter()
                .find(|(name, _)| *name == plan.example)
                .map(|(_, path)| path.clone())
                .unwrap_or_else(|| panic!("no binary for {}", plan.example));
            Running::start(index, plan, &binary, &stopped)
        })
        .collect();
    let duration = Duration::from_secs(options.seconds);
    let warmup = Duration::from_secs(options.warmup_seconds());
    println!(
        "soak: {} servers for {} s (warm-up {} s)",
        servers.len(),
        options.seconds,
        warmup.as_secs()
    );
    let completed = sample_until(&mut servers, duration, warmup).await;
    stop.send_replace(true);
    if !completed {
        drop(servers); // kills them
        return None;
    }
    let deadline = Instant::now() + FINISH_LIMIT;
    let mut outcomes = Vec::new();
    for server in servers {
        outcomes.push(server.finish(deadline).await);
    }
    Some(outcomes)
}

/// Samples every server's memory once a second until `duration` is over, printing the
/// progress now and then; `false` if interrupted (Ctrl-C) first.
async fn sample_until(servers: &mut [Running], duration: Duration, warmup: Duration) -> bool {
    let began = Instant::now();
    let progress_every = (duration.as_secs() / 10).max(10);
    let mut ticks = tokio::time::interval(Duration::from_secs(1));
    ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let interrupted = tokio::signal::ctrl_c();
    tokio::pin!(interrupted);
    loop {
        tokio::select! {
            _ = ticks.tick() => {}
            _ = &mut interrupted => return false,
        }
        let elapsed = began.elapsed();
        for server in servers.iter_mut() {
            server.sample(elapsed >= warmup, elapsed);
        }
        let second = elapsed.as_secs();
        if second > 0 && second % progress_every == 0 && elapsed < duration {
            let sent: Vec<String> = servers
                .iter()
                .map(|s| format!("{} {}", s.name(), s.messages_sent()))
                .collect();
            println!("soak: {second} s, messages sent: {}", sent.join(", "));
        }
        if elapsed >= duration {
            return true;
        }
    }
}
