//! `HttpSession`: one Streamable HTTP session — its MCP state and router, the requests
//! under way (for cancellation), the calls to the client waiting for its answers, its SSE
//! streams — and `Sessions`, the bounded table of sessions (these, or a gateway's) by
//! `Mcp-Session-Id`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use super::stream::EventStream;
use super::streams::SessionStreams;
use crate::correlate::{CorrelationTable, TableConfig};
use crate::dispatch::{Cancellations, Router};
use crate::message::{ErrorObject, JsonBytes};
use crate::registry::Registry;
use crate::session;
use crate::state::SessionState;
use crate::sync::lock_unpoisoned;

/// What a call to the client ends with: its result as it wrote it, or its error.
pub(crate) type ClientAnswer = Result<JsonBytes, ErrorObject<'static>>;

/// One session.
pub(crate) struct HttpSession {
    pub(crate) id: Box<str>,
    pub(crate) state: Arc<SessionState>,
    pub(crate) router: Router,
    pub(crate) cancellations: Arc<Cancellations>,
    pub(crate) calls: CorrelationTable<ClientAnswer>,
    pub(crate) in_flight: Arc<Semaphore>,
    max_in_flight: usize,
    /// How long a call to the client waits for its answer.
    pub(crate) call_timeout: Duration,
    /// Fires when the session ends: its handlers stop.
    pub(crate) ended: CancellationToken,
    pub(crate) streams: Arc<SessionStreams>,
    last_seen: Mutex<Instant>,
}

impl HttpSession {
    pub(crate) fn new(registry: &Arc<Registry>, call_timeout: Duration) -> HttpSession {
        let state = Arc::new(SessionState::new(registry.changes.clone()));
        let router = session::router(registry, &state);
        HttpSession {
            id: new_session_id().into(),
            state,
            router,
            cancellations: Arc::new(Cancellations::default()),
            calls: CorrelationTable::new(TableConfig {
                capacity: 32,
                timeout: call_timeout,
                ..TableConfig::default()
            }),
            in_flight: Arc::new(Semaphore::new(registry.limits.max_in_flight)),
            max_in_flight: registry.limits.max_in_flight,
            call_timeout,
            ended: CancellationToken::new(),
            streams: Arc::new(SessionStreams::default()),
            last_seen: Mutex::new(Instant::now()),
        }
    }

    /// The GET stream: a new one when there is none (the program's changes go on it from
    /// then on); `None` while one is being read.
    pub(crate) fn open_standalone(&self) -> Option<Arc<EventStream>> {
        let (stream, made) = self.streams.open_standalone()?;
        if made {
            self.forward_changes(stream.clone());
        }
        Some(stream)
    }

    /// The program's changes (list changes, updates of subscribed resources) go on the GET
    /// stream from its opening to the session's end (kept for resumption while no one reads).
    fn forward_changes(&self, stream: Arc<EventStream>) {
        let mut changes = self.state.changes.subscribe();
        let state = self.state.clone();
        let ended = self.ended.clone();
        tokio::spawn(async move {
            loop {
                let change = tokio::select! {
                    change = changes.recv() => change,
                    () = ended.cancelled() => return,
                };
                let change = match change {
                    Ok(change) => change,
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                };
                if let Some((method, params)) = state.notification_of(&change) {
                    let mut frame = bytes::BytesMut::new();
                    if crate::encode::write_call_raw(&mut frame, None, method, params.as_ref()).is_ok() {
                        stream.push(&frame);
                    }
                }
            }
        });
    }

    pub(crate) fn touch(&self) {
        *lock_unpoisoned(&self.last_seen) = Instant::now();
    }

    /// Idle: nothing heard for `idle`, and nothing under way.
    fn is_idle(&self, now: Instant, idle: Duration) -> bool {
        let quiet = now.saturating_duration_since(*lock_unpoisoned(&self.last_seen)) >= idle;
        quiet && self.in_flight.available_permits() == self.max_in_flight
    }

    /// Ends the session: its handlers stop, its calls to the client fail, its streams close.
    pub(crate) fn end(&self) {
        self.ended.cancel();
        self.calls.cancel_all();
        self.streams.finish_all();
    }
}

/// A session id: 128 bits from the operating system's random source, as hex (visible ASCII,
/// as the specification asks).
pub(crate) fn new_session_id() -> String {
    let mut bytes = [0u8; 16];
    if getrandom::fill(&mut bytes).is_err() {
        // No random source: a per-process random hash of a counter and the time.
        use std::hash::{BuildHasher, Hasher};
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let state = std::collections::hash_map::RandomState::new();
        for half in bytes.chunks_mut(8) {
            let mut hasher = state.build_hasher();
            hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
            hasher.write_u128(
                std::time::SystemTime::UNIX_EPOCH
                    .elapsed()
                    .unwrap_or_default()
                    .as_nanos(),
            );
            half.copy_from_slice(&hasher.finish().to_le_bytes());
        }
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// What the session table needs of a session.
pub(crate) trait Kept: Send + Sync {
    /// Its id.
    fn id(&self) -> &str;
    /// A request came for it.
    fn touch(&self);
    /// Nothing heard for `idle` and nothing under way at `now`.
    fn is_idle(&self, now: Instant, idle: Duration) -> bool;
    /// Ends it.
    fn end(&self);
    /// Its SSE streams.
    fn streams(&self) -> &SessionStreams;
}

impl Kept for HttpSession {
    fn id(&self) -> &str {
        &self.id
    }

    fn touch(&self) {
        HttpSession::touch(self);
    }

    fn is_idle(&self, now: Instant, idle: Duration) -> bool {
        HttpSession::is_idle(self, now, idle)
    }

    fn end(&self) {
        HttpSession::end(self);
    }

    fn streams(&self) -> &SessionStreams {
        &self.streams
    }
}

/// The sessions of a service, by id: at most `max`, the idle ones ended after `idle`.
pub(crate) struct Sessions<S: Kept = HttpSession> {
    table: Mutex<HashMap<Box<str>, Arc<S>>>,
    max: usize,
    idle: Duration,
}

impl<S: Kept> Sessions<S> {
    pub(crate) fn new(max: usize, idle: Duration) -> Sessions<S> {
        Sessions {
            table: Mutex::new(HashMap::new()),
            max,
            idle,
        }
    }

    pub(crate) fn get(&self, id: &str) -> Option<Arc<S>> {
        let session = lock_unpoisoned(&self.table).get(id).cloned()?;
        session.touch();
        Some(session)
    }

    /// How long a session may be idle before it is ended.
    pub(crate) fn idle(&self) -> Duration {
        self.idle
    }

    /// Keeps `session`; `false` when the table is full even after the idle ones are ended.
    pub(crate) fn insert(&self, session: Arc<S>) -> bool {
        let mut table = lock_unpoisoned(&self.table);
        if table.len() >= self.max {
            self.end_idle(&mut table);
        }
        if table.len() >= self.max {
            return false;
        }
        table.insert(session.id().into(), session);
        true
    }

    /// Ends the session `id`; `false` when there is none.
    pub(crate) fn remove(&self, id: &str) -> bool {
        let removed = lock_unpoisoned(&self.table).remove(id);
        match removed {
            Some(session) => {
                session.end();
                true
            }
            None => false,
        }
    }

    /// Ends the sessions idle for longer than the idle timeout; how many.
    pub(crate) fn sweep(&self) -> usize {
        self.end_idle(&mut lock_unpoisoned(&self.table))
    }

    /// Ends and drops the idle sessions of `table`; how many.
    fn end_idle(&self, table: &mut HashMap<Box<str>, Arc<S>>) -> usize {
        let now = Instant::now();
        let before = table.len();
        table.retain(|_, kept| {
            let idle = kept.is_idle(now, self.idle);
            if idle {
                kept.end();
            }
            !idle
        });
        before - table.len()
    }

    /// Ends the sessions `which` picks; how many.
    pub(crate) fn remove_where(&self, which: impl Fn(&S) -> bool) -> usize {
        let mut ended = Vec::new();
        lock_unpoisoned(&self.table).retain(|_, session| {
            let picked = which(session);
            if picked {
                ended.push(session.clone());
            }
            !picked
        });
        for session in &ended {
            session.end();
        }
        ended.len()
    }

    /// Ends every session (the service is shutting down); how many.
    pub(crate) fn end_all(&self) -> usize {
        let ended: Vec<Arc<S>> = lock_unpoisoned(&self.table)
            .drain()
            .map(|(_, session)| session)
            .collect();
        for session in &ended {
            session.end();
        }
        ended.len()
    }

    pub(crate) fn len(&self) -> usize {
        lock_unpoisoned(&self.table).len()
    }
}
