//! `FrameForwarder` (`tokio` feature): a router's fallback that answers a whole
//! single-request frame itself, from the frame's bytes — a gateway passes the frame on with
//! only its id changed and the answer back the same way, nothing decoded or encoded again.

use std::future::Future;
use std::pin::Pin;

use bytes::Bytes;

use crate::message::Message;

/// The whole answer frame to a forwarded request (a response with the client's id).
pub(crate) type ForwardedAnswer = Pin<Box<dyn Future<Output = Bytes> + Send>>;

/// What a router hands a single request for a method it does not serve itself, before its
/// fallback handler: the frame it came in and the request parsed from it.
pub(crate) trait FrameForwarder: Send + Sync {
    /// The answer to `request` (parsed from `frame`, which holds it alone), or `None` to
    /// let the router answer it through its fallback handler as usual.
    fn forward(&self, frame: &Bytes, request: &Message<'_>) -> Option<ForwardedAnswer>;
}
