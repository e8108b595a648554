//! How the MCP gateway forwards what a client POSTs: a request to the session's children (or,
//! in the stateless revision, to children every client shares), a batch element by element,
//! the client's answers to the children's requests back to them, and each call's way back
//! as JSON or as an SSE stream.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use http::header::{HeaderMap, HeaderValue};
use http::{Response, StatusCode};
use tokio::sync::OwnedSemaphorePermit;
use tokio_util::sync::CancellationToken;

use super::metrics;
use super::session::{Children, ChildrenKind, ClientRequest, GatewaySession};
use super::stateless::{self};
use super::upward::{request_key, Forwarded};
use crate::encode;
use crate::http::answer::{accepted, json_answer, json_status, refusal, rpc_refusal};
use crate::http::headers::{SESSION_HEADER, TOO_MANY_REQUESTS};
use crate::http::output::PostOutput;
use crate::http::request::{answer_post, sessionless_ping};
use crate::http::session::Kept;
use crate::http::stateless::{check_headers, check_param_headers, error_answer, error_status};
use crate::http::McpBody;
use crate::message::{id_range_within, ErrorObject, Id, JsonBytes, Message, Params};
use crate::parse::Parsed;
use crate::transport::CancelProtocol;
use crate::version::ProtocolVersion;

use super::shared::{McpGateway, SHUTTING_DOWN};

impl McpGateway {
    /// A POST that passed the front door.
    pub(super) async fn serve_post(
        self,
        session: Option<Arc<GatewaySession>>,
        headers: &HeaderMap,
        body: Bytes,
    ) -> Response<McpBody> {
        let parsed = match self.parser.parse(&body) {
            Ok(parsed) => parsed,
            Err(error) => {
                let mut out = BytesMut::new();
                crate::dispatch::write_parse_error(&mut out, &error);
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
                // The rarer ways are boxed: the common one (a request in a session) keeps this
                // future small, as it is moved into its box for every request.
                return Box::pin(self.forward_batch(session, elements)).await;
            }
        };
        match (session, message) {
            (None, Message::Request(request)) if stateless::claims(headers, request.method(), &body) => {
                // The gateway checks what only it sees (the headers); the servers check the
                // rest (the revision, the method), but for the handshake, which would start
                // a session on children every client shares.
                let params = request.raw_params().map(|params| params.get());
                if let Err(error) = check_headers(headers, request.method(), params, |_| Ok(())) {
                    return error_answer(request.id(), &error);
                }
                if request.method() == "initialize" {
                    return error_answer(request.id(), &ErrorObject::method_not_found("initialize"));
                }
                let (request, id_text, progress) = forwarded_parts(&body, &request);
                Box::pin(self.forward_stateless(headers, request, id_text, progress)).await
            }
            (None, Message::Request(request)) => {
                let request = client_request(&body, &request);
                match &*request.method {
                    "initialize" => Box::pin(self.initialize(request)).await,
                    "ping" if sessionless_ping(headers) => {
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
    pub(super) async fn initialize(self, request: ClientRequest) -> Response<McpBody> {
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
    pub(super) async fn forward_stateless(
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
    pub(super) async fn children_for_a_session(&self) -> std::io::Result<Arc<Children>> {
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
    pub(super) async fn forward(
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
    pub(super) async fn forward_batch(
        self,
        session: Arc<GatewaySession>,
        elements: Vec<Element>,
    ) -> Response<McpBody> {
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
    pub(super) fn refuse_in(&self, session: &GatewaySession, id: &Id<'_>) -> Option<Response<McpBody>> {
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
    pub(super) fn prime(&self, session: &GatewaySession) -> Option<u64> {
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
    pub(super) fn prepare(
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
}

/// A request of the client ready to be forwarded (`McpGateway::prepare`).
pub(super) struct Prepared {
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
pub(super) enum Element {
    /// A request, its id's JSON text, its progress token's.
    Request(ClientRequest, Bytes, Option<Bytes>),
    /// A notification to send on.
    Notification(Box<str>, Option<JsonBytes>),
    /// The error answer of an element that is not a message.
    Refused(Bytes),
}

/// Tells forwarded requests that their POST was dropped before it was answered (the client
/// went away), unless disarmed.
pub(super) struct PostGone(smallvec::SmallVec<[CancellationToken; 1]>);

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
pub(super) fn client_request(body: &Bytes, request: &crate::message::Request<'_>) -> ClientRequest {
    ClientRequest {
        id: request.id().clone().into_owned(),
        method: request.method().into(),
        params: request.raw_params().map(|raw| JsonBytes::slice_of(body, raw)),
    }
}

/// The client's `notifications/cancelled` in `session`: the request it names cancelled.
pub(super) fn cancelled(session: &GatewaySession, notification: &crate::message::Notification<'_>) {
    if let Some(id) = CancelProtocol::Mcp.cancelled_id(notification.params()) {
        session.up().cancel(&request_key(session.number, id.as_bytes()));
    }
}

/// The client's answer to a request of a child in `session`, given to the child's call.
pub(super) fn answered(session: &GatewaySession, body: &Bytes, response: &crate::message::Response<'_>) {
    let answer = match (response.result(), response.error_object()) {
        (Some(result), _) => Ok(JsonBytes::slice_of(body, result)),
        (None, Some(error)) => Err(error.clone().into_owned()),
        (None, None) => return,
    };
    let _ = session.up().client_calls.complete(response.id(), answer);
}

/// One element of a batch in `session`: a cancellation or an answer of the client taken at
/// once, the rest to forward (or the error answer of an element that is no message).
pub(super) fn batch_element(
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
            crate::dispatch::write_parse_error(&mut out, error);
            Some(Element::Refused(out.freeze()))
        }
    }
}

/// A request of the client as forwarded, its id's JSON text as the client wrote it, and its
/// progress token's JSON text.
pub(super) fn forwarded_parts(
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
pub(super) fn is_json_answer(response: &Response<McpBody>) -> bool {
    response
        .headers()
        .get(http::header::CONTENT_TYPE)
        .is_some_and(|value| value.as_bytes().starts_with(b"application/json"))
}

/// The answer to a request whose servers could not be started: `502` with the reason.
pub(super) fn spawn_failed(id: &Id<'_>, error: &std::io::Error) -> Response<McpBody> {
    metrics::refused("spawn");
    let object = ErrorObject::new(
        super::SERVER_GONE,
        format!("the MCP server could not be started: {error}"),
    );
    answer_error(StatusCode::BAD_GATEWAY, id, &object)
}

/// `params` with `_meta.progressToken` set to the JSON text `token`.
pub(super) fn with_progress_token(params: &JsonBytes, token: &[u8]) -> Option<JsonBytes> {
    let meta = Params::new(params.as_str()).get("_meta")?;
    let token = std::str::from_utf8(token).ok()?;
    let meta = super::aggregate::with_member_json(meta.get().as_bytes(), "progressToken", token)?;
    let params = super::aggregate::with_member_json(params, "_meta", std::str::from_utf8(&meta).ok()?)?;
    Some(JsonBytes::from_validated(params))
}

/// An error response to the request `id` with `status`.
pub(super) fn answer_error(status: StatusCode, id: &Id<'_>, error: &ErrorObject<'_>) -> Response<McpBody> {
    let mut out = BytesMut::new();
    encode::write_error(&mut out, id, error);
    json_status(status, out.freeze())
}

pub(super) fn shutting_down() -> ErrorObject<'static> {
    ErrorObject::new(SHUTTING_DOWN, "the gateway is shutting down")
}
