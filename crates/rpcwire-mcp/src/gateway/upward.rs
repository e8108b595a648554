//! `Upward`: what server children send their clients, and where it goes — the answers'
//! streams of the clients' requests under way, progress by its token, log messages and the
//! server's own requests (sampling, elicitation, roots, ping) on the stream of the request
//! they belong to, the rest on the sessions' GET streams — and the router each child's
//! `Peer` serves that with. One `Upward` serves one session, or every session of a shared
//! child (requests kept by session and id; progress tokens made unique on the way down and
//! given back on the way up). Params pass through as the child wrote them, but a progress
//! token given back.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use tokio_util::sync::CancellationToken;

use crate::correlate::{CorrelationTable, TableConfig};
use crate::dispatch::{Fallback, FallbackAnswer, FallbackCall, FallbackFuture, Router};
use crate::encode;
use crate::http::output::PostOutput;
use crate::http::session::ClientAnswer;
use crate::http::stream::EventStream;
use crate::http::streams::SessionStreams;
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
    /// Its progress token's JSON text as the child knows it, when it has one.
    pub(crate) progress: Option<Bytes>,
    /// The error code it was answered with, once answered with an error.
    pub(crate) code: std::sync::OnceLock<i64>,
    /// Its place in the order requests came.
    order: u64,
}

/// Where a progress token leads: the request's answer, and the token the client chose when
/// the child knows another.
struct Progressing {
    output: Arc<PostOutput>,
    client_token: Option<Bytes>,
}

/// The way up from children to their sessions' clients.
pub(crate) struct Upward {
    /// The sessions' streams (one, unless the child is shared).
    listeners: Mutex<Vec<std::sync::Weak<SessionStreams>>>,
    /// The clients' requests under way, by their session and id ([`request_key`]).
    requests: Mutex<HashMap<Bytes, Arc<Forwarded>>>,
    /// The same requests by their progress token's JSON text as the child knows it.
    progress: Mutex<HashMap<Bytes, Progressing>>,
    /// The child's requests sent to the client, waiting for the client's answers.
    pub(crate) client_calls: CorrelationTable<ClientAnswer>,
    client_call_timeout: Duration,
    next_order: AtomicU64,
    /// Serving the stateless revision: requests of different clients, none of which may see
    /// what belongs to another, and no requests to the client.
    stateless: bool,
    /// The stateless revision's listen streams (`subscriptions/listen`).
    subscribers: Mutex<Vec<Subscriber>>,
}

/// A `subscriptions/listen` stream: the changes it asked for, as SSE events tagged with its
/// id.
pub(crate) struct Subscriber {
    /// The list-changed notifications it takes (`notifications/tools/list_changed`, …).
    pub(crate) lists: Vec<&'static str>,
    /// The resources whose updates it takes.
    pub(crate) uris: Vec<String>,
    /// Its listen request's id, as JSON text.
    pub(crate) id_text: String,
    pub(crate) events: tokio::sync::mpsc::Sender<Bytes>,
}

/// Why a request of the client cannot be forwarded now.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct DuplicateId;

impl Upward {
    /// The way up, for the stateless revision's requests when `stateless`.
    pub(crate) fn new(client_call_timeout: Duration, stateless: bool) -> Upward {
        Upward {
            listeners: Mutex::new(Vec::new()),
            requests: Mutex::new(HashMap::new()),
            progress: Mutex::new(HashMap::new()),
            client_calls: CorrelationTable::new(TableConfig {
                capacity: 64,
                timeout: client_call_timeout,
                ..TableConfig::default()
            }),
            client_call_timeout,
            next_order: AtomicU64::new(0),
            stateless,
            subscribers: Mutex::new(Vec::new()),
        }
    }

    /// Sends what is not tied to a request to `streams` too (a session's).
    pub(crate) fn listen(&self, streams: &Arc<SessionStreams>) {
        let mut listeners = lock_unpoisoned(&self.listeners);
        listeners.retain(|listener| listener.strong_count() > 0);
        listeners.push(Arc::downgrade(streams));
    }

    /// The GET streams of the sessions still there.
    fn standalone_streams(&self) -> Vec<Arc<EventStream>> {
        lock_unpoisoned(&self.listeners)
            .iter()
            .filter_map(std::sync::Weak::upgrade)
            .filter_map(|streams| streams.standalone())
            .collect()
    }

    /// Keeps a request of the client while it is under way (`key`: [`request_key`]);
    /// refused when one with the same key is. `progress`: its token as the child knows it,
    /// and the client's own when that differs.
    pub(crate) fn begin(
        &self,
        key: Bytes,
        output: Arc<PostOutput>,
        progress: Option<(Bytes, Option<Bytes>)>,
    ) -> Result<Arc<Forwarded>, DuplicateId> {
        let (progress, client_token) = match progress {
            Some((token, client)) => (Some(token), client),
            None => (None, None),
        };
        let id = key;
        let forwarded = Arc::new(Forwarded {
            output: output.clone(),
            cancel: CancellationToken::new(),
            post_gone: CancellationToken::new(),
            progress: progress.clone(),
            code: std::sync::OnceLock::new(),
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
            lock_unpoisoned(&self.progress).insert(token, Progressing { output, client_token });
        }
        Ok(forwarded)
    }

    /// The request `id` ([`request_key`]) is done.
    pub(crate) fn end(&self, id: &[u8]) {
        let ended = lock_unpoisoned(&self.requests).remove(id);
        if let Some(token) = ended.and_then(|forwarded| forwarded.progress.clone()) {
            lock_unpoisoned(&self.progress).remove(&token);
        }
    }

    /// The client cancelled its request `id` ([`request_key`]); `false` when none is under
    /// way.
    pub(crate) fn cancel(&self, id: &[u8]) -> bool {
        match lock_unpoisoned(&self.requests).get(id) {
            Some(forwarded) => {
                forwarded.cancel.cancel();
                true
            }
            None => false,
        }
    }

    /// Sends the changes `subscriber` asked for to it, until its stream closes.
    pub(crate) fn subscribe(&self, subscriber: Subscriber) {
        let mut subscribers = lock_unpoisoned(&self.subscribers);
        subscribers.retain(|open| !open.events.is_closed());
        subscribers.push(subscriber);
    }

    /// How many listen streams are open.
    pub(crate) fn subscribers(&self) -> usize {
        let mut subscribers = lock_unpoisoned(&self.subscribers);
        subscribers.retain(|open| !open.events.is_closed());
        subscribers.len()
    }

    /// Ends every listen stream (the children are gone).
    pub(crate) fn end_subscriptions(&self) {
        lock_unpoisoned(&self.subscribers).clear();
    }

    /// Passes a change notification of the children to the listen streams that asked for
    /// it, tagged with each one's id; a stream that does not keep up misses it.
    fn to_subscribers(&self, method: &str, params: Option<&Params<'_>>) {
        let mut subscribers = lock_unpoisoned(&self.subscribers);
        if subscribers.is_empty() {
            return;
        }
        let uri = match method {
            "notifications/resources/updated" => match params
                .and_then(|params| params.get("uri"))
                .and_then(|uri| uri.decode::<String>().ok())
            {
                Some(uri) => Some(uri),
                None => return,
            },
            _ => None,
        };
        subscribers.retain(|subscriber| !subscriber.events.is_closed());
        for subscriber in subscribers.iter() {
            let wanted = match &uri {
                Some(uri) => subscriber.uris.contains(uri),
                None => subscriber.lists.contains(&method),
            };
            if !wanted {
                continue;
            }
            let mut params = BytesMut::with_capacity(64 + subscriber.id_text.len());
            params.extend_from_slice(b"{");
            if let Some(uri) = &uri {
                params.extend_from_slice(b"\"uri\":");
                encode::write_str(&mut params, uri);
                params.extend_from_slice(b",");
            }
            params.extend_from_slice(b"\"_meta\":{\"io.modelcontextprotocol/subscriptionId\":");
            params.extend_from_slice(subscriber.id_text.as_bytes());
            params.extend_from_slice(b"}}");
            let Ok(params) = std::str::from_utf8(&params).map(RawJson::from_validated) else {
                continue;
            };
            let mut frame = BytesMut::new();
            if encode::write_call_raw(&mut frame, None, method, Some(&params)).is_ok() {
                let _ = subscriber.events.try_send(crate::http::stateless::event(&frame));
            }
        }
    }

    /// How many requests are under way.
    pub(crate) fn under_way(&self) -> usize {
        lock_unpoisoned(&self.requests).len()
    }

    /// How many requests of the session numbered `session` are under way.
    pub(crate) fn under_way_in(&self, session: u64) -> usize {
        let prefix = session.to_le_bytes();
        lock_unpoisoned(&self.requests)
            .keys()
            .filter(|key| key.starts_with(&prefix))
            .count()
    }

    /// The streams for a message that belongs to a request without naming it (a log
    /// message, a request to the client): the latest request's under way, else the GET
    /// streams. Stateless requests come from clients that must not see each other's: the
    /// request's only when it is the only one under way, else none (the message is dropped).
    fn related(&self) -> Vec<Arc<EventStream>> {
        let latest = {
            let requests = lock_unpoisoned(&self.requests);
            if self.stateless && requests.len() != 1 {
                return Vec::new();
            }
            requests
                .values()
                .max_by_key(|forwarded| forwarded.order)
                .map(|forwarded| forwarded.output.clone())
        };
        match latest {
            Some(output) => vec![output.stream().clone()],
            None => self.standalone_streams(),
        }
    }

    /// Passes on a notification of the child (written again around its params, which go
    /// as the child wrote them).
    fn notification(&self, method: &str, params: Option<Params<'_>>) {
        let mut given_back = None;
        let targets = match method {
            "notifications/progress" => {
                let token = params.and_then(|params| params.get("progressToken"));
                let progressing = token.and_then(|token| {
                    let progress = lock_unpoisoned(&self.progress);
                    let progressing = progress.get(token.get().as_bytes())?;
                    Some((progressing.output.clone(), progressing.client_token.clone()))
                });
                match progressing {
                    Some((output, client_token)) => {
                        given_back = client_token;
                        vec![output.stream().clone()]
                    }
                    None => self.related(),
                }
            }
            "notifications/message" => self.related(),
            _ => {
                self.to_subscribers(method, params.as_ref());
                self.standalone_streams()
            }
        };
        if targets.is_empty() {
            // No stream to the client is open: nothing to send it on (as an SDK server
            // drops what it has no stream for).
            return;
        }
        let raw = params.map(|params| params.raw());
        let restored = given_back.as_ref().zip(raw.as_ref()).and_then(|(token, raw)| {
            let text = std::str::from_utf8(token).ok()?;
            super::aggregate::with_member_json(raw.get().as_bytes(), "progressToken", text)
        });
        let restored = restored
            .as_ref()
            .and_then(|bytes| std::str::from_utf8(bytes).ok())
            .map(RawJson::from_validated);
        let raw = restored.or(raw);
        let mut frame =
            BytesMut::with_capacity(64 + method.len() + raw.as_ref().map_or(0, |p| p.get().len()));
        if encode::write_call_raw(&mut frame, None, method, raw.as_ref()).is_ok() {
            for stream in targets {
                stream.push(&frame);
            }
        }
    }

    /// Sends the child's request to the client, on the stream of the request it belongs to
    /// (or the GET stream), and waits for the client's answer.
    async fn ask_client(&self, method: &str, params: Option<JsonBytes>) -> FallbackAnswer {
        if self.stateless {
            return FallbackAnswer::Error(ErrorObject::internal_error(format_args!(
                "no request ({method}) to the client in protocol revision 2026-07-28: return an input-required result"
            )));
        }
        let Some(stream) = self.related().into_iter().next() else {
            return FallbackAnswer::Error(ErrorObject::internal_error(
                "the client has no stream open to send this request on",
            ));
        };
        let call = match self.client_calls.start() {
            Ok(call) => call,
            Err(error) => {
                return FallbackAnswer::Error(ErrorObject::internal_error(format_args!(
                    "no call to the client could be made: {error}"
                )));
            }
        };
        let raw = params.as_ref().map(JsonBytes::to_raw_json);
        let mut frame =
            BytesMut::with_capacity(64 + method.len() + raw.as_ref().map_or(0, |p| p.get().len()));
        if encode::write_call_raw(&mut frame, Some(call.id()), method, raw.as_ref()).is_err() {
            return FallbackAnswer::Error(ErrorObject::invalid_params(
                "params must be an array or an object",
            ));
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
            router.raw_notification(method, move |params: Option<Params<'_>>| {
                up.notification(method, params)
            });
        }
        router.fallback(UpFallback(self.clone()));
        router
    }
}

/// The key of a client's request in an `Upward`: its session's number and its id's JSON text.
pub(crate) fn request_key(session: u64, id_text: &[u8]) -> Bytes {
    let mut key = BytesMut::with_capacity(8 + id_text.len());
    key.extend_from_slice(&session.to_le_bytes());
    key.extend_from_slice(id_text);
    key.freeze()
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
        let Ok(params) = RawJson::new(format!(
            r#"{{"requestId":{id_text},"reason":"cancelled by the server"}}"#
        )) else {
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
