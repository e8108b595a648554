//! One MCP session's state — the revision agreed on, the client's capabilities, its log
//! level, its subscriptions — and the [`Router`] that serves it: the lifecycle methods and
//! the registry's tools, resources, prompts and completions, as JSON-RPC methods.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;

use super::calls::{self, Call, Decoded, Outcome};
use super::changes::{Change, ChangeNotifier};
use super::context::McpContext;
use super::logging::LogLevel;
use super::methods::{Called, Kind, Listed, METHODS};
use super::server::Registry;
use super::stateless;
use super::version::ProtocolVersion;
use crate::dispatch::{Reply, RequestContext, Router};
use crate::message::{ErrorObject, Params, RawJson};
use crate::sync::lock_unpoisoned;

/// No revision agreed on yet.
const NO_VERSION: u8 = u8::MAX;
/// No log message wanted (a stateless request without `logLevel`).
const NO_LOGGING: u8 = u8::MAX;

/// What one session remembers between requests.
#[derive(Debug)]
pub(crate) struct SessionState {
    /// The index in `ProtocolVersion::ALL` of the revision agreed on, or `NO_VERSION`.
    version: AtomicU8,
    /// The index in `LogLevel::ALL` of the least severe level the client wants.
    log_level: AtomicU8,
    /// On while the revision agreed on allows batches (2025-03-26).
    batches: Arc<AtomicBool>,
    client_capabilities: Mutex<Value>,
    subscriptions: Mutex<HashSet<String>>,
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

    fn set_version(&self, version: ProtocolVersion) {
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

    fn set_log_level(&self, level: LogLevel) {
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

/// `initialize`'s params, as far as the server reads them.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct InitializeParams {
    protocol_version: String,
    #[serde(default)]
    capabilities: Value,
}

/// The params that name a resource (the subscriptions).
#[derive(Deserialize)]
struct UriParams {
    uri: String,
}

#[derive(Deserialize)]
struct SetLevelParams {
    level: LogLevel,
}

/// `completion/complete`'s params.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompleteRequest {
    /// What is completed: `{"type":"ref/prompt","name":…}` or `{"type":"ref/resource","uri":…}`.
    #[serde(rename = "ref")]
    pub reference: Value,
    /// The argument being filled in.
    pub argument: CompleteArgument,
    /// Arguments already filled in (`context.arguments`).
    #[serde(default)]
    pub context: Option<Value>,
}

/// The argument `completion/complete` completes.
#[derive(Clone, Debug, Deserialize)]
pub struct CompleteArgument {
    /// Its name.
    pub name: String,
    /// What the user has typed so far.
    pub value: String,
}

/// The values a completion offers.
///
/// ```
/// let done = rpcwire::mcp::Completion::of(vec!["apple".into(), "apricot".into()]);
/// assert_eq!(serde_json::to_string(&done).unwrap(), r#"{"values":["apple","apricot"]}"#);
/// ```
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Completion {
    /// The values (at most 100).
    pub values: Vec<String>,
    /// How many there are in all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Whether there are more than `values`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_more: Option<bool>,
}

impl Completion {
    /// A completion offering `values`.
    ///
    /// ```
    /// assert!(rpcwire::mcp::Completion::of(vec![]).values.is_empty());
    /// ```
    pub fn of(values: Vec<String>) -> Completion {
        Completion {
            values,
            total: None,
            has_more: None,
        }
    }
}

/// The router of one session: every method of [`METHODS`], as its kind is served.
pub(crate) fn router(registry: &Arc<Registry>, session: &Arc<SessionState>) -> Router {
    let mut router = Router::with_limits(registry.limits.parser);
    router.set_batch_switch(session.batches.clone());
    for method in METHODS {
        match method.kind {
            Kind::List(listed) => list(&mut router, method.name, registry, listed),
            Kind::Call(called) => call(&mut router, method.name, registry, session, called),
            kind => {
                let (registry, session) = (registry.clone(), session.clone());
                router.raw_method(
                    method.name,
                    move |params: Option<Params<'_>>, reply: Reply<'_>| {
                        if !method.stateless && stateless::carries_meta(params.as_ref().map(Params::as_str)) {
                            // A request of the stateless revision to a method it no longer has.
                            return Err(ErrorObject::method_not_found(method.name));
                        }
                        let answer = lifecycle(kind, &registry, &session, params)?;
                        Ok(reply.raw(&answer))
                    },
                );
            }
        }
    }
    router
}

/// Serves a method of the session's lifecycle and state: its result.
fn lifecycle(
    kind: Kind,
    registry: &Registry,
    session: &SessionState,
    params: Option<Params<'_>>,
) -> Result<RawJson<'static>, ErrorObject<'static>> {
    match kind {
        Kind::Initialize => {
            let params: InitializeParams = decode(params)?;
            let Some(version) = ProtocolVersion::negotiate(&params.protocol_version, &registry.versions)
            else {
                return Err(ErrorObject::invalid_params(
                    "no protocol revision with initialize is enabled",
                ));
            };
            session.set_version(version);
            *lock_unpoisoned(&session.client_capabilities) = params.capabilities;
            Ok(registry.initialize_result(version))
        }
        Kind::Discover => {
            // A discovery that names a revision (in the stateless revision's `_meta`) must
            // name one served when the server serves the stateless revision, as over HTTP
            // (a server without it lists its revisions, which the client finds it lacks).
            let text = params.as_ref().map(Params::as_str);
            if registry.versions.iter().any(|version| version.is_stateless()) && stateless::carries_meta(text)
            {
                let meta = stateless::read_meta(text)?;
                stateless::check_version(registry, &meta.version)?;
            }
            Ok(registry.discover_result())
        }
        Kind::SetLevel => {
            let params: SetLevelParams = decode(params)?;
            session.set_log_level(params.level);
            Ok(empty())
        }
        Kind::Subscribe(on) => {
            let params: UriParams = decode(params)?;
            let mut subscriptions = lock_unpoisoned(&session.subscriptions);
            if on {
                subscriptions.insert(params.uri);
            } else {
                subscriptions.remove(&params.uri);
            }
            Ok(empty())
        }
        Kind::Ping | Kind::List(_) | Kind::Call(_) => Ok(empty()),
    }
}

/// A call's result: as the session serves it, or as the stateless revision does.
#[derive(Serialize)]
#[serde(untagged)]
enum Answer {
    Session(Outcome),
    Stateless(Box<RawValue>),
}

/// Registers a method that runs a handler: a request of the stateless revision (its
/// `_meta` names one; over stdio, where there are no headers) is served as that revision
/// serves it; any other is decoded and run with the session.
fn call(
    router: &mut Router,
    method: &'static str,
    registry: &Arc<Registry>,
    session: &Arc<SessionState>,
    called: Called,
) {
    /// What a call will run: the session's handler, or the stateless revision's serving.
    enum Prepared<W> {
        Session(W),
        Stateless(Arc<Registry>, RequestContext, Option<Box<RawValue>>),
    }
    let registry = registry.clone();
    let session = session.clone();
    router.params_method_async_with_context(method, move |params: Option<Params<'_>>, cx: RequestContext| {
        let raw = params.as_ref().map(Params::as_str);
        let prepared = if stateless::carries_meta(raw) {
            let params = raw
                .map(|raw| RawValue::from_string(raw.to_owned()))
                .transpose()
                .map_err(ErrorObject::invalid_params)?;
            Prepared::Stateless(registry.clone(), cx, params)
        } else {
            let Decoded { call, progress_token } = Call::decode(called, raw)?;
            let cx = McpContext::new(cx, session.clone(), progress_token);
            Prepared::Session(calls::run(registry.clone(), call, cx))
        };
        Ok(async move {
            match prepared {
                Prepared::Session(work) => work.await.map(Answer::Session),
                Prepared::Stateless(registry, cx, params) => stateless::serve_routed(registry, cx, params)
                    .await
                    .map(Answer::Stateless),
            }
        })
    });
}

/// Registers a paginated list method of the registry's `listed` items.
fn list(router: &mut Router, method: &'static str, registry: &Arc<Registry>, listed: Listed) {
    let registry = registry.clone();
    router.raw_method(method, move |params: Option<Params<'_>>, reply: Reply<'_>| {
        let raw = params.as_ref().map(Params::as_str);
        if stateless::carries_meta(raw) {
            let meta = stateless::read_meta(raw)?;
            stateless::check_version(&registry, &meta.version)?;
            let listed = stateless::list(&registry, method, raw)
                .unwrap_or_else(|| Err(ErrorObject::method_not_found(method)))?;
            return Ok(reply.raw(&RawJson::new(&listed).map_err(ErrorObject::internal_error)?));
        }
        #[derive(Deserialize, Default)]
        struct Cursor {
            cursor: Option<String>,
        }
        let cursor = match params {
            Some(params) => {
                params
                    .decode::<Cursor>()
                    .map_err(ErrorObject::invalid_params)?
                    .cursor
            }
            None => None,
        };
        let listing = listed.listing(&registry);
        let text = listing
            .page(cursor.as_deref(), registry.limits.page_size, "")
            .ok_or_else(|| ErrorObject::invalid_params("invalid cursor"))?;
        Ok(reply.raw(&RawJson::new(text).map_err(ErrorObject::internal_error)?))
    });
}

/// The empty object that `ping`, `logging/setLevel` and the subscriptions answer.
fn empty() -> RawJson<'static> {
    RawJson::new("{}").expect("a JSON constant")
}

/// `params` decoded into `T` (absent params as `{}`), or -32602.
fn decode<T: for<'de> Deserialize<'de>>(params: Option<Params<'_>>) -> Result<T, ErrorObject<'static>> {
    let decoded = match params {
        Some(params) => params.decode::<T>(),
        None => serde_json::from_str("{}"),
    };
    decoded.map_err(ErrorObject::invalid_params)
}
