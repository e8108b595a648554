//! A stream split into handles that share it behind one lock: one to read frames, one to
//! write them, and one more to read past a refused message (a WebSocket's lingering close).
//!
//! `tokio::io::split` gives two halves only; sharing its read half again behind a mutex of
//! its own took two locks per read. Here every handle takes the one lock, for the length of
//! one poll (never across an await), so the reader and the writer of a connection, on
//! different tasks, never wait on each other for longer than a system call.

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::sync::lock_unpoisoned;

/// A handle on a shared stream: reads and writes go to the stream under its lock.
pub(crate) struct Half<S>(Arc<Mutex<S>>);

impl<S> Half<S> {
    /// The first handle on `stream`; [`another`](Half::another) makes more.
    pub(crate) fn new(stream: S) -> Half<S> {
        Half(Arc::new(Mutex::new(stream)))
    }

    /// Another handle on the same stream.
    pub(crate) fn another(&self) -> Half<S> {
        Half(self.0.clone())
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Half<S> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut *lock_unpoisoned(&self.0)).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Half<S> {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut *lock_unpoisoned(&self.0)).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut *lock_unpoisoned(&self.0)).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        lock_unpoisoned(&self.0).is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut *lock_unpoisoned(&self.0)).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut *lock_unpoisoned(&self.0)).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test]
    async fn every_handle_reads_and_writes_the_one_stream() {
        let (ours, mut theirs) = tokio::io::duplex(64);
        let mut reader = Half::new(ours);
        let mut writer = reader.another();
        let mut drain = reader.another();
        writer.write_all(b"out").await.unwrap();
        let written = writer
            .write_vectored(&[io::IoSlice::new(b"o"), io::IoSlice::new(b"k")])
            .await
            .unwrap();
        let mut seen = [0u8; 5];
        theirs.read_exact(&mut seen[..3 + written]).await.unwrap();
        assert_eq!(&seen[..3 + written], &b"outok"[..3 + written]);
        theirs.write_all(b"in, and more").await.unwrap();
        let mut first = [0u8; 4];
        reader.read_exact(&mut first).await.unwrap();
        assert_eq!(&first, b"in, ");
        let mut rest = [0u8; 8];
        drain.read_exact(&mut rest).await.unwrap();
        assert_eq!(&rest, b"and more");
        writer.flush().await.unwrap();
        writer.shutdown().await.unwrap();
        assert_eq!(
            theirs.read(&mut seen).await.unwrap(),
            0,
            "shut down for the other side"
        );
        assert_eq!(
            writer.is_write_vectored(),
            tokio::io::duplex(1).0.is_write_vectored()
        );
    }
}
