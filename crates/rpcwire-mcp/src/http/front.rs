//! The one Streamable HTTP front door: what every MCP endpoint checks and answers the same
//! way, whatever serves its sessions — the path, `Host`/`Origin` (DNS rebinding), the bearer
//! token, `MCP-Protocol-Version`, the methods, `Accept` and `Content-Type`, the session id,
//! the body's size and time — and the GET and DELETE that follow from a session. What serves
//! a POST is the [`Backend`]'s: a local [`McpServer`](crate::McpServer)'s handlers
//! (`service.rs`), or the MCP gateway's children, stdio or remote (`gateway/`).
//!
//! The backend is the seam where sessions live (rmcp calls it a session manager): today a
//! [`Sessions`] table in this process; a store shared by several instances plugs in here.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::header::{HeaderMap, HeaderValue, ALLOW, AUTHORIZATION, WWW_AUTHENTICATE};
use http::{Method, Request, Response, StatusCode};
use http_body::Body;
use sha2::{Digest, Sha256};

use super::answer::{refusal, rpc_refusal};
use super::body::McpBody;
use super::headers::{SESSION_HEADER, VERSION_HEADER};
use super::origin::{self, LOOPBACK_HOSTS};
use super::request::{accepts, read_post_body, refuse_post_headers, resumed, session_id};
use super::session::{Kept, Sessions};
use super::stream::EventStream;
use crate::version::ProtocolVersion;

/// The front door's settings, the same for every backend.
#[derive(Clone, Debug)]
pub(crate) struct Door {
    /// The one path served (`None`: every path).
    pub(crate) path: Option<String>,
    pub(crate) max_body: usize,
    pub(crate) body_timeout: Duration,
    /// `None`: no Host/Origin check.
    pub(crate) allowed_hosts: Option<Vec<String>>,
    /// The SHA-256 of the bearer token, when one is asked for.
    pub(crate) token: Option<[u8; 32]>,
    /// OAuth: the endpoint as a protected resource (its metadata, tokens, scopes).
    #[cfg(feature = "auth")]
    pub(crate) protection: Option<Arc<crate::auth::ProtectedResource>>,
}

impl Door {
    /// Every path, bodies of at most `max_body` read within 30 s, the loopback host names, no
    /// token.
    pub(crate) fn new(max_body: usize) -> Door {
        Door {
            path: None,
            max_body,
            body_timeout: Duration::from_secs(30),
            allowed_hosts: Some(LOOPBACK_HOSTS.iter().map(|host| host.to_string()).collect()),
            token: None,
            #[cfg(feature = "auth")]
            protection: None,
        }
    }

    /// Only `hosts` (any port) in `Host` and `Origin`.
    pub(crate) fn allow_hosts<I, S>(&mut self, hosts: I)
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allowed_hosts = Some(hosts.into_iter().map(Into::into).collect());
    }

    /// `Authorization: Bearer TOKEN` asked of every request; kept as its SHA-256.
    pub(crate) fn ask_token(&mut self, token: &[u8]) {
        self.token = Some(Sha256::digest(token).into());
    }
}

/// What serves the sessions behind the front door.
pub(crate) trait Backend: Clone + Send + Sync + 'static {
    /// One session.
    type Session: Kept + 'static;

    /// The front door's settings.
    fn door(&self) -> &Door;

    /// The sessions held here, by id.
    fn sessions(&self) -> &Sessions<Self::Session>;

    /// The session `id`: one held here by default. The lookup is a future so that a backend
    /// whose sessions are kept beyond this process (a store shared by the instances behind a
    /// load balancer) looks there too, without the door changing.
    fn session(&self, id: &str) -> impl Future<Output = Option<Arc<Self::Session>>> + Send {
        std::future::ready(self.sessions().get(id))
    }

    /// Ends the session `id` (a DELETE); whether there was one.
    fn end_session(&self, id: &str) -> impl Future<Output = bool> + Send {
        std::future::ready(self.sessions().remove(id))
    }

    /// Whether a request without a session may be of the stateless revision (whose POST
    /// checks `MCP-Protocol-Version` itself, with the body).
    fn serves_stateless(&self) -> bool;

    /// Whether a session may speak `version` (a revision with a handshake).
    fn speaks(&self, version: ProtocolVersion) -> bool;

    /// Answers a POST that passed the door: its session, if it named one, its headers, its
    /// whole body.
    fn post(
        self,
        session: Option<Arc<Self::Session>>,
        headers: &HeaderMap,
        body: Bytes,
    ) -> impl Future<Output = Response<McpBody>> + Send;

    /// The GET stream of `session` (a new one when there is none); `None` while one is read.
    fn open_standalone(session: &Self::Session) -> Option<Arc<EventStream>>;

    /// The answer to `GET /healthz`, where the backend has one.
    fn health(&self) -> Option<Response<McpBody>> {
        None
    }

    /// A request refused at the door, for `reason` (`forbidden`, `unauthorized`).
    fn refused(&self, reason: &'static str) {
        let _ = reason;
    }
}

/// Answers `request` for `backend`.
pub(crate) async fn answer<S, B>(backend: S, request: Request<B>) -> Response<McpBody>
where
    S: Backend,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: std::fmt::Display,
{
    let door = backend.door();
    let path = request.uri().path();
    if path == "/healthz" {
        if let Some(health) = backend.health() {
            return match *request.method() {
                Method::GET => health,
                _ => not_allowed("Method Not Allowed", "GET"),
            };
        }
    }
    #[cfg(feature = "auth")]
    if let Some(protected) = door.protection.as_deref().filter(|p| p.serves_metadata_at(path)) {
        // Public, and read by browser-based clients of other origins.
        return match *request.method() {
            Method::GET => protected_resource_metadata(protected),
            _ => not_allowed("Method Not Allowed", "GET"),
        };
    }
    if door.path.as_deref().is_some_and(|served| served != path) {
        return refusal(StatusCode::NOT_FOUND, "Not Found");
    }
    if let Some(hosts) = &door.allowed_hosts {
        let authority = request.uri().authority().map(|a| a.as_str());
        if !origin::allowed(request.headers(), authority, hosts) {
            backend.refused("forbidden");
            return refusal(StatusCode::FORBIDDEN, "Forbidden: Host or Origin not allowed");
        }
    }
    #[cfg(feature = "auth")]
    let claims = match door.protection.as_deref() {
        Some(protected) => match protected.admit(request.headers()).await {
            Ok(claims) => Some(claims),
            Err(denied) => {
                backend.refused("unauthorized");
                return denial(denied);
            }
        },
        None => None,
    };
    #[cfg(not(feature = "auth"))]
    let claims = ();
    if let Some(token) = &door.token {
        if !bearer_matches(request.headers(), token) {
            backend.refused("unauthorized");
            let mut answer = rpc_refusal(
                StatusCode::UNAUTHORIZED,
                crate::codes::UNAUTHORIZED,
                "Unauthorized: a valid bearer token is required",
            );
            answer
                .headers_mut()
                .insert(WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            return answer;
        }
    }
    let version = request.headers().get(VERSION_HEADER).map(|version| {
        version
            .to_str()
            .ok()
            .and_then(|v| v.parse::<ProtocolVersion>().ok())
    });
    if backend.serves_stateless() && !request.headers().contains_key(SESSION_HEADER) {
        // Without a session, the stateless revision checks the header itself (with the
        // body), and has nothing but POST.
        if *request.method() == Method::POST {
            return post(backend, request, claims).await;
        }
        if version.flatten().is_some_and(ProtocolVersion::is_stateless) {
            return not_allowed(
                "Method Not Allowed: protocol revision 2026-07-28 has POST only",
                "POST",
            );
        }
    }
    if let Some(version) = version {
        if !version.is_some_and(|v| !v.is_stateless() && backend.speaks(v)) {
            return refusal(
                StatusCode::BAD_REQUEST,
                "Bad Request: unsupported MCP-Protocol-Version",
            );
        }
    }
    match *request.method() {
        Method::POST => post(backend, request, claims).await,
        Method::GET => {
            let headers = request.headers();
            match get_session(&backend, headers).await {
                Ok(session) => resumed(session.streams(), headers)
                    .unwrap_or_else(|| super::request::standalone(S::open_standalone(&session))),
                Err(refused) => refused,
            }
        }
        Method::DELETE => delete_session(&backend, request.headers()).await,
        _ => not_allowed("Method Not Allowed", "GET, POST, DELETE"),
    }
}

/// The verified token's claims a request came with (`auth` feature).
#[cfg(feature = "auth")]
type Admitted = Option<crate::auth::Claims>;
#[cfg(not(feature = "auth"))]
type Admitted = ();

/// A POST: its headers, its session and its body checked (with a protected resource, the
/// scopes each of its requests needs), then the backend's, with the request's headers (and
/// `claims`) for its handlers to see.
async fn post<S, B>(backend: S, request: Request<B>, claims: Admitted) -> Response<McpBody>
where
    S: Backend,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: std::fmt::Display,
{
    let (parts, body) = request.into_parts();
    if let Some(refused) = refuse_post_headers(&parts.headers) {
        return refused;
    }
    let session = match session_of(&backend, &parts.headers).await {
        Ok(session) => session,
        Err(refused) => return refused,
    };
    let door = backend.door();
    let body = match read_post_body(body, door.max_body, door.body_timeout).await {
        Ok(body) => body,
        Err(refused) => return refused,
    };
    #[cfg(feature = "auth")]
    if let (Some(protected), Some(claims)) = (door.protection.as_deref(), &claims) {
        // The scopes every request needs are checked once, whatever the body holds; the
        // body is read here only when a method, tool or prompt needs one of its own.
        let mut allowed = protected.allows_all(claims);
        if allowed.is_ok() && protected.scopes_by_request() {
            allowed = requests_of(&body)
                .into_iter()
                .try_for_each(|(method, name)| protected.allows(claims, &method, name.as_deref()));
        }
        if let Err(denied) = allowed {
            backend.refused("forbidden");
            return denial(denied);
        }
    }
    // The headers move into what the handlers see; the backend reads them there.
    let info = Arc::new(crate::request_info::RequestInfo {
        headers: parts.headers,
        #[cfg(feature = "auth")]
        claims,
    });
    #[cfg(not(feature = "auth"))]
    let () = claims;
    let headers = info.clone();
    crate::request_info::serving(info, async move {
        backend.post(session, &headers.headers, body).await
    })
    .await
}

/// The method of each request in `body`, and the tool or prompt it names.
#[cfg(feature = "auth")]
fn requests_of(body: &[u8]) -> Vec<(String, Option<String>)> {
    use crate::message::Message;
    use crate::parse::Parsed;
    let one = |message: &Message<'_>| {
        let Message::Request(request) = message else {
            return None;
        };
        let method = request.method();
        let name = matches!(method, "tools/call" | "prompts/get")
            .then(|| request.params()?.get("name")?.decode::<String>().ok())
            .flatten();
        Some((method.to_owned(), name))
    };
    match crate::parse(body) {
        Ok(Parsed::Single(message)) => one(&message).into_iter().collect(),
        Ok(Parsed::Batch(batch)) => batch.iter().flatten().filter_map(|m| one(&m)).collect(),
        Err(_) => Vec::new(),
    }
}

/// The answer to a request a protected resource refused: its status, the challenge, and
/// (for a `401`) the JSON-RPC error the bearer token's absence has always had.
#[cfg(feature = "auth")]
fn denial(denied: crate::auth::Denied) -> Response<McpBody> {
    let mut answer = if denied.status == StatusCode::UNAUTHORIZED {
        rpc_refusal(denied.status, crate::codes::UNAUTHORIZED, &denied.reason)
    } else {
        refusal(denied.status, &denied.reason)
    };
    if let Ok(challenge) = HeaderValue::from_str(&denied.challenge) {
        answer.headers_mut().insert(WWW_AUTHENTICATE, challenge);
    }
    answer
}

/// The protected resource metadata document, to anyone (CORS: any origin).
#[cfg(feature = "auth")]
fn protected_resource_metadata(protected: &crate::auth::ProtectedResource) -> Response<McpBody> {
    let json = serde_json::to_vec(protected.metadata()).unwrap_or_default();
    let mut answer = Response::new(McpBody::whole(Bytes::from(json)));
    let headers = answer.headers_mut();
    headers.insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    headers.insert(
        http::header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    answer
}

/// The session a request names: `Ok(None)` without the header; `404` for one not (or no
/// longer) kept, `400` for an invalid id.
// The refusal is the answer itself, handed straight back to the service.
#[allow(clippy::result_large_err)]
async fn session_of<S: Backend>(
    backend: &S,
    headers: &HeaderMap,
) -> Result<Option<Arc<S::Session>>, Response<McpBody>> {
    match session_id(headers) {
        Ok(None) => Ok(None),
        Ok(Some(id)) => match backend.session(id).await {
            Some(session) => Ok(Some(session)),
            None => Err(refusal(StatusCode::NOT_FOUND, "Not Found: no such session")),
        },
        Err(invalid) => Err(invalid.answer()),
    }
}

/// A GET's session (which it must name), once `Accept` takes SSE; the refusal otherwise.
// The refusal is the answer itself, handed straight back to the service.
#[allow(clippy::result_large_err)]
async fn get_session<S: Backend>(
    backend: &S,
    headers: &HeaderMap,
) -> Result<Arc<S::Session>, Response<McpBody>> {
    if !accepts(headers, "text/event-stream") {
        return Err(refusal(
            StatusCode::NOT_ACCEPTABLE,
            "Not Acceptable: the client must accept text/event-stream",
        ));
    }
    session_of(backend, headers).await?.ok_or_else(|| {
        refusal(
            StatusCode::BAD_REQUEST,
            "Bad Request: Mcp-Session-Id header is required",
        )
    })
}

/// A DELETE: ends the session it names.
async fn delete_session<S: Backend>(backend: &S, headers: &HeaderMap) -> Response<McpBody> {
    match session_id(headers) {
        Ok(Some(id)) if backend.end_session(id).await => Response::new(McpBody::empty()),
        Ok(Some(_)) => refusal(StatusCode::NOT_FOUND, "Not Found: no such session"),
        Ok(None) => refusal(
            StatusCode::BAD_REQUEST,
            "Bad Request: Mcp-Session-Id header is required",
        ),
        Err(invalid) => invalid.answer(),
    }
}

/// `405` naming what is `allowed`.
fn not_allowed(reason: &'static str, allowed: &'static str) -> Response<McpBody> {
    let mut answer = refusal(StatusCode::METHOD_NOT_ALLOWED, reason);
    answer
        .headers_mut()
        .insert(ALLOW, HeaderValue::from_static(allowed));
    answer
}

/// Whether `Authorization` is `Bearer` with the token whose SHA-256 is `expected`, compared
/// in constant time (the digests, so not even the token's length shows).
pub(crate) fn bearer_matches(headers: &HeaderMap, expected: &[u8; 32]) -> bool {
    let Some(value) = headers.get(AUTHORIZATION) else {
        return false;
    };
    let value = value.as_bytes();
    let Some(scheme) = value.get(..7) else {
        return false;
    };
    if !scheme.eq_ignore_ascii_case(b"bearer ") {
        return false;
    }
    let given: [u8; 32] = Sha256::digest(value[7..].trim_ascii()).into();
    given
        .iter()
        .zip(expected)
        .fold(0u8, |differ, (a, b)| differ | (a ^ b))
        == 0
}

/// The tower `Service` of a front door's public type: every request answered by
/// [`answer`], never an error.
macro_rules! front_door_service {
    ($service:ty) => {
        impl<B> tower_service::Service<http::Request<B>> for $service
        where
            B: http_body::Body + Send + 'static,
            B::Data: Send,
            B::Error: std::fmt::Display,
        {
            type Response = http::Response<$crate::http::McpBody>;
            type Error = std::convert::Infallible;
            type Future = std::pin::Pin<
                Box<
                    dyn std::future::Future<
                            Output = Result<http::Response<$crate::http::McpBody>, std::convert::Infallible>,
                        > + Send,
                >,
            >;

            fn poll_ready(
                &mut self,
                _: &mut std::task::Context<'_>,
            ) -> std::task::Poll<Result<(), std::convert::Infallible>> {
                std::task::Poll::Ready(Ok(()))
            }

            fn call(&mut self, request: http::Request<B>) -> Self::Future {
                let backend = self.clone();
                Box::pin(async move { Ok($crate::http::front::answer(backend, request).await) })
            }
        }
    };
}
pub(crate) use front_door_service;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bearer_token_is_checked_whole() {
        let expected: [u8; 32] = Sha256::digest(b"s3cret").into();
        let with = |value: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(AUTHORIZATION, HeaderValue::from_str(value).unwrap());
            bearer_matches(&headers, &expected)
        };
        assert!(with("Bearer s3cret"));
        assert!(with("bearer  s3cret "));
        for wrong in [
            "Bearer s3cre",
            "Bearer s3cret2",
            "Basic s3cret",
            "Bearer",
            "s3cret",
            "",
        ] {
            assert!(!with(wrong), "{wrong}");
        }
        assert!(!bearer_matches(&HeaderMap::new(), &expected));
    }
}
