//! The gateway's subscription router (`proxy::Subscriptions`) under any order of events, read
//! from the input: three clients subscribing, unsubscribing and leaving; an in-memory node
//! pushing heads, pushing for subscriptions it never made, and dropping its connections. No
//! client ever gets a notification under an id it was not given, and once every client has
//! left, nothing is held: not in the gateway, not at the node. Time is tokio's paused clock.
#![no_main]

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use rpcwire::dispatch::Router;
use rpcwire::frame::Framing;
use rpcwire::proxy::{Connector, Gateway, Subscriptions, UpstreamGroup};
use rpcwire::transport::{AnyTransport, Peer, StreamTransport};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
use tokio::sync::mpsc;

/// The node: its live subscriptions (id, the connection's outgoing lines, the connection's
/// number) and the number of the connections to drop.
#[derive(Default)]
struct Node {
    subscriptions: Vec<(String, mpsc::UnboundedSender<String>, u64)>,
    dropped_below: u64,
    connections: u64,
    next: u64,
}

/// Serves one connection to the node on `io`.
async fn serve(io: tokio::io::DuplexStream, node: Arc<Mutex<Node>>) {
    let number = {
        let mut node = node.lock().unwrap();
        node.connections += 1;
        node.connections
    };
    let (read, mut write) = tokio::io::split(io);
    let mut lines = tokio::io::BufReader::new(read).lines();
    let (out, mut outgoing) = mpsc::unbounded_channel::<String>();
    let mut tick = tokio::time::interval(Duration::from_millis(5));
    loop {
        tokio::select! {
            _ = tick.tick() => {
                if node.lock().unwrap().dropped_below >= number {
                    break;
                }
            }
            Some(line) = outgoing.recv() => {
                if write.write_all(format!("{line}\n").as_bytes()).await.is_err() {
                    break;
                }
            }
            line = lines.next_line() => {
                let Ok(Some(line)) = line else { break };
                let Ok(request) = serde_json::from_str::<Value>(&line) else { continue };
                let result = {
                    let mut node = node.lock().unwrap();
                    match request["method"].as_str().unwrap_or_default() {
                        "eth_subscribe" => {
                            node.next += 1;
                            let id = format!("0x{:x}", node.next);
                            node.subscriptions.push((id.clone(), out.clone(), number));
                            json!(id)
                        }
                        "eth_unsubscribe" => {
                            let id = request["params"][0].as_str().unwrap_or_default().to_owned();
                            let before = node.subscriptions.len();
                            node.subscriptions.retain(|(held, _, _)| *held != id);
                            json!(node.subscriptions.len() < before)
                        }
                        _ => Value::Null,
                    }
                };
                let answer = json!({"jsonrpc":"2.0","id":request["id"],"result":result});
                if write.write_all(format!("{answer}\n").as_bytes()).await.is_err() {
                    break;
                }
            }
        }
    }
    node.lock()
        .unwrap()
        .subscriptions
        .retain(|(_, _, at)| *at != number);
}

/// A client of the gateway: its peer, the ids it was given, the ids it was sent.
struct Client {
    peer: Peer,
    given: HashSet<String>,
    sent: Arc<Mutex<Vec<String>>>,
}

fn client(router: &Arc<Router>) -> Client {
    let (ours, theirs) = tokio::io::duplex(1 << 16);
    let server = Peer::new(StreamTransport::from_io(theirs, Framing::Ndjson), router.clone());
    tokio::spawn(async move { server.closed().await });
    let sent = Arc::new(Mutex::new(Vec::new()));
    let noted = sent.clone();
    let mut notes = Router::new();
    notes.raw_notification("eth_subscription", move |params| {
        let params: Value = params
            .and_then(|p| serde_json::from_str(p.raw().get()).ok())
            .unwrap_or(Value::Null);
        noted
            .lock()
            .unwrap()
            .push(params["subscription"].as_str().unwrap_or("").to_owned());
    });
    Client {
        peer: Peer::new(StreamTransport::from_io(ours, Framing::Ndjson), notes),
        given: HashSet::new(),
        sent,
    }
}

/// No client was sent a notification under an id it was not given.
fn check(clients: &[Client], gone: &[Client]) {
    for client in clients.iter().chain(gone) {
        for id in client.sent.lock().unwrap().iter() {
            assert!(
                client.given.contains(id),
                "a notification under {id}, not this client's"
            );
        }
    }
}

/// `future`, given 5 s of the paused clock.
async fn within<F: std::future::Future>(future: F) -> Result<F::Output, tokio::time::error::Elapsed> {
    tokio::time::timeout(Duration::from_secs(5), future).await
}

async fn run(data: &[u8]) {
    let node = Arc::new(Mutex::new(Node::default()));
    let serving = node.clone();
    let connect: Connector = Box::new(move || {
        let node = serving.clone();
        Box::pin(async move {
            let (ours, theirs) = tokio::io::duplex(1 << 16);
            tokio::spawn(serve(theirs, node));
            let (read, write) = tokio::io::split(ours);
            Ok(AnyTransport::stream(read, write, Framing::Ndjson))
        })
    });
    let subscriptions = Subscriptions::connecting(vec![("memory".to_owned(), connect)]).with_limits(4, 64);
    let router = Arc::new(
        Gateway::new(UpstreamGroup::new(vec![]))
            .with_subscriptions(subscriptions.clone())
            .into_router(),
    );
    let mut clients: Vec<Client> = (0..3).map(|_| client(&router)).collect();
    let mut gone = Vec::new();
    for pair in data.chunks(2).take(64) {
        let (op, arg) = (pair[0], pair.get(1).copied().unwrap_or(0));
        let which = usize::from(arg) % clients.len();
        match op % 6 {
            0 => {
                let call = clients[which]
                    .peer
                    .call::<_, String>("eth_subscribe", ["newHeads"]);
                if let Ok(Ok(id)) = within(call).await {
                    clients[which].given.insert(format!("{id}"));
                }
            }
            1 => {
                let given: Vec<String> = clients[which].given.iter().cloned().collect();
                if let Some(id) = given.get(usize::from(arg / 3) % given.len().max(1)) {
                    let _ = within(clients[which].peer.call::<_, bool>("eth_unsubscribe", [id])).await;
                }
            }
            2 => {
                let left = std::mem::replace(&mut clients[which], client(&router));
                left.peer.close().await;
                gone.push(left);
            }
            3 => {
                let node = node.lock().unwrap();
                for (id, out, _) in &node.subscriptions {
                    let head = json!({"jsonrpc":"2.0","method":"eth_subscription",
                        "params":{"subscription":id,"result":{"number":format!("{arg:#x}")}}});
                    let _ = out.send(head.to_string());
                }
                // And one under an id the node never gave.
                if let Some((_, out, _)) = node.subscriptions.first() {
                    let stray = json!({"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"0xdead","result":1}});
                    let _ = out.send(stray.to_string());
                }
            }
            4 => {
                let mut node = node.lock().unwrap();
                node.dropped_below = node.connections;
            }
            _ => tokio::time::sleep(Duration::from_millis(u64::from(arg))).await,
        }
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    check(&clients, &gone);
    // Every client leaves: nothing is held anywhere once things settle (resubscriptions end
    // within 30 s of the paused clock).
    for client in &clients {
        client.peer.close().await;
    }
    tokio::time::sleep(Duration::from_secs(40)).await;
    check(&clients, &gone);
    assert_eq!(
        subscriptions.stats().active,
        0,
        "subscriptions left in the gateway"
    );
    assert!(
        node.lock().unwrap().subscriptions.is_empty(),
        "subscriptions left at the node"
    );
}

fuzz_target!(|data: &[u8]| {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .unwrap()
        .block_on(run(data));
});
