//! `ChangeNotifier`: tells the clients listening for changes (MCP 2026-07-28
//! `subscriptions/listen` streams) that a list or a resource changed.

use std::sync::Arc;

use tokio::sync::broadcast;

/// A list whose items changed.
///
/// ```
/// assert_eq!(rpcwire::mcp::ListChanged::Tools.method(), "notifications/tools/list_changed");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ListChanged {
    /// `tools/list`.
    Tools,
    /// `prompts/list`.
    Prompts,
    /// `resources/list` (and the templates).
    Resources,
}

impl ListChanged {
    /// The notification that says so.
    ///
    /// ```
    /// assert_eq!(rpcwire::mcp::ListChanged::Prompts.method(), "notifications/prompts/list_changed");
    /// ```
    pub fn method(self) -> &'static str {
        match self {
            ListChanged::Tools => "notifications/tools/list_changed",
            ListChanged::Prompts => "notifications/prompts/list_changed",
            ListChanged::Resources => "notifications/resources/list_changed",
        }
    }
}

/// One change, as listeners receive it.
#[derive(Clone, Debug)]
pub(crate) enum Change {
    List(ListChanged),
    ResourceUpdated(Arc<str>),
}

/// The way to tell listening clients about changes, from a handler
/// ([`McpContext::list_changed`](super::McpContext::list_changed)) or from anywhere else in the
/// program ([`McpServer::notifier`](super::McpServer::notifier)). Cheap to clone. A listener
/// that falls more than 64 changes behind misses the oldest (each says only "look again").
///
/// ```
/// use rpcwire::mcp::{ListChanged, McpServer};
/// let notifier = McpServer::new("demo", "1").notifier();
/// assert_eq!(notifier.list_changed(ListChanged::Tools), 0, "nobody is listening");
/// ```
#[derive(Clone, Debug)]
pub struct ChangeNotifier {
    sender: broadcast::Sender<Change>,
}

impl Default for ChangeNotifier {
    fn default() -> ChangeNotifier {
        ChangeNotifier::new()
    }
}

impl ChangeNotifier {
    pub(crate) fn new() -> ChangeNotifier {
        ChangeNotifier {
            sender: broadcast::channel(64).0,
        }
    }

    /// Tells the listeners that `list` changed; how many listen.
    ///
    /// ```
    /// let notifier = rpcwire::mcp::McpServer::new("demo", "1").notifier();
    /// assert_eq!(notifier.list_changed(rpcwire::mcp::ListChanged::Prompts), 0);
    /// ```
    pub fn list_changed(&self, list: ListChanged) -> usize {
        self.sender.send(Change::List(list)).unwrap_or(0)
    }

    /// Tells the listeners subscribed to `uri` that the resource changed; how many listen
    /// (to any resource).
    ///
    /// ```
    /// let notifier = rpcwire::mcp::McpServer::new("demo", "1").notifier();
    /// assert_eq!(notifier.resource_updated("mem://hello"), 0);
    /// ```
    pub fn resource_updated(&self, uri: &str) -> usize {
        self.sender.send(Change::ResourceUpdated(uri.into())).unwrap_or(0)
    }

    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Change> {
        self.sender.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_reach_those_listening_when_sent() {
        let notifier = ChangeNotifier::default();
        let mut listener = notifier.subscribe();
        assert_eq!(notifier.list_changed(ListChanged::Resources), 1);
        assert_eq!(notifier.resource_updated("a://b"), 1);
        assert!(matches!(
            listener.try_recv(),
            Ok(Change::List(ListChanged::Resources))
        ));
        assert!(matches!(listener.try_recv(), Ok(Change::ResourceUpdated(uri)) if &*uri == "a://b"));
        let methods: Vec<&str> = [ListChanged::Tools, ListChanged::Prompts, ListChanged::Resources]
            .map(ListChanged::method)
            .to_vec();
        assert_eq!(
            methods,
            [
                "notifications/tools/list_changed",
                "notifications/prompts/list_changed",
                "notifications/resources/list_changed"
            ]
        );
    }
}
