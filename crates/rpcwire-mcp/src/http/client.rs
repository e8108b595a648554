//! `StreamableHttpClient`: the client side of Streamable HTTP as a [`Transport`] for a
//! [`Peer`](crate::transport::Peer) — each frame POSTed, its answer read as JSON or as an SSE
//! stream; the session id kept from `initialize`'s answer and sent back; a stream that ends
//! before the answers it owes resumed with GET and `Last-Event-ID` after the server's
//! `retry:` delay, a bounded number of times; the session's own GET stream read for what the
//! server sends outside requests; the session ended with DELETE when the client closes.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http::header::{HeaderMap, HeaderName, HeaderValue, ACCEPT, CONTENT_TYPE};
use http::{Method, Request, StatusCode, Uri};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use tokio::sync::mpsc;

use super::credentials::{Credentials, MAX_REFUSALS};
use super::events::EventReader;
use super::headers::{SESSION_HEADER, VERSION_HEADER};
use super::posted::{requests_in, Posted};
use crate::message::Message;
use crate::param_headers::{header_text, ParamHeaders};
use crate::parse::Parsed;
use crate::sync::lock_unpoisoned;
use crate::transport::http::client::{failure_answer, ExchangeFailure};
use crate::transport::http::connections::Connections;
use crate::transport::tls::ClientTls;
use crate::transport::AddressError;
use crate::transport::{FrameReceiver, FrameSender, Transport, TransportError};
use rpcwire_http::endpoint::Endpoint;

const LAST_EVENT_ID: &str = "last-event-id";

/// The client side of Streamable HTTP, a [`Transport`] for a [`Peer`](crate::transport::Peer)
/// (what [`McpClient::connect_http`](crate::McpClient) uses).
///
/// ```
/// let transport = rpcwire::mcp::http::StreamableHttpClient::new("http://127.0.0.1:8000/mcp".parse().unwrap()).unwrap();
/// assert!(transport.session_id().is_none(), "no session before initialize");
/// ```
#[derive(Clone, Debug)]
pub struct StreamableHttpClient {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    url: Uri,
    connections: Connections,
    session: Mutex<Option<HeaderValue>>,
    version: Mutex<Option<HeaderValue>>,
    /// The GET stream was asked for (once per session).
    listening: AtomicBool,
    /// The server ended the session (`404`) and no `initialize` has started another: a
    /// request is failed here, not sent without a session.
    ended: AtomicBool,
    /// The POSTs under way that carry one request, by its id (JSON text): the client's
    /// cancellation of that request ends its POST too (how a stateless server learns of it).
    posts: Mutex<HashMap<String, tokio::task::AbortHandle>>,
    max_message: usize,
    max_resumes: u32,
    default_retry: Duration,
    /// Whether an expired session (404) is started again, with the `initialize` and
    /// `notifications/initialized` frames sent first, and the refused frame sent again.
    recover: bool,
    /// Those two frames, once sent.
    handshake: Mutex<(Option<Bytes>, Option<Bytes>)>,
    /// Sent with every request (`with_header`).
    headers: HeaderMap,
    /// One recovery at a time.
    recovering: tokio::sync::Mutex<()>,
    /// The authorizer's credentials on every request (`auth` feature).
    credentials: Credentials,
    /// The tools' `x-mcp-header` marks (learnt by the client from `tools/list`).
    param_headers: Option<Arc<ParamHeaders>>,
}

impl StreamableHttpClient {
    /// A client of the MCP endpoint at `url` (`http://host:port/path`, or `https://…`
    /// trusting the system's roots); refused when the URL is neither.
    ///
    /// ```
    /// let transport = rpcwire::mcp::http::StreamableHttpClient::new("http://localhost:3000/mcp".parse().unwrap()).unwrap();
    /// # let _ = transport;
    /// ```
    pub fn new(url: Uri) -> Result<StreamableHttpClient, AddressError> {
        Ok(StreamableHttpClient {
            shared: Arc::new(Shared {
                connections: Connections::new(Endpoint::http(&url)?),
                url,
                session: Mutex::new(None),
                version: Mutex::new(None),
                listening: AtomicBool::new(false),
                ended: AtomicBool::new(false),
                posts: Mutex::new(HashMap::new()),
                max_message: 4 << 20,
                max_resumes: 5,
                default_retry: Duration::from_secs(1),
                recover: false,
                handshake: Mutex::new((None, None)),
                headers: HeaderMap::new(),
                recovering: tokio::sync::Mutex::new(()),
                credentials: Credentials::default(),
                param_headers: None,
            }),
        })
    }

    /// Starts an expired session again (the server answered `404` to a request of it):
    /// the `initialize` and `notifications/initialized` frames sent at the start are sent
    /// once more, their answers kept from the peer, and the refused frame sent again in the
    /// new session — so that the peer's session goes on across a server's restart (what a
    /// gateway that brings a remote server to a local host does).
    ///
    /// ```
    /// let transport = rpcwire::mcp::http::StreamableHttpClient::new("http://localhost:3000/mcp".parse().unwrap()).unwrap()
    ///     .with_session_recovery();
    /// # let _ = transport;
    /// ```
    pub fn with_session_recovery(mut self) -> StreamableHttpClient {
        self.settings().recover = true;
        self
    }

    /// Sends `name: value` with every request (a credential the server asks for, say); a
    /// header the transport sets itself (the session, the revision, `Accept`,
    /// `Content-Type`, `Mcp-Method`, `Mcp-Name`) is the transport's.
    ///
    /// ```
    /// use http::header::{HeaderValue, AUTHORIZATION};
    /// let transport = rpcwire::mcp::http::StreamableHttpClient::new("http://localhost:3000/mcp".parse().unwrap()).unwrap()
    ///     .with_header(AUTHORIZATION, HeaderValue::from_static("Bearer s3cret"));
    /// # let _ = transport;
    /// ```
    pub fn with_header(mut self, name: HeaderName, mut value: HeaderValue) -> StreamableHttpClient {
        // A credential, most likely: never shown by `Debug`.
        value.set_sensitive(true);
        self.settings().headers.append(name, value);
        self
    }

    /// Speaks TLS through `tls` to an `https://` server (what it trusts, the certificate
    /// it shows); without it, the system's roots are trusted.
    ///
    /// ```
    /// let tls = rpcwire::transport::tls::ClientTls::builder().with_webpki_roots().build().unwrap();
    /// let transport = rpcwire::mcp::http::StreamableHttpClient::new("https://mcp.example/mcp".parse().unwrap())
    ///     .unwrap()
    ///     .with_tls(tls);
    /// # let _ = transport;
    /// ```
    pub fn with_tls(mut self, tls: ClientTls) -> StreamableHttpClient {
        let connections = self.shared.connections.fresh().with_tls(Some(tls));
        self.settings().connections = connections;
        self
    }

    /// Authorizes through `authorizer` (MCP's OAuth 2.1): a request the server refuses
    /// (`401`, or `403` for a scope it lacks) is sent again once the authorizer has got
    /// credentials, and every request carries them.
    ///
    /// ```
    /// let transport = rpcwire::mcp::http::StreamableHttpClient::new("http://127.0.0.1:8000/mcp".parse().unwrap())
    ///     .unwrap()
    ///     .with_authorizer(rpcwire::mcp::auth::Authorizer::new("host"))
    ///     .unwrap();
    /// # let _ = transport;
    /// ```
    #[cfg(feature = "auth")]
    #[cfg_attr(docsrs, doc(cfg(feature = "auth")))]
    pub fn with_authorizer(
        mut self,
        authorizer: crate::auth::Authorizer,
    ) -> Result<StreamableHttpClient, AddressError> {
        let credentials = Credentials::new(authorizer, &self.shared.url)?;
        self.settings().credentials = credentials;
        Ok(self)
    }

    /// Why the authorizer last failed to give credentials, if it did since the last time this
    /// was asked (what [`ConnectError::Authorization`](crate::ConnectError) holds).
    #[cfg(feature = "auth")]
    pub(crate) fn take_authorization_failure(&self) -> Option<crate::auth::AuthError> {
        self.shared.credentials.take_failure()
    }

    /// Sends each call's arguments marked `x-mcp-header` as `Mcp-Param-*` headers, from the
    /// marks `headers` learnt.
    pub(crate) fn with_param_headers(mut self, headers: Arc<ParamHeaders>) -> StreamableHttpClient {
        self.settings().param_headers = Some(headers);
        self
    }

    /// The settings, to change: this client's own, or (when it was cloned) a copy of them
    /// with no session yet.
    fn settings(&mut self) -> &mut Shared {
        if Arc::get_mut(&mut self.shared).is_none() {
            let old = self.shared.clone();
            let version = lock_unpoisoned(&old.version).clone();
            self.shared = Arc::new(Shared {
                url: old.url.clone(),
                connections: old.connections.fresh(),
                session: Mutex::new(None),
                version: Mutex::new(version),
                listening: AtomicBool::new(false),
                ended: AtomicBool::new(false),
                posts: Mutex::new(HashMap::new()),
                max_message: old.max_message,
                max_resumes: old.max_resumes,
                default_retry: old.default_retry,
                recover: old.recover,
                handshake: Mutex::new((None, None)),
                headers: old.headers.clone(),
                recovering: tokio::sync::Mutex::new(()),
                credentials: old.credentials.clone(),
                param_headers: old.param_headers.clone(),
            });
        }
        Arc::get_mut(&mut self.shared).expect("just made its own")
    }

    /// The session id the server gave at `initialize`.
    ///
    /// ```
    /// let transport = rpcwire::mcp::http::StreamableHttpClient::new("http://localhost:3000/mcp".parse().unwrap()).unwrap();
    /// assert_eq!(transport.session_id(), None);
    /// ```
    pub fn session_id(&self) -> Option<String> {
        lock_unpoisoned(&self.shared.session)
            .as_ref()
            .and_then(|value| value.to_str().ok().map(str::to_owned))
    }

    /// Sends `MCP-Protocol-Version: version` on every request from now on (what a client
    /// does once `initialize` agreed on a revision).
    ///
    /// ```
    /// let transport = rpcwire::mcp::http::StreamableHttpClient::new("http://localhost:3000/mcp".parse().unwrap()).unwrap();
    /// transport.set_protocol_version(rpcwire::mcp::ProtocolVersion::V2025_11_25);
    /// ```
    pub fn set_protocol_version(&self, version: crate::ProtocolVersion) {
        *lock_unpoisoned(&self.shared.version) = Some(HeaderValue::from_static(version.as_str()));
    }
}

impl Transport for StreamableHttpClient {
    type Receiver = ClientReceiver;
    type Sender = ClientSender;

    fn split(self) -> (ClientReceiver, ClientSender) {
        let (frames, receiver) = mpsc::unbounded_channel();
        (
            ClientReceiver { frames: receiver },
            ClientSender {
                shared: self.shared,
                frames: Some(frames),
            },
        )
    }
}

/// The read half of a [`StreamableHttpClient`]: the messages the server sent, in the order
/// they came.
#[derive(Debug)]
pub struct ClientReceiver {
    frames: mpsc::UnboundedReceiver<Bytes>,
}

impl FrameReceiver for ClientReceiver {
    async fn receive(&mut self) -> Result<Option<Bytes>, TransportError> {
        Ok(self.frames.recv().await)
    }
}

/// The write half of a [`StreamableHttpClient`]: each frame one POST.
#[derive(Debug)]
pub struct ClientSender {
    shared: Arc<Shared>,
    frames: Option<mpsc::UnboundedSender<Bytes>>,
}

impl FrameSender for ClientSender {
    async fn send(&mut self, body: Bytes) -> Result<(), TransportError> {
        let Some(frames) = self.frames.clone() else {
            return Err(TransportError::Closed);
        };
        let posted = requests_in(&body, self.shared.param_headers.as_deref());
        if self.shared.recover {
            let mut handshake = lock_unpoisoned(&self.shared.handshake);
            if posted.initialize {
                *handshake = (Some(body.clone()), None);
            } else if posted.method.as_deref() == Some("notifications/initialized") {
                handshake.1 = Some(body.clone());
            }
        }
        if let Some(cancelled) = &posted.cancelled {
            if let Some(post) = lock_unpoisoned(&self.shared.posts).remove(cancelled) {
                post.abort();
            }
        }
        if posted.ids.is_empty() {
            // Notifications and responses are POSTed in order, each before the frames after
            // it (`notifications/initialized` before the first request, as the server needs);
            // they are answered 202 at once.
            self.shared.clone().post(body, posted, frames, true).await;
            return Ok(());
        }
        let single = (posted.ids.len() == 1)
            .then(|| posted.ids.iter().next().cloned())
            .flatten();
        let shared = self.shared.clone();
        let done = single.clone();
        // Registered before the POST can end and take itself off (under the same lock).
        let mut posts = lock_unpoisoned(&self.shared.posts);
        let post = tokio::spawn(async move {
            let shared_again = shared.clone();
            shared.post(body, posted, frames, true).await;
            if let Some(id) = done {
                lock_unpoisoned(&shared_again.posts).remove(&id);
            }
        });
        if let Some(id) = single {
            posts.insert(id, post.abort_handle());
        }
        Ok(())
    }

    async fn flush(&mut self) -> Result<(), TransportError> {
        Ok(())
    }

    async fn close(&mut self) -> Result<(), TransportError> {
        self.frames = None;
        let session = lock_unpoisoned(&self.shared.session).take();
        if let Some(session) = session {
            let mut request = Request::new(Full::default());
            *request.method_mut() = Method::DELETE;
            *request.headers_mut() = self.shared.headers.clone();
            request.headers_mut().insert(SESSION_HEADER, session);
            let _ = self.shared.credentials.add(&mut request).await;
            let ended =
                tokio::time::timeout(Duration::from_secs(5), self.shared.connections.send(request)).await;
            if let Ok(Ok((response, lease))) = ended {
                let _ = response.into_body().collect().await;
                lease.give_back();
            }
        }
        Ok(())
    }
}

/// Whether `response` says its body is of `media` type.
fn has_content_type<B>(response: &http::Response<B>, media: &str) -> bool {
    response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with(media))
}

/// A header value for `text` ([`header_text`]: plain, or base64 when it must be).
fn header_value(text: &str) -> Option<HeaderValue> {
    HeaderValue::from_str(&header_text(text)).ok()
}

/// The id (as JSON text) of the response `message` is, if it is one.
fn response_id(message: &[u8]) -> Option<String> {
    match crate::parse(message).ok()? {
        Parsed::Single(Message::Response(response)) => Some(response.id().json_parts().concat()),
        _ => None,
    }
}

impl Shared {
    fn request(&self, method: Method, body: Bytes) -> Request<Full<Bytes>> {
        let mut request = Request::new(Full::new(body));
        *request.method_mut() = method;
        let headers = request.headers_mut();
        headers.clone_from(&self.headers);
        if let Some(session) = lock_unpoisoned(&self.session).clone() {
            headers.insert(SESSION_HEADER, session);
        }
        if let Some(version) = lock_unpoisoned(&self.version).clone() {
            headers.insert(VERSION_HEADER, version);
        }
        request
    }

    /// A POST of a stateless request (no session) that names `version`.
    fn stateless_request(&self, body: Bytes, version: &str) -> Request<Full<Bytes>> {
        let mut request = Request::new(Full::new(body));
        *request.method_mut() = Method::POST;
        request.headers_mut().clone_from(&self.headers);
        if let Ok(version) = HeaderValue::from_str(version) {
            request.headers_mut().insert(VERSION_HEADER, version);
        }
        request
    }

    /// POSTs one frame and hands what comes back to the receiver; requests left without an
    /// answer get an error answer, so that every call ends. With session recovery, a frame
    /// refused `404` in an expired session is sent again (once, `may_recover`) in a new one.
    async fn post(
        self: Arc<Self>,
        frame: Bytes,
        posted: Posted,
        frames: mpsc::UnboundedSender<Bytes>,
        may_recover: bool,
    ) {
        let again = (self.recover && may_recover && !posted.initialize).then(|| posted.clone());
        let (mut owed, initialize) = (posted.ids, posted.initialize);
        let (sent_in, mut request) = match posted.stateless.as_deref() {
            Some(version) => (None, self.stateless_request(frame.clone(), version)),
            None => {
                let sent_in = lock_unpoisoned(&self.session).clone();
                if sent_in.is_none() && !initialize && self.ended.load(Ordering::Acquire) {
                    let reason =
                        "the session has ended (the server answered 404): initialize to start another";
                    let failure = ExchangeFailure::new(reason, false, None);
                    if let Some(answer) = failure_answer(&frame, &failure) {
                        let _ = frames.send(answer);
                    }
                    return;
                }
                (sent_in, self.request(Method::POST, frame.clone()))
            }
        };
        let headers = request.headers_mut();
        headers.insert(
            ACCEPT,
            HeaderValue::from_static("application/json, text/event-stream"),
        );
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        // What the body says, for servers (and proxies) that route on headers (SEP-2243).
        if let Some(method) = posted.method.as_deref().and_then(header_value) {
            headers.insert("mcp-method", method);
        }
        if let Some(name) = posted.name.as_deref().and_then(header_value) {
            headers.insert("mcp-name", name);
        }
        for (name, value) in &posted.params {
            if let (Ok(name), Ok(value)) = (
                HeaderName::from_bytes(name.as_bytes()),
                HeaderValue::from_str(value),
            ) {
                headers.insert(name, value);
            }
        }
        let failed = ExchangeFailure::new;
        let fail = |reason: String, reached: bool| {
            if let Some(answer) = failure_answer(&frame, &failed(reason, reached, None)) {
                let _ = frames.send(answer);
            }
        };
        let mut refusals = 0;
        // With an authorizer, what the request is made of is kept to send it again after an
        // authorization; without one, it is sent once, as it is.
        let resend = self
            .credentials
            .is_active()
            .then(|| (request.method().clone(), request.headers().clone()));
        let mut first = Some(request);
        let (response, lease) = loop {
            let mut attempt = match (first.take(), &resend) {
                (Some(request), _) => request,
                (None, Some((method, headers))) => {
                    let mut request = Request::new(Full::new(frame.clone()));
                    *request.method_mut() = method.clone();
                    *request.headers_mut() = headers.clone();
                    request
                }
                (None, None) => unreachable!("only an authorizer's refusal sends a request again"),
            };
            let sent = match self.credentials.add(&mut attempt).await {
                Ok(sent) => sent,
                Err(why) => return why.tell(&frame, &frames),
            };
            let (response, lease) = match self.connections.send(attempt).await {
                Ok(answered) => answered,
                Err(failure) => return fail(failure.reason, failure.reached),
            };
            let status = response.status();
            if resend.is_some() && refusals < MAX_REFUSALS {
                if let Some(authorized) = self
                    .credentials
                    .refused(status, response.headers(), sent.as_ref())
                    .await
                {
                    let _ = response.into_body().collect().await;
                    refusals += 1;
                    match authorized {
                        Ok(()) => continue,
                        Err(why) => return why.tell(&frame, &frames),
                    }
                }
            }
            if status.is_success() {
                self.credentials.accepted(response.headers());
            }
            break (response, lease);
        };
        let status = response.status();
        if initialize && status == StatusCode::OK {
            if let Some(session) = response.headers().get(SESSION_HEADER) {
                *lock_unpoisoned(&self.session) = Some(session.clone());
                self.listening.store(false, Ordering::Release);
                self.ended.store(false, Ordering::Release);
            }
        }
        let is_sse = has_content_type(&response, "text/event-stream");
        match status {
            StatusCode::OK if is_sse => {
                let resume = self.read_events(response.into_body(), &frames, &mut owed).await;
                if !owed.is_empty() {
                    self.resume(resume, &frames, &mut owed).await;
                }
            }
            StatusCode::OK => {
                if let Ok(bytes) = self.read_body(response).await {
                    lease.give_back();
                    if !bytes.is_empty() {
                        let _ = frames.send(bytes);
                    }
                    owed.clear();
                }
            }
            StatusCode::ACCEPTED => {
                let _ = response.into_body().collect().await;
                lease.give_back();
            }
            StatusCode::NOT_FOUND if again.is_some() && sent_in.is_some() => {
                let _ = response.into_body().collect().await;
                if let (Some(posted), Some(sent_in)) = (again, sent_in) {
                    if self.recover_session(&sent_in).await {
                        return Box::pin(self.post(frame, posted, frames, false)).await;
                    }
                }
            }
            status => {
                if status == StatusCode::NOT_FOUND
                    && sent_in.is_some()
                    && lock_unpoisoned(&self.session).take().is_some()
                {
                    // The session is gone: the next initialize starts another.
                    self.listening.store(false, Ordering::Release);
                    self.ended.store(true, Ordering::Release);
                }
                let json = has_content_type(&response, "application/json");
                if let (true, Ok(bytes)) = (json, self.read_body(response).await) {
                    // A refusal that answers a request (the stateless revision's errors do,
                    // with the request's id) is that request's answer.
                    if let Some(id) = response_id(&bytes).filter(|id| owed.contains(id)) {
                        owed.remove(&id);
                        let _ = frames.send(bytes);
                    }
                }
            }
        }
        if !owed.is_empty() {
            let failure = failed(
                format!("HTTP status {status}: no answer"),
                true,
                Some(status.as_u16()),
            );
            if let Some(answer) = failure_answer(&frame, &failure) {
                let _ = frames.send(answer);
            }
        }
        if status == StatusCode::OK
            && !self.listening.swap(true, Ordering::AcqRel)
            && lock_unpoisoned(&self.session).is_some()
        {
            tokio::spawn(self.listen(frames));
        }
    }

    /// Starts the session again after `expired` was refused: `initialize` and
    /// `notifications/initialized` as first sent, their answers read and dropped. `true` when
    /// there is a new session (made here, or by another request that found the same).
    async fn recover_session(&self, expired: &HeaderValue) -> bool {
        let _one = self.recovering.lock().await;
        {
            let mut session = lock_unpoisoned(&self.session);
            match &*session {
                Some(current) if current != expired => return true,
                _ => *session = None,
            }
        }
        let (Some(initialize), initialized) = lock_unpoisoned(&self.handshake).clone() else {
            return false;
        };
        let post = |body: Bytes| {
            let mut request = self.request(Method::POST, body);
            let headers = request.headers_mut();
            headers.insert(
                ACCEPT,
                HeaderValue::from_static("application/json, text/event-stream"),
            );
            headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            request
        };
        let mut initialize = post(initialize);
        if self.credentials.add(&mut initialize).await.is_err() {
            return false;
        }
        let Ok((response, _lease)) = self.connections.send(initialize).await else {
            return false;
        };
        let session = response.headers().get(SESSION_HEADER).cloned();
        let ok = response.status() == StatusCode::OK;
        let _ = response.into_body().collect().await;
        let Some(session) = session.filter(|_| ok) else {
            return false;
        };
        *lock_unpoisoned(&self.session) = Some(session);
        self.listening.store(false, Ordering::Release);
        if let Some(initialized) = initialized {
            let mut initialized = post(initialized);
            let _ = self.credentials.add(&mut initialized).await;
            if let Ok((response, _lease)) = self.connections.send(initialized).await {
                let _ = response.into_body().collect().await;
            }
        }
        true
    }

    /// A whole answer's body, at most the message limit.
    async fn read_body<B>(
        &self,
        response: http::Response<B>,
    ) -> Result<Bytes, crate::transport::http::body::ReadError>
    where
        B: http_body::Body + Unpin,
        B::Error: std::fmt::Display,
    {
        let mut body = response.into_body();
        crate::transport::http::body::read_limited(std::pin::Pin::new(&mut body), self.max_message).await
    }

    /// Reads an SSE body to its end, handing each message on and crossing answered requests
    /// off `owed`; where to resume: the last event id and the retry delay.
    async fn read_events(
        &self,
        mut body: Incoming,
        frames: &mpsc::UnboundedSender<Bytes>,
        owed: &mut HashSet<String>,
    ) -> Resume {
        let mut reader = EventReader::new(self.max_message);
        let mut resume = Resume {
            last_id: None,
            retry: self.default_retry,
        };
        while let Some(Ok(frame)) = body.frame().await {
            let Ok(data) = frame.into_data() else { continue };
            if reader.push(&data).is_err() {
                return resume;
            }
            while let Ok(Some(event)) = reader.next_event() {
                if let Some(id) = event.id {
                    resume.last_id = Some(id);
                }
                if let Some(ms) = event.retry_ms {
                    resume.retry = Duration::from_millis(ms);
                }
                if event.data.is_empty() {
                    continue;
                }
                let message = Bytes::from(event.data);
                if let Some(id) = response_id(&message) {
                    owed.remove(&id);
                }
                let _ = frames.send(message);
            }
            if owed.is_empty() {
                // Everything answered: the stream may end (or the server keeps it; not needed).
                return resume;
            }
        }
        resume
    }

    /// Resumes a stream that ended before its answers, with GET and `Last-Event-ID` after the
    /// retry delay, at most `max_resumes` times.
    async fn resume(
        &self,
        mut resume: Resume,
        frames: &mpsc::UnboundedSender<Bytes>,
        owed: &mut HashSet<String>,
    ) {
        for _ in 0..self.max_resumes {
            let Some(last_id) = resume.last_id.clone() else {
                return;
            };
            tokio::time::sleep(resume.retry).await;
            let mut request = self.request(Method::GET, Bytes::new());
            request
                .headers_mut()
                .insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
            let Ok(last) = HeaderValue::from_str(&last_id) else {
                return;
            };
            request.headers_mut().insert(LAST_EVENT_ID, last);
            if self.credentials.add(&mut request).await.is_err() {
                return;
            }
            let Ok((response, _lease)) = self.connections.send(request).await else {
                continue;
            };
            if response.status() != StatusCode::OK {
                return;
            }
            let next = self.read_events(response.into_body(), frames, owed).await;
            if owed.is_empty() {
                return;
            }
            resume = Resume {
                last_id: next.last_id.or(Some(last_id)),
                retry: next.retry,
            };
        }
    }

    /// Reads the session's GET stream (what the server sends outside requests) until the
    /// session ends or the server does not offer one.
    async fn listen(self: Arc<Self>, frames: mpsc::UnboundedSender<Bytes>) {
        let mut resume = Resume {
            last_id: None,
            retry: self.default_retry,
        };
        for _ in 0..=self.max_resumes {
            if frames.is_closed() || lock_unpoisoned(&self.session).is_none() {
                return;
            }
            let mut request = self.request(Method::GET, Bytes::new());
            request
                .headers_mut()
                .insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
            if let Some(last) = resume
                .last_id
                .as_deref()
                .and_then(|id| HeaderValue::from_str(id).ok())
            {
                request.headers_mut().insert(LAST_EVENT_ID, last);
            }
            if self.credentials.add(&mut request).await.is_err() {
                return;
            }
            let Ok((response, _lease)) = self.connections.send(request).await else {
                return;
            };
            if response.status() != StatusCode::OK {
                return;
            }
            let mut none = HashSet::from([String::new()]);
            let next = self.read_events(response.into_body(), &frames, &mut none).await;
            resume = Resume {
                last_id: next.last_id.or(resume.last_id),
                retry: next.retry,
            };
            tokio::time::sleep(resume.retry).await;
        }
    }
}

/// Where to pick a stream up again.
struct Resume {
    last_id: Option<String>,
    retry: Duration,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recovery_asked_of_a_shared_client_makes_its_own_keeping_the_settings() {
        let client = StreamableHttpClient::new("http://127.0.0.1:9/mcp".parse().unwrap()).unwrap();
        client.set_protocol_version(crate::ProtocolVersion::V2025_11_25);
        let before = client.clone();
        let recovering = client.with_session_recovery();
        assert!(recovering.shared.recover);
        assert!(!before.shared.recover, "the clone made before keeps its own");
        let version = lock_unpoisoned(&recovering.shared.version).clone();
        assert_eq!(version.as_ref().and_then(|v| v.to_str().ok()), Some("2025-11-25"));
        assert!(
            StreamableHttpClient::new("http://127.0.0.1:9/mcp".parse().unwrap())
                .unwrap()
                .with_session_recovery()
                .shared
                .recover
        );
    }
}
