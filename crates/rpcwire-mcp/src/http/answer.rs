//! The shapes of a Streamable HTTP answer: a JSON body with its status, an SSE stream,
//! `202 Accepted`, a refusal with a JSON-RPC error body.

use bytes::{Bytes, BytesMut};
use http::header::{HeaderValue, CACHE_CONTROL, CONTENT_TYPE};
use http::{Response, StatusCode};

use super::body::McpBody;
use crate::encode;
use crate::message::{ErrorObject, Id};

pub(crate) fn json_answer(body: Bytes) -> Response<McpBody> {
    json_status(StatusCode::OK, body)
}

pub(crate) fn json_status(status: StatusCode, body: Bytes) -> Response<McpBody> {
    let mut response = Response::new(McpBody::whole(body));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// An SSE stream of the events `events` gives, unbuffered by proxies on the way.
pub(crate) fn event_stream(events: tokio::sync::mpsc::Receiver<Bytes>) -> Response<McpBody> {
    let mut response = Response::new(McpBody::events(events));
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

pub(crate) fn accepted() -> Response<McpBody> {
    let mut response = Response::new(McpBody::empty());
    *response.status_mut() = StatusCode::ACCEPTED;
    response
}

/// An HTTP refusal with a JSON-RPC error body (id null, [`codes::REFUSED`](crate::codes::REFUSED)),
/// as the SDKs answer.
pub(crate) fn refusal(status: StatusCode, message: &str) -> Response<McpBody> {
    rpc_refusal(status, crate::codes::REFUSED, message)
}

pub(crate) fn rpc_refusal(status: StatusCode, code: i64, message: &str) -> Response<McpBody> {
    let mut body = BytesMut::new();
    encode::write_error(&mut body, &Id::null(), &ErrorObject::new(code, message));
    json_status(status, body.freeze())
}
