//! The overload section (`tokio` feature): a flood of concurrent `sleep` requests against
//! `examples/spec_server --peer --max-concurrent 8`, started as a user starts it (its own
//! process, JSON-RPC over its stdin and stdout). Every request must get exactly one answer:
//! the result after the sleep, or the overload error at once. Reported: answers per second,
//! how the requests were answered, the time to the last answer, and the server's peak RSS.

use serde::Serialize;

/// One round of the flood.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct OverloadRun {
    /// Requests sent, all at once.
    pub(crate) requests: usize,
    /// What each `sleep` asks for, ms.
    pub(crate) sleep_ms: u64,
    /// The server's `--max-concurrent`.
    pub(crate) max_concurrent: usize,
    /// Answers received per second of the flood (from the first request written to the last
    /// answer read).
    pub(crate) answers_per_s: f64,
    /// Answered with the result.
    pub(crate) results: usize,
    /// Answered with the overload error (-32003).
    pub(crate) overloaded: usize,
    /// Anything else (another error, no answer, the connection closing): must be 0.
    pub(crate) other: usize,
    /// The last overload answer's arrival, ms after the flood began.
    pub(crate) last_refusal_ms: f64,
    /// The last answer's arrival, ms after the flood began.
    pub(crate) elapsed_ms: f64,
    /// The server process's peak resident set (VmHWM), MiB.
    pub(crate) server_peak_rss_mib: f64,
    /// Every round's answers per second, sorted (the round kept is the median).
    pub(crate) rounds: Vec<f64>,
}

/// Without the `tokio` feature there is no `spec_server --peer` to flood.
#[cfg(not(feature = "tokio"))]
pub(crate) fn measure_overload(_config: &crate::config::Config) -> Vec<OverloadRun> {
    println!("overload: skipped (run with --features tokio or http)");
    Vec::new()
}

#[cfg(feature = "tokio")]
pub(crate) use flood::measure_overload;

/// The spec_server binary, built as the tests build it.
#[cfg(feature = "tokio")]
#[path = "../../tests/support/example_binary.rs"]
mod example_binary;

#[cfg(feature = "tokio")]
mod flood {
    use std::process::Stdio;
    use std::time::{Duration, Instant};

    use futures::stream::{FuturesUnordered, StreamExt};
    use rpcwire::dispatch::Router;
    use rpcwire::frame::Framing;
    use rpcwire::transport::{Peer, PeerErrorKind, StreamTransport};
    use rpcwire::RawJson;

    use super::{example_binary, OverloadRun};
    use crate::config::Config;
    use crate::render_json::round;

    const REQUESTS: usize = 5_000;
    const SLEEP_MS: u64 = 20;
    const MAX_CONCURRENT: usize = 8;
    /// Rounds in a full run (one in a quick run); the median by answers per second is kept.
    const ROUNDS: usize = 3;
    /// A round that takes longer than this has hung: the report says so and stops.
    const DEADLINE: Duration = Duration::from_secs(120);

    /// Floods a fresh `spec_server` `rounds` times; the median round, with every round's
    /// rate in `rounds`.
    pub(crate) fn measure_overload(config: &Config) -> Vec<OverloadRun> {
        let server = example_binary::example_binary("spec_server");
        let rounds = if config.quick { 1 } else { ROUNDS };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a tokio runtime");
        let mut runs: Vec<OverloadRun> = (0..rounds)
            .map(|_| {
                let run = runtime.block_on(flood_once(&server));
                println!(
                    "overload: {} sleep({SLEEP_MS} ms) at once vs --max-concurrent {MAX_CONCURRENT}: \
                     {:.0} answers/s, {} results, {} overloaded, {} other, last answer at {:.0} ms, \
                     server peak RSS {:.1} MiB",
                    run.requests,
                    run.answers_per_s,
                    run.results,
                    run.overloaded,
                    run.other,
                    run.elapsed_ms,
                    run.server_peak_rss_mib
                );
                run
            })
            .collect();
        let mut rates: Vec<f64> = runs.iter().map(|r| r.answers_per_s).collect();
        rates.sort_by(f64::total_cmp);
        runs.sort_by(|a, b| a.answers_per_s.total_cmp(&b.answers_per_s));
        let mut median = runs.swap_remove(runs.len() / 2);
        median.rounds = rates;
        vec![median]
    }

    async fn flood_once(server: &std::path::Path) -> OverloadRun {
        let mut child = tokio::process::Command::new(server)
            .args(["--framing", "ndjson", "--peer", "--max-concurrent"])
            .arg(MAX_CONCURRENT.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("start spec_server");
        let pid = child.id().expect("a running child");
        let transport = StreamTransport::new(
            child.stdout.take().expect("piped stdout"),
            child.stdin.take().expect("piped stdin"),
            Framing::Ndjson,
        );
        let client = Peer::builder()
            .call_capacity(REQUESTS * 2)
            .outgoing_queue(REQUESTS * 2)
            .call_timeout(DEADLINE)
            .start(transport, Router::new());
        let params = RawJson::new(format!("[{SLEEP_MS}]")).expect("valid JSON");
        let began = Instant::now();
        let mut calls: FuturesUnordered<_> = (0..REQUESTS)
            .map(|_| async {
                let outcome = client.call_raw("sleep", Some(&params)).await;
                (outcome, began.elapsed())
            })
            .collect();
        let (mut results, mut overloaded, mut other) = (0, 0, 0);
        let (mut last_refusal, mut last) = (Duration::ZERO, Duration::ZERO);
        while let Some((outcome, at)) = calls.next().await {
            last = last.max(at);
            match outcome {
                Ok(result) if result.as_str() == SLEEP_MS.to_string() => results += 1,
                Err(error) => match error.kind() {
                    PeerErrorKind::Remote(object)
                        if object.code().code() == rpcwire::transport::OVERLOADED_CODE =>
                    {
                        overloaded += 1;
                        last_refusal = last_refusal.max(at);
                    }
                    _ => other += 1,
                },
                Ok(_) => other += 1,
            }
        }
        drop(calls);
        let peak = peak_rss_kib(pid);
        drop(client);
        let _ = tokio::time::timeout(Duration::from_secs(10), child.wait()).await;
        OverloadRun {
            requests: REQUESTS,
            sleep_ms: SLEEP_MS,
            max_concurrent: MAX_CONCURRENT,
            answers_per_s: round(REQUESTS as f64 / last.as_secs_f64(), 0),
            results,
            overloaded,
            other,
            last_refusal_ms: round(last_refusal.as_secs_f64() * 1e3, 1),
            elapsed_ms: round(last.as_secs_f64() * 1e3, 1),
            server_peak_rss_mib: round(peak as f64 / 1024.0, 1),
            rounds: Vec::new(),
        }
    }

    /// VmHWM of a running process, KiB (0 where /proc cannot tell).
    fn peak_rss_kib(pid: u32) -> u64 {
        std::fs::read_to_string(format!("/proc/{pid}/status"))
            .ok()
            .and_then(|status| {
                status
                    .lines()
                    .find_map(|line| line.strip_prefix("VmHWM:"))
                    .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            })
            .unwrap_or(0)
    }
}

/// The cancellation issue's report row: every request answered exactly once.
pub(crate) fn overload_targets(runs: &[OverloadRun]) -> Vec<crate::targets::Target> {
    runs.iter()
        .map(|r| crate::targets::Target {
            target: format!(
                "overload flood: {} concurrent requests vs --max-concurrent {}, one answer each",
                r.requests, r.max_concurrent
            ),
            measured: format!(
                "{} results + {} overloaded + {} other, {:.0} answers/s, server peak RSS {:.1} MiB",
                r.results, r.overloaded, r.other, r.answers_per_s, r.server_peak_rss_mib
            ),
            met: Some(r.other == 0 && r.results + r.overloaded == r.requests),
        })
        .collect()
}

/// The markdown table of the flood.
pub(crate) fn overload_table(runs: &[OverloadRun]) -> String {
    let mut s = String::from(
        "| requests | sleep | max concurrent | answers/s | results | overloaded (-32003) | other | last refusal | last answer | server peak RSS | every round (answers/s) |\n\
         | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n",
    );
    for r in runs {
        let rounds: Vec<String> = r.rounds.iter().map(|x| format!("{x:.0}")).collect();
        s.push_str(&format!(
            "| {} | {} ms | {} | {:.0} | {} | {} | {} | {:.0} ms | {:.0} ms | {:.1} MiB | {} |\n",
            r.requests,
            r.sleep_ms,
            r.max_concurrent,
            r.answers_per_s,
            r.results,
            r.overloaded,
            r.other,
            r.last_refusal_ms,
            r.elapsed_ms,
            r.server_peak_rss_mib,
            rounds.join(", ")
        ));
    }
    s
}
