//! Any bytes as what a client meets when it authorizes: the server's challenge, the
//! protected resource metadata, the authorization server's metadata, the registration
//! answer, the authorization redirect and the token answer (the input cut at 0xff bytes
//! into those six, in that order; `{base}` in them stands for the test server's URL, and
//! `{state}` in the redirect for the state the client sent), served
//! by a local server that wants a bearer token on its MCP endpoint. `McpClient` with an
//! `Authorizer` connects: never a panic, always an end within its bound, and a connection
//! that gets through carries the token the token endpoint gave.
#![no_main]

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use rpcwire::mcp::auth::Authorizer;
use rpcwire::mcp::McpClient;

#[path = "common/tiny_server.rs"]
mod tiny_server;

use tiny_server::{Answer, Asked};

/// What the server answers this run, and the `Authorization` headers it saw.
#[derive(Default)]
struct Script {
    pieces: Vec<Vec<u8>>,
    authorizations: Vec<String>,
}

struct Harness {
    runtime: tokio::runtime::Runtime,
    base: String,
    script: Arc<Mutex<Script>>,
}

const INITIALIZED: &[u8] = br#"{"jsonrpc":"2.0","id":1024,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"fuzz","version":"1"}}}"#;

fn harness() -> &'static Harness {
    static HARNESS: OnceLock<Harness> = OnceLock::new();
    HARNESS.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        let script = Arc::new(Mutex::new(Script::default()));
        let base = Arc::new(OnceLock::<String>::new());
        let (seen, known) = (script.clone(), base.clone());
        let route = move |asked: &Asked| -> Answer {
            let base = known.get().cloned().unwrap_or_default();
            let mut script = seen.lock().unwrap();
            let piece = |n: usize| {
                let text = String::from_utf8_lossy(script.pieces.get(n).map_or(&[][..], |p| p)).into_owned();
                text.replace("{base}", &base)
            };
            let json = vec![("content-type".to_owned(), "application/json".to_owned())];
            let path = asked.target.split('?').next().unwrap_or_default();
            match (asked.method.as_str(), path) {
                ("POST", "/mcp") => {
                    let authorization = asked
                        .headers
                        .iter()
                        .find(|(k, _)| k == "authorization")
                        .map(|(_, v)| v.clone());
                    match authorization {
                        Some(value) => {
                            script.authorizations.push(value);
                            if asked.body.windows(10).any(|w| w == b"\"initializ")
                                && !asked.body.windows(13).any(|w| w == b"notifications")
                            {
                                (200, json, INITIALIZED.to_vec())
                            } else {
                                (202, Vec::new(), Vec::new())
                            }
                        }
                        None => {
                            let challenge = piece(0);
                            let headers = if challenge.bytes().all(|b| (0x20..0x7f).contains(&b)) {
                                vec![("www-authenticate".to_owned(), challenge)]
                            } else {
                                Vec::new()
                            };
                            (401, headers, Vec::new())
                        }
                    }
                }
                ("GET", "/.well-known/oauth-protected-resource/mcp") => (200, json, piece(1).into_bytes()),
                ("GET", "/.well-known/oauth-authorization-server") => (200, json, piece(2).into_bytes()),
                ("POST", "/register") => (201, json, piece(3).into_bytes()),
                ("GET", "/authorize") => {
                    let state = asked
                        .target
                        .split(['?', '&'])
                        .find_map(|pair| pair.strip_prefix("state="))
                        .unwrap_or_default();
                    let location = piece(4).replace("{state}", state);
                    if location.bytes().all(|b| (0x20..0x7f).contains(&b)) {
                        (302, vec![("location".to_owned(), location)], Vec::new())
                    } else {
                        (400, Vec::new(), Vec::new())
                    }
                }
                ("POST", "/token") => (200, json, piece(5).into_bytes()),
                _ => (404, Vec::new(), Vec::new()),
            }
        };
        let address = tiny_server::serve(&runtime, Arc::new(route));
        let url = format!("http://{address}");
        let _ = base.set(url.clone());
        Harness {
            runtime,
            base: url,
            script,
        }
    })
}

fuzz_target!(|data: &[u8]| {
    let harness = harness();
    {
        let mut script = harness.script.lock().unwrap();
        script.pieces = data.split(|b| *b == 0xff).map(<[u8]>::to_vec).take(6).collect();
        script.authorizations.clear();
    }
    let url = format!("{}/mcp", harness.base);
    let connected = harness.runtime.block_on(async {
        let authorizer = Authorizer::new("fuzz").with_redirect_uri("http://127.0.0.1:1/cb".parse().unwrap());
        let connecting = McpClient::builder("fuzz", "1")
            .with_call_timeout(Duration::from_secs(20))
            .with_authorizer(authorizer)
            .connect_http(url.parse().unwrap());
        tokio::time::timeout(Duration::from_secs(60), connecting).await
    });
    let connected = connected.expect("a connection ends within its bound");
    if let Ok(client) = connected {
        let script = harness.script.lock().unwrap();
        // The token answer as the server sent it (text, `{base}` replaced).
        let served = String::from_utf8_lossy(script.pieces.get(5).map_or(&[][..], |p| p))
            .replace("{base}", &harness.base);
        let token: serde_json::Value = serde_json::from_str(&served).unwrap_or_default();
        let token = token["access_token"].as_str().unwrap_or_default().to_owned();
        assert!(
            !token.is_empty(),
            "a connection without a token from the token endpoint"
        );
        assert!(
            script
                .authorizations
                .iter()
                .any(|a| a.ends_with(&format!(" {token}"))),
            "the token the endpoint gave was not sent"
        );
        drop(script);
        harness.runtime.block_on(client.close());
    }
});
