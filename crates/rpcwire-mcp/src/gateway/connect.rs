//! Bringing a remote MCP server to a local host: the host speaks stdio (or any transport)
//! to this side, which forwards every frame to a Streamable HTTP endpoint and everything
//! that comes back to the host, frames untouched — streams resumed with `Last-Event-ID`, and
//! an expired session (`404`) started again without the host noticing.

use std::sync::{Arc, Mutex};

use bytes::{Bytes, BytesMut};
use http::Uri;

use crate::http::StreamableHttpClient;
use crate::message::{Message, Params};
use crate::parse::Parsed;
use crate::sync::lock_unpoisoned;
use crate::transport::{FrameReceiver, FrameSender, Transport, TransportError};
use crate::version::ProtocolVersion;

/// Serves the remote MCP server at `url` (Streamable HTTP) to a host over this process's
/// stdin and stdout, until the host closes stdin (the remote session is then ended with
/// `DELETE`). See [`connect`].
///
/// ```no_run
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), rpcwire::transport::TransportError> {
/// rpcwire::mcp::gateway::connect_stdio("http://127.0.0.1:8000/mcp".parse().unwrap()).await
/// # }
/// ```
pub async fn connect_stdio(url: Uri) -> Result<(), TransportError> {
    connect_stdio_with(remote_at(url)?).await
}

/// A client of the remote server at `url`; an address it cannot serve is an I/O error
/// (`InvalidInput`) that says why.
fn remote_at(url: Uri) -> Result<StreamableHttpClient, TransportError> {
    StreamableHttpClient::new(url).map_err(|error| TransportError::Io(error.into()))
}

/// [`connect_stdio`] through `remote`, a client set up as the server asks (a credential
/// header, say: [`StreamableHttpClient::with_header`]); sessions are recovered as
/// [`connect`] says.
///
/// ```no_run
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), rpcwire::transport::TransportError> {
/// use http::header::{HeaderValue, AUTHORIZATION};
/// let remote = rpcwire::mcp::http::StreamableHttpClient::new("http://127.0.0.1:8000/mcp".parse().unwrap())
///     .unwrap()
///     .with_header(AUTHORIZATION, HeaderValue::from_static("Bearer s3cret"));
/// rpcwire::mcp::gateway::connect_stdio_with(remote).await
/// # }
/// ```
pub async fn connect_stdio_with(remote: StreamableHttpClient) -> Result<(), TransportError> {
    connect_with(crate::transport::stdio(crate::frame::Framing::Ndjson), remote).await
}

/// Serves the remote MCP server at `url` to a host over `host`: each frame the host sends
/// is POSTed as it is, and every message that comes back (answers, progress, log messages,
/// the server's requests, on the POST's stream or the session's GET stream) goes to the host
/// as the server wrote it. The session id and the agreed revision's header are kept; streams
/// that end early are resumed with `Last-Event-ID`; when the server has forgotten the
/// session (`404`, a restart), it is started again with the host's own `initialize` and the
/// refused frame sent once more, so that the host's session goes on. A frame that is not
/// JSON-RPC is answered -32700 here. Ends when the host closes its side.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use rpcwire::frame::Framing;
/// use rpcwire::transport::StreamTransport;
/// let (host, ours) = tokio::io::duplex(4096);
/// drop(host); // the host leaves at once: nothing to forward
/// let ended = rpcwire::mcp::gateway::connect(StreamTransport::from_io(ours, Framing::Ndjson), "http://127.0.0.1:9/mcp".parse().unwrap()).await;
/// assert!(ended.is_ok());
/// # });
/// ```
pub async fn connect<T: Transport>(host: T, url: Uri) -> Result<(), TransportError> {
    connect_with(host, remote_at(url)?).await
}

/// [`connect`] through `remote`, a client set up as the server asks (with session recovery
/// turned on).
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use rpcwire::frame::Framing;
/// use rpcwire::mcp::http::StreamableHttpClient;
/// use rpcwire::transport::StreamTransport;
/// let (host, ours) = tokio::io::duplex(4096);
/// drop(host);
/// let remote = StreamableHttpClient::new("http://127.0.0.1:9/mcp".parse().unwrap()).unwrap();
/// assert!(rpcwire::mcp::gateway::connect_with(StreamTransport::from_io(ours, Framing::Ndjson), remote).await.is_ok());
/// # });
/// ```
pub async fn connect_with<T: Transport>(host: T, remote: StreamableHttpClient) -> Result<(), TransportError> {
    let remote = remote.with_session_recovery();
    let headers = remote.clone();
    let (mut from_host, to_host) = host.split();
    let (mut from_remote, mut to_remote) = remote.split();
    let to_host = Arc::new(tokio::sync::Mutex::new(to_host));
    // The id (JSON text) of the host's `initialize`, to learn the revision from its answer.
    let initialize: Mutex<Option<String>> = Mutex::new(None);
    let up = async {
        while let Some(frame) = from_remote.receive().await? {
            if let Some(version) = agreed_version(&frame, &initialize) {
                headers.set_protocol_version(version);
            }
            let mut to_host = to_host.lock().await;
            to_host.send(frame).await?;
            to_host.flush().await?;
        }
        Ok::<(), TransportError>(())
    };
    let down = async {
        loop {
            let frame = match from_host.receive().await {
                Ok(Some(frame)) => frame,
                Ok(None) => break,
                Err(error) if error.is_recoverable() => continue,
                Err(error) => return Err(error),
            };
            match crate::parse(&frame) {
                Ok(Parsed::Single(Message::Request(request))) if request.method() == "initialize" => {
                    *lock_unpoisoned(&initialize) = Some(request.id().json_parts().concat());
                }
                Ok(_) => {}
                Err(error) => {
                    let mut out = BytesMut::new();
                    crate::dispatch::write_parse_error(&mut out, &error);
                    let mut to_host = to_host.lock().await;
                    to_host.send(out.freeze()).await?;
                    to_host.flush().await?;
                    continue;
                }
            }
            to_remote.send(frame).await?;
        }
        to_remote.close().await
    };
    tokio::select! {
        ended = down => ended,
        ended = up => ended,
    }
}

/// The revision a response to the host's `initialize` names.
fn agreed_version(frame: &Bytes, initialize: &Mutex<Option<String>>) -> Option<ProtocolVersion> {
    let Ok(Parsed::Single(Message::Response(response))) = crate::parse(frame) else {
        return None;
    };
    let mut expected = lock_unpoisoned(initialize);
    if expected.as_deref() != Some(response.id().json_parts().concat().as_str()) {
        return None;
    }
    *expected = None;
    let result = response.result()?;
    Params::new(result.get())
        .get("protocolVersion")?
        .decode::<String>()
        .ok()?
        .parse()
        .ok()
}
