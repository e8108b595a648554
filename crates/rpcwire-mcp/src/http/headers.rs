//! The names Streamable HTTP gives its headers, and the code of a request refused for too
//! many under way: a leaf, for the server, the client and the gateway alike.

/// The header that carries the session id.
pub const SESSION_HEADER: &str = "mcp-session-id";
/// The header that carries the protocol revision.
pub const VERSION_HEADER: &str = "mcp-protocol-version";
pub(crate) const LAST_EVENT_ID: &str = "last-event-id";

/// The error code of a request refused because its session has too many under way (or the
/// server too many sessions): [`codes::REFUSED`](crate::codes::REFUSED) (-32000).
pub const TOO_MANY_REQUESTS: i64 = crate::codes::REFUSED;
