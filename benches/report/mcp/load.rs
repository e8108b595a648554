//! The MCP section's load generator, the same for every server: `tools/call` of `add {a: 1,
//! b: 2}`, N calls in flight. Over stdio the calls are pipelined on the child's stdin (N
//! written, one more for each answer read); over Streamable HTTP each of N keep-alive
//! connections sends a call and reads its whole answer (JSON or an SSE stream) before the
//! next, in one session. Each answer is checked for the sum.

use std::io::{BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::process::{ChildStdin, ChildStdout};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use hdrhistogram::Histogram;
use http_body_util::{BodyExt, Full};

/// What one measurement gave.
pub(crate) struct Load {
    pub(crate) calls: u64,
    pub(crate) seconds: f64,
    pub(crate) histogram: Histogram<u64>,
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"rpcwire-report","version":"1"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
/// What every answer holds.
const SUM: &[u8] = br#""text":"3""#;

fn call(id: u64) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"add","arguments":{{"a":1,"b":2}}}}}}"#
    )
}

/// The numeric id of an answer line (`"id":N`), if it is one.
fn answer_id(line: &[u8]) -> Option<u64> {
    let at = memchr::memmem::find(line, br#""id":"#)? + 5;
    let digits = line[at..].iter().take_while(|b| b.is_ascii_digit()).count();
    std::str::from_utf8(&line[at..at + digits]).ok()?.parse().ok()
}

/// Initializes an MCP session over a child's stdio.
pub(crate) fn stdio_initialize(stdin: &mut ChildStdin, stdout: &mut BufReader<ChildStdout>) {
    writeln!(stdin, "{INITIALIZE}").expect("write initialize");
    let mut line = String::new();
    loop {
        line.clear();
        assert!(
            stdout.read_line(&mut line).expect("read") > 0,
            "the server closed its stdout"
        );
        if line.contains(r#""id":"init""#) {
            assert!(line.contains("protocolVersion"), "initialize failed: {line}");
            break;
        }
    }
    writeln!(stdin, "{INITIALIZED}").expect("write initialized");
}

/// Calls `add` over a child's stdio with `in_flight` calls pipelined: `warmup`, then
/// `duration` measured (`mark` called at both ends of it).
pub(crate) fn stdio_run(
    stdin: &mut ChildStdin,
    stdout: &mut BufReader<ChildStdout>,
    in_flight: usize,
    warmup: Duration,
    duration: Duration,
    mut mark: impl FnMut(),
) -> Load {
    let mut histogram = Histogram::<u64>::new(3).expect("a histogram");
    let mut sent_at = vec![Instant::now(); in_flight];
    let mut next_id = 0u64;
    let mut out = Vec::with_capacity(256 * in_flight);
    for _ in 0..in_flight {
        out.extend_from_slice(call(next_id).as_bytes());
        out.push(b'\n');
        sent_at[next_id as usize % in_flight] = Instant::now();
        next_id += 1;
    }
    stdin.write_all(&out).expect("send calls");
    let started = Instant::now();
    let mut measuring_since = None;
    let mut calls = 0;
    let mut outstanding = in_flight;
    let mut line = Vec::with_capacity(256);
    let mut stopping = false;
    while outstanding > 0 {
        line.clear();
        assert!(
            stdout.read_until(b'\n', &mut line).expect("read") > 0,
            "the server closed its stdout"
        );
        let Some(id) = answer_id(&line) else { continue }; // a notification
        assert!(
            memchr::memmem::find(&line, SUM).is_some(),
            "unexpected answer {}",
            String::from_utf8_lossy(&line)
        );
        outstanding -= 1;
        let nanos = sent_at[id as usize % in_flight].elapsed().as_nanos() as u64;
        match measuring_since {
            None if started.elapsed() >= warmup => {
                mark();
                measuring_since = Some(Instant::now());
            }
            Some(since) if !stopping && since.elapsed() >= duration => {
                mark();
                stopping = true;
            }
            Some(_) if !stopping => {
                histogram.record(nanos.max(1)).expect("in range");
                calls += 1;
            }
            _ => {}
        }
        if !stopping {
            let request = call(next_id);
            sent_at[next_id as usize % in_flight] = Instant::now();
            next_id += 1;
            stdin.write_all(request.as_bytes()).expect("send a call");
            stdin.write_all(b"\n").expect("send a call");
            outstanding += 1;
        }
    }
    Load {
        calls,
        seconds: measuring_since
            .map_or(0.0, |since| since.elapsed().as_secs_f64())
            .min(duration.as_secs_f64() * 2.0),
        histogram,
    }
}

type Sender = hyper::client::conn::http1::SendRequest<Full<Bytes>>;

async fn connect(address: SocketAddr) -> Sender {
    let stream = tokio::net::TcpStream::connect(address).await.expect("connect");
    stream.set_nodelay(true).expect("nodelay");
    let (sender, connection) = hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
        .await
        .expect("handshake");
    tokio::spawn(connection);
    sender
}

/// The bearer token the server under load takes (a protected server's), sent with every
/// request.
static BEARER: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);

/// Sends `Authorization: Bearer TOKEN` with every request from now on (`None`: nothing).
pub(crate) fn set_bearer(token: Option<String>) {
    *BEARER.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = token;
}

fn post(address: SocketAddr, session: Option<&str>, body: String) -> http::Request<Full<Bytes>> {
    let mut request = http::Request::post("/mcp")
        .header("host", address.to_string())
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-protocol-version", "2025-11-25");
    if let Some(token) = &*BEARER.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    request.body(Full::new(Bytes::from(body))).expect("a request")
}

/// Opens a session (initialize, initialized) on `sender`; its id.
async fn open_session(sender: &mut Sender, address: SocketAddr) -> String {
    sender.ready().await.expect("ready");
    let response = sender
        .send_request(post(address, None, INITIALIZE.to_owned()))
        .await
        .expect("initialize");
    let session = response
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .expect("a session id")
        .to_owned();
    let _ = response.into_body().collect().await.expect("initialize's answer");
    sender.ready().await.expect("ready");
    let done = sender
        .send_request(post(address, Some(&session), INITIALIZED.to_owned()))
        .await
        .expect("initialized");
    let _ = done.into_body().collect().await;
    session
}

/// Opens `count` sessions and leaves them idle (for the memory per idle session).
pub(crate) fn http_open_sessions(address: SocketAddr, count: usize) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let mut sender = connect(address).await;
        for _ in 0..count {
            open_session(&mut sender, address).await;
        }
    });
}

const WARMING: u8 = 0;
const MEASURING: u8 = 1;
const STOPPING: u8 = 2;

/// Calls `add` over Streamable HTTP on `connections` connections, each a client with its own
/// session.
pub(crate) fn http_run(
    address: SocketAddr,
    connections: usize,
    warmup: Duration,
    duration: Duration,
    mut mark: impl FnMut(),
) -> Load {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async move {
        let phase = Arc::new(AtomicU8::new(WARMING));
        let mut clients = Vec::with_capacity(connections);
        for _ in 0..connections {
            let mut sender = connect(address).await;
            let session: Arc<str> = open_session(&mut sender, address).await.into();
            clients.push(tokio::spawn(drive(sender, address, session, phase.clone())));
        }
        tokio::time::sleep(warmup).await;
        mark();
        let began = Instant::now();
        phase.store(MEASURING, Ordering::Relaxed);
        tokio::time::sleep(duration).await;
        phase.store(STOPPING, Ordering::Relaxed);
        let seconds = began.elapsed().as_secs_f64();
        mark();
        let mut histogram = Histogram::<u64>::new(3).expect("a histogram");
        let mut calls = 0;
        for client in clients {
            let (count, h) = client.await.expect("a client");
            calls += count;
            histogram.add(h).expect("same bounds");
        }
        Load {
            calls,
            seconds,
            histogram,
        }
    })
}

/// The last `id:` of an SSE body.
fn last_event_id(body: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(body).ok()?;
    text.lines()
        .rev()
        .find_map(|line| line.strip_prefix("id:"))
        .map(|id| id.trim().to_owned())
}

async fn drive(
    mut sender: Sender,
    address: SocketAddr,
    session: Arc<str>,
    phase: Arc<AtomicU8>,
) -> (u64, Histogram<u64>) {
    let mut histogram = Histogram::<u64>::new(3).expect("a histogram");
    let mut count = 0;
    let mut id = 0u64;
    loop {
        let now = phase.load(Ordering::Relaxed);
        if now == STOPPING {
            break;
        }
        id += 1;
        let began = Instant::now();
        sender.ready().await.expect("ready");
        let response = sender
            .send_request(post(address, Some(&session), call(id)))
            .await
            .expect("a call");
        assert!(response.status().is_success(), "status {}", response.status());
        let mut body = response
            .into_body()
            .collect()
            .await
            .expect("the answer")
            .to_bytes();
        // A stream that ended before its answer is resumed, as the SDK clients do: GET with
        // the last event id (rmcp ends some streams after the priming event under load).
        let mut resumes = 0;
        while memchr::memmem::find(&body, SUM).is_none() {
            resumes += 1;
            assert!(
                resumes <= 5,
                "no answer after {resumes} resumptions: {}",
                String::from_utf8_lossy(&body)
            );
            let last = last_event_id(&body)
                .unwrap_or_else(|| panic!("unexpected answer {}", String::from_utf8_lossy(&body)));
            let mut get = http::Request::get("/mcp");
            if let Some(token) = &*BEARER.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) {
                get = get.header("authorization", format!("Bearer {token}"));
            }
            let get = get
                .header("host", address.to_string())
                .header("accept", "text/event-stream")
                .header("mcp-protocol-version", "2025-11-25")
                .header("mcp-session-id", &*session)
                .header("last-event-id", last)
                .body(Full::new(Bytes::new()))
                .expect("a request");
            sender.ready().await.expect("ready");
            let response = sender.send_request(get).await.expect("a resumption");
            body = response.into_body().collect().await.expect("the rest").to_bytes();
        }
        let nanos = began.elapsed().as_nanos() as u64;
        if now == MEASURING && phase.load(Ordering::Relaxed) == MEASURING {
            histogram.record(nanos.max(1)).expect("in range");
            count += 1;
        }
    }
    (count, histogram)
}
