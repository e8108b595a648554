//! `Connections`: an HTTP client's keep-alive HTTP/1 connections to its one server — hyper's
//! connection API with a stack of idle senders, instead of a pool keyed by host that hashes
//! the key, and spawns a task to wait for the connection, at every request.

use std::sync::Mutex;

use bytes::Bytes;
use http::header::{HeaderValue, HOST};
use http::{Request, Response, Uri};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::client::conn::http1::{self, SendRequest};
use hyper_util::rt::TokioIo;

use crate::sync::lock_unpoisoned;

/// How many idle connections are kept at most: more are closed when their exchange ends.
pub const MAX_IDLE: usize = 128;

/// The connection side of one HTTP exchange.
type Sender = SendRequest<Full<Bytes>>;

/// Why a request got no response.
#[derive(Debug)]
pub struct SendFailure {
    pub reason: String,
    /// `false` when the request was never sent: no connection could be made, or the
    /// connection closed before the request was written.
    pub reached: bool,
}

/// The keep-alive connections to one server (`http://host:port`); requests go out in
/// origin form (`/path?query`) with the `Host` header set.
pub struct Connections {
    /// Why requests cannot go out (a URL that is not `http://`), if so.
    refused: Option<String>,
    host: String,
    port: u16,
    host_header: Option<HeaderValue>,
    target: Uri,
    /// Senders of connections whose last exchange ended, the most recent last.
    idle: Mutex<Vec<Sender>>,
}

impl std::fmt::Debug for Connections {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connections")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("idle", &lock_unpoisoned(&self.idle).len())
            .finish()
    }
}

/// A connection lent to one exchange: given back with [`Lease::give_back`] once its
/// response body has been read whole; dropped otherwise, which closes it.
pub struct Lease<'c> {
    connections: &'c Connections,
    sender: Sender,
}

impl Lease<'_> {
    /// Keeps the connection for the next request, unless it closed or enough are idle.
    pub fn give_back(self) {
        if self.sender.is_closed() {
            return;
        }
        let mut idle = lock_unpoisoned(&self.connections.idle);
        if idle.len() >= MAX_IDLE {
            // Connections the server closed deep in the stack make room.
            idle.retain(|sender| !sender.is_closed());
        }
        if idle.len() < MAX_IDLE {
            idle.push(self.sender);
        }
    }
}

impl Connections {
    /// Connections to `url`'s host and port (80 when it names none).
    pub fn new(url: &Uri) -> Connections {
        let host = url.host().unwrap_or_default();
        let port = url.port_u16().unwrap_or(80);
        let host_header = url
            .authority()
            .and_then(|authority| HeaderValue::from_str(authority.as_str()).ok());
        let target = url
            .path_and_query()
            .and_then(|path| Uri::try_from(path.as_str()).ok())
            .unwrap_or_else(|| Uri::from_static("/"));
        let refused = (url.scheme_str() != Some("http") || url.host().is_none())
            .then(|| format!("HTTP request failed: {url} is not an http://host URL"));
        Connections {
            refused,
            // An IPv6 address is written in brackets in a URL, not when connecting.
            host: host.trim_start_matches('[').trim_end_matches(']').to_owned(),
            port,
            host_header,
            target,
            idle: Mutex::default(),
        }
    }

    /// Sends `request` (its method, headers and body; the target and `Host` are set here) on
    /// an idle connection, or on a new one when none is ready — also when an idle one turns
    /// out closed before the request was written (the server closed it meanwhile).
    pub async fn send(
        &self,
        mut request: Request<Full<Bytes>>,
    ) -> Result<(Response<Incoming>, Lease<'_>), SendFailure> {
        if let Some(reason) = &self.refused {
            return Err(SendFailure {
                reason: reason.clone(),
                reached: false,
            });
        }
        *request.uri_mut() = self.target.clone();
        if let Some(host) = &self.host_header {
            request.headers_mut().insert(HOST, host.clone());
        }
        while let Some((mut sender, ready)) = self.idle_sender() {
            // One whose last exchange has only just ended: its connection is about to take
            // the next request (or turns out closed).
            if !ready && sender.ready().await.is_err() {
                continue;
            }
            match sender.try_send_request(request).await {
                Ok(response) => return Ok((response, self.lease(sender))),
                Err(mut failure) => match failure.take_message() {
                    // Not written: try the next connection.
                    Some(unsent) => request = unsent,
                    None => return Err(failed(&failure.into_error(), true)),
                },
            }
        }
        let mut sender = self.connect().await?;
        match sender.try_send_request(request).await {
            Ok(response) => Ok((response, self.lease(sender))),
            Err(mut failure) => {
                let reached = failure.take_message().is_none();
                Err(failed(&failure.into_error(), reached))
            }
        }
    }

    fn lease(&self, sender: Sender) -> Lease<'_> {
        Lease {
            connections: self,
            sender,
        }
    }

    /// The most recently used idle connection that is ready for a request (`true`), else
    /// the most recent one not ready yet (`false`); closed ones on top are dropped (the rest
    /// when the stack is full).
    fn idle_sender(&self) -> Option<(Sender, bool)> {
        let mut idle = lock_unpoisoned(&self.idle);
        while idle.last().is_some_and(Sender::is_closed) {
            idle.pop();
        }
        // From the top: the usual pick is the first one looked at.
        match idle.iter().rposition(Sender::is_ready) {
            Some(at) => Some((idle.remove(at), true)),
            None => idle.pop().map(|sender| (sender, false)),
        }
    }

    /// A new connection, its driving task spawned on the current runtime.
    async fn connect(&self) -> Result<Sender, SendFailure> {
        let not_reached = |reason: String| SendFailure {
            reason,
            reached: false,
        };
        let stream = tokio::net::TcpStream::connect((self.host.as_str(), self.port))
            .await
            .map_err(|error| {
                not_reached(format!(
                    "HTTP request failed: cannot connect to {}:{}: {error}",
                    self.host, self.port
                ))
            })?;
        let _ = stream.set_nodelay(true);
        let (sender, connection) = http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|error| not_reached(format!("HTTP request failed: {error}")))?;
        tokio::spawn(async move {
            // Ends when the server closes the connection or every sender is dropped.
            let _ = connection.await;
        });
        Ok(sender)
    }
}

/// Why `error` ended a request; `reached`: whether the request may have been written.
fn failed(error: &hyper::Error, reached: bool) -> SendFailure {
    SendFailure {
        reason: format!("HTTP request failed: {error}"),
        reached,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_target_host_and_port_come_from_the_url() {
        let connections = Connections::new(&"http://[::1]:8545/rpc?key=1".parse().unwrap());
        assert_eq!((connections.host.as_str(), connections.port), ("::1", 8545));
        assert_eq!(connections.target, "/rpc?key=1");
        assert_eq!(connections.host_header.as_ref().unwrap(), "[::1]:8545");
        let connections = Connections::new(&"http://node.example".parse().unwrap());
        assert_eq!(
            (connections.host.as_str(), connections.port),
            ("node.example", 80)
        );
        assert_eq!(connections.target, "/");
        assert!(format!("{connections:?}").contains("idle: 0"));
    }

    /// A server answering every POST with its body, counting the connections it accepts;
    /// with `close`, each answer closes its connection.
    async fn echo_server(close: bool) -> (Uri, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
        use http_body_util::BodyExt;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/rpc", listener.local_addr().unwrap())
            .parse()
            .unwrap();
        let accepted = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = accepted.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let service = hyper::service::service_fn(move |request: Request<Incoming>| async move {
                    assert_eq!(request.uri(), "/rpc");
                    assert!(request.headers().contains_key(HOST));
                    let body = request.into_body().collect().await?.to_bytes();
                    let mut response = Response::new(Full::new(body));
                    if close {
                        response
                            .headers_mut()
                            .insert(http::header::CONNECTION, HeaderValue::from_static("close"));
                    }
                    Ok::<_, hyper::Error>(response)
                });
                tokio::spawn(
                    hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service),
                );
            }
        });
        (url, accepted)
    }

    async fn exchange(connections: &Connections, text: &'static [u8]) -> Bytes {
        use http_body_util::BodyExt;
        let (response, lease) = connections
            .send(Request::new(Full::new(Bytes::from_static(text))))
            .await
            .unwrap();
        let body = response.into_body().collect().await.unwrap().to_bytes();
        lease.give_back();
        body
    }

    #[tokio::test]
    async fn one_connection_serves_requests_one_after_another() {
        let (url, accepted) = echo_server(false).await;
        let connections = Connections::new(&url);
        for text in [&b"[1]"[..], b"[2]", b"[3]", b"[4]"] {
            assert_eq!(&exchange(&connections, text).await[..], text);
        }
        assert_eq!(accepted.load(std::sync::atomic::Ordering::SeqCst), 1);
        assert!(format!("{connections:?}").contains("idle: 1"));
        // Two at once take two connections, both kept.
        let (a, b) = tokio::join!(exchange(&connections, b"[5]"), exchange(&connections, b"[6]"));
        assert_eq!((&a[..], &b[..]), (&b"[5]"[..], &b"[6]"[..]));
        assert_eq!(accepted.load(std::sync::atomic::Ordering::SeqCst), 2);
        assert!(format!("{connections:?}").contains("idle: 2"));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn one_connection_serves_requests_one_after_another_across_threads() {
        // The connection's task may run on the other thread, behind the caller.
        let (url, accepted) = echo_server(false).await;
        let connections = Connections::new(&url);
        for _ in 0..200 {
            assert_eq!(&exchange(&connections, b"[1]").await[..], b"[1]");
        }
        assert_eq!(accepted.load(std::sync::atomic::Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn a_connection_the_server_closed_is_not_used_again() {
        let (url, accepted) = echo_server(true).await;
        let connections = Connections::new(&url);
        for text in [&b"[1]"[..], b"[2]", b"[3]"] {
            assert_eq!(&exchange(&connections, text).await[..], text);
        }
        assert_eq!(accepted.load(std::sync::atomic::Ordering::SeqCst), 3);
    }

    #[tokio::test]
    async fn a_refused_connection_is_not_reached() {
        // A port nobody listens on: bound, then closed.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        drop(listener);
        let connections = Connections::new(&format!("http://{address}/").parse().unwrap());
        let failure = connections
            .send(Request::new(Full::new(Bytes::from_static(b"{}"))))
            .await
            .err()
            .unwrap();
        assert!(!failure.reached, "{}", failure.reason);
        assert!(failure.reason.contains("cannot connect"), "{}", failure.reason);
        for url in ["https://127.0.0.1/", "/relative"] {
            let connections = Connections::new(&url.parse().unwrap());
            let failure = connections
                .send(Request::new(Full::new(Bytes::from_static(b"{}"))))
                .await
                .err()
                .unwrap();
            assert!(
                !failure.reached && failure.reason.contains("not an http://host URL"),
                "{}",
                failure.reason
            );
        }
    }
}
