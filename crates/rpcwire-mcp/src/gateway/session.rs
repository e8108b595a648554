//! `GatewaySession`: one client session of the gateway and the server children that are
//! its own (one, or one per named server) — each child's `Peer` (requests forwarded with
//! their params as the client wrote them, answers passed back with the client's id), the way
//! up (`Upward`), the requests under way and their bound — and the tasks that watch the
//! children and end them with the session.

use std::collections::HashMap;
use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use super::aggregate::{self, SEPARATOR};
use super::command::StdioCommand;
use super::link::ChildTransport;
use super::metrics;
use super::upward::{Forwarded, Upward};
use crate::child::ChildProcess;
use crate::encode;
use crate::http::output::PostOutput;
use crate::http::session::{new_session_id, Kept, Sessions};
use crate::http::streams::SessionStreams;
use crate::message::{ErrorObject, Id, JsonBytes, Params};
use crate::methods::{self, Called, Kind, Lifecycle, Listed};
use crate::middleware::{LinkError, LinkErrorKind, RemoteAnswer, RpcCall, RpcService};
use crate::sync::lock_unpoisoned;
use crate::trace::RequestSpan;
use crate::transport::{CancelProtocol, CloseReason, Peer, PeerLink};
use crate::version::ProtocolVersion;

/// The error code of a request the server child could not answer: it exited, closed its
/// output, wrote a line over the limit, or could not be started —
/// [`codes::UPSTREAM_UNAVAILABLE`](crate::codes::UPSTREAM_UNAVAILABLE) (-32010), as the
/// JSON-RPC gateway says of an upstream it cannot reach.
pub const SERVER_GONE: i64 = crate::codes::UPSTREAM_UNAVAILABLE;
/// The error code of a request the server child did not answer in time —
/// [`codes::UPSTREAM_NO_ANSWER`](crate::codes::UPSTREAM_NO_ANSWER) (-32011), as the JSON-RPC
/// gateway says of an upstream that did not answer.
pub const SERVER_TIMEOUT: i64 = crate::codes::UPSTREAM_NO_ANSWER;

/// The servers a gateway runs for each session: one, whose names are kept, or several
/// under their names, which prefix theirs.
#[derive(Debug)]
pub(crate) struct Servers {
    pub(crate) commands: Vec<StdioCommand>,
    /// The servers' names, when several are served under one endpoint.
    pub(crate) names: Option<Arc<[Box<str>]>>,
}

/// What a session's children are run with.
#[derive(Clone, Debug)]
pub(crate) struct SessionLimits {
    pub(crate) max_line: usize,
    pub(crate) call_timeout: Duration,
    pub(crate) client_call_timeout: Duration,
    pub(crate) in_flight: usize,
    pub(crate) terminate_grace: Duration,
    pub(crate) resume_grace: Duration,
}

/// The children of one session, or the shared children of all sessions, and what they
/// need: the way up, a link to each, which server listed which resource, how they ended.
pub(crate) struct Children {
    pub(crate) up: Arc<Upward>,
    /// One link per server, in the order of their names.
    links: Vec<PeerLink>,
    names: Option<Arc<[Box<str>]>>,
    /// Which server listed each resource URI (several servers).
    resources: Mutex<HashMap<String, usize>>,
    /// Fires when they are to end, or one ended.
    pub(crate) ended: CancellationToken,
    /// Why they ended; set before `finished` fires.
    why: OnceLock<String>,
    /// Children not reaped yet; `finished` fires when none is left.
    live: AtomicUsize,
    pub(crate) finished: CancellationToken,
    /// Shared children: the first `initialize`'s result, given to every later session, and
    /// whether `notifications/initialized` went down.
    first_initialize: tokio::sync::OnceCell<JsonBytes>,
    initialized_sent: AtomicBool,
    /// Gives each session of shared children its number, and their progress tokens.
    next_number: AtomicU64,
    shared: bool,
}

/// Whom children serve.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ChildrenKind {
    /// One session.
    PerSession,
    /// Every session.
    Shared,
    /// The stateless revision's requests, each a session of its own.
    Stateless,
}

/// One session (or one request of the stateless revision).
pub(crate) struct GatewaySession {
    pub(crate) id: Box<str>,
    /// Its number among the sessions of its children (keys of its requests).
    pub(crate) number: u64,
    pub(crate) children: Arc<Children>,
    pub(crate) streams: Arc<SessionStreams>,
    pub(crate) in_flight: Arc<Semaphore>,
    /// Fires when the session ends (the client's DELETE, idle expiry, shutdown, its
    /// children's end).
    pub(crate) ended: CancellationToken,
    pub(crate) version: OnceLock<ProtocolVersion>,
    /// Set once the session is kept in the table (counted in the sessions gauge).
    pub(crate) kept: AtomicBool,
    /// A request of the stateless revision, not a session.
    pub(crate) stateless: bool,
    resume_grace: Duration,
    last_seen: Mutex<Instant>,
}

/// A request of the client, as forwarded.
pub(crate) struct ClientRequest {
    pub(crate) id: Id<'static>,
    pub(crate) method: Box<str>,
    pub(crate) params: Option<JsonBytes>,
}

/// What a forwarded request ended with: what a server answered (a result merged from
/// several is one too), or the gateway's own error (no answer from a server, no such server).
type Answered = Result<RemoteAnswer, ErrorObject<'static>>;

impl Children {
    /// Starts the children (`Shared`: for every session; `Stateless`: for the stateless
    /// revision's requests). Their sessions are taken out of `sessions` when one of them
    /// goes; `children` counts the children not reaped yet.
    pub(crate) fn spawn(
        servers: &Servers,
        limits: &SessionLimits,
        kind: ChildrenKind,
        sessions: Weak<Sessions<GatewaySession>>,
        children: Arc<AtomicUsize>,
    ) -> io::Result<Arc<Children>> {
        let mut started = Vec::with_capacity(servers.commands.len());
        for command in &servers.commands {
            // A failure drops (kills) the children started before it.
            let spawned = ChildProcess::spawn(&mut command.command());
            started
                .push(spawned.map_err(|error| io::Error::new(error.kind(), format!("{command}: {error}")))?);
        }
        let shared = kind != ChildrenKind::PerSession;
        let up = Arc::new(Upward::new(
            limits.client_call_timeout,
            kind == ChildrenKind::Stateless,
        ));
        let mut peers = Vec::with_capacity(started.len());
        let mut processes = Vec::with_capacity(started.len());
        for (child, stdin, stdout) in started {
            let transport = ChildTransport {
                stdout,
                stdin,
                max_line: limits.max_line,
            };
            let capacity = if shared {
                4096
            } else {
                limits.in_flight.saturating_add(8).next_power_of_two()
            };
            let peer = Peer::builder()
                .cancel_protocol(CancelProtocol::Mcp)
                .call_timeout(limits.call_timeout)
                .call_capacity(capacity)
                .start(transport, up.router());
            peers.push(peer);
            processes.push(child);
        }
        let set = Arc::new(Children {
            up,
            links: peers.iter().map(Peer::link).collect(),
            names: servers.names.clone(),
            resources: Mutex::new(HashMap::new()),
            ended: CancellationToken::new(),
            why: OnceLock::new(),
            live: AtomicUsize::new(processes.len()),
            finished: CancellationToken::new(),
            first_initialize: tokio::sync::OnceCell::new(),
            initialized_sent: AtomicBool::new(false),
            next_number: AtomicU64::new(1),
            shared,
        });
        for (child, peer) in processes.into_iter().zip(peers) {
            children.fetch_add(1, Ordering::Relaxed);
            metrics::child_started();
            let watched = (set.clone(), sessions.clone(), children.clone());
            tokio::spawn(watch(watched, child, peer, limits.terminate_grace));
        }
        Ok(set)
    }

    /// Ends the children (their watchers terminate and reap them), saying why.
    pub(crate) fn end(&self, why: &str) {
        let _ = self.why.set(why.to_owned());
        self.ended.cancel();
    }

    /// Whether they have ended.
    pub(crate) fn is_ended(&self) -> bool {
        self.ended.is_cancelled()
    }
}

impl Children {
    /// Sends `request` to the server it is for (all of them for lists, `initialize` and
    /// `logging/setLevel` when there are several).
    async fn dispatch(&self, request: &ClientRequest) -> Answered {
        let Some(names) = self.names.clone() else {
            return self.call(0, &request.method, request.params.clone()).await;
        };
        let params = request.params.as_ref();
        let method = &*request.method;
        // The methods are MCP's table's; what differs here is how each kind is forwarded.
        match methods::kind(method) {
            Some(Kind::Lifecycle(lifecycle @ (Lifecycle::Initialize | Lifecycle::Discover))) => {
                let answers = self.call_all(method, params.cloned()).await;
                if let Some((_, failed)) = answers
                    .iter()
                    .find(|(_, answered)| !matches!(answered, Ok(RemoteAnswer::Result(_))))
                {
                    return failed.clone();
                }
                let merge = match lifecycle {
                    Lifecycle::Initialize => aggregate::merge_initialize,
                    _ => aggregate::merge_discover,
                };
                Ok(RemoteAnswer::Result(JsonBytes::from_validated(merge(
                    &results(answers),
                    &names,
                ))))
            }
            Some(Kind::Lifecycle(Lifecycle::Ping)) => Ok(RemoteAnswer::Result(JsonBytes::from_validated(
                Bytes::from_static(b"{}"),
            ))),
            Some(Kind::Lifecycle(Lifecycle::SetLevel)) => {
                let _ = self.call_all(method, params.cloned()).await;
                Ok(RemoteAnswer::Result(JsonBytes::from_validated(
                    Bytes::from_static(b"{}"),
                )))
            }
            Some(Kind::List(listed)) => {
                let key = listed.key();
                // The stateless revision's `_meta` goes with every page's request.
                let meta = params
                    .and_then(|p| Params::new(p.as_str()).get("_meta"))
                    .map(|meta| meta.get().to_owned());
                let pages = self.all_pages(method, meta.as_deref()).await;
                if listed == Listed::Resources {
                    let mut listed = lock_unpoisoned(&self.resources);
                    for (server, page) in &pages {
                        for uri in uris_in(page) {
                            listed.insert(uri, *server);
                        }
                    }
                }
                let prefix = matches!(listed, Listed::Tools | Listed::Prompts).then_some(&names[..]);
                Ok(RemoteAnswer::Result(JsonBytes::from_validated(
                    aggregate::merge_lists(key, &pages, prefix),
                )))
            }
            Some(Kind::Call(Called::Tool | Called::Prompt)) => {
                let name = params
                    .and_then(|p| aggregate::string_member(p.as_str(), "name"))
                    .unwrap_or_default();
                let Some((server, own)) = aggregate::split_name(&name, &names) else {
                    return Err(ErrorObject::new(
                        -32602,
                        format!("unknown name {name:?}: names here are SERVER{SEPARATOR}NAME"),
                    ));
                };
                let params = params
                    .and_then(|p| aggregate::with_member(p, "name", own))
                    .map(JsonBytes::from_validated);
                self.call(server, method, params).await
            }
            Some(Kind::Call(Called::Complete)) => {
                let reference = params
                    .and_then(|p| Params::new(p.as_str()).get("ref"))
                    .map(|r| r.get().to_owned());
                let Some(reference) = reference else {
                    return Err(ErrorObject::new(-32602, "completion/complete needs a ref"));
                };
                let name = aggregate::string_member(&reference, "name");
                if let Some((server, own)) = name
                    .as_deref()
                    .and_then(|name| aggregate::split_name(name, &names))
                {
                    let renamed = aggregate::with_member(reference.as_bytes(), "name", own);
                    let params = renamed
                        .and_then(|r| {
                            aggregate::with_member_json(params?, "ref", std::str::from_utf8(&r).ok()?)
                        })
                        .map(JsonBytes::from_validated);
                    return self.call(server, method, params).await;
                }
                let uri = aggregate::string_member(&reference, "uri");
                self.by_resource(method, params.cloned(), uri.as_deref()).await
            }
            Some(Kind::Call(Called::Read) | Kind::Lifecycle(Lifecycle::Subscribe(_))) => {
                let uri = params.and_then(|p| aggregate::string_member(p.as_str(), "uri"));
                self.by_resource(method, params.cloned(), uri.as_deref()).await
            }
            None => Err(ErrorObject::new(
                crate::codes::METHOD_NOT_FOUND,
                format!("Method not found: {method} is not forwarded to several servers"),
            )),
        }
    }

    /// A request about the resource `uri`: to the server that listed it, else to each in
    /// turn until one answers with a result.
    async fn by_resource(&self, method: &str, params: Option<JsonBytes>, uri: Option<&str>) -> Answered {
        let listed = uri.and_then(|uri| lock_unpoisoned(&self.resources).get(uri).copied());
        if let Some(server) = listed {
            return self.call(server, method, params).await;
        }
        let mut last = Err(ErrorObject::new(-32602, "no server has this resource"));
        for server in 0..self.links.len() {
            last = self.call(server, method, params.clone()).await;
            if matches!(last, Ok(RemoteAnswer::Result(_))) {
                return last;
            }
        }
        last
    }

    /// Every page of a list method from every server that answers it, each asked with the
    /// client's `meta` (its JSON text), when it sent one.
    async fn all_pages(&self, method: &str, meta: Option<&str>) -> Vec<(usize, JsonBytes)> {
        let fetches = (0..self.links.len()).map(|server| async move {
            let mut pages = Vec::new();
            let mut cursor: Option<String> = None;
            for _ in 0..100 {
                let params = (cursor.is_some() || meta.is_some()).then(|| {
                    let mut out = BytesMut::new();
                    out.extend_from_slice(b"{");
                    if let Some(meta) = meta {
                        out.extend_from_slice(b"\"_meta\":");
                        out.extend_from_slice(meta.as_bytes());
                    }
                    if let Some(cursor) = &cursor {
                        if meta.is_some() {
                            out.extend_from_slice(b",");
                        }
                        out.extend_from_slice(b"\"cursor\":");
                        encode::write_str(&mut out, cursor);
                    }
                    out.extend_from_slice(b"}");
                    JsonBytes::from_validated(out.freeze())
                });
                let Ok(RemoteAnswer::Result(page)) = self.call(server, method, params).await else {
                    break;
                };
                cursor = aggregate::string_member(page.as_str(), "nextCursor");
                pages.push((server, page));
                if cursor.is_none() {
                    break;
                }
            }
            pages
        });
        join_all(fetches).await.into_iter().flatten().collect()
    }

    /// The arguments each tool mirrors in headers (`x-mcp-header`), by its name as clients
    /// see it (with its server's name before it when there are several), from every page of
    /// every server's `tools/list` (asked with the client's `meta`).
    pub(crate) async fn mirrored_headers(
        &self,
        meta: Option<&str>,
    ) -> HashMap<String, Vec<(String, String)>> {
        let mut mirrored = HashMap::new();
        for (server, page) in self.all_pages("tools/list", meta).await {
            let Some(tools) = Params::new(page.as_str()).get("tools") else {
                continue;
            };
            for tool in Params::new(tools.get()).iter() {
                let tool = Params::new(tool.get());
                let (Some(name), Some(schema)) = (tool.get("name"), tool.get("inputSchema")) else {
                    continue;
                };
                let Ok(name) = name.decode::<String>() else {
                    continue;
                };
                let name = match &self.names {
                    Some(names) => format!("{}{SEPARATOR}{name}", names[server]),
                    None => name,
                };
                mirrored.insert(name, crate::registry::mirrored_headers(schema.get()));
            }
        }
        mirrored
    }

    /// What the servers answer `request` with: its result (merged, for several), or
    /// `None` for an error.
    pub(crate) async fn ask(&self, request: &ClientRequest) -> Option<JsonBytes> {
        match self.dispatch(request).await {
            Ok(RemoteAnswer::Result(result)) => Some(result),
            _ => None,
        }
    }

    /// The same request to every server, at once.
    async fn call_all(&self, method: &str, params: Option<JsonBytes>) -> Vec<(usize, Answered)> {
        let calls = (0..self.links.len()).map(|server| {
            let params = params.clone();
            async move { (server, self.call(server, method, params).await) }
        });
        join_all(calls).await
    }

    /// One request to one server.
    async fn call(&self, server: usize, method: &str, params: Option<JsonBytes>) -> Answered {
        let raw = params.as_ref().map(JsonBytes::to_raw_json);
        match RpcService::call(&self.links[server], RpcCall::new(method, raw.as_ref())).await {
            Ok(answer) => Ok(answer),
            Err(error) => Err(self.failure(&error).await),
        }
    }

    /// The error object for a request a child did not answer.
    async fn failure(&self, error: &LinkError) -> ErrorObject<'static> {
        match error.kind() {
            LinkErrorKind::TimedOut { after } => ErrorObject::new(
                SERVER_TIMEOUT,
                format!("the MCP server did not answer within {after:?}"),
            ),
            LinkErrorKind::NoAnswer { .. } => ErrorObject::new(
                SERVER_GONE,
                format!("the MCP server is gone: {}", self.why_ended().await),
            ),
            // (A child on stdio is never refused for a limit: that is HTTP's 429.)
            LinkErrorKind::NotReached | LinkErrorKind::Params | LinkErrorKind::Limited { .. } => {
                ErrorObject::new(
                    SERVER_GONE,
                    format!("the request could not be sent to the MCP server: {error}"),
                )
            }
        }
    }

    /// Why the session ended (waiting a moment for the children's exits to be seen).
    async fn why_ended(&self) -> String {
        let _ = tokio::time::timeout(Duration::from_secs(2), self.finished.cancelled()).await;
        self.why
            .get()
            .cloned()
            .unwrap_or_else(|| "its connection closed".to_owned())
    }
}

impl GatewaySession {
    /// A new session on `children`.
    pub(crate) fn new(children: Arc<Children>, limits: &SessionLimits) -> Arc<GatewaySession> {
        GatewaySession::made(children, limits, false)
    }

    /// One request of the stateless revision on `children` (stateless ones), as a session
    /// of its own that is never kept: nothing outside the request reaches it, and a client
    /// that closes the request's stream cancels it at once (the revision has no resumption).
    pub(crate) fn stateless(children: Arc<Children>, limits: &SessionLimits) -> Arc<GatewaySession> {
        GatewaySession::made(children, limits, true)
    }

    fn made(children: Arc<Children>, limits: &SessionLimits, stateless: bool) -> Arc<GatewaySession> {
        let streams = Arc::new(SessionStreams::default());
        if !stateless {
            children.up.listen(&streams);
        }
        Arc::new(GatewaySession {
            id: new_session_id().into(),
            number: children.next_number.fetch_add(1, Ordering::Relaxed),
            children,
            streams,
            in_flight: Arc::new(Semaphore::new(limits.in_flight)),
            ended: CancellationToken::new(),
            version: OnceLock::new(),
            kept: AtomicBool::new(false),
            stateless,
            resume_grace: if stateless {
                Duration::ZERO
            } else {
                limits.resume_grace
            },
            last_seen: Mutex::new(Instant::now()),
        })
    }

    /// The way up of its children.
    pub(crate) fn up(&self) -> &Arc<Upward> {
        &self.children.up
    }

    /// Its progress token for the children: the client's own, unless the children are
    /// shared (then one unique among all sessions), with the client's to give back.
    pub(crate) fn progress_token(&self, client_token: Bytes) -> (Bytes, Option<Bytes>) {
        if !self.children.shared {
            return (client_token, None);
        }
        let unique = format!(
            "\"rpcwire-{}-{}\"",
            self.number,
            self.children.next_number.fetch_add(1, Ordering::Relaxed)
        );
        (Bytes::from(unique), Some(client_token))
    }

    /// Forwards `request` and writes its answer with the client's id; `None` when it gets
    /// none (the client cancelled it, or went away and did not come back within the grace).
    pub(crate) async fn forward(
        &self,
        request: &ClientRequest,
        forwarded: &Forwarded,
    ) -> Option<(Bytes, Option<i64>)> {
        let span = RequestSpan::start(&request.method, Some(&request.id));
        let stopwatch = metrics::Stopwatch::start();
        let answered = span
            .instrument(async {
                tokio::select! {
                    biased;
                    answer = self.children.dispatch(request) => Some(answer),
                    () = forwarded.cancel.cancelled() => None,
                    () = abandoned(&forwarded.output, &forwarded.post_gone, self.resume_grace) => None,
                }
            })
            .await;
        let Some(answered) = answered else {
            span.finish(None, true);
            metrics::call_ended("cancelled", stopwatch);
            return None;
        };
        let (answer, code, outcome) = write_answer(&request.id, &answered);
        span.finish(code, false);
        metrics::call_ended(outcome, stopwatch);
        Some((answer, code))
    }

    /// Forwards the client's `initialize` (waiting at most `within` for the children to
    /// start and answer): the answer with the client's id, and whether it is a result (the
    /// revision it names kept for the session). Shared children are initialized by the
    /// first session; every later one gets the same result.
    pub(crate) async fn initialize(&self, request: &ClientRequest, within: Duration) -> (Bytes, bool) {
        let children = &self.children;
        let first = async {
            let answered = children.dispatch(request).await;
            match answered {
                Ok(RemoteAnswer::Result(result)) => Ok(result),
                other => Err(other),
            }
        };
        let answered = match tokio::time::timeout(within, async {
            if children.shared {
                children.first_initialize.get_or_try_init(|| first).await.cloned()
            } else {
                first.await
            }
        })
        .await
        {
            Ok(Ok(result)) => Ok(RemoteAnswer::Result(result)),
            Ok(Err(failed)) => failed,
            Err(_) => Err(ErrorObject::new(
                SERVER_TIMEOUT,
                format!("the MCP server did not answer initialize within {within:?}"),
            )),
        };
        if let Ok(RemoteAnswer::Result(result)) = &answered {
            let version =
                aggregate::string_member(result.as_str(), "protocolVersion").and_then(|v| v.parse().ok());
            if let Some(version) = version {
                let _ = self.version.set(version);
            }
        }
        let accepted = matches!(answered, Ok(RemoteAnswer::Result(_)));
        (write_answer(&request.id, &answered).0, accepted)
    }

    /// Sends a notification of the client on to the children; `false` when one is gone.
    /// Shared children get `notifications/initialized` once.
    pub(crate) async fn notify(&self, method: &str, params: Option<&JsonBytes>) -> bool {
        let children = &self.children;
        if children.shared
            && method == "notifications/initialized"
            && children.initialized_sent.swap(true, Ordering::AcqRel)
        {
            return !children.is_ended();
        }
        let params = params.map(JsonBytes::to_raw_json);
        let mut delivered = true;
        for link in &children.links {
            delivered &= link.notify_raw(method, params.as_ref()).await.is_ok();
        }
        delivered
    }

    /// Whether the session has ended (or its children).
    pub(crate) fn is_ended(&self) -> bool {
        self.ended.is_cancelled() || self.children.is_ended()
    }
}

impl Kept for GatewaySession {
    fn id(&self) -> &str {
        &self.id
    }

    fn touch(&self) {
        *lock_unpoisoned(&self.last_seen) = Instant::now();
    }

    fn is_idle(&self, now: Instant, idle: Duration) -> bool {
        let quiet = now.saturating_duration_since(*lock_unpoisoned(&self.last_seen)) >= idle;
        quiet && self.up().under_way_in(self.number) == 0
    }

    fn end(&self) {
        self.ended.cancel();
        if self.kept.swap(false, Ordering::AcqRel) {
            metrics::session_ended();
        }
        if let Some(stream) = self.streams.standalone() {
            stream.finish();
        }
        if !self.children.shared {
            self.children.end("the session was ended");
        }
    }

    fn streams(&self) -> &SessionStreams {
        &self.streams
    }
}

/// The answer to the request `id`: its bytes, its error code, and its outcome's label.
fn write_answer(id: &Id<'_>, answered: &Answered) -> (Bytes, Option<i64>, &'static str) {
    let mut out = BytesMut::new();
    let (code, outcome) = match answered {
        Ok(answer) => {
            answer.write(id, &mut out);
            match answer.error() {
                None => (None, "ok"),
                Some(error) => (Some(error.code().code()), "server_error"),
            }
        }
        Err(error) => {
            encode::write_error(&mut out, id, error);
            (Some(error.code().code()), "gateway_error")
        }
    };
    (out.freeze(), code, outcome)
}

/// The results among `answers`.
fn results(answers: Vec<(usize, Answered)>) -> Vec<(usize, JsonBytes)> {
    answers
        .into_iter()
        .filter_map(|(server, answered)| match answered {
            Ok(RemoteAnswer::Result(result)) => Some((server, result)),
            _ => None,
        })
        .collect()
}

/// The URIs of a `resources/list` page.
fn uris_in(page: &JsonBytes) -> Vec<String> {
    let Some(resources) = Params::new(page.as_str()).get("resources") else {
        return Vec::new();
    };
    Params::new(resources.get())
        .iter()
        .filter_map(|resource| aggregate::string_member(resource.get(), "uri"))
        .collect()
}

/// Runs `futures` at once; their outputs in order.
pub(crate) async fn join_all<F: std::future::Future>(futures: impl Iterator<Item = F>) -> Vec<F::Output> {
    let mut set = Vec::new();
    for future in futures {
        set.push(Box::pin(future));
    }
    let mut outputs: Vec<Option<F::Output>> = (0..set.len()).map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (future, output) in set.iter_mut().zip(outputs.iter_mut()) {
            if output.is_none() {
                match future.as_mut().poll(cx) {
                    std::task::Poll::Ready(value) => *output = Some(value),
                    std::task::Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            std::task::Poll::Pending
        } else {
            std::task::Poll::Ready(())
        }
    })
    .await;
    outputs.into_iter().flatten().collect()
}

/// Completes when the client has gone from the request's answer: its POST dropped before it
/// was answered, or the stream it became read by no one for `grace` (a client may resume a
/// stream it lost with `Last-Event-ID` within that time).
async fn abandoned(output: &PostOutput, post_gone: &CancellationToken, grace: Duration) {
    let stream_left = async {
        let stream = output.made().await;
        loop {
            stream.reader_gone().await;
            tokio::time::sleep(grace).await;
            if !stream.is_attached() {
                return;
            }
        }
    };
    tokio::select! {
        () = post_gone.cancelled() => {}
        () = stream_left => {}
    }
}

/// Watches one child: when it exits or closes its output, or its children are ended, ends
/// the others — their sessions out of the table, the child's stdin closed, its group
/// terminated and the child reaped — and says why.
async fn watch(
    (set, sessions, children): (Arc<Children>, Weak<Sessions<GatewaySession>>, Arc<AtomicUsize>),
    mut child: ChildProcess,
    peer: Peer,
    terminate_grace: Duration,
) {
    let link = peer.link();
    let why = tokio::select! {
        status = child.wait() => {
            // What it wrote before it exited is read first (the pipe ends with it, unless a
            // process it started holds it open).
            let _ = tokio::time::timeout(Duration::from_secs(1), link.closed()).await;
            match status {
                Ok(status) => Some(format!("the MCP server exited ({status})")),
                Err(error) => Some(format!("the MCP server could not be waited for: {error}")),
            }
        }
        reason = link.closed() => Some(match reason {
            CloseReason::Transport(error) => format!("the MCP server's output failed: {error}"),
            // Its output ends as it exits, most often: its status, when it comes soon.
            reason => match tokio::time::timeout(Duration::from_millis(500), child.wait()).await {
                Ok(Ok(status)) => format!("the MCP server exited ({status})"),
                _ => format!("the MCP server's output ended ({reason})"),
            },
        }),
        () = set.ended.cancelled() => None,
    };
    if let Some(why) = why {
        let _ = set.why.set(why);
    }
    set.ended.cancel();
    if let Some(sessions) = sessions.upgrade() {
        sessions.remove_where(|session| Arc::ptr_eq(&session.children, &set));
    }
    set.up.client_calls.cancel_all();
    set.up.end_subscriptions();
    // Its stdin closed first: a server that reads its end of input exits by itself.
    peer.close_within(Duration::from_millis(200)).await;
    child.terminate(terminate_grace).await;
    children.fetch_sub(1, Ordering::Relaxed);
    metrics::child_reaped();
    if set.live.fetch_sub(1, Ordering::AcqRel) == 1 {
        set.finished.cancel();
    }
}
