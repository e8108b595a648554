//! A raw WebSocket client that writes all 6 MiB of one message (the server's limit is
//! 1 MiB) before it reads anything, as Python's websockets does: the server refuses after
//! the frame's header and then reads and drops the rest (the lingering close), so that the
//! client's write ends and it reads the 1009 close — a server that closed at once would reset
//! the connection with the message unread. Over any stream: plain TCP or TLS.

use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// Opens the WebSocket on `stream` (to host `host`), writes the message whole, and checks
/// that the close frame with 1009 is read within 10 s and that the whole message was
/// written.
pub async fn a_message_far_over_the_limit_reads_its_1009<S>(mut stream: S, host: &str)
where
    S: AsyncRead + AsyncWrite + Send + 'static,
    S: Unpin,
{
    let upgrade = format!(
        "GET / HTTP/1.1\r\nhost: {host}\r\nupgrade: websocket\r\nconnection: upgrade\r\n\
         sec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\nsec-websocket-version: 13\r\n\r\n"
    );
    stream.write_all(upgrade.as_bytes()).await.unwrap();
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        head.push(stream.read_u8().await.unwrap());
    }
    assert!(
        head.starts_with(b"HTTP/1.1 101"),
        "{}",
        String::from_utf8_lossy(&head)
    );
    let length: u64 = 6 << 20;
    let mut frame = vec![0x81, 0x80 | 127];
    frame.extend_from_slice(&length.to_be_bytes());
    frame.extend_from_slice(&[0, 0, 0, 0]); // a zero mask leaves the payload as it is
    frame.resize(frame.len() + length as usize, b' ');
    let (mut read, mut write) = tokio::io::split(stream);
    let writing = tokio::spawn(async move { write.write_all(&frame).await.map(|()| write) });
    let mut close = [0u8; 4];
    tokio::time::timeout(Duration::from_secs(10), read.read_exact(&mut close))
        .await
        .expect("the close comes in time")
        .expect("the close is read, not a reset");
    assert_eq!(close, [0x88, close[1], 0x03, 0xF1], "a close frame with 1009");
    assert!(writing.await.unwrap().is_ok(), "the whole message was written");
}
