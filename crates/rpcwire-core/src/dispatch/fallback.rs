//! `Fallback` (`tokio` feature): what answers the requests and notifications a [`Router`]
//! does not serve itself, from the frame they came in — in the spirit of axum's
//! `fallback_service`. A gateway implements it once and every transport reaches it through
//! the [`Responder`](super::Responder).
//!
//! [`Router`]: super::Router

use std::future::Future;
use std::pin::Pin;

use bytes::Bytes;

use super::context::RequestContext;
use crate::message::{id_range_within, ErrorObject, Id, JsonBytes, Params};

/// What a [`Fallback`] answers a request with.
///
/// ```
/// use rpcwire_core::dispatch::FallbackAnswer;
/// let answer = FallbackAnswer::Error(rpcwire_core::ErrorObject::new(-32000, "no"));
/// assert!(matches!(answer, FallbackAnswer::Error(_)));
/// ```
#[derive(Debug)]
pub enum FallbackAnswer {
    /// The result's JSON text: the router writes the response around it, with the
    /// request's id.
    Result(JsonBytes),
    /// An error object: the router writes the response around it, with the request's id.
    Error(ErrorObject<'static>),
    /// An error object's JSON text as another server wrote it (its members, their order,
    /// its escapes: a gateway's upstream error), written as it is in the response around it,
    /// with the request's id; `error` is the same object decoded, for whoever reads the code.
    ErrorText {
        /// The error object, decoded.
        error: ErrorObject<'static>,
        /// Its JSON text, written as it is.
        text: JsonBytes,
    },
    /// A whole response object that already carries the request's exact id (a gateway's
    /// upstream answer with the client's id put back): written as it is, alone or as an
    /// element of the batch's answer.
    Response(Bytes),
    /// An error object saying that a limit was reached (a gateway's upstreams all over
    /// their rate limits, say), and how long the client should wait before asking again:
    /// written like [`Error`](FallbackAnswer::Error); over HTTP a request alone in its body
    /// is answered `429 Too Many Requests` with `Retry-After` (see
    /// [`WholeAnswer::retry_after`](super::WholeAnswer::retry_after)).
    ///
    /// ```
    /// use std::time::Duration;
    /// use rpcwire_core::dispatch::FallbackAnswer;
    /// let answer = FallbackAnswer::Limited {
    ///     error: rpcwire_core::ErrorObject::new(rpcwire_core::codes::LIMIT_EXCEEDED, "rate limit reached"),
    ///     retry_after: Duration::from_secs(2),
    /// };
    /// assert!(matches!(answer, FallbackAnswer::Limited { .. }));
    /// ```
    Limited {
        /// The error object the request is answered with.
        error: ErrorObject<'static>,
        /// How long the client should wait before asking again.
        retry_after: std::time::Duration,
    },
}

/// The future a [`Fallback`] gives: the answer (dropped for a notification).
pub type FallbackFuture = Pin<Box<dyn Future<Output = FallbackAnswer> + Send>>;

/// The future [`Fallback::batch`] gives.
pub type FallbackBatchFuture = Pin<Box<dyn Future<Output = FallbackBatchAnswer> + Send>>;

/// What [`Fallback::batch`] answers a batch's calls with.
///
/// ```
/// use rpcwire_core::dispatch::{FallbackAnswer, FallbackBatchAnswer};
/// let each = FallbackBatchAnswer::Each(vec![FallbackAnswer::Error(rpcwire_core::ErrorObject::new(-32000, "no"))]);
/// let whole = FallbackBatchAnswer::Whole(bytes::Bytes::from_static(br#"[{"jsonrpc":"2.0","id":1,"result":0}]"#));
/// # let _ = (each, whole);
/// ```
#[derive(Debug)]
pub enum FallbackBatchAnswer {
    /// One answer per call, in the calls' order (those of notifications dropped; a missing
    /// one is answered -32603).
    Each(Vec<FallbackAnswer>),
    /// The batch's whole answer, written as it is: a JSON array with one response to each
    /// request of the batch, in any order (as JSON-RPC 2.0 allows) — a forwarder's upstream
    /// answer to the batch it sent on as it came. Only for a batch the router handed whole
    /// ([`FallbackCall::whole_batch`]); otherwise every request is answered -32603.
    Whole(Bytes),
}

/// Answers what a router does not serve itself: every request and notification for a
/// method nobody registered, alone or inside a batch, gets here with the frame it came in
/// (see [`FallbackCall`]). Set with [`Router::fallback`](super::Router::fallback).
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use rpcwire_core::dispatch::{Fallback, FallbackAnswer, FallbackCall, FallbackFuture, Router};
///
/// struct Echo;
/// impl Fallback for Echo {
///     fn call(&self, call: FallbackCall<'_>) -> FallbackFuture {
///         let params = call.params_bytes();
///         Box::pin(async move {
///             match params {
///                 Some(params) => FallbackAnswer::Result(params),
///                 None => FallbackAnswer::Error(rpcwire_core::ErrorObject::invalid_params("none")),
///             }
///         })
///     }
/// }
/// let mut router = Router::new();
/// router.fallback(Echo);
/// let mut out = bytes::BytesMut::new();
/// router.handle_async(br#"{"jsonrpc":"2.0","id":7,"method":"any","params":[1.50]}"#, &mut out).await;
/// assert_eq!(&out[..], br#"{"jsonrpc":"2.0","id":7,"result":[1.50]}"#);
/// # });
/// ```
pub trait Fallback: Send + Sync + 'static {
    /// Starts answering `call`. The future runs under the serving side's supervision (its
    /// cancellation, the handler timeout); a panic in it is answered -32603.
    fn call(&self, call: FallbackCall<'_>) -> FallbackFuture;

    /// Starts answering together the requests and notifications of one batch that the
    /// router does not serve itself, `calls` in the batch's order (what the router serves
    /// itself is answered as usual, and every answer goes back in the batch's order): a
    /// forwarder sends them on as one batch. The future gives one answer per call, in their
    /// order, or — when the router handed it the batch whole ([`FallbackCall::whole_batch`]) —
    /// the batch's whole answer (see [`FallbackBatchAnswer`]). It runs
    /// under the serving side's abort and handler timeout as one, and a panic in it answers
    /// every request -32603; a request cancelled by the other side is answered with the
    /// rest. `None`, the default: each is answered on its own by [`call`](Fallback::call).
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// use rpcwire_core::dispatch::{Fallback, FallbackAnswer, FallbackBatchAnswer, FallbackBatchFuture, FallbackCall, FallbackFuture, Router};
    /// use rpcwire_core::dispatch::NoParams;
    ///
    /// /// Answers how many calls came together with it.
    /// struct Together;
    /// impl Fallback for Together {
    ///     fn call(&self, _: FallbackCall<'_>) -> FallbackFuture {
    ///         Box::pin(async { FallbackAnswer::Result(rpcwire_core::RawJson::new("1").unwrap().into()) })
    ///     }
    ///     fn batch(&self, calls: &[FallbackCall<'_>]) -> Option<FallbackBatchFuture> {
    ///         let count = rpcwire_core::RawJson::new(calls.len().to_string()).unwrap().into_owned();
    ///         let answers = calls.iter().map(|_| FallbackAnswer::Result(count.clone().into())).collect();
    ///         Some(Box::pin(async move { FallbackBatchAnswer::Each(answers) }))
    ///     }
    /// }
    /// let mut router = Router::new();
    /// router.method("local", |_: NoParams| Ok("here"));
    /// router.fallback(Together);
    /// let mut out = bytes::BytesMut::new();
    /// let batch = br#"[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","id":2,"method":"local"},{"jsonrpc":"2.0","id":3,"method":"b"}]"#;
    /// router.handle_async(batch, &mut out).await;
    /// assert_eq!(&out[..], br#"[{"jsonrpc":"2.0","id":1,"result":2},{"jsonrpc":"2.0","id":2,"result":"here"},{"jsonrpc":"2.0","id":3,"result":2}]"#);
    /// # });
    /// ```
    fn batch(&self, calls: &[FallbackCall<'_>]) -> Option<FallbackBatchFuture> {
        let _ = calls;
        None
    }
}

/// A fallback shared (the router holds it once for single calls and once for batches).
impl<F: Fallback + ?Sized> Fallback for std::sync::Arc<F> {
    fn call(&self, call: FallbackCall<'_>) -> FallbackFuture {
        (**self).call(call)
    }

    fn batch(&self, calls: &[FallbackCall<'_>]) -> Option<FallbackBatchFuture> {
        (**self).batch(calls)
    }
}

/// A request or notification as a [`Fallback`] gets it: the method, the id, the params,
/// and the frame they were parsed from when the transport holds it as `Bytes` (the `Peer`,
/// the HTTP service, the blocking loop), so that everything can be passed on as slices of
/// it, nothing copied or encoded again.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use rpcwire_core::dispatch::{Fallback, FallbackAnswer, FallbackCall, FallbackFuture, Responder, Router, Answer};
///
/// struct IdText;
/// impl Fallback for IdText {
///     fn call(&self, call: FallbackCall<'_>) -> FallbackFuture {
///         assert!(call.is_alone() && call.frame().is_some());
///         let text = call.id_text().unwrap();
///         let text = rpcwire_core::RawJson::new(std::str::from_utf8(&text).unwrap()).unwrap().into_owned();
///         Box::pin(async move { FallbackAnswer::Result(text.into()) })
///     }
/// }
/// let mut router = Router::new();
/// router.fallback(IdText);
/// let frame = bytes::Bytes::from_static(br#"{"jsonrpc":"2.0","id":1.50,"method":"m"}"#);
/// let mut out = bytes::BytesMut::new();
/// let Answer::Pending(pending) = Responder::new().respond(&router, &frame, &mut out) else { panic!() };
/// pending.answer(&router, &mut out).await;
/// assert_eq!(&out[..], br#"{"jsonrpc":"2.0","id":1.50,"result":1.50}"#);
/// # });
/// ```
pub struct FallbackCall<'a> {
    pub(crate) method: &'a str,
    pub(crate) id: Option<&'a Id<'a>>,
    pub(crate) params: Option<Params<'a>>,
    pub(crate) frame: Option<&'a Bytes>,
    pub(crate) alone: bool,
    /// Set for the calls of a batch handed to the fallback whole.
    pub(crate) whole: bool,
    pub(crate) context: Option<RequestContext>,
}

impl std::fmt::Debug for FallbackCall<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FallbackCall")
            .field("method", &self.method)
            .field("id", &self.id)
            .field("alone", &self.alone)
            .finish()
    }
}

impl<'a> FallbackCall<'a> {
    /// The method called.
    pub fn method(&self) -> &'a str {
        self.method
    }

    /// The request's id; `None` for a notification.
    pub fn id(&self) -> Option<&'a Id<'a>> {
        self.id
    }

    /// Whether this is a notification (its answer is dropped).
    pub fn is_notification(&self) -> bool {
        self.id.is_none()
    }

    /// The lazy params view, `None` when there were none.
    pub fn params(&self) -> Option<Params<'a>> {
        self.params
    }

    /// The params as validated JSON in `Bytes`: a slice of the frame when it is at hand,
    /// a copy otherwise.
    pub fn params_bytes(&self) -> Option<JsonBytes> {
        let params = self.params?;
        Some(match self.frame {
            Some(frame) => JsonBytes::slice_of(frame, &params.raw()),
            None => JsonBytes::from(params.raw()),
        })
    }

    /// The id's exact JSON text (a string with its quotes and escapes, `1.50` as it came):
    /// a slice of the frame when it is at hand, a copy otherwise. `None` for a notification.
    pub fn id_text(&self) -> Option<Bytes> {
        let id = self.id?;
        if let Some(frame) = self.frame {
            if let Some(range) = id_range_within(frame, id) {
                return Some(frame.slice(range));
            }
        }
        Some(Bytes::from(id.json_parts().concat().into_bytes()))
    }

    /// The whole frame this message came in, when it is at hand as `Bytes` and holds this
    /// message alone (not a batch): a forwarder can send it on with only its id changed.
    pub fn frame(&self) -> Option<&'a Bytes> {
        self.frame.filter(|_| self.alone)
    }

    /// Whether the message came alone in its frame (not inside a batch).
    pub fn is_alone(&self) -> bool {
        self.alone
    }

    /// The whole batch frame, when this call is one of a batch whose every element the router
    /// handed to the fallback's [`batch`](Fallback::batch) (none served by the router itself,
    /// none that is not a message): a forwarder may send the frame on as it is and answer
    /// with the upstream's answer whole ([`FallbackBatchAnswer::Whole`]). `None` otherwise.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// use rpcwire_core::dispatch::{Fallback, FallbackAnswer, FallbackBatchAnswer, FallbackBatchFuture, FallbackCall, FallbackFuture, Router};
    /// /// Answers a whole batch with a fixed answer to its one request.
    /// struct Whole;
    /// impl Fallback for Whole {
    ///     fn call(&self, _: FallbackCall<'_>) -> FallbackFuture {
    ///         Box::pin(async { FallbackAnswer::Error(rpcwire_core::ErrorObject::new(-32000, "alone")) })
    ///     }
    ///     fn batch(&self, calls: &[FallbackCall<'_>]) -> Option<FallbackBatchFuture> {
    ///         calls[0].whole_batch()?;
    ///         let answer = bytes::Bytes::from_static(br#"[{"jsonrpc":"2.0","id":7,"result":"whole"}]"#);
    ///         Some(Box::pin(async move { FallbackBatchAnswer::Whole(answer) }))
    ///     }
    /// }
    /// let mut router = Router::new();
    /// router.fallback(Whole);
    /// let mut out = bytes::BytesMut::new();
    /// router.handle_async(br#"[{"jsonrpc":"2.0","id":7,"method":"m"},{"jsonrpc":"2.0","method":"n"}]"#, &mut out).await;
    /// assert_eq!(&out[..], br#"[{"jsonrpc":"2.0","id":7,"result":"whole"}]"#);
    /// # });
    /// ```
    pub fn whole_batch(&self) -> Option<&'a Bytes> {
        self.frame.filter(|_| self.whole)
    }

    /// The frame's bytes the message came in, a batch included (`None` when the transport
    /// did not hold it as `Bytes`): the method's, params' and id's texts are slices of it.
    pub fn bytes(&self) -> Option<&'a Bytes> {
        self.frame
    }

    /// Takes the serving side's context of this request (its cancellation token, the link
    /// back to the other side under a `Peer`), when it made one.
    pub fn take_context(&mut self) -> Option<RequestContext> {
        self.context.take()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use bytes::BytesMut;

    use super::*;
    use crate::dispatch::{Answer, Responder, Router};

    /// What a fallback saw of each call.
    #[derive(Debug, Default, Clone, PartialEq)]
    struct Seen {
        method: String,
        notification: bool,
        alone: bool,
        whole_frame: bool,
        bytes: bool,
        id_text: Option<String>,
        params: Option<String>,
        params_in_frame: bool,
        context: bool,
    }

    struct Recording(Arc<Mutex<Vec<Seen>>>);

    impl Fallback for Recording {
        fn call(&self, mut call: FallbackCall<'_>) -> FallbackFuture {
            let params = call.params_bytes();
            let params_in_frame = match (call.bytes(), &params) {
                (Some(frame), Some(params)) => {
                    let (start, end) = (frame.as_ptr() as usize, frame.as_ptr() as usize + frame.len());
                    (start..end).contains(&(params.as_ptr() as usize))
                }
                _ => false,
            };
            assert_eq!(call.params().map(|p| p.raw().get().to_owned()), params.as_ref().map(|p| p.to_string()));
            self.0.lock().unwrap().push(Seen {
                method: call.method().to_owned(),
                notification: call.is_notification(),
                alone: call.is_alone(),
                whole_frame: call.frame().is_some(),
                bytes: call.bytes().is_some(),
                id_text: call.id_text().map(|t| String::from_utf8(t.to_vec()).unwrap()),
                params: params.as_ref().map(|p| p.to_string()),
                params_in_frame,
                context: call.take_context().is_some(),
            });
            assert!(format!("{call:?}").contains("FallbackCall"));
            let id = call.id().map(|id| id.to_string());
            Box::pin(async move {
                match id.as_deref() {
                    Some("\"err\"") => FallbackAnswer::Error(ErrorObject::new(-1, "no")),
                    _ => FallbackAnswer::Result(JsonBytes::from_validated(Bytes::from_static(b"true"))),
                }
            })
        }
    }

    fn router() -> (Router, Arc<Mutex<Vec<Seen>>>) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let mut router = Router::new();
        router.fallback(Recording(seen.clone()));
        (router, seen)
    }

    fn run<F: Future>(future: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(future)
    }

    #[test]
    fn a_lone_request_sees_its_frame_and_slices_of_it() {
        let (router, seen) = router();
        let frame = Bytes::from_static(br#"{"jsonrpc":"2.0","id":"\u00e9","method":"m","params":[1.50]}"#);
        let mut out = BytesMut::new();
        let Answer::Pending(pending) = Responder::new().respond(&router, &frame, &mut out) else {
            panic!("the fallback is async");
        };
        assert!(run(pending.answer(&router, &mut out)));
        assert_eq!(&out[..], br#"{"jsonrpc":"2.0","id":"\u00e9","result":true}"#);
        let seen = seen.lock().unwrap()[0].clone();
        assert_eq!(
            seen,
            Seen {
                method: "m".into(),
                notification: false,
                alone: true,
                whole_frame: true,
                bytes: true,
                id_text: Some(r#""\u00e9""#.into()),
                params: Some("[1.50]".into()),
                params_in_frame: true,
                context: false,
            }
        );
    }

    #[test]
    fn batch_elements_and_copied_input_are_seen_as_such() {
        let (router, seen) = router();
        let mut out = BytesMut::new();
        let input = br#"[{"jsonrpc":"2.0","id":null,"method":"a"},{"jsonrpc":"2.0","method":"n","params":{"x":1}},{"jsonrpc":"2.0","id":"err","method":"b"}]"#;
        // `handle_async` copies its input into `Bytes` once: elements are slices of that.
        assert!(run(router.handle_async(input, &mut out)));
        assert_eq!(
            &out[..],
            br#"[{"jsonrpc":"2.0","id":null,"result":true},{"jsonrpc":"2.0","id":"err","error":{"code":-1,"message":"no"}}]"#
        );
        let seen = seen.lock().unwrap().clone();
        assert_eq!(seen.len(), 3);
        assert!(seen.iter().all(|s| !s.alone && !s.whole_frame && s.bytes));
        // `null` has no text of its own in the frame: written.
        assert_eq!(seen[0].id_text.as_deref(), Some("null"));
        assert!(seen[1].notification && seen[1].id_text.is_none());
        assert_eq!(seen[1].params.as_deref(), Some(r#"{"x":1}"#));
        assert!(seen[1].params_in_frame);
    }
}
