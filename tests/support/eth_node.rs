//! A small Ethereum node for the tests that put real Ethereum clients (viem, ethers.js,
//! web3.py) in front of `examples/gateway`: JSON-RPC over HTTP POST on 127.0.0.1 at any path
//! (`/v3/KEY` as providers have it), single requests and batches, a few read methods with
//! fixed answers, and what providers do besides answering — every request refused for a while
//! with `429 Too Many Requests` (`Retry-After: 1` and a -32005 body), as a rate limit over its
//! window does. It counts what it was sent. Stops when dropped.
#![allow(dead_code)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::http::{HeaderMap, HeaderValue, StatusCode};
use serde_json::{json, Value};
use tokio::sync::oneshot;

/// The block number the node is at (`eth_blockNumber`).
pub const BLOCK_NUMBER: u64 = 19_531_250;

/// The block the node holds final (`eth_getBlockByNumber("finalized")`).
pub const FINALIZED: u64 = BLOCK_NUMBER - 64;

/// The widest range of blocks `eth_getLogs` serves (as Alchemy's and others' limits).
pub const MAX_LOG_RANGE: u64 = 1000;

/// A block as nodes write it (its hash made from its number).
fn block_object(number: u64) -> Value {
    json!({
        "number": format!("{number:#x}"), "hash": format!("0x{number:064x}"),
        "parentHash": format!("0x{:064x}", number.saturating_sub(1)), "timestamp": format!("{:#x}", 1_700_000_000 + 12 * number),
        "gasLimit": "0x1c9c380", "gasUsed": "0x0", "baseFeePerGas": "0x3b9aca00", "miner": format!("0x{:040x}", 0),
        "difficulty": "0x0", "extraData": "0x", "nonce": "0x0000000000000000", "size": "0x220",
        "logsBloom": format!("0x{}", "0".repeat(512)), "mixHash": format!("0x{:064x}", 0),
        "stateRoot": format!("0x{:064x}", 1), "transactionsRoot": format!("0x{:064x}", 2),
        "receiptsRoot": format!("0x{:064x}", 3), "sha3Uncles": format!("0x{:064x}", 4),
        "transactions": [], "uncles": []
    })
}

/// A log of block `number`.
fn log_object(number: u64) -> Value {
    json!({
        "address": format!("0x{:040x}", 0xab), "topics": [format!("0x{:064x}", 0xdd)], "data": "0x",
        "blockNumber": format!("{number:#x}"), "blockHash": format!("0x{number:064x}"),
        "transactionHash": format!("0x{:064x}", number + (1 << 40)), "transactionIndex": "0x0",
        "logIndex": "0x0", "removed": false
    })
}

/// The error body of a refusal for the node's rate limit, as Infura writes it.
pub const RATE_LIMITED: &str = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32005,"message":"project ID request rate exceeded","data":{"see":"https://infura.io/dashboard"}}}"#;

/// What the node was sent, and what it is to do with the next requests.
#[derive(Default)]
pub struct NodeState {
    /// POSTs received.
    pub posts: AtomicUsize,
    /// POSTs refused with 429.
    pub refused: AtomicUsize,
    /// JSON-RPC requests received (each element of a batch counts).
    pub requests: AtomicUsize,
    /// For how long every POST is refused with 429, and since when (the first POST after
    /// it was set: a client's start-up is not in it).
    pub refusing: Mutex<Option<(Duration, Option<Instant>)>>,
    /// JSON-RPC requests received by method (`eth_getBlockByNumber` with its block:
    /// `"eth_getBlockByNumber 0x12a05f2"`).
    pub methods: Mutex<std::collections::HashMap<String, usize>>,
}

/// A running node; dropping it stops it.
pub struct EthNode {
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    pub state: Arc<NodeState>,
    stop: Option<oneshot::Sender<()>>,
}

impl Drop for EthNode {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

impl EthNode {
    /// Starts a node on a fresh port, on a thread of its own (the tests that use it run child
    /// processes with blocking waits).
    pub fn start() -> EthNode {
        let state = Arc::new(NodeState::default());
        let served = state.clone();
        let (address, stop) = serve_on_own_thread(move |listener, stopped| async move {
            let app = axum::Router::new()
                .route("/", axum::routing::post(answer))
                .route("/{*path}", axum::routing::post(answer))
                .with_state(served);
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async move {
                    let _ = stopped.await;
                })
                .await;
        });
        EthNode {
            base: format!("http://{address}"),
            state,
            stop: Some(stop),
        }
    }

    /// Refuses every POST with 429 for `window` from the next one on.
    pub fn refuse_for(&self, window: Duration) {
        *self.state.refusing.lock().unwrap() = Some((window, None));
    }

    /// How many POSTs it got, and how many of them it refused.
    pub fn posts(&self) -> (usize, usize) {
        (
            self.state.posts.load(Ordering::SeqCst),
            self.state.refused.load(Ordering::SeqCst),
        )
    }

    /// How many JSON-RPC requests it got (each element of a batch counts).
    pub fn requests(&self) -> usize {
        self.state.requests.load(Ordering::SeqCst)
    }

    /// How many requests for `method` it got (see [`NodeState::methods`]).
    pub fn calls(&self, method: &str) -> usize {
        self.state
            .methods
            .lock()
            .unwrap()
            .get(method)
            .copied()
            .unwrap_or(0)
    }

    /// Forgets what it was sent.
    pub fn reset(&self) {
        self.state.methods.lock().unwrap().clear();
        self.state.posts.store(0, Ordering::SeqCst);
        self.state.refused.store(0, Ordering::SeqCst);
        self.state.requests.store(0, Ordering::SeqCst);
    }
}

/// Runs `serve` on a listener on a fresh 127.0.0.1 port, on a thread of its own with a runtime
/// of its own (the tests that use the nodes run child processes with blocking waits); its
/// address, and what stops it when sent or dropped.
fn serve_on_own_thread<F, Fut>(serve: F) -> (std::net::SocketAddr, oneshot::Sender<()>)
where
    F: FnOnce(tokio::net::TcpListener, oneshot::Receiver<()>) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()>,
{
    let (stop, stopped) = oneshot::channel::<()>();
    let (bound, address) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            bound.send(listener.local_addr().unwrap()).unwrap();
            serve(listener, stopped).await;
        });
    });
    (address.recv().unwrap(), stop)
}

async fn answer(
    axum::extract::State(state): axum::extract::State<Arc<NodeState>>,
    body: axum::body::Bytes,
) -> (StatusCode, HeaderMap, String) {
    state.posts.fetch_add(1, Ordering::SeqCst);
    let mut headers = HeaderMap::new();
    headers.insert("content-type", HeaderValue::from_static("application/json"));
    let refusing = match &mut *state.refusing.lock().unwrap() {
        Some((window, since)) => since.get_or_insert_with(Instant::now).elapsed() < *window,
        None => false,
    };
    if refusing {
        state.refused.fetch_add(1, Ordering::SeqCst);
        headers.insert("retry-after", HeaderValue::from_static("1"));
        return (StatusCode::TOO_MANY_REQUESTS, headers, RATE_LIMITED.to_owned());
    }
    let Ok(request) = serde_json::from_slice::<Value>(&body) else {
        let error = json!({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}});
        return (StatusCode::OK, headers, error.to_string());
    };
    let answer = match request {
        Value::Array(batch) => Value::Array(batch.iter().map(|request| one(&state, request)).collect()),
        request => one(&state, &request),
    };
    (StatusCode::OK, headers, answer.to_string())
}

/// The answer to one request.
fn one(state: &NodeState, request: &Value) -> Value {
    state.requests.fetch_add(1, Ordering::SeqCst);
    let id = request.get("id").cloned().unwrap_or(Value::Null);
    let method = request["method"].as_str().unwrap_or_default();
    let params = &request["params"];
    let counted = match (method, params[0].as_str()) {
        ("eth_getBlockByNumber", Some(block)) => format!("{method} {block}"),
        _ => method.to_owned(),
    };
    *state.methods.lock().unwrap().entry(counted).or_default() += 1;
    let number = |value: &Value| match value.as_str() {
        Some("latest") => Some(BLOCK_NUMBER),
        Some("finalized") => Some(FINALIZED),
        Some(text) => u64::from_str_radix(text.strip_prefix("0x")?, 16).ok(),
        None => None,
    };
    let result = match method {
        "eth_getBlockByNumber" => match number(&params[0]) {
            Some(block) if block <= BLOCK_NUMBER => block_object(block),
            _ => Value::Null,
        },
        "eth_getLogs" => {
            let (Some(from), Some(to)) = (number(&params[0]["fromBlock"]), number(&params[0]["toBlock"]))
            else {
                return json!({"jsonrpc":"2.0","id":id,"error":{"code":-32602,"message":"fromBlock and toBlock are needed"}});
            };
            if to < from || to - from >= MAX_LOG_RANGE {
                return json!({"jsonrpc":"2.0","id":id,"error":{"code":-32005,"message":format!("query exceeds max block range {MAX_LOG_RANGE}")}});
            }
            // A log in every hundredth block.
            Value::Array(
                (from..=to)
                    .filter(|block| block % 100 == 0)
                    .map(log_object)
                    .collect(),
            )
        }
        "eth_chainId" => json!("0x1"),
        "net_version" => json!("1"),
        "eth_blockNumber" => json!(format!("{BLOCK_NUMBER:#x}")),
        "eth_getBalance" => json!("0xde0b6b3a7640000"),
        "eth_gasPrice" => json!("0x3b9aca00"),
        method => {
            return json!({"jsonrpc":"2.0","id":id,"error":{"code":-32601,"message":format!("the method {method} does not exist/is not available")}})
        }
    };
    json!({"jsonrpc":"2.0","id":id,"result":result})
}

/// A WebSocket node that serves `eth_subscribe` / `eth_unsubscribe` (any params: every
/// subscription gets the heads pushed) and pushes a new head to every subscription on
/// [`WsNode::push`]; [`WsNode::drop_connections`] closes every connection it has, as a node
/// going away does (it still accepts new ones). Runs on a thread of its own; stops when
/// dropped.
pub struct WsNode {
    /// `ws://127.0.0.1:PORT`.
    pub url: String,
    shared: Arc<WsShared>,
    stop: Option<oneshot::Sender<()>>,
}

#[derive(Default)]
struct WsShared {
    /// Each live subscription: its id and the connection's outgoing queue.
    subscriptions: Mutex<Vec<(String, tokio::sync::mpsc::UnboundedSender<String>, u64)>>,
    /// Bumped to close every connection.
    generation: std::sync::atomic::AtomicU64,
    next_id: AtomicUsize,
    connections: AtomicUsize,
}

impl Drop for WsNode {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

impl WsNode {
    pub fn start() -> WsNode {
        let shared = Arc::new(WsShared::default());
        let served = shared.clone();
        let (address, stop) = serve_on_own_thread(move |listener, mut stopped| async move {
            loop {
                tokio::select! {
                    _ = &mut stopped => break,
                    accepted = listener.accept() => {
                        let Ok((socket, _)) = accepted else { break };
                        tokio::spawn(ws_connection(socket, served.clone()));
                    }
                }
            }
        });
        WsNode {
            url: format!("ws://{address}/v3/SECRET-KEY-7f3a9c41d2"),
            shared,
            stop: Some(stop),
        }
    }

    /// Pushes head `number` to every subscription; how many it went to.
    pub fn push(&self, number: u64) -> usize {
        self.push_padded(number, 0)
    }

    /// Pushes head `number` with `padding` bytes of extra data (a large block's worth).
    pub fn push_padded(&self, number: u64, padding: usize) -> usize {
        let subscriptions = self.shared.subscriptions.lock().unwrap();
        let extra = "0".repeat(padding);
        for (id, out, _) in subscriptions.iter() {
            let notification = json!({"jsonrpc":"2.0","method":"eth_subscription","params":{
                "subscription": id, "result": {"number": format!("{number:#x}"), "hash": format!("0x{number:064x}"), "extraData": extra}}});
            let _ = out.send(notification.to_string());
        }
        subscriptions.len()
    }

    /// The subscriptions the node holds now.
    pub fn subscriptions(&self) -> usize {
        self.shared.subscriptions.lock().unwrap().len()
    }

    /// Connections accepted so far.
    pub fn connections(&self) -> usize {
        self.shared.connections.load(Ordering::SeqCst)
    }

    /// Closes every connection (their subscriptions go with them).
    pub fn drop_connections(&self) {
        self.shared.generation.fetch_add(1, Ordering::SeqCst);
        self.shared.subscriptions.lock().unwrap().clear();
    }
}

async fn ws_connection(socket: tokio::net::TcpStream, shared: Arc<WsShared>) {
    use futures::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::Message;
    let Ok(socket) = tokio_tungstenite::accept_async(socket).await else {
        return;
    };
    shared.connections.fetch_add(1, Ordering::SeqCst);
    let generation = shared.generation.load(Ordering::SeqCst);
    let connection = shared.connections.load(Ordering::SeqCst) as u64;
    let (mut sink, mut stream) = socket.split();
    let (out, mut outgoing) = tokio::sync::mpsc::unbounded_channel::<String>();
    let mut ticker = tokio::time::interval(Duration::from_millis(20));
    loop {
        tokio::select! {
            _ = ticker.tick() => {
                if shared.generation.load(Ordering::SeqCst) != generation {
                    break;
                }
            }
            Some(text) = outgoing.recv() => {
                if sink.send(Message::text(text)).await.is_err() {
                    break;
                }
            }
            message = stream.next() => {
                let Some(Ok(Message::Text(text))) = message else { break };
                let Ok(request) = serde_json::from_str::<Value>(&text) else { continue };
                let id = request["id"].clone();
                let result = match request["method"].as_str().unwrap_or_default() {
                    "eth_subscribe" if request["params"][0] == "bogus" => {
                        let error = json!({"jsonrpc":"2.0","id":id,"error":{"code":-32602,"message":"unsupported subscription type"}});
                        if sink.send(Message::text(error.to_string())).await.is_err() {
                            break;
                        }
                        continue;
                    }
                    "eth_subscribe" => {
                        let number = shared.next_id.fetch_add(1, Ordering::SeqCst);
                        let sub = format!("0x{number:x}");
                        shared.subscriptions.lock().unwrap().push((sub.clone(), out.clone(), connection));
                        json!(sub)
                    }
                    "eth_unsubscribe" => {
                        let sub = request["params"][0].as_str().unwrap_or_default().to_owned();
                        let mut subscriptions = shared.subscriptions.lock().unwrap();
                        let before = subscriptions.len();
                        subscriptions.retain(|(id, _, _)| *id != sub);
                        json!(subscriptions.len() < before)
                    }
                    "eth_chainId" => json!("0x1"),
                    // What viem's watchBlocks asks for each head it is pushed.
                    "eth_getBlockByNumber" => request["params"][0]
                        .as_str()
                        .and_then(|number| u64::from_str_radix(number.strip_prefix("0x")?, 16).ok())
                        .map_or(Value::Null, block_object),
                    _ => json!(null),
                };
                let answer = json!({"jsonrpc":"2.0","id":id,"result":result}).to_string();
                if sink.send(Message::text(answer)).await.is_err() {
                    break;
                }
            }
        }
    }
    shared
        .subscriptions
        .lock()
        .unwrap()
        .retain(|(_, _, at)| *at != connection);
    let _ = sink.close().await;
}
