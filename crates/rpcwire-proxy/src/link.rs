//! `UpstreamLink`: how one upstream is reached — a connection served by a [`Peer`], or HTTP
//! exchanges — and the typed [`LinkError`] that says whether a request reached it, the HTTP
//! status if any, and why there is no answer. Retry and breaker decisions read that type;
//! nothing is encoded as JSON to be decoded again.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::AtomicU64;
use std::sync::Mutex;

use bytes::Bytes;

use super::id_slot::IdSlot;
use crate::message::{ErrorObject, JsonBytes, RawJson};
use crate::middleware::{BatchEntry, BatchOutcome, RemoteAnswer, RpcCall, RpcService};
pub use crate::middleware::{LinkError, LinkErrorKind};
use crate::sync::{bump, lock_unpoisoned};
use crate::transport::{ConnectionState, Peer};

/// The id a gateway's forwarded requests carry upstream (each HTTP exchange is its own, so
/// one id serves them all): its exact JSON text.
pub(crate) const GATEWAY_ID: &str = "1";

/// A boxed future borrowing the link.
pub type LinkFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, LinkError>> + Send + 'a>>;

/// A batch's outcomes, one per entry in their order (`None`: a notification sent).
pub type LinkBatch = Vec<BatchOutcome<LinkAnswer, LinkError>>;

/// The future of [`UpstreamLink::batch`], borrowing the link.
pub type LinkBatchFuture<'a> = Pin<Box<dyn Future<Output = LinkBatch> + Send + 'a>>;

/// What an upstream answered a request with.
#[derive(Debug)]
pub enum LinkAnswer {
    /// The upstream's whole answer frame, a response whose id is the gateway's, with the
    /// id's place in it (a link that takes frames: HTTP). `error` is the answer's error
    /// object when it is an error response (for retry decisions; the frame is what goes on).
    Frame {
        /// The answer and where its id lies.
        answer: IdSlot,
        /// Its result (a slice of it), for a success response.
        result: Option<JsonBytes>,
        /// Its error object, for an error response.
        error: Option<ErrorObject<'static>>,
    },
    /// The upstream's result or error, as it wrote them (a link that makes calls of its own:
    /// a [`Peer`]).
    Remote(RemoteAnswer),
    /// The upstream's whole answer to a batch frame sent on as it came (a link that takes
    /// frames: HTTP), read strictly: a JSON array of responses. `ids` is each response's id
    /// as it is written in `answer` (a slice of it), in order: whoever sent the batch checks
    /// that every request got one answer.
    Batch {
        /// The answer, as it came.
        answer: Bytes,
        /// Each response's id, as written.
        ids: Vec<Bytes>,
    },
    /// An answer frame to the gateway's id that breaks JSON-RPC 2.0 in a way some nodes do
    /// (`"result":null` beside an `"error"`, or both `null`): refused by the strict parser,
    /// kept here so that the gateway can say what came, or pass it on as it is.
    NonConforming {
        /// The answer and where its id lies.
        answer: IdSlot,
        /// Why the strict parser refused it.
        reason: String,
        /// Its `"error"` member's JSON text, when it has one that is not `null`.
        error: Option<JsonBytes>,
    },
}

/// How requests reach one upstream. The crate has two: a connection served by a [`Peer`]
/// (`tcp://`, `ws://`, stdio, anything a `Peer` runs on; ids matched on it) and HTTP (each
/// request its own POST, the answer frame kept as it came). Give another to
/// [`Upstream::with_link`](super::Upstream::with_link).
///
/// ```
/// use rpcwire::proxy::{LinkAnswer, LinkError, LinkErrorKind, LinkFuture, UpstreamLink};
///
/// /// An upstream that is never there.
/// struct Down;
/// impl UpstreamLink for Down {
///     fn call<'a>(&'a self, _frame: Option<&'a bytes::Bytes>, _method: &'a str, _params: Option<&'a rpcwire::RawJson<'a>>) -> LinkFuture<'a, LinkAnswer> {
///         Box::pin(async { Err(LinkError::new(LinkErrorKind::NotReached, "down")) })
///     }
///     fn notify<'a>(&'a self, _method: &'a str, _params: Option<&'a rpcwire::RawJson<'a>>) -> LinkFuture<'a, ()> {
///         Box::pin(async { Err(LinkError::new(LinkErrorKind::NotReached, "down")) })
///     }
/// }
/// let upstream = rpcwire::proxy::Upstream::with_link("down", Down);
/// assert_eq!(upstream.name(), "down");
/// ```
pub trait UpstreamLink: Send + Sync + 'static {
    /// Sends a request of `method` with `params`; `frame`, when given, is the same request
    /// whole, with the gateway's id (`1`), for links that send frames as they are (a link
    /// that needs one writes it when none is given) — or a client's whole batch, sent on as it
    /// came and answered [`LinkAnswer::Batch`] (only to links that take frames).
    fn call<'a>(
        &'a self,
        frame: Option<&'a Bytes>,
        method: &'a str,
        params: Option<&'a RawJson<'a>>,
    ) -> LinkFuture<'a, LinkAnswer>;

    /// Sends a notification of `method` with `params`.
    fn notify<'a>(&'a self, method: &'a str, params: Option<&'a RawJson<'a>>) -> LinkFuture<'a, ()>;

    /// Sends `entries` as one batch: one outcome per entry, in their order (`None`: a
    /// notification sent). The default sends each on its own, one after another.
    fn batch<'a>(&'a self, entries: &'a [BatchEntry<'a>]) -> LinkBatchFuture<'a> {
        Box::pin(async move {
            let mut outcomes = Vec::with_capacity(entries.len());
            for entry in entries {
                let call = entry.call();
                outcomes.push(match entry {
                    BatchEntry::Call(_) => Some(self.call(None, call.method(), call.params()).await),
                    BatchEntry::Notify(_) => self.notify(call.method(), call.params()).await.err().map(Err),
                });
            }
            outcomes
        })
    }

    /// How many connections it made so far (the first included).
    fn connects(&self) -> u64 {
        0
    }
}

/// A connection served by a [`Peer`], made again whenever the last one has closed.
pub(crate) struct ReconnectingPeer {
    connect: Box<dyn Fn() -> Peer + Send + Sync>,
    peer: Mutex<Option<Peer>>,
    connects: AtomicU64,
}

impl ReconnectingPeer {
    pub(crate) fn new(connect: impl Fn() -> Peer + Send + Sync + 'static) -> ReconnectingPeer {
        ReconnectingPeer {
            connect: Box::new(connect),
            peer: Mutex::new(None),
            connects: AtomicU64::new(0),
        }
    }

    /// The connection to use now: the current one unless it has closed, else a new one.
    fn peer(&self) -> Peer {
        let mut current = lock_unpoisoned(&self.peer);
        if let Some(peer) = current.as_ref() {
            if peer.state() != ConnectionState::Closed {
                return peer.clone();
            }
        }
        bump(&self.connects);
        let peer = (self.connect)();
        *current = Some(peer.clone());
        peer
    }
}

impl ReconnectingPeer {
    /// [`UpstreamLink::call`], unboxed.
    pub(crate) async fn send_call(
        &self,
        method: &str,
        params: Option<&RawJson<'_>>,
    ) -> Result<LinkAnswer, LinkError> {
        let answer = RpcService::call(&self.peer().link(), RpcCall::new(method, params)).await?;
        Ok(LinkAnswer::Remote(answer))
    }

    /// [`UpstreamLink::notify`], unboxed.
    pub(crate) async fn send_notification(
        &self,
        method: &str,
        params: Option<&RawJson<'_>>,
    ) -> Result<(), LinkError> {
        self.peer()
            .notify_raw(method, params)
            .await
            .map_err(LinkError::from)
    }

    /// [`UpstreamLink::batch`]: one frame on the connection ([`Peer::batch_raw`]).
    pub(crate) async fn send_batch(&self, entries: &[BatchEntry<'_>]) -> LinkBatch {
        use crate::transport::{BatchEntry as Entry, PeerErrorKind};
        let sent: Vec<Entry<'_>> = entries
            .iter()
            .map(|entry| {
                let call = entry.call();
                match entry {
                    BatchEntry::Call(_) => Entry::call(call.method(), call.params()),
                    BatchEntry::Notify(_) => Entry::notification(call.method(), call.params()),
                }
            })
            .collect();
        let mut answers = match self.peer().batch_raw(&sent).await {
            Ok(answers) => answers.into_iter(),
            Err(error) => {
                let error = LinkError::from(error);
                return entries.iter().map(|_| Some(Err(error.clone()))).collect();
            }
        };
        let mut outcomes = Vec::with_capacity(entries.len());
        for entry in entries {
            if !entry.is_call() {
                outcomes.push(None);
                continue;
            }
            outcomes.push(Some(match answers.next() {
                Some(Ok(result)) => Ok(LinkAnswer::Remote(RemoteAnswer::Result(result))),
                Some(Err(error)) => match error.into_kind() {
                    PeerErrorKind::Remote(error) => {
                        Ok(LinkAnswer::Remote(RemoteAnswer::Error { error, text: None }))
                    }
                    kind => Err(LinkError::from(crate::transport::PeerError::from(kind))),
                },
                None => Err(no_answer_to_it()),
            }));
        }
        outcomes
    }
}

/// A call of a batch the upstream's answer had no answer to.
fn no_answer_to_it() -> LinkError {
    LinkError::new(
        LinkErrorKind::NoAnswer { status: None },
        "the upstream's answer to the batch has no answer to this call",
    )
}

impl UpstreamLink for ReconnectingPeer {
    fn call<'a>(
        &'a self,
        _frame: Option<&'a Bytes>,
        method: &'a str,
        params: Option<&'a RawJson<'a>>,
    ) -> LinkFuture<'a, LinkAnswer> {
        Box::pin(self.send_call(method, params))
    }

    fn notify<'a>(&'a self, method: &'a str, params: Option<&'a RawJson<'a>>) -> LinkFuture<'a, ()> {
        Box::pin(self.send_notification(method, params))
    }

    fn batch<'a>(&'a self, entries: &'a [BatchEntry<'a>]) -> LinkBatchFuture<'a> {
        Box::pin(self.send_batch(entries))
    }

    fn connects(&self) -> u64 {
        self.connects.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// HTTP: each request its own POST on a keep-alive connection, its answer the response to it
/// — no id to match, no connection task to hand frames to.
#[cfg(feature = "http")]
pub(crate) struct HttpLink(pub(crate) crate::transport::http::HttpClientTransport);

#[cfg(feature = "http")]
impl UpstreamLink for HttpLink {
    fn call<'a>(
        &'a self,
        frame: Option<&'a Bytes>,
        method: &'a str,
        params: Option<&'a RawJson<'a>>,
    ) -> LinkFuture<'a, LinkAnswer> {
        Box::pin(self.send_call(frame, method, params))
    }

    fn notify<'a>(&'a self, method: &'a str, params: Option<&'a RawJson<'a>>) -> LinkFuture<'a, ()> {
        Box::pin(self.send_notification(method, params))
    }

    fn batch<'a>(&'a self, entries: &'a [BatchEntry<'a>]) -> LinkBatchFuture<'a> {
        Box::pin(self.send_batch(entries))
    }
}

#[cfg(feature = "http")]
impl HttpLink {
    /// [`UpstreamLink::call`], unboxed.
    pub(crate) async fn send_call(
        &self,
        frame: Option<&Bytes>,
        method: &str,
        params: Option<&RawJson<'_>>,
    ) -> Result<LinkAnswer, LinkError> {
        let frame = match frame {
            Some(frame) if is_batch(frame) => return self.send_batch_frame(frame.clone()).await,
            Some(frame) => frame.clone(),
            None => {
                let id = crate::message::Id::from_number_text(GATEWAY_ID);
                let mut body =
                    bytes::BytesMut::with_capacity(64 + method.len() + params.map_or(0, |p| p.get().len()));
                crate::encode::write_call_raw(&mut body, Some(&id), method, params)
                    .map_err(|error| LinkError::new(LinkErrorKind::Params, error.to_string()))?;
                body.freeze()
            }
        };
        let answer = self.exchange(frame).await?;
        let not_ours = || no_answer("the upstream's answer is not a response to the call");
        let Some(answer) = answer else {
            return Err(no_answer("the upstream answered nothing"));
        };
        match response_to_gateway(&answer, self.0.max_response()) {
            Ok(answer) => Ok(answer),
            Err(reason) => non_conforming(&answer, reason).ok_or_else(not_ours),
        }
    }

    /// A client's batch frame, POSTed as it came: the upstream's answer read strictly as a
    /// batch of responses ([`LinkAnswer::Batch`]), or one error response for the whole batch
    /// ([`LinkAnswer::Frame`]).
    async fn send_batch_frame(&self, frame: Bytes) -> Result<LinkAnswer, LinkError> {
        let Some(answer) = self.exchange(frame).await? else {
            return Err(no_answer("the upstream answered nothing"));
        };
        let max_response = self.0.max_response();
        if !is_batch(&answer) {
            return match read_response(&answer, max_response) {
                Ok((answer @ LinkAnswer::Frame { error: Some(_), .. }, _)) => Ok(answer),
                _ => Err(no_answer("the upstream's answer to the batch is not a batch")),
            };
        }
        let limits = crate::parse::Limits::default()
            .with_max_size(max_response)
            .with_max_batch_len(usize::MAX);
        let not_responses = || no_answer("the upstream's answer to the batch is not a batch of responses");
        let parsed = crate::parse::Parser::new(limits)
            .parse(&answer)
            .map_err(|_| not_responses())?;
        let batch = parsed.batch().ok_or_else(not_responses)?;
        let mut ids = Vec::with_capacity(batch.len());
        for element in batch.iter() {
            let Ok(crate::message::Message::Response(response)) = element else {
                return Err(not_responses());
            };
            let range = crate::message::id_range_within(&answer, response.id()).ok_or_else(not_responses)?;
            ids.push(answer.slice(range));
        }
        Ok(LinkAnswer::Batch { answer, ids })
    }

    /// [`UpstreamLink::batch`]: one POST of the batch, its calls numbered 1, 2, … in the
    /// order of `entries`; each call gets the element of the answer with its number (answers
    /// may come in any order), or every call the answer's error when the upstream answered
    /// the batch with one error object (a batch over its limit, say).
    pub(crate) async fn send_batch(&self, entries: &[BatchEntry<'_>]) -> LinkBatch {
        let mut outcomes: LinkBatch = entries.iter().map(|_| None).collect();
        let mut body = bytes::BytesMut::with_capacity(64 * entries.len());
        let mut writer = crate::encode::BatchWriter::new(&mut body);
        let mut sent = 0;
        let mut element = bytes::BytesMut::new();
        for (index, (entry, outcome)) in entries.iter().zip(&mut outcomes).enumerate() {
            let call = entry.call();
            let number = (index + 1).to_string();
            let id = crate::message::Id::from_number_text(&number);
            let id = entry.is_call().then_some(&id);
            element.clear();
            match crate::encode::write_call_raw(&mut element, id, call.method(), call.params()) {
                Ok(()) => {
                    writer.element().extend_from_slice(&element);
                    sent += 1;
                }
                Err(error) => *outcome = Some(Err(LinkError::new(LinkErrorKind::Params, error.to_string()))),
            }
        }
        writer.finish();
        if sent == 0 {
            return outcomes;
        }
        let answer = match self.exchange(body.freeze()).await {
            Ok(answer) => answer,
            Err(error) => {
                for outcome in outcomes.iter_mut().filter(|outcome| outcome.is_none()) {
                    *outcome = Some(Err(error.clone()));
                }
                return outcomes;
            }
        };
        let answers = match answer {
            Some(answer) => batch_answers(&answer, entries, self.0.max_response()),
            None => entries.iter().map(|_| None).collect(),
        };
        for ((outcome, answer), entry) in outcomes.iter_mut().zip(answers).zip(entries) {
            if outcome.is_none() && entry.is_call() {
                *outcome = Some(answer.ok_or_else(no_answer_to_it));
            }
        }
        outcomes
    }

    /// [`UpstreamLink::notify`], unboxed.
    pub(crate) async fn send_notification(
        &self,
        method: &str,
        params: Option<&RawJson<'_>>,
    ) -> Result<(), LinkError> {
        let mut body = bytes::BytesMut::new();
        crate::encode::write_call_raw(&mut body, None, method, params)
            .map_err(|error| LinkError::new(LinkErrorKind::Params, error.to_string()))?;
        self.exchange(body.freeze()).await.map(|_| ())
    }

    /// One POST: the answer's body (`None` for 204), or the typed failure.
    async fn exchange(&self, body: Bytes) -> Result<Option<Bytes>, LinkError> {
        crate::transport::http::client::exchange(&self.0, body)
            .await
            .map_err(|failure| {
                let kind = match failure.status {
                    Some(429) => LinkErrorKind::Limited {
                        retry_after: failure.retry_after,
                    },
                    status if failure.reached => LinkErrorKind::NoAnswer { status },
                    _ => LinkErrorKind::NotReached,
                };
                let error = LinkError::new(kind, failure.reason);
                match error_answer(&failure.body) {
                    Some(said) => error.with_error(said),
                    None => error,
                }
            })
    }
}

/// The error object of `body` when it is a JSON-RPC error answer (with any id): what a
/// refusal said (a 429's limit).
#[cfg(feature = "http")]
fn error_answer(body: &Bytes) -> Option<ErrorObject<'static>> {
    use crate::message::{Message, ResponsePayload};
    if body.is_empty() {
        return None;
    }
    match crate::parse::parse(body).ok()?.single()? {
        Message::Response(response) => match response.payload() {
            ResponsePayload::Error(error) => Some(error.clone().into_owned()),
            ResponsePayload::Result(_) => None,
        },
        _ => None,
    }
}

/// Whether `frame` is a batch (its first byte that is not blank is `[`).
#[cfg(feature = "http")]
fn is_batch(frame: &[u8]) -> bool {
    frame.iter().find(|byte| !byte.is_ascii_whitespace()) == Some(&b'[')
}

/// An exchange that reached the upstream and brought back nothing usable.
#[cfg(feature = "http")]
fn no_answer(reason: &str) -> LinkError {
    LinkError::new(LinkErrorKind::NoAnswer { status: None }, reason)
}

/// `answer` as the response to a request with the gateway's id: the frame with its id's
/// place, and its result or error object; `Err` with the parser's reason when it is not such
/// a response. Answers may be as large as the response limit (blocks, traces: several MB),
/// past the parser's default size limit for requests.
#[cfg(feature = "http")]
fn response_to_gateway(answer: &Bytes, max_response: usize) -> Result<LinkAnswer, String> {
    match read_response(answer, max_response)? {
        (answer, Some(1)) => Ok(answer),
        _ => Err("not a response to the call".to_owned()),
    }
}

/// Each call's answer in `answer`, the upstream's answer to a batch whose calls were
/// numbered 1, 2, … in the order of `entries`: the element with its number (the first, when
/// the upstream answered one twice), or for every call the error of an answer that is one
/// error object; `None` where there is none.
#[cfg(feature = "http")]
fn batch_answers(answer: &Bytes, entries: &[BatchEntry<'_>], max_response: usize) -> Vec<Option<LinkAnswer>> {
    let mut answers: Vec<Option<LinkAnswer>> = entries.iter().map(|_| None).collect();
    match crate::batch_split::batch_elements(answer) {
        Some(elements) => {
            for element in elements {
                let Ok((answer, Some(number))) = read_response(&element, max_response) else {
                    continue;
                };
                let slot = usize::try_from(number)
                    .ok()
                    .and_then(|number| number.checked_sub(1));
                if let Some(slot) = slot.and_then(|slot| answers.get_mut(slot)) {
                    slot.get_or_insert(answer);
                }
            }
        }
        None => {
            if let Ok((
                LinkAnswer::Frame {
                    answer,
                    error: Some(error),
                    ..
                },
                _,
            )) = read_response(answer, max_response)
            {
                for (slot, entry) in answers.iter_mut().zip(entries) {
                    if entry.is_call() {
                        *slot = Some(LinkAnswer::Frame {
                            answer: answer.clone(),
                            result: None,
                            error: Some(error.clone()),
                        });
                    }
                }
            }
        }
    }
    answers
}

/// `answer` read as one response: the frame with its id's place, its result or error
/// object, and its id when that is a whole number (the gateway's ids are); `Err` with the
/// parser's reason when it is not a response.
#[cfg(feature = "http")]
fn read_response(answer: &Bytes, max_response: usize) -> Result<(LinkAnswer, Option<u64>), String> {
    use crate::message::{IdKind, Message, ResponsePayload};
    let limits = crate::parse::Limits::default().with_max_size(max_response);
    let parser = crate::parse::Parser::new(limits);
    let not_ours = || "not a response to the call".to_owned();
    let message = parser
        .parse(answer)
        .map_err(|error| error.to_string())?
        .single()
        .ok_or_else(not_ours)?;
    let Message::Response(response) = &message else {
        return Err(not_ours());
    };
    let id = match response.id().kind() {
        IdKind::Number => response.id().raw().parse::<u64>().ok(),
        _ => None,
    };
    let (result, error) = match response.payload() {
        ResponsePayload::Result(result) => {
            let range = crate::message::range_within(answer, result.get().as_bytes()).ok_or_else(not_ours)?;
            (Some(JsonBytes::from_validated(answer.slice(range))), None)
        }
        ResponsePayload::Error(error) => (None, Some(error.clone().into_owned())),
    };
    let answer = IdSlot::find(answer, &message).ok_or_else(not_ours)?;
    Ok((
        LinkAnswer::Frame {
            answer,
            result,
            error,
        },
        id,
    ))
}

/// An answer the strict parser refused (`reason`) read leniently: a JSON object with the
/// gateway's id and a `"result"` or an `"error"` member — what some nodes send in breach of
/// the specification (`"result":null` beside an error, both `null`). `None` for anything
/// else (not JSON, another id, neither member).
#[cfg(feature = "http")]
fn non_conforming(answer: &Bytes, reason: String) -> Option<LinkAnswer> {
    use crate::json::iter::MemberIter;
    crate::json::validate(answer).ok()?;
    let text = std::str::from_utf8(answer).ok()?;
    if !text.trim_start().starts_with('{') {
        return None;
    }
    let (mut id, mut error, mut outcome) = (None, None, false);
    for ((key, escaped), value) in MemberIter::new(text) {
        if escaped {
            continue;
        }
        match key {
            "id" if value == GATEWAY_ID => id = crate::message::range_within(answer, value.as_bytes()),
            "result" => outcome = true,
            "error" => {
                outcome = true;
                if value != "null" {
                    let range = crate::message::range_within(answer, value.as_bytes())?;
                    error = Some(JsonBytes::from_validated(answer.slice(range)));
                }
            }
            _ => {}
        }
    }
    let id = id.filter(|_| outcome)?;
    Some(LinkAnswer::NonConforming {
        answer: IdSlot::at(answer.clone(), id),
        reason,
        error,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "http")]
    #[test]
    fn answers_that_break_the_specification_are_read_leniently_or_not_at_all() {
        let read = |text: &'static str| non_conforming(&Bytes::from_static(text.as_bytes()), "why".into());
        match read(r#"{"jsonrpc":"2.0","result":null,"error":{"code":1,"message":"m"},"id":1}"#) {
            Some(LinkAnswer::NonConforming {
                answer,
                reason,
                error,
            }) => {
                assert_eq!(answer.id_text(), b"1");
                assert_eq!(reason, "why");
                assert_eq!(error.unwrap().as_str(), r#"{"code":1,"message":"m"}"#);
            }
            other => panic!("{other:?}"),
        }
        match read(r#"{"id":1,"error":null,"result":null}"#) {
            Some(LinkAnswer::NonConforming { error, .. }) => assert!(error.is_none()),
            other => panic!("{other:?}"),
        }
        for refused in [
            "not json",
            "[1]",
            r#"{"id":2,"result":null,"error":null}"#,
            r#"{"id":1,"jsonrpc":"2.0"}"#,
            r#"{"\u0069d":1,"result":null,"error":null}"#,
        ] {
            assert!(read(refused).is_none(), "{refused}");
        }
    }
}
