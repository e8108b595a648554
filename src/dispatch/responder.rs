//! `Responder`: the one serving core. Frame bytes in, answer bytes out, for every transport
//! (the blocking loop in `serve`, the tokio `Peer`, and whatever carries frames next).

#[cfg(feature = "tokio")]
use bytes::Bytes;
use bytes::BytesMut;

#[cfg(feature = "tokio")]
use super::context::Serving;
use super::error_answer::{write_frame_error, write_parse_error};
use super::router::Router;
use crate::frame::FrameError;
use crate::message::{Message, Response};
use crate::parse::{BatchScratch, Parsed};

/// Turns frames into answers through a [`Router`]: it owns the batch element storage reused
/// from frame to frame (no allocation per frame once warm), and answers parse and framing
/// errors with the error objects the specification asks for. Answers are appended to a
/// caller-provided buffer, unframed: the transport frames them.
///
/// ```
/// use rpcwire::dispatch::{NoParams, Responder, Router};
///
/// let mut router = Router::new();
/// router.method("ping", |_: NoParams| Ok("pong"));
/// let mut responder = Responder::new();
/// let mut out = bytes::BytesMut::new();
/// assert!(responder.answer(&router, br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#, &mut out));
/// assert_eq!(&out[..], br#"{"jsonrpc":"2.0","id":1,"result":"pong"}"#);
/// ```
#[derive(Debug, Default)]
pub struct Responder {
    scratch: BatchScratch,
}

/// What [`Responder::serve`] did with a frame.
///
/// ```
/// use rpcwire::dispatch::{Responder, Router, Served};
/// let mut out = bytes::BytesMut::new();
/// let served = Responder::new().serve(&Router::new(), br#"{"jsonrpc":"2.0","method":"n"}"#, &mut out, |_| {});
/// assert_eq!(served, Served::Silent);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Served {
    /// An answer was written.
    Answered,
    /// Nothing to answer: notifications, responses.
    Silent,
    /// The frame runs an async handler: nothing was written; answer it with
    /// [`Responder::answer_async`] where it can be awaited.
    NeedsAsync,
}

impl Responder {
    /// A responder with empty batch storage.
    ///
    /// ```
    /// let responder = rpcwire::dispatch::Responder::new();
    /// # let _ = responder;
    /// ```
    pub fn new() -> Responder {
        Responder::default()
    }

    /// Answers one frame (a message or a batch) through `router`, appending the answer to
    /// `out`; `true` when there is one. Requests for async handlers are answered -32603 here
    /// (see [`serve`](Responder::serve) and [`answer_async`](Responder::answer_async)).
    ///
    /// ```
    /// let router = rpcwire::dispatch::Router::new();
    /// let mut out = bytes::BytesMut::new();
    /// assert!(rpcwire::dispatch::Responder::new().answer(&router, b"{", &mut out));
    /// assert!(std::str::from_utf8(&out).unwrap().contains("-32700"));
    /// ```
    pub fn answer(&mut self, router: &Router, frame: &[u8], out: &mut BytesMut) -> bool {
        router.handle_with(frame, &mut self.scratch, out)
    }

    /// Serves one frame for a peer that also makes calls: parses it once, hands every
    /// response in it (alone or inside a batch) to `on_response`, and answers the rest, or
    /// reports that the frame needs an async handler (then it writes nothing).
    ///
    /// ```
    /// use rpcwire::dispatch::{NoParams, Responder, Router, Served};
    ///
    /// let mut router = Router::new();
    /// router.method("ping", |_: NoParams| Ok("pong"));
    /// let frame = br#"[{"jsonrpc":"2.0","id":7,"result":"late"},{"jsonrpc":"2.0","id":1,"method":"ping"}]"#;
    /// let mut out = bytes::BytesMut::new();
    /// let mut responses = Vec::new();
    /// let served = Responder::new().serve(&router, frame, &mut out, |response| {
    ///     responses.push(response.id().as_u64())
    /// });
    /// assert_eq!(served, Served::Answered);
    /// assert_eq!(responses, [Some(7)]);
    /// assert_eq!(&out[..], br#"[{"jsonrpc":"2.0","id":1,"result":"pong"}]"#);
    /// ```
    pub fn serve(
        &mut self,
        router: &Router,
        frame: &[u8],
        out: &mut BytesMut,
        on_response: impl FnMut(&Response<'_>),
    ) -> Served {
        self.serve_observing(router, frame, out, on_response, |_| {})
    }

    /// [`serve`](Responder::serve), also showing every request and notification in the
    /// frame to `on_message` before it is routed (a peer watches for cancellations so).
    pub(crate) fn serve_observing(
        &mut self,
        router: &Router,
        frame: &[u8],
        out: &mut BytesMut,
        mut on_response: impl FnMut(&Response<'_>),
        mut on_message: impl FnMut(&Message<'_>),
    ) -> Served {
        let before = out.len();
        match router.parser().parse_reusing(frame, &mut self.scratch) {
            Ok(parsed) => {
                for_each_incoming(&parsed, &mut on_response, &mut on_message);
                if router.needs_async(&parsed) {
                    return Served::NeedsAsync;
                }
                router.answer_parsed(parsed, out);
            }
            // -32700 or -32600, with the id when the parser read one.
            Err(error) => write_parse_error(out, &error),
        }
        if out.len() > before {
            Served::Answered
        } else {
            Served::Silent
        }
    }

    /// Answers one frame, awaiting async handlers (`tokio` feature); `true` when there is an
    /// answer. Batch elements are answered one after another, in order.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let mut router = rpcwire::dispatch::Router::new();
    /// router.method_async("later", |_: rpcwire::dispatch::NoParams| async { Ok(2) });
    /// let mut out = bytes::BytesMut::new();
    /// let frame = br#"{"jsonrpc":"2.0","method":"later","id":1}"#;
    /// assert!(rpcwire::dispatch::Responder::new().answer_async(&router, frame, &mut out).await);
    /// assert_eq!(&out[..], br#"{"jsonrpc":"2.0","id":1,"result":2}"#);
    /// # });
    /// ```
    #[cfg(feature = "tokio")]
    pub async fn answer_async(&mut self, router: &Router, frame: &[u8], out: &mut BytesMut) -> bool {
        self.answer_async_from(router, frame, None, &Serving::default(), out)
            .await
    }

    /// [`answer_async`](Responder::answer_async) for a frame held in `Bytes`: raw async
    /// handlers ([`Router::raw_method_async`], [`Router::fallback_async`]) get their params
    /// as slices of it instead of copies.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let mut router = rpcwire::dispatch::Router::new();
    /// router.fallback_async(|call: rpcwire::dispatch::RawCall| async move { Ok(call.into_params().unwrap()) });
    /// let frame = bytes::Bytes::from_static(br#"{"jsonrpc":"2.0","method":"x","params":[1],"id":1}"#);
    /// let mut out = bytes::BytesMut::new();
    /// assert!(rpcwire::dispatch::Responder::new().answer_bytes_async(&router, &frame, &mut out).await);
    /// assert_eq!(&out[..], br#"{"jsonrpc":"2.0","id":1,"result":[1]}"#);
    /// # });
    /// ```
    #[cfg(feature = "tokio")]
    pub async fn answer_bytes_async(&mut self, router: &Router, frame: &Bytes, out: &mut BytesMut) -> bool {
        self.answer_async_from(router, frame, Some(frame), &Serving::default(), out)
            .await
    }

    /// [`answer_bytes_async`](Responder::answer_bytes_async) with the serving side's
    /// supervision of async handlers (contexts, cancellation, timeouts): what a peer runs.
    #[cfg(feature = "tokio")]
    pub(crate) async fn answer_supervised(
        &mut self,
        router: &Router,
        frame: &Bytes,
        serving: &Serving,
        out: &mut BytesMut,
    ) -> bool {
        self.answer_async_from(router, frame, Some(frame), serving, out)
            .await
    }

    #[cfg(feature = "tokio")]
    async fn answer_async_from(
        &mut self,
        router: &Router,
        input: &[u8],
        frame: Option<&Bytes>,
        serving: &Serving,
        out: &mut BytesMut,
    ) -> bool {
        let before = out.len();
        match router.parser().parse_reusing(input, &mut self.scratch) {
            Ok(parsed) => router.answer_parsed_async(parsed, frame, serving, out).await,
            Err(error) => write_parse_error(out, &error),
        }
        out.len() > before
    }

    /// Answers every request in `frame` with `error` (each with its own id; a batch as an
    /// array, elements that are not messages with their parse errors), running no handler:
    /// what a server overloaded answers at once instead of making the request wait.
    /// Notifications get nothing. `true` when there is an answer.
    ///
    /// ```
    /// let router = rpcwire::dispatch::Router::new();
    /// let busy = rpcwire::ErrorObject::new(-32003, "server overloaded");
    /// let frame = br#"[{"jsonrpc":"2.0","method":"a","id":1},{"jsonrpc":"2.0","method":"b"},{"jsonrpc":"2.0","method":"c","id":"x"}]"#;
    /// let mut out = bytes::BytesMut::new();
    /// assert!(rpcwire::dispatch::Responder::new().answer_all_with(&router, frame, &busy, &mut out));
    /// assert_eq!(&out[..], &br#"[{"jsonrpc":"2.0","id":1,"error":{"code":-32003,"message":"server overloaded"}},{"jsonrpc":"2.0","id":"x","error":{"code":-32003,"message":"server overloaded"}}]"#[..]);
    /// ```
    pub fn answer_all_with(
        &mut self,
        router: &Router,
        frame: &[u8],
        error: &crate::message::ErrorObject<'_>,
        out: &mut BytesMut,
    ) -> bool {
        let before = out.len();
        let answer = |message: &Message<'_>, dst: &mut BytesMut| {
            if let Message::Request(request) = message {
                crate::encode::write_error(dst, request.id(), error);
            }
        };
        match router.parser().parse_reusing(frame, &mut self.scratch) {
            Ok(Parsed::Single(message)) => answer(&message, out),
            Ok(Parsed::Batch(batch)) => {
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
            Err(problem) => write_parse_error(out, &problem),
        }
        out.len() > before
    }

    /// Answers a framing error (a frame over the size limit: -32600; a header or frame that
    /// cannot be read: -32700) with id `null`, appending it to `out`.
    ///
    /// ```
    /// use rpcwire::frame::FrameError;
    /// let mut out = bytes::BytesMut::new();
    /// let error = FrameError::TooLarge { len: 9, limit: 8, offset: 0 };
    /// rpcwire::dispatch::Responder::new().answer_frame_error(&error, &mut out);
    /// assert!(out.starts_with(br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600"#));
    /// ```
    pub fn answer_frame_error(&mut self, error: &FrameError, out: &mut BytesMut) {
        write_frame_error(out, error);
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

    #[test]
    fn responses_go_to_the_caller_and_requests_are_answered() {
        let frame = br#"[{"jsonrpc":"2.0","id":"a","error":{"code":1,"message":"m"}},
                         {"jsonrpc":"2.0","id":1,"method":"ping"},
                         {"jsonrpc":"2.0","id":2,"result":null}]"#;
        let mut out = BytesMut::new();
        let mut ids = Vec::new();
        let served = Responder::new().serve(&router(), frame, &mut out, |r| ids.push(r.id().to_string()));
        assert_eq!(served, Served::Answered);
        assert_eq!(ids, [r#""a""#, "2"]);
        assert_eq!(&out[..], br#"[{"jsonrpc":"2.0","id":1,"result":"pong"}]"#);
    }

    #[test]
    fn a_lone_response_is_silent_and_bad_input_is_answered() {
        let mut responder = Responder::new();
        let mut out = BytesMut::new();
        let served = responder.serve(
            &router(),
            br#"{"jsonrpc":"2.0","id":3,"result":1}"#,
            &mut out,
            |_| {},
        );
        assert_eq!((served, out.len()), (Served::Silent, 0));
        let served = responder.serve(&router(), b"[1,", &mut out, |_| panic!("no response"));
        assert_eq!(served, Served::Answered);
        assert!(out.starts_with(br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700"#));
    }

    #[cfg(feature = "tokio")]
    #[test]
    fn async_handlers_are_reported_not_answered() {
        let mut responder = Responder::new();
        let mut out = BytesMut::new();
        let frame =
            br#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"later"}]"#;
        assert_eq!(
            responder.serve(&router(), frame, &mut out, |_| {}),
            Served::NeedsAsync
        );
        assert!(out.is_empty());
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        assert!(runtime.block_on(responder.answer_async(&router(), frame, &mut out)));
        assert_eq!(
            &out[..],
            br#"[{"jsonrpc":"2.0","id":1,"result":"pong"},{"jsonrpc":"2.0","id":2,"result":2}]"#
        );
        // The sync path refuses it instead.
        out.clear();
        assert!(responder.answer(
            &router(),
            br#"{"jsonrpc":"2.0","id":5,"method":"later"}"#,
            &mut out
        ));
        assert!(std::str::from_utf8(&out).unwrap().contains("-32603"));
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
        runtime.block_on(Responder::new().answer_bytes_async(&router, &frame, &mut out));
        runtime.block_on(Responder::new().answer_async(&router, &frame, &mut out));
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
