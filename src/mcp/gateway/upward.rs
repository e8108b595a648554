//! `Upward`: what a server child sends the client of its session, and where it goes — the
//! answers' streams of the client's requests under way, progress by its token, log messages
//! and the server's own requests (sampling, elicitation, roots, ping) on the stream of the
//! request they belong to, the rest on the session's GET stream — and the router the child's
//! `Peer` serves that with. Params pass through as the child wrote them.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use tokio_util::sync::CancellationToken;

use crate::correlate::{CorrelationTable, TableConfig};
use crate::dispatch::{Fallback, FallbackAnswer, FallbackCall, FallbackFuture, Router};
use crate::encode;
use crate::mcp::http::output::PostOutput;
use crate::mcp::http::session::ClientAnswer;
use crate::mcp::http::stream::EventStream;
use crate::mcp::http::streams::SessionStreams;
use crate::message::{ErrorObject, Id, JsonBytes, Params, RawJson};
use crate::sync::lock_unpoisoned;

/// The notifications a server sends that are passed on in the order they come, before the
/// answers that follow them (the others go through the router's fallback).
const ORDERED_NOTIFICATIONS: [&str; 6] = [
    "notifications/progress",
    "notifications/message",
    "notifications/resources/updated",
    "notifications/resources/list_changed",
    "notifications/tools/list_changed",
    "notifications/prompts/list_changed",
];

/// One request of the client under way at the child.
pub(crate) struct Forwarded {
    /// Where its answer, and what belongs to it, go.
    pub(crate) output: Arc<PostOutput>,
    /// Fires when the client cancels it.
    pub(crate) cancel: CancellationToken,
    /// Fires when the POST that carried it is dropped before it was answered.
    pub(crate) post_gone: CancellationToken,
    /// Its progress token's JSON text, when it has one.
    pub(crate) progress: Option<Bytes>,
    /// Its place in the order requests came.
    order: u64,
}

/// The way up from one child to its session's client.
pub(crate) struct Upward {
    pub(crate) streams: Arc<SessionStreams>,
    /// The client's requests under way, by their id's JSON text.
    requests: Mutex<HashMap<Bytes, Arc<Forwarded>>>,
    /// The same requests by their progress token's JSON text.
    progress: Mutex<HashMap<Bytes, Arc<PostOutput>>>,
    /// The child's requests sent to the client, waiting for the client's answers.
    pub(crate) client_calls: CorrelationTable<ClientAnswer>,
    client_call_timeout: Duration,
    next_order: AtomicU64,
}

/// Why a request of the client cannot be forwarded now.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct DuplicateId;

impl Upward {
    pub(crate) fn new(client_call_timeout: Duration) -> Upward {
        Upward {
            streams: Arc::new(SessionStreams::default()),
            requests: Mutex::new(HashMap::new()),
            progress: Mutex::new(HashMap::new()),
            client_calls: CorrelationTable::new(TableConfig {
                capacity: 64,
                timeout: client_call_timeout,
                ..TableConfig::default()
            }),
            client_call_timeout,
            next_order: AtomicU64::new(0),
        }
    }

    /// Keeps a request of the client while it is under way; refused when one with the same
    /// id is.
    pub(crate) fn begin(&self, id: Bytes, output: Arc<PostOutput>, progress: Option<Bytes>) -> Result<Arc<Forwarded>, DuplicateId> {
        let forwarded = Arc::new(Forwarded {
            output: output.clone(),
            cancel: CancellationToken::new(),
            post_gone: CancellationToken::new(),
            progress: progress.clone(),
            order: self.next_order.fetch_add(1, Ordering::Relaxed),
        });
        {
            let mut requests = lock_unpoisoned(&self.requests);
            if requests.contains_key(&id) {
                return Err(DuplicateId);
            }
            requests.insert(id, forwarded.clone());
        }
        if let Some(token) = progress {
            lock_unpoisoned(&self.progress).insert(token, output);
        }
        Ok(forwarded)
    }

    /// The request `id` (its JSON text) is done.
    pub(crate) fn end(&self, id: &[u8]) {
        let ended = lock_unpoisoned(&self.requests).remove(id);
        if let Some(token) = ended.and_then(|forwarded| forwarded.progress.clone()) {
            lock_unpoisoned(&self.progress).remove(&token);
        }
    }

    /// The client cancelled its request `id` (its JSON text); `false` when none is under way.
    pub(crate) fn cancel(&self, id: &[u8]) -> bool {
        match lock_unpoisoned(&self.requests).get(id) {
            Some(forwarded) => {
                forwarded.cancel.cancel();
                true
            }
            None => false,
        }
    }

    /// How many of the client's requests are under way.
    pub(crate) fn under_way(&self) -> usize {
        lock_unpoisoned(&self.requests).len()
    }

    /// The stream for a message that belongs to a request without naming it (a log
    /// message, a request to the client): the latest request's under way, else the GET
    /// stream.
    fn related(&self) -> Option<Arc<EventStream>> {
        let latest = lock_unpoisoned(&self.requests)
            .values()
            .max_by_key(|forwarded| forwarded.order)
            .map(|forwarded| forwarded.output.clone());
        match latest {
            Some(output) => Some(output.stream().clone()),
            None => self.streams.standalone(),
        }
    }

    /// Passes on a notification of the child (written again around its params, which go
    /// as the child wrote them).
    fn notification(&self, method: &str, params: Option<Params<'_>>) {
        let target = match method {
            "notifications/progress" => {
                let token = params.and_then(|params| params.get("progressToken"));
                let output = token.and_then(|token| lock_unpoisoned(&self.progress).get(token.get().as_bytes()).cloned());
                match output {
                    Some(output) => Some(output.stream().clone()),
                    None => self.related(),
                }
            }
            "notifications/message" => self.related(),
            _ => self.streams.standalone(),
        };
        let Some(stream) = target else {
            // No stream to the client is open: nothing to send it on (as an SDK server
            // drops what it has no stream for).
            return;
        };
        let raw = params.map(|params| params.raw());
        let mut frame = BytesMut::with_capacity(64 + method.len() + raw.as_ref().map_or(0, |p| p.get().len()));
        if encode::write_call_raw(&mut frame, None, method, raw.as_ref()).is_ok() {
            stream.push(&frame);
        }
    }

    /// Sends the child's request to the client, on the stream of the request it belongs to
    /// (or the GET stream), and waits for the client's answer.
    async fn ask_client(&self, method: &str, params: Option<JsonBytes>) -> FallbackAnswer {
        let Some(stream) = self.related() else {
            return FallbackAnswer::Error(ErrorObject::internal_error(
                "the client has no stream open to send this request on",
            ));
        };
        let call = match self.client_calls.start() {
            Ok(call) => call,
            Err(error) => {
                return FallbackAnswer::Error(ErrorObject::internal_error(format_args!("no call to the client could be made: {error}")));
            }
        };
        let raw = params.as_ref().map(JsonBytes::to_raw_json);
        let mut frame = BytesMut::with_capacity(64 + method.len() + raw.as_ref().map_or(0, |p| p.get().len()));
        if encode::write_call_raw(&mut frame, Some(call.id()), method, raw.as_ref()).is_err() {
            return FallbackAnswer::Error(ErrorObject::invalid_params("params must be an array or an object"));
        }
        stream.push(&frame);
        // Dropped before the client answered (the child cancelled its request, or went
        // away): the client is told.
        let cancelled = CancelOnDrop {
            stream: &stream,
            id: Some(call.id().clone()),
        };
        let answer = call.await;
        cancelled.disarm();
        match answer {
            Ok(Ok(result)) => FallbackAnswer::Result(result),
            Ok(Err(error)) => FallbackAnswer::Error(error),
            Err(error) => FallbackAnswer::Error(ErrorObject::internal_error(format_args!(
                "the client did not answer within {:?}: {error}",
                self.client_call_timeout
            ))),
        }
    }

    /// The router the child's `Peer` serves: the ordered notifications inline, everything
    /// else through the fallback.
    pub(crate) fn router(self: &Arc<Self>) -> Router {
        let mut router = Router::new();
        for method in ORDERED_NOTIFICATIONS {
            let up = self.clone();
            router.raw_notification(method, move |params: Option<Params<'_>>| up.notification(method, params));
        }
        router.fallback(UpFallback(self.clone()));
        router
    }
}

/// Tells the client that a request sent to it is cancelled, unless disarmed.
struct CancelOnDrop<'a> {
    stream: &'a EventStream,
    id: Option<Id<'static>>,
}

impl CancelOnDrop<'_> {
    fn disarm(mut self) {
        self.id = None;
    }
}

impl Drop for CancelOnDrop<'_> {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else { return };
        let mut id_text = String::new();
        id.write_json(&mut id_text);
        let Ok(params) = RawJson::new(format!(r#"{{"requestId":{id_text},"reason":"cancelled by the server"}}"#)) else {
            return;
        };
        let mut frame = BytesMut::new();
        if encode::write_call_raw(&mut frame, None, "notifications/cancelled", Some(&params)).is_ok() {
            self.stream.push(&frame);
        }
    }
}

/// The fallback of the child's router: notifications not passed on inline, and the child's
/// requests to the client.
struct UpFallback(Arc<Upward>);

impl Fallback for UpFallback {
    fn call(&self, call: FallbackCall<'_>) -> FallbackFuture {
        let up = self.0.clone();
        if call.is_notification() {
            up.notification(call.method(), call.params());
            // What a notification is answered with is dropped.
            return Box::pin(async { FallbackAnswer::Error(ErrorObject::new(0, "")) });
        }
        let method = call.method().to_owned();
        let params = call.params_bytes();
        Box::pin(async move { up.ask_client(&method, params).await })
    }
}
