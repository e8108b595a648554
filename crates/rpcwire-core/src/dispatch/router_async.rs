//! The [`Router`]'s async side (`tokio` feature): registering async, blocking and raw async
//! handlers and the fallback, and answering what needs an await.

use std::future::Future;
use std::pin::Pin;

use bytes::{Bytes, BytesMut};
use serde::de::DeserializeOwned;
use serde::Serialize;

use super::Router;
use crate::dispatch::context::{RequestContext, Supervision};
use crate::dispatch::deferred::{Deferred, Finished};
use crate::sync::join_in_order;
use crate::dispatch::fallback_batch::{BatchFinished, FallbackBatch};
use crate::dispatch::responder::WholeAnswer;
use rpcwire_wire::error_answer::write_parse_error;
use crate::dispatch::fallback::Fallback;
use crate::dispatch::handler::{self, AsyncHandler, Handler};
use crate::dispatch::raw_call::RawCall;
use crate::dispatch::target::Target;
use crate::encode::BatchWriter;
use crate::message::{ErrorObject, Message, Notification, Request};
use crate::parse::Parsed;

/// A request for an async handler on the synchronous path: answered -32603.
pub(super) fn refuse_request(f: &AsyncHandler, request: &Request<'_>, dst: &mut BytesMut) {
    Deferred::start(f, request, None, false, &Supervision::default()).refuse(dst)
}

/// A notification for an async handler on the synchronous path: run on the current runtime
/// if there is one, nobody waiting for it.
pub(super) fn refuse_notification(f: &AsyncHandler, notification: &Notification<'_>, dst: &mut BytesMut) {
    Deferred::start_notification(f, notification, None, false, &Supervision::default()).refuse(dst)
}

impl Router {
    /// Registers an async request handler (`tokio` feature): params are decoded into `P`
    /// with serde before the future starts, the future's result is serialized when it
    /// completes. Only [`handle_async`](Router::handle_async) awaits it.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let mut router = rpcwire_core::dispatch::Router::new();
    /// router.method_async("double", |(x,): (i64,)| async move { Ok(x * 2) });
    /// let mut out = bytes::BytesMut::new();
    /// router.handle_async(br#"{"jsonrpc":"2.0","method":"double","params":[21],"id":1}"#, &mut out).await;
    /// assert_eq!(&out[..], br#"{"jsonrpc":"2.0","id":1,"result":42}"#);
    /// # });
    /// ```
    pub fn method_async<P, R, F, Fut>(&mut self, name: &str, f: F) -> &mut Router
    where
        P: DeserializeOwned,
        R: Serialize,
        F: Fn(P) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, ErrorObject<'static>>> + Send + 'static,
    {
        self.register(name, Handler::Async(handler::typed_async(f)))
    }

    /// Registers an async request handler that also takes the request's
    /// [`RequestContext`] (`tokio` feature): its id and method, a cancellation token that
    /// fires when the other side cancels it, and, under a [`Peer`](crate::transport::Peer),
    /// a link for calls and notifications back (progress). Otherwise as
    /// [`method_async`](Router::method_async).
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use rpcwire_core::dispatch::{RequestContext, Router};
    /// let mut router = Router::new();
    /// router.method_async_with_context("wait", |(ms,): (u64,), cx: RequestContext| async move {
    ///     tokio::select! {
    ///         () = tokio::time::sleep(std::time::Duration::from_millis(ms)) => Ok(ms),
    ///         () = cx.cancelled() => Err(rpcwire_core::ErrorObject::new(-32800, "cancelled")),
    ///     }
    /// });
    /// let mut out = bytes::BytesMut::new();
    /// router.handle_async(br#"{"jsonrpc":"2.0","method":"wait","params":[1],"id":1}"#, &mut out).await;
    /// assert_eq!(&out[..], br#"{"jsonrpc":"2.0","id":1,"result":1}"#);
    /// # });
    /// ```
    pub fn method_async_with_context<P, R, F, Fut>(&mut self, name: &str, f: F) -> &mut Router
    where
        P: DeserializeOwned,
        R: Serialize,
        F: Fn(P, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, ErrorObject<'static>>> + Send + 'static,
    {
        self.register(name, Handler::Async(handler::typed_async_with_context(f)))
    }

    /// Registers an async method that reads its params as they came (validated, not decoded)
    /// with the request's context, and decides itself how to decode them before its future
    /// starts — for a method whose params take more than one shape (MCP serves a request of
    /// the stateless revision, which carries its `_meta`, beside the session's). An error
    /// returned at once answers the request without running a future.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let mut router = rpcwire_core::dispatch::Router::new();
    /// router.params_method_async_with_context("len", |params, _cx| {
    ///     let len = params.map_or(0, |params| params.as_str().len());
    ///     Ok(async move { Ok(len) })
    /// });
    /// let mut out = bytes::BytesMut::new();
    /// router.handle_async(br#"{"jsonrpc":"2.0","id":1,"method":"len","params":[1,2]}"#, &mut out).await;
    /// assert_eq!(&out[..], br#"{"jsonrpc":"2.0","id":1,"result":5}"#);
    /// # });
    /// ```
    pub fn params_method_async_with_context<R, F, Fut>(&mut self, name: &str, f: F) -> &mut Router
    where
        R: Serialize,
        F: for<'p> Fn(Option<crate::message::Params<'p>>, RequestContext) -> Result<Fut, ErrorObject<'static>> + Send + Sync + 'static,
        Fut: Future<Output = Result<R, ErrorObject<'static>>> + Send + 'static,
    {
        self.register(name, Handler::Async(handler::params_async_with_context(f)))
    }

    /// Registers a synchronous handler that may block (`tokio` feature): it runs on
    /// tokio's blocking threads (`spawn_blocking`), off the task that reads the connection,
    /// so a slow one holds up neither other requests nor the answers to this side's own
    /// calls. It takes the request's [`RequestContext`]; a long computation should look at
    /// [`is_cancelled`](RequestContext::is_cancelled) now and then. Answered through
    /// [`handle_async`](Router::handle_async) and the async servers, as async handlers are.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let mut router = rpcwire_core::dispatch::Router::new();
    /// router.method_blocking("hash", |(text,): (String,), cx: rpcwire_core::dispatch::RequestContext| {
    ///     let mut h = 0u64;
    ///     for byte in text.bytes() {
    ///         if cx.is_cancelled() {
    ///             return Err(rpcwire_core::ErrorObject::new(-32800, "cancelled"));
    ///         }
    ///         h = h.wrapping_mul(31).wrapping_add(u64::from(byte));
    ///     }
    ///     Ok(h)
    /// });
    /// let mut out = bytes::BytesMut::new();
    /// router.handle_async(br#"{"jsonrpc":"2.0","method":"hash","params":["ab"],"id":1}"#, &mut out).await;
    /// assert_eq!(&out[..], br#"{"jsonrpc":"2.0","id":1,"result":3105}"#);
    /// # });
    /// ```
    pub fn method_blocking<P, R, F>(&mut self, name: &str, f: F) -> &mut Router
    where
        P: DeserializeOwned + Send + 'static,
        R: Serialize + Send + 'static,
        F: Fn(P, RequestContext) -> Result<R, ErrorObject<'static>> + Send + Sync + 'static,
    {
        self.register(name, Handler::Async(handler::blocking(f)))
    }

    /// Registers a raw async request handler (`tokio` feature): it gets a [`RawCall`] — the
    /// method and the params as [`JsonBytes`](crate::JsonBytes), a slice of the received
    /// frame where the transport has it as `Bytes` — and answers with the result's JSON,
    /// written as it is. For handlers that pass params and results on without decoding them
    /// (proxies, gateways). A notification for it runs it too, its result dropped.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// use rpcwire_core::dispatch::{RawCall, Router};
    /// let mut router = Router::new();
    /// router.raw_method_async("first", |call: RawCall| async move {
    ///     let params = call.params().ok_or_else(|| rpcwire_core::ErrorObject::invalid_params("none"))?;
    ///     let first: serde_json::Value = params.decode::<Vec<serde_json::Value>>().map_err(rpcwire_core::ErrorObject::invalid_params)?[0].clone();
    ///     Ok(rpcwire_core::RawJson::from_value(&first).unwrap().into())
    /// });
    /// let mut out = bytes::BytesMut::new();
    /// router.handle_async(br#"{"jsonrpc":"2.0","id":1,"method":"first","params":[7,8]}"#, &mut out).await;
    /// assert_eq!(&out[..], br#"{"jsonrpc":"2.0","id":1,"result":7}"#);
    /// # });
    /// ```
    pub fn raw_method_async<F, Fut>(&mut self, name: &str, f: F) -> &mut Router
    where
        F: Fn(RawCall) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<crate::message::JsonBytes, ErrorObject<'static>>> + Send + 'static,
    {
        self.register(name, Handler::Async(handler::raw_async(f)))
    }

    /// Sets the handler for every method not registered (`tokio` feature), requests and
    /// notifications alike, instead of answering -32601: a raw async handler as in
    /// [`raw_method_async`](Router::raw_method_async), which sees the method in the
    /// [`RawCall`]. What a gateway forwards everything it does not serve itself with.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// use rpcwire_core::dispatch::{RawCall, Router};
    /// let mut router = Router::new();
    /// router.method("local", |_: rpcwire_core::dispatch::NoParams| Ok("here"));
    /// router.fallback_async(|call: RawCall| async move {
    ///     Err(rpcwire_core::ErrorObject::new(-32000, format!("would forward {}", call.method())))
    /// });
    /// let mut out = bytes::BytesMut::new();
    /// router.handle_async(br#"[{"jsonrpc":"2.0","id":1,"method":"local"},{"jsonrpc":"2.0","id":2,"method":"eth_call"}]"#, &mut out).await;
    /// assert_eq!(&out[..], br#"[{"jsonrpc":"2.0","id":1,"result":"here"},{"jsonrpc":"2.0","id":2,"error":{"code":-32000,"message":"would forward eth_call"}}]"#);
    /// # });
    /// ```
    pub fn fallback_async<F, Fut>(&mut self, f: F) -> &mut Router
    where
        F: Fn(RawCall) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<crate::message::JsonBytes, ErrorObject<'static>>> + Send + 'static,
    {
        if self.fallback.is_none() {
            self.async_handlers += 1;
        }
        self.fallback = Some(Handler::Async(handler::raw_async(f)));
        self.batch_fallback = None;
        self
    }

    /// Sets what answers every request and notification for a method not registered
    /// (`tokio` feature), alone or inside a batch: a [`Fallback`], which gets the frame the
    /// message came in (see [`FallbackCall`](crate::dispatch::FallbackCall)) — a gateway's forwarding.
    /// Replaces a fallback set before.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// use rpcwire_core::dispatch::{Fallback, FallbackAnswer, FallbackCall, FallbackFuture, Router};
    /// struct Refuse;
    /// impl Fallback for Refuse {
    ///     fn call(&self, call: FallbackCall<'_>) -> FallbackFuture {
    ///         let error = rpcwire_core::ErrorObject::new(-32000, format!("would forward {}", call.method()));
    ///         Box::pin(async move { FallbackAnswer::Error(error) })
    ///     }
    /// }
    /// let mut router = Router::new();
    /// router.fallback(Refuse);
    /// let mut out = bytes::BytesMut::new();
    /// router.handle_async(br#"{"jsonrpc":"2.0","id":2,"method":"eth_call"}"#, &mut out).await;
    /// assert_eq!(&out[..], br#"{"jsonrpc":"2.0","id":2,"error":{"code":-32000,"message":"would forward eth_call"}}"#);
    /// # });
    /// ```
    pub fn fallback(&mut self, fallback: impl Fallback) -> &mut Router {
        if self.fallback.is_none() {
            self.async_handlers += 1;
        }
        let fallback = std::sync::Arc::new(fallback);
        self.fallback = Some(Handler::Async(handler::fallback(fallback.clone())));
        self.batch_fallback = Some(fallback);
        self
    }

    /// [`answer_parsed`](Router::answer_parsed), awaiting async handlers; `frame` is what
    /// `parsed` was parsed from, when the caller has it as `Bytes`. `Some`: the batch's whole
    /// answer as the fallback gave it (nothing written to `out`).
    pub(crate) async fn answer_parsed_async(
        &self,
        parsed: Parsed<'_>,
        frame: Option<&Bytes>,
        serving: &Supervision,
        out: &mut BytesMut,
    ) -> Option<Bytes> {
        if !self.needs_async(&parsed) {
            self.answer_parsed(parsed, out);
            return None;
        }
        match parsed {
            Parsed::Single(message) => {
                self.answer_async(&message, frame, serving, &mut Target::Single(out))
                    .await;
            }
            Parsed::Batch(batch) => {
                // The elements bound to async handlers run at the same time — those for a
                // fallback that takes batches together, as one; then every answer is written
                // in the batch's order (synchronous handlers run then).
                let elements: Vec<_> = batch.iter().collect();
                let (together, mut to_fallback) = self.fallback_batch(&elements, frame);
                let mut running: Vec<Pin<Box<dyn Future<Output = Finished<'_>> + Send + '_>>> = Vec::new();
                let mut is_async = Vec::with_capacity(elements.len());
                for (element, to_fallback) in elements.iter().zip(&to_fallback) {
                    let deferred = element
                        .as_ref()
                        .ok()
                        .filter(|_| !to_fallback)
                        .and_then(|message| self.deferred(message, frame, false, serving));
                    is_async.push(deferred.is_some());
                    if let Some(deferred) = deferred {
                        running.push(Box::pin(deferred.run()));
                    }
                }
                let (finished, together) = match together {
                    Some(together) => tokio::join!(join_in_order(running), together.run(serving)),
                    None => (join_in_order(running).await, BatchFinished::Each(Vec::new())),
                };
                let together = match together {
                    // Every element went to the fallback: its answer is the batch's.
                    BatchFinished::Whole(whole) => return Some(whole),
                    BatchFinished::Each(together) => together,
                };
                let (mut finished, mut together) = (finished.into_iter(), together.into_iter());
                let mut target = Target::Batch(BatchWriter::new(out));
                for ((element, is_async), to_fallback) in elements.iter().zip(is_async).zip(&mut to_fallback) {
                    match element {
                        Ok(_) if *to_fallback => {
                            if let Some(done) = together.next() {
                                done.write(&mut target);
                            }
                        }
                        Ok(_) if is_async => {
                            if let Some(done) = finished.next() {
                                done.write(&mut target);
                            }
                        }
                        Ok(message) => self.answer(message, &mut target),
                        Err(error) => write_parse_error(target.answer(), error),
                    }
                }
                target.finish();
            }
        }
        None
    }

    /// One message, awaiting its handler when it is async.
    /// [`answer_parsed_async`](Router::answer_parsed_async) giving the whole answer: a
    /// request alone in its frame that a handler answered with a whole response object (a
    /// gateway's upstream answer) gets those bytes as they came, no copy; any other answer is
    /// written at the end of `out` and split off it. `None`: nothing to answer.
    pub(crate) async fn answer_parsed_bytes(
        &self,
        parsed: Parsed<'_>,
        frame: Option<&Bytes>,
        serving: &Supervision,
        out: &mut BytesMut,
    ) -> Option<WholeAnswer> {
        let before = out.len();
        let mut retry_after = None;
        match &parsed {
            // One handler lookup: `deferred` finds the async handler or says there is none.
            Parsed::Single(message) => match self.deferred(message, frame, true, serving) {
                Some(deferred) => {
                    let finished = deferred.run().await;
                    retry_after = finished.retry_after();
                    match finished.into_whole() {
                        Ok(whole) => return Some(WholeAnswer::new(whole, None)),
                        Err(finished) => finished.write(&mut Target::Single(out)),
                    }
                }
                None => self.answer(message, &mut Target::Single(out)),
            },
            // A batch's many handlers: in a future of its own, boxed only for a batch, so that
            // a single request's (a gateway's usual one) stays small.
            Parsed::Batch(_) => {
                let whole = Box::pin(self.answer_parsed_async(parsed, frame, serving, out)).await;
                if let Some(whole) = whole {
                    return Some(WholeAnswer::new(whole, None));
                }
            }
        }
        (out.len() > before).then(|| WholeAnswer::new(out.split_off(before).freeze(), retry_after))
    }

    async fn answer_async(
        &self,
        message: &Message<'_>,
        frame: Option<&Bytes>,
        serving: &Supervision,
        target: &mut Target<'_>,
    ) {
        match self.deferred(message, frame, true, serving) {
            Some(deferred) => deferred.finish(target).await,
            None => self.answer(message, target),
        }
    }

    /// The request or notification `message`, started on its async handler, when it has one.
    /// The elements of a batch that go to a fallback taking them together, started as one,
    /// and which elements they are; `(None, all false)` when there are none or the fallback
    /// answers each on its own.
    fn fallback_batch<'m>(
        &self,
        elements: &'m [Result<Message<'m>, &crate::parse::ParseError>],
        frame: Option<&Bytes>,
    ) -> (Option<FallbackBatch<'m>>, Vec<bool>) {
        let mut to_fallback = vec![false; elements.len()];
        let Some(fallback) = &self.batch_fallback else {
            return (None, to_fallback);
        };
        let mut messages = Vec::new();
        for (element, to_fallback) in elements.iter().zip(&mut to_fallback) {
            let method = match element {
                Ok(Message::Request(request)) => request.method(),
                Ok(Message::Notification(notification)) => notification.method(),
                _ => continue,
            };
            if !self.registered(method) {
                *to_fallback = true;
                messages.extend(element.as_ref().ok());
            }
        }
        if messages.is_empty() {
            return (None, to_fallback);
        }
        let whole = messages.len() == elements.len();
        match FallbackBatch::start(&**fallback, &messages, frame, whole) {
            Some(together) => (Some(together), to_fallback),
            None => (None, vec![false; elements.len()]),
        }
    }

    fn deferred<'m>(
        &self,
        message: &'m Message<'_>,
        frame: Option<&Bytes>,
        alone: bool,
        serving: &Supervision,
    ) -> Option<Deferred<'m>> {
        match message {
            Message::Request(request) => match self.handler(request.method()) {
                Some(Handler::Async(f)) => Some(Deferred::start(f, request, frame, alone, serving)),
                _ => None,
            },
            Message::Notification(notification) => match self.handler(notification.method()) {
                Some(Handler::Async(f)) => Some(Deferred::start_notification(
                    f,
                    notification,
                    frame,
                    alone,
                    serving,
                )),
                _ => None,
            },
            Message::Response(_) => None,
        }
    }
}
