//! `McpServer`: what an MCP server offers — tools, resources, resource templates, prompts,
//! completion — and its limits; served over stdio (or any transport) through a
//! [`Peer`](crate::transport::Peer), or over Streamable HTTP (`http` feature).

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::value::RawValue;

use super::changes::ChangeNotifier;
use super::completion::{CompleteRequest, Completion};
use super::context::McpContext;
use super::input::Sealer;
use super::prompt::{GetPromptResult, Prompt};
use super::registry::{
    CacheHints, CacheScope, Listing, Outcome, PromptEntry, PromptFn, ReadFn, Registry, ResourceEntry,
    ServerLimits, TemplateEntry, ToolEntry, ToolFn,
};
use super::resource::{ReadResourceResult, Resource, ResourceTemplate};
use super::session;
use super::state::SessionState;
use super::tool::{CallToolResult, Tool};
use super::version::ProtocolVersion;
use crate::frame::Framing;

use crate::parse::Limits as ParserLimits;
use crate::transport::{CancelProtocol, CloseReason, Peer, Transport};

/// An MCP server: register what it offers, then serve it.
///
/// ```
/// use rpcwire::mcp::{CallToolResult, McpContext, McpServer};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Add {
///     a: i64,
///     b: i64,
/// }
///
/// let server = McpServer::new("calculator", "1.0.0").tool(
///     "add",
///     "Adds two integers",
///     |args: Add, _cx: McpContext| async move { Ok(CallToolResult::text((args.a + args.b).to_string())) },
/// );
/// # let _ = server;
/// // server.serve_stdio().await; // until stdin closes
/// ```
pub struct McpServer {
    registry: Registry,
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field("name", &self.registry.name)
            .field("tools", &self.registry.tools.len())
            .field("resources", &self.registry.resources.len())
            .field("prompts", &self.registry.prompts.len())
            .finish()
    }
}

impl McpServer {
    /// A server called `name` at `version` (its `serverInfo`), offering nothing yet, with
    /// every revision that has `initialize` enabled (2024-11-05 to 2025-11-25).
    ///
    /// ```
    /// let server = rpcwire::mcp::McpServer::new("demo", "0.1.0");
    /// # let _ = server;
    /// ```
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> McpServer {
        let mut registry = Registry {
            name: name.into(),
            version: version.into(),
            instructions: None,
            versions: ProtocolVersion::ALL
                .into_iter()
                .filter(|version| !version.is_stateless())
                .collect(),
            limits: ServerLimits {
                parser: ParserLimits::default(),
                page_size: 100,
                max_in_flight: 64,
                handler_timeout: None,
            },
            tools: Vec::new(),
            resources: Vec::new(),
            templates: Vec::new(),
            prompts: Vec::new(),
            completion: None,
            tool_list: Listing::default(),
            resource_list: Listing::default(),
            template_list: Listing::default(),
            prompt_list: Listing::default(),
            changes: ChangeNotifier::new(),
            sealer: Sealer::new(),
            cache: CacheHints::new(0, CacheScope::Private),
        };
        registry.relist();
        McpServer { registry }
    }

    /// Instructions for the client's model, sent in `initialize`'s result.
    ///
    /// ```
    /// let server = rpcwire::mcp::McpServer::new("demo", "1").with_instructions("Use add for sums.");
    /// # let _ = server;
    /// ```
    pub fn with_instructions(mut self, instructions: impl Into<String>) -> McpServer {
        self.registry.instructions = Some(instructions.into());
        self
    }

    /// The protocol revisions this server speaks (by default the four with `initialize`;
    /// add [`ProtocolVersion::V2026_07_28`] to serve the stateless revision too, over
    /// Streamable HTTP, on the same endpoint).
    ///
    /// ```
    /// use rpcwire::mcp::{McpServer, ProtocolVersion};
    /// let server = McpServer::new("demo", "1").with_versions(&[ProtocolVersion::V2025_11_25]);
    /// # let _ = server;
    /// ```
    pub fn with_versions(mut self, versions: &[ProtocolVersion]) -> McpServer {
        let mut versions = versions.to_vec();
        versions.sort();
        versions.dedup();
        self.registry.versions = versions;
        self
    }

    /// The cache hints of 2026-07-28 results (`ttlMs`, `cacheScope`) on the lists,
    /// `resources/read` and `server/discover`: by default 0 ms and private (clients ask
    /// again each time).
    ///
    /// ```
    /// use rpcwire::mcp::{CacheScope, McpServer};
    /// let server = McpServer::new("demo", "1").with_cache_hints(std::time::Duration::from_secs(60), CacheScope::Public);
    /// # let _ = server;
    /// ```
    pub fn with_cache_hints(mut self, ttl: Duration, scope: CacheScope) -> McpServer {
        self.registry.cache = CacheHints::new(u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX), scope);
        self
    }

    /// The way to tell listening clients that a list or a resource changed, from anywhere
    /// in the program.
    ///
    /// ```
    /// let server = rpcwire::mcp::McpServer::new("demo", "1");
    /// let notifier = server.notifier();
    /// assert_eq!(notifier.list_changed(rpcwire::mcp::ListChanged::Tools), 0);
    /// ```
    pub fn notifier(&self) -> ChangeNotifier {
        self.registry.changes.clone()
    }

    /// How many items a list method answers per page (100 by default).
    ///
    /// ```
    /// let server = rpcwire::mcp::McpServer::new("demo", "1").with_page_size(10);
    /// # let _ = server;
    /// ```
    pub fn with_page_size(mut self, items: usize) -> McpServer {
        self.registry.limits.page_size = items.max(1);
        self
    }

    /// The largest message accepted, in bytes (1 MiB by default): a stdio line or an HTTP
    /// body past it is refused before it is buffered.
    ///
    /// ```
    /// let server = rpcwire::mcp::McpServer::new("demo", "1").with_max_message(64 << 10);
    /// # let _ = server;
    /// ```
    pub fn with_max_message(mut self, bytes: usize) -> McpServer {
        self.registry.limits.parser = self.registry.limits.parser.with_max_size(bytes);
        self
    }

    /// How many requests of one session may run at once (64 by default); more are answered
    /// with an error at once.
    ///
    /// ```
    /// let server = rpcwire::mcp::McpServer::new("demo", "1").with_max_in_flight(8);
    /// # let _ = server;
    /// ```
    pub fn with_max_in_flight(mut self, requests: usize) -> McpServer {
        self.registry.limits.max_in_flight = requests.max(1);
        self
    }

    /// How long a handler may run before its request is answered with an error and the
    /// handler is stopped (no limit by default).
    ///
    /// ```
    /// let server = rpcwire::mcp::McpServer::new("demo", "1").with_handler_timeout(std::time::Duration::from_secs(30));
    /// # let _ = server;
    /// ```
    pub fn with_handler_timeout(mut self, timeout: Duration) -> McpServer {
        self.registry.limits.handler_timeout = Some(timeout);
        self
    }

    /// A tool whose arguments decode into `A` (its input schema made from `A` by schemars).
    /// Arguments that do not decode are answered as a failed call (`isError`) that says why,
    /// as the specification asks, so that the model can correct them.
    ///
    /// ```
    /// use rpcwire::mcp::{CallToolResult, McpContext, McpServer};
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Echo { text: String }
    /// let server = McpServer::new("demo", "1")
    ///     .tool("echo", "Says it back", |args: Echo, _: McpContext| async move { Ok(CallToolResult::text(args.text)) });
    /// # let _ = server;
    /// ```
    pub fn tool<A, F, Fut>(self, name: &str, description: &str, f: F) -> McpServer
    where
        A: DeserializeOwned + schemars::JsonSchema + Send + 'static,
        F: Fn(A, McpContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Outcome<CallToolResult>> + Send + 'static,
    {
        self.typed_tool(Tool::for_args::<A>(name, description), f)
    }

    /// A tool described by `tool` (a title, an output schema, a hand-written input schema)
    /// whose arguments decode into `A`.
    ///
    /// ```
    /// use rpcwire::mcp::{CallToolResult, McpContext, McpServer, Tool};
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Echo { text: String }
    /// let tool = Tool::for_args::<Echo>("echo", "Says it back").with_title("Echo");
    /// let server = McpServer::new("demo", "1")
    ///     .typed_tool(tool, |args: Echo, _: McpContext| async move { Ok(CallToolResult::text(args.text)) });
    /// # let _ = server;
    /// ```
    pub fn typed_tool<A, F, Fut>(self, tool: Tool, f: F) -> McpServer
    where
        A: DeserializeOwned + Send + 'static,
        F: Fn(A, McpContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Outcome<CallToolResult>> + Send + 'static,
    {
        let name = tool.name.clone();
        let f = Arc::new(f);
        self.raw_tool(tool, move |arguments: Option<Box<RawValue>>, cx: McpContext| {
            let text = arguments.as_deref().map_or("{}", RawValue::get);
            let decoded = serde_json::from_str::<A>(text);
            let f = f.clone();
            let name = name.clone();
            async move {
                match decoded {
                    Ok(args) => f(args, cx).await,
                    Err(error) => Ok(CallToolResult::error(format!(
                        "invalid arguments for tool {name}: {error}"
                    ))),
                }
            }
        })
    }

    /// A tool that takes its arguments as JSON text (`None` when the call gave none). Its
    /// schema, as `tool` gives it, reaches clients byte for byte.
    ///
    /// ```
    /// use rpcwire::mcp::{CallToolResult, McpServer, Tool};
    /// let schema = r#"{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object"}"#;
    /// let server = McpServer::new("demo", "1").raw_tool(Tool::new("raw", "Raw arguments", schema).unwrap(), |args, _cx| async move {
    ///     Ok(CallToolResult::text(args.map_or("none".to_string(), |a| a.get().to_string())))
    /// });
    /// # let _ = server;
    /// ```
    pub fn raw_tool<F, Fut>(mut self, tool: Tool, f: F) -> McpServer
    where
        F: Fn(Option<Box<RawValue>>, McpContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Outcome<CallToolResult>> + Send + 'static,
    {
        let handler: Arc<ToolFn> = Arc::new(move |args, cx| Box::pin(f(args, cx)));
        let tools = &mut self.registry.tools;
        tools.retain(|entry| entry.tool.name != tool.name);
        tools.push(ToolEntry::new(tool, handler));
        self.registry.relist();
        self
    }

    /// A resource, read by `f`.
    ///
    /// ```
    /// use rpcwire::mcp::{McpServer, ReadResourceResult, Resource, ResourceContents};
    /// let server = McpServer::new("demo", "1").resource(Resource::new("mem://hello", "hello"), |_cx| async {
    ///     Ok(ReadResourceResult::one(ResourceContents::text("mem://hello", "text/plain", "hello")))
    /// });
    /// # let _ = server;
    /// ```
    pub fn resource<F, Fut>(mut self, resource: Resource, f: F) -> McpServer
    where
        F: Fn(McpContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Outcome<ReadResourceResult>> + Send + 'static,
    {
        let handler: Arc<ReadFn> = Arc::new(move |_uri, _vars, cx| Box::pin(f(cx)));
        let resources = &mut self.registry.resources;
        resources.retain(|entry| entry.resource.uri != resource.uri);
        resources.push(ResourceEntry { resource, handler });
        self.registry.relist();
        self
    }

    /// A family of resources: `f` reads the URI asked for, given the template's variables.
    ///
    /// ```
    /// use rpcwire::mcp::{McpServer, ReadResourceResult, ResourceContents, ResourceTemplate};
    /// let server = McpServer::new("demo", "1").resource_template(
    ///     ResourceTemplate::new("user://{id}", "users"),
    ///     |uri, vars, _cx| async move {
    ///         Ok(ReadResourceResult::one(ResourceContents::text(uri, "text/plain", format!("user {}", vars[0].1))))
    ///     },
    /// );
    /// # let _ = server;
    /// ```
    pub fn resource_template<F, Fut>(mut self, template: ResourceTemplate, f: F) -> McpServer
    where
        F: Fn(String, Vec<(String, String)>, McpContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Outcome<ReadResourceResult>> + Send + 'static,
    {
        let handler: Arc<ReadFn> = Arc::new(move |uri, vars, cx| Box::pin(f(uri, vars, cx)));
        self.registry.templates.push(TemplateEntry { template, handler });
        self.registry.relist();
        self
    }

    /// A prompt, made by `f` from its arguments (the required ones are checked first).
    ///
    /// ```
    /// use rpcwire::mcp::{GetPromptResult, McpServer, Prompt, PromptMessage};
    /// let server = McpServer::new("demo", "1").prompt(
    ///     Prompt::new("greet", "Greets someone").with_argument("name", "Who", true),
    ///     |args, _cx| async move { Ok(GetPromptResult::new(vec![PromptMessage::user_text(format!("Hello, {}!", args["name"]))])) },
    /// );
    /// # let _ = server;
    /// ```
    pub fn prompt<F, Fut>(mut self, prompt: Prompt, f: F) -> McpServer
    where
        F: Fn(HashMap<String, String>, McpContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Outcome<GetPromptResult>> + Send + 'static,
    {
        let handler: Arc<PromptFn> = Arc::new(move |args, cx| Box::pin(f(args, cx)));
        let prompts = &mut self.registry.prompts;
        prompts.retain(|entry| entry.prompt.name != prompt.name);
        prompts.push(PromptEntry { prompt, handler });
        self.registry.relist();
        self
    }

    /// Completion of prompt and resource-template arguments (`completion/complete`); the
    /// server declares the `completions` capability once it has one. Without one, requests
    /// get no values.
    ///
    /// ```
    /// use rpcwire::mcp::{Completion, McpServer};
    /// let server = McpServer::new("demo", "1").completion(|request, _cx| async move {
    ///     let fruit = ["apple", "apricot", "banana"];
    ///     let values = fruit.iter().filter(|f| f.starts_with(&request.argument.value)).map(|f| f.to_string()).collect();
    ///     Ok(Completion::of(values))
    /// });
    /// # let _ = server;
    /// ```
    pub fn completion<F, Fut>(mut self, f: F) -> McpServer
    where
        F: Fn(CompleteRequest, McpContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Outcome<Completion>> + Send + 'static,
    {
        self.registry.completion = Some(Arc::new(move |request, cx| Box::pin(f(request, cx))));
        self
    }

    /// Serves one session over this process's stdin and stdout (NDJSON, nothing but
    /// JSON-RPC written to stdout) until stdin closes.
    ///
    /// ```no_run
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// rpcwire::mcp::McpServer::new("demo", "1").serve_stdio().await;
    /// # }
    /// ```
    pub async fn serve_stdio(self) -> CloseReason {
        let max = self.registry.limits.parser.max_size();
        self.serve(crate::transport::stdio(Framing::Ndjson).with_max_frame(max))
            .await
    }

    /// Serves one session over `transport` until it closes.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use rpcwire::frame::Framing;
    /// use rpcwire::transport::StreamTransport;
    /// use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    ///
    /// let (ours, theirs) = tokio::io::duplex(4096);
    /// let served = tokio::spawn(rpcwire::mcp::McpServer::new("demo", "1").serve(StreamTransport::from_io(ours, Framing::Ndjson)));
    /// let (read, mut write) = tokio::io::split(theirs);
    /// write.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n").await.unwrap();
    /// let mut line = String::new();
    /// tokio::io::BufReader::new(read).read_line(&mut line).await.unwrap();
    /// assert_eq!(line, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n");
    /// drop(write);
    /// served.await.unwrap();
    /// # });
    /// ```
    pub async fn serve<T: Transport>(self, transport: T) -> CloseReason {
        self.into_shared().serve(transport).await
    }

    pub(crate) fn into_shared(self) -> Arc<Registry> {
        Arc::new(self.registry)
    }
}

impl Registry {
    /// Serves one session over `transport` through a peer (MCP cancellation, the in-flight
    /// limit, the handler timeout).
    pub(crate) async fn serve<T: Transport>(self: Arc<Self>, transport: T) -> CloseReason {
        let session = Arc::new(SessionState::new(self.changes.clone()));
        let router = session::router(&self, &session);
        let limits = self.limits;
        let mut builder = Peer::builder()
            .cancel_protocol(CancelProtocol::Mcp)
            .max_concurrent_requests(limits.max_in_flight)
            .max_queued_requests(limits.max_in_flight);
        if let Some(timeout) = limits.handler_timeout {
            builder = builder.handler_timeout(timeout);
        }
        let peer = builder.start(transport, router);
        // The program's changes (list changes, resource updates) reach this client as
        // notifications while it is connected.
        let forward = {
            let link = peer.link();
            let mut changes = self.changes.subscribe();
            tokio::spawn(async move {
                loop {
                    let change = tokio::select! {
                        change = changes.recv() => change,
                        _ = link.closed() => return,
                    };
                    let change = match change {
                        Ok(change) => change,
                        Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                        Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                    };
                    if let Some((method, params)) = session.notification_of(&change) {
                        if link.notify_raw(method, params.as_ref()).await.is_err() {
                            return;
                        }
                    }
                }
            })
        };
        let closed = peer.closed().await;
        forward.abort();
        closed
    }
}
