//! `GatewaySession`: one client session of the gateway and the server child that is its
//! own — the child's `Peer` (requests forwarded with their params as the client wrote them,
//! answers passed back with the client's id), the way up (`Upward`), the requests under way
//! and their bound — and the task that watches the child and ends both together.

use std::io;
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use super::command::StdioCommand;
use super::link::ChildTransport;
use super::metrics;
use super::upward::{Forwarded, Upward};
use crate::encode;
use crate::mcp::child::ChildProcess;
use crate::mcp::http::output::PostOutput;
use crate::mcp::http::session::{new_session_id, Kept, Sessions};
use crate::mcp::version::ProtocolVersion;
use crate::message::{ErrorObject, Id, JsonBytes, Params};
use crate::sync::lock_unpoisoned;
use crate::trace::RequestSpan;
use crate::transport::{CancelProtocol, CloseReason, Peer, PeerError, PeerErrorKind, PeerLink};

/// The error code of a request the server child could not answer: it exited, closed its
/// output, or wrote a line over the limit.
pub const SERVER_GONE: i64 = -32001;
/// The error code of a request the server child did not answer in time.
pub const SERVER_TIMEOUT: i64 = -32002;

/// What a session's child is run with.
#[derive(Clone, Debug)]
pub(crate) struct SessionLimits {
    pub(crate) max_line: usize,
    pub(crate) call_timeout: Duration,
    pub(crate) client_call_timeout: Duration,
    pub(crate) in_flight: usize,
    pub(crate) terminate_grace: Duration,
    pub(crate) resume_grace: Duration,
}

/// One session and its child.
pub(crate) struct GatewaySession {
    pub(crate) id: Box<str>,
    pub(crate) up: Arc<Upward>,
    link: PeerLink,
    pub(crate) in_flight: Arc<Semaphore>,
    /// Fires when the session ends (the client's DELETE, idle expiry, shutdown, the
    /// child's end).
    pub(crate) ended: CancellationToken,
    /// Why it ended; set before `finished` fires.
    why: OnceLock<String>,
    /// Fires once the child is gone and reaped.
    pub(crate) finished: CancellationToken,
    pub(crate) version: OnceLock<ProtocolVersion>,
    /// Set once the session is kept in the table (counted in the sessions gauge).
    pub(crate) kept: std::sync::atomic::AtomicBool,
    resume_grace: Duration,
    last_seen: Mutex<Instant>,
}

/// A request of the client, as forwarded.
pub(crate) struct ClientRequest {
    pub(crate) id: Id<'static>,
    pub(crate) method: Box<str>,
    pub(crate) params: Option<JsonBytes>,
}

impl GatewaySession {
    /// Starts `command` as the child of a new session. The session removes itself from
    /// `sessions` when the child goes; `children` counts the children not reaped yet.
    pub(crate) fn spawn(
        command: &StdioCommand,
        limits: &SessionLimits,
        sessions: Weak<Sessions<GatewaySession>>,
        children: Arc<std::sync::atomic::AtomicUsize>,
    ) -> io::Result<Arc<GatewaySession>> {
        let (child, stdin, stdout) = ChildProcess::spawn(&mut command.command())?;
        children.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        metrics::child_started();
        let up = Arc::new(Upward::new(limits.client_call_timeout));
        let transport = ChildTransport {
            stdout,
            stdin,
            max_line: limits.max_line,
        };
        let peer = Peer::builder()
            .cancel_protocol(CancelProtocol::Mcp)
            .call_timeout(limits.call_timeout)
            .call_capacity(limits.in_flight.saturating_add(8).next_power_of_two())
            .start(transport, up.router());
        let session = Arc::new(GatewaySession {
            id: new_session_id().into(),
            up,
            link: peer.link(),
            in_flight: Arc::new(Semaphore::new(limits.in_flight)),
            ended: CancellationToken::new(),
            why: OnceLock::new(),
            finished: CancellationToken::new(),
            version: OnceLock::new(),
            kept: std::sync::atomic::AtomicBool::new(false),
            resume_grace: limits.resume_grace,
            last_seen: Mutex::new(Instant::now()),
        });
        tokio::spawn(watch(session.clone(), child, peer, limits.terminate_grace, sessions, children));
        Ok(session)
    }

    /// Forwards `request` and writes its answer with the client's id; `None` when it gets
    /// none (the client cancelled it, or went away and did not come back within the grace).
    pub(crate) async fn forward(&self, request: &ClientRequest, forwarded: &Forwarded) -> Option<Bytes> {
        let span = RequestSpan::start(&request.method, Some(&request.id));
        let stopwatch = metrics::Stopwatch::start();
        let params = request.params.as_ref().map(JsonBytes::to_raw_json);
        let call = self.link.call_answer_raw(&request.method, params.as_ref());
        let answered = span
            .instrument(async {
                tokio::select! {
                    biased;
                    answer = call => Some(answer),
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
        let id = &request.id;
        let mut out = BytesMut::new();
        let (code, outcome) = match answered {
            Ok(Ok(result)) => {
                encode::write_success_bytes(&mut out, id, &result);
                (None, "ok")
            }
            Ok(Err(remote)) => {
                match &remote.text {
                    Some(text) => encode::write_error_bytes(&mut out, id, text),
                    None => encode::write_error(&mut out, id, &remote.error),
                }
                (Some(remote.error.code().code()), "server_error")
            }
            Err(error) => {
                let object = self.failure(&error).await;
                encode::write_error(&mut out, id, &object);
                (Some(object.code().code()), "gateway_error")
            }
        };
        span.finish(code, false);
        metrics::call_ended(outcome, stopwatch);
        Some(out.freeze())
    }

    /// Forwards the client's `initialize` (waiting at most `within` for the child to start
    /// and answer): the answer with the client's id, and whether it is a result (the
    /// revision it names kept for the session).
    pub(crate) async fn initialize(&self, request: &ClientRequest, within: Duration) -> (Bytes, bool) {
        let params = request.params.as_ref().map(JsonBytes::to_raw_json);
        let call = self.link.call_answer_raw("initialize", params.as_ref());
        let id = &request.id;
        let mut out = BytesMut::new();
        let accepted = match tokio::time::timeout(within, call).await {
            Ok(Ok(Ok(result))) => {
                let version = Params::new(result.as_str())
                    .get("protocolVersion")
                    .and_then(|version| version.decode::<String>().ok())
                    .and_then(|version| version.parse::<ProtocolVersion>().ok());
                if let Some(version) = version {
                    let _ = self.version.set(version);
                }
                encode::write_success_bytes(&mut out, id, &result);
                true
            }
            Ok(Ok(Err(remote))) => {
                match &remote.text {
                    Some(text) => encode::write_error_bytes(&mut out, id, text),
                    None => encode::write_error(&mut out, id, &remote.error),
                }
                false
            }
            Ok(Err(error)) => {
                encode::write_error(&mut out, id, &self.failure(&error).await);
                false
            }
            Err(_) => {
                let object = ErrorObject::new(SERVER_TIMEOUT, format!("the MCP server did not answer initialize within {within:?}"));
                encode::write_error(&mut out, id, &object);
                false
            }
        };
        (out.freeze(), accepted)
    }

    /// Sends a notification of the client on to the child; `false` when the child is gone.
    pub(crate) async fn notify(&self, method: &str, params: Option<&JsonBytes>) -> bool {
        let params = params.map(JsonBytes::to_raw_json);
        self.link.notify_raw(method, params.as_ref()).await.is_ok()
    }

    /// The error object for a request the child did not answer.
    pub(crate) async fn failure(&self, error: &PeerError) -> ErrorObject<'static> {
        match error.kind() {
            PeerErrorKind::TimedOut { after } => {
                ErrorObject::new(SERVER_TIMEOUT, format!("the MCP server did not answer within {after:?}"))
            }
            PeerErrorKind::Closed(_) => {
                ErrorObject::new(SERVER_GONE, format!("the MCP server is gone: {}", self.why_ended().await))
            }
            _ => ErrorObject::new(SERVER_GONE, format!("the request could not be sent to the MCP server: {error}")),
        }
    }

    /// Why the session ended (waiting a moment for the child's exit to be seen).
    pub(crate) async fn why_ended(&self) -> String {
        let _ = tokio::time::timeout(Duration::from_secs(2), self.finished.cancelled()).await;
        self.why.get().cloned().unwrap_or_else(|| "its connection closed".to_owned())
    }

    /// Whether the session has ended.
    pub(crate) fn is_ended(&self) -> bool {
        self.ended.is_cancelled()
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
        quiet && self.up.under_way() == 0
    }

    fn end(&self) {
        let _ = self.why.set("the session was ended".to_owned());
        self.ended.cancel();
    }
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

/// Watches one child: when it exits or closes its output, or the session ends, ends the
/// other — the session out of the table, the child's stdin closed, its group terminated
/// and the child reaped — and says why.
async fn watch(
    session: Arc<GatewaySession>,
    mut child: ChildProcess,
    peer: Peer,
    terminate_grace: Duration,
    sessions: Weak<Sessions<GatewaySession>>,
    children: Arc<std::sync::atomic::AtomicUsize>,
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
            reason => format!("the MCP server's output ended ({reason})"),
        }),
        () = session.ended.cancelled() => None,
    };
    if let Some(why) = why {
        let _ = session.why.set(why);
    }
    session.ended.cancel();
    if let Some(sessions) = sessions.upgrade() {
        sessions.remove(&session.id);
    }
    session.up.client_calls.cancel_all();
    if let Some(stream) = session.up.streams.standalone() {
        stream.finish();
    }
    // Its stdin closed first: a server that reads its end of input exits by itself.
    peer.close_within(Duration::from_millis(200)).await;
    child.terminate(terminate_grace).await;
    children.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    metrics::child_reaped();
    if session.kept.load(std::sync::atomic::Ordering::Relaxed) {
        metrics::session_ended();
    }
    session.finished.cancel();
}
