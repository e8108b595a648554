//! Reading a Streamable HTTP request: what its `Accept` takes, whether its body is JSON, its
//! session id; and `Unfinished`, the work of a POST that goes on once the POST is dropped.

use std::future::Future;
use std::pin::Pin;

use http::header::{HeaderMap, ACCEPT, CONTENT_TYPE};
use http::{Response, StatusCode};

use super::answer::refusal;
use super::body::McpBody;
use super::service::SESSION_HEADER;

/// Whether the body is declared `application/json`.
pub(crate) fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.trim_start().to_ascii_lowercase().starts_with("application/json"))
}

/// A handler's future that is not done: dropped with the POST's task, it goes on in a task
/// of its own (a client going away does not cancel its request; its stream can be resumed).
pub(crate) struct Unfinished(pub(crate) Option<Pin<Box<dyn Future<Output = ()> + Send>>>);

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
    let media = media.as_bytes();
    let main = media.split(|&b| b == b'/').next().unwrap_or(media);
    headers.get_all(ACCEPT).iter().any(|value| {
        value.as_bytes().split(|&b| b == b',').any(|range| {
            let range = range.split(|&b| b == b';').next().unwrap_or(range).trim_ascii();
            range.eq_ignore_ascii_case(media)
                || range == b"*/*"
                || range
                    .strip_suffix(b"/*")
                    .is_some_and(|kind| kind.eq_ignore_ascii_case(main))
        })
    })
}
