//! `McpClientBuilder`: how an [`McpClient`] connects — who it is, what it answers (sampling,
//! elicitation, roots, log messages), its timeouts and revision — and the connecting itself,
//! over stdio, Streamable HTTP or any transport, with the handshake or discovery.

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};

use super::child::ChildProcess;
use super::client::{
    failed, refused_version, ConnectError, McpClient, Progress, ProgressHandlers, RequestFn, StatelessClient,
};
use super::param_headers::ParamHeaders;
use super::version::ProtocolVersion;
use crate::dispatch::{RawCall, Router};
use crate::frame::Framing;
use crate::message::{ErrorObject, RawJson};
use crate::sync::lock_unpoisoned;
use crate::transport::{CancelProtocol, Peer, PeerErrorKind, StreamTransport, Transport};

/// How an [`McpClient`] connects: who it is, what it answers, its timeouts.
///
/// ```
/// let builder = rpcwire::mcp::McpClient::builder("my-host", "1.0.0")
///     .with_call_timeout(std::time::Duration::from_secs(30))
///     .accept_elicitation_defaults();
/// # let _ = builder;
/// ```
pub struct McpClientBuilder {
    name: String,
    version: String,
    protocol: ProtocolVersion,
    call_timeout: Duration,
    max_message: usize,
    sampling: Option<Arc<RequestFn>>,
    elicitation: Option<Arc<RequestFn>>,
    roots: Option<Vec<Value>>,
    on_log: Option<Arc<dyn Fn(Value) + Send + Sync>>,
    #[cfg(feature = "http")]
    tls: Option<crate::transport::tls::ClientTls>,
    #[cfg(feature = "auth")]
    authorizer: Option<crate::auth::Authorizer>,
    /// The tools' `x-mcp-header` marks, shared by the client and its HTTP transport.
    param_headers: Arc<ParamHeaders>,
}

impl std::fmt::Debug for McpClientBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpClientBuilder")
            .field("name", &self.name)
            .field("protocol", &self.protocol)
            .field("call_timeout", &self.call_timeout)
            .finish()
    }
}

impl McpClient {
    /// A builder for a client called `name` at `version` (its `clientInfo`).
    ///
    /// ```
    /// let builder = rpcwire::mcp::McpClient::builder("host", "1.0");
    /// # let _ = builder;
    /// ```
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> McpClientBuilder {
        McpClientBuilder {
            name: name.into(),
            version: version.into(),
            protocol: ProtocolVersion::V2025_11_25,
            call_timeout: Duration::from_secs(60),
            max_message: 4 << 20,
            sampling: None,
            elicitation: None,
            roots: None,
            on_log: None,
            #[cfg(feature = "http")]
            tls: None,
            #[cfg(feature = "auth")]
            authorizer: None,
            param_headers: Arc::default(),
        }
    }
}

/// The content an elicitation request's schema fills in by itself: each property's
/// `default` (what a client that asks nobody answers with).
///
/// ```
/// let schema = serde_json::json!({"type": "object", "properties": {
///     "name": {"type": "string", "default": "John Doe"}, "age": {"type": "integer"}}});
/// assert_eq!(rpcwire::mcp::elicitation_defaults(&schema), serde_json::json!({"name": "John Doe"}));
/// ```
pub fn elicitation_defaults(schema: &Value) -> Value {
    let mut content = serde_json::Map::new();
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        for (name, property) in properties {
            if let Some(default) = property.get("default") {
                content.insert(name.clone(), default.clone());
            }
        }
    }
    Value::Object(content)
}

impl McpClientBuilder {
    /// Answers the server's `sampling/createMessage` requests with `f` (and declares the
    /// `sampling` capability).
    ///
    /// ```
    /// let builder = rpcwire::mcp::McpClient::builder("host", "1").on_sampling(|_params| async {
    ///     Ok(serde_json::json!({"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"}))
    /// });
    /// # let _ = builder;
    /// ```
    pub fn on_sampling<F, Fut>(mut self, f: F) -> McpClientBuilder
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, ErrorObject<'static>>> + Send + 'static,
    {
        self.sampling = Some(Arc::new(move |params| Box::pin(f(params))));
        self
    }

    /// Answers the server's `elicitation/create` requests with `f` (and declares the
    /// `elicitation` capability).
    ///
    /// ```
    /// let builder = rpcwire::mcp::McpClient::builder("host", "1")
    ///     .on_elicitation(|_params| async { Ok(serde_json::json!({"action": "decline"})) });
    /// # let _ = builder;
    /// ```
    pub fn on_elicitation<F, Fut>(mut self, f: F) -> McpClientBuilder
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, ErrorObject<'static>>> + Send + 'static,
    {
        self.elicitation = Some(Arc::new(move |params| Box::pin(f(params))));
        self
    }

    /// Answers every elicitation by accepting the schema's defaults
    /// ([`elicitation_defaults`]).
    ///
    /// ```
    /// let builder = rpcwire::mcp::McpClient::builder("host", "1").accept_elicitation_defaults();
    /// # let _ = builder;
    /// ```
    pub fn accept_elicitation_defaults(self) -> McpClientBuilder {
        self.on_elicitation(|params: Value| async move {
            let content = elicitation_defaults(&params["requestedSchema"]);
            Ok(json!({ "action": "accept", "content": content }))
        })
    }

    /// Answers `roots/list` with these roots (`{"uri": …, "name": …}` objects), and declares
    /// the `roots` capability.
    ///
    /// ```
    /// let builder = rpcwire::mcp::McpClient::builder("host", "1")
    ///     .with_roots(vec![serde_json::json!({"uri": "file:///src", "name": "src"})]);
    /// # let _ = builder;
    /// ```
    pub fn with_roots(mut self, roots: Vec<Value>) -> McpClientBuilder {
        self.roots = Some(roots);
        self
    }

    /// Hands every log message (`notifications/message` params) to `f`.
    ///
    /// ```
    /// let builder = rpcwire::mcp::McpClient::builder("host", "1").on_log(|message| eprintln!("{message}"));
    /// # let _ = builder;
    /// ```
    pub fn on_log(mut self, f: impl Fn(Value) + Send + Sync + 'static) -> McpClientBuilder {
        self.on_log = Some(Arc::new(f));
        self
    }

    /// How long each call may take (60 s by default); past it the call ends with an error
    /// and is cancelled on the server.
    ///
    /// ```
    /// let builder = rpcwire::mcp::McpClient::builder("host", "1").with_call_timeout(std::time::Duration::from_secs(5));
    /// # let _ = builder;
    /// ```
    pub fn with_call_timeout(mut self, timeout: Duration) -> McpClientBuilder {
        self.call_timeout = timeout;
        self
    }

    /// The revision asked for in `initialize` (2025-11-25 by default). With
    /// [`ProtocolVersion::V2026_07_28`] the client is stateless: it sends `server/discover`
    /// instead (connecting fails when the server does not list the revision), and every
    /// request carries the revision, the client's capabilities and its name in `_meta`.
    ///
    /// ```
    /// let builder = rpcwire::mcp::McpClient::builder("host", "1").with_protocol_version(rpcwire::mcp::ProtocolVersion::V2025_06_18);
    /// # let _ = builder;
    /// ```
    pub fn with_protocol_version(mut self, version: ProtocolVersion) -> McpClientBuilder {
        self.protocol = version;
        self
    }

    /// Starts `program` with `args` as the server (its own process group, stdin and stdout
    /// piped, stderr inherited) and connects over its stdio. The process group is killed
    /// when the client is closed or dropped.
    ///
    /// ```no_run
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), rpcwire::mcp::ConnectError> {
    /// let client = rpcwire::mcp::McpClient::builder("host", "1").connect_stdio("npx", &["-y", "@modelcontextprotocol/server-everything"]).await?;
    /// println!("{:?}", client.list_tools().await);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn connect_stdio<S: AsRef<std::ffi::OsStr>>(
        self,
        program: S,
        args: &[S],
    ) -> Result<McpClient, ConnectError> {
        let mut command = tokio::process::Command::new(program);
        command.args(args);
        let (mut child, stdin, stdout) = ChildProcess::spawn(&mut command).map_err(ConnectError::Spawn)?;
        let transport = StreamTransport::new(stdout, stdin, Framing::Ndjson).with_max_frame(self.max_message);
        match self.connect_with(transport, |_| {}).await {
            Ok(mut client) => {
                client.child = Some(child);
                Ok(client)
            }
            Err(error) => {
                child.kill_and_reap().await;
                Err(error)
            }
        }
    }

    /// Speaks TLS through `tls` to an `https://` server (what it trusts, the certificate
    /// it shows); without it, the system's roots are trusted.
    ///
    /// ```
    /// let tls = rpcwire::transport::tls::ClientTls::builder().with_webpki_roots().build().unwrap();
    /// let builder = rpcwire::mcp::McpClient::builder("host", "1").with_tls(tls);
    /// # let _ = builder;
    /// ```
    #[cfg(feature = "http")]
    #[cfg_attr(docsrs, doc(cfg(feature = "http")))]
    pub fn with_tls(mut self, tls: crate::transport::tls::ClientTls) -> McpClientBuilder {
        self.tls = Some(tls);
        self
    }

    /// Authorizes through `authorizer` when a Streamable HTTP server asks for it (MCP's
    /// OAuth 2.1: a `401`, or a `403` for a scope the token lacks).
    ///
    /// ```
    /// let builder = rpcwire::mcp::McpClient::builder("host", "1")
    ///     .with_authorizer(rpcwire::mcp::auth::Authorizer::new("host"));
    /// # let _ = builder;
    /// ```
    #[cfg(feature = "auth")]
    #[cfg_attr(docsrs, doc(cfg(feature = "auth")))]
    pub fn with_authorizer(mut self, authorizer: crate::auth::Authorizer) -> McpClientBuilder {
        self.authorizer = Some(authorizer);
        self
    }

    /// Connects to the Streamable HTTP endpoint at `url` (`http://…`, or `https://…` with
    /// the system's roots or [`with_tls`](McpClientBuilder::with_tls)'s configuration); an
    /// address it cannot serve is [`ConnectError::Address`], before anything is sent. With
    /// an `Authorizer` (`auth` feature), an authorization that
    /// fails is `ConnectError::Authorization`, saying why.
    ///
    /// ```no_run
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), rpcwire::mcp::ConnectError> {
    /// let client = rpcwire::mcp::McpClient::builder("host", "1").connect_http("http://127.0.0.1:8000/mcp".parse().unwrap()).await?;
    /// # let _ = client;
    /// # Ok(())
    /// # }
    /// ```
    #[cfg(feature = "http")]
    #[cfg_attr(docsrs, doc(cfg(feature = "http")))]
    pub async fn connect_http(self, url: http::Uri) -> Result<McpClient, ConnectError> {
        let mut transport = super::http::StreamableHttpClient::new(url)?;
        if let Some(tls) = self.tls.clone() {
            transport = transport.with_tls(tls);
        }
        #[cfg(feature = "auth")]
        if let Some(authorizer) = self.authorizer.clone() {
            transport = transport.with_authorizer(authorizer)?;
        }
        transport = transport.with_param_headers(self.param_headers.clone());
        // Kept to ask why, when connecting fails.
        #[cfg(feature = "auth")]
        let handle = transport.clone();
        let headers = transport.clone();
        let connected = self
            .connect_with(transport, move |version| headers.set_protocol_version(version))
            .await;
        #[cfg(feature = "auth")]
        if let Err(ConnectError::Initialize(_)) = &connected {
            if let Some(failure) = handle.take_authorization_failure() {
                return Err(ConnectError::Authorization(failure));
            }
        }
        connected
    }

    /// Connects over `transport` (any rpcwire transport: a socket, a pipe, a duplex).
    ///
    /// (See [`McpClient`] for an example.)
    pub async fn connect<T: Transport>(self, transport: T) -> Result<McpClient, ConnectError> {
        self.connect_with(transport, |_| {}).await
    }

    /// Connects and initializes; `agreed` learns the revision agreed on.
    async fn connect_with<T: Transport>(
        self,
        transport: T,
        agreed: impl FnOnce(ProtocolVersion),
    ) -> Result<McpClient, ConnectError> {
        let progress = Arc::new(ProgressHandlers::default());
        let mut capabilities = serde_json::Map::new();
        if self.sampling.is_some() {
            capabilities.insert("sampling".into(), json!({}));
        }
        if self.elicitation.is_some() {
            capabilities.insert("elicitation".into(), json!({}));
        }
        if self.roots.is_some() {
            capabilities.insert("roots".into(), json!({ "listChanged": false }));
        }
        let router = self.router(&progress);
        let peer = Peer::builder()
            .cancel_protocol(CancelProtocol::Mcp)
            .call_timeout(self.call_timeout)
            .start(transport, router);
        if self.protocol.is_stateless() {
            return self.discover(peer, capabilities, progress, agreed).await;
        }
        let params = json!({
            "protocolVersion": self.protocol.as_str(),
            "capabilities": capabilities,
            "clientInfo": { "name": self.name, "version": self.version },
        });
        let initialized: Value = peer
            .call("initialize", &params)
            .await
            .map_err(ConnectError::Initialize)?;
        let answered = initialized["protocolVersion"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let version: ProtocolVersion = answered
            .parse()
            .map_err(|_| ConnectError::Version(answered.clone()))?;
        agreed(version);
        let _ = peer.notify("notifications/initialized", json!({})).await;
        Ok(McpClient {
            peer,
            initialized,
            version,
            progress,
            child: None,
            stateless: None,
            param_headers: self.param_headers,
        })
    }

    /// The stateless start: `server/discover`, which must list the revision asked for.
    async fn discover(
        self,
        peer: Peer,
        capabilities: serde_json::Map<String, Value>,
        progress: Arc<ProgressHandlers>,
        agreed: impl FnOnce(ProtocolVersion),
    ) -> Result<McpClient, ConnectError> {
        let version = self.protocol;
        agreed(version);
        let mut meta = serde_json::Map::new();
        meta.insert(
            "io.modelcontextprotocol/protocolVersion".into(),
            json!(version.as_str()),
        );
        meta.insert(
            "io.modelcontextprotocol/clientCapabilities".into(),
            Value::Object(capabilities),
        );
        meta.insert(
            "io.modelcontextprotocol/clientInfo".into(),
            json!({ "name": self.name, "version": self.version }),
        );
        let stateless = Arc::new(StatelessClient {
            meta: Mutex::new(meta),
            sampling: self.sampling,
            elicitation: self.elicitation,
            roots: self.roots,
        });
        let discover = || async {
            let params = RawJson::from_value(&stateless.with_meta(json!({})))
                .map_err(|error| failed("server/discover", PeerErrorKind::Params(error)))?;
            let result = peer.call_raw("server/discover", Some(&params)).await?;
            result
                .decode::<Value>()
                .map_err(|error| failed("server/discover", PeerErrorKind::Result(error)))
        };
        let discovered = match discover().await {
            // Refused as a revision the server does not speak, though it lists this one among
            // those it does: once more.
            Err(error)
                if refused_version(&error)
                    .is_some_and(|supported| supported.contains(&version.as_str().to_owned())) =>
            {
                discover().await
            }
            answered => answered,
        }
        .map_err(ConnectError::Initialize)?;
        let supported = discovered["supportedVersions"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if !supported
            .iter()
            .any(|listed| listed.as_str() == Some(version.as_str()))
        {
            return Err(ConnectError::Version(Value::Array(supported).to_string()));
        }
        Ok(McpClient {
            peer,
            initialized: discovered,
            version,
            progress,
            child: None,
            stateless: Some(stateless),
            param_headers: self.param_headers,
        })
    }

    /// The client's side of the server's requests and notifications.
    fn router(&self, progress: &Arc<ProgressHandlers>) -> Router {
        let mut router = Router::new();
        router.raw_method("ping", |_, reply| {
            Ok(reply.raw(&RawJson::new("{}").expect("JSON")))
        });
        for (method, handler) in [
            ("sampling/createMessage", self.sampling.clone()),
            ("elicitation/create", self.elicitation.clone()),
        ] {
            if let Some(handler) = handler {
                router.raw_method_async(method, move |call: RawCall| {
                    let handler = handler.clone();
                    async move {
                        let params = call.params().map_or(Ok(Value::Null), |p| p.decode::<Value>());
                        let params = params.map_err(ErrorObject::invalid_params)?;
                        let result = handler(params).await?;
                        Ok(RawJson::from_value(&result)
                            .map_err(ErrorObject::internal_error)?
                            .into())
                    }
                });
            }
        }
        if let Some(roots) = &self.roots {
            let result = RawJson::from_value(&json!({ "roots": roots })).expect("JSON values serialize");
            router.raw_method("roots/list", move |_, reply| Ok(reply.raw(&result)));
        }
        let handlers = progress.clone();
        router.notification("notifications/progress", move |params: Value| {
            let Some(token) = params.get("progressToken").and_then(Value::as_u64) else {
                return;
            };
            let handler = lock_unpoisoned(&handlers.handlers).get(&token).cloned();
            if let (Some(handler), Ok(progress)) = (handler, serde_json::from_value::<Progress>(params)) {
                handler(progress);
            }
        });
        if let Some(on_log) = self.on_log.clone() {
            router.notification("notifications/message", move |params: Value| on_log(params));
        }
        router
    }
}
