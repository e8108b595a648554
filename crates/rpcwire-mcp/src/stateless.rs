//! The stateless revision (2026-07-28): each request carries what a session used to keep —
//! the revision, the client's capabilities, the log level, in its `_meta` — and is served
//! from that alone: `_meta` read and checked, then the method routed to the registry, its
//! result marked `complete` (with cache hints where the revision wants them) or answered
//! as input-required.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::calls::{self, decode, Call};
use super::context::McpContext;
use super::input::RequestInput;
use super::logging::LogLevel;
use super::methods::{self, Called, Kind, Lifecycle};
use super::registry::{Registry, RESOURCE_NOT_FOUND};
use super::state::SessionState;
use crate::dispatch::{Remote, RequestContext};
use crate::message::{ErrorObject, Id};
use crate::sync::lock_unpoisoned;

/// The error code of a request whose headers do not match its body, or lack one the
/// revision requires (2026-07-28 `HeaderMismatchError`).
pub const HEADER_MISMATCH: i64 = crate::codes::HEADER_MISMATCH;
/// The error code of a request that needs a capability the client did not declare
/// (2026-07-28 `MissingRequiredClientCapabilityError`; `data.requiredCapabilities` says which).
pub const MISSING_CAPABILITY: i64 = crate::codes::MISSING_CAPABILITY;
/// The error code of a request in a revision the server does not speak (2026-07-28
/// `UnsupportedProtocolVersionError`; `data` has `supported` and `requested`).
pub const UNSUPPORTED_VERSION: i64 = crate::codes::UNSUPPORTED_VERSION;

/// What every 2026-07-28 request's `_meta` says.
#[derive(Debug)]
pub(crate) struct RequestMeta {
    pub(crate) version: String,
    pub(crate) capabilities: Value,
    pub(crate) log_level: Option<LogLevel>,
    pub(crate) progress_token: Option<Box<RawValue>>,
}

/// Reads a request's `_meta`: the revision and the client's capabilities must be there
/// (-32602 otherwise); the client's name is optional.
pub(crate) fn read_meta(params: Option<&str>) -> Result<RequestMeta, ErrorObject<'static>> {
    #[derive(Deserialize)]
    struct Envelope {
        #[serde(rename = "_meta")]
        meta: Option<Fields>,
    }
    #[derive(Deserialize)]
    struct Fields {
        #[serde(rename = "io.modelcontextprotocol/protocolVersion")]
        version: Option<String>,
        #[serde(rename = "io.modelcontextprotocol/clientCapabilities")]
        capabilities: Option<Value>,
        #[serde(rename = "io.modelcontextprotocol/logLevel")]
        log_level: Option<LogLevel>,
        #[serde(rename = "progressToken")]
        progress_token: Option<Box<RawValue>>,
    }
    let missing =
        |what: &str| ErrorObject::invalid_params(format_args!("Invalid params: _meta must carry {what}"));
    let envelope: Envelope =
        serde_json::from_str(params.unwrap_or("{}")).map_err(ErrorObject::invalid_params)?;
    let fields = envelope
        .meta
        .ok_or_else(|| missing("the protocol version and the client capabilities"))?;
    let version = fields
        .version
        .ok_or_else(|| missing("io.modelcontextprotocol/protocolVersion"))?;
    let capabilities = match fields.capabilities {
        Some(capabilities @ Value::Object(_)) => capabilities,
        _ => return Err(missing("io.modelcontextprotocol/clientCapabilities (an object)")),
    };
    Ok(RequestMeta {
        version,
        capabilities,
        log_level: fields.log_level,
        progress_token: fields.progress_token,
    })
}

/// Whether the server speaks the revision `requested` statelessly: -32022 with the ones it
/// does otherwise.
pub(crate) fn check_version(registry: &Registry, requested: &str) -> Result<(), ErrorObject<'static>> {
    let supported: Vec<&str> = registry
        .versions
        .iter()
        .filter(|version| version.is_stateless())
        .map(|version| version.as_str())
        .collect();
    if supported.contains(&requested) {
        return Ok(());
    }
    let error = ErrorObject::new(
        UNSUPPORTED_VERSION,
        format!("Unsupported protocol version: {requested}"),
    );
    Err(error
        .with_data(&serde_json::json!({ "supported": supported, "requested": requested }))
        .unwrap_or_else(|_| ErrorObject::new(UNSUPPORTED_VERSION, "Unsupported protocol version")))
}

/// A stateless request, ready to serve.
pub(crate) struct Request {
    pub(crate) id: Id<'static>,
    pub(crate) method: String,
    pub(crate) params: Option<Box<RawValue>>,
    pub(crate) meta: RequestMeta,
}

/// The result of a list method (or `server/discover`), with the cache hints; `None` for
/// another method.
pub(crate) fn list(
    registry: &Registry,
    method: &str,
    params: Option<&str>,
) -> Option<Result<String, ErrorObject<'static>>> {
    let listing = match methods::kind(method)? {
        Kind::Lifecycle(Lifecycle::Discover) => return Some(Ok(registry.discover_result().get().to_owned())),
        Kind::List(listed) => listed.listing(registry),
        _ => return None,
    };
    #[derive(Deserialize, Default)]
    struct Cursor {
        cursor: Option<String>,
    }
    let page = decode::<Cursor>(params).and_then(|cursor| {
        listing
            .page(
                cursor.cursor.as_deref(),
                registry.limits.page_size,
                &registry.cache.members,
            )
            .ok_or_else(|| ErrorObject::invalid_params("invalid cursor"))
    });
    Some(page)
}

/// Whether a request's params carry the stateless revision's `_meta` (how a request of
/// 2026-07-28 shows itself where there are no headers: over stdio).
pub(crate) fn carries_meta(params: Option<&str>) -> bool {
    params.is_some_and(|params| {
        memchr::memmem::find(params.as_bytes(), b"io.modelcontextprotocol/protocolVersion").is_some()
    })
}

/// Serves a stateless request that came through a session's router (over stdio): its
/// `_meta` checked, then served as [`serve`] does, the result as raw JSON.
pub(crate) async fn serve_routed(
    registry: Arc<Registry>,
    cx: RequestContext,
    params: Option<Box<RawValue>>,
) -> Result<Box<RawValue>, ErrorObject<'static>> {
    let meta = read_meta(params.as_deref().map(RawValue::get))?;
    check_version(&registry, &meta.version)?;
    let request = Request {
        id: cx.id().cloned().unwrap_or_else(Id::null),
        method: cx.method().to_owned(),
        params,
        meta,
    };
    let text = serve(registry, request, cx.remote().cloned(), cx.cancellation().clone()).await?;
    RawValue::from_string(text).map_err(ErrorObject::internal_error)
}

/// Serves `request` from `registry`: the result's JSON text, or the error. What the handler
/// sends before (progress, log messages) goes to `remote`; `token` cancels it.
pub(crate) async fn serve(
    registry: Arc<Registry>,
    request: Request,
    remote: Option<Arc<dyn Remote>>,
    token: CancellationToken,
) -> Result<String, ErrorObject<'static>> {
    let Request {
        id,
        method,
        params,
        meta,
    } = request;
    let params = params.as_deref().map(RawValue::get);
    if let Some(listed) = list(&registry, &method, params) {
        return listed;
    }
    let state = Arc::new(SessionState::stateless(
        registry.changes.clone(),
        meta.capabilities,
        meta.log_level,
    ));
    let request = RequestContext::serving(id, &method, token, remote);
    let cx = McpContext::new(request, state, meta.progress_token);
    let work = async {
        let Some(Kind::Call(called)) = methods::kind(&method) else {
            return Err(ErrorObject::method_not_found(&method));
        };
        let call = Call::decode(called, params)?.call;
        if called == Called::Complete {
            // A completion asks the client nothing: its result, marked complete.
            let outcome = calls::run(registry.clone(), call, cx).await?;
            let text = serde_json::to_string(&outcome).map_err(ErrorObject::internal_error)?;
            return Ok(complete(&text, ""));
        }
        let target = call.target().to_owned();
        let (cx, input) = with_input(&registry, cx, &method, &target, params)?;
        let outcome = calls::run(registry.clone(), call, cx).await;
        let (outcome, members) = match called {
            Called::Read => (
                outcome.map_err(|error| resource_not_found(error, &target)),
                &registry.cache.members[..],
            ),
            _ => (outcome, ""),
        };
        finish(&registry, outcome, &input, &method, &target, members)
    };
    match registry.limits.handler_timeout {
        Some(limit) => tokio::time::timeout(limit, work).await.unwrap_or_else(|_| {
            Err(ErrorObject::internal_error(format_args!(
                "the handler ran past its timeout ({limit:?})"
            )))
        }),
        None => work.await,
    }
}

/// The revision's error for a resource that does not exist (SEP-2164: -32602 with the URI),
/// in place of the earlier revisions' -32002; any other error as it is.
fn resource_not_found(error: ErrorObject<'static>, uri: &str) -> ErrorObject<'static> {
    if error.code().code() != RESOURCE_NOT_FOUND {
        return error;
    }
    ErrorObject::invalid_params(format_args!("Resource not found: {uri}"))
        .with_data(&serde_json::json!({ "uri": uri }))
        .unwrap_or_else(|_| ErrorObject::invalid_params("Resource not found"))
}

/// The context with what a retry brought in `params` (beside the call's own members): the
/// answers (`inputResponses`, an object, else none) and the state (`requestState`, verified:
/// -32602 when it was altered or sealed for another target).
fn with_input(
    registry: &Registry,
    cx: McpContext,
    method: &str,
    target: &str,
    params: Option<&str>,
) -> Result<(McpContext, Arc<RequestInput>), ErrorObject<'static>> {
    #[derive(Deserialize)]
    struct Retry {
        #[serde(rename = "inputResponses")]
        responses: Option<Value>,
        #[serde(rename = "requestState")]
        state: Option<String>,
    }
    let retry: Retry = decode(params)?;
    let state = match retry.state {
        Some(sealed) => Some(
            registry
                .sealer
                .open(&scope(method, target), &sealed)
                .ok_or_else(|| ErrorObject::invalid_params("requestState failed integrity verification"))?,
        ),
        None => None,
    };
    let responses = match retry.responses {
        Some(Value::Object(responses)) => responses,
        _ => Map::new(),
    };
    let input = Arc::new(RequestInput {
        responses,
        state,
        required: Default::default(),
    });
    Ok((cx.with_input(input.clone()), input))
}

/// What a state is sealed for: the method and its target.
fn scope(method: &str, target: &str) -> String {
    format!("{method}\0{target}")
}

/// A handler's outcome as the revision answers it: its result marked complete (with
/// `members` too), or the input it asked for, or its error.
fn finish<T: serde::Serialize>(
    registry: &Registry,
    outcome: Result<T, ErrorObject<'static>>,
    input: &RequestInput,
    method: &str,
    target: &str,
    members: &str,
) -> Result<String, ErrorObject<'static>> {
    if let Some(needed) = lock_unpoisoned(&input.required).take() {
        return Ok(needed.to_result(&registry.sealer, &scope(method, target)));
    }
    let result = outcome?;
    let text = serde_json::to_string(&result).map_err(ErrorObject::internal_error)?;
    Ok(complete(&text, members))
}

/// `result` (a JSON object's text) with `members` (ending in a comma) first.
fn complete(result: &str, members: &str) -> String {
    let members = if members.is_empty() {
        r#""resultType":"complete","#
    } else {
        members
    };
    let body = result.strip_prefix('{').unwrap_or(result);
    let mut text = String::with_capacity(result.len() + members.len());
    text.push('{');
    if body.trim_start().starts_with('}') {
        text.push_str(members.trim_end_matches(','));
    } else {
        text.push_str(members);
    }
    text.push_str(body);
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meta_needs_the_revision_and_an_object_of_capabilities() {
        assert_eq!(read_meta(None).unwrap_err().code().code(), -32602);
        assert_eq!(read_meta(Some("{}")).unwrap_err().code().code(), -32602);
        assert_eq!(read_meta(Some("[1]")).unwrap_err().code().code(), -32602);
        let no_caps = r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}"#;
        assert_eq!(read_meta(Some(no_caps)).unwrap_err().code().code(), -32602);
        let no_version = r#"{"_meta":{"io.modelcontextprotocol/clientCapabilities":{}}}"#;
        assert_eq!(read_meta(Some(no_version)).unwrap_err().code().code(), -32602);
        let caps_not_object = r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"x","io.modelcontextprotocol/clientCapabilities":[]}}"#;
        assert_eq!(
            read_meta(Some(caps_not_object)).unwrap_err().code().code(),
            -32602
        );
        let full = r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{}},"io.modelcontextprotocol/logLevel":"info","progressToken":7}}"#;
        let meta = read_meta(Some(full)).unwrap();
        assert_eq!(meta.version, "2026-07-28");
        assert_eq!(meta.capabilities["sampling"], serde_json::json!({}));
        assert_eq!(meta.log_level, Some(LogLevel::Info));
        assert_eq!(meta.progress_token.unwrap().get(), "7");
    }

    #[test]
    fn results_get_their_type_first() {
        assert_eq!(complete("{}", ""), r#"{"resultType":"complete"}"#);
        assert_eq!(complete(r#"{"a":1}"#, ""), r#"{"resultType":"complete","a":1}"#);
        assert_eq!(complete(r#"{"a":1}"#, r#""x":2,"#), r#"{"x":2,"a":1}"#);
    }
}
