//! The stateless revision (2026-07-28) over Streamable HTTP: a POST without a session that
//! names that revision is checked (headers against the body), served by
//! [`stateless::serve`](crate::stateless), and answered with JSON — or with an SSE
//! stream once the handler sends something first (progress, log messages) — with the HTTP
//! status the revision gives each error. `subscriptions/listen` is an SSE stream of the
//! changes the client asked for, until it goes away.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use bytes::{BufMut, Bytes, BytesMut};
use http::header::HeaderMap;
use http::{Response, StatusCode};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use tokio::sync::{broadcast, mpsc, Notify, Semaphore};
use tokio_util::sync::CancellationToken;

use super::answer::{accepted, event_stream, json_status};
use super::body::McpBody;
use super::headers::VERSION_HEADER;
use crate::changes::{Change, ListChanged};
use crate::dispatch::{Remote, RemoteError, RemoteFuture};
use crate::encode;
use crate::message::{ErrorObject, Id, JsonBytes, Message, RawJson};
use crate::parse::{Parsed, Parser};
use crate::registry::Registry;
use crate::stateless::{self, HEADER_MISMATCH};
use crate::version::ProtocolVersion;

/// How many stateless requests may run at once, over all clients, by default.
pub(crate) const MAX_IN_FLIGHT: usize = 1024;
/// How many `subscriptions/listen` streams may be open at once, by default.
pub(crate) const MAX_LISTENERS: usize = 256;
/// Events a stream holds for a client that does not read.
const STREAM_BUFFER: usize = 32;

/// The stateless side of a [`StreamableHttpService`](super::StreamableHttpService).
pub(crate) struct Stateless {
    registry: Arc<Registry>,
    in_flight: Arc<Semaphore>,
    listeners: Arc<Semaphore>,
}

impl Stateless {
    /// `None` when `registry` does not enable the stateless revision; at most `in_flight`
    /// requests under way and `listeners` listen streams open.
    pub(crate) fn new(registry: &Arc<Registry>, in_flight: usize, listeners: usize) -> Option<Stateless> {
        registry
            .versions
            .iter()
            .any(|version| version.is_stateless())
            .then(|| Stateless {
                registry: registry.clone(),
                in_flight: Arc::new(Semaphore::new(in_flight)),
                listeners: Arc::new(Semaphore::new(listeners)),
            })
    }

    /// Whether a request without a session belongs to the stateless revision: its
    /// `MCP-Protocol-Version` names none of the enabled revisions with sessions, or, without
    /// that header, its body carries the revision in `_meta`.
    pub(crate) fn claims(&self, headers: &HeaderMap, body: &[u8]) -> bool {
        claims_stateless(headers, body, |version| self.registry.versions.contains(&version))
    }

    /// Answers a POST of the stateless revision.
    pub(crate) async fn post(&self, headers: &HeaderMap, body: Bytes) -> Response<McpBody> {
        let parsed = Parser::new(self.registry.limits.parser).parse(&body);
        let request = match parsed {
            Err(error) => {
                let id = error.id().cloned().unwrap_or_else(Id::null);
                return error_answer(&id, &ErrorObject::new(error.code(), error.to_string()));
            }
            Ok(Parsed::Batch(_)) => {
                let refused =
                    ErrorObject::new(-32600, "Invalid Request: no batches in this protocol revision");
                return error_answer(&Id::null(), &refused);
            }
            Ok(Parsed::Single(Message::Request(request))) => request,
            Ok(Parsed::Single(_)) => return accepted(),
        };
        let id = request.id().clone().into_owned();
        let method = request.method().to_owned();
        let params = request.raw_params().map(|params| params.get());
        let checked = self.check(headers, &method, params);
        let meta = match checked {
            Ok(meta) => meta,
            Err(error) => return error_answer(&id, &error),
        };
        if method == "subscriptions/listen" {
            return self.listen(id, params);
        }
        let Ok(permit) = self.in_flight.clone().try_acquire_owned() else {
            let busy = ErrorObject::new(super::TOO_MANY_REQUESTS, "too many requests under way");
            return error_answer(&id, &busy);
        };
        let request = stateless::Request {
            id: id.clone(),
            method,
            params: params.and_then(|params| RawValue::from_string(params.to_owned()).ok()),
            meta,
        };
        let (sender, receiver) = mpsc::channel(STREAM_BUFFER);
        let remote = Arc::new(EventRemote {
            sender,
            started: AtomicBool::new(false),
            first: Notify::new(),
        });
        let token = CancellationToken::new();
        let mut work = Box::pin(stateless::serve(
            self.registry.clone(),
            request,
            Some(remote.clone()),
            token.clone(),
        ));
        let done = tokio::select! {
            biased;
            outcome = &mut work => Some(outcome),
            () = remote.first.notified() => None,
        };
        match done {
            Some(outcome) if !remote.started.load(Ordering::Acquire) => match outcome {
                Ok(result) => json_status(StatusCode::OK, success(&id, &result)),
                Err(error) => error_answer(&id, &error),
            },
            done => {
                // The answer is a stream: the rest (the result at least) follows on it, and
                // a client that goes away cancels the handler.
                tokio::spawn(async move {
                    let _permit = permit;
                    let outcome = match done {
                        Some(outcome) => outcome,
                        None => tokio::select! {
                            outcome = work => outcome,
                            () = remote.sender.closed() => {
                                token.cancel();
                                return;
                            }
                        },
                    };
                    let frame = match outcome {
                        Ok(result) => success(&id, &result),
                        Err(error) => error_frame(&id, &error),
                    };
                    let _ = remote.sender.send(event(&frame)).await;
                });
                event_stream(receiver)
            }
        }
    }

    /// The checks before a request is served, in the revision's order: those of the
    /// transport ([`check_headers`], with a revision served), `Mcp-Param-*` matching the
    /// body (-32020), a method the revision has (-32601).
    fn check(
        &self,
        headers: &HeaderMap,
        method: &str,
        params: Option<&str>,
    ) -> Result<stateless::RequestMeta, ErrorObject<'static>> {
        let (meta, target) = check_headers(headers, method, params, |version| {
            stateless::check_version(&self.registry, version)
        })?;
        if let Some(target) = target.filter(|_| method == "tools/call") {
            self.check_params(headers, &target, params)?;
        }
        if !serves(method) {
            return Err(ErrorObject::method_not_found(method));
        }
        Ok(meta)
    }

    /// Each argument the tool's schema mirrors in a header (`x-mcp-header`) must be there
    /// and say what the body says ([`check_param_headers`]).
    fn check_params(
        &self,
        headers: &HeaderMap,
        tool: &str,
        params: Option<&str>,
    ) -> Result<(), ErrorObject<'static>> {
        match self.registry.tool(tool) {
            Some(entry) => check_param_headers(headers, &entry.headers, params),
            None => Ok(()),
        }
    }

    /// `subscriptions/listen`: an SSE stream that acknowledges the filter the server accepts
    /// of the one asked for, then carries those changes, each tagged with the listen
    /// request's id, until the client goes away.
    fn listen(&self, id: Id<'static>, params: Option<&str>) -> Response<McpBody> {
        let asked = match ListenFilter::of(params) {
            Ok(asked) => asked,
            Err(error) => return error_answer(&id, &error),
        };
        let Ok(permit) = self.listeners.clone().try_acquire_owned() else {
            return error_answer(
                &id,
                &ErrorObject::new(super::TOO_MANY_REQUESTS, "too many listening streams"),
            );
        };
        let registry = &self.registry;
        let has_resources = !registry.resource_list.is_empty() || !registry.template_list.is_empty();
        let mut lists = Vec::new();
        if asked.tools_list_changed && !registry.tool_list.is_empty() {
            lists.push(ListChanged::Tools);
        }
        if asked.prompts_list_changed && !registry.prompt_list.is_empty() {
            lists.push(ListChanged::Prompts);
        }
        if asked.resources_list_changed && has_resources {
            lists.push(ListChanged::Resources);
        }
        let uris = if has_resources {
            asked.resource_subscriptions
        } else {
            Vec::new()
        };
        let mut accepted = Map::new();
        for list in &lists {
            accepted.insert(filter_key(*list).into(), Value::Bool(true));
        }
        if !uris.is_empty() {
            accepted.insert("resourceSubscriptions".into(), Value::from(uris.clone()));
        }
        let tag = serde_json::json!({ "io.modelcontextprotocol/subscriptionId": id });
        let ack = serde_json::json!({ "notifications": accepted, "_meta": tag });
        let mut changes = registry.changes.subscribe();
        let (sender, receiver) = mpsc::channel(STREAM_BUFFER);
        tokio::spawn(async move {
            let _permit = permit;
            if sender
                .send(notification("notifications/subscriptions/acknowledged", &ack))
                .await
                .is_err()
            {
                return;
            }
            loop {
                let change = tokio::select! {
                    change = changes.recv() => change,
                    () = sender.closed() => return,
                };
                let frame = match change {
                    Ok(Change::List(list)) if lists.contains(&list) => {
                        notification(list.method(), &serde_json::json!({ "_meta": tag }))
                    }
                    Ok(Change::ResourceUpdated(uri)) if uris.iter().any(|wanted| **wanted == *uri) => {
                        notification(
                            "notifications/resources/updated",
                            &serde_json::json!({ "uri": &*uri, "_meta": tag }),
                        )
                    }
                    Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(broadcast::error::RecvError::Closed) => return,
                };
                if sender.send(frame).await.is_err() {
                    return;
                }
            }
        });
        event_stream(receiver)
    }
}

/// What a `subscriptions/listen` asks to hear of.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ListenFilter {
    #[serde(default)]
    pub(crate) tools_list_changed: bool,
    #[serde(default)]
    pub(crate) prompts_list_changed: bool,
    #[serde(default)]
    pub(crate) resources_list_changed: bool,
    #[serde(default)]
    pub(crate) resource_subscriptions: Vec<String>,
}

impl ListenFilter {
    /// The filter in a listen request's params (-32602 when they are not one).
    pub(crate) fn of(params: Option<&str>) -> Result<ListenFilter, ErrorObject<'static>> {
        #[derive(Deserialize)]
        struct Listen {
            #[serde(default)]
            notifications: ListenFilter,
        }
        serde_json::from_str::<Listen>(params.unwrap_or("{}"))
            .map(|listen| listen.notifications)
            .map_err(ErrorObject::invalid_params)
    }
}

/// The way back to the client of one stateless request: notifications become events of
/// the POST's SSE stream; requests are refused (the revision has input-required results
/// instead).
struct EventRemote {
    sender: mpsc::Sender<Bytes>,
    started: AtomicBool,
    first: Notify,
}

impl Remote for EventRemote {
    fn call_raw<'a>(&'a self, method: &'a str, _: Option<&'a RawJson<'a>>) -> RemoteFuture<'a, JsonBytes> {
        Box::pin(async move {
            let reason = format!("no request ({method}) to the client in protocol revision 2026-07-28: return an input-required result");
            Err(RemoteError::new(
                reason.clone(),
                ErrorObject::new(-32603, reason),
                false,
            ))
        })
    }

    fn notify_raw<'a>(&'a self, method: &'a str, params: Option<&'a RawJson<'a>>) -> RemoteFuture<'a, ()> {
        Box::pin(async move {
            let mut frame = BytesMut::with_capacity(64 + params.map_or(0, |p| p.get().len()));
            encode::write_call_raw(&mut frame, None, method, params).map_err(|error| {
                RemoteError::new(
                    error,
                    ErrorObject::invalid_params("params must be an array or an object"),
                    false,
                )
            })?;
            if !self.started.swap(true, Ordering::AcqRel) {
                self.first.notify_one();
            }
            self.sender
                .send(event(&frame))
                .await
                .map_err(|_| RemoteError::closed("the client went away"))
        })
    }

    fn is_open(&self) -> bool {
        !self.sender.is_closed()
    }

    fn closed(&self) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send + '_>> {
        Box::pin(self.sender.closed())
    }
}

/// Whether a request without a session belongs to the stateless revision: its
/// `MCP-Protocol-Version` names no revision with a handshake that `served` says is served, or,
/// without that header, its body carries a revision in `_meta`.
pub(crate) fn claims_stateless(
    headers: &HeaderMap,
    body: &[u8],
    served: impl Fn(ProtocolVersion) -> bool,
) -> bool {
    match headers.get(VERSION_HEADER) {
        Some(version) => !version
            .to_str()
            .ok()
            .and_then(|version| version.parse::<ProtocolVersion>().ok())
            .is_some_and(|version| !version.is_stateless() && served(version)),
        None => std::str::from_utf8(body).is_ok_and(|body| stateless::carries_meta(Some(body))),
    }
}

/// The checks of a stateless request's headers against its body, in the revision's order:
/// the revision header (-32020), `_meta` (-32602), header and `_meta` agreeing (-32020), a
/// revision served (`version_served`, -32022 by the revision), `Mcp-Method` and `Mcp-Name`
/// matching the body (-32020). The request's `_meta` and its target (the name or URI
/// `Mcp-Name` names).
pub(crate) fn check_headers(
    headers: &HeaderMap,
    method: &str,
    params: Option<&str>,
    version_served: impl FnOnce(&str) -> Result<(), ErrorObject<'static>>,
) -> Result<(stateless::RequestMeta, Option<String>), ErrorObject<'static>> {
    let Some(version) = headers.get(VERSION_HEADER) else {
        return Err(ErrorObject::new(
            HEADER_MISMATCH,
            "Missing MCP-Protocol-Version header",
        ));
    };
    let meta = stateless::read_meta(params)?;
    if version.as_bytes() != meta.version.as_bytes() {
        return Err(ErrorObject::new(
            HEADER_MISMATCH,
            "MCP-Protocol-Version header does not match _meta io.modelcontextprotocol/protocolVersion",
        ));
    }
    version_served(&meta.version)?;
    let mismatch = |what: &str| ErrorObject::new(HEADER_MISMATCH, format!("Header mismatch: {what}"));
    if header(headers, "mcp-method") != Some(method) {
        return Err(mismatch("Mcp-Method must name the body's method"));
    }
    let target = target(method, params);
    if let Some(target) = &target {
        if header(headers, "mcp-name").and_then(header_text).as_deref() != Some(target.as_str()) {
            return Err(mismatch("Mcp-Name must name the body's name or uri"));
        }
    }
    Ok((meta, target))
}

/// Each argument of a `tools/call` that the tool's schema mirrors in a header (`mirrored`:
/// (argument, header name), from `x-mcp-header`) must be there and say what the body says
/// (base64 in `=?base64?…?=`, strict): -32020 otherwise.
pub(crate) fn check_param_headers(
    headers: &HeaderMap,
    mirrored: &[(String, String)],
    params: Option<&str>,
) -> Result<(), ErrorObject<'static>> {
    if mirrored.is_empty() {
        return Ok(());
    }
    #[derive(Deserialize)]
    struct Call {
        arguments: Option<Map<String, Value>>,
    }
    let arguments = params
        .and_then(|params| serde_json::from_str::<Call>(params).ok())
        .and_then(|call| call.arguments)
        .unwrap_or_default();
    for (argument, name) in mirrored {
        let value = match arguments.get(argument) {
            None | Some(Value::Null) => continue,
            Some(value) => value,
        };
        let given = headers
            .get(name.as_str())
            .and_then(|given| given.to_str().ok())
            .ok_or_else(|| {
                ErrorObject::new(HEADER_MISMATCH, format!("Header mismatch: {name} is missing"))
            })?;
        let text = header_text(given).ok_or_else(|| {
            ErrorObject::new(
                HEADER_MISMATCH,
                format!("Header mismatch: {name} is not valid base64"),
            )
        })?;
        let same = match value {
            Value::String(value) => *value == text,
            Value::Number(number) => text.parse::<f64>().ok() == number.as_f64(),
            Value::Bool(flag) => text == if *flag { "true" } else { "false" },
            // Only strings, numbers and booleans can be mirrored in a header.
            _ => false,
        };
        if !same {
            return Err(ErrorObject::new(
                HEADER_MISMATCH,
                format!("Header mismatch: {name} differs from the argument {argument}"),
            ));
        }
    }
    Ok(())
}

/// The methods the stateless revision serves (besides `subscriptions/listen`, which is the
/// transport's).
const METHODS: [&str; 10] = [
    "server/discover",
    "tools/list",
    "tools/call",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "completion/complete",
    "subscriptions/listen",
];

/// Whether the stateless revision has `method` (`initialize`, `ping`, `logging/setLevel` and
/// the resource subscriptions are gone from it).
fn serves(method: &str) -> bool {
    METHODS.contains(&method)
}

/// The request's target as headers must name it: `params.name` of `tools/call` and
/// `prompts/get`, `params.uri` of `resources/read`.
fn target(method: &str, params: Option<&str>) -> Option<String> {
    #[derive(Deserialize)]
    struct Target {
        name: Option<String>,
        uri: Option<String>,
    }
    let target: Target = serde_json::from_str(params?).ok()?;
    match method {
        "tools/call" | "prompts/get" => target.name,
        "resources/read" => target.uri,
        _ => None,
    }
}

/// A header's value without surrounding spaces and tabs.
fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get(name)
        .and_then(|value| value.to_str().ok())
        .map(|value| value.trim_matches([' ', '\t']))
}

/// A header value in the `=?base64?…?=` form decoded (strict standard base64 with padding,
/// UTF-8), any other value as it is (trimmed); `None` for a malformed encoded value.
fn header_text(value: &str) -> Option<String> {
    let value = value.trim_matches([' ', '\t']);
    match value
        .strip_prefix("=?base64?")
        .and_then(|rest| rest.strip_suffix("?="))
    {
        Some(encoded) => String::from_utf8(STANDARD.decode(encoded).ok()?).ok(),
        None => Some(value.to_owned()),
    }
}

/// A list's member in a `subscriptions/listen` filter.
fn filter_key(list: ListChanged) -> &'static str {
    match list {
        ListChanged::Tools => "toolsListChanged",
        ListChanged::Prompts => "promptsListChanged",
        ListChanged::Resources => "resourcesListChanged",
    }
}

/// One SSE event carrying `frame`.
pub(crate) fn event(frame: &[u8]) -> Bytes {
    let mut event = BytesMut::with_capacity(frame.len() + 24);
    event.put_slice(b"event: message\ndata: ");
    event.put_slice(frame);
    event.put_slice(b"\n\n");
    event.freeze()
}

/// One SSE event carrying the notification `method` with `params`.
pub(crate) fn notification(method: &str, params: &Value) -> Bytes {
    let mut frame = BytesMut::new();
    let params = RawJson::from_value(params).ok();
    let _ = encode::write_call_raw(&mut frame, None, method, params.as_ref());
    event(&frame)
}

fn success(id: &Id<'_>, result: &str) -> Bytes {
    let mut frame = BytesMut::with_capacity(result.len() + 40);
    encode::write_success_bytes(&mut frame, id, result.as_bytes());
    frame.freeze()
}

fn error_frame(id: &Id<'_>, error: &ErrorObject<'_>) -> Bytes {
    let mut frame = BytesMut::new();
    encode::write_error(&mut frame, id, error);
    frame.freeze()
}

/// An error as JSON with the revision's status ([`error_status`]).
pub(crate) fn error_answer(id: &Id<'_>, error: &ErrorObject<'_>) -> Response<McpBody> {
    json_status(error_status(error.code().code()), error_frame(id, error))
}

/// The HTTP status the stateless revision gives an error answered as JSON: 404 for a method
/// it lacks, 400 for a request it refuses, 200 for a handler's error.
pub(crate) fn error_status(code: i64) -> StatusCode {
    use crate::codes::*;
    match code {
        METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
        PARSE_ERROR | INVALID_REQUEST | INVALID_PARAMS | HEADER_MISMATCH | MISSING_CAPABILITY
        | UNSUPPORTED_VERSION => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_values_decode_only_in_the_exact_base64_form() {
        assert_eq!(header_text("=?base64?SGVsbG8=?=").as_deref(), Some("Hello"));
        assert_eq!(header_text("  plain\t").as_deref(), Some("plain"));
        assert_eq!(
            header_text("SGVsbG8=").as_deref(),
            Some("SGVsbG8="),
            "no prefix: literal"
        );
        assert_eq!(
            header_text("=?base64?SGVsbG8=").as_deref(),
            Some("=?base64?SGVsbG8="),
            "no suffix: literal"
        );
        assert!(header_text("=?base64?SGVsbG8?=").is_none(), "padding missing");
        assert!(
            header_text("=?base64?SGVs!!!bG8=?=").is_none(),
            "not the alphabet"
        );
        assert!(header_text("=?base64?/w==?=").is_none(), "not UTF-8");
    }

    #[test]
    fn targets_come_from_name_or_uri() {
        assert_eq!(
            target("tools/call", Some(r#"{"name":"t"}"#)).as_deref(),
            Some("t")
        );
        assert_eq!(
            target("resources/read", Some(r#"{"uri":"a://b"}"#)).as_deref(),
            Some("a://b")
        );
        assert_eq!(target("tools/list", Some(r#"{"name":"t"}"#)), None);
        assert_eq!(target("tools/call", None), None);
        assert!(serves("tools/call") && !serves("initialize") && !serves("ping"));
    }
}
