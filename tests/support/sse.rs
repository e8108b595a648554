//! Reading Streamable HTTP answers in tests: a JSON body, and an SSE body read to its end
//! as its events or as the JSON-RPC messages they carry.

use std::time::Duration;

use http::Response;
use http_body_util::BodyExt;
use rpcwire::mcp::http::McpBody;
use serde_json::Value;

/// A JSON body, decoded.
pub async fn json_of(response: Response<McpBody>) -> Value {
    assert_eq!(response.headers()["content-type"], "application/json");
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{}: {e}", String::from_utf8_lossy(&bytes)))
}

/// An SSE body's events, as (id, data) pairs, read until the stream ends (10 s at most).
pub async fn events_of(response: Response<McpBody>) -> Vec<(String, String)> {
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let bytes = tokio::time::timeout(Duration::from_secs(10), response.into_body().collect())
        .await
        .expect("the stream ends")
        .unwrap()
        .to_bytes();
    parse_events(std::str::from_utf8(&bytes).unwrap())
}

/// The JSON-RPC messages of an SSE body that ends (priming events, with no data, left out).
#[allow(dead_code)] // not every test reads them so
pub async fn messages_of(response: Response<McpBody>) -> Vec<Value> {
    events_of(response)
        .await
        .into_iter()
        .filter(|(_, data)| !data.is_empty())
        .map(|(_, data)| serde_json::from_str(&data).unwrap())
        .collect()
}

/// The events of SSE text, as (id, data) pairs.
pub fn parse_events(text: &str) -> Vec<(String, String)> {
    text.split("\n\n")
        .filter(|event| !event.is_empty())
        .map(|event| {
            let mut id = String::new();
            let mut data = String::new();
            for line in event.lines() {
                if let Some(value) = line.strip_prefix("id: ") {
                    id = value.to_owned();
                } else if let Some(value) = line.strip_prefix("data: ") {
                    data.push_str(value);
                }
            }
            (id, data)
        })
        .collect()
}
