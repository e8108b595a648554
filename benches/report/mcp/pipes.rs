//! The stdio floor of a gateway with a child per session (`floor-pipes`): what such a
//! gateway must at least do per forwarded call on its stdio side — write the request line to
//! the session's child and read the answer line back, on that child's own pipes — and nothing
//! else (no JSON parsed, no MCP, no HTTP).
//!
//! `floor-stdio` is the floor of one pipe: at 64 in flight it reads the 64 requests of one
//! wake-up in one `read` and writes their answers in one `write`. A gateway with a child per
//! session cannot: 64 sessions in flight are 64 children, each call a `write` on one pipe and
//! a `read` on another. This floor does exactly that: one tokio thread (as the gateway) drives
//! N children, one call in flight on each, and its own CPU per call is the figure (the
//! children's is not counted, as the gateway's children's is not). The children are the
//! server the report's gateway runs (`rpcwire-stdio`, its session initialized first): 64 of
//! them answering on two cores take the same share of the machine from the floor as from the
//! gateway.
//!
//! The bench drives it over its stdin: `start N` (N children, N calls in flight; answered
//! `ok` once every child has answered a first call), `mark` (counting begins; answered `ok`),
//! `stop` (answered `CALLS P50_NS P99_NS`, the calls and their latency since `mark`; the
//! children's stdin closed and every child waited for).

use std::io::{BufRead, BufReader, Write};
use std::process::{ChildStdin, ChildStdout};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

use super::load::Load;
use super::servers::RPCWIRE_STDIO;

const WARMING: u8 = 0;
const MEASURING: u8 = 1;
const STOPPING: u8 = 2;

const INITIALIZE: &[u8] = br#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"floor-pipes","version":"1"}}}
"#;
const INITIALIZED: &[u8] = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}
"#;

/// The call line a lane writes, around its id.
const CALL: (&[u8], &[u8]) = (
    br#"{"jsonrpc":"2.0","id":"#,
    br#","method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}"#,
);

/// One child, one call in flight: until `phase` says stop. The calls and latencies while
/// measuring.
async fn lane(phase: Arc<AtomicU8>, first: tokio::sync::mpsc::Sender<()>) -> (u64, Histogram<u64>) {
    let exe = std::env::current_exe().expect("the bench binary");
    let mut child = tokio::process::Command::new(exe)
        .args(["--mcp-server", RPCWIRE_STDIO])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start an rpcwire-stdio child");
    let mut stdin = child.stdin.take().expect("piped");
    let mut stdout = tokio::io::BufReader::new(child.stdout.take().expect("piped"));
    // The session's handshake, as the gateway's child has had it.
    let mut line = Vec::with_capacity(256);
    stdin.write_all(INITIALIZE).await.expect("write initialize");
    stdout
        .read_until(b'\n', &mut line)
        .await
        .expect("read the initialize answer");
    assert!(
        memchr::memmem::find(&line, b"protocolVersion").is_some(),
        "initialize failed: {}",
        String::from_utf8_lossy(&line)
    );
    stdin.write_all(INITIALIZED).await.expect("write initialized");
    let mut histogram = Histogram::<u64>::new(3).expect("a histogram");
    let mut calls = 0;
    let mut answer = Vec::with_capacity(256);
    let mut id_text = Vec::with_capacity(20);
    let mut id = 0u64;
    let mut answered_once = false;
    loop {
        let now = phase.load(Ordering::Relaxed);
        if now == STOPPING {
            break;
        }
        id += 1;
        id_text.clear();
        write!(id_text, "{id}").expect("into a Vec");
        line.clear();
        line.extend_from_slice(CALL.0);
        line.extend_from_slice(&id_text);
        line.extend_from_slice(CALL.1);
        line.push(b'\n');
        let began = Instant::now();
        stdin.write_all(&line).await.expect("write a call");
        answer.clear();
        let read = stdout
            .read_until(b'\n', &mut answer)
            .await
            .expect("read an answer");
        assert!(read > 0, "a child closed its stdout");
        // `"id":N` followed by `,` or `}`: this call's answer.
        let answers_this = memchr::memmem::find(&answer, br#""id":"#)
            .map(|at| &answer[at + 5..])
            .is_some_and(|rest| {
                rest.starts_with(&id_text) && matches!(rest.get(id_text.len()), Some(b',' | b'}'))
            });
        assert!(
            answers_this,
            "an answer to another call: {}",
            String::from_utf8_lossy(&answer)
        );
        if !answered_once {
            answered_once = true;
            let _ = first.send(()).await;
        }
        if now == MEASURING {
            histogram
                .record((began.elapsed().as_nanos() as u64).max(1))
                .expect("in range");
            calls += 1;
        }
    }
    drop(stdin);
    let _ = child.wait().await;
    (calls, histogram)
}

/// The `floor-pipes` process: commands on stdin, answers on stdout (the module's doc).
pub(crate) fn floor_pipes() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    runtime.block_on(async {
        let mut commands = tokio::io::BufReader::new(tokio::io::stdin()).lines();
        let mut out = tokio::io::stdout();
        let phase = Arc::new(AtomicU8::new(WARMING));
        let mut lanes = Vec::new();
        while let Ok(Some(command)) = commands.next_line().await {
            let reply = match command.split_whitespace().collect::<Vec<_>>().as_slice() {
                ["start", n] => {
                    let n: usize = n.parse().expect("start N");
                    let (first, mut ready) = tokio::sync::mpsc::channel(n.max(1));
                    for _ in 0..n {
                        lanes.push(tokio::spawn(lane(phase.clone(), first.clone())));
                    }
                    drop(first);
                    for _ in 0..n {
                        ready.recv().await.expect("every lane answers once");
                    }
                    "ok".to_owned()
                }
                ["mark"] => {
                    phase.store(MEASURING, Ordering::Relaxed);
                    "ok".to_owned()
                }
                ["stop"] => {
                    phase.store(STOPPING, Ordering::Relaxed);
                    let mut calls = 0;
                    let mut histogram = Histogram::<u64>::new(3).expect("a histogram");
                    for lane in lanes.drain(..) {
                        let (count, h) = lane.await.expect("a lane");
                        calls += count;
                        histogram.add(h).expect("same bounds");
                    }
                    phase.store(WARMING, Ordering::Relaxed);
                    format!(
                        "{calls} {} {}",
                        histogram.value_at_quantile(0.5),
                        histogram.value_at_quantile(0.99)
                    )
                }
                other => panic!("floor-pipes: unknown command {other:?}"),
            };
            out.write_all(format!("{reply}\n").as_bytes())
                .await
                .expect("reply");
            out.flush().await.expect("reply");
        }
    });
}

/// Reads one reply line of the `floor-pipes` process.
fn reply(stdout: &mut BufReader<ChildStdout>) -> String {
    let mut line = String::new();
    assert!(
        stdout.read_line(&mut line).expect("read a reply") > 0,
        "floor-pipes closed its stdout"
    );
    line.trim().to_owned()
}

/// Runs `floor-pipes` with `in_flight` children: `warmup`, then `duration` measured (`mark`
/// called at both ends of it).
pub(crate) fn pipes_run(
    stdin: &mut ChildStdin,
    stdout: &mut BufReader<ChildStdout>,
    in_flight: usize,
    warmup: Duration,
    duration: Duration,
    mut mark: impl FnMut(),
) -> Load {
    writeln!(stdin, "start {in_flight}").expect("start");
    assert_eq!(reply(stdout), "ok", "floor-pipes did not start");
    std::thread::sleep(warmup);
    writeln!(stdin, "mark").expect("mark");
    assert_eq!(reply(stdout), "ok", "floor-pipes did not mark");
    mark();
    let began = Instant::now();
    std::thread::sleep(duration);
    mark();
    let seconds = began.elapsed().as_secs_f64();
    writeln!(stdin, "stop").expect("stop");
    let figures: Vec<u64> = reply(stdout)
        .split_whitespace()
        .map(|n| n.parse().expect("a number"))
        .collect();
    let [calls, p50, p99] = figures[..] else {
        panic!("floor-pipes answered {figures:?}")
    };
    // The latency as floor-pipes measured it, kept as two points of the report's histogram.
    let mut histogram = Histogram::<u64>::new(3).expect("a histogram");
    histogram.record_n(p50.max(1), 98).expect("in range");
    histogram.record_n(p99.max(1), 2).expect("in range");
    Load {
        calls,
        seconds,
        histogram,
    }
}
