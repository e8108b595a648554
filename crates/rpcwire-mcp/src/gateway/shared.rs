//! The MCP gateway's handle: its settings and state, shared by every clone — the front door
//! (`service.rs`) and the forwarding (`forward.rs`) work on it.

use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use super::session::{Children, GatewaySession, Servers, SessionLimits};
use super::stateless::StatelessChildren;
use crate::http::front::Door;
use crate::http::session::Sessions;
use crate::parse::Parser;

/// The error code of a request refused because the gateway is shutting down:
/// [`codes::UNAVAILABLE`](crate::codes::UNAVAILABLE) (-32034).
pub const SHUTTING_DOWN: i64 = crate::codes::UNAVAILABLE;

/// A stdio MCP server served over Streamable HTTP: each client session gets its own child
/// process, started on `initialize`; messages go both ways without their params or results
/// being decoded — the client's requests and notifications down, the child's answers,
/// progress, log messages and requests (sampling, elicitation, roots) up on the stream of
/// the request they belong to (or the session's GET stream), the client's answers back down.
/// Cancellation goes both ways; a client that leaves a request's stream and does not resume
/// it within a grace period (5 s by default) gets the request cancelled at the child.
///
/// - Faults: a child that exits, closes its output or writes a line over the limit ends its
///   session — every request under way is answered with an error
///   ([`SERVER_GONE`](super::SERVER_GONE)) at once and the session's next request gets `404`; a request the
///   child does not answer in time gets [`SERVER_TIMEOUT`](super::SERVER_TIMEOUT); a child
///   that cannot be started is answered `502` with the reason.
/// - Children are ended with their whole process group (stdin closed, a grace period to
///   exit, `SIGTERM`, another, then `SIGKILL`) and reaped, on `DELETE`, idle expiry, shutdown, or
///   their own end.
/// - Bounds: sessions (1,024), requests under way per session (64) and overall (1,024),
///   answered `-32000` at once when full; events kept per stream for slow or reconnecting
///   readers.
/// - Checks: `Host` and `Origin` must name an allowed host (the loopback names by
///   default), a bearer token when one is set (compared in constant time), and the
///   Streamable HTTP ones (`Accept`, `Content-Type`, session ids, body size).
/// - `GET /healthz` answers with the counts of sessions and children.
///
/// ```no_run
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> std::io::Result<()> {
/// use rpcwire::mcp::gateway::{McpGateway, StdioCommand};
/// let gateway = McpGateway::new(StdioCommand::new("npx").args(["-y", "@modelcontextprotocol/server-everything"]))
///     .with_token("s3cret");
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8000").await?;
/// gateway.serve(listener).await // http://127.0.0.1:8000/mcp
/// # }
/// ```
#[derive(Clone)]
pub struct McpGateway {
    pub(super) servers: Arc<Servers>,
    /// With one child for all sessions: the children running now, if any.
    pub(super) shared: Option<Arc<tokio::sync::Mutex<Option<Arc<Children>>>>>,
    /// The children of the stateless revision's requests.
    pub(super) stateless: Arc<StatelessChildren>,
    /// The stateless revision's listen streams open at most.
    pub(super) listeners: Arc<Semaphore>,
    pub(super) sessions: Arc<Sessions<GatewaySession>>,
    pub(super) limits: SessionLimits,
    pub(super) config: Arc<Config>,
    pub(super) total: Arc<Semaphore>,
    pub(super) max_total: usize,
    pub(super) children: Arc<AtomicUsize>,
    pub(super) closing: CancellationToken,
    pub(super) parser: Arc<Parser>,
}

#[derive(Clone, Debug)]
pub(super) struct Config {
    pub(super) door: Door,
    pub(super) init_timeout: Duration,
    pub(super) retry: Duration,
    /// What the listener serves TLS with, if any.
    pub(super) tls: Option<crate::transport::tls::ServerTls>,
}

impl std::fmt::Debug for McpGateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpGateway")
            .field(
                "servers",
                &self
                    .servers
                    .commands
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>(),
            )
            .field("sessions", &self.sessions.len())
            .field("children", &self.child_count())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gateway::StdioCommand;

    #[test]
    fn a_gateway_shows_its_servers_and_counts() {
        let gateway = McpGateway::new(StdioCommand::new("mcp-server").arg("--stdio"));
        let shown = format!("{gateway:?}");
        assert!(shown.starts_with("McpGateway"), "{shown}");
        assert!(shown.contains("mcp-server"), "{shown}");
        assert!(
            shown.contains("sessions: 0") && shown.contains("children: 0"),
            "{shown}"
        );
    }
}
