//! Any bytes as the bearer token of a request to a protected Streamable HTTP server (a
//! `JwtVerifier` with a real ES256 key, its JWKS served by a local server): never a panic,
//! always answered, and never let in — a token that was not signed with the key is refused
//! (`401` with a challenge), whatever its header, claims and signature say. Inputs that start
//! with `{` are taken as claims and signed as a token with another key (a well-formed JWT
//! whose signature is wrong).
#![no_main]

use std::sync::{Arc, OnceLock};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use libfuzzer_sys::fuzz_target;
use ring::signature::{EcdsaKeyPair, KeyPair, ECDSA_P256_SHA256_FIXED_SIGNING};
use rpcwire::mcp::auth::{JwtVerifier, ProtectedResource};
use rpcwire::mcp::http::StreamableHttpService;
use rpcwire::mcp::McpServer;
use tower_service::Service;

#[path = "common/tiny_server.rs"]
mod tiny_server;

const RESOURCE: &str = "http://127.0.0.1:9/mcp";
const ISSUER: &str = "https://issuer.fuzz.invalid";

struct Harness {
    runtime: tokio::runtime::Runtime,
    service: StreamableHttpService,
    /// A key that is not the issuer's: tokens it signs are well formed and refused.
    other: EcdsaKeyPair,
}

fn key() -> EcdsaKeyPair {
    let rng = ring::rand::SystemRandom::new();
    let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).expect("a key");
    EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng).expect("the key")
}

fn harness() -> &'static Harness {
    static HARNESS: OnceLock<Harness> = OnceLock::new();
    HARNESS.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("runtime");
        let issuer_key = key();
        let point = issuer_key.public_key().as_ref();
        let jwks = serde_json::json!({"keys": [{
            "kty": "EC", "crv": "P-256", "kid": "fuzz", "alg": "ES256",
            "x": URL_SAFE_NO_PAD.encode(&point[1..33]), "y": URL_SAFE_NO_PAD.encode(&point[33..65]),
        }]})
        .to_string()
        .into_bytes();
        let json = vec![("content-type".to_owned(), "application/json".to_owned())];
        let address = tiny_server::serve(&runtime, Arc::new(move |_| (200, json.clone(), jwks.clone())));
        let verifier = JwtVerifier::new(
            ISSUER,
            RESOURCE,
            format!("http://{address}/jwks").parse().unwrap(),
        );
        let protected = ProtectedResource::new(RESOURCE, ISSUER, verifier);
        let service = StreamableHttpService::new(McpServer::new("fuzz", "1")).with_protection(protected);
        Harness {
            runtime,
            service,
            other: key(),
        }
    })
}

/// `claims` signed with `key` as an ES256 JWT of the issuer's key id.
fn signed(claims: &[u8], key: &EcdsaKeyPair) -> String {
    let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"ES256","typ":"at+jwt","kid":"fuzz"}"#);
    let input = format!("{header}.{}", URL_SAFE_NO_PAD.encode(claims));
    let signature = key
        .sign(&ring::rand::SystemRandom::new(), input.as_bytes())
        .expect("signed");
    format!("{input}.{}", URL_SAFE_NO_PAD.encode(signature.as_ref()))
}

fuzz_target!(|data: &[u8]| {
    let harness = harness();
    let token = if data.first() == Some(&b'{') {
        signed(data, &harness.other)
    } else {
        match std::str::from_utf8(data) {
            Ok(text) if http::HeaderValue::from_str(&format!("Bearer {text}")).is_ok() => text.to_owned(),
            _ => return,
        }
    };
    let request = http::Request::post("/mcp")
        .header("host", "127.0.0.1")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("authorization", format!("Bearer {token}"))
        .body(Full::new(Bytes::from_static(
            br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"f","version":"1"}}}"#,
        )))
        .expect("a request");
    let mut service = harness.service.clone();
    let (status, challenge) = harness.runtime.block_on(async move {
        let answer = tokio::time::timeout(std::time::Duration::from_secs(30), service.call(request))
            .await
            .expect("answered in time")
            .expect("infallible");
        let challenge = answer.headers().get("www-authenticate").cloned();
        let status = answer.status();
        let _ = answer.into_body().collect().await;
        (status, challenge)
    });
    assert_eq!(status, 401, "a token not signed with the issuer's key was let in");
    let challenge = challenge.expect("a challenge");
    assert!(
        challenge.to_str().unwrap().starts_with("Bearer "),
        "{challenge:?}"
    );
});
