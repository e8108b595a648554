//! Reading a Streamable HTTP request: what its `Accept` takes, whether its body is JSON, its
//! body within its limits, its session (and the answers to GET and DELETE that follow from
//! it, for any kind of session); and `Unfinished`, the work of a POST that goes on once the
//! POST is dropped.

use std::future::Future;
use std::pin::Pin;

use http::header::{HeaderMap, ACCEPT, CONTENT_TYPE};
use http::{Response, StatusCode};

use std::sync::Arc;

use super::answer::{event_stream, refusal};
use super::body::McpBody;
use super::headers::{LAST_EVENT_ID, SESSION_HEADER, VERSION_HEADER};
use super::stream::parse_event_id;
use super::streams::SessionStreams;

/// Whether the body is declared `application/json`.
pub(crate) fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| {
            value
                .trim_start()
                .to_ascii_lowercase()
                .starts_with("application/json")
        })
}

/// A handler's future that is not done: dropped with the POST's task, it goes on in a task
/// of its own (a client going away does not cancel its request; its stream can be resumed).
struct Unfinished(Option<Pin<Box<dyn Future<Output = ()> + Send>>>);

impl Drop for Unfinished {
    fn drop(&mut self) {
        if let Some(work) = self.0.take() {
            tokio::spawn(work);
        }
    }
}

/// A session id header that is empty or not visible ASCII.
pub(crate) struct InvalidSessionId;

impl InvalidSessionId {
    pub(crate) fn answer(self) -> Response<McpBody> {
        refusal(StatusCode::BAD_REQUEST, "Bad Request: invalid Mcp-Session-Id")
    }
}

/// The session id header: `Ok(None)` when absent.
pub(crate) fn session_id(headers: &HeaderMap) -> Result<Option<&str>, InvalidSessionId> {
    match headers.get(SESSION_HEADER) {
        None => Ok(None),
        Some(value) => match value.to_str() {
            Ok(id) if !id.is_empty() => Ok(Some(id)),
            _ => Err(InvalidSessionId),
        },
    }
}

/// Whether `Accept` takes `media` (or `*/*`, or `type/*`).
pub(crate) fn accepts(headers: &HeaderMap, media: &str) -> bool {
    let [taken] = accepted(headers, [media]);
    taken
}

/// For each of `media`, whether `Accept` takes it (or `*/*`, or `type/*`): the header looked
/// up and its ranges read once for all of them.
fn accepted<const N: usize>(headers: &HeaderMap, media: [&str; N]) -> [bool; N] {
    let mut taken = [false; N];
    for value in headers.get_all(ACCEPT) {
        for range in value.as_bytes().split(|&b| b == b',') {
            let range = range.split(|&b| b == b';').next().unwrap_or(range).trim_ascii();
            for (media, taken) in media.iter().zip(&mut taken) {
                let media = media.as_bytes();
                let main = media.split(|&b| b == b'/').next().unwrap_or(media);
                *taken |= range.eq_ignore_ascii_case(media)
                    || range == b"*/*"
                    || range
                        .strip_suffix(b"/*")
                        .is_some_and(|kind| kind.eq_ignore_ascii_case(main));
            }
        }
    }
    taken
}

/// What a POST's headers must say (`Accept` both JSON and SSE, a JSON body): `Some` refusal
/// when they do not.
pub(crate) fn refuse_post_headers(headers: &HeaderMap) -> Option<Response<McpBody>> {
    if accepted(headers, ["application/json", "text/event-stream"]) != [true, true] {
        return Some(refusal(
            StatusCode::NOT_ACCEPTABLE,
            "Not Acceptable: the client must accept both application/json and text/event-stream",
        ));
    }
    if !is_json(headers) {
        return Some(refusal(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Unsupported Media Type: use application/json",
        ));
    }
    None
}

/// A POST's whole body, at most `max` bytes (checked against its declared size before it is
/// read), within `timeout`; the refusal otherwise.
pub(crate) async fn read_post_body<B>(
    body: B,
    max: usize,
    timeout: std::time::Duration,
) -> Result<bytes::Bytes, Response<McpBody>>
where
    B: http_body::Body,
    B::Error: std::fmt::Display,
{
    use crate::transport::http::body::{read_limited, within, ReadError};
    if http_body::Body::size_hint(&body).lower() > max as u64 {
        return Err(refusal(StatusCode::PAYLOAD_TOO_LARGE, "Payload Too Large"));
    }
    let body = std::pin::pin!(body);
    match within(timeout, read_limited(body, max)).await {
        Some(Ok(body)) => Ok(body),
        Some(Err(ReadError::TooLarge)) => Err(refusal(StatusCode::PAYLOAD_TOO_LARGE, "Payload Too Large")),
        Some(Err(ReadError::Broken(_))) => Err(refusal(
            StatusCode::BAD_REQUEST,
            "Bad Request: the body broke off",
        )),
        None => Err(refusal(StatusCode::REQUEST_TIMEOUT, "Request Timeout")),
    }
}

/// The rest of a stream of `streams` a GET with `Last-Event-ID` asks for, when it is kept.
pub(crate) fn resumed(streams: &SessionStreams, headers: &HeaderMap) -> Option<Response<McpBody>> {
    let events = headers
        .get(LAST_EVENT_ID)
        .and_then(|value| value.to_str().ok())
        .and_then(parse_event_id)
        .and_then(|(number, seq)| streams.stream(number)?.attach(Some(seq)))?;
    Some(event_stream(events))
}

/// A GET without `Last-Event-ID`: `stream` from now on, or `409` while one is being read.
pub(crate) fn standalone(stream: Option<Arc<super::stream::EventStream>>) -> Response<McpBody> {
    match stream {
        Some(stream) => event_stream(stream.attach_from_now()),
        None => refusal(
            StatusCode::CONFLICT,
            "Conflict: the session's stream is open already",
        ),
    }
}

/// The answer to a POST whose `work` writes to `output`: run here, in the POST's own task,
/// until it is done (JSON, or the stream it made) or its answer has become a stream; when the
/// POST is dropped before, the work goes on in a task of its own.
pub(crate) async fn answer_post(
    output: &super::output::PostOutput,
    work: Pin<Box<dyn Future<Output = ()> + Send>>,
) -> Response<McpBody> {
    use super::output::Outcome;
    let mut work = Unfinished(Some(work));
    let handler = work.0.as_mut().expect("just made");
    tokio::select! {
        biased;
        () = handler => {
            work.0 = None;
            match output.outcome() {
                Outcome::Json(Some(answer)) => super::answer::json_answer(answer),
                // Cancelled (no answer, as MCP wants): a stream that ends at once.
                Outcome::Json(None) => event_stream(tokio::sync::mpsc::channel(1).1),
                Outcome::Events(events) => event_stream(events),
            }
        }
        events = output.streaming() => event_stream(events),
    }
}

/// Whether a `ping` POSTed without a session id is answered: only from a client that names no
/// revision yet. Under a handshake revision's `MCP-Protocol-Version` the session id is
/// required, as the specification says of a server that issues session ids (only `initialize`
/// goes without one). The server and the gateway both ask here.
pub(crate) fn sessionless_ping(headers: &HeaderMap) -> bool {
    !headers.contains_key(VERSION_HEADER)
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn accept(values: &[&'static str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append(ACCEPT, HeaderValue::from_static(value));
        }
        headers
    }

    const BOTH: [&str; 2] = ["application/json", "text/event-stream"];

    #[test]
    fn every_media_asked_is_found_in_one_reading_of_the_ranges() {
        assert_eq!(
            accepted(&accept(&["application/json, text/event-stream"]), BOTH),
            [true, true]
        );
        assert_eq!(
            accepted(&accept(&["application/*;q=0.9", "TEXT/EVENT-STREAM"]), BOTH),
            [true, true]
        );
        assert_eq!(accepted(&accept(&["*/*"]), BOTH), [true, true]);
        assert_eq!(accepted(&accept(&["application/json"]), BOTH), [true, false]);
        assert_eq!(accepted(&accept(&["text/*, image/png"]), BOTH), [false, true]);
        assert_eq!(accepted(&accept(&[]), BOTH), [false, false]);
        assert!(accepts(
            &accept(&[" text/event-stream ; q=1"]),
            "text/event-stream"
        ));
        assert!(!accepts(&accept(&["application/jsonx"]), "application/json"));
    }
}
