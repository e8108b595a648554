//! One HTTP/1.1 keep-alive connection to `http_server`, written by hand on a `TcpStream` so
//! that nothing between the soak and the server retries, reorders or hides a status: each
//! message is a `POST /` with `Content-Type: application/json`, pipelined up to the window
//! of answers due. Responses come in order, so each is checked against the status its
//! message must get: 200 with the answers, 204 for notifications only, 413 for a body over
//! the limit. After a 413 the writer waits for it before sending more; if the server closes
//! the connection (`Connection: close`) the soak opens another and counts a reconnect. Over
//! TLS (`https`), the connection is also closed by the soak after every
//! [`Reconnect::every`] messages and opened again, a new handshake each time.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::connection::{close_reader, drain, next_to_send, CONNECT_LIMIT, WRITE_LIMIT};
use crate::ledger::Ledger;
use crate::traffic::{Kind, Outgoing, Traffic};

/// The largest response head the reader accepts, in bytes.
const MAX_HEAD: usize = 16 << 10;

/// The largest response body the reader accepts, in bytes.
const MAX_BODY: usize = 16 << 20;

/// What the writer and the reader of one connection share.
#[derive(Default)]
struct Pipeline {
    /// The status each message written and not yet answered must get, oldest first.
    statuses: Mutex<VecDeque<u16>>,
    /// Set by the reader (before it settles that answer) when a response says
    /// `Connection: close`.
    closing: AtomicBool,
}

impl Pipeline {
    /// The queue of statuses, even if a thread panicked holding it.
    fn statuses(&self) -> std::sync::MutexGuard<'_, VecDeque<u16>> {
        self.statuses
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// TLS, and how often the soak closes the connection to open another (a new handshake).
#[derive(Clone)]
pub struct Reconnect {
    pub tls: Arc<rustls::ClientConfig>,
    /// Messages per connection.
    pub every: u64,
}

/// A connection, plain or TLS.
trait Connection: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Connection for T {}

/// How a connection's writing ended.
enum Ending {
    /// The run is over.
    Stopped,
    /// The soak's own turn to open a new connection (over TLS).
    Turn,
    /// The server said it closes the connection.
    Closed,
    /// The connection broke.
    Broken(String),
}

/// One response, read whole.
struct Response {
    status: u16,
    /// `Connection: close`.
    close: bool,
    body: Vec<u8>,
}

/// Sends `traffic` to the server at `address` over one connection at a time until `stop`,
/// opening another when the server closes one; then waits for the answers due and closes.
pub async fn drive(
    address: SocketAddr,
    reconnect: Option<Reconnect>,
    ledger: Arc<Ledger>,
    mut traffic: Traffic,
    mut stop: watch::Receiver<bool>,
) {
    while !*stop.borrow() {
        let Some(socket) = connect(address, reconnect.as_ref(), &ledger).await else {
            return;
        };
        let (read_half, mut write_half) = tokio::io::split(socket);
        let pipeline = Arc::new(Pipeline::default());
        let mut reader = tokio::spawn(read_responses(read_half, ledger.clone(), pipeline.clone()));
        let ending = send_until_stopped(
            &mut write_half,
            &reader,
            &pipeline,
            &ledger,
            &mut traffic,
            &mut stop,
            reconnect.as_ref().map(|reconnect| reconnect.every),
        )
        .await;
        match ending {
            Ending::Turn => {
                drain(&ledger, "before closing for a new handshake").await;
                let _ = tokio::time::timeout(WRITE_LIMIT, write_half.shutdown()).await;
                close_reader(&mut reader, &ledger).await;
                ledger.reconnected();
            }
            Ending::Stopped => {
                drain(&ledger, "after the last message").await;
                let _ = tokio::time::timeout(WRITE_LIMIT, write_half.shutdown()).await;
                close_reader(&mut reader, &ledger).await;
                return;
            }
            Ending::Closed => {
                close_reader(&mut reader, &ledger).await;
                if ledger.outstanding() > 0 {
                    ledger.connection_lost("the server closed the connection");
                } else {
                    ledger.reconnected();
                }
            }
            Ending::Broken(why) => {
                reader.abort();
                ledger.connection_lost(&why);
            }
        }
    }
}

/// Opens a connection to `address` (TLS with `reconnect`'s); `None` (noted, and counted as a
/// lost connection) if it cannot be opened in time.
async fn connect(
    address: SocketAddr,
    reconnect: Option<&Reconnect>,
    ledger: &Ledger,
) -> Option<Box<dyn Connection>> {
    let opening = async {
        let socket = TcpStream::connect(address)
            .await
            .map_err(|error| format!("cannot connect to {address}: {error}"))?;
        let _ = socket.set_nodelay(true);
        let Some(reconnect) = reconnect else {
            return Ok(Box::new(socket) as Box<dyn Connection>);
        };
        let name = rustls::pki_types::ServerName::try_from("localhost").expect("a name");
        let socket = tokio_rustls::TlsConnector::from(reconnect.tls.clone())
            .connect(name, socket)
            .await
            .map_err(|error| format!("TLS handshake with {address}: {error}"))?;
        Ok(Box::new(socket) as Box<dyn Connection>)
    };
    let problem = match tokio::time::timeout(CONNECT_LIMIT, opening).await {
        Ok(Ok(socket)) => return Some(socket),
        Ok(Err(problem)) => problem,
        Err(_) => format!("no connection to {address} within {} s", CONNECT_LIMIT.as_secs()),
    };
    ledger.connection_lost(&problem);
    None
}

/// Writes messages until the run stops or the connection closes or breaks, or (with
/// `every`) that many have gone on it.
async fn send_until_stopped(
    writer: &mut (impl AsyncWrite + Unpin),
    reader: &JoinHandle<()>,
    pipeline: &Pipeline,
    ledger: &Ledger,
    traffic: &mut Traffic,
    stop: &mut watch::Receiver<bool>,
    every: Option<u64>,
) -> Ending {
    let mut written = 0u64;
    while let Some(message) = next_to_send(traffic, ledger, stop).await {
        if every.is_some_and(|every| written >= every) {
            ledger.not_sent(&message);
            return Ending::Turn;
        }
        written += 1;
        if pipeline.closing.load(Ordering::Acquire) {
            ledger.not_sent(&message);
            return Ending::Closed;
        }
        if reader.is_finished() {
            ledger.not_sent(&message);
            return Ending::Broken("the server ended the connection".to_owned());
        }
        pipeline.statuses().push_back(expected_status(&message));
        ledger.sent(&message);
        if let Err(problem) = write_request(writer, &message.body).await {
            return Ending::Broken(problem);
        }
        if message.kind == Kind::Oversized {
            // Its 413 (and what came before it) first: the server may close after it.
            drain(ledger, "after an oversized message").await;
            if pipeline.closing.load(Ordering::Acquire) {
                return Ending::Closed;
            }
        }
    }
    Ending::Stopped
}

/// The status `message` must get.
fn expected_status(message: &Outgoing) -> u16 {
    if message.kind == Kind::Oversized {
        413
    } else if message.is_silent() {
        204
    } else {
        200
    }
}

/// Writes one POST with `body`.
async fn write_request(writer: &mut (impl AsyncWrite + Unpin), body: &str) -> Result<(), String> {
    let mut wire = format!(
        "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    wire.extend_from_slice(body.as_bytes());
    match tokio::time::timeout(WRITE_LIMIT, writer.write_all(&wire)).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(error)) => Err(format!("writing a request: {error}")),
        Err(_) => Err(format!("a write stalled for {} s", WRITE_LIMIT.as_secs())),
    }
}

/// Reads responses in order, checking each status and settling the answers, until the
/// connection ends or a response says `Connection: close`.
async fn read_responses(read_half: impl AsyncRead + Unpin, ledger: Arc<Ledger>, pipeline: Arc<Pipeline>) {
    let mut input = BufReader::new(read_half);
    loop {
        let response = match read_response(&mut input).await {
            Ok(Some(response)) => response,
            Ok(None) => {
                let waiting = pipeline.statuses().len();
                if waiting > 0 {
                    ledger.note(&format!(
                        "the server closed the connection with {waiting} responses due"
                    ));
                }
                return;
            }
            Err(problem) => {
                ledger.bad_output(&problem);
                return;
            }
        };
        if response.close {
            pipeline.closing.store(true, Ordering::Release);
        }
        let expected = pipeline.statuses().pop_front();
        settle_response(&ledger, expected, &response);
        if response.close {
            return;
        }
    }
}

/// Checks `response` against the status its message must get, and settles its answers.
fn settle_response(ledger: &Ledger, expected: Option<u16>, response: &Response) {
    match expected {
        None => ledger.wrong_answer(&format!("HTTP {} with no request waiting", response.status)),
        Some(expected) if expected != response.status => ledger.wrong_answer(&format!(
            "HTTP {} for a message that must get {expected}: {}",
            response.status,
            String::from_utf8_lossy(&response.body[..response.body.len().min(200)])
        )),
        Some(_) => {}
    }
    match response.status {
        200 => ledger.answer_text(&response.body),
        413 => ledger.null_error_answer(413, "HTTP 413"),
        _ => {}
    }
}

/// Reads one response; `None` if the connection ends before it begins.
async fn read_response<R: AsyncRead + Unpin>(input: &mut BufReader<R>) -> Result<Option<Response>, String> {
    let mut line = String::new();
    let mut head_bytes = 0;
    if read_head_line(input, &mut line, &mut head_bytes).await? == 0 {
        return Ok(None);
    }
    let status = parse_status_line(&line)?;
    let (mut length, mut close) = (None, false);
    loop {
        if read_head_line(input, &mut line, &mut head_bytes).await? == 0 {
            return Err("the connection ended in a response head".to_owned());
        }
        let text = line.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            break;
        }
        let Some((name, value)) = text.split_once(':') else {
            return Err(format!("a response header without a colon: {text:?}"));
        };
        let (name, value) = (name.trim(), value.trim());
        if name.eq_ignore_ascii_case("content-length") {
            length = Some(
                value
                    .parse::<usize>()
                    .map_err(|_| format!("Content-Length {value:?}"))?,
            );
        } else if name.eq_ignore_ascii_case("connection") {
            close = value
                .split(',')
                .any(|token| token.trim().eq_ignore_ascii_case("close"));
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            return Err(format!("a response with Transfer-Encoding: {value}"));
        }
    }
    let length = match (length, status) {
        (Some(length), _) => length,
        (None, 204 | 304) => 0,
        (None, _) => return Err(format!("HTTP {status} without Content-Length")),
    };
    if length > MAX_BODY {
        return Err(format!("a response body of {length} bytes announced"));
    }
    let mut body = vec![0; length];
    input
        .read_exact(&mut body)
        .await
        .map_err(|e| format!("reading a {length}-byte response body: {e}"))?;
    Ok(Some(Response { status, close, body }))
}

/// Reads one line of a response head into `line`, adding its length to `head_bytes`; the
/// number of bytes read (0 at the end of the connection).
async fn read_head_line<R: AsyncRead + Unpin>(
    input: &mut BufReader<R>,
    line: &mut String,
    head_bytes: &mut usize,
) -> Result<usize, String> {
    line.clear();
    let read = input
        .read_line(line)
        .await
        .map_err(|e| format!("reading a response head: {e}"))?;
    *head_bytes += read;
    if *head_bytes > MAX_HEAD {
        return Err(format!("a response head over {MAX_HEAD} bytes"));
    }
    Ok(read)
}

/// The status of `HTTP/1.1 NNN reason`.
fn parse_status_line(line: &str) -> Result<u16, String> {
    let mut words = line.split_whitespace();
    match (words.next(), words.next().map(str::parse::<u16>)) {
        (Some("HTTP/1.1" | "HTTP/1.0"), Some(Ok(status))) => Ok(status),
        _ => Err(format!("not an HTTP status line: {:?}", line.trim_end())),
    }
}
