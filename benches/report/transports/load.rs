//! The load generator: one thread, N connections, each sending the request and waiting for
//! its answer before the next (no pipelining), over HTTP/1.1 (keep-alive, plain or over TLS:
//! rustls, trusting the authority given to [`trust`]) or WebSocket. The
//! clients are minimal hand-written ones, the same for every server, so that the load side
//! costs the same whatever it talks to; each answer is checked.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;

/// The TLS client configuration of `Protocol::Https` connections (HTTP/1.1 in ALPN).
static TLS: std::sync::OnceLock<Arc<rustls::ClientConfig>> = std::sync::OnceLock::new();

/// Trusts the authority in `ca_pem` for `Protocol::Https` connections (once per process).
pub(crate) fn trust(ca_pem: &str) {
    TLS.get_or_init(|| {
        use rustls::pki_types::pem::PemObject;
        let mut roots = rustls::RootCertStore::empty();
        for cert in rustls::pki_types::CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
            roots.add(cert.expect("a CA certificate")).expect("a root");
        }
        let mut config =
            rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
                .with_safe_default_protocol_versions()
                .expect("TLS versions")
                .with_root_certificates(roots)
                .with_no_client_auth();
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Arc::new(config)
    });
}

/// One request a client sends, ready on the wire, and what its answer must contain.
#[derive(Clone, Debug)]
pub(crate) struct Exchange {
    pub(crate) wire: Vec<u8>,
    pub(crate) expect: Vec<u8>,
}

impl Exchange {
    /// `body` as an HTTP/1.1 POST or a WebSocket text frame; its answer must contain `expect`.
    pub(crate) fn new(protocol: Protocol, body: &[u8], expect: &[u8]) -> Exchange {
        Exchange::with_header(protocol, body, expect, "")
    }

    /// [`Exchange::new`] with one more line in the HTTP request's head (`header`, e.g.
    /// `X-Api-Key: KEY`; none when empty). A WebSocket frame has no head: `header` is not sent.
    pub(crate) fn with_header(protocol: Protocol, body: &[u8], expect: &[u8], header: &str) -> Exchange {
        let wire = match protocol {
            Protocol::Http | Protocol::Https => {
                let header = if header.is_empty() {
                    String::new()
                } else {
                    format!("{header}\r\n")
                };
                let mut wire = format!(
                    "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n{header}Content-Length: {}\r\n\r\n",
                    body.len()
                )
                .into_bytes();
                wire.extend_from_slice(body);
                wire
            }
            Protocol::WebSocket => masked_text_frame(body),
        };
        Exchange {
            wire,
            expect: expect.to_vec(),
        }
    }
}

/// Which protocol the connections speak.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Protocol {
    Http,
    /// HTTP/1.1 over TLS (to `localhost`, trusting the authority given to [`trust`]).
    Https,
    WebSocket,
}

/// What one run measured on the load side.
pub(crate) struct Load {
    pub(crate) requests: u64,
    pub(crate) seconds: f64,
    pub(crate) histogram: Histogram<u64>,
}

const WARMING: u8 = 0;
const MEASURING: u8 = 1;
const STOPPING: u8 = 2;

/// Opens `connections` connections to `address`, runs them for `warmup` unmeasured, calls
/// `mark` (to read the server's CPU) and measures for `duration`, then calls `mark` again.
/// Each connection sends `exchanges` in turn (starting at its own offset).
pub(crate) fn run(
    protocol: Protocol,
    address: SocketAddr,
    connections: usize,
    exchanges: &Arc<Vec<Exchange>>,
    warmup: Duration,
    duration: Duration,
    mut mark: impl FnMut(),
) -> Load {
    let exchanges = exchanges.clone();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    runtime.block_on(async move {
        let phase = Arc::new(AtomicU8::new(WARMING));
        let mut clients = Vec::with_capacity(connections);
        for client in 0..connections {
            let socket = connect(protocol, address).await;
            let start = client * 7 % exchanges.len().max(1);
            let (exchanges, phase) = (exchanges.clone(), phase.clone());
            clients.push(if protocol == Protocol::Https {
                let config = TLS.get().expect("load::trust was called").clone();
                let name = rustls::pki_types::ServerName::try_from("localhost").expect("a name");
                let socket = tokio_rustls::TlsConnector::from(config)
                    .connect(name, socket)
                    .await
                    .expect("a TLS handshake");
                tokio::spawn(drive(protocol, socket, exchanges, start, phase))
            } else {
                tokio::spawn(drive(protocol, socket, exchanges, start, phase))
            });
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
        let mut requests = 0;
        for client in clients {
            let (count, h) = client.await.expect("a client task");
            requests += count;
            histogram.add(h).expect("same histogram bounds");
        }
        Load {
            requests,
            seconds,
            histogram,
        }
    })
}

/// Connects (and, for WebSocket, opens the WebSocket).
async fn connect(protocol: Protocol, address: SocketAddr) -> TcpStream {
    let mut socket = TcpStream::connect(address).await.expect("connect to the server");
    socket.set_nodelay(true).expect("nodelay");
    if protocol == Protocol::WebSocket {
        let request = format!(
            "GET / HTTP/1.1\r\nHost: {address}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\
             Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
        );
        socket.write_all(request.as_bytes()).await.expect("handshake");
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        // Byte by byte, so that no frame byte after the head is taken with it.
        while !head.ends_with(b"\r\n\r\n") {
            socket.read_exact(&mut byte).await.expect("handshake answer");
            head.push(byte[0]);
        }
        assert!(
            head.starts_with(b"HTTP/1.1 101"),
            "WebSocket upgrade refused: {}",
            String::from_utf8_lossy(&head)
        );
    }
    socket
}

/// Sends the requests in turn and reads their answers until told to stop; the count and
/// latencies of the exchanges that ended while measuring.
async fn drive<S: AsyncRead + AsyncWrite + Unpin>(
    protocol: Protocol,
    mut socket: S,
    exchanges: Arc<Vec<Exchange>>,
    mut next: usize,
    phase: Arc<AtomicU8>,
) -> (u64, Histogram<u64>) {
    let mut histogram = Histogram::<u64>::new(3).expect("a histogram");
    let mut buffer = Vec::with_capacity(4096);
    let mut count = 0;
    loop {
        let now = phase.load(Ordering::Relaxed);
        if now == STOPPING {
            break;
        }
        let exchange = &exchanges[next];
        next = (next + 1) % exchanges.len();
        let began = Instant::now();
        socket.write_all(&exchange.wire).await.expect("send a request");
        let body = match protocol {
            Protocol::Http | Protocol::Https => read_http_answer(&mut socket, &mut buffer).await,
            Protocol::WebSocket => read_ws_answer(&mut socket, &mut buffer).await,
        };
        assert!(
            memchr::memmem::find(body, &exchange.expect).is_some(),
            "unexpected answer: {} (expected {})",
            String::from_utf8_lossy(&body[..body.len().min(300)]),
            String::from_utf8_lossy(&exchange.expect)
        );
        let nanos = began.elapsed().as_nanos() as u64;
        if now == MEASURING && phase.load(Ordering::Relaxed) == MEASURING {
            histogram.record(nanos.max(1)).expect("in range");
            count += 1;
        }
    }
    (count, histogram)
}

/// A client's text frame (FIN, opcode 1, masked with a fixed key; payload under 126 bytes).
fn masked_text_frame(payload: &[u8]) -> Vec<u8> {
    assert!(payload.len() < 126, "short frames only");
    let key = [0x37, 0xfa, 0x21, 0x3d];
    let mut frame = vec![0x81, 0x80 | payload.len() as u8];
    frame.extend_from_slice(&key);
    frame.extend(payload.iter().enumerate().map(|(i, b)| b ^ key[i % 4]));
    frame
}

/// Reads more bytes into `buffer`; panics at the end of the stream.
async fn fill<S: AsyncRead + Unpin>(socket: &mut S, buffer: &mut Vec<u8>) {
    let len = buffer.len();
    buffer.resize(len + 4096, 0);
    let n = socket.read(&mut buffer[len..]).await.expect("read an answer");
    assert!(n > 0, "the server closed the connection");
    buffer.truncate(len + n);
}

/// One HTTP/1.1 answer (status 200 with a Content-Length); its body.
async fn read_http_answer<'b, S: AsyncRead + Unpin>(socket: &mut S, buffer: &'b mut Vec<u8>) -> &'b [u8] {
    buffer.clear();
    let head_end = loop {
        if let Some(at) = memchr::memmem::find(buffer, b"\r\n\r\n") {
            break at + 4;
        }
        fill(socket, buffer).await;
    };
    let head = std::str::from_utf8(&buffer[..head_end]).expect("an ASCII head");
    assert!(head.starts_with("HTTP/1.1 200"), "not a 200: {head}");
    let length: usize = head
        .split("\r\n")
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse().ok())?
        })
        .unwrap_or_else(|| panic!("no Content-Length: {head}"));
    while buffer.len() < head_end + length {
        fill(socket, buffer).await;
    }
    assert_eq!(buffer.len(), head_end + length, "one answer per request");
    &buffer[head_end..]
}

/// One unmasked text frame from the server (FIN set); its payload.
async fn read_ws_answer<'b, S: AsyncRead + Unpin>(socket: &mut S, buffer: &'b mut Vec<u8>) -> &'b [u8] {
    buffer.clear();
    while buffer.len() < 2 {
        fill(socket, buffer).await;
    }
    assert_eq!(buffer[0], 0x81, "a final text frame");
    let (start, length) = match buffer[1] & 0x7f {
        126 => {
            while buffer.len() < 4 {
                fill(socket, buffer).await;
            }
            (4, u16::from_be_bytes([buffer[2], buffer[3]]) as usize)
        }
        127 => panic!("an answer over 64 KiB"),
        n => (2, n as usize),
    };
    while buffer.len() < start + length {
        fill(socket, buffer).await;
    }
    assert_eq!(buffer.len(), start + length, "one answer per request");
    &buffer[start..]
}
