//! One WebSocket connection to `http_server` (tokio-tungstenite's client, not rpcwire's):
//! each message is a text message, each answer a text message, up to the window of answers
//! due. A message over the limit is answered by closing the connection with 1009, so the
//! writer waits for every answer due before sending one, counts the close as its error
//! answer, and opens another connection (a reconnect).

use std::net::SocketAddr;
use std::sync::Arc;

use futures::stream::{SplitSink, SplitStream};
use futures::{SinkExt, StreamExt};
use tokio::net::TcpStream;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use crate::connection::{close_reader, drain, next_to_send, CONNECT_LIMIT, WRITE_LIMIT};
use crate::ledger::Ledger;
use crate::traffic::{Kind, Traffic};

/// The client's WebSocket.
type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// The close code for a message too big to process.
const CLOSE_TOO_BIG: u16 = 1009;

/// How a connection's writing ended.
enum Ending {
    /// The run is over.
    Stopped,
    /// An oversized message was sent: the server closes the connection.
    Closed,
    /// The connection broke.
    Broken(String),
}

/// Sends `traffic` to the WebSocket endpoint at `address` until `stop`, opening another
/// connection after each one the server closes; then waits for the answers due and closes.
pub async fn drive(
    address: SocketAddr,
    ledger: Arc<Ledger>,
    mut traffic: Traffic,
    mut stop: watch::Receiver<bool>,
) {
    while !*stop.borrow() {
        let Some(socket) = connect(address, &ledger).await else {
            return;
        };
        let (mut sink, stream) = socket.split();
        let mut reader = tokio::spawn(read_messages(stream, ledger.clone()));
        match send_until_stopped(&mut sink, &reader, &ledger, &mut traffic, &mut stop).await {
            Ending::Stopped => {
                drain(&ledger, "after the last message").await;
                let _ = tokio::time::timeout(WRITE_LIMIT, sink.send(Message::Close(None))).await;
                close_reader(&mut reader, &ledger).await;
                return;
            }
            Ending::Closed => {
                close_reader(&mut reader, &ledger).await;
                if ledger.outstanding() > 0 {
                    ledger.connection_lost("no close with 1009 after an oversized message");
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

/// Opens a WebSocket to `address`; `None` (noted, and counted as a lost connection) if it
/// cannot be opened in time.
async fn connect(address: SocketAddr, ledger: &Ledger) -> Option<Socket> {
    let url = format!("ws://{address}/");
    let opening = tokio_tungstenite::connect_async_with_config(url.as_str(), None, true);
    let problem = match tokio::time::timeout(CONNECT_LIMIT, opening).await {
        Ok(Ok((socket, _))) => return Some(socket),
        Ok(Err(error)) => format!("cannot open {url}: {error}"),
        Err(_) => format!("no WebSocket at {url} within {} s", CONNECT_LIMIT.as_secs()),
    };
    ledger.connection_lost(&problem);
    None
}

/// Writes messages until the run stops, an oversized message is sent, or the connection
/// breaks.
async fn send_until_stopped(
    sink: &mut SplitSink<Socket, Message>,
    reader: &JoinHandle<()>,
    ledger: &Ledger,
    traffic: &mut Traffic,
    stop: &mut watch::Receiver<bool>,
) -> Ending {
    while let Some(message) = next_to_send(traffic, ledger, stop).await {
        let oversized = message.kind == Kind::Oversized;
        if oversized {
            // Every answer due first: the server closes the connection after this one.
            drain(ledger, "before an oversized message").await;
        }
        if reader.is_finished() {
            ledger.not_sent(&message);
            return Ending::Broken("the server ended the connection".to_owned());
        }
        ledger.sent(&message);
        let problem = match tokio::time::timeout(WRITE_LIMIT, sink.send(Message::text(message.body))).await {
            Ok(Ok(())) => None,
            Ok(Err(error)) => Some(format!("sending a message: {error}")),
            Err(_) => Some(format!("a send stalled for {} s", WRITE_LIMIT.as_secs())),
        };
        if let Some(problem) = problem {
            return Ending::Broken(problem);
        }
        if oversized {
            drain(ledger, "after an oversized message").await; // its close, with 1009
            return Ending::Closed;
        }
    }
    Ending::Stopped
}

/// Reads messages until the connection ends, settling the answers (and a close with 1009
/// as the error answer of an oversized message).
async fn read_messages(mut stream: SplitStream<Socket>, ledger: Arc<Ledger>) {
    while let Some(next) = stream.next().await {
        match next {
            Ok(Message::Text(text)) => ledger.answer_text(text.as_bytes()),
            Ok(Message::Close(frame)) => {
                settle_close(&ledger, frame);
                return;
            }
            Ok(Message::Binary(_)) => ledger.bad_output("a binary WebSocket message"),
            Ok(Message::Ping(_) | Message::Pong(_) | Message::Frame(_)) => {}
            Err(error) => {
                if ledger.outstanding() > 0 {
                    ledger.note(&format!("the WebSocket failed: {error}"));
                }
                return;
            }
        }
    }
}

/// A close from the server: with 1009 the answer to an oversized message; another code is
/// only noted when answers are still due.
fn settle_close(ledger: &Ledger, frame: Option<CloseFrame>) {
    let code = frame.as_ref().map(|frame| u16::from(frame.code));
    if code == Some(CLOSE_TOO_BIG) {
        ledger.null_error_answer(i64::from(CLOSE_TOO_BIG), "a close with 1009");
    } else if ledger.outstanding() > 0 {
        ledger.note(&format!(
            "closed by the server with {code:?} while answers were due"
        ));
    }
}
