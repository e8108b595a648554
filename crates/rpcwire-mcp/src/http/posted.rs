//! What the Streamable HTTP client needs to know of a frame before it POSTs it: the ids of
//! the requests in it (the answers it owes), whether it is `initialize`, the method and name
//! for the standard headers (`Mcp-Method`, `Mcp-Name`), a tool call's marked arguments
//! (`Mcp-Param-*`), the request a cancellation ends, the revision a stateless request names.

use std::collections::HashSet;

use crate::message::{Message, Params};
use crate::param_headers::ParamHeaders;
use crate::parse::Parsed;

/// What a POST's headers say of its frame.
#[derive(Clone, Default)]
pub(crate) struct Posted {
    /// The ids (as JSON text) of the requests in it.
    pub(crate) ids: HashSet<String>,
    /// Whether one is `initialize`.
    pub(crate) initialize: bool,
    /// A single message's method (`Mcp-Method`).
    pub(crate) method: Option<String>,
    /// A single request's tool or prompt name, or resource URI (`Mcp-Name`).
    pub(crate) name: Option<String>,
    /// A tool call's marked arguments (`Mcp-Param-*`): header names and values.
    pub(crate) params: Vec<(String, String)>,
    /// The id (JSON text) a `notifications/cancelled` cancels.
    pub(crate) cancelled: Option<String>,
    /// A single request's revision in its `_meta` (the stateless revision's requests say
    /// it there): sent as its `MCP-Protocol-Version`, outside any session.
    pub(crate) stateless: Option<String>,
}

/// What `frame` holds, as far as the POST carrying it needs to know; a tool call's marked
/// arguments from `marks`.
pub(crate) fn requests_in(frame: &[u8], marks: Option<&ParamHeaders>) -> Posted {
    let mut posted = Posted::default();
    let mut one = |message: &Message<'_>| {
        if let Message::Request(request) = message {
            posted.ids.insert(request.id().json_parts().concat());
            posted.initialize |= request.method() == "initialize";
        }
    };
    match crate::parse(frame) {
        Ok(Parsed::Single(message)) => {
            one(&message);
            let (method, params) = match &message {
                Message::Request(request) => (Some(request.method()), request.params()),
                Message::Notification(notification) => (Some(notification.method()), notification.params()),
                _ => (None, None),
            };
            if method == Some("notifications/cancelled") {
                posted.cancelled = crate::transport::CancelProtocol::Mcp.cancelled_id(params);
            }
            posted.method = method.map(str::to_owned);
            posted.stateless = params
                .filter(|_| matches!(message, Message::Request(_)))
                .and_then(|params| params.get("_meta"))
                .and_then(|meta| {
                    let version = Params::new(meta.get()).get("io.modelcontextprotocol/protocolVersion")?;
                    version.decode::<String>().ok()
                });
            let target = match method {
                Some("tools/call" | "prompts/get") => "name",
                Some("resources/read") => "uri",
                _ => "",
            };
            posted.name = params
                .filter(|_| !target.is_empty())
                .and_then(|params| params.get(target))
                .and_then(|value| value.decode::<String>().ok());
            if let (Some(marks), Some("tools/call"), Some(tool)) = (marks, method, &posted.name) {
                let arguments = params
                    .and_then(|params| params.get("arguments"))
                    .and_then(|arguments| arguments.decode::<serde_json::Value>().ok())
                    .unwrap_or_default();
                posted.params = marks.headers(tool, &arguments);
            }
        }
        Ok(Parsed::Batch(batch)) => batch.iter().flatten().for_each(|message| one(&message)),
        Err(_) => {}
    }
    posted
}
