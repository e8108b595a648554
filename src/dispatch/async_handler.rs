//! Async request handlers (`tokio` feature) and `Router::handle_async`.

use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::BytesMut;
use serde::de::DeserializeOwned;
use serde::Serialize;

use super::handler::{self, decode_params, Handler};
use super::router::{write_parse_error, Router, Target};
use crate::encode::{self, BatchWriter};
use crate::message::{ErrorObject, Id, Message, Notification, Params, RawJson, Request};
use crate::parse::{BatchScratch, Parsed};

/// The result of an async handler, serialized.
type Outcome = Result<RawJson<'static>, ErrorObject<'static>>;

/// A boxed, sendable future of an async handler's outcome.
pub(crate) type BoxOutcome = Pin<Box<dyn Future<Output = Outcome> + Send>>;

/// An async handler: decodes its params synchronously (they borrow from the input), then
/// returns the future that computes the result.
pub(crate) type AsyncFn =
    dyn for<'p> Fn(Option<Params<'p>>) -> Result<BoxOutcome, ErrorObject<'static>> + Send + Sync;

/// A future that turns a panic inside `inner` into -32603, the way the sync path does.
struct CatchUnwind {
    inner: BoxOutcome,
}

impl Future for CatchUnwind {
    type Output = Outcome;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Outcome> {
        let inner = &mut self.inner;
        catch_unwind(AssertUnwindSafe(|| inner.as_mut().poll(cx)))
            .unwrap_or_else(|payload| Poll::Ready(Err(handler::panicked(&*payload))))
    }
}

/// A message bound to an async handler: its id (`None` for a notification) and either the
/// future computing its result or the error that stopped it before it started.
pub(crate) struct Deferred<'m> {
    id: Option<&'m Id<'m>>,
    started: Result<BoxOutcome, ErrorObject<'static>>,
}

impl<'m> Deferred<'m> {
    pub(crate) fn start(f: &AsyncFn, request: &'m Request<'_>) -> Deferred<'m> {
        Deferred {
            id: Some(shorten(request.id())),
            started: call(f, request.params()),
        }
    }

    pub(crate) fn start_notification(f: &AsyncFn, notification: &'m Notification<'_>) -> Deferred<'m> {
        Deferred {
            id: None,
            started: call(f, notification.params()),
        }
    }

    /// The sync path cannot await: a request gets -32603; a notification runs on the
    /// current tokio runtime when there is one (nobody waits for it), else it is dropped.
    pub(crate) fn refuse(self, dst: &mut BytesMut) {
        match self.id {
            Some(id) => {
                let error = ErrorObject::internal_error("an async method needs Router::handle_async");
                encode::write_error(dst, id, &error);
            }
            None => {
                if let (Ok(future), Ok(runtime)) = (self.started, tokio::runtime::Handle::try_current()) {
                    runtime.spawn(CatchUnwind { inner: future });
                }
            }
        }
    }

    /// Awaits the handler and writes its answer (requests only).
    async fn finish(self, target: &mut Target<'_>) {
        let outcome = match self.started {
            Ok(future) => CatchUnwind { inner: future }.await,
            Err(error) => Err(error),
        };
        if let Some(id) = self.id {
            let dst = target.answer();
            match outcome {
                Ok(result) => encode::write_success_raw(dst, id, &result),
                Err(error) => encode::write_error(dst, id, &error),
            }
        }
    }
}

/// `Id<'a>` is covariant: a borrowed id can be viewed with the shorter lifetime.
fn shorten<'m>(id: &'m Id<'_>) -> &'m Id<'m> {
    id
}

/// Runs the synchronous part of an async handler (params decoding), containing panics.
fn call(f: &AsyncFn, params: Option<Params<'_>>) -> Result<BoxOutcome, ErrorObject<'static>> {
    catch_unwind(AssertUnwindSafe(|| f(params))).unwrap_or_else(|payload| Err(handler::panicked(&*payload)))
}

impl Router {
    /// Registers an async request handler (`tokio` feature): params are decoded into `P`
    /// with serde before the future starts, the future's result is serialized when it
    /// completes. Only [`handle_async`](Router::handle_async) awaits it.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let mut router = rpcwire::dispatch::Router::new();
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
        let erased = move |params: Option<Params<'_>>| -> Result<BoxOutcome, ErrorObject<'static>> {
            let future = f(decode_params::<P>(params)?);
            Ok(Box::pin(async move {
                let result = future.await?;
                RawJson::from_value(&result).map_err(|error| {
                    ErrorObject::internal_error(format_args!("result did not serialize: {error}"))
                })
            }))
        };
        self.register(name, Handler::Async(Box::new(erased)))
    }

    /// Like [`handle`](Router::handle), awaiting async handlers. Batch elements are
    /// answered one after another, in order.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let mut router = rpcwire::dispatch::Router::new();
    /// router.method("sync", |_: rpcwire::dispatch::NoParams| Ok(1));
    /// router.method_async("later", |_: rpcwire::dispatch::NoParams| async { Ok(2) });
    /// let mut out = bytes::BytesMut::new();
    /// let input = br#"[{"jsonrpc":"2.0","method":"later","id":1},{"jsonrpc":"2.0","method":"sync","id":2}]"#;
    /// assert!(router.handle_async(input, &mut out).await);
    /// assert_eq!(&out[..], br#"[{"jsonrpc":"2.0","id":1,"result":2},{"jsonrpc":"2.0","id":2,"result":1}]"#);
    /// # });
    /// ```
    pub async fn handle_async(&self, input: &[u8], out: &mut BytesMut) -> bool {
        let before = out.len();
        let mut scratch = BatchScratch::default();
        match self.parser().parse_reusing(input, &mut scratch) {
            Ok(Parsed::Single(message)) => self.answer_async(&message, &mut Target::Single(out)).await,
            Ok(Parsed::Batch(batch)) => {
                let mut target = Target::Batch(BatchWriter::new(out));
                for element in &batch {
                    match element {
                        Ok(message) => self.answer_async(&message, &mut target).await,
                        Err(error) => write_parse_error(target.answer(), error),
                    }
                }
                if let Target::Batch(batch) = target {
                    batch.finish();
                }
            }
            Err(error) => write_parse_error(out, &error),
        }
        out.len() > before
    }

    /// Whether answering `parsed` runs an async handler (so it has to go through
    /// [`handle_async`](Router::handle_async)); responses and unknown methods never do.
    pub(crate) fn needs_async(&self, parsed: &Parsed<'_>) -> bool {
        let is_async = |message: &Message<'_>| match message.method() {
            Some(method) => matches!(self.methods_get(method), Some(Handler::Async(_))),
            None => false,
        };
        match parsed {
            Parsed::Single(message) => is_async(message),
            Parsed::Batch(batch) => batch.iter().any(|element| element.is_ok_and(|m| is_async(&m))),
        }
    }

    async fn answer_async(&self, message: &Message<'_>, target: &mut Target<'_>) {
        if let Some(deferred) = self.answer(message, target) {
            deferred.finish(target).await;
        }
    }
}
