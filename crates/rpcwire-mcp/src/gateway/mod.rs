//! The MCP gateway (`mcp` and `http` features): [`McpGateway`] serves an MCP server that
//! speaks over stdio ([`StdioCommand`]) to clients over Streamable HTTP, a child process per
//! session, forwarding messages both ways without decoding their params or results; and
//! [`connect_stdio`] brings a remote Streamable HTTP server to a local host over stdio.
//!
//! Inside, one way: `command` says how a child is started; `link` is the transport over its
//! stdio (a line over the limit ends it); `upward` sends what the child sends the client on
//! the right stream; `session` ties a client session to its child and watches the child;
//! `stateless` keeps the children of the stateless revision's requests; `service` answers
//! HTTP requests through all of these. `connect` is the other direction, on the Streamable
//! HTTP client. `metrics` reports through the `metrics` facade.
//!
//! ```no_run
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> std::io::Result<()> {
//! use rpcwire::mcp::gateway::{McpGateway, StdioCommand};
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8000").await?;
//! McpGateway::new(StdioCommand::shell("uvx mcp-server-time")).serve(listener).await
//! # }
//! ```

mod aggregate;
mod command;
mod connect;
mod forward;
mod link;
mod metrics;
mod service;
mod session;
mod shared;
mod stateless;
mod upward;

pub use aggregate::SEPARATOR;
pub use command::StdioCommand;
pub use connect::{connect, connect_stdio, connect_stdio_with, connect_with};
pub use session::{SERVER_GONE, SERVER_TIMEOUT};
pub use shared::{McpGateway, SHUTTING_DOWN};
