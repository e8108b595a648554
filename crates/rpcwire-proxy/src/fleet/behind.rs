//! The HTTP service behind a [`FleetLayer`](super::FleetLayer) as a JSON-RPC service: what its
//! layers (the rate limit, the cache) wrap. It makes one exchange per request — the body as
//! it came (with its parse) when every entry reaches it, else the entries that do, as one
//! batch — and its answers are that exchange's response.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::{BodyExt, Full};

use super::cached::CachedAnswer;
use super::rate::Refused;
use crate::message::Message;
use crate::middleware::{BatchEntry, BatchOutcome, RpcCall, RpcService};
use crate::parse::{Parsed, ParsedFrame};
use crate::sync::lock_unpoisoned;
use crate::transport::http::ParsedBody;
use crate::{batch_elements, join_batch};

/// What a call through the fleet's layers is answered with.
#[derive(Clone, Debug)]
pub(super) enum FleetAnswer {
    /// A result made by a layer (from the cache, or fetched by an identical call under way):
    /// its JSON text, to be written with the caller's id.
    Result(Bytes),
    /// Answered by the service behind, in its response (one for the entries sent together).
    Behind(Arc<Answered>),
}

/// The response of the service behind, its body read.
#[derive(Debug)]
pub(super) struct Answered {
    pub(super) head: http::response::Parts,
    pub(super) body: Bytes,
}

impl CachedAnswer for FleetAnswer {
    fn from_result(result: Bytes) -> FleetAnswer {
        FleetAnswer::Result(result)
    }

    /// The result for `call` in the response behind: the whole body for a single call, the
    /// answer with `call`'s id among a batch's; none from a response other than `200`.
    fn result_for(&self, call: &RpcCall<'_>) -> Option<Bytes> {
        let answered = match self {
            FleetAnswer::Result(result) => return Some(result.clone()),
            FleetAnswer::Behind(answered) => answered,
        };
        if answered.head.status != http::StatusCode::OK {
            return None;
        }
        let result_of = |answer: &Bytes| match crate::parse(answer) {
            Ok(Parsed::Single(Message::Response(response))) if response.error_object().is_none() => {
                let matches = call.id().map_or(true, |id| response.id() == id);
                let result = response.result().filter(|_| matches)?;
                Some(crate::message::JsonBytes::slice_of(answer, result).into_bytes())
            }
            _ => None,
        };
        match batch_elements(&answered.body) {
            Some(answers) => answers.iter().find_map(result_of),
            None => result_of(&answered.body),
        }
    }
}

/// The service behind, for one request: its parts, its body and the body's parse, used by
/// the one exchange.
pub(super) struct Behind<S> {
    exchange: Mutex<Option<Exchange<S>>>,
    /// How many entries the body holds.
    entries: usize,
    /// The response of the exchange, once made.
    answered: Mutex<Option<Arc<Answered>>>,
}

struct Exchange<S> {
    inner: S,
    parts: http::request::Parts,
    body: Bytes,
    parsed: Option<ParsedBody>,
}

impl<S> Behind<S>
where
    S: tower_service::Service<Request<Full<Bytes>>, Response = Response<Full<Bytes>>, Error = Infallible>,
{
    /// The service `inner` for the request of `parts` and `body` (`entries` calls and
    /// notifications; its parse, when there is one, handed on with it).
    pub(super) fn new(
        inner: S,
        parts: http::request::Parts,
        body: Bytes,
        parsed: Option<(ParsedFrame, crate::parse::Limits)>,
        entries: usize,
    ) -> Behind<S> {
        let parsed = parsed.map(|(frame, limits)| ParsedBody::new(frame, limits));
        Behind {
            exchange: Mutex::new(Some(Exchange {
                inner,
                parts,
                body,
                parsed,
            })),
            entries,
            answered: Mutex::new(None),
        }
    }

    /// The response of the exchange, once made (its only holder when the answers that
    /// share it are gone, so that it is passed on without a copy).
    pub(super) fn into_answered(self) -> Option<Arc<Answered>> {
        self.answered
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Sends the body as it came (with its parse), or `frames` as one batch instead.
    async fn send(&self, frames: Option<Vec<Bytes>>) -> Arc<Answered> {
        let exchange = lock_unpoisoned(&self.exchange).take();
        let Some(Exchange {
            mut inner,
            mut parts,
            body,
            parsed,
        }) = exchange
        else {
            // One exchange per request: the layers never ask twice.
            return Arc::new(Answered {
                head: Response::new(()).into_parts().0,
                body: Bytes::new(),
            });
        };
        let body = match frames {
            Some(frames) => join_batch(&frames),
            None => {
                if let Some(parsed) = parsed {
                    parts.extensions.insert(parsed);
                }
                body
            }
        };
        let response = match inner.call(Request::from_parts(parts, Full::new(body))).await {
            Ok(response) => response,
            Err(never) => match never {},
        };
        let (head, mut body) = response.into_parts();
        // A `Full` body is one frame.
        let body = match body.frame().await {
            Some(Ok(frame)) => frame.into_data().unwrap_or_default(),
            _ => Bytes::new(),
        };
        let answered = Arc::new(Answered { head, body });
        *lock_unpoisoned(&self.answered) = Some(answered.clone());
        answered
    }
}

impl<S> RpcService for Behind<S>
where
    S: tower_service::Service<Request<Full<Bytes>>, Response = Response<Full<Bytes>>, Error = Infallible>
        + Send,
    S::Future: Send,
{
    type Answer = FleetAnswer;
    type Error = Refused;

    async fn call(&self, call: RpcCall<'_>) -> Result<FleetAnswer, Refused> {
        allowed(&call);
        Ok(FleetAnswer::Behind(self.send(None).await))
    }

    async fn notify(&self, call: RpcCall<'_>) -> Result<(), Refused> {
        allowed(&call);
        self.send(None).await;
        Ok(())
    }

    async fn batch<'a>(&'a self, entries: &'a [BatchEntry<'a>]) -> Vec<BatchOutcome<FleetAnswer, Refused>> {
        for entry in entries {
            allowed(&entry.call());
        }
        let frames = (entries.len() != self.entries).then(|| {
            entries
                .iter()
                .filter_map(|entry| entry.call().frame().cloned())
                .collect()
        });
        let answered = self.send(frames).await;
        entries
            .iter()
            .map(|entry| entry.is_call().then(|| Ok(FleetAnswer::Behind(answered.clone()))))
            .collect()
    }
}

/// `call` reaches the service behind: counted for its caller's key.
fn allowed(call: &RpcCall<'_>) {
    if let Some(key) = call.extension::<super::ApiKey>() {
        super::metrics::request(key.label(), "allowed");
    }
}
