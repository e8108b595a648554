//! `StreamableHttpService`: an MCP server over Streamable HTTP as a tower `Service` — the
//! backend of the front door (`front.rs`, which makes the checks the specification asks for)
//! whose sessions run this process's handlers: POST answered with JSON or an SSE stream.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use http::header::{HeaderMap, HeaderValue};
use http::{Response, StatusCode};

use super::answer::{accepted, json_answer, json_status, refusal, rpc_refusal};
use super::body::McpBody;
use super::front::{front_door_service, Backend, Door};
use super::headers::{SESSION_HEADER, TOO_MANY_REQUESTS};
use super::output::PostOutput;
use super::remote::StreamRemote;
use super::request::{answer_post, sessionless_ping};
use super::session::{HttpSession, Sessions};
use super::stateless::{Stateless, MAX_IN_FLIGHT, MAX_LISTENERS};
use super::stream::EventStream;
use crate::dispatch::{Answer, OnCancel, Responder, Supervision};
use crate::message::{ErrorCode, ErrorObject, JsonBytes, Message, Response as RpcResponse};
use crate::registry::Registry;
use crate::server::McpServer;
use crate::transport::CancelProtocol;
use crate::version::ProtocolVersion;

/// An [`McpServer`] over Streamable HTTP (the transport of MCP revisions 2025-03-26 and
/// later), as a [`tower_service::Service`]: mount it in axum at `/mcp`, or serve it with
/// [`serve`](StreamableHttpService::serve).
///
/// - `POST`: one JSON-RPC message (or a batch, where the session's revision allows one).
///   `initialize` without a session starts one, named in the `Mcp-Session-Id` header of the
///   answer. Requests answered at once get `application/json`; requests that run a handler
///   get a `text/event-stream` on which everything the handler sends before its result
///   (progress, log messages, requests to the client) comes first; notifications and
///   responses alone get `202 Accepted`.
/// - `GET`: the session's stream for messages not tied to a request, or, with
///   `Last-Event-ID`, the rest of a stream that was cut (replayed from a bounded log).
/// - `DELETE`: ends the session.
/// - Checks: `Host` and `Origin` must name an allowed host (the loopback names by default:
///   `403` otherwise, against DNS rebinding); `Accept` must take both JSON and SSE on POST,
///   SSE on GET (`406`); a missing session id is `400`, an unknown or ended one `404` (so
///   that clients start over); `MCP-Protocol-Version`, when given, must be a known revision
///   (`400`); a body over the limit is `413` before it is buffered.
/// - Sessions are bounded in number; idle ones (no request for the idle timeout, nothing
///   under way) are ended when room is needed or by [`sweep`](StreamableHttpService::sweep).
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use rpcwire::mcp::http::StreamableHttpService;
/// use rpcwire::mcp::McpServer;
/// use tower_service::Service;
///
/// let mut service = StreamableHttpService::new(McpServer::new("demo", "1"));
/// let initialize = http::Request::post("/mcp")
///     .header("host", "127.0.0.1:8000")
///     .header("accept", "application/json, text/event-stream")
///     .header("content-type", "application/json")
///     .body(http_body_util::Full::new(bytes::Bytes::from_static(
///         br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"doc","version":"1"}}}"#,
///     )))
///     .unwrap();
/// let answer = service.call(initialize).await.unwrap();
/// assert_eq!(answer.status(), 200);
/// assert!(answer.headers().contains_key("mcp-session-id"));
/// # });
/// ```
#[derive(Clone)]
pub struct StreamableHttpService {
    registry: Arc<Registry>,
    sessions: Arc<Sessions>,
    /// The stateless revision's side, when the server enables it.
    stateless: Option<Arc<Stateless>>,
    config: Arc<Config>,
}

#[derive(Clone, Debug)]
struct Config {
    door: Door,
    retry: Duration,
    client_call_timeout: Duration,
    /// What the listener serves TLS with, if any.
    tls: Option<crate::transport::tls::ServerTls>,
}

impl std::fmt::Debug for StreamableHttpService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamableHttpService")
            .field("sessions", &self.sessions.len())
            .field("config", &self.config)
            .finish()
    }
}

impl StreamableHttpService {
    /// Serves `server`: at most 1,024 sessions, idle ones ended after 10 minutes, only the
    /// loopback host names accepted (`localhost`, `127.0.0.1`, `[::1]`, any port).
    ///
    /// ```
    /// let service = rpcwire::mcp::http::StreamableHttpService::new(rpcwire::mcp::McpServer::new("demo", "1"));
    /// assert_eq!(service.session_count(), 0);
    /// ```
    pub fn new(server: McpServer) -> StreamableHttpService {
        StreamableHttpService::with_sessions(server, 1024, Duration::from_secs(600))
    }

    /// Serves `server` with at most `max_sessions` sessions, each ended once idle for
    /// `idle_timeout`.
    ///
    /// ```
    /// use std::time::Duration;
    /// let service = rpcwire::mcp::http::StreamableHttpService::with_sessions(rpcwire::mcp::McpServer::new("demo", "1"), 16, Duration::from_secs(60));
    /// # let _ = service;
    /// ```
    pub fn with_sessions(
        server: McpServer,
        max_sessions: usize,
        idle_timeout: Duration,
    ) -> StreamableHttpService {
        let registry = server.into_shared();
        let max_body = registry.limits.parser.max_size();
        StreamableHttpService {
            stateless: Stateless::new(&registry, MAX_IN_FLIGHT, MAX_LISTENERS).map(Arc::new),
            registry,
            sessions: Arc::new(Sessions::new(max_sessions, idle_timeout)),
            config: Arc::new(Config {
                door: Door::new(max_body),
                retry: Duration::from_secs(1),
                client_call_timeout: Duration::from_secs(60),
                tls: None,
            }),
        }
    }

    /// The host names requests may name in `Host` and `Origin` (any port), instead of the
    /// loopback names: what a server reachable from elsewhere must set.
    ///
    /// ```
    /// let service = rpcwire::mcp::http::StreamableHttpService::new(rpcwire::mcp::McpServer::new("demo", "1"))
    ///     .with_allowed_hosts(["mcp.example.com"]);
    /// # let _ = service;
    /// ```
    pub fn with_allowed_hosts<I, S>(mut self, hosts: I) -> StreamableHttpService
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Arc::make_mut(&mut self.config).door.allow_hosts(hosts);
        self
    }

    /// No Host/Origin check (behind a proxy that makes its own).
    ///
    /// ```
    /// let service = rpcwire::mcp::http::StreamableHttpService::new(rpcwire::mcp::McpServer::new("demo", "1"))
    ///     .without_host_check();
    /// # let _ = service;
    /// ```
    pub fn without_host_check(mut self) -> StreamableHttpService {
        Arc::make_mut(&mut self.config).door.allowed_hosts = None;
        self
    }
    /// Serves as an OAuth protected resource (MCP's authorization): its metadata at the
    /// well-known URLs, every request's bearer token verified (`401` with a challenge
    /// naming the metadata otherwise), the scopes each method, tool or prompt needs checked
    /// (`403 insufficient_scope`); handlers see the claims in their
    /// [`McpContext`](crate::McpContext).
    ///
    /// ```
    /// use rpcwire::mcp::auth::{JwtVerifier, ProtectedResource};
    /// let verifier = JwtVerifier::new("https://as.example", "https://mcp.example/mcp", "https://as.example/jwks".parse().unwrap());
    /// let protected = ProtectedResource::new("https://mcp.example/mcp", "https://as.example", verifier);
    /// # let _ = protected;
    /// ```
    #[cfg(feature = "auth")]
    #[cfg_attr(docsrs, doc(cfg(feature = "auth")))]
    pub fn with_protection(mut self, protected: crate::auth::ProtectedResource) -> StreamableHttpService {
        Arc::make_mut(&mut self.config).door.protection = Some(Arc::new(protected));
        self
    }

    /// Asks every request for `Authorization: Bearer TOKEN` (`401` with `-32001` otherwise);
    /// the token is kept only as its SHA-256 and compared in constant time.
    ///
    /// ```
    /// let service = rpcwire::mcp::http::StreamableHttpService::new(rpcwire::mcp::McpServer::new("demo", "1"))
    ///     .with_token("s3cret");
    /// # let _ = service;
    /// ```
    pub fn with_token(mut self, token: impl AsRef<[u8]>) -> StreamableHttpService {
        Arc::make_mut(&mut self.config).door.ask_token(token.as_ref());
        self
    }

    /// The `retry:` delay the priming event of each stream tells clients to wait before
    /// they reconnect (1 s by default).
    ///
    /// ```
    /// let service = rpcwire::mcp::http::StreamableHttpService::new(rpcwire::mcp::McpServer::new("demo", "1"))
    ///     .with_retry_interval(std::time::Duration::from_millis(500));
    /// # let _ = service;
    /// ```
    pub fn with_retry_interval(mut self, retry: Duration) -> StreamableHttpService {
        Arc::make_mut(&mut self.config).retry = retry;
        self
    }

    /// How long a handler's request to the client (sampling, elicitation, roots) waits for
    /// the client's answer (60 s by default).
    ///
    /// ```
    /// let service = rpcwire::mcp::http::StreamableHttpService::new(rpcwire::mcp::McpServer::new("demo", "1"))
    ///     .with_client_call_timeout(std::time::Duration::from_secs(10));
    /// # let _ = service;
    /// ```
    pub fn with_client_call_timeout(mut self, timeout: Duration) -> StreamableHttpService {
        Arc::make_mut(&mut self.config).client_call_timeout = timeout;
        self
    }

    /// Serves HTTPS with `tls` (its certificate, read again when its files change; ALPN
    /// `h2` and `http/1.1`; a handshake deadline) when [`serve`](StreamableHttpService::serve)d
    /// on a listener; the Host and Origin checks stay as they are.
    ///
    /// ```
    /// # let certified = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    /// # let (cert, key) = (certified.cert.pem(), certified.signing_key.serialize_pem());
    /// let tls = rpcwire::transport::tls::ServerTls::from_pem(cert.as_bytes(), key.as_bytes()).unwrap();
    /// let service = rpcwire::mcp::http::StreamableHttpService::new(rpcwire::mcp::McpServer::new("demo", "1")).with_tls(tls);
    /// # let _ = service;
    /// ```
    pub fn with_tls(mut self, tls: crate::transport::tls::ServerTls) -> StreamableHttpService {
        Arc::make_mut(&mut self.config).tls = Some(tls);
        self
    }

    /// Bounds of the stateless revision (when the server enables it): at most `in_flight`
    /// requests under way over all its clients (1,024 by default) and `listeners`
    /// `subscriptions/listen` streams open (256); past them a request is answered -32000 at once.
    ///
    /// ```
    /// use rpcwire::mcp::{McpServer, ProtocolVersion};
    /// let server = McpServer::new("demo", "1").with_versions(&ProtocolVersion::ALL);
    /// let service = rpcwire::mcp::http::StreamableHttpService::new(server).with_stateless_limits(64, 16);
    /// # let _ = service;
    /// ```
    pub fn with_stateless_limits(mut self, in_flight: usize, listeners: usize) -> StreamableHttpService {
        self.stateless = Stateless::new(&self.registry, in_flight, listeners).map(Arc::new);
        self
    }

    /// How many sessions are open.
    ///
    /// ```
    /// let service = rpcwire::mcp::http::StreamableHttpService::new(rpcwire::mcp::McpServer::new("demo", "1"));
    /// assert_eq!(service.session_count(), 0);
    /// ```
    pub fn session_count(&self) -> usize {
        self.sessions.len()
    }

    /// Ends the sessions idle for longer than the idle timeout; how many were ended.
    ///
    /// ```
    /// let service = rpcwire::mcp::http::StreamableHttpService::new(rpcwire::mcp::McpServer::new("demo", "1"));
    /// assert_eq!(service.sweep(), 0);
    /// ```
    pub fn sweep(&self) -> usize {
        self.sessions.sweep()
    }

    /// Serves connections from `listener` (HTTP/1.1 and HTTP/2), each on its own task,
    /// until the listener fails; idle sessions are swept once a minute.
    ///
    /// ```no_run
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> std::io::Result<()> {
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:8000").await?;
    /// rpcwire::mcp::http::StreamableHttpService::new(rpcwire::mcp::McpServer::new("demo", "1"))
    ///     .serve(listener)
    ///     .await
    /// # }
    /// ```
    pub async fn serve(self, listener: tokio::net::TcpListener) -> std::io::Result<()> {
        let sessions = Arc::downgrade(&self.sessions);
        let sweep = super::serving::sweep_of(sessions);
        let tls = self.config.tls.clone();
        super::serving::serve_connections(
            self,
            listener,
            tls,
            Duration::from_secs(60),
            sweep,
            std::future::pending(),
        )
        .await
    }

    /// A POST that passed the front door.
    async fn serve_post(
        self,
        session: Option<Arc<HttpSession>>,
        headers: &HeaderMap,
        body: Bytes,
    ) -> Response<McpBody> {
        if let Some(stateless) = self
            .stateless
            .as_ref()
            .filter(|stateless| session.is_none() && stateless.claims(headers, &body))
        {
            return stateless.post(headers, body).await;
        }
        if body.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[') {
            let allowed = session
                .as_ref()
                .and_then(|session| session.state.version())
                .is_some_and(ProtocolVersion::allows_batches);
            if !allowed {
                return rpc_refusal(
                    StatusCode::BAD_REQUEST,
                    -32600,
                    "Invalid Request: batches are not accepted in this protocol revision",
                );
            }
        }
        match session {
            Some(session) => self.serve_frame(session, body, false).await,
            None => self.serve_without_session(body, sessionless_ping(headers)).await,
        }
    }

    /// A POST without a session id: `initialize` starts a session; `server/discover` (and
    /// `ping` from a client that names no revision yet) are answered without one; anything
    /// else is `400` — a `ping` under a handshake revision's `MCP-Protocol-Version` too, as
    /// the specification says of a server that issues session ids (`ping_alone`: what
    /// [`sessionless_ping`] says of the request's headers).
    async fn serve_without_session(self, body: Bytes, ping_alone: bool) -> Response<McpBody> {
        let session = Arc::new(HttpSession::new(&self.registry, self.config.client_call_timeout));
        let (mut initializes, mut sessionless, mut other) = (false, false, false);
        let mut responses = false;
        let mut out = BytesMut::new();
        let mut responder = Responder::new();
        let answer = responder.respond_from(
            &session.router,
            &body,
            Some(&body),
            true,
            &mut out,
            |_| responses = true,
            |message| match message {
                Message::Request(request) if request.method() == "initialize" => initializes = true,
                Message::Request(request) if request.method() == "server/discover" => sessionless = true,
                Message::Request(request) if request.method() == "ping" && ping_alone => sessionless = true,
                _ => other = true,
            },
        );
        let other = other || responses;
        if initializes && !other {
            let Answer::Written = answer else {
                return refusal(StatusCode::BAD_REQUEST, "Bad Request: initialize must come alone");
            };
            let initialized = session.state.version().is_some();
            if initialized && !self.sessions.insert(session.clone()) {
                return rpc_refusal(
                    StatusCode::SERVICE_UNAVAILABLE,
                    TOO_MANY_REQUESTS,
                    "Service Unavailable: too many sessions",
                );
            }
            let mut response = json_answer(out.freeze());
            if initialized {
                if let Ok(value) = HeaderValue::from_str(&session.id) {
                    response.headers_mut().insert(SESSION_HEADER, value);
                }
            }
            return response;
        }
        if sessionless && !other && !initializes {
            return match answer {
                Answer::Written => json_answer(out.freeze()),
                _ => accepted(),
            };
        }
        if responder.refused() == Some(ErrorCode::ParseError) {
            // Not JSON at all: the parse error says so, whatever the session.
            return json_status(StatusCode::BAD_REQUEST, out.freeze());
        }
        refusal(
            StatusCode::BAD_REQUEST,
            "Bad Request: Mcp-Session-Id header is required",
        )
    }

    /// Serves one frame in `session`.
    async fn serve_frame(self, session: Arc<HttpSession>, body: Bytes, _new: bool) -> Response<McpBody> {
        let mut out = BytesMut::new();
        let mut responder = Responder::new();
        let answer = responder.respond_from(
            &session.router,
            &body,
            Some(&body),
            true,
            &mut out,
            |response| complete_call(&session, &body, response),
            |message| {
                if let Message::Notification(notification) = message {
                    if notification.method() == "notifications/cancelled" {
                        if let Some(id) = CancelProtocol::Mcp.cancelled_id(notification.params()) {
                            session.cancellations.cancel(&id);
                        }
                    }
                }
            },
        );
        match answer {
            Answer::Written if responder.refused() == Some(ErrorCode::ParseError) => {
                json_status(StatusCode::BAD_REQUEST, out.freeze())
            }
            Answer::Written if !out.is_empty() => json_answer(out.freeze()),
            Answer::Written | Answer::Silent => accepted(),
            Answer::Pending(pending) => {
                let Ok(permit) = session.in_flight.clone().try_acquire_owned() else {
                    let busy =
                        ErrorObject::new(TOO_MANY_REQUESTS, "too many requests under way in this session");
                    pending.refuse(&busy, &mut out);
                    return json_answer(out.freeze());
                };
                let prime = session
                    .state
                    .version()
                    .is_some_and(|v| v >= ProtocolVersion::V2025_11_25)
                    .then(|| self.config.retry.as_millis() as u64);
                let output = Arc::new(PostOutput::new(session.streams.clone(), prime));
                let serving = Supervision {
                    remote: Some(Arc::new(StreamRemote {
                        session: session.clone(),
                        output: output.clone(),
                    })),
                    cancellations: Some(session.cancellations.clone()),
                    on_cancel: OnCancel::Silent,
                    abort: Some(session.ended.clone()),
                    handler_timeout: self.registry.limits.handler_timeout,
                    timeouts: None,
                };
                let done = output.clone();
                // Run here, in the POST's own task: no task of its own unless the answer
                // becomes a stream (or the client goes away) before the handler is done.
                let work = Box::pin(async move {
                    let _permit = permit;
                    let mut out = BytesMut::new();
                    let answered = pending
                        .answer_supervised(&session.router, &serving, &mut out)
                        .await;
                    done.complete(answered.then(|| out.freeze()));
                });
                answer_post(&output, work).await
            }
        }
    }
}

impl Backend for StreamableHttpService {
    type Session = HttpSession;

    fn door(&self) -> &Door {
        &self.config.door
    }

    fn sessions(&self) -> &Sessions {
        &self.sessions
    }

    fn serves_stateless(&self) -> bool {
        self.stateless.is_some()
    }

    fn speaks(&self, version: ProtocolVersion) -> bool {
        self.registry.versions.contains(&version)
    }

    fn post(
        self,
        session: Option<Arc<HttpSession>>,
        headers: &HeaderMap,
        body: Bytes,
    ) -> impl Future<Output = Response<McpBody>> + Send {
        self.serve_post(session, headers, body)
    }

    fn open_standalone(session: &HttpSession) -> Option<Arc<EventStream>> {
        session.open_standalone()
    }
}

front_door_service!(StreamableHttpService);

/// A response from the client to one of the session's calls: hands it to the caller.
fn complete_call(session: &HttpSession, body: &Bytes, response: &RpcResponse<'_>) {
    let answer = match (response.result(), response.error_object()) {
        (Some(result), _) => Ok(JsonBytes::slice_of(body, result)),
        (None, Some(error)) => Err(error.clone().into_owned()),
        (None, None) => return,
    };
    let _ = session.calls.complete(response.id(), answer);
}
