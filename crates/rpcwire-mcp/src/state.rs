//! What one MCP session remembers between requests — the revision agreed on, the client's
//! capabilities, its log level, its subscriptions — for the session's router, the handlers'
//! context and the stateless revision (whose requests each carry theirs).

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::Value;

use super::changes::{Change, ChangeNotifier};
use super::logging::LogLevel;
use super::version::ProtocolVersion;
use crate::message::RawJson;
use crate::sync::lock_unpoisoned;

/// No revision agreed on yet.
const NO_VERSION: u8 = u8::MAX;
/// No log message wanted (a stateless request without `logLevel`).
const NO_LOGGING: u8 = u8::MAX;

/// What one session remembers between requests.
#[derive(Debug)]
pub(crate) struct SessionState {
    /// The index in `ProtocolVersion::ALL` of the revision agreed on, or `NO_VERSION`.
    pub(crate) version: AtomicU8,
    /// The index in `LogLevel::ALL` of the least severe level the client wants.
    pub(crate) log_level: AtomicU8,
    /// On while the revision agreed on allows batches (2025-03-26).
    pub(crate) batches: Arc<AtomicBool>,
    pub(crate) client_capabilities: Mutex<Value>,
    pub(crate) subscriptions: Mutex<HashSet<String>>,
    pub(crate) changes: ChangeNotifier,
}

impl SessionState {
    pub(crate) fn new(changes: ChangeNotifier) -> SessionState {
        SessionState {
            version: AtomicU8::new(NO_VERSION),
            log_level: AtomicU8::new(0),
            batches: Arc::new(AtomicBool::new(false)),
            client_capabilities: Mutex::new(Value::Null),
            subscriptions: Mutex::new(HashSet::new()),
            changes,
        }
    }

    /// The state of one stateless request (2026-07-28): what its `_meta` says.
    pub(crate) fn stateless(
        changes: ChangeNotifier,
        capabilities: Value,
        log_level: Option<LogLevel>,
    ) -> SessionState {
        let state = SessionState::new(changes);
        state.set_version(ProtocolVersion::V2026_07_28);
        *lock_unpoisoned(&state.client_capabilities) = capabilities;
        match log_level {
            Some(level) => state.set_log_level(level),
            None => state.log_level.store(NO_LOGGING, Ordering::Relaxed),
        }
        state
    }

    pub(crate) fn version(&self) -> Option<ProtocolVersion> {
        ProtocolVersion::ALL
            .get(usize::from(self.version.load(Ordering::Acquire)))
            .copied()
    }

    pub(crate) fn set_version(&self, version: ProtocolVersion) {
        let index = ProtocolVersion::ALL
            .iter()
            .position(|v| *v == version)
            .unwrap_or(0);
        self.version.store(index as u8, Ordering::Release);
        self.batches.store(version.allows_batches(), Ordering::Release);
    }

    /// Whether a log message at `level` goes to the client.
    pub(crate) fn logs(&self, level: LogLevel) -> bool {
        LogLevel::ALL
            .get(usize::from(self.log_level.load(Ordering::Relaxed)))
            .is_some_and(|least| level >= *least)
    }

    pub(crate) fn set_log_level(&self, level: LogLevel) {
        let index = LogLevel::ALL.iter().position(|l| *l == level).unwrap_or(0);
        self.log_level.store(index as u8, Ordering::Relaxed);
    }

    pub(crate) fn client_capabilities(&self) -> Value {
        lock_unpoisoned(&self.client_capabilities).clone()
    }

    /// Whether the client declared `capability`.
    pub(crate) fn has_capability(&self, capability: &str) -> bool {
        lock_unpoisoned(&self.client_capabilities)
            .get(capability)
            .is_some_and(|declared| !declared.is_null())
    }

    /// The notification (method and params) a change is to this session: list changes
    /// always, a resource's update when the client subscribed to it.
    pub(crate) fn notification_of(
        &self,
        change: &Change,
    ) -> Option<(&'static str, Option<RawJson<'static>>)> {
        match change {
            Change::List(list) => Some((list.method(), None)),
            Change::ResourceUpdated(uri) if self.is_subscribed(uri) => {
                let params = RawJson::from_value(&serde_json::json!({ "uri": &**uri })).ok();
                Some(("notifications/resources/updated", params))
            }
            Change::ResourceUpdated(_) => None,
        }
    }

    /// Whether the client subscribed to updates of `uri`.
    pub(crate) fn is_subscribed(&self, uri: &str) -> bool {
        lock_unpoisoned(&self.subscriptions).contains(uri)
    }
}
