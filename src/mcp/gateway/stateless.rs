//! The stateless revision (2026-07-28) through the gateway: which POSTs belong to it, and the
//! children that serve them — one (of each server) for every stateless request, started on
//! the first and ended once idle, the requests of different clients multiplexed on them as a
//! shared child's are (nothing one client's request sends before its answer reaches another).

use std::io;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use http::header::HeaderMap;

use super::session::Children;
use crate::mcp::http::service::VERSION_HEADER;
use crate::mcp::version::ProtocolVersion;
use crate::sync::lock_unpoisoned;

/// The children that serve stateless requests, while there are any.
#[derive(Default)]
pub(crate) struct StatelessChildren {
    running: tokio::sync::Mutex<Option<Arc<Children>>>,
    last_used: Mutex<Option<Instant>>,
    /// Until when `server/discover` is answered here: the servers said they have no such
    /// method (they serve the handshake revisions only).
    refused_until: Mutex<Option<Instant>>,
}

impl StatelessChildren {
    /// The children running, or new ones from `spawn` when none are.
    pub(crate) async fn get(&self, spawn: impl FnOnce() -> io::Result<Arc<Children>>) -> io::Result<Arc<Children>> {
        let mut running = self.running.lock().await;
        *lock_unpoisoned(&self.last_used) = Some(Instant::now());
        match &*running {
            Some(children) if !children.is_ended() => Ok(children.clone()),
            _ => {
                let children = spawn()?;
                *running = Some(children.clone());
                Ok(children)
            }
        }
    }

    /// Whether `server/discover` is refused without asking the servers.
    pub(crate) fn refuses_discover(&self) -> bool {
        lock_unpoisoned(&self.refused_until).is_some_and(|until| Instant::now() < until)
    }

    /// The servers refused `server/discover`: they are ended unless a request is under way,
    /// and the next discoveries for `remember` are refused here.
    pub(crate) fn discover_refused(&self, remember: Duration) {
        *lock_unpoisoned(&self.refused_until) = Some(Instant::now() + remember);
        if let Ok(mut running) = self.running.try_lock() {
            if running.as_ref().is_some_and(|children| children.up.under_way() == 0) {
                if let Some(children) = running.take() {
                    children.end("the MCP server does not serve the stateless revision");
                }
            }
        }
    }

    /// Ends the children when nothing was asked of them for `idle` and nothing is under
    /// way; whether it did.
    pub(crate) fn sweep(&self, idle: Duration) -> bool {
        let quiet = lock_unpoisoned(&self.last_used).is_some_and(|used| used.elapsed() >= idle);
        let Ok(mut running) = self.running.try_lock() else {
            return false;
        };
        if !quiet || !running.as_ref().is_some_and(|children| children.up.under_way() == 0) {
            return false;
        }
        match running.take() {
            Some(children) => {
                children.end("idle");
                true
            }
            None => false,
        }
    }

    /// Ends the children, saying `why`.
    pub(crate) async fn end(&self, why: &str) {
        if let Some(children) = self.running.lock().await.take() {
            children.end(why);
        }
    }
}

/// Whether a POST without a session belongs to the stateless revision: `server/discover`,
/// or an `MCP-Protocol-Version` that names no revision with a handshake, or, without that
/// header, a body that carries the revision in `_meta`.
pub(crate) fn claims(headers: &HeaderMap, method: &str, body: &[u8]) -> bool {
    if method == "server/discover" {
        return true;
    }
    match headers.get(VERSION_HEADER) {
        Some(version) => !version
            .to_str()
            .ok()
            .and_then(|version| version.parse::<ProtocolVersion>().ok())
            .is_some_and(|version| !version.is_stateless()),
        None => memchr::memmem::find(body, b"io.modelcontextprotocol/protocolVersion").is_some(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::header::HeaderValue;

    #[test]
    fn what_the_stateless_revision_claims() {
        let with = |version: Option<&str>| {
            let mut headers = HeaderMap::new();
            if let Some(version) = version {
                headers.insert(VERSION_HEADER, HeaderValue::from_str(version).unwrap());
            }
            headers
        };
        let meta = br#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}"#;
        assert!(claims(&with(None), "server/discover", b"{}"));
        assert!(claims(&with(Some("2026-07-28")), "tools/list", b"{}"));
        assert!(claims(&with(Some("2099-01-01")), "tools/list", b"{}"));
        assert!(claims(&with(None), "tools/list", meta));
        assert!(!claims(&with(Some("2025-11-25")), "tools/list", meta));
        assert!(!claims(&with(None), "tools/list", b"{}"));
    }
}
