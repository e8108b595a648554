//! `Responder`: the one serving core. A frame parsed once in; the answer bytes, nothing, or
//! a pending answer out — for every transport (the blocking loop in `serve`, the tokio
//! `Peer`, the HTTP service, WebSocket connections through their `Peer`).

use bytes::{Bytes, BytesMut};

#[cfg(feature = "tokio")]
use super::context::Supervision;
use super::router::Router;
use crate::frame::FrameError;
use crate::message::{ErrorCode, ErrorObject, Message, Response};
use crate::parse::{BatchScratch, Parsed, ParsedFrame};
use rpcwire_wire::error_answer::{write_frame_error, write_parse_error};

/// The one way a frame becomes an answer: [`respond`](Responder::respond) parses the frame
/// once, answers what the [`Router`]'s synchronous handlers serve straight into a
/// caller-provided buffer, and hands back what needs an await (async handlers, the
/// router's [`Fallback`](super::Fallback)) as a [`PendingAnswer`] that owns the parsed frame —
/// to be awaited where the transport likes, never parsed again. Parse and framing errors
/// get the error objects the specification asks for. Answers are appended unframed: the
/// transport frames them.
///
/// A `Responder` keeps the batch element storage from frame to frame (no allocation per
/// frame once warm): keep one per connection.
///
/// ```
/// use rpcwire_core::dispatch::{NoParams, Responder, Router, Answer};
///
/// let mut router = Router::new();
/// router.method("ping", |_: NoParams| Ok("pong"));
/// let mut responder = Responder::new();
/// let mut out = bytes::BytesMut::new();
/// let frame = bytes::Bytes::from_static(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
/// assert!(matches!(responder.respond(&router, &frame, &mut out), Answer::Written));
/// assert_eq!(&out[..], br#"{"jsonrpc":"2.0","id":1,"result":"pong"}"#);
/// ```
#[derive(Debug, Default)]
pub struct Responder {
    scratch: BatchScratch,
    /// The code the last frame was refused with before it reached the router, if it was.
    refused: Option<ErrorCode>,
}

/// What [`Responder::respond`] did with a frame.
///
/// ```
/// use rpcwire_core::dispatch::{Responder, Router, Answer};
/// let mut out = bytes::BytesMut::new();
/// let frame = bytes::Bytes::from_static(br#"{"jsonrpc":"2.0","method":"n"}"#);
/// let served = Responder::new().respond(&Router::new(), &frame, &mut out);
/// assert!(matches!(served, Answer::Silent));
/// ```
#[derive(Debug)]
pub enum Answer {
    /// The answer was written.
    Written,
    /// Nothing to answer: notifications, responses.
    Silent,
    /// The frame runs an async handler (or the router's fallback): nothing was written;
    /// await [`PendingAnswer::answer`] where it can be awaited.
    Pending(PendingAnswer),
}

/// A frame whose answer needs an await: the parsed frame (its bytes and the offsets the
/// parser found), `Send + 'static`, to be answered on any task with the router it came
/// through — never parsed again.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use rpcwire_core::dispatch::{NoParams, Responder, Router, Answer};
/// let mut router = Router::new();
/// router.method_async("later", |_: NoParams| async { Ok(2) });
/// let frame = bytes::Bytes::from_static(br#"{"jsonrpc":"2.0","method":"later","id":1}"#);
/// let mut out = bytes::BytesMut::new();
/// let Answer::Pending(pending) = Responder::new().respond(&router, &frame, &mut out) else { panic!() };
/// let answered = tokio::spawn(async move {
///     let mut out = bytes::BytesMut::new();
///     pending.answer(&router, &mut out).await.then(|| out)
/// }).await.unwrap();
/// assert_eq!(&answered.unwrap()[..], br#"{"jsonrpc":"2.0","id":1,"result":2}"#);
/// # });
/// ```
#[derive(Debug)]
pub struct PendingAnswer {
    frame: ParsedFrame,
}

/// A frame's whole answer, from [`PendingAnswer::answer_whole`]: its bytes, and how long the
/// client should wait before asking again when its request (alone in the frame) was answered
/// [`FallbackAnswer::Limited`](super::FallbackAnswer::Limited).
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use rpcwire_core::dispatch::{Answer, NoParams, Responder, Router};
/// let mut router = Router::new();
/// router.method_async("later", |_: NoParams| async { Ok(2) });
/// let frame = bytes::Bytes::from_static(br#"{"jsonrpc":"2.0","method":"later","id":1}"#);
/// let mut out = bytes::BytesMut::new();
/// let Answer::Pending(pending) = Responder::new().respond(&router, &frame, &mut out) else { panic!() };
/// let answer = pending.answer_whole(&router, &mut out).await.unwrap();
/// assert_eq!(answer.retry_after(), None);
/// assert_eq!(&answer.into_bytes()[..], br#"{"jsonrpc":"2.0","id":1,"result":2}"#);
/// # });
/// ```
#[derive(Debug)]
pub struct WholeAnswer {
    bytes: Bytes,
    retry_after: Option<std::time::Duration>,
}

impl WholeAnswer {
    #[cfg_attr(not(feature = "tokio"), allow(dead_code))]
    pub(crate) fn new(bytes: Bytes, retry_after: Option<std::time::Duration>) -> WholeAnswer {
        WholeAnswer { bytes, retry_after }
    }

    /// The answer's bytes.
    ///
    /// See [`WholeAnswer`] for an example.
    pub fn bytes(&self) -> &Bytes {
        &self.bytes
    }

    /// The answer's bytes, taken.
    ///
    /// See [`WholeAnswer`] for an example.
    pub fn into_bytes(self) -> Bytes {
        self.bytes
    }

    /// How long the client should wait before asking again: set when the frame's request
    /// was answered [`FallbackAnswer::Limited`](super::FallbackAnswer::Limited).
    ///
    /// See [`PendingAnswer::answer_whole`] for an example.
    pub fn retry_after(&self) -> Option<std::time::Duration> {
        self.retry_after
    }
}

thread_local! {
    /// The responder of [`Responder::respond_here`] on each thread.
    static HERE: std::cell::RefCell<Responder> = std::cell::RefCell::new(Responder::new());
}

// The router's own entry points that answer through a responder live here, so that the
// router (registration and routing) knows nothing of the serving core above it.
#[cfg(feature = "tokio")]
impl Router {
    /// Like [`handle`](Router::handle), awaiting async handlers (and the fallback): shorthand
    /// for [`Responder::respond`](crate::dispatch::Responder::respond) and
    /// [`PendingAnswer::answer`](crate::dispatch::PendingAnswer::answer). The elements of a batch
    /// bound to async handlers run at the same time; the answers keep the batch's order.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let mut router = rpcwire_core::dispatch::Router::new();
    /// router.method("sync", |_: rpcwire_core::dispatch::NoParams| Ok(1));
    /// router.method_async("later", |_: rpcwire_core::dispatch::NoParams| async { Ok(2) });
    /// let mut out = bytes::BytesMut::new();
    /// let input = br#"[{"jsonrpc":"2.0","method":"later","id":1},{"jsonrpc":"2.0","method":"sync","id":2}]"#;
    /// assert!(router.handle_async(input, &mut out).await);
    /// assert_eq!(&out[..], br#"[{"jsonrpc":"2.0","id":1,"result":2},{"jsonrpc":"2.0","id":2,"result":1}]"#);
    /// # });
    /// ```
    pub async fn handle_async(&self, input: &[u8], out: &mut BytesMut) -> bool {
        match Responder::new().respond_from(self, input, None, true, out, |_| {}, |_| {}) {
            Answer::Written => true,
            Answer::Silent => false,
            Answer::Pending(pending) => pending.answer(self, out).await,
        }
    }
}

impl Router {
    /// Answers `input` (one message or a batch) through a [`Responder`] kept per thread,
    /// writing the answer at the end of `out`: shorthand for
    /// [`Responder::respond`] for callers without a connection
    /// of their own. Returns `true` when it wrote an answer, `false` when there is none
    /// (notifications, responses). Steady-state handling does not allocate for escape-free
    /// input.
    ///
    /// Requests for async methods (registered with `method_async`) cannot be answered here
    /// and get -32603; use `handle_async` for routers that have them.
    ///
    /// ```
    /// let router = rpcwire_core::dispatch::Router::new();
    /// let mut out = bytes::BytesMut::new();
    /// assert!(router.handle(b"[]", &mut out));
    /// assert_eq!(&out[..], br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":"empty batch at byte 0"}}"#);
    /// ```
    pub fn handle(&self, input: &[u8], out: &mut BytesMut) -> bool {
        matches!(
            Responder::respond_here(self, input, None, false, out),
            Answer::Written
        )
    }
}

impl Responder {
    /// A responder with empty batch storage.
    ///
    /// ```
    /// let responder = rpcwire_core::dispatch::Responder::new();
    /// # let _ = responder;
    /// ```
    pub fn new() -> Responder {
        Responder::default()
    }

    /// The code the last frame answered was refused with before it reached the router:
    /// -32700 when it was not JSON, -32600 when it was not a JSON-RPC message or batch (or a
    /// batch where batches are not accepted); `None` when the router answered it. A transport
    /// that answers refusals otherwise (an HTTP status) asks here instead of reading the
    /// answer it wrote.
    ///
    /// ```
    /// use rpcwire_core::dispatch::{Responder, Router};
    /// use rpcwire_core::ErrorCode;
    /// let router = Router::new();
    /// let mut responder = Responder::new();
    /// let mut out = bytes::BytesMut::new();
    /// responder.respond(&router, &bytes::Bytes::from_static(b"{"), &mut out);
    /// assert_eq!(responder.refused(), Some(ErrorCode::ParseError));
    /// responder.respond(&router, &bytes::Bytes::from_static(br#"{"jsonrpc":"2.0","method":"m"}"#), &mut out);
    /// assert_eq!(responder.refused(), None);
    /// ```
    pub fn refused(&self) -> Option<ErrorCode> {
        self.refused
    }

    /// Answers one frame (a message or a batch) through `router`: the answer appended to
    /// `out` ([`Answer::Written`]), nothing to answer ([`Answer::Silent`]), or the frame
    /// parsed once and handed back to be awaited ([`Answer::Pending`]: nothing written).
    ///
    /// ```
    /// let router = rpcwire_core::dispatch::Router::new();
    /// let mut out = bytes::BytesMut::new();
    /// let frame = bytes::Bytes::from_static(b"{");
    /// rpcwire_core::dispatch::Responder::new().respond(&router, &frame, &mut out);
    /// assert!(std::str::from_utf8(&out).unwrap().contains("-32700"));
    /// ```
    pub fn respond(&mut self, router: &Router, frame: &Bytes, out: &mut BytesMut) -> Answer {
        self.respond_from(router, frame, Some(frame), true, out, |_| {}, |_| {})
    }

    /// [`respond`](Responder::respond) for a frame not held in `Bytes`; `may_defer`: when
    /// `false`, async handlers are refused here (-32603) instead of handed back. Every
    /// response in the frame goes to `on_response` and every other message to `on_message`
    /// before anything is answered (a peer completes its calls and watches for cancellations
    /// so).
    ///
    /// ```
    /// use rpcwire_core::dispatch::{Answer, Responder, Router};
    /// let router = Router::new();
    /// let (mut responses, mut others) = (0, 0);
    /// let mut out = bytes::BytesMut::new();
    /// let input = br#"[{"jsonrpc":"2.0","id":9,"result":1},{"jsonrpc":"2.0","method":"note"}]"#;
    /// let answer = Responder::new().respond_from(&router, input, None, true, &mut out, |_| responses += 1, |_| others += 1);
    /// assert!(matches!(answer, Answer::Silent));
    /// assert_eq!((responses, others), (1, 1));
    /// ```
    #[allow(clippy::too_many_arguments)]
    pub fn respond_from(
        &mut self,
        router: &Router,
        input: &[u8],
        frame: Option<&Bytes>,
        may_defer: bool,
        out: &mut BytesMut,
        mut on_response: impl FnMut(&Response<'_>),
        mut on_message: impl FnMut(&Message<'_>),
    ) -> Answer {
        let before = out.len();
        self.refused = None;
        let top = match router.parser().parse_top(input, &mut self.scratch) {
            Ok(top) => top,
            Err(error) => {
                // -32700 or -32600, with the id when the parser read one.
                write_parse_error(out, &error);
                self.refused = Some(error.code());
                return Answer::Written;
            }
        };
        let parsed = self.scratch.view(input, top);
        if refuse_batch(router, &parsed, out) {
            self.refused = Some(ErrorCode::InvalidRequest);
            return Answer::Written;
        }
        for_each_incoming(&parsed, &mut on_response, &mut on_message);
        if may_defer && router.needs_async(&parsed) {
            let bytes = frame.cloned().unwrap_or_else(|| Bytes::copy_from_slice(input));
            let frame = self.scratch.take_frame(bytes, top);
            return Answer::Pending(PendingAnswer { frame });
        }
        router.answer_parsed(parsed, out);
        written_since(out, before)
    }

    /// [`respond`](Responder::respond) for a frame parsed already (by a layer in front that
    /// read it: the same parser limits as the router's are the caller's to check): answered
    /// without parsing it again.
    ///
    /// ```
    /// use rpcwire_core::dispatch::{Answer, Responder, Router};
    /// let mut router = Router::new();
    /// router.method("add", |(a, b): (i64, i64)| Ok(a + b));
    /// let input = bytes::Bytes::from_static(br#"{"jsonrpc":"2.0","id":1,"method":"add","params":[1,2]}"#);
    /// let frame = router.parser().parse_frame(input).unwrap();
    /// let mut out = bytes::BytesMut::new();
    /// assert!(matches!(Responder::new().respond_parsed(&router, frame, &mut out), Answer::Written));
    /// assert_eq!(&out[..], br#"{"jsonrpc":"2.0","id":1,"result":3}"#);
    /// ```
    pub fn respond_parsed(&mut self, router: &Router, frame: ParsedFrame, out: &mut BytesMut) -> Answer {
        let before = out.len();
        self.refused = None;
        let parsed = frame.view();
        if refuse_batch(router, &parsed, out) {
            self.refused = Some(ErrorCode::InvalidRequest);
            return Answer::Written;
        }
        if router.needs_async(&parsed) {
            return Answer::Pending(PendingAnswer { frame });
        }
        router.answer_parsed(parsed, out);
        written_since(out, before)
    }

    /// [`respond`](Responder::respond) with the responder kept for the current thread (a
    /// fresh one when it is in use already): for transports without a connection of their
    /// own to keep one in (each HTTP request, `Router::handle`). `frame`: the input as
    /// `Bytes` when it is held so (a pending answer keeps it without a copy); `may_defer`:
    /// when `false`, async handlers are refused here (-32603) instead of handed back.
    ///
    /// ```
    /// use rpcwire_core::dispatch::{Answer, Responder, Router};
    /// let mut router = Router::new();
    /// router.method("add", |(a, b): (i64, i64)| Ok(a + b));
    /// let mut out = bytes::BytesMut::new();
    /// let input = br#"{"jsonrpc":"2.0","id":1,"method":"add","params":[1,2]}"#;
    /// let answer = Responder::respond_here(&router, input, None, true, &mut out);
    /// assert!(matches!(answer, Answer::Written));
    /// assert_eq!(&out[..], br#"{"jsonrpc":"2.0","id":1,"result":3}"#);
    /// ```
    pub fn respond_here(
        router: &Router,
        input: &[u8],
        frame: Option<&Bytes>,
        may_defer: bool,
        out: &mut BytesMut,
    ) -> Answer {
        let mut respond = |responder: &mut Responder| {
            responder.respond_from(router, input, frame, may_defer, out, |_| {}, |_| {})
        };
        HERE.with(|responder| match responder.try_borrow_mut() {
            Ok(mut responder) => respond(&mut responder),
            // A handler that answers a frame itself on the same thread.
            Err(_) => respond(&mut Responder::new()),
        })
    }

    /// Answers a framing error (a frame over the size limit: -32600; a header or frame that
    /// cannot be read: -32700) with id `null`, appending it to `out`.
    ///
    /// ```
    /// use rpcwire_core::frame::FrameError;
    /// let mut out = bytes::BytesMut::new();
    /// let error = FrameError::TooLarge { len: 9, limit: 8, offset: 0 };
    /// rpcwire_core::dispatch::Responder::new().answer_frame_error(&error, &mut out);
    /// assert!(out.starts_with(br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600"#));
    /// ```
    pub fn answer_frame_error(&mut self, error: &FrameError, out: &mut BytesMut) {
        write_frame_error(out, error);
    }
}

impl PendingAnswer {
    /// Runs the frame's handlers through `router` (the one it came through) and appends the
    /// answer to `out`; `true` when there is one. The elements of a batch that run async
    /// handlers run at the same time; the answers keep the batch's order.
    #[cfg(feature = "tokio")]
    pub async fn answer(&self, router: &Router, out: &mut BytesMut) -> bool {
        self.answer_supervised(router, &Supervision::default(), out).await
    }

    /// [`answer`](PendingAnswer::answer) with the serving side's supervision of async
    /// handlers (contexts, cancellation, timeouts): what a peer runs.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use std::time::Duration;
    /// use rpcwire_core::dispatch::{Answer, NoParams, Responder, Router, Supervision};
    /// let mut router = Router::new();
    /// router.method_async("forever", |_: NoParams| async {
    ///     std::future::pending::<()>().await;
    ///     Ok(())
    /// });
    /// let frame = bytes::Bytes::from_static(br#"{"jsonrpc":"2.0","id":1,"method":"forever"}"#);
    /// let mut out = bytes::BytesMut::new();
    /// let Answer::Pending(pending) = Responder::new().respond(&router, &frame, &mut out) else { panic!() };
    /// let serving = Supervision { handler_timeout: Some(Duration::from_millis(10)), ..Supervision::default() };
    /// assert!(pending.answer_supervised(&router, &serving, &mut out).await);
    /// assert!(std::str::from_utf8(&out).unwrap().contains("-32603"));
    /// # });
    /// ```
    #[cfg(feature = "tokio")]
    pub async fn answer_supervised(
        &self,
        router: &Router,
        serving: &Supervision,
        out: &mut BytesMut,
    ) -> bool {
        let before = out.len();
        let whole = router
            .answer_parsed_async(self.frame.view(), Some(self.frame.bytes()), serving, out)
            .await;
        if let Some(whole) = whole {
            out.extend_from_slice(&whole);
        }
        out.len() > before
    }

    /// Runs the frame's handlers like [`answer`](PendingAnswer::answer) and gives the whole
    /// answer: a request alone in its frame answered with a whole response object (a
    /// gateway's upstream answer, see [`FallbackAnswer::Response`](super::FallbackAnswer::Response))
    /// gets those bytes as they came, without a copy; any other answer is written at the end
    /// of `out` and split off it. `None`: nothing to answer.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// use rpcwire_core::dispatch::{Answer, Fallback, FallbackAnswer, FallbackCall, FallbackFuture, Responder, Router};
    /// static UPSTREAM: &[u8] = br#"{"id":1,"jsonrpc":"2.0","result":"as it came"}"#;
    /// struct Whole;
    /// impl Fallback for Whole {
    ///     fn call(&self, _: FallbackCall<'_>) -> FallbackFuture {
    ///         Box::pin(async { FallbackAnswer::Response(bytes::Bytes::from_static(UPSTREAM)) })
    ///     }
    /// }
    /// let mut router = Router::new();
    /// router.fallback(Whole);
    /// let frame = bytes::Bytes::from_static(br#"{"jsonrpc":"2.0","id":1,"method":"m"}"#);
    /// let mut out = bytes::BytesMut::new();
    /// let Answer::Pending(pending) = Responder::new().respond(&router, &frame, &mut out) else { panic!() };
    /// let answer = pending.answer_bytes(&router, &mut out).await.unwrap();
    /// assert_eq!(answer.as_ptr(), UPSTREAM.as_ptr()); // the same bytes
    /// # });
    /// ```
    #[cfg(feature = "tokio")]
    pub async fn answer_bytes(&self, router: &Router, out: &mut BytesMut) -> Option<Bytes> {
        self.answer_whole(router, out).await.map(WholeAnswer::into_bytes)
    }

    /// [`answer_bytes`](PendingAnswer::answer_bytes), and with it how long the client should
    /// wait before asking again when a request alone in its frame was answered
    /// [`FallbackAnswer::Limited`](super::FallbackAnswer::Limited): what an HTTP server needs
    /// to answer `429` with `Retry-After`.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// use std::time::Duration;
    /// use rpcwire_core::dispatch::{Answer, Fallback, FallbackAnswer, FallbackCall, FallbackFuture, Responder, Router};
    /// struct OverLimit;
    /// impl Fallback for OverLimit {
    ///     fn call(&self, _: FallbackCall<'_>) -> FallbackFuture {
    ///         let error = rpcwire_core::ErrorObject::new(-32005, "limit exceeded");
    ///         Box::pin(async move { FallbackAnswer::Limited { error, retry_after: Duration::from_secs(3) } })
    ///     }
    /// }
    /// let mut router = Router::new();
    /// router.fallback(OverLimit);
    /// let frame = bytes::Bytes::from_static(br#"{"jsonrpc":"2.0","id":1,"method":"m"}"#);
    /// let mut out = bytes::BytesMut::new();
    /// let Answer::Pending(pending) = Responder::new().respond(&router, &frame, &mut out) else { panic!() };
    /// let answer = pending.answer_whole(&router, &mut out).await.unwrap();
    /// assert_eq!(answer.retry_after(), Some(Duration::from_secs(3)));
    /// assert_eq!(&answer.bytes()[..], br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32005,"message":"limit exceeded"}}"#);
    /// # });
    /// ```
    #[cfg(feature = "tokio")]
    pub async fn answer_whole(&self, router: &Router, out: &mut BytesMut) -> Option<WholeAnswer> {
        router
            .answer_parsed_bytes(
                self.frame.view(),
                Some(self.frame.bytes()),
                &Supervision::default(),
                out,
            )
            .await
    }

    /// [`answer_bytes`](PendingAnswer::answer_bytes) with the serving side's supervision.
    #[cfg(feature = "tokio")]
    pub(crate) async fn answer_bytes_supervised(
        &self,
        router: &Router,
        serving: &Supervision,
        out: &mut BytesMut,
    ) -> Option<Bytes> {
        router
            .answer_parsed_bytes(self.frame.view(), Some(self.frame.bytes()), serving, out)
            .await
            .map(WholeAnswer::into_bytes)
    }

    /// Answers every request in the frame with `error` (each with its own id; a batch as an
    /// array, elements that are not messages with their parse errors), running no handler:
    /// what a server overloaded answers at once instead of making the request wait.
    /// Notifications get nothing. `true` when there is an answer.
    ///
    /// ```
    /// use rpcwire_core::dispatch::{NoParams, Responder, Router, Answer};
    /// let mut router = Router::new();
    /// router.fallback_async(|_| async { Ok(rpcwire_core::RawJson::new("1").unwrap().into()) });
    /// let busy = rpcwire_core::ErrorObject::new(-32003, "server overloaded");
    /// let frame = bytes::Bytes::from_static(br#"[{"jsonrpc":"2.0","method":"a","id":1},{"jsonrpc":"2.0","method":"b"},{"jsonrpc":"2.0","method":"c","id":"x"}]"#);
    /// let mut out = bytes::BytesMut::new();
    /// let Answer::Pending(pending) = Responder::new().respond(&router, &frame, &mut out) else { panic!() };
    /// assert!(pending.refuse(&busy, &mut out));
    /// assert_eq!(&out[..], &br#"[{"jsonrpc":"2.0","id":1,"error":{"code":-32003,"message":"server overloaded"}},{"jsonrpc":"2.0","id":"x","error":{"code":-32003,"message":"server overloaded"}}]"#[..]);
    /// ```
    pub fn refuse(&self, error: &ErrorObject<'_>, out: &mut BytesMut) -> bool {
        let before = out.len();
        match self.frame.view() {
            Parsed::Single(Message::Request(request)) => crate::encode::write_error(out, request.id(), error),
            Parsed::Single(_) => {}
            Parsed::Batch(batch) => {
                let mut writer = crate::encode::BatchWriter::new(out);
                for element in batch.iter() {
                    match element {
                        Ok(Message::Request(request)) => {
                            crate::encode::write_error(writer.element(), request.id(), error)
                        }
                        Ok(_) => {}
                        Err(problem) => write_parse_error(writer.element(), problem),
                    }
                }
                writer.finish();
            }
        }
        out.len() > before
    }

    /// The frame's bytes.
    ///
    /// ```
    /// use rpcwire_core::dispatch::{Responder, Router, Answer};
    /// let mut router = Router::new();
    /// router.fallback_async(|_| async { Ok(rpcwire_core::RawJson::new("1").unwrap().into()) });
    /// let frame = bytes::Bytes::from_static(br#"{"jsonrpc":"2.0","method":"a","id":1}"#);
    /// let Answer::Pending(pending) = Responder::new().respond(&router, &frame, &mut bytes::BytesMut::new()) else { panic!() };
    /// assert_eq!(pending.bytes(), &frame);
    /// ```
    pub fn bytes(&self) -> &Bytes {
        self.frame.bytes()
    }
}

/// Calls `f` with every response in `parsed`.
fn for_each_incoming(
    parsed: &Parsed<'_>,
    on_response: &mut impl FnMut(&Response<'_>),
    on_message: &mut impl FnMut(&Message<'_>),
) {
    let mut one = |message: &Message<'_>| match message {
        Message::Response(response) => on_response(response),
        other => on_message(other),
    };
    match parsed {
        Parsed::Single(message) => one(message),
        Parsed::Batch(batch) => {
            for message in batch.iter().flatten() {
                one(&message);
            }
        }
    }
}

/// Whether anything was written to `out` past `before`.
fn written_since(out: &BytesMut, before: usize) -> Answer {
    if out.len() > before {
        Answer::Written
    } else {
        Answer::Silent
    }
}

/// A batch where the router takes none: refused (`true`), the refusal written.
fn refuse_batch(router: &Router, parsed: &Parsed<'_>, out: &mut BytesMut) -> bool {
    if !matches!(parsed, Parsed::Batch(_)) || router.accepts_batches() {
        return false;
    }
    let refused = ErrorObject::new(
        crate::codes::INVALID_REQUEST,
        "Invalid Request: batches are not accepted here",
    );
    crate::encode::write_error(out, &crate::message::Id::null(), &refused);
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dispatch::NoParams;

    fn router() -> Router {
        let mut router = Router::new();
        router.method("ping", |_: NoParams| Ok("pong"));
        #[cfg(feature = "tokio")]
        router.method_async("later", |_: NoParams| async { Ok(2) });
        router
    }

    /// `respond_from` with a response observer, as a peer calls it.
    fn respond_watching(
        responder: &mut Responder,
        frame: &[u8],
        out: &mut BytesMut,
        on_response: impl FnMut(&Response<'_>),
    ) -> Answer {
        let frame = Bytes::copy_from_slice(frame);
        responder.respond_from(&router(), &frame, Some(&frame), true, out, on_response, |_| {})
    }

    #[test]
    fn responses_go_to_the_caller_and_requests_are_answered() {
        let frame = br#"[{"jsonrpc":"2.0","id":"a","error":{"code":1,"message":"m"}},
                         {"jsonrpc":"2.0","id":1,"method":"ping"},
                         {"jsonrpc":"2.0","id":2,"result":null}]"#;
        let mut out = BytesMut::new();
        let mut ids = Vec::new();
        let served = respond_watching(&mut Responder::new(), frame, &mut out, |r| {
            ids.push(r.id().to_string())
        });
        assert!(matches!(served, Answer::Written));
        assert_eq!(ids, [r#""a""#, "2"]);
        assert_eq!(&out[..], br#"[{"jsonrpc":"2.0","id":1,"result":"pong"}]"#);
    }

    #[test]
    fn a_lone_response_is_silent_and_bad_input_is_answered() {
        let mut responder = Responder::new();
        let mut out = BytesMut::new();
        let served = respond_watching(
            &mut responder,
            br#"{"jsonrpc":"2.0","id":3,"result":1}"#,
            &mut out,
            |_| {},
        );
        assert!(matches!(served, Answer::Silent));
        assert_eq!(out.len(), 0);
        let served = respond_watching(&mut responder, b"[1,", &mut out, |_| panic!("no response"));
        assert!(matches!(served, Answer::Written));
        assert!(out.starts_with(br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700"#));
    }

    #[cfg(feature = "tokio")]
    #[test]
    fn async_handlers_are_handed_back_parsed_and_answered_later() {
        let mut responder = Responder::new();
        let mut out = BytesMut::new();
        let frame = Bytes::from_static(
            br#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"later"}]"#,
        );
        let Answer::Pending(pending) = responder.respond(&router(), &frame, &mut out) else {
            panic!("an async handler is pending");
        };
        assert!(out.is_empty());
        // The pending answer holds the frame itself, not a copy.
        assert_eq!(pending.bytes().as_ptr(), frame.as_ptr());
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        assert!(runtime.block_on(pending.answer(&router(), &mut out)));
        assert_eq!(
            &out[..],
            br#"[{"jsonrpc":"2.0","id":1,"result":"pong"},{"jsonrpc":"2.0","id":2,"result":2}]"#
        );
        // The blocking path refuses it instead.
        out.clear();
        assert!(router().handle(br#"{"jsonrpc":"2.0","id":5,"method":"later"}"#, &mut out));
        assert!(std::str::from_utf8(&out).unwrap().contains("-32603"));
        // The batch storage went with the pending frame; the next batch still parses.
        out.clear();
        let batch = Bytes::from_static(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#);
        assert!(matches!(
            responder.respond(&router(), &batch, &mut out),
            Answer::Written
        ));
        assert_eq!(&out[..], br#"[{"jsonrpc":"2.0","id":1,"result":"pong"}]"#);
    }

    #[cfg(feature = "tokio")]
    #[test]
    fn a_refused_pending_frame_answers_every_request_with_the_error() {
        let frame = Bytes::from_static(
            br#"[{"jsonrpc":"2.0","id":1,"method":"later"},{"jsonrpc":"2.0","method":"later"},[]]"#,
        );
        let mut out = BytesMut::new();
        let Answer::Pending(pending) = Responder::new().respond(&router(), &frame, &mut out) else {
            panic!("pending");
        };
        let busy = ErrorObject::new(-32003, "busy");
        assert!(pending.refuse(&busy, &mut out));
        let text = std::str::from_utf8(&out).unwrap();
        assert!(
            text.starts_with(r#"[{"jsonrpc":"2.0","id":1,"error":{"code":-32003,"message":"busy"}},{"jsonrpc":"2.0","id":null,"error":{"code":-32600"#),
            "{text}"
        );
        // A lone notification gets nothing.
        out.clear();
        let note = Bytes::from_static(br#"{"jsonrpc":"2.0","method":"later"}"#);
        let Answer::Pending(pending) = Responder::new().respond(&router(), &note, &mut out) else {
            panic!("pending");
        };
        assert!(!pending.refuse(&busy, &mut out));
        assert!(out.is_empty());
    }

    #[test]
    fn frame_errors_are_answered_with_a_null_id() {
        let mut out = BytesMut::new();
        let error = FrameError::Truncated {
            expected: Some(10),
            got: 3,
            offset: 0,
        };
        Responder::new().answer_frame_error(&error, &mut out);
        let text = std::str::from_utf8(&out).unwrap();
        assert!(
            text.starts_with(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700"#),
            "{text}"
        );
        assert!(text.contains("expected 10 body bytes, got 3"), "{text}");
    }

    #[cfg(feature = "tokio")]
    #[test]
    fn raw_async_params_are_slices_of_a_bytes_frame_and_copies_otherwise() {
        use std::sync::{Arc, Mutex};
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        let mut router = Router::new();
        router.fallback_async(move |call: crate::dispatch::RawCall| {
            let params = call.into_params().unwrap();
            log.lock().unwrap().push(params.as_ptr() as usize);
            async move { Ok(params) }
        });
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let frame = Bytes::from_static(br#"{"jsonrpc":"2.0","id":1,"method":"m","params":[1,2]}"#);
        let mut out = BytesMut::new();
        let Answer::Pending(pending) = Responder::new().respond(&router, &frame, &mut out) else {
            panic!("pending");
        };
        runtime.block_on(pending.answer(&router, &mut out));
        runtime.block_on(router.handle_async(&frame, &mut out));
        let at = seen.lock().unwrap().clone();
        let params_at = frame.as_ptr() as usize + frame.len() - 6;
        assert_eq!(at[0], params_at, "a slice of the frame");
        assert_ne!(at[1], params_at, "a copy");
        assert_eq!(
            &out[..],
            &br#"{"jsonrpc":"2.0","id":1,"result":[1,2]}{"jsonrpc":"2.0","id":1,"result":[1,2]}"#[..]
        );
    }
}
