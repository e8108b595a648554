//! `McpClient`: an MCP host's side of one connection — connect (a server child over stdio,
//! Streamable HTTP, or any transport), initialize, list and call with progress callbacks,
//! and answer the server's requests (sampling, elicitation, roots) — on a
//! [`Peer`](crate::transport::Peer), so that a call whose future is dropped or times out is
//! cancelled on the server (`notifications/cancelled`).

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::child::ChildProcess;
use super::logging::LogLevel;
use super::param_headers::ParamHeaders;
use super::prompt::{GetPromptResult, Prompt};
use super::resource::{ReadResourceResult, Resource};
use super::tool::{CallToolResult, Tool};
use super::version::ProtocolVersion;
use crate::message::{ErrorObject, JsonBytes, RawJson};
use crate::sync::lock_unpoisoned;
use crate::transport::{Peer, PeerError, PeerErrorKind};

pub(crate) type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;
pub(crate) type RequestFn = dyn Fn(Value) -> BoxFuture<Result<Value, ErrorObject<'static>>> + Send + Sync;
pub(crate) type ProgressFn = dyn Fn(Progress) + Send + Sync;

/// Pages a list method follows at most (a server that never stops paginating).
pub(crate) const MAX_PAGES: usize = 1000;

/// One progress notification of a call.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct Progress {
    /// How far along.
    pub progress: f64,
    /// Out of how much, when known.
    #[serde(default)]
    pub total: Option<f64>,
    /// What is going on.
    #[serde(default)]
    pub message: Option<String>,
}

/// A connection to an MCP server, initialized.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use rpcwire::frame::Framing;
/// use rpcwire::mcp::{CallToolResult, McpClient, McpServer};
/// use rpcwire::transport::StreamTransport;
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Add { a: i64, b: i64 }
/// let server = McpServer::new("calc", "1").tool("add", "Adds", |args: Add, _| async move {
///     Ok(CallToolResult::text((args.a + args.b).to_string()))
/// });
/// let (ours, theirs) = tokio::io::duplex(1 << 16);
/// tokio::spawn(server.serve(StreamTransport::from_io(theirs, Framing::Ndjson)));
///
/// let client = McpClient::builder("host", "1").connect(StreamTransport::from_io(ours, Framing::Ndjson)).await.unwrap();
/// assert_eq!(client.server_info()["name"], "calc");
/// let sum = client.call_tool("add", serde_json::json!({"a": 5, "b": 3})).await.unwrap();
/// assert_eq!(sum.content[0].as_text(), Some("8"));
/// # });
/// ```
pub struct McpClient {
    pub(crate) peer: Peer,
    pub(crate) initialized: Value,
    pub(crate) version: ProtocolVersion,
    pub(crate) progress: Arc<ProgressHandlers>,
    pub(crate) child: Option<ChildProcess>,
    /// In the stateless revision: what each request carries, and who answers the server's
    /// input requests.
    pub(crate) stateless: Option<Arc<StatelessClient>>,
    /// The `x-mcp-header` marks of the tools listed, shared with an HTTP transport.
    pub(crate) param_headers: Arc<ParamHeaders>,
}

/// Rounds of input-required results a stateless call goes through at most.
const MAX_INPUT_ROUNDS: usize = 8;

/// A stateless client's side (2026-07-28): the `_meta` every request carries, and the
/// handlers that answer the server's input requests.
pub(crate) struct StatelessClient {
    pub(crate) meta: Mutex<serde_json::Map<String, Value>>,
    pub(crate) sampling: Option<Arc<RequestFn>>,
    pub(crate) elicitation: Option<Arc<RequestFn>>,
    pub(crate) roots: Option<Vec<Value>>,
}

impl StatelessClient {
    /// `params` (an object; anything else counts as none) with this client's `_meta` merged
    /// into its own.
    pub(crate) fn with_meta(&self, params: Value) -> Value {
        let mut params = match params {
            Value::Object(params) => params,
            _ => serde_json::Map::new(),
        };
        let meta = params.entry("_meta").or_insert_with(|| json!({}));
        if let Value::Object(meta) = meta {
            for (key, value) in lock_unpoisoned(&self.meta).iter() {
                meta.entry(key.clone()).or_insert_with(|| value.clone());
            }
        }
        Value::Object(params)
    }

    /// The answer to one of the server's input requests, from this client's handlers.
    async fn answer(&self, request: &Value) -> Result<Value, ErrorObject<'static>> {
        let params = request.get("params").cloned().unwrap_or(Value::Null);
        let handler = match request["method"].as_str() {
            Some("sampling/createMessage") => &self.sampling,
            Some("elicitation/create") => &self.elicitation,
            Some("roots/list") => {
                return match &self.roots {
                    Some(roots) => Ok(json!({ "roots": roots })),
                    None => Err(ErrorObject::method_not_found("roots/list")),
                }
            }
            other => return Err(ErrorObject::method_not_found(other.unwrap_or("(none)"))),
        };
        match handler {
            Some(handler) => handler(params).await,
            None => Err(ErrorObject::method_not_found(
                request["method"].as_str().unwrap_or_default(),
            )),
        }
    }
}

impl std::fmt::Debug for McpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpClient")
            .field("server", &self.initialized.get("serverInfo"))
            .field("version", &self.version)
            .finish()
    }
}

/// The progress callbacks of the calls under way, by progress token.
#[derive(Default)]
pub(crate) struct ProgressHandlers {
    pub(crate) next: AtomicU64,
    pub(crate) handlers: Mutex<HashMap<u64, Arc<ProgressFn>>>,
}

/// Takes a call's progress callback off the list when the call ends.
struct ProgressRegistration<'a> {
    handlers: &'a ProgressHandlers,
    token: u64,
}

impl Drop for ProgressRegistration<'_> {
    fn drop(&mut self) {
        lock_unpoisoned(&self.handlers.handlers).remove(&self.token);
    }
}

/// Why connecting failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConnectError {
    /// The server's process could not be started.
    #[error("cannot start the MCP server: {0}")]
    Spawn(#[source] std::io::Error),
    /// `initialize` failed (the error says why: no answer in time, an error answer, the
    /// connection closed).
    #[error("initialize failed: {0}")]
    Initialize(#[source] PeerError),
    /// The server agreed on a revision this client does not speak (or, to a stateless
    /// client, did not list the one it asked for: the list it gave).
    #[error("the server answered with protocol version {0:?}")]
    Version(String),
    /// The address is not one this client can connect to (a scheme it does not speak, no
    /// host): refused before anything is sent.
    #[error(transparent)]
    Address(#[from] crate::transport::AddressError),
    /// The server asked for authorization and the client's
    /// [`Authorizer`](crate::auth::Authorizer) could not get it (the error says which step
    /// failed and where, without any credential).
    #[cfg(feature = "auth")]
    #[cfg_attr(docsrs, doc(cfg(feature = "auth")))]
    #[error(transparent)]
    Authorization(crate::auth::AuthError),
}

impl McpClient {
    /// `initialize`'s result as the server wrote it (`server/discover`'s in the stateless
    /// revision).
    ///
    /// (See [`McpClient`] for an example.)
    pub fn initialize_result(&self) -> &Value {
        &self.initialized
    }

    /// The server's `serverInfo` (`name`, `version`).
    ///
    /// (See [`McpClient`] for an example.)
    pub fn server_info(&self) -> &Value {
        match &self.initialized["serverInfo"] {
            Value::Null => &self.initialized["_meta"]["io.modelcontextprotocol/serverInfo"],
            info => info,
        }
    }

    /// The revision agreed on.
    ///
    /// (See [`McpClient`] for an example.)
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.version
    }

    /// Every tool the server offers (all pages), but those whose `x-mcp-header` marks break
    /// SEP-2243's rules (left out, as the specification asks); the marks of the others are
    /// learnt, and a Streamable HTTP call of one carries its marked arguments as
    /// `Mcp-Param-*` headers.
    ///
    /// (See [`McpClient`] for an example.)
    pub async fn list_tools(&self) -> Result<Vec<Tool>, PeerError> {
        let mut tools = self.list("tools/list", "tools").await?;
        self.param_headers.keep_valid(&mut tools);
        Ok(tools)
    }

    /// Every resource the server lists (all pages).
    ///
    /// (See [`McpClient`] for an example.)
    pub async fn list_resources(&self) -> Result<Vec<Resource>, PeerError> {
        self.list("resources/list", "resources").await
    }

    /// Every prompt the server offers (all pages).
    ///
    /// (See [`McpClient`] for an example.)
    pub async fn list_prompts(&self) -> Result<Vec<Prompt>, PeerError> {
        self.list("prompts/list", "prompts").await
    }

    /// Calls the tool `name` with `arguments` (anything serde serializes to an object).
    ///
    /// (See [`McpClient`] for an example.)
    pub async fn call_tool<A: Serialize>(
        &self,
        name: &str,
        arguments: A,
    ) -> Result<CallToolResult, PeerError> {
        self.request("tools/call", &json!({ "name": name, "arguments": arguments }))
            .await
    }

    /// Calls the tool `name`, handing each progress notification of the call to
    /// `on_progress` as it comes.
    ///
    /// (See [`McpClient`] for an example.)
    pub async fn call_tool_with_progress<A, F>(
        &self,
        name: &str,
        arguments: A,
        on_progress: F,
    ) -> Result<CallToolResult, PeerError>
    where
        A: Serialize,
        F: Fn(Progress) + Send + Sync + 'static,
    {
        let token = self.progress.next.fetch_add(1, Ordering::Relaxed);
        lock_unpoisoned(&self.progress.handlers).insert(token, Arc::new(on_progress));
        let _registration = ProgressRegistration {
            handlers: &self.progress,
            token,
        };
        let params = json!({ "name": name, "arguments": arguments, "_meta": { "progressToken": token } });
        self.request("tools/call", &params).await
    }

    /// Reads the resource `uri`.
    ///
    /// (See [`McpClient`] for an example.)
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, PeerError> {
        self.request("resources/read", &json!({ "uri": uri })).await
    }

    /// Gets the prompt `name` with `arguments`.
    ///
    /// (See [`McpClient`] for an example.)
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: &HashMap<String, String>,
    ) -> Result<GetPromptResult, PeerError> {
        self.request("prompts/get", &json!({ "name": name, "arguments": arguments }))
            .await
    }

    /// Asks the server to send log messages of `level` and above.
    ///
    /// (See [`McpClient`] for an example.)
    pub async fn set_logging_level(&self, level: LogLevel) -> Result<(), PeerError> {
        if let Some(stateless) = &self.stateless {
            // The stateless revision asks per request, in `_meta`.
            let level = serde_json::to_value(level)
                .map_err(|error| failed("logging/setLevel", PeerErrorKind::Params(error)))?;
            lock_unpoisoned(&stateless.meta).insert("io.modelcontextprotocol/logLevel".into(), level);
            return Ok(());
        }
        self.request::<Value, _>("logging/setLevel", &json!({ "level": level }))
            .await
            .map(drop)
    }

    /// Pings the server.
    ///
    /// (See [`McpClient`] for an example.)
    pub async fn ping(&self) -> Result<(), PeerError> {
        // The stateless revision has no ping: a discovery shows the server answers.
        let method = if self.stateless.is_some() {
            "server/discover"
        } else {
            "ping"
        };
        self.request::<Value, _>(method, &json!({})).await.map(drop)
    }

    /// Sends any request, its result decoded into `R`; it ends within the call timeout,
    /// and a call dropped or timed out is cancelled on the server.
    ///
    /// (See [`McpClient`] for an example.)
    /// In the stateless revision each request carries the client's `_meta`, and an
    /// input-required result is answered from the client's handlers (sampling, elicitation,
    /// roots) and the request sent again with the answers and the server's state, until the
    /// result is complete (at most 8 rounds).
    pub async fn request<R: DeserializeOwned, P: Serialize + ?Sized>(
        &self,
        method: &str,
        params: &P,
    ) -> Result<R, PeerError> {
        if let Some(stateless) = &self.stateless {
            let params =
                serde_json::to_value(params).map_err(|error| failed(method, PeerErrorKind::Params(error)))?;
            let result = self.stateless_request(stateless, method, params).await?;
            return serde_json::from_value(result)
                .map_err(|error| failed(method, PeerErrorKind::Result(error)));
        }
        let params =
            RawJson::from_value(params).map_err(|error| failed(method, PeerErrorKind::Params(error)))?;
        let result = self.peer.call_raw(method, Some(&params)).await?;
        result
            .decode()
            .map_err(|error| failed(method, PeerErrorKind::Result(error)))
    }

    async fn stateless_request(
        &self,
        stateless: &StatelessClient,
        method: &str,
        params: Value,
    ) -> Result<Value, PeerError> {
        let mut params = stateless.with_meta(params);
        for _ in 0..MAX_INPUT_ROUNDS {
            let raw =
                RawJson::from_value(&params).map_err(|error| failed(method, PeerErrorKind::Params(error)))?;
            let result: Value = self
                .peer
                .call_raw(method, Some(&raw))
                .await?
                .decode()
                .map_err(|error| failed(method, PeerErrorKind::Result(error)))?;
            if result.get("resultType").and_then(Value::as_str) != Some("input_required") {
                return Ok(result);
            }
            let mut answers = serde_json::Map::new();
            for (key, request) in result["inputRequests"].as_object().into_iter().flatten() {
                let answer = stateless
                    .answer(request)
                    .await
                    .map_err(|error| failed(method, PeerErrorKind::Remote(error)))?;
                answers.insert(key.clone(), answer);
            }
            params["inputResponses"] = Value::Object(answers);
            match result.get("requestState") {
                Some(state) => params["requestState"] = state.clone(),
                None => {
                    if let Some(params) = params.as_object_mut() {
                        params.remove("requestState");
                    }
                }
            }
        }
        let error = ErrorObject::internal_error(format_args!(
            "the server asked for input more than {MAX_INPUT_ROUNDS} times"
        ));
        Err(failed(method, PeerErrorKind::Remote(error)))
    }

    /// Sends any request; its result as the server wrote it.
    ///
    /// (See [`McpClient`] for an example.)
    pub async fn request_raw(
        &self,
        method: &str,
        params: Option<&RawJson<'_>>,
    ) -> Result<JsonBytes, PeerError> {
        if let Some(stateless) = &self.stateless {
            let params = match params {
                Some(params) => params
                    .decode::<Value>()
                    .map_err(|error| failed(method, PeerErrorKind::Params(error)))?,
                None => Value::Null,
            };
            let params = RawJson::from_value(&stateless.with_meta(params))
                .map_err(|error| failed(method, PeerErrorKind::Params(error)))?;
            return self.peer.call_raw(method, Some(&params)).await;
        }
        self.peer.call_raw(method, params).await
    }

    /// Ends the connection: the HTTP session is ended with DELETE, a stdio server's process
    /// group is killed and reaped.
    ///
    /// (See [`McpClient`] for an example.)
    pub async fn close(mut self) {
        self.peer.close().await;
        if let Some(mut child) = self.child.take() {
            child.kill_and_reap().await;
        }
    }

    pub(crate) async fn list<T: DeserializeOwned>(
        &self,
        method: &str,
        member: &str,
    ) -> Result<Vec<T>, PeerError> {
        let mut items = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let params = match &cursor {
                Some(cursor) => json!({ "cursor": cursor }),
                None => json!({}),
            };
            let mut page: Value = self.request(method, &params).await?;
            let listed = page
                .get_mut(member)
                .map(Value::take)
                .unwrap_or(Value::Array(Vec::new()));
            let listed: Vec<T> = serde_json::from_value(listed)
                .map_err(|error| failed(method, PeerErrorKind::Result(error)))?;
            items.extend(listed);
            match page.get("nextCursor").and_then(Value::as_str) {
                Some(next) if !next.is_empty() => cursor = Some(next.to_owned()),
                _ => break,
            }
        }
        Ok(items)
    }
}

/// The revisions a server listed when it refused a request's as unsupported (-32022).
pub(crate) fn refused_version(error: &PeerError) -> Option<Vec<String>> {
    let PeerErrorKind::Remote(object) = error.kind() else {
        return None;
    };
    if object.code().code() != super::stateless::UNSUPPORTED_VERSION {
        return None;
    }
    #[derive(Deserialize)]
    struct Refusal {
        supported: Vec<String>,
    }
    object
        .data()?
        .decode::<Refusal>()
        .ok()
        .map(|refusal| refusal.supported)
}

/// A failure of a call to `method`.
pub(crate) fn failed(method: &str, kind: PeerErrorKind) -> PeerError {
    PeerError::from(kind).in_call(method, None)
}
