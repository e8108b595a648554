//! The grants and bindings of rpcwire's MCP authorization beyond the authorization code,
//! against a small authorization server and protected MCP endpoint written here (axum), which
//! record what the client sends: client credentials with a secret (Basic) and with a signed
//! assertion (`private_key_jwt`, its audience the issuer), a workload's JWT bearer grant, the
//! enterprise identity assertion (a token exchange at the identity provider, then a JWT
//! bearer grant), dynamic registration answered with `client_secret_post`, a client metadata
//! document instead of registration, and DPoP with nonces at both the token endpoint and the
//! resource. (The official conformance suite checks the same against the example client,
//! tests/mcp_client_suite.rs; these run the library in process.)
#![cfg(feature = "auth")]

use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use rpcwire::mcp::auth::{Authorizer, ClientKey, IdentityProvider, Url};
use rpcwire::mcp::{ConnectError, McpClient};
use serde_json::{json, Value};

/// A request's form (or query), as name and value pairs.
type Form = Vec<(String, String)>;

/// What the server is, and what it saw.
#[derive(Default)]
struct State {
    base: String,
    /// The resource wants DPoP (its challenge's scheme), the authorization server takes ES256
    /// proofs, and both ask for a nonce first.
    dpop: bool,
    cimd: bool,
    /// Documents to serve instead of the usual ones (a test of what is refused).
    resource_metadata: Option<Value>,
    server_metadata: Option<Value>,
    /// The status the MCP endpoint answers requests that carry a token with (`None`: served).
    refuse_with: Option<StatusCode>,
    /// The token endpoint refuses every grant (`400 invalid_grant`).
    refuse_tokens: bool,
    /// (path, headers, form) of every request to the authorization server.
    seen: Vec<(String, HeaderMap, Form)>,
    /// The `Authorization` and `DPoP` headers of every MCP request.
    mcp: Vec<(Option<String>, Option<String>)>,
}

type Shared = Arc<Mutex<State>>;

fn form(body: &[u8]) -> Form {
    let text = String::from_utf8_lossy(body);
    Url::parse(&format!("http://x/?{text}"))
        .unwrap()
        .query_pairs()
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

fn json_answer(status: StatusCode, value: Value) -> Response {
    (status, [("content-type", "application/json")], value.to_string()).into_response()
}

/// The claims of a JWT (not verified: the server here only looks).
fn claims(jwt: &str) -> Value {
    use base64::Engine;
    let part = jwt.split('.').nth(1).unwrap_or_default();
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(part)
        .unwrap_or_default();
    serde_json::from_slice(&bytes).unwrap_or_default()
}

async fn handle(
    shared: Shared,
    method: axum::http::Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let path = uri.path().to_owned();
    let mut state = shared.lock().unwrap();
    let base = state.base.clone();
    match (method.as_str(), path.as_str()) {
        ("GET", "/.well-known/oauth-protected-resource/mcp") => {
            let document = state.resource_metadata.clone().unwrap_or_else(
                || json!({"resource": format!("{base}/mcp"), "authorization_servers": [base]}),
            );
            json_answer(StatusCode::OK, document)
        }
        ("GET", "/.well-known/oauth-authorization-server") => {
            let mut metadata = json!({
                "issuer": base,
                "authorization_endpoint": format!("{base}/authorize"),
                "token_endpoint": format!("{base}/token"),
                "registration_endpoint": format!("{base}/register"),
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["client_secret_post", "client_secret_basic", "private_key_jwt", "none"],
                "authorization_response_iss_parameter_supported": true,
            });
            if state.dpop {
                metadata["dpop_signing_alg_values_supported"] = json!(["ES256"]);
            }
            if state.cimd {
                metadata["client_id_metadata_document_supported"] = json!(true);
            }
            json_answer(StatusCode::OK, state.server_metadata.clone().unwrap_or(metadata))
        }
        ("GET", "/authorize") => {
            let query: Form = form(uri.query().unwrap_or_default().as_bytes());
            let get = |name: &str| {
                query
                    .iter()
                    .find(|(k, _)| k == name)
                    .map(|(_, v)| v.clone())
                    .unwrap_or_default()
            };
            state.seen.push((path.clone(), headers, query.clone()));
            let mut back = Url::parse(&get("redirect_uri")).unwrap();
            back.query_pairs_mut()
                .append_pair("code", "the-code")
                .append_pair("state", &get("state"))
                .append_pair("iss", &base);
            (StatusCode::FOUND, [("location", back.to_string())]).into_response()
        }
        ("POST", "/register") => {
            state.seen.push((path, headers, Vec::new()));
            json_answer(
                StatusCode::CREATED,
                json!({"client_id": "registered", "client_secret": "registered-secret", "token_endpoint_auth_method": "client_secret_post"}),
            )
        }
        ("POST", "/idp/token") => {
            let form = form(&body);
            state.seen.push((path, headers, form));
            json_answer(
                StatusCode::OK,
                json!({"access_token": "the-id-jag", "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag", "token_type": "N_A"}),
            )
        }
        ("POST", "/token") => {
            let form = form(&body);
            let proof = headers.get("dpop").map(|v| v.to_str().unwrap().to_owned());
            state.seen.push((path, headers, form));
            if state.refuse_tokens {
                return json_answer(
                    StatusCode::BAD_REQUEST,
                    json!({"error": "invalid_grant", "error_description": "not any more"}),
                );
            }
            let token_type = match &proof {
                Some(proof) if claims(proof)["nonce"] != "as-nonce" => {
                    return (
                        StatusCode::BAD_REQUEST,
                        [("dpop-nonce", "as-nonce"), ("content-type", "application/json")],
                        json!({"error": "use_dpop_nonce"}).to_string(),
                    )
                        .into_response();
                }
                Some(_) => "DPoP",
                None => "Bearer",
            };
            let n = state.seen.len();
            json_answer(
                StatusCode::OK,
                json!({"access_token": format!("tok-{n}"), "token_type": token_type, "expires_in": 3600}),
            )
        }
        ("POST", "/mcp") => {
            let authorization = headers
                .get("authorization")
                .map(|v| v.to_str().unwrap().to_owned());
            let proof = headers.get("dpop").map(|v| v.to_str().unwrap().to_owned());
            state.mcp.push((authorization.clone(), proof.clone()));
            let scheme = if state.dpop { "DPoP" } else { "Bearer" };
            let challenge =
                format!(r#"{scheme} resource_metadata="{base}/.well-known/oauth-protected-resource/mcp""#);
            let Some(authorization) = authorization else {
                return (StatusCode::UNAUTHORIZED, [("www-authenticate", challenge)]).into_response();
            };
            if let Some(status) = state.refuse_with {
                return (status, [("www-authenticate", challenge)]).into_response();
            }
            if state.dpop {
                let nonce_ok = proof.as_deref().is_some_and(|p| claims(p)["nonce"] == "rs-nonce");
                if !authorization.starts_with("DPoP ") || !nonce_ok {
                    let asked = format!(r#"DPoP error="use_dpop_nonce", resource_metadata="{base}/x""#);
                    return (
                        StatusCode::UNAUTHORIZED,
                        [("www-authenticate", asked), ("dpop-nonce", "rs-nonce".to_owned())],
                    )
                        .into_response();
                }
            }
            let request: Value = serde_json::from_slice(&body).unwrap_or_default();
            let result = match request["method"].as_str() {
                Some("initialize") => {
                    json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "mock", "version": "1"}})
                }
                Some("tools/list") => json!({"tools": []}),
                _ => return StatusCode::ACCEPTED.into_response(),
            };
            json_answer(
                StatusCode::OK,
                json!({"jsonrpc": "2.0", "id": request["id"], "result": result}),
            )
        }
        _ => StatusCode::NOT_FOUND.into_response(),
    }
}

/// Starts the mock (`dpop`, `cimd` as given): its shared state.
async fn mock(dpop: bool, cimd: bool) -> Shared {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let shared: Shared = Arc::new(Mutex::new(State {
        base: format!("http://{}", listener.local_addr().unwrap()),
        dpop,
        cimd,
        ..State::default()
    }));
    let state = shared.clone();
    let app = axum::Router::new()
        .fallback(move |method, uri, headers, body| handle(state.clone(), method, uri, headers, body));
    tokio::spawn(async move { axum::serve(listener, app).await });
    shared
}

/// Connects `authorizer` to the mock's MCP endpoint and lists its tools.
async fn connect(shared: &Shared, authorizer: Authorizer) {
    let url = format!("{}/mcp", shared.lock().unwrap().base);
    let client = McpClient::builder("grants", "1")
        .with_authorizer(authorizer)
        .connect_http(url.parse().unwrap())
        .await
        .expect("authorized");
    client.list_tools().await.expect("tools");
    client.close().await;
}

/// The form of the last request to `path`, and its headers.
fn last(shared: &Shared, path: &str) -> (HeaderMap, Form) {
    let state = shared.lock().unwrap();
    let (_, headers, form) = state
        .seen
        .iter()
        .rev()
        .find(|(p, _, _)| p == path)
        .expect(path)
        .clone();
    (headers, form)
}

fn field<'a>(form: &'a [(String, String)], name: &str) -> Option<&'a str> {
    form.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

#[tokio::test]
async fn client_credentials_with_a_secret_go_in_basic() {
    let shared = mock(false, false).await;
    connect(
        &shared,
        Authorizer::new("machine").with_client_credentials("robot", "robot-secret"),
    )
    .await;
    let (headers, form) = last(&shared, "/token");
    assert_eq!(field(&form, "grant_type"), Some("client_credentials"));
    assert!(headers["authorization"].to_str().unwrap().starts_with("Basic "));
    assert!(field(&form, "client_secret").is_none());
    let base = shared.lock().unwrap().base.clone();
    assert_eq!(field(&form, "resource"), Some(format!("{base}/mcp").as_str()));
}

#[tokio::test]
async fn a_private_key_signs_an_assertion_for_the_issuer() {
    let shared = mock(false, false).await;
    let pem = rcgen::KeyPair::generate().unwrap().serialize_pem();
    let key = ClientKey::from_pem(&pem, None).expect("a P-256 key");
    connect(
        &shared,
        Authorizer::new("machine")
            .with_client_credentials("robot", "")
            .with_private_key(key),
    )
    .await;
    let (headers, form) = last(&shared, "/token");
    assert!(headers.get("authorization").is_none());
    assert_eq!(
        field(&form, "client_assertion_type"),
        Some("urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
    );
    let assertion = claims(field(&form, "client_assertion").expect("an assertion"));
    let base = shared.lock().unwrap().base.clone();
    assert_eq!(assertion["aud"], base, "the issuer, not the token endpoint");
    assert_eq!(
        (assertion["iss"].as_str(), assertion["sub"].as_str()),
        (Some("robot"), Some("robot"))
    );
}

#[tokio::test]
async fn a_workloads_jwt_is_the_grant() {
    let shared = mock(false, false).await;
    connect(
        &shared,
        Authorizer::new("workload").with_jwt_bearer("the-workload-jwt"),
    )
    .await;
    let (_, form) = last(&shared, "/token");
    assert_eq!(
        field(&form, "grant_type"),
        Some("urn:ietf:params:oauth:grant-type:jwt-bearer")
    );
    assert_eq!(field(&form, "assertion"), Some("the-workload-jwt"));
    assert!(
        shared
            .lock()
            .unwrap()
            .seen
            .iter()
            .all(|(p, _, _)| p != "/register"),
        "no registration"
    );
}

#[tokio::test]
async fn an_enterprise_identity_assertion_is_exchanged_then_presented() {
    let shared = mock(false, false).await;
    let base = shared.lock().unwrap().base.clone();
    let idp = IdentityProvider::new(format!("{base}/idp/token").parse().unwrap(), "the-id-token")
        .with_client_id("at-idp");
    connect(
        &shared,
        Authorizer::new("host")
            .with_client("at-as", Some("as-secret".into()))
            .with_identity_provider(idp),
    )
    .await;
    let (_, exchange) = last(&shared, "/idp/token");
    assert_eq!(
        field(&exchange, "grant_type"),
        Some("urn:ietf:params:oauth:grant-type:token-exchange")
    );
    assert_eq!(field(&exchange, "subject_token"), Some("the-id-token"));
    assert_eq!(field(&exchange, "audience"), Some(base.as_str()));
    assert_eq!(field(&exchange, "resource"), Some(format!("{base}/mcp").as_str()));
    assert_eq!(field(&exchange, "client_id"), Some("at-idp"));
    let (headers, grant) = last(&shared, "/token");
    assert_eq!(field(&grant, "assertion"), Some("the-id-jag"));
    assert!(headers["authorization"].to_str().unwrap().starts_with("Basic "));
}

#[tokio::test]
async fn a_registered_client_authenticates_as_registered_and_a_metadata_document_needs_none() {
    let shared = mock(false, false).await;
    connect(&shared, Authorizer::new("host")).await;
    let (_, form) = last(&shared, "/token");
    assert_eq!(field(&form, "grant_type"), Some("authorization_code"));
    assert_eq!(
        (field(&form, "client_id"), field(&form, "client_secret")),
        (Some("registered"), Some("registered-secret")),
        "client_secret_post, as registered"
    );
    let cimd = mock(false, true).await;
    let document: Url = "https://host.example/client.json".parse().unwrap();
    connect(
        &cimd,
        Authorizer::new("host").with_client_metadata_url(document.clone()),
    )
    .await;
    assert!(cimd.lock().unwrap().seen.iter().all(|(p, _, _)| p != "/register"));
    let (_, authorize) = last(&cimd, "/authorize");
    assert_eq!(field(&authorize, "client_id"), Some(document.as_str()));
}

#[tokio::test]
async fn dpop_binds_the_tokens_and_answers_both_nonces() {
    let shared = mock(true, false).await;
    connect(&shared, Authorizer::new("host").with_scope("mcp")).await;
    let state = shared.lock().unwrap();
    let token_requests: Vec<_> = state.seen.iter().filter(|(p, _, _)| p == "/token").collect();
    assert_eq!(
        token_requests.len(),
        2,
        "asked again with the authorization server's nonce"
    );
    let second = claims(token_requests[1].1["dpop"].to_str().unwrap());
    assert_eq!(second["nonce"], "as-nonce");
    assert_eq!(second["htm"], "POST");
    let accepted: Vec<_> = state
        .mcp
        .iter()
        .filter(|(a, p)| a.as_deref().is_some_and(|a| a.starts_with("DPoP ")) && p.is_some())
        .collect();
    assert!(accepted.len() >= 2, "{:?}", state.mcp);
    let proofs: Vec<Value> = accepted
        .iter()
        .map(|(_, p)| claims(p.as_deref().unwrap()))
        .collect();
    assert!(
        proofs.iter().all(|p| p["ath"].is_string()),
        "each proof hashes the token"
    );
    let mut ids: Vec<&str> = proofs.iter().filter_map(|p| p["jti"].as_str()).collect();
    let all = ids.len();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), all, "a fresh proof each time");
    assert!(proofs.iter().any(|p| p["nonce"] == "rs-nonce"));
}

/// Connects `authorizer` to a mock set up by `setup`: the error it ends with.
async fn refused(setup: impl FnOnce(&mut State), authorizer: Authorizer) -> String {
    match refusal(setup, authorizer).await {
        ConnectError::Authorization(error) => error.to_string(),
        other => panic!("not an authorization failure: {other:?}"),
    }
}

/// How connecting fails once `setup` has been applied to the mock.
async fn refusal(setup: impl FnOnce(&mut State), authorizer: Authorizer) -> ConnectError {
    let shared = mock(false, false).await;
    setup(&mut shared.lock().unwrap());
    let url = format!("{}/mcp", shared.lock().unwrap().base);
    let refused = McpClient::builder("grants", "1")
        .with_authorizer(authorizer)
        .connect_http(url.parse().unwrap())
        .await;
    match refused {
        Ok(_) => {
            let state = shared.lock().unwrap();
            let seen: Vec<&str> = state.seen.iter().map(|(p, _, _)| p.as_str()).collect();
            panic!("connected: {seen:?} {:?}", state.mcp)
        }
        Err(error) => error,
    }
}

#[tokio::test]
async fn what_authorizing_cannot_help_ends_with_its_reason() {
    let host = || Authorizer::new("host");
    let no_server = refused(
        |s| s.resource_metadata = Some(json!({"resource": format!("{}/mcp", s.base)})),
        host(),
    )
    .await;
    assert!(no_server.contains("names no authorization server"), "{no_server}");
    let elsewhere = refused(
        |s| {
            s.resource_metadata =
                Some(json!({"resource": "https://evil.example/mcp", "authorization_servers": [s.base]}))
        },
        host(),
    )
    .await;
    assert!(elsewhere.contains("evil.example"), "{elsewhere}");
    let plain = refused(
        |s| {
            s.server_metadata = Some(json!({"issuer": s.base, "authorization_endpoint": format!("{}/authorize", s.base),
                "token_endpoint": format!("{}/token", s.base), "registration_endpoint": format!("{}/register", s.base),
                "code_challenge_methods_supported": ["plain"]}))
        },
        host(),
    )
    .await;
    assert!(plain.contains("PKCE"), "{plain}");
    let no_endpoint = refused(
        |s| {
            s.server_metadata = Some(json!({"issuer": s.base, "token_endpoint": format!("{}/token", s.base)}))
        },
        host().with_client("given", None),
    )
    .await;
    assert!(no_endpoint.contains("no authorization endpoint"), "{no_endpoint}");
    let no_registration = refused(
        |s| {
            s.server_metadata =
                Some(json!({"issuer": s.base, "authorization_endpoint": format!("{}/authorize", s.base)}))
        },
        host(),
    )
    .await;
    assert!(
        no_registration.contains("no dynamic registration"),
        "{no_registration}"
    );
    // A 403 that asks for no scope is the server's own refusal, which no token changes: the
    // call fails with it, and the authorizer has nothing to say.
    let forbidden = refusal(|s| s.refuse_with = Some(StatusCode::FORBIDDEN), host()).await;
    assert!(matches!(forbidden, ConnectError::Initialize(_)), "{forbidden:?}");
    let forbidden = forbidden.to_string();
    assert!(forbidden.contains("403"), "{forbidden}");
    let again = refusal(|s| s.refuse_with = Some(StatusCode::UNAUTHORIZED), host())
        .await
        .to_string();
    assert!(
        again.contains("401") || again.contains("authorizations in a row"),
        "{again}"
    );
}

#[tokio::test]
async fn a_call_whose_authorization_fails_later_is_answered_unauthorized() {
    let shared = mock(false, false).await;
    let url = format!("{}/mcp", shared.lock().unwrap().base);
    let client = McpClient::builder("grants", "1")
        .with_authorizer(Authorizer::new("host"))
        .connect_http(url.parse().unwrap())
        .await
        .expect("authorized");
    client.list_tools().await.expect("tools");
    // The token is revoked, and no new one is given.
    {
        let mut state = shared.lock().unwrap();
        state.refuse_with = Some(StatusCode::UNAUTHORIZED);
        state.refuse_tokens = true;
    }
    let error = client.list_tools().await.expect_err("no token");
    let text = error.to_string();
    let code = match error.kind() {
        rpcwire::transport::PeerErrorKind::Remote(object) => object.code().code(),
        other => panic!("not an error answer: {other:?}"),
    };
    assert_eq!(code, rpcwire::codes::UNAUTHORIZED, "{text}");
    assert!(text.contains("invalid_grant"), "{text}");
    client.close().await;
}

#[tokio::test]
async fn dpop_asked_for_binds_tokens_with_any_server() {
    let shared = mock(false, false).await;
    let redirect: Url = "http://127.0.0.1:33999/back".parse().unwrap();
    let tls = rpcwire::transport::tls::ClientTls::builder()
        .with_webpki_roots()
        .build()
        .unwrap();
    connect(
        &shared,
        Authorizer::new("host")
            .with_dpop()
            .with_redirect_uri(redirect.clone())
            .with_tls(tls),
    )
    .await;
    let (headers, form) = last(&shared, "/token");
    assert!(
        headers.contains_key("dpop"),
        "a proof though the server did not list DPoP"
    );
    assert_eq!(field(&form, "redirect_uri"), Some(redirect.as_str()));
    let state = shared.lock().unwrap();
    assert!(state
        .mcp
        .iter()
        .any(|(a, p)| a.as_deref().is_some_and(|a| a.starts_with("DPoP ")) && p.is_some()));
}
