//! `McpGateway`: an MCP server that runs as a stdio child per session, served over
//! Streamable HTTP as a tower `Service` — its settings, the bounds on sessions and requests
//! under way, a graceful shutdown, and the backend of the front door (`http/front.rs`, which
//! makes the transport's checks and the bearer token's) with `/healthz`.

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::header::HeaderMap;
use http::{Response, StatusCode};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use super::command::StdioCommand;
use super::metrics;
use super::session::{GatewaySession, Servers, SessionLimits};
use super::shared::{Config, McpGateway};
use crate::http::answer::json_status;
use crate::http::front::{front_door_service, Backend, Door};
use crate::http::serving::serve_connections;
use crate::http::session::Sessions;
use crate::http::stream::EventStream;
use crate::http::McpBody;
use crate::parse::{Limits, Parser};
use crate::version::ProtocolVersion;

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
                door: Door {
                    path: Some("/mcp".to_owned()),
                    ..Door::new(4 << 20)
                },
                init_timeout: Duration::from_secs(30),
                retry: Duration::from_secs(1),
                tls: None,
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

    /// Serves HTTPS with `tls` (its certificate, read again when its files change; ALPN
    /// `h2` and `http/1.1`; a handshake deadline) when [`serve`](McpGateway::serve)d on a
    /// listener; the Host and Origin checks stay as they are.
    ///
    /// ```
    /// # let certified = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    /// # let (cert, key) = (certified.cert.pem(), certified.signing_key.serialize_pem());
    /// let tls = rpcwire::transport::tls::ServerTls::from_pem(cert.as_bytes(), key.as_bytes()).unwrap();
    /// let gateway = rpcwire::mcp::gateway::McpGateway::new(rpcwire::mcp::gateway::StdioCommand::new("server")).with_tls(tls);
    /// # let _ = gateway;
    /// ```
    pub fn with_tls(mut self, tls: crate::transport::tls::ServerTls) -> McpGateway {
        Arc::make_mut(&mut self.config).tls = Some(tls);
        self
    }

    /// The path the MCP endpoint answers at (`/mcp` by default).
    ///
    /// ```
    /// let gateway = rpcwire::mcp::gateway::McpGateway::new(rpcwire::mcp::gateway::StdioCommand::new("server")).with_path("/");
    /// # let _ = gateway;
    /// ```
    pub fn with_path(mut self, path: impl Into<String>) -> McpGateway {
        Arc::make_mut(&mut self.config).door.path = Some(path.into());
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
        Arc::make_mut(&mut self.config).door.allow_hosts(hosts);
        self
    }

    /// No Host/Origin check (behind a proxy that makes its own).
    ///
    /// ```
    /// let gateway = rpcwire::mcp::gateway::McpGateway::new(rpcwire::mcp::gateway::StdioCommand::new("server")).without_host_check();
    /// # let _ = gateway;
    /// ```
    pub fn without_host_check(mut self) -> McpGateway {
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
    pub fn with_protection(mut self, protected: crate::auth::ProtectedResource) -> McpGateway {
        Arc::make_mut(&mut self.config).door.protection = Some(Arc::new(protected));
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
        Arc::make_mut(&mut self.config).door.ask_token(token.as_ref());
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
        Arc::make_mut(&mut self.config).door.max_body = bytes;
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
        let tls = self.config.tls.clone();
        let served = serve_connections(
            self.clone(),
            listener,
            tls,
            Duration::from_secs(30),
            sweep,
            signal,
        )
        .await;
        self.shutdown(deadline).await;
        served
    }
}

impl Backend for McpGateway {
    type Session = GatewaySession;

    fn door(&self) -> &Door {
        &self.config.door
    }

    fn sessions(&self) -> &Sessions<GatewaySession> {
        &self.sessions
    }

    fn serves_stateless(&self) -> bool {
        // The children check the revision; the gateway passes the stateless revision on.
        true
    }

    fn speaks(&self, _: ProtocolVersion) -> bool {
        // Which handshake revision a session speaks is the children's to say.
        true
    }

    fn post(
        self,
        session: Option<Arc<GatewaySession>>,
        headers: &HeaderMap,
        body: Bytes,
    ) -> impl Future<Output = Response<McpBody>> + Send {
        self.serve_post(session, headers, body)
    }

    fn open_standalone(session: &GatewaySession) -> Option<Arc<EventStream>> {
        session.streams.open_standalone().map(|(stream, _)| stream)
    }

    fn health(&self) -> Option<Response<McpBody>> {
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
        Some(json_status(status, Bytes::from(body)))
    }

    fn refused(&self, reason: &'static str) {
        metrics::refused(reason);
    }
}

front_door_service!(McpGateway);
