//! `McpContext`: what a tool, resource, prompt or completion handler may do besides return
//! its result — report progress, log, ask the client (sampling, elicitation, roots), notice
//! that it was cancelled. Whatever it sends goes where the request came from: the stdio
//! peer, or the request's own SSE stream over Streamable HTTP.

use std::sync::Arc;

use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::changes::{ChangeNotifier, ListChanged};
use super::input::{InputRequired, RequestInput};
use super::logging::LogLevel;
use super::state::SessionState;
use super::version::ProtocolVersion;
use crate::codes::MISSING_CAPABILITY;
use crate::dispatch::{Remote, RemoteError, RequestContext};
use crate::message::{ErrorObject, Id, JsonBytes, RawJson};

/// The request a handler serves, and the way back to the client that sent it.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use rpcwire::mcp::{McpContext, LogLevel};
/// // Outside a server (a test), there is no client to report to:
/// let cx = McpContext::detached("tools/call");
/// assert!(cx.progress(1.0, Some(2.0), None).await.is_ok(), "no progressToken: nothing to send");
/// assert!(cx.log(LogLevel::Info, None, "x").await.unwrap_err().is_closed());
/// # });
/// ```
#[derive(Clone)]
pub struct McpContext {
    request: RequestContext,
    session: Arc<SessionState>,
    progress_token: Option<Arc<RawValue>>,
    /// A stateless request's answers and state (2026-07-28); `None` on a session.
    input: Option<Arc<RequestInput>>,
    /// The HTTP request it came in (Streamable HTTP).
    #[cfg(feature = "http")]
    http: Option<Arc<crate::request_info::RequestInfo>>,
}

impl std::fmt::Debug for McpContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpContext")
            .field("request", &self.request)
            .field("progress_token", &self.progress_token)
            .finish()
    }
}

impl McpContext {
    pub(crate) fn new(
        request: RequestContext,
        session: Arc<SessionState>,
        progress_token: Option<Box<RawValue>>,
    ) -> McpContext {
        McpContext {
            request,
            session,
            progress_token: progress_token.map(Arc::from),
            input: None,
            #[cfg(feature = "http")]
            http: crate::request_info::current(),
        }
    }

    /// The headers of the HTTP request this one came in (Streamable HTTP; `None` over
    /// stdio).
    ///
    /// ```
    /// assert!(rpcwire::mcp::McpContext::detached("tools/call").http_headers().is_none());
    /// ```
    #[cfg(feature = "http")]
    #[cfg_attr(docsrs, doc(cfg(feature = "http")))]
    pub fn http_headers(&self) -> Option<&http::HeaderMap> {
        self.http.as_ref().map(|info| &info.headers)
    }

    /// The claims of the verified access token the request came with (a server protected
    /// with [`ProtectedResource`](crate::auth::ProtectedResource); `None` otherwise).
    ///
    /// ```
    /// assert!(rpcwire::mcp::McpContext::detached("tools/call").claims().is_none());
    /// ```
    #[cfg(feature = "auth")]
    #[cfg_attr(docsrs, doc(cfg(feature = "auth")))]
    pub fn claims(&self) -> Option<&crate::auth::Claims> {
        self.http.as_ref().and_then(|info| info.claims.as_ref())
    }

    /// The context of a stateless request, with what its retry brought.
    pub(crate) fn with_input(mut self, input: Arc<RequestInput>) -> McpContext {
        self.input = Some(input);
        self
    }

    /// A context with no client behind it, for calling handlers in tests: notifications and
    /// requests fail as closed.
    ///
    /// ```
    /// assert_eq!(rpcwire::mcp::McpContext::detached("tools/call").method(), "tools/call");
    /// ```
    pub fn detached(method: &str) -> McpContext {
        McpContext::new(
            RequestContext::new(None, method),
            Arc::new(SessionState::new(ChangeNotifier::new())),
            None,
        )
    }

    /// The method of the request.
    ///
    /// ```
    /// assert_eq!(rpcwire::mcp::McpContext::detached("prompts/get").method(), "prompts/get");
    /// ```
    pub fn method(&self) -> &str {
        self.request.method()
    }

    /// The request's id.
    ///
    /// ```
    /// assert!(rpcwire::mcp::McpContext::detached("m").id().is_none());
    /// ```
    pub fn id(&self) -> Option<&Id<'static>> {
        self.request.id()
    }

    /// The request's `_meta.progressToken`, as the client wrote it.
    ///
    /// ```
    /// assert!(rpcwire::mcp::McpContext::detached("m").progress_token().is_none());
    /// ```
    pub fn progress_token(&self) -> Option<&str> {
        self.progress_token.as_deref().map(RawValue::get)
    }

    /// The revision agreed on for this session (`None` before `initialize`).
    ///
    /// ```
    /// assert!(rpcwire::mcp::McpContext::detached("m").protocol_version().is_none());
    /// ```
    pub fn protocol_version(&self) -> Option<ProtocolVersion> {
        self.session.version()
    }

    /// The capabilities the client declared in `initialize` (`null` before it).
    ///
    /// ```
    /// assert!(rpcwire::mcp::McpContext::detached("m").client_capabilities().is_null());
    /// ```
    pub fn client_capabilities(&self) -> Value {
        self.session.client_capabilities()
    }

    /// The request's cancellation token: it fires when the client cancels the request
    /// (`notifications/cancelled`), when the handler runs past its timeout, or when the
    /// session ends. An async handler is also dropped at its next `.await` then.
    ///
    /// ```
    /// let cx = rpcwire::mcp::McpContext::detached("m");
    /// cx.cancellation().cancel();
    /// assert!(cx.is_cancelled());
    /// ```
    pub fn cancellation(&self) -> &CancellationToken {
        self.request.cancellation()
    }

    /// Whether the request is cancelled.
    ///
    /// ```
    /// assert!(!rpcwire::mcp::McpContext::detached("m").is_cancelled());
    /// ```
    pub fn is_cancelled(&self) -> bool {
        self.request.is_cancelled()
    }

    /// Sends `notifications/progress` for the request's progress token; nothing when the
    /// request has none.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// rpcwire::mcp::McpContext::detached("m").progress(50.0, Some(100.0), Some("half")).await.unwrap();
    /// # });
    /// ```
    pub async fn progress(
        &self,
        progress: f64,
        total: Option<f64>,
        message: Option<&str>,
    ) -> Result<(), RemoteError> {
        let Some(token) = &self.progress_token else {
            return Ok(());
        };
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Progress<'a> {
            progress_token: &'a RawValue,
            progress: f64,
            #[serde(skip_serializing_if = "Option::is_none")]
            total: Option<f64>,
            #[serde(skip_serializing_if = "Option::is_none")]
            message: Option<&'a str>,
        }
        let params = Progress {
            progress_token: token,
            progress,
            total,
            message,
        };
        self.remote()?.notify("notifications/progress", params).await
    }

    /// Sends a log message (`notifications/message`) when `level` passes the level the
    /// client set with `logging/setLevel` (every level passes until it sets one), or, in a
    /// stateless request (2026-07-28), the request's `_meta` `logLevel` (none passes without
    /// one).
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let cx = rpcwire::mcp::McpContext::detached("m");
    /// assert!(cx.log(rpcwire::mcp::LogLevel::Error, Some("db"), "no route").await.is_err(), "no client here");
    /// # });
    /// ```
    pub async fn log<T: Serialize>(
        &self,
        level: LogLevel,
        logger: Option<&str>,
        data: T,
    ) -> Result<(), RemoteError> {
        if !self.session.logs(level) {
            return Ok(());
        }
        #[derive(Serialize)]
        struct Message<'a, T> {
            level: LogLevel,
            #[serde(skip_serializing_if = "Option::is_none")]
            logger: Option<&'a str>,
            data: T,
        }
        let params = Message { level, logger, data };
        self.remote()?.notify("notifications/message", params).await
    }

    /// Tells the client that the resource `uri` changed (`notifications/resources/updated`),
    /// when it subscribed to it; `false` when it did not (nothing sent).
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let cx = rpcwire::mcp::McpContext::detached("tools/call");
    /// assert!(!cx.resource_updated("mem://hello").await.unwrap(), "nobody subscribed");
    /// # });
    /// ```
    pub async fn resource_updated(&self, uri: &str) -> Result<bool, RemoteError> {
        if !self.session.is_subscribed(uri) {
            return Ok(false);
        }
        let params = serde_json::json!({ "uri": uri });
        self.remote()?
            .notify("notifications/resources/updated", params)
            .await?;
        Ok(true)
    }

    /// Sends any request to the client and gives its result as the client wrote it.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let cx = rpcwire::mcp::McpContext::detached("m");
    /// assert!(cx.request("roots/list", None).await.is_err());
    /// # });
    /// ```
    pub async fn request(
        &self,
        method: &str,
        params: Option<&RawJson<'_>>,
    ) -> Result<JsonBytes, RemoteError> {
        self.requester()?.call_raw(method, params).await
    }

    /// Asks the client to sample its model (`sampling/createMessage`) with `params` (the
    /// specification's `CreateMessageRequest` params) and gives its result.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let params = serde_json::json!({"messages": [], "maxTokens": 10});
    /// assert!(rpcwire::mcp::McpContext::detached("m").create_message(&params).await.is_err());
    /// # });
    /// ```
    pub async fn create_message<P: Serialize>(&self, params: &P) -> Result<Value, RemoteError> {
        self.requester()?.call("sampling/createMessage", params).await
    }

    /// Asks the user for input (`elicitation/create`): `message` and the JSON Schema of
    /// what to fill in; gives the client's result (`action`, `content`).
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let schema = serde_json::json!({"type": "object", "properties": {}});
    /// assert!(rpcwire::mcp::McpContext::detached("m").elicit("Name?", &schema).await.is_err());
    /// # });
    /// ```
    pub async fn elicit<S: Serialize>(
        &self,
        message: &str,
        requested_schema: &S,
    ) -> Result<Value, RemoteError> {
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Elicit<'a, S> {
            message: &'a str,
            requested_schema: &'a S,
        }
        let params = Elicit {
            message,
            requested_schema,
        };
        self.requester()?.call("elicitation/create", params).await
    }

    /// Asks the client for its roots (`roots/list`).
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// assert!(rpcwire::mcp::McpContext::detached("m").list_roots().await.is_err());
    /// # });
    /// ```
    pub async fn list_roots(&self) -> Result<Value, RemoteError> {
        self.requester()?.call("roots/list", ()).await
    }

    /// Closes the SSE connection this request's answer travels on, over Streamable HTTP
    /// (SEP-1699): the client reconnects after the stream's `retry:` delay with
    /// `Last-Event-ID` and gets everything sent since, the result included. `false` where
    /// the transport cannot do that (stdio).
    ///
    /// ```
    /// assert!(!rpcwire::mcp::McpContext::detached("tools/call").close_stream());
    /// ```
    pub fn close_stream(&self) -> bool {
        self.request.remote().is_some_and(|remote| remote.detach())
    }

    /// Tells the clients listening for changes (`subscriptions/listen`, 2026-07-28) that
    /// `list` changed; how many listen. [`McpServer::notifier`](super::McpServer::notifier)
    /// does the same from outside a handler.
    ///
    /// ```
    /// let cx = rpcwire::mcp::McpContext::detached("tools/call");
    /// assert_eq!(cx.list_changed(rpcwire::mcp::ListChanged::Tools), 0);
    /// ```
    pub fn list_changed(&self, list: ListChanged) -> usize {
        self.session.changes.list_changed(list)
    }

    /// Whether the client declared `capability` (`"sampling"`, `"elicitation"`, `"roots"`,
    /// …): in `initialize`, or in a stateless request's `_meta`. When it did not, the error
    /// to return: -32021 with `data.requiredCapabilities` naming it.
    ///
    /// ```
    /// let refused = rpcwire::mcp::McpContext::detached("tools/call").require_capability("sampling").unwrap_err();
    /// assert_eq!(refused.code().code(), rpcwire::mcp::MISSING_CAPABILITY);
    /// ```
    pub fn require_capability(&self, capability: &str) -> Result<(), ErrorObject<'static>> {
        if self.session.has_capability(capability) {
            return Ok(());
        }
        let mut required = serde_json::Map::new();
        required.insert(capability.to_owned(), Value::Object(serde_json::Map::new()));
        let message = format!("Missing required client capability: {capability}");
        Err(ErrorObject::new(MISSING_CAPABILITY, message.clone())
            .with_data(&serde_json::json!({ "requiredCapabilities": required }))
            .unwrap_or_else(|_| ErrorObject::new(MISSING_CAPABILITY, message)))
    }

    /// Ends the request with an input-required result (2026-07-28): the client asks what
    /// `needed` says and sends the request again with the answers, which
    /// [`input_response`](McpContext::input_response) gives then. Return the error this
    /// gives from the handler: the server answers with `needed` instead. Where the revision
    /// has no input-required results (a session of an earlier one), the error is what the
    /// client gets; ask with [`elicit`](McpContext::elicit), [`create_message`](McpContext::create_message)
    /// or [`list_roots`](McpContext::list_roots) there.
    ///
    /// ```
    /// use rpcwire::mcp::{InputRequired, McpContext};
    /// let cx = McpContext::detached("tools/call");
    /// let refused = cx.input_required(InputRequired::new().list_roots("roots"));
    /// assert_eq!(refused.code().code(), -32603, "no stateless request here");
    /// ```
    pub fn input_required(&self, needed: InputRequired) -> ErrorObject<'static> {
        if let Some(input) = &self.input {
            *crate::sync::lock_unpoisoned(&input.required) = Some(needed);
        }
        ErrorObject::internal_error("this request needs input from the client (an input-required result), which only protocol revision 2026-07-28 carries")
    }

    /// The client's answer under `key` to an earlier input-required result (an object such
    /// as `{"action":"accept","content":{…}}` or a sampling or roots result); `None` when it
    /// sent none, or sent something other than an object.
    ///
    /// ```
    /// assert!(rpcwire::mcp::McpContext::detached("tools/call").input_response("user_name").is_none());
    /// ```
    pub fn input_response(&self, key: &str) -> Option<&Value> {
        self.input
            .as_ref()?
            .responses
            .get(key)
            .filter(|answer| answer.is_object())
    }

    /// The state of an earlier input-required result, as the handler gave it
    /// ([`InputRequired::with_state`]), verified unaltered; `None` when the request brought
    /// none.
    ///
    /// ```
    /// assert!(rpcwire::mcp::McpContext::detached("tools/call").request_state().is_none());
    /// ```
    pub fn request_state(&self) -> Option<&str> {
        self.input.as_ref()?.state.as_deref()
    }

    /// The way to send requests to the client: none in the stateless revision, which asks
    /// through input-required results instead.
    fn requester(&self) -> Result<&dyn Remote, RemoteError> {
        if self.session.version().is_some_and(ProtocolVersion::is_stateless) {
            let reason = "no request to the client in protocol revision 2026-07-28: return an input-required result (McpContext::input_required)";
            return Err(RemoteError::new(reason, ErrorObject::new(-32603, reason), false));
        }
        self.remote()
    }

    fn remote(&self) -> Result<&dyn Remote, RemoteError> {
        self.request
            .remote()
            .map(|remote| &**remote)
            .ok_or_else(|| RemoteError::closed("no client behind this request"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_detached_context_knows_its_request_and_reaches_no_client() {
        let cx = McpContext::detached("tools/call");
        assert_eq!(cx.method(), "tools/call");
        assert!(cx.id().is_none() && cx.progress_token().is_none());
        assert!(cx.protocol_version().is_none());
        assert!(cx.client_capabilities().is_null());
        assert!(!cx.is_cancelled());
        assert!(format!("{cx:?}").contains("tools/call"));
        cx.progress(1.0, None, None).await.unwrap();
        assert!(cx
            .log(LogLevel::Emergency, None, 1)
            .await
            .unwrap_err()
            .is_closed());
        assert!(cx.request("m", None).await.unwrap_err().is_closed());
        assert!(cx.create_message(&()).await.unwrap_err().is_closed());
        assert!(cx.elicit("?", &()).await.unwrap_err().is_closed());
        assert!(cx.list_roots().await.unwrap_err().is_closed());
        assert!(!cx.resource_updated("a://b").await.unwrap());
        assert!(!cx.close_stream());
        let token = RawValue::from_string("7".to_owned()).unwrap();
        let with_token = McpContext::new(
            RequestContext::new(None, "m"),
            Arc::new(SessionState::new(ChangeNotifier::new())),
            Some(token),
        );
        assert_eq!(with_token.progress_token(), Some("7"));
        assert!(with_token
            .progress(1.0, Some(2.0), Some("x"))
            .await
            .unwrap_err()
            .is_closed());
        cx.cancellation().cancel();
        assert!(cx.is_cancelled());
    }
}
