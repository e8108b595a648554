//! What a handler learns of the HTTP request it serves (`http` feature): its headers, and
//! with `auth` the verified token's claims. The front door sets them for the time the
//! request is served (a task-local value, carried by the futures that serve it), and a
//! handler's [`McpContext`](crate::McpContext) picks them up when it is made.

use std::future::Future;
use std::sync::Arc;

/// The HTTP request behind an MCP request.
#[derive(Debug)]
pub(crate) struct RequestInfo {
    pub(crate) headers: http::HeaderMap,
    #[cfg(feature = "auth")]
    pub(crate) claims: Option<crate::auth::Claims>,
}

tokio::task_local! {
    static REQUEST_INFO: Arc<RequestInfo>;
}

/// `future`, served with `info` as its request's.
pub(crate) fn serving<F: Future>(info: Arc<RequestInfo>, future: F) -> impl Future<Output = F::Output> {
    REQUEST_INFO.scope(info, future)
}

/// The request being served, if any.
pub(crate) fn current() -> Option<Arc<RequestInfo>> {
    REQUEST_INFO.try_with(Arc::clone).ok()
}
