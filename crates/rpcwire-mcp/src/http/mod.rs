//! MCP over Streamable HTTP (`mcp` and `http` features): [`StreamableHttpService`], a tower
//! `Service` that serves an [`McpServer`](super::McpServer) with sessions, SSE streams and
//! resumption; and [`StreamableHttpClient`], the client side as a transport for a `Peer`.
//!
//! Inside, one way: `stream` (an SSE stream and its replay log), `origin` (the
//! DNS-rebinding check) and `answer` (the shapes of an answer) are leaves; `session` keeps streams; `output` answers a POST with JSON
//! or, once the handler sends something first, a stream; `remote` sends on it;
//! `stateless` serves the stateless revision (2026-07-28: no session; headers checked against
//! the body; JSON or an SSE stream per request; `subscriptions/listen`);
//! `service` answers requests through all of these. On the client side, `events` reads SSE
//! streams and `client` posts frames and reads their answers.

pub(crate) mod answer;
mod body;
mod client;
mod credentials;
mod events;
pub(crate) mod front;
pub(crate) mod headers;
pub(crate) mod origin;
pub(crate) mod output;
mod posted;
mod remote;
pub(crate) mod request;
pub(crate) mod service;
pub(crate) mod serving;
pub(crate) mod session;
pub(crate) mod stateless;
pub(crate) mod stream;
pub(crate) mod streams;

pub use body::McpBody;
pub use client::{ClientReceiver, ClientSender, StreamableHttpClient};
pub use headers::{SESSION_HEADER, TOO_MANY_REQUESTS, VERSION_HEADER};
pub use service::StreamableHttpService;
