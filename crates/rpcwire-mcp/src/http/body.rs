//! `McpBody`: the body of a Streamable HTTP answer — JSON in one piece, or an SSE stream
//! whose events arrive as the handler sends them.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use tokio::sync::mpsc;

/// The body of a [`StreamableHttpService`](super::StreamableHttpService) answer.
///
/// ```
/// use http_body::Body;
/// let body = rpcwire::mcp::http::McpBody::empty();
/// assert!(body.is_end_stream());
/// ```
#[derive(Debug)]
pub struct McpBody(Kind);

#[derive(Debug)]
enum Kind {
    Whole(Option<Bytes>),
    Events(mpsc::Receiver<Bytes>),
}

impl McpBody {
    /// An empty body.
    ///
    /// ```
    /// use http_body::Body;
    /// assert_eq!(rpcwire::mcp::http::McpBody::empty().size_hint().exact(), Some(0));
    /// ```
    pub fn empty() -> McpBody {
        McpBody(Kind::Whole(None))
    }

    pub(crate) fn whole(bytes: Bytes) -> McpBody {
        McpBody(Kind::Whole((!bytes.is_empty()).then_some(bytes)))
    }

    pub(crate) fn events(receiver: mpsc::Receiver<Bytes>) -> McpBody {
        McpBody(Kind::Events(receiver))
    }
}

impl Body for McpBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match &mut self.0 {
            Kind::Whole(bytes) => Poll::Ready(bytes.take().map(|bytes| Ok(Frame::data(bytes)))),
            Kind::Events(receiver) => receiver
                .poll_recv(cx)
                .map(|event| event.map(|bytes| Ok(Frame::data(bytes)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self.0, Kind::Whole(None))
    }

    fn size_hint(&self) -> SizeHint {
        match &self.0 {
            Kind::Whole(bytes) => SizeHint::with_exact(bytes.as_ref().map_or(0, |b| b.len() as u64)),
            Kind::Events(_) => SizeHint::default(),
        }
    }
}
