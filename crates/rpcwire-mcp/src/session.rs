//! The [`Router`] that serves one MCP session: every method of MCP's table
//! ([`methods`](crate::methods)) — the lifecycle, and the registry's tools, resources,
//! prompts and completions — as JSON-RPC methods, over the session's state
//! ([`SessionState`]).

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;

use super::calls::{self, decode, Call, Decoded, Outcome};
use super::context::McpContext;
use super::logging::LogLevel;
use super::methods::{Called, Kind, Lifecycle, Listed, METHODS};
use super::registry::Registry;
use super::state::SessionState;
use super::stateless;
use super::version::ProtocolVersion;
use crate::dispatch::{Reply, RequestContext, Router};
use crate::message::{ErrorObject, Params, RawJson};
use crate::sync::lock_unpoisoned;

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

/// The router of one session: every method of [`METHODS`], as its kind is served.
pub(crate) fn router(registry: &Arc<Registry>, session: &Arc<SessionState>) -> Router {
    let mut router = Router::with_limits(registry.limits.parser);
    router.set_batch_switch(session.batches.clone());
    for method in METHODS {
        match method.kind {
            Kind::List(listed) => list(&mut router, method.name, registry, listed),
            Kind::Call(called) => call(&mut router, method.name, registry, session, called),
            Kind::Lifecycle(lifecycle) => {
                let (registry, session) = (registry.clone(), session.clone());
                router.raw_method(
                    method.name,
                    move |params: Option<Params<'_>>, reply: Reply<'_>| {
                        if !method.stateless && stateless::carries_meta(params.as_ref().map(Params::as_str)) {
                            // A request of the stateless revision to a method it no longer has.
                            return Err(ErrorObject::method_not_found(method.name));
                        }
                        let answer = serve_lifecycle(lifecycle, &registry, &session, params)?;
                        Ok(reply.raw(&answer))
                    },
                );
            }
        }
    }
    router
}

/// Serves a method of the session's lifecycle and state: its result.
fn serve_lifecycle(
    lifecycle: Lifecycle,
    registry: &Registry,
    session: &SessionState,
    params: Option<Params<'_>>,
) -> Result<RawJson<'static>, ErrorObject<'static>> {
    match lifecycle {
        Lifecycle::Initialize => {
            let params: InitializeParams = decode(params.as_ref().map(Params::as_str))?;
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
        Lifecycle::Discover => {
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
        Lifecycle::SetLevel => {
            let params: SetLevelParams = decode(params.as_ref().map(Params::as_str))?;
            session.set_log_level(params.level);
            Ok(empty())
        }
        Lifecycle::Subscribe(on) => {
            let params: UriParams = decode(params.as_ref().map(Params::as_str))?;
            let mut subscriptions = lock_unpoisoned(&session.subscriptions);
            if on {
                subscriptions.insert(params.uri);
            } else {
                subscriptions.remove(&params.uri);
            }
            Ok(empty())
        }
        Lifecycle::Ping => Ok(empty()),
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
            Prepared::Session(calls::start(&registry, call, cx)?)
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
