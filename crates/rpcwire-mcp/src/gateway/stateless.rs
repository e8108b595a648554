//! The stateless revision (2026-07-28) through the gateway: which POSTs belong to it, and the
//! children that serve them — one (of each server) for every stateless request, started on
//! the first and ended once idle, the requests of different clients multiplexed on them as a
//! shared child's are (nothing one client's request sends before its answer reaches another).

use std::collections::HashMap;
use std::io;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use http::header::HeaderMap;
use http::Response;
use serde_json::{json, Map, Value};
use tokio::sync::OwnedSemaphorePermit;

use super::session::{Children, ClientRequest};
use super::upward::Subscriber;
use crate::http::answer::event_stream;
use crate::http::stateless::{claims_stateless, error_answer, notification, ListenFilter};
use crate::http::McpBody;
use crate::message::{Id, JsonBytes, Params};
use crate::sync::lock_unpoisoned;

/// Events a listen stream holds for a client that does not read.
const LISTEN_BUFFER: usize = 32;

/// The children that serve stateless requests, while there are any.
#[derive(Default)]
pub(crate) struct StatelessChildren {
    running: tokio::sync::Mutex<Option<Arc<Children>>>,
    last_used: Mutex<Option<Instant>>,
    /// Until when `server/discover` is answered here: the servers said they have no such
    /// method (they serve the handshake revisions only).
    refused_until: Mutex<Option<Instant>>,
    /// The arguments the running children's tools mirror in headers, and when they were
    /// listed.
    mirrored: tokio::sync::Mutex<Mirrored>,
}

/// What the children's tools mirror in headers, as last listed.
#[derive(Default)]
struct Mirrored {
    /// The children listed.
    of: std::sync::Weak<Children>,
    tools: HashMap<String, Vec<(String, String)>>,
    listed: Option<Instant>,
}

/// How often the tools are listed again at most, for a tool the last list did not have.
const RELIST_AFTER: Duration = Duration::from_secs(5);

impl StatelessChildren {
    /// The children running, or new ones from `spawn` when none are.
    pub(crate) async fn get(
        &self,
        spawn: impl FnOnce() -> io::Result<Arc<Children>>,
    ) -> io::Result<Arc<Children>> {
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

    /// The arguments `tool` of `children` mirrors in headers: from their `tools/list`
    /// (asked with the client's `meta`), listed when it was not yet, or when the tool is not
    /// in the last list and that is older than a few seconds.
    pub(crate) async fn mirrored(
        &self,
        children: &Arc<Children>,
        tool: &str,
        meta: Option<&str>,
    ) -> Vec<(String, String)> {
        let mut mirrored = self.mirrored.lock().await;
        let same = mirrored
            .of
            .upgrade()
            .is_some_and(|listed| Arc::ptr_eq(&listed, children));
        let stale = mirrored
            .listed
            .map_or(true, |listed| listed.elapsed() >= RELIST_AFTER);
        if !same || (!mirrored.tools.contains_key(tool) && stale) {
            mirrored.tools = children.mirrored_headers(meta).await;
            mirrored.of = Arc::downgrade(children);
            mirrored.listed = Some(Instant::now());
        }
        mirrored.tools.get(tool).cloned().unwrap_or_default()
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
            if running.as_ref().is_some_and(|children| is_idle(children)) {
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
        if !quiet || !running.as_ref().is_some_and(|children| is_idle(children)) {
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

/// Whether nothing is under way on `children` and no listen stream is open.
fn is_idle(children: &Children) -> bool {
    children.up.under_way() == 0 && children.up.subscribers() == 0
}

/// `subscriptions/listen` (request `id`, its JSON text `id_text`): an SSE stream that
/// acknowledges the part of the filter the servers can serve (by the capabilities their
/// `server/discover` names: `listChanged`, `subscribe`), then carries those changes of the
/// children, each tagged with the listen request's id, until the client goes away (or the
/// children end). Resource updates are asked of the servers with `resources/subscribe`.
/// `permit` is held while the stream is open.
pub(crate) async fn listen(
    children: &Arc<Children>,
    id: &Id<'static>,
    id_text: &[u8],
    params: Option<&JsonBytes>,
    permit: OwnedSemaphorePermit,
) -> Response<McpBody> {
    let text = params.map_or("{}", JsonBytes::as_str);
    let asked = match ListenFilter::of(Some(text)) {
        Ok(asked) => asked,
        Err(error) => return error_answer(id, &error),
    };
    let meta = Params::new(text).get("_meta").map(|meta| meta.get().to_owned());
    let with_meta = |members: &str| {
        let mut params = format!("{{{members}");
        if let Some(meta) = &meta {
            params.push_str(if members.is_empty() { "" } else { "," });
            params.push_str("\"_meta\":");
            params.push_str(meta);
        }
        params.push('}');
        JsonBytes::new(bytes::Bytes::from(params)).ok()
    };
    let discover = ClientRequest {
        id: Id::null(),
        method: "server/discover".into(),
        params: with_meta(""),
    };
    let discovered = children
        .ask(&discover)
        .await
        .and_then(|result| result.decode::<Value>().ok());
    let capabilities = discovered
        .as_ref()
        .map_or(&Value::Null, |result| &result["capabilities"]);
    let can = |capability: &str, flag: &str| capabilities[capability][flag].as_bool() == Some(true);
    let mut lists = Vec::new();
    let mut accepted = Map::new();
    for (asked, capability, method, key) in [
        (
            asked.tools_list_changed,
            "tools",
            "notifications/tools/list_changed",
            "toolsListChanged",
        ),
        (
            asked.prompts_list_changed,
            "prompts",
            "notifications/prompts/list_changed",
            "promptsListChanged",
        ),
        (
            asked.resources_list_changed,
            "resources",
            "notifications/resources/list_changed",
            "resourcesListChanged",
        ),
    ] {
        if asked && can(capability, "listChanged") {
            lists.push(method);
            accepted.insert(key.into(), Value::Bool(true));
        }
    }
    let uris = if can("resources", "subscribe") {
        asked.resource_subscriptions
    } else {
        Vec::new()
    };
    for uri in &uris {
        // Best effort: a server that refuses it sends no updates.
        let subscribe = ClientRequest {
            id: Id::null(),
            method: "resources/subscribe".into(),
            params: JsonBytes::new(bytes::Bytes::from(json!({ "uri": uri }).to_string())).ok(),
        };
        let _ = children.ask(&subscribe).await;
    }
    if !uris.is_empty() {
        accepted.insert("resourceSubscriptions".into(), Value::from(uris.clone()));
    }
    let id_value: Value = serde_json::from_slice(id_text).unwrap_or(Value::Null);
    let tag = json!({ "io.modelcontextprotocol/subscriptionId": id_value });
    let (events, receiver) = tokio::sync::mpsc::channel(LISTEN_BUFFER);
    let ack = notification(
        "notifications/subscriptions/acknowledged",
        &json!({ "notifications": accepted, "_meta": tag }),
    );
    let _ = events.try_send(ack);
    let open = events.clone();
    children.up.subscribe(Subscriber {
        lists,
        uris,
        id_text: String::from_utf8_lossy(id_text).into_owned(),
        events,
    });
    tokio::spawn(async move {
        open.closed().await;
        drop(permit);
    });
    event_stream(receiver)
}

/// Whether a POST without a session belongs to the stateless revision: `server/discover`,
/// or an `MCP-Protocol-Version` that names no revision with a handshake, or, without that
/// header, a body that carries the revision in `_meta`.
pub(crate) fn claims(headers: &HeaderMap, method: &str, body: &[u8]) -> bool {
    // Which handshake revisions are served is the children's to say: every one is taken.
    method == "server/discover" || claims_stateless(headers, body, |_| true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::headers::VERSION_HEADER;
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
