//! One MCP session's state — the revision agreed on, the client's capabilities, its log
//! level, its subscriptions — and the [`Router`] that serves it: the lifecycle methods and
//! the registry's tools, resources, prompts and completions, as JSON-RPC methods.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;

use super::changes::{Change, ChangeNotifier};
use super::context::McpContext;
use super::logging::LogLevel;
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

/// The `_meta` of a request's params.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct RequestMeta {
    progress_token: Option<Box<RawValue>>,
}

#[derive(Deserialize)]
struct CallToolParams {
    name: String,
    arguments: Option<Box<RawValue>>,
    #[serde(rename = "_meta", default)]
    meta: Option<RequestMeta>,
}

#[derive(Deserialize)]
struct UriParams {
    uri: String,
    #[serde(rename = "_meta", default)]
    meta: Option<RequestMeta>,
}

#[derive(Deserialize)]
struct GetPromptParams {
    name: String,
    #[serde(default)]
    arguments: std::collections::HashMap<String, String>,
    #[serde(rename = "_meta", default)]
    meta: Option<RequestMeta>,
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

#[derive(Serialize)]
struct CompleteResult {
    completion: Completion,
}

/// The router of one session: the lifecycle, the lists, the calls.
pub(crate) fn router(registry: &Arc<Registry>, session: &Arc<SessionState>) -> Router {
    let mut router = Router::with_limits(registry.limits.parser);
    router.set_batch_switch(session.batches.clone());
    {
        let registry = registry.clone();
        let session = session.clone();
        router.raw_method(
            "initialize",
            move |params: Option<Params<'_>>, reply: Reply<'_>| {
                removed_in_stateless("initialize", &params)?;
                let params: InitializeParams = decode(params)?;
                let Some(version) = ProtocolVersion::negotiate(&params.protocol_version, &registry.versions)
                else {
                    return Err(ErrorObject::invalid_params(
                        "no protocol revision with initialize is enabled",
                    ));
                };
                session.set_version(version);
                *lock_unpoisoned(&session.client_capabilities) = params.capabilities;
                Ok(reply.raw(&registry.initialize_result(version)))
            },
        );
    }
    router.raw_method("ping", |params: Option<Params<'_>>, reply: Reply<'_>| {
        removed_in_stateless("ping", &params)?;
        Ok(reply.raw(&empty()))
    });
    {
        let registry = registry.clone();
        router.raw_method(
            "server/discover",
            move |params: Option<Params<'_>>, reply: Reply<'_>| {
                // A discovery that names a revision (in the stateless revision's `_meta`) must
                // name one served when the server serves the stateless revision, as over HTTP
                // (a server without it lists its revisions, which the client finds it lacks).
                let raw = params.as_ref().map(|params| params.raw());
                let text = raw.as_ref().map(|raw| raw.get());
                if registry.versions.iter().any(|version| version.is_stateless())
                    && crate::stateless::carries_meta(text)
                {
                    let meta = crate::stateless::read_meta(text)?;
                    crate::stateless::check_version(&registry, &meta.version)?;
                }
                Ok(reply.raw(&registry.discover_result()))
            },
        );
    }
    {
        let session = session.clone();
        router.raw_method(
            "logging/setLevel",
            move |params: Option<Params<'_>>, reply: Reply<'_>| {
                removed_in_stateless("logging/setLevel", &params)?;
                let params: SetLevelParams = decode(params)?;
                session.set_log_level(params.level);
                Ok(reply.raw(&empty()))
            },
        );
    }
    list(&mut router, "tools/list", registry, |registry| {
        &registry.tool_list
    });
    list(&mut router, "resources/list", registry, |registry| {
        &registry.resource_list
    });
    list(&mut router, "resources/templates/list", registry, |registry| {
        &registry.template_list
    });
    list(&mut router, "prompts/list", registry, |registry| {
        &registry.prompt_list
    });
    call(
        &mut router,
        "tools/call",
        registry,
        session,
        |registry, session, params: CallToolParams, cx| async move {
            let Some(tool) = registry.tool(&params.name) else {
                return Err(ErrorObject::invalid_params(format_args!(
                    "Unknown tool: {}",
                    params.name
                )));
            };
            let cx = McpContext::new(cx, session, params.meta.unwrap_or_default().progress_token);
            (tool.handler)(params.arguments, cx).await
        },
    );
    call(
        &mut router,
        "resources/read",
        registry,
        session,
        |registry, session, params: UriParams, cx| async move {
            let cx = McpContext::new(cx, session, params.meta.unwrap_or_default().progress_token);
            registry.read(params.uri, cx).await
        },
    );
    for (method, subscribe) in [("resources/subscribe", true), ("resources/unsubscribe", false)] {
        let session = session.clone();
        router.raw_method(method, move |params: Option<Params<'_>>, reply: Reply<'_>| {
            removed_in_stateless(method, &params)?;
            let params: UriParams = decode(params)?;
            let mut subscriptions = lock_unpoisoned(&session.subscriptions);
            if subscribe {
                subscriptions.insert(params.uri);
            } else {
                subscriptions.remove(&params.uri);
            }
            Ok(reply.raw(&empty()))
        });
    }
    call(
        &mut router,
        "prompts/get",
        registry,
        session,
        |registry, session, params: GetPromptParams, cx| async move {
            let Some(prompt) = registry.prompt(&params.name) else {
                return Err(ErrorObject::invalid_params(format_args!(
                    "Unknown prompt: {}",
                    params.name
                )));
            };
            if let Some(missing) = prompt.missing_argument(&params.arguments) {
                return Err(ErrorObject::invalid_params(format_args!(
                    "missing required argument: {missing}"
                )));
            }
            let cx = McpContext::new(cx, session, params.meta.unwrap_or_default().progress_token);
            (prompt.handler)(params.arguments, cx).await
        },
    );
    call(
        &mut router,
        "completion/complete",
        registry,
        session,
        |registry, session, params: CompleteRequest, cx| async move {
            let completion = match &registry.completion {
                Some(complete) => complete(params, McpContext::new(cx, session, None)).await?,
                None => Completion::default(),
            };
            Ok(CompleteResult { completion })
        },
    );
    router
}

/// A call's result: as the session serves it, or as the stateless revision does.
#[derive(Serialize)]
#[serde(untagged)]
enum Answer<R> {
    Session(R),
    Stateless(Box<RawValue>),
}

/// Registers a method that runs a handler: a request of the stateless revision (its
/// `_meta` names one; over stdio, where there are no headers) is served as that revision
/// serves it; any other has its params decoded into `P` for `f`, with the session.
fn call<P, R, F, Fut>(
    router: &mut Router,
    method: &'static str,
    registry: &Arc<Registry>,
    session: &Arc<SessionState>,
    f: F,
) where
    P: for<'de> Deserialize<'de> + Send + 'static,
    R: Serialize + Send + 'static,
    F: Fn(Arc<Registry>, Arc<SessionState>, P, RequestContext) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<R, ErrorObject<'static>>> + Send + 'static,
{
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
            Prepared::Session(f(registry.clone(), session.clone(), decode::<P>(params)?, cx))
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

/// Registers a paginated list method: `page` gives the registry's items, each as JSON text.
fn list(
    router: &mut Router,
    method: &'static str,
    registry: &Arc<Registry>,
    page: fn(&Registry) -> &super::server::Listing,
) {
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
        let listing = page(&registry);
        let text = listing
            .page(cursor.as_deref(), registry.limits.page_size, "")
            .ok_or_else(|| ErrorObject::invalid_params("invalid cursor"))?;
        Ok(reply.raw(&RawJson::new(text).map_err(ErrorObject::internal_error)?))
    });
}

/// -32601 for a request of the stateless revision (its `_meta` names one) to a method that
/// revision no longer has.
fn removed_in_stateless(method: &str, params: &Option<Params<'_>>) -> Result<(), ErrorObject<'static>> {
    match stateless::carries_meta(params.as_ref().map(Params::as_str)) {
        true => Err(ErrorObject::method_not_found(method)),
        false => Ok(()),
    }
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
