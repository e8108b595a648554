//! Shared by the peer and HTTP fuzz targets: play the other side of an in-memory
//! connection — write the input in the given reads, then end the writing side — while
//! collecting everything the server writes back.

use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};
use tokio::task::JoinHandle;

use super::chunked;

/// Writes `stream` into `theirs` in reads of `sizes`, yielding between them, then shuts
/// the writing side; the handle resolves to all the server wrote, once it closes.
pub async fn send_in_reads(theirs: DuplexStream, stream: &[u8], sizes: &[usize]) -> JoinHandle<Vec<u8>> {
    let (mut read_half, mut write_half) = tokio::io::split(theirs);
    let reader = tokio::spawn(async move {
        let mut written = Vec::new();
        let _ = read_half.read_to_end(&mut written).await;
        written
    });
    for piece in chunked::reads(stream, sizes) {
        if write_half.write_all(piece).await.is_err() {
            break;
        }
        tokio::task::yield_now().await;
    }
    let _ = write_half.shutdown().await;
    reader
}
