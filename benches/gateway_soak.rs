//! The gateway soak: `examples/gateway` in front of a WebSocket Ethereum node for a long
//! while, with subscribing clients that come and go and a node that dies and comes back,
//! checking that every request is answered exactly once, that no notification reaches a
//! client under an id it was not given, that the gateway's resident memory levels off, and
//! that no subscription is left at the node once every client has gone.
//!
//! ```sh
//! cargo bench --bench gateway_soak --features http,metrics -- [--seconds N]   # default 1800 (30 minutes)
//! ```
//!
//! - The node (in this process, tokio-tungstenite on 127.0.0.1) serves `eth_subscribe`,
//!   `eth_unsubscribe`, `eth_blockNumber` and `eth_chainId`, pushes a head to every
//!   subscription every 100 ms, and every 60 s dies — every connection closed, nothing
//!   listening — for 5 s, then listens again on the same port.
//! - The gateway is `examples/gateway --upstream ws://…` as a user starts it.
//! - 40 WebSocket clients each connect, subscribe to `newHeads` (some twice), read heads and
//!   send `eth_blockNumber` every 200 ms for 1 to 15 s, then unsubscribe and leave, or just
//!   leave, and come back; 4 HTTP clients send `eth_chainId` and `eth_blockNumber` in turn.
//!   Each waits for the answers it is due (at most 15 s) before it leaves: what never came
//!   is unanswered; an answer to an id not due (a second one) is a duplicate.
//! - The gateway's VmRSS is read once a second. Aims: no unanswered request, no duplicate,
//!   no foreign notification, the fitted growth of RSS after the warm-up (10%) at most 5%,
//!   and no subscription left at the node 10 s after the clients have gone.
//!
//! Writes `perf-reports/gateway-soak.json` and `.md` and prints a summary; exits 1 when an
//! aim is missed. Talks to 127.0.0.1 only; every wait is bounded; the gateway is killed and
//! reaped at the end or when the soak panics.

#[path = "../tests/support/example_binary.rs"]
mod example_binary;
#[path = "../tests/support/listening_child.rs"]
mod listening_child;
#[path = "common/trend.rs"]
mod trend;

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::Message;

const DEFAULT_SECONDS: u64 = 1800;
const SUBSCRIBERS: usize = 40;
const HTTP_CLIENTS: usize = 4;
/// How often the node dies, and for how long.
const DIES_EVERY: Duration = Duration::from_secs(60);
const DEAD_FOR: Duration = Duration::from_secs(5);
/// How long a client waits for the answers it is due before it leaves.
const ANSWER_LIMIT: Duration = Duration::from_secs(15);

/// What the clients counted.
#[derive(Default)]
struct Tally {
    requests: AtomicU64,
    answers: AtomicU64,
    error_answers: AtomicU64,
    unanswered: AtomicU64,
    duplicates: AtomicU64,
    notifications: AtomicU64,
    foreign: AtomicU64,
    sessions: AtomicU64,
    refused: AtomicU64,
}

/// The node's live subscriptions, by id, each with its connection's outbox.
type Live = Arc<Mutex<HashMap<u64, tokio::sync::mpsc::UnboundedSender<Message>>>>;

/// The node: listens on `port` (0 the first time) until `dead` is set, then drops every
/// connection; the caller starts it again.
async fn node_life(
    listener: tokio::net::TcpListener,
    live: Live,
    next_id: Arc<AtomicU64>,
    head: Arc<AtomicU64>,
) {
    let mut connections = tokio::task::JoinSet::new();
    loop {
        let Ok((socket, _)) = listener.accept().await else {
            continue;
        };
        let (live, next_id, head) = (live.clone(), next_id.clone(), head.clone());
        connections.spawn(async move {
            let Ok(socket) = tokio_tungstenite::accept_async(socket).await else {
                return;
            };
            let (mut sink, mut stream) = socket.split();
            let (outbox, mut outgoing) = tokio::sync::mpsc::unbounded_channel::<Message>();
            let writer = tokio::spawn(async move {
                while let Some(message) = outgoing.recv().await {
                    if sink.send(message).await.is_err() {
                        break;
                    }
                }
            });
            let mut mine = Vec::new();
            while let Some(Ok(Message::Text(text))) = stream.next().await {
                let Ok(request) = serde_json::from_str::<Value>(&text) else {
                    continue;
                };
                let result = match request["method"].as_str() {
                    Some("eth_subscribe") => {
                        let id = next_id.fetch_add(1, Ordering::Relaxed);
                        live.lock().unwrap().insert(id, outbox.clone());
                        mine.push(id);
                        json!(format!("{id:#x}"))
                    }
                    Some("eth_unsubscribe") => {
                        let id = request["params"][0]
                            .as_str()
                            .and_then(|id| u64::from_str_radix(id.trim_start_matches("0x"), 16).ok());
                        json!(id.is_some_and(|id| live.lock().unwrap().remove(&id).is_some()))
                    }
                    Some("eth_blockNumber") => json!(format!("{:#x}", head.load(Ordering::Relaxed))),
                    Some("eth_chainId") => json!("0x1"),
                    _ => json!(null),
                };
                let answer = json!({"jsonrpc": "2.0", "id": request["id"], "result": result});
                let _ = outbox.send(Message::text(answer.to_string()));
            }
            let mut live = live.lock().unwrap();
            for id in mine {
                live.remove(&id);
            }
            writer.abort();
        });
    }
}

/// Runs the node on its own thread: up, then every [`DIES_EVERY`] down for [`DEAD_FOR`],
/// until `stop`; its address and its live subscriptions.
fn start_node(stop: Arc<AtomicBool>) -> (std::net::SocketAddr, Live) {
    let live: Live = Arc::default();
    let (bound, address) = std::sync::mpsc::channel();
    let subscriptions = live.clone();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let (next_id, head) = (Arc::new(AtomicU64::new(1)), Arc::new(AtomicU64::new(20_000_000)));
            let pushing = (subscriptions.clone(), head.clone());
            tokio::spawn(async move {
                let mut ticks = tokio::time::interval(Duration::from_millis(100));
                loop {
                    ticks.tick().await;
                    let number = pushing.1.fetch_add(1, Ordering::Relaxed) + 1;
                    let head = format!(r#"{{"number":"{number:#x}","hash":"0x{number:064x}","parentHash":"0x{:064x}"}}"#, number - 1);
                    for (id, outbox) in pushing.0.lock().unwrap().iter() {
                        let text = format!(
                            r#"{{"jsonrpc":"2.0","method":"eth_subscription","params":{{"subscription":"{id:#x}","result":{head}}}}}"#
                        );
                        let _ = outbox.send(Message::text(text));
                    }
                }
            });
            let mut listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let address = listener.local_addr().unwrap();
            bound.send(address).unwrap();
            while !stop.load(Ordering::Relaxed) {
                let life = tokio::spawn(node_life(listener, subscriptions.clone(), next_id.clone(), head.clone()));
                tokio::time::sleep(DIES_EVERY).await;
                // Dies: the listener and every connection go (their subscriptions with them).
                life.abort();
                let _ = life.await;
                tokio::time::sleep(DEAD_FOR).await;
                subscriptions.lock().unwrap().clear();
                listener = loop {
                    match tokio::net::TcpListener::bind(address).await {
                        Ok(listener) => break listener,
                        Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
                    }
                };
            }
        });
    });
    (address.recv().unwrap(), live)
}

/// One WebSocket client's life: subscribe, read, ask, leave. Returns when it has left.
async fn ws_session(url: &str, seed: u64, tally: &Tally) {
    let Ok(Ok((socket, _))) =
        tokio::time::timeout(Duration::from_secs(5), tokio_tungstenite::connect_async(url)).await
    else {
        tally.refused.fetch_add(1, Ordering::Relaxed);
        return;
    };
    tally.sessions.fetch_add(1, Ordering::Relaxed);
    let (mut sink, mut stream) = socket.split();
    let life = Duration::from_millis(1000 + seed % 14_000);
    let subscriptions = 1 + (seed % 3 == 0) as u64;
    let mut due: HashMap<u64, &'static str> = HashMap::new();
    let mut given: HashSet<String> = HashSet::new();
    let mut next_id = 1u64;
    let mut send = |method: &'static str, params: Value, due: &mut HashMap<u64, &'static str>| {
        let id = next_id;
        next_id += 1;
        due.insert(id, method);
        tally.requests.fetch_add(1, Ordering::Relaxed);
        Message::text(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string())
    };
    let mut out = Vec::new();
    for _ in 0..subscriptions {
        out.push(send("eth_subscribe", json!(["newHeads"]), &mut due));
    }
    let started = Instant::now();
    let mut asking = tokio::time::interval(Duration::from_millis(200));
    let mut leaving = false;
    let mut deadline = started + life;
    loop {
        for message in out.drain(..) {
            if sink.send(message).await.is_err() {
                break;
            }
        }
        if leaving && due.is_empty() {
            break;
        }
        if Instant::now() >= deadline {
            if leaving {
                break;
            }
            // Leave: unsubscribe first (every other client), then wait for what is due.
            leaving = true;
            deadline = Instant::now() + ANSWER_LIMIT;
            if seed % 2 == 0 {
                for id in given.clone() {
                    out.push(send("eth_unsubscribe", json!([id]), &mut due));
                }
            }
            continue;
        }
        tokio::select! {
            _ = asking.tick(), if !leaving => out.push(send("eth_blockNumber", json!([]), &mut due)),
            _ = tokio::time::sleep_until(deadline.into()) => {}
            message = stream.next() => {
                let Some(Ok(Message::Text(text))) = message else { break };
                let Ok(message) = serde_json::from_str::<Value>(&text) else { continue };
                if message["method"] == "eth_subscription" {
                    tally.notifications.fetch_add(1, Ordering::Relaxed);
                    let id = message["params"]["subscription"].as_str().unwrap_or_default();
                    if !given.contains(id) {
                        tally.foreign.fetch_add(1, Ordering::Relaxed);
                    }
                    continue;
                }
                let Some(id) = message["id"].as_u64() else { continue };
                match due.remove(&id) {
                    Some(method) => {
                        tally.answers.fetch_add(1, Ordering::Relaxed);
                        if message.get("error").is_some() {
                            tally.error_answers.fetch_add(1, Ordering::Relaxed);
                        } else if method == "eth_subscribe" {
                            given.insert(message["result"].as_str().unwrap_or_default().to_owned());
                        }
                    }
                    None => {
                        tally.duplicates.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
        }
    }
    tally.unanswered.fetch_add(due.len() as u64, Ordering::Relaxed);
    let _ = sink.close().await;
}

/// One HTTP client: POSTs until `stop`, each answered once with its id.
async fn http_client(address: std::net::SocketAddr, stop: Arc<AtomicBool>, tally: Arc<Tally>) {
    use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt};
    let mut id = 0u64;
    while !stop.load(Ordering::Relaxed) {
        let Ok(socket) = tokio::net::TcpStream::connect(address).await else {
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        let mut socket = tokio::io::BufReader::new(socket);
        for _ in 0..200 {
            id += 1;
            let method = if id % 2 == 0 {
                "eth_chainId"
            } else {
                "eth_blockNumber"
            };
            let body = json!({"jsonrpc": "2.0", "id": id, "method": method}).to_string();
            let head = format!(
                "POST / HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
                body.len()
            );
            tally.requests.fetch_add(1, Ordering::Relaxed);
            let exchange = async {
                socket
                    .get_mut()
                    .write_all(format!("{head}{body}").as_bytes())
                    .await
                    .ok()?;
                let mut length = 0;
                loop {
                    let mut line = String::new();
                    socket.read_line(&mut line).await.ok()?;
                    if line == "\r\n" || line.is_empty() {
                        break;
                    }
                    if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                        length = value.trim().parse().ok()?;
                    }
                }
                let mut answer = vec![0; length];
                socket.read_exact(&mut answer).await.ok()?;
                serde_json::from_slice::<Value>(&answer).ok()
            };
            match tokio::time::timeout(ANSWER_LIMIT, exchange).await {
                Ok(Some(answer)) if answer["id"] == id => {
                    tally.answers.fetch_add(1, Ordering::Relaxed);
                    if answer.get("error").is_some() {
                        tally.error_answers.fetch_add(1, Ordering::Relaxed);
                    }
                }
                Ok(Some(_)) => {
                    tally.duplicates.fetch_add(1, Ordering::Relaxed);
                }
                _ => {
                    tally.unanswered.fetch_add(1, Ordering::Relaxed);
                    break;
                }
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}

fn vm_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
}

fn main() {
    let mut seconds = DEFAULT_SECONDS;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--seconds" => seconds = args.next().and_then(|s| s.parse().ok()).expect("--seconds N"),
            "--bench" => {}
            other => panic!("unknown argument {other}; usage: cargo bench --bench gateway_soak --features http,metrics -- [--seconds N]"),
        }
    }
    let stop_node = Arc::new(AtomicBool::new(false));
    let (node, live) = start_node(stop_node.clone());
    let gateway = listening_child::start_listening(
        &example_binary::example_binary("gateway"),
        &[
            "--listen",
            "127.0.0.1:0",
            "--upstream",
            &format!("ws://{node}/"),
            "--timeout-ms",
            "5000",
        ],
    );
    let pid = gateway.child.id();
    let address: std::net::SocketAddr = gateway.address.parse().expect("the gateway's address");
    let url = format!("ws://{address}/");
    let tally = Arc::new(Tally::default());
    let stop = Arc::new(AtomicBool::new(false));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let run_for = Duration::from_secs(seconds);
    let started = Instant::now();
    let mut clients = Vec::new();
    for client in 0..SUBSCRIBERS as u64 {
        let (url, tally, stop) = (url.clone(), tally.clone(), stop.clone());
        clients.push(runtime.spawn(async move {
            let mut seed = client.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
            while !stop.load(Ordering::Relaxed) {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                ws_session(&url, seed, &tally).await;
            }
        }));
    }
    for _ in 0..HTTP_CLIENTS {
        clients.push(runtime.spawn(http_client(address, stop.clone(), tally.clone())));
    }
    let mut rss = Vec::new();
    while started.elapsed() < run_for {
        std::thread::sleep(Duration::from_secs(1));
        rss.push(vm_rss_kib(pid).expect("the gateway is running"));
        if rss.len() % 60 == 0 {
            println!(
                "gateway soak: {:>5} s, RSS {} KiB, {} requests, {} unanswered, {} notifications, {} subscriptions at the node",
                rss.len(),
                rss.last().unwrap(),
                tally.requests.load(Ordering::Relaxed),
                tally.unanswered.load(Ordering::Relaxed),
                tally.notifications.load(Ordering::Relaxed),
                live.lock().unwrap().len()
            );
        }
    }
    // Stop: the clients finish their sessions (each waits for what it is due, bounded).
    stop.store(true, Ordering::Relaxed);
    runtime.block_on(async {
        for client in clients {
            let _ = tokio::time::timeout(ANSWER_LIMIT + Duration::from_secs(20), client).await;
        }
    });
    // Every client has gone: nothing may be left at the node (the gateway ends each client's
    // subscriptions there when it leaves).
    let settle = Instant::now();
    while !live.lock().unwrap().is_empty() && settle.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(100));
    }
    let left = live.lock().unwrap().len();
    stop_node.store(true, Ordering::Relaxed);
    drop(gateway);
    let warmup = (rss.len() / 10).max(5).min(rss.len());
    let growth = trend::fitted_growth_percent(&rss[warmup..]);
    let get = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
    let report = json!({
        "date": chrono_date(),
        "seconds": seconds,
        "subscribers": SUBSCRIBERS, "http_clients": HTTP_CLIENTS,
        "node_dies_every_s": DIES_EVERY.as_secs(), "node_dead_for_s": DEAD_FOR.as_secs(),
        "sessions": get(&tally.sessions), "connections_refused": get(&tally.refused),
        "requests": get(&tally.requests), "answers": get(&tally.answers),
        "error_answers": get(&tally.error_answers), "unanswered": get(&tally.unanswered),
        "duplicates": get(&tally.duplicates), "notifications": get(&tally.notifications),
        "foreign_notifications": get(&tally.foreign), "subscriptions_left_at_node": left,
        "rss_start_kib": rss.get(warmup), "rss_peak_kib": rss.iter().max(), "rss_end_kib": rss.last(),
        "rss_fitted_growth_percent": growth, "rss_samples_kib": rss,
    });
    let met = get(&tally.unanswered) == 0
        && get(&tally.duplicates) == 0
        && get(&tally.foreign) == 0
        && left == 0
        && growth.is_some_and(|growth| growth <= 5.0);
    let summary = format!(
        "# Gateway soak\n\n{} s, {} WebSocket clients coming and going ({} sessions) and {} HTTP clients through \
         `examples/gateway` to a WebSocket node that died for {} s every {} s.\n\n\
         | requests | answered | of them errors | unanswered | duplicates | notifications | foreign | subscriptions left at the node | RSS after warm-up KiB | peak KiB | end KiB | fitted growth |\n\
         | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n\
         | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n\n{}\n",
        seconds,
        SUBSCRIBERS,
        get(&tally.sessions),
        HTTP_CLIENTS,
        DEAD_FOR.as_secs(),
        DIES_EVERY.as_secs(),
        get(&tally.requests),
        get(&tally.answers),
        get(&tally.error_answers),
        get(&tally.unanswered),
        get(&tally.duplicates),
        get(&tally.notifications),
        get(&tally.foreign),
        left,
        report["rss_start_kib"],
        report["rss_peak_kib"],
        report["rss_end_kib"],
        growth.map_or("–".to_owned(), |g| format!("{g:+.1}%")),
        if met { "Every aim met." } else { "**An aim was missed.**" }
    );
    print!("{summary}");
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("perf-reports");
    let _ = std::fs::create_dir_all(&dir);
    std::fs::write(
        dir.join("gateway-soak.json"),
        serde_json::to_string_pretty(&report).unwrap(),
    )
    .unwrap();
    std::fs::write(dir.join("gateway-soak.md"), summary).unwrap();
    if !met {
        std::process::exit(1);
    }
}

/// The date, as `date -u` writes it.
fn chrono_date() -> String {
    std::process::Command::new("date")
        .args(["-u", "+%Y-%m-%dT%H:%M:%SZ"])
        .output()
        .ok()
        .and_then(|out| String::from_utf8(out.stdout).ok())
        .map(|date| date.trim().to_owned())
        .unwrap_or_default()
}
