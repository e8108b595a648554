//! `McpGateway`: an MCP server that runs as a stdio child per session, served over
//! Streamable HTTP as a tower `Service` — the checks of the transport, a bearer token, the
//! bounds on sessions and requests under way, `/healthz`, and a graceful shutdown.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use http::header::{HeaderMap, HeaderValue, ALLOW, AUTHORIZATION, WWW_AUTHENTICATE};
use http::{Method, Request, Response, StatusCode};
use http_body::Body;
use sha2::{Digest, Sha256};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

use super::command::StdioCommand;
use super::metrics;
use super::session::{Children, ChildrenKind, ClientRequest, GatewaySession, Servers, SessionLimits};
use super::stateless::{self, StatelessChildren};
use super::upward::{request_key, Forwarded};
use crate::encode;
use crate::http::answer::{accepted, json_answer, json_status, refusal, rpc_refusal};
use crate::http::origin::{self, LOOPBACK_HOSTS};
use crate::http::output::PostOutput;
use crate::http::request::{
    answer_post, delete_session, get_session, read_post_body, refuse_post_headers, resumed, session_of,
    standalone,
};
use crate::http::service::{SESSION_HEADER, TOO_MANY_REQUESTS, VERSION_HEADER};
use crate::http::serving::serve_connections;
use crate::http::session::Kept;
use crate::http::session::Sessions;
use crate::http::stateless::{check_headers, check_param_headers, error_answer, error_status};
use crate::http::McpBody;
use crate::message::{id_range_within, ErrorObject, Id, JsonBytes, Message, Params};
use crate::parse::{Limits, Parsed, Parser};
use crate::transport::CancelProtocol;
use crate::version::ProtocolVersion;

/// The error code of a request refused because the gateway is shutting down:
/// [`codes::UNAVAILABLE`](crate::codes::UNAVAILABLE) (-32034).
pub const SHUTTING_DOWN: i64 = crate::codes::UNAVAILABLE;

/// A stdio MCP server served over Streamable HTTP: each client session gets its own child
/// process, started on `initialize`; messages go both ways without their params or results
/// being decoded — the client's requests and notifications down, the child's answers,
/// progress, log messages and requests (sampling, elicitation, roots) up on the stream of
/// the request they belong to (or the session's GET stream), the client's answers back down.
/// Cancellation goes both ways; a client that leaves a request's stream and does not resume
/// it within a grace period (5 s by default) gets the request cancelled at the child.
///
/// - Faults: a child that exits, closes its output or writes a line over the limit ends its
///   session — every request under way is answered with an error
///   ([`SERVER_GONE`](super::SERVER_GONE)) at once and the session's next request gets `404`; a request the
///   child does not answer in time gets [`SERVER_TIMEOUT`](super::SERVER_TIMEOUT); a child
///   that cannot be started is answered `502` with the reason.
/// - Children are ended with their whole process group (stdin closed, a grace period to
///   exit, `SIGTERM`, another, then `SIGKILL`) and reaped, on `DELETE`, idle expiry, shutdown, or
///   their own end.
/// - Bounds: sessions (1,024), requests under way per session (64) and overall (1,024),
///   answered `-32000` at once when full; events kept per stream for slow or reconnecting
///   readers.
/// - Checks: `Host` and `Origin` must name an allowed host (the loopback names by
///   default), a bearer token when one is set (compared in constant time), and the
///   Streamable HTTP ones (`Accept`, `Content-Type`, session ids, body size).
/// - `GET /healthz` answers with the counts of sessions and children.
///
/// ```no_run
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> std::io::Result<()> {
/// use rpcwire::mcp::gateway::{McpGateway, StdioCommand};
/// let gateway = McpGateway::new(StdioCommand::new("npx").args(["-y", "@modelcontextprotocol/server-everything"]))
///     .with_token("s3cret");
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8000").await?;
/// gateway.serve(listener).await // http://127.0.0.1:8000/mcp
/// # }
/// ```
#[derive(Clone)]
pub struct McpGateway {
    servers: Arc<Servers>,
    /// With one child for all sessions: the children running now, if any.
    shared: Option<Arc<tokio::sync::Mutex<Option<Arc<Children>>>>>,
    /// The children of the stateless revision's requests.
    stateless: Arc<StatelessChildren>,
    /// The stateless revision's listen streams open at most.
    listeners: Arc<Semaphore>,
    sessions: Arc<Sessions<GatewaySession>>,
    limits: SessionLimits,
    config: Arc<Config>,
    total: Arc<Semaphore>,
    max_total: usize,
    children: Arc<AtomicUsize>,
    closing: CancellationToken,
    parser: Arc<Parser>,
}

#[derive(Clone, Debug)]
struct Config {
    path: String,
    max_body: usize,
    body_timeout: Duration,
    allowed_hosts: Option<Vec<String>>,
    /// The SHA-256 of the bearer token, when one is asked for.
    token: Option<[u8; 32]>,
    init_timeout: Duration,
    retry: Duration,
}

impl std::fmt::Debug for McpGateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpGateway")
            .field(
                "servers",
                &self
                    .servers
                    .commands
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>(),
            )
            .field("sessions", &self.sessions.len())
            .field("children", &self.child_count())
            .finish()
    }
}

impl McpGateway {
    /// Serves `command` at `/mcp`, with the bounds and checks described above.
    ///
    /// ```
    /// use rpcwire::mcp::gateway::{McpGateway, StdioCommand};
    /// let gateway = McpGateway::new(StdioCommand::new("mcp-server-time"));
    /// assert_eq!(gateway.session_count(), 0);
    /// ```
    pub fn new(command: StdioCommand) -> McpGateway {
        McpGateway::with_servers(Servers {
            commands: vec![command],
            names: None,
        })
    }

    /// Serves several servers under one endpoint, each session with a child of each:
    /// their tools and prompts listed with the server's name before theirs
    /// (`NAME__tool`, [`SEPARATOR`](super::SEPARATOR)), their resources and templates as
    /// they name them; calls routed by the prefix (resources by which server listed the
    /// URI, else to each in turn), list changes passed on. `initialize` is answered for all:
    /// the oldest revision they agreed on, the union of their capabilities.
    ///
    /// ```
    /// use rpcwire::mcp::gateway::{McpGateway, StdioCommand};
    /// let gateway = McpGateway::several([
    ///     ("time", StdioCommand::shell("uvx mcp-server-time")),
    ///     ("fetch", StdioCommand::shell("uvx mcp-server-fetch")),
    /// ]);
    /// # let _ = gateway;
    /// ```
    pub fn several<I, N>(servers: I) -> McpGateway
    where
        I: IntoIterator<Item = (N, StdioCommand)>,
        N: Into<String>,
    {
        let (names, commands): (Vec<Box<str>>, Vec<StdioCommand>) = servers
            .into_iter()
            .map(|(name, command)| (name.into().into_boxed_str(), command))
            .unzip();
        McpGateway::with_servers(Servers {
            commands,
            names: Some(names.into()),
        })
    }

    fn with_servers(servers: Servers) -> McpGateway {
        McpGateway {
            servers: Arc::new(servers),
            shared: None,
            stateless: Arc::default(),
            listeners: Arc::new(Semaphore::new(256)),
            sessions: Arc::new(Sessions::new(1024, Duration::from_secs(600))),
            limits: SessionLimits {
                max_line: 4 << 20,
                call_timeout: Duration::from_secs(300),
                client_call_timeout: Duration::from_secs(60),
                in_flight: 64,
                terminate_grace: Duration::from_secs(2),
                resume_grace: Duration::from_secs(5),
            },
            config: Arc::new(Config {
                path: "/mcp".to_owned(),
                max_body: 4 << 20,
                body_timeout: Duration::from_secs(30),
                allowed_hosts: Some(LOOPBACK_HOSTS.iter().map(|host| host.to_string()).collect()),
                token: None,
                init_timeout: Duration::from_secs(30),
                retry: Duration::from_secs(1),
            }),
            total: Arc::new(Semaphore::new(1024)),
            max_total: 1024,
            children: Arc::new(AtomicUsize::new(0)),
            closing: CancellationToken::new(),
            parser: Arc::new(Parser::new(Limits::default().with_max_size(4 << 20))),
        }
    }

    /// One child (or one of each server) for every session instead of one per session,
    /// started on the first `initialize`: requests of all sessions are multiplexed on it
    /// (the child sees its own ids; progress tokens are made unique and given back), the
    /// first `initialize`'s answer is every session's, and what the child sends outside a
    /// request goes to every session's GET stream. When the child ends, every session ends
    /// with it (`404` next) and the next `initialize` starts another.
    ///
    /// ```
    /// let gateway = rpcwire::mcp::gateway::McpGateway::new(rpcwire::mcp::gateway::StdioCommand::new("server")).with_shared_child();
    /// # let _ = gateway;
    /// ```
    pub fn with_shared_child(mut self) -> McpGateway {
        self.shared = Some(Arc::new(tokio::sync::Mutex::new(None)));
        self
    }

    /// The path the MCP endpoint answers at (`/mcp` by default).
    ///
    /// ```
    /// let gateway = rpcwire::mcp::gateway::McpGateway::new(rpcwire::mcp::gateway::StdioCommand::new("server")).with_path("/");
    /// # let _ = gateway;
    /// ```
    pub fn with_path(mut self, path: impl Into<String>) -> McpGateway {
        Arc::make_mut(&mut self.config).path = path.into();
        self
    }

    /// The host names requests may name in `Host` and `Origin` (any port), instead of the
    /// loopback names: what a gateway reachable from elsewhere must set.
    ///
    /// ```
    /// let gateway = rpcwire::mcp::gateway::McpGateway::new(rpcwire::mcp::gateway::StdioCommand::new("server"))
    ///     .with_allowed_hosts(["mcp.example.com"]);
    /// # let _ = gateway;
    /// ```
    pub fn with_allowed_hosts<I, S>(mut self, hosts: I) -> McpGateway
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Arc::make_mut(&mut self.config).allowed_hosts = Some(hosts.into_iter().map(Into::into).collect());
        self
    }

    /// No Host/Origin check (behind a proxy that makes its own).
    ///
    /// ```
    /// let gateway = rpcwire::mcp::gateway::McpGateway::new(rpcwire::mcp::gateway::StdioCommand::new("server")).without_host_check();
    /// # let _ = gateway;
    /// ```
    pub fn without_host_check(mut self) -> McpGateway {
        Arc::make_mut(&mut self.config).allowed_hosts = None;
        self
    }

    /// Asks every request for `Authorization: Bearer TOKEN` (`401` otherwise); the token is
    /// kept only as its SHA-256 and compared in constant time.
    ///
    /// ```
    /// let gateway = rpcwire::mcp::gateway::McpGateway::new(rpcwire::mcp::gateway::StdioCommand::new("server")).with_token("s3cret");
    /// # let _ = gateway;
    /// ```
    pub fn with_token(mut self, token: impl AsRef<[u8]>) -> McpGateway {
        Arc::make_mut(&mut self.config).token = Some(Sha256::digest(token.as_ref()).into());
        self
    }

    /// At most `max` sessions (and so children), each ended once idle (no request, nothing
    /// under way) for `idle_timeout`; 1,024 and 10 minutes by default.
    ///
    /// ```
    /// use std::time::Duration;
    /// let gateway = rpcwire::mcp::gateway::McpGateway::new(rpcwire::mcp::gateway::StdioCommand::new("server"))
    ///     .with_sessions(16, Duration::from_secs(60));
    /// # let _ = gateway;
    /// ```
    pub fn with_sessions(mut self, max: usize, idle_timeout: Duration) -> McpGateway {
        self.sessions = Arc::new(Sessions::new(max, idle_timeout));
        self
    }

    /// At most `per_session` requests under way in a session and `total` over all of them
    /// (64 and 1,024 by default); past either a request is answered -32000 at once.
    ///
    /// ```
    /// let gateway = rpcwire::mcp::gateway::McpGateway::new(rpcwire::mcp::gateway::StdioCommand::new("server")).with_in_flight(8, 256);
    /// # let _ = gateway;
    /// ```
    pub fn with_in_flight(mut self, per_session: usize, total: usize) -> McpGateway {
        self.limits.in_flight = per_session.max(1);
        self.total = Arc::new(Semaphore::new(total));
        self.max_total = total;
        self
    }

    /// How long a request waits for the child's answer (5 minutes by default), and
    /// `initialize` for the child to start and answer (30 s).
    ///
    /// ```
    /// use std::time::Duration;
    /// let gateway = rpcwire::mcp::gateway::McpGateway::new(rpcwire::mcp::gateway::StdioCommand::new("server"))
    ///     .with_timeouts(Duration::from_secs(60), Duration::from_secs(10));
    /// # let _ = gateway;
    /// ```
    pub fn with_timeouts(mut self, call: Duration, initialize: Duration) -> McpGateway {
        self.limits.call_timeout = call;
        Arc::make_mut(&mut self.config).init_timeout = initialize;
        self
    }

    /// The longest message a child may write on a line, and a client may POST (4 MiB by
    /// default). A child that writes a longer line is ended, its session with it.
    ///
    /// ```
    /// let gateway = rpcwire::mcp::gateway::McpGateway::new(rpcwire::mcp::gateway::StdioCommand::new("server")).with_max_message(1 << 20);
    /// # let _ = gateway;
    /// ```
    pub fn with_max_message(mut self, bytes: usize) -> McpGateway {
        self.limits.max_line = bytes;
        Arc::make_mut(&mut self.config).max_body = bytes;
        self.parser = Arc::new(Parser::new(Limits::default().with_max_size(bytes)));
        self
    }

    /// How long a request whose stream no one reads stays under way before it is cancelled
    /// at the child (5 s by default): the time a client has to resume with `Last-Event-ID`.
    ///
    /// ```
    /// let gateway = rpcwire::mcp::gateway::McpGateway::new(rpcwire::mcp::gateway::StdioCommand::new("server"))
    ///     .with_resume_grace(std::time::Duration::from_secs(1));
    /// # let _ = gateway;
    /// ```
    pub fn with_resume_grace(mut self, grace: Duration) -> McpGateway {
        self.limits.resume_grace = grace;
        self
    }

    /// How long an ending child has after `SIGTERM` before its group is killed (2 s).
    ///
    /// ```
    /// let gateway = rpcwire::mcp::gateway::McpGateway::new(rpcwire::mcp::gateway::StdioCommand::new("server"))
    ///     .with_terminate_grace(std::time::Duration::from_millis(500));
    /// # let _ = gateway;
    /// ```
    pub fn with_terminate_grace(mut self, grace: Duration) -> McpGateway {
        self.limits.terminate_grace = grace;
        self
    }

    /// How many sessions are open.
    ///
    /// ```
    /// let gateway = rpcwire::mcp::gateway::McpGateway::new(rpcwire::mcp::gateway::StdioCommand::new("server"));
    /// assert_eq!(gateway.session_count(), 0);
    /// ```
    pub fn session_count(&self) -> usize {
        self.sessions.len()
    }

    /// How many children are running or not reaped yet.
    ///
    /// ```
    /// let gateway = rpcwire::mcp::gateway::McpGateway::new(rpcwire::mcp::gateway::StdioCommand::new("server"));
    /// assert_eq!(gateway.child_count(), 0);
    /// ```
    pub fn child_count(&self) -> usize {
        self.children.load(Ordering::Relaxed)
    }

    /// Ends the sessions idle for longer than the idle timeout; how many.
    ///
    /// ```
    /// let gateway = rpcwire::mcp::gateway::McpGateway::new(rpcwire::mcp::gateway::StdioCommand::new("server"));
    /// assert_eq!(gateway.sweep(), 0);
    /// ```
    pub fn sweep(&self) -> usize {
        let swept = self.sessions.sweep();
        self.stateless.sweep(self.sessions.idle());
        swept
    }

    /// Shuts down: new sessions and requests are refused (`503`), requests under way get
    /// until `deadline` to be answered, then every session ends and its child is ended and
    /// reaped (waited for a few seconds past the deadline at most).
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let gateway = rpcwire::mcp::gateway::McpGateway::new(rpcwire::mcp::gateway::StdioCommand::new("server"));
    /// gateway.shutdown(std::time::Duration::from_secs(5)).await;
    /// assert_eq!(gateway.child_count(), 0);
    /// # });
    /// ```
    pub async fn shutdown(&self, deadline: Duration) {
        self.closing.cancel();
        let until = Instant::now() + deadline;
        while self.total.available_permits() < self.max_total && Instant::now() < until {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        self.sessions.end_all();
        self.stateless.end("the gateway shut down").await;
        if let Some(shared) = &self.shared {
            if let Some(children) = shared.lock().await.take() {
                children.end("the gateway shut down");
            }
        }
        let reaped_by = Instant::now() + self.limits.terminate_grace + Duration::from_secs(6);
        while self.child_count() > 0 && Instant::now() < reaped_by {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Serves connections from `listener` (HTTP/1.1 and HTTP/2), each on its own task,
    /// until the listener fails; idle sessions are swept every 30 seconds.
    ///
    /// ```no_run
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> std::io::Result<()> {
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:8000").await?;
    /// rpcwire::mcp::gateway::McpGateway::new(rpcwire::mcp::gateway::StdioCommand::new("server")).serve(listener).await
    /// # }
    /// ```
    pub async fn serve(self, listener: tokio::net::TcpListener) -> std::io::Result<()> {
        self.serve_until(listener, std::future::pending(), Duration::ZERO)
            .await
    }

    /// Serves connections from `listener` until `signal` completes, then
    /// [`shutdown`](McpGateway::shutdown)s with `deadline`.
    ///
    /// ```no_run
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> std::io::Result<()> {
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:8000").await?;
    /// let gateway = rpcwire::mcp::gateway::McpGateway::new(rpcwire::mcp::gateway::StdioCommand::new("server"));
    /// gateway
    ///     .serve_until(listener, async { let _ = tokio::signal::ctrl_c().await; }, std::time::Duration::from_secs(10))
    ///     .await
    /// # }
    /// ```
    pub async fn serve_until(
        self,
        listener: tokio::net::TcpListener,
        signal: impl Future<Output = ()>,
        deadline: Duration,
    ) -> std::io::Result<()> {
        let (sessions, children) = (Arc::downgrade(&self.sessions), Arc::downgrade(&self.stateless));
        let sweep = move || match (sessions.upgrade(), children.upgrade()) {
            (Some(sessions), Some(children)) => {
                sessions.sweep();
                children.sweep(sessions.idle());
                true
            }
            _ => false,
        };
        let served = serve_connections(self.clone(), listener, Duration::from_secs(30), sweep, signal).await;
        self.shutdown(deadline).await;
        served
    }

    async fn answer<B>(self, request: Request<B>) -> Response<McpBody>
    where
        B: Body + Send + 'static,
        B::Data: Send,
        B::Error: std::fmt::Display,
    {
        if request.uri().path() == "/healthz" {
            return self.health(request.method());
        }
        if request.uri().path() != self.config.path {
            return refusal(StatusCode::NOT_FOUND, "Not Found");
        }
        if let Some(hosts) = &self.config.allowed_hosts {
            let authority = request.uri().authority().map(|a| a.as_str());
            if !origin::allowed(request.headers(), authority, hosts) {
                metrics::refused("forbidden");
                return refusal(StatusCode::FORBIDDEN, "Forbidden: Host or Origin not allowed");
            }
        }
        if let Some(token) = &self.config.token {
            if !bearer_matches(request.headers(), token) {
                metrics::refused("unauthorized");
                let mut answer = refusal(
                    StatusCode::UNAUTHORIZED,
                    "Unauthorized: a valid bearer token is required",
                );
                answer
                    .headers_mut()
                    .insert(WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
                return answer;
            }
        }
        if let Some(version) = request.headers().get(VERSION_HEADER) {
            let known = version
                .to_str()
                .ok()
                .and_then(|v| v.parse::<ProtocolVersion>().ok())
                .is_some_and(|v| !v.is_stateless());
            let sessionless = !request.headers().contains_key(SESSION_HEADER);
            // Without a session, the stateless revision checks the header itself (with the
            // body), and has nothing but POST.
            if sessionless && !known && *request.method() != Method::POST {
                let mut answer = refusal(
                    StatusCode::METHOD_NOT_ALLOWED,
                    "Method Not Allowed: protocol revision 2026-07-28 has POST only",
                );
                answer
                    .headers_mut()
                    .insert(ALLOW, HeaderValue::from_static("POST"));
                return answer;
            }
            if !known && !sessionless {
                return refusal(
                    StatusCode::BAD_REQUEST,
                    "Bad Request: unsupported MCP-Protocol-Version",
                );
            }
        }
        match *request.method() {
            Method::POST => self.post(request).await,
            Method::GET => self.get(request.headers()),
            Method::DELETE => self.delete(request.headers()),
            _ => {
                let mut answer = refusal(StatusCode::METHOD_NOT_ALLOWED, "Method Not Allowed");
                answer
                    .headers_mut()
                    .insert(ALLOW, HeaderValue::from_static("GET, POST, DELETE"));
                answer
            }
        }
    }

    fn health(&self, method: &Method) -> Response<McpBody> {
        if *method != Method::GET {
            let mut answer = refusal(StatusCode::METHOD_NOT_ALLOWED, "Method Not Allowed");
            answer
                .headers_mut()
                .insert(ALLOW, HeaderValue::from_static("GET"));
            return answer;
        }
        let (status, word) = if self.closing.is_cancelled() {
            (StatusCode::SERVICE_UNAVAILABLE, "closing")
        } else {
            (StatusCode::OK, "ok")
        };
        let body = format!(
            r#"{{"status":"{word}","sessions":{},"children":{}}}"#,
            self.session_count(),
            self.child_count()
        );
        json_status(status, Bytes::from(body))
    }

    async fn post<B>(self, request: Request<B>) -> Response<McpBody>
    where
        B: Body + Send + 'static,
        B::Data: Send,
        B::Error: std::fmt::Display,
    {
        let (parts, body) = request.into_parts();
        if let Some(refused) = refuse_post_headers(&parts.headers) {
            return refused;
        }
        let session = match session_of(&self.sessions, &parts.headers) {
            Ok(session) => session,
            Err(refused) => return refused,
        };
        let body = match read_post_body(body, self.config.max_body, self.config.body_timeout).await {
            Ok(body) => body,
            Err(refused) => return refused,
        };
        let parsed = match self.parser.parse(&body) {
            Ok(parsed) => parsed,
            Err(error) => {
                let mut out = BytesMut::new();
                encode::write_error(
                    &mut out,
                    error.id().unwrap_or(&Id::null()),
                    &ErrorObject::from(&error),
                );
                return json_status(StatusCode::BAD_REQUEST, out.freeze());
            }
        };
        let message = match parsed {
            Parsed::Single(message) => message,
            Parsed::Batch(batch) => {
                let allowed = session
                    .as_ref()
                    .and_then(|session| session.version.get())
                    .is_some_and(|v| v.allows_batches());
                let Some(session) = session.filter(|_| allowed) else {
                    return rpc_refusal(
                        StatusCode::BAD_REQUEST,
                        -32600,
                        "Invalid Request: batches are not accepted in this protocol revision",
                    );
                };
                let elements = batch
                    .iter()
                    .filter_map(|element| batch_element(&session, &body, element))
                    .collect();
                return self.forward_batch(session, elements).await;
            }
        };
        match (session, message) {
            (None, Message::Request(request))
                if stateless::claims(&parts.headers, request.method(), &body) =>
            {
                // The gateway checks what only it sees (the headers); the servers check the
                // rest (the revision, the method), but for the handshake, which would start
                // a session on children every client shares.
                let params = request.raw_params().map(|params| params.get());
                if let Err(error) = check_headers(&parts.headers, request.method(), params, |_| Ok(())) {
                    return error_answer(request.id(), &error);
                }
                if request.method() == "initialize" {
                    return error_answer(request.id(), &ErrorObject::method_not_found("initialize"));
                }
                let (request, id_text, progress) = forwarded_parts(&body, &request);
                self.forward_stateless(&parts.headers, request, id_text, progress)
                    .await
            }
            (None, Message::Request(request)) => {
                let request = client_request(&body, &request);
                match &*request.method {
                    "initialize" => self.initialize(request).await,
                    // Without a session, `ping` only from a client that names no revision
                    // yet: under a handshake revision, the session id is required.
                    "ping" if !parts.headers.contains_key(VERSION_HEADER) => {
                        let mut out = BytesMut::new();
                        encode::write_success_bytes(&mut out, &request.id, b"{}");
                        json_answer(out.freeze())
                    }
                    _ => refusal(
                        StatusCode::BAD_REQUEST,
                        "Bad Request: Mcp-Session-Id header is required",
                    ),
                }
            }
            (None, _) => refusal(
                StatusCode::BAD_REQUEST,
                "Bad Request: Mcp-Session-Id header is required",
            ),
            (Some(session), Message::Request(request)) => {
                let (request, id_text, progress) = forwarded_parts(&body, &request);
                self.forward(session, request, id_text, progress).await
            }
            (Some(session), Message::Notification(notification)) => {
                if notification.method() == "notifications/cancelled" {
                    cancelled(&session, &notification);
                    return accepted();
                }
                let params = notification
                    .raw_params()
                    .map(|raw| JsonBytes::slice_of(&body, raw));
                if !session.notify(notification.method(), params.as_ref()).await {
                    return refusal(StatusCode::NOT_FOUND, "Not Found: the session has ended");
                }
                accepted()
            }
            (Some(session), Message::Response(response)) => {
                answered(&session, &body, &response);
                accepted()
            }
        }
    }

    /// `initialize` without a session: a child started for a new session, which it
    /// answers; the session is kept when the child's answer is a result.
    async fn initialize(self, request: ClientRequest) -> Response<McpBody> {
        if self.closing.is_cancelled() {
            return answer_error(StatusCode::SERVICE_UNAVAILABLE, &request.id, &shutting_down());
        }
        let children = match self.children_for_a_session().await {
            Ok(children) => children,
            Err(error) => return spawn_failed(&request.id, &error),
        };
        let session = GatewaySession::new(children, &self.limits);
        let (answer, accepted) = session.initialize(&request, self.config.init_timeout).await;
        if !accepted {
            session.end();
            return json_answer(answer);
        }
        // Counted before it is kept: the child's end counts it out, whenever that is.
        session.kept.store(true, Ordering::Relaxed);
        metrics::session_started();
        if !self.sessions.insert(session.clone()) {
            session.end();
            metrics::refused("sessions");
            return answer_error(
                StatusCode::SERVICE_UNAVAILABLE,
                &request.id,
                &ErrorObject::new(TOO_MANY_REQUESTS, "Service Unavailable: too many sessions"),
            );
        }
        let mut response = json_answer(answer);
        if let Ok(value) = HeaderValue::from_str(&session.id) {
            response.headers_mut().insert(SESSION_HEADER, value);
        }
        response
    }

    /// A request of the stateless revision, forwarded to the stateless children (started
    /// when none are running) as a session of its own; errors answered as JSON get the
    /// revision's HTTP status. Servers that refuse `server/discover` are ended, and the next
    /// discoveries refused here for the idle timeout.
    async fn forward_stateless(
        self,
        headers: &HeaderMap,
        request: ClientRequest,
        id_text: Bytes,
        progress: Option<Bytes>,
    ) -> Response<McpBody> {
        if self.closing.is_cancelled() {
            return answer_error(StatusCode::SERVICE_UNAVAILABLE, &request.id, &shutting_down());
        }
        let discover = &*request.method == "server/discover";
        if discover && self.stateless.refuses_discover() {
            let refused = ErrorObject::new(
                -32601,
                "Method not found: server/discover (the MCP server serves the handshake revisions only)",
            );
            return error_answer(&request.id, &refused);
        }
        let spawn = || {
            Children::spawn(
                &self.servers,
                &self.limits,
                ChildrenKind::Stateless,
                Arc::downgrade(&self.sessions),
                self.children.clone(),
            )
        };
        let children = match self.stateless.get(spawn).await {
            Ok(children) => children,
            Err(error) => return spawn_failed(&request.id, &error),
        };
        if &*request.method == "subscriptions/listen" {
            let Ok(permit) = self.listeners.clone().try_acquire_owned() else {
                return error_answer(
                    &request.id,
                    &ErrorObject::new(TOO_MANY_REQUESTS, "too many listening streams"),
                );
            };
            return stateless::listen(&children, &request.id, &id_text, request.params.as_ref(), permit)
                .await;
        }
        if &*request.method == "tools/call" {
            // The servers cannot see the headers: the arguments a tool mirrors in them
            // (`x-mcp-header`) are checked here.
            let params = request.params.as_ref().map(JsonBytes::as_str);
            let tool = params.and_then(|params| super::aggregate::string_member(params, "name"));
            let meta = params
                .and_then(|params| Params::new(params).get("_meta"))
                .map(|meta| meta.get().to_owned());
            if let Some(tool) = tool {
                let mirrored = self.stateless.mirrored(&children, &tool, meta.as_deref()).await;
                if let Err(error) = check_param_headers(headers, &mirrored, params) {
                    return error_answer(&request.id, &error);
                }
            }
        }
        let session = GatewaySession::stateless(children, &self.limits);
        let response = self.clone().forward(session, request, id_text, progress).await;
        if discover && response.status() == StatusCode::NOT_FOUND {
            self.stateless.discover_refused(self.sessions.idle());
        }
        response
    }

    /// The children a new session runs on: its own, or the shared ones (started when there
    /// are none running).
    async fn children_for_a_session(&self) -> std::io::Result<Arc<Children>> {
        let spawn = || {
            Children::spawn(
                &self.servers,
                &self.limits,
                if self.shared.is_some() {
                    ChildrenKind::Shared
                } else {
                    ChildrenKind::PerSession
                },
                Arc::downgrade(&self.sessions),
                self.children.clone(),
            )
        };
        let Some(shared) = &self.shared else {
            return spawn();
        };
        let mut running = shared.lock().await;
        match &*running {
            Some(children) if !children.is_ended() => Ok(children.clone()),
            _ => {
                let children = spawn()?;
                *running = Some(children.clone());
                Ok(children)
            }
        }
    }

    /// A request in a session, forwarded to its child; answered with JSON, or with a stream
    /// once the child sends something that belongs to it before its answer.
    async fn forward(
        self,
        session: Arc<GatewaySession>,
        request: ClientRequest,
        id_text: Bytes,
        progress: Option<Bytes>,
    ) -> Response<McpBody> {
        if let Some(refused) = self.refuse_in(&session, &request.id) {
            return refused;
        }
        let output = Arc::new(PostOutput::new(session.streams.clone(), self.prime(&session)));
        let prepared = match self.prepare(&session, request, &id_text, progress, &output) {
            Ok(prepared) => prepared,
            Err(refused) => return json_answer(refused),
        };
        let post_gone = PostGone(smallvec::smallvec![prepared.forwarded.post_gone.clone()]);
        let done = output.clone();
        let stateless = session.stateless.then(|| prepared.forwarded.clone());
        // Run here, in the POST's own task; when the POST is dropped it goes on in a task of
        // its own, which cancels it at the child unless its stream is read again.
        let work = Box::pin(async move {
            let answer = prepared.run(&session).await;
            done.complete(answer);
        });
        let mut response = answer_post(&output, work).await;
        post_gone.disarm();
        // An error of the stateless revision answered as JSON gets the revision's status.
        let code = stateless.as_ref().and_then(|forwarded| forwarded.code.get());
        if let Some(code) = code.filter(|_| is_json_answer(&response)) {
            *response.status_mut() = error_status(*code);
        }
        response
    }

    /// A batch in a session of a revision that has them (2025-03-26): cancellations and the
    /// client's answers taken at once, notifications sent on, requests forwarded together,
    /// their answers one array (JSON, or one event of the stream the batch's answer became);
    /// `202` when it has no request.
    async fn forward_batch(self, session: Arc<GatewaySession>, elements: Vec<Element>) -> Response<McpBody> {
        if let Some(refused) = self.refuse_in(&session, &Id::null()) {
            return refused;
        }
        let output = Arc::new(PostOutput::new(session.streams.clone(), self.prime(&session)));
        let mut refused = Vec::new();
        let mut prepared = Vec::new();
        for element in elements {
            match element {
                Element::Request(request, id_text, progress) => {
                    match self.prepare(&session, request, &id_text, progress, &output) {
                        Ok(ready) => prepared.push(ready),
                        Err(answer) => refused.push(answer),
                    }
                }
                Element::Notification(method, params) => {
                    if !session.notify(&method, params.as_ref()).await {
                        return refusal(StatusCode::NOT_FOUND, "Not Found: the session has ended");
                    }
                }
                Element::Refused(answer) => refused.push(answer),
            }
        }
        if prepared.is_empty() && refused.is_empty() {
            return accepted();
        }
        let post_gone = PostGone(
            prepared
                .iter()
                .map(|ready| ready.forwarded.post_gone.clone())
                .collect(),
        );
        let done = output.clone();
        let work = Box::pin(async move {
            let answers = super::session::join_all(prepared.into_iter().map(|ready| {
                let session = &session;
                async move { ready.run(session).await }
            }))
            .await;
            let answers: Vec<Bytes> = refused.into_iter().chain(answers.into_iter().flatten()).collect();
            if answers.is_empty() {
                // Every request cancelled: nothing to answer.
                return done.complete(None);
            }
            let mut array =
                BytesMut::with_capacity(answers.iter().map(|answer| answer.len() + 1).sum::<usize>() + 1);
            for answer in &answers {
                array.extend_from_slice(if array.is_empty() { b"[" } else { b"," });
                array.extend_from_slice(answer);
            }
            array.extend_from_slice(b"]");
            done.complete(Some(array.freeze()));
        });
        let response = answer_post(&output, work).await;
        post_gone.disarm();
        response
    }

    /// The answer to a request in `session` when none can be forwarded now: the session
    /// has ended, or the gateway is shutting down.
    fn refuse_in(&self, session: &GatewaySession, id: &Id<'_>) -> Option<Response<McpBody>> {
        if session.is_ended() {
            return Some(refusal(StatusCode::NOT_FOUND, "Not Found: the session has ended"));
        }
        if self.closing.is_cancelled() {
            return Some(answer_error(
                StatusCode::SERVICE_UNAVAILABLE,
                id,
                &shutting_down(),
            ));
        }
        None
    }

    /// The `retry:` of the priming event of the session's streams, when its revision has one.
    fn prime(&self, session: &GatewaySession) -> Option<u64> {
        session
            .version
            .get()
            .is_some_and(|v| *v >= ProtocolVersion::V2025_11_25)
            .then(|| self.config.retry.as_millis() as u64)
    }

    /// A request of `session` made ready to forward, its answer to go to `output`: its
    /// permits taken, its progress token made unique for shared children, kept under way;
    /// or the error answer it gets at once (`initialize` again, too many under way, its id
    /// under way already).
    fn prepare(
        &self,
        session: &GatewaySession,
        mut request: ClientRequest,
        id_text: &[u8],
        progress: Option<Bytes>,
        output: &Arc<PostOutput>,
    ) -> Result<Prepared, Bytes> {
        let refused = |object: ErrorObject<'_>| {
            let mut out = BytesMut::new();
            encode::write_error(&mut out, &request.id, &object);
            out.freeze()
        };
        if &*request.method == "initialize" {
            return Err(refused(ErrorObject::new(
                -32600,
                "Invalid Request: the session is initialized already",
            )));
        }
        let busy = |what: &str| {
            metrics::refused("busy");
            refused(ErrorObject::new(
                TOO_MANY_REQUESTS,
                format!("too many requests under way {what}"),
            ))
        };
        let Ok(permit) = session.in_flight.clone().try_acquire_owned() else {
            return Err(busy("in this session"));
        };
        let Ok(overall) = self.total.clone().try_acquire_owned() else {
            return Err(busy("at the gateway"));
        };
        let key = request_key(session.number, id_text);
        let progress = progress.map(|token| session.progress_token(token));
        if let Some((unique, Some(_))) = &progress {
            // Shared children: the token made unique among the sessions.
            request.params = request
                .params
                .as_ref()
                .and_then(|params| with_progress_token(params, unique))
                .or(request.params);
        }
        let Ok(forwarded) = session.up().begin(key.clone(), output.clone(), progress) else {
            return Err(refused(ErrorObject::new(
                -32600,
                "Invalid Request: a request with this id is under way in this session",
            )));
        };
        Ok(Prepared {
            request,
            forwarded,
            key,
            _permits: (permit, overall),
        })
    }

    fn get(&self, headers: &HeaderMap) -> Response<McpBody> {
        let session = match get_session(&self.sessions, headers) {
            Ok(session) => session,
            Err(refused) => return refused,
        };
        resumed(&session.streams, headers)
            .unwrap_or_else(|| standalone(session.streams.open_standalone().map(|(stream, _)| stream)))
    }

    fn delete(&self, headers: &HeaderMap) -> Response<McpBody> {
        delete_session(&self.sessions, headers)
    }
}

impl<B> tower_service::Service<Request<B>> for McpGateway
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: std::fmt::Display,
{
    type Response = Response<McpBody>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response<McpBody>, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let gateway = self.clone();
        Box::pin(async move { Ok(gateway.answer(request).await) })
    }
}

/// A request of the client ready to be forwarded (`McpGateway::prepare`).
struct Prepared {
    request: ClientRequest,
    forwarded: Arc<Forwarded>,
    key: Bytes,
    _permits: (OwnedSemaphorePermit, OwnedSemaphorePermit),
}

impl Prepared {
    /// Forwards it in `session`: its answer (`None`: none, it was cancelled), its error code
    /// kept.
    async fn run(self, session: &GatewaySession) -> Option<Bytes> {
        let answer = session.forward(&self.request, &self.forwarded).await;
        session.up().end(&self.key);
        let (answer, code) = answer?;
        if let Some(code) = code {
            let _ = self.forwarded.code.set(code);
        }
        Some(answer)
    }
}

/// An element of a batch, as forwarded.
enum Element {
    /// A request, its id's JSON text, its progress token's.
    Request(ClientRequest, Bytes, Option<Bytes>),
    /// A notification to send on.
    Notification(Box<str>, Option<JsonBytes>),
    /// The error answer of an element that is not a message.
    Refused(Bytes),
}

/// Tells forwarded requests that their POST was dropped before it was answered (the client
/// went away), unless disarmed.
struct PostGone(smallvec::SmallVec<[CancellationToken; 1]>);

impl PostGone {
    fn disarm(mut self) {
        self.0.clear();
    }
}

impl Drop for PostGone {
    fn drop(&mut self) {
        for gone in self.0.drain(..) {
            gone.cancel();
        }
    }
}

/// The parts of a request of the client that are forwarded (slices of `body`).
fn client_request(body: &Bytes, request: &crate::message::Request<'_>) -> ClientRequest {
    ClientRequest {
        id: request.id().clone().into_owned(),
        method: request.method().into(),
        params: request.raw_params().map(|raw| JsonBytes::slice_of(body, raw)),
    }
}

/// The client's `notifications/cancelled` in `session`: the request it names cancelled.
fn cancelled(session: &GatewaySession, notification: &crate::message::Notification<'_>) {
    if let Some(id) = CancelProtocol::Mcp.cancelled_id(notification.params()) {
        session.up().cancel(&request_key(session.number, id.as_bytes()));
    }
}

/// The client's answer to a request of a child in `session`, given to the child's call.
fn answered(session: &GatewaySession, body: &Bytes, response: &crate::message::Response<'_>) {
    let answer = match (response.result(), response.error_object()) {
        (Some(result), _) => Ok(JsonBytes::slice_of(body, result)),
        (None, Some(error)) => Err(error.clone().into_owned()),
        (None, None) => return,
    };
    let _ = session.up().client_calls.complete(response.id(), answer);
}

/// One element of a batch in `session`: a cancellation or an answer of the client taken at
/// once, the rest to forward (or the error answer of an element that is no message).
fn batch_element(
    session: &GatewaySession,
    body: &Bytes,
    element: Result<Message<'_>, &crate::parse::ParseError>,
) -> Option<Element> {
    match element {
        Ok(Message::Request(request)) => {
            let (request, id_text, progress) = forwarded_parts(body, &request);
            Some(Element::Request(request, id_text, progress))
        }
        Ok(Message::Notification(notification)) if notification.method() == "notifications/cancelled" => {
            cancelled(session, &notification);
            None
        }
        Ok(Message::Notification(notification)) => {
            let params = notification
                .raw_params()
                .map(|raw| JsonBytes::slice_of(body, raw));
            Some(Element::Notification(notification.method().into(), params))
        }
        Ok(Message::Response(response)) => {
            answered(session, body, &response);
            None
        }
        Err(error) => {
            let mut out = BytesMut::new();
            encode::write_error(
                &mut out,
                error.id().unwrap_or(&Id::null()),
                &ErrorObject::from(error),
            );
            Some(Element::Refused(out.freeze()))
        }
    }
}

/// A request of the client as forwarded, its id's JSON text as the client wrote it, and its
/// progress token's JSON text.
fn forwarded_parts(
    body: &Bytes,
    request: &crate::message::Request<'_>,
) -> (ClientRequest, Bytes, Option<Bytes>) {
    let progress = request
        .params()
        .and_then(|params| params.get("_meta"))
        .and_then(|meta| {
            let token = Params::new(meta.get()).get("progressToken")?;
            Some(Bytes::copy_from_slice(token.get().as_bytes()))
        });
    let id_text = match id_range_within(body, request.id()) {
        Some(range) => body.slice(range),
        None => Bytes::from(request.id().json_parts().concat()),
    };
    (client_request(body, request), id_text, progress)
}

/// Whether `response` is a JSON answer (not a stream).
fn is_json_answer(response: &Response<McpBody>) -> bool {
    response
        .headers()
        .get(http::header::CONTENT_TYPE)
        .is_some_and(|value| value.as_bytes().starts_with(b"application/json"))
}

/// The answer to a request whose servers could not be started: `502` with the reason.
fn spawn_failed(id: &Id<'_>, error: &std::io::Error) -> Response<McpBody> {
    metrics::refused("spawn");
    let object = ErrorObject::new(
        super::SERVER_GONE,
        format!("the MCP server could not be started: {error}"),
    );
    answer_error(StatusCode::BAD_GATEWAY, id, &object)
}

/// `params` with `_meta.progressToken` set to the JSON text `token`.
fn with_progress_token(params: &JsonBytes, token: &[u8]) -> Option<JsonBytes> {
    let meta = Params::new(params.as_str()).get("_meta")?;
    let token = std::str::from_utf8(token).ok()?;
    let meta = super::aggregate::with_member_json(meta.get().as_bytes(), "progressToken", token)?;
    let params = super::aggregate::with_member_json(params, "_meta", std::str::from_utf8(&meta).ok()?)?;
    Some(JsonBytes::from_validated(params))
}

/// An error response to the request `id` with `status`.
fn answer_error(status: StatusCode, id: &Id<'_>, error: &ErrorObject<'_>) -> Response<McpBody> {
    let mut out = BytesMut::new();
    encode::write_error(&mut out, id, error);
    json_status(status, out.freeze())
}

fn shutting_down() -> ErrorObject<'static> {
    ErrorObject::new(SHUTTING_DOWN, "the gateway is shutting down")
}

/// Whether `Authorization` is `Bearer` with the token whose SHA-256 is `expected`, compared
/// in constant time (the digests, so not even the token's length shows).
fn bearer_matches(headers: &HeaderMap, expected: &[u8; 32]) -> bool {
    let Some(value) = headers.get(AUTHORIZATION) else {
        return false;
    };
    let value = value.as_bytes();
    let Some(scheme) = value.get(..7) else {
        return false;
    };
    if !scheme.eq_ignore_ascii_case(b"bearer ") {
        return false;
    }
    let given: [u8; 32] = Sha256::digest(value[7..].trim_ascii()).into();
    given
        .iter()
        .zip(expected)
        .fold(0u8, |differ, (a, b)| differ | (a ^ b))
        == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bearer_token_is_checked_whole() {
        let expected: [u8; 32] = Sha256::digest(b"s3cret").into();
        let with = |value: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(AUTHORIZATION, HeaderValue::from_str(value).unwrap());
            bearer_matches(&headers, &expected)
        };
        assert!(with("Bearer s3cret"));
        assert!(with("bearer  s3cret "));
        for wrong in [
            "Bearer s3cre",
            "Bearer s3cret2",
            "Basic s3cret",
            "Bearer",
            "s3cret",
            "",
        ] {
            assert!(!with(wrong), "{wrong}");
        }
        assert!(!bearer_matches(&HeaderMap::new(), &expected));
    }
}
