//! The gateway section's subscription rows: clients subscribed to `newHeads` on a WebSocket
//! node (tokio-tungstenite, pushing a head to every subscription on a timer), straight and
//! through rpcwire's gateway (`Gateway::with_subscriptions`: one upstream connection, each
//! client's subscription its own upstream subscription under the gateway's id), at 1, 100 and
//! 1,000 subscribers; the CPU each process spends per delivered notification.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::{SinkExt, StreamExt};
use tokio_tungstenite::tungstenite::Message;

use super::GatewayRun;
use crate::config::Config;
use crate::render_json::round;
use crate::transports::child::ServerProcess;
use crate::transports::server::{announce, bind};

/// The subscriber counts measured, and the node's push interval for each (about 1,000 to
/// 10,000 notifications a second in all).
const SUBSCRIBERS: [(usize, u64); 3] = [(1, 1), (100, 10), (1000, 100)];

/// A head as geth pushes it (`newHeads`), its number filled in.
fn head(number: u64) -> String {
    format!(
        r#"{{"parentHash":"0x{:064x}","sha3Uncles":"0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347","miner":"0x95222290dd7278aa3ddd389cc1e1d165cc4bafe5","stateRoot":"0x{:064x}","transactionsRoot":"0x{:064x}","receiptsRoot":"0x{:064x}","logsBloom":"0x{}","difficulty":"0x0","number":"{number:#x}","gasLimit":"0x1c9c380","gasUsed":"0xe4e1c0","timestamp":"{:#x}","extraData":"0x6265617665726275696c642e6f7267","mixHash":"0x{:064x}","nonce":"0x0000000000000000","baseFeePerGas":"0x3b9aca00","hash":"0x{:064x}"}}"#,
        number.wrapping_sub(1),
        number ^ 1,
        number ^ 2,
        number ^ 3,
        "0".repeat(512),
        1_700_000_000 + 12 * number,
        number ^ 4,
        number,
    )
}

/// The node: serves `eth_subscribe` / `eth_unsubscribe` over WebSocket and pushes a head to
/// every subscription every `interval_ms`.
pub(crate) async fn node(interval_ms: u64) {
    type Outbox = tokio::sync::mpsc::UnboundedSender<Message>;
    let subscriptions: Arc<std::sync::Mutex<Vec<(u64, Outbox)>>> = Arc::default();
    let pushing = subscriptions.clone();
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(Duration::from_millis(interval_ms.max(1)));
        for number in 20_000_000u64.. {
            ticks.tick().await;
            let head = head(number);
            let mut live = pushing.lock().unwrap();
            live.retain(|(id, outbox): &(u64, Outbox)| {
                let text = format!(
                    r#"{{"jsonrpc":"2.0","method":"eth_subscription","params":{{"subscription":"{id:#x}","result":{head}}}}}"#
                );
                outbox.send(Message::text(text)).is_ok()
            });
        }
    });
    let listener = bind().await;
    announce(listener.local_addr().expect("local address"));
    let next_id = Arc::new(AtomicU64::new(1));
    loop {
        let Ok((socket, _)) = listener.accept().await else {
            continue;
        };
        let _ = socket.set_nodelay(true);
        let (subscriptions, next_id) = (subscriptions.clone(), next_id.clone());
        tokio::spawn(async move {
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
            while let Some(Ok(message)) = stream.next().await {
                let Message::Text(text) = message else { continue };
                let Ok(request) = serde_json::from_str::<serde_json::Value>(&text) else {
                    continue;
                };
                let result = match request["method"].as_str() {
                    Some("eth_subscribe") => {
                        let id = next_id.fetch_add(1, Ordering::Relaxed);
                        subscriptions.lock().unwrap().push((id, outbox.clone()));
                        mine.push(id);
                        serde_json::json!(format!("{id:#x}"))
                    }
                    Some("eth_unsubscribe") => {
                        let id = request["params"][0]
                            .as_str()
                            .and_then(|id| u64::from_str_radix(id.trim_start_matches("0x"), 16).ok());
                        let mut live = subscriptions.lock().unwrap();
                        let before = live.len();
                        live.retain(|(live, _)| Some(*live) != id);
                        serde_json::json!(live.len() < before)
                    }
                    _ => serde_json::json!(null),
                };
                let answer = serde_json::json!({"jsonrpc": "2.0", "id": request["id"], "result": result});
                let _ = outbox.send(Message::text(answer.to_string()));
            }
            subscriptions.lock().unwrap().retain(|(id, _)| !mine.contains(id));
            writer.abort();
        });
    }
}

/// rpcwire's gateway in front of the node at `url`: `Gateway::with_subscriptions` behind
/// `HttpServer` (WebSocket clients), as `examples/gateway` builds it for a `ws://` upstream.
pub(crate) async fn gateway(url: &str) {
    use rpcwire::proxy::{Dial, Gateway, Subscriptions, Upstream, UpstreamGroup};
    let subscriptions = Subscriptions::new([url], &Dial::new()).expect("a ws:// URL");
    let pool = UpstreamGroup::new(vec![Upstream::address(url).expect("a ws:// URL")]);
    let router = Gateway::new(pool).with_subscriptions(subscriptions).into_router();
    super::servers::serve_router(router).await;
}

/// `count` clients at `url`, each subscribed to `newHeads` once (all subscribed when it
/// returns), counting the notifications they get.
async fn subscribe(url: &str, count: usize, received: &Arc<AtomicU64>) -> Vec<tokio::task::JoinHandle<()>> {
    let mut clients = Vec::with_capacity(count);
    let (ready, mut subscribed) = tokio::sync::mpsc::channel::<()>(count.max(1));
    for _ in 0..count {
        let (url, received, ready) = (url.to_owned(), received.clone(), ready.clone());
        clients.push(tokio::spawn(async move {
            let (mut socket, _) = tokio_tungstenite::connect_async(url.as_str())
                .await
                .expect("a subscriber connects");
            socket
                .send(Message::text(
                    r#"{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newHeads"]}"#,
                ))
                .await
                .expect("subscribes");
            let mut answered = false;
            while let Some(Ok(message)) = socket.next().await {
                let Message::Text(text) = message else { continue };
                if text.contains(r#""eth_subscription""#) {
                    received.fetch_add(1, Ordering::Relaxed);
                } else if !answered && text.contains(r#""result":"0x"#) {
                    answered = true;
                    let _ = ready.send(()).await;
                }
            }
        }));
    }
    for _ in 0..count {
        subscribed.recv().await;
    }
    clients
}

/// Measures the subscription rows: for each subscriber count, straight to the node and
/// through the gateway.
pub(crate) fn measure_subscriptions(config: &Config) -> Vec<GatewayRun> {
    let duration = if config.quick {
        Duration::from_millis(1500)
    } else {
        Duration::from_secs(4)
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let mut runs = Vec::new();
    for (subscribers, interval) in SUBSCRIBERS {
        let node = ServerProcess::start_with("gateway-ws-node", &[&interval.to_string()]);
        let node_url = format!("ws://{}/", node.address);
        let gateway = ServerProcess::start_with("gateway-subs", &[&node_url]);
        for (name, url, what) in [
            (
                "direct",
                node_url.clone(),
                "the node's WebSocket server, straight",
            ),
            (
                "rpcwire",
                format!("ws://{}/", gateway.address),
                "rpcwire's Gateway::with_subscriptions in front of the node",
            ),
        ] {
            let received = Arc::new(AtomicU64::new(0));
            let (count, seconds, gateway_cpu, node_cpu) = runtime.block_on(async {
                let clients = subscribe(&url, subscribers, &received).await;
                // Every subscriber has had a head first.
                tokio::time::sleep(Duration::from_millis(3 * interval + 50)).await;
                let (from, gateway_from, node_from) =
                    (received.load(Ordering::Relaxed), gateway.cpu(), node.cpu());
                let started = Instant::now();
                tokio::time::sleep(duration).await;
                let (to, gateway_to, node_to) = (received.load(Ordering::Relaxed), gateway.cpu(), node.cpu());
                let seconds = started.elapsed().as_secs_f64();
                for client in clients {
                    client.abort();
                }
                (
                    to - from,
                    seconds,
                    gateway_to.saturating_sub(gateway_from),
                    node_to.saturating_sub(node_from),
                )
            });
            let per = |cpu: Duration| round(cpu.as_secs_f64() * 1e6 / count.max(1) as f64, 2);
            let (cpu, upstream) = if name == "direct" {
                (per(node_cpu), None)
            } else {
                (per(gateway_cpu), Some(per(node_cpu)))
            };
            println!(
                "gateway: SUBS {subscribers:>4} subscribers {name:<8}: {:>7.0} notifications/s, CPU {cpu:>6.2} µs per \
                 notification{}",
                count as f64 / seconds,
                upstream.map_or(String::new(), |node| format!(" (the node's: {node:.2})"))
            );
            runs.push(GatewayRun {
                workload: "SUBS",
                implementation: name,
                in_flight: subscribers,
                req_per_s: round(count as f64 / seconds, 0),
                added_p50_us: 0.0,
                added_p99_us: 0.0,
                cpu_us_per_req: cpu,
                p50_us: 0.0,
                p99_us: 0.0,
                requests: count,
                what,
                rounds: vec![cpu],
                redis_cpu_us_per_req: None,
                redis_round_trips_per_req: None,
                redis_scripts_per_req: None,
                redis_commands_per_req: None,
                upstream_cpu_us_per_req: upstream,
                cache_hit_rate: None,
            });
            // Let the clients' leaving reach the servers before the next run.
            runtime.block_on(async { tokio::time::sleep(Duration::from_millis(300)).await });
        }
    }
    runs
}
