//! A tiny HTTP/1.1 server on 127.0.0.1 for the authorization targets: each connection one
//! request (its head, and a body of its `content-length`, bounded), answered by `route` and
//! closed. What it answers is the fuzzer's: documents, challenges, redirects, tokens.

use std::net::SocketAddr;
use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// One answer: status, headers, body.
pub type Answer = (u16, Vec<(String, String)>, Vec<u8>);

/// What a route is given: the method, the target (path and query), the headers (lower
/// case names), the body.
#[allow(dead_code)] // each target reads what it needs
pub struct Asked {
    pub method: String,
    pub target: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

/// Serves `route` on a port the system picks, on `runtime`.
pub fn serve(
    runtime: &tokio::runtime::Runtime,
    route: Arc<dyn Fn(&Asked) -> Answer + Send + Sync>,
) -> SocketAddr {
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .expect("bind");
    let address = listener.local_addr().expect("address");
    runtime.spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                continue;
            };
            let route = route.clone();
            tokio::spawn(async move {
                let mut read = Vec::new();
                let mut buffer = [0u8; 4096];
                let head_end = loop {
                    if let Some(at) = read.windows(4).position(|w| w == b"\r\n\r\n") {
                        break at + 4;
                    }
                    if read.len() > 64 << 10 {
                        return;
                    }
                    match stream.read(&mut buffer).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => read.extend_from_slice(&buffer[..n]),
                    }
                };
                let head = String::from_utf8_lossy(&read[..head_end]).into_owned();
                let mut lines = head.split("\r\n");
                let mut first = lines.next().unwrap_or_default().split(' ');
                let method = first.next().unwrap_or_default().to_owned();
                let target = first.next().unwrap_or_default().to_owned();
                let headers: Vec<(String, String)> = lines
                    .filter_map(|l| l.split_once(':'))
                    .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
                    .collect();
                let length: usize = headers
                    .iter()
                    .find(|(k, _)| k == "content-length")
                    .and_then(|(_, v)| v.parse().ok())
                    .unwrap_or(0)
                    .min(1 << 20);
                let mut body = read[head_end..].to_vec();
                while body.len() < length {
                    match stream.read(&mut buffer).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => body.extend_from_slice(&buffer[..n]),
                    }
                }
                let (status, answer_headers, answer_body) = route(&Asked {
                    method,
                    target,
                    headers,
                    body,
                });
                let mut out = format!(
                    "HTTP/1.1 {status} X\r\ncontent-length: {}\r\nconnection: close\r\n",
                    answer_body.len()
                );
                for (name, value) in answer_headers {
                    out.push_str(&format!("{name}: {value}\r\n"));
                }
                out.push_str("\r\n");
                let mut bytes = out.into_bytes();
                bytes.extend_from_slice(&answer_body);
                let _ = stream.write_all(&bytes).await;
                let _ = stream.shutdown().await;
            });
        }
    });
    address
}
