//! A deadline on the first bytes of a connection, while hyper-util picks HTTP/1.1 or HTTP/2.
//!
//! hyper's header timeout starts once the protocol is known; until then hyper-util's
//! automatic builder reads with no timer of its own, so a client that connects and sends
//! nothing, or `P` and nothing more, would hold its connection open forever. This reader
//! fails with [`io::ErrorKind::TimedOut`] when the deadline passes before the protocol can
//! be told: the bytes read so far are still a prefix of the HTTP/2 connection preface.
//! After that it only passes reads and writes through.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Sleep;

/// What an HTTP/2 client with prior knowledge sends first (RFC 9113, section 3.4).
const HTTP2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// An I/O object whose reads time out until the protocol can be told from them.
pub(super) struct DetectDeadline<S> {
    inner: S,
    /// How many bytes read so far match the HTTP/2 preface; `None` once the protocol is told.
    matched: Option<usize>,
    deadline: Pin<Box<Sleep>>,
}

impl<S> DetectDeadline<S> {
    /// `inner`, whose reads fail after `timeout` unless the protocol is told by then.
    pub(super) fn new(inner: S, timeout: Duration) -> DetectDeadline<S> {
        DetectDeadline {
            inner,
            matched: Some(0),
            deadline: Box::pin(tokio::time::sleep(timeout)),
        }
    }

    /// Takes note of bytes just read.
    fn saw(&mut self, bytes: &[u8]) {
        let Some(matched) = self.matched else {
            return;
        };
        let wanted = &HTTP2_PREFACE[matched..];
        let n = bytes.len().min(wanted.len());
        self.matched = if bytes[..n] == wanted[..n] && matched + n < HTTP2_PREFACE.len() {
            Some(matched + n)
        } else {
            // A byte that is not the preface's (HTTP/1.1), or the whole preface (HTTP/2).
            None
        };
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for DetectDeadline<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        let before = buf.filled().len();
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                this.saw(&buf.filled()[before..]);
                Poll::Ready(Ok(()))
            }
            Poll::Pending if this.matched.is_some() && this.deadline.as_mut().poll(cx).is_ready() => {
                Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "no HTTP request head began within the header timeout",
                )))
            }
            other => other,
        }
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for DetectDeadline<S> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    async fn read_after(sent: &[u8]) -> io::Result<Vec<u8>> {
        let (client, server) = tokio::io::duplex(64);
        let mut client = client;
        client.write_all(sent).await.unwrap();
        let mut reader = DetectDeadline::new(server, Duration::from_millis(50));
        let mut got = Vec::new();
        let mut buffer = [0u8; 64];
        loop {
            // The client stays connected and silent: only the deadline can end this.
            let n = tokio::time::timeout(Duration::from_millis(500), reader.read(&mut buffer)).await;
            match n {
                Ok(Ok(n)) => got.extend_from_slice(&buffer[..n]),
                Ok(Err(error)) => return Err(error),
                Err(_) => return Ok(got),
            }
        }
    }

    #[tokio::test]
    async fn silence_or_a_preface_prefix_times_out() {
        for sent in [&b""[..], b"P", b"PRI * HTTP/2.0\r\n"] {
            let error = read_after(sent).await.unwrap_err();
            assert_eq!(error.kind(), io::ErrorKind::TimedOut, "{sent:?}");
        }
    }

    #[tokio::test]
    async fn once_the_protocol_is_told_reads_wait_as_long_as_they_need() {
        for sent in [&b"POST / HTTP/1.1\r\n"[..], b"G", HTTP2_PREFACE] {
            assert_eq!(read_after(sent).await.unwrap(), sent, "{sent:?}");
        }
    }

    #[tokio::test]
    async fn the_preface_is_matched_across_reads() {
        let mut reader = DetectDeadline {
            inner: (),
            matched: Some(0),
            deadline: Box::pin(tokio::time::sleep(Duration::ZERO)),
        };
        for piece in HTTP2_PREFACE.chunks(5) {
            assert!(reader.matched.is_some());
            reader.saw(piece);
        }
        assert_eq!(reader.matched, None);
    }
}
