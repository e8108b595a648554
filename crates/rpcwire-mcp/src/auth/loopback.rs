//! (Tests only.) A loopback HTTP/1.1 server for the authorization tests: each connection
//! carries one request, read whole (its head, and its body by `Content-Length`), answered
//! with what a function of it gives, and closed.

use std::net::SocketAddr;
use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// One request as the server read it.
#[derive(Debug)]
pub(crate) struct Asked {
    /// The request line and the headers, as sent.
    pub head: String,
    /// The request target's path (without its query).
    pub path: String,
    /// The body, as text.
    pub body: String,
}

impl Asked {
    /// A header's value (the name in any case), if it was sent.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().skip(1).find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.trim().eq_ignore_ascii_case(name).then(|| value.trim())
        })
    }
}

/// A whole answer: `status`, a JSON `body`, and the connection closed after it.
pub(crate) fn json(status: u16, body: &str) -> String {
    format!(
        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
}

/// Serves on 127.0.0.1 until the runtime ends, each request answered with `answer`'s bytes
/// (a whole HTTP/1.1 response): the address.
pub(crate) async fn serve(answer: impl Fn(&Asked) -> String + Send + Sync + 'static) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let answer = Arc::new(answer);
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let asked = read(&mut stream).await;
            let _ = stream.write_all(answer(&asked).as_bytes()).await;
        }
    });
    address
}

/// One request from `stream`: its head, then as much body as it says it has (what arrives
/// before the connection ends, if less).
async fn read(stream: &mut tokio::net::TcpStream) -> Asked {
    let mut read = Vec::new();
    let mut buffer = [0u8; 4096];
    let head_end = loop {
        if let Some(end) = read.windows(4).position(|w| w == b"\r\n\r\n") {
            break end + 4;
        }
        match stream.read(&mut buffer).await {
            Ok(0) | Err(_) => break read.len(),
            Ok(n) => read.extend_from_slice(&buffer[..n]),
        }
    };
    let head = String::from_utf8_lossy(&read[..head_end]).into_owned();
    let mut asked = Asked {
        path: head
            .split(' ')
            .nth(1)
            .unwrap_or_default()
            .split('?')
            .next()
            .unwrap_or_default()
            .to_owned(),
        head,
        body: String::new(),
    };
    let length: usize = asked
        .header("content-length")
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    while read.len() < head_end + length {
        match stream.read(&mut buffer).await {
            Ok(0) | Err(_) => break,
            Ok(n) => read.extend_from_slice(&buffer[..n]),
        }
    }
    asked.body = String::from_utf8_lossy(&read[head_end..]).into_owned();
    asked
}
